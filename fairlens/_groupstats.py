"""Group fairness with coverage-checked intervals and tests (``fairlens.metrics.group_metrics``).

Every number here depends only on the counts of rows per (group, true label, prediction) cell, so
every interval is a closed-form score/MOVER interval of those counts (:mod:`fairlens._stats`):

* a group's rate (selection rate, true/false positive and negative rates, predictive values,
  accuracy) -- the Wilson interval;
* a between-group difference or ratio -- simultaneous MOVER (Newcombe) and MOVER-R intervals over
  every pair of groups compared, Bonferroni-adjusted, from which the range (``max - min``) and the
  ``min / max`` ratio get an interval that covers their true value (including 0 and 1) whenever all
  the pairwise intervals do;
* a signed measure -- a fixed reference: the user's privileged group, or each group against everyone
  else (every group shown, both directions), never a reference chosen from the outcomes.

The tests behind the audit's verdicts (``GroupMetricsResult.test``) invert the same intervals, so a
verdict never contradicts the interval printed beside it.  Coverage and error rates are measured by
simulation in ``benchmarks/audit_statistics.py``.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
import numbers
import re
import time

import numpy as np
import pandas as pd

from . import _stats
from ._base import Interval, Result, strict_keywords, to_jsonable, validate_params, validated

__all__ = ["group_metrics", "GroupMetricsResult", "GROUP_MEASURES", "GROUP_RATES", "MIN_GROUP_SIZE"]

#: Fewest rows in a rate's denominator for a group's rate to enter any comparison (signed or not,
#: single attribute or intersection, on the group's side and on "everyone else"'s side).
MIN_GROUP_SIZE = 30

# cells of a group's confusion matrix: 2 * true label + prediction (1 = favourable)
_TN, _FP, _FN, _TP = 0, 1, 2, 3
_ALL = (_TN, _FP, _FN, _TP)

#: Per-group rates: ``name -> (label, numerator cells, denominator cells, what the denominator counts)``.
GROUP_RATES = {
    "selection_rate": ("Selection rate", (_FP, _TP), _ALL, "rows"),
    "base_rate": ("Favourable rate in the data", (_FN, _TP), _ALL, "rows"),
    "accuracy": ("Accuracy", (_TN, _TP), _ALL, "rows"),
    "true_positive_rate": ("True positive rate", (_TP,), (_FN, _TP), "favourable true labels"),
    "false_negative_rate": ("False negative rate", (_FN,), (_FN, _TP), "favourable true labels"),
    "false_positive_rate": ("False positive rate", (_FP,), (_TN, _FP), "unfavourable true labels"),
    "true_negative_rate": ("True negative rate", (_TN,), (_TN, _FP), "unfavourable true labels"),
    "positive_predictive_value": ("Positive predictive value (precision)", (_TP,), (_FP, _TP),
                                  "favourable predictions"),
    "false_discovery_rate": ("False discovery rate", (_FP,), (_FP, _TP), "favourable predictions"),
    "negative_predictive_value": ("Negative predictive value", (_TN,), (_TN, _FN), "unfavourable predictions"),
    "false_omission_rate": ("False omission rate", (_FN,), (_TN, _FN), "unfavourable predictions"),
}

#: The between-group measures: ``name -> (label, ideal, kind, rates)``.  ``kind`` is ``"range"``
#: (``max - min`` over groups), ``"min_ratio"`` (``min / max``), ``"signed"`` (a difference against a
#: fixed reference) or ``"signed_ratio"`` (a ratio against it).
GROUP_MEASURES = {
    "demographic_parity_difference": ("Demographic parity difference (max - min selection rate)", 0.0, "range",
                                      ("selection_rate",)),
    "demographic_parity_ratio": ("Demographic parity ratio (min / max selection rate)", 1.0, "min_ratio",
                                 ("selection_rate",)),
    "equal_opportunity_difference": ("Equal opportunity difference (max - min true positive rate)", 0.0,
                                     "range", ("true_positive_rate",)),
    "equalized_odds_difference": ("Equalized odds difference (larger of the true and false positive rate "
                                  "gaps)", 0.0, "range", ("true_positive_rate", "false_positive_rate")),
    "statistical_parity_difference": ("Statistical parity difference (group - reference selection rate)", 0.0,
                                      "signed", ("selection_rate",)),
    "disparate_impact": ("Disparate impact (group / reference selection rate)", 1.0, "signed_ratio",
                         ("selection_rate",)),
    "average_odds_difference": ("Average odds difference (mean of the true and false positive rate "
                                "differences, group - reference)", 0.0, "signed",
                                ("true_positive_rate", "false_positive_rate")),
    "true_positive_rate_difference": ("True positive rate difference (group - reference)", 0.0, "signed",
                                      ("true_positive_rate",)),
}

#: The range each measure can take (for refusing gate conditions that can never hold).
MEASURE_RANGES = {
    "demographic_parity_difference": (0.0, 1.0), "demographic_parity_ratio": (0.0, 1.0),
    "equal_opportunity_difference": (0.0, 1.0), "equalized_odds_difference": (0.0, 1.0),
    "statistical_parity_difference": (-1.0, 1.0), "disparate_impact": (0.0, math.inf),
    "average_odds_difference": (-1.0, 1.0), "true_positive_rate_difference": (-1.0, 1.0),
}

_REMOVED = {
    "n_boot": "the intervals are closed-form score intervals now (no bootstrap)",
    "random_state": "the intervals are closed-form score intervals now (nothing is random)",
    "n_jobs": "the intervals are closed-form score intervals now (nothing to parallelise)",
    "stop": "the intervals are closed-form score intervals now (no long loop to stop)",
    "progress": "the intervals are closed-form score intervals now (no long loop to report)",
    "min_outcomes": "one rule now decides which rates are compared: min_group_size rows in the rate's "
                    "denominator",
}


# ----------------------------------------------------------------------------------------- inputs
def _protected_table(protected, n):
    """The protected columns as a DataFrame of ``n`` rows with unique string column names."""
    if protected is None or isinstance(protected, (str, bytes)):
        raise TypeError(
            "protected must be the protected values, one per row: a Series, a DataFrame (one column per "
            f"protected attribute), a dict of arrays or an array; got {protected!r}.")
    if isinstance(protected, pd.DataFrame):
        table = protected.reset_index(drop=True)
    elif isinstance(protected, pd.Series):
        table = protected.reset_index(drop=True).to_frame(
            name=protected.name if protected.name is not None else "protected")
    elif isinstance(protected, dict):
        table = pd.DataFrame({k: v.to_numpy() if isinstance(v, pd.Series) else np.asarray(v, dtype=object)
                              for k, v in protected.items()})
    else:
        arr = np.asarray(protected, dtype=object)
        if arr.ndim == 1:
            table = pd.DataFrame({"protected": arr})
        elif arr.ndim == 2:
            table = pd.DataFrame(arr, columns=[f"protected_{j}" for j in range(arr.shape[1])])
        else:
            raise ValueError(f"protected must be 1-D (one value per row) or 2-D; got shape {arr.shape}.")
    if table.shape[1] == 0:
        raise ValueError("protected has no columns; give at least one protected attribute.")
    names = [str(c) for c in table.columns]
    if len(set(names)) != len(names):
        dup = sorted({c for c in names if names.count(c) > 1})
        raise ValueError(f"protected has duplicated column names {dup}; give each protected attribute once.")
    table.columns = names
    if len(table) != n:
        raise ValueError(f"protected has {len(table)} rows but y_true/y_pred have {n}; pass one protected "
                         "value (or row of values) per prediction.")
    bad = [c for c in table.columns if table[c].isna().any()]
    if bad:
        raise ValueError(f"protected columns {bad} contain missing values; fill or drop them first.")
    return table


def _labels_to_binary(values, favourable, name, n=None):
    """``values == favourable`` as 0/1, refusing non-binary columns by name."""
    if values is None or isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be an array of labels (one per row); got {values!r}.")
    arr = values.to_numpy() if isinstance(values, (pd.Series, pd.DataFrame)) else np.asarray(values)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.reshape(-1)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one label per row); got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"{name} is empty.")
    if n is not None and arr.size != n:
        raise ValueError(f"y_true and {name} differ in length ({n} vs {arr.size}).")
    s = pd.Series(arr, dtype=object)
    if s.isna().any():
        raise ValueError(f"{name} contains missing values; fill or drop them first.")
    seen = pd.unique(s)
    if len(seen) > 2:
        raise ValueError(f"{name} must be binary (two outcomes); it has {len(seen)} values such as "
                         f"{list(seen[:5])}. Threshold scores or binarise the target first.")
    return np.asarray(s == favourable, dtype=np.int64), seen


def _scores(y_score, n):
    if y_score is None:
        return None
    s = y_score.to_numpy() if isinstance(y_score, (pd.Series, pd.DataFrame)) else np.asarray(y_score)
    if s.ndim == 2 and 1 in s.shape:
        s = s.reshape(-1)
    if s.ndim != 1 or s.size != n:
        raise ValueError(f"y_score must hold one score per row ({n}); got shape {np.shape(y_score)}.")
    try:
        s = s.astype(np.float64)
    except (TypeError, ValueError):
        raise TypeError("y_score must be numeric (the favourable-class probability of each row).") from None
    if not np.isfinite(s).all() or s.min() < 0 or s.max() > 1:
        raise ValueError("y_score must be probabilities in [0, 1] without NaN (the favourable-class "
                         f"probability); got values in [{np.nanmin(s):g}, {np.nanmax(s):g}].")
    return s


def _lump(col, max_groups):
    """Keep the ``max_groups - 1`` largest values of ``col``; the rest become one "other" group."""
    counts = col.value_counts()
    if max_groups is None or len(counts) <= max_groups:
        return col, None
    keep = set(counts.index[: max_groups - 1])
    k = len(counts) - len(keep)
    other = f"other ({k:,} values)"
    return col.where(col.isin(keep), other), (k, other, int(counts.iloc[max_groups - 1:].sum()))


# ------------------------------------------------------------------------------------- the plan
def _pair_index(k):
    if k < 2:
        return np.zeros(0, int), np.zeros(0, int)
    a, b = np.triu_indices(k, 1)
    return a, b


def _z(confidence, m):
    """Normal quantile of a two-sided interval at ``confidence`` shared (Bonferroni) over ``m`` contrasts."""
    return float(_stats.z_of(1.0 - (1.0 - confidence) / (2.0 * max(1, m))))


@dataclasses.dataclass
class _Family:
    """The elementary contrasts behind one measure of one attribute set (what its tests invert).

    ``X``/``N`` are (E, T) counts of the T independent proportions of each of the E contrasts;
    ``w`` the weights of the linear contrast (or ``None`` for a ratio ``p0 / p1``); ``kind`` as in
    :data:`GROUP_MEASURES`; ``F`` the number of distinct contrasts the family's level is shared
    over (Bonferroni); ``mirror`` True when the family is a binary attribute's two mirrored
    "group vs everyone else" contrasts (one distinct comparison)."""

    kind: str
    X: np.ndarray
    N: np.ndarray
    w: tuple | None
    F: int
    labels: list
    mirror: bool = False


def _elementary(fam, op, c, absolute):
    """Per-contrast p-values ``(p_hold, p_not)`` of the condition ``value op c`` (``abs`` for
    ``|value|``); ``p_hold`` small = evidence the condition holds for that contrast."""
    X, N = fam.X, fam.N
    E = X.shape[0]

    def many(cs, signs, flip=False, ratio=False):
        """p-values of every contrast against each (c, side) pair, in one batched inversion: (k, E)."""
        cs = np.asarray(cs, dtype=np.float64)[:, None]
        sg = np.asarray(signs, dtype=np.float64)[:, None]
        if ratio:   # p0 / p1 vs cv through p0 - cv p1 (MOVER-R's construction)
            a, b = (1, 0) if flip else (0, 1)
            out = _stats.pvalue([X[:, a], X[:, b]], [N[:, a], N[:, b]], [np.ones((1, E)), -cs], 0.0, sg)
        else:
            out = _stats.pvalue([X[:, t] for t in range(X.shape[1])], [N[:, t] for t in range(N.shape[1])],
                                [np.full((1, E), wt) for wt in fam.w], cs, sg)
        return np.broadcast_to(out, (len(cs), E))

    ge = op in (">", ">=")
    if fam.kind in ("range",) or (fam.kind == "signed" and absolute):
        # |d| > c: either side beyond c (twice the smaller p at c = 0, where both sides meet);
        # |d| < c: both one-sided tests (TOST)
        up, down, below, above = many([c, -c, c, -c], [1, -1, -1, 1])
        beyond = np.minimum(np.minimum(up, down) * (2.0 if c == 0 else 1.0), 1.0)
        within = np.maximum(below, above)
        return (beyond, within) if ge else (within, beyond)
    if fam.kind == "signed":
        gt, lt = many([c, c], [1, -1])
        return (gt, lt) if ge else (lt, gt)
    if fam.kind == "min_ratio":
        # min(r, 1/r) < c: some orientation below c (the two meet at c = 1); > c: both above
        lt, gt = many([c, c], [-1, 1], ratio=True)
        lt_f, gt_f = many([c, c], [-1, 1], ratio=True, flip=True)
        below = np.minimum(np.minimum(lt, lt_f) * (2.0 if c >= 1 else 1.0), 1.0)
        above = np.maximum(gt, gt_f)
        return (above, below) if ge else (below, above)
    # signed ratio against a fixed reference
    gt, lt = many([c, c], [1, -1], ratio=True)
    return (gt, lt) if ge else (lt, gt)


def _aggregate(fam, op, c, p_hold, p_not, absolute):
    """The family's ``(p_hold, p_not)``: a union of contrasts is Bonferroni over ``F``, an
    intersection is the largest p (intersection-union test, Berger 1982)."""
    if not p_hold.size or np.isnan(p_hold).all():
        return math.nan, math.nan
    ge = op in (">", ">=")
    union_hold = ge if fam.kind == "range" else (not ge if fam.kind == "min_ratio" else True)
    F = fam.F
    if fam.mirror and not absolute and c == (1.0 if fam.kind == "signed_ratio" else 0.0):
        F = 2   # a binary attribute's two mirrored contrasts meet at the ideal value: both sides count
    ph = np.where(np.isnan(p_hold), 1.0, p_hold)
    pn = np.where(np.isnan(p_not), 1.0, p_not)
    if union_hold:   # the condition holds when it holds for SOME contrast
        return float(min(1.0, F * ph.min())), float(pn.max())
    return float(ph.max()), float(min(1.0, F * pn.min()))


# ----------------------------------------------------------------------------------------- result
@dataclasses.dataclass
class GroupMetricsResult(Result):
    """Group fairness with coverage-checked intervals (returned by :func:`group_metrics`).

    Parameters
    ----------
    groups : DataFrame
        One row per group of every protected attribute and intersection: ``attribute``, ``group``,
        ``n`` (rows), ``share``, ``n_positive``/``n_negative`` (rows whose TRUE label is favourable /
        not), ``n_predicted_positive``, then every rate of :data:`GROUP_RATES` with ``_low``/``_high``
        Wilson limits, ``auc`` and ``calibration_gap`` with their limits (NaN without ``y_score``),
        ``small`` (fewer than ``min_group_size`` rows) and ``note`` (which of its rates are left out
        of the comparisons, and why).
    measures : DataFrame
        One row per attribute set and measure of :data:`GROUP_MEASURES`: ``attribute``, ``measure``,
        ``label``, ``value``, ``ci_low``, ``ci_high``, ``ideal``, ``group`` (signed measures: the group
        shown, the one departing most clearly from parity: largest estimate over its standard error),
        ``reference`` (signed measures: the privileged group
        or ``"everyone else"``), ``highest``/``lowest`` (the two groups whose rates give the value),
        ``rate`` (the rate those two groups are compared on), ``n_groups`` (groups compared) and
        ``n_contrasts`` (comparisons the interval's level is shared over).
    contrasts : DataFrame
        Every signed comparison: ``attribute``, ``measure``, ``group``, ``reference``, ``value``,
        ``ci_low``, ``ci_high`` (each group against the reference, both directions shown).
    confidence : float
        Level of every interval (simultaneous over ``n_contrasts`` for the between-group measures).
    n_rows : int
        Rows compared.
    params : dict
        The arguments of :func:`group_metrics`.
    random_state : None
        Nothing is random (the intervals are closed-form); kept for the common result protocol.
    elapsed : float
        Seconds taken.
    stopped : bool
        Always False.
    _families : dict
        Private: ``{(attribute, measure): the comparisons behind it}`` (what :meth:`test` inverts).

    See Also
    --------
    group_metrics : Builds this result.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.metrics import group_metrics
    >>> sex = np.repeat(["female", "male"], 40)
    >>> y_true = np.tile([1, 0], 40)
    >>> y_pred = np.r_[np.repeat([1, 0], [16, 24]), np.repeat([1, 0], [28, 12])]
    >>> res = group_metrics(y_true, y_pred, protected={"sex": sex})
    >>> res.groups[["group", "n", "selection_rate"]]
        group   n  selection_rate
    0  female  40             0.4
    1    male  40             0.7
    >>> len(res.measures)  # the 8 measures of GROUP_MEASURES for one attribute
    8
    """

    groups: pd.DataFrame
    measures: pd.DataFrame
    contrasts: pd.DataFrame
    confidence: float
    n_rows: int
    params: dict = dataclasses.field(default_factory=dict)
    random_state: int | None = None
    elapsed: float = float("nan")
    stopped: bool = False
    _families: dict = dataclasses.field(default_factory=dict, repr=False)
    title = "Group fairness (score intervals)"

    def measure(self, name, attribute=None):
        """The row of ``measures`` for one measure, as a dict.

        Parameters
        ----------
        name : str
            A measure of :data:`GROUP_MEASURES`, e.g. ``"demographic_parity_difference"``.
        attribute : str, optional
            The protected attribute (or intersection, e.g. ``"sex & race"``) to read.  Default: the
            attribute where the measure is furthest from its ideal value; an attribute where it is
            undefined is chosen only if it is undefined everywhere.

        Returns
        -------
        dict
            The columns of ``measures`` for that row.

        Raises
        ------
        ValueError
            For an unknown ``name`` or an ``attribute`` that is not in ``measures``.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.metrics import group_metrics
        >>> sex = np.repeat(["female", "male"], 40)
        >>> y_true = np.tile([1, 0], 40)
        >>> y_pred = np.r_[np.repeat([1, 0], [16, 24]), np.repeat([1, 0], [28, 12])]
        >>> row = group_metrics(y_true, y_pred, protected={"sex": sex}).measure("demographic_parity_difference")
        >>> row["attribute"], row["highest"], row["lowest"], round(row["value"], 2)
        ('sex', 'male', 'female', 0.3)
        >>> round(row["ci_low"], 3), round(row["ci_high"], 3)
        (0.082, 0.481)
        """
        if name not in GROUP_MEASURES:
            raise ValueError(f"name must be one of {list(GROUP_MEASURES)}; got {name!r}.")
        rows = self.measures[self.measures["measure"] == name]
        if attribute is not None:
            rows = rows[rows["attribute"] == attribute]
            if not len(rows):
                raise ValueError(f"attribute must be one of {sorted(set(self.measures['attribute']))}; "
                                 f"got {attribute!r}.")
        ideal = GROUP_MEASURES[name][1]
        gap = (rows["value"] - ideal).abs().fillna(-1.0)
        return rows.loc[gap.idxmax()].to_dict()

    def test(self, name, attribute, op, threshold, *, absolute=False):
        """p-values of the condition ``measure op threshold`` for one attribute set.

        The condition holds for a range measure (``max - min``) when some pair of groups is further
        apart than ``threshold``; for ``demographic_parity_ratio`` when some pair's ratio is beyond
        it; for a signed measure when it holds for SOME group (against the reference).  Each
        elementary comparison is tested by inverting its MOVER/Newcombe limits
        (:func:`fairlens._stats.pvalue`); a union of comparisons is Bonferroni-adjusted over the
        comparisons, an intersection is an intersection-union test (the largest p).

        Parameters
        ----------
        name : str
            A measure of :data:`GROUP_MEASURES`.
        attribute : str
            An attribute set of ``measures`` (e.g. ``"sex"`` or ``"sex & race"``).
        op : {">", ">=", "<", "<="}
            The comparison.
        threshold : float
            The value compared with.
        absolute : bool, default False
            Compare ``|value|`` (signed differences only).

        Returns
        -------
        (p_hold, p_not) : floats
            ``p_hold`` small: the data show the condition holds; ``p_not`` small: the data show it
            does not.  NaN when the measure is undefined (fewer than two groups to compare).

        Raises
        ------
        ValueError
            For an unknown measure or attribute set, or an operator outside the four.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.metrics import group_metrics
        >>> sex = np.repeat(["female", "male"], 400)
        >>> y_pred = np.r_[np.repeat([1, 0], [120, 280]), np.repeat([1, 0], [240, 160])]
        >>> res = group_metrics(y_pred, y_pred, protected={"sex": sex})
        >>> p_hold, p_not = res.test("demographic_parity_difference", "sex", ">", 0.1)
        >>> bool(p_hold < 0.001), bool(p_not > 0.5)   # a 30 pp gap: clearly above 10 pp
        (True, True)
        """
        if name not in GROUP_MEASURES:
            raise ValueError(f"name must be one of {list(GROUP_MEASURES)}; got {name!r}.")
        if op not in (">", ">=", "<", "<="):
            raise ValueError(f"op must be one of '>', '>=', '<', '<='; got {op!r}.")
        key = (attribute, name)
        if key not in self._families:
            raise ValueError(f"attribute must be one of {sorted(set(self.measures['attribute']))}; "
                             f"got {attribute!r}.")
        fam = self._families[key]
        if fam is None or fam.X.shape[0] == 0:
            return math.nan, math.nan
        ph, pn = _elementary(fam, op, float(threshold), absolute)
        return _aggregate(fam, op, float(threshold), np.atleast_1d(ph), np.atleast_1d(pn), absolute)

    def standard_error(self, name, attribute):
        """Normal-approximation standard error of the comparison that gives the measure's value.

        Parameters
        ----------
        name : str
            A measure of :data:`GROUP_MEASURES`.
        attribute : str
            An attribute set of ``measures``.

        Returns
        -------
        (se, n_contrasts) : (float, int)
            The standard error at the observed rates (of the log ratio for ratios) and the number
            of comparisons the family shares its level over; NaN when undefined.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.metrics import group_metrics
        >>> sex = np.repeat(["female", "male"], 400)
        >>> y_pred = np.r_[np.repeat([1, 0], [120, 280]), np.repeat([1, 0], [240, 160])]
        >>> se, k = group_metrics(y_pred, y_pred, protected={"sex": sex}).standard_error(
        ...     "demographic_parity_difference", "sex")
        >>> round(se, 4), k   # sqrt(0.3 * 0.7 / 400 + 0.6 * 0.4 / 400)
        (0.0335, 1)
        """
        fam = self._families.get((attribute, name))
        if fam is None or fam.X.shape[0] == 0:
            return math.nan, 0
        with np.errstate(divide="ignore", invalid="ignore"):
            p = fam.X / fam.N
            var = p * (1 - p) / fam.N
            if fam.w is not None:
                se = np.sqrt((var * np.asarray(fam.w) ** 2).sum(1))
                val = np.abs((p * np.asarray(fam.w)).sum(1))
            else:   # delta method on the log ratio
                se = np.sqrt(((1 - p) / (p * fam.N)).sum(1))
                val = np.abs(np.log(p[:, 0] / p[:, 1]))
        if not np.isfinite(val).any():
            return math.nan, fam.F
        j = int(np.nanargmax(np.where(np.isfinite(val), val, -np.inf)))
        return float(se[j]), int(fam.F)

    def summary(self):
        """One row: the largest demographic parity difference, where, and its interval.

        Returns
        -------
        DataFrame
            One row with ``n_rows``, ``n_attributes``, ``n_groups``, ``n_small_groups``,
            ``worst_attribute`` (where the demographic parity difference is largest),
            ``demographic_parity_difference``, ``ci_low``, ``ci_high`` and ``confidence``.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.metrics import group_metrics
        >>> sex = np.repeat(["female", "male"], 40)
        >>> y_true = np.tile([1, 0], 40)
        >>> y_pred = np.r_[np.repeat([1, 0], [16, 24]), np.repeat([1, 0], [28, 12])]
        >>> s = group_metrics(y_true, y_pred, protected={"sex": sex}).summary()
        >>> s.shape
        (1, 9)
        >>> s.loc[0, "worst_attribute"], round(float(s.loc[0, "demographic_parity_difference"]), 2)
        ('sex', 0.3)
        """
        worst = self.measure("demographic_parity_difference")
        return pd.DataFrame([{
            "n_rows": self.n_rows, "n_attributes": int(self.measures["attribute"].nunique()),
            "n_groups": int(len(self.groups)), "n_small_groups": int(self.groups["small"].sum()),
            "worst_attribute": worst["attribute"],
            "demographic_parity_difference": worst["value"], "ci_low": worst["ci_low"],
            "ci_high": worst["ci_high"], "confidence": self.confidence,
        }])

    def to_frame(self):
        """The between-group measures (``measures``).

        Returns
        -------
        DataFrame
            A copy of ``measures``: one row per attribute set and measure.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.metrics import group_metrics
        >>> sex = np.repeat(["female", "male"], 40)
        >>> y_true = np.tile([1, 0], 40)
        >>> y_pred = np.r_[np.repeat([1, 0], [16, 24]), np.repeat([1, 0], [28, 12])]
        >>> frame = group_metrics(y_true, y_pred, protected={"sex": sex}).to_frame()
        >>> frame[["measure", "value"]].head(2).round(3)
                                 measure  value
        0  demographic_parity_difference  0.300
        1       demographic_parity_ratio  0.571
        """
        return self.measures.copy()

    def to_dict(self):
        """JSON-safe dict: the base fields plus ``measures``, ``contrasts`` and ``groups`` as records.

        Returns
        -------
        dict
            ``type``, ``title``, ``summary``, ``params``, ``random_state``, ``elapsed``, ``stopped``
            (as every :class:`fairlens._base.Result`), plus ``measures``, ``contrasts`` and
            ``groups``: lists of records (NaN becomes ``None``), ready for ``json.dumps``.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.metrics import group_metrics
        >>> sex = np.repeat(["female", "male"], 40)
        >>> d = group_metrics(np.tile([1, 0], 40), np.tile([1, 0], 40), protected={"sex": sex}).to_dict()
        >>> sorted(d)  # doctest: +NORMALIZE_WHITESPACE
        ['contrasts', 'elapsed', 'groups', 'measures', 'params', 'random_state', 'stopped', 'summary',
         'title', 'type']
        """
        d = super().to_dict()
        d["measures"] = to_jsonable(self.measures)
        d["contrasts"] = to_jsonable(self.contrasts)
        d["groups"] = to_jsonable(self.groups)
        return d

    def plot(self, ax=None, attribute=None):
        """Selection rate of every group of ``attribute`` with its Wilson interval.

        Groups too small to compare are drawn with hollow markers.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure sized to the number of groups).
        attribute : str, optional
            The protected attribute (or intersection) whose groups are drawn (default: the first).

        Returns
        -------
        matplotlib Axes
            One point per group (y tick ``"group (n=rows)"``), the selection rate on x.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.metrics import group_metrics
        >>> sex = np.repeat(["female", "male"], 40)
        >>> res = group_metrics(np.tile([1, 0], 40), np.tile([1, 0], 40), protected={"sex": sex})
        >>> ax = res.plot(attribute="sex")
        >>> ax.get_title()
        'Selection rate by sex'
        >>> [t.get_text() for t in ax.get_yticklabels()]
        ['female (n=40)', 'male (n=40)']
        >>> import matplotlib.pyplot as plt
        >>> plt.close("all")
        """
        import matplotlib.pyplot as plt

        attrs = list(dict.fromkeys(self.groups["attribute"]))
        attribute = attrs[0] if attribute is None else attribute
        if attribute not in attrs:
            raise ValueError(f"attribute must be one of {attrs}; got {attribute!r}.")
        g = self.groups[self.groups["attribute"] == attribute]
        if ax is None:
            _, ax = plt.subplots(figsize=(8.4, max(3, 0.5 * len(g) + 1.5)), layout="constrained")
        err = np.vstack([g["selection_rate"] - g["selection_rate_low"],
                         g["selection_rate_high"] - g["selection_rate"]]).clip(min=0)
        err = np.nan_to_num(err)
        for i, (_, r) in enumerate(g.iterrows()):
            ax.errorbar(r["selection_rate"], i, xerr=err[:, i:i + 1], fmt="o", color="C0",
                        mfc="white" if r["small"] else "C0", capsize=4)
        ax.set_yticks(np.arange(len(g)), [f"{s} (n={n})" for s, n in zip(g["group"], g["n"])])
        ax.set_xlabel(f"selection rate ({100 * self.confidence:.0f}% Wilson interval)")
        ax.set_title(f"Selection rate by {attribute}")
        return ax


# ----------------------------------------------------------------------------------- computation
_GROUP_METRICS_CONSTRAINTS = {
    "confidence": [Interval(numbers.Real, 0, 1, closed="neither")],
    "min_group_size": [Interval(numbers.Integral, 1, None)],
    "max_groups": [Interval(numbers.Integral, 2, None), None],
}


def _attribute_sets(columns, intersections):
    out = [(c,) for c in columns]
    if intersections and len(columns) > 1:
        for k in range(2, len(columns) + 1):
            out.extend(itertools.combinations(columns, k))
    return out


def _group_label(attrs, key):
    """``"a"`` for one attribute; ``"sex=female & race=Black"`` for an intersection (a value that already
    names its attribute, such as the bin ``"age <= 27"``, is written as it is)."""
    if len(attrs) == 1:
        return str(key[0])
    return " & ".join(str(v) if re.search(rf"(^|\W){re.escape(str(a))}(\W|$)", str(v)) else f"{a}={v}"
                      for a, v in zip(attrs, key))


def _rate_counts(C, rate):
    _, num, den, _ = GROUP_RATES[rate]
    return C[:, list(num)].sum(1), C[:, list(den)].sum(1)


def _ratio_values(x, n):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n > 0, x / np.where(n > 0, n, 1), np.nan)


def _range_family(C, eligible, rates, conf, labels):
    """``max - min`` over the eligible groups of one or two rates: pairwise Newcombe intervals,
    Bonferroni over every pair of every rate, give the range's simultaneous interval."""
    Xs, Ns, pairs = [], [], []
    for rate in rates:
        x, n = _rate_counts(C, rate)
        el = eligible[rate]
        a, b = _pair_index(len(el))
        ia, ib = el[a], el[b]
        Xs.append(np.c_[x[ia], x[ib]])
        Ns.append(np.c_[n[ia], n[ib]])
        pairs.extend((rate, i, j) for i, j in zip(ia, ib))
    X = np.concatenate(Xs) if Xs else np.zeros((0, 2))
    N = np.concatenate(Ns) if Ns else np.zeros((0, 2))
    fam = _Family("range", X, N, (1.0, -1.0), max(1, X.shape[0]), pairs)
    if X.shape[0] == 0:
        return fam, dict(value=math.nan, ci_low=math.nan, ci_high=math.nan, highest=None, lowest=None, rate=None)
    d, lo, hi = _stats.mover([X[:, 0], X[:, 1]], [N[:, 0], N[:, 1]], [1.0, -1.0], _z(conf, fam.F))
    lo_abs = np.maximum(0.0, np.maximum(lo, -hi))
    hi_abs = np.maximum(np.abs(lo), np.abs(hi))
    j = int(np.argmax(np.abs(d)))
    rate, i, k = pairs[j]
    hi_g, lo_g = (labels[i], labels[k]) if d[j] >= 0 else (labels[k], labels[i])
    return fam, dict(value=float(np.abs(d[j])), ci_low=float(lo_abs.max()), ci_high=float(hi_abs.max()),
                     highest=hi_g, lowest=lo_g, rate=rate)


def _min_ratio_family(C, eligible, conf, labels):
    """``min / max`` selection rate: pairwise MOVER-R intervals (Bonferroni over pairs), each pair
    oriented with the larger estimate in the denominator."""
    x, n = _rate_counts(C, "selection_rate")
    el = eligible["selection_rate"]
    p = _ratio_values(x, n)
    a, b = _pair_index(len(el))
    ia, ib = el[a], el[b]
    swap = p[ia] > p[ib]
    num = np.where(swap, ib, ia)
    den = np.where(swap, ia, ib)
    keep = p[den] > 0   # both rates 0: equal, no ratio to estimate
    num, den = num[keep], den[keep]
    X, N = np.c_[x[num], x[den]], np.c_[n[num], n[den]]
    fam = _Family("min_ratio", X, N, None, max(1, int(X.shape[0])), list(zip(num, den)))
    if len(el) >= 2 and np.nanmax(p[el]) == 0:
        return fam, dict(value=math.nan, ci_low=math.nan, ci_high=math.nan, highest=None, lowest=None,
                         rate="selection_rate")
    if X.shape[0] == 0:
        return fam, dict(value=math.nan, ci_low=math.nan, ci_high=math.nan, highest=None, lowest=None, rate=None)
    r, lo, hi = _stats.mover_ratio(X[:, 0], N[:, 0], X[:, 1], N[:, 1], _z(conf, fam.F))
    with np.errstate(divide="ignore"):
        s_lo = np.where(hi >= 1, np.minimum(lo, 1.0 / hi), lo)
        s_hi = np.where(hi >= 1, 1.0, hi)
    j = int(np.argmin(r))
    return fam, dict(value=float(r[j]), ci_low=float(np.nanmin(s_lo)), ci_high=float(min(1.0, np.nanmin(s_hi))),
                     highest=labels[den[j]], lowest=labels[num[j]], rate="selection_rate")


def _signed_family(C, eligible, kind, rates, conf, labels, priv):
    """Each compared group against a FIXED reference: the privileged group (one contrast: everyone
    else against it, AIF360's convention) or, without one, everyone else (one contrast per group)."""
    members = set(eligible[rates[0]].tolist())
    for r in rates[1:]:
        members &= set(eligible[r].tolist())
    if priv is not None:
        if priv not in members:
            return None, []
        sides = [(sorted(members - {priv}), [priv], "everyone else", labels[priv])]
    else:
        sides = [([g], sorted(members - {g}), labels[g], "everyone else") for g in sorted(members)]
    sides = [s for s in sides if s[0] and s[1]]
    if not sides:
        return None, []
    Xcols, Ncols = [], []
    for rate in rates:
        x, n = _rate_counts(C, rate)
        Xcols.append((np.array([x[s[0]].sum() for s in sides]), np.array([x[s[1]].sum() for s in sides])))
        Ncols.append((np.array([n[s[0]].sum() for s in sides]), np.array([n[s[1]].sum() for s in sides])))
    if kind == "signed_ratio":
        X, N, w = np.c_[Xcols[0]], np.c_[Ncols[0]], None
    elif len(rates) == 1:
        X, N, w = np.c_[Xcols[0]], np.c_[Ncols[0]], (1.0, -1.0)
    else:   # average odds: half the sum of the two rates' differences
        X = np.c_[Xcols[0][0], Xcols[0][1], Xcols[1][0], Xcols[1][1]]
        N = np.c_[Ncols[0][0], Ncols[0][1], Ncols[1][0], Ncols[1][1]]
        w = (0.5, -0.5, 0.5, -0.5)
    E = X.shape[0]
    mirror = priv is None and E == 2
    F = 1 if (priv is not None or mirror) else E
    fam = _Family(kind, X, N, w, F, [s[2] for s in sides], mirror=mirror)
    z = _z(conf, F)
    if w is None:
        v, lo, hi = _stats.mover_ratio(X[:, 0], N[:, 0], X[:, 1], N[:, 1], z)
    else:
        v, lo, hi = _stats.mover([X[:, t] for t in range(X.shape[1])], [N[:, t] for t in range(N.shape[1])],
                                 list(w), z)
    with np.errstate(divide="ignore", invalid="ignore"):   # how clearly each contrast departs from parity
        p = X / N
        if w is None:
            zs = np.log(p[:, 0] / p[:, 1]) / np.sqrt(((1 - p) / (p * N)).sum(1))
        else:
            zs = (p * np.asarray(w)).sum(1) / np.sqrt((p * (1 - p) / N * np.asarray(w) ** 2).sum(1))
    rows = [dict(group=s[2], reference=s[3], value=float(v[e]), ci_low=float(lo[e]), ci_high=float(hi[e]),
                 z=float(zs[e])) for e, s in enumerate(sides)]
    return fam, rows


def _choose_shown(rows, ideal):
    """The contrast that departs most clearly from parity (largest |estimate / standard error|: a small
    group's noisy extreme does not hide a large group's clear gap); ties: the worse-off side."""
    best, key = None, None
    for r in rows:
        v = r["value"]
        if not np.isfinite(v):
            continue
        z = r.get("z", math.nan)
        dist = abs(z) if np.isfinite(z) else (math.inf if (ideal == 1.0 and v == 0) else 0.0)
        k = (round(dist, 9), v < ideal)   # a binary attribute's two mirrored contrasts tie: show the worse-off
        if key is None or k > key:
            best, key = r, k
    return best


@strict_keywords(removed=_REMOVED)
@validated({
    "y_true": "no_validation", "y_pred": "no_validation", "protected": "no_validation",
    "favourable": "no_validation", "privileged": [dict, None], "y_score": "no_validation",
    "intersections": ["boolean"], **_GROUP_METRICS_CONSTRAINTS,
})
def group_metrics(y_true, y_pred, *, protected, favourable=1, privileged=None, y_score=None, intersections=True,
                  confidence=0.95, min_group_size=MIN_GROUP_SIZE, max_groups=None):
    """Group fairness per protected attribute and intersection, with coverage-checked intervals.

    For every protected attribute (and, with ``intersections``, every combination of two or more of
    them) the rows are split into groups; every confusion-matrix rate of every group gets a Wilson
    interval, and the fairlearn-style and AIF360-style between-group measures get simultaneous
    score (MOVER/Newcombe, MOVER-R) intervals that cover their true value -- 0 and 1 included --
    at the stated level (measured by simulation in ``benchmarks/audit_statistics.py``).

    Parameters
    ----------
    y_true : array-like of labels
        True labels (two values at most).
    y_pred : array-like of labels
        Predicted labels (two values at most), e.g. ``model.predict(X)``.
    protected : Series, DataFrame, dict of arrays or array
        Protected values, one per row; each column is a protected attribute (values are compared as
        text, so a 0/1 column is two groups "0" and "1").
    favourable : label, default 1
        The favourable outcome in ``y_true`` and ``y_pred`` (must occur in one of them).
    privileged : dict, optional
        ``{attribute: group}``: the reference group of the signed measures
        (``statistical_parity_difference``, ``disparate_impact``, ``average_odds_difference``,
        ``true_positive_rate_difference``) for that attribute: every other compared row against it
        (AIF360's convention; an intersection's reference is the combination of its attributes'
        privileged groups when all are given).  Without one, EVERY group is compared with everyone
        else (``contrasts`` lists them all; ``measures`` shows the one departing most clearly from
        parity -- the largest estimate over its standard error -- with an interval simultaneous over
        all of them).  The reference is never chosen from the outcomes.
    y_score : array-like of float, optional
        The favourable-class probability of each row: adds each group's AUC (DeLong interval on the
        logit scale) and calibration gap (mean score minus favourable rate, Student-t interval).
    intersections : bool, default True
        Also compare the groups of every combination of two or more protected attributes.
    confidence : float in (0, 1), default 0.95
        Level of every interval.  A between-group measure's interval is simultaneous over the
        comparisons behind it (Bonferroni over the pairs of groups, or over the groups compared with a
        reference), so it covers the measure whichever pair or group turns out extreme.
    min_group_size : int >= 1, default 30 (:data:`MIN_GROUP_SIZE`)
        ONE rule for every measure, signed or not, single attribute or intersection: a group's rate
        enters the comparisons only when the rate's denominator (rows for the selection rate,
        favourable true labels for the true positive rate, unfavourable ones for the false positive
        rate) has at least this many rows; otherwise the rate is shown with its interval but left out
        of every comparison of that rate, on the group's side and on "everyone else"'s side.
    max_groups : int >= 2, optional
        Keep the ``max_groups - 1`` largest groups of each protected column and put the rest into one
        group ``"other (k values)"`` (bounded work for an id-like column; the groups table says so).

    Returns
    -------
    GroupMetricsResult

    Raises
    ------
    TypeError, ValueError
        For a non-binary ``y_true``/``y_pred``, a ``favourable`` value that occurs in neither,
        mismatched lengths, missing values, duplicated protected columns, an unknown ``privileged``
        attribute or group, a ``y_score`` outside [0, 1], a parameter out of range, or a removed
        argument (the message names it).

    Notes
    -----
    Rates: Wilson (1927).  Differences: MOVER with Wilson limits (Zou & Donner 2008), Newcombe's
    (1998) hybrid score interval for two proportions.  Ratios: MOVER-R (Donner & Zou 2012).  Ranges
    and ``min / max``: the pairwise intervals Bonferroni-adjusted over the pairs, so the interval
    ``[max over pairs of the smallest |difference|, max over pairs of the largest]`` covers the true
    range with at least the stated probability and contains 0 whenever no pair is shown to differ.
    The percentile bootstrap of ``max - min`` used before (and by fairlearn's ``MetricFrame``) is
    bounded away from 0 and never covers a true 0 (see ``benchmarks/README.md``).

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.metrics import group_metrics
    >>> rng = np.random.default_rng(0)
    >>> g = rng.choice(["a", "b"], 1000)
    >>> y = rng.integers(0, 2, 1000)
    >>> p = (rng.random(1000) < .4).astype(int)   # the same selection rate in both groups
    >>> row = group_metrics(y, p, protected={"A": g}).measure("demographic_parity_difference")
    >>> bool(row["ci_low"] == 0.0 <= row["value"] <= row["ci_high"])  # a true 0 is covered
    True
    """
    validate_params(dict(confidence=confidence, min_group_size=min_group_size, max_groups=max_groups),
                    _GROUP_METRICS_CONSTRAINTS, caller="group_metrics")
    if not isinstance(intersections, (bool, np.bool_)):
        raise TypeError(f"intersections must be True or False; got {intersections!r}.")
    t0 = time.perf_counter()
    conf = float(confidence)
    yt, seen_t = _labels_to_binary(y_true, favourable, "y_true")
    yp, seen_p = _labels_to_binary(y_pred, favourable, "y_pred", n=yt.size)
    if not yt.any() and not yp.any():
        raise ValueError(f"favourable={favourable!r} occurs neither in y_true (values {list(seen_t)}) nor in "
                         f"y_pred (values {list(seen_p)}); pass the label of the favourable outcome "
                         "(mind its type: 1 vs '1').")
    n = yt.size
    score = _scores(y_score, n)
    table = _protected_table(protected, n).astype(str)
    columns = list(table.columns)
    if privileged is not None and not isinstance(privileged, dict):
        raise TypeError(f"privileged must be None or a dict {{attribute: group}}; got {privileged!r}.")
    privileged = {str(k): str(v) for k, v in (privileged or {}).items()}
    unknown = [k for k in privileged if k not in columns]
    if unknown:
        raise ValueError(f"privileged names attributes {unknown} that are not protected columns {columns}.")
    lumped = {}
    for c in columns:
        table[c], info = _lump(table[c], None if max_groups is None else int(max_groups))
        if info is not None:
            lumped[c] = info
    for a, v in privileged.items():
        if v not in set(table[a]):
            raise ValueError(f"privileged[{a!r}]={v!r} is not a group of {a!r}; groups: "
                             f"{sorted(set(table[a]))[:20]}.")

    cell = 2 * yt + yp
    group_rows, measure_rows, contrast_rows, families = [], [], [], {}
    msize = int(min_group_size)
    col_codes = {c: pd.factorize(table[c], sort=True) for c in columns}
    for attrs in _attribute_sets(columns, bool(intersections)):
        combined = np.zeros(n, dtype=np.int64)
        for c in attrs:   # mixed radix: the combined code sorts like the tuple of the columns' codes
            combined = combined * len(col_codes[c][1]) + col_codes[c][0]
        uniq, codes = np.unique(combined, return_inverse=True)
        keys = []
        for u in uniq:
            parts = []
            for c in reversed(attrs):
                k = len(col_codes[c][1])
                parts.append(str(col_codes[c][1][u % k]))
                u //= k
            keys.append(tuple(reversed(parts)))
        H = len(keys)
        C = np.bincount(codes * 4 + cell, minlength=4 * H).reshape(H, 4).astype(np.float64)
        labels = [_group_label(attrs, k) for k in keys]
        name = " & ".join(attrs)
        eligible = {}
        for rate in GROUP_RATES:
            _, den = _rate_counts(C, rate)
            eligible[rate] = np.flatnonzero(den >= msize)
        # per-group rows
        zq = _z(conf, 1)
        size = C.sum(1)
        counts = [_rate_counts(C, rate) for rate in GROUP_RATES]
        Xr = np.stack([c[0] for c in counts], axis=1)
        Dr = np.stack([c[1] for c in counts], axis=1)
        LO, HI = _stats.wilson(Xr, Dr, zq)   # every rate of every group in one call
        VAL = _ratio_values(Xr, Dr)
        per_rate = {rate: (VAL[:, j], LO[:, j], HI[:, j], Dr[:, j]) for j, rate in enumerate(GROUP_RATES)}
        auc = np.full((H, 3), np.nan)
        cal = np.full((H, 3), np.nan)
        if score is not None:
            for h in np.flatnonzero(size >= msize):
                rows = codes == h
                auc[h] = _stats.auc_interval(score[rows], yt[rows], conf)
                cal[h] = _stats.mean_interval(score[rows] - yt[rows], conf)
        for h, key in enumerate(keys):
            left_out = [GROUP_RATES[r][0].lower() for r in ("selection_rate", "true_positive_rate",
                                                            "false_positive_rate")
                        if per_rate[r][3][h] < msize]
            note = []
            if size[h] < msize:
                note.append(f"only {int(size[h])} rows (< {msize}): left out of every comparison")
            elif left_out:
                note.append(f"{', '.join(left_out)} left out of the comparisons (< {msize} rows in "
                            "its denominator)")
            if len(attrs) == 1 and attrs[0] in lumped and key[0] == lumped[attrs[0]][1]:
                note.append(f"{lumped[attrs[0]][0]:,} smaller values of {attrs[0]} lumped together")
            row = {"attribute": name, "group": labels[h], "n": int(size[h]), "share": size[h] / n,
                   "n_positive": int(C[h, _FN] + C[h, _TP]), "n_negative": int(C[h, _TN] + C[h, _FP]),
                   "n_predicted_positive": int(C[h, _FP] + C[h, _TP])}
            for rate, (v, lo, hi, _) in per_rate.items():
                row[rate], row[rate + "_low"], row[rate + "_high"] = v[h], lo[h], hi[h]
            row["auc"], row["auc_low"], row["auc_high"] = auc[h]
            row["calibration_gap"], row["calibration_gap_low"], row["calibration_gap_high"] = cal[h]
            row["small"] = bool(size[h] < msize)
            row["note"] = "; ".join(note)
            group_rows.append(row)
        # the reference of the signed measures
        priv = None
        if all(a in privileged for a in attrs):
            want = tuple(privileged[a] for a in attrs)
            priv = keys.index(want) if want in keys else None
            if priv is None:
                raise ValueError(f"privileged: the combination {dict(zip(attrs, want))} does not occur in the "
                                 "data; give privileged groups that occur together or leave intersections out.")
        for m, (label, ideal, kind, rates) in GROUP_MEASURES.items():
            base = {"attribute": name, "measure": m, "label": label, "ideal": ideal, "group": None,
                    "reference": None}
            if kind == "range":
                fam, info = _range_family(C, eligible, rates, conf, labels)
                n_cmp = len(set().union(*(eligible[r].tolist() for r in rates)))
            elif kind == "min_ratio":
                fam, info = _min_ratio_family(C, eligible, conf, labels)
                n_cmp = len(eligible["selection_rate"])
            else:
                fam, rows = _signed_family(C, eligible, kind, rates, conf, labels, priv)
                for r in rows:
                    contrast_rows.append({"attribute": name, "measure": m,
                                          **{k: v for k, v in r.items() if k != "z"}, "n_contrasts": fam.F})
                shown = _choose_shown(rows, ideal)
                n_cmp = len(set.intersection(*(set(eligible[r].tolist()) for r in rates)))
                info = dict(value=math.nan, ci_low=math.nan, ci_high=math.nan, highest=None, lowest=None,
                            rate=rates[0] if len(rates) == 1 else "true and false positive rates")
                if shown is not None:
                    info.update(value=shown["value"], ci_low=shown["ci_low"], ci_high=shown["ci_high"])
                    base.update(group=shown["group"], reference=shown["reference"])
            families[(name, m)] = fam
            measure_rows.append({**base, **info, "n_groups": int(n_cmp),
                                 "n_contrasts": int(fam.F) if fam is not None else 0})
    measures = pd.DataFrame(measure_rows, columns=[
        "attribute", "measure", "label", "value", "ci_low", "ci_high", "ideal", "group", "reference", "highest",
        "lowest", "rate", "n_groups", "n_contrasts"])
    contrasts = pd.DataFrame(contrast_rows, columns=["attribute", "measure", "group", "reference", "value",
                                                     "ci_low", "ci_high", "n_contrasts"])
    params = dict(favourable=favourable, protected=columns, privileged=privileged or None,
                  intersections=bool(intersections), confidence=conf, min_group_size=msize,
                  max_groups=None if max_groups is None else int(max_groups),
                  lumped={c: v[0] for c, v in lumped.items()} or None, y_score=score is not None,
                  intervals="Wilson (rates); simultaneous MOVER/Newcombe (differences), MOVER-R (ratios)")
    return GroupMetricsResult(groups=pd.DataFrame(group_rows), measures=measures, contrasts=contrasts,
                              confidence=conf, n_rows=int(n), params=params, random_state=None,
                              elapsed=time.perf_counter() - t0, stopped=False, _families=families)
