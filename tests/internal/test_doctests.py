"""The tests of ``tests/contract/test_doctests.py`` that pin internals
(its docstring describes both halves)."""

import pytest

from tests.contract.test_doctests import MODULES, _is_widget, _run_examples

#: Modules whose examples load a dataset (run only with the mirror, via ``require_data``).
DATA_MODULES = {
    "fairlens.maft._analysis",
    "fairlens.maft._gradients",
    "fairlens.maft._mitigation",
    "fairlens.maft._problem",
    "fairlens.maft._result",
    "fairlens.maft._search",
    "fairlens.maft._searchers",
    "fairlens.maft._sg",
}


@pytest.mark.parametrize("name", [m for m in MODULES if not _is_widget(m) and m not in DATA_MODULES])
def test_docstring_examples_run(name):
    _run_examples(name)


@pytest.mark.parametrize("name", sorted(DATA_MODULES & set(MODULES)))
def test_docstring_examples_with_data_run(name, require_data):
    _run_examples(name)


def test_the_collection_sees_every_module_and_the_marks_name_real_ones():
    assert {"fairlens.models", "fairlens.metrics", "fairlens.audit._gate", "fairlens._registry"} <= set(MODULES)
    assert sum(_is_widget(m) for m in MODULES) >= 5   # the four slices' widgets and the shared one
    # a renamed module must not silently drop its examples out of the data-only run
    assert DATA_MODULES <= set(MODULES), sorted(DATA_MODULES - set(MODULES))
