"""The tests of ``tests/contract/widgets/test_widget_contract.py`` that pin internals
(its docstring describes both halves)."""

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
W = pytest.importorskip("ipywidgets")

from fairlens import _widgets  # noqa: E402
from tests.contract.widgets.test_widget_contract import _png_size, made  # noqa: F401 (fixtures)


# ---------------------------------------------------------------- structure
def test_every_widget_is_a_vbox_subclass_living_in_a_private_widget_module(made):
    name, w, _ = made
    assert isinstance(w, W.VBox) and isinstance(w, _widgets.FairlensWidget)
    assert type(w).__module__ == f"fairlens.{name}._widget"
    W.HBox([w])  # composable: CoverVisualizer used to raise TraitError here
    assert {"projector", "export"} <= set(w.controls)


def test_figures_have_no_overlapping_cut_or_small_text(made, monkeypatch):
    name, w, _ = made
    monkeypatch.setattr(_widgets, "CHECK_LAYOUT", True)
    monkeypatch.setattr(_widgets, "LAYOUT_LOG", [])
    w._view_cache.clear()
    if name == "certify":  # the witness panel and the summary too
        w.compute_summary()
        rows = np.flatnonzero(w.result.status == "vulnerable")
        if rows.size:
            w.controls["index"].value = int(rows[0])
    if name == "shuffle":
        w.run_explainer("shap")
    if name == "maft":
        w.start()
    if name == "testsgd":
        w._on_mitigate()
    w.request_render()
    w.wait(300)
    assert _widgets.LAYOUT_LOG, "no figure was checked"
    bad = [(t, p) for t, p in _widgets.LAYOUT_LOG if p]
    assert not bad, bad


def test_layout_checker_sees_overlap_and_small_text():
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3, 2), dpi=100)
    ax = fig.subplots()
    ax.text(0.5, 0.5, "first label", fontsize=12)
    ax.text(0.52, 0.5, "second label", fontsize=12)
    ax.set_title("tiny", fontsize=5)
    probs = _widgets.layout_problems(fig)
    assert any("overlaps" in p for p in probs) and any("'tiny'" in p and "px" in p for p in probs)


def test_projector_grows_fonts_and_figures(made):
    _, w, _ = made
    view = next(k for k, v in w.snapshot().items() if v.get("png"))
    before = _png_size(w.snapshot()[view]["png"])
    w.controls["projector"].value = True
    w.wait(300)
    after = _png_size(w.snapshot()[view]["png"])
    grow = min(_widgets.PROJECTOR_SIZE, max(1.0, _widgets.COLUMN_PX * 2 / before[0]))  # never wider than the column
    assert after[0] == pytest.approx(before[0] * grow, abs=2) and after[0] / 2 <= _widgets.COLUMN_PX + 1
    assert "fl-projector" in w._dom_classes
    w.controls["projector"].value = False
    w.wait(300)
    assert _png_size(w.snapshot()[view]["png"]) == before


def test_mitigation_message_after_a_stop_says_what_was_tried():
    from fairlens.testsgd._widget import _mitigation_text

    class R:
        steps = pd.DataFrame(columns=["n_added", "accuracy", "score"])
        before = {"score": 0.31, "accuracy": 0.8}
        after = None
        max_accuracy_drop = 0.01

    assert "no amount tried" in _mitigation_text(R, stopped=True)
    assert "kept the accuracy" not in _mitigation_text(R, stopped=True)
    R.steps = pd.DataFrame([{"n_added": 50, "accuracy": 0.7, "score": 0.2}])
    assert "stopped after 1 amount" in _mitigation_text(R, stopped=True)
    assert "none of the 1 amounts tried kept the accuracy" in _mitigation_text(R, stopped=False)
