"""Scaling benchmark: the heavy loops at n_jobs=1 and 2, on loky and on a dask LocalCluster.

For four workloads --

* MAFT against the package's own census MLP (``fairlens.models.train_mlp``) at the paper's
  budget, 1000 seeds x 1000 local iterations (``--quick``: 1000 x 100),
* MAFT against a wide MLP on the census benchmark encoding (a model whose call costs about a
  millisecond per batch, as a realistic audited network does),
* TestSGD on census (rule sets over the protected attributes, scored by sampling),
* certification of a deep random forest at b = 2 (exact: cascade with brute force),

it prints the wall time with ``n_jobs=1`` (in-process, nothing pickled), with ``n_jobs=2`` on
joblib's default ``loky`` backend, and with ``n_jobs=-1`` inside
``joblib.parallel_config(backend="dask")`` on a 2-worker ``LocalCluster`` (processes, one
thread each), the speed-up over ``n_jobs=1``, whether the three answers are identical, the
pickled size of what is shipped to each worker (the payload) and the per-task overhead
(no-op tasks carrying that payload through the same machinery).

Run:  PYTHONPATH=. python benchmarks/scale.py [--quick] [--only maft,testsgd,certify] [--blas-threads 1]

A model whose cost is matrix products (an MLP) already runs on every core at ``n_jobs=1``:
numpy's BLAS is multi-threaded in this process, while loky gives each of its workers
``cores // n_jobs`` BLAS threads and dask's workers run with one.  ``--blas-threads 1``
compares like with like (one core per worker) and shows what the chunking itself gains.
Times exclude numba compilation and worker start-up (one warm-up call per backend runs first).
The issue's target is a speed-up of at least 1.7x at 2 workers for certify and MAFT on an
otherwise idle 2-core machine.
"""
from __future__ import annotations

import argparse
import os
import pickle
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def cpu_seconds():
    """CPU seconds (user + system) of this process and of every live child process (loky's
    workers, the dask LocalCluster's nannies and workers)."""
    import psutil

    me = psutil.Process()
    t = me.cpu_times()
    total = t.user + t.system
    for c in me.children(recursive=True):
        try:
            ct = c.cpu_times()
            total += ct.user + ct.system
        except psutil.Error:
            pass
    return total


def timed(fn):
    c0 = cpu_seconds()
    t0 = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - t0
    timed.cpu = cpu_seconds() - c0
    return wall, out


def _noop(payload, chunk):
    return chunk


def task_overhead(payload, n_tasks, backend):
    """Seconds per task of a no-op carrying ``payload`` through run_chunks at 2 workers."""
    import joblib

    from fairlens._parallel import run_chunks

    chunks = list(range(n_tasks))
    # TASKS_PER_WORKER groups chunks; one chunk per task is what we want to time here
    from fairlens import _parallel

    saved = _parallel.TASKS_PER_WORKER
    _parallel.TASKS_PER_WORKER = n_tasks
    try:
        with joblib.parallel_config(backend=backend):
            run_chunks(_noop, payload, chunks[:4], n_jobs=2 if backend == "loky" else -1)  # warm
            dt, _ = timed(lambda: run_chunks(_noop, payload, chunks, n_jobs=2 if backend == "loky" else -1))
    finally:
        _parallel.TASKS_PER_WORKER = saved
    return dt / n_tasks


def workloads(quick):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.neural_network import MLPClassifier

    from fairlens import datasets

    census = datasets.load_adult(encoding="benchmark")
    rng = np.random.default_rng(0)
    idx = rng.choice(census.X.shape[0], 4000 if quick else 12000, replace=False)
    mlp = MLPClassifier(hidden_layer_sizes=(512, 512), max_iter=5, random_state=0)
    mlp.fit(census.X[idx], census.y[idx])

    out = {}

    from fairlens.models import train_mlp

    own = train_mlp(census, random_state=0)

    def maft_own(n_jobs):
        from fairlens.maft import MAFT

        res = MAFT(own, census, protected=["sex"], n_seeds=1000, n_local=100 if quick else 1000,
                   random_state=0).run(n_jobs=n_jobs)
        return res, (lambda r: (r.params["n_walkers"], r.instances.tobytes()))

    out[f"MAFT (own MLP, census 1000x{100 if quick else 1000})"] = (maft_own, own)

    def maft(n_jobs):
        from fairlens.maft import MAFT

        res = MAFT(mlp, census, protected=["sex"], n_seeds=200 if quick else 1000, n_local=100 if quick else 500,
                   random_state=0).run(n_jobs=n_jobs)
        return res, (lambda r: frozenset(map(tuple, np.asarray(r.instances).tolist())))

    out["MAFT (wide MLP, census)"] = (maft, mlp)

    def testsgd(n_jobs):
        from fairlens.testsgd import TestSGD

        rep = TestSGD(mlp, census, sensitive=["sex", "race", "age"], random_state=0).run(n_jobs=n_jobs)
        return rep, (lambda r: r.to_frame().round(12).to_csv())

    out["TestSGD (census)"] = (testsgd, mlp)

    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=6000, n_features=20, n_informative=10, random_state=0)
    forest = RandomForestClassifier(n_estimators=100, max_depth=10, random_state=0).fit(X[:5000], y[:5000])
    n_rows = 100 if quick else 400
    Xte, yte = X[5000:5000 + n_rows], y[5000:5000 + n_rows]

    def certify(n_jobs):
        from fairlens.certify import certify as cert

        res = cert(forest, Xte, yte, budget=2, n_jobs=n_jobs)
        return res, (lambda r: (tuple(r.status.tolist()), r.accuracy))

    out["certify (100 trees of depth 10, b=2)"] = (certify, forest)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller workloads")
    ap.add_argument("--only", default="", help="comma-separated subset: maft,testsgd,certify")
    ap.add_argument("--blas-threads", type=int, default=0,
                    help="limit this process's BLAS/OpenMP threads (threadpoolctl), e.g. 1 to compare one "
                         "worker with one core; dask's workers and loky's workers are limited anyway")
    args = ap.parse_args()
    if args.blas_threads:
        from threadpoolctl import threadpool_limits

        threadpool_limits(args.blas_threads)

    import joblib
    from distributed import Client, LocalCluster

    from fairlens._parallel import Payload

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                           silence_logs=50)
    client = Client(cluster)
    rows = []
    try:
        for name, (run, model) in workloads(args.quick).items():
            if args.only and not any(k in name.lower() for k in args.only.split(",")):
                continue
            run(1)  # warm-up: numba compilation
            t1, (r1, key) = timed(lambda run=run: run(1))
            c1 = timed.cpu
            with joblib.parallel_config(backend="loky"):
                run(2)  # warm-up: worker start-up
                tl, (rl, _) = timed(lambda run=run: run(2))
                cl = timed.cpu
            with joblib.parallel_config(backend="dask"):
                run(-1)
                td, (rd, _) = timed(lambda run=run: run(-1))
                cd = timed.cpu
            same = key(r1) == key(rl) == key(rd)
            size = len(pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL))
            payload = Payload(model=model)
            ov_l = task_overhead(payload, 16, "loky")
            ov_d = task_overhead(payload, 16, "dask")
            rows.append((name, t1, tl, t1 / tl, td, t1 / td, same, size, ov_l, ov_d))
            note = getattr(rl, "params", {}).get("parallel", "") if hasattr(rl, "params") else ""
            print(f"{name}: n_jobs=1 {t1:.2f} s wall {c1:.2f} s CPU | loky x2 {tl:.2f} s ({t1 / tl:.2f}x) "
                  f"{cl:.2f} s CPU ({cl / c1:.2f}x) | dask 2 workers {td:.2f} s ({t1 / td:.2f}x) {cd:.2f} s CPU "
                  f"({cd / c1:.2f}x) | load {os.getloadavg()[0]:.2f} | {note} | identical: {same} | "
                  f"model {size / 1e6:.2f} MB | task overhead loky {ov_l * 1e3:.1f} ms, dask {ov_d * 1e3:.1f} ms",
                  flush=True)
    finally:
        client.close()
        cluster.close()

    print()
    print("| workload | n_jobs=1 (s) | loky, 2 (s) | speed-up | dask, 2 workers (s) | speed-up | identical | "
          "model pickled | overhead per task, loky / dask |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, t1, tl, sl, td, sd, same, size, ov_l, ov_d in rows:
        print(f"| {name} | {t1:.2f} | {tl:.2f} | {sl:.2f}x | {td:.2f} | {sd:.2f}x | {same} | "
              f"{size / 1e6:.2f} MB | {ov_l * 1e3:.1f} / {ov_d * 1e3:.1f} ms |")
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f} (2 cores; the target assumes an idle machine)")


if __name__ == "__main__":
    main()
