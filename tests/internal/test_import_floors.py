"""The package's import graph has floors (issue #34, item 5): measured from the source by AST, with
function-local imports counted like module-level ones.

* ``fairlens._validation`` (the ground floor) imports nothing of the package;
* ``_base``, ``models`` and ``_parallel`` import only downward (``_validation`` < ``_base`` <
  ``models`` < ``_parallel``);
* with every subpackage drawn as one room (``fairlens.maft``, ``fairlens.certify``, ...), the graph of
  rooms has no circle.
"""
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
