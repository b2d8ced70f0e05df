"""Where the phases of a two-phase search run: the parallel plan and its execution.

A phase (the global walk of the seeds, the local walk of the unique global instances) runs in
this process, in lockstep, or in ``n_jobs`` contiguous shares of its walkers: this process works
the first share while the workers run the others (``run_chunks(share_here=True)``), and each
share's outcome is merged as soon as it arrives.  A phase too small to gain runs here
(:data:`MIN_PARALLEL_ROWS`), and so does one whose model costs mostly per call, which no cut of
the walkers reduces (:data:`MIN_PARALLEL_GAIN`, probed by :func:`call_costs`); the result says so
(``params["parallel"]``).  Where a phase runs never changes the answer: each walker's random
numbers depend only on its global id.  A model scored through its exact replay
(:class:`~fairlens.maft._utils.MLPReplay`: arrays, no user code) lets the share sent run in a process
forked from this one (``run_chunks(fork_safe=True)``: no worker start-up, nothing shipped but the
result); any other model's share goes to a loky worker.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .._parallel import run_chunks

__all__ = ["MIN_PARALLEL_ROWS", "MIN_PARALLEL_GAIN", "PROBE_ROWS", "Plan", "plan_phase", "call_costs", "cuts",
           "own_share", "run_shares"]

#: Below this many model rows (an upper bound of a phase's work: every similar instance and every
#: gradient row its walkers can score, :class:`~fairlens.maft._state.Walks`' ``global_rows`` and
#: ``local_rows``) a phase runs in this process even when ``n_jobs`` asks for workers: starting
#: the tasks and shipping the model would cost more than the work (measured in
#: ``benchmarks/scale.py``).  The result says so (``params["parallel"]``).
MIN_PARALLEL_ROWS = 1_000_000

#: A phase big enough in rows still runs in this process when its shares would gain less than this
#: factor in model time.  Shares cut the walkers, so each share makes as many model calls as the
#: whole phase (one per lockstep step) with fewer rows each: a model whose fixed cost per call
#: dominates (a Keras model called eagerly: about 11 ms per call against 1 us per row on census)
#: gains nothing from workers and pays their start-up and a second process's CPU.  The costs are
#: probed on the model itself (:func:`call_costs`); the result says so (``params["parallel"]``).
MIN_PARALLEL_GAIN = 1.3

#: The most rows :func:`call_costs` scores in one probe call.
PROBE_ROWS = 4096


@dataclass(frozen=True)
class Plan:
    """How one phase runs.

    Attributes
    ----------
    workers : int
        Processes that work a share each (1: the whole phase in this process).
    note : str
        Why the phase falls back to this process although workers were asked for ("" when it
        runs as asked).
    """

    workers: int
    note: str = ""


def plan_phase(phase, rows, workers, calls=None, costs=None):
    """The :class:`Plan` of one phase: ``workers`` shares, or this process alone when the phase
    (at most ``rows`` model rows, its similar instances and gradients) is too small to gain from
    them, or when the model's fixed cost per call leaves the shares little to gain.

    ``calls`` is the phase's number of model calls in lockstep (each share makes as many) and
    ``costs(m)`` returns the model's ``(seconds per call, seconds per row)`` probed on ``m`` rows, the
    phase's rows per call up to :data:`PROBE_ROWS` (:func:`call_costs`); it is asked only when the
    rows alone would send the phase to the workers.
    The estimated gain in model time is ``(calls a + rows b) / (calls a + rows b / workers)``; below
    :data:`MIN_PARALLEL_GAIN` the phase runs here, and the note says why."""
    if workers <= 1:
        return Plan(1)
    if rows < MIN_PARALLEL_ROWS:
        return Plan(1, f"{phase} phase in this process: at most {rows:,.0f} model rows (similar instances "
                       f"and gradients), below MIN_PARALLEL_ROWS={MIN_PARALLEL_ROWS:,} (too small to gain from "
                       f"{workers} workers)")
    if calls and costs is not None:
        # the slope per row is measured on at most PROBE_ROWS rows (the probe stays cheap beside the phase)
        per_call, per_row = costs(max(1, min(int(rows / calls), PROBE_ROWS)))
        alone = calls * per_call + rows * per_row
        gain = alone / (calls * per_call + rows * per_row / workers)
        if gain < MIN_PARALLEL_GAIN:
            return Plan(1, f"{phase} phase in this process: the model costs {1e3 * per_call:.2f} ms per call and "
                           f"{1e6 * per_row:.2f} us per row (probed), and each of {workers} shares would make the "
                           f"same {calls:,} calls with fewer rows: an estimated {gain:.2f}x, below "
                           f"MIN_PARALLEL_GAIN={MIN_PARALLEL_GAIN:g} (a model that scores many rows per call "
                           f"at a lower fixed cost gains from workers)")
    return Plan(workers)


def call_costs(score, rows, m, repeat=3):
    """``(seconds per call, seconds per row)`` of ``score`` (an ``(n, d) -> (n,)`` scorer), from the
    fastest of ``repeat`` calls on 1 row and on ``m`` rows (``rows`` repeated to ``m``; a fresh array
    for each call).  Only where a phase runs depends on it, never the answer."""
    rows = np.asarray(rows, dtype=np.float64)
    m = max(2, int(m))

    def fastest(n):
        best = float("inf")
        for _ in range(repeat):
            X = np.resize(rows, (n, rows.shape[1]))
            t = time.perf_counter()
            score(X)
            best = min(best, time.perf_counter() - t)
        return best

    one, many = fastest(1), fastest(m)
    per_row = max(0.0, (many - one) / (m - 1))
    return max(0.0, one - per_row), per_row


def cuts(n, parts, align=1):
    """``[(start, stop), ...]``: ``range(n)`` in at most ``parts`` contiguous shares whose
    boundaries are multiples of ``align``."""
    units = -(-n // align)
    parts = max(1, min(parts, units))
    edges = [min(n, align * round(units * i / parts)) for i in range(parts + 1)]
    return [(a, e) for a, e in zip(edges[:-1], edges[1:]) if e > a]


def own_share(payload, share):
    """What this process hands the share it works itself (``payload._here``, an
    :class:`~fairlens.maft._state.OwnShare`: the run's explored set and stop test), or None for a
    worker's share.  ``_here`` never travels to a worker (:class:`fairlens._parallel.Payload`
    ships no ``_here`` attribute), and a share run in a thread of this process (threading or
    in-process dask backends) is told apart by its bounds."""
    here = payload.__dict__.get("_here")
    return here if here is not None and tuple(here.share) == tuple(share) else None


def run_shares(run, task, payload, shares, phase, merge=None):
    """Run ``task(payload, share)`` on ``shares`` for the run ``run`` (a
    :class:`~fairlens.maft._state.RunState`); each share's outcome is merged as soon as it
    arrives (its model rows and explored rows into ``run``, ``merge(index, outcome)`` for the
    rest), while the other workers still run.

    Returns
    -------
    (list, list, bool)
        The outcomes (a prefix of the shares, in share order), ``(elapsed, done)`` marks as
        tasks finished, and whether the run stopped before every share was done.
    """

    marks = []

    def on_task(done, total):
        el = time.perf_counter() - run.t0
        marks.append((el, done))
        if run.report is not None:
            run.report("tasks", done, total)
        if run.callback is not None:
            run.callback({"phase": "tasks", "step": done, "total": total, "n_global": None, "n_total": None,
                          "elapsed": el})

    def on_result(i, o):
        run.merge(o)
        if merge is not None:
            merge(i, o)

    info = {}
    # this process works the first share (no round trip for it) and merges it while the
    # workers still run: n_jobs processes compute, this one among them.  A replayed model
    # (arrays only, no user code in the task) lets the share sent run in a forked child
    outs = run_chunks(task, payload, shares, n_jobs=run.n_jobs, stop=run.stop, progress=on_task,
                      on_result=on_result, info=info, share_here=True, fork_safe=run.spec.replay is not None)
    where = "processes (this one works the first)" if info.get("share_here") else "workers"
    if info.get("forked"):
        where = "processes (this one works the first), the other forked from it"
    run.notes.append(f"{phase} phase on {len(shares)} {where}")
    return outs, marks, len(outs) < len(shares)
