"""The documentation's notebook preparation (docs/prepare_notebooks.py), on hand-made notebooks.

The docs stage of CI checks the whole pipeline (the nitpicky Sphinx build fails on a broken link
or an unrendered output); these tests pin the two transformations whose mistakes a build would
not notice: a widget's static snapshot must show its final state, and links leaving the site must
point at the repository.
"""
from __future__ import annotations

import base64
import importlib.util
from pathlib import Path

import nbformat
import pytest
from tests._support import REPO

ROOT = REPO
spec = importlib.util.spec_from_file_location("prepare_notebooks", ROOT / "docs" / "prepare_notebooks.py")
prep = importlib.util.module_from_spec(spec)
spec.loader.exec_module(prep)

PNG = base64.b64encode(b"\x89PNG fake bytes").decode()


def _model(name, state, buffers=None):
    m = {"model_name": name, "model_module": "@jupyter-widgets/controls", "state": state}
    if buffers:
        m["buffers"] = buffers
    return m


def _notebook_with_widget(extra_data=None):
    state = {
        "box": _model("VBoxModel", {"children": ["IPY_MODEL_slider", "IPY_MODEL_img", "IPY_MODEL_html",
                                                  "IPY_MODEL_dd", "IPY_MODEL_hidden"]}),
        "slider": _model("FloatSliderModel", {"description": "quantile", "value": 0.3}),
        "img": _model("ImageModel", {"format": "png"}, [{"path": ["value"], "data": PNG, "encoding": "base64"}]),
        "html": _model("HTMLModel", {"value": "<b>217 unfair moves</b>"}),
        "dd": _model("DropdownModel", {"description": "attack", "_options_labels": ["dominance", "swapping"],
                                       "index": 1}),
        "hidden": _model("LabelModel", {"value": "invisible", "layout": "IPY_MODEL_lay"}),
        "lay": {"model_name": "LayoutModel", "state": {"display": "none"}},
    }
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("w")
    data = {"application/vnd.jupyter.widget-view+json": {"model_id": "box", "version_major": 2},
            "text/plain": "VBox(...)"}
    data.update(extra_data or {})
    cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
    nb.cells = [cell]
    nb.metadata["widgets"] = {prep.WIDGET_STATE: {"state": state, "version_major": 2}}
    return nb


def test_widget_snapshot_shows_final_state_and_drops_widget_state():
    nb = _notebook_with_widget()
    assert prep.staticize_widgets(nb) == 1
    data = nb.cells[0].outputs[0]["data"]
    assert prep.WIDGET_VIEW not in data and "widgets" not in nb.metadata   # no CDN JavaScript needed
    html = data["text/html"]
    assert f"data:image/png;base64,{PNG}" in html
    assert "<b>217 unfair moves</b>" in html
    assert "quantile" in html and "0.3" in html
    assert "swapping" in html and "dominance" not in html                  # the selected option only
    assert "invisible" not in html                                         # display: none is skipped


def test_widget_without_state_gets_a_plain_note():
    nb = _notebook_with_widget()
    nb.metadata.pop("widgets")
    assert prep.staticize_widgets(nb) == 0
    data = nb.cells[0].outputs[0]["data"]
    assert prep.WIDGET_VIEW not in data and "interactive widget" in data["text/plain"]


def test_widget_fallback_of_the_package_is_kept_when_no_state():
    nb = _notebook_with_widget({"image/png": PNG})
    nb.metadata.pop("widgets")
    prep.staticize_widgets(nb)
    data = nb.cells[0].outputs[0]["data"]
    assert data["image/png"] == PNG and data["text/plain"] == "VBox(...)"


@pytest.mark.parametrize("target, expected", [
    ("../notebooks/", "https://github.com/fairlens-lab/fairlens/tree/main/notebooks"),
    ("../benchmarks/README.md", "https://github.com/fairlens-lab/fairlens/blob/main/benchmarks/README.md"),
    ("02_maft.ipynb", "02_maft.ipynb"),                        # another page of the site
    ("https://example.org/x", "https://example.org/x"),
    ("#section", "#section"),
])
def test_links_leaving_the_site_point_at_the_repository(target, expected):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(f"see [here]({target}) now")]
    src = ROOT / "tutorials" / "00_start_here.ipynb"
    prep.rewrite_links(nb, src, prep.DOCS / "tutorials" / src.name)
    assert nb.cells[0].source == f"see [here]({expected}) now"


def test_error_outputs_are_found_unless_tagged():
    nb = nbformat.v4.new_notebook()
    ok, bad, tagged = (nbformat.v4.new_code_cell(s) for s in ("1", "1/0", "1/0"))
    bad.outputs = [nbformat.v4.new_output("error", ename="ZeroDivisionError", evalue="", traceback=[])]
    tagged.outputs = list(bad.outputs)
    tagged.metadata["tags"] = ["raises-exception"]
    nb.cells = [ok, bad, tagged]
    assert prep.error_cells(nb) == [1]
