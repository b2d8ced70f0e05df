"""Memory safety of the MAFT slice: results from another encoding, kernel shape checks,
protected-value blow-ups refused with an estimate, Ctrl-C, bounded memory.
"""


import numpy as np
import pytest

from fairlens.maft import (
    discrimination_rate,
)


def test_kernel_calls_are_checked():
    """Every caller goes through the checked wrappers; a wrong shape is a ValueError."""
    import inspect

    import fairlens.maft as fm
    from fairlens.maft import _analysis, _global, _kcall, _local, _mitigation, _plan, _problem, _search, _state, _utils

    engine = (_problem, _state, _plan, _global, _local, _search)
    for mod in (_analysis, _mitigation, *engine, _utils, fm):
        assert "_kernels." not in inspect.getsource(mod).replace("fairlens.maft._kernels", "")
    # unchecked kernel calls (``_kcall.raw``) only where the arguments are checked at the phase
    # boundary (the local lockstep phase) or allocated by the caller itself (KeySet, RowCodec)
    import ast

    def raw_users(node, prefix, users):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef)):
                name = f"{prefix}{child.name}"
                if isinstance(child, ast.FunctionDef) and any(
                        isinstance(n, ast.Attribute) and n.attr == "raw" for n in ast.walk(child)):
                    users.add(name)
                raw_users(child, name + ".", users)
            else:
                raw_users(child, prefix, users)
        return users

    from fairlens.maft import _gradients

    audited = {"local_lockstep", "KeySet._insert", "RowCodec.keys", "_zo_vectored",
               "Finds.add_step"}
    for mod in (_analysis, _mitigation, *engine, _utils, _gradients, fm):
        users = raw_users(ast.parse(inspect.getsource(mod)), "", set())
        assert users <= audited, (mod.__name__, users - audited)
    assert raw_users(ast.parse(inspect.getsource(_local)), "", set()) == {"local_lockstep"}
    assert raw_users(ast.parse(inspect.getsource(_state)), "", set()) == {"Finds.add_step"}
    X = np.zeros((2, 3))
    with pytest.raises(ValueError, match="similar_rows.*out.*shape"):
        _kcall.similar_rows(X, np.array([0], dtype=np.int64), np.array([[0.0], [1.0]]), np.empty((2, 2, 2)))
    with pytest.raises(ValueError, match="prot_idx"):
        _kcall.similar_rows(X, np.array([5], dtype=np.int64), np.array([[0.0], [1.0]]), np.empty((2, 2, 3)))
    with pytest.raises(ValueError, match="dtype"):
        _kcall.check_discrimination(np.zeros((2, 2), dtype=np.float32), np.zeros(2), np.empty(2, bool),
                                    np.empty(2, np.int64), np.empty(2, np.int64))
    with pytest.raises(ValueError, match="store has room"):
        _kcall.table_insert(np.full(8, -1, np.int64), np.empty((2, 3)), 0, np.zeros((3, 3)),
                            np.zeros(3, np.int64), np.empty(3, bool))
    with pytest.raises(ValueError, match="C-contiguous"):
        _kcall.local_perturb(np.zeros((3, 2)).T, np.ones((2, 3)), (np.zeros(2), np.zeros(2)), 1.0,
                             (np.zeros(3), np.ones(3)), (np.empty(2, np.int64), np.empty(2)))
    from fairlens.maft._utils import RowSet

    with pytest.raises(ValueError, match="RowSet"):
        RowSet(4).add(np.zeros((2, 8)))
    # the per-phase and per-step checks of the lockstep engine name the kernel and the argument
    f8 = np.dtype(np.float64)
    with pytest.raises(ValueError, match="local_perturb: argument prob must have shape \\(3, 2\\)"):
        _kcall.check_phase("local_perturb", {"X": (np.zeros((3, 2)), f8, (3, 2)),
                                             "prob": (np.ones((2, 3)), f8, (3, 2))})
    with pytest.raises(ValueError, match="local_perturb: output argument X must be writeable"):
        ro = np.zeros((3, 2))
        ro.flags.writeable = False
        _kcall.check_phase("local_perturb", {"X": (ro, f8, (3, 2))}, out=("X",))
    with pytest.raises(ValueError, match="check_discrimination: argument scores must have shape \\(4, 2\\)"):
        _kcall.check_step("check_discrimination", "scores", np.zeros((4, 3)), f8, (4, 2))
    with pytest.raises(ValueError, match="check_discrimination: argument scores must have dtype float64"):
        _kcall.check_step("check_discrimination", "scores", np.zeros((4, 2), np.float32), f8, (4, 2))
    with pytest.raises(ValueError, match="C-contiguous"):
        _kcall.check_step("normalized_probability", "g", np.zeros((2, 4)).T, f8, (4, 2))
    _kcall.check_step("check_discrimination", "scores", np.zeros((4, 2)), f8, (4, 2))  # passes
    with pytest.raises(ValueError, match="stream_fill: argument out must have shape \\(3\\), got \\(4,\\)"):
        _kcall.stream_fill(1, np.arange(3), 0, np.empty(4))
    with pytest.raises(ValueError, match="stream_fill: argument walkers holds negative"):
        _kcall.stream_fill(1, np.array([0, -1]), 0, np.empty(2))


def test_discrimination_rate_huge_n_refused_and_blocks_invariant(toy, toy_mlp, monkeypatch):
    with pytest.raises(ValueError, match="n_samples.*MAX_SAMPLES"):
        discrimination_rate(toy_mlp, toy, ["sex"], n_samples=10**9)
    with pytest.raises(ValueError, match="confidence"):
        discrimination_rate(toy_mlp, toy, ["sex"], n_samples=10, confidence=1.5)
    import fairlens.maft._mitigation as mit

    for sample in ("domain", "data"):
        one = discrimination_rate(toy_mlp, toy, ["sex", "race"], n_samples=500, random_state=3, sample=sample)
        monkeypatch.setattr(mit, "BLOCK_ROWS", 36)  # tiny blocks: many chunks
        many = discrimination_rate(toy_mlp, toy, ["sex", "race"], n_samples=500, random_state=3, sample=sample)
        monkeypatch.undo()
        assert one == many
