"""Group fairness score with an error bound (TestSGD section 4.2-4.3, Algorithm 2).

Two implementations that consume the SAME random stream and therefore return
identical numbers for the same seed:

* :func:`group_fairness_score_reference` -- literal Algorithm 2: one sample
  inside and one outside the group per iteration, one model call per sample.
* :func:`score_rule_sets` -- batched: samples for many rule sets are drawn in
  numba (:func:`_kernels.sample_rows`), scored in large model calls, and the
  stopping rule of lines 8-13 is evaluated on cumulative counts, so the
  stopping sample count ``num`` is exactly the one Algorithm 2 would reach.

Random stream (the documented choice that makes both agree): each iteration of
Algorithm 2 consumes six uniforms ``u`` from ``numpy.random.Generator.random``:
``u[0:3]`` for ``Sample(D, R)`` and ``u[3:6]`` for ``Sample(D, not R)``;
``Sample`` picks the seed ``floor(u0 * #seeds)``, the perturbed non-sensitive
column ``floor(u1 * #columns)`` and the direction ``-1 if u2 < 0.5 else +1``.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd
from scipy.stats import norm

from .._base import (
    Interval,
    Options,
    Result,
    check_progress,
    resolve_random_state,
    strict_keywords,
    to_jsonable,
    validated,
)
from .._parallel import Payload, check_n_jobs, fixed_chunks, plan_workers, run_chunks
from .._validation import check_choice, check_int, check_memory, check_probability, check_real, check_stop
from ..models import Scorer, as_scorer
from . import _kernels
from ._rules import RuleSet, TableView, as_table
from .plots import plot_rates

__all__ = [
    "ScoreResult",
    "Sampler",
    "z_value",
    "group_fairness_score",
    "group_fairness_score_reference",
    "score_rule_sets",
    "RuleSetScores",
    "make_scorer",
    "favourable_labels",
]

DEFAULT_MAX_SAMPLES = 100_000


@validated({
    "confidence": [Interval(numbers.Real, 0, 1, closed="neither")],
})
def z_value(confidence: float) -> float:
    """Two-sided normal quantile for a confidence level.

    Parameters
    ----------
    confidence : float in (0, 1)
        The two-sided confidence level.

    Returns
    -------
    float
        ``z`` with ``P(|N(0, 1)| <= z) = confidence``.

    Raises
    ------
    ValueError
        If ``confidence`` is not in (0, 1).

    Examples
    --------
    >>> from fairlens.testsgd import z_value
    >>> round(z_value(0.95), 2)
    1.96
    """
    confidence = check_real("confidence", confidence, min=0.0, max=1.0, include_min=False,
                            include_max=False)
    return float(norm.ppf(0.5 + confidence / 2.0))


def resolve_stop(stop, where=None):
    """The one stop convention (:func:`fairlens._validation.check_stop`)."""
    return check_stop(stop)


def favourable_labels(table, favourable):
    """``True`` where the dataset's label is the favourable outcome the model is audited for.

    fairlens datasets code ``y`` as 0/1 with 1 = the favourable outcome, while ``favourable``
    names a class of the *model*: 1 (or 0) for a model fitted on ``y``, or a readable label
    such as ``"good"`` for a pipeline fitted on the readable target column.  A label is
    looked up in the dataset's readable target column (``frame[target]``), then in ``y``
    itself, then in ``label_names``; a label found nowhere is an error (never a silent
    comparison that makes every row negative).
    """
    y = np.asarray(table.y)
    src = getattr(table, "source", None)
    frame, target = getattr(src, "frame", None), getattr(src, "target", None)
    if (frame is not None and target is not None and target in getattr(frame, "columns", ())
            and len(frame) == y.shape[0] and not isinstance(favourable, (int, np.integer))):
        col = frame[target].to_numpy()
        if np.any(col == favourable):
            return col == favourable
    try:
        if np.any(y == favourable):
            return y == favourable
    except (TypeError, ValueError):  # an uncomparable label
        pass
    names = dict(getattr(src, "label_names", None) or {})
    for code, label in names.items():
        if label == favourable:
            return y == code
    if isinstance(favourable, (int, np.integer)) and favourable in (0, 1) and set(np.unique(y)) <= {0, 1}:
        return y == favourable
    raise ValueError(
        f"favourable={favourable!r} is neither a value of the dataset's labels y "
        f"{np.unique(y)[:5].tolist()} nor a label of its target column; pass the model class that "
        "is the favourable outcome")


def make_scorer(model, dataset=None, *, favourable_class=1):
    """Adapt ``model`` once with :func:`fairlens.models.as_scorer` (idempotent on a Scorer).

    ``dataset`` (a Dataset or a :class:`TableView` built from one) lets the scorer align a
    DataFrame-fitted model by column name and decode rows for a readable-frame pipeline.
    """

    if isinstance(model, Scorer):
        return model
    if isinstance(dataset, TableView):
        names = list(dataset.feature_names)
        dataset = dataset.source
    else:
        names = None if dataset is None else list(dataset.feature_names)
    if dataset is not None and not (hasattr(dataset, "decode") and hasattr(dataset, "n_samples")):
        # a duck-typed table (X, feature_names, ...) without the Dataset API: the model is
        # aligned by column name but cannot be handed decoded (readable) rows
        return as_scorer(model, None, favourable=favourable_class, feature_names=names)
    if dataset is None:
        return as_scorer(model, None, favourable=favourable_class, feature_names=names)
    return as_scorer(model, dataset, favourable=favourable_class)


@dataclass
class ScoreResult(Result):
    """Outcome of Algorithm 2 for one rule set.

    Parameters
    ----------
    rule_set : RuleSet
        The group ``R``.
    rate_in, rate_out : float
        phi_r and phi_not_r: favourable-prediction rates inside/outside the group.
    score : float
        ``|rate_in - rate_out|`` (Definition 4.1).
    margin : float
        ``z sqrt(phi_r(1-phi_r)/n) + z sqrt(phi_nr(1-phi_nr)/n)`` (line 11).
    n_samples : int
        ``num``: samples drawn per group when sampling stopped.
    converged : bool
        ``margin <= error_thr``; False when the ``max_samples`` cap was hit.
    confidence : float
        ``delta_r * delta_nr = delta**2`` (Theorem 4.2).
    status : str
        "ok", "cap" (cap reached before the bound) or "no-seeds" (nobody in D
        satisfies R, or everybody does, so one group cannot be sampled).
    support : float
        Fraction of D satisfying R.
    aliases : tuple of str
        Other rule sets selecting exactly the same rows of D: one finding, listed once
        (filled by :class:`TestSGD`, which scores one rule set per distinct row mask, and by
        :meth:`TestSGDReport.merge_equivalent`).
    fresh : ScoreResult or None
        For the top rule sets of a :class:`TestSGDReport`: the same rule set re-estimated on
        FRESH samples (an independent random stream, the same sample-size rule). The
        selection estimate (``score``) of a rule set ranked near the top is biased upward
        (it is the maximum of many noisy estimates); ``fresh.score`` is independent of the
        selection, so its bound ``fresh.margin`` holds at ``fresh.confidence`` for the
        rule sets that were chosen.
    n_in, n_out : int
        Rows of D inside the group R and outside it (the seeds each side is sampled from);
        -1 when unknown (text reports).
    small_side : str
        ``"rest"`` (or ``"group"``) when that side holds fewer rows of D than the minimum the
        run asked for (:class:`TestSGD`'s ``min_side_rows``): the comparison is then with a
        handful of people, not with "everybody else"; ``""`` when both sides are large enough
        or nobody checked.

    Notes
    -----
    The score is the paper's unsigned ``|phi_r - phi_not_r|``. Which way the group is
    treated is in ``signed_score = rate_in - rate_out``, ``favoured``/``disfavoured``
    (the description of the group with the higher/lower favourable rate: the rule set
    ``R`` or its complement ``not (R)``) and ``favoured_rate``/``disfavoured_rate``.

    Examples
    --------
    >>> from fairlens.datasets import load_german_credit
    >>> from fairlens.testsgd import frequent_rule_sets, group_fairness_score
    >>> data = load_german_credit()
    >>> k = data.index_of("duration")
    >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
    >>> rs = frequent_rule_sets(data, ["sex"], theta=0.2).rule_sets[0]
    >>> res = group_fairness_score(model, data, rs, ["sex"], random_state=0)
    >>> str(res.rule_set), res.status, res.converged, res.n_samples
    ('sex=female', 'ok', True, 1456)
    >>> round(res.score, 4), round(res.margin, 4), res.favoured
    (0.0625, 0.05, 'sex=female')
    """

    rule_set: RuleSet
    rate_in: float
    rate_out: float
    score: float
    margin: float
    n_samples: int
    converged: bool
    confidence: float
    status: str = "ok"
    support: float = float("nan")
    aliases: tuple = ()
    fresh: object = None
    n_in: int = -1
    n_out: int = -1
    small_side: str = ""

    title = "TestSGD group fairness score"

    def summary(self) -> pd.DataFrame:
        """One row: the rule set, its rates, score, margin, samples and status (as :meth:`to_frame`).

        Returns
        -------
        pandas.DataFrame
            One row.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import frequent_rule_sets, group_fairness_score
        >>> data = load_german_credit()
        >>> k = data.index_of("duration")
        >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
        >>> rs = frequent_rule_sets(data, ["sex"], theta=0.2).rule_sets[0]
        >>> res = group_fairness_score(model, data, rs, ["sex"], random_state=0)
        >>> res.summary()[["rule_set", "score", "status"]]
             rule_set   score status
        0  sex=female  0.0625     ok
        """
        return self.to_frame()

    def to_dict(self) -> dict:
        """JSON-safe dict of the estimate (and of its fresh re-estimate, if any).

        Returns
        -------
        dict
            JSON-safe.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import frequent_rule_sets, group_fairness_score
        >>> data = load_german_credit()
        >>> k = data.index_of("duration")
        >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
        >>> rs = frequent_rule_sets(data, ["sex"], theta=0.2).rule_sets[0]
        >>> res = group_fairness_score(model, data, rs, ["sex"], random_state=0)
        >>> d = res.to_dict()
        >>> sorted(d)
        ['elapsed', 'fresh', 'params', 'random_state', 'stopped', 'summary', 'title', 'type']
        >>> d["random_state"], d["fresh"]
        (0, None)
        """
        d = super().to_dict()
        d["fresh"] = None if self.fresh is None else self.fresh.to_dict()
        return to_jsonable(d)

    # ---- which way the group is treated (signed view of the unsigned score)
    @property
    def signed_score(self) -> float:
        """``rate_in - rate_out``: > 0 when the group R is favoured, < 0 when disfavoured."""
        return float(self.rate_in - self.rate_out)

    @property
    def sign(self) -> int:
        """+1 (R favoured), -1 (not R favoured), 0 (equal rates or not estimated)."""
        d = self.signed_score
        return 0 if not np.isfinite(d) or d == 0 else (1 if d > 0 else -1)

    def _groups(self):
        inside, outside = str(self.rule_set), f"not ({self.rule_set})"
        return (inside, outside) if self.sign >= 0 else (outside, inside)

    @property
    def favoured(self) -> str:
        """The group with the higher favourable rate (R, or ``not (R)``); "" when equal or NaN."""
        return self._groups()[0] if self.sign else ""

    @property
    def disfavoured(self) -> str:
        """The group with the lower favourable rate; "" when the rates are equal or NaN."""
        return self._groups()[1] if self.sign else ""

    @property
    def favoured_rate(self) -> float:
        return float(max(self.rate_in, self.rate_out)) if np.isfinite(self.signed_score) else float("nan")

    @property
    def disfavoured_rate(self) -> float:
        return float(min(self.rate_in, self.rate_out)) if np.isfinite(self.signed_score) else float("nan")

    def _group_margin(self, p):
        if not self.n_samples or not np.isfinite(p):
            return float("nan")
        z = z_value(float(np.sqrt(self.confidence)))
        return float(z * np.sqrt(p * (1 - p) / self.n_samples))

    @property
    def margin_in(self) -> float:
        """epsilon_r = z sqrt(phi_r (1 - phi_r) / n) (Eq. 7)."""
        return self._group_margin(self.rate_in)

    @property
    def margin_out(self) -> float:
        """epsilon_not_r (Eq. 7)."""
        return self._group_margin(self.rate_out)

    def plot(self, ax=None):
        """Favourable rates inside and outside the group with their margins; returns the axes.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (a new figure if None).

        Returns
        -------
        matplotlib Axes
            The axes drawn on.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import frequent_rule_sets, group_fairness_score
        >>> data = load_german_credit()
        >>> k = data.index_of("duration")
        >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
        >>> rs = frequent_rule_sets(data, ["sex"], theta=0.2).rule_sets[0]
        >>> res = group_fairness_score(model, data, rs, ["sex"], random_state=0)
        >>> ax = res.plot()
        """
        return plot_rates(self, ax=ax)

    @property
    def ci(self) -> tuple:
        return (max(0.0, self.score - self.margin), self.score + self.margin)

    @property
    def fresh_score(self) -> float:
        """Score of the fresh re-estimate (NaN when the rule set was not re-estimated)."""
        return float(self.fresh.score) if self.fresh is not None else float("nan")

    @property
    def fresh_margin(self) -> float:
        """Margin of the fresh re-estimate (NaN when the rule set was not re-estimated)."""
        return float(self.fresh.margin) if self.fresh is not None else float("nan")

    @property
    def fresh_ci(self) -> tuple:
        """``(fresh_score - fresh_margin, fresh_score + fresh_margin)``, clipped at 0 (NaN if none)."""
        if self.fresh is None:
            return (float("nan"), float("nan"))
        return self.fresh.ci

    @property
    def reported_score(self) -> float:
        """The score to quote: the fresh estimate when there is one, else the selection estimate."""
        return self.fresh_score if self.fresh is not None else float(self.score)

    def _fresh_columns(self) -> dict:
        f = self.fresh
        nan = float("nan")
        return {"fresh_score": nan if f is None else f.score, "fresh_margin": nan if f is None else f.margin,
                "fresh_rate_in": nan if f is None else f.rate_in, "fresh_rate_out": nan if f is None else f.rate_out,
                "fresh_n_samples": 0 if f is None else int(f.n_samples),
                "fresh_confidence": nan if f is None else f.confidence}

    def to_frame(self) -> pd.DataFrame:
        """One row: rule set, support, rates, score, margin, samples, status, fresh columns.

        Returns
        -------
        pandas.DataFrame
            One row; the ``fresh_*`` columns are NaN (0 samples) without a fresh re-estimate.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import frequent_rule_sets, group_fairness_score
        >>> data = load_german_credit()
        >>> k = data.index_of("duration")
        >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
        >>> rs = frequent_rule_sets(data, ["sex"], theta=0.2).rule_sets[0]
        >>> res = group_fairness_score(model, data, rs, ["sex"], random_state=0)
        >>> row = res.to_frame().iloc[0]
        >>> row["favoured"], row["disfavoured"], int(row["fresh_n_samples"])
        ('sex=female', 'not (sex=female)', 0)
        """
        return pd.DataFrame([{
            "rule_set": str(self.rule_set), "support": self.support, "rate_in": self.rate_in,
            "rate_out": self.rate_out, "score": self.score, "signed_score": self.signed_score,
            "favoured": self.favoured, "favoured_rate": self.favoured_rate,
            "disfavoured": self.disfavoured, "disfavoured_rate": self.disfavoured_rate,
            "margin": self.margin, "n_samples": self.n_samples, "converged": self.converged,
            "confidence": self.confidence, "status": self.status,
            "aliases": "; ".join(self.aliases), "n_in": int(self.n_in), "n_out": int(self.n_out),
            "small_side": self.small_side, **self._fresh_columns(),
        }])


class Sampler:
    """Section 4.3 sampling for structured data.

    A sample is a seed row of ``D`` (satisfying R, or not R) with ONE random
    non-sensitive attribute moved by ``+-s_pert`` and clipped to the feature's
    domain ``bounds``. ``s_pert`` is 1 for categorical/integer features and
    0.01 for continuous ("decimal") ones (Table 2), unless overridden.

    Parameters
    ----------
    table : TableView
        The data ``D`` (see :func:`fairlens.testsgd._rules.as_table`).
    protected : list of str
        Features never perturbed (all protected features ``S``).
    perturbation : float or dict, optional
        Override ``s_pert``: one value for all, or ``feature -> value``.

    Raises
    ------
    ValueError
        If a protected feature (or a key of ``perturbation``) is not a column.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.datasets import load_german_credit
    >>> from fairlens.testsgd import Sampler
    >>> from fairlens.testsgd._rules import as_table
    >>> table = as_table(load_german_credit())
    >>> sampler = Sampler(table, ["sex", "age"])
    >>> sampler.free_cols.size, sampler.n_neighbours
    (19, 38000)
    >>> x = sampler.sample_one(np.array([0, 1, 2]), np.array([0.1, 0.0, 0.9]))
    >>> changed = np.flatnonzero(x != table.X[0])
    >>> [table.feature_names[j] for j in changed], float(x[0] - table.X[0, 0])
    (['checking_status'], 1.0)
    """

    @strict_keywords(renamed={"sensitive": "protected"})
    def __init__(self, table: TableView, protected: Sequence[str], perturbation=None):
        sensitive = protected
        self.table = table
        sens = {table.index_of(f) for f in sensitive}
        d = table.X.shape[1]
        self.free_cols = np.array([j for j in range(d) if j not in sens], dtype=np.int64)
        step = np.array([0.01 if t == "continuous" else 1.0 for t in table.feature_types], dtype=np.float64)
        if perturbation is not None:
            if isinstance(perturbation, dict):
                for f, v in perturbation.items():
                    step[table.index_of(f)] = float(v)
            else:
                step[:] = float(perturbation)
        self.step = step
        self.lo = np.ascontiguousarray(table.bounds[:, 0], dtype=np.float64)
        self.hi = np.ascontiguousarray(table.bounds[:, 1], dtype=np.float64)

    def sample(self, seeds_list: Sequence[np.ndarray], group: np.ndarray, U: np.ndarray) -> np.ndarray:
        """Rows for ``group[i]`` (index into ``seeds_list``) from uniforms ``U`` (B, 3).

        The batched twin of :meth:`sample_one` (same rows for the same uniforms).

        Parameters
        ----------
        seeds_list : sequence of int arrays
            The seed rows (indices into the data) of each group.
        group : int array of shape (B,)
            Which group (index into ``seeds_list``) each sample is drawn for.
        U : float array of shape (B, 3)
            Uniforms in [0, 1): seed, perturbed column, direction.

        Returns
        -------
        ndarray of shape (B, d)
            The sampled rows.

        Raises
        ------
        ValueError
            If a group has no seeds.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import Sampler
        >>> from fairlens.testsgd._rules import as_table
        >>> table = as_table(load_german_credit())
        >>> sampler = Sampler(table, ["sex", "age"])
        >>> seeds = [np.array([0, 1]), np.array([5, 6, 7])]
        >>> U = np.random.default_rng(0).random((4, 3))
        >>> rows = sampler.sample(seeds, np.array([0, 1, 1, 0]), U)
        >>> rows.shape
        (4, 21)
        >>> np.array_equal(rows[1], sampler.sample_one(seeds[1], U[1]))
        True
        """
        lens = np.array([len(s) for s in seeds_list], dtype=np.int64)
        if np.any(lens == 0):
            raise ValueError("cannot sample a group without seeds")
        starts = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
        flat = np.concatenate([np.asarray(s, dtype=np.int64) for s in seeds_list])
        out = np.empty((group.shape[0], self.table.X.shape[1]), dtype=np.float64)
        _kernels.sample_rows(self.table.X, flat, starts, lens, np.ascontiguousarray(group, np.int64),
                             np.ascontiguousarray(U, np.float64), self.free_cols, self.step,
                             self.lo, self.hi, out)
        return out

    @property
    def n_neighbours(self) -> int:
        """Number of distinct samples: seeds x free columns x 2 directions."""
        return self.table.X.shape[0] * max(1, self.free_cols.size) * 2

    def neighbourhood_labels(self, scorer, threshold: float = 0.5, batch_rows: int = 65_536):
        """Model labels of EVERY possible sample, shape (n, max(1, k), 2) uint8.

        Each sample of section 4.3 is fully determined by (seed, column,
        direction), so scoring this finite neighbourhood once and looking the
        labels up (:func:`_kernels.lookup_labels`) gives exactly the labels
        sampling-then-calling the model gives.

        Parameters
        ----------
        scorer : callable
            Maps rows of shape (m, d) to scores of shape (m,).
        threshold : float, default 0.5
            A score ``>= threshold`` is label 1.
        batch_rows : int, default 65536
            Rows per call of ``scorer``.

        Returns
        -------
        table : ndarray of uint8, shape (n, max(1, k), 2)
            Label of (seed, free column, direction -/+).
        n_rows : int
            Number of rows scored.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import Sampler
        >>> from fairlens.testsgd._rules import as_table
        >>> table = as_table(load_german_credit())
        >>> sampler = Sampler(table, ["sex", "age"])
        >>> k = table.feature_names.index("duration")
        >>> labels, n_rows = sampler.neighbourhood_labels(lambda X: (X[:, k] < 24).astype(float))
        >>> labels.shape, n_rows
        ((1000, 19, 2), 38000)
        """
        X = self.table.X
        n, d = X.shape
        kk = max(1, self.free_cols.size)
        table = np.empty((n, kk, 2), dtype=np.uint8)
        per = max(1, int(batch_rows) // (2 * kk))
        for a in range(0, n, per):
            rows = np.arange(a, min(n, a + per), dtype=np.int64)
            out = np.empty((rows.size * kk * 2, d), dtype=np.float64)
            _kernels.neighbourhood_rows(X, rows, self.free_cols, self.step, self.lo, self.hi, out)
            lab = np.asarray(scorer(out), dtype=np.float64) >= threshold
            table[a:a + rows.size] = lab.reshape(rows.size, kk, 2)
        return table, n * kk * 2

    def lookup(self, table, seeds_list, group, U) -> np.ndarray:
        """Labels of the samples :meth:`sample` would draw, read from ``table``.

        Parameters
        ----------
        table : ndarray of uint8, shape (n, max(1, k), 2)
            The labels of :meth:`neighbourhood_labels`.
        seeds_list, group, U
            As in :meth:`sample`.

        Returns
        -------
        ndarray of int64, shape (B,)
            The label of each sample.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import Sampler
        >>> from fairlens.testsgd._rules import as_table
        >>> table = as_table(load_german_credit())
        >>> sampler = Sampler(table, ["sex", "age"])
        >>> k = table.feature_names.index("duration")
        >>> model = lambda X: (X[:, k] < 24).astype(float)
        >>> labels, _ = sampler.neighbourhood_labels(model)
        >>> seeds, group = [np.arange(10)], np.zeros(50, dtype=np.int64)
        >>> U = np.random.default_rng(0).random((50, 3))
        >>> looked_up = sampler.lookup(labels, seeds, group, U)
        >>> np.array_equal(looked_up, model(sampler.sample(seeds, group, U)) >= 0.5)
        True
        """
        lens = np.array([len(s) for s in seeds_list], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
        flat = np.concatenate([np.asarray(s, dtype=np.int64) for s in seeds_list])
        out = np.empty(group.shape[0], dtype=np.int64)
        _kernels.lookup_labels(table, np.int64(self.free_cols.size), flat, starts, lens,
                               np.ascontiguousarray(group, np.int64), np.ascontiguousarray(U, np.float64), out)
        return out

    def sample_one(self, seeds: np.ndarray, u: np.ndarray) -> np.ndarray:
        """One sample, literally as in section 4.3 (no kernel; reference path).

        Parameters
        ----------
        seeds : int array
            The seed rows (indices into the data) of the group.
        u : float array of shape (3,)
            Uniforms in [0, 1): seed, perturbed column, direction (``-1`` if ``u[2] < 0.5``).

        Returns
        -------
        ndarray of shape (d,)
            The seed row with one non-protected column moved by ``-+s_pert`` (clipped).

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import Sampler
        >>> from fairlens.testsgd._rules import as_table
        >>> table = as_table(load_german_credit())
        >>> sampler = Sampler(table, ["sex", "age"])
        >>> x = sampler.sample_one(np.array([3]), np.array([0.0, 0.1, 0.2]))
        >>> changed = np.flatnonzero(x != table.X[3])
        >>> [table.feature_names[j] for j in changed], float(x[changed[0]] - table.X[3, changed[0]])
        (['duration'], -1.0)
        """
        x = self.table.X[seeds[min(int(u[0] * len(seeds)), len(seeds) - 1)]].copy()
        if self.free_cols.size:
            col = self.free_cols[min(int(u[1] * self.free_cols.size), self.free_cols.size - 1)]
            v = x[col] + (-1.0 if u[2] < 0.5 else 1.0) * self.step[col]
            x[col] = min(max(v, self.lo[col]), self.hi[col])
        return x


def _check_alg2_params(error_thr, sample_thr, max_samples, threshold=0.5, confidence=0.95,
                       name="error_thr"):
    """Algorithm 2's parameters, validated once (values returned as Python numbers)."""
    error_thr = check_real(name, error_thr, min=0.0, max=1.0, include_min=False)
    sample_thr = check_int("sample_thr", sample_thr, min=1)
    max_samples = check_int("max_samples", max_samples, min=1)
    if max_samples <= sample_thr:
        raise ValueError(f"max_samples ({max_samples}) must exceed sample_thr ({sample_thr})")
    check_memory_samples(max_samples)
    threshold = check_probability("threshold", threshold)
    z_value(confidence)
    return error_thr, sample_thr, max_samples, threshold


def check_memory_samples(max_samples):

    # two int64 label histories per rule set of up to max_samples entries
    check_memory(16.0 * max_samples, f"max_samples={max_samples}",
                 "lower max_samples (the cap on samples per group; 100000 is the default)")


def check_perturbation(perturbation, feature_names):
    """``s_pert``: None, a positive number, or ``{feature: positive number}``."""
    if perturbation is None:
        return None
    if isinstance(perturbation, dict):
        for f, v in perturbation.items():
            if f not in feature_names:
                raise ValueError(f"perturbation names unknown feature {f!r}; choose from {list(feature_names)}")
            check_real(f"perturbation[{f!r}]", v, min=0.0, include_min=False)
        return perturbation
    return check_real("perturbation", perturbation, min=0.0, include_min=False)


def _margin(c_in, c_out, n, z):
    p = c_in / n
    q = c_out / n
    return z * np.sqrt(p * (1 - p) / n) + z * np.sqrt(q * (1 - q) / n)


def _seeds(mask):
    return np.flatnonzero(mask), np.flatnonzero(~mask)


#: The table the two scorers of one rule set share (:func:`score_rule_set_reference` and
#: :func:`score_rule_set`, which also takes ``method`` and ``stop``).
_SCORE_TABLE = {
    "model": "no_validation", "data": "no_validation", "rule_set": "no_validation",
    "protected": "no_validation", "error": [Interval(numbers.Real, 0, 1, closed="right")],
    "confidence": [Interval(numbers.Real, 0, 1, closed="neither")],
    "sample_thr": [Interval(numbers.Integral, 1, None)], "max_samples": [Interval(numbers.Integral, 1, None)],
    "threshold": [Interval(numbers.Real, 0, 1)], "perturbation": "no_validation",
    "random_state": ["random_state"],
}


@strict_keywords(renamed={"error_thr": "error", "sensitive": "protected", "dataset": "data"})
@validated(_SCORE_TABLE)
def group_fairness_score_reference(model, data, rule_set: RuleSet, protected: Sequence[str], *,
                                   error: float = 0.05, confidence: float = 0.95,
                                   sample_thr: int = 1000, max_samples: int = DEFAULT_MAX_SAMPLES,
                                   threshold: float = 0.5, perturbation=None,
                                   random_state=None) -> ScoreResult:
    """Literal Algorithm 2 (one sample per group per iteration, one model call each).

    Slow on purpose: the faithful twin of :func:`score_rule_sets`. ``max_samples``
    caps ``num`` (the paper loops forever if the bound is unreachable); when hit,
    the result has ``converged=False, status="cap"``.

    Parameters
    ----------
    model : estimator, pipeline or callable
        Adapted with :func:`fairlens.models.as_scorer`.
    data : fairlens Dataset
        The data ``D`` the seeds come from.
    rule_set : RuleSet
        The group ``R``.
    protected : list of str
        Protected features (never perturbed by the sampler).
    error, confidence, sample_thr, max_samples, threshold, perturbation
        As in :func:`group_fairness_score`.
    random_state : None, int, numpy Generator or RandomState
        Resolved once by :func:`fairlens._base.resolve_random_state`; the draws come from
        ``numpy.random.default_rng(seed)``.

    Returns
    -------
    ScoreResult

    Raises
    ------
    TypeError, ValueError
        For a bad parameter (the message names it).

    Examples
    --------
    >>> from fairlens.datasets import load_german_credit
    >>> from fairlens.testsgd import frequent_rule_sets, group_fairness_score
    >>> data = load_german_credit()
    >>> k = data.index_of("duration")
    >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
    >>> rs = frequent_rule_sets(data, ["sex"], theta=0.2).rule_sets[0]
    >>> res = group_fairness_score(model, data, rs, ["sex"], random_state=0)
    >>> from fairlens.testsgd import group_fairness_score_reference
    >>> ref = group_fairness_score_reference(model, data, rs, ["sex"], random_state=0)
    >>> (ref.score, ref.n_samples) == (res.score, res.n_samples)
    True
    """
    seed = resolve_random_state(random_state)
    out = _reference_score(model, data, rule_set, protected, np.random.default_rng(seed), error=error,
                           confidence=confidence, sample_thr=sample_thr, max_samples=max_samples,
                           threshold=threshold, perturbation=perturbation)
    out.random_state = seed
    return out


def _reference_score(model, data, rule_set, protected, rng, *, error=0.05, confidence=0.95, sample_thr=1000,
                     max_samples=DEFAULT_MAX_SAMPLES, threshold=0.5, perturbation=None) -> ScoreResult:
    """Literal Algorithm 2 drawing from the generator ``rng`` as is (the cross-check of the
    batched engine's per-rule-set streams, :func:`rule_set_rng`)."""
    error_thr, sample_thr, max_samples, threshold = _check_alg2_params(
        error, sample_thr, max_samples, threshold, confidence, name="error")
    table = as_table(data)
    perturbation = check_perturbation(perturbation, table.feature_names)
    scorer = make_scorer(model, table)
    z = z_value(confidence)
    sampler = Sampler(table, protected, perturbation)
    mask = rule_set.mask(table.X)
    s_in, s_out = _seeds(mask)
    support = float(mask.mean())
    sizes = dict(n_in=int(s_in.size), n_out=int(s_out.size))
    if s_in.size == 0 or s_out.size == 0:
        return ScoreResult(rule_set, np.nan, np.nan, np.nan, np.nan, 0, False, confidence ** 2,
                           "no-seeds", support, **sizes)
    c_in = c_out = 0
    num = 0
    eps = math.inf
    phi_r = phi_nr = np.nan
    while eps > error_thr:                      # line 2
        if num >= max_samples:
            break
        u = rng.random(6)
        x = sampler.sample_one(s_in, u[:3])       # line 3
        xp = sampler.sample_one(s_out, u[3:])     # line 4
        c_in += int(scorer(x[None, :])[0] >= threshold)   # lines 5-6 (labels kept as counts)
        c_out += int(scorer(xp[None, :])[0] >= threshold)
        num += 1                                  # line 7
        if num > sample_thr:                      # line 8
            phi_r = c_in / num                    # line 9
            phi_nr = c_out / num                  # line 10
            eps = z * math.sqrt(phi_r * (1 - phi_r) / num) + z * math.sqrt(phi_nr * (1 - phi_nr) / num)
    conv = eps <= error_thr
    return ScoreResult(rule_set, float(phi_r), float(phi_nr), float(abs(phi_r - phi_nr)), float(eps),
                       num, bool(conv), confidence ** 2, "ok" if conv else "cap", support, **sizes)


@strict_keywords(renamed={"error_thr": "error", "sensitive": "protected", "dataset": "data"})
@validated({**_SCORE_TABLE, "method": [Options("batched", "reference")], "stop": ["stop"]})
def group_fairness_score(model, data, rule_set: RuleSet, protected: Sequence[str], *,
                         error: float = 0.05, confidence: float = 0.95, sample_thr: int = 1000,
                         max_samples: int = DEFAULT_MAX_SAMPLES, threshold: float = 0.5,
                         perturbation=None, random_state=None, method: str = "batched",
                         stop=None) -> ScoreResult | None:
    """Group fairness score of one rule set (Algorithm 2).

    Parameters
    ----------
    model : estimator, pipeline or callable
        Adapted with :func:`fairlens.models.as_scorer`.
    data : fairlens Dataset
        The data ``D`` the seeds come from.
    rule_set : RuleSet
        The group ``R`` (e.g. from :func:`frequent_rule_sets`).
    protected : list of str
        Protected features (the sampler never perturbs them).
    error : float in (0, 1], default 0.05
        ``error_thr`` of Algorithm 2: sampling stops when the margin is below it.
    confidence : float in (0, 1), default 0.95
        ``delta`` per group (the score holds at ``delta**2``).
    sample_thr : int >= 1, default 1000
        No stop before ``num > sample_thr``.
    max_samples : int > sample_thr, default 100000
        Cap on ``num`` (result ``converged=False`` when hit).
    threshold : float in [0, 1], default 0.5
        A score ``>= threshold`` is the favourable decision.
    perturbation : float > 0 or dict, optional
        ``s_pert`` override.
    random_state : None, int, numpy Generator or RandomState
        Resolved once by :func:`fairlens._base.resolve_random_state`; recorded as
        ``result.random_state``.
    method : {"batched", "reference"}
        Both give the same result for the same ``random_state``.
    stop : None, threading.Event or callable
        Ends the sampling between rounds (batched method only); the function then returns
        ``None`` (no score).

    Returns
    -------
    ScoreResult or None

    Raises
    ------
    ValueError
        If nobody in the data satisfies ``rule_set`` (or everybody does), or for a bad
        parameter (named in the message).
    TypeError
        If ``rule_set`` is not a :class:`RuleSet`.

    Examples
    --------
    >>> from fairlens.datasets import load_german_credit
    >>> from fairlens.testsgd import frequent_rule_sets, group_fairness_score
    >>> data = load_german_credit()
    >>> k = data.index_of("duration")
    >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
    >>> rs = frequent_rule_sets(data, ["sex"], theta=0.2).rule_sets[0]
    >>> res = group_fairness_score(model, data, rs, ["sex"], random_state=0)
    >>> str(rs), round(res.rate_in, 3), round(res.rate_out, 3), round(res.score, 4)
    ('sex=female', 0.642, 0.58, 0.0625)
    >>> res.margin <= 0.05, res.confidence
    (True, 0.9025)
    """
    check_choice("method", method, ("batched", "reference"))
    _check_alg2_params(error, sample_thr, max_samples, threshold, confidence, name="error")
    table = as_table(data)
    if not isinstance(rule_set, RuleSet):
        raise TypeError(f"rule_set must be a RuleSet (e.g. from frequent_rule_sets); got "
                        f"{type(rule_set).__name__}")
    mask = rule_set.mask(table.X)
    if not mask.any():
        raise ValueError(f"no row of the data satisfies the rule set {rule_set}; choose a rule set "
                         "with positive support (see frequent_rule_sets)")
    if mask.all():
        raise ValueError(f"every row satisfies the rule set {rule_set}; the group 'not R' is empty")
    kw = dict(error=error, confidence=confidence, sample_thr=sample_thr, max_samples=max_samples,
              threshold=threshold, perturbation=perturbation)
    seed = resolve_random_state(random_state)
    if method == "reference":
        return group_fairness_score_reference(model, table, rule_set, protected, random_state=seed, **kw)
    rng = np.random.default_rng(seed)
    res, _ = _score_rule_sets(model, table, [rule_set], protected, masks=mask[None, :], rngs=[rng],
                              strategy="sample", stop=stop, **kw)
    if res[0] is not None:
        res[0].random_state = seed
    return res[0]


#: Seeds per task when the whole sampling neighbourhood is scored (``strategy="table"``):
#: a constant, so the tasks (and their order) never depend on ``n_jobs``.
TABLE_SEED_BLOCK = 4096
#: For the fall-back rule of :func:`fairlens._parallel.plan_workers`: with ``strategy="table"``
#: a sample is a look-up in the neighbourhood table, not a model row; this many look-ups are
#: counted as one model row of work (a rough estimate, not calibrated per model).
TABLE_LOOKUPS_PER_ROW = 10

#: Rule sets per task with ``strategy="table"`` (no rows are materialised: the block only bounds
#: the uniforms and masks held at once).
TABLE_RULE_SET_BLOCK = 256


def rule_set_rng(seed, j, stream=0):
    """The random stream of rule set ``j`` of a run, keyed by ``(seed, j, stream)``.

    ``stream=0`` is the ranking (selection) estimate of :class:`TestSGD`, ``stream=1`` the fresh
    re-estimate of the reported top rule sets. The key is that of
    :func:`fairlens._parallel.chunk_rng` (``SeedSequence([seed, j, stream])``, so every rule set is
    its own counter-keyed chunk and its numbers depend neither on ``n_jobs`` nor on the block it
    is shipped in); the bit generator is PCG64 instead of Philox because Algorithm 2 draws six
    uniforms per iteration (15 million on Census Income) and PCG64 draws them about twice as
    fast, which keeps the sequential path as fast as before.
    """
    ss = np.random.SeedSequence([int(seed) & (2**64 - 1), int(j), int(stream)])
    return np.random.Generator(np.random.PCG64(ss))


def _table_block(payload, chunk):
    """Labels of every section 4.3 perturbation of the seeds ``range(*chunk)`` (one task)."""
    a, b = chunk
    sm = payload.sampler
    X = sm.table.X
    kk = max(1, sm.free_cols.size)
    rows = np.arange(a, b, dtype=np.int64)
    out = np.empty((rows.size * kk * 2, X.shape[1]), dtype=np.float64)
    _kernels.neighbourhood_rows(X, rows, sm.free_cols, sm.step, sm.lo, sm.hi, out)
    lab = np.empty(out.shape[0], dtype=np.uint8)
    br = payload.batch_rows
    for b0 in range(0, out.shape[0], br):
        lab[b0:b0 + br] = np.asarray(payload.scorer(out[b0:b0 + br]), dtype=np.float64) >= payload.threshold
    return lab.reshape(rows.size, kk, 2)


def neighbourhood_table(scorer, sampler, threshold, batch_rows=65_536, *, n_jobs=None, stop=None, info=None):
    """Model labels of every sample section 4.3 can draw, ``(n, max(1, k), 2)`` uint8, or None if
    stopped. Seeds are cut in fixed blocks of :data:`TABLE_SEED_BLOCK` run by
    :func:`fairlens._parallel.run_chunks` (deterministic: no random numbers), each block as
    many seeds as fill one model call of ``batch_rows`` rows (3,640 seeds = 65,520 rows on census)."""

    n = sampler.table.X.shape[0]
    kk = max(1, sampler.free_cols.size)
    # one model call per block: as many seeds as fit in batch_rows (a problem parameter, never n_jobs;
    # the table has no random numbers, so the blocks cannot change it), at most TABLE_SEED_BLOCK
    chunks = fixed_chunks(n, min(TABLE_SEED_BLOCK, max(1, int(batch_rows) // (2 * kk))))
    payload = Payload(scorer=scorer, sampler=sampler, threshold=float(threshold), batch_rows=int(batch_rows))
    # the work is the model rows of the whole neighbourhood (the one fall-back rule of _parallel)
    parts = run_chunks(_table_block, payload, chunks, n_jobs=n_jobs, stop=stop, work=float(n) * kk * 2,
                       info=info)
    if len(parts) < len(chunks):
        return None
    kk = max(1, sampler.free_cols.size)
    return np.concatenate(parts, axis=0) if parts else np.empty((0, kk, 2), np.uint8)


def _lean_sampler(sampler):
    """The sampler with a table that carries only what sampling needs (no source dataset)."""
    from dataclasses import replace as _replace

    lean = Sampler.__new__(Sampler)
    lean.__dict__.update(sampler.__dict__)
    lean.table = _replace(sampler.table, source=None, y=None, categories={})
    return lean


def _score_block(payload, chunk):
    """Batched Algorithm 2 on the rule sets ``range(*chunk)`` (one task of :func:`score_rule_sets`).

    Returns ``(results, n_rows_scored)`` with one ScoreResult (or None if stopped) per rule set.
    """
    c0, c1 = chunk
    P = payload
    sampler = P.sampler
    rule_sets = P.rule_sets
    idx = list(range(c0, c1))
    n_data = sampler.table.X.shape[0]
    if P.masks is not None:
        cmask = np.asarray(P.masks[c0:c1], dtype=bool)
    elif P.bits is not None:
        cmask = _kernels.unpack_bits(np.ascontiguousarray(P.bits[c0:c1]), n_data).astype(bool)
    else:
        cmask = np.stack([rule_sets[j].mask(sampler.table.X) for j in idx])
    stop_fn = P.stop if P.stop is not None else (lambda: False)
    conf2 = P.confidence ** 2
    z, error_thr, sample_thr, max_samples = P.z, P.error_thr, P.sample_thr, P.max_samples
    first, block, batch_rows, threshold = sample_thr + 1, P.block, P.batch_rows, P.threshold
    results = [None] * len(idx)
    counts_in, counts_out, seeds, rngs = {}, {}, {}, {}
    active = []
    for t, j in enumerate(idx):
        s_in, s_out = _seeds(cmask[t])
        sup = float(cmask[t].mean())
        if s_in.size == 0 or s_out.size == 0:
            results[t] = ScoreResult(rule_sets[j], np.nan, np.nan, np.nan, np.nan, 0, False, conf2, "no-seeds", sup,
                                     n_in=int(s_in.size), n_out=int(s_out.size))
            continue
        seeds[j] = (s_in, s_out, sup)
        counts_in[j] = np.zeros(0, np.int64)
        counts_out[j] = np.zeros(0, np.int64)
        rngs[j] = P.rngs[j] if P.rngs is not None else rule_set_rng(P.seed, P.keys[j], P.stream)
        active.append(j)
    n_scored = 0
    drawn = {j: 0 for j in active}
    while active:
        if stop_fn() and any(drawn[j] for j in active):
            break  # Stop between sampling rounds too: unfinished rule sets stay None
        want = {j: min(first if drawn[j] == 0 else block, max_samples - drawn[j]) for j in active}
        seeds_list, group, U = [], [], []
        for g, j in enumerate(active):
            u = rngs[j].random((want[j], 6))
            s_in, s_out, _ = seeds[j]
            seeds_list += [s_in, s_out]
            U.append(u[:, :3])
            U.append(u[:, 3:])
            group.append(np.full(want[j], 2 * g, np.int64))
            group.append(np.full(want[j], 2 * g + 1, np.int64))
        group = np.concatenate(group)
        U = np.concatenate(U, axis=0)
        if P.label_table is not None:
            labels = sampler.lookup(P.label_table, seeds_list, group, U)
        else:
            rows = sampler.sample(seeds_list, group, U)
            labels = np.empty(rows.shape[0], dtype=np.int64)
            for b0 in range(0, rows.shape[0], batch_rows):
                sl = slice(b0, b0 + batch_rows)
                labels[sl] = (np.asarray(P.scorer(rows[sl]), dtype=np.float64) >= threshold)
            n_scored += rows.shape[0]
        pos = 0
        still = []
        for j in active:
            w = want[j]
            counts_in[j] = np.concatenate([counts_in[j], labels[pos:pos + w]])
            counts_out[j] = np.concatenate([counts_out[j], labels[pos + w:pos + 2 * w]])
            pos += 2 * w
            drawn[j] += w
            ci = np.cumsum(counts_in[j])
            co = np.cumsum(counts_out[j])
            num = np.arange(1, drawn[j] + 1, dtype=np.float64)
            lo = max(sample_thr, drawn[j] - w)  # index of num = sample_thr + 1 (line 8: num > sample_thr)
            eps = _margin(ci[lo:], co[lo:], num[lo:], z)
            hit = np.flatnonzero(eps <= error_thr)
            sup = seeds[j][2]
            t = j - c0
            if hit.size:
                k = lo + hit[0]
                nn = k + 1
                pr, pn = ci[k] / nn, co[k] / nn
                results[t] = ScoreResult(rule_sets[j], float(pr), float(pn), float(abs(pr - pn)),
                                         float(eps[hit[0]]), int(nn), True, conf2, "ok", sup,
                                         n_in=int(seeds[j][0].size), n_out=int(seeds[j][1].size))
            elif drawn[j] >= max_samples:
                k = drawn[j] - 1
                nn = k + 1
                pr, pn = ci[k] / nn, co[k] / nn
                results[t] = ScoreResult(rule_sets[j], float(pr), float(pn), float(abs(pr - pn)),
                                         float(eps[-1]), int(nn), False, conf2, "cap", sup,
                                         n_in=int(seeds[j][0].size), n_out=int(seeds[j][1].size))
            else:
                still.append(j)
        active = still
    return results, n_scored


def _score_rule_sets(model, dataset, rule_sets: Sequence[RuleSet], sensitive: Sequence[str], *,
                     masks: np.ndarray | None = None, mask_fn=None, bits: np.ndarray | None = None,
                     error: float = 0.05, confidence: float = 0.95, sample_thr: int = 1000,
                     max_samples: int = DEFAULT_MAX_SAMPLES, threshold: float = 0.5, perturbation=None,
                     random_state=None, rngs=None, keys=None, stream: int = 0, batch_rows: int = 65_536,
                     block: int = 512, strategy: str = "auto", label_table=None, n_jobs=None,
                     progress=None, stop=None, return_table: bool = False, seed=None, info=None):
    """Batched Algorithm 2 over many rule sets, in fixed blocks through ``joblib`` (the engine
    behind :func:`score_rule_sets` and :class:`TestSGD`, with its internals exposed).

    Rule sets are processed in blocks so that each model call scores about
    ``batch_rows`` rows of many rule sets. For every rule set the first ``sample_thr + 1``
    iterations are drawn at once (no stop is possible before, line 8); then
    cumulative counts give the margin after every iteration and the first
    ``num`` with ``margin <= error_thr`` is taken; unfinished rule sets draw
    further blocks of ``block`` iterations from their own stream, up to
    ``max_samples``.

    Random streams: rule set ``j`` draws from its own counter-based stream
    ``chunk_rng(resolve_random_state(random_state), keys[j], stream)`` (:func:`rule_set_rng`; ``keys``
    defaults to ``range(len(rule_sets))``), or from ``rngs[j]`` when given. A rule set's result
    is therefore independent of the blocks, of ``n_jobs`` and of the joblib backend, and equals
    :func:`group_fairness_score_reference` run with the same generator.

    Parallel execution (issue "n_jobs"): the rule sets are cut in fixed blocks -- the
    block size depends on ``strategy``, ``batch_rows`` and ``sample_thr`` only, never on
    ``n_jobs`` -- and handed to :func:`fairlens._parallel.run_chunks`. One task carries the
    block bounds (two integers); the :class:`~fairlens._parallel.Payload` shipped once per
    worker holds the scorer (pickled model), the data ``X`` and domain bounds, the rule sets,
    their packed row masks (``bits``, ``m x ceil(n/64)`` uint64) and, with the table
    strategy, the label table (``n x k x 2`` uint8). On Census Income (24,420 training
    rows, 2,560 rule sets, the reference MLP) that is about 0.25 MB of model, 2.3 MB of data,
    7.8 MB of masks and 0.44 MB of labels; the neighbourhood table itself is built in
    fixed blocks of seeds filling one model call of ``batch_rows`` rows (65,520 rows per task on census).
    ``n_jobs=None`` means 1 (or the active ``joblib.parallel_config``), ``-1`` all workers.

    ``strategy``: "sample" draws rows (numba) and calls the model on them;
    "table" scores the whole finite sampling neighbourhood of section 4.3
    once (``n x k x 2`` rows: seed, perturbed column, direction) and reads
    the labels of the drawn samples from it -- identical labels, far fewer
    model rows when many rule sets are scored; "auto" picks "table" when the
    neighbourhood is smaller than the rows sampling would score. A precomputed
    ``label_table`` (from an earlier call with ``return_table=True``) is reused as is.

    ``stop``: None, a ``threading.Event`` or a zero-argument callable, checked between
    blocks (and, at ``n_jobs=1``, between sampling rounds); rule sets not scored
    when it fires are ``None`` in ``results``.
    ``progress("rule sets", done, total)`` is called with the number of rule sets done.
    ``seed`` (an int >= 0, e.g. from :func:`fairlens._base.resolve_random_state`) replaces
    ``random_state`` as the base seed of the streams, so that several calls share one.

    Returns
    -------
    results : list of ScoreResult
    n_rows_scored : int
        Total rows passed to the model.
    label_table : ndarray or None
        Only with ``return_table=True``: the neighbourhood labels used (or None).
    """

    stop_fn = check_stop(stop)
    n_jobs = check_n_jobs(n_jobs)
    error_thr, sample_thr, max_samples, threshold = _check_alg2_params(
        error, sample_thr, max_samples, threshold, confidence, name="error")
    batch_rows = check_int("batch_rows", batch_rows, min=1)
    block = check_int("block", block, min=1)
    stream = check_int("stream", stream, min=0)
    check_choice("strategy", strategy, ("auto", "table", "sample"))
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be None or a callable progress(stage, done, total); got {progress!r}")
    table = as_table(dataset)
    perturbation = check_perturbation(perturbation, table.feature_names)
    scorer = make_scorer(model, table)
    z = z_value(confidence)
    sampler = _lean_sampler(Sampler(table, sensitive, perturbation))
    m = len(rule_sets)
    if rngs is not None and len(rngs) != m:
        raise ValueError(f"rngs must hold one generator per rule set ({m}); got {len(rngs)}")
    if keys is None:
        keys = np.arange(m, dtype=np.int64)
    else:
        keys = np.asarray(keys, dtype=np.int64)
        if keys.shape != (m,):
            raise ValueError(f"keys must hold one integer per rule set ({m}); got shape {keys.shape}")
    if seed is not None:
        seed = check_int("seed", seed, min=0)
    elif rngs is None:
        seed = resolve_random_state(random_state)
    n_data = table.X.shape[0]
    results: list = [None] * m
    n_scored = 0
    first = int(sample_thr) + 1
    if label_table is not None:
        kk = max(1, sampler.free_cols.size)
        label_table = np.ascontiguousarray(label_table, dtype=np.uint8)
        if label_table.shape != (n_data, kk, 2):
            raise ValueError(f"label_table must have shape {(n_data, kk, 2)} (seeds x free columns x 2); "
                             f"got {label_table.shape}")
        strategy = "table"
    elif strategy == "auto":
        strategy = "table" if sampler.n_neighbours < 2 * first * m else "sample"
    if strategy == "table" and m and label_table is None:
        sub = {}
        label_table = neighbourhood_table(scorer, sampler, threshold, batch_rows, n_jobs=n_jobs, stop=stop_fn,
                                          info=sub)
        if info is not None:
            info.setdefault("notes", []).append(f"neighbourhood table: {sub.get('note', '')}")
            info["n_jobs_used"] = max(info.get("n_jobs_used", 1), sub.get("n_jobs_used", 1))
        n_scored = sampler.n_neighbours if label_table is not None else 0
        if label_table is None:  # stopped while the neighbourhood was scored
            return (results, n_scored, None) if return_table else (results, n_scored)
    per_chunk = TABLE_RULE_SET_BLOCK if strategy == "table" else max(1, int(batch_rows) // (2 * first))
    if mask_fn is not None and masks is None and bits is None:

        check_memory(float(m) * n_data, f"mask_fn for {m} rule sets x {n_data} rows",
                     "pass bits= (packed masks, e.g. FrequentRuleSets.bits) instead of mask_fn")
        masks = np.asarray(mask_fn(list(range(m))), dtype=bool) if m else np.zeros((0, n_data), bool)
    if masks is not None and np.asarray(masks).shape != (m, n_data):
        raise ValueError(f"masks must have shape {(m, n_data)}; got {np.asarray(masks).shape}")
    chunks = fixed_chunks(m, per_chunk)
    # at least 2 * first samples per rule set: model rows (sampling) or table look-ups
    work = 2.0 * first * m / (TABLE_LOOKUPS_PER_ROW if strategy == "table" else 1)
    sequential = plan_workers(n_jobs, len(chunks), work=work)[0] <= 1  # the same rule as run_chunks
    payload = Payload(scorer=scorer, sampler=sampler, rule_sets=list(rule_sets), masks=masks, bits=bits,
                      label_table=label_table, rngs=rngs, seed=seed, keys=keys, stream=stream,
                      confidence=float(confidence), z=z, error_thr=float(error_thr), sample_thr=int(sample_thr),
                      max_samples=int(max_samples), block=int(block), batch_rows=int(batch_rows),
                      threshold=float(threshold), stop=stop_fn if sequential else None)
    bounds = [c[1] for c in chunks]

    def prog(done, total):
        if progress is not None and done:
            progress("rule sets", bounds[done - 1], m)

    sub = {}
    parts = run_chunks(_score_block, payload, chunks, n_jobs=n_jobs, stop=stop_fn, progress=prog, work=work,
                       info=sub)
    if info is not None:
        info.setdefault("notes", []).append(f"rule sets: {sub.get('note', '')}")
        info["n_jobs_used"] = max(info.get("n_jobs_used", 1), sub.get("n_jobs_used", 1))
    for (c0, _), (res, ns) in zip(chunks, parts):
        results[c0:c0 + len(res)] = res
        n_scored += ns
    return (results, n_scored, label_table) if return_table else (results, n_scored)


@dataclass
class RuleSetScores(Result):
    """Scores of many rule sets (:func:`score_rule_sets`): one :class:`ScoreResult` each.

    Parameters
    ----------
    results : list of ScoreResult or None
        In the order of the rule sets given (``None`` for a rule set not scored before a stop).
    n_model_rows : int
        Rows passed to the model.
    params : dict
        The parameters of the call.
    random_state : int
        The seed used (rule set ``j`` drew from ``chunk_rng(random_state, j, 0)``).
    elapsed : float
        Wall seconds.
    stopped : bool
        True when ``stop`` fired before every rule set was scored.

    Examples
    --------
    >>> from fairlens.datasets import load_german_credit
    >>> from fairlens.testsgd import frequent_rule_sets, score_rule_sets
    >>> data = load_german_credit()
    >>> k = data.index_of("duration")
    >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
    >>> fr = frequent_rule_sets(data, ["sex"], theta=0.2)
    >>> scores = score_rule_sets(model, data, fr.rule_sets, protected=["sex"], random_state=0)
    >>> len(scores), [str(r.rule_set) for r in scores], scores.stopped
    (2, ['sex=female', 'sex=male'], False)
    """

    results: list
    n_model_rows: int
    params: dict = field()
    random_state: int | None = None
    elapsed: float = float("nan")
    stopped: bool = False

    title = "TestSGD scores of rule sets"

    def __len__(self):
        return len(self.results)

    def __iter__(self):
        return iter(self.results)

    def __getitem__(self, i):
        return self.results[i]

    def to_frame(self) -> pd.DataFrame:
        """One row per scored rule set (in the order given), the columns of :meth:`ScoreResult.to_frame`.

        Returns
        -------
        pandas.DataFrame
            One row per scored rule set.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import frequent_rule_sets, score_rule_sets
        >>> data = load_german_credit()
        >>> k = data.index_of("duration")
        >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
        >>> fr = frequent_rule_sets(data, ["sex"], theta=0.2)
        >>> scores = score_rule_sets(model, data, fr.rule_sets, protected=["sex"], random_state=0)
        >>> scores.to_frame()[["rule_set", "support", "converged"]]
             rule_set  support  converged
        0  sex=female     0.31       True
        1    sex=male     0.69       True
        """
        rows = [r.to_frame() for r in self.results if r is not None]
        if not rows:
            return pd.DataFrame(columns=["rule_set", "support", "rate_in", "rate_out", "score", "margin"])
        return pd.concat(rows, ignore_index=True)

    def summary(self) -> pd.DataFrame:
        """One row: rule sets given and scored, converged, the largest score, model rows, time.

        Returns
        -------
        pandas.DataFrame
            One row.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import frequent_rule_sets, score_rule_sets
        >>> data = load_german_credit()
        >>> k = data.index_of("duration")
        >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
        >>> fr = frequent_rule_sets(data, ["sex"], theta=0.2)
        >>> scores = score_rule_sets(model, data, fr.rule_sets, protected=["sex"], random_state=0)
        >>> row = scores.summary().iloc[0]
        >>> int(row["n_rule_sets"]), int(row["n_scored"]), int(row["n_converged"])
        (2, 2, 2)
        """
        done = [r for r in self.results if r is not None]
        finite = [r for r in done if np.isfinite(r.score)]
        best = max(finite, key=lambda r: r.score) if finite else None
        return pd.DataFrame([{
            "n_rule_sets": len(self.results), "n_scored": len(done),
            "n_converged": int(sum(r.converged for r in done)),
            "max_score_rule_set": str(best.rule_set) if best else None,
            "max_score": best.score if best else np.nan,
            "n_model_rows": int(self.n_model_rows), "time_s": self.elapsed,
        }])

    def plot(self, ax=None):
        """Scores with their margins, one bar per scored rule set (largest 20); returns the axes.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (a new figure if None).

        Returns
        -------
        matplotlib Axes
            The axes drawn on.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import frequent_rule_sets, score_rule_sets
        >>> data = load_german_credit()
        >>> k = data.index_of("duration")
        >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
        >>> fr = frequent_rule_sets(data, ["sex"], theta=0.2)
        >>> scores = score_rule_sets(model, data, fr.rule_sets, protected=["sex"], random_state=0)
        >>> ax = scores.plot()
        """
        import matplotlib.pyplot as plt

        df = self.to_frame().dropna(subset=["score"]).sort_values("score", ascending=False).head(20)
        if ax is None:
            _, ax = plt.subplots(figsize=(6.4, 0.3 * max(4, len(df)) + 1), layout="constrained")
        y = np.arange(len(df))[::-1]
        ax.barh(y, df["score"], xerr=df["margin"], color="#7570b3")
        ax.set_yticks(y)
        ax.set_yticklabels(df["rule_set"])
        ax.set_xlabel("group fairness score |rate in - rate out|")
        return ax


@strict_keywords(renamed={"error_thr": "error", "sensitive": "protected", "dataset": "data"})
@validated({
    "model": "no_validation", "data": "no_validation", "rule_sets": "no_validation",
    "protected": "no_validation", "error": [Interval(numbers.Real, 0, 1, closed="right")],
    "confidence": [Interval(numbers.Real, 0, 1, closed="neither")],
    "sample_thr": [Interval(numbers.Integral, 1, None)], "max_samples": [Interval(numbers.Integral, 1, None)],
    "threshold": [Interval(numbers.Real, 0, 1)], "perturbation": "no_validation",
    "random_state": ["random_state"], "strategy": [Options("auto", "table", "sample")],
    "batch_rows": [Interval(numbers.Integral, 1, None)], "n_jobs": ["n_jobs"], "progress": ["progress"],
    "stop": ["stop"],
})
def score_rule_sets(model, data, rule_sets: Sequence[RuleSet], *, protected: Sequence[str],
                    error: float = 0.05, confidence: float = 0.95, sample_thr: int = 1000,
                    max_samples: int = DEFAULT_MAX_SAMPLES, threshold: float = 0.5, perturbation=None,
                    random_state=None, strategy: str = "auto", batch_rows: int = 65_536,
                    n_jobs=None, progress=None, stop=None) -> RuleSetScores:
    """Batched Algorithm 2 over many rule sets (each with its own error-bounded estimate).

    Rule set ``j`` draws from its own counter-based stream ``chunk_rng(seed, j, 0)``, so each
    result equals :func:`group_fairness_score_reference` run on that stream and the numbers
    are identical at every ``n_jobs`` and on every joblib backend.  Rule sets are cut in fixed
    blocks so that each model call scores about ``batch_rows`` rows of many rule sets.

    Parameters
    ----------
    model : estimator, pipeline or callable
        Adapted with :func:`fairlens.models.as_scorer`.
    data : fairlens Dataset
        The data ``D`` the seeds come from.
    rule_sets : list of RuleSet
        E.g. ``frequent_rule_sets(data, protected).rule_sets``.
    protected : list of str
        Protected features (the sampler never perturbs them).
    error : float in (0, 1], default 0.05
        ``error_thr`` of Algorithm 2.
    confidence : float in (0, 1), default 0.95
        ``delta`` per group.
    sample_thr : int >= 1, default 1000
        No stop before ``num > sample_thr``.
    max_samples : int > sample_thr, default 100000
        Cap on ``num`` per rule set.
    threshold : float in [0, 1], default 0.5
        A score ``>= threshold`` is the favourable decision.
    perturbation : float > 0 or dict, optional
        ``s_pert`` override.
    random_state : None, int, numpy Generator or RandomState
        Resolved once by :func:`fairlens._base.resolve_random_state` (recorded in the result).
    strategy : {"auto", "table", "sample"}
        "sample" draws rows and calls the model on them; "table" scores the whole finite
        sampling neighbourhood of section 4.3 once and reads the labels of the drawn samples
        from it (identical labels, fewer model rows when many rule sets are scored); "auto"
        picks the cheaper.
    batch_rows : int >= 1, default 65536
        Rows per model call.
    n_jobs : int or None
        Workers (``None`` = 1 or the active ``joblib.parallel_config``, -1 = all).
    progress : None, bool or callable, optional
        ``True`` shows a ``tqdm.auto`` bar; a callable is called as
        ``progress(stage, done, total)`` with ``stage="rule sets"`` and the rule sets done.  A
        callable that cannot take three positional arguments is refused with a ``TypeError``
        before any work.
    stop : None, threading.Event or zero-argument callable
        Checked between blocks; rule sets not scored when it fires are ``None``.

    Returns
    -------
    RuleSetScores
        ``.results`` (one :class:`ScoreResult` per rule set), ``.n_model_rows``,
        ``.random_state``, ``.stopped``; ``.to_frame()`` and ``.summary()``.

    Raises
    ------
    TypeError, ValueError
        For a bad parameter (the message names it).

    Examples
    --------
    >>> from fairlens.datasets import load_german_credit
    >>> from fairlens.testsgd import frequent_rule_sets, score_rule_sets
    >>> data = load_german_credit()
    >>> k = data.index_of("duration")
    >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
    >>> fr = frequent_rule_sets(data, ["sex"], theta=0.2)
    >>> scores = score_rule_sets(model, data, fr.rule_sets, protected=["sex"], random_state=0)
    >>> [round(r.score, 4) for r in scores]
    [0.0625, 0.1043]
    >>> scores.random_state, scores.stopped
    (0, False)
    """
    import time as _time


    t0 = _time.perf_counter()
    seed = resolve_random_state(random_state)
    report = check_progress(progress, desc="TestSGD rule sets")
    try:
        results, n_rows = _score_rule_sets(
            model, data, list(rule_sets), protected, error=error, confidence=confidence,
            sample_thr=sample_thr, max_samples=max_samples, threshold=threshold,
            perturbation=perturbation, seed=seed, strategy=strategy, batch_rows=batch_rows,
            n_jobs=n_jobs, progress=report, stop=stop)
    finally:
        if hasattr(report, "close"):
            report.close()
    params = dict(protected=list(protected), error=error, confidence=confidence, sample_thr=sample_thr,
                  max_samples=max_samples, threshold=threshold, strategy=strategy,
                  n_rule_sets=len(results))
    return RuleSetScores(results, int(n_rows), params, seed, _time.perf_counter() - t0,
                         any(r is None for r in results))
