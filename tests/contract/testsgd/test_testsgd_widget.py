"""RuleSetBrowser driven headless through .controls, wait() and snapshot()."""
from types import SimpleNamespace

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from fairlens.testsgd import TestSGD  # noqa: E402

SENS = ["gender", "race", "age"]


@pytest.fixture(scope="module")
def parts(request):
    toy = request.getfixturevalue("toy") if "toy" in request.fixturenames else None
    return toy


@pytest.fixture
def browser(toy):
    from sklearn.linear_model import LogisticRegression

    from fairlens.testsgd import RuleSetBrowser

    model = LogisticRegression(max_iter=500).fit(toy.X, toy.y)
    rep = TestSGD(model, toy, protected=SENS, theta=0.1, sample_thr=200, random_state=0).run()
    idx = np.random.default_rng(0).permutation(toy.X.shape[0])
    test = SimpleNamespace(**{**vars(toy), "X": toy.X[idx[:500]], "y": toy.y[idx[:500]]})
    b = RuleSetBrowser(rep, test=test, mitigation_amounts=[50, 200])
    b.wait(300)
    return b


def test_import_core_does_not_import_ipywidgets():
    import subprocess
    import sys

    code = "import sys, fairlens.testsgd; print('ipywidgets' in sys.modules, 'numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split()[0] == "False"


def test_initial_state_and_selection(browser):
    c = browser.controls
    assert set(c) >= {"sort_by", "ascending", "filter", "theta", "select", "error", "reestimate", "mitigate", "stop"}
    assert c["stop"].disabled
    assert len(c["select"].options) == min(browser.max_rows, len(browser.frame))
    assert browser.result is not None and str(browser.result.rule_set) == browser.filtered.iloc[0]["rule_set"]
    snap = browser.snapshot()
    assert snap["detail"]["params"]["rule_set"] == str(browser.result.rule_set)
    assert snap["detail"]["png"][:4] == b"\x89PNG"
    # select the third row: detail follows
    c["select"].value = c["select"].options[2][1]
    browser.wait(300)
    assert str(browser.result.rule_set) == browser.filtered.iloc[2]["rule_set"]
    assert browser.snapshot()["detail"]["params"]["rule_set"] == browser.filtered.iloc[2]["rule_set"]


def test_fast_changes_end_on_the_final_state(browser):
    c = browser.controls
    opts = [v for _, v in c["select"].options]
    for v in opts[:6] + opts[:3]:
        c["select"].value = v
    c["theta"].value = 0.2
    c["sort_by"].value = "support"
    browser.wait(300)
    snap = browser.snapshot()
    final = browser.frame.loc[c["select"].value, "rule_set"]
    assert snap["detail"]["params"]["rule_set"] == final == snap["info"]["params"]["rule_set"]
    assert snap["detail"]["params"]["theta"] == 0.2 and snap["list"]["params"]["sort_by"] == "support"


def test_filter_sort_theta_and_empty_state(browser):
    c = browser.controls
    c["filter"].value = "gender=female"
    browser.wait(300)
    assert len(browser.filtered) > 0
    assert browser.filtered["rule_set"].str.contains("gender=female").all()
    assert "gender=female" in str(browser.result.rule_set)
    c["filter"].value = ""
    c["theta"].value = 0.3
    browser.wait(300)
    assert (browser.filtered["support"] >= 0.3 - 1e-12).all()
    assert len(browser.filtered) < len(browser.frame)
    c["sort_by"].value = "support"
    c["ascending"].value = True
    browser.wait(300)
    s = browser.filtered["support"].to_numpy()
    assert np.all(np.diff(s) >= 0)
    c["filter"].value = "nothing-matches-this"
    browser.wait(300)
    assert len(browser.filtered) == 0 and browser.result is None
    snap = browser.snapshot()
    assert snap["detail"]["params"]["rule_set"] is None and snap["detail"]["png"][:4] == b"\x89PNG"
    assert "No rule set matches" in snap["info"]["html"]
    assert browser.last_error is None and "Traceback" not in browser.error_html.value


def test_theta_range_and_sign(browser):
    c = browser.controls
    smax = browser.frame["support"].max()
    assert smax <= c["theta"].max < smax + 0.011  # only up to the largest support present
    r = browser.result
    side = browser.snapshot()["detail"]["params"]["side"]
    assert side == ("R favoured" if r.rate_in > r.rate_out else "R disfavoured")
    side = browser.frame["side"].to_numpy()
    np.testing.assert_array_equal(side, np.sign((browser.frame["rate_in"] - browser.frame["rate_out"]).fillna(0.0)))
    up = browser.frame["side"] > 0
    assert (browser.frame.loc[up, "favoured"] == browser.frame.loc[up, "rule_set"]).all()


def test_composition_matches_data(browser, toy):
    comp = browser.group_composition()
    mask = browser.result.rule_set.mask(toy.X)
    g = comp[comp.feature == "gender"]
    assert g["count"].sum() == mask.sum()
    rows = browser.sample_rows(3)
    assert len(rows) == min(3, mask.sum())


def test_reestimate_tighter_and_cached(browser):
    c = browser.controls
    before = browser.result
    c["error"].value = 0.02
    c["reestimate"].click()
    browser.wait(300)
    after = browser.result
    assert str(after.rule_set) == str(before.rule_set)
    assert after.margin <= 0.02 and after.n_samples >= before.n_samples
    assert browser.snapshot()["detail"]["params"]["error"] == 0.02
    c["reestimate"].click()
    browser.wait(300)
    assert browser.result is after  # cached per (rule set, error)


def test_mitigate_shows_up_and_errors(browser):
    c = browser.controls
    c["mitigate"].click()
    browser.wait(600)
    assert browser.mitigation is not None
    assert list(browser.mitigation.steps.n_added) == [50, 200]
    assert browser.progress.value == 1
    assert browser.snapshot()["detail"]["params"]["mitigation"] is True
    assert "mitigation" in browser.status_html.value
    # errors are shown, not raised
    browser.test = None
    c["mitigate"].click()
    assert "test=" in browser.status_html.value and "test=" in browser.last_error


def test_non_sklearn_model_error_is_shown(toy, planted):
    from fairlens.testsgd import RuleSetBrowser

    rep = TestSGD(planted, toy, protected=SENS, theta=0.2, sample_thr=100, random_state=0).run()
    b = RuleSetBrowser(rep, test=toy)
    b.controls["mitigate"].click()
    b.wait(300)
    assert "fit=" in b.last_error and b.mitigation is None
    assert "fit=" in b.error_html.value


def test_import_compiles_nothing():
    import subprocess
    import sys

    code = ("import fairlens.testsgd as t; from fairlens.testsgd import _kernels as k; "
            "print(sum(len(getattr(getattr(k, n), \"signatures\", ())) for n in k.__all__))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "0"


def test_mitigation_can_stop_and_keeps_steps(browser):
    import threading

    browser.mitigation_amounts = [50, 100, 200, 400, 800]
    first = threading.Event()
    orig = browser.progress.observe
    browser.progress.observe(lambda ch: first.set() if ch["new"] > 0 else None, names="value")
    browser.controls["mitigate"].click()
    assert not browser.controls["stop"].disabled
    assert first.wait(600)
    browser.controls["stop"].click()
    assert "stopping" in browser.status_html.value
    browser.wait(600)
    assert browser.mitigation is not None
    assert 1 <= len(browser.mitigation.steps) < 5
    assert "stopped" in browser.status_html.value
    assert browser.controls["stop"].disabled
    del orig


def test_browser_lists_a_group_once_and_flags_a_small_rest():
    """Issue 36: identical masks are one entry (aliases shown); a rest of a handful of rows is
    flagged in the list and explained in the detail."""
    from fairlens.testsgd import RuleSetBrowser

    rng = np.random.default_rng(0)
    n = 400
    age = np.where(np.arange(n) < 3, 19, rng.integers(25, 70, n))       # three 19-year-olds, nobody >= 70
    X = np.column_stack([age, rng.integers(0, 2, n), rng.integers(0, 10, n)]).astype(float)
    ds = SimpleNamespace(name="rest", X=X, y=None, feature_names=["age", "sex", "edu"],
                         feature_types=["integer", "categorical", "integer"],
                         bounds=np.array([[0, 100], [0, 1], [0, 9]], float),
                         categories={"sex": {0: "female", 1: "male"}})

    def model(A):
        return np.where(np.asarray(A)[:, 0] < 20, 0.9, 0.1)

    rep = TestSGD(model, ds, protected=["age", "sex"], theta=0.05, sample_thr=100, max_samples=2000,
                  bins={"age": [float(v) for v in range(0, 101, 10)]}, random_state=0).run()
    b = RuleSetBrowser(rep, background=False)
    frame = b.frame
    assert frame["rule_set"].is_unique and len(frame) == len(rep.results)
    masks = [rep.result_for(r).rule_set.mask(X).tobytes() for r in frame["rule_set"]]
    assert len(set(masks)) == len(masks)                                   # each group once
    row = frame[frame.rule_set == "age>=20"].iloc[0]
    assert "20<=age<70" in row["aliases"]
    i = int(frame.index[frame.rule_set == "age>=20"][0])
    label = dict((v, k) for k, v in b.controls["select"].options)[i]
    assert "⚠ rest: 3 rows" in label and "same rows" in label
    b.controls["select"].value = i
    b.wait(60)
    info = b.snapshot()["info"]["html"] if "html" in b.snapshot()["info"] else b.info_html.value
    assert "everybody else 3 rows" in info and "⚠ rest: 3 rows" in info and "same rows as" in info
    exported = b._export_frame()
    assert {"n_out", "small_side", "aliases"} <= set(exported.columns)
