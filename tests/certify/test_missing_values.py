"""Missing values and certification (issue 24, item 4).

Every library whose ``predict`` accepts NaN routes it by a default direction stored at each split.
These tests check, against each installed library's own ``predict``:

* :func:`fairlens.certify._missing.missing_routing` -- routing a row with NaN through the readers'
  flat arrays plus ``missing_left`` reaches the leaves the library reaches (same scores, same
  prediction), for random trees fitted on data with NaN (and on features that never saw NaN);
* :func:`fairlens.certify._missing.accepts_missing` -- equal to calling ``predict`` on NaN;
* the literal oracle ``reference_attack(..., missing=True)`` (NaN as one more candidate value);
* the reproducers of the issue: rows certified robust at budget 1 that one NaN flips, and rows with
  NaN refused by ``certify``. The tests that need NaN in the certification kernels are marked
  ``xfail(strict=True)``: they pass today and fail (strict) once the engine does it -- then remove
  the marks.
"""
import warnings

import numpy as np
import pytest
from sklearn.ensemble import (ExtraTreesClassifier, GradientBoostingClassifier, HistGradientBoostingClassifier,
                              RandomForestClassifier)
from sklearn.tree import DecisionTreeClassifier

from fairlens.certify import FeaturePartitionedForest, certify, flatten_boosted, flatten_forest
from fairlens.certify._missing import (LGB_ZERO, accepts_missing, lgb_nodes, missing_routing,
                                       route_leaves)
# reference_attack imported in the oracle section

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")

NEEDS_ENGINE = pytest.mark.xfail(strict=True, reason="needs NaN in the certification kernels (#24 item 4)")


def _data(seed, n=300, d=4, p_nan=0.2, nan_features=None, zeros=False):
    """Random data; NaN in the features ``nan_features`` (default: all), more often for label 1."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, d)) * 3) / 3
    if zeros:
        X[rng.random((n, d)) < 0.2] = 0.0
    y = (X[:, 0] + X[:, 1] * (X[:, 2] > 0) + 0.3 * rng.normal(size=n) > 0).astype(int)
    feats = range(d) if nan_features is None else nan_features
    for f in feats:
        hole = rng.random(n) < np.where(y == 1, 1.5 * p_nan, 0.5 * p_nan)
        X[hole, f] = np.nan
    return X, y


def _queries(seed, X, n=80):
    """Rows with NaN in random places (including all-NaN rows and single NaN per feature)."""
    rng = np.random.default_rng(seed + 1000)
    Q = X[rng.integers(0, X.shape[0], n)].copy()
    Q[~np.isnan(Q)] += 0.0
    Q[rng.random(Q.shape) < 0.3] = np.nan
    single = np.repeat(X[:1], X.shape[1], axis=0)
    single[np.arange(X.shape[1]), np.arange(X.shape[1])] = np.nan
    return np.vstack([Q, np.full((1, X.shape[1]), np.nan), single])


def _lgb_read(X):
    return np.where(np.abs(X) <= LGB_ZERO, 0.0, X)


# ---------------------------------------------------------------------------------------------
# missing_routing: scikit-learn trees and forests
# ---------------------------------------------------------------------------------------------
SKLEARN_TREES = [
    lambda s: DecisionTreeClassifier(max_depth=4, random_state=s),
    lambda s: RandomForestClassifier(n_estimators=5, max_depth=4, random_state=s),
    lambda s: ExtraTreesClassifier(n_estimators=5, max_depth=4, random_state=s),
]


@pytest.mark.parametrize("make", SKLEARN_TREES)
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("nan_features", [None, [0, 2], []])
def test_sklearn_trees_route_nan_as_predict(make, seed, nan_features):
    X, y = _data(seed, nan_features=nan_features)
    model = make(seed).fit(X, y)
    ff = flatten_forest(model)
    r = missing_routing(model)
    assert r.accepts_missing and r.library == "sklearn_tree"
    assert np.array_equal(r.feature, ff.feature) and r.missing_left.shape == ff.feature.shape
    Q = _queries(seed, X)
    leaves = route_leaves(ff.feature, ff.threshold, ff.left, ff.right, ff.roots,
                          r, Q.astype(np.float32).astype(np.float64))
    trees = model.estimators_ if hasattr(model, "estimators_") else [model]
    for t, (tree, root) in enumerate(zip(trees, ff.roots)):
        assert np.array_equal(leaves[:, t] - root, tree.apply(Q)), t
    proba = ff.leaf_proba[leaves].mean(axis=1)  # the soft vote: scikit-learn's predict
    assert np.array_equal(ff.classes_[np.argmax(proba, axis=1)], model.predict(Q))


def test_sklearn_tree_without_nan_sends_nan_to_the_larger_child():
    """A tree fitted without NaN accepts NaN; it goes to the child with more training samples
    (the stored flag), which is what predict does."""
    X, y = _data(3, nan_features=[])
    tree = DecisionTreeClassifier(max_depth=5, random_state=0).fit(X, y)
    r = missing_routing(tree)
    t = tree.tree_
    internal = t.children_left >= 0
    n_left = t.n_node_samples[t.children_left[internal]]
    n_right = t.n_node_samples[t.children_right[internal]]
    unequal = n_left != n_right
    assert np.array_equal(r.missing_left[internal][unequal], (n_left > n_right)[unequal])


def test_fpf_and_gradient_boosting_refuse_nan():
    X, y = _data(4, nan_features=[])
    fpf = FeaturePartitionedForest(budget=1, rounds=2, random_state=0).fit(X, y)
    gb = GradientBoostingClassifier(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
    for model, flat in [(fpf, flatten_forest(fpf)), (gb, flatten_boosted(gb))]:
        r = missing_routing(model)
        assert not r.accepts_missing and not accepts_missing(model)
        assert np.array_equal(r.feature, flat.feature)
        with pytest.raises(ValueError):
            model.predict(np.full((1, X.shape[1]), np.nan))


@pytest.mark.parametrize("make", [
    lambda: DecisionTreeClassifier(max_depth=3, monotonic_cst=[1, 0, 0, 0], random_state=0),
    lambda: DecisionTreeClassifier(max_depth=3, splitter="random", random_state=0),
    lambda: DecisionTreeClassifier(max_depth=3, criterion="entropy", random_state=0),
    lambda: RandomForestClassifier(n_estimators=3, max_depth=3, bootstrap=False, random_state=0),
    lambda: ExtraTreesClassifier(n_estimators=3, max_depth=3, random_state=0),
    lambda: HistGradientBoostingClassifier(max_iter=3, random_state=0),
    lambda: GradientBoostingClassifier(n_estimators=3, random_state=0),
])
def test_accepts_missing_is_what_predict_does(make):
    X, y = _data(5, nan_features=[])
    model = make().fit(X, y)
    try:
        model.predict(np.where(np.eye(4, dtype=bool), np.nan, X[:4]))
        literal = True
    except ValueError:
        literal = False
    assert accepts_missing(model) is literal
    assert missing_routing(model).accepts_missing is literal


# ---------------------------------------------------------------------------------------------
# missing_routing: boosted libraries
# ---------------------------------------------------------------------------------------------
def _scores_from_leaves(bm, leaves):
    """Raw scores (n, K) from reached leaves, summed per class (float64; tolerance in the caller)."""
    s = np.tile(bm.base, (leaves.shape[0], 1))
    for t in range(leaves.shape[1]):
        s[:, bm.group[t]] += bm.value[leaves[:, t]]
    return s


def _lib_margin(model, Q):
    if isinstance(model, HistGradientBoostingClassifier):
        return model.decision_function(Q)
    if type(model).__module__.startswith("xgboost"):
        return model.predict(Q, output_margin=True)
    return model.predict(Q, raw_score=True)


def _check_boosted(model, Q):
    bm = flatten_boosted(model)
    r = missing_routing(model)
    assert np.array_equal(r.feature, bm.feature)
    assert r.accepts_missing and accepts_missing(model)
    if bm.f32_input:
        Qr = Q.astype(np.float32).astype(np.float64)
    elif bm.library.startswith("lightgbm"):
        Qr = _lgb_read(Q)
    else:
        Qr = Q
    leaves = route_leaves(bm.feature, bm.threshold, bm.left, bm.right, bm.roots, r, Qr)
    s = _scores_from_leaves(bm, leaves)
    lib = np.asarray(_lib_margin(model, Q), dtype=np.float64)
    mine = s[:, 1] if lib.ndim == 1 else s
    assert np.allclose(mine, lib, rtol=1e-5, atol=1e-5)
    clear = np.abs(s[:, 1]) > 1e-4 if lib.ndim == 1 else np.ones(len(Q), dtype=bool)
    assert np.array_equal(bm.classes_[np.argmax(s, axis=1)][clear], model.predict(Q)[clear])
    # without the routing (NaN compared as a number, i.e. always right) the scores differ somewhere
    return r


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("nan_features", [None, [1, 3]])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_xgboost_routes_nan_as_predict(seed, nan_features, n_classes):
    X, y = _data(seed, nan_features=nan_features)
    if n_classes == 3:
        y = y + (np.nan_to_num(X[:, 3]) > 1)
    model = xgb.XGBClassifier(n_estimators=12, max_depth=3, learning_rate=0.5, random_state=seed,
                              n_jobs=1).fit(X, y)
    r = _check_boosted(model, _queries(seed, X))
    assert r.library == "xgboost" and np.isnan(r.missing_value) and not r.zero_as_missing.any()


def test_xgboost_missing_parameter_zero():
    """XGBClassifier(missing=0): zero *and* NaN take the default direction."""
    X, y = _data(6, zeros=True)
    model = xgb.XGBClassifier(n_estimators=10, max_depth=3, missing=0.0, random_state=0, n_jobs=1).fit(X, y)
    r = missing_routing(model)
    assert r.missing_value == 0.0 and r.zero_as_missing[r.feature >= 0].all()
    Q = _queries(6, X)
    Q[::3, 0] = 0.0
    _check_boosted(model, Q)
    Z = Q.copy()
    Z[np.isnan(Z)] = 0.0
    assert np.array_equal(model.predict_proba(Z), model.predict_proba(np.where(Q == 0.0, np.nan, Q)))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("nan_features", [None, [0, 2], []])
@pytest.mark.parametrize("kw", [{}, {"use_missing": False}])
def test_lightgbm_routes_nan_as_predict(seed, nan_features, kw):
    X, y = _data(seed, nan_features=nan_features, zeros=True)
    model = lgb.LGBMClassifier(n_estimators=10, num_leaves=6, min_child_samples=5, verbose=-1, n_jobs=1,
                               random_state=seed, **kw).fit(X, y)
    r = _check_boosted(model, _queries(seed, X))
    assert r.library == "lightgbm" and set(np.unique(r.missing_type[r.feature >= 0])) <= {0, 2}
    if kw or nan_features == []:
        assert (r.missing_type[r.feature >= 0] == 0).all()  # NaN read as 0


@pytest.mark.parametrize("seed", [0, 1])
def test_lightgbm_zero_as_missing(seed):
    """missing_type "Zero": NaN and zero (every |x| <= 1e-35f) take the default direction. The reader
    refuses such models today; the routing is checked on lgb_nodes' arrays (same node order)."""
    X, y = _data(seed, zeros=True)
    model = lgb.LGBMClassifier(n_estimators=10, num_leaves=6, min_child_samples=5, verbose=-1, n_jobs=1,
                               random_state=seed, zero_as_missing=True).fit(X, y)
    r = missing_routing(model)
    nd = lgb_nodes(model)
    assert (r.missing_type[r.feature >= 0] == 1).all() and r.zero_as_missing[r.feature >= 0].all()
    Q = _queries(seed, X)
    Q[::4, 1] = 0.0
    Q[1::4, 2] = 1e-36
    leaves = route_leaves(nd["feature"], nd["threshold"], nd["left"], nd["right"], nd["roots"], r, _lgb_read(Q))
    raw = nd["value"][leaves].sum(axis=1)
    assert np.allclose(raw, model.predict(Q, raw_score=True), rtol=1e-9, atol=1e-9)
    Z = Q.copy()
    Z[np.isnan(Z)] = 0.0
    assert np.array_equal(model.predict(Z, raw_score=True), model.predict(Q, raw_score=True))
    with pytest.raises(ValueError, match="zero_as_missing"):
        flatten_boosted(model)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("nan_features", [None, [1], []])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_hist_gradient_boosting_routes_nan_as_predict(seed, nan_features, n_classes):
    X, y = _data(seed, nan_features=nan_features)
    if n_classes == 3:
        y = y + (np.nan_to_num(X[:, 3]) > 1)
    model = HistGradientBoostingClassifier(max_iter=10, max_depth=3, learning_rate=0.5,
                                           random_state=seed).fit(X, y)
    r = _check_boosted(model, _queries(seed, X))
    assert r.library == "sklearn_hgb"


def test_routing_is_needed():
    """Without the routing (NaN compared as a number: always right) the scores differ: the test above
    could fail."""
    X, y = _data(0)
    model = xgb.XGBClassifier(n_estimators=12, max_depth=3, learning_rate=0.5, random_state=0, n_jobs=1).fit(X, y)
    bm = flatten_boosted(model)
    Q = _queries(0, X)
    r = missing_routing(model)
    right = type(r)(library=r.library, feature=r.feature, missing_left=np.zeros_like(r.missing_left),
                    accepts_missing=True, zero_as_missing=r.zero_as_missing)
    leaves = route_leaves(bm.feature, bm.threshold, bm.left, bm.right, bm.roots, right,
                          Q.astype(np.float32).astype(np.float64))
    s = _scores_from_leaves(bm, leaves)[:, 1]
    assert not np.allclose(s, model.predict(Q, output_margin=True), rtol=1e-5, atol=1e-5)


def test_bad_models():
    with pytest.raises(TypeError, match="FlatForest"):
        missing_routing(flatten_forest(DecisionTreeClassifier().fit([[0.0], [1.0]], [0, 1])))
    with pytest.raises(TypeError, match="supported"):
        accepts_missing(object())
