"""Regression tests for certify's hostile and awkward inputs (issue 22, trust round three).

Each test reproduces one report: Ctrl-C inside a kernel, absurd ``n_jobs``, ``time_limit=inf``,
a time limit with parallel workers, an array given to a model fitted on a DataFrame, pandas
category columns, install hints and the public name of the literal reference.
"""
import json
import re
import time
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier

from fairlens.certify import certify
from tests._support import REPO
from tests.contract.certify.test_boosted import _data

ROOT = REPO


@pytest.fixture(scope="module")
def bc():
    X, y = load_breast_cancer(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X[:400], y[:400])
    return rf, X[400:440], y[400:440]


@pytest.fixture(scope="module")
def boosted():
    X, y = _data(3, n=200)
    hgb = HistGradientBoostingClassifier(max_iter=6, max_depth=2, random_state=0).fit(X[:160], y[:160])
    return hgb, X[160:], y[160:]


def _same(a, b):
    np.testing.assert_array_equal(a.status, b.status)
    assert a.witnesses.keys() == b.witnesses.keys()
    assert a.accuracy == b.accuracy


# --- n_jobs and time_limit ----------------------------------------------------------------------

def test_huge_n_jobs_is_clamped_to_the_work(bc, boosted):
    rf, X, y = bc
    ref = certify(rf, X[:6], y[:6], budget=2, method="brute")
    _same(certify(rf, X[:6], y[:6], budget=2, method="brute", n_jobs=10**6), ref)
    model, Xb, yb = boosted
    ref = certify(model, Xb, yb, budget=2)
    _same(certify(model, Xb, yb, budget=2, n_jobs=10**6), ref)


def test_time_limit_inf_means_no_limit(bc, boosted):
    for model, X, y in (bc, boosted):
        ref = certify(model, X, y, budget=2)
        res = certify(model, X, y, budget=2, time_limit=np.inf)
        _same(res, ref)
        assert res.stage_counts["unknown"] == 0
        assert json.dumps(res.to_dict() if hasattr(res, "to_dict") else {}, allow_nan=False)


@pytest.mark.parametrize("which", ["forest", "boosted"])
def test_time_limit_with_workers_settles_rows_and_holds(bc, boosted, which):
    model, X, y = bc if which == "forest" else boosted
    ref = certify(model, X, y, budget=2)  # also compiles the kernels
    assert ref.stage_counts["unknown"] == 0
    limit = 5.0
    t0 = time.perf_counter()
    res = certify(model, X, y, budget=2, time_limit=limit, n_jobs=2)
    took = time.perf_counter() - t0
    # worker start-up must not eat the limit: this small model settles every row well inside it
    _same(res, ref)
    assert took <= 1.1 * limit + 1.0


# --- columns -------------------------------------------------------------------------------------

def test_array_for_a_model_fitted_on_a_frame_warns_with_the_fix():
    data = load_breast_cancer(as_frame=True)
    X, y = data.data, data.target.to_numpy()
    rf = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X[:400], y[:400])
    Xt, yt = X[400:], y[400:]
    good = certify(rf, Xt, yt, budget=1, method="flb")
    assert good.accuracy_clean == pytest.approx(float(np.mean(rf.predict(Xt) == yt)))
    # a frame with the columns reversed is aligned by name: same answer
    rev = certify(rf, Xt[Xt.columns[::-1]], yt, budget=1, method="flb")
    np.testing.assert_array_equal(rev.status, good.status)
    # an array (here reversed) cannot be aligned: certify says so and how to fix it
    with pytest.warns(UserWarning, match=r"fitted on a DataFrame.*Pass X as a DataFrame"):
        certify(rf, Xt.to_numpy()[:, ::-1], yt, budget=1, method="flb")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        certify(rf, Xt, yt, budget=1, method="flb")  # a frame: no warning


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_category_column_says_categorical_splits_are_not_supported(library):
    rng = np.random.default_rng(0)
    n = 300
    a = rng.normal(size=n)
    frame = pd.DataFrame({"a": a, "c": pd.Categorical(rng.choice(["x", "y", "z"], size=n))})
    y = (a > 0).astype(int)
    if library == "xgboost":
        xgb = pytest.importorskip("xgboost")
        model = xgb.XGBClassifier(n_estimators=1, max_depth=1, enable_categorical=True, tree_method="hist",
                                  n_jobs=1)
    else:
        lgb = pytest.importorskip("lightgbm")
        model = lgb.LGBMClassifier(n_estimators=1, num_leaves=2, verbose=-1, n_jobs=1)
    model.fit(frame, y)  # one split, on "a": the category column is in the model but never split on
    with pytest.raises(TypeError) as err:
        certify(model, frame, y, budget=1)
    msg = str(err.value)
    assert "'c'" in msg and "categorical" in msg and "not support" in msg
    assert "encode them as the model was fitted" not in msg


# --- install hints and public names --------------------------------------------------------------

def _texts():
    out = {p: p.read_text() for p in (ROOT / "fairlens" / "certify").glob("*.py")}
    nb = ROOT / "tutorials" / "04_certify_forests.ipynb"
    out[nb] = "\n".join("".join(c["source"]) for c in json.loads(nb.read_text())["cells"])
    return out


def test_install_hints_name_the_distribution():
    dist = re.search(r'^name\s*=\s*"([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    assert dist == "fairlens-lab"
    for path, text in _texts().items():
        for hint in re.findall(r"pip install[^\n)`]*\[", text):
            assert dist + "[" in hint, (path, hint)
        assert "fairlens[" not in text, path


def test_tutorial_04_uses_only_public_certify_names():
    import fairlens.certify as fc

    nb = json.loads((ROOT / "tutorials" / "04_certify_forests.ipynb").read_text())
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert not re.search(r"fairlens\.certify\._\w+", code)
    for names in re.findall(r"from fairlens\.certify import ([^\n]+)", code):
        for name in re.split(r"[,\s()]+", names):
            if name:
                assert name in fc.__all__, name
    assert "reference_brute" in fc.__all__ and fc.reference_brute.__doc__
