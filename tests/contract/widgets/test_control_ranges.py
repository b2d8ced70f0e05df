"""No surprises in the widgets (issue 35 item 5): every numeric control's minimum and maximum is
a value the run accepts, and a refused run keeps the previous result on screen with the error
right under the status line.

Each control is set to its min, then its max (the others at their defaults), and the action it
feeds is run: a redraw for the view controls, Start / re-estimate / mitigate / the summary for
the long actions (stopped after a few seconds when they are long: the point is that the run
*accepts* the values, which it checks before its first step).
"""
import time
import warnings

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
pytest.importorskip("ipywidgets")

from tests.contract.widgets.test_widget_contract import BUILDERS  # noqa: E402

PROGRESS = ("IntProgress", "FloatProgress")


def _numeric_controls(w):
    return {k: c for k, c in w.controls.items()
            if hasattr(c, "min") and hasattr(c, "max") and type(c).__name__ not in PROGRESS
            and not getattr(c, "disabled", False)}


def _settle(w, action=None, stop_after=8.0):
    """Run ``action`` (a long job), give it ``stop_after`` seconds, stop it, wait."""
    if action is not None:
        action()
        t0 = time.monotonic()
        while w.running and time.monotonic() - t0 < stop_after:
            time.sleep(0.1)
        if w.running:
            w.stop()
    w.wait(600)


ACTIONS = {  # control -> the long action it configures (None: the views redraw by themselves)
    ("maft", "h"): "start", ("maft", "n_seeds"): "start", ("maft", "n_local"): "start",
    ("maft", "max_iter"): "start", ("maft", "random_state"): "start",
    ("testsgd", "error"): "reestimate", ("certify", "budget"): None, ("certify", "index"): None,
}


@pytest.mark.parametrize("name", list(BUILDERS))
def test_every_control_accepts_its_min_and_max(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w, _ = BUILDERS[name](background=True)
        w.wait(600)
        controls = _numeric_controls(w)
        assert controls, f"{name}: no numeric control found"
        checked = []
        for key, ctrl in controls.items():
            default = ctrl.value
            for v in (ctrl.min, ctrl.max):
                if type(ctrl).__name__ == "FloatLogSlider":
                    v = ctrl.base ** v
                ctrl.value = v
                act = ACTIONS.get((name, key))
                if act == "start":
                    _settle(w, w.start)
                elif act == "reestimate":
                    _settle(w, lambda: w.controls["reestimate"].click())
                else:
                    _settle(w)
                assert w.last_error is None, f"{name}.{key} = {v!r} (its {'min' if v == ctrl.min else 'max'}) " \
                                             f"is refused: {w.last_error}"
                checked.append((key, v))
            ctrl.value = default
            _settle(w)
    assert len(checked) == 2 * len(controls)


def test_maft_seed_box_offers_no_budget_the_search_refuses():
    """The census data of the start-here notebook: the largest seeds x local budget of the
    controls passes the search's memory check (100,000 seeds used to be accepted by the box)."""
    from fairlens.datasets import load_adult
    from fairlens.maft import MAFT, MAFTSession

    census = load_adult(encoding="benchmark")

    def model(X):
        return 1 / (1 + np.exp(-(np.asarray(X, float) @ np.linspace(-0.2, 0.2, X.shape[1]))))

    s = MAFTSession(model, census, protected=["sex"], background=False)
    c = s.controls
    search = MAFT(model, census, protected=["sex"], n_seeds=c["n_seeds"].max, n_local=c["n_local"].max,
                  max_iter=c["max_iter"].max)
    seeds = search._run_seeds(0)          # the memory checks a run makes before its first step
    search._check_run_memory(seeds)


def test_a_refused_run_keeps_the_previous_result_and_says_where_the_error_is():
    from fairlens.maft import MAFTSession
    from tests._support.maft_toy import SmoothModel, make_toy

    s = MAFTSession(SmoothModel(), make_toy(), n_seeds=10, n_local=5, background=True)
    s.start()
    s.wait(300)
    before = s.results["MAFT"].n_instances
    shown = s.snapshot()["projection:MAFT"]["params"]
    assert before > 0 and shown["shown"]
    # a run that fails inside the job (here: the model raises on its first call)
    s.model = lambda X: (_ for _ in ()).throw(ValueError("this model refuses to score"))
    s.controls["random_state"].value = 1
    s.start()
    s.wait(300)
    assert s.last_error and "refuses to score" in s.last_error
    assert s.results["MAFT"].n_instances == before            # the last result is kept...
    snap = s.snapshot()["projection:MAFT"]["params"]
    assert snap["shown"] and snap["n_instances"] == before     # ...and still shown
    status = s.status_html.value
    assert "just below" in status and "see above" not in status
    kids = list(s.children)
    assert kids.index(s.error_html) == kids.index(s.status_html) + 1   # the message is just below it
