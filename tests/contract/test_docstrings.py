"""numpydoc validation of every public object (issue 21: docs in the code).

Walks the public modules of fairlens (every top-level module or subpackage not starting with
``_`` that defines ``__all__``), every class and function in their ``__all__`` and every public
method of those classes, and runs ``numpydoc.validate.validate`` on each with the checks in
:data:`CHECKS`.  ``tests/docstring_debt.txt`` lists the objects allowed to fail, with the
checks they fail; the test fails

* when an object fails a check that is not on the list for it (new debt), and
* when an object passes a check that the list still holds against it (the list only
  shrinks: remove the entry), or the list names an object that no longer exists.

Regenerate the list after fixing docstrings (it must only shrink) with
``python tests/contract/test_docstrings.py --write``.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys

import pytest

from tests._support import TESTS

numpydoc_validate = pytest.importorskip("numpydoc.validate")

DEBT_FILE = TESTS / "docstring_debt.txt"

#: The numpydoc checks enforced (see numpydoc.validate.ERROR_MSGS).
CHECKS = {
    "GL08",  # the object has no docstring
    "SS01",  # no summary line
    "PR01",  # parameters not documented
    "PR02",  # documented parameters that do not exist
    "PR07",  # a parameter without a description
    "RT01",  # no Returns section (for something that returns a value)
    "EX01",  # no Examples section
}


def public_modules():
    import fairlens

    names = []
    for info in pkgutil.iter_modules(fairlens.__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"fairlens.{info.name}")
        if hasattr(mod, "__all__"):
            names.append(mod.__name__)
    return sorted(names)


def public_objects(module_name):
    """Dotted names of the classes/functions in ``__all__`` and their public methods."""
    mod = importlib.import_module(module_name)
    out = []
    for name in mod.__all__:
        obj = getattr(mod, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue  # constants and submodules
        dotted = f"{module_name}.{name}"
        out.append(dotted)
        if inspect.isclass(obj):
            for attr, member in sorted(vars(obj).items()):
                if attr.startswith("_"):
                    continue
                if isinstance(member, (staticmethod, classmethod)):
                    member = member.__func__
                if inspect.isfunction(member):
                    out.append(f"{dotted}.{attr}")
    return out


def failures(dotted):
    result = numpydoc_validate.validate(dotted)
    return sorted({code for code, _ in result["errors"] if code in CHECKS})


def read_debt():
    debt = {}
    if DEBT_FILE.exists():
        for line in DEBT_FILE.read_text().splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                name, _, codes = line.partition(":")
                debt[name.strip()] = set(codes.split())
    return debt


def current_state():
    return {d: failures(d) for m in public_modules() for d in public_objects(m)}


def write_debt():
    state = current_state()
    lines = [
        "# numpydoc debt: public objects allowed to fail these checks (tests/contract/test_docstrings.py).",
        "# The list only shrinks: fix a docstring, then remove its codes (or the line).",
        "# Regenerate: python tests/contract/test_docstrings.py --write",
    ]
    lines += [f"{name}: {' '.join(codes)}" for name, codes in sorted(state.items()) if codes]
    DEBT_FILE.write_text("\n".join(lines) + "\n")
    return sum(1 for c in state.values() if c)


def test_public_modules_found():
    mods = public_modules()
    for expected in ("fairlens.datasets", "fairlens.models", "fairlens.maft", "fairlens.certify"):
        assert expected in mods


@pytest.mark.parametrize("module_name", public_modules() if "numpydoc" in sys.modules else [])
def test_numpydoc(module_name):
    debt = read_debt()
    new, paid = [], []
    for dotted in public_objects(module_name):
        codes = set(failures(dotted))
        allowed = debt.get(dotted, set())
        if codes - allowed:
            detail = [f"{c} {m}" for c, m in numpydoc_validate.validate(dotted)["errors"]
                      if c in codes - allowed]
            new.append(f"{dotted}: " + "; ".join(detail))
        if allowed - codes:
            paid.append(f"{dotted}: {' '.join(sorted(allowed - codes))}")
    msg = []
    if new:
        msg.append("docstrings failing numpydoc checks (fix them):\n  " + "\n  ".join(new))
    if paid:
        msg.append(f"these now pass: remove them from {DEBT_FILE.name} (the list only shrinks):\n  "
                   + "\n  ".join(paid))
    assert not msg, "\n".join(msg)


def test_debt_names_existing_objects():
    known = {d for m in public_modules() for d in public_objects(m)}
    stale = sorted(set(read_debt()) - known)
    assert not stale, f"{DEBT_FILE.name} names objects that are gone (remove them): {stale}"


if __name__ == "__main__":  # pragma: no cover
    if "--write" in sys.argv:
        print(f"{write_debt()} objects on the list; written to {DEBT_FILE}")
    else:
        state = current_state()
        bad = {k: v for k, v in state.items() if v}
        print(f"{len(bad)} of {len(state)} public objects fail {sorted(CHECKS)}")
