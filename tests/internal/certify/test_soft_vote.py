"""The tests of ``tests/contract/certify/test_soft_vote.py`` that pin internals
(its docstring describes both halves)."""

import numpy as np
import pytest

from fairlens.certify import certify, flatten_forest
from fairlens.certify._reference import reference_tree_votes, reference_vote
from tests._support.certify_helpers import toy_forest
from tests.contract.certify.test_soft_vote import _wine3, literal_attackable


def _hard_predict(model):
    classes = model.classes_
    return lambda Z: classes[reference_vote(reference_tree_votes(model, Z), len(classes))]


@pytest.mark.parametrize("seed,b,kind", [(s, b, k) for s in (0, 1) for b in (1, 2) for k in ("rf", "et")])
def test_soft_brute_force_equals_literal_enumeration_multiclass(seed, b, kind):
    model, X, y = _wine3(seed, kind)
    correct, att = literal_attackable(model, X, y, b, model.predict)
    res = certify(model, X, y, budget=b)
    np.testing.assert_array_equal(res.status == "misclassified", ~correct)
    np.testing.assert_array_equal(res.status == "attackable", att)
    # hard vote: the same twin with the hard-vote predictor
    hc, ha = literal_attackable(model, X, y, b, _hard_predict(model))
    rh = certify(model, X, y, budget=b, vote="hard")
    assert rh.vote == "hard"
    np.testing.assert_array_equal(rh.status == "misclassified", ~hc)
    np.testing.assert_array_equal(rh.status == "attackable", ha)


def _witness_cases():
    for kind in ("rf", "et"):
        for seed in (3, 4):
            yield (kind, "binary", seed) + toy_forest(seed, n_trees=9, depth=4, kind=kind)
        yield (kind, "multiclass", 0) + _wine3(5, kind)


@pytest.mark.parametrize("vote", ["soft", "hard"])
def test_every_witness_changes_the_certified_predict(vote):
    n_witnesses = 0
    for kind, task, seed, model, X, y in _witness_cases():
        for b in (1, 2):
            res = certify(model, X, y, budget=b, vote=vote)
            assert res.vote == vote
            hard = flatten_forest(model, vote="hard")
            for i, xw in res.witnesses.items():
                assert np.count_nonzero(xw != X[i]) <= b
                if vote == "soft":
                    assert model.predict(xw.reshape(1, -1))[0] != y[i], (kind, task, seed, b, i)
                else:
                    if not np.isnan(xw).any():  # TreeEnsemble.predict takes finite rows only
                        assert hard.predict(xw.reshape(1, -1))[0] != y[i]
                    assert _hard_predict(model)(xw.reshape(1, -1))[0] != y[i]
                n_witnesses += 1
    assert n_witnesses > 20
