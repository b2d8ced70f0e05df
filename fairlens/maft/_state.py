"""The state of one run of a two-phase search, typed.

Nothing here is stored on a searcher: a run builds these objects, hands them to its phases
(:mod:`fairlens.maft._global`, :mod:`fairlens.maft._local`) and to its workers' tasks, and
assembles the result from them.

* :class:`SearchSpec` -- one run's configuration, what its phases read here and in the workers
  (with :class:`Walks`, the method's phases).
* :class:`RunState` -- what one run accumulates in this process (model rows, calls, notes on
  where each phase ran, whether it stopped), with the context every phase reads (the counted
  model, the progress, the stop test).
* :class:`ModelCalls` -- a counted model (and its gradient source) for one process.
* :class:`Live` -- one share's progress, stop test and explored rows.
* :class:`GlobalHits` (and its :class:`HitRecorder`) -- the global phase's discoveries.
* :class:`Finds` and :class:`FoundRows` -- the local phase's discoveries of one share;
  :class:`LocalPhase` -- those of every share.
* :class:`Rows` -- the run's instances and counterparts, decoded once into the result's arrays.
* :class:`ShareOutcome` -- what one share (a task) hands back; :class:`OwnShare` -- what this
  process hands the share it works itself.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Optional

import numpy as np

from . import _kcall
from ._utils import CountingScorer, KeySet, RowCodec

__all__ = ["SearchSpec", "Walks", "RunState", "ModelCalls", "Live", "GlobalHits", "HitRecorder", "Finds",
           "FoundRows", "LocalPhase", "Rows", "OwnShare", "ShareOutcome", "counterpart"]


def counterpart(S, sc):
    """Differing-label similar instance with the largest score gap (per walker)."""
    y0 = sc[:, :1] > 0.5
    differ = (sc[:, 1:] > 0.5) != y0
    gap = np.where(differ, np.abs(sc[:, 1:] - sc[:, :1]), -1.0)
    j = 1 + np.argmax(gap, axis=1)
    r = np.arange(S.shape[0])
    return S[r, j], sc[r, j]


#: Most keys a row set is pre-sized for (its upper bound of rows, capped): growing a hash set by
#: doubling re-inserts every key once more, but a table sized for the upper bound is mostly empty
#: (census 1000 x 1000: 384,632 explored rows of a 1.5 M bound) and its fresh pages cost page
#: faults on first touch (a 64 MB table: ~0.1 s, as much as all the inserts).  2^19 keys is a
#: 16 MB slot table (``KeySet``: 16 bytes a slot, load <= 1/2; 8 MB for the membership-only set of
#: explored rows).  The found rows' set too: census 1000 x 1000 finds 322,256 local rows, and a set
#: pre-sized for 2^15 keys grew four times on the way (0.03-0.08 s: 1.31-1.39 s against 1.30 s).
PRESIZE_KEYS = 1 << 19


def presize(bound, extra=0, cap=PRESIZE_KEYS):
    """Initial capacity of a row set: its upper bound of keys (``bound + extra``), capped at
    ``cap`` (default :data:`PRESIZE_KEYS`; or at ``extra``, the keys inserted up front, if more)."""
    extra = int(extra)
    if bound is None:
        return 1024 + extra
    return int(min(max(1024, float(bound) + extra), max(int(cap), extra)))


class Grow:
    """A growable array (amortised doubling) of rows of a fixed trailing shape."""

    def __init__(self, shape=(), dtype=np.float64, capacity=256):
        self.a = np.empty((capacity,) + tuple(shape), dtype=dtype)
        self.n = 0

    def reserve(self, m):
        """Room for ``m`` more rows without growing."""
        if self.n + m > self.a.shape[0]:
            cap = self.a.shape[0]
            while cap < self.n + m:
                cap *= 2
            a = np.empty((cap,) + self.a.shape[1:], dtype=self.a.dtype)
            a[: self.n] = self.a[: self.n]
            self.a = a

    def extend(self, v):
        m = v.shape[0]
        self.reserve(m)
        self.a[self.n : self.n + m] = v
        self.n += m

    @property
    def view(self):
        return self.a[: self.n]


def order_permutation(order):
    """``np.argsort(order, kind="stable")`` of a share's order keys, by direct addressing.

    A share's order keys (``walker * n_local + iteration``) are distinct (a walker finds at most
    one row per iteration) and lie in a range of ``walkers x n_local``: one scatter into a table
    of that range and one compaction give the sorted permutation in O(n + range) (census 1000 x
    1000, a 161,000-row share: about 2 ms against 5 ms for timsort).  Used when the range is at
    most 8 times the count; else, or if two keys were ever equal, the argsort."""
    n = order.shape[0]
    if n:
        lo = int(order.min())
        span = int(order.max()) - lo + 1
        if span <= 8 * n + 4096 and span < 2**31:
            slot = np.full(span, -1, dtype=np.int32)
            slot[order - lo] = np.arange(n, dtype=np.int32)
            o = slot[slot >= 0]
            if o.shape[0] == n:  # distinct keys: this is the (unique) sorted permutation
                return o
    return np.argsort(order, kind="stable")


class Finds:
    """The local discoveries of one share of walkers, de-duplicated, in canonical order.

    A row is kept once with its counterpart's protected values, both scores and its *order
    key* ``walker * n_local + iteration`` -- the smallest over its occurrences, i.e. the
    place Algorithm 4 (walker after walker) finds it first.  Rows in ``exclude`` (the run's
    global instances) are not kept.  Keys are one int64 per row on an integer grid
    (:class:`~fairlens.maft._utils.RowCodec`), so the hash set stays off the hot path.  The set
    is pre-sized for ``capacity`` keys, at most ``cap`` (:func:`presize`).
    """

    def __init__(self, codec, prot_idx, exclude=None, capacity=None, cap=PRESIZE_KEYS):
        self.codec = codec
        self.prot_idx = prot_idx
        n_ex = 0 if exclude is None else len(exclude)
        self.set = KeySet(codec.k, presize(capacity, n_ex, cap))
        if exclude is not None and len(exclude):
            self.set.index(exclude)
        self.n_pre = len(self.set)
        self.cp = Grow((len(prot_idx),))
        self.s1 = Grow()
        self.s2 = Grow()
        self.order = Grow(dtype=np.int64)

    def __len__(self):
        return len(self.set) - self.n_pre

    def add(self, X, S, sc, order):
        """Record the discriminatory rows ``X`` (similar sets ``S``, scores ``sc``) found at
        ``order`` (one order key per row)."""
        if X.shape[0] == 0:
            return
        pos, new = self.set.index(self.codec.keys(X))
        if new.any():
            cpx, cps = counterpart(S[new], sc[new])
            self.cp.extend(cpx[:, self.prot_idx])
            self.s1.extend(sc[new, 0])
            self.s2.extend(cps)
            self.order.extend(np.asarray(order, dtype=np.int64)[new])
        dup = ~new & (pos >= self.n_pre)
        if dup.any():
            np.minimum.at(self.order.a, pos[dup] - self.n_pre, np.asarray(order, dtype=np.int64)[dup])

    def add_step(self, ok, X, S, sc, order_key):
        """:meth:`add` for one lockstep step, in one kernel (rows on the integer grid, one int64
        key each): the rows ``X[ok]`` with their similar sets ``S[ok]`` and scores ``sc[ok]`` at
        ``order_key[ok]``.  The same rows, counterparts, scores and order keys as :meth:`add`.

        The arguments' shapes are the caller's phase buffers (checked once per phase by
        ``local_lockstep``); the set and the growable arrays are this object's own, given room
        for ``len(ok)`` more rows here, so the kernel is called unchecked."""
        W = ok.shape[0]
        self.set.reserve(W)
        for g in (self.cp, self.s1, self.s2, self.order):
            g.reserve(W)
        n_found = len(self)
        st = self.set
        st.n, n_found = _kcall.raw.finds_add((ok, X, S, sc, order_key), (self.prot_idx, self.codec.lo, self.codec.mult),
                                             (st._table, st._store), (self.cp.a, self.s1.a, self.s2.a, self.order.a),
                                             (st.n, self.n_pre, n_found))
        for g in (self.cp, self.s1, self.s2, self.order):
            g.n = n_found

    def pack(self):
        """The rows found, compact and sorted by order key (a :class:`FoundRows`)."""
        o = order_permutation(self.order.view)
        return FoundRows(keys=self.set.keys[self.n_pre :][o], cp=self.cp.view[o], s1=self.s1.view[o],
                         s2=self.s2.view[o], order=self.order.view[o])


class Rows:
    """The run's instances and counterparts, each row written once into the result's arrays:
    the global instances (the walkers) first, then every share's unique local rows, decoded
    from their keys as the share is merged (:meth:`add`, in share order).

    With several processes the share this process works is decoded while the workers still
    run, instead of after the last share (``reserve`` makes room for the shares still to come;
    the arrays grow or shrink in place, ``ndarray.resize``, at most once more each).  Growing in
    place (``realloc``, small pages, zero-filled by numpy) costs about 20 ms per 35 MB here and
    never more; new ``np.empty`` arrays of that size get huge pages (5 ms in a fresh process)
    but took 47-101 ms in most runs of a long session on this VM (``benchmarks/README.md``,
    round seven)."""

    def __init__(self, walkers, cp_global, prot_idx, codec):
        n, d = walkers.shape
        self.codec, self.prot_idx, self.n = codec, prot_idx, n
        self.X = np.empty((n, d))
        self.CP = np.empty((n, d))
        self.X[:] = walkers
        self.CP[:] = walkers
        self.CP[:, prot_idx] = cp_global

    def _room(self, rows):
        if rows != self.X.shape[0]:
            # the only references are ours (the slices handed to the decoder are gone)
            self.X.resize((rows, self.X.shape[1]), refcheck=False)
            self.CP.resize((rows, self.CP.shape[1]), refcheck=False)

    def add(self, keys, cp, reserve=0):
        """Decode the rows of ``keys`` (their counterparts' protected values ``cp``) after the
        rows so far; ``reserve``: room for about this many more rows of later shares."""
        a, m = self.n, keys.shape[0]
        if a + m > self.X.shape[0]:
            self._room(a + m + max(0, int(reserve)))
        self.codec.pairs(keys, cp, self.prot_idx, self.X[a : a + m], self.CP[a : a + m])
        self.n = a + m

    def arrays(self):
        """``(instances, counterparts)``, exactly as many rows as were added."""
        self._room(self.n)
        return self.X, self.CP


class Live:
    """One share's run-time bookkeeping: explored rows, the found count, the callback, the
    progress report and the stop test.

    Parameters
    ----------
    codec : RowCodec
        Turns rows into the keys of the explored set.
    track_explored : bool
        Keep the explored rows (else :meth:`explore` does nothing).
    callback, stop, report : callable, optional
        The run's per-step callback (a dict), stop test and progress report.
    t0 : float, optional
        The run's start (``time.perf_counter``); default now.
    capacity : int, optional
        Upper bound of the explored rows (pre-sizes a new set).
    explored : KeySet, optional
        A set to add to instead of a new one (the run's own, for the share this process works).
    cap : int, optional
        The most keys a new set is pre-sized for (:func:`presize`).
    """

    def __init__(self, codec, track_explored, *, callback=None, stop=None, t0=None, report=None, capacity=None,
                 explored=None, cap=PRESIZE_KEYS):
        self.codec = codec
        # membership only (8-byte slots) when a row is one int64 key: nobody asks where a row sits;
        # ``explored``: a set to add to (the run's own, for the share this process works)
        if not track_explored:
            self.explored = None
        elif explored is not None:
            self.explored = explored
        else:
            self.explored = KeySet(codec.k, presize(capacity, cap=cap), positions=False)
        self.count = lambda: 0
        self.n_global = 0
        self.timeline = [(0.0, 0)]
        self.callback = callback
        self.stop = stop if stop is not None else (lambda: False)
        self.t0 = time.perf_counter() if t0 is None else t0
        self.report = report
        self.stopped = False

    def explore(self, X):
        if self.explored is not None and X.shape[0]:
            self.explored.insert(self.codec.keys(X))

    def explored_keys(self):
        return self.explored.keys.copy() if self.explored is not None else np.empty((0, self.codec.k), np.int64)

    def tick(self, phase, step, total):
        el = time.perf_counter() - self.t0
        n = self.count()
        self.timeline.append((el, n))
        if self.callback is not None:
            self.callback({"phase": phase, "step": step, "total": total, "n_global": self.n_global,
                           "n_total": n, "elapsed": el})
        if self.report is not None:
            self.report(phase, step, total)
        if self.stop():
            self.stopped = True
        return self.stopped


@dataclass
class FoundRows:
    """One share's unique local instances, sorted by order key (:meth:`Finds.pack`).

    Attributes
    ----------
    keys : ndarray (n, k) int64
        The rows' keys (:class:`~fairlens.maft._utils.RowCodec`).
    cp : ndarray (n, P)
        Their counterparts' protected values.
    s1, s2 : ndarray (n,)
        The instances' and the counterparts' scores.
    order : ndarray (n,) int64 or None
        Order keys ``walker * n_local + iteration`` (None once sorted rows are all that is needed).
    """

    keys: np.ndarray
    cp: np.ndarray
    s1: np.ndarray
    s2: np.ndarray
    order: Optional[np.ndarray] = None

    def __len__(self):
        return int(self.keys.shape[0])

    def keep(self, mask):
        """The rows where ``mask`` is true (a new :class:`FoundRows`, without order keys)."""
        return FoundRows(keys=self.keys[mask], cp=self.cp[mask], s1=self.s1[mask], s2=self.s2[mask])


@dataclass
class GlobalHits:
    """The global phase's discoveries: one row per seed that reached a discriminatory instance.

    Attributes
    ----------
    idx : ndarray (n,) int64
        The seeds' indices (increasing).
    X : ndarray (n, d)
        The discriminatory instances.
    cp : ndarray (n, P)
        Their counterparts' protected values.
    s1, s2 : ndarray (n,)
        The instances' and the counterparts' scores.
    tries : int
        Global iterations made (the papers' ``try_times``).
    stopped : bool
        The phase was stopped before every seed was walked.
    """

    idx: np.ndarray
    X: np.ndarray
    cp: np.ndarray
    s1: np.ndarray
    s2: np.ndarray
    tries: int = 0
    stopped: bool = False

    @classmethod
    def concat(cls, parts, starts, shape, stopped):
        """The hits of consecutive shares of the seeds (``parts``, each share's seeds starting at
        ``starts``), in seed order; ``shape = (d, P)`` sizes the empty arrays."""
        d, P = shape
        if not parts:
            return cls(idx=np.zeros(0, np.int64), X=np.empty((0, d)), cp=np.empty((0, P)), s1=np.empty(0),
                       s2=np.empty(0), tries=0, stopped=stopped)
        return cls(idx=np.concatenate([h.idx + a for h, a in zip(parts, starts)]),
                   X=np.concatenate([h.X for h in parts]), cp=np.concatenate([h.cp for h in parts]),
                   s1=np.concatenate([h.s1 for h in parts]), s2=np.concatenate([h.s2 for h in parts]),
                   tries=int(sum(h.tries for h in parts)), stopped=stopped)


class HitRecorder:
    """The global phase's discoveries of ``W`` seeds, recorded as they happen (at most one per
    seed: a seed stops at its first discriminatory instance)."""

    def __init__(self, W, d, prot_idx):
        self.prot_idx = prot_idx
        self.hit = np.zeros(W, dtype=np.bool_)
        self.X = np.empty((W, d))
        self.cp = np.empty((W, len(prot_idx)))
        self.s1 = np.empty(W)
        self.s2 = np.empty(W)

    def record(self, rows, Xh, S, sc):
        """Seeds ``rows`` reached the instances ``Xh`` (similar sets ``S``, scores ``sc``)."""
        if rows.size:
            cpx, cps = counterpart(S, sc)
            self.hit[rows] = True
            self.X[rows] = Xh
            self.cp[rows] = cpx[:, self.prot_idx]
            self.s1[rows] = sc[:, 0]
            self.s2[rows] = cps

    def hits(self, tries):
        """The :class:`GlobalHits` so far, after ``tries`` iterations."""
        idx = np.flatnonzero(self.hit)
        return GlobalHits(idx=idx, X=self.X[idx], cp=self.cp[idx], s1=self.s1[idx], s2=self.s2[idx],
                          tries=int(tries))


@dataclass
class LocalPhase:
    """The local phase's discoveries, share after share.

    Attributes
    ----------
    found : list of FoundRows
        Each share's unique local instances (rows found by an earlier share removed), in share
        order: their concatenation is the local instances in the order Algorithm 4 finds them.
    tries : int
        Local iterations made.
    marks : list of (float, int) or None
        ``(elapsed, shares done)`` as the shares finished (parallel runs; None in one process).
    """

    found: list
    tries: int
    marks: Optional[list] = None


class OwnShare(NamedTuple):
    """What this process hands the share it works itself (``Payload._here``, never pickled).

    Attributes
    ----------
    share : tuple of int
        ``(start, stop)`` of that share: a task told these bounds is this process's own.
    explored : KeySet or None
        The run's explored set (the share adds its rows to it directly).
    stop : callable
        The run's stop test (the share stops with the run).
    """

    share: tuple
    explored: Optional[KeySet]
    stop: Callable[[], bool]


@dataclass
class ModelCalls:
    """The counted model of one process (this one, or a worker's task).

    Attributes
    ----------
    scorer : CountingScorer
        The model adapter, counting rows and calls.
    source : object or None
        The method's gradient source (zero-order, output or loss gradient; None for AEQUITAS),
        calling ``scorer``; a zero-order source counts its own rows too.
    """

    scorer: Any
    source: Any = None

    @property
    def queries(self):
        """Model rows scored so far (the gradient source's included)."""
        return int(self.scorer.rows + getattr(self.source, "rows", 0))

    @property
    def calls(self):
        """Model calls so far."""
        return int(self.scorer.calls)


@dataclass
class ShareOutcome:
    """What one share of a phase (a task, or the share this process works) hands back.

    Attributes
    ----------
    queries, calls : int
        Model rows scored and model calls made by the share.
    explored : ndarray (m, k) int64 or None
        Keys of the rows the share generated, to merge into the run's set (None when the share
        added them to it itself, or when nothing is tracked).
    hits : GlobalHits or None
        The global phase's discoveries (global phase).
    found : FoundRows or None
        The unique local instances, sorted (local phase).
    tries : int
        Local iterations made (local phase).
    found_set : KeySet or None
        The share's own de-duplication set, handed over by the share this process works (its
        rows are the first merged: no copy, no re-insertion).
    """

    queries: int
    calls: int
    explored: Optional[np.ndarray] = None
    hits: Optional[GlobalHits] = None
    found: Optional[FoundRows] = None
    tries: int = 0
    found_set: Optional[KeySet] = None


@dataclass
class RunState:
    """One run of a two-phase search as this process sees it (built by the run, never stored on
    the searcher).

    Attributes
    ----------
    spec : SearchSpec
        The run's configuration (what the phases read; shipped to the workers).
    model : ModelCalls
        This process's counted model and gradient source.
    live : Live
        Progress, stop test and the run's explored rows.
    codec : RowCodec
        Row keys of this run.
    n_jobs : int or None
        The ``n_jobs`` asked for.
    workers : int
        The workers it resolves to (1 with the reference engine).
    stop : callable
        The run's stop test.
    callback, report : callable or None
        The per-step callback (a dict) and the progress report ``(stage, done, total)``.
    t0 : float
        The run's start (``time.perf_counter``).
    seed : int
        The resolved ``random_state``.
    seeds : ndarray (n, d)
        The seeds of the global phase.
    queries, calls : int
        Model rows and calls of the workers' tasks merged so far (this process's own are added
        from ``model`` at the end).
    notes : list of str
        What ran where, one note per phase (``result.params["parallel"]``).
    stopped : bool
        The run was stopped.
    """

    spec: SearchSpec
    model: ModelCalls
    live: Live
    codec: RowCodec
    n_jobs: Optional[int]
    workers: int
    stop: Callable[[], bool]
    callback: Optional[Callable[[dict], None]]
    report: Optional[Callable[[str, int, int], None]]
    t0: float
    seed: int
    seeds: np.ndarray
    queries: int = 0
    calls: int = 0
    notes: list = field(default_factory=list)
    stopped: bool = False

    @property
    def explored(self):
        """The run's explored rows (a membership-only :class:`~fairlens.maft._utils.KeySet`), or None."""
        return self.live.explored

    def merge(self, outcome):
        """Count a share's model rows and calls and merge its explored rows into the run's set."""
        self.queries += outcome.queries
        self.calls += outcome.calls
        if self.explored is not None and outcome.explored is not None:
            self.explored.insert(outcome.explored)
        outcome.explored = None  # merged (this process's share added its rows itself): free it


class Walks(NamedTuple):
    """The phases of one search method, per engine (module-level functions: they travel to the
    workers by name).

    Attributes
    ----------
    global_lockstep, global_reference : callable
        ``f(spec, model, seeds, live) -> GlobalHits``: the global phase of the lockstep engine
        and of the literal reference.
    local_lockstep, local_reference : callable
        ``f(spec, model, walkers, w0, key, finds, live) -> tries``: the local phase of both engines.
    global_rows, local_rows : callable
        ``f(spec, walkers) -> float``: at most how many model rows the lockstep phase of that
        many walkers scores (similar instances and gradients), for the parallel plan.
    global_calls, local_calls : callable
        ``f(spec) -> int``: at least how many model calls the lockstep phase makes, whatever
        share of the walkers it runs (one a step), for the parallel plan's cost per call
        (:func:`~fairlens.maft._plan.plan_phase`).
    align : int
        Parallel shares of the local walkers start at multiples of this (AEQUITAS: the groups of
        walkers sharing its adaptive probabilities).
    """

    global_lockstep: Callable
    global_reference: Callable
    local_lockstep: Callable
    local_reference: Callable
    global_rows: Callable
    local_rows: Callable
    global_calls: Callable
    local_calls: Callable
    align: int = 1


@dataclass
class SearchSpec:
    """One run's configuration: everything its phases read, here and in the workers.

    Built by each run from the searcher (never stored on it) and shipped to the workers in its
    place (:meth:`for_workers`: no dataset, no seed pool).

    Attributes
    ----------
    method : str
        ``"MAFT"``, ``"EIDIG"``, ``"ADF"`` or ``"AEQUITAS"``.
    problem : _Problem
        The search space (:class:`fairlens.maft._problem._Problem`).
    scorer : Scorer
        The adapted model (:func:`fairlens.models.as_scorer`).
    replay : MLPReplay or None
        The exact replay of a scikit-learn MLP, checked on this run's seeds
        (:func:`fairlens.maft._utils.mlp_replay`), or None.
    source : callable or None
        ``source(counting_scorer)`` builds the method's gradient source (zero-order, output or
        loss gradient); None for a method without gradients (AEQUITAS).
    walks : Walks
        The method's global and local phases.
    gradient_rows : int
        Model rows one gradient point costs: ``d + 1`` for the zero-order estimate, 2 for a
        white-box gradient (its forward row and its gradient row), 0 without gradients.
    max_iter, n_local, global_step, local_step, decay, update_interval, epsilon
        The searcher's parameters of the same names.
    change_size : float or None
        AEQUITAS's reinforcement step (None for the other methods).
    engine : str
        ``"lockstep"`` or ``"reference"``.
    track_explored : bool
        Keep the explored rows.
    blas_threads : int or None
        BLAS thread limit in every process.
    """

    method: str
    problem: Any
    scorer: Any
    replay: Any
    source: Optional[Callable]
    walks: Walks
    gradient_rows: int
    max_iter: int
    n_local: int
    global_step: float
    local_step: float
    decay: float
    update_interval: int
    epsilon: float
    change_size: Optional[float]
    engine: str
    track_explored: bool
    blas_threads: Optional[int]

    def open_model(self):
        """A :class:`ModelCalls` for one process: the counted model (through the replay when
        there is one) and the method's gradient source on it."""
        scorer = CountingScorer(self.scorer, fast=self.replay)
        return ModelCalls(scorer, None if self.source is None else self.source(scorer))

    def for_workers(self):
        """A copy to ship to the workers: the problem without its dataset and seed pool (the
        payload ships the scorer without its dataset's rows, :class:`fairlens._parallel.Payload`),
        and no model at all when the replay scores the rows (:meth:`open_model` never calls the
        scorer then, and a fresh worker need not import the model's library)."""
        import dataclasses

        return dataclasses.replace(self, problem=self.problem.stripped(),
                                   scorer=None if self.replay is not None else self.scorer)
