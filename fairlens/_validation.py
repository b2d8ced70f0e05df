"""Parameter validation at the public boundary (one place, one message style).

Every public entry point of fairlens validates its parameters once, up front, with these
helpers, so that a bad value is refused with a ``ValueError``/``TypeError`` that names the
argument, the value received and what is valid -- never a silently wrong answer or an
error from deep inside a numba kernel.  Modelled on scikit-learn's
``sklearn.utils._param_validation`` and fairlearn's message constants, but dependency-free
and cheap to import.
"""
from __future__ import annotations

import math
import numbers
import threading

import numpy as np

__all__ = [
    "check_int",
    "check_real",
    "check_probability",
    "check_bool",
    "check_choice",
    "check_random_state",
    "check_stop",
    "check_no_kwargs",
    "check_memory",
    "check_str_list",
    "MEMORY_LIMIT_BYTES",
]

#: Largest single allocation fairlens makes without being asked to chunk (2 GiB).  Sizes
#: that grow combinatorially are estimated against this before anything is allocated.
MEMORY_LIMIT_BYTES = 2 * 1024**3


def _fmt(value) -> str:
    r = repr(value)
    return r if len(r) <= 80 else r[:77] + "..."


def check_int(name, value, *, min=None, max=None, allow_none=False):
    """``value`` as a Python ``int`` in ``[min, max]``; bools and floats are refused.

    Parameters
    ----------
    name : str
        The argument's name in error messages.
    value : object
        The value to check.
    min, max : int, optional
        Inclusive bounds.
    allow_none : bool, default False
        Whether ``None`` passes (and is returned).

    Returns
    -------
    int or None

    Raises
    ------
    TypeError
        If ``value`` is not an integer (bools and floats included).
    ValueError
        If it is out of range.

    Examples
    --------
    >>> from fairlens._validation import check_int
    >>> check_int("n_seeds", 5, min=1)
    5
    """
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        # accept integral floats such as 5.0? scikit-learn does not; neither do we
        raise TypeError(
            f"{name} must be an integer{_range_text(min, max)}; got {_fmt(value)} "
            f"({type(value).__name__})."
        )
    value = int(value)
    if (min is not None and value < min) or (max is not None and value > max):
        raise ValueError(f"{name} must be an integer{_range_text(min, max)}; got {value}.")
    return value


def check_real(name, value, *, min=None, max=None, include_min=True, include_max=True,
               allow_none=False):
    """``value`` as a finite Python ``float`` in the given (closed or open) interval.

    Parameters
    ----------
    name : str
        The argument's name in error messages.
    value : object
        The value to check.
    min, max : float, optional
        The interval's ends.
    include_min, include_max : bool, default True
        Whether each end is included.
    allow_none : bool, default False
        Whether ``None`` passes (and is returned).

    Returns
    -------
    float or None

    Raises
    ------
    TypeError
        If ``value`` is not a real number (bools included).
    ValueError
        If it is NaN, infinite or outside the interval.

    Examples
    --------
    >>> from fairlens._validation import check_real
    >>> check_real("h", 1e-3, min=0, include_min=False)
    0.001
    """
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a real number{_interval_text(min, max, include_min, include_max)}; "
            f"got {_fmt(value)} ({type(value).__name__})."
        )
    value = float(value)
    bad = not math.isfinite(value)
    if min is not None:
        bad |= value < min if include_min else value <= min
    if max is not None:
        bad |= value > max if include_max else value >= max
    if bad:
        raise ValueError(
            f"{name} must be a finite number{_interval_text(min, max, include_min, include_max)}; "
            f"got {value!r}."
        )
    return value


def check_probability(name, value, *, include_0=True, include_1=True, allow_none=False):
    """A probability (or confidence, share, threshold) in [0, 1] (ends as asked).

    Parameters
    ----------
    name : str
        The argument's name in error messages.
    value : object
        The value to check.
    include_0, include_1 : bool, default True
        Whether 0 and 1 are allowed.
    allow_none : bool, default False
        Whether ``None`` passes (and is returned).

    Returns
    -------
    float or None

    Raises
    ------
    TypeError, ValueError
        As :func:`check_real`.

    Examples
    --------
    >>> from fairlens._validation import check_probability
    >>> check_probability("confidence", 0.95, include_0=False, include_1=False)
    0.95
    """
    return check_real(name, value, min=0.0, max=1.0, include_min=include_0,
                      include_max=include_1, allow_none=allow_none)


def check_bool(name, value):
    """``value`` as a ``bool`` (Python or numpy); anything else is refused.

    Parameters
    ----------
    name : str
        The argument's name in error messages.
    value : object
        The value to check.

    Returns
    -------
    bool

    Raises
    ------
    TypeError
        If ``value`` is not a bool (``0``/``1`` included).

    Examples
    --------
    >>> from fairlens._validation import check_bool
    >>> check_bool("download", True)
    True
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {_fmt(value)}.")
    return bool(value)


def check_choice(name, value, choices):
    """``value`` must be one of ``choices`` (strings compared exactly).

    Parameters
    ----------
    name : str
        The argument's name in error messages.
    value : object
        The value to check.
    choices : iterable of str
        The allowed values.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If ``value`` is not one of ``choices``.

    Examples
    --------
    >>> from fairlens._validation import check_choice
    >>> check_choice("encoding", "raw", ("raw", "benchmark"))
    'raw'
    """
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        listed = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {listed}; got {_fmt(value)}.")
    return value


def check_random_state(value, name="random_state"):
    """A ``numpy.random.RandomState`` for code written against the legacy generator.

    Thin wrapper over the one random-state policy,
    :func:`fairlens._base.resolve_random_state`: the returned generator is
    ``RandomState(resolve_random_state(value))``, so an int seed gives exactly
    ``RandomState(seed)``'s stream (as before); ``None`` draws a fresh seed; a
    ``RandomState`` or ``Generator`` is drawn from once.

    Parameters
    ----------
    value : None, int, numpy.random.Generator or numpy.random.RandomState
        The ``random_state`` argument a user passed.
    name : str, default "random_state"
        The argument's name in error messages.

    Returns
    -------
    numpy.random.RandomState

    Raises
    ------
    TypeError, ValueError
        For anything else (naming ``name``).

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens._validation import check_random_state
    >>> int(check_random_state(3).randint(100)) == int(np.random.RandomState(3).randint(100))
    True
    """
    return np.random.RandomState(resolve_random_state(value, name))


def check_stop(stop, name="stop"):
    """The one stop convention.

    Parameters
    ----------
    stop : None, threading.Event-like or callable
        ``None``, an object with ``is_set()``, or a zero-argument callable returning true
        to stop.
    name : str, default "stop"
        The argument's name in error messages.

    Returns
    -------
    callable
        Zero-argument; ``lambda: False`` for ``None``.

    Raises
    ------
    TypeError
        For anything else.

    Examples
    --------
    >>> import threading
    >>> from fairlens._validation import check_stop
    >>> event = threading.Event(); stop = check_stop(event); event.set(); stop()
    True
    """
    if stop is None:
        return lambda: False
    if hasattr(stop, "is_set") and callable(stop.is_set):
        return stop.is_set
    if callable(stop):
        return lambda: bool(stop())
    raise TypeError(
        f"{name} must be None, a threading.Event or a callable returning True to stop; got "
        f"{_fmt(stop)} ({type(stop).__name__})."
    )


def check_no_kwargs(func_name, kwargs):
    """Unknown keyword arguments are an error (never silently swallowed).

    Parameters
    ----------
    func_name : str
        The function's name in the message.
    kwargs : dict
        The leftover keyword arguments.

    Raises
    ------
    TypeError
        If ``kwargs`` is not empty.

    Examples
    --------
    >>> from fairlens._validation import check_no_kwargs
    >>> check_no_kwargs("load_adult", {})
    """
    if kwargs:
        names = ", ".join(sorted(kwargs))
        raise TypeError(f"{func_name}() got unexpected keyword argument(s): {names}.")


def check_memory(nbytes, what, remedy, limit=None):
    """Refuse an allocation of ``nbytes`` above ``limit``.

    So that a combinatorial size never reaches ``MemoryError``, an abort or the OOM killer.

    Parameters
    ----------
    nbytes : float
        The estimated size.
    what : str
        What would be allocated (for the message).
    remedy : str
        How to make it smaller (for the message).
    limit : float, optional
        Default :data:`MEMORY_LIMIT_BYTES`.

    Returns
    -------
    int
        ``nbytes``.

    Raises
    ------
    ValueError
        Naming the estimate, what would be allocated and the remedy.

    Examples
    --------
    >>> from fairlens._validation import check_memory
    >>> check_memory(1024, "the table", "use fewer rows")
    1024
    """
    limit = MEMORY_LIMIT_BYTES if limit is None else limit
    nbytes = float(nbytes)
    if nbytes > limit:
        raise ValueError(
            f"{what} would need about {_human_bytes(nbytes)} of memory (limit "
            f"{_human_bytes(limit)}); {remedy}"
        )
    return int(nbytes)


def check_str_list(name, value, *, allow_empty=False):
    """A list of strings; a bare string is refused (it would be iterated by character).

    Parameters
    ----------
    name : str
        The argument's name in error messages.
    value : iterable of str
        The value to check.
    allow_empty : bool, default False
        Whether an empty list passes.

    Returns
    -------
    list of str

    Raises
    ------
    TypeError
        For a bare string, a non-iterable or a non-string item.
    ValueError
        For an empty list when ``allow_empty`` is false.

    Examples
    --------
    >>> from fairlens._validation import check_str_list
    >>> check_str_list("protected", ("sex", "age"))
    ['sex', 'age']
    """
    if isinstance(value, str):
        raise TypeError(
            f"{name} must be a list of strings, not a single string; pass [{value!r}]."
        )
    try:
        out = list(value)
    except TypeError:
        raise TypeError(f"{name} must be a list of strings; got {_fmt(value)}.") from None
    bad = [v for v in out if not isinstance(v, str)]
    if bad:
        raise TypeError(f"{name} must contain only strings; got {_fmt(bad[0])}.")
    if not out and not allow_empty:
        raise ValueError(f"{name} must not be empty.")
    return out


def _human_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024.0
    return f"{n} B"  # pragma: no cover


def _range_text(min, max):
    if min is not None and max is not None:
        return f" in [{min}, {max}]"
    if min is not None:
        return f" >= {min}"
    if max is not None:
        return f" <= {max}"
    return ""


def _interval_text(min, max, include_min, include_max):
    if min is None and max is None:
        return ""
    lo = ("[" if include_min else "(") + (f"{min:g}" if min is not None else "-inf")
    hi = (f"{max:g}" if max is not None else "inf") + ("]" if include_max else ")")
    return f" in {lo}, {hi}"


# a shared Event type check for the docs
EventType = type(threading.Event())


def resolve_random_state(random_state, name="random_state"):
    """The one integer seed a run uses, from ``random_state``.

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState
        ``None`` draws a fresh seed from the operating system's entropy; an int in
        ``[0, 2**32 - 1]`` is used as is; a Generator or RandomState is drawn from once.
    name : str
        The argument's name in error messages.

    Returns
    -------
    int
        A seed in ``[0, 2**32 - 1]``.  Passing it back as ``random_state`` reproduces the run;
        results record it as ``result.random_state``.

    Raises
    ------
    TypeError, ValueError
        For anything else, naming ``name``.
    """
    if random_state is None:
        return int(np.random.SeedSequence().generate_state(1, dtype=np.uint32)[0])
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**32, dtype=np.uint64))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**32, dtype=np.uint64))
    if isinstance(random_state, (bool, np.bool_)) or not isinstance(random_state, numbers.Integral):
        raise TypeError(
            f"{name} must be None, an int in [0, 2**32 - 1] or a numpy Generator/RandomState; "
            f"got {_fmt(random_state)} ({type(random_state).__name__})."
        )
    if not 0 <= int(random_state) <= 2**32 - 1:
        raise ValueError(f"{name} must be an int in [0, 2**32 - 1]; got {int(random_state)}.")
    return int(random_state)


#: Largest ``|n_jobs|`` accepted: more workers than this is a typo (``10**6``), not a machine;
#: a cluster's workers are all used with ``n_jobs=-1``.
MAX_N_JOBS = 4096


def check_n_jobs(n_jobs, name="n_jobs"):
    """Validate ``n_jobs`` with scikit-learn's semantics.

    Parameters
    ----------
    n_jobs : int or None
        ``None`` means 1 unless inside a ``joblib.parallel_config(n_jobs=...)`` context;
        ``-1`` means all workers (all cores with loky, all workers of the cluster with dask);
        ``-2`` all but one, and so on.  ``0``, bools, non-integers and ``|n_jobs|`` above
        :data:`MAX_N_JOBS` are refused.
    name : str, default "n_jobs"
        The argument's name in error messages.

    Returns
    -------
    int or None

    Raises
    ------
    TypeError
        If ``n_jobs`` is not None or an int.
    ValueError
        If ``n_jobs`` is 0 or beyond ``[-MAX_N_JOBS, MAX_N_JOBS]``.

    Examples
    --------
    >>> from fairlens._validation import check_n_jobs
    >>> check_n_jobs(-1), check_n_jobs(None)
    (-1, None)
    """
    if n_jobs is None:
        return None
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, numbers.Integral):
        raise TypeError(
            f"{name} must be None or a non-zero integer (-1 = all cores); got {n_jobs!r} "
            f"({type(n_jobs).__name__})."
        )
    if int(n_jobs) == 0:
        raise ValueError(f"{name} must be None or a non-zero integer (-1 = all cores); got 0.")
    if abs(int(n_jobs)) > MAX_N_JOBS:
        raise ValueError(
            f"{name} must be a non-zero integer in [-{MAX_N_JOBS}, {MAX_N_JOBS}]; got {int(n_jobs)}. "
            f"Use {name}=-1 for all cores (or all workers of a dask cluster)."
        )
    return int(n_jobs)
