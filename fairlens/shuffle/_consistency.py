"""Auditor-side batch-consistency detector (beyond the paper).

The paper's Discussion notes that "if SHAP or other XAI methods employ
consistency checks for the black-box model, the attack may be better
detected". A row-wise model gives every row the same score whatever batch it
arrives in; a shuffling attack does not. :func:`batch_consistency` queries
the model on the same rows in several batch compositions and orders (and row
by row) and reports how much the outputs move.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["BatchConsistencyResult", "batch_consistency"]


@dataclass
class BatchConsistencyResult:
    """Outcome of :func:`batch_consistency`.

    Attributes
    ----------
    suspicious : bool
        ``True`` when some row's score moved by more than ``tol``.
    max_abs_diff : float
        Largest |score change| of any row across all queries.
    frac_rows_changed : float
        Fraction of re-queried rows whose score moved by more than ``tol``.
    tol : float
        Tolerance used (``atol + rtol * score range``).
    queries : DataFrame
        One row per query: ``kind`` (order / subset / single / duplicate),
        ``n_rows``, ``max_abs_diff``, ``frac_changed``.
    row_max_diff : ndarray
        Per row of ``X``: largest |change| over the queries that included it
        (NaN when never re-queried).
    """

    suspicious: bool
    max_abs_diff: float
    frac_rows_changed: float
    tol: float
    queries: pd.DataFrame
    row_max_diff: np.ndarray

    def to_frame(self):
        """The per-query table."""
        return self.queries.copy()

    def summary(self):
        """One-line verdict."""
        verdict = "SUSPICIOUS: outputs depend on the batch" if self.suspicious else "consistent"
        return (f"{verdict} (max |change| {self.max_abs_diff:.3g}, "
                f"{100 * self.frac_rows_changed:.1f}% of rows moved, tol {self.tol:.2g})")

    def plot(self, ax=None, **kwargs):
        """Max |score change| per query kind."""
        from .plots import plot_batch_consistency

        return plot_batch_consistency(self, ax=ax, **kwargs)


def _take(X, idx):
    if isinstance(X, pd.DataFrame):
        return X.iloc[idx].reset_index(drop=True)
    return np.asarray(X)[idx]


def _call(model, X, n):
    out = np.asarray(model(X), dtype=np.float64)
    if out.ndim == 2 and out.shape[1] == 2:
        out = out[:, 1]
    out = out.reshape(-1)
    if out.shape != (n,):
        raise ValueError(f"model must return one score per row; got shape {out.shape} for {n} rows.")
    return out


def batch_consistency(model, X, *, n_orders=3, n_subsets=4, subset_fraction=0.5, n_single=30,
                      n_duplicates=1, atol=1e-9, rtol=1e-7, random_state=None):
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
    call ``model(X)``.

    Parameters
    ----------
    model : callable
        Batch scorer (any callable mapping ``(n, d)`` to ``(n,)``, or a
        :class:`ShuffledModel`).
    X : array or DataFrame
        Rows to audit (at least 2).
    atol, rtol : float
        A change counts when it exceeds ``atol + rtol * (max - min)`` of the
        reference scores (allows for floating-point noise of batched maths).
    random_state : None, int or Generator

    Returns
    -------
    BatchConsistencyResult
    """
    n = len(X)
    if n < 2:
        raise ValueError("X must contain at least 2 rows to test batch consistency.")
    if not 0.0 < subset_fraction < 1.0:
        raise ValueError(f"subset_fraction must be in (0, 1); got {subset_fraction!r}.")
    for name, v in (("n_orders", n_orders), ("n_subsets", n_subsets), ("n_single", n_single),
                    ("n_duplicates", n_duplicates)):
        if int(v) != v or v < 0:
            raise ValueError(f"{name} must be a non-negative integer; got {v!r}.")
    rng = np.random.default_rng(random_state)
    ref = _call(model, X, n)
    tol = float(atol + rtol * (np.ptp(ref) if n else 0.0))
    row_max = np.full(n, np.nan)
    records = []

    def record(kind, idx, out):
        diff = np.abs(out - ref[idx])
        # idx may repeat (duplicate query): reduce with fmax.at (NaN-aware)
        np.fmax.at(row_max, idx, diff)
        records.append({"kind": kind, "n_rows": len(idx), "max_abs_diff": float(diff.max()),
                        "frac_changed": float(np.mean(diff > tol))})

    for k in range(n_orders):
        idx = np.arange(n)[::-1] if k == 0 else rng.permutation(n)
        record("order", idx, _call(model, _take(X, idx), n))
    m = max(2, int(round(subset_fraction * n)))
    for _ in range(n_subsets):
        idx = np.sort(rng.choice(n, size=m, replace=False))
        record("subset", idx, _call(model, _take(X, idx), m))
    for _ in range(n_duplicates):
        idx = np.concatenate([np.arange(n), np.arange(n)])
        record("duplicate", idx, _call(model, _take(X, idx), 2 * n))
    if n_single:
        rows = rng.choice(n, size=min(int(n_single), n), replace=False)
        out = np.array([_call(model, _take(X, [i]), 1)[0] for i in rows])
        record("single", rows, out)
    queried = ~np.isnan(row_max)
    frac = float(np.mean(row_max[queried] > tol)) if queried.any() else 0.0
    mx = float(np.nanmax(row_max)) if queried.any() else 0.0
    return BatchConsistencyResult(
        suspicious=bool(mx > tol), max_abs_diff=mx, frac_rows_changed=frac, tol=tol,
        queries=pd.DataFrame.from_records(records), row_max_diff=row_max,
    )
