"""Anytime scheduling of resumable per-row searches: rows share the time in short slices.

The exhaustive search of a row (:func:`fairlens.certify._search.brute_search`) pauses after a
bounded amount of work and resumes exactly from a small state array, so a row's search can be cut
into slices without changing its answer, its witness or its evaluation count. Under a time limit
the rows are worked *least attained service first*: every row gets a short first slice, and a row
that needs more gets slices that double in size, always choosing the row that has had the least
work so far. Cheap rows therefore finish in their first slices, and a few hard rows cannot starve
the rest: when the deadline comes, the rows left unsettled are the ones that needed the most work.

The slices run on ``n_workers`` threads of this process (the kernels release the GIL), so no
worker start-up eats the deadline; results are reported as rows finish, on the calling thread.
"""
from __future__ import annotations

import heapq
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

__all__ = ["settle_rows"]


def settle_rows(step, n_rows, *, deadline=None, n_workers=1, first_work=1000, max_work=1 << 40, on_done=None,
                stop=None):
    """Run ``step`` slice by slice over ``n_rows`` resumable searches until all finish or time is up.

    Parameters
    ----------
    step : callable
        ``step(k, state, work) -> (finished, outcome, state)``: continue row ``k`` from ``state``
        (``None`` the first time) for about ``work`` units of work. Called from worker threads
        when ``n_workers > 1``; it must not share mutable state between rows.
    n_rows : int
        Number of rows, ``0 .. n_rows - 1``.
    deadline : float or None
        ``time.time()`` after which no new slice starts (a running slice finishes: slices are
        short). ``None``: run until every row is finished.
    n_workers : int
        Threads running slices at once (1: everything on the calling thread).
    first_work, max_work : int
        Work of a row's first slice, and the cap of the doubling slice size.
    on_done : callable or None
        ``on_done(k, outcome)`` on the calling thread as soon as row ``k`` finishes.
    stop : callable or None
        Zero-argument callable; when it returns True no new slice starts.

    Returns
    -------
    outcomes : list
        ``outcome`` of each finished row, ``None`` for rows left unfinished.
    attained : list of int
        Work each row received.

    Raises
    ------
    Whatever ``step`` or ``on_done`` raises, after the running slices have returned.
    """
    outcomes = [None] * n_rows
    attained = [0] * n_rows
    states = [None] * n_rows
    nxt = [int(first_work)] * n_rows
    heap = [(0, k) for k in range(n_rows)]  # (work received, row): least attained service first
    heapq.heapify(heap)

    def may_start():
        if stop is not None and stop():
            return False
        return deadline is None or time.time() < deadline

    def finish(k, res, work):
        finished, outcome, state = res
        attained[k] += work
        if finished:
            outcomes[k] = outcome
            if on_done is not None:
                on_done(k, outcome)
        else:
            states[k] = state
            nxt[k] = min(2 * nxt[k], int(max_work))
            heapq.heappush(heap, (attained[k], k))

    if n_workers <= 1:
        while heap and may_start():
            _, k = heapq.heappop(heap)
            work = nxt[k]
            finish(k, step(k, states[k], work), work)
        return outcomes, attained

    running = {}
    with ThreadPoolExecutor(max_workers=int(n_workers), thread_name_prefix="fairlens-certify") as pool:
        try:
            while heap or running:
                while heap and len(running) < n_workers and may_start():
                    _, k = heapq.heappop(heap)
                    work = nxt[k]
                    running[pool.submit(step, k, states[k], work)] = (k, work)
                if not running:
                    break
                timeout = None if deadline is None else max(0.0, deadline - time.time()) + 0.05
                done, _ = wait(list(running), timeout=timeout, return_when=FIRST_COMPLETED)
                for fut in done:
                    k, work = running.pop(fut)
                    finish(k, fut.result(), work)
        finally:
            for fut in running:  # let running slices return before the pool is shut down
                fut.cancel()
    return outcomes, attained
