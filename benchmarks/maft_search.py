"""Benchmark of the MAFT search: lockstep engine vs the literal one-seed-at-a-time
reference, in the same run, plus vectored vs non-vectored zero-order gradients.

Usage (from the repository root)::

    PYTHONPATH=. python benchmarks/maft_search.py \
        --n-seeds 1000 --n-local 1000

Prints the budget it ran, unique instances of both engines (and their ratio),
wall time, instances per second, the throughput ratio, model rows and calls,
and the peak traced memory of the lockstep run.

``--n-jobs 2`` also runs the lockstep engine on 2 workers (joblib/loky; each worker walks one
share of the seeds, then of the walkers) and checks that the instances are identical to the
sequential run.  ``--profile`` profiles the lockstep run with cProfile and prints where the time
goes: the model calls, the row sets (hashing of explored and found rows) and the rest.
``--set-share`` measures the row sets' share without a profiler: ``time.process_time`` around
every row-set call (``KeySet`` construction, ``index`` and ``insert``, ``RowCodec.keys``, and the local
phase's one-kernel found-set step ``_Finds.add_step``, which also computes the counterparts) in one more
sequential run with BLAS at one thread, against that run's whole CPU time.
``--sg-seeds 20`` also runs SG (Symbolic Generation, Aggarwal et al. 2019)
with 20 seeds, 20 local tries per global instance and one global try per seed (SG explains
each input with a LIME tree and Z3; its budget is kept small).
"""
from __future__ import annotations

import argparse
import os
import time
import tracemalloc
import warnings

import numpy as np


def _model(ds, random_state):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fairlens.models import train_mlp

        return train_mlp(ds, random_state=random_state)


def _set_share(search):
    """One more sequential run with ``time.process_time`` around every row-set call."""
    from threadpoolctl import threadpool_limits

    from fairlens.maft import _state, _utils

    spent = [0.0]
    depth = [0]
    parts = {}

    def timed(fn, name):
        def wrapper(*a, **k):  # only the outermost row-set call counts (insert may call index)
            depth[0] += 1
            t = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                depth[0] -= 1
                if depth[0] == 0:
                    dt = time.process_time() - t
                    spent[0] += dt
                    parts[name] = parts.get(name, 0.0) + dt
        return wrapper

    saved = {(cls, name): getattr(cls, name) for cls, name in
             ((_utils.KeySet, "__init__"), (_utils.KeySet, "index"), (_utils.KeySet, "insert"),
              (_utils.RowCodec, "keys"), (_state.Finds, "add_step"))}
    try:
        for (cls, name), fn in saved.items():
            setattr(cls, name, timed(fn, f"{cls.__name__}.{name}"))
        with threadpool_limits(1):
            t = time.process_time()
            search.run()
            total = time.process_time() - t
    finally:
        for (cls, name), fn in saved.items():
            setattr(cls, name, fn)
    return (f"row sets (KeySet construction + index + insert, RowCodec.keys, _Finds.add_step): {spent[0]:.3f} s of "
            f"{total:.3f} s CPU "
            f"({100 * spent[0] / total:.1f}%; " + ", ".join(f"{k} {v:.3f}" for k, v in parts.items())
            + f"), load average {os.getloadavg()[0]:.1f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default="adult")
    ap.add_argument("--protected", default="sex")
    ap.add_argument("--n-seeds", type=int, default=1000)
    ap.add_argument("--n-local", type=int, default=1000)
    ap.add_argument("--h", type=float, default=1.0)
    ap.add_argument("--random-state", type=int, default=0)
    ap.add_argument("--skip-reference", action="store_true")
    ap.add_argument("--grad-points", type=int, default=1000)
    ap.add_argument("--n-jobs", type=int, default=None, help="also run on this many workers")
    ap.add_argument("--profile", action="store_true", help="cProfile the lockstep run")
    ap.add_argument("--set-share", action="store_true",
                    help="CPU share of the row sets (process_time around every row-set call), no profiler")
    ap.add_argument("--sg-seeds", type=int, default=0, help="also run SG with this many seeds")
    args = ap.parse_args(argv)

    from fairlens.datasets import load_dataset
    from fairlens.maft import MAFT, zero_order_gradient
    from fairlens.models import as_scorer

    ds = load_dataset(args.dataset, encoding="benchmark")
    t = time.perf_counter()
    model = _model(ds, args.random_state)
    print(f"model: {type(model).__name__} {getattr(model, 'hidden_layer_sizes', '')} "
          f"trained in {time.perf_counter() - t:.1f}s")
    print(f"budget: dataset={args.dataset} protected={args.protected} n_seeds={args.n_seeds} "
          f"n_local={args.n_local} h={args.h} random_state={args.random_state} cpus={os.cpu_count()}")

    search = MAFT(model, ds, protected=[args.protected], h=args.h, n_seeds=args.n_seeds, n_local=args.n_local,
                  random_state=args.random_state)
    seeds = search.draw_seeds()
    search.set_params(seeds=seeds)
    from fairlens.maft._search import warmup

    warmup()  # compile / load the numba kernels outside the timings

    lock = search.run()
    tracemalloc.start()
    search.run()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    if args.profile:
        import cProfile
        import pstats

        pr = cProfile.Profile()
        t = time.perf_counter()
        pr.enable()
        search.run()
        pr.disable()
        wall = time.perf_counter() - t
        st = pstats.Stats(pr)
        sets = "row sets (KeySet.index + RowCodec.keys + Finds.add_step)"
        tot = {"model calls (CountingScorer.__call__)": 0.0, sets: 0.0}
        for (fn, _, name), (_, _, _, ct, _) in st.stats.items():
            if name == "__call__" and fn.endswith("_utils.py") and ct > tot["model calls (CountingScorer.__call__)"]:
                tot["model calls (CountingScorer.__call__)"] = ct
            if (fn.endswith("_utils.py") and name in ("index", "keys")) or (fn.endswith("_state.py")
                                                                          and name == "add_step"):
                tot[sets] += ct
        print(f"profile (cProfile, {wall:.2f} s wall under the profiler):")
        for k, v in tot.items():
            print(f"  {k:<44} {v:7.2f} s  {100 * v / wall:5.1f}%")
        st.sort_stats("tottime").print_stats(8)

    if args.set_share:
        print(_set_share(search))

    def line(name, r):
        return (f"{name:<10} unique={r.n_instances:>8} (global {r.n_global}, local {r.n_local})  "
                f"time={r.elapsed:8.2f}s  per_s={r.instances_per_second:9.1f}  rows={r.queries:>10}  "
                f"calls={r.model_calls:>8}  success={r.success_rate:.3f}")

    print(line("lockstep", lock))
    print(f"walkers (unique global instances of the whole run): {lock.params['n_walkers']}; "
          f"local tries {lock.tries_local} = walkers x n_local: "
          f"{lock.tries_local == lock.params['n_walkers'] * args.n_local}")
    print(f"lockstep peak traced memory: {peak / 2**20:.1f} MiB")
    if args.n_jobs is not None:
        par = search.run(n_jobs=args.n_jobs)
        print(line(f"n_jobs={args.n_jobs}", par))
        print(f"n_jobs={args.n_jobs} vs 1: identical instances: {np.array_equal(par.instances, lock.instances)}; "
              f"speed-up {lock.elapsed / par.elapsed:.2f}x ({par.params['parallel']})")
    if args.sg_seeds:
        from fairlens.maft import SG, discriminatory_mask

        sg = SG(model, ds, protected=[args.protected], max_iter=1, n_seeds=args.sg_seeds, n_local=args.sg_seeds,
                random_state=args.random_state).run()
        print(line("SG", sg))
        ok = discriminatory_mask(model, ds, sg.instances, protected=[args.protected])
        print(f"SG: {sg.tries_global + sg.tries_local} inputs explained, {ok.sum()} / {len(ok)} instances re-check; "
              f"MAFT/SG instances per second = {lock.instances_per_second / max(sg.instances_per_second, 1e-9):,.0f}x")
    if not args.skip_reference:
        ref = search.set_params(engine="reference").run()
        search.set_params(engine="lockstep")
        print(line("reference", ref))
        same = {tuple(r) for r in lock.instances} == {tuple(r) for r in ref.instances}
        print(f"unique instances lockstep/reference = {lock.n_instances / max(ref.n_instances, 1):.4f} "
              f"(identical sets: {same})")
        ratio = lock.instances_per_second / ref.instances_per_second
        print(f"throughput ratio (instances/s) lockstep/reference = {ratio:.1f}x; "
              f"wall-time ratio = {ref.elapsed / lock.elapsed:.1f}x")
        within = abs(lock.n_instances - ref.n_instances) <= 0.1 * ref.n_instances
        print(f"targets: unique within 10% of reference: {'yes' if within else 'NO'}; "
              f">= 20x throughput: {'yes' if ratio >= 20 else 'NO'}")

    # ---- gradients: vectored (Alg. 2) vs non-vectored (Alg. 1), single-threaded BLAS like the runs
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
    scorer = as_scorer(model)
    P = seeds[: args.grad_points]
    timings = {}
    t = time.perf_counter()
    Gb = zero_order_gradient(scorer, P, h=args.h, vectored=True)
    timings["vectored, all points in one call"] = time.perf_counter() - t
    t = time.perf_counter()
    Gv = np.array([zero_order_gradient(scorer, p[None], h=args.h, vectored=True)[0] for p in P])
    timings["vectored, one call per point (paper)"] = time.perf_counter() - t
    t = time.perf_counter()
    Gn = zero_order_gradient(scorer, P, h=args.h, vectored=False)
    timings["non-vectored (Alg. 1)"] = time.perf_counter() - t
    try:
        from fairlens.models import mlp_input_gradient

        t = time.perf_counter()
        mlp_input_gradient(model, P, output="proba")
        timings["analytic MLP gradient (EIDIG), batched"] = time.perf_counter() - t
    except Exception as exc:  # pragma: no cover - informative only
        print("analytic gradient unavailable:", exc)
    assert np.allclose(Gb, Gn) and np.allclose(Gb, Gv)
    print(f"gradients of {len(P)} points (d={P.shape[1]}), identical values across forms:")
    base = timings["non-vectored (Alg. 1)"]
    for k, v in timings.items():
        print(f"  {k:<42} {v * 1e3:9.1f} ms   ({base / v:6.1f}x vs non-vectored)")


if __name__ == "__main__":
    main()
