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
Under a deadline a slice is also cut to the time left: the work a thread does per second is
measured on the slices so far, and no slice is given more work than that rate allows before the
deadline (at least ``first_work``), so the doubling slices cannot carry a call past its limit.

Least attained service shares the time evenly between the rows left, so a few hard rows also
starve the *medium* ones: five rows of 1 s next to five of 30 s get 0.9 s each of 9 s, and none
settles. Given an
``estimate`` of a row's remaining work (from how far its search got), rows are first worked least
attained service first until each has had ``explore_work`` -- the cheap rows settle there -- and
then *shortest expected remaining time first*: the row with the smallest estimate gets the next
(doubling) slice and is estimated again after it, so a row whose search advances slower than
expected falls behind the others. An estimate is in units of work; it is turned into time with the
row's own seconds per unit against the average of all slices, because a unit of work (a node of the
search, whose cost grows with the trees the picked features reach) costs up to four times more on
one row than on another of the same call. A row without an estimate is expected to need as much work again
as it had. (Under a deadline this is also the row most likely to finish in the time left.) Which
rows settle changes, never their answers.
"""
from __future__ import annotations

import heapq
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

__all__ = ["settle_rows"]


def settle_rows(step, n_rows, *, deadline=None, n_workers=1, first_work=1000, max_work=1 << 40, on_done=None,
                stop=None, estimate=None, explore_work=None):
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
    estimate : callable or None
        ``estimate(k, state, attained) -> float or None``: expected remaining work of the unfinished
        row ``k`` (``None``: no idea). Called on the calling thread after each of the row's slices
        once it has had ``explore_work``. ``None``: least attained service first throughout.
    explore_work : int or None
        Work every row gets, least attained service first, before ``estimate`` orders the rows
        (default ``2 * first_work``: two doubling slices).

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
    # (stage, key, row): stage 0 (still exploring, or no estimate) by the work received -- least
    # attained service first -- then stage 1 by the expected remaining work
    heap = [(0, 0, k) for k in range(n_rows)]
    heapq.heapify(heap)
    explore = 2 * int(first_work) if explore_work is None else int(explore_work)

    rate = [0.0, 0.0]  # work and thread-seconds of every slice that used all of its work
    spent = [0.0] * n_rows  # thread-seconds of each row's slices

    def key(k):
        if estimate is None or attained[k] < explore:
            return 0, attained[k], k
        left = estimate(k, states[k], attained[k])
        if left is None:
            return 1, attained[k], k
        # the row's own seconds per unit of work against the average: rows of one call differ
        # several-fold (a unit is a search node, dearer where the picked features reach more trees),
        # and the deadline is in seconds
        if rate[0] > 0 and rate[1] > 0 and spent[k] > 0 and attained[k] > 0:
            left *= (spent[k] / attained[k]) / (rate[1] / rate[0])
        return 1, left, k

    def may_start():
        if stop is not None and stop():
            return False
        return deadline is None or time.time() < deadline

    def work_of(k):
        """The row's next slice, cut to what the measured rate fits in the time left."""
        work = nxt[k]
        if deadline is not None and rate[1] > 0:
            fits = int(0.8 * rate[0] / rate[1] * max(0.0, deadline - time.time()))
            work = max(min(work, fits), min(work, int(first_work)))
        return work

    def timed(k, state, work):
        t = time.perf_counter()
        res = step(k, state, work)
        return res, time.perf_counter() - t

    def finish(k, timed_res, work):
        res, seconds = timed_res
        finished, outcome, state = res
        if not finished:  # a slice that used all its work (a finished row may have stopped early)
            rate[0] += work
            rate[1] += seconds
        attained[k] += work
        spent[k] += seconds
        if finished:
            outcomes[k] = outcome
            if on_done is not None:
                on_done(k, outcome)
        else:
            states[k] = state
            nxt[k] = min(2 * nxt[k], int(max_work))
            heapq.heappush(heap, key(k))

    if n_workers <= 1:
        while heap and may_start():
            k = heapq.heappop(heap)[2]
            work = work_of(k)
            finish(k, timed(k, states[k], work), work)
        return outcomes, attained

    running = {}
    with ThreadPoolExecutor(max_workers=int(n_workers), thread_name_prefix="fairlens-certify") as pool:
        try:
            while heap or running:
                while heap and len(running) < n_workers and may_start():
                    k = heapq.heappop(heap)[2]
                    work = work_of(k)
                    running[pool.submit(timed, k, states[k], work)] = (k, work)
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
