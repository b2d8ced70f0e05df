import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

from fairlens.certify import FeaturePartitionedForest, flatten_forest
from fairlens.certify._reference import reference_tree_votes, reference_vote
from tests._support.certify_helpers import toy_data


def _models():
    Xb, yb = load_breast_cancer(return_X_y=True)
    Xw, yw = load_wine(return_X_y=True)
    return [
        ("rf-bc", RandomForestClassifier(n_estimators=15, max_depth=6, random_state=0).fit(Xb, yb), Xb, yb),
        ("et-bc", ExtraTreesClassifier(n_estimators=15, random_state=1).fit(Xb, yb), Xb, yb),
        ("dt-wine", DecisionTreeClassifier(random_state=0).fit(Xw, yw + 5), Xw, yw + 5),
        ("rf-wine", RandomForestClassifier(n_estimators=12, random_state=0).fit(Xw, yw), Xw, yw),
        ("fpf-bc", FeaturePartitionedForest(budget=2, rounds=4, random_state=0).fit(Xb, yb), Xb, yb),
    ]


@pytest.mark.parametrize("name,model,X,y", _models(), ids=lambda v: v if isinstance(v, str) else "")
def test_tree_votes_equal_sklearn_trees(name, model, X, y):
    ff = flatten_forest(model)
    ours = ff.predict_trees(X)
    theirs = reference_tree_votes(model, X)
    assert ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs)
    # majority vote equals an independent vote on sklearn's own tree predictions
    np.testing.assert_array_equal(ff.encode_y(ff.predict(X)), reference_vote(theirs, ff.n_classes, ff.tie_class))
    if isinstance(model, (DecisionTreeClassifier, FeaturePartitionedForest)):
        np.testing.assert_array_equal(ff.predict(X), model.predict(X))


def _threshold_probes(model, X):
    """Rows whose values sit exactly on, and one float64 ulp around, every threshold."""
    ff = flatten_forest(model)
    internal = ff.feature >= 0
    rows = []
    base = X[0].copy()
    for f, v in zip(ff.feature[internal], ff.threshold[internal]):
        for val in (v, np.nextafter(v, -np.inf), np.nextafter(v, np.inf), float(np.float32(v))):
            r = base.copy()
            r[f] = val
            rows.append(r)
    return np.array(rows)


def test_float32_trap_is_real_and_handled():
    X, y = toy_data(3, n=200, d=4)
    model = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0).fit(X, y)
    P = _threshold_probes(model, X)
    ff = flatten_forest(model)
    theirs = reference_tree_votes(model, P)
    np.testing.assert_array_equal(ff.predict_trees(P), theirs)
    # a naive float64 traversal disagrees with sklearn on some probes: the trap exists
    naive = np.empty_like(theirs)
    for i, x in enumerate(P):
        for t, root in enumerate(ff.roots):
            node = root
            while ff.feature[node] >= 0:
                node = ff.left[node] if x[ff.feature[node]] <= ff.threshold[node] else ff.right[node]
            naive[i, t] = ff.leaf_class[node]
    assert (naive != theirs).any()


def test_flat_forest_predict_differs_only_by_voting_rule():
    Xb, yb = load_breast_cancer(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=25, random_state=0).fit(Xb[:300], yb[:300])
    ff = flatten_forest(rf, vote="hard")
    hard = reference_vote(reference_tree_votes(rf, Xb[300:]), 2)
    np.testing.assert_array_equal(ff.encode_y(ff.predict(Xb[300:])), hard)
    # the default (soft) predictor is scikit-learn's own predict, bit for bit
    soft = flatten_forest(rf)
    assert soft.vote == "soft"
    np.testing.assert_array_equal(soft.predict(Xb[300:]), rf.predict(Xb[300:]))
    np.testing.assert_array_equal(soft.predict_proba(Xb[300:]), rf.predict_proba(Xb[300:]))


def test_tie_class_option():
    X, y = toy_data(5)
    rf = RandomForestClassifier(n_estimators=4, max_depth=2, random_state=0).fit(X, y)
    votes = reference_tree_votes(rf, X)
    tied = votes.sum(axis=1) == 2
    assert tied.any()
    assert (flatten_forest(rf, vote="hard").predict(X)[tied] == rf.classes_[0]).all()
    assert (flatten_forest(rf, tie_class=1, vote="hard").predict(X)[tied] == 1).all()
    with pytest.raises(ValueError, match="tie_class"):
        flatten_forest(rf, tie_class=7, vote="hard")
    with pytest.raises(ValueError, match="tie_class"):
        flatten_forest(rf, tie_class=1)  # the soft vote breaks ties as sklearn does
