"""Shortcuts that save certify's fixed per-call cost never change an answer or an error."""
import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier

from fairlens.certify import FeaturePartitionedForest, certify


@pytest.fixture(scope="module")
def data():
    X, y = load_breast_cancer(return_X_y=True)
    X = X[:, :6]
    rf = RandomForestClassifier(n_estimators=8, max_depth=3, random_state=0).fit(X[:300], y[:300])
    return rf, X[300:340], y[300:340]


def test_nan_rows_are_still_refused_for_a_model_whose_predict_refuses_nan(data):
    rf, X, y = data
    fpf = FeaturePartitionedForest(budget=1, rounds=2, random_state=0).fit(X, y)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="X"):
        certify(fpf, Xn, y, budget=1, missing=False)
    assert certify(fpf, X, y, budget=1, missing=False).params["nan_attack"] is False


@pytest.mark.parametrize("method", ["brute", "cascade"])
def test_one_sequential_brute_force_block_changes_nothing(data, method):
    """Sequentially the brute-force blocks are run as one block: same statuses, witnesses and
    evaluation counts as the strided blocks of n_jobs=2."""
    rf, X, y = data
    seq = certify(rf, X, y, budget=2, method=method, missing=False)
    par = certify(rf, X, y, budget=2, method=method, missing=False, n_jobs=2)
    assert seq.status.tolist() == par.status.tolist()
    assert seq.n_evaluations == par.n_evaluations
    assert sorted(seq.witnesses) == sorted(par.witnesses)
    for i in seq.witnesses:
        assert np.array_equal(seq.witnesses[i], par.witnesses[i])
