"""Issue 34 item 2: MAFT's engine in rooms of its own -- what the split must keep true."""
import pathlib

import numpy as np
import pytest

import fairlens.maft as fm
from fairlens.maft import MAFT, SG

MAFT_DIR = pathlib.Path(fm.__file__).parent


def _snapshot(obj):
    return {k: (id(v), v if isinstance(v, (int, float, str, bool, type(None))) else None) for k, v in
            vars(obj).items()}


def test_an_sg_run_writes_nothing_onto_the_searcher(toy, smooth):
    """SG kept its run's Z3 solver and variables on the searcher; they are the run's own now."""
    pytest.importorskip("z3")
    s = SG(smooth, toy, protected=["sex"], n_seeds=3, n_local=3, n_samples=100, random_state=0)
    s.draw_seeds()
    before = _snapshot(s)
    s.run()
    assert _snapshot(s) == before


def test_changing_n_clusters_draws_new_seeds(toy, smooth):
    """The seeds were remembered by (n_seeds, random_state) only: after set_params(n_clusters=...)
    a run reused the old clusters' seeds.  They are remembered by n_clusters too."""
    s = MAFT(smooth, toy, n_seeds=30, n_local=2, random_state=0)
    first = s.run().seeds
    s.set_params(n_clusters=7)
    again = s.run().seeds
    fresh = MAFT(smooth, toy, n_seeds=30, n_local=2, random_state=0, n_clusters=7).run().seeds
    np.testing.assert_array_equal(again, fresh)
    assert not np.array_equal(first, fresh)


def test_rooms_are_small_and_take_few_positional_arguments():
    """No module of fairlens.maft over 800 lines; no function or method with more than 8
    positional parameters (grouped into typed objects or tuples instead)."""
    import ast

    for path in sorted(MAFT_DIR.glob("*.py")):
        src = path.read_text()
        assert src.count("\n") <= 800, (path.name, src.count("\n"))
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = len(node.args.posonlyargs) + len(node.args.args)
                assert n <= 8, (path.name, node.name, n)


def test_rooms_import_each_other_without_a_cycle():
    """The engine's rooms form a directed acyclic graph (module-level and function-level
    imports alike), so each can be read, tested and replaced on its own."""
    import ast
    from graphlib import CycleError, TopologicalSorter

    graph = {}
    for path in sorted(MAFT_DIR.glob("*.py")):
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    deps.add(node.module)
                else:
                    deps.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fairlens.maft."):
                deps.add(node.module.split(".")[2])
        graph[path.stem] = deps - {path.stem}
    try:
        list(TopologicalSorter(graph).static_order())
    except CycleError as exc:  # pragma: no cover - the failure message
        raise AssertionError(f"import cycle among fairlens.maft's modules: {exc.args[1]}") from None

    def reaches(a, b, seen=()):
        return b in graph.get(a, ()) or any(reaches(c, b, seen + (a,)) for c in graph.get(a, ()) if c not in seen)

    floors = ["_problem", "_state", "_plan", "_global", "_local", "_search", "_searchers", "_sg"]
    for i, low in enumerate(floors):  # a room never reaches up to a room built on it
        for high in floors[i + 1:]:
            assert not reaches(low, high), (low, "imports", high)
    assert reaches("_searchers", "_search") and reaches("_search", "_global") and reaches("_search", "_local")


def test_a_worker_imports_the_engine_without_pandas_or_sklearn():
    """A parallel worker imports the rooms its task needs (and so the package): the package's
    public names are imported on first use, so the worker imports neither pandas nor
    scikit-learn (about 1 and 2.3 CPU seconds of a fresh worker's first task)."""
    import subprocess
    import sys

    code = ("import sys, fairlens.maft._local, fairlens.maft._global, fairlens.maft._gradients; "
            "print('pandas' in sys.modules, 'sklearn' in sys.modules); "
            "from fairlens.maft import MAFT, discrimination_rate; print(MAFT.__name__, 'pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "MAFT", "True"]
