"""Every public function validates its parameters from one declarative table (issue #34 item 4).

The functions are discovered as in ``tests/contract/test_public_keywords.py`` (the ``__all__`` of the
public modules; classes are covered by the ``Analysis`` contract tests).  Each must carry the
table of :func:`fairlens._base.validated` (``func._parameter_constraints``), and for each
constrained parameter a call giving *only* that parameter

* with a value of a type no constraint accepts raises a ``TypeError`` naming the parameter;
* with a value of an accepted type out of range / not an option raises a ``ValueError``
  naming it (for the parameters with a range or options).

As nothing else is passed, the refusal must come from the table before the body runs: a
function whose table does not refuse the value fails with Python's "missing required
argument" ``TypeError``, which does not name the parameter.
"""

from __future__ import annotations

import inspect

import pytest

from tests.contract.test_public_keywords import CALLABLES

FUNCTIONS = [(name, obj) for name, obj in CALLABLES if not inspect.isclass(obj)]

#: Functions without a parameter to validate: no parameter at all, or data only (checked by the
#: body, where the shape or the content is what matters).
EXEMPT = {
    "fairlens.datasets.get_cache_dir",       # no parameter
    "fairlens.datasets.list_datasets",       # no parameter
    "fairlens.report.environment_info",      # no parameter
    "fairlens.report.utc_now",               # no parameter
}

#: Scalar-defaulted parameters deliberately left "no_validation" (another branch changes them).
UNCHECKED_SCALARS = {
    ("fairlens.audit.audit", "time_budget"),  # being renamed time_limit on another branch
}

#: Parameters whose default is a scalar but which are values of the data (a class label of any
#: type), not options: the body checks them against the data.
DATA_VALUES = {"favourable", "label"}

TABLES = [(name, obj) for name, obj in FUNCTIONS if name not in EXEMPT]


@pytest.mark.parametrize("name, obj", TABLES, ids=[name for name, _ in TABLES])
def test_every_public_function_has_a_table(name, obj):
    table = getattr(obj, "_parameter_constraints", None)
    assert isinstance(table, dict) and table, (
        f"{name} has no declarative parameter table: decorate it with @validated({{...}}) "
        "(fairlens._base.validated), or list it in EXEMPT if it takes no parameter to validate.")
    params = inspect.signature(obj).parameters
    assert set(table) <= set(params), (name, sorted(set(table) - set(params)))
    for p in params.values():
        if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        # a scalar default (number, bool, str) says the parameter is an option: it must be checked
        scalar = isinstance(p.default, (bool, int, float, str)) and p.default is not p.empty
        if scalar and p.name not in DATA_VALUES and (name, p.name) not in UNCHECKED_SCALARS:
            assert table.get(p.name, "no_validation") != "no_validation", (
                f"{name}: the option {p.name}={p.default!r} has no constraint in its table.")
