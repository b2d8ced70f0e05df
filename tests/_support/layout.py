"""Which tests reach only fairlens's public names: the rule behind ``tests/contract/``.

A name of fairlens is *public* when no part of its dotted path starts with an underscore
(``fairlens.certify.certify`` is public, ``fairlens.certify._ensemble.TreeEnsemble`` and
``fairlens.maft._search`` are not). A test function *reaches* a private name when, read as source
(``ast``), it

- imports a private module or name (at module level or inside the function);
- reads a private attribute of something imported from fairlens (``fl.certify._x``, ``MAFT._plan``);
- names a private target as text (``monkeypatch.setattr("fairlens.maft._search.X", ...)``) or as a
  string attribute of a fairlens object (``monkeypatch.setattr(fl.maft, "_x", ...)``);
- uses a helper, a module-level value or a fixture (from its own file, a ``conftest.py`` above
  it, or a test-support module) that reaches one, followed to any depth;
- sits in a module where an ``autouse`` fixture (its own or a ``conftest.py``'s) reaches one.

``tests/contract/test_layout.py`` checks that nothing under ``tests/contract/`` reaches a
private name and that the contract tests are at least two thirds of the unit tests; run this
file as a script to print the figures.
"""
from __future__ import annotations

import ast
import pathlib
from dataclasses import dataclass, field

TESTS = pathlib.Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
#: folders that are CI stages of their own (a browser, the package registry), not unit tests
OUTSIDE_UNIT = ("browser", "binder")


def _private_part(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def private_module(name: str) -> bool:
    """True for a fairlens module path with a private part (``fairlens.certify._ensemble``)."""
    parts = name.split(".")
    return parts[0] == "fairlens" and any(_private_part(p) for p in parts[1:])


@dataclass
class Module:
    """One Python file of the test tree, with what it binds and which of its names are private."""

    path: pathlib.Path
    name: str
    tree: ast.Module
    fairlens_names: set[str] = field(default_factory=set)   # bound to public fairlens objects
    private: set[str] = field(default_factory=set)          # top-level names reaching private ones
    fixtures: set[str] = field(default_factory=set)         # names of fixtures defined here

    @property
    def package(self) -> str:
        return self.name if self.path.name == "__init__.py" else self.name.rpartition(".")[0]

    def resolve(self, node: ast.ImportFrom) -> str:
        """The absolute module an ``ImportFrom`` names (relative imports resolved)."""
        if not node.level:
            return node.module or ""
        base = self.package.split(".")
        base = base[: len(base) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))


def _is_fixture(node: ast.AST) -> bool:
    if not isinstance(node, ast.FunctionDef):
        return False
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if isinstance(target, ast.Attribute) and target.attr == "fixture":
            return True
        if isinstance(target, ast.Name) and target.id == "fixture":
            return True
    return False


def _is_autouse(node: ast.AST) -> bool:
    return _is_fixture(node) and any(
        kw.arg == "autouse" and isinstance(kw.value, ast.Constant) and kw.value.value is True
        for dec in node.decorator_list if isinstance(dec, ast.Call) for kw in dec.keywords)


def _bound(node: ast.AST) -> set[str]:
    """Names a top-level statement binds."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {x.id for t in targets for x in ast.walk(t) if isinstance(x, ast.Name)}
    if isinstance(node, ast.Import):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    if isinstance(node, ast.ImportFrom):
        return {a.asname or a.name for a in node.names}
    return set()


class Tree:
    """Every module of the test tree, with the private reach of each top-level name."""

    def __init__(self, root: pathlib.Path = TESTS):
        self.root = root
        self.modules: dict[str, Module] = {}
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(root.parent).with_suffix("")
            name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
            self.modules[name] = Module(path, name, ast.parse(path.read_text(), str(path)))
        for mod in self.modules.values():
            self._bind(mod)
        changed = True
        while changed:     # a fixpoint: helpers of helpers, fixtures of fixtures, across modules
            changed = False
            for mod in self.modules.values():
                for node in mod.tree.body:
                    if isinstance(node, ast.ImportFrom):     # name by name: a helper module's own split
                        helper = self.modules.get(mod.resolve(node))
                        names = {a.asname or a.name for a in node.names
                                 if helper is not None and a.name in helper.private} - mod.private
                    elif isinstance(node, ast.Import):       # fairlens imports are sorted in _bind
                        names = set()
                    else:
                        names = _bound(node) - mod.private
                        if not names or self._is_test(node) or not self.reaches(mod, node):
                            names = set()
                    if names:
                        mod.private |= names
                        changed = True

    # -- building -------------------------------------------------------------------------------
    def _bind(self, mod: Module) -> None:
        for node in mod.tree.body:
            if _is_fixture(node):
                mod.fixtures.add(node.name)
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] == "fairlens":
                        target = mod.private if private_module(a.name) else mod.fairlens_names
                        target.add((a.asname or a.name).split(".")[0] if not a.asname else a.asname)
            elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("fairlens"):
                for a in node.names:
                    private = private_module(node.module) or _private_part(a.name)
                    (mod.private if private else mod.fairlens_names).add(a.asname or a.name)

    @staticmethod
    def _is_test(node: ast.AST) -> bool:
        return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")

    def _conftest_fixtures(self, mod: Module) -> set[str]:
        """Private fixtures visible to ``mod`` from the ``conftest.py`` files above it."""
        out: set[str] = set()
        parts = mod.name.split(".")
        for depth in range(1, len(parts)):
            conf = self.modules.get(".".join(parts[:depth] + ["conftest"]))
            if conf is not None:
                out |= conf.fixtures & conf.private
        return out

    # -- the rule -------------------------------------------------------------------------------
    def _rooted_in_fairlens(self, mod: Module, node: ast.AST) -> bool:
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and node.id in mod.fairlens_names

    def reaches(self, mod: Module, node: ast.AST) -> bool:
        """True when ``node`` (a statement of ``mod``) reaches a private name of fairlens."""
        private_fixtures = self._conftest_fixtures(mod) | (mod.fixtures & mod.private)
        for x in ast.walk(node):
            if isinstance(x, ast.Import):
                if any(private_module(a.name) for a in x.names):
                    return True
            elif isinstance(x, ast.ImportFrom):
                source = mod.resolve(x)
                if source.startswith("fairlens") and (
                        private_module(source) or any(_private_part(a.name) for a in x.names)):
                    return True
                helper = self.modules.get(source)
                if helper is not None and any(a.name in helper.private for a in x.names):
                    return True
            elif isinstance(x, ast.Attribute):
                if _private_part(x.attr) and self._rooted_in_fairlens(mod, x.value):
                    return True
            elif isinstance(x, ast.Constant) and isinstance(x.value, str):
                if x.value.startswith("fairlens.") and private_module(x.value.split(":")[0].split(" ")[0]):
                    return True
            elif isinstance(x, ast.Call):
                if x.args and self._rooted_in_fairlens(mod, x.args[0]) and any(
                        isinstance(a, ast.Constant) and isinstance(a.value, str) and _private_part(a.value)
                        for a in x.args[1:]):
                    return True
            elif isinstance(x, ast.Name):
                if x.id in mod.private:
                    return True
            elif isinstance(x, ast.arguments):
                args = x.posonlyargs + x.args + x.kwonlyargs
                if any(a.arg in private_fixtures for a in args):
                    return True
        return False

    def tests(self, under: pathlib.Path | None = None):
        """``(module, test function, reaches a private name)`` for every test function."""
        for mod in self.modules.values():
            if not mod.path.name.startswith("test_"):
                continue
            rel = mod.path.relative_to(self.root).parts
            if rel[0] in OUTSIDE_UNIT:
                continue
            if under is not None and not mod.path.is_relative_to(under):
                continue
            autouse = self.private_autouse(mod)
            for node in mod.tree.body:
                if self._is_test(node):
                    yield mod, node, autouse or self.reaches(mod, node)

    def private_autouse(self, mod: Module) -> bool:
        """True when an autouse fixture of ``mod`` or of a ``conftest.py`` above it reaches a private name."""
        parts = mod.name.split(".")
        scopes = [mod] + [self.modules[c] for c in (".".join(parts[:d] + ["conftest"]) for d in range(1, len(parts)))
                          if c in self.modules]
        return any(_is_autouse(node) and node.name in scope.private
                   for scope in scopes for node in scope.tree.body)


def figures(tree: Tree | None = None) -> dict:
    """Counts of unit-test functions: all, reaching only public names, and under tests/contract."""
    tree = tree or Tree()
    rows = list(tree.tests())
    contract = tree.root / "contract"
    return {
        "test functions": len(rows),
        "reaching only public names": sum(not p for _, _, p in rows),
        "under tests/contract": sum(m.path.is_relative_to(contract) for m, _, _ in rows),
        "files": len({m.name for m, _, _ in rows}),
    }


if __name__ == "__main__":
    for key, value in figures().items():
        print(f"{key}: {value}")
