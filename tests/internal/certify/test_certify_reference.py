"""Cross-checks of FLB, ELB, brute force and the cascade against literal references."""
import functools

import numpy as np
import pytest

from fairlens.certify import flatten_forest as _flatten_forest
from fairlens.certify import instance_covers as _instance_covers

flatten_forest = functools.partial(_flatten_forest, vote="hard")
instance_covers = functools.partial(_instance_covers, vote="hard")
from fairlens.certify._reference import (
    reference_brute,
    reference_deltas,
    reference_elb,
    reference_flb,
    reference_sets,
    reference_tree_votes,
    reference_vote,
    sklearn_trees,
)
from tests._support.certify_helpers import bc_full_forest, toy_forest
from tests.contract.certify.test_certify_reference import certify

CASES = [(seed, b, kind) for seed in range(4) for b in (1, 2) for kind in ("rf", "et")]


def _sk_vote(model, X):
    _, _, classes, tie = sklearn_trees(model)
    return reference_vote(reference_tree_votes(model, X), len(classes), tie)


@pytest.mark.parametrize("seed,b,kind", CASES)
def test_brute_force_matches_literal_enumeration(seed, b, kind):
    model, X, y = toy_forest(seed, n_trees=5 + 2 * (seed % 2), depth=3, kind=kind)
    res = certify(model, X, y, budget=b, method="brute")
    correct, attackable = reference_brute(model, X, y, b)
    np.testing.assert_array_equal(res.status == "misclassified", ~correct)
    np.testing.assert_array_equal(res.status == "attackable", attackable)
    assert res.accuracy == pytest.approx(np.mean(correct & ~attackable))
    # every witness flips sklearn's own trees' majority vote and changes <= b features
    for i, xw in res.witnesses.items():
        assert np.count_nonzero(xw != X[i]) <= b
        assert _sk_vote(model, xw.reshape(1, -1))[0] != y[i]
    assert set(res.witnesses) == set(np.flatnonzero(attackable))


@pytest.mark.parametrize("seed,b,kind", CASES)
def test_flb_elb_match_literal_covers(seed, b, kind):
    model, X, y = toy_forest(seed, n_trees=5 + 2 * (seed % 2), depth=3, kind=kind)
    flb = certify(model, X, y, budget=b, method="flb")
    elb = certify(model, X, y, budget=b, method="elb")
    for i in range(len(y)):
        if flb.status[i] == "misclassified":
            assert elb.status[i] == "misclassified"
            continue
        assert (flb.status[i] == "not_certified") == reference_flb(model, X[i], y[i], b, 2)
        assert (elb.status[i] == "not_certified") == reference_elb(model, X[i], y[i], b, 2)


@pytest.mark.parametrize("b", [2, 3])
def test_elb_tighter_than_flb_and_matches_reference(b):
    model, X, y = bc_full_forest(0, n_trees=21, depth=3)
    flb = certify(model, X, y, budget=b, method="flb")
    elb = certify(model, X, y, budget=b, method="elb")
    assert elb.accuracy > flb.accuracy  # ELB certifies instances FLB cannot
    rows = np.flatnonzero(flb.status == "not_certified")
    for i in rows:
        assert reference_flb(model, X[i], y[i], b, 2)
        assert (elb.status[i] == "not_certified") == reference_elb(model, X[i], y[i], b, 2)


def test_cover_sets_match_decision_path():
    model, X, y = toy_forest(7, n_trees=9, depth=4)
    for i in range(10):
        ic = instance_covers(model, X[i], y[i], budget=2)
        ref = reference_sets(model, X[i])
        for f in range(X.shape[1]):
            for bit, sign in ((1, "+"), (2, "-")):
                ours = set(np.flatnonzero(ic.membership[:, f] & bit))
                assert ours == ref.get((f, sign), set())
        votes = reference_tree_votes(model, X[i:i + 1])[0]
        np.testing.assert_array_equal(ic.votes, votes)
        if ic.correct:  # delta is only defined for correctly classified instances
            assert ic.delta == reference_deltas(votes, int(y[i]), 2)
            # binary, odd number of trees: the paper's delta = ceil(|T|/2) - |C_bar|
            assert ic.delta[1 - y[i]] == int(np.ceil(9 / 2)) - int(ic.wrong.sum())


def test_elb_cover_is_a_valid_cover():
    model, X, y = toy_forest(2, n_trees=11, depth=4)
    res = certify(model, X, y, budget=2, method="elb")
    assert res.covers
    for i, cover in res.covers.items():
        assert len(cover) <= 2 and len({f for f, _ in cover}) == len(cover)
        ref = reference_sets(model, X[i])
        votes = reference_tree_votes(model, X[i:i + 1])[0]
        union = set().union(*(ref.get((f, s), set()) for f, s in cover))
        union = {t for t in union if votes[t] == y[i]}
        assert len(union) >= res.delta[i]


def test_witness_on_breast_cancer_flips_real_forest():
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier

    Xb, yb = load_breast_cancer(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=15, max_depth=5, random_state=0).fit(Xb[:400], yb[:400])
    res = certify(rf, Xb[400:], yb[400:], budget=1)
    assert res.stage_counts["attackable"] > 0
    ff = flatten_forest(rf)
    for i, xw in res.witnesses.items():
        trees = np.column_stack([e.predict(xw.reshape(1, -1)) for e in rf.estimators_]).astype(int)
        assert reference_vote(trees, 2)[0] != yb[400 + i]
        assert ff.predict(xw.reshape(1, -1))[0] != yb[400 + i]
        assert np.count_nonzero(xw != Xb[400 + i]) == 1


def test_brute_force_matches_literal_enumeration_on_real_features():
    # 21 shallow trees on 8 breast cancer features: at b = 2 ELB, brute-force-robust
    # and attackable instances all occur
    from tests._support.certify_helpers import bc_forest

    model, X, y = bc_forest(8)
    res = certify(model, X, y, budget=2, method="cascade")
    assert res.stage_counts["robust_brute"] > 0 and res.stage_counts["certified_elb"] > 0
    correct, attackable = reference_brute(model, X, y, 2)
    np.testing.assert_array_equal(res.status == "attackable", attackable)
    np.testing.assert_array_equal(res.status == "misclassified", ~correct)
    for i, xw in res.witnesses.items():
        assert _sk_vote(model, xw.reshape(1, -1))[0] != y[i]


@pytest.mark.parametrize("n_trees", [4, 6, 8])
def test_even_forests_ties_follow_the_vote_rule(n_trees):
    # with an even number of trees ties happen; brute force, FLB and ELB must use the
    # same rule as the vote (ties to the first class by default)
    model, X, y = toy_forest(11 + n_trees, n_trees=n_trees, depth=3)
    votes = reference_tree_votes(model, X)
    assert np.any(votes.sum(axis=1) * 2 == n_trees)  # ties occur on this data
    for b in (1, 2):
        res = certify(model, X, y, budget=b, method="cascade")
        correct, att = reference_brute(model, X, y, b)
        np.testing.assert_array_equal(res.status == "misclassified", ~correct)
        np.testing.assert_array_equal(res.status == "attackable", att)
        for i in np.flatnonzero(correct):
            flb_open = res.status[i] != "certified_flb"
            assert flb_open == reference_flb(model, X[i], y[i], b, 2)


def test_witness_flips_decision_tree_predict():
    # for a single tree the certified vote is the tree's own predict
    from sklearn.datasets import load_breast_cancer
    from sklearn.tree import DecisionTreeClassifier

    X, y = load_breast_cancer(return_X_y=True)
    labels = np.where(y == 1, "benign", "malignant")
    dt = DecisionTreeClassifier(max_depth=5, random_state=0).fit(X[:400], labels[:400])
    res = certify(dt, X[400:], labels[400:], budget=1)
    assert len(res.witnesses) > 0
    for i, xw in res.witnesses.items():
        assert dt.predict(xw.reshape(1, -1))[0] != labels[400 + i]
    # one tree: delta = 1 and every path tests some feature, so the bounds never certify
    assert res.stage_counts["certified_flb"] + res.stage_counts["certified_elb"] == 0
    correct, att = reference_brute(dt, X[400:], labels[400:], 1)
    np.testing.assert_array_equal(res.status == "attackable", att)
