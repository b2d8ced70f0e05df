"""The last silent answers of fairlens.certify (issue #37, item 5): each entry point gives the right
answer or an error naming the argument, the value and the fix."""
import warnings

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from fairlens.certify import accuracy_under_attack, certify, instance_covers, read_model
from tests._support.certify_helpers import toy_data

# --- 3. XGBoost missing=v: witnesses write v, the model's own missing value ----------------------

@pytest.mark.parametrize("sentinel", [-999.0, 0.0])
@pytest.mark.parametrize("missing", [False, "auto"])
def test_xgboost_sentinel_witnesses_are_in_the_models_coding(sentinel, missing):
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    Xm = X.copy()
    Xm[rng.random(X.shape) < 0.2] = sentinel
    model = xgb.XGBClassifier(n_estimators=20, max_depth=3, missing=sentinel, random_state=0, n_jobs=1).fit(Xm, y)
    Xt = rng.normal(size=(60, 5))
    yt = (Xt[:, 0] + Xt[:, 1] > 0).astype(int)
    res = certify(model, Xt, yt, budget=1, missing=missing)
    assert res.params["nan_attack"] is (missing != False)  # noqa: E712
    rows = sorted(res.witnesses)
    assert rows, "the model must be attackable here for the test to mean anything"
    W = np.vstack([res.witnesses[i] for i in rows])
    # the witnesses are finite inputs (missing=False: the attacker writes finite values only) ...
    assert np.isfinite(W).all()
    # ... some blank a feature, written as the model writes a missing value ...
    blanked = [i for i in rows if sentinel in res.witness_changes[i][1]]
    assert blanked
    for i in rows:
        feats, vals = res.witness_changes[i]
        np.testing.assert_array_equal(res.witnesses[i][feats], vals)
        assert not np.isnan(vals).any()
    # ... and every witness flips the model's own predict (and its probability side)
    assert (model.predict(W) != yt[rows]).all()
    assert (model.predict(Xt[rows]) == yt[rows]).all()


# --- 4. refusals name `model`, what was given and what is accepted -------------------------------

def _fitted_models():
    X, y = toy_data(1)
    return X, y, {
        "pipeline_of_forest": make_pipeline(StandardScaler(), RandomForestClassifier(n_estimators=3, random_state=0)),
        "pipeline_of_lr": make_pipeline(StandardScaler(), LogisticRegression()),
        "calibrated": CalibratedClassifierCV(RandomForestClassifier(n_estimators=3, random_state=0), cv=2),
        "forest_regressor": RandomForestRegressor(n_estimators=3, random_state=0),
        "gb_regressor": GradientBoostingRegressor(n_estimators=3, random_state=0),
        "logistic": LogisticRegression(),
    }


def _entry_points(model, X, y):
    return {
        "certify": lambda: certify(model, X, y, budget=1),
        "instance_covers": lambda: instance_covers(model, X[0], y[0], budget=1),
        "accuracy_under_attack": lambda: accuracy_under_attack(model, X, y, budgets=[1]),
        "read_model": lambda: read_model(model),
    }


@pytest.mark.parametrize("name", ["pipeline_of_forest", "pipeline_of_lr", "calibrated", "forest_regressor",
                                  "gb_regressor", "logistic"])
def test_unsupported_models_are_refused_by_name(name):
    X, y, models = _fitted_models()
    model = models[name].fit(X, y.astype(float) if "regressor" in name else y)
    given = type(model).__name__
    for entry, call in _entry_points(model, X[:10], y[:10]).items():
        with pytest.raises(TypeError) as info:
            call()
        msg = str(info.value)
        assert msg.startswith("model must be a fitted tree ensemble classifier"), (entry, msg)
        assert "forest must" not in msg and "forest=" not in msg
        assert f"got a {given}" in msg or f"got an {given}" in msg, (entry, msg)
        for family in ("scikit-learn trees and forests", "XGBoost", "LightGBM", "HistGradientBoosting"):
            assert family in msg, (entry, msg)
        if "regressor" in name:
            assert "not a classifier" in msg or "a regressor" in msg


def test_pipeline_refusal_says_how_to_certify_it_and_the_recipe_is_right():
    X, y = toy_data(2)
    pipe = make_pipeline(StandardScaler(), RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0))
    pipe.fit(X[:80], y[:80])
    Xt, yt = X[80:], y[80:]
    with pytest.raises(TypeError) as info:
        certify(pipe, Xt, yt)
    msg = str(info.value)
    assert "certify(pipe[-1], pipe[:-1].transform(X), y)" in msg
    assert "RandomForestClassifier" in msg and "transformed space" in msg and "not rows of X" in msg
    # the recipe certifies the pipeline's own decision: its witnesses flip pipe[-1] on transformed rows
    Z = pipe[:-1].transform(Xt)
    res = certify(pipe[-1], Z, yt, budget=1)
    assert res.accuracy_clean == pytest.approx(float(np.mean(pipe.predict(Xt) == yt)))
    rows = sorted(res.witnesses)
    assert rows
    W = np.vstack([res.witnesses[i] for i in rows])
    assert (pipe[-1].predict(W) != yt[rows]).all()


def test_boosted_regressors_and_unfitted_models_name_model():
    X, y = toy_data(3)
    pytest.importorskip("xgboost")
    import xgboost as xgb

    with pytest.raises(TypeError, match=r"^model must be .*got an XGBRegressor, which is not a classifier.*"
                                        r"Pass an XGBClassifier"):
        certify(xgb.XGBRegressor(n_estimators=2).fit(X, y.astype(float)), X, y)
    with pytest.raises(ValueError, match=r"^model: This RandomForestClassifier instance is not fitted"):
        certify(RandomForestClassifier(), X, y)
    with pytest.raises(ValueError, match=r"^model \(an XGBClassifier\) is not fitted"):
        certify(xgb.XGBClassifier(), X, y)


def test_cover_visualizer_takes_model_and_refuses_by_that_name():
    pytest.importorskip("ipywidgets")
    from fairlens.certify import CoverVisualizer

    X, y = toy_data(4)
    pipe = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y)
    with pytest.raises(TypeError, match=r"^model must be a fitted tree ensemble classifier.*got a Pipeline"):
        CoverVisualizer(model=pipe, X=X[:5], y=y[:5], background=False)
    rf = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    with pytest.raises(TypeError, match="^CoverVisualizer: forest= was renamed model=; pass model="):
        CoverVisualizer(forest=rf, X=X[:5], y=y[:5], background=False)
    with pytest.raises(TypeError, match="^CoverVisualizer: use_threads= was renamed background="):
        CoverVisualizer(rf, X[:5], y[:5], use_threads=False)
    w = CoverVisualizer(model=rf, X=X[:5], y=y[:5], background=False)
    assert w.forest.n_trees == 3


# --- 5. an array for a model fitted on a DataFrame: a warning, columns taken by position ---------

@pytest.mark.parametrize("kind", ["forest", "hgb"])
def test_array_for_a_frame_model_warns_at_every_entry_point(kind):
    data = load_breast_cancer(as_frame=True)
    X, y = data.data.iloc[:, :6], data.target.to_numpy()
    model = (RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0) if kind == "forest"
             else HistGradientBoostingClassifier(max_iter=3, random_state=0)).fit(X[:400], y[:400])
    A = X.to_numpy()[400:430, ::-1]  # columns reordered, and no names to align them by
    yt = y[400:430]
    pat = r"X is an array but the model was fitted on a DataFrame.*taken by position.*Pass X as a DataFrame"
    with pytest.warns(UserWarning, match=pat):
        res = certify(model, A, yt, budget=1, method="flb")
    # taken by position, as the model's own predict takes an array
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert res.accuracy_clean == pytest.approx(float(np.mean(model.predict(A) == yt)))
    with pytest.warns(UserWarning, match=pat):
        accuracy_under_attack(model, A, yt, budgets=[1], method="flb")
    with pytest.warns(UserWarning, match=r"x is an array but the model was fitted on a DataFrame"):
        instance_covers(model, A[0], yt[0], budget=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        certify(model, X[400:430], yt, budget=1, method="flb")  # a frame: no warning
