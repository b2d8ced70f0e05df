"""Issues 14 and 24 for the MAFT slice: the paper's global de-duplication at every budget, and
the same answer at every n_jobs, backend and cut of the work."""
import joblib
import numpy as np
import pytest

import fairlens.maft._plan as plan_mod
from fairlens.maft import ADF, AEQUITAS, EIDIG, MAFT, discrimination_rate
from tests._support.maft_oracle import check_result
from tests.contract.maft.test_parallel import KW, PROT, _same


@pytest.fixture
def always_parallel(monkeypatch):
    """The toy workloads are far below MIN_PARALLEL_ROWS (and a toy model's cost is mostly per
    call): force the workers anyway."""
    monkeypatch.setattr(plan_mod, "MIN_PARALLEL_ROWS", 0)
    monkeypatch.setattr(plan_mod, "MIN_PARALLEL_GAIN", 0)


def _search(cls, toy, smooth, toy_mlp, **kw):
    if cls in (EIDIG, ADF):
        return cls(toy_mlp, toy, protected=["sex", "race"], **kw)
    return cls(smooth, toy, **kw)


@pytest.mark.parametrize("cls", [MAFT, EIDIG, ADF, AEQUITAS])
def test_same_instances_at_n_jobs_1_and_2(toy, smooth, toy_mlp, cls, always_parallel):
    s = _search(cls, toy, smooth, toy_mlp, **KW)
    one = s.run()
    two = s.run(n_jobs=2)
    assert one.n_global > 0 and one.n_local > 0
    _same(one, two)
    assert two.params["n_jobs"] == 2
    assert "global phase on 2 processes (this one works the first)" in two.params["parallel"]
    assert one.params["parallel"] == "sequential (one worker)"
    assert two.timeline[-1, 1] == two.n_instances


def test_independent_of_how_the_work_is_cut(toy, smooth, always_parallel):
    """Shares of 1, 2 and 3 workers (and the literal engine) give the same arrays."""
    s = MAFT(smooth, toy, n_seeds=400, n_local=12, random_state=8)
    one = s.run()
    for n_jobs in (2, 3):
        _same(one, s.run(n_jobs=n_jobs))
    _same(one, s.set_params(engine="reference").run())
    check_result(smooth, one, PROT, toy.bounds)


def test_same_instances_on_dask(dask_client, toy, smooth, toy_mlp, always_parallel):
    runs = {cls: _search(cls, toy, smooth, toy_mlp, **KW).run() for cls in (MAFT, EIDIG, AEQUITAS)}
    with joblib.parallel_config(backend="dask"):
        for cls, ref in runs.items():
            _same(ref, _search(cls, toy, smooth, toy_mlp, **KW).run(n_jobs=-1))
        r1 = discrimination_rate(toy_mlp, toy, ["sex", "race"], n_samples=40000, random_state=5, n_jobs=-1)
    assert r1 == discrimination_rate(toy_mlp, toy, ["sex", "race"], n_samples=40000, random_state=5)


def test_parallel_config_context_sets_n_jobs(toy, smooth, always_parallel):
    s = MAFT(smooth, toy, **KW)
    ref = s.run()
    with joblib.parallel_config(n_jobs=2):
        two = s.run()
    _same(ref, two)
    assert "on 2 processes" in two.params["parallel"]


def test_walkers_are_the_unique_global_instances_at_1000_seeds(toy, smooth):
    """Issue 24: one local walker per unique global instance of the WHOLE run (the paper's
    global_id set), not per 256-seed block.  The per-seed global hits come from the literal
    Algorithm-3 twin, one seed at a time, without any de-duplication."""
    from fairlens.maft._global import global_reference
    from fairlens.maft._search import row_codec
    from fairlens.maft._state import Live

    grid = AEQUITAS(smooth, toy).draw_seeds(1000, random_state=0)  # 1000 distinct-ish points of the domain
    s = MAFT(smooth, toy, seeds=grid, n_local=7, random_state=0)
    res = s.run()
    seeds = res.seeds
    assert seeds.shape[0] == 1000
    spec = s._spec(None)
    hits = global_reference(spec, spec.open_model(), seeds, Live(row_codec(spec, seeds), False))
    rows = [tuple(x) for x in hits.X]
    unique = list(dict.fromkeys(rows))  # seed order, first occurrence
    assert len(rows) > len(unique)  # duplicates exist: the test can tell the two policies apart
    per_block = sum(len(set(rows[a:b])) for a, b in
                    [(np.searchsorted(hits.idx, k), np.searchsorted(hits.idx, k + 256))
                     for k in range(0, 1000, 256)])
    assert per_block > len(unique)  # what the per-block de-duplication used to walk
    assert res.n_global == res.params["n_walkers"] == len(unique)
    np.testing.assert_array_equal(res.instances[: res.n_global], np.array(unique))
    assert res.tries_local == len(unique) * 7  # every walker walks n_local steps, once
    assert res.tries_global == hits.tries


def test_duplicates_counted_once(toy, smooth, always_parallel):
    seeds = np.repeat(toy.X[:40], 3, axis=0)
    res = MAFT(smooth, toy, seeds=seeds, n_local=10, random_state=0).run(n_jobs=2)
    ref = MAFT(smooth, toy, seeds=toy.X[:40], n_local=10, random_state=0).run()
    assert res.n_global == ref.n_global  # the same walkers ...
    _same_set = {tuple(r) for r in res.instances} == {tuple(r) for r in ref.instances}
    assert _same_set and len({tuple(r) for r in res.instances}) == res.n_instances  # ... the same walks


def test_parallel_stop_keeps_what_finished(toy, smooth, always_parallel):
    res = MAFT(smooth, toy, **KW).run(n_jobs=2, stop=lambda: True)
    assert res.stopped
    check_result(smooth, res, PROT, toy.bounds) if res.n_instances else None


def test_discrimination_rate_same_at_any_n_jobs(toy, toy_mlp):
    for sample in ("domain", "data"):
        a = discrimination_rate(toy_mlp, toy, ["sex", "race"], n_samples=40000, random_state=1, sample=sample)
        b = discrimination_rate(toy_mlp, toy, ["sex", "race"], n_samples=40000, random_state=1, sample=sample,
                                n_jobs=2)
        assert a == b and a["n"] == 40000
    # the chunked estimate is a plain count: recount chunk by chunk with the oracle's definition
    from fairlens._parallel import chunk_rng, fixed_chunks
    from fairlens.maft import discriminatory_mask
    from fairlens.maft._mitigation import RATE_CHUNK

    n = RATE_CHUNK + 100
    k = 0
    for c, (s, e) in enumerate(fixed_chunks(n, RATE_CHUNK)):
        rng = chunk_rng(2, c)
        X = np.floor(rng.random((e - s, 6)) * (toy.bounds[:, 1] - toy.bounds[:, 0] + 1.0)) + toy.bounds[:, 0]
        k += int(discriminatory_mask(toy_mlp, toy, X, protected=["sex"]).sum())
    assert discrimination_rate(toy_mlp, toy, ["sex"], n_samples=n, random_state=2)["rate"] == k / n


def test_stop_during_this_process_share_returns_without_waiting(toy, smooth, always_parallel):
    """A stop (an audit's deadline, the widget's Stop) reaches the share this process works at its
    next step, and the run returns without waiting for the workers' shares: what it found so far
    (a subset of the full run's instances, walkers of this process's share only).  The next
    parallel run is unaffected."""
    s = MAFT(smooth, toy, n_seeds=200, n_local=400, random_state=4)
    full = s.run()
    calls = {"n": 0}

    def stop():  # true from the (max_iter + 10)-th check on: a few steps into the local phase
        calls["n"] += 1
        return calls["n"] > s.max_iter + 10

    part = s.run(n_jobs=2, stop=stop)
    assert part.stopped and 0 < part.n_local < full.n_local
    assert part.tries_local < full.tries_local / 4  # this process's walkers, a few steps each
    n = part.n_global + part.n_local
    assert part.instances.shape == (n, full.instances.shape[1]) and part.counterparts.shape[0] == n
    assert part.instance_scores.shape == part.counterpart_scores.shape == (n,)
    np.testing.assert_array_equal(part.instances[: part.n_global], full.instances[: full.n_global])
    found = {tuple(r) for r in full.instances}
    assert all(tuple(r) in found for r in part.instances)
    _same(full, s.run(n_jobs=2))


def test_a_phase_the_old_estimate_kept_here_goes_to_the_workers(toy, smooth, monkeypatch):
    """The local phase scores more rows than walkers x steps x combinations (its gradients):
    with MIN_PARALLEL_ROWS between that old estimate and the rows it really scores, n_jobs=2
    used to run it here silently; it goes to the workers now, with the same instances."""
    s = MAFT(smooth, toy, n_seeds=80, n_local=30, random_state=5)
    one = s.run()
    global_only = MAFT(smooth, toy, n_seeds=80, n_local=0, random_state=5).run()
    local_rows = one.queries - global_only.queries
    old_estimate = one.n_global * 30 * s.problem.C
    assert old_estimate < local_rows
    monkeypatch.setattr(plan_mod, "MIN_PARALLEL_ROWS", local_rows)
    monkeypatch.setattr(plan_mod, "MIN_PARALLEL_GAIN", 0)
    two = s.run(n_jobs=2)
    assert "local phase on 2 processes" in two.params["parallel"]
    _same(one, two)


def test_every_fallback_says_why(toy, smooth, monkeypatch):
    """n_jobs=2 that runs in one process says why: a small phase (its estimate and the
    threshold), AEQUITAS walkers that make one share, the literal reference engine."""
    res = MAFT(smooth, toy, n_seeds=30, n_local=10, random_state=1).run(n_jobs=2)
    assert "at most" in res.params["parallel"] and "MIN_PARALLEL_ROWS" in res.params["parallel"]
    monkeypatch.setattr(plan_mod, "MIN_PARALLEL_ROWS", 0)
    monkeypatch.setattr(plan_mod, "MIN_PARALLEL_GAIN", 0)
    res = AEQUITAS(smooth, toy, n_seeds=300, n_local=5, random_state=1).run(n_jobs=2)
    assert 0 < res.n_global <= 256 and "make one share" in res.params["parallel"]
    res = MAFT(smooth, toy, n_seeds=10, n_local=3, engine="reference").run(n_jobs=2)
    assert "engine='reference'" in res.params["parallel"]


class _FixedCostPerCall:
    """A scorer that costs ``per_call`` s per call and ``per_row`` s per row on a fake clock."""

    def __init__(self, per_call, per_row, clock):
        self.per_call, self.per_row, self.clock = per_call, per_row, clock

    def __call__(self, X):
        self.clock[0] += self.per_call + self.per_row * X.shape[0]
        return np.zeros(X.shape[0])


@pytest.mark.parametrize("per_call, per_row", [(0.011, 1e-6), (2e-5, 1e-6), (0.0, 5e-6)])
def test_call_costs_recovers_the_cost_per_call_and_per_row(monkeypatch, per_call, per_row):
    clock = [0.0]
    monkeypatch.setattr(plan_mod.time, "perf_counter", lambda: clock[0])
    a, b = plan_mod.call_costs(_FixedCostPerCall(per_call, per_row, clock), np.ones((3, 4)), 2000)
    assert a == pytest.approx(per_call, abs=1e-12) and b == pytest.approx(per_row, rel=1e-9)


def test_a_phase_whose_model_cost_is_per_call_stays_here_and_says_why():
    """Shares cut the walkers, not the calls: with 11 ms per call and 1 us per row (a Keras model
    called eagerly on census) two shares of 1,001 calls and 2 million rows gain about 1.08x."""
    asked = []

    def costs(m):
        asked.append(m)
        return 0.011, 1e-6

    plan = plan_mod.plan_phase("local", 2_000_000, 2, calls=1001, costs=costs)
    assert plan.workers == 1 and "MIN_PARALLEL_GAIN" in plan.note and "11.00 ms per call" in plan.note
    assert asked == [1998]  # probed at the phase's rows per call
    # the package's MLP: about 20 us per call and 1 us per row -- the workers pay off
    assert plan_mod.plan_phase("local", 2_000_000, 2, calls=1001, costs=lambda m: (2e-5, 1e-6)).workers == 2
    # a phase too small in rows never probes the model
    assert plan_mod.plan_phase("local", 10, 2, calls=1001, costs=lambda m: asked.append(m)).workers == 1
    assert len(asked) == 1
    # a phase of few calls with many rows each is probed on PROBE_ROWS rows, not on a call's rows
    assert plan_mod.plan_phase("local", 10**9, 2, calls=2, costs=costs).workers == 2
    assert asked[-1] == plan_mod.PROBE_ROWS


def test_a_model_with_a_fixed_cost_per_call_runs_here_with_the_same_answer(toy, smooth, monkeypatch):
    import time

    class Slow:  # the toy model plus a fixed cost per call, as a Keras model called eagerly has
        def __init__(self, model):
            self.model = model

        def __call__(self, X):
            time.sleep(0.003)
            return self.model(X)

    monkeypatch.setattr(plan_mod, "MIN_PARALLEL_ROWS", 0)
    s = MAFT(Slow(smooth), toy, n_seeds=40, n_local=6, random_state=1)
    two = s.run(n_jobs=2)
    for phase in ("global", "local"):
        assert f"{phase} phase in this process: the model costs" in two.params["parallel"]
    assert "MIN_PARALLEL_GAIN" in two.params["parallel"]
    _same(s.run(), two)


def test_a_worker_scoring_through_the_replay_never_imports_sklearn(toy, toy_mlp, tmp_path):
    """A scikit-learn MLP is scored through its exact replay; the workers get the replay and no
    model, so a fresh worker does not import scikit-learn (about 2.3 CPU seconds of its first
    task) -- and scores every row as this process does."""
    import pickle
    import subprocess
    import sys

    from fairlens._parallel import Payload
    from fairlens.maft._utils import mlp_replay

    s = MAFT(toy_mlp, toy, n_seeds=20, n_local=5)
    spec = s._spec(mlp_replay(s.scorer, toy.X[:256]))
    assert spec.replay is not None
    path = tmp_path / "payload.pkl"
    path.write_bytes(pickle.dumps(Payload(spec=spec.for_workers(), seeds=toy.X[:20])))
    code = ("import pickle, sys; p = pickle.loads(open(sys.argv[1], 'rb').read()); "
            "m = p.spec.open_model(); m.scorer(p.seeds); m.source(p.seeds[:3]); print('sklearn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]
    shipped = pickle.loads(path.read_bytes()).spec
    here, there = spec.open_model(), shipped.open_model()
    np.testing.assert_array_equal(here.scorer(toy.X), there.scorer(toy.X))
    np.testing.assert_array_equal(here.source(toy.X[:50]), there.source(toy.X[:50]))
    np.testing.assert_array_equal(there.scorer(toy.X), toy_mlp.predict_proba(toy.X)[:, 1])


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="fork only on Linux")
def test_a_replayed_model_shares_go_to_a_forked_process_any_other_model_to_a_worker(toy, toy_mlp, always_parallel):
    """A scikit-learn MLP scored through its replay runs no user code in a share: on loky its
    shares go to a process forked from this one (no worker start-up); the same model handed over
    as a plain callable (user code) goes to a loky worker.  The instances are the same."""
    from fairlens import _parallel

    kw = dict(protected=["sex", "race"], n_seeds=60, n_local=8, random_state=3)
    one = MAFT(toy_mlp, toy, **kw).run()
    two = MAFT(toy_mlp, toy, **kw).run(n_jobs=2)
    _same(one, two)
    assert "local phase on 2 processes (this one works the first), the other forked from it" in two.params["parallel"]

    def proba(X):  # the same scores, but a callable: nothing tells what it runs
        return toy_mlp.predict_proba(X)[:, 1]

    forks = []
    init = _parallel._ForkTask.__init__

    def recording(self, *args):
        forks.append(1)
        init(self, *args)

    _parallel._ForkTask.__init__ = recording
    try:
        ref = MAFT(proba, toy, **kw).run()
        got = MAFT(proba, toy, **kw).run(n_jobs=2)
    finally:
        _parallel._ForkTask.__init__ = init
    _same(ref, got)
    assert not forks and "forked" not in got.params["parallel"]
    assert "local phase on 2 processes (this one works the first)" in got.params["parallel"]


_LOADS_SCRIPT = r'''
import os, warnings
from sklearn.neural_network import MLPClassifier
import fairlens.maft._plan as plan_mod
import {local} as L
from fairlens.maft import MAFT, _kernels, _rowkernels
from tests._support.maft_toy import make_toy

plan_mod.MIN_PARALLEL_ROWS = plan_mod.MIN_PARALLEL_GAIN = 0
toy = make_toy()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    mlp = MLPClassifier((16, 8), max_iter=400, random_state=0).fit(toy.X, toy.y)


def loaded():
    return {(m.__name__, n, str(sig)) for m in (_kernels, _rowkernels) for n, f in vars(m).items()
            if hasattr(f, "signatures") for sig in f.signatures}


snaps, main = {}, os.getpid()
run_shares, local_task = L.run_shares, L.local_task


def at_fork(run, task, payload, *a, **k):
    snaps["fork"] = loaded()
    return run_shares(run, task, payload, *a, **k)


def share(payload, chunk):
    out = local_task(payload, chunk)
    if os.getpid() == main:
        snaps["own"] = loaded()
    return out


L.run_shares, L.local_task = at_fork, share
r = MAFT(mlp, toy, protected=["sex", "race"], n_seeds=60, n_local=8, random_state=3).run(n_jobs=2)
assert "the other forked from it" in r.params["parallel"], r.params["parallel"]
print(len(snaps["fork"]), sorted(snaps["own"] - snaps["fork"]))
'''


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="fork only on Linux")
def test_the_local_kernels_are_loaded_before_a_share_is_forked():
    """In a fresh process, the kernels of the local phase are loaded before the share is forked
    (so the child inherits them): this process's own share, run afterwards, loads none."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from fairlens.maft import _local

    if os.environ.get("NUMBA_DISABLE_JIT", "0") != "0":
        pytest.skip("no kernels to load without numba's JIT")
    script = _LOADS_SCRIPT.replace("{local}", _local.__name__)
    root = Path(__file__).resolve().parents[3]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=root, env=env,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    n_loaded, new = out.stdout.split(" ", 1)
    assert int(n_loaded) >= 10 and new.strip() == "[]"


def test_a_worker_share_presizes_its_sets_for_its_share_of_the_walkers(toy, toy_mlp, always_parallel, monkeypatch,
                                                                        tmp_path):
    """``share_cap``: the share this process works keeps the full cap (its found set becomes the
    run's), a worker's share gets the cap times its fraction of the walkers, and the sets honour it.
    Worker sets pre-sized far too small grow, in the forked share too, with the same answer."""
    import os

    from fairlens.maft import _local
    from fairlens.maft._state import PRESIZE_KEYS, Finds, Live
    from fairlens.maft._utils import RowCodec

    assert _local.share_cap(True, 500, 1000) == PRESIZE_KEYS
    assert _local.share_cap(False, 500, 1000) == PRESIZE_KEYS // 2
    assert _local.share_cap(False, 250, 1000) == PRESIZE_KEYS // 4
    assert _local.share_cap(False, 1, 10**9) == 1024
    codec = RowCodec(np.zeros(3), np.full(3, 9.0), True)
    assert Finds(codec, np.array([0]), capacity=10**6, cap=4096).set._store.shape[0] == 4096
    assert Finds(codec, np.array([0]), capacity=10**6).set._store.shape[0] == PRESIZE_KEYS
    assert Live(codec, True, capacity=10**6, cap=4096).explored._store.shape[0] == 4096

    kw = dict(protected=["sex", "race"], n_seeds=200, n_local=60, random_state=3)
    one = MAFT(toy_mlp, toy, **kw).run()
    log = tmp_path / "caps.txt"
    real = _local.share_cap

    def tiny(mine, walkers, total):  # every worker's set starts at the smallest size
        cap = real(mine, walkers, total) if mine else 1024
        with open(log, "a") as f:
            f.write(f"{os.getpid()} {int(mine)} {cap}\n")
        return cap

    sizes = tmp_path / "sizes.txt"
    phase = _local.local_phase

    def recorded(spec, model, walkers, w0, key, finds, live):
        out = phase(spec, model, walkers, w0, key, finds, live)
        if os.getpid() != main:
            with open(sizes, "a") as f:
                f.write(f"{len(live.explored)} {len(finds.set)}\n")
        return out

    main = os.getpid()
    monkeypatch.setattr(_local, "share_cap", tiny)
    monkeypatch.setattr(_local, "local_phase", recorded)
    two = MAFT(toy_mlp, toy, **kw).run(n_jobs=2)
    assert "the other forked from it" in two.params["parallel"]
    _same(one, two)
    calls = [tuple(int(x) for x in ln.split()) for ln in log.read_text().splitlines()]
    assert sorted((m, c) for _, m, c in calls) == [(0, 1024), (1, PRESIZE_KEYS)]
    assert {p for p, m, _ in calls if not m} != {main}  # the worker's share ran in the forked child
    explored = int(sizes.read_text().split()[0])
    assert explored > 1024  # the forked share's explored set outgrew its 1024 keys
