"""The two-phase individual-discrimination search (MAFT, Algorithms 3 and 4).

One engine drives four methods through their *gradient source*:

=========  ==========================================  ========  ===============
method     gradient                                    momentum  local refresh
=========  ==========================================  ========  ===============
MAFT       zero-order estimate (Alg. 2), black-box      0.5       every 5 successes
EIDIG      analytic gradient of the output, white-box   0.5       every 5 successes
ADF        analytic gradient of the loss, white-box     none      every iteration
AEQUITAS   none: random global sampling and adaptive local search
=========  ==========================================  ========  ===============

Two engines run the *same* algorithm:

* ``engine="lockstep"`` (default): all seeds (global phase) and all global
  instances (local phase) are walked in lockstep, so that each step scores every
  walker's rows in one model call; the bookkeeping is in numba kernels
  (:mod:`fairlens.maft._kernels`).
* ``engine="reference"``: a literal one-seed-at-a-time implementation in plain
  NumPy, kept as the slow, faithful twin.

**As the paper, at every budget, at every n_jobs (issues #14, #24).**  The run is the
paper's: the global phase walks every seed; the global instances of ALL seeds are then
de-duplicated in seed order (the paper's ``global_id`` set); each unique global instance is
one local walker.  Walker ``w`` draws its random numbers from the counter-based stream
``(key, w, iteration, draw)`` (:func:`fairlens.maft._utils.stream_uniform`; ``key`` from
``chunk_rng(random_state, 0)``), so a walk depends on nothing but its start, and the
instances (global ones in seed order, then local ones in the order Algorithm 4 finds them,
walker after walker, each row once) are the same however the work is cut.  With ``n_jobs``
resolving to one worker both phases run in lockstep in this process (one model call per step
for all walkers); with ``n_jobs`` processes each walks one contiguous share of the seeds, then of
the walkers, in lockstep (one call per step for its share): this process works the first share
while the workers run the others (``run_chunks(share_here=True)``), each worker returns its rows
as int64 keys (:class:`fairlens.maft._utils.RowCodec`) and this process merges the shares with
one linear pass of a hash set, then decodes every row once into the result's arrays.  A phase
too small to gain runs here (:data:`~fairlens.maft._plan.MIN_PARALLEL_ROWS`).

This module is the orchestrator (:func:`run_two_phase`); the rooms it drives are the problem
(:mod:`~fairlens.maft._problem`), the run's typed state (:mod:`~fairlens.maft._state`), the
parallel plan (:mod:`~fairlens.maft._plan`), the global phase (:mod:`~fairlens.maft._global`)
and the local phase (:mod:`~fairlens.maft._local`); the public searchers and their parameters
are in :mod:`~fairlens.maft._searchers`.

Both engines use identical random numbers and -- for a model whose row scores do not
depend on the batch they are computed in -- return identical instances for MAFT, EIDIG and
ADF.  AEQUITAS shares its adaptive probabilities across groups of
:data:`~fairlens.maft._local.BLOCK_SIZE` consecutive walkers (parallel shares are cut on group
boundaries); the lockstep engine updates them after each step in walker order, the reference
after each iteration, so those two differ by design.

Choices where the paper is silent or ambiguous (documented here once):

* ``similar_x`` holds every *other* combination of the protected attributes'
  values (the integer grid ``lo..hi`` of each protected attribute), so its size
  is ``prod(n_values) - 1``.
* Algorithm 4 starts with ``suc_iter = update_interval`` (as printed in the
  paper), so the attribute probabilities are first computed at iteration 0 with
  ``FindPair``; ``Reset(probability)`` restores those first probabilities.
  (EIDIG's code seeds them with the max-difference partner instead.)
* Global instances are de-duplicated (in seed order) across the whole run before the
  local phase, as in the paper and the authors' code; every unique global instance gets
  ``n_local`` iterations, once.
* Seeds: k-means (``n_clusters``) on the seed pool, then seed ``i`` is a random
  member of cluster ``i mod n_clusters``; if ``n_seeds >= len(pool)`` the whole
  pool is used (as the paper does for small datasets).
"""
from __future__ import annotations

import time

import numpy as np

from fairlens._parallel import blas_limit as _blas_limit  # the one BLAS limit (None: pools left alone)
from fairlens._parallel import chunk_rng, effective_n_jobs

from . import _kcall
from ._global import (
    aequitas_global,
    aequitas_global_calls,
    aequitas_global_rows,
    global_lockstep,
    global_reference,
    gradient_global_calls,
    gradient_global_rows,
    run_global,
    unique_global,
)
from ._local import (
    BLOCK_SIZE,
    aequitas_local_calls,
    aequitas_local_lockstep,
    aequitas_local_reference,
    aequitas_local_rows,
    gradient_local_calls,
    gradient_local_rows,
    local_lockstep,
    local_reference,
    run_local,
)
from ._result import FairnessTestResult
from ._state import Finds, Live, Rows, RunState, Walks
from ._utils import KeySet, RowCodec, RowSet

__all__ = ["run_two_phase", "assemble", "row_codec", "warmup", "GRADIENT_WALKS", "AEQUITAS_WALKS"]


def warmup():
    """Compile (or load from the numba cache) every kernel on tiny inputs, so
    that the first timed search does not pay for it."""
    X = np.zeros((2, 3))
    out = np.empty((2, 2, 3))
    _kcall.similar_rows(X, np.array([0], dtype=np.int64), np.array([[0.0], [1.0]]), out)
    sc = np.array([[0.2, 0.7], [0.4, 0.45]])
    b = np.empty(2, dtype=np.bool_)
    i1 = np.empty(2, dtype=np.int64)
    i2 = np.empty(2, dtype=np.int64)
    _kcall.check_discrimination(sc, np.zeros(2), b, i1, i2)
    free = np.array([False, True, True])
    lo, hi = np.zeros(3), np.ones(3)
    G = np.ones((2, 3))
    _kcall.global_update((X, np.zeros((2, 3)), np.zeros((2, 3))), (G, G), (0.5, -1.0, 1.0), (free, lo, hi))
    P = np.empty((2, 3))
    _kcall.normalized_probability(G, G, free, 1e-6, P)
    a = np.empty(2, dtype=np.int64)
    s = np.empty(2)
    u = np.full(2, 0.3)
    _kcall.local_perturb(X, P, (u, u), 1.0, (lo, hi), (a, s))
    pp, dp = np.array([0.0, 0.5, 0.5]), np.full(3, 0.5)
    _kcall.aequitas_perturb(X, (pp, dp), (u, u, u), 1.0, (lo, hi), (a, s))
    _kcall.aequitas_update(pp, dp, a, s, b, 0.001, 0.001, 1.0)
    RowSet(3).add(X)
    KeySet(1).index(np.zeros((2, 1), dtype=np.int64))
    _kcall.stream_fill(1, np.arange(2, dtype=np.int64), 0, np.empty(2))
    S3, sc2 = np.zeros((2, 2, 3)), np.full((2, 2), 0.5)
    _kcall.local_commit(b, (S3, sc2), (X.copy(), P.copy(), i1, S3.copy(), sc2.copy()), (X, P, S3, sc2))
    codec = RowCodec(lo, hi, True)
    codec.rows(codec.keys(X))
    rows = np.empty((2 * 4, 3))
    _kcall.zo_probe_rows(X, G, rows)
    _kcall.zo_gradient(np.zeros(8), G, np.empty((2, 3)))
    finds = Finds(codec, np.array([0], dtype=np.int64), capacity=4)
    finds.add_step(np.array([True, False]), X, S3, sc2, np.arange(2, dtype=np.int64))


#: The phases of the gradient searches (MAFT, EIDIG, ADF) and of AEQUITAS.
GRADIENT_WALKS = Walks(global_lockstep, global_reference, local_lockstep, local_reference, gradient_global_rows,
                       gradient_local_rows, gradient_global_calls, gradient_local_calls)
AEQUITAS_WALKS = Walks(aequitas_global, aequitas_global, aequitas_local_lockstep, aequitas_local_reference,
                       aequitas_global_rows, aequitas_local_rows, aequitas_global_calls, aequitas_local_calls,
                       align=BLOCK_SIZE)


def row_codec(spec, seeds):
    """The run's row keys: one int64 per row when every row the search of ``spec`` can generate
    from ``seeds`` lies on the integer grid, else the rows' float bits."""
    pb = spec.problem
    grid = (np.all(pb.lo == np.round(pb.lo)) and np.all(pb.hi == np.round(pb.hi))
            and np.all(seeds == np.round(seeds)) and float(spec.global_step).is_integer()
            and float(spec.local_step).is_integer())
    return RowCodec(pb.lo, pb.hi, grid)


def run_two_phase(spec, seeds, seed, *, n_jobs, stop, report, callback, params, dataset):
    """One run of the two-phase search described by ``spec`` (a
    :class:`~fairlens.maft._state.SearchSpec`) from ``seeds``: the global phase, the global
    instances de-duplicated in seed order, the local phase from each of them, the result.

    ``seed`` is the run's resolved ``random_state`` (the local walkers' stream key derives from
    it); ``n_jobs``, ``stop``, ``report`` and ``callback`` are the validated run arguments;
    ``params`` and ``dataset`` go into the result.  The run's state lives in a
    :class:`~fairlens.maft._state.RunState` made here."""
    key = int(chunk_rng(seed, 0).integers(0, 2**63 - 1))
    codec = row_codec(spec, seeds)
    asked = effective_n_jobs(n_jobs)
    workers = asked if spec.engine == "lockstep" else 1
    t0 = time.perf_counter()
    with _blas_limit(spec.blas_threads):
        model = spec.open_model()
        bound = seeds.shape[0] * (spec.max_iter + spec.n_local) * spec.problem.C
        # the workers' explored rows are merged into live.explored (one pass)
        live = Live(codec, spec.track_explored, callback=callback, stop=stop, t0=t0, report=report,
                    capacity=bound)
        run = RunState(spec=spec, model=model, live=live, codec=codec, n_jobs=n_jobs, workers=workers,
                       stop=stop, callback=callback, report=report, t0=t0, seed=seed, seeds=seeds)
        if asked > workers:
            run.notes.append(f"in this process: engine={spec.engine!r} walks one seed at a time "
                             f"(n_jobs asked {asked} workers)")
        g = run_global(run)
        walkers, gkeys, gi = unique_global(g, codec)
        rows = Rows(walkers, g.cp[gi], spec.problem.prot_idx, codec)
        n_global = walkers.shape[0]
        live.n_global = n_global
        live.count = lambda: n_global
        if g.stopped or live.stopped:
            run.stopped = True
        else:
            live.tick("global", spec.max_iter, spec.max_iter)
            run.stopped = live.stopped
        loc = None
        if not run.stopped and spec.n_local > 0 and n_global > 0:
            loc = run_local(run, walkers, gkeys, key, rows)
        elapsed = time.perf_counter() - t0
    run.queries += model.queries
    run.calls += model.calls
    res = assemble(run, g, gi, rows, loc, elapsed, params=params, dataset=dataset)
    res.params.update(n_jobs=n_jobs, n_walkers=int(n_global),
                      parallel="; ".join(run.notes) or "sequential (one worker)")
    return res


def assemble(run, g, gi, rows, loc, elapsed, *, params, dataset):
    """The :class:`~fairlens.maft._result.FairnessTestResult` of a run: the global instances
    (``g``'s rows ``gi``, in seed order), then the local ones (``loc``, walker after walker, each
    row once), decoded in ``rows``; ``params``: the searcher's parameters, ``dataset`` its data."""
    spec = run.spec
    pb = spec.problem
    seeds, seed, live = run.seeds, run.seed, run.live
    n_global = int(gi.shape[0])
    packs = loc.found if loc is not None else []
    tries_local = loc.tries if loc is not None else 0
    counts = list(n_global + np.cumsum([len(pk) for pk in packs], dtype=np.int64))
    n_loc = int(counts[-1]) - n_global if counts else 0
    # the instances and their counterparts were written once into their final arrays as each
    # share was merged (Rows): the global ones (the walkers) first, then each share's rows
    X, CP = rows.arrays()
    if X.shape[0] != n_global + n_loc:  # pragma: no cover - an internal invariant
        raise RuntimeError(f"internal: {X.shape[0]} rows decoded for {n_global + n_loc} instances")
    s1 = [g.s1[gi]] + [pk.s1 for pk in packs]
    s2 = [g.s2[gi]] + [pk.s2 for pk in packs]
    if loc is not None and loc.marks is not None:
        t_g = live.timeline[-1][0] if len(live.timeline) > 1 else 0.0
        timeline = [(0.0, 0), (t_g, n_global)] + [(t, counts[k - 1]) for t, k in loc.marks
                                                 if 0 < k <= len(counts)]
    else:
        timeline = live.timeline
    if timeline[-1][1] != n_global + n_loc:
        # a run stopped in its global phase: the live ticks counted no instance yet, the result
        # holds the walkers that reached one -- the timeline ends at the count the result reports
        timeline = list(timeline) + [(max(float(elapsed), timeline[-1][0]), n_global + n_loc)]
    params = dict(params)
    params.update({"engine": spec.engine, "n_seeds": int(seeds.shape[0]), "n_local": int(spec.n_local),
                   "random_state": seed,
                   "row_keys": "int64 (integer grid)" if rows.codec.packed else "float64 rows"})
    return FairnessTestResult(
        method=spec.method,
        instances=X,
        counterparts=CP,
        instance_scores=np.concatenate(s1),
        counterpart_scores=np.concatenate(s2),
        phase=np.repeat(np.array(["global"] * bool(n_global) + ["local"] * bool(n_loc), dtype=str),
                        [c for c in (n_global, n_loc) if c]),
        n_global=int(n_global),
        n_local=int(n_loc),
        elapsed=elapsed,
        queries=int(run.queries),
        model_calls=int(run.calls),
        tries_global=int(g.tries),
        tries_local=int(tries_local),
        n_explored=len(run.explored) if run.explored is not None else 0,
        seeds=seeds,
        timeline=np.asarray(timeline, dtype=np.float64),
        stopped=bool(run.stopped),
        params=params,
        random_state=seed,
        feature_names=pb.feature_names,
        dataset=dataset,
    )
