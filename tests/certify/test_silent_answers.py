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

from fairlens.certify import accuracy_under_attack, certify, instance_covers, read_model, relevant_values
from fairlens.certify._ensemble import relevant_values64

from ._helpers import toy_data

RV = [relevant_values, relevant_values64]


# --- 1. relevant_values: a feature index out of range is an error, not a feature without values ----

@pytest.mark.parametrize("find", RV)
def test_relevant_values_refuses_a_feature_index_out_of_range(find):
    thr = np.array([0.5, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"feature\[0\] = 5 is out of range for n_features=2.*\[0, 1\]"):
        find(np.array([5, -1, -1]), thr, 2)
    with pytest.raises(ValueError, match=r"feature\[2\] = 2 .*n_features=2"):  # the node is named
        find(np.array([0, -1, 2, -1, -1]), np.array([0.5, 0, 0.25, 0, 0]), 2)


@pytest.mark.parametrize("find", RV)
@pytest.mark.parametrize("feature,n_features,err,msg", [
    (np.array([0.5, -1, -1]), 2, TypeError, r"feature must hold integer feature indices; got 0\.5 at node 0"),
    (np.array([np.nan, -1, -1]), 2, TypeError, "feature must hold integer feature indices"),
    (np.array(["0", "-1", "-1"]), 2, TypeError, "feature must hold integer feature indices"),
    (np.array([0, -1, -1]), 1.5, TypeError, r"n_features must be a non-negative integer.*got 1\.5"),
    (np.array([0, -1, -1]), True, TypeError, r"n_features must be .*got True"),
    (np.array([0, -1, -1]), -1, ValueError, r"n_features must be a non-negative integer.*got -1"),
    (np.array([0, -1]), 2, ValueError, r"threshold must have the shape of feature \(2,\).*got shape \(3,\)"),
])
def test_relevant_values_names_the_bad_argument(find, feature, n_features, err, msg):
    with pytest.raises(err, match=msg):
        find(feature, np.array([0.5, 0.0, 0.0]), n_features)


@pytest.mark.parametrize("find", RV)
def test_relevant_values_still_reads_every_valid_encoding(find):
    """Leaves may be any negative index (-1, scikit-learn's -2); integral floats are indices. Cross-check
    against the thresholds themselves: every threshold of feature f is a value of f, plus one above."""
    X, y = toy_data(0)
    rf = RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0).fit(X, y)
    ens = read_model(rf)
    ptr, vals = find(ens.feature, ens.threshold, ens.n_features)
    ptr2, vals2 = find(np.where(ens.feature < 0, -2, ens.feature).astype(float), ens.threshold, ens.n_features)
    np.testing.assert_array_equal(ptr, ptr2)
    np.testing.assert_array_equal(vals, vals2)
    for f in range(ens.n_features):
        thr = np.unique(ens.threshold[ens.feature == f])
        v = vals[ptr[f]:ptr[f + 1]]
        assert v.size == (thr.size + 1 if thr.size else 0)
        if thr.size:  # one value per interval: <= each threshold (as read), and one above the largest
            assert (v[:-1] <= thr).all() and v[-1] > thr[-1]


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
