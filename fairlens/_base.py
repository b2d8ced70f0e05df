"""The one analysis contract of fairlens: :class:`Analysis` and :class:`Result`.

Every method of the package -- MAFT and its baselines (EIDIG, ADF, AEQUITAS, SG), TestSGD and
its baselines (THEMIS, FairFictPlay), the shuffling attacks and their detectors, group metrics
and certification -- is used the same way::

    analysis = SomeAnalysis(model, data, *, protected=[...], random_state=0, ...)
    result = analysis.run(stop=None, progress=None, n_jobs=None)
    result.summary()      # always a one-row DataFrame
    result.to_frame()     # the detailed rows
    result.plot(ax=None)  # a matplotlib figure of the result
    result.to_dict()      # JSON-safe; the audit report is built from it
    result                # renders itself in JupyterLab (_repr_html_)

Configuration
    Everything is configured in ``__init__``: the model and the data positionally, every other
    parameter keyword-only.  Parameters are declared once in the class attribute
    ``_parameter_constraints`` (scikit-learn's way, see :class:`Interval`, :class:`Options`)
    and validated once, by :meth:`Analysis._validate_params`, with a ``TypeError`` or
    ``ValueError`` naming the parameter, the value received and what is valid.  The common
    tests generate one invalid value per constraint (:func:`make_invalid`) and check that each
    is refused by name.
Randomness
    One policy, :func:`resolve_random_state`: ``random_state`` is ``None``, an int in
    ``[0, 2**32 - 1]``, a :class:`numpy.random.Generator` or a :class:`numpy.random.RandomState`.
    It is resolved **once per run** into one integer seed (a Generator/RandomState is drawn
    from once; ``None`` draws a fresh seed from the operating system), every random stream of
    the run is derived from that integer (``fairlens._parallel.chunk_rng``), and the integer is
    recorded as ``result.random_state``: passing it back reproduces the run exactly, at any
    ``n_jobs``.
Stopping and progress
    ``stop`` is ``None``, a :class:`threading.Event` or a zero-argument callable returning True
    to stop (:func:`fairlens._validation.check_stop`); a stopped run returns what it has, with
    ``result.stopped = True``.  ``progress`` is ``None``/``False`` (silent), ``True`` (a
    ``tqdm.auto`` bar) or a callable ``progress(stage, done, total)`` (:func:`check_progress`).
Names (one per concept)
    ``model``, ``data`` (a :class:`~fairlens.datasets.Dataset` or a DataFrame), ``protected``
    (the protected columns), ``favourable`` (the favourable class or target value),
    ``random_state``, ``n_jobs``, ``stop``, ``progress``, ``budget`` (features an attacker may
    change), ``time_limit`` (seconds), ``error`` (an error bound), ``confidence``.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import html as _html
import math
import numbers
import time

import numpy as np

from ._validation import _fmt, check_n_jobs, check_stop, resolve_random_state  # noqa: F401 (re-exported)

__all__ = [
    "Analysis",
    "Result",
    "Interval",
    "Options",
    "validate_params",
    "make_invalid",
    "validated",
    "resolve_random_state",
    "check_progress",
    "to_jsonable",
    "renamed_error",
    "refuse_renamed",
    "strict_keywords",
]

# ------------------------------------------------------------------------------------------
# declarative parameter constraints
# ------------------------------------------------------------------------------------------


def _int_text(b):
    """An integer bound as written in the docs: ``2**32 - 1`` rather than ``4294967295``."""
    b = int(b)
    for k in range(20, 64):
        if b == 2**k:
            return f"2**{k}"
        if b == 2**k - 1:
            return f"2**{k} - 1"
    return str(b)


class Interval:
    """A number of type ``kind`` (``numbers.Integral`` or ``numbers.Real``) in an interval.

    Parameters
    ----------
    kind : type
        ``numbers.Integral`` (bools refused) or ``numbers.Real`` (finite values only).
    left, right : float or None
        Bounds; ``None`` is unbounded.
    closed : {"both", "left", "right", "neither"}
        Which bounds belong to the interval.
    """

    def __init__(self, kind, left, right, *, closed="both"):
        if kind not in (numbers.Integral, numbers.Real):
            raise TypeError("kind must be numbers.Integral or numbers.Real")
        if closed not in ("both", "left", "right", "neither"):
            raise ValueError("closed must be 'both', 'left', 'right' or 'neither'")
        self.kind, self.left, self.right, self.closed = kind, left, right, closed

    def _type_ok(self, v):
        if isinstance(v, (bool, np.bool_)):
            return False
        return isinstance(v, self.kind)

    def is_satisfied_by(self, v):
        """True if ``v`` has the right type and lies in the interval."""
        if not self._type_ok(v):
            return False
        if self.kind is numbers.Real and not math.isfinite(float(v)):
            return False
        lo_ok = self.left is None or (v >= self.left if self.closed in ("both", "left") else v > self.left)
        hi_ok = self.right is None or (v <= self.right if self.closed in ("both", "right") else v < self.right)
        return bool(lo_ok and hi_ok)

    def __str__(self):
        what = "an int" if self.kind is numbers.Integral else "a finite real number"
        if self.left is None and self.right is None:
            return what
        num = _int_text if self.kind is numbers.Integral else (lambda b: f"{b:g}")
        lo = ("[" if self.closed in ("both", "left") else "(") + ("-inf" if self.left is None else num(self.left))
        hi = ("inf" if self.right is None else num(self.right)) + ("]" if self.closed in ("both", "right") else ")")
        return f"{what} in {lo}, {hi}"

    def invalid(self):
        """A value of the right type outside the interval (or a wrong type if unbounded)."""
        if self.left is not None:
            return (self.left - 1) if self.kind is numbers.Integral else self.left - 1.0
        if self.right is not None:
            return (self.right + 1) if self.kind is numbers.Integral else self.right + 1.0
        return "not-a-number"


class Options:
    """One of a fixed set of values (strings compared exactly)."""

    def __init__(self, *values):
        self.values = tuple(values)

    def is_satisfied_by(self, v):
        """True if ``v`` is one of the options."""
        try:
            return any(type(v) is type(o) and v == o for o in self.values)
        except Exception:  # noqa: BLE001 - an uncomparable value is simply not an option
            return False

    def __str__(self):
        return "one of " + ", ".join(repr(o) for o in self.values)

    def invalid(self):
        """A string that is not one of the options."""
        return "not-an-option"


def _satisfies(c, v):
    if c is None:
        return v is None
    if isinstance(c, (Interval, Options)):
        return c.is_satisfied_by(v)
    if c == "boolean":
        return isinstance(v, (bool, np.bool_))
    if c == "random_state":
        if v is None or isinstance(v, (np.random.RandomState, np.random.Generator)):
            return True
        return (not isinstance(v, (bool, np.bool_)) and isinstance(v, numbers.Integral)
                and 0 <= int(v) <= 2**32 - 1)
    if c == "n_jobs":
        return v is None or (isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))
                             and int(v) != 0 and abs(int(v)) <= 4096)
    if c == "stop":
        return v is None or callable(v) or callable(getattr(v, "is_set", None))
    if c == "progress":
        return v is None or isinstance(v, (bool, np.bool_)) or callable(v)
    if c == "callable":
        return callable(v)
    if c == "str-list":
        return (not isinstance(v, str) and isinstance(v, (list, tuple))
                and all(isinstance(s, str) for s in v))
    if isinstance(c, type):
        return isinstance(v, c)
    raise TypeError(f"unknown constraint {c!r}")  # pragma: no cover - a programming error


def _describe(c):
    if c is None:
        return "None"
    if isinstance(c, (Interval, Options)):
        return str(c)
    return {
        "boolean": "True or False",
        "random_state": "an int in [0, 2**32 - 1], a numpy Generator/RandomState or None",
        "n_jobs": "None or a non-zero int (-1 = all cores)",
        "stop": "None, a threading.Event or a zero-argument callable",
        "progress": "None, True/False or a callable progress(stage, done, total)",
        "callable": "a callable",
        "str-list": "a list of strings",
    }.get(c, ("a str" if c is str else c.__name__) if isinstance(c, type) else str(c))


def validate_params(params, constraints, *, caller=""):
    """Check every ``params[name]`` against ``constraints[name]`` (a list: any one may hold).

    Raises
    ------
    TypeError
        When the value's type fits no constraint.
    ValueError
        When the type fits some constraint but the value does not (out of range, not an option).
    """
    for name, allowed in constraints.items():
        if name not in params or allowed == "no_validation":
            continue
        v = params[name]
        if any(_satisfies(c, v) for c in allowed):
            continue
        expected = " or ".join(_describe(c) for c in allowed)
        where = f"{caller}: " if caller else ""
        # a value of a numeric/str type that one of the constraints speaks about is a ValueError
        type_fits = any(
            (isinstance(c, Interval) and c._type_ok(v))
            or (isinstance(c, Options) and isinstance(v, str))
            or (c in ("random_state", "n_jobs") and isinstance(v, numbers.Integral)
                and not isinstance(v, (bool, np.bool_)))
            for c in allowed
        )
        exc = ValueError if type_fits else TypeError
        raise exc(f"{where}{name} must be {expected}; got {_fmt(v)} ({type(v).__name__}).")


def make_invalid(constraints, *, kinds=False):
    """One value per constrained parameter that must be refused (the common tests' input).

    Parameters
    ----------
    constraints : dict
        ``{name: [constraint, ...]}`` or ``{name: "no_validation"}`` (skipped).
    kinds : bool, default=False
        If False, ``[(name, bad_value), ...]``: one refused value per parameter (an
        out-of-range value when a constraint has a range or options, else a wrong type).
        If True, ``[(name, bad_value, kind), ...]`` with ``kind`` ``"type"`` (a value of a
        type no constraint accepts, refused with a ``TypeError``) for every parameter and
        also ``"range"`` (a value of an accepted type outside every range/option set,
        refused with a ``ValueError``) for the parameters that have a range or options.

    Returns
    -------
    list of tuple

    Examples
    --------
    >>> import numbers
    >>> from fairlens._base import Interval, make_invalid
    >>> make_invalid({"n": [Interval(numbers.Integral, 1, None)]})
    [('n', 0)]
    >>> [(name, kind) for name, _, kind in make_invalid({"n": [Interval(numbers.Integral, 1, None)]}, kinds=True)]
    [('n', 'type'), ('n', 'range')]
    """
    out = []
    for name, allowed in constraints.items():
        if allowed == "no_validation":
            continue
        ranged = [c.invalid() for c in allowed if isinstance(c, (Interval, Options))]
        candidates = ranged + [object(), "not-a-valid-value", -(2**40), 0.5j]
        if not kinds:
            for bad in candidates:
                if not any(_satisfies(c, bad) for c in allowed):
                    out.append((name, bad))
                    break
            continue
        out.append((name, object(), "type"))  # no constraint accepts a bare object
        bounded = [c.invalid() for c in allowed
                   if isinstance(c, Options) or (isinstance(c, Interval) and (c.left, c.right) != (None, None))]
        for bad in bounded:
            if not any(_satisfies(c, bad) for c in allowed):
                out.append((name, bad, "range"))
                break
    return out


def validated(constraints):
    """Decorator: validate a function's arguments from one declarative table, then call it.

    scikit-learn's ``validate_params`` decorator, for fairlens' public functions.  On every
    call the arguments are bound to the signature with ``bind_partial`` (so a call giving only
    a bad argument is refused for it, before Python complains about missing required ones),
    and every *given* argument that has a constraint is checked by :func:`validate_params`:
    a ``TypeError`` for a value of a type no constraint accepts, a ``ValueError`` for a value
    of a right type out of range or not an option, each naming the function, the parameter,
    what is valid and the value received.  Defaults are not checked (they are valid).

    Apply it directly above ``def``, below :func:`strict_keywords` (which refuses unknown and
    renamed keywords first).  The table is stored as ``func._parameter_constraints``; the
    wrapper keeps the function's name, docstring and signature (``functools.wraps``).

    Parameters
    ----------
    constraints : dict
        ``{parameter: [constraint, ...]}`` (any one constraint may hold: an
        :class:`Interval`, :class:`Options`, ``None``, a type, or one of ``"boolean"``,
        ``"random_state"``, ``"n_jobs"``, ``"stop"``, ``"progress"``, ``"callable"``,
        ``"str-list"``), or ``{parameter: "no_validation"}`` for data the body checks itself.
        Every key must be a parameter of the function.

    Returns
    -------
    callable
        The decorator.

    Raises
    ------
    TypeError
        At decoration time, for a key that is not a parameter of the function.

    Examples
    --------
    >>> import numbers
    >>> from fairlens._base import Interval, validated
    >>> @validated({"n": [Interval(numbers.Integral, 1, None)], "data": "no_validation"})
    ... def f(data, n=1):
    ...     return n
    >>> f([1], n=2)
    2
    >>> f(n=0)
    Traceback (most recent call last):
    ...
    ValueError: f: n must be an int in [1, inf]; got 0 (int).
    """
    import functools
    import inspect

    constraints = dict(constraints)

    def deco(fn):
        sig = inspect.signature(fn)
        unknown = [k for k in constraints if k not in sig.parameters]
        if unknown:
            raise TypeError(f"validated({fn.__qualname__}): {unknown} are not parameters of it; "
                            f"it takes {list(sig.parameters)}.")
        checked = {k: v for k, v in constraints.items() if v != "no_validation"}
        caller = fn.__qualname__.rsplit("<locals>.", 1)[-1]
        bind = sig.bind_partial

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if checked:
                given = bind(*args, **kwargs).arguments
                validate_params(given, checked, caller=caller)
            return fn(*args, **kwargs)

        wrapper._parameter_constraints = constraints
        return wrapper

    return deco


# ------------------------------------------------------------------------------------------
# one random-state policy, one progress policy
# ------------------------------------------------------------------------------------------


class _TqdmProgress:
    """``report(stage, done, total)`` drawn as a ``tqdm.auto`` bar, one bar per stage."""

    def __init__(self, desc):
        self.desc, self.bar, self.stage = desc, None, None

    def __call__(self, stage, done, total):
        if self.bar is not None and stage != self.stage:
            self.close()
        if self.bar is None:
            from tqdm.auto import tqdm

            label = f"{self.desc}: {stage}" if self.desc and stage else (stage or self.desc)
            self.bar, self.stage = tqdm(total=total, desc=label, leave=False), stage
        self.bar.total = total
        self.bar.n = done
        self.bar.refresh()
        if done >= total:
            self.close()

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


#: the one shape of every public ``progress=`` callable
PROGRESS_SHAPE = "progress(stage, done, total)"


def _takes_three_positional(fn):
    """Whether ``fn(a, b, c)`` binds (``True`` too when the signature cannot be read)."""
    import inspect

    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # builtins and other callables without a readable signature
        return True
    try:
        sig.bind(None, None, None)
    except TypeError:
        return False
    return True


def check_progress(progress, name="progress", desc=None):
    """The one progress convention, as a callable ``report(stage, done, total)`` or ``None``.

    Every public ``progress=`` parameter goes through here, before any work starts.

    Parameters
    ----------
    progress : None, bool or callable
        ``None``/``False``: silent (returns ``None``).  ``True``: a ``tqdm.auto`` bar labelled
        ``desc`` and the stage.  A callable: called as ``progress(stage, done, total)``, with
        ``stage`` a short string naming what is counted, ``done`` and ``total`` ints,
        ``0 <= done <= total``; returned as is.
    name : str, default "progress"
        The parameter's name in error messages.
    desc : str, optional
        The bar's label.

    Returns
    -------
    callable or None
        The reporter the internals call as ``report(stage, done, total)``.

    Raises
    ------
    TypeError
        For a value that is none of the above, or a callable that cannot take three positional
        arguments (the old ``progress(done, total)`` shape).

    Examples
    --------
    >>> from fairlens._base import check_progress
    >>> check_progress(None) is None
    True
    >>> check_progress(lambda done, total: None)
    Traceback (most recent call last):
    ...
    TypeError: progress must be a callable progress(stage, done, total) ...
    """
    if progress is None or progress is False or (isinstance(progress, np.bool_) and not progress):
        return None
    if progress is True or isinstance(progress, np.bool_):
        return _TqdmProgress(desc)
    if callable(progress):
        if not _takes_three_positional(progress):
            raise TypeError(
                f"{name} must be a callable {PROGRESS_SHAPE} (stage: a str naming what is counted, "
                f"done and total: ints); got {_fmt(progress)}, which cannot take three positional "
                f"arguments. Define it as def {name}(stage, done, total): ... (the older "
                f"{name}(done, total) shape is no longer accepted)."
            )
        return progress
    raise TypeError(
        f"{name} must be None, True/False or a callable {PROGRESS_SHAPE}; got "
        f"{_fmt(progress)} ({type(progress).__name__})."
    )


def renamed_error(caller, old, new):
    """The ``TypeError`` for a keyword that was renamed (the old spelling no longer works).

    Parameters
    ----------
    caller : str
        Name of the callable shown in the message, e.g. ``"TestSGD"``.
    old, new : str
        The old and the current keyword.

    Returns
    -------
    TypeError
        ``"<caller>: <old>= was renamed <new>=; pass <new>=... instead."`` (to raise).
    """
    return TypeError(f"{caller}: {old}= was renamed {new}=; pass {new}=... instead.")


def refuse_renamed(caller, kwargs, renames):
    """Raise the ``TypeError`` of :func:`renamed_error` if ``kwargs`` holds an old keyword.

    For the few callables with a real ``**kwargs`` pass-through (e.g.
    ``ShuffledModel.with_params``); plain functions use :func:`strict_keywords`.

    Parameters
    ----------
    caller : str
        Name of the callable shown in the message.
    kwargs : mapping
        The keyword arguments received.
    renames : dict
        ``{old_name: new_name}``.

    Raises
    ------
    TypeError
        Naming the first old keyword found and its new name.
    """
    for key in kwargs:
        if key in renames:
            raise renamed_error(caller, key, renames[key])


def strict_keywords(renamed=None, keyword_only=(), removed=None, moved=None, forwarded=None):
    """Decorator: refuse renamed and unknown keywords by name, before the call starts.

    The wrapped callable keeps its signature (``inspect.signature`` shows it); on a call

    * a keyword in ``renamed`` raises ``TypeError("<callable>: <old>= was renamed <new>=;
      pass <new>=... instead.")``;
    * a keyword in ``removed`` raises ``TypeError("<callable>: <name>= was removed: <why>;
      drop the argument.")``;
    * a keyword in ``moved`` raises ``TypeError("<callable>: <name>= moved to <where>; pass it
      there.")``;
    * a keyword the callable does not take raises a ``TypeError`` naming it and the keywords
      it takes (unless the callable has its own ``**kwargs``: then only with ``forwarded``,
      for a keyword that the target of the pass-through does not take either);
    * more positional arguments than the callable takes raise a ``TypeError`` naming the
      keywords of ``keyword_only`` they were meant for (old call forms such as
      ``TestSGD(model, data, ["sex"])``).

    Parameters
    ----------
    renamed : dict, optional
        ``{old_name: new_name}`` of keywords renamed in earlier releases.
    keyword_only : sequence of str, default=()
        The keywords that earlier releases took by position after the positional
        parameters of today's signature, in order.
    removed : dict, optional
        ``{name: why}`` of keywords earlier releases took and this one does not.
    moved : dict, optional
        ``{name: where}`` of keywords that belong to another call now, e.g.
        ``{"progress": "TestSGD(...).run(progress=...)"}``.
    forwarded : tuple (str, callable), optional
        For a callable whose ``**kwargs`` are passed on: the name of their target and a
        zero-argument callable returning the keywords it takes (called on the first call
        that needs it), e.g. ``("MLPClassifier", lambda: MLPClassifier().get_params())``.

    Returns
    -------
    callable
        The decorator.

    Examples
    --------
    >>> from fairlens._base import strict_keywords
    >>> @strict_keywords(renamed={"sensitive": "protected"})
    ... def f(data, protected=None):
    ...     return protected
    >>> f(1, protected=["sex"])
    ['sex']
    >>> f(1, sensitive=["sex"])
    Traceback (most recent call last):
    ...
    TypeError: f: sensitive= was renamed protected=; pass protected=... instead.
    """
    import functools
    import inspect

    renamed = dict(renamed or {})
    removed = dict(removed or {})
    moved = dict(moved or {})
    target_keywords = []  # filled on first use (the target may be costly to import)
    keyword_only = tuple(keyword_only)

    def deco(fn):
        params = list(inspect.signature(fn).parameters.values())
        var_kw = any(p.kind is p.VAR_KEYWORD for p in params)
        var_pos = any(p.kind is p.VAR_POSITIONAL for p in params)
        keywords = [p.name for p in params
                    if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"]
        n_positional = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
        caller = fn.__qualname__.rsplit("<locals>.", 1)[-1].replace(".__init__", "")
        accepted = set(keywords)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            for key in kwargs:
                if key in renamed:
                    raise renamed_error(caller, key, renamed[key])
                if key in removed:
                    raise TypeError(f"{caller}: {key}= was removed: {removed[key]}; drop the argument.")
                if key in moved:
                    raise TypeError(f"{caller}: {key}= moved to {moved[key]}; pass it there.")
                if key in accepted:
                    continue
                if not var_kw:
                    raise TypeError(f"{caller}() got an unexpected keyword argument {key!r}; it takes "
                                    f"{', '.join(k + '=' for k in keywords)} (check the spelling).")
                if forwarded is not None:
                    if not target_keywords:
                        target_keywords.append(set(forwarded[1]()))
                    if key not in target_keywords[0]:
                        raise TypeError(
                            f"{caller}() got an unexpected keyword argument {key!r}: it is neither one of "
                            f"its own ({', '.join(k + '=' for k in keywords)}) nor one {forwarded[0]} takes "
                            f"({', '.join(k + '=' for k in sorted(target_keywords[0]))}); check the spelling."
                        )
            if not var_pos and len(args) > n_positional:
                extra = keyword_only[:len(args) - n_positional]
                if extra:
                    raise TypeError(f"{caller}: {', '.join(extra)} must be passed by keyword now; call "
                                    f"{caller}(..., {', '.join(k + '=...' for k in extra)}).")
            return fn(*args, **kwargs)

        return wrapper

    return deco


# ------------------------------------------------------------------------------------------
# JSON-safe conversion
# ------------------------------------------------------------------------------------------


def to_jsonable(obj, *, max_items=10_000):
    """``obj`` as plain JSON types (dict/list/str/int/float/bool/None).

    numpy scalars and arrays, pandas objects, dataclasses, sets, datetimes and paths are
    converted; non-finite floats become ``None`` (JSON has no NaN); anything else becomes its
    ``repr`` (models, callables).  Arrays longer than ``max_items`` are refused with a
    ``ValueError`` (a result's ``to_dict`` must stay small: summarise first).
    """
    import pathlib

    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, numbers.Integral):
        return int(obj)
    if isinstance(obj, numbers.Real):
        f = float(obj)
        return f if math.isfinite(f) else None
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v, max_items=max_items) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        seq = sorted(obj, key=repr) if isinstance(obj, (set, frozenset)) else obj
        return [to_jsonable(v, max_items=max_items) for v in seq]
    if isinstance(obj, np.ndarray):
        if obj.size > max_items:
            raise ValueError(f"an array of {obj.size} items is too large for to_dict (max {max_items}).")
        return to_jsonable(obj.tolist(), max_items=max_items)
    if isinstance(obj, (_dt.datetime, _dt.date)):
        return obj.isoformat()
    if isinstance(obj, pathlib.PurePath):
        return str(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name), max_items=max_items)
                for f in dataclasses.fields(obj) if f.repr}
    mod = type(obj).__module__
    if mod.startswith("pandas"):
        if hasattr(obj, "to_dict") and hasattr(obj, "columns"):
            if len(obj) * max(1, len(obj.columns)) > max_items:
                raise ValueError(f"a frame of {obj.shape} is too large for to_dict.")
            return to_jsonable(obj.to_dict(orient="records"), max_items=max_items)
        if hasattr(obj, "tolist"):
            return to_jsonable(obj.tolist(), max_items=max_items)
        if hasattr(obj, "isoformat"):
            return obj.isoformat()
    return repr(obj)


# ------------------------------------------------------------------------------------------
# Result and Analysis
# ------------------------------------------------------------------------------------------


def _fmt_cell(v):
    if isinstance(v, (float, np.floating)):
        if not math.isfinite(v):
            return "—"
        a = abs(float(v))
        if a == 0 or 1e-3 <= a < 1e6:
            return f"{float(v):,.4g}" if a >= 1000 else f"{float(v):.4g}"
        return f"{float(v):.3e}"
    return str(v)


class Result:
    """Base of every fairlens result.

    Subclasses (usually dataclasses) provide the attributes ``params`` (dict of the parameters
    the analysis ran with), ``random_state`` (the integer seed actually used, or ``None`` for a
    deterministic analysis), ``elapsed`` (wall seconds) and ``stopped`` (True if the run was cut
    short), and implement :meth:`summary` and :meth:`to_frame`.  :meth:`to_dict`,
    :meth:`plot` and :meth:`_repr_html_` have defaults built on those.
    """

    #: Short human title used by ``_repr_html_`` and the reports.
    title = "fairlens result"
    params: dict = {}
    random_state = None
    elapsed = float("nan")
    stopped = False

    def summary(self):
        """One-row :class:`pandas.DataFrame` of the headline figures."""
        raise NotImplementedError

    def to_frame(self):
        """The detailed rows of the result as a :class:`pandas.DataFrame`."""
        return self.summary()

    def plot(self, ax=None):
        """Draw the result on ``ax`` (a new figure if ``None``); returns the axes."""
        raise NotImplementedError(f"{type(self).__name__} has no plot")

    def to_dict(self):
        """JSON-safe dict: ``type``, ``title``, ``summary`` (one record), ``params``,
        ``random_state``, ``elapsed``, ``stopped``."""
        s = self.summary()
        rec = s.iloc[0].to_dict() if len(s) else {}
        return to_jsonable({
            "type": type(self).__name__,
            "title": self.title,
            "summary": rec,
            "params": dict(self.params or {}),
            "random_state": self.random_state,
            "elapsed": self.elapsed,
            "stopped": bool(self.stopped),
        })

    def _repr_html_(self):
        s = self.summary()
        rows = "".join(
            f"<tr><th style='text-align:left'>{_html.escape(str(k))}</th>"
            f"<td style='text-align:right'>{_html.escape(_fmt_cell(v))}</td></tr>"
            for k, v in (s.iloc[0].items() if len(s) else [])
        )
        params = "".join(
            f"<tr><th style='text-align:left'>{_html.escape(str(k))}</th>"
            f"<td>{_html.escape(_fmt(v))}</td></tr>" for k, v in (self.params or {}).items()
        )
        state = "stopped early" if self.stopped else "complete"
        seed = "" if self.random_state is None else f", random_state={int(self.random_state)}"
        el = "" if not np.isfinite(self.elapsed) else f" in {self.elapsed:.2f} s"
        return (
            f"<div class='fairlens-result'><strong>{_html.escape(self.title)}</strong> "
            f"<span style='color:#555'>({state}{el}{seed})</span>"
            f"<table>{rows}</table>"
            + (f"<details><summary>parameters</summary><table>{params}</table></details>" if params else "")
            + "</div>"
        )


class Analysis:
    """Base of every fairlens analysis: configure in ``__init__``, then :meth:`run`.

    Subclasses declare ``_parameter_constraints`` (``{name: [constraint, ...]}``) and store each
    ``__init__`` argument under its own name; :meth:`_validate_params` (called at the end of
    ``__init__``) checks them all.  :meth:`run` takes only how to run (``stop``, ``progress``,
    ``n_jobs``), never what to compute.
    """

    _parameter_constraints: dict = {}

    def _validate_params(self):
        validate_params({k: getattr(self, k) for k in self._parameter_constraints if hasattr(self, k)},
                        self._parameter_constraints, caller=type(self).__name__)

    #: parameters :meth:`set_params` refuses: they define what is analysed (build a new object)
    _fixed_params = frozenset({"model", "data", "protected"})

    def get_params(self):
        """The declared parameters and their current values, as a dict."""
        return {k: getattr(self, k) for k in self._parameter_constraints if hasattr(self, k)}

    def set_params(self, **params):
        """Set declared parameters (scikit-learn's way) and return ``self``.

        The object is configured again by its own ``__init__`` with every current parameter and the
        new values, so each value goes through every check and every derived setting, exactly as in
        a new object; on an error nothing changes.

        Parameters
        ----------
        **params
            Declared parameters (see :meth:`get_params`) other than ``model``, ``data`` and
            ``protected``, which define what is analysed: build a new object for those.

        Returns
        -------
        self

        Raises
        ------
        TypeError, ValueError
            For an unknown or fixed parameter (named, with the settable ones), or a refused value.
        """
        import inspect

        owner = type(self).__name__
        sig = inspect.signature(type(self).__init__)
        names = [n for n, p in sig.parameters.items()
                 if n != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        settable = sorted(n for n in names if n in self._parameter_constraints and n not in self._fixed_params)
        for k in params:
            if k not in settable:
                raise TypeError(f"{owner}.set_params: {k!r} cannot be set"
                                + (" after construction; build a new object." if k in self._fixed_params else
                                   f"; settable: {settable}."))
        missing = [n for n in names if not hasattr(self, n)]
        if missing:  # pragma: no cover - a subclass storing a parameter under another name
            raise TypeError(f"{owner}.set_params: {missing} are not stored under their own names; build a new object.")
        saved = dict(self.__dict__)
        try:
            type(self).__init__(self, **{**{n: getattr(self, n) for n in names}, **params})
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise
        return self

    def run(self, *, stop=None, progress=None, n_jobs=None):  # pragma: no cover - abstract
        """Run the analysis and return its :class:`Result`."""
        raise NotImplementedError

    def _start(self, stop, progress, n_jobs, desc=None):
        """Validate the run arguments once; returns ``(stop_fn, report_fn, n_jobs, seed, t0)``."""
        stop_fn = check_stop(stop)
        report = check_progress(progress, desc=desc or type(self).__name__)
        n_jobs = check_n_jobs(n_jobs)
        seed = resolve_random_state(getattr(self, "random_state", None))
        return stop_fn, report, n_jobs, seed, time.perf_counter()

    def __repr__(self):
        args = ", ".join(f"{k}={_fmt(v)}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"
