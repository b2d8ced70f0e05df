"""Checks on the paper's datasets (mirrored data; skipped when absent)."""

import numpy as np
import pytest

from fairlens.shuffle import ShuffledModel, shuffle_scores
from fairlens.shuffle._reference import algorithm1, mixing_reference, swapping_reference
from tests.contract.shuffle.test_paper_data import data_ok  # noqa: F401 (fixtures)


@pytest.fixture
def admission(data_ok):
    from fairlens.datasets import load_admission

    adm = load_admission()
    cols = ["GRE Score", "TOEFL Score", "University Rating", "Research"]
    X = adm.X[:, [adm.index_of(c) for c in cols]].copy()
    lo, hi = X[:, :3].min(0), X[:, :3].max(0)
    X[:, :3] = (X[:, :3] - lo) / (hi - lo)
    return X, cols


def f_adm(A):
    return np.asarray(A, dtype=float)[:, :3] @ np.full(3, 1 / 3)


def test_admission_figure1_properties_and_literal_pseudocode(admission):
    X, cols = admission
    y, fav = f_adm(X), X[:, 3] == 1
    assert len(np.unique(y)) < len(y)  # real data has tied scores
    dom = ShuffledModel(f_adm, protected="Research", favoured=1, feature_names=cols)(X)
    assert dom[fav].min() >= dom[~fav].max()
    for q in (0.0, 0.3, 1.0):
        j0 = int(np.floor(q * len(y) + 1e-12))
        ref = np.asarray(algorithm1(y, fav, swapping_reference, j0=j0))
        np.testing.assert_array_equal(shuffle_scores(y, fav, "swapping", quantile=q), ref)
    coins = np.random.default_rng(5).random(len(y))
    ref = np.asarray(algorithm1(y, fav, mixing_reference, coins=coins, prob=0.8, literal=False))
    got = shuffle_scores(y, fav, "mixing", p=0.8, mixing_rule="coin",
                         random_state=5)
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(shuffle_scores(y, fav, "swapping", quantile=1.0), dom)
