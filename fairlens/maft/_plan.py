"""Where the phases of a two-phase search run: the parallel plan and its execution.

A phase (the global walk of the seeds, the local walk of the unique global instances) runs in
this process, in lockstep, or in ``n_jobs`` contiguous shares of its walkers: this process works
the first share while the workers run the others (``run_chunks(share_here=True)``), and each
share's outcome is merged as soon as it arrives.  A phase too small to gain runs here
(:data:`MIN_PARALLEL_ROWS`), and the result says so (``params["parallel"]``).  Where a phase
runs never changes the answer: each walker's random numbers depend only on its global id.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from .._parallel import run_chunks

__all__ = ["MIN_PARALLEL_ROWS", "Plan", "plan_phase", "cuts", "own_share", "run_shares"]

#: Below this many model rows (an upper bound of a phase's work: every similar instance and every
#: gradient row its walkers can score, :class:`~fairlens.maft._state.Walks`' ``global_rows`` and
#: ``local_rows``) a phase runs in this process even when ``n_jobs`` asks for workers: starting
#: the tasks and shipping the model would cost more than the work (measured in
#: ``benchmarks/scale.py``).  The result says so (``params["parallel"]``).
MIN_PARALLEL_ROWS = 1_000_000


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


def plan_phase(phase, rows, workers):
    """The :class:`Plan` of one phase: ``workers`` shares, or this process alone when the phase
    (at most ``rows`` model rows, its similar instances and gradients) is too small to gain from
    them."""
    if workers <= 1:
        return Plan(1)
    if rows < MIN_PARALLEL_ROWS:
        return Plan(1, f"{phase} phase in this process: at most {rows:,.0f} model rows (similar instances "
                       f"and gradients), below MIN_PARALLEL_ROWS={MIN_PARALLEL_ROWS:,} (too small to gain from "
                       f"{workers} workers)")
    return Plan(workers)


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
    # workers still run: n_jobs processes compute, this one among them
    outs = run_chunks(task, payload, shares, n_jobs=run.n_jobs, stop=run.stop, progress=on_task,
                      on_result=on_result, info=info, share_here=True)
    where = "processes (this one works the first)" if info.get("share_here") else "workers"
    run.notes.append(f"{phase} phase on {len(shares)} {where}")
    return outs, marks, len(outs) < len(shares)
