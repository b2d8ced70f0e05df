"""Memory safety of the MAFT slice: results from another encoding, kernel shape checks,
protected-value blow-ups refused with an estimate, Ctrl-C, bounded memory.
"""

import tracemalloc

import numpy as np
import pytest

from fairlens.maft import (
    AEQUITAS,
    MAFT,
    discrimination_rate,
    discriminatory_mask,
    retrain_with_instances,
)


@pytest.fixture(scope="module")
def benchmark_result():
    """A result of the 24-feature benchmark encoding of German credit."""
    from fairlens.datasets import load_german_credit

    bench = load_german_credit(encoding="benchmark")
    w = np.linspace(-0.5, 0.5, bench.n_features)
    w[bench.index_of("AgeInYears")] = 1.5
    f = lambda X: 1 / (1 + np.exp(-(np.asarray(X) @ w - np.asarray(bench.X).mean(0) @ w)))  # noqa: E731
    res = MAFT(f, bench, protected=["AgeInYears"], n_seeds=20, n_local=5, random_state=0).run()
    assert res.n_instances > 0 and res.instances.shape[1] == 24
    return res


def test_result_from_another_encoding_is_refused(german, benchmark_result):
    """Used to abort the interpreter ("malloc(): invalid size", "double free")."""
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(max_iter=500).fit(german.X, german.y)
    with pytest.raises(ValueError, match="does not belong to this dataset.*24 features.*21 features"):
        retrain_with_instances(model, german, benchmark_result, ["sex"])
    with pytest.raises(ValueError, match="X has 24 features"):
        discriminatory_mask(model, german, benchmark_result.instances, ["sex"])
    with pytest.raises(ValueError, match="seeds has 24 features"):
        MAFT(model, german, protected=["sex"], n_local=1, seeds=benchmark_result.instances).run()
    with pytest.raises(TypeError, match="FairnessTestResult"):
        retrain_with_instances(model, german, benchmark_result.instances, ["sex"])
    # same feature count but other names: still refused
    fake = type(benchmark_result)(**{**benchmark_result.__dict__})
    fake.instances = german.X[:3].copy()
    fake.feature_names = [f"f{i}" for i in range(21)]
    with pytest.raises(ValueError, match="does not belong"):
        retrain_with_instances(model, german, fake, ["sex"])


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


def test_protected_blow_up_refused_with_estimate(german):
    """age x credit_amount: ~1 million protected combinations (used to allocate 8 GiB)."""
    f = lambda X: 1 / (1 + np.exp(-(np.asarray(X)[:, 1] / 20 - 1)))  # noqa: E731
    s = MAFT(f, german, protected=["age", "credit_amount"])
    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as err:
            s.set_params(n_seeds=50, n_local=5).run()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    msg = str(err.value)
    assert "1,035,975 combinations" in msg and "57 values of 'age'" in msg and "18,175 values" in msg
    assert "GiB" in msg and "discretise" in msg
    assert peak < 256 * 1024**2
    with pytest.raises(ValueError, match="combinations"):
        AEQUITAS(f, german, protected=["age", "credit_amount"], n_seeds=50, n_local=5).run()
    # a single continuous protected attribute with few seeds still runs
    r = MAFT(f, german, protected=["credit_amount"], n_seeds=2, n_local=0, random_state=0).run()
    assert r.tries_global >= 1


def test_discriminatory_mask_many_combinations_bounded(german):
    """The mask scans the million combinations in blocks (first counterpart stops a
    row): same answer as the analytic one, bounded memory."""
    a, c = german.index_of("age"), german.index_of("credit_amount")

    def f(X):
        X = np.asarray(X, dtype=float)
        return 1 / (1 + np.exp(-((X[:, a] - 45) / 5 + (X[:, c] - 9000) / 2000)))

    X = german.X[:6].copy()
    X[0, a], X[0, c] = 19, 250  # lowest score: discriminatory (the top combination is favourable)
    lo = f(np.where(np.arange(german.n_features) == a, 19, np.where(np.arange(german.n_features) == c, 250, X)))
    hi = f(np.where(np.arange(german.n_features) == a, 75, np.where(np.arange(german.n_features) == c, 18424, X)))
    own = f(X) > 0.5
    expect = np.where(own, lo <= 0.5, hi > 0.5)
    tracemalloc.start()
    try:
        m = discriminatory_mask(f, german, X, protected=["age", "credit_amount"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(m, expect)
    assert peak < 1024**3
    # a model that ignores both never discriminates: every combination is scanned
    flat = lambda X: np.full(np.asarray(X).shape[0], 0.7)  # noqa: E731
    assert not discriminatory_mask(flat, german, X[:2], protected=["age", "credit_amount"]).any()


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


def test_keyboard_interrupt_propagates_and_object_reusable(toy, smooth):
    s = MAFT(smooth, toy)
    fresh = MAFT(smooth, toy, n_seeds=20, n_local=20, random_state=0).run()

    def cb(state):
        if state["phase"] == "local" and state["step"] == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        s.set_params(n_seeds=20, n_local=20, random_state=0).run(callback=cb)
    again = s.set_params(n_seeds=20, n_local=20, random_state=0).run()
    np.testing.assert_array_equal(again.instances, fresh.instances)

    class Flaky:
        def __init__(self):
            self.n = 0
            self.armed = False

        def __call__(self, X):
            self.n += 1
            if self.armed and self.n == 5:
                raise KeyboardInterrupt
            return smooth(X)

    fl = Flaky()
    a = AEQUITAS(fl, toy)
    fl.armed = True
    with pytest.raises(KeyboardInterrupt):
        a.set_params(n_seeds=50, n_local=20, random_state=0).run()
    fl.armed = False
    np.testing.assert_array_equal(a.set_params(n_seeds=50, n_local=20, random_state=0).run().instances,
                                  AEQUITAS(smooth, toy, n_seeds=50, n_local=20, random_state=0).run().instances)
