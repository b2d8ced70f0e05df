"""Execute the tutorials and the audit recipes once, and prepare them for the documentation site.

The site shows every notebook of ``tutorials/`` and ``notebooks/`` **with its outputs**, run in the
reduced (CI-sized) mode ``FAIRLENS_REDUCED=1``. Notebooks are stored without outputs, so they are
executed into copies inside the docs source tree, and Sphinx renders those copies with
``nb_execution_mode = "off"``: each notebook runs once per CI run (the ``notebooks`` stage of
``.ci/run``) and the ``docs`` stage reuses the result.

Steps (``python docs/prepare_notebooks.py [--force] [--check]``):

1. **sync**: copy each source notebook to ``docs/tutorials/`` or ``docs/notebooks/`` (generated,
   git-ignored) unless the copy was already executed from the same source bytes in the same mode
   (the cache key, a sha256, is stamped into the copy's metadata). ``--force`` re-executes all.
2. **execute**: run ``python -m pytest -q --nbmake --overwrite`` on the stale copies, so the
   execution is exactly the repository's notebook test (the root ``conftest.py`` gives the kernels
   no network, an empty download cache and generous timeouts). The exit code is pytest's.
3. **finalize** each copy that ran without an error output:

   * every ipywidget output is replaced by a static HTML rendering of the widget's **final
     state**, read from the widget state nbclient stored in the notebook (figures are the PNGs the
     widget showed, text views their HTML, controls their values); the stored widget state is
     then dropped, so no page loads JavaScript from a CDN;
   * markdown links that point at a repository folder or file outside the site (for example
     ``../notebooks/``) are rewritten to the repository on GitHub, so the nitpicky build does not
     warn about them; links between notebooks are kept (MyST resolves them);
   * the copy is stamped as executed (``metadata.fairlens_docs``).

4. **gallery**: the matplotlib figures of the executed tutorials (``image/png`` outputs of
   non-widget cells) are written to ``docs/_generated/gallery/`` with ``docs/_generated/gallery.md``
   listing them under the section heading they belong to, linking back to that section.

``--check`` executes nothing: it fails (exit 1) if a copy is missing, stale or has an error,
which is what the ``docs`` stage runs before Sphinx.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SOURCES = {  # source folder -> copy folder
    ROOT / "tutorials": DOCS / "tutorials",
    ROOT / "notebooks": DOCS / "notebooks",
}
GENERATED = DOCS / "_generated"
REPO_URL = "https://github.com/fairlens-lab/fairlens/blob/main/"
META = "fairlens_docs"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
#: what a widget snapshot shows before its long action ran (a snapshot on the site must show a
#: result): a status asking for Start, or a MAFT timeline with no search on it
NOT_A_RESULT = ("press Start", "methods_shown&quot;: []")
#: notebooks whose idle snapshot is a known, tracked gap: reported, not failed (remove the entry
#: once the notebook starts its action, e.g. ``session.start()`` after creating the MAFTSession)
IDLE_SNAPSHOT_PENDING = {}


def _mode() -> str:
    return "reduced" if os.environ.get("FAIRLENS_REDUCED", "1") not in ("", "0") else "full"


def cache_key(source: Path) -> str:
    h = hashlib.sha256(source.read_bytes())
    h.update(_mode().encode())
    return h.hexdigest()


def notebooks():
    """(source, copy) pairs of every notebook shown on the site."""
    pairs = []
    for src_dir, dst_dir in SOURCES.items():
        for src in sorted(src_dir.glob("*.ipynb")):
            pairs.append((src, dst_dir / src.name))
    return pairs


def _stamp(copy: Path) -> dict:
    if not copy.exists():
        return {}
    try:
        nb = json.loads(copy.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return nb.get("metadata", {}).get(META, {})


def is_current(src: Path, copy: Path) -> bool:
    stamp = _stamp(copy)
    return stamp.get("key") == cache_key(src) and stamp.get("executed") is True


def error_cells(nb) -> list[int]:
    """Indices of code cells with an error output (not tagged ``raises-exception``)."""
    bad = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or "raises-exception" in cell.get("metadata", {}).get("tags", []):
            continue
        if any(o.get("output_type") == "error" for o in cell.get("outputs", [])):
            bad.append(i)
    return bad


# --- static widget rendering ----------------------------------------------------------------

_CONTAINERS = {"VBoxModel": "column", "BoxModel": "column", "GridBoxModel": "column",
               "HBoxModel": "row"}
_TABS = {"TabModel", "AccordionModel", "StackModel"}


class WidgetRenderer:
    """Static HTML of an ipywidgets tree from the widget state stored in a notebook."""

    def __init__(self, state: dict):
        self.state = state

    def _model(self, ref):
        mid = ref[len("IPY_MODEL_"):] if isinstance(ref, str) and ref.startswith("IPY_MODEL_") else ref
        return self.state.get(mid)

    @staticmethod
    def _buffer(model, name):
        for buf in model.get("buffers", []):
            if buf.get("path") == [name]:
                return buf.get("data")
        value = model.get("state", {}).get(name)
        return value if isinstance(value, str) else None

    def render(self, ref, depth=0) -> str:
        model = self._model(ref)
        if model is None or depth > 40:
            return ""
        name = model.get("model_name", "")
        st = model.get("state", {})
        if st.get("layout") and isinstance(st["layout"], str):
            layout = self._model(st["layout"]) or {}
            if layout.get("state", {}).get("display") == "none" or \
                    layout.get("state", {}).get("visibility") == "hidden":
                return ""
        desc = html.escape(str(st.get("description", "") or ""))
        label = f'<span class="fl-w-label">{desc}</span> ' if desc else ""
        if name in _CONTAINERS:
            kids = "".join(self.render(c, depth + 1) for c in st.get("children", []))
            return f'<div class="fl-w-box fl-w-{_CONTAINERS[name]}">{kids}</div>'
        if name in _TABS:
            titles = st.get("titles") or []
            parts = []
            for i, child in enumerate(st.get("children", [])):
                title = titles[i] if i < len(titles) and titles[i] else f"tab {i + 1}"
                parts.append(f'<div class="fl-w-tab"><div class="fl-w-tab-title">{html.escape(str(title))}'
                             f'</div>{self.render(child, depth + 1)}</div>')
            return f'<div class="fl-w-box fl-w-column">{"".join(parts)}</div>'
        if name == "ImageModel":
            data = self._buffer(model, "value")
            if not data:
                return ""
            fmt = st.get("format", "png")
            return f'<img class="fl-w-image" alt="widget view" src="data:image/{fmt};base64,{data}"/>'
        if name in ("HTMLModel", "HTMLMathModel"):
            return f'<div class="fl-w-html">{label}{st.get("value", "")}</div>'
        if name == "LabelModel":
            return f'<div class="fl-w-text">{html.escape(str(st.get("value", "")))}</div>'
        if name == "OutputModel":
            return f'<div class="fl-w-output">{render_outputs(st.get("outputs", []))}</div>'
        if name == "ButtonModel":
            return f'<span class="fl-w-button">{desc or html.escape(str(st.get("icon", "")))}</span>'
        if name in ("FloatProgressModel", "IntProgressModel"):
            return (f'<span class="fl-w-control">{label}<progress value="{st.get("value", 0)}" '
                    f'max="{st.get("max", 100)}"></progress></span>')
        if "_options_labels" in st:
            labels = st.get("_options_labels", [])
            idx = st.get("index")
            if isinstance(idx, list):
                value = ", ".join(str(labels[i]) for i in idx if i is not None and i < len(labels))
            else:
                value = labels[idx] if isinstance(idx, int) and idx < len(labels) else ""
            return f'<span class="fl-w-control">{label}<b>{html.escape(str(value))}</b></span>'
        if "value" in st and name.endswith("Model"):
            value = st["value"]
            if isinstance(value, list):
                value = " – ".join(str(v) for v in value)
            elif isinstance(value, bool):
                value = "☑" if value else "☐"
            return f'<span class="fl-w-control">{label}<b>{html.escape(str(value))}</b></span>'
        return ""  # layouts, styles and anything without a visible value


def render_outputs(outputs) -> str:
    parts = []
    for out in outputs:
        kind = out.get("output_type")
        if kind == "stream":
            parts.append(f"<pre>{html.escape(''.join(out.get('text', '')))}</pre>")
        elif kind in ("display_data", "execute_result"):
            data = out.get("data", {})
            if "image/png" in data:
                parts.append(f'<img alt="figure" src="data:image/png;base64,{data["image/png"]}"/>')
            elif "text/html" in data:
                v = data["text/html"]
                parts.append("".join(v) if isinstance(v, list) else v)
            elif "text/plain" in data:
                v = data["text/plain"]
                parts.append(f"<pre>{html.escape(''.join(v) if isinstance(v, list) else v)}</pre>")
    return "".join(parts)


def staticize_widgets(nb) -> int:
    """Replace widget-view outputs by static HTML of the final widget state; return the count."""
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    renderer = WidgetRenderer(state)
    count = 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if WIDGET_VIEW not in data:
                continue
            view = data.pop(WIDGET_VIEW)
            rendered = renderer.render(view.get("model_id", "")) if state else ""
            if rendered:
                data["text/html"] = f'<div class="fl-widget-snapshot">{rendered}</div>'
                data.pop("text/plain", None)
                count += 1
            elif not any(k in data for k in ("text/html", "image/png", "image/svg+xml")):
                data["text/plain"] = "(interactive widget: run the notebook in JupyterLab to use it)"
    nb.metadata.pop("widgets", None)
    return count


# --- links ------------------------------------------------------------------------------------

_LINK = re.compile(r"(\[[^\]]*\]\()([^)\s]+)(\))")


def rewrite_links(nb, src: Path, copy: Path) -> None:
    """Point markdown links that leave the site at the repository on GitHub."""

    def fix(match):
        target = match.group(2)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            return match.group(0)
        path, _, anchor = target.partition("#")
        resolved = (copy.parent / path).resolve()
        if resolved.is_file() and resolved.suffix in (".ipynb", ".md") and DOCS in resolved.parents:
            return match.group(0)
        in_copy_tree = (copy.parent / path)
        if path.endswith(".ipynb") and in_copy_tree.resolve().parent in SOURCES.values():
            return match.group(0)  # another executed notebook: MyST resolves it
        repo_path = (src.parent / path).resolve()
        if repo_path.is_file() and repo_path.suffix == ".md" and DOCS in repo_path.parents:
            # a page of the site (e.g. ../docs/limits/maft.md from tutorials/): link the page
            rel = os.path.relpath(repo_path, copy.parent.resolve())
            return f"{match.group(1)}{rel}{'#' + anchor if anchor else ''}{match.group(3)}"
        try:
            rel = repo_path.relative_to(ROOT).as_posix()
        except ValueError:
            return match.group(0)
        url = REPO_URL.replace("/blob/", "/tree/") if repo_path.is_dir() else REPO_URL
        return f"{match.group(1)}{url}{rel}{'#' + anchor if anchor else ''}{match.group(3)}"

    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = _LINK.sub(fix, cell.source)


# --- gallery ----------------------------------------------------------------------------------

def _slug(text: str) -> str:
    """The anchor MyST gives a heading (myst_heading_anchors): GitHub-style slug."""
    text = re.sub(r"<[^>]+>", "", text.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def gallery(pairs) -> int:
    out_dir = GENERATED / "gallery"
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    lines = ["# Gallery of figures", "",
             "Every figure drawn by the tutorials, from the same executed copies as the tutorial pages",
             "(reduced mode, `FAIRLENS_REDUCED=1`: smaller budgets than the papers, so numbers differ",
             "from a full-size run). Each caption is the tutorial section the figure belongs to; follow",
             "it to read how the figure was computed and how it compares with the paper.", ""]
    n = 0
    for src, copy in pairs:
        if src.parent.name != "tutorials" or not copy.exists():
            continue
        nb = nbformat.read(copy, as_version=4)
        title, heading, doc = src.stem, None, copy.relative_to(DOCS).with_suffix("").as_posix()
        items = []
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                for line in cell.source.splitlines():
                    m = re.match(r"^(#{1,4})\s+(.*)", line)
                    if m:
                        if len(m.group(1)) == 1 and title == src.stem:
                            title = m.group(2).strip()
                        heading = m.group(2).strip()
                continue
            for out in cell.get("outputs", []):
                png = out.get("data", {}).get("image/png")
                if not png:
                    continue
                n += 1
                name = f"{src.stem}_{n:03d}.png"
                (out_dir / name).write_bytes(base64.b64decode(png))
                items.append((name, heading))
        if not items:
            continue
        lines += [f"## {title}", "", f"From {{doc}}`/{doc}`.", ""]
        for name, heading in items:
            cap = heading or title
            lines += [f"```{{figure}} gallery/{name}", ":width: 90%", "",
                      f"{{doc}}`{_md_escape(cap)} </{doc}>`", "```", ""]
    (GENERATED / "gallery.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return n


def _md_escape(text: str) -> str:
    text = re.sub(r"[`*_<>]", "", text)
    return text.replace("{", "(").replace("}", ")")


# --- main -------------------------------------------------------------------------------------

def finalize(src: Path, copy: Path) -> bool:
    nb = nbformat.read(copy, as_version=4)
    bad = error_cells(nb)
    if bad:
        print(f"ERROR: {copy.relative_to(ROOT)} has error outputs in cells {bad}: not used for the site")
        return False
    n = staticize_widgets(nb)
    idle = [i for i, cell in enumerate(nb.cells) for out in cell.get("outputs", [])
            if any(p in str(out.get("data", {}).get("text/html", "")) for p in NOT_A_RESULT)]
    source = src.relative_to(ROOT).as_posix()
    if idle and source in IDLE_SNAPSHOT_PENDING:
        print(f"WARNING: {copy.relative_to(ROOT)}: widget snapshots in cells {idle} show no result "
              f"(known: {IDLE_SNAPSHOT_PENDING[source]})")
    elif idle:
        print(f"ERROR: {copy.relative_to(ROOT)}: widget snapshots in cells {idle} show no result "
              "(a 'press Start' state): start the action in the notebook so the page shows what it does")
        return False
    rewrite_links(nb, src, copy)
    # the key of the source that was executed (stamped at sync): a source edited while the copies
    # ran stays stale and runs again next time
    key = nb.metadata.get(META, {}).get("key") or cache_key(src)
    nb.metadata[META] = {"key": key, "executed": True, "mode": _mode(),
                         "source": src.relative_to(ROOT).as_posix(), "static_widgets": n}
    nbformat.write(nb, copy)
    print(f"prepared {copy.relative_to(ROOT)} ({n} widget snapshots)")
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--force", action="store_true", help="re-execute every notebook")
    ap.add_argument("--check", action="store_true", help="execute nothing; fail if a copy is stale")
    ap.add_argument("pytest_args", nargs="*", help="extra arguments for pytest (e.g. --nbmake-timeout=600)")
    args = ap.parse_args(argv)
    os.environ.setdefault("FAIRLENS_REDUCED", "1")
    pairs = notebooks()
    stale = [(s, c) for s, c in pairs if args.force or not is_current(s, c)]
    if args.check:
        for s, c in stale:
            print(f"ERROR: {c.relative_to(ROOT)} is missing, stale or failed; run "
                  f"`python docs/prepare_notebooks.py` (source {s.relative_to(ROOT)})")
        if not stale:
            print(f"gallery: {gallery(pairs)} figures")
        return 1 if stale else 0
    for s, c in stale:
        c.parent.mkdir(parents=True, exist_ok=True)
        nb = nbformat.read(s, as_version=4)
        nb.metadata[META] = {"key": cache_key(s), "executed": False}
        nbformat.write(nb, c)
    rc = 0
    if stale:
        print(f"executing {len(stale)} notebook(s) once (FAIRLENS_REDUCED={os.environ['FAIRLENS_REDUCED']})")
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbmake", "--overwrite",
               *args.pytest_args, *[str(c.relative_to(ROOT)) for _, c in stale]]
        # kernels must draw inline: CI exports MPLBACKEND=Agg, under which ipykernel keeps Agg and
        # a notebook without `%matplotlib inline` would show no figure
        env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
        rc = subprocess.call(cmd, cwd=ROOT, env=env)
        for s, c in stale:
            if not finalize(s, c):
                rc = rc or 1
    else:
        print("every executed notebook is current (use --force to re-execute)")
    print(f"gallery: {gallery(pairs)} figures")
    return rc


if __name__ == "__main__":
    sys.exit(main())
