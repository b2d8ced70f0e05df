"""Missing values and certification (issue 24, item 4).

Every library whose ``predict`` accepts NaN routes it by a default direction stored at each split.
These tests check, against each installed library's own ``predict``:

* the NaN routing every reader records (``TreeEnsemble.missing_left``) -- routing a row with NaN
  through the read ensemble's node arrays (a plain NumPy walk, ``certify_helpers.route_leaves``) reaches the
  leaves the library reaches (same scores, same prediction), for random trees fitted on data with NaN
  (and on features that never saw NaN);
* ``TreeEnsemble.accepts_nan`` -- equal to calling ``predict`` on NaN;
* the literal oracle ``reference_attack(..., missing=True)`` (NaN as one more candidate value);
* the reproducers of the issue: rows certified robust at budget 1 that one NaN flips, and rows with
  NaN, which ``certify`` now certifies (``missing="auto"``: NaN is one more attack value when
  ``predict`` accepts it; ``missing=False``: the finite threat model), equal to the oracle.
"""

import numpy as np
import pytest
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.tree import DecisionTreeClassifier

from fairlens.certify import FeaturePartitionedForest, certify, flatten_forest, read_model
from tests._support.certify_helpers import lgb_nodes, route_leaves

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")



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


# ---------------------------------------------------------------------------------------------
# the recorded routing: scikit-learn trees and forests
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
    assert ff.accepts_nan(model) and ff.model is None  # asked of the model; the replay needs none
    assert ff.missing_left.shape == ff.feature.shape
    Q = _queries(seed, X)
    leaves = route_leaves(ff, ff.round_X(Q))
    trees = model.estimators_ if hasattr(model, "estimators_") else [model]
    for t, (tree, root) in enumerate(zip(trees, ff.roots)):
        assert np.array_equal(leaves[:, t] - root, tree.apply(Q)), t
    proba = ff.value[leaves].mean(axis=1)  # the soft vote: scikit-learn's predict
    assert np.array_equal(ff.classes_[np.argmax(proba, axis=1)], model.predict(Q))


def test_sklearn_tree_without_nan_sends_nan_to_the_larger_child():
    """A tree fitted without NaN accepts NaN; it goes to the child with more training samples
    (the stored flag), which is what predict does."""
    X, y = _data(3, nan_features=[])
    tree = DecisionTreeClassifier(max_depth=5, random_state=0).fit(X, y)
    ml = read_model(tree).missing_left
    t = tree.tree_
    internal = t.children_left >= 0
    n_left = t.n_node_samples[t.children_left[internal]]
    n_right = t.n_node_samples[t.children_right[internal]]
    unequal = n_left != n_right
    assert np.array_equal(ml[internal][unequal], (n_left > n_right)[unequal])


def test_fpf_and_gradient_boosting_refuse_nan():
    X, y = _data(4, nan_features=[])
    fpf = FeaturePartitionedForest(budget=1, rounds=2, random_state=0).fit(X, y)
    gb = GradientBoostingClassifier(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
    for model in (fpf, gb):
        assert not read_model(model).accepts_nan(model)
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
    assert read_model(model).accepts_nan(model) is literal


# ---------------------------------------------------------------------------------------------
# the recorded routing: boosted libraries
# ---------------------------------------------------------------------------------------------
def _scores_from_leaves(bm, leaves):
    """Raw scores (n, K) from reached leaves, summed per class (float64; tolerance in the caller)."""
    s = np.tile(bm.base, (leaves.shape[0], 1))
    for t in range(leaves.shape[1]):
        s[:, bm.group[t]] += bm.value[leaves[:, t], 0]
    return s


def _lib_margin(model, Q):
    if isinstance(model, HistGradientBoostingClassifier):
        return model.decision_function(Q)
    if type(model).__module__.startswith("xgboost"):
        return model.predict(Q, output_margin=True)
    return model.predict(Q, raw_score=True)


def _check_boosted(model, Q):
    bm = read_model(model)
    assert bm.accepts_nan() and bm.accepts_nan(model)
    leaves = route_leaves(bm, bm.round_X(Q))  # as the library reads Q: float32, LightGBM's zero band, missing=v
    s = _scores_from_leaves(bm, leaves)
    lib = np.asarray(_lib_margin(model, Q), dtype=np.float64)
    mine = s[:, 1] if lib.ndim == 1 else s
    assert np.allclose(mine, lib, rtol=1e-5, atol=1e-5)
    clear = np.abs(s[:, 1]) > 1e-4 if lib.ndim == 1 else np.ones(len(Q), dtype=bool)
    assert np.array_equal(bm.classes_[np.argmax(s, axis=1)][clear], model.predict(Q)[clear])
    return bm


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("nan_features", [None, [1, 3]])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_xgboost_routes_nan_as_predict(seed, nan_features, n_classes):
    X, y = _data(seed, nan_features=nan_features)
    if n_classes == 3:
        y = y + (np.nan_to_num(X[:, 3]) > 1)
    model = xgb.XGBClassifier(n_estimators=12, max_depth=3, learning_rate=0.5, random_state=seed,
                              n_jobs=1).fit(X, y)
    bm = _check_boosted(model, _queries(seed, X))
    assert bm.source == "XGBClassifier" and np.isnan(bm.missing_value)


def test_xgboost_missing_parameter_zero():
    """XGBClassifier(missing=0): zero *and* NaN take the default direction."""
    X, y = _data(6, zeros=True)
    model = xgb.XGBClassifier(n_estimators=10, max_depth=3, missing=0.0, random_state=0, n_jobs=1).fit(X, y)
    assert read_model(model).missing_value == 0.0
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
    _check_boosted(model, _queries(seed, X))
    nd = lgb_nodes(model)
    assert set(np.unique(nd["missing_type"][nd["feature"] >= 0])) <= {0, 2}
    if kw or nan_features == []:
        assert (nd["missing_type"][nd["feature"] >= 0] == 0).all()  # NaN read as 0


@pytest.mark.parametrize("seed", [0, 1])
def test_lightgbm_zero_as_missing(seed):
    """missing_type "Zero": NaN and zero (every |x| <= 1e-35f) take the default direction. The reader
    writes each such node as three plain threshold nodes; the routing is laid out the same, and
    routing rows with NaN, zeros and band values through the flat arrays gives predict's raw scores
    (tests/contract/certify/test_lightgbm_zero_missing.py certifies such models)."""
    X, y = _data(seed, zeros=True)
    model = lgb.LGBMClassifier(n_estimators=10, num_leaves=6, min_child_samples=5, verbose=-1, n_jobs=1,
                               random_state=seed, zero_as_missing=True).fit(X, y)
    nd = lgb_nodes(model)
    assert (nd["missing_type"][nd["feature"] >= 0] == 1).all()
    bm = read_model(model)
    assert bm.feature.size == nd["feature"].size + 2 * int((nd["feature"] >= 0).sum())  # three nodes each
    Q = _queries(seed, X)
    Q[::4, 1] = 0.0
    Q[1::4, 2] = 1e-36
    _check_boosted(model, Q)
    Z = Q.copy()
    Z[np.isnan(Z)] = 0.0
    assert np.array_equal(model.predict(Z, raw_score=True), model.predict(Q, raw_score=True))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("nan_features", [None, [1], []])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_hist_gradient_boosting_routes_nan_as_predict(seed, nan_features, n_classes):
    X, y = _data(seed, nan_features=nan_features)
    if n_classes == 3:
        y = y + (np.nan_to_num(X[:, 3]) > 1)
    model = HistGradientBoostingClassifier(max_iter=10, max_depth=3, learning_rate=0.5,
                                           random_state=seed).fit(X, y)
    bm = _check_boosted(model, _queries(seed, X))
    assert bm.source == "HistGradientBoostingClassifier"


def test_routing_is_needed():
    """Without the routing (NaN compared as a number: always right) the scores differ: the test above
    could fail."""
    X, y = _data(0)
    model = xgb.XGBClassifier(n_estimators=12, max_depth=3, learning_rate=0.5, random_state=0, n_jobs=1).fit(X, y)
    bm = read_model(model)
    Q = _queries(0, X)
    leaves = route_leaves(bm, bm.round_X(Q), missing_left=np.zeros_like(bm.missing_left))
    s = _scores_from_leaves(bm, leaves)[:, 1]
    assert not np.allclose(s, model.predict(Q, output_margin=True), rtol=1e-5, atol=1e-5)


def test_bad_models():
    """A forest's ensemble keeps no model: given alone, it cannot say that predict takes NaN."""
    assert flatten_forest(DecisionTreeClassifier().fit([[0.0], [1.0]], [0, 1])).accepts_nan() is False
    with pytest.raises(TypeError, match="model must be"):
        read_model(object())


# ---------------------------------------------------------------------------------------------
# the reproducers of issue 24 (missing values break the certificate)
# ---------------------------------------------------------------------------------------------
def _issue_data(seed, n=500, d=8):
    """Features go missing with the label: feature 1 is blank for half of the class-0 rows."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, :6].sum(axis=1) + 0.5 * rng.normal(size=n) > 0).astype(int)
    for f in range(d):
        hole = rng.random(n) < np.where(y == 0, 0.5 if f == 1 else 0.1, 0.02)
        X[hole, f] = np.nan
    finite = ~np.isnan(X[400:]).any(axis=1)
    return X[:400], y[:400], X[400:][finite][:40], y[400:][finite][:40], X[400:][~finite][:20], y[400:][~finite][:20]


def _issue_model(lib, seed, X, y):
    if lib == "xgboost":
        return xgb.XGBClassifier(n_estimators=30, max_depth=2, random_state=seed, n_jobs=1).fit(X, y)
    return lgb.LGBMClassifier(n_estimators=30, num_leaves=4, random_state=seed, n_jobs=1, verbose=-1).fit(X, y)


def _xgb_reproducer():
    X, y, Xt, yt, _, _ = _issue_data(0)
    model = _issue_model("xgboost", 0, X, y)
    return model, Xt, yt, 2  # row 2: class 1, robust at budget 1 with finite values


def test_reproducer_xgboost_certify_sees_the_nan_attack():
    model, Xt, yt, i = _xgb_reproducer()
    res = certify(model, Xt[i:i + 1], yt[i:i + 1], budget=1, method="brute")
    assert res.status[0] == "attackable"


def test_reproducer_xgboost_missing_false_keeps_the_finite_threat_model():
    model, Xt, yt, i = _xgb_reproducer()
    res = certify(model, Xt[i:i + 1], yt[i:i + 1], budget=1, method="brute", missing=False)
    assert res.status[0] == "robust_brute"


def test_rows_with_nan_are_accepted_by_predict():
    """The library predicts rows with NaN (certify certifies them: test_rows_with_nan_are_certified)."""
    X, y, _, _, Xn, yn = _issue_data(1)
    model = _issue_model("xgboost", 1, X, y)
    assert np.isnan(Xn).any() and model.predict(Xn).shape == (len(Xn),)
    assert read_model(model).accepts_nan()


# ---------------------------------------------------------------------------------------------
# LightGBM clamps |x| >= 1e300 (found while building the reproducers)
# ---------------------------------------------------------------------------------------------
def _lgb_big_threshold_model():
    X, y, Xt, yt, _, _ = _issue_data(0)
    return _issue_model("lightgbm", 0, X, y), Xt, yt


def test_lightgbm_reads_huge_values_as_1e300():
    """A LightGBM split that parts NaN from every finite value is dumped at threshold 1e300, and
    LightGBM's predict reads every x >= 1e300 (even inf) as 1e300: no value goes right of it but NaN."""
    model, Xt, _ = _lgb_big_threshold_model()
    nd = lgb_nodes(model)
    big = np.flatnonzero(nd["threshold"] >= 1e300)
    assert big.size and (nd["threshold"][big] == 1e300).all()
    f = int(nd["feature"][big[0]])
    x = np.repeat(Xt[:1], 4, axis=0)
    x[:, f] = [1e300, np.nextafter(1e300, np.inf), 1e308, np.inf]
    raw = model.predict(x, raw_score=True)
    assert (raw == raw[0]).all()


# ---------------------------------------------------------------------------------------------
# scikit-learn's NaN-only splits sit at threshold inf (found while building the oracle)
# ---------------------------------------------------------------------------------------------
def _rf_inf_split():
    rng = np.random.default_rng(8)
    X = np.round(rng.normal(size=(300, 4)) * 3) / 3
    y = (X[:, 0] + X[:, 1] * (X[:, 2] > 0) + 0.3 * rng.normal(size=300) > 0).astype(int)
    X[rng.random(300) < np.where(y == 1, 0.6, 0.2), 1] = np.nan
    rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X[:240], y[:240])
    ok = ~np.isnan(X[240:]).any(axis=1)
    return rf, X[240:][ok], y[240:][ok]


def test_sklearn_nan_split_is_at_inf():
    """A scikit-learn split of NaN from every finite value has threshold inf: every finite value
    goes left, NaN follows missing_go_to_left (right), and predict refuses inf itself."""
    rf, Xt, _ = _rf_inf_split()
    ff = flatten_forest(rf)
    at_inf = np.flatnonzero(np.isinf(ff.threshold))
    assert at_inf.size and not ff.missing_left[at_inf].any()
    with pytest.raises(ValueError, match="infinity"):
        rf.predict(np.where(np.arange(4) == 1, np.inf, Xt[:1]))


def test_xgboost_missing_zero_replay_matches_predict():
    X, y = _data(6, zeros=True, nan_features=[])
    model = xgb.XGBClassifier(n_estimators=10, max_depth=3, missing=0.0, random_state=0, n_jobs=1).fit(X, y)
    Q = X[:60]
    assert (Q == 0).any()
    assert np.allclose(read_model(model).replay_scores(Q)[:, 1], model.predict(Q, output_margin=True),
                       rtol=1e-5, atol=1e-5)
