"""The test tree's own rule: ``tests/contract`` uses fairlens's public names only.

``tests/contract/`` holds the tests a user could have written (they import and touch only public
names, followed through helpers, fixtures and test-support modules); ``tests/internal/`` holds
the tests that pin an implementation (a kernel, a private module, a monkeypatched internal). A
redesign may rewrite ``tests/internal`` but should leave ``tests/contract`` alone. The rule is
``tests/_support/layout.py``; run it as a script for the figures.
"""
from __future__ import annotations

import ast
import textwrap

import pytest

from tests._support import TESTS
from tests._support.layout import OUTSIDE_UNIT, Tree, figures


@pytest.fixture(scope="module")
def tree():
    return Tree()


def test_nothing_under_contract_reaches_a_private_name(tree):
    contract = TESTS / "contract"
    bad = []
    for mod in tree.modules.values():
        if not mod.path.is_relative_to(contract):
            continue
        for node in mod.tree.body:
            if tree.reaches(mod, node):
                bad.append(f"{mod.path.relative_to(TESTS)}:{node.lineno}: {ast.unparse(node).splitlines()[0]}")
    assert not bad, "these reach private names; move them to tests/internal:\n" + "\n".join(bad)


def test_everything_under_internal_needs_to_be_there(tree):
    """A test that uses public names only belongs in tests/contract, so the split stays meaningful."""
    public = [f"{m.path.relative_to(TESTS)}::{n.name}" for m, n, private in tree.tests(TESTS / "internal")
              if not private]
    assert not public, "these use public names only; move them to tests/contract:\n" + "\n".join(public)


def test_contract_holds_at_least_two_thirds_of_the_unit_tests(tree):
    f = figures(tree)
    assert f["under tests/contract"] == f["reaching only public names"]
    assert 3 * f["under tests/contract"] >= 2 * f["test functions"], f


def test_every_test_file_is_in_one_half():
    allowed = {"contract", "internal", *OUTSIDE_UNIT}
    stray = [str(p.relative_to(TESTS)) for p in TESTS.rglob("test_*.py")
             if p.relative_to(TESTS).parts[0] not in allowed]
    assert not stray, f"test files outside tests/contract and tests/internal: {stray}"


def test_the_pure_python_skip_list_names_existing_tests(tree):
    from tests.conftest import PURE_PYTHON_SKIP

    names = {(str(m.path.relative_to(TESTS.parent)), n.name) for m, n, _ in tree.tests()}
    missing = [key for key in PURE_PYTHON_SKIP if (key.split("::")[0], key.split("::")[1].split("[")[0]) not in names]
    assert not missing, f"PURE_PYTHON_SKIP names tests that do not exist: {missing}"


# -- the rule itself, on a tree written here ---------------------------------------------------------
def _tree(tmp_path, files: dict[str, str]) -> Tree:
    root = tmp_path / "tests"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    for d in [root, *[p for p in root.rglob("*") if p.is_dir()]]:
        (d / "__init__.py").touch()
    return Tree(root)


def _verdicts(tree: Tree) -> dict[str, bool]:
    return {node.name: private for _, node, private in tree.tests()}


def test_the_rule_sees_every_way_of_reaching_a_private_name(tmp_path):
    tree = _tree(tmp_path, {
        "conftest.py": """
            import pytest
            from fairlens.certify import _ensemble

            @pytest.fixture
            def private_fixture():
                return _ensemble

            @pytest.fixture
            def public_fixture():
                return 1
        """,
        "_support.py": """
            from fairlens.maft._search import TwoPhase

            def private_helper():
                return TwoPhase

            def public_helper():
                return 2
        """,
        "x/test_x.py": """
            import fairlens as fl
            from fairlens.certify import certify
            from fairlens.maft import MAFT
            from tests._support import private_helper, public_helper

            def uses_private():
                return private_helper()

            TABLE = [uses_private]

            def test_public(public_fixture):
                certify, MAFT(None, None), public_helper(), fl.certify.certify

            def test_private_import_inside():
                from fairlens.maft._plan import plan  # noqa

            def test_private_attribute():
                fl.certify._ensemble

            def test_private_class_attribute():
                MAFT._plan

            def test_private_monkeypatch_text(monkeypatch):
                monkeypatch.setattr("fairlens.maft._search.X", 1)

            def test_private_monkeypatch_attribute(monkeypatch):
                monkeypatch.setattr(fl.maft, "_X", 1)

            def test_private_helper_two_levels_down():
                TABLE[0]()

            def test_private_fixture(private_fixture):
                pass
        """,
    })
    verdicts = _verdicts(tree)
    assert verdicts.pop("test_public") is False
    assert all(verdicts.values()), verdicts
    assert figures(tree)["reaching only public names"] == 1
