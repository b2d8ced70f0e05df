"""The tests of ``tests/contract/test_import_floors.py`` that pin internals
(its docstring describes both halves)."""
from __future__ import annotations

from tests.contract.test_import_floors import _graph

FLOORS = ["fairlens._validation", "fairlens._base", "fairlens.models", "fairlens._parallel"]


def test_the_ground_floor_imports_nothing_of_the_package():
    assert _graph()["fairlens._validation"] == set()


def test_the_base_layer_imports_only_downward():
    g = _graph()
    for i, m in enumerate(FLOORS):
        up = {t for t in g[m] if t in FLOORS[i + 1:] or (t.startswith("fairlens.") and t not in FLOORS
                                                           and t != "fairlens._version")}
        assert not up, f"{m} imports {sorted(up)} (at or above its floor)"
