"""Group fairness metrics for binary predictions, shared by every slice.

All metrics follow fairlearn's signature ``f(y_true, y_pred, *, protected)``;
``protected`` may be one column (array, list, Series) or several (2-D array or
DataFrame), in which case each distinct combination of values is a group (intersectional
groups, as in fairlearn). Predictions and labels are binary: 1 is the favourable outcome.

Differences are ``max - min`` over groups (fairlearn's ``method="between_groups"``);
the ratio is ``min / max``. A rate that is undefined for a group (e.g. a true positive
rate in a group without positive labels) leaves that group out of that metric with a
:class:`UserWarning` naming it.

AIF360's **signed** metrics (Bellamy et al. 2018, the toolkit the shuffling-attack paper
used) compare an unprivileged group with a privileged one instead:
:func:`statistical_parity_difference`, :func:`disparate_impact`,
:func:`true_positive_rate_difference` (AIF360's ``equal_opportunity_difference``) and
:func:`average_odds_difference`, with the signature ``f(y_true, y_pred, *,
protected, privileged)``: rows whose sensitive value is ``privileged`` (or in it,
for a list) form the privileged group, all other rows the unprivileged group, and the result
is *unprivileged minus (or over) privileged* -- negative differences and ratios below 1 mean
the unprivileged group is worse off. They equal AIF360's ``ClassificationMetric`` methods of
the same names, including their division by zero (``nan``/``inf``, see
:func:`disparate_impact`). :func:`aif360_report` gathers the five metrics of the paper's
Figure 3 (v) in this signed form.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np
import pandas as pd

from ._base import Interval, strict_keywords, validated
from ._validation import check_real

__all__ = [
    "group_rates",
    "demographic_parity_difference",
    "equal_opportunity_difference",
    "equalized_odds_difference",
    "disparate_impact_ratio",
    "theil_index",
    "generalized_entropy_index",
    "fairness_report",
    "statistical_parity_difference",
    "disparate_impact",
    "true_positive_rate_difference",
    "average_odds_difference",
    "aif360_report",
    "group_metrics",
    "GroupMetricsResult",
    "GROUP_MEASURES",
    "GROUP_RATES",
    "MIN_GROUP_SIZE",
]



#: ``sensitive_features=`` (before the contract) is ``protected=`` now: the old keyword, and any
#: keyword a metric does not take, is a ``TypeError`` naming it.
_renamed = strict_keywords(renamed={"sensitive_features": "protected"})


def _binary(values, name) -> np.ndarray:
    if values is None or isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be an array of binary 0/1 values; got {values!r}")
    arr = np.asarray(values)
    if arr.ndim == 0:
        raise ValueError(f"{name} must be one-dimensional (one value per row); got a scalar")
    if arr.ndim != 1:
        arr = arr.reshape(-1) if arr.ndim == 2 and 1 in arr.shape else arr
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {np.shape(values)}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty; fairness metrics need at least one prediction")
    if arr.dtype == bool:
        return arr.astype(np.int64)
    try:
        num = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must hold binary 0/1 values; got values such as {arr[:3].tolist()}. "
            "Threshold scores first (e.g. (scores >= 0.5).astype(int))."
        ) from None
    bad = ~np.isin(num, (0.0, 1.0))
    if bad.any():
        raise ValueError(
            f"{name} must hold binary 0/1 values; found {np.unique(num[bad])[:5].tolist()}. "
            "Threshold scores first (e.g. (scores >= 0.5).astype(int))."
        )
    return num.astype(np.int64)


def _groups(protected, n) -> tuple[np.ndarray, list]:
    """Integer group id per row and the readable group labels."""
    if protected is None:
        raise ValueError("protected is required (one value per row, or a 2-D table)")
    if isinstance(protected, pd.Series):
        sf = protected.to_frame()
    elif isinstance(protected, pd.DataFrame):
        sf = protected
    else:
        arr = np.asarray(protected, dtype=object)
        if arr.ndim == 1:
            arr = arr[:, None]
        if arr.ndim != 2:
            raise ValueError(f"protected must be 1-D (one value per row) or 2-D; got "
                             f"shape {arr.shape}")
        sf = pd.DataFrame(arr)
    if len(sf) != n:
        raise ValueError(
            f"protected has {len(sf)} rows but y_true/y_pred have {n}; pass one "
            "sensitive value (or row of values) per prediction"
        )
    if sf.isna().any().any():
        raise ValueError("protected contains missing values; fill or drop them first")
    keys = list(sf.itertuples(index=False, name=None))
    labels = sorted(set(keys), key=lambda k: tuple(map(str, k)))
    index = {k: i for i, k in enumerate(labels)}
    ids = np.fromiter((index[k] for k in keys), dtype=np.int64, count=n)
    readable = [k[0] if len(k) == 1 else k for k in labels]
    return ids, readable


def _prepare(y_true, y_pred, protected, need_true=False):
    if need_true and y_true is None:
        raise ValueError("y_true is required for this metric (true labels, 0/1)")
    yp = _binary(y_pred, "y_pred")
    yt = _binary(y_true, "y_true") if y_true is not None else None
    if yt is not None and yt.shape != yp.shape:
        raise ValueError(f"y_true and y_pred differ in length ({yt.size} vs {yp.size})")
    ids, labels = _groups(protected, yp.size)
    return yt, yp, ids, labels


def _check_unused_true(y_true, y_pred):
    if y_true is not None:
        yt, yp = _binary(y_true, "y_true"), _binary(y_pred, "y_pred")
        if yt.shape != yp.shape:
            raise ValueError(f"y_true and y_pred differ in length ({yt.size} vs {yp.size})")


def _rate(num_mask, den_mask, ids, n_groups):
    num = np.bincount(ids, weights=num_mask.astype(float), minlength=n_groups)
    den = np.bincount(ids, weights=den_mask.astype(float), minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan), den


@_renamed
@validated({
    "y_true": "no_validation", "y_pred": "no_validation", "protected": "no_validation",
})
def group_rates(y_true, y_pred, *, protected) -> pd.DataFrame:
    """Per-group count, selection rate, true and false positive rates, and base rate.

    Parameters
    ----------
    y_true : array-like of 0/1 or None
        True labels, 1 = favourable. Optional: without them only
        ``count`` and ``selection_rate`` are returned.
    y_pred : array-like of 0/1
        Predicted labels, 1 = favourable (booleans are accepted).
    protected : array-like, Series, 2-D array or DataFrame
        The sensitive value of each row; with several columns every distinct combination of
        values is a group (intersectional groups).

    Returns
    -------
    DataFrame
        One row per group (index ``group``; tuples of values are shown as strings for
        intersectional groups), columns ``count`` and ``selection_rate`` and, when ``y_true``
        is given, ``base_rate``, ``true_positive_rate`` and ``false_positive_rate``. A rate
        without rows to compute it on (e.g. no positive labels in a group) is ``nan``.

    Raises
    ------
    TypeError
        If ``y_pred`` (or ``y_true``) is not an array of labels (e.g. a string or ``None``).
    ValueError
        If the labels are not binary 0/1, the lengths of ``y_true``, ``y_pred`` and
        ``protected`` differ, or ``protected`` has missing values.

    Examples
    --------
    >>> from fairlens.metrics import group_rates
    >>> y_true = [1, 0, 1, 1, 0, 1, 0, 0]
    >>> y_pred = [1, 0, 1, 0, 1, 1, 1, 0]
    >>> group = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> rates = group_rates(y_true, y_pred, protected=group)
    >>> rates[["count", "selection_rate", "true_positive_rate"]].round(3)
           count  selection_rate  true_positive_rate
    group
    a          4            0.50               0.667
    b          4            0.75               1.000
    """
    yt, yp, ids, labels = _prepare(y_true, y_pred, protected)
    k = len(labels)
    sel, count = _rate(yp == 1, np.ones_like(yp, bool), ids, k)
    out = {"count": count.astype(int), "selection_rate": sel}
    if yt is not None:
        out["base_rate"] = _rate(yt == 1, np.ones_like(yt, bool), ids, k)[0]
        out["true_positive_rate"] = _rate((yp == 1) & (yt == 1), yt == 1, ids, k)[0]
        out["false_positive_rate"] = _rate((yp == 1) & (yt == 0), yt == 0, ids, k)[0]
    index = pd.Index([str(g) for g in labels], name="group") if any(
        isinstance(g, tuple) for g in labels) else pd.Index(labels, name="group")
    return pd.DataFrame(out, index=index)


def _spread(rates, labels, what):
    ok = ~np.isnan(rates)
    if not ok.all():
        missing = [labels[i] for i in np.flatnonzero(~ok)]
        warnings.warn(
            f"{what} is undefined for groups {missing} (no rows to compute it on); "
            "they are left out of the comparison", UserWarning, stacklevel=3,
        )
    if ok.sum() == 0:
        return np.nan, np.nan
    return float(rates[ok].max()), float(rates[ok].min())


@_renamed
@validated({
    "y_true": "no_validation", "y_pred": "no_validation", "protected": "no_validation",
})
def demographic_parity_difference(y_true, y_pred, *, protected) -> float:
    """Largest difference in selection rate P(y_pred = 1 | group) between groups.

    ``y_true`` is not used (fairlearn's signature) but, when given, is checked like
    ``y_pred`` (binary, same length).

    Parameters
    ----------
    y_true : array-like of 0/1 or None
        True labels, 1 = favourable. Not used by this metric (fairlearn's signature), but
        checked like ``y_pred`` (binary, same length) when given.
    y_pred : array-like of 0/1
        Predicted labels, 1 = favourable (booleans are accepted).
    protected : array-like, Series, 2-D array or DataFrame
        The sensitive value of each row; with several columns every distinct combination of
        values is a group (intersectional groups).

    Returns
    -------
    float
        ``max - min`` of the groups' selection rates; 0 is parity.

    Raises
    ------
    TypeError
        If ``y_pred`` (or ``y_true``) is not an array of labels (e.g. a string or ``None``).
    ValueError
        If the labels are not binary 0/1, the lengths of ``y_true``, ``y_pred`` and
        ``protected`` differ, or ``protected`` has missing values.

    Examples
    --------
    >>> from fairlens.metrics import demographic_parity_difference
    >>> y_true = [1, 0, 1, 1, 0, 1, 0, 0]
    >>> y_pred = [1, 0, 1, 0, 1, 1, 1, 0]
    >>> group = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> demographic_parity_difference(y_true, y_pred, protected=group)  # 0.75 - 0.50
    0.25
    """
    _check_unused_true(y_true, y_pred)
    rates = group_rates(None, y_pred, protected=protected)
    hi, lo = _spread(rates["selection_rate"].to_numpy(), list(rates.index), "selection rate")
    return hi - lo


@_renamed
@validated({
    "y_true": "no_validation", "y_pred": "no_validation", "protected": "no_validation",
})
def disparate_impact_ratio(y_true, y_pred, *, protected) -> float:
    """Smallest over largest selection rate (1 = parity; the "80% rule" flags < 0.8).

    Returns ``nan`` when no group is ever selected (0/0). ``y_true`` is not used but,
    when given, is checked like ``y_pred``.

    Parameters
    ----------
    y_true : array-like of 0/1 or None
        True labels, 1 = favourable. Not used by this metric (fairlearn's signature), but
        checked like ``y_pred`` (binary, same length) when given.
    y_pred : array-like of 0/1
        Predicted labels, 1 = favourable (booleans are accepted).
    protected : array-like, Series, 2-D array or DataFrame
        The sensitive value of each row; with several columns every distinct combination of
        values is a group (intersectional groups).

    Returns
    -------
    float
        ``min / max`` of the groups' selection rates, in [0, 1]; ``nan`` if no group is
        ever selected.

    Raises
    ------
    TypeError
        If ``y_pred`` (or ``y_true``) is not an array of labels (e.g. a string or ``None``).
    ValueError
        If the labels are not binary 0/1, the lengths of ``y_true``, ``y_pred`` and
        ``protected`` differ, or ``protected`` has missing values.

    Examples
    --------
    >>> from fairlens.metrics import disparate_impact_ratio
    >>> y_true = [1, 0, 1, 1, 0, 1, 0, 0]
    >>> y_pred = [1, 0, 1, 0, 1, 1, 1, 0]
    >>> group = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> round(disparate_impact_ratio(y_true, y_pred, protected=group), 4)  # 0.50 / 0.75
    0.6667
    """
    _check_unused_true(y_true, y_pred)
    rates = group_rates(None, y_pred, protected=protected)
    hi, lo = _spread(rates["selection_rate"].to_numpy(), list(rates.index), "selection rate")
    return lo / hi if hi > 0 else float("nan")


@_renamed
@validated({
    "y_true": "no_validation", "y_pred": "no_validation", "protected": "no_validation",
})
def equal_opportunity_difference(y_true, y_pred, *, protected) -> float:
    """Largest difference in true positive rate P(y_pred = 1 | y = 1, group) between groups.

    A group without positive labels has no true positive rate; it is left out with a
    :class:`UserWarning`.

    Parameters
    ----------
    y_true : array-like of 0/1
        True labels, 1 = favourable (required).
    y_pred : array-like of 0/1
        Predicted labels, 1 = favourable (booleans are accepted).
    protected : array-like, Series, 2-D array or DataFrame
        The sensitive value of each row; with several columns every distinct combination of
        values is a group (intersectional groups).

    Returns
    -------
    float
        ``max - min`` of the groups' true positive rates; 0 is equal opportunity.

    Raises
    ------
    TypeError
        If ``y_pred`` (or ``y_true``) is not an array of labels (e.g. a string or ``None``).
    ValueError
        If the labels are not binary 0/1, ``y_true`` is ``None``, the lengths of
        ``y_true``, ``y_pred`` and ``protected`` differ, or ``protected`` has missing
        values.

    Examples
    --------
    >>> from fairlens.metrics import equal_opportunity_difference
    >>> y_true = [1, 0, 1, 1, 0, 1, 0, 0]
    >>> y_pred = [1, 0, 1, 0, 1, 1, 1, 0]
    >>> group = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> round(equal_opportunity_difference(y_true, y_pred, protected=group), 4)  # 1 - 2/3
    0.3333
    """
    if y_true is None:
        raise ValueError("y_true is required for equal_opportunity_difference (true labels, 0/1)")
    rates = group_rates(y_true, y_pred, protected=protected)
    hi, lo = _spread(rates["true_positive_rate"].to_numpy(), list(rates.index),
                     "true positive rate")
    return hi - lo


@_renamed
@validated({
    "y_true": "no_validation", "y_pred": "no_validation", "protected": "no_validation",
})
def equalized_odds_difference(y_true, y_pred, *, protected) -> float:
    """The larger of the true-positive-rate and false-positive-rate differences.

    A group without positive (negative) labels is left out of the true (false) positive
    rate comparison with a :class:`UserWarning`.

    Parameters
    ----------
    y_true : array-like of 0/1
        True labels, 1 = favourable (required).
    y_pred : array-like of 0/1
        Predicted labels, 1 = favourable (booleans are accepted).
    protected : array-like, Series, 2-D array or DataFrame
        The sensitive value of each row; with several columns every distinct combination of
        values is a group (intersectional groups).

    Returns
    -------
    float
        ``max(TPR_max - TPR_min, FPR_max - FPR_min)`` over groups; 0 is equalized odds.

    Raises
    ------
    TypeError
        If ``y_pred`` (or ``y_true``) is not an array of labels (e.g. a string or ``None``).
    ValueError
        If the labels are not binary 0/1, ``y_true`` is ``None``, the lengths of
        ``y_true``, ``y_pred`` and ``protected`` differ, or ``protected`` has missing
        values.

    Examples
    --------
    >>> from fairlens.metrics import equalized_odds_difference
    >>> y_true = [1, 0, 1, 1, 0, 1, 0, 0]
    >>> y_pred = [1, 0, 1, 0, 1, 1, 1, 0]
    >>> group = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> round(equalized_odds_difference(y_true, y_pred, protected=group), 4)  # FPR 2/3 - 0
    0.6667
    """
    if y_true is None:
        raise ValueError("y_true is required for equalized_odds_difference (true labels, 0/1)")
    rates = group_rates(y_true, y_pred, protected=protected)
    labels = list(rates.index)
    hi, lo = _spread(rates["true_positive_rate"].to_numpy(), labels, "true positive rate")
    hi2, lo2 = _spread(rates["false_positive_rate"].to_numpy(), labels, "false positive rate")
    return max(hi - lo, hi2 - lo2)


def _check_alpha(alpha):

    return check_real("alpha", alpha)


def _benefits(y_true, y_pred):
    return (y_pred - y_true + 1).astype(np.float64)


def _entropy(values, weights, mu, alpha):
    """Weighted generalised entropy of ``values`` around the mean ``mu``."""
    r = values / mu
    if alpha == 1:
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(r > 0, r * np.log(np.where(r > 0, r, 1.0)), 0.0)
    elif alpha == 0:
        if np.any(r == 0):
            return float("inf")
        terms = -np.log(r)
    else:
        terms = (r ** alpha - 1) / (alpha * (alpha - 1))
    return float(np.sum(weights * terms) / np.sum(weights))


@validated({
    "y_true": "no_validation", "y_pred": "no_validation", "alpha": [Interval(numbers.Real, None, None)],
})
def generalized_entropy_index(y_true, y_pred, *, alpha=2.0) -> float:
    """Individual-level generalised entropy of the benefits ``b_i = y_pred_i - y_true_i + 1``.

    Speicher et al. (2018), Eq. (2); ``alpha=1`` is the Theil index.

    Parameters
    ----------
    y_true : array-like of 0/1
        True labels, 1 = favourable.
    y_pred : array-like of 0/1
        Predicted labels, 1 = favourable.
    alpha : float, default 2.0
        Order of the index: 0 is the mean log deviation, 1 the Theil index, 2 half the
        squared coefficient of variation.

    Returns
    -------
    float
        ``(1/n) sum_i f_alpha(b_i / mu)`` with ``mu`` the mean benefit; 0 when every row
        receives the same benefit (also when ``mu`` is 0).

    Raises
    ------
    TypeError
        If ``alpha`` is not a real number, or a label array is not an array.
    ValueError
        If the labels are not binary 0/1 or ``y_true`` and ``y_pred`` differ in length.

    Examples
    --------
    >>> from fairlens.metrics import generalized_entropy_index
    >>> y_true = [1, 0, 1, 1, 0, 1, 0, 0]
    >>> y_pred = [1, 0, 1, 0, 1, 1, 1, 0]
    >>> round(generalized_entropy_index(y_true, y_pred), 4)  # benefits 1,1,1,0,2,1,2,1
    0.142
    >>> generalized_entropy_index(y_true, y_true)  # perfect predictions: equal benefits
    0.0
    """
    alpha = _check_alpha(alpha)
    yt, yp = _binary(y_true, "y_true"), _binary(y_pred, "y_pred")
    if yt.shape != yp.shape:
        raise ValueError(f"y_true and y_pred differ in length ({yt.size} vs {yp.size})")
    b = _benefits(yt, yp)
    mu = b.mean()
    if mu == 0:
        return 0.0
    return _entropy(b, np.ones_like(b), mu, alpha)


@_renamed
@validated({
    "y_true": "no_validation", "y_pred": "no_validation", "protected": "no_validation",
    "alpha": [Interval(numbers.Real, None, None)],
})
def theil_index(y_true, y_pred, *, protected, alpha=1.0) -> float:
    """Between-group Theil index (generalised entropy, Speicher et al. 2018).

    The individual benefit is ``b_i = y_pred_i - y_true_i + 1`` (2 for a false positive,
    0 for a false negative, 1 otherwise). The between-group component replaces every
    benefit by its group's mean ``mu_g`` and measures the inequality left:
    ``GE_beta(alpha) = (1/n) sum_g n_g f_alpha(mu_g / mu)`` with ``f_1(t) = t ln t``
    (the Theil index; other ``alpha`` give the generalised entropy family). It is 0 when all
    groups receive the same mean benefit and grows with the gap.

    Parameters
    ----------
    y_true : array-like of 0/1
        True labels, 1 = favourable (required).
    y_pred : array-like of 0/1
        Predicted labels, 1 = favourable (booleans are accepted).
    protected : array-like, Series, 2-D array or DataFrame
        The sensitive value of each row; with several columns every distinct combination of
        values is a group (intersectional groups).
    alpha : float, default 1.0
        Order of the generalised entropy; 1 is the Theil index.

    Returns
    -------
    float
        The between-group generalised entropy (>= 0).

    Raises
    ------
    TypeError
        If ``alpha`` is not a real number, or if ``y_pred`` (or ``y_true``) is not an
        array of labels (e.g. a string).
    ValueError
        If the labels are not binary 0/1, ``y_true`` is ``None``, the lengths of
        ``y_true``, ``y_pred`` and ``protected`` differ, or ``protected`` has missing
        values.

    Examples
    --------
    >>> import math
    >>> from fairlens.metrics import theil_index
    >>> y_true = [1, 0, 1, 1, 0, 1, 0, 0]
    >>> y_pred = [1, 0, 1, 0, 1, 1, 1, 0]
    >>> group = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> value = theil_index(y_true, y_pred, protected=group)
    >>> # group means of the benefits: a = 3/4, b = 3/2; overall mean 9/8
    >>> by_hand = (4 * (2/3) * math.log(2/3) + 4 * (4/3) * math.log(4/3)) / 8
    >>> math.isclose(value, by_hand)
    True
    """
    alpha = _check_alpha(alpha)
    yt, yp, ids, labels = _prepare(y_true, y_pred, protected, need_true=True)
    b = _benefits(yt, yp)
    mu = b.mean()
    if mu == 0:
        return 0.0
    k = len(labels)
    n_g = np.bincount(ids, minlength=k).astype(float)
    mu_g = np.bincount(ids, weights=b, minlength=k) / np.maximum(n_g, 1)
    present = n_g > 0
    return _entropy(mu_g[present], n_g[present], mu, alpha)


@_renamed
@validated({
    "y_true": "no_validation", "y_pred": "no_validation", "protected": "no_validation",
})
def fairness_report(y_true, y_pred, *, protected) -> pd.DataFrame:
    """All five metrics in one tidy table (``metric``, ``value``, ``ideal``).

    The metrics are :func:`demographic_parity_difference`,
    :func:`equal_opportunity_difference`, :func:`equalized_odds_difference`,
    :func:`disparate_impact_ratio` and :func:`theil_index`; the warnings about groups left
    out of a comparison are silenced here.

    Parameters
    ----------
    y_true : array-like of 0/1
        True labels, 1 = favourable (required).
    y_pred : array-like of 0/1
        Predicted labels, 1 = favourable (booleans are accepted).
    protected : array-like, Series, 2-D array or DataFrame
        The sensitive value of each row; with several columns every distinct combination of
        values is a group (intersectional groups).

    Returns
    -------
    DataFrame
        Five rows, columns ``metric`` (the function name), ``value`` and ``ideal`` (the
        value at parity: 0 for the differences and the Theil index, 1 for the ratio).

    Raises
    ------
    TypeError
        If ``y_pred`` (or ``y_true``) is not an array of labels (e.g. a string or ``None``).
    ValueError
        If the labels are not binary 0/1, ``y_true`` is ``None``, the lengths of
        ``y_true``, ``y_pred`` and ``protected`` differ, or ``protected`` has missing
        values.

    Examples
    --------
    >>> from fairlens.metrics import fairness_report
    >>> y_true = [1, 0, 1, 1, 0, 1, 0, 0]
    >>> y_pred = [1, 0, 1, 0, 1, 1, 1, 0]
    >>> group = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> fairness_report(y_true, y_pred, protected=group).round(3)
                              metric  value  ideal
    0  demographic_parity_difference  0.250    0.0
    1   equal_opportunity_difference  0.333    0.0
    2      equalized_odds_difference  0.667    0.0
    3         disparate_impact_ratio  0.667    1.0
    4                    theil_index  0.057    0.0
    """
    kw = {"protected": protected}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        rows = [
            ("demographic_parity_difference", demographic_parity_difference(y_true, y_pred, **kw), 0.0),
            ("equal_opportunity_difference", equal_opportunity_difference(y_true, y_pred, **kw), 0.0),
            ("equalized_odds_difference", equalized_odds_difference(y_true, y_pred, **kw), 0.0),
            ("disparate_impact_ratio", disparate_impact_ratio(y_true, y_pred, **kw), 1.0),
            ("theil_index", theil_index(y_true, y_pred, **kw), 0.0),
        ]
    return pd.DataFrame(rows, columns=["metric", "value", "ideal"])


# ---------------------------------------------------------------- AIF360's signed metrics
def _privileged_mask(protected, privileged, n):
    """Boolean mask of the privileged rows (AIF360's ``privileged_groups`` on one column)."""
    if protected is None:
        raise ValueError("protected is required (one value per row)")
    if isinstance(protected, pd.DataFrame):
        if protected.shape[1] != 1:
            raise ValueError(
                f"protected must be one column for the privileged/unprivileged metrics; "
                f"got {protected.shape[1]} columns. Combine them into one column first "
                "(e.g. df['sex'] + '/' + df['race'])."
            )
        protected = protected.iloc[:, 0]
    if isinstance(protected, (str, bytes)):
        raise TypeError(f"protected must be one value per row (list, array, Series); "
                        f"got the string {protected!r}")
    arr = protected.to_numpy() if isinstance(protected, pd.Series) else np.asarray(
        protected, dtype=object)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.reshape(-1)
    if arr.ndim != 1:
        raise ValueError(f"protected must be one-dimensional (one value per row); got "
                         f"shape {np.shape(protected)}")
    if arr.shape[0] != n:
        raise ValueError(
            f"protected has {arr.shape[0]} rows but y_true/y_pred have {n}; pass one "
            "sensitive value per prediction"
        )
    if pd.isna(pd.Series(arr, dtype=object)).any():
        raise ValueError("protected contains missing values; fill or drop them first")
    if privileged is None:
        raise ValueError("privileged is required: the sensitive value (or list of values) of the "
                         "privileged group, e.g. privileged='male' or privileged=1")
    values = list(privileged) if isinstance(privileged, (list, tuple, set, frozenset, np.ndarray)) \
        else [privileged]
    if not values:
        raise ValueError("privileged must be a value or a non-empty list of values of "
                         "protected")
    observed = pd.unique(pd.Series(arr, dtype=object))
    mask = np.zeros(n, dtype=bool)
    for v in values:
        hit = np.asarray(pd.Series(arr, dtype=object) == v, dtype=bool) if not isinstance(
            v, (list, tuple, dict)) else np.zeros(n, bool)
        if not hit.any():
            raise ValueError(
                f"privileged={privileged!r}: the value {v!r} does not occur in protected "
                f"(observed values: {list(observed)[:10]}); give a value of that column "
                "(mind its type: 1 vs '1')"
            )
        mask |= hit
    if mask.all():
        raise ValueError(
            f"privileged={privileged!r} covers every row of protected; there is no "
            "unprivileged group to compare with"
        )
    return mask


def _signed_prepare(y_true, y_pred, protected, privileged, need_true):
    if need_true and y_true is None:
        raise ValueError("y_true is required for this metric (true labels, 0/1)")
    yp = _binary(y_pred, "y_pred")
    yt = _binary(y_true, "y_true") if y_true is not None else None
    if yt is not None and yt.shape != yp.shape:
        raise ValueError(f"y_true and y_pred differ in length ({yt.size} vs {yp.size})")
    priv = _privileged_mask(protected, privileged, yp.size)
    return yt, yp, priv


def _div(num, den, what):
    """``num / den`` as AIF360 computes it (numpy float64): ``x/0`` is ``inf``, ``0/0`` ``nan``;
    a warning says which quantity was undefined."""
    num, den = np.float64(num), np.float64(den)
    if den == 0:
        warnings.warn(f"{what}: division by zero ({num:g}/0), the result is "
                      f"{'nan' if num == 0 else 'inf'} (as in AIF360)", RuntimeWarning, stacklevel=3)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.float64(num / den)


def _group_rate(hit, cond, what):
    return _div(np.sum(hit & cond, dtype=np.float64), np.sum(cond, dtype=np.float64), what)


@_renamed
@validated({
    "y_true": "no_validation", "y_pred": "no_validation", "protected": "no_validation",
    "privileged": "no_validation",
})
def statistical_parity_difference(y_true, y_pred, *, protected, privileged) -> float:
    """AIF360's statistical parity difference (demographic parity, signed).

    ``P(y_pred = 1 | unprivileged) - P(y_pred = 1 | privileged)``: 0 is parity, negative
    values mean the unprivileged group is selected less often. Equal to AIF360's
    ``ClassificationMetric.statistical_parity_difference()`` (and, with ``y_pred`` the
    labels, ``BinaryLabelDatasetMetric.statistical_parity_difference()``).

    Parameters
    ----------
    y_true : array-like of 0/1 or None
        True labels, 1 = favourable. Not used (fairlearn's signature); checked like
        ``y_pred`` when given.
    y_pred : array-like of 0/1
        Predicted labels, 1 = favourable.
    protected : array-like, Series or one-column DataFrame
        One sensitive value per row (numbers, strings, booleans).
    privileged : value or list of values
        The sensitive value(s) of the privileged group; every other row is unprivileged.

    Returns
    -------
    float
        Selection rate of the unprivileged rows minus that of the privileged rows.

    Raises
    ------
    TypeError
        If ``y_pred`` (or ``y_true``) is not an array of labels, or ``protected`` is a string.
    ValueError
        If the labels are not binary 0/1, the lengths differ, ``protected`` has several
        columns or missing values, or ``privileged`` is missing, does not occur in
        ``protected`` or covers every row.

    Examples
    --------
    >>> from fairlens.metrics import statistical_parity_difference
    >>> y_true = [1, 0, 1, 1, 0, 1, 0, 0]
    >>> y_pred = [1, 0, 1, 0, 1, 1, 1, 0]
    >>> group = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> statistical_parity_difference(y_true, y_pred, protected=group, privileged="a")
    0.25
    >>> statistical_parity_difference(y_true, y_pred, protected=group, privileged="b")
    -0.25
    """
    _, yp, priv = _signed_prepare(y_true, y_pred, protected, privileged, False)
    sel = yp == 1
    return float(_group_rate(sel, ~priv, "selection rate of the unprivileged group")
                 - _group_rate(sel, priv, "selection rate of the privileged group"))


@_renamed
@validated({
    "y_true": "no_validation", "y_pred": "no_validation", "protected": "no_validation",
    "privileged": "no_validation",
})
def disparate_impact(y_true, y_pred, *, protected, privileged) -> float:
    """AIF360's disparate impact: ``P(y_pred = 1 | unprivileged) / P(y_pred = 1 | privileged)``.

    1 is parity; below 1 the unprivileged group is selected less often (the "80% rule" flags
    values < 0.8). Equal to AIF360's ``ClassificationMetric.disparate_impact()``, including
    its division by zero: AIF360 divides two numpy floats, so when the privileged group is
    never selected the result is ``inf`` (unprivileged selected sometimes) or ``nan`` (neither
    group ever selected), with a :class:`RuntimeWarning`. (AIF360's scikit-learn-style
    ``aif360.sklearn.metrics.disparate_impact_ratio`` returns 0 instead, by its
    ``zero_division`` argument.) Unlike :func:`disparate_impact_ratio` (min/max over all
    groups, at most 1) this ratio is signed by direction and can exceed 1.

    Parameters
    ----------
    y_true : array-like of 0/1 or None
        True labels, 1 = favourable. Not used (fairlearn's signature); checked like
        ``y_pred`` when given.
    y_pred : array-like of 0/1
        Predicted labels, 1 = favourable.
    protected : array-like, Series or one-column DataFrame
        One sensitive value per row (numbers, strings, booleans).
    privileged : value or list of values
        The sensitive value(s) of the privileged group; every other row is unprivileged.

    Returns
    -------
    float
        Selection rate of the unprivileged rows over that of the privileged rows; ``inf``
        or ``nan`` when the privileged rows are never selected.

    Raises
    ------
    TypeError
        If ``y_pred`` (or ``y_true``) is not an array of labels, or ``protected`` is a string.
    ValueError
        If the labels are not binary 0/1, the lengths differ, ``protected`` has several
        columns or missing values, or ``privileged`` is missing, does not occur in
        ``protected`` or covers every row.

    Examples
    --------
    >>> from fairlens.metrics import disparate_impact
    >>> y_true = [1, 0, 1, 1, 0, 1, 0, 0]
    >>> y_pred = [1, 0, 1, 0, 1, 1, 1, 0]
    >>> group = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> disparate_impact(y_true, y_pred, protected=group, privileged="a")  # 0.75 / 0.50
    1.5
    """
    _, yp, priv = _signed_prepare(y_true, y_pred, protected, privileged, False)
    sel = yp == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # group sizes are > 0 (validated)
        un = _group_rate(sel, ~priv, "selection rate")
        pr = _group_rate(sel, priv, "selection rate")
    return float(_div(un, pr, "disparate_impact (privileged selection rate is 0)"))


@_renamed
@validated({
    "y_true": "no_validation", "y_pred": "no_validation", "protected": "no_validation",
    "privileged": "no_validation",
})
def true_positive_rate_difference(y_true, y_pred, *, protected, privileged) -> float:
    """AIF360's true positive rate difference (``equal_opportunity_difference``), signed.

    ``TPR(unprivileged) - TPR(privileged)`` with ``TPR = P(y_pred = 1 | y_true = 1)``. A group
    without positive labels has an undefined TPR: the result is ``nan`` with a
    :class:`RuntimeWarning`, as in AIF360. (This is AIF360's ``equal_opportunity_difference``;
    fairlens's :func:`equal_opportunity_difference` is fairlearn's unsigned max - min.)

    Parameters
    ----------
    y_true : array-like of 0/1
        True labels, 1 = favourable (required).
    y_pred : array-like of 0/1
        Predicted labels, 1 = favourable.
    protected : array-like, Series or one-column DataFrame
        One sensitive value per row (numbers, strings, booleans).
    privileged : value or list of values
        The sensitive value(s) of the privileged group; every other row is unprivileged.

    Returns
    -------
    float
        True positive rate of the unprivileged rows minus that of the privileged rows.

    Raises
    ------
    TypeError
        If ``y_pred`` (or ``y_true``) is not an array of labels, or ``protected`` is a string.
    ValueError
        If the labels are not binary 0/1, ``y_true`` is ``None``, the lengths differ,
        ``protected`` has several columns or missing values, or ``privileged`` is missing, does not occur in
        ``protected`` or covers every row.

    Examples
    --------
    >>> from fairlens.metrics import true_positive_rate_difference
    >>> y_true = [1, 0, 1, 1, 0, 1, 0, 0]
    >>> y_pred = [1, 0, 1, 0, 1, 1, 1, 0]
    >>> group = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> value = true_positive_rate_difference(y_true, y_pred, protected=group, privileged="a")
    >>> round(value, 4)  # 1 - 2/3
    0.3333
    """
    yt, yp, priv = _signed_prepare(y_true, y_pred, protected, privileged, True)
    pos, hit = yt == 1, (yp == 1) & (yt == 1)
    return float(_group_rate(hit, pos & ~priv, "true positive rate of the unprivileged group")
                 - _group_rate(hit, pos & priv, "true positive rate of the privileged group"))


@_renamed
@validated({
    "y_true": "no_validation", "y_pred": "no_validation", "protected": "no_validation",
    "privileged": "no_validation",
})
def average_odds_difference(y_true, y_pred, *, protected, privileged) -> float:
    """AIF360's average odds difference (equalized odds, signed).

    ``((FPR_u - FPR_p) + (TPR_u - TPR_p)) / 2`` (u = unprivileged, p = privileged); 0 means
    equal odds. Equal to AIF360's ``ClassificationMetric.average_odds_difference()``: a
    group without negative (positive) labels has an undefined FPR (TPR) and the result is
    ``nan`` with a :class:`RuntimeWarning`.

    Parameters
    ----------
    y_true : array-like of 0/1
        True labels, 1 = favourable (required).
    y_pred : array-like of 0/1
        Predicted labels, 1 = favourable.
    protected : array-like, Series or one-column DataFrame
        One sensitive value per row (numbers, strings, booleans).
    privileged : value or list of values
        The sensitive value(s) of the privileged group; every other row is unprivileged.

    Returns
    -------
    float
        The mean of the unprivileged-minus-privileged false and true positive rate
        differences.

    Raises
    ------
    TypeError
        If ``y_pred`` (or ``y_true``) is not an array of labels, or ``protected`` is a string.
    ValueError
        If the labels are not binary 0/1, ``y_true`` is ``None``, the lengths differ,
        ``protected`` has several columns or missing values, or ``privileged`` is missing, does not occur in
        ``protected`` or covers every row.

    Examples
    --------
    >>> from fairlens.metrics import average_odds_difference
    >>> y_true = [1, 0, 1, 1, 0, 1, 0, 0]
    >>> y_pred = [1, 0, 1, 0, 1, 1, 1, 0]
    >>> group = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> # FPR: 2/3 - 0, TPR: 1 - 2/3
    >>> average_odds_difference(y_true, y_pred, protected=group, privileged="a")
    0.5
    """
    yt, yp, priv = _signed_prepare(y_true, y_pred, protected, privileged, True)
    sel = yp == 1
    pos, neg = yt == 1, yt == 0
    fpr_d = (_group_rate(sel & neg, neg & ~priv, "false positive rate of the unprivileged group")
             - _group_rate(sel & neg, neg & priv, "false positive rate of the privileged group"))
    tpr_d = (_group_rate(sel & pos, pos & ~priv, "true positive rate of the unprivileged group")
             - _group_rate(sel & pos, pos & priv, "true positive rate of the privileged group"))
    return float(0.5 * (fpr_d + tpr_d))


@_renamed
@validated({
    "y_true": "no_validation", "y_pred": "no_validation", "protected": "no_validation",
    "privileged": "no_validation",
})
def aif360_report(y_true, y_pred, *, protected, privileged) -> pd.DataFrame:
    """The five metrics of the shuffling paper's Figure 3 (v), as AIF360 computes them.

    Rows: ``statistical_parity_difference`` (demographic parity),
    ``true_positive_rate_difference`` (equal opportunity), ``average_odds_difference``
    (equalized odds), ``disparate_impact`` and ``between_group_theil_index`` (the Theil index
    between the privileged and the unprivileged group, AIF360's
    ``between_group_theil_index``; :func:`theil_index` on the two groups). Columns
    ``metric``, ``value``, ``ideal``. Undefined values are ``nan`` (warnings silenced here).

    Parameters
    ----------
    y_true : array-like of 0/1
        True labels, 1 = favourable (required).
    y_pred : array-like of 0/1
        Predicted labels, 1 = favourable.
    protected : array-like, Series or one-column DataFrame
        One sensitive value per row (numbers, strings, booleans).
    privileged : value or list of values
        The sensitive value(s) of the privileged group; every other row is unprivileged.

    Returns
    -------
    DataFrame
        Five rows, columns ``metric``, ``value`` and ``ideal`` (0 for the differences and
        the Theil index, 1 for the disparate impact).

    Raises
    ------
    TypeError
        If ``y_pred`` (or ``y_true``) is not an array of labels, or ``protected`` is a string.
    ValueError
        If the labels are not binary 0/1, ``y_true`` is ``None``, the lengths differ,
        ``protected`` has several columns or missing values, or ``privileged`` is missing, does not occur in
        ``protected`` or covers every row.

    Examples
    --------
    >>> from fairlens.metrics import aif360_report
    >>> y_true = [1, 0, 1, 1, 0, 1, 0, 0]
    >>> y_pred = [1, 0, 1, 0, 1, 1, 1, 0]
    >>> group = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> aif360_report(y_true, y_pred, protected=group, privileged="a").round(3)
                              metric  value  ideal
    0  statistical_parity_difference  0.250    0.0
    1  true_positive_rate_difference  0.333    0.0
    2        average_odds_difference  0.500    0.0
    3               disparate_impact  1.500    1.0
    4      between_group_theil_index  0.057    0.0
    """
    kw = {"protected": protected, "privileged": privileged}
    yt, yp, priv = _signed_prepare(y_true, y_pred, protected, privileged, True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        rows = [
            ("statistical_parity_difference", statistical_parity_difference(yt, yp, **kw), 0.0),
            ("true_positive_rate_difference", true_positive_rate_difference(yt, yp, **kw), 0.0),
            ("average_odds_difference", average_odds_difference(yt, yp, **kw), 0.0),
            ("disparate_impact", disparate_impact(yt, yp, **kw), 1.0),
            ("between_group_theil_index", theil_index(yt, yp, protected=priv), 0.0),
        ]
    return pd.DataFrame(rows, columns=["metric", "value", "ideal"])


# ------------------------------------------------------------------ group metrics with intervals
from ._groupstats import (  # noqa: E402  (the implementation lives in its own module)
    GROUP_MEASURES,
    GROUP_RATES,
    MIN_GROUP_SIZE,
    GroupMetricsResult,
    group_metrics,
)
