"""Auditor-side batch-consistency detector (beyond the paper).

The paper's Discussion notes that "if SHAP or other XAI methods employ
consistency checks for the black-box model, the attack may be better
detected". A row-wise model gives every row the same score whatever batch it
arrives in; a shuffling attack does not. :func:`batch_consistency` queries
the model on the same rows in several batch compositions and orders (and row
by row) and reports how much the outputs move.
"""
from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._base import Interval, Options, Result, resolve_random_state, strict_keywords, validated
from .._validation import check_int, check_real
from ..models import as_scorer
from .plots import plot_batch_consistency

__all__ = ["BatchConsistencyResult", "batch_consistency"]


@dataclass
class BatchConsistencyResult(Result):
    """Outcome of :func:`batch_consistency`.

    Parameters
    ----------
    suspicious : bool
        ``True`` when some row's score moved by more than its tolerance, or when the
        model answered NaN/inf for any row (an audit never passes on non-finite answers).
    max_abs_diff : float
        Largest |score change| of any row across all queries (finite answers).
    frac_rows_changed : float
        Fraction of re-queried rows whose score moved by more than the tolerance
        (or was non-finite).
    tol : float
        The largest per-row tolerance used (see :func:`batch_consistency`).
    queries : DataFrame
        One row per query: ``kind`` (reference / order / subset / single / duplicate),
        ``n_rows``, ``max_abs_diff``, ``frac_changed``, ``n_nonfinite``.
    row_max_diff : ndarray
        Per row of ``X``: largest |change| over the queries that included it
        (NaN when never re-queried; inf when an answer was non-finite).
    n_nonfinite : int
        Non-finite (NaN/inf) answers over all queries, the reference call included.
    output_dtype : str
        dtype of the model's raw output (sets the default tolerance).
    model_input : str
        How the model was called (:meth:`fairlens.models.Scorer.describe`).
    params : dict
        The parameters of the call.
    random_state : int
        The seed used (pass it back to repeat the same queries).
    elapsed : float
        Wall seconds.
    stopped : bool
        True when the run was cut short by ``stop``.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.shuffle import ShuffledModel, batch_consistency
    >>> X = np.random.default_rng(0).random((40, 3)); X[:, 2] = X[:, 2] > 0.5
    >>> attacked = ShuffledModel(lambda A: A[:, 0], protected=2, favoured=1, random_state=0)
    >>> res = batch_consistency(attacked, X, random_state=0)
    >>> res.suspicious, round(res.max_abs_diff, 3), res.frac_rows_changed
    (True, 0.502, 0.9)
    """

    suspicious: bool
    max_abs_diff: float
    frac_rows_changed: float
    tol: float
    queries: pd.DataFrame
    row_max_diff: np.ndarray
    n_nonfinite: int = 0
    output_dtype: str = "float64"
    model_input: str = ""
    params: dict = field(default_factory=dict)
    random_state: int | None = None
    elapsed: float = float("nan")
    stopped: bool = False

    title = "Batch-consistency check"

    def to_frame(self):
        """The per-query table.

        Returns
        -------
        pandas.DataFrame
            One row per query: ``kind, n_rows, max_abs_diff, frac_changed, n_nonfinite``.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.shuffle import ShuffledModel, batch_consistency
        >>> X = np.random.default_rng(0).random((40, 3)); X[:, 2] = X[:, 2] > 0.5
        >>> attacked = ShuffledModel(lambda A: A[:, 0], protected=2, favoured=1, random_state=0)
        >>> res = batch_consistency(attacked, X, random_state=0)
        >>> res.to_frame().groupby("kind", sort=False)["max_abs_diff"].max().round(3)
        kind
        reference    0.000
        order        0.000
        subset       0.192
        duplicate    0.000
        single       0.502
        Name: max_abs_diff, dtype: float64
        """
        return self.queries.copy()

    def summary(self):
        """One row: the verdict, ``suspicious``, largest change, share of rows moved, tolerance.

        Returns
        -------
        pandas.DataFrame
            One row; the sentence is in :attr:`verdict` (and ``str(result)``).

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.shuffle import ShuffledModel, batch_consistency
        >>> X = np.random.default_rng(0).random((40, 3)); X[:, 2] = X[:, 2] > 0.5
        >>> attacked = ShuffledModel(lambda A: A[:, 0], protected=2, favoured=1, random_state=0)
        >>> res = batch_consistency(attacked, X, random_state=0)
        >>> res.summary().loc[0, "verdict"]
        'SUSPICIOUS: outputs depend on the batch (max |change| 0.502, 90.0% of rows moved, tol 1.4e-14, float64 output)'
        """
        return pd.DataFrame([{
            "verdict": self.verdict, "suspicious": bool(self.suspicious),
            "max_abs_diff": self.max_abs_diff, "frac_rows_changed": self.frac_rows_changed,
            "tol": self.tol, "n_nonfinite": int(self.n_nonfinite), "output_dtype": self.output_dtype,
            "n_queries": int(len(self.queries)),
        }])

    def __str__(self):
        return self.verdict

    @property
    def verdict(self) -> str:
        """The one-line verdict, e.g. ``"SUSPICIOUS: outputs depend on the batch (max |change| ...)"``."""
        if self.n_nonfinite:
            verdict = f"SUSPICIOUS: {self.n_nonfinite} non-finite (NaN/inf) answers"
        elif self.suspicious:
            verdict = "SUSPICIOUS: outputs depend on the batch"
        else:
            verdict = "consistent"
        return (f"{verdict} (max |change| {self.max_abs_diff:.3g}, "
                f"{100 * self.frac_rows_changed:.1f}% of rows moved, tol {self.tol:.2g}, "
                f"{self.output_dtype} output)")

    def plot(self, ax=None, **kwargs):
        """Max |score change| per query kind; returns the axes.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (a new figure if None).
        **kwargs
            Passed to the plotting function.

        Returns
        -------
        matplotlib Axes
            The axes drawn on.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.shuffle import ShuffledModel, batch_consistency
        >>> X = np.random.default_rng(0).random((40, 3)); X[:, 2] = X[:, 2] > 0.5
        >>> attacked = ShuffledModel(lambda A: A[:, 0], protected=2, favoured=1, random_state=0)
        >>> res = batch_consistency(attacked, X, random_state=0)
        >>> ax = res.plot()
        """

        return plot_batch_consistency(self, ax=ax, **kwargs)


#: Default tolerance factor: a change counts when it exceeds
#: ``TOL_ULPS * eps(output dtype) * max(1, |reference score|)``.
TOL_ULPS = 64


def _take(X, idx):
    if isinstance(X, pd.DataFrame):
        return X.iloc[idx].reset_index(drop=True)
    return np.asarray(X)[idx]


def _adapt(model, X, dataset, output, favourable):
    """(call(rows) -> (n,) float64 with NaN/inf kept, rows, scorer-like for dtype/describe)."""
    from ._shuffled import ShuffledModel  # deferred: circle: shuffle._shuffled imports this module

    if isinstance(model, ShuffledModel):
        A, _ = model._prepare(X)   # validates X (alignment, shape, finite)
        rows = X if isinstance(X, pd.DataFrame) else A

        def call(R):
            return np.asarray(model(R), dtype=np.float64)
        return call, rows, model

    scorer = as_scorer(model, dataset, output=output, favourable=favourable)
    rows = scorer.check_X(X)

    def call(R):
        return scorer(R, check_finite=False)
    return call, rows, scorer


@strict_keywords(renamed={"favourable_class": "favourable", "dataset": "data"})
@validated({
    "model": "no_validation", "X": "no_validation", "n_orders": [Interval(numbers.Integral, 0, None)],
    "n_subsets": [Interval(numbers.Integral, 0, None)],
    "subset_fraction": [Interval(numbers.Real, 0, 1, closed="neither")],
    "n_single": [Interval(numbers.Integral, 0, None)], "n_duplicates": [Interval(numbers.Integral, 0, None)],
    "atol": [Interval(numbers.Real, 0, None), None], "rtol": [Interval(numbers.Real, 0, None), None],
    "random_state": ["random_state"], "data": "no_validation",
    "output": [Options("auto", "proba", "logit", "raw")], "favourable": "no_validation",
})
def batch_consistency(model, X, *, n_orders=3, n_subsets=4, subset_fraction=0.5, n_single=30,
                      n_duplicates=1, atol=None, rtol=None, random_state=None, data=None,
                      output="auto", favourable=1):
    """Query a model on the same rows in different batches and compare outputs.

    Queries (each one model call unless stated):

    * ``order``: the whole of ``X`` in ``n_orders`` random row orders (the
      first is reversed order);
    * ``subset``: ``n_subsets`` random subsets of ``subset_fraction`` of the
      rows (a different batch composition);
    * ``single``: up to ``n_single`` randomly chosen rows, one call per row
      (a batch of one cannot be shuffled);
    * ``duplicate``: ``X`` followed by a copy of itself, ``n_duplicates``
      times (identical rows must get identical scores).

    Every score is compared to the score of the same row in the reference
    call ``model(X)``. A NaN or inf answer in any call (the reference included) makes
    the result ``suspicious``: an endpoint that answers NaN fails the audit.

    Parameters
    ----------
    model : estimator, pipeline, callable or ShuffledModel
        Adapted once with ``fairlens.models.as_scorer(model, dataset, output=...)``
        like every other entry point: a fitted classifier or pipeline (scored by the
        probability of ``favourable``), or a callable on encoded ``(n, d)``
        arrays. A :class:`ShuffledModel` is called as it is.
    X : array or DataFrame
        Rows to audit (at least 2; encoded columns, a DataFrame aligned by name).
    n_orders, n_subsets, n_single, n_duplicates : int >= 0
        Numbers of queries of each kind (defaults 3, 4, 30, 1).
    subset_fraction : float in (0, 1)
        Share of the rows in each ``subset`` query (default 0.5).
    atol, rtol : float >= 0, optional
        Explicit tolerance: a change counts when it exceeds
        ``atol + rtol * (max - min)`` of the reference scores. By default (both None)
        the tolerance follows the model's output precision, row by row:
        ``64 * eps(dtype) * max(1, |score|)`` with ``dtype`` the dtype of the model's
        raw output (``scorer.output_dtype``; float64 for integer outputs): about
        1.4e-14 for float64 and 7.6e-6 for float32, so the BLAS blocking noise of an
        honest float32 network (~1e-7) passes while a shuffling attack, which moves
        scores by the gaps between rows, is flagged.
    random_state : None, int, RandomState or Generator
        Resolved once by :func:`fairlens._base.resolve_random_state` (recorded as
        ``result.random_state``); chooses the orders, subsets and single rows.
    data : fairlens Dataset, optional
        The data the model belongs to (readable-frame pipelines, column names).
    output : {"auto", "proba", "logit", "raw"}
        How a callable's output is read (see :func:`fairlens.models.as_scorer`);
        ``"raw"`` for scores on any scale.
    favourable : default 1
        The class whose probability a fitted classifier is scored by.

    Returns
    -------
    BatchConsistencyResult
        ``summary()`` is a one-row DataFrame; ``verdict`` (or ``str(result)``) the sentence.

    Raises
    ------
    TypeError, ValueError
        For fewer than 2 rows, a model that does not return one score per row, or a bad
        parameter (named in the message).

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.shuffle import batch_consistency
    >>> X = np.random.default_rng(0).random((50, 3))
    >>> res = batch_consistency(lambda A: A[:, 0], X, random_state=0)
    >>> res.suspicious, res.summary().shape
    (False, (1, 8))

    A shuffling attack changes the scores of the rows with the batch:

    >>> from fairlens.shuffle import ShuffledModel
    >>> X[:, 2] = X[:, 2] > 0.5
    >>> attacked = ShuffledModel(lambda A: A[:, 0], protected=2, favoured=1, random_state=0)
    >>> batch_consistency(attacked, X, random_state=0).suspicious
    True
    """

    t0 = time.perf_counter()

    n_orders = check_int("n_orders", n_orders, min=0)
    n_subsets = check_int("n_subsets", n_subsets, min=0)
    n_single = check_int("n_single", n_single, min=0)
    n_duplicates = check_int("n_duplicates", n_duplicates, min=0)
    subset_fraction = check_real("subset_fraction", subset_fraction, min=0.0, max=1.0,
                                 include_min=False, include_max=False)
    atol = check_real("atol", atol, min=0.0, allow_none=True)
    rtol = check_real("rtol", rtol, min=0.0, allow_none=True)
    seed = resolve_random_state(random_state)
    rng = np.random.default_rng(seed)
    if isinstance(X, (str, bytes)) or X is None:
        raise TypeError(f"X must be a 2-D array or a DataFrame; got {type(X).__name__}.")
    call, X, adapted = _adapt(model, X, data, output, favourable)
    n = len(X)
    if n < 2:
        raise ValueError(f"X must contain at least 2 rows to test batch consistency; got {n}.")

    def query(R, m):
        out = np.asarray(call(R), dtype=np.float64).reshape(-1)
        if out.shape != (m,):
            raise ValueError(f"model must return one score per row; got shape {out.shape} for {m} rows.")
        return out

    ref = query(X, n)
    dtype = np.dtype(getattr(adapted, "output_dtype", None) or np.float64)
    eps = np.finfo(dtype).eps if dtype.kind == "f" else np.finfo(np.float64).eps
    ref_ok = np.isfinite(ref)
    if atol is None and rtol is None:
        tol_rows = TOL_ULPS * eps * np.maximum(1.0, np.abs(np.where(ref_ok, ref, 0.0)))
    else:
        span = float(np.ptp(ref[ref_ok])) if ref_ok.any() else 0.0
        tol_rows = np.full(n, (atol or 0.0) + (rtol or 0.0) * span)
    row_max = np.full(n, np.nan)
    records = []
    n_bad_ref = int((~ref_ok).sum())
    records.append({"kind": "reference", "n_rows": n, "max_abs_diff": 0.0,
                    "frac_changed": float(n_bad_ref / n), "n_nonfinite": n_bad_ref})
    if n_bad_ref:
        row_max[~ref_ok] = np.inf
    n_nonfinite = n_bad_ref

    def record(kind, idx, out):
        nonlocal n_nonfinite
        bad = ~np.isfinite(out) | ~ref_ok[idx]
        diff = np.where(bad, np.inf, np.abs(np.where(bad, 0.0, out - np.where(ref_ok[idx], ref[idx], 0.0))))
        # idx may repeat (duplicate query): reduce with fmax.at (NaN-aware)
        np.fmax.at(row_max, idx, diff)
        finite = diff[np.isfinite(diff)]
        n_nonfinite += int((~np.isfinite(out)).sum())
        records.append({"kind": kind, "n_rows": len(idx),
                        "max_abs_diff": float(finite.max()) if finite.size else float("nan"),
                        "frac_changed": float(np.mean(diff > tol_rows[idx])),
                        "n_nonfinite": int((~np.isfinite(out)).sum())})

    for k in range(n_orders):
        idx = np.arange(n)[::-1] if k == 0 else rng.permutation(n)
        record("order", idx, query(_take(X, idx), n))
    m = max(2, int(round(subset_fraction * n)))
    for _ in range(n_subsets):
        idx = np.sort(rng.choice(n, size=m, replace=False))
        record("subset", idx, query(_take(X, idx), m))
    for _ in range(n_duplicates):
        idx = np.concatenate([np.arange(n), np.arange(n)])
        record("duplicate", idx, query(_take(X, idx), 2 * n))
    if n_single:
        rows = rng.choice(n, size=min(n_single, n), replace=False)
        out = np.array([query(_take(X, [i]), 1)[0] for i in rows])
        record("single", rows, out)
    queried = ~np.isnan(row_max)
    moved = row_max[queried] > tol_rows[queried]
    frac = float(np.mean(moved)) if queried.any() else 0.0
    finite = row_max[queried & np.isfinite(row_max)]
    mx = float(finite.max()) if finite.size else 0.0
    describe = getattr(adapted, "describe", None)
    return BatchConsistencyResult(
        suspicious=bool(moved.any() or n_nonfinite > 0), max_abs_diff=mx, frac_rows_changed=frac,
        tol=float(tol_rows.max()), queries=pd.DataFrame.from_records(records), row_max_diff=row_max,
        n_nonfinite=int(n_nonfinite), output_dtype=str(dtype),
        model_input=describe() if callable(describe) else "",
        params=dict(n_orders=n_orders, n_subsets=n_subsets, subset_fraction=subset_fraction,
                    n_single=n_single, n_duplicates=n_duplicates, atol=atol, rtol=rtol, output=output),
        random_state=seed, elapsed=time.perf_counter() - t0,
    )
