"""Headless tests of CoverVisualizer: set .value, click, assert on state."""

import matplotlib
import pytest

matplotlib.use("Agg")
pytest.importorskip("ipywidgets")

from tests.contract.certify.test_widget import _w, setup  # noqa: F401 (fixtures)


def test_summary_stop_keeps_budgets_done(setup, monkeypatch):
    import threading

    rf, X, y, names = setup
    w = _w(rf, X, y, budget=1, max_budget=3)
    from fairlens.certify import _widget

    first = threading.Event()
    clicked = threading.Event()
    w.progress.observe(lambda ch: first.set() if ch["new"] >= 1 else None, names="value")
    orig = _widget.certify

    def slow(*args, budget=1, **kwargs):
        if budget >= 2:  # budget 2 is still running when Stop is clicked, however loaded the machine
            first.wait(60)
            clicked.wait(600)
        return orig(*args, budget=budget, **kwargs)

    monkeypatch.setattr(_widget, "certify", slow)
    w.controls["summary"].click()
    assert not w.controls["stop"].disabled
    assert first.wait(600)
    w.controls["stop"].click()
    assert "stopping" in w.status_html.value
    clicked.set()
    w.wait(600)
    assert "stopped" in w.status_html.value
    assert w.summary_frame is not None and 1 <= len(w.summary_frame) < 3
    assert w.controls["stop"].disabled


def test_stop_during_a_budget_of_the_summary(monkeypatch):
    """Stop pressed while a budget is being certified ends the summary at the next row chunk,
    keeps the budgets already done, and leaves the widget usable."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier

    import fairlens.certify._widget as W

    data = load_breast_cancer()
    X, y = data.data[:40], data.target[:40]
    rf = RandomForestClassifier(n_estimators=6, max_depth=3, random_state=0).fit(X, y)
    w = W.CoverVisualizer(rf, X, y, max_budget=3, background=False)
    real = W.certify
    calls = []

    def certify_then_press_stop(*args, **kwargs):
        calls.append(kwargs["budget"])
        if kwargs["budget"] == 2:
            w._stop_event.set()  # as the Stop button does, mid-budget
        return real(*args, **kwargs)

    w._cache = {1: w._cache[1]} if 1 in w._cache else {}
    monkeypatch.setattr(W, "certify", certify_then_press_stop)
    w.compute_summary(block=True)
    assert 2 in calls and 3 not in calls  # budget 2 was interrupted, 3 never started
    assert list(w.summary_frame["budget"].unique()) == [1]
    assert w.last_error is None and w._status_text.startswith("stopped: 1 of 3 budgets")
    assert 2 not in w._cache  # nothing half-done is cached
