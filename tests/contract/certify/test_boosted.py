"""Certification of boosted ensembles (issue #15): XGBoost, LightGBM, scikit-learn GB / HGB.

Oracles, all independent of fairlens' kernels:

* a literal enumeration that calls the library's own ``predict`` on every combination of a
  dense per-feature grid (each threshold read from the library's own dataframe/tree dump,
  one ulp below and above it, and values beyond the extremes) for every set of ``b`` features;
* the library's raw scores (``output_margin``/``raw_score``/``decision_function``) against
  the replay of the flat arrays;
* dtai-veritas (test_boosted_veritas.py).
"""
import itertools
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairlens.certify import certify, instance_covers, read_model
from tests.conftest import JIT_DISABLED

ROBUST = ("certified_flb", "certified_elb", "robust_brute")


def _data(seed, n=160, d=4, n_classes=2):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, d)), 2)
    s = X[:, 0] + X[:, 1] * X[:, 2] - 0.5 * X[:, 3] + 0.3 * rng.normal(size=n)
    if n_classes == 2:
        y = (s > 0).astype(int)
    else:
        y = np.digitize(s, np.quantile(s, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y


def _fit(kind, n_classes, seed=0, n_trees=4, depth=2, d=4):
    X, y = _data(seed, d=d, n_classes=n_classes)
    Xtr, ytr = X[:120], y[:120]
    if kind == "xgboost":
        xgb = pytest.importorskip("xgboost")
        m = xgb.XGBClassifier(n_estimators=n_trees, max_depth=depth, learning_rate=0.5, random_state=seed,
                              n_jobs=1)
    elif kind == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        m = lgb.LGBMClassifier(n_estimators=n_trees, num_leaves=2 ** depth, max_depth=depth, learning_rate=0.5,
                               min_child_samples=5, random_state=seed, verbose=-1, n_jobs=1)
    elif kind == "gb":
        from sklearn.ensemble import GradientBoostingClassifier

        m = GradientBoostingClassifier(n_estimators=n_trees, max_depth=depth, learning_rate=0.5, random_state=seed)
    else:
        from sklearn.ensemble import HistGradientBoostingClassifier

        m = HistGradientBoostingClassifier(max_iter=n_trees, max_depth=depth, learning_rate=0.5,
                                           min_samples_leaf=5, random_state=seed)
    m.fit(Xtr, ytr)
    return m, X[120:], y[120:]


def _thresholds(model):
    """Per feature, the split values read through the library's own public dump."""
    kind = type(model).__module__.split(".")[0]
    d = model.n_features_in_
    out = {f: [] for f in range(d)}
    if kind == "xgboost":
        df = model.get_booster().trees_to_dataframe()
        df = df[df["Feature"] != "Leaf"]
        for f, s in zip(df["Feature"], df["Split"]):
            out[int(str(f).lstrip("f"))].append(float(np.float32(s)))
    elif kind == "lightgbm":
        df = model.booster_.trees_to_dataframe()
        df = df[df["split_feature"].notna()]
        names = model.booster_.feature_name()
        for f, t in zip(df["split_feature"], df["threshold"]):
            out[names.index(f)].append(float(t))
    elif hasattr(model, "estimators_"):
        for est in model.estimators_.ravel():
            tr = est.tree_
            for f, t in zip(tr.feature, tr.threshold):
                if f >= 0:
                    out[int(f)].append(float(t))
    else:
        for it in model._predictors:
            for p in it:
                nd = p.nodes
                for f, t, leaf in zip(nd["feature_idx"], nd["num_threshold"], nd["is_leaf"]):
                    if not leaf:
                        out[int(f)].append(float(t))
    return out


def _grid(thr, f32):
    """Dense grid: every threshold, one ulp either side (float32 and float64) and beyond the ends."""
    vals = set()
    for t in thr:
        for v in (t, np.nextafter(t, -np.inf), np.nextafter(t, np.inf)):
            vals.add(float(v))
        t32 = np.float32(t)
        for v in (t32, np.nextafter(t32, np.float32(-np.inf)), np.nextafter(t32, np.float32(np.inf))):
            vals.add(float(v))
    if thr:
        vals.update([min(thr) - 1.0, max(thr) + 1.0])
    return sorted(vals)


def _oracle(model, X, y, budget):
    """Literal enumeration with the library's predict: robust (True) / attackable per row."""
    thr = _thresholds(model)
    grids = {f: _grid(v, True) for f, v in thr.items()}
    pred = model.predict(X)
    out = []
    for i in range(X.shape[0]):
        if pred[i] != y[i]:
            out.append(None)
            continue
        rows = []
        for F in itertools.combinations(range(X.shape[1]), budget):
            for combo in itertools.product(*[grids[f] or [X[i, f]] for f in F]):
                xp = X[i].copy()
                xp[list(F)] = combo
                rows.append(xp)
        out.append(bool(np.all(model.predict(np.asarray(rows)) == y[i])))
    return out


KINDS = ["xgboost", "lightgbm", "gb", "hgb"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_replay_equals_library_scores(kind, n_classes):
    model, X, y = _fit(kind, n_classes, n_trees=6, depth=3)
    bm = read_model(model)
    rep = bm.replay_scores(X)
    lib = bm.library_scores(X)
    # the flat arrays reproduce the library's raw scores (up to the constant column of binary models)
    np.testing.assert_allclose(rep - rep[:, :1], lib - lib[:, :1], rtol=0, atol=1e-12)
    assert bm.n_classes == n_classes
    np.testing.assert_array_equal(bm.predict(X), model.predict(X))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("budget", [1, 2])
def test_exact_against_literal_enumeration(kind, n_classes, budget):
    model, X, y = _fit(kind, n_classes, n_trees=3, depth=2)
    X, y = X[:12], y[:12]
    ref = _oracle(model, X, y, budget)
    for method in ("cascade", "brute"):
        res = certify(model, X, y, budget=budget, method=method)
        for i, r in enumerate(ref):
            if r is None:
                assert res.status[i] == "misclassified"
            else:
                assert (res.status[i] in ROBUST) == r, (i, res.status[i], r)
        assert res.accuracy_exact == pytest.approx(np.mean([r is True for r in ref]))
        assert res.accuracy_interval == (res.accuracy, res.accuracy)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_every_witness_flips_library_predict(kind, n_classes):
    model, X, y = _fit(kind, n_classes, n_trees=8, depth=3)
    for budget in (1, 2):
        res = certify(model, X, y, budget=budget)
        att = np.flatnonzero(res.status == "attackable")
        assert len(att) == len(res.witnesses) > 0
        W = np.vstack([res.witnesses[i] for i in att])
        assert np.all(model.predict(W) != y[att])  # 100% of witnesses
        for i in att:
            changed = np.flatnonzero(res.witnesses[i] != X[i])
            assert 1 <= changed.size <= budget
            feats, vals = res.witness_changes[i]
            assert set(changed) <= set(feats)


@pytest.mark.parametrize("kind", KINDS)
def test_cascade_bounds_ordered_and_sound(kind):
    model, X, y = _fit(kind, 2, n_trees=10, depth=2, d=8)
    for budget in (1, 2):
        casc = certify(model, X, y, budget=budget)
        brute = certify(model, X, y, budget=budget, method="brute")
        flb = certify(model, X, y, budget=budget, method="flb")
        elb = certify(model, X, y, budget=budget, method="elb")
        assert flb.accuracy <= elb.accuracy <= brute.accuracy_exact == casc.accuracy_exact
        # a bound never certifies a row brute force attacks
        for r in (flb, elb):
            cert = np.isin(r.status, ROBUST)
            assert not np.any(cert & (brute.status == "attackable"))
        assert casc.accuracy_flb == flb.accuracy and casc.accuracy_elb == elb.accuracy


def _additive(kind):
    """Stumps on ten features that each matter a little: the bounds settle many rows."""
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(260, 10)), 2)
    y = (X.sum(1) + 0.3 * rng.normal(size=260) > 0).astype(int)
    if kind == "xgboost":
        xgb = pytest.importorskip("xgboost")
        m = xgb.XGBClassifier(n_estimators=20, max_depth=1, learning_rate=0.3, n_jobs=1)
    elif kind == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        m = lgb.LGBMClassifier(n_estimators=20, num_leaves=2, learning_rate=0.3, verbose=-1, min_child_samples=5,
                               n_jobs=1)
    elif kind == "gb":
        from sklearn.ensemble import GradientBoostingClassifier

        m = GradientBoostingClassifier(n_estimators=20, max_depth=1, learning_rate=0.3)
    else:
        from sklearn.ensemble import HistGradientBoostingClassifier

        m = HistGradientBoostingClassifier(max_iter=20, max_depth=2, learning_rate=0.3)
    m.fit(X[:200], y[:200])
    return m, X[200:], y[200:]


@pytest.mark.parametrize("kind", KINDS)
def test_flb_settles_rows_and_agrees_with_brute_force(kind):
    model, X, y = _additive(kind)
    casc = certify(model, X, y, budget=1)
    brute = certify(model, X, y, budget=1, method="brute")
    assert casc.stage_counts["certified_flb"] > 0
    assert casc.n_brute < np.sum(casc.status != "misclassified")
    np.testing.assert_array_equal(np.isin(casc.status, ROBUST), brute.status == "robust_brute")
    assert casc.accuracy_exact == brute.accuracy_exact


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), kind=st.sampled_from(KINDS), n_classes=st.sampled_from([2, 3]),
       budget=st.integers(1, 2))
def test_bounds_never_certify_an_attacked_row(seed, kind, n_classes, budget):
    model, X, y = _fit(kind, n_classes, seed=seed, n_trees=3, depth=2, d=5)
    X, y = X[:10], y[:10]
    brute = certify(model, X, y, budget=budget, method="brute")
    for method in ("flb", "elb"):
        r = certify(model, X, y, budget=budget, method=method)
        assert not np.any(np.isin(r.status, ROBUST) & (brute.status == "attackable"))
    assert np.all(model.predict(np.vstack(list(brute.witnesses.values()))) != y[list(brute.witnesses)]) \
        if brute.witnesses else True


def test_boosters_and_frames():
    xgb = pytest.importorskip("xgboost")
    lgb = pytest.importorskip("lightgbm")
    import pandas as pd

    X, y = _data(1, n_classes=2)
    cols = ["a", "b", "c", "d"]
    frame = pd.DataFrame(X, columns=cols)
    bst = xgb.train({"objective": "binary:logistic", "max_depth": 2}, xgb.DMatrix(X[:120], y[:120]), 4)
    lbst = lgb.train({"objective": "binary", "num_leaves": 4, "verbose": -1, "min_data_in_leaf": 5},
                     lgb.Dataset(X[:120], y[:120]), 4)
    for model in (bst, lbst):
        res = certify(model, X[120:], y[120:], budget=1)
        att = np.flatnonzero(res.status == "attackable")
        if model is bst:
            p = (model.predict(xgb.DMatrix(np.vstack([res.witnesses[i] for i in att]))) > 0.5).astype(int)
        else:
            p = (model.predict(np.vstack([res.witnesses[i] for i in att])) > 0.5).astype(int)
        assert np.all(p != y[120:][att])
    # a model fitted on a DataFrame: columns are aligned by name
    m = lgb.LGBMClassifier(n_estimators=4, num_leaves=4, verbose=-1, min_child_samples=5).fit(frame[:120], y[:120])
    a = certify(m, frame[120:], y[120:], budget=1)
    b = certify(m, frame[120:][cols[::-1]], y[120:], budget=1)
    np.testing.assert_array_equal(a.status, b.status)
    with pytest.raises(ValueError, match="missing"):
        certify(m, frame[120:][cols[:3]], y[120:], budget=1)


def test_categorical_splits_raise_naming_the_feature():
    lgb = pytest.importorskip("lightgbm")
    import pandas as pd
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = _data(2)
    frame = pd.DataFrame({"num": X[:, 0], "colour": pd.Categorical(np.where(X[:, 1] > 0, "red", "blue"))})
    m = lgb.LGBMClassifier(n_estimators=3, verbose=-1, min_child_samples=5).fit(frame, y)
    with pytest.raises(ValueError, match="colour"):
        certify(m, frame, y)
    h = HistGradientBoostingClassifier(max_iter=3).fit(frame, y)
    with pytest.raises(ValueError, match="colour"):
        certify(h, frame, y)
    xgb = pytest.importorskip("xgboost")
    y2 = (X[:, 1] > 0).astype(int)  # colour decides: XGBoost splits on it
    xm = xgb.XGBClassifier(n_estimators=3, max_depth=2, enable_categorical=True, tree_method="hist").fit(frame, y2)
    with pytest.raises(ValueError, match="colour"):
        certify(xm, frame, y2)


def test_unsupported_models_are_refused():
    from sklearn.ensemble import GradientBoostingRegressor

    X, y = _data(3)
    with pytest.raises(TypeError, match="not a classifier"):
        certify(GradientBoostingRegressor(n_estimators=2).fit(X, y), X, y)
    xgb = pytest.importorskip("xgboost")
    m = xgb.XGBClassifier(n_estimators=2, objective="binary:logitraw").fit(X, y)
    with pytest.raises(ValueError, match="logitraw"):
        certify(m, X, y)
    model, Xt, yt = _fit("gb", 2)
    with pytest.raises(ValueError, match="vote"):
        certify(model, Xt, yt, vote="hard")
    with pytest.raises(ValueError, match="budget"):
        certify(model, Xt, yt, budget=5)
    with pytest.raises(ValueError, match="NaN"):
        certify(model, np.where(Xt > 1, np.nan, Xt), yt)


def test_time_limit_gives_unknown_and_interval():
    model, X, y = _fit("hgb", 2, n_trees=6, depth=3)
    res = certify(model, X, y, budget=2, time_limit=0.0)
    correct = model.predict(X) == y
    assert np.all(res.status[correct] == "unknown")
    lo, hi = res.accuracy_interval
    assert lo == 0.0 and hi == pytest.approx(correct.mean())
    assert res.accuracy_exact is None
    full = certify(model, X, y, budget=2)
    assert full.accuracy_interval[0] == full.accuracy_interval[1] == full.accuracy_exact
    assert lo <= full.accuracy_exact <= hi


@pytest.mark.jit_heavy
def test_same_result_at_every_n_jobs():
    model, X, y = _fit("lightgbm", 3, n_trees=6, depth=3)
    X = np.vstack([X] * 2)
    y = np.concatenate([y] * 2)
    a = certify(model, X, y, budget=2, n_jobs=1)
    b = certify(model, X, y, budget=2, n_jobs=2)
    np.testing.assert_array_equal(a.status, b.status)
    assert a.witnesses.keys() == b.witnesses.keys()
    for i in a.witnesses:
        np.testing.assert_array_equal(a.witnesses[i], b.witnesses[i])


@pytest.mark.jit_heavy
def test_same_result_on_dask(dask_client):
    import joblib

    model, X, y = _fit("xgboost", 2, n_trees=6, depth=3)
    X = np.vstack([X] * 2)
    y = np.concatenate([y] * 2)
    a = certify(model, X, y, budget=2)
    with joblib.parallel_config(backend="dask"):
        b = certify(model, X, y, budget=2, n_jobs=-1)
    np.testing.assert_array_equal(a.status, b.status)


@pytest.mark.parametrize("kind", KINDS)
def test_instance_covers_of_a_boosted_model(kind):
    model, X, y = _fit(kind, 3, n_trees=4, depth=2)
    bm = read_model(model)
    cov = instance_covers(model, X[0], y[0], budget=1)
    assert cov.vote == "additive"
    assert cov.membership.shape == (bm.n_trees, X.shape[1])
    # the margin of each class equals the library's score difference
    lib = bm.library_scores(X[:1])[0]
    yi = int(np.flatnonzero(model.classes_ == y[0])[0])
    for c, m in cov.delta.items():
        assert m == pytest.approx(lib[yi] - lib[c], abs=1e-5)
    # base score plus the contributions of each class's trees is that class's raw score
    per_class = bm.base + np.bincount(cov.tree_group, weights=cov.contributions, minlength=bm.n_classes)
    np.testing.assert_allclose(per_class - per_class[0], lib - lib[0], atol=1e-5)
    for c in cov.weights:
        assert np.all(cov.weights[c] >= -1e-12)


def test_importing_certify_imports_no_boosting_library():
    code = ("import sys, fairlens.certify, numpy as np\n"
            "from sklearn.ensemble import RandomForestClassifier\n"
            "X = np.random.default_rng(0).normal(size=(30, 3)); y = (X[:, 0] > 0).astype(int)\n"
            "fairlens.certify.certify(RandomForestClassifier(3, max_depth=2, random_state=0).fit(X, y), X, y)\n"
            "assert 'xgboost' not in sys.modules and 'lightgbm' not in sys.modules, 'imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_xgboost_split_semantics_at_the_threshold():
    """``x < split`` in float32: a value equal to a split goes right, the float32 below goes left."""
    xgb = pytest.importorskip("xgboost")
    X = np.array([[0.0], [1.0], [2.0], [3.0]] * 10)
    y = np.array([0, 0, 1, 1] * 10)
    m = xgb.XGBClassifier(n_estimators=1, max_depth=1, learning_rate=1.0, base_score=0.5).fit(X, y)
    split = float(m.get_booster().trees_to_dataframe()["Split"].dropna().iloc[0])
    s32 = np.float32(split)
    pts = np.array([[float(s32)], [float(np.nextafter(s32, np.float32(-np.inf)))]])
    bm = read_model(m)
    np.testing.assert_array_equal(bm.predict(pts), m.predict(pts))
    assert m.predict(pts[:1])[0] != m.predict(pts[1:])[0]
    res = certify(m, X[:4], y[:4], budget=1)
    for i, w in res.witnesses.items():
        assert m.predict(w.reshape(1, -1))[0] != y[i]
    assert res.accuracy_exact == 0.0


def _tied_models():
    """Two stumps with leaf values -1/+1 on x0 and x1, zero base: raw scores -2, 0, 0, 2 -- exact ties."""
    from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier

    X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]] * 10)
    y = np.array([0, 1, 1, 1] * 10)
    gb = GradientBoostingClassifier(n_estimators=2, max_depth=1, learning_rate=1.0, init="zero").fit(X, y)
    for est in gb.estimators_[:, 0]:
        est.tree_.value[1:, 0, 0] = [-1.0, 1.0]
    hgb = HistGradientBoostingClassifier(max_iter=2, max_depth=2, max_leaf_nodes=2, learning_rate=1.0,
                                         min_samples_leaf=1).fit(X, y)
    hgb._baseline_prediction[:] = 0.0
    for (pred,) in hgb._predictors:
        nd = pred.nodes
        nd["value"][nd["left"][0]], nd["value"][nd["right"][0]] = -1.0, 1.0
    return gb, hgb, X[:4], np.array([0, 1, 1, 1])


def test_exact_ties_follow_each_librarys_rule():
    """GradientBoosting predicts class 1 at raw score 0 (``>= 0``), HistGradientBoosting class 0
    (``> 0``). Ties are in the ambiguous zone: the library decides, so the verdicts differ."""
    gb, hgb, X, y = _tied_models()
    assert list(gb.decision_function(X)) == [-2.0, 0.0, 0.0, 2.0] == list(hgb.decision_function(X))
    assert list(gb.predict(X)) == [0, 1, 1, 1] and list(hgb.predict(X)) == [0, 0, 0, 1]
    r_gb = certify(gb, X, y, budget=1)
    # [0,0] -> raw 0 is class 1 for GB: attackable; [1,1] -> raw 0 stays class 1: robust
    assert list(r_gb.status) == ["attackable", "attackable", "attackable", "robust_brute"]
    r_h = certify(hgb, X, y, budget=1)
    # HGB misclassifies the two rows at raw 0; [0,0] -> 0 stays class 0: robust; [1,1] -> 0 is class 0
    assert list(r_h.status) == ["robust_brute", "misclassified", "misclassified", "attackable"]
    for r, m in ((r_gb, gb), (r_h, hgb)):
        for i, w in r.witnesses.items():
            assert m.predict(w.reshape(1, -1))[0] != y[i]
    assert certify(gb, X, y, budget=2).status[3] == "attackable"


@pytest.mark.skipif(JIT_DISABLED, reason="medium model")
def test_medium_models_witnesses_and_exactness():
    for kind in KINDS:
        model, X, y = _fit(kind, 2, n_trees=30, depth=4, d=6)
        res = certify(model, X, y, budget=2)
        att = np.flatnonzero(res.status == "attackable")
        if att.size:
            assert np.all(model.predict(np.vstack([res.witnesses[i] for i in att])) != y[att])
        brute = certify(model, X, y, budget=2, method="brute")
        np.testing.assert_array_equal(np.isin(res.status, ROBUST), brute.status == "robust_brute")
