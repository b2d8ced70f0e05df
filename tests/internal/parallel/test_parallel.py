"""The shared parallel mechanism: fixed chunks + counter-based streams = same answer anywhere."""
import numpy as np
import pytest

from fairlens._parallel import Payload, check_n_jobs, chunk_rng, fixed_chunks, plan_workers, run_chunks


def _draw(payload, chunk):
    a, b = chunk
    rng = chunk_rng(payload.seed, a)
    return payload.offset[a:b] + rng.random(b - a)


def _reference(seed, n, size):
    # an independent transcription: one stream per block, blocks in order
    out = []
    for a in range(0, n, size):
        b = min(a + size, n)
        g = np.random.Generator(np.random.Philox(np.random.SeedSequence([seed, a])))
        out.append(np.arange(a, b, dtype=float) + g.random(b - a))
    return np.concatenate(out)


@pytest.mark.parametrize("n_jobs", [1, 2, -1])
def test_same_answer_at_any_n_jobs(n_jobs):
    n, size = 103, 10
    p = Payload(seed=7, offset=np.arange(n, dtype=float))
    got = np.concatenate(run_chunks(_draw, p, fixed_chunks(n, size), n_jobs=n_jobs))
    np.testing.assert_array_equal(got, _reference(7, n, size))


def test_same_answer_on_dask_localcluster(dask_client):
    import joblib

    n, size = 57, 8
    p = Payload(seed=3, offset=np.arange(n, dtype=float), big=np.zeros(50_000))
    with joblib.parallel_config(backend="dask"):
        got = np.concatenate(run_chunks(_draw, p, fixed_chunks(n, size), n_jobs=-1))
    np.testing.assert_array_equal(got, _reference(3, n, size))


def _where(payload, chunk):
    from distributed import get_worker

    return get_worker().address, float(payload.big.sum())


def test_dask_payload_is_broadcast_to_every_worker_before_the_tasks(dask_client):
    """On dask the payload goes to EVERY worker up front (joblib alone scatters it to one worker,
    so the scheduler queues the tasks there and the other worker's share starts late)."""
    import joblib
    from joblib.parallel import get_active_backend

    from fairlens._parallel import _dask_broadcast

    p = Payload(big=np.ones(50_000))
    workers = set(dask_client.scheduler_info()["workers"])
    with joblib.parallel_config(backend="dask"):
        with _dask_broadcast(p):
            backend = get_active_backend()[0]
            future = backend.data_futures[id(p)]
            assert set(dask_client.who_has([future])[future.key]) == workers
        out = run_chunks(_where, p, [(0,), (1,)], n_jobs=2)
    assert [v for _, v in out] == [50_000.0, 50_000.0]
    assert _dask_broadcast(p).__class__.__name__ == "nullcontext"  # outside dask: joblib's default


def test_payload_reports_its_pickled_size_so_dask_scatters_it():
    import sys

    p = Payload(a=np.zeros(10_000))
    assert sys.getsizeof(p) > 80_000  # joblib's dask backend scatters arguments above 1 kB
    q = __import__("pickle").loads(__import__("pickle").dumps(p))
    np.testing.assert_array_equal(q.a, p.a)


def test_stop_returns_a_prefix():
    n = 50
    p = Payload(seed=1, offset=np.arange(n, dtype=float))
    calls = []

    def stop():
        calls.append(1)
        return len(calls) > 3

    got = run_chunks(_draw, p, fixed_chunks(n, 5), n_jobs=1, stop=stop)
    assert len(got) == 3
    np.testing.assert_array_equal(np.concatenate(got), _reference(1, n, 5)[:15])


def test_progress_reaches_total():
    seen = []
    p = Payload(seed=1, offset=np.arange(20, dtype=float))
    run_chunks(_draw, p, fixed_chunks(20, 3), n_jobs=2, progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (7, 7)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


@pytest.mark.parametrize("bad, exc", [(0, ValueError), (1.5, TypeError), (True, TypeError), ("2", TypeError)])
def test_check_n_jobs_refuses(bad, exc):
    with pytest.raises(exc, match="n_jobs"):
        check_n_jobs(bad)


def test_resolve_random_state_and_streams():
    from fairlens._validation import resolve_random_state

    assert resolve_random_state(5) == 5
    assert resolve_random_state(np.random.RandomState(0)) == resolve_random_state(np.random.RandomState(0))
    with pytest.raises(ValueError, match="random_state"):
        resolve_random_state(-1)
    with pytest.raises(TypeError, match="random_state"):
        resolve_random_state("abc")
    a = chunk_rng(1, 0).random(4)
    assert not np.array_equal(a, chunk_rng(1, 1).random(4))
    assert not np.array_equal(a, chunk_rng(1, 0, 1).random(4))
    np.testing.assert_array_equal(a, chunk_rng(1, 0).random(4))
    with pytest.raises(ValueError, match="chunk_size"):
        fixed_chunks(10, 0)


@pytest.mark.parametrize("bad", [10**6, -(10**6), 4097])
def test_check_n_jobs_refuses_absurd_counts_by_name(bad):
    """Used to end in joblib's "Numeric literal 2000000 is too large" (issue 22)."""
    with pytest.raises(ValueError, match=r"n_jobs must be a non-zero integer in \[-4096, 4096\]"):
        check_n_jobs(bad)
    with pytest.raises(ValueError, match="n_jobs"):
        run_chunks(_draw, Payload(seed=1, offset=np.arange(4.0)), fixed_chunks(4, 2), n_jobs=bad)


def test_never_more_workers_than_tasks(monkeypatch):
    import joblib

    seen = []
    real = joblib.Parallel.__init__

    def spy(self, *a, **kw):
        seen.append(kw.get("n_jobs"))
        real(self, *a, **kw)

    monkeypatch.setattr(joblib.Parallel, "__init__", spy)
    n = 6
    p = Payload(seed=3, offset=np.arange(n, dtype=float))
    got = run_chunks(_draw, p, fixed_chunks(n, 2), n_jobs=64)
    assert seen == [3]
    np.testing.assert_array_equal(np.concatenate(got), _reference(3, n, 2))


def test_one_share_per_worker(monkeypatch):
    """Fewer, larger tasks: 11 chunks on 2 workers are 2 joblib tasks of contiguous chunks."""
    import fairlens._parallel as par

    sizes = []
    real = par._run_group

    def spy(func, payload, chunks):
        sizes.append(len(chunks))
        return real(func, payload, chunks)

    monkeypatch.setattr(par, "_run_group", spy)
    n = 53
    p = Payload(seed=4, offset=np.arange(n, dtype=float))
    import joblib

    with joblib.parallel_config(backend="threading"):  # the spy is visible to threads
        got = run_chunks(_draw, p, fixed_chunks(n, 5), n_jobs=2)
    assert sorted(sizes) == [5, 6]
    np.testing.assert_array_equal(np.concatenate(got), _reference(4, n, 5))


def test_a_backend_without_streamed_results_gets_every_share():
    """joblib's "multiprocessing" backend returns results only at the end (no ``return_as=
    "generator"``): the workers get every share (none in this process), the same answer."""
    import joblib

    n = 40
    p = Payload(seed=3, offset=np.arange(n, dtype=float))
    info = {}
    with joblib.parallel_config(backend="multiprocessing"):
        got = run_chunks(_draw, p, fixed_chunks(n, 5), n_jobs=2, share_here=True, info=info)
    assert info["n_jobs_used"] == 2 and info["share_here"] is False
    np.testing.assert_array_equal(np.concatenate(got), _reference(3, n, 5))


def test_fall_back_rule_and_info(monkeypatch):
    """Work per worker below the threshold runs here (no joblib.Parallel), says so, same answer."""
    import joblib

    built = []
    real = joblib.Parallel.__init__
    monkeypatch.setattr(joblib.Parallel, "__init__", lambda self, *a, **k: built.append(1) or real(self, *a, **k))
    n = 30
    p = Payload(seed=9, offset=np.arange(n, dtype=float))
    info = {}
    got = run_chunks(_draw, p, fixed_chunks(n, 4), n_jobs=2, work=1000.0, min_work=600.0, info=info)
    assert built == [] and info["n_jobs_used"] == 1 and "sequential fall-back" in info["note"]
    np.testing.assert_array_equal(np.concatenate(got), _reference(9, n, 4))
    info = {}
    got = run_chunks(_draw, p, fixed_chunks(n, 4), n_jobs=2, work=1200.0, min_work=600.0, info=info)
    assert built == [1] and info["n_jobs_used"] == 2 and "parallel on 2 workers" in info["note"]
    np.testing.assert_array_equal(np.concatenate(got), _reference(9, n, 4))
    assert plan_workers(1, 10, work=1e12) == (1, "sequential (n_jobs=1)")
    assert plan_workers(2, 1)[0] == 1  # one chunk: nothing to share
    assert plan_workers(2, 10)[0] == 2  # unknown work: no fall-back on size


def test_tasks_per_worker_keeps_the_answer(monkeypatch):
    import joblib

    import fairlens._parallel as par

    sizes = []
    real = par._run_group
    monkeypatch.setattr(par, "_run_group", lambda f, p, c: sizes.append(len(c)) or real(f, p, c))
    n = 40
    p = Payload(seed=2, offset=np.arange(n, dtype=float))
    with joblib.parallel_config(backend="threading"):
        got = run_chunks(_draw, p, fixed_chunks(n, 5), n_jobs=2, tasks_per_worker=2)
    assert sizes == [2, 2, 2, 2]
    np.testing.assert_array_equal(np.concatenate(got), _reference(2, n, 5))


def _slow_draw(payload, chunk):
    import time

    time.sleep(payload.sleep)
    return _draw(payload, chunk)


def test_probe_seconds_small_call_stays_here(monkeypatch):
    """probe_seconds: a call that finishes within the probe never builds a joblib.Parallel, says
    so, and gives the same answer."""
    import joblib

    built = []
    real = joblib.Parallel.__init__
    monkeypatch.setattr(joblib.Parallel, "__init__", lambda self, *a, **k: built.append(1) or real(self, *a, **k))
    n = 30
    p = Payload(seed=5, offset=np.arange(n, dtype=float))
    info = {}
    got = run_chunks(_draw, p, fixed_chunks(n, 4), n_jobs=2, probe_seconds=30.0, info=info)
    assert built == [] and info["n_jobs_used"] == 1 and "sequential fall-back" in info["note"]
    np.testing.assert_array_equal(np.concatenate(got), _reference(5, n, 4))


def test_probe_seconds_large_call_sends_the_rest_to_the_workers(monkeypatch):
    """When the probe runs out, the chunks left go to the workers (one share each); the results
    are the same, in chunk order, and progress counts the probe's chunks too."""
    import joblib

    import fairlens._parallel as par

    shares = []
    real = par._run_group
    monkeypatch.setattr(par, "_run_group", lambda f, p, c: shares.append(list(c)) or real(f, p, c))
    n = 40
    p = Payload(seed=3, offset=np.arange(n, dtype=float), sleep=0.02)
    chunks = fixed_chunks(n, 4)  # 10 chunks of 20 ms
    info, seen = {}, []
    with joblib.parallel_config(backend="threading"):
        got = run_chunks(_slow_draw, p, chunks, n_jobs=2, probe_seconds=0.05, info=info,
                         progress=lambda d, t: seen.append((d, t)))
    np.testing.assert_array_equal(np.concatenate(got), _reference(3, n, 4))
    assert info["n_jobs_used"] == 2 and "after" in info["note"] and "probe_seconds" in info["note"]
    k = len(chunks) - sum(len(s) for s in shares)  # chunks run here during the probe
    assert 1 <= k < len(chunks) - 1 and len(shares) == 2
    assert sorted(c for s in shares for c in s) == chunks[k:]
    assert seen[-1] == (len(chunks), len(chunks)) and [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_probe_seconds_stop_during_the_probe_returns_a_prefix():
    n = 40
    p = Payload(seed=3, offset=np.arange(n, dtype=float))
    calls = []

    def stop():
        calls.append(1)
        return len(calls) > 3

    got = run_chunks(_draw, p, fixed_chunks(n, 4), n_jobs=2, probe_seconds=30.0, stop=stop)
    assert len(got) == 3
    np.testing.assert_array_equal(np.concatenate(got), _reference(3, n, 4)[:12])


def test_record_plans_collects_every_call():
    from fairlens._parallel import record_plans

    n = 20
    p = Payload(seed=1, offset=np.arange(n, dtype=float))
    with record_plans() as plans:
        run_chunks(_draw, p, fixed_chunks(n, 5), n_jobs=1)
        run_chunks(_draw, p, fixed_chunks(n, 5), n_jobs=2, work=10.0, min_work=100.0)
    run_chunks(_draw, p, fixed_chunks(n, 5), n_jobs=1)  # outside: not recorded
    assert [q["n_jobs_used"] for q in plans] == [1, 1] and [q["n_chunks"] for q in plans] == [4, 4]
    assert "sequential fall-back" in plans[1]["note"]


def test_dask_recommended_config_keys_exist_in_dask():
    """Every key of DASK_RECOMMENDED_CONFIG is one of dask's own settings (a typo would be a
    silent no-op)."""
    pytest.importorskip("distributed")
    import dask

    from fairlens._parallel import DASK_RECOMMENDED_CONFIG

    for key in DASK_RECOMMENDED_CONFIG:
        parent, _, leaf = key.rpartition(".")
        assert leaf in dask.config.get(parent), key


def test_equal_payloads_get_distinct_dask_keys():
    """dask names scattered data by its token; equal payloads of two calls (a warm-up and the
    timed run) once shared one key, and releasing the first call's futures made the second's tasks
    fail with "lost dependencies".  Each Payload object has its own, stable token."""
    dask = pytest.importorskip("dask")
    from dask.base import tokenize

    a, b = Payload(x=np.arange(5)), Payload(x=np.arange(5))
    assert tokenize(a) == tokenize(a)
    assert tokenize(a) != tokenize(b)
    assert dask is not None


def test_equal_payloads_back_to_back_on_dask(dask_client):
    """Two calls with equal payloads, the first one's payload dropped at once: both answers right
    (the race itself depends on timing; the token test above is the deterministic check)."""
    import gc

    import joblib

    n = 40
    with joblib.parallel_config(backend="dask"):
        for _ in range(3):
            p = Payload(seed=8, offset=np.arange(n, dtype=float))
            got = run_chunks(_draw, p, fixed_chunks(n, 5), n_jobs=2)
            del p
            gc.collect()
            np.testing.assert_array_equal(np.concatenate(got), _reference(8, n, 5))


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_on_result_sees_every_result_once_in_chunk_order(n_jobs):
    """``on_result(index, result)`` is called in this process for every chunk, in chunk order,
    with the very result returned (so a caller can merge a share while the others still run)."""
    n, size = 41, 5
    p = Payload(seed=9, offset=np.arange(n, dtype=float))
    seen = []
    got = run_chunks(_draw, p, fixed_chunks(n, size), n_jobs=n_jobs, on_result=lambda i, r: seen.append((i, r)))
    assert [i for i, _ in seen] == list(range(len(got)))
    assert all(r is g for (_, r), g in zip(seen, got))
    np.testing.assert_array_equal(np.concatenate(got), _reference(9, n, size))


def test_on_result_stops_with_the_prefix():
    n = 20
    p = Payload(seed=2, offset=np.arange(n, dtype=float))
    seen = []
    calls = iter(range(100))
    got = run_chunks(_draw, p, fixed_chunks(n, 4), n_jobs=1, stop=lambda: next(calls) >= 2,
                     on_result=lambda i, r: seen.append(i))
    assert seen == [0, 1] and len(got) == 2


def _pid_draw(payload, chunk):
    import os

    return os.getpid(), _draw(payload, chunk)


def test_share_here_works_the_first_share_in_this_process():
    """``share_here=True``: this process works the first share while a worker runs the other;
    the same results in chunk order, ``on_result`` and ``progress`` for every chunk, and the
    note says where the work ran."""
    import os

    n, size = 40, 5
    p = Payload(seed=4, offset=np.arange(n, dtype=float))
    chunks = fixed_chunks(n, size)
    seen, prog, info = [], [], {}
    got = run_chunks(_pid_draw, p, chunks, n_jobs=2, share_here=True, info=info,
                     on_result=lambda i, r: seen.append(i), progress=lambda d, t: prog.append((d, t)))
    np.testing.assert_array_equal(np.concatenate([r for _, r in got]), _reference(4, n, size))
    pids = [pid for pid, _ in got]
    half = len(chunks) // 2
    assert set(pids[:half]) == {os.getpid()} and os.getpid() not in pids[half:]
    assert seen == list(range(len(chunks))) and prog[-1] == (len(chunks), len(chunks))
    assert info["n_jobs_used"] == 2 and "this process works the first" in info["note"]
    # without it (the default) every share goes to the workers
    got = run_chunks(_pid_draw, p, chunks, n_jobs=2)
    assert os.getpid() not in [pid for pid, _ in got]


def test_share_here_stop_during_this_process_share_returns_a_prefix():
    n = 40
    p = Payload(seed=2, offset=np.arange(n, dtype=float))
    calls = iter(range(100))
    got = run_chunks(_draw, p, fixed_chunks(n, 5), n_jobs=2, share_here=True, stop=lambda: next(calls) >= 2)
    assert len(got) == 2
    np.testing.assert_array_equal(np.concatenate(got), _reference(2, n, 5)[:10])


def test_share_here_on_a_local_dask_cluster(dask_client):
    """On a LocalCluster this process works the first share too, with the same answer."""
    import os

    import joblib

    n, size = 30, 5
    p = Payload(seed=6, offset=np.arange(n, dtype=float))
    with joblib.parallel_config(backend="dask"):
        got = run_chunks(_pid_draw, p, fixed_chunks(n, size), n_jobs=-1, share_here=True)
    np.testing.assert_array_equal(np.concatenate([r for _, r in got]), _reference(6, n, size))
    assert got[0][0] == os.getpid() and got[-1][0] != os.getpid()


def test_share_here_not_on_a_cluster_reached_by_address(dask_client):
    """A client made from a scheduler's address (a remote cluster, as far as it knows) gets every
    share: this process may be a laptop."""
    import os

    import joblib
    from distributed import Client

    from fairlens._parallel import _can_share_here

    n, size = 30, 5
    p = Payload(seed=6, offset=np.arange(n, dtype=float))
    with Client(dask_client.scheduler.address, set_as_default=False) as remote:
        with joblib.parallel_config(backend="dask", client=remote):
            assert not _can_share_here()
            info = {}
            got = run_chunks(_pid_draw, p, fixed_chunks(n, size), n_jobs=-1, share_here=True, info=info)
    np.testing.assert_array_equal(np.concatenate([r for _, r in got]), _reference(6, n, size))
    assert os.getpid() not in [pid for pid, _ in got] and "this process" not in info["note"]


def test_one_payload_gets_a_fresh_dask_key_for_every_call(dask_client):
    """Certification runs two calls on ONE payload (bounds, then brute force); sharing one dask key,
    the first call's release could cancel the second's tasks ("lost dependencies").  Every call
    on dask names the payload afresh; off dask the token is left alone."""
    import joblib
    from dask.base import tokenize

    n = 40
    p = Payload(seed=8, offset=np.arange(n, dtype=float))
    seen = {tokenize(p)}
    run_chunks(_draw, p, fixed_chunks(n, 5), n_jobs=2)  # loky: unchanged
    assert tokenize(p) in seen
    with joblib.parallel_config(backend="dask"):
        for _ in range(4):
            got = run_chunks(_draw, p, fixed_chunks(n, 5), n_jobs=2)
            np.testing.assert_array_equal(np.concatenate(got), _reference(8, n, 5))
            assert tokenize(p) not in seen
            seen.add(tokenize(p))


def test_thread_limit_limits_and_restores_with_one_cached_controller():
    """blas_limit/thread_limit reuse one threadpoolctl controller (a fresh threadpool_limits
    rescans every loaded library: milliseconds a call) and still limit and restore the pools."""
    from threadpoolctl import threadpool_info

    from fairlens import _parallel

    def blas_threads():
        return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

    before = blas_threads()
    with _parallel.blas_limit(1):
        assert blas_threads() <= {1}
        controller = _parallel._thread_controller()
        with _parallel.thread_limit(1, user_api=None):
            assert {i["num_threads"] for i in threadpool_info()} <= {1}
    assert blas_threads() == before
    assert _parallel._thread_controller() is controller  # no import since: the same controller
    import sys
    import types

    sys.modules["_fairlens_test_new_module"] = types.ModuleType("_fairlens_test_new_module")
    try:
        assert _parallel._thread_controller() is not controller  # an import may load a library
    finally:
        del sys.modules["_fairlens_test_new_module"]
    with _parallel.blas_limit(None):
        assert blas_threads() == before


def _loky_workers():
    from joblib.externals.loky import reusable_executor

    ex = reusable_executor._executor
    return set() if ex is None or ex._flags.shutdown else set(ex._processes)


def test_one_worker_process_per_task_sent():
    """Issue 37: with ``n_jobs=2`` and this process working one share, ONE task is sent, and one
    loky worker runs it -- every call on the same (warm) worker; joblib.Parallel(n_jobs=2) used
    to start a second worker for nothing, and the task landed on either."""
    import os

    import joblib

    n, size = 40, 10
    p = Payload(seed=8, offset=np.arange(n, dtype=float))
    chunks = fixed_chunks(n, size)
    ref = _reference(8, n, size)
    pids = set()
    for _ in range(4):
        info = {}
        got = run_chunks(_pid_draw, p, chunks, n_jobs=2, share_here=True, info=info)
        np.testing.assert_array_equal(np.concatenate([r for _, r in got]), ref)
        pids |= {pid for pid, _ in got[len(chunks) // 2:]}
        assert info["worker_processes"] == 1 and info["n_jobs_used"] == 2
        assert len(_loky_workers()) == 1
    assert len(pids) == 1 and os.getpid() not in pids and pids == _loky_workers()
    # a plain joblib call afterwards reuses that executor (one worker added), it does not replace it
    joblib.Parallel(n_jobs=2)(joblib.delayed(os.getpid)() for _ in range(2))
    assert pids <= _loky_workers() and len(_loky_workers()) == 2
    # without share_here two tasks are sent: two workers
    info = {}
    run_chunks(_pid_draw, p, chunks, n_jobs=2, info=info)
    assert info["worker_processes"] == 2


def _sleepy_draw(payload, chunk):
    import time

    if chunk[0] >= payload.slow_from:
        time.sleep(payload.sleep)
    return _draw(payload, chunk)


def test_stop_abandons_the_one_worker_and_the_next_call_is_not_delayed():
    """A stop while the one worker still runs its share kills that worker (as joblib kills its
    loky workers when a call is abandoned): the next call does not queue behind the abandoned
    share."""
    import time

    n = 40
    p = Payload(seed=2, offset=np.arange(n, dtype=float), slow_from=20, sleep=60.0)
    merged = []
    t = time.perf_counter()
    got = run_chunks(_sleepy_draw, p, fixed_chunks(n, 10), n_jobs=2, share_here=True, stop=lambda: len(merged) > 1,
                     on_result=lambda i, r: merged.append(i))
    assert len(got) == 2 and merged == [0, 1]
    q = Payload(seed=2, offset=np.arange(n, dtype=float), slow_from=n, sleep=0.0)
    got = run_chunks(_sleepy_draw, q, fixed_chunks(n, 10), n_jobs=2, share_here=True)
    np.testing.assert_array_equal(np.concatenate(got), _reference(2, n, 10))
    assert time.perf_counter() - t < 50  # not behind the abandoned 60 s share


def _rendezvous(payload, chunk):
    """The worker's share writes a flag file; this process's share waits for it (up to
    ``payload.wait`` seconds) and says whether it came: both shares ran at the same time."""
    import os
    import time

    if chunk[0] >= payload.half:  # the worker's share
        with open(payload.flag, "w") as f:
            f.write(str(os.getpid()))
        return True
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < payload.wait:
        if os.path.exists(payload.flag):
            return True
        time.sleep(0.01)
    return False


def test_share_here_sends_the_workers_task_before_working_its_own_share(tmp_path):
    """The one task of a ``share_here`` call is submitted before this process starts its own
    share, so both shares run at the same time (a task submitted only when its result is first
    asked for ran after this process's share: n_jobs=2 took the wall time of n_jobs=1).  This
    process's share waits for a flag the worker's share writes; submitted late, it never comes."""
    p = Payload(half=1, flag=str(tmp_path / "worker-started"), wait=120.0)
    info = {}
    got = run_chunks(_rendezvous, p, [(0, 1), (1, 2)], n_jobs=2, share_here=True, info=info)
    assert info["n_jobs_used"] == 2 and info["share_here"]
    assert got == [True, True], "this process's share finished before the worker's share started"


class _NoPickle:
    """A payload attribute that refuses to be pickled: a task that still runs proves the payload
    was inherited, not shipped."""

    def __init__(self, value):
        self.value = value

    def __reduce__(self):
        raise TypeError("this object must not be pickled")


def _inherited_draw(payload, chunk):
    import os

    return os.getpid(), payload.box.value + _draw(payload, chunk)


_linux_only = pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="fork only on Linux")


@_linux_only
def test_a_fork_safe_task_runs_in_a_process_forked_from_this_one():
    """``fork_safe=True`` with one task sent on loky: the share runs in a child forked from this
    process -- the same answer, a different process that is not a loky worker, and the payload is
    inherited (an attribute that refuses pickling does not stop it); the child is reaped."""
    import os

    n, size = 40, 10
    p = Payload(seed=8, offset=np.arange(n, dtype=float), box=_NoPickle(0.0))
    info = {}
    got = run_chunks(_inherited_draw, p, fixed_chunks(n, size), n_jobs=2, share_here=True, fork_safe=True,
                     info=info)
    np.testing.assert_array_equal(np.concatenate([r for _, r in got]), _reference(8, n, size))
    pids = [pid for pid, _ in got]
    assert pids[:2] == [os.getpid()] * 2 and pids[2] == pids[3] != os.getpid()
    assert pids[2] not in _loky_workers()
    assert info["forked"] and info["worker_processes"] == 1 and "forked from this one" in info["note"]
    with pytest.raises(ChildProcessError):
        os.waitpid(pids[2], os.WNOHANG)  # reaped: no zombie left
    # not fork-safe: a loky worker, which would have to pickle the payload
    info = {}
    with pytest.raises(Exception, match="pickle"):
        run_chunks(_inherited_draw, p, fixed_chunks(n, size), n_jobs=2, share_here=True, info=info)
    assert not info["forked"]


@_linux_only
def test_a_fork_safe_call_on_another_backend_uses_that_backend():
    import joblib

    n, size = 40, 10
    p = Payload(seed=8, offset=np.arange(n, dtype=float), box=_NoPickle(0.0))
    info = {}
    with joblib.parallel_config(backend="threading"):
        got = run_chunks(_inherited_draw, p, fixed_chunks(n, size), n_jobs=2, share_here=True, fork_safe=True,
                         info=info)
    np.testing.assert_array_equal(np.concatenate([r for _, r in got]), _reference(8, n, size))
    assert not info["forked"]


def _raise_in_second(payload, chunk):
    if chunk[0] >= payload.half:
        raise ValueError(f"bad chunk {chunk}")
    return chunk[0]


def _die_in_second(payload, chunk):
    import os

    if chunk[0] >= payload.half:
        os._exit(3)
    return chunk[0]


@_linux_only
def test_a_forked_share_raises_its_error_here_and_a_dead_child_is_reported():
    p = Payload(half=20)
    with pytest.raises(ValueError, match=r"bad chunk \(20, 30\)") as err:
        run_chunks(_raise_in_second, p, fixed_chunks(40, 10), n_jobs=2, share_here=True, fork_safe=True)
    assert "forked" in "".join(getattr(err.value, "__notes__", []))
    with pytest.raises(RuntimeError, match=r"forked to work a share ended \(exit status 3\)"):
        run_chunks(_die_in_second, p, fixed_chunks(40, 10), n_jobs=2, share_here=True, fork_safe=True)


@_linux_only
def test_a_stop_kills_the_forked_share_and_reaps_it(monkeypatch):
    import os
    import time

    from fairlens import _parallel

    pids = []
    init = _parallel._ForkTask.__init__

    def recording(self, *args):
        init(self, *args)
        pids.append(self._pid)

    monkeypatch.setattr(_parallel._ForkTask, "__init__", recording)
    n = 40
    p = Payload(seed=2, offset=np.arange(n, dtype=float), slow_from=20, sleep=60.0, box=_NoPickle(0.0))
    merged, info = [], {}
    t = time.perf_counter()
    got = run_chunks(_sleepy_draw, p, fixed_chunks(n, 10), n_jobs=2, share_here=True, fork_safe=True, info=info,
                     stop=lambda: len(merged) > 1, on_result=lambda i, r: merged.append(i))
    assert len(got) == 2 and merged == [0, 1] and info["forked"]
    assert time.perf_counter() - t < 30
    assert len(pids) == 1
    with pytest.raises(ChildProcessError):
        os.waitpid(pids[0], os.WNOHANG)  # killed and reaped: no zombie left


@_linux_only
def test_the_fork_holds_numbas_compiler_lock_so_the_child_never_finds_it_taken():
    """Another thread compiling with numba while the share is forked: the fork waits for numba's
    compiler lock (no other thread owns it in the child), and the child can still compile a kernel."""
    import signal
    import threading
    import time

    from fairlens._parallel import _compiler_lock

    lock = _compiler_lock()
    assert lock is not None
    held = threading.Event()

    def hold():
        with lock:
            held.set()
            time.sleep(0.5)

    def late(*_):
        raise TimeoutError("the forked child did not answer within 120 s")

    t = threading.Thread(target=hold)
    t.start()
    held.wait()
    start = time.perf_counter()
    previous = signal.signal(signal.SIGALRM, late)  # a deadlocked child fails the test, never hangs it
    signal.alarm(120)
    try:
        got = run_chunks(_compile_in_child, Payload(half=1), [(0, 1), (1, 2)], n_jobs=2, share_here=True,
                         fork_safe=True)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    t.join()
    assert got == [0.0, 3.0]
    assert time.perf_counter() - start >= 0.3  # it waited for the other thread's compile


def _compile_in_child(payload, chunk):
    if chunk[0] < payload.half:
        return 0.0
    import numba

    @numba.njit
    def plus(a):
        return a + 2.0

    return float(plus(1.0))


@_linux_only
def test_a_failed_fork_sends_the_share_to_a_loky_worker_and_says_so(monkeypatch):
    import gc
    import os

    def no_fork():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    n, size = 40, 10
    p = Payload(seed=8, offset=np.arange(n, dtype=float))
    info = {}
    got = run_chunks(_pid_draw, p, fixed_chunks(n, size), n_jobs=2, share_here=True, fork_safe=True, info=info)
    np.testing.assert_array_equal(np.concatenate([r for _, r in got]), _reference(8, n, size))
    assert not info["forked"] and "loky worker (fork failed" in info["note"]
    assert got[2][0] in _loky_workers()
    assert gc.isenabled()


@_linux_only
def test_the_fork_leaves_garbage_collection_on_here():
    import gc

    p = Payload(seed=8, offset=np.arange(40, dtype=float))
    got = run_chunks(_draw, p, fixed_chunks(40, 10), n_jobs=2, share_here=True, fork_safe=True)
    np.testing.assert_array_equal(np.concatenate(got), _reference(8, 40, 10))
    assert gc.isenabled()


def _arrays_answer(payload, chunk):
    a = np.arange(chunk[0], chunk[1], dtype=np.float64) / 3
    wide = np.arange(60, dtype=np.int64).reshape(6, 10) * (chunk[0] + 1)
    return {"a": a, "keys": wide[:, ::2], "fortran": np.asfortranarray(wide), "mask": a > 5,
            "empty": np.empty((0, 3)), "scalar": float(a.sum()), "text": f"chunk {chunk}"}


def _mapped(arr):
    import mmap

    base = arr
    while base is not None and not isinstance(base, mmap.mmap):
        base = getattr(base, "base", None) if not isinstance(base, memoryview) else base.obj
    return base is not None


@_linux_only
def test_a_forked_share_sends_its_arrays_through_a_file_in_memory(monkeypatch):
    """The forked child writes its answer's arrays into a file in memory and the pipe carries only
    the pickle that refers to them: the same answers as in this process (any layout, dtype, an empty
    array), loaded in place, writable without changing anything else, aligned; without such a file
    (an old kernel) the answer comes through the pipe, equal."""
    from fairlens import _parallel

    p = Payload()
    chunks = fixed_chunks(40, 10)
    expected = [_arrays_answer(p, c) for c in chunks]
    info = {}
    got = run_chunks(_arrays_answer, p, chunks, n_jobs=2, share_here=True, fork_safe=True, info=info)
    assert info["forked"]

    def same(got):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert g.keys() == e.keys() and g["scalar"] == e["scalar"] and g["text"] == e["text"]
            for name in ("a", "keys", "fortran", "mask", "empty"):
                assert g[name].dtype == e[name].dtype and g[name].shape == e[name].shape
                np.testing.assert_array_equal(g[name], e[name])

    same(got)
    sent = got[2:]  # the chunks of the second share, worked by the forked child
    assert all(_mapped(g["a"]) and _mapped(g["fortran"]) for g in sent)
    assert not any(_mapped(g["a"]) for g in got[:2])
    for g in sent:
        for name in ("a", "fortran", "mask"):
            assert g[name].flags.writeable and g[name].ctypes.data % _parallel.ANSWER_ALIGN == 0
        assert g["empty"].flags.writeable
    sent[0]["a"][:] = -1.0  # a private mapping: the other arrays of the answer keep their values
    np.testing.assert_array_equal(sent[1]["a"], expected[3]["a"])
    monkeypatch.setattr(_parallel, "_answer_file", lambda: None)
    got = run_chunks(_arrays_answer, p, chunks, n_jobs=2, share_here=True, fork_safe=True, info=info)
    assert info["forked"] and not any(_mapped(g["a"]) for g in got)
    same(got)


@_linux_only
def test_the_forked_child_is_reaped_after_its_answer_is_merged(monkeypatch):
    """The child closes its pipe once the answer is written, so this process merges the answer
    while the child exits, and reaps it afterwards (no zombie left)."""
    import os

    events = []
    waitpid = os.waitpid

    def recording(pid, options):
        events.append("reap")
        return waitpid(pid, options)

    monkeypatch.setattr(os, "waitpid", recording)
    p = Payload(seed=8, offset=np.arange(40, dtype=float), box=_NoPickle(0.0))
    got = run_chunks(_inherited_draw, p, fixed_chunks(40, 10), n_jobs=2, share_here=True, fork_safe=True,
                     on_result=lambda i, r: events.append(i))
    assert events == [0, 1, 2, 3, "reap"]
    monkeypatch.undo()
    with pytest.raises(ChildProcessError):
        os.waitpid(got[2][0], os.WNOHANG)


@_linux_only
def test_an_answer_that_cannot_be_loaded_here_says_so(monkeypatch):
    """Mapping the forked child's answer fails here (out of memory): the error says the answer
    could not be loaded, not that the child died; the child is reaped."""
    import os

    from fairlens import _parallel

    def refuse(shm, head, spans):
        raise MemoryError("mmap: Cannot allocate memory")

    pids = []
    init = _parallel._ForkTask.__init__

    def recording(self, *args):
        init(self, *args)
        pids.append(self._pid)

    monkeypatch.setattr(_parallel, "_load_answer", refuse)
    monkeypatch.setattr(_parallel._ForkTask, "__init__", recording)
    with pytest.raises(RuntimeError, match=r"could not be loaded here \(mmap: Cannot allocate memory\); use fewer"):
        run_chunks(_arrays_answer, Payload(), fixed_chunks(40, 10), n_jobs=2, share_here=True, fork_safe=True)
    with pytest.raises(ChildProcessError):
        os.waitpid(pids[0], os.WNOHANG)
