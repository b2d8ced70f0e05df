"""Scaling benchmark: does ``n_jobs=2`` pay off?  Wall time, total CPU and identical answers.

For each workload it runs ``n_jobs=1`` (in this process, nothing pickled), then ``n_jobs=2`` on
joblib's default ``loky`` backend and on a 2-worker dask ``LocalCluster`` (processes, one
thread each, through ``joblib.parallel_config(backend="dask")``; dask's MALLOC_TRIM_THRESHOLD_ is
unset in its workers unless ``--dask-malloc-trim``), and prints, per workload and
backend: wall time at ``n_jobs=1`` and ``n_jobs=2``, the speed-up, the total CPU ratio (this
process + every child process: loky's workers, the dask nannies and workers), whether the
answers are identical, and whether fairlens fell back to sequential by itself (the result's
own note).  The load average is printed at the start and at the end: the wall-time figures
only mean something on an otherwise idle machine; the CPU ratios are meaningful under load.

Workloads:

* ``maft``: MAFT against the package's own census MLP (``fairlens.models.train_mlp``) at the
  paper's budget, 1000 seeds x 1000 local iterations,
* ``testsgd``: TestSGD on census (protected sex, race, age; the same MLP),
* ``explain``: SHAP, KernelSHAP and LIME attributions (``fairlens.shuffle.attributions``) of
  census rows under the same MLP,
* ``certify``: certification of a 100-tree random forest at b = 2 (the public ``certify``).

The issue's target (2 cores, BLAS at one thread per process): ``n_jobs=2`` at least 1.7x
faster in wall time and at most 1.15x the total CPU of ``n_jobs=1``; a workload too small to
gain falls back to sequential by itself and must then not be more than 5% slower.

Every timed run is preceded by one untimed warm-up run on the same backend (numba compilation,
worker start-up, imports in the workers), so the figures are those of a warm session.

Run (from the repository root):

    PYTHONPATH=. python benchmarks/scale.py --quick     # all workloads, < 5 min on an idle 2-core machine
    PYTHONPATH=. python benchmarks/scale.py             # full sizes (about 15 min)
    PYTHONPATH=. python benchmarks/scale.py --only maft,explain --backends loky
"""
from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

WORKLOADS = ("maft", "testsgd", "explain", "certify")


def _parse():
    ap = argparse.ArgumentParser(
        description="fairlens scaling benchmark: n_jobs=1 vs n_jobs=2 on loky and on a dask LocalCluster "
                    "(wall time, speed-up, total CPU ratio, identical answers, sequential fall-back, load "
                    "average).",
        epilog="--quick runs every workload at a reduced size and finishes in under 5 minutes on an idle "
               "2-core machine (MAFT keeps the paper's 1000 x 1000 budget). Without --quick: full sizes, "
               "about 15 minutes.")
    ap.add_argument("--quick", action="store_true",
                    help="reduced sizes: all workloads in under 5 minutes on an idle 2-core machine")
    ap.add_argument("--only", default="", help=f"comma-separated subset of {','.join(WORKLOADS)}")
    ap.add_argument("--backends", default="loky,dask", help="comma-separated subset of loky,dask")
    ap.add_argument("--dask-malloc-trim", action="store_true",
                    help="keep dask's default MALLOC_TRIM_THRESHOLD_=65536 in the workers (by default the "
                         "benchmark unsets it: it costs MAFT's workers about 2x the CPU in page faults)")
    ap.add_argument("--blas-threads", type=int, default=1,
                    help="BLAS/OpenMP threads per process (default 1, the issue's setting; 0 leaves them alone)")
    return ap.parse_args()


ARGS = _parse() if __name__ == "__main__" else None
if ARGS is not None and ARGS.blas_threads:
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
        os.environ[var] = str(ARGS.blas_threads)

import numpy as np  # noqa: E402  (after the BLAS environment is set)


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
    """``(wall seconds, CPU seconds of this process and its children, fn())``."""
    c0 = cpu_seconds()
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, cpu_seconds() - c0, out


def workloads(quick, only):
    """``{name: (run(n_jobs) -> result, key(result) -> comparable, note(result) -> str)}``."""
    from fairlens import datasets
    from fairlens.models import train_mlp

    census = datasets.load_adult(encoding="benchmark")
    own = train_mlp(census, random_state=0)
    out = {}

    if "maft" in only:
        def maft(n_jobs):
            from fairlens.maft import MAFT

            return MAFT(own, census, protected=["sex"], n_seeds=1000, n_local=1000,
                        random_state=0).run(n_jobs=n_jobs)

        out["MAFT (own MLP, census 1000x1000)"] = (
            maft, lambda r: (r.params["n_walkers"], r.instances.tobytes()), lambda r: r.params.get("parallel", ""))

    if "testsgd" in only:
        def testsgd(n_jobs):
            from fairlens.testsgd import TestSGD

            return TestSGD(own, census, protected=["sex", "race", "age"], random_state=0).run(n_jobs=n_jobs)

        out["TestSGD (own MLP, census)"] = (
            testsgd, lambda r: r.to_frame().round(12).to_csv(), lambda r: r.params.get("parallel", ""))

    if "explain" in only:
        rng = np.random.default_rng(0)
        rows = rng.choice(census.X.shape[0], 200 if quick else 600, replace=False)
        bg = census.X[rng.choice(census.X.shape[0], 50, replace=False)]

        def explain(n_jobs):
            from fairlens.shuffle import attributions

            return attributions(own, census.X[rows], explainers=("shap", "kernel", "lime"), background=bg,
                                nsamples=200, random_state=0, data=census, n_jobs=n_jobs)

        out["explainers (SHAP, KernelSHAP, LIME; own MLP)"] = (
            explain, lambda r: r.round(12).to_csv(), lambda r: r.attrs.get("parallel", ""))

    if "certify" in only:
        from sklearn.datasets import make_classification
        from sklearn.ensemble import RandomForestClassifier

        X, y = make_classification(n_samples=6000, n_features=20, n_informative=10, random_state=0)
        forest = RandomForestClassifier(n_estimators=100, max_depth=10, random_state=0).fit(X[:5000], y[:5000])
        n_rows = 50 if quick else 400
        Xte, yte = X[5000:5000 + n_rows], y[5000:5000 + n_rows]

        def certify(n_jobs):
            from fairlens.certify import certify as cert

            return cert(forest, Xte, yte, budget=2, n_jobs=n_jobs)

        out["certify (100 trees of depth 10, b=2)"] = (
            certify, lambda r: (tuple(np.asarray(r.status).tolist()), r.accuracy),
            lambda r: str(getattr(r, "params", {}).get("parallel", "")))
    return out


class _backend:
    """``joblib.parallel_config(backend=...)``; for dask, around a fresh 2-worker LocalCluster
    (processes, one thread each) that is closed afterwards."""

    def __init__(self, backend, malloc_trim=False):
        self.backend = backend
        self.malloc_trim = malloc_trim

    def __enter__(self):
        import joblib

        self.client = self.cluster = None
        if self.backend == "dask":
            import dask
            from distributed import Client, LocalCluster

            # dask's nanny sets MALLOC_TRIM_THRESHOLD_=65536 in its workers by default; with the
            # variable set glibc stops adapting its mmap threshold, so every array above 128 kB is
            # mmapped and unmapped again (measured: 1.8 s of system time in the workers of one
            # census MAFT 1000x1000 call, 0.05 s without it).  --dask-malloc-trim keeps dask's default.
            env = {} if self.malloc_trim else {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}
            with dask.config.set(env):
                self.cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                            dashboard_address=None, silence_logs=50)
            self.client = Client(self.cluster)
        self.cfg = joblib.parallel_config(backend=self.backend)
        self.cfg.__enter__()
        return self

    def __exit__(self, *exc):
        self.cfg.__exit__(*exc)
        if self.client is not None:
            self.client.close()
            self.cluster.close()
        return False


def main(args):
    only = [w.strip() for w in (args.only or ",".join(WORKLOADS)).split(",") if w.strip()]
    bad = [w for w in only if w not in WORKLOADS]
    if bad:
        raise SystemExit(f"--only: unknown workload(s) {bad}; choose from {WORKLOADS}")
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if args.blas_threads:
        from threadpoolctl import threadpool_limits

        threadpool_limits(args.blas_threads)
    load0 = os.getloadavg()
    print(f"load average at the start: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f} (2 cores: wall times "
          f"are only meaningful near 0)", flush=True)
    rows = []
    t_start = time.perf_counter()
    for name, (run, key, note) in workloads(args.quick, only).items():
        run(1)  # warm-up: numba compilation, imports
        w1, c1, r1 = timed(lambda run=run: run(1))
        k1 = key(r1)
        print(f"{name}: n_jobs=1 {w1:.2f} s wall, {c1:.2f} s CPU", flush=True)
        for backend in backends:
            # the dask cluster lives only around its own runs: an idle cluster's heartbeats would
            # otherwise count in the CPU of the other runs
            with _backend(backend, args.dask_malloc_trim):
                run(2)  # warm-up: worker start-up, imports and numba cache in the workers
                idle = 0.0
                if backend == "dask":  # the idle cluster's own CPU (heartbeats, monitors) per wall second
                    wi, ci, _ = timed(lambda: time.sleep(2.0))
                    idle = ci / wi
                w2, c2, r2 = timed(lambda run=run: run(2))
            same = key(r2) == k1
            fb = note(r2)
            if idle:
                fb += f" [idle cluster: {idle:.3f} CPU s per wall s = {idle * w2:.2f} s of this run's CPU]"
            rows.append((name, backend, w1, w2, w1 / w2, c2 / c1, same, fb))
            print(f"  {backend}: n_jobs=2 {w2:.2f} s wall ({w1 / w2:.2f}x), {c2:.2f} s CPU "
                  f"({c2 / c1:.2f}x of n_jobs=1) | identical: {same} | {fb} | load {os.getloadavg()[0]:.2f}",
                  flush=True)
    load1 = os.getloadavg()
    print()
    print("| workload | backend | wall n_jobs=1 (s) | wall n_jobs=2 (s) | speed-up | total CPU ratio | identical "
          "| fall-back / what ran where |")
    print("|---|---|---|---|---|---|---|---|")
    for name, backend, w1, w2, sp, cr, same, fb in rows:
        print(f"| {name} | {backend} | {w1:.2f} | {w2:.2f} | {sp:.2f}x | {cr:.2f}x | {same} | {fb} |")
    print(f"\nload average at the start: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}; at the end: "
          f"{load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}; total {time.perf_counter() - t_start:.0f} s")
    print("Targets (idle 2-core machine): speed-up >= 1.7x and total CPU ratio <= 1.15x, or a sequential "
          "fall-back no more than 5% slower.")


if __name__ == "__main__":
    main(ARGS)
