"""The package's import graph has floors (issue #34, item 5): measured from the source by AST, with
function-local imports counted like module-level ones.

* ``fairlens._validation`` (the ground floor) imports nothing of the package;
* ``_base``, ``models`` and ``_parallel`` import only downward (``_validation`` < ``_base`` <
  ``models`` < ``_parallel``);
* with every subpackage drawn as one room (``fairlens.maft``, ``fairlens.certify``, ...), the graph of
  rooms has no circle.
"""
from __future__ import annotations

import ast
import pathlib

import fairlens

ROOT = pathlib.Path(fairlens.__file__).resolve().parent


def _module_name(path):
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path):
    """Every fairlens module ``path`` imports (module-level and inside functions)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("fairlens"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("fairlens"):
                out.add(target)
                out.update(f"{target}.{a.name}" for a in node.names)   # "from . import x" names modules
    return out


def _graph():
    modules = {_module_name(p): p for p in ROOT.rglob("*.py")}
    return {m: {t for t in _imports(p) if t in modules and t != m} for m, p in modules.items()}


def _room(m):
    parts = m.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else m


def test_the_rooms_have_no_circle():
    g = _graph()
    rooms = {}
    for m, targets in g.items():
        rooms.setdefault(_room(m), set()).update(_room(t) for t in targets if _room(t) != _room(m))
    rooms.pop("fairlens", None)   # the package's __init__ names every slice (lazily): the roof
    for r in rooms.values():
        r.discard("fairlens")
    state, stack = {}, []

    def visit(r):
        state[r] = 1
        stack.append(r)
        for t in sorted(rooms.get(r, ())):
            if state.get(t) == 1:
                raise AssertionError("import circle: " + " -> ".join(stack[stack.index(t):] + [t]))
            if t not in state:
                visit(t)
        stack.pop()
        state[r] = 2

    for r in sorted(rooms):
        if r not in state:
            visit(r)


def _deferred_marked(lines, lineno):
    """Whether the import at ``lineno`` says why it is deferred: ``# deferred: ...`` on its line, or
    on the comment line heading its block of consecutive imports."""
    if "# deferred:" in lines[lineno - 1]:
        return True
    i = lineno - 2
    while i >= 0 and lines[i].strip().startswith(("from ", "import ")):
        i -= 1
    return i >= 0 and lines[i].strip().startswith("# deferred:")


def test_every_function_local_import_of_the_package_says_why():
    """Imports between the package's modules are at module level, except those kept for import time
    (a heavy library, a slice loaded only when used) or to break a circle, each marked
    ``# deferred: <why>`` (issue #34, item 5)."""
    unmarked = []
    for path in sorted(ROOT.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        name = _module_name(path)
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for fn in ast.walk(ast.parse(text)):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom):
                    target = (node.module or "") if not node.level else ".".join(
                        package.split(".")[: len(package.split(".")) - (node.level - 1)] + [node.module or ""])
                elif isinstance(node, ast.Import):
                    target = ",".join(a.name for a in node.names)
                else:
                    continue
                if "fairlens" in target.split(".")[0].split(",")[0] or target.startswith("fairlens"):
                    if not _deferred_marked(lines, node.lineno):
                        unmarked.append(f"{name}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    assert not unmarked, "function-local imports without '# deferred: <why>':\n" + "\n".join(unmarked)
