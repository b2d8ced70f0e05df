"""Helpers shared by every certification path, free of cycles."""
from __future__ import annotations

import contextlib
import threading
import time

from .._parallel import effective_n_jobs
from ._flat import check_flat

__all__ = ["call_kernel", "interrupted", "check_kernel_inputs"]


def call_kernel(kernel, *args):
    """Call a numba kernel; a Ctrl-C that lands inside it surfaces as KeyboardInterrupt."""
    try:
        return kernel(*args)
    except SystemError as exc:  # "returned a result with an exception set"
        if interrupted(exc):
            raise KeyboardInterrupt from None
        raise


_CHECKED = [None] * 2


def check_kernel_inputs(ens, Xr, yi, rows, budget):
    """Shapes and dtypes every certify kernel relies on, checked before each kernel call, in this
    one place for every model: the flat ensemble (``ens``: :class:`~fairlens.certify._flat.FlatEnsemble`)
    and the rows (``Xr`` C-contiguous float64 with one column per feature, ``yi`` int64 class
    indices, ``rows`` int64 row indices, ``1 <= budget <= n_features``)."""
    import numpy as np


    n, d = Xr.shape
    K = ens.base.shape[0]
    if Xr.dtype != np.float64 or not Xr.flags.c_contiguous:
        raise ValueError("internal: X must be a C-contiguous float64 array with n_features columns.")
    for last in _CHECKED:
        if last is not None and last[0] is ens and last[1] == d:
            break
    else:
        check_flat(ens, d)
        # the (immutable) ensembles last checked: checked once per payload, not per call
        _CHECKED[1:] = _CHECKED[:-1]
        _CHECKED[0] = (ens, d)
    if yi.dtype != np.int64 or yi.shape != (n,):
        raise ValueError("internal: y must be an int64 array with one class index per row.")
    if n and (yi.min() < 0 or yi.max() >= K):
        raise ValueError("internal: class index out of range.")
    if rows.dtype != np.int64 or rows.ndim != 1 or (rows.size and (rows.min() < 0 or rows.max() >= n)):
        raise ValueError("internal: row indices out of range.")
    if not 1 <= budget <= d:
        raise ValueError("internal: budget out of range.")


def interrupted(exc):
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


@contextlib.contextmanager
def compile_seconds(out):
    """Add to ``out[0]`` the wall seconds numba spends compiling kernels in this process while the
    block runs (its threads included; only outermost compilations count: a kernel's compilation
    compiles the kernels it calls inside it; loading a kernel from numba's cache is not compiling).

    Examples
    --------
    >>> from fairlens.certify._common import compile_seconds
    >>> spent = [0.0]
    >>> with compile_seconds(spent):
    ...     pass
    >>> spent
    [0.0]
    """
    from numba.core import event  # deferred: import time: loads numba only when used

    lock, local = threading.Lock(), threading.local()

    class Timer(event.Listener):
        def on_start(self, ev):
            depth = getattr(local, "depth", 0)
            if depth == 0:
                local.t0 = time.perf_counter()
            local.depth = depth + 1

        def on_end(self, ev):
            depth = getattr(local, "depth", 0)
            if depth > 0:
                local.depth = depth - 1
                if depth == 1:
                    with lock:
                        out[0] += time.perf_counter() - local.t0

    listener = Timer()
    event.register("numba:compile", listener)
    try:
        yield out
    finally:
        event.unregister("numba:compile", listener)


def deadline_of(time_limit):
    """Wall-clock deadline (``time.time()`` based, shared with the workers) or ``None``."""
    import math

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


# ---------------------------------------------------------------------------------------------
# the one declaration of certify's parameters (every model type is validated from it)
# ---------------------------------------------------------------------------------------------
import math as _math  # noqa: E402
import numbers as _numbers  # noqa: E402

from .._base import Interval, Options, validate_params  # noqa: E402

METHODS = ("cascade", "flb", "elb", "brute")
VOTES = ("soft", "hard")


class _AtLeast(Interval):
    """An integer >= ``left`` (bools refused)."""

    def __init__(self, left):
        super().__init__(_numbers.Integral, left, None)

    def __str__(self):
        return f"an integer >= {self.left}"


class _NonZeroInt(Interval):
    """A non-zero integer (joblib's ``n_jobs``; no upper bound: certify never starts more
    workers than it has blocks)."""

    def __init__(self):
        super().__init__(_numbers.Integral, None, None)

    def is_satisfied_by(self, v):
        return self._type_ok(v) and int(v) != 0

    def __str__(self):
        return "a non-zero integer (-1 = all cores)"

    def invalid(self):
        return 0


class _Seconds(Interval):
    """A number of seconds >= 0, ``inf`` included (no limit)."""

    def __init__(self):
        super().__init__(_numbers.Real, 0.0, None)

    def is_satisfied_by(self, v):
        return self._type_ok(v) and not _math.isnan(float(v)) and float(v) >= 0

    def __str__(self):
        return "a number of seconds >= 0 (inf = no limit)"

    def invalid(self):
        return -1.0


#: The parameters of :func:`~fairlens.certify.certify`, declared once: every model type
#: (scikit-learn forests and trees, FeaturePartitionedForest, XGBoost, LightGBM,
#: GradientBoosting, HistGradientBoosting) is validated from this table before anything is
#: read from the model. ``budget`` is checked against the model's number of features after.
CERTIFY_CONSTRAINTS = {
    "budget": [_AtLeast(1)],
    "method": [Options(*METHODS)],
    "vote": [Options(*VOTES), None],
    "prune": ["boolean"],
    "tie_class": "no_validation",
    "progress": ["progress"],
    "chunk_size": [_AtLeast(1)],
    "n_jobs": [_NonZeroInt(), None],
    "time_limit": [_Seconds(), None],
    "missing": [Options("auto"), "boolean"],
}


def validate_certify_params(params, caller="certify"):
    """Validate ``params`` (a subset of :data:`CERTIFY_CONSTRAINTS`) and normalise them.

    Returns the dict with Python ``int``/``float``/``bool`` values (``time_limit`` a float or
    ``None``). Raises ``TypeError``/``ValueError`` naming the parameter.
    """
    validate_params(params, {k: v for k, v in CERTIFY_CONSTRAINTS.items() if k in params}, caller=caller)
    out = dict(params)
    for k in ("budget", "chunk_size", "n_jobs"):
        if out.get(k) is not None:
            out[k] = int(out[k])
    if "prune" in out:
        out["prune"] = bool(out["prune"])
    if isinstance(out.get("missing"), bool) or type(out.get("missing")).__name__ == "bool_":
        out["missing"] = bool(out["missing"])
    if out.get("time_limit") is not None:
        out["time_limit"] = float(out["time_limit"])
    if out.get("progress") is not None and not callable(out["progress"]):
        out["progress"] = bool(out["progress"])
    return out


def check_budget(budget, n_features, name="budget"):
    """``budget`` (validated int) against the model's number of features."""
    if budget > n_features:
        raise ValueError(f"{name}={budget} is larger than the number of features ({n_features}); "
                         f"use {name} <= {n_features}.")
    return budget


#: ``forest=``, the old name of ``model``: passing it is a ``TypeError`` naming ``model=``.
RENAMED_MODEL = {"forest": "model"}


def _surely_finite(X):
    """Whether ``X`` is a numeric array or DataFrame without NaN (False when unsure: the caller then
    asks the model, as for any ``X``); no conversion is kept, the rows are checked later."""
    import numpy as np

    try:
        a = X.to_numpy() if hasattr(X, "to_numpy") and hasattr(X, "columns") else X
        a = np.asarray(a)
    except Exception:  # noqa: BLE001 -- anything odd is checked (and named) later by check_X
        return False
    if a.dtype.kind in "iub":
        return True
    return a.dtype.kind == "f" and not bool(np.isnan(a).any())


def resolve_missing(missing, model, flat, X=None):
    """The threat model of ``missing``: ``(nan_attack, nan_rows)``.

    ``nan_attack``: whether the attacker may write NaN -- ``"auto"``: iff the model's own
    ``predict`` accepts NaN (asked of the reader's library,
    :meth:`fairlens.certify._ensemble.TreeEnsemble.accepts_nan`; a TreeEnsemble given directly asks
    the model it keeps, and a forest's ensemble keeps none: no); ``True``: the same, a ValueError naming
    ``missing`` when predict refuses NaN; ``False``: finite replacements only. ``nan_rows``: whether rows
    of ``X`` may contain NaN (iff predict accepts it, whatever ``missing`` says).

    With ``missing=False`` and an ``X`` (given) that holds no NaN the answer is ``(False, False)``
    without asking the model: asking calls a scikit-learn model's ``predict`` (about 3 ms for a
    50-tree forest, more than certifying a few rows), and neither the attacker nor the rows need NaN.
    """
    if missing is False and X is not None and _surely_finite(X):
        return False, False
    ok = flat.accepts_nan(model)
    if missing is True and not ok:
        raise ValueError(f"missing=True, but the predict of {type(model).__name__} refuses NaN (or certify cannot "
                         "ask it: a TreeEnsemble of a forest keeps no model); pass missing=False (finite replacements "
                         "only) or missing='auto'.")
    return (ok and missing is not False), ok
