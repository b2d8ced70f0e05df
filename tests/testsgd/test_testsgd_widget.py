"""RuleSetBrowser driven headless."""
from types import SimpleNamespace

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from fairlens.testsgd import TestSGD  # noqa: E402

SENS = ["gender", "race", "age"]


@pytest.fixture
def browser(toy):
    from sklearn.linear_model import LogisticRegression

    from fairlens.testsgd import RuleSetBrowser

    model = LogisticRegression(max_iter=500).fit(toy.X, toy.y)
    rep = TestSGD(model, toy, SENS, theta=0.1, sample_thr=200, random_state=0).run()
    idx = np.random.default_rng(0).permutation(toy.X.shape[0])
    test = SimpleNamespace(**{**vars(toy), "X": toy.X[idx[:500]], "y": toy.y[idx[:500]]})
    return RuleSetBrowser(rep, test=test, mitigation_amounts=[50, 200])


def test_import_core_does_not_import_ipywidgets():
    import subprocess
    import sys

    code = "import sys, fairlens.testsgd; print('ipywidgets' in sys.modules, 'numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split()[0] == "False"


def test_initial_state_and_selection(browser):
    c = browser.controls
    assert set(c) >= {"sort_by", "ascending", "filter", "theta", "select", "error", "reestimate", "mitigate"}
    assert len(c["select"].options) == min(25, len(browser.frame))
    top = browser.report.results[0]
    assert browser.result is not None and str(browser.result.rule_set) == str(top.rule_set)
    # select the third row
    c["select"].value = c["select"].options[2][1]
    assert str(browser.result.rule_set) == browser.filtered.iloc[2]["rule_set"]


def test_filter_sort_theta(browser):
    c = browser.controls
    c["filter"].value = "gender=female"
    assert len(browser.filtered) > 0
    assert browser.filtered["rule_set"].str.contains("gender=female").all()
    assert "gender=female" in str(browser.result.rule_set)
    c["filter"].value = ""
    c["theta"].value = 0.3
    assert (browser.filtered["support"] >= 0.3 - 1e-12).all()
    assert len(browser.filtered) < len(browser.frame)
    c["sort_by"].value = "support"
    c["ascending"].value = True
    s = browser.filtered["support"].to_numpy()
    assert np.all(np.diff(s) >= 0)
    c["filter"].value = "nothing-matches-this"
    assert len(browser.filtered) == 0 and browser.result is None


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
    after = browser.result
    assert str(after.rule_set) == str(before.rule_set)
    assert after.margin <= 0.02 and after.n_samples >= before.n_samples
    c["reestimate"].click()
    assert browser.result is after  # cached per (rule set, error)


def test_mitigate_button_and_errors(browser):
    c = browser.controls
    c["mitigate"].click()
    assert browser.mitigation is not None
    assert list(browser.mitigation.steps.n_added) == [50, 200]
    assert browser.progress.value == 1
    # errors go to the output area, not raised
    browser.test = None
    c["mitigate"].click()
    assert "test=" in browser.status.value



def test_non_sklearn_model_error_is_shown(toy, planted):
    from fairlens.testsgd import RuleSetBrowser

    rep = TestSGD(planted, toy, SENS, theta=0.2, sample_thr=100, random_state=0).run()
    b = RuleSetBrowser(rep, test=toy)
    b.controls["mitigate"].click()
    assert "fit=" in b.status.value and b.mitigation is None


def test_import_compiles_nothing():
    import subprocess
    import sys

    code = ("import fairlens.testsgd as t; from fairlens.testsgd import _kernels as k; "
            "print(sum(len(getattr(getattr(k, n), \"signatures\", ())) for n in k.__all__))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "0"


def test_background_mitigation_can_stop(browser):
    browser.background = True
    browser.mitigation_amounts = [50, 100, 200, 400, 800]
    browser.controls["mitigate"].click()
    browser.controls["stop"].click()
    browser.wait(120)
    assert not browser._thread.is_alive()
    assert browser.mitigation is not None
    assert len(browser.mitigation.steps) < 5
    assert "stopped" in browser.status.value
    # and without stop it runs every step
    browser.mitigation_amounts = [50, 100]
    browser.controls["mitigate"].click()
    browser.wait(120)
    assert list(browser.mitigation.steps.n_added) == [50, 100]
    assert len(browser.detail_out.outputs) == 2  # figure + table
    assert "image/png" in browser.detail_out.outputs[0]["data"]
    assert "text/html" in browser.detail_out.outputs[1]["data"]
