"""Helpers shared by every certification path (forests and boosted models), free of cycles."""
from __future__ import annotations

__all__ = ["_call", "_interrupted"]


def _call(kernel, *args):
    """Call a numba kernel; a Ctrl-C that lands inside it surfaces as KeyboardInterrupt."""
    try:
        return kernel(*args)
    except SystemError as exc:  # "returned a result with an exception set"
        if _interrupted(exc):
            raise KeyboardInterrupt from None
        raise


def _interrupted(exc):
    """Whether a KeyboardInterrupt is anywhere in ``exc``'s chain of causes/contexts.

    A SIGINT that lands inside a numba kernel surfaces as ``SystemError: CPUDispatcher(...)
    returned a result with an exception set`` wrapping one or more further ``SystemError``s
    (a dispatcher calling a dispatcher): the whole chain is walked, not only its first link.
    """
    todo, seen = [exc], set()
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        if isinstance(e, KeyboardInterrupt):
            return True
        seen.add(id(e))
        todo += [e.__cause__, e.__context__]
    return False


#: Under a time limit, rows go to parallel workers only when at least this many seconds are
#: left: starting workers (loky processes, dask task shipping) takes one to several seconds on a
#: loaded machine, and a worker that starts after the deadline settles nothing. Below it the
#: rows are worked in this process, which settles them from the first millisecond.
MIN_PARALLEL_SECONDS = 10.0


def check_time_limit(time_limit, name="time_limit"):
    """``time_limit`` as a float >= 0 or ``None``; ``inf`` is accepted and means no limit."""
    import math
    import numbers

    import numpy as np

    from .._validation import _fmt

    if time_limit is None:
        return None
    if isinstance(time_limit, (bool, np.bool_)) or not isinstance(time_limit, numbers.Real):
        raise TypeError(f"{name} must be None or a number of seconds >= 0 (inf = no limit); got "
                        f"{_fmt(time_limit)} ({type(time_limit).__name__}).")
    t = float(time_limit)
    if math.isnan(t) or t < 0:
        raise ValueError(f"{name} must be None or a number of seconds >= 0 (inf = no limit); got {t!r}.")
    return t


def deadline_of(time_limit):
    """Wall-clock deadline (``time.time()`` based, shared with the workers) or ``None``."""
    import math
    import time

    if time_limit is None or math.isinf(time_limit):
        return None
    return time.time() + time_limit


def plan_n_jobs(n_jobs, n_tasks, deadline):
    """The ``n_jobs`` to hand to :func:`fairlens._parallel.run_chunks` for ``n_tasks`` blocks.

    Never more workers than blocks (``n_jobs=10**6`` on 40 rows starts at most as many
    workers as there are blocks, instead of failing inside joblib); 1 (this process) when
    there is a single block or when a deadline leaves less than :data:`MIN_PARALLEL_SECONDS`
    (worker start-up would eat the time and the rows would stay unsettled). Only when the
    work is run, never the answer, depends on it (without a time limit).
    """
    import time

    from .._parallel import effective_n_jobs

    if n_tasks <= 1:
        return 1
    if deadline is not None and deadline - time.time() < MIN_PARALLEL_SECONDS:
        return 1
    workers = effective_n_jobs(n_jobs)
    if workers <= 1:
        return 1
    if workers > n_tasks:
        return int(n_tasks)
    return n_jobs
