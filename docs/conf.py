"""Sphinx configuration of the fairlens documentation site.

Build (offline, warnings are errors, nitpicky)::

    python docs/prepare_notebooks.py          # execute the notebooks once (cached)
    python -m sphinx -W --keep-going -n -b html docs docs/_build/html

* Notebooks are rendered from the executed copies that ``prepare_notebooks.py`` writes to
  ``docs/tutorials/`` and ``docs/notebooks/``; Sphinx executes nothing (``nb_execution_mode``
  is ``"off"``).
* The API reference is generated here, at configuration time, from the ``__all__`` of each
  public module (``API_MODULES``): one page per module with an autosummary table, and one stub
  page per public object (autosummary). A name added to an ``__all__`` appears on the next build
  without editing the docs.
* Cross-references: numpydoc links the type words that are public names (unique across the
  modules) or listed in ``numpydoc_xref_aliases``; a short name in a submodule's docstring resolves
  in the enclosing subpackage; members documented as deprecated or "old name of" are left out.
* Nothing reaches the network, at build time or when a page is read: intersphinx is not used,
  and MathJax (the math in the tutorials and the paper pages) is served from the site itself
  (``_static/mathjax/``, copied from the ``sphinx-mathjax-offline`` package) instead of a CDN;
  ``_ext/offline_check.py`` fails the build if a page would still load a script, style sheet,
  font or image from another host. Types of the Python standard library and
  of numpy/pandas/scikit-learn/matplotlib named in docstrings resolve through a small local
  inventory per project (``_inventories/*.inv``, written by ``_inventories/make_inventory.py``) whose
  entries link to those projects' online documentation.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE / "_ext"))
os.environ.setdefault("MPLBACKEND", "Agg")

import fairlens  # noqa: E402

project = "fairlens"
author = "fairlens developers"
copyright = "fairlens developers, BSD-3-Clause"
release = fairlens.__version__
version = release

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    # MathJax 3 served from the site (sets mathjax_path, copies the files at the end of the build)
    "sphinx-mathjax-offline",
    "numpydoc",
    "slides",  # docs/_ext/slides.py: reveal.js lecture slides per block, served from the site
    "offline_check",  # docs/_ext/offline_check.py: fail the build if a page loads a remote file
]

exclude_patterns = ["_build", "**.ipynb_checkpoints", "prepare_notebooks.py", "_inventories", "_ext",
                    "lecture/timings.md", "lecture/timings-full.md", "_static/reveal",
                    "README.md"]
templates_path = ["_templates"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}

# --- notebooks (myst-nb) -----------------------------------------------------------------------
nb_execution_mode = "off"          # executed once by prepare_notebooks.py, rendered as stored
nb_output_stderr = "show"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
# Tutorials are other engineers' prose: a heading that skips a level ("# Title" then "### Step")
# is a style choice there, not a broken document. Only that MyST check is silenced.
suppress_warnings = ["myst.header"]

# --- API reference -----------------------------------------------------------------------------
#: The public modules: every module that ``fairlens.__all__`` names, in that order (a new
#: subpackage appears on the next build). Each page lists exactly that module's ``__all__``, under
#: the first line of the module's docstring.
API_MODULES = []
for _name in fairlens.__all__:
    if _name.startswith("__") or _name.isupper():  # constants (DASK_RECOMMENDED_CONFIG): getting_started.md
        continue
    _mod = importlib.import_module(f"fairlens.{_name}")
    _title = (_mod.__doc__ or _name).strip().splitlines()[0].rstrip(".")
    _title = re.sub(r":\w+:`~?([^`]+)`", r"``\1``", _title)      # no cross-references in a title
    API_MODULES.append((f"fairlens.{_name}", _title))
    # public submodules of a subpackage that are not re-exported by it: the figures
    # (``plots``) and the papers' reported numbers (``testsgd.paper``); widgets are re-exported
    if hasattr(_mod, "__path__"):
        for _info in pkgutil.iter_modules(_mod.__path__):
            if _info.name.startswith("_") or _info.name == "widget":
                continue
            _sub = importlib.import_module(f"fairlens.{_name}.{_info.name}")
            if hasattr(_sub, "__all__"):
                _t = (_sub.__doc__ or _info.name).strip().splitlines()[0].rstrip(".")
                API_MODULES.append((_sub.__name__, re.sub(r":\w+:`~?([^`]+)`", r"``\1``", _t)))


def _write_api_pages():
    out = HERE / "api"
    out.mkdir(exist_ok=True)
    index = ["API reference", "=============", "",
             "Every public object of fairlens: the names each module lists in its ``__all__``.",
             "Subpackages import lazily (``import fairlens`` is cheap); the widgets import",
             "ipywidgets only when first accessed.", "",
             ".. toctree::", "   :maxdepth: 1", ""]
    for mod_name, title in API_MODULES:
        mod = importlib.import_module(mod_name)
        names = list(getattr(mod, "__all__"))
        short = mod_name[len("fairlens."):]
        index.append(f"   {short}")
        heading = f"``{mod_name}``: {title}"
        lines = [heading, "=" * len(heading), "",
                 f".. automodule:: {mod_name}", "   :no-members:", "",
                 f".. currentmodule:: {mod_name}", "",
                 ".. autosummary::", "   :toctree: generated", "", ]
        lines += [f"   {name}" for name in names]
        text = "\n".join(lines) + "\n"
        page = out / f"{short}.rst"
        if not page.exists() or page.read_text() != text:
            page.write_text(text)
    text = "\n".join(index) + "\n"
    if not (out / "index.rst").exists() or (out / "index.rst").read_text() != text:
        (out / "index.rst").write_text(text)


_write_api_pages()

# the papers' index, from the slice registry (a registered slice with a docs page is listed)
from fairlens._registry import slices as _slices  # noqa: E402
from slices_index import write_papers_index  # noqa: E402

write_papers_index(HERE, _slices())

autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True}
autodoc_typehints = "none"              # the numpydoc Parameters/Returns sections carry the types
autodoc_member_order = "bysource"
numpydoc_show_class_members = False     # members are listed by the class template instead
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = True
# numpydoc cross-references the words of a "Parameters" type line. Only names in
# numpydoc_xref_aliases are linked ("all" leaves every other word as plain text): the public
# names of fairlens (generated below from each __all__) and a few external types, all of which
# must resolve (nitpicky). Prose such as "array-like" or "ndarray of shape (n, d)" stays text.
numpydoc_xref_ignore = "all"
numpydoc_xref_aliases = {
    "DataFrame": "pandas.DataFrame",
    "Series": "pandas.Series",
    "ndarray": "numpy.ndarray",
    "Generator": "numpy.random.Generator",
    "RandomState": "numpy.random.RandomState",
    "Figure": "matplotlib.figure.Figure",
    "Axes": "matplotlib.axes.Axes",
    "Event": "threading.Event",
    "Path": "pathlib.Path",
    "MLPClassifier": "sklearn.neural_network.MLPClassifier",
    "RandomForestClassifier": "sklearn.ensemble.RandomForestClassifier",
    "DecisionTreeClassifier": "sklearn.tree.DecisionTreeClassifier",
    "ExtraTreesClassifier": "sklearn.ensemble.ExtraTreesClassifier",
    "Pipeline": "sklearn.pipeline.Pipeline",
}
# every public name links to its page, unless two modules export the same name (for example
# ``MitigationResult`` of MAFT and of TestSGD): such a type word stays plain text
_homes = {}
for _mod_name, _ in API_MODULES:
    for _name in importlib.import_module(_mod_name).__all__:
        _homes.setdefault(_name, []).append(f"{_mod_name}.{_name}")
for _name, _where in _homes.items():
    if len(_where) == 1:
        numpydoc_xref_aliases.setdefault(_name, _where[0])


# Local inventory only: no intersphinx request ever leaves the machine.
_INV = HERE / "_inventories"
intersphinx_mapping = {
    "python": ("https://docs.python.org/3/", str(_INV / "python.inv")),
    "numpy": ("https://numpy.org/doc/stable/", str(_INV / "numpy.inv")),
    "pandas": ("https://pandas.pydata.org/docs/", str(_INV / "pandas.inv")),
    "matplotlib": ("https://matplotlib.org/stable/", str(_INV / "matplotlib.inv")),
    "sklearn": ("https://scikit-learn.org/stable/", str(_INV / "sklearn.inv")),
    "ipywidgets": ("https://ipywidgets.readthedocs.io/en/stable/", str(_INV / "ipywidgets.inv")),
}
intersphinx_disabled_reftypes = []
intersphinx_timeout = 1

nitpicky = True
# numpydoc type phrases ("array-like", "ndarray of shape (n, d)", "int >= 0", {"a", "b"}) need no
# ignore rule: with numpydoc_xref_ignore = "all" only their known names (aliases) become links.
nitpick_ignore_regex = [
    # References to private helpers (a name with an underscore component, such as
    # fairlens._parallel.run_chunks or _kernels.and_popcount) and to module constants that are
    # in no __all__: the site documents only public objects, so they render as code, unlinked.
    (r"py:(func|class|mod|data|obj)", r"(.*\.)?_[A-Za-z]\w*(\..*)?"),
    (r"py:(func|data|mod|const)", r"(.*\.)?[A-Z][A-Z0-9_]+"),     # module constants not in __all__
    (r"py:func", r"rule_set_rng"),
]

# --- HTML ----------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"fairlens {release}"
html_static_path = ["_static"]
html_css_files = ["fairlens.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "navbar_align": "left",
    "header_links_before_dropdown": 3,
    "secondary_sidebar_items": ["page-toc"],
}
# notebook pages get the full width (wide DataFrames and figures); their own headings are in
# the right-hand page table of contents
# (and so do the prose pages: their own headings are in the page table of contents, and an empty
# 320 px left column would only narrow the text at 1280 px)
html_sidebars = {"tutorials/*": [], "notebooks/*": [], "_generated/*": [], "papers/*": [], "limits/*": [],
                 "lecture/*": [], "instructors": [], "getting_started": []}
# pydata-sphinx-theme needs a valid default mode (an empty one logs "Got invalid theme mode" on
# every page); light reads best on a projector
html_context = {"default_mode": "light"}
# search results without page excerpts: Sphinx fetches each result page for its excerpt, which a
# browser refuses for a site opened from disk (file://); titles only, and no blocked requests
html_show_search_summary = False
html_show_sourcelink = False
html_last_updated_fmt = None


# --- docstring hygiene, applied before numpydoc parses a docstring --------------------------------
# Two habits of the package's plain-text docstrings are not valid reStructuredText; they are fixed
# here for rendering only (the docstrings read well in help() as they are):
# * ``|x|`` for an absolute value, which reST reads as a substitution reference;
# * an inline literal that wraps onto the next line in a numpydoc "Returns" type line, which
#   numpydoc cuts in two (the literal is joined onto one line).
_ABS = re.compile(r"(?<![`\\|\w])\|([^|`\s][^|`]*?)\|(?![`|\w])")


def _rst_hygiene(app, what, name, obj, options, lines):
    i = 0
    while i < len(lines) - 1:
        if lines[i].count("``") % 2 == 1 and lines[i + 1].strip():
            lines[i] = lines[i].rstrip() + " " + lines.pop(i + 1).strip()
            continue
        i += 1
    for i, line in enumerate(lines):
        parts = line.split("``")
        for j in range(0, len(parts), 2):          # outside inline literals only
            parts[j] = _ABS.sub(r"\\|\1\\|", parts[j])
        lines[i] = "``".join(parts)


# scikit-learn adds metadata-routing methods (set_fit_request, ...) to every estimator subclass;
# they are scikit-learn's API, not fairlens's, and their docstrings link into scikit-learn's docs.
# Old attribute names kept for reading (e.g. a property ``sensitive`` aliasing ``protected``)
# are not part of the documented API: a member whose
# docstring's first paragraph says "Deprecated ...", "old name of ..." or "deprecated alias/name"
# is left out.
def _skip_member(app, what, name, obj, skip, options):
    if name.startswith("set_") and name.endswith("_request") or name == "get_metadata_routing":
        return True
    doc = inspect.getdoc(obj) or ""
    if _OLD_NAME.search(doc.split("\n\n")[0]):
        return True
    return None


_OLD_NAME = re.compile(r"^\s*deprecated|\bold name (of|for)\b|\bdeprecated (alias|name|spelling)\b",
                       re.IGNORECASE)


# A short name in a submodule's docstring (``FairnessTestResult`` in ``fairlens.maft.plots``)
# means the public name of the enclosing subpackage (``fairlens.maft.FairnessTestResult``):
# resolve it there before calling it missing.
def _resolve_in_parent_package(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target, module = node.get("reftarget") or "", node.get("py:module") or ""
    domain = env.get_domain("py")
    parts = module.split(".")
    for i in range(len(parts) - 1, 0, -1):
        candidate = ".".join(parts[:i]) + "." + target.lstrip("~.")
        if candidate in domain.objects:
            return domain.resolve_xref(env, node["refdoc"], app.builder, node["reftype"], candidate,
                                       node, contnode)
    return None


def setup(app):
    app.connect("missing-reference", _resolve_in_parent_package)
    app.connect("autodoc-process-docstring", _rst_hygiene, priority=100)
    app.connect("autodoc-skip-member", _skip_member)
