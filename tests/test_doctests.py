"""The Examples in the docstrings run (issue 21: "Examples that run").

Runs the doctests of the modules listed in :data:`MODULES` (the core: models, datasets,
parallel helpers, validation, metrics), :data:`WIDGET_MODULES` (the widgets, driven headless
with ``background=False``; skipped without ipywidgets) and :data:`DATA_MODULES`.  A module's
examples are found through its own functions and classes (doctest skips names it re-exports
from elsewhere), so list the module that defines an object.  Add a module here once its
examples pass.
"""
import doctest
import importlib

import pytest

MODULES = [
    "fairlens.models",
    "fairlens.datasets._base",
    "fairlens.datasets._loaders",
    "fairlens.datasets._fetch",
    "fairlens._parallel",
    "fairlens._validation",
    "fairlens.testsgd._rules",
    "fairlens.testsgd._score",
    "fairlens.testsgd._testsgd",
    "fairlens.testsgd._themis",
    "fairlens.testsgd._fairfictplay",
    "fairlens.testsgd._mitigate",
    "fairlens.testsgd._text",
    "fairlens.shuffle._shuffled",
    "fairlens.shuffle._consistency",
    "fairlens.shuffle._detect",
    "fairlens.tour",
    "fairlens.certify",
    "fairlens.certify._certify",
    "fairlens.certify._ensemble",
    "fairlens.certify._flat",
    "fairlens.certify._fpf",
    "fairlens.certify._nancode",
    "fairlens.certify._readers",
    "fairlens.certify._readers._lightgbm",
    "fairlens.certify._reference",
    "fairlens.certify._results",
    "fairlens.certify._votes",
    "fairlens.metrics",
    "fairlens._stats",
    "fairlens._groupstats",
    "fairlens.audit._audit",
    "fairlens.audit._checks",
    "fairlens.audit._gate",
]

#: The widgets (ipywidgets needed): their examples use bundled data or scikit-learn's toy data.
WIDGET_MODULES = [
    "fairlens._widgets",
    "fairlens.certify._widget",
    "fairlens.maft._widget",
    "fairlens.shuffle._widget",
    "fairlens.testsgd._widget",
]

#: Modules whose examples load a dataset (run only with the mirror, via ``require_data``).
DATA_MODULES = [
    "fairlens.maft._analysis",
    "fairlens.maft._gradients",
    "fairlens.maft._mitigation",
    "fairlens.maft._result",
    "fairlens.maft._search",
    "fairlens.maft._sg",
]


def _run_examples(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(module, name, globs={})
    assert tests, f"{name} has no examples"
    for t in tests:
        runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (see above)"


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    _run_examples(name)


@pytest.mark.parametrize("name", WIDGET_MODULES)
def test_widget_examples_run(name):
    pytest.importorskip("ipywidgets")
    _run_examples(name)


@pytest.mark.parametrize("name", DATA_MODULES)
def test_docstring_examples_with_data_run(name, require_data):
    _run_examples(name)
