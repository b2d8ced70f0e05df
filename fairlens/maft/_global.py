"""The global phase of the two-phase searches (MAFT, Algorithm 3; AEQUITAS's global sampling).

Every seed walks at most ``max_iter`` steps along the gradient source's direction (momentum
``decay``) until it reaches a discriminatory instance, which is recorded once per seed
(:class:`~fairlens.maft._state.HitRecorder`).  ``engine="lockstep"`` walks every seed of a share
in lockstep (one model call per step for all), ``engine="reference"`` one seed at a time,
literally as Algorithm 3 is printed; AEQUITAS checks every seed once.  :func:`run_global` runs
the phase here or in shares on the workers (:mod:`fairlens.maft._plan`), and
:func:`unique_global` de-duplicates its instances in seed order (the paper's ``global_id``).
"""
from __future__ import annotations

import numpy as np

from fairlens._parallel import Payload
from fairlens._parallel import blas_limit as _blas_limit

from . import _kcall
from ._plan import call_costs, cuts, own_share, plan_phase, run_shares
from ._problem import score_similar
from ._state import GlobalHits, HitRecorder, Live, OwnShare, ShareOutcome
from ._utils import KeySet

__all__ = ["global_phase", "global_lockstep", "global_reference", "aequitas_global", "gradient_global_rows",
           "aequitas_global_rows", "gradient_global_calls", "aequitas_global_calls", "global_task", "run_global",
           "unique_global"]


def global_phase(spec, model, seeds, live):
    """Algorithm 3 (or the method's own global phase) for ``seeds`` with the run's ``spec``
    (:class:`~fairlens.maft._state.SearchSpec`) and counted ``model``: the
    :class:`~fairlens.maft._state.GlobalHits` of the seeds that reached a discriminatory
    instance."""
    walk = spec.walks.global_reference if spec.engine == "reference" else spec.walks.global_lockstep
    return walk(spec, model, seeds, live)


def global_lockstep(spec, model, seeds, live):
    """Algorithm 3 for every seed in lockstep: one model call per step for all active seeds."""
    scorer, source = model.scorer, model.source
    pb = spec.problem
    W, d, C = seeds.shape[0], pb.d, pb.C
    X = seeds.copy()
    M1 = np.zeros((W, d))
    M2 = np.zeros((W, d))
    active = np.arange(W)
    h = HitRecorder(W, d, pb.prot_idx)
    tries = 0
    zeros = np.zeros(W)
    for it in range(spec.max_iter):
        if active.size == 0:
            break
        Xa = X[active]
        S = pb.similar(Xa)
        sc = scorer(S.reshape(-1, d)).reshape(-1, C)
        tries += active.size
        m = active.size
        is_disc = np.empty(m, dtype=np.bool_)
        pair = np.empty(m, dtype=np.int64)
        mdiff = np.empty(m, dtype=np.int64)
        _kcall.check_discrimination(sc, zeros[:m], is_disc, pair, mdiff)
        h.record(active[is_disc], Xa[is_disc], S[is_disc], sc[is_disc])
        rest = ~is_disc
        ar = active[rest]
        if ar.size:
            x1 = np.ascontiguousarray(Xa[rest])
            x2 = S[rest][np.arange(ar.size), mdiff[rest]]
            G = source(np.concatenate([x1, x2]))
            g1 = np.ascontiguousarray(G[: ar.size])
            g2 = np.ascontiguousarray(G[ar.size :])
            M1a = np.ascontiguousarray(M1[ar])
            M2a = np.ascontiguousarray(M2[ar])
            _kcall.global_update((x1, M1a, M2a), (g1, g2), (spec.decay, source.direction_sign, spec.global_step),
                                 (pb.free, pb.lo, pb.hi))
            X[ar] = x1
            M1[ar] = M1a
            M2[ar] = M2a
            live.explore(x1)
        active = ar
        if live.tick("global", it + 1, spec.max_iter):
            break
    return h.hits(tries)


def global_reference(spec, model, seeds, live):
    """One seed at a time, literally as Algorithm 3 is printed.

    Each candidate is scored together with its similar instances in one model call (the
    authors' code makes one call per similar instance) and each gradient is one
    Algorithm-2 call per point (``x`` then ``x'``).
    """
    scorer, source = model.scorer, model.source
    pb = spec.problem
    d = pb.d
    h = HitRecorder(seeds.shape[0], d, pb.prot_idx)
    tries = 0
    for i in range(seeds.shape[0]):
        x = seeds[i].copy()
        grad1 = np.zeros(d)
        grad2 = np.zeros(d)
        for _ in range(spec.max_iter):
            tries += 1
            S, sc = score_similar(pb, scorer, x)
            y = sc[0] > 0.5
            if np.any((sc[1:] > 0.5) != y):
                h.record(np.array([i]), x[None, :], S[None], sc[None])
                break
            dist = (sc[0] - sc[1:]) ** 2
            x2 = S[1 + int(np.argmax(dist))] if np.max(dist) > 0 else x.copy()
            grad1 = spec.decay * grad1 + source(x[None, :])[0]
            grad2 = spec.decay * grad2 + source(x2[None, :])[0]
            direction = np.zeros(d)
            for a in range(d):
                if pb.free[a] and np.sign(grad1[a]) == np.sign(grad2[a]):
                    direction[a] = source.direction_sign * np.sign(grad1[a])
            x = np.minimum(pb.hi, np.maximum(pb.lo, x + spec.global_step * direction))
            live.explore(x[None, :])
        if live.tick("global", i + 1, seeds.shape[0]):
            break
    return h.hits(tries)


def aequitas_global(spec, model, seeds, live):
    """AEQUITAS's global phase: every seed checked once (one model call for all)."""
    scorer = model.scorer
    pb = spec.problem
    S = pb.similar(seeds)
    sc = scorer(S.reshape(-1, pb.d)).reshape(-1, pb.C)
    live.explore(seeds)
    disc = np.any((sc[:, 1:] > 0.5) != (sc[:, :1] > 0.5), axis=1)
    h = HitRecorder(seeds.shape[0], pb.d, pb.prot_idx)
    h.record(np.flatnonzero(disc), seeds[disc], S[disc], sc[disc])
    live.tick("global", 1, 1)
    return h.hits(seeds.shape[0])


def gradient_global_rows(spec, walkers):
    """At most how many model rows the lockstep global phase of ``walkers`` seeds scores: each
    seed walks ``max_iter`` steps, every step scoring its similar set (``C`` rows, itself
    included) and the gradients at it and at its partner (``2 x spec.gradient_rows``; the
    zero-order estimate's ``d + 1`` rows a point).  A seed stops at its first discriminatory
    instance, so a run scores fewer; with no discriminatory instance it scores exactly this."""
    return float(walkers) * spec.max_iter * (spec.problem.C + 2 * spec.gradient_rows)


def gradient_global_calls(spec):
    """At least how many model calls the lockstep global phase makes, whatever its share of the
    seeds: one a step, ``max_iter`` steps."""
    return int(spec.max_iter)


def aequitas_global_calls(spec):
    """AEQUITAS's global phase scores every seed's similar set in one call (in blocks of rows)."""
    return 1


def aequitas_global_rows(spec, walkers):
    """The rows AEQUITAS's global phase scores: every seed's similar set, once."""
    return float(walkers) * spec.problem.C


def global_task(payload, share):
    """A parallel task: the global phase of the seeds ``share = (start, stop)``; the share this
    process works adds its explored rows to the run's set and stops with the run
    (:func:`~fairlens.maft._plan.own_share`)."""
    a, e = share
    spec = payload.spec
    here = own_share(payload, share)
    with _blas_limit(spec.blas_threads):
        model = spec.open_model()
        live = Live(payload.codec, spec.track_explored, capacity=(e - a) * spec.max_iter * spec.problem.C,
                    stop=here and here.stop, explored=here and here.explored)
        hits = global_phase(spec, model, payload.seeds[a:e], live)
    return ShareOutcome(queries=model.queries, calls=model.calls, explored=None if here else live.explored_keys(),
                        hits=hits)


def run_global(run):
    """Algorithm 3 for every seed of the run (a :class:`~fairlens.maft._state.RunState`): here in
    lockstep, or in lockstep shares on the workers; the :class:`~fairlens.maft._state.GlobalHits`."""
    spec = run.spec
    seeds = run.seeds
    W = seeds.shape[0]
    plan = plan_phase("global", spec.walks.global_rows(spec, W), run.workers, calls=spec.walks.global_calls(spec),
                      costs=lambda m: call_costs(run.model.scorer.scorer, seeds, m))
    if plan.note:
        run.notes.append(plan.note)
    if plan.workers <= 1:
        hits = global_phase(spec, run.model, seeds, run.live)
        hits.stopped = run.live.stopped
        return hits
    shares = cuts(W, plan.workers)
    payload = Payload(spec=spec.for_workers(), seeds=seeds, codec=run.codec)
    payload._here = OwnShare(shares[0], run.explored, run.stop)  # see own_share()
    outs, marks, stopped = run_shares(run, global_task, payload, shares, "global")
    return GlobalHits.concat([o.hits for o in outs], [a for a, _ in shares],
                             (spec.problem.d, len(spec.problem.prot_idx)), stopped)


def unique_global(g, codec):
    """The run's global instances (``g``, a :class:`~fairlens.maft._state.GlobalHits`), each once,
    in seed order: the local walkers, their keys and their indices in ``g``."""
    keys = codec.keys(g.X)
    _, new = KeySet(codec.k, max(16, keys.shape[0])).index(keys)
    gi = np.flatnonzero(new)
    return np.ascontiguousarray(g.X[gi]), keys[gi], gi
