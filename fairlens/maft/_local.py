"""The local phase of the two-phase searches (MAFT, Algorithm 4; AEQUITAS's adaptive local search).

Each unique global instance is one walker: it steps one free attribute at a time (chosen with
the probabilities of its gradient source, refreshed every ``update_interval`` successes), keeps a
discriminatory step and goes back to its global instance otherwise.  Walker ``w`` draws its
random numbers from the counter-based stream ``(key, w, iteration, slot)``
(:func:`fairlens.maft._utils.stream_uniform`), so a walk depends on nothing but its start.
``engine="lockstep"`` walks every walker of a share in lockstep (one model call per step, the
bookkeeping in numba kernels), ``engine="reference"`` one walker at a time, literally as
Algorithm 4 is printed.  The instances go to a :class:`~fairlens.maft._state.Finds` (each row
once, at the place Algorithm 4 finds it first).  :func:`run_local` runs the phase here or in
shares on the workers (:mod:`fairlens.maft._plan`).
"""
from __future__ import annotations

import numpy as np

from fairlens._parallel import Payload
from fairlens._parallel import blas_limit as _blas_limit

from . import _kcall
from ._plan import call_costs, cuts, own_share, plan_phase, run_shares
from ._problem import score_similar
from ._state import PRESIZE_KEYS, Finds, Live, LocalPhase, ModelCalls, OwnShare, ShareOutcome, presize
from ._utils import CountingScorer, KeySet, stream_counter, stream_uniform

__all__ = ["BLOCK_SIZE", "local_phase", "local_lockstep", "local_reference", "aequitas_local_lockstep",
           "aequitas_local_reference", "gradient_local_rows", "aequitas_local_rows",
           "gradient_local_calls", "aequitas_local_calls", "share_cap", "local_task", "load_local_kernels",
           "run_local"]

#: The stream slots of one walker's iteration: the pair drawn at a refresh, the attribute, the
#: direction, AEQUITAS's direction at a domain edge.
_SLOT_PAIR, _SLOT_ATTR, _SLOT_DIR, _SLOT_EDGE = 0, 1, 2, 3

#: Walkers sharing AEQUITAS's adaptive probabilities (a constant: groups of consecutive global
#: instances, never derived from ``n_jobs``; parallel shares are cut on group boundaries).
BLOCK_SIZE = 256


def local_phase(spec, model, walkers, w0, key, finds, live):
    """Algorithm 4 (or the method's own local phase) for the walkers ``w0, w0 + 1, ...`` (rows
    ``walkers``); the instances go to ``finds``; returns the number of local tries."""
    if walkers.shape[0] == 0 or spec.n_local == 0:
        return 0
    walk = spec.walks.local_reference if spec.engine == "reference" else spec.walks.local_lockstep
    return walk(spec, model, walkers, w0, key, finds, live)


def local_lockstep(spec, model, walkers, w0, key, finds, live):
    """All walkers of the share in lockstep: one model call per step.

    The buffers every step reuses are checked once here, at the phase boundary
    (:func:`fairlens.maft._kcall.check_phase`); what changes per step (the scores, the
    refreshed walkers' rows and gradients) is checked at every step with the O(1)
    :func:`~fairlens.maft._kcall.check_step`; the kernels are then called unchecked
    (``_kcall.raw``): a parallel share pays the per-step cost again, so it is kept small.
    """
    scorer, source = model.scorer, model.source
    pb = spec.problem
    G, d, C = walkers.shape[0], pb.d, pb.C
    n_local = spec.n_local
    raw = _kcall.raw
    F, I64, B = np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.bool_)
    wid = np.arange(w0, w0 + G, dtype=np.int64)
    ukey = np.uint64(key)
    X = np.ascontiguousarray(walkers, dtype=np.float64).copy()
    X0 = X.copy()
    gS = pb.similar(X0)
    gsc = scorer(gS.reshape(-1, d)).reshape(G, C)
    S_cur, sc_cur = gS.copy(), gsc.copy()
    P = np.zeros((G, d))
    P0 = np.zeros((G, d))
    suc = np.full(G, spec.update_interval, dtype=np.int64)
    is_disc = np.empty(G, dtype=np.bool_)
    pair = np.empty(G, dtype=np.int64)
    mdiff = np.empty(G, dtype=np.int64)
    attr = np.empty(G, dtype=np.int64)
    sgn = np.empty(G)
    ua = np.empty(G)
    ud = np.empty(G)
    zeros = np.zeros(G)
    combos = pb.combos
    prot_idx = pb.prot_idx
    # the phase boundary: every buffer reused at each step, checked once (its shape never changes)
    P_ = len(prot_idx)
    _kcall.check_phase("local_perturb", {
        "X": (X, F, (G, d)), "prob": (P, F, (G, d)), "u_attr": (ua, F, (G,)), "u_dir": (ud, F, (G,)),
        "lo": (pb.lo, F, (d,)), "hi": (pb.hi, F, (d,)), "attr_out": (attr, I64, (G,)), "dir_out": (sgn, F, (G,))},
        out=("X", "attr_out", "dir_out"))
    _kcall.check_phase("similar_rows", {"X": (X, F, (G, d)), "prot_idx": (prot_idx, I64, (P_,)),
                                        "combos": (combos, F, (C, P_))})
    _kcall._check_index("similar_rows", "prot_idx", prot_idx, d)
    _kcall.check_phase("check_discrimination", {
        "u_pair": (zeros, F, (G,)), "is_disc": (is_disc, B, (G,)), "pair_idx": (pair, I64, (G,)),
        "maxdiff_idx": (mdiff, I64, (G,))}, out=("is_disc", "pair_idx", "maxdiff_idx"))
    _kcall.check_phase("stream_fill", {"walkers": (wid, I64, (G,)), "out": (ua, F, (G,))}, out=("out",))
    _kcall.check_phase("stream_fill", {"out": (ud, F, (G,))}, out=("out",))
    _kcall.check_phase("local_commit", {
        "X0": (X0, F, (G, d)), "P0": (P0, F, (G, d)), "suc": (suc, I64, (G,)), "S_cur": (S_cur, F, (G, C, d)),
        "sc_cur": (sc_cur, F, (G, C)), "gS": (gS, F, (G, C, d)), "gsc": (gsc, F, (G, C))},
        out=("suc", "S_cur", "sc_cur"))
    # the found rows in one kernel per step when every row is one int64 key
    fast_finds = bool(getattr(finds, "codec", None) is not None and finds.codec.packed and finds.set.k == 1)
    if fast_finds:
        _kcall.check_phase("finds_add", {
            "prot_idx": (finds.prot_idx, I64, (P_,)), "lo": (finds.codec.lo, F, (d,)),
            "mult": (finds.codec.mult, I64, (d,)), "cp": (finds.cp.a, F, (None, P_))})
        _kcall._check_index("finds_add", "prot_idx", finds.prot_idx, d)
    _kcall.check_phase("normalized_probability", {"free": (pb.free, B, (d,))})
    _kcall._check_any_free("normalized_probability", pb.free)
    if G and (wid[0] < 0):
        raise ValueError("stream_fill: argument walkers holds negative walker ids")
    tries = 0
    for it in range(n_local):
        ref = np.flatnonzero(suc >= spec.update_interval)
        if ref.size:
            m = ref.size
            wr = wid[ref]
            u = np.empty(m)
            raw.stream_fill(ukey, wr, stream_counter(it, _SLOT_PAIR), u)  # wr, u: (m,) made here
            scr = np.ascontiguousarray(sc_cur[ref])  # (m, C) float64, made here
            raw.check_discrimination(scr, u, is_disc[:m], pair[:m], mdiff[:m])
            x1 = X[ref]
            x2 = S_cur[ref, pair[:m]]
            Gd = np.ascontiguousarray(source(np.concatenate([x1, x2])))
            _kcall.check_step("normalized_probability", "g", Gd, F, (2 * m, d))
            Pr = np.empty((m, d))
            raw.normalized_probability(np.ascontiguousarray(Gd[:m]), np.ascontiguousarray(Gd[m:]), pb.free,
                                       float(spec.epsilon), Pr)
            if not np.all((Pr > 0).any(axis=1)):  # P's rows come only from here: local_perturb needs one > 0
                raise ValueError("local_perturb: every row of prob needs a positive entry")
            P[ref] = Pr
            if it == 0:
                P0[:] = P
            suc[ref] = 0
        suc += 1
        raw.stream_fill(ukey, wid, stream_counter(it, _SLOT_ATTR), ua)
        raw.stream_fill(ukey, wid, stream_counter(it, _SLOT_DIR), ud)
        raw.local_perturb(X, P, (ua, ud), float(spec.local_step), (pb.lo, pb.hi), (attr, sgn))
        S = np.empty((G, C, d))  # (G, C, d) float64, made here
        if G and raw.similar_rows(X, prot_idx, combos, S):
            raise ValueError("rows have protected values outside the protected attributes' domain; "
                             "rows must lie within dataset.bounds.")
        sc = scorer(S.reshape(-1, d)).reshape(G, C)
        _kcall.check_step("check_discrimination", "scores", sc, F, (G, C))
        live.explore(X)
        raw.check_discrimination(sc, zeros, is_disc, pair, mdiff)
        ok = is_disc
        tries += G
        if fast_finds:
            finds.add_step(ok, X, S, sc, wid * n_local + it)  # (G,) int64, made here
        elif ok.any():
            finds.add(X[ok], S[ok], sc[ok], wid[ok] * n_local + it)
        # keep the new instance, or go back to the global one (S: (G, C, d) made above)
        raw.local_commit(ok, (S, sc), (X, P, suc, S_cur, sc_cur), (X0, P0, gS, gsc))
        if live.tick("local", it + 1, n_local):
            break
    return tries


def local_reference(spec, model, walkers, w0, key, finds, live):
    """One walker at a time, literally as Algorithm 4 is printed."""
    scorer, source = model.scorer, model.source
    pb = spec.problem
    ui = spec.update_interval
    n_local = spec.n_local
    tries = 0
    for i, x_start in enumerate(walkers):
        w = w0 + i
        x = x_start.copy()
        x0 = x_start.copy()
        prob = prob0 = None
        suc_iter = ui
        for it in range(n_local):
            if suc_iter >= ui:
                S, sc = score_similar(pb, scorer, x)
                differ = np.flatnonzero((sc[1:] > 0.5) != (sc[0] > 0.5)) + 1
                u = stream_uniform(key, [w], it, _SLOT_PAIR)[0]
                k = min(int(u * differ.size), differ.size - 1)
                x2 = S[differ[k]]
                grad1 = source(x[None, :])[0]
                grad2 = source(x2[None, :])[0]
                inv = np.where(pb.free, 1.0 / (np.abs(grad1) + np.abs(grad2) + spec.epsilon), 0.0)
                prob = inv / inv.sum()
                if prob0 is None:
                    prob0 = prob.copy()
                suc_iter = 0
            suc_iter += 1
            ua = stream_uniform(key, [w], it, _SLOT_ATTR)[0]
            ud = stream_uniform(key, [w], it, _SLOT_DIR)[0]
            cum = np.cumsum(prob)
            above = np.flatnonzero(cum > ua)
            a = int(above[0]) if above.size else int(np.flatnonzero(prob > 0)[-1])
            s = -1.0 if ud < 0.5 else 1.0
            x[a] = x[a] + s * spec.local_step
            x = np.minimum(pb.hi, np.maximum(pb.lo, x))
            tries += 1
            live.explore(x[None, :])
            S, sc = score_similar(pb, scorer, x)
            if np.any((sc[1:] > 0.5) != (sc[0] > 0.5)):
                finds.add(x[None, :].copy(), S[None], sc[None], [w * n_local + it])
            else:
                x = x0.copy()
                prob = prob0.copy()
                suc_iter = 0
        if live.tick("local", i + 1, walkers.shape[0]):
            break
    return tries


def _init_probs(problem):
    d = problem.d
    pp = np.where(problem.free, 1.0, 0.0)
    return pp / pp.sum(), np.full(d, 0.5)


def _groups(wid):
    """``[(start, stop), ...]`` of the walkers sharing probabilities (global ids // BLOCK_SIZE)."""
    g = wid // BLOCK_SIZE
    edges = np.concatenate([[0], np.flatnonzero(np.diff(g)) + 1, [wid.size]])
    return [(int(a), int(e)) for a, e in zip(edges[:-1], edges[1:])]


def aequitas_local_lockstep(spec, model, walkers, w0, key, finds, live):
    """AEQUITAS's local phase, every walker of the share in lockstep (probabilities updated after
    each step in walker order)."""
    scorer = model.scorer
    pb = spec.problem
    G, d, C = walkers.shape[0], pb.d, pb.C
    n_local = spec.n_local
    wid = np.arange(w0, w0 + G, dtype=np.int64)
    ranges = _groups(wid)
    probs = [_init_probs(pb) for _ in ranges]  # adaptive probabilities, shared within a group
    X = walkers.copy()
    attr = np.empty(G, dtype=np.int64)
    sgn = np.empty(G)
    tries = 0
    for it in range(n_local):
        ua = stream_uniform(key, wid, it, _SLOT_ATTR)
        ud = stream_uniform(key, wid, it, _SLOT_DIR)
        ue = stream_uniform(key, wid, it, _SLOT_EDGE)
        for (s, e), (pp, dp) in zip(ranges, probs):
            _kcall.aequitas_perturb(X[s:e], (pp, dp), (ua[s:e], ud[s:e], ue[s:e]), spec.local_step, (pb.lo, pb.hi),
                                    (attr[s:e], sgn[s:e]))
        S = pb.similar(X)
        sc = scorer(S.reshape(-1, d)).reshape(G, C)
        live.explore(X)
        ok = np.any((sc[:, 1:] > 0.5) != (sc[:, :1] > 0.5), axis=1)
        tries += G
        if ok.any():
            finds.add(X[ok], S[ok], sc[ok], wid[ok] * n_local + it)
        X[~ok] = walkers[~ok]
        for (s, e), (pp, dp) in zip(ranges, probs):
            _kcall.aequitas_update(pp, dp, attr[s:e], sgn[s:e], ok[s:e], spec.change_size, spec.change_size,
                                   spec.local_step)
        if live.tick("local", it + 1, n_local):
            break
    return tries


def aequitas_local_reference(spec, model, walkers, w0, key, finds, live):
    """AEQUITAS's local phase one walker at a time (probabilities updated after each iteration)."""
    scorer = model.scorer
    pb = spec.problem
    cs = spec.change_size
    n_local = spec.n_local
    probs = {}
    tries = 0
    for i, x_start in enumerate(walkers):
        w = w0 + i
        if w // BLOCK_SIZE not in probs:
            probs[w // BLOCK_SIZE] = _init_probs(pb)
        pp, dp = probs[w // BLOCK_SIZE]
        x = x_start.copy()
        for it in range(n_local):
            ua = stream_uniform(key, [w], it, _SLOT_ATTR)[0]
            ud = stream_uniform(key, [w], it, _SLOT_DIR)[0]
            ue = stream_uniform(key, [w], it, _SLOT_EDGE)[0]
            above = np.flatnonzero(np.cumsum(pp) > ua)
            a = int(above[0]) if above.size else int(np.flatnonzero(pp > 0)[-1])
            s = -1.0 if ud < dp[a] else 1.0
            if x[a] == pb.lo[a] or x[a] == pb.hi[a]:
                s = -1.0 if ue < 0.5 else 1.0
            x[a] = min(pb.hi[a], max(pb.lo[a], x[a] + s * spec.local_step))
            tries += 1
            live.explore(x[None, :])
            S, sc = score_similar(pb, scorer, x)
            ok = bool(np.any((sc[1:] > 0.5) != (sc[0] > 0.5)))
            if ok:
                finds.add(x[None, :].copy(), S[None], sc[None], [w * n_local + it])
            else:
                x = x_start.copy()
            if (ok and s < 0) or (not ok and s > 0):
                dp[a] = min(dp[a] + cs * spec.local_step, 1.0)
            else:
                dp[a] = max(dp[a] - cs * spec.local_step, 0.0)
            pp[a] = pp[a] + cs if ok else max(pp[a] - cs, 0.0)
            pp /= pp.sum()
        if live.tick("local", i + 1, walkers.shape[0]):
            break
    return tries


def gradient_local_rows(spec, walkers):
    """At most how many model rows the lockstep local phase of ``walkers`` walkers scores: their
    similar sets once at the start and at each of the ``n_local`` steps (``C`` rows each), and
    the gradients at a walker and its partner at every refresh (``2 x spec.gradient_rows``), at
    most ``1 + (n_local - 1) // update_interval`` of them (a refresh needs ``update_interval``
    successes in a row).  A walker that fails refreshes less; if every step succeeds a run scores
    exactly this."""
    n = int(spec.n_local)
    refreshes = 0 if n == 0 else 1 + (n - 1) // int(spec.update_interval)
    return float(walkers) * (spec.problem.C * (n + 1) + 2 * spec.gradient_rows * refreshes)


def aequitas_local_rows(spec, walkers):
    """The rows AEQUITAS's local phase scores: every walker's similar set at each step."""
    return float(walkers) * spec.problem.C * spec.n_local


def gradient_local_calls(spec):
    """At least how many model calls the lockstep local phase makes, whatever its share of the
    walkers: one a step (the similar sets at the start and at each of ``n_local`` steps)."""
    return int(spec.n_local) + 1


def aequitas_local_calls(spec):
    """At least how many model calls AEQUITAS's local phase makes: one a step."""
    return int(spec.n_local)


def share_cap(mine, walkers, total):
    """The most keys the new row sets of a share of ``walkers`` of the phase's ``total`` walkers are
    pre-sized for: :data:`~fairlens.maft._state.PRESIZE_KEYS` for the share this process works
    (``mine``: its found set becomes the run's, which every share's rows go into), that cap times
    the share's fraction of the walkers for a worker's share, whose sets hold its own rows only.

    A set that needs more grows (the same keys, in the same order).  Why: a set's slot table is
    fresh memory, whose first touch is costly on some virtual machines (about 0.8 ms per MB on a
    2-vCPU Firecracker guest): a forked share's first inserts into its two sets at the full cap
    (16 MB and 8 MB) took 6-81 ms, and census 1000 x 1000 at ``n_jobs=2`` ran 0.04-0.10 s faster
    per call with the sets scaled to the share (``benchmarks/README.md``, round fifteen)."""
    if mine or total <= 0:
        return PRESIZE_KEYS
    return max(1024, int(PRESIZE_KEYS * min(1.0, walkers / total)))


def local_task(payload, share):
    """A parallel task: the local phase of the walkers ``share = (start, stop)``.

    The share this process works itself (:func:`~fairlens.maft._plan.own_share`) stops with the run, adds its explored
    rows straight to the run's set and returns its found-row set, so that this process does not
    copy and re-insert them (about 10 ms of a census 1000 x 1000 run)."""
    a, e = share
    spec = payload.spec
    here = own_share(payload, share)
    mine = here is not None
    cap = share_cap(mine, e - a, payload.walkers.shape[0])
    with _blas_limit(spec.blas_threads):
        model = spec.open_model()
        live = Live(payload.codec, spec.track_explored, capacity=(e - a) * spec.n_local * spec.problem.C,
                    stop=here and here.stop, explored=here and here.explored, cap=cap)
        finds = Finds(payload.codec, spec.problem.prot_idx, payload.exclude, capacity=(e - a) * spec.n_local,
                      cap=cap)
        tries = local_phase(spec, model, payload.walkers[a:e], a, payload.key, finds, live)
    found = finds.pack()
    found.order = None  # already in order; the parent needs keys, counterparts and scores only
    return ShareOutcome(queries=model.queries, calls=model.calls, explored=None if mine else live.explored_keys(),
                        found=found, tries=tries, found_set=finds.set if mine else None)


class _StandIn:
    """The model and gradient source of :func:`load_local_kernels`: of every ``C`` consecutive
    rows (a row's similar set) the first scores 0.25 and the others 0.75, so that every row
    discriminates; every gradient is ones."""

    def __init__(self, C):
        self.C = int(C)

    def __call__(self, X):
        return np.where(np.arange(X.shape[0]) % self.C == 0, 0.25, 0.75)

    @staticmethod
    def gradient(X):
        return np.ones(X.shape)


def load_local_kernels(spec, walkers, codec, key):
    """Load (from numba's cache, or compile) every kernel the local phase of ``spec`` calls, by
    walking one walker (``walkers[:1]``) one step through the same code on a stand-in model and
    gradient source (:class:`_StandIn`): neither the user's model nor a gradient callable is
    called, and nothing is counted.

    A share forked from this process afterwards (``run_chunks(fork_safe=True)``) inherits the
    kernels instead of loading them again: on a first call in a fresh process, the forked share
    loaded the local kernels itself (about 70 ms of CPU on a 2-vCPU guest), while this process
    loaded them for its own share.  Every later call finds them loaded."""
    if walkers.shape[0] == 0 or spec.n_local == 0:
        return
    import dataclasses

    stand_in = _StandIn(spec.problem.C)
    one = dataclasses.replace(spec, n_local=1)
    model = ModelCalls(CountingScorer(stand_in), None if spec.source is None else stand_in.gradient)
    live = Live(codec, spec.track_explored, capacity=spec.problem.C)
    finds = Finds(codec, spec.problem.prot_idx, capacity=1)
    local_phase(one, model, np.array(walkers[:1]), 0, key, finds, live)
    finds.pack()
    live.explored_keys()


def run_local(run, walkers, gkeys, key, rows):
    """Algorithm 4 for every unique global instance (``walkers``, keys ``gkeys``) of the run (a
    :class:`~fairlens.maft._state.RunState`; ``key``: its random streams' key): here, or in
    lockstep shares on the workers.  Each share's unique rows are decoded into ``rows`` (a
    :class:`~fairlens.maft._state.Rows`) as it is merged; returns the
    :class:`~fairlens.maft._state.LocalPhase`."""
    spec = run.spec
    G = walkers.shape[0]
    plan = plan_phase("local", spec.walks.local_rows(spec, G), run.workers, calls=spec.walks.local_calls(spec),
                      costs=lambda m: call_costs(run.model.scorer.scorer, walkers, m))
    if plan.note:
        run.notes.append(plan.note)
    shares = cuts(G, plan.workers, spec.walks.align)
    if plan.workers > 1 and len(shares) <= 1:
        run.notes.append(f"local phase in this process: its {G:,} walker(s) make one share (shares start at "
                         f"multiples of {spec.walks.align} walkers)")
    if len(shares) <= 1:
        finds = Finds(run.codec, spec.problem.prot_idx, gkeys, capacity=G * spec.n_local)
        n_global = G
        run.live.count = lambda: n_global + len(finds)
        tries = local_phase(spec, run.model, walkers, 0, key, finds, run.live)
        run.stopped = run.live.stopped
        found = finds.pack()
        rows.add(found.keys, found.cp)
        return LocalPhase(found=[found], tries=tries)
    if spec.replay is not None:  # the share sent is forked from this process (run_shares): it inherits them
        load_local_kernels(spec, walkers, run.codec, key)
    payload = Payload(spec=spec.for_workers(), walkers=walkers, codec=run.codec, exclude=gkeys, key=key)
    # the share this process works stops with the run, adds its explored rows to the run's set
    # and hands over its found-row set (``local_task``, ``own_share``)
    payload._here = OwnShare(shares[0], run.explored, run.stop)
    merged = []  # the run's set of local rows (this process's share's own set, when it comes first)

    def merge(i, o):
        # linear: a row found by two shares is kept at its first place (shares arrive in order,
        # the first one may be this process's); each share's rows are then decoded into place
        own, o.found_set = o.found_set, None
        if not merged and own is not None:
            merged.append(own)  # this process's share, the first: all its rows are new
        else:
            if not merged:
                merged.append(KeySet(run.codec.k, presize(G * spec.n_local)))
            keep = merged[0].index(o.found.keys)[1]
            if not keep.all():
                o.found = o.found.keep(keep)
        a, e = shares[i]
        n = len(o.found)
        rows.add(o.found.keys, o.found.cp, reserve=1.25 * n * (G - e) / max(1, e - a))

    outs, marks, stopped = run_shares(run, local_task, payload, shares, "local", merge)
    run.stopped = stopped
    return LocalPhase(found=[o.found for o in outs], tries=int(sum(o.tries for o in outs)), marks=marks)
