"""Boundary behaviour of certify on boosted models: awkward inputs give the right answer or a
ValueError/TypeError naming the argument (models fitted once, outside the hypothesis loop)."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairlens.certify import accuracy_under_attack, certify, read_model
from tests.contract.certify.test_boosted import _data, _fit

COLS = ["a", "b", "c", "d"]


@pytest.fixture(scope="module")
def fitted():
    lgb = pytest.importorskip("lightgbm")
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = _data(5)
    frame = pd.DataFrame(X, columns=COLS)
    lm = lgb.LGBMClassifier(n_estimators=4, num_leaves=4, min_child_samples=5, verbose=-1, n_jobs=1)
    lm.fit(frame[:120], y[:120])
    hm = HistGradientBoostingClassifier(max_iter=4, max_depth=2).fit(X[:120], y[:120])
    return {"lgb_frame": (lm, frame[120:], y[120:]), "hgb_array": (hm, X[120:], y[120:])}


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.sampled_from(["lgb_frame", "hgb_array"]),
       bad=st.sampled_from(["nan", "inf", "string", "empty", "wrong_width", "1d", "extra_col", "missing_col",
                            "reorder", "single_row", "y_len", "y_unknown", "budget0", "budget_big", "method",
                            "n_jobs0", "time_limit_neg"]))
def test_awkward_inputs(fitted, which, bad):
    model, X, y = fitted[which]
    Xa = X.to_numpy() if hasattr(X, "to_numpy") else X
    kw = {}
    XX, yy = X, y
    if bad == "nan":
        XX = Xa.copy()
        XX[0, 1] = np.nan
    elif bad == "inf":
        XX = Xa.copy()
        XX[1, 0] = np.inf
    elif bad == "string":
        XX = np.array([["x"] * Xa.shape[1]] * 3)
        yy = y[:3]
    elif bad == "empty":
        XX, yy = Xa[:0], y[:0]
    elif bad == "wrong_width":
        XX = Xa[:, :3]
    elif bad == "1d":
        XX = Xa[0]
    elif bad == "extra_col" and hasattr(X, "columns"):
        XX = X.assign(zzz=1.0)
    elif bad == "missing_col" and hasattr(X, "columns"):
        XX = X.drop(columns="b")
    elif bad == "reorder" and hasattr(X, "columns"):
        XX = X[COLS[::-1]]
    elif bad == "single_row":
        XX, yy = X[:1], y[:1]
    elif bad == "y_len":
        yy = y[:-1]
    elif bad == "y_unknown":
        yy = np.full_like(y, 7)
    elif bad == "budget0":
        kw["budget"] = 0
    elif bad == "budget_big":
        kw["budget"] = 9
    elif bad == "method":
        kw["method"] = "exact"
    elif bad == "n_jobs0":
        kw["n_jobs"] = 0
    elif bad == "time_limit_neg":
        kw["time_limit"] = -1.0
    names = {"nan": "X", "inf": "X", "string": "X", "empty": "X", "wrong_width": "X", "1d": "X", "extra_col": "X",
             "missing_col": "X", "y_len": "y", "y_unknown": "y", "budget0": "budget", "budget_big": "budget",
             "method": "method", "n_jobs0": "n_jobs", "time_limit_neg": "time_limit"}
    if bad == "nan":  # NaN rows are certified (routed as predict routes them; #24 item 4, was refused)
        res = certify(model, XX, yy, **kw)
        assert res.status.shape == (len(yy),) and res.params["nan_attack"]
        return
    if bad in ("reorder", "single_row") or (bad in ("extra_col", "missing_col") and not hasattr(X, "columns")):
        res = certify(model, XX, yy, **kw)  # aligned by name / one row: a correct result
        ref = certify(model, X, y, **kw)
        n = len(yy)
        np.testing.assert_array_equal(res.status, ref.status[:n])
        return
    with pytest.raises((ValueError, TypeError), match=names[bad]):
        certify(model, XX, yy, **kw)


def test_accuracy_under_attack_on_boosted(fitted):
    model, X, y = fitted["hgb_array"]
    frame = accuracy_under_attack(model, X, y, budgets=(1, 2))
    assert list(frame["budget"]) == [1, 2]
    assert (frame["vote"] == "additive").all()
    assert frame["accuracy_exact"].is_monotonic_decreasing
    with pytest.raises(ValueError, match="budgets"):
        accuracy_under_attack(model, X, y, budgets=(1, 9))
    with pytest.raises(TypeError):
        accuracy_under_attack(model, X, y, budgets=(1,), colour="red")


@pytest.mark.filterwarnings("ignore:The argument 'eval_set' is deprecated")
def test_early_stopping_uses_the_best_iteration():
    xgb = pytest.importorskip("xgboost")
    lgb = pytest.importorskip("lightgbm")
    X, y = _data(6, n=400)
    xm = xgb.XGBClassifier(n_estimators=200, max_depth=3, learning_rate=0.5, early_stopping_rounds=3, n_jobs=1)
    xm.fit(X[:200], y[:200], eval_set=[(X[200:300], y[200:300])], verbose=False)
    lm = lgb.LGBMClassifier(n_estimators=200, num_leaves=8, learning_rate=0.5, verbose=-1, n_jobs=1)
    lm.fit(X[:200], y[:200], eval_set=[(X[200:300], y[200:300])], callbacks=[lgb.early_stopping(3, verbose=False)])
    for m in (xm, lm):
        bm = read_model(m)
        np.testing.assert_array_equal((bm.replay_scores(X[300:])[:, 1] > 0).astype(int), m.predict(X[300:]))
        res = certify(m, X[300:340], y[300:340], budget=1)
        att = list(res.witnesses)
        if att:
            assert np.all(m.predict(np.vstack([res.witnesses[i] for i in att])) != y[300:340][att])
    assert read_model(xm).n_trees == xm.best_iteration + 1 < 200


def test_gb_with_an_estimator_init_is_refused():
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression

    X, y = _data(7)
    m = GradientBoostingClassifier(n_estimators=2, init=LogisticRegression()).fit(X, y)
    with pytest.raises(ValueError, match="init"):
        certify(m, X, y)
    model, Xt, yt = _fit("gb", 2)
    z = GradientBoostingClassifier(n_estimators=3, init="zero").fit(Xt, yt)
    bm = read_model(z)
    np.testing.assert_array_equal(bm.base, 0.0)
    np.testing.assert_allclose(bm.replay_scores(Xt)[:, 1], z.decision_function(Xt), atol=1e-12)


def test_hgb_private_api_pin():
    """The HistGradientBoosting reader uses ``_predictors[i][k].nodes`` and ``_baseline_prediction``
    (scikit-learn 1.4-1.9); if a release renames them this test says so before the replay drifts."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = _data(8, n_classes=3)
    m = HistGradientBoostingClassifier(max_iter=3, max_depth=2).fit(X, y)
    assert len(m._predictors) == m.n_iter_ and len(m._predictors[0]) == 3
    fields = set(m._predictors[0][0].nodes.dtype.names)
    assert {"value", "feature_idx", "num_threshold", "missing_go_to_left", "left", "right", "is_leaf",
            "is_categorical"} <= fields
    assert np.asarray(m._baseline_prediction).size == 3
    bm = read_model(m)
    np.testing.assert_allclose(bm.replay_scores(X), m.decision_function(X), rtol=0, atol=1e-12)


def test_progress_callable_sees_every_stage():
    # one driver for every model: a boosted model reports the stages a forest reports (clean
    # vote, FLB, ELB, brute force), counting rows, no longer its own "blocks"
    model, X, y = _fit("gb", 2)
    X = np.vstack([X] * 2)
    y = np.concatenate([y] * 2)
    seen = []
    res = certify(model, X, y, budget=1, progress=lambda stage, done, total: seen.append((stage, done, total)))
    assert seen[0][0] == "vote" and ("vote", 80, 80) in seen
    n_ok = int(np.sum(res.status != "misclassified"))
    assert ("flb", n_ok, n_ok) in seen
    brute = [s for s in seen if s[0] == "brute"]
    n_brute = int(np.sum(np.isin(res.status, ("robust_brute", "attackable"))))
    assert brute == [] if n_brute == 0 else brute[-1] == ("brute", n_brute, n_brute)


def test_lightgbm_frame_with_spaces_in_names_is_aligned_by_name():
    """LightGBM renames "mean radius" to "mean_radius" when it fits; a frame with the original
    names (in any order) must still be aligned by name, and a missing column refused."""
    lgb = pytest.importorskip("lightgbm")
    import pandas as pd
    from sklearn.datasets import load_breast_cancer

    from fairlens.certify import certify

    d = load_breast_cancer(as_frame=True)
    X, y = d.data.iloc[:, :6], d.target
    model = lgb.LGBMClassifier(n_estimators=8, num_leaves=4, verbose=-1).fit(X[:300], y[:300])
    Xt, yt = X[300:330], y[300:330]
    a = certify(model, Xt, yt, budget=1)
    b = certify(model, Xt[Xt.columns[::-1]], yt, budget=1)
    assert list(a.status) == list(b.status)
    for row, w in b.witnesses.items():
        assert model.predict(pd.DataFrame([w], columns=X.columns))[0] != yt.iloc[row]
    with pytest.raises(ValueError, match="mean_radius"):
        certify(model, Xt.drop(columns=["mean radius"]), yt, budget=1)
