"""The tests of ``tests/contract/test_public_validation.py`` that pin internals
(its docstring describes both halves)."""

from __future__ import annotations

import inspect
import re
import warnings

import pytest

from fairlens._base import _satisfies, make_invalid
from tests.contract.test_public_validation import TABLES


def _cases():
    out = []
    for name, obj in TABLES:
        table = getattr(obj, "_parameter_constraints", None) or {}
        for param, bad, kind in make_invalid(table, kinds=True):
            out.append(pytest.param(obj, param, bad, kind, id=f"{name}-{param}-{kind}"))
    return out


@pytest.mark.parametrize("name, obj", TABLES, ids=[name for name, _ in TABLES])
def test_defaults_satisfy_the_table(name, obj):
    """A table stricter than the documented default would refuse a call that works today."""
    table = getattr(obj, "_parameter_constraints", None) or {}
    for p in inspect.signature(obj).parameters.values():
        allowed = table.get(p.name, "no_validation")
        if allowed == "no_validation" or p.default is p.empty:
            continue
        assert any(_satisfies(c, p.default) for c in allowed), (name, p.name, p.default)


@pytest.mark.parametrize("obj, param, bad, kind", _cases())
def test_invalid_value_alone_is_refused_naming_the_parameter(obj, param, bad, kind):
    expected = TypeError if kind == "type" else ValueError
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(expected, match=rf"\b{re.escape(param)}\b"):
            obj(**{param: bad})


def test_tables_cover_the_public_functions():
    assert len(TABLES) > 90
    assert len(_cases()) > 150
