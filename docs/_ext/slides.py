"""Sphinx extension: lecture slides (reveal.js) for each block of the 2-hour plan.

After an HTML build, each block of :data:`BLOCKS` becomes ``slides/<block>.html``: the cells of
the executed notebooks it draws on (``docs/tutorials/*.ipynb``, written by
``prepare_notebooks.py``), cut into slides at their headings (and one slide per figure), exported
with nbconvert's reveal.js exporter through ``slides_template/`` so that every file is served by
the site itself: reveal.js from ``_static/reveal/`` (vendored, MIT), MathJax from
``_static/mathjax/``. The slides open from disk (``file://``) and need no network; the offline
check (``offline_check.py``) runs after this and covers them. ``tests/browser/test_site_in_browser.py``
opens them in Chromium. Arrow keys move between slides, ``s`` opens the speaker view.
"""
from __future__ import annotations

import copy
import html
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: (file name, title, minutes, [(executed notebook under docs/, first heading or None, stop prefix)], limits page)
BLOCKS = [
    ("block1-shuffle", "Block 1: fooling SHAP with output shuffling", 25,
     [("tutorials/00_start_here.ipynb", "## 1.", "## "), ("tutorials/01_shuffling_attacks.ipynb", None, None)],
     "limits/shuffle"),
    ("block2-maft", "Block 2: individual discrimination, tested through a black box (MAFT)", 25,
     [("tutorials/00_start_here.ipynb", "## 2.", "## "), ("tutorials/02_maft.ipynb", None, None)], "limits/maft"),
    ("block3-testsgd", "Block 3: subtle group discrimination (TestSGD)", 25,
     [("tutorials/00_start_here.ipynb", "## 3.", "## "), ("tutorials/03_testsgd.ipynb", None, None)], "limits/testsgd"),
    ("block4-certify", "Block 4: certifying tree ensembles against b-feature attackers", 25,
     [("tutorials/00_start_here.ipynb", "## 4.", "## "), ("tutorials/04_certify_forests.ipynb", None, None)],
     "limits/certify"),
]
MAX_CODE_LINES = 14


def _heading(cell):
    if cell.cell_type != "markdown":
        return None
    m = re.match(r"^(#{1,6})\s", cell.source.lstrip())
    return len(m.group(1)) if m else None


def _select(nb, start, stop):
    if start is None:
        return list(nb.cells)
    out, on = [], False
    for cell in nb.cells:
        src = cell.source.lstrip()
        if cell.cell_type == "markdown" and src.startswith(start):
            on = True
        elif on and stop and cell.cell_type == "markdown" and src.startswith(stop):
            break
        if on:
            out.append(cell)
    return out


def _has_figure(cell):
    return any("image/png" in o.get("data", {}) or "fl-widget-snapshot" in str(o.get("data", {}).get("text/html", ""))
               for o in cell.get("outputs", []))


def deck(docs: Path, block):
    """The slide notebook of one block (nbformat node)."""
    import nbformat

    name, title, minutes, parts, limits = block
    nb = nbformat.v4.new_notebook()
    intro = nbformat.v4.new_markdown_cell(
        f"# {title}\n\n<div class='fl-title'>\n\n{minutes} minutes. Executed in the reduced (CI) mode of the "
        f"tutorials; run them live in JupyterLab for the widgets.\n\nSources: "
        + ", ".join(f"[{Path(p).stem}](../{p[:-6]}.html)" for p, _, _ in parts)
        + f". Before the last slide: [what this test does not tell you](../{limits}.html).\n\n</div>")
    cells = [intro]
    for path, start, stop in parts:
        src = docs / path
        if not src.exists():
            continue
        book = nbformat.read(src, as_version=4)
        cells += [copy.deepcopy(c) for c in _select(book, start, stop)]
    cells.append(nbformat.v4.new_markdown_cell(
        f"## What this test does not tell you\n\nThreat model, validity and harms: "
        f"[the page for this block](../{limits}.html). Discuss before the exercise."))
    first = True
    for cell in cells:
        level = _heading(cell)
        if cell.cell_type == "code":
            lines = cell.source.splitlines()
            if len(lines) > MAX_CODE_LINES:
                cell.source = "\n".join(lines[:MAX_CODE_LINES - 2] + [
                    f"# ... {len(lines) - MAX_CODE_LINES + 2} more lines: see the tutorial"])
            # stderr (warnings, progress bars) is not for the projector
            cell.outputs = [o for o in cell.get("outputs", []) if o.get("name") != "stderr"]
        if level is not None and level <= 2 or first:
            kind = "slide"
        elif level is not None or _has_figure(cell):
            kind = "subslide"
        else:
            kind = "-"
        cell.metadata["slideshow"] = {"slide_type": kind}
        first = False
    nb.cells = cells
    nb.metadata["title"] = title
    return nb


def build(docs: Path, outdir: Path) -> list[Path]:
    """Write ``outdir/slides/<block>.html`` for every block; returns the files written."""
    from nbconvert import SlidesExporter

    out = outdir / "slides"
    out.mkdir(parents=True, exist_ok=True)
    exporter = SlidesExporter(extra_template_basedirs=[str(HERE)], template_name="slides_template",
                              reveal_url_prefix="../_static/reveal", reveal_theme="white",
                              reveal_transition="none")
    written, index = [], []
    for block in BLOCKS:
        nb = deck(docs, block)
        body, _ = exporter.from_notebook_node(nb, resources={"fl_static": "../_static",
                                                            "metadata": {"name": block[1]}})
        path = out / f"{block[0]}.html"
        path.write_text(body, encoding="utf-8")
        written.append(path)
        index.append(f"<li><a href='{block[0]}.html'>{html.escape(block[1])}</a> ({block[2]} min)</li>")
    (out / "index.html").write_text(
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>fairlens lecture slides</title>"
        "</head><body style='font:20px sans-serif;margin:2em'><h1>Lecture slides</h1><ul>" + "".join(index)
        + "</ul><p><a href='../lecture/plan.html'>The lecture plan</a></p></body></html>", encoding="utf-8")
    return written


def _on_build_finished(app, exc):
    if exc is not None or app.builder.format != "html":
        return
    from sphinx.util import logging

    written = build(Path(app.srcdir), Path(app.outdir))
    logging.getLogger(__name__).info(f"slides: {len(written)} decks in {Path(app.outdir) / 'slides'}")


def setup(app):
    app.connect("build-finished", _on_build_finished, priority=500)   # before offline_check (900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
