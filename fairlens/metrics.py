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

import dataclasses
import numbers
import warnings

import numpy as np
import pandas as pd

from ._base import Interval, Result, to_jsonable

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
    "MIN_GROUP_SIZE",
    "MIN_OUTCOMES",
]



def _renamed(func):
    """Accept the pre-contract keyword ``sensitive_features`` (now ``protected``) for one
    release, with a :class:`FutureWarning` (:func:`fairlens._base.renamed_kwargs`)."""
    import functools

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from ._base import renamed_kwargs

        renamed_kwargs(func.__name__, kwargs, {"sensitive_features": "protected"})
        return func(*args, **kwargs)

    return wrapper


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
    from ._validation import check_real

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
#: A group with fewer rows than this is "too small to conclude anything": its rates are shown
#: (with their wide intervals) but it is left out of the between-group comparisons.
MIN_GROUP_SIZE = 30
#: A group's true (false) positive rate is compared only when the group has at least this many
#: rows with the favourable (unfavourable) true label.
MIN_OUTCOMES = 5
#: Bootstrap replicates per chunk: fixed, so that the intervals do not depend on ``n_jobs``.
BOOT_CHUNK = 50

#: The between-group measures of :func:`group_metrics`, with their readable names and ideal values.
GROUP_MEASURES = {
    "demographic_parity_difference": ("Demographic parity difference (max - min selection rate)", 0.0),
    "demographic_parity_ratio": ("Demographic parity ratio (min / max selection rate)", 1.0),
    "equal_opportunity_difference": ("Equal opportunity difference (max - min true positive rate)", 0.0),
    "equalized_odds_difference": ("Equalized odds difference (larger of the TPR and FPR gaps)", 0.0),
    "statistical_parity_difference": ("Statistical parity difference (unprivileged - privileged)", 0.0),
    "disparate_impact": ("Disparate impact (unprivileged / privileged selection rate)", 1.0),
    "average_odds_difference": ("Average odds difference (unprivileged - privileged)", 0.0),
    "true_positive_rate_difference": ("True positive rate difference (unprivileged - privileged)", 0.0),
}


def _protected_table(protected, n):
    """The protected columns as a DataFrame of ``n`` rows with string column names."""
    if protected is None or isinstance(protected, (str, bytes)):
        raise TypeError(
            "protected must be the protected values, one per row: a Series, a DataFrame (one column per "
            f"protected attribute), a dict of arrays or an array; got {protected!r}."
        )
    if isinstance(protected, pd.DataFrame):
        table = protected.reset_index(drop=True)
    elif isinstance(protected, pd.Series):
        table = protected.reset_index(drop=True).to_frame(name=protected.name if protected.name is not None
                                                        else "protected")
    elif isinstance(protected, dict):
        table = pd.DataFrame({k: np.asarray(v, dtype=object) if not isinstance(v, pd.Series)
                              else v.to_numpy() for k, v in protected.items()})
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
    table.columns = [str(c) for c in table.columns]
    if len(set(table.columns)) != table.shape[1]:
        raise ValueError(f"protected has duplicated column names {list(table.columns)}.")
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
        raise ValueError(f"y_true and y_pred differ in length ({n} vs {arr.size}).")
    if pd.isna(pd.Series(arr, dtype=object)).any():
        raise ValueError(f"{name} contains missing values; fill or drop them first.")
    values_seen = pd.unique(pd.Series(arr, dtype=object))
    if len(values_seen) > 2:
        raise ValueError(f"{name} must be binary (two outcomes); it has {len(values_seen)} values such as "
                         f"{[v for v in values_seen[:5]]}. Threshold scores or binarise the target first.")
    return np.asarray(pd.Series(arr, dtype=object) == favourable, dtype=np.int64), values_seen


def _attribute_sets(columns, intersections):
    import itertools

    out = [(c,) for c in columns]
    if intersections and len(columns) > 1:
        for k in range(2, len(columns) + 1):
            out.extend(itertools.combinations(columns, k))
    return out


def _group_label(attrs, key):
    if len(attrs) == 1:
        return str(key[0])
    return " & ".join(f"{a}={v}" for a, v in zip(attrs, key))


def _ratio(num, den):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def _nanspread(R, cols):
    """(max, min, argmax, argmin) over ``cols`` of each row of ``R`` (NaN where undefined)."""
    if len(cols) == 0:
        nan = np.full(R.shape[0], np.nan)
        return nan, nan
    sub = R[:, cols]
    ok = ~np.isnan(sub)
    hi = np.where(ok.any(1), np.max(np.where(ok, sub, -np.inf), axis=1), np.nan)
    lo = np.where(ok.any(1), np.min(np.where(ok, sub, np.inf), axis=1), np.nan)
    n_ok = ok.sum(1)
    hi = np.where(n_ok >= 2, hi, np.nan)
    lo = np.where(n_ok >= 2, lo, np.nan)
    return hi, lo


def _stats_from_counts(C, plan):
    """Every statistic of :func:`group_metrics` from cell counts ``C`` of shape (m, G, 2, 2)
    (finest group, true label, prediction); returns an (m, n_stats) array in ``plan`` order."""
    out = []
    for a in plan:
        Cg = np.einsum("mgtp,gh->mhtp", C, a["member"])  # (m, H, 2, 2)
        n = Cg.sum(axis=(2, 3))
        sel = _ratio(Cg[:, :, :, 1].sum(2), n)
        pos = Cg[:, :, 1, :].sum(2)
        neg = Cg[:, :, 0, :].sum(2)
        tpr = _ratio(Cg[:, :, 1, 1], pos)
        fpr = _ratio(Cg[:, :, 0, 1], neg)
        out.extend([sel, tpr, fpr])
        hi, lo = _nanspread(sel, a["eligible"])
        thi, tlo = _nanspread(tpr, a["eligible_pos"])
        fhi, flo = _nanspread(fpr, a["eligible_neg"])
        p = a["privileged"]
        if p is None:
            spd = di = aod = tprd = np.full(C.shape[0], np.nan)
        else:
            rest = np.ones(n.shape[1], bool)
            rest[p] = False
            n_u = n[:, rest].sum(1)
            sel_u = _ratio(Cg[:, rest][:, :, :, 1].sum((1, 2)), n_u)
            tpr_u = _ratio(Cg[:, rest][:, :, 1, 1].sum(1), pos[:, rest].sum(1))
            fpr_u = _ratio(Cg[:, rest][:, :, 0, 1].sum(1), neg[:, rest].sum(1))
            spd = sel_u - sel[:, p]
            with np.errstate(divide="ignore", invalid="ignore"):
                di = np.where(sel[:, p] > 0, sel_u / np.where(sel[:, p] > 0, sel[:, p], 1), np.nan)
            tprd = tpr_u - tpr[:, p]
            aod = 0.5 * ((fpr_u - fpr[:, p]) + tprd)
        with np.errstate(divide="ignore", invalid="ignore"):
            dpr = np.where(hi > 0, lo / np.where(hi > 0, hi, 1), np.nan)
        eod = thi - tlo
        eqo = np.fmax(eod, fhi - flo)
        eqo = np.where(np.isnan(eod) | np.isnan(fhi - flo), np.nan, eqo)
        measures = {"demographic_parity_difference": hi - lo, "demographic_parity_ratio": dpr,
                    "equal_opportunity_difference": eod, "equalized_odds_difference": eqo,
                    "statistical_parity_difference": spd, "disparate_impact": di,
                    "average_odds_difference": aod, "true_positive_rate_difference": tprd}
        out.extend(measures[k][:, None] for k in GROUP_MEASURES)
    return np.concatenate(out, axis=1)


def _boot_chunk(payload, chunk):
    """Bootstrap replicates ``[start, stop)`` of chunk ``k``: a row bootstrap is a multinomial
    draw of the cell counts (same distribution as resampling rows with replacement)."""
    from ._parallel import chunk_rng

    k, start, stop = chunk
    rng = chunk_rng(payload.seed, k)
    draws = rng.multinomial(payload.n, payload.p, size=stop - start).astype(np.float64)
    return _stats_from_counts(draws.reshape(stop - start, *payload.shape), payload.plan)



@dataclasses.dataclass
class GroupMetricsResult(Result):
    """Group fairness with bootstrap confidence intervals (returned by :func:`group_metrics`).

    Parameters
    ----------
    groups : DataFrame
        One row per group of every protected attribute and intersection: ``attribute``,
        ``group``, ``n`` (rows), ``share``, ``n_positive``/``n_negative`` (rows whose TRUE label is
        favourable / not), ``base_rate`` (share of favourable true labels), ``selection_rate``
        (predicted favourable), ``true_positive_rate``, ``false_positive_rate``, each of these three
        rates with ``_low``/``_high`` bootstrap bounds, ``small`` (True: too small to conclude
        anything, see :func:`group_metrics`) and ``note`` (why, or ``""``).
    measures : DataFrame
        One row per attribute and measure of :data:`GROUP_MEASURES`: ``attribute``, ``measure``,
        ``label`` (readable name), ``value``, ``ci_low``, ``ci_high``, ``ideal`` (the value of a fair
        model: 0 for differences, 1 for ratios), ``highest``/``lowest`` (the groups with the highest /
        lowest rate, for the differences), ``privileged`` (the reference group of the signed
        AIF360-style measures), ``n_groups`` (groups compared), ``n_boot`` (bootstrap replicates in
        which the measure was defined).
    confidence : float
        Level of the percentile intervals.
    n_boot : int
        Bootstrap replicates drawn (fewer than requested if the run was stopped).
    n_rows : int
        Rows compared (length of ``y_true``).
    params : dict
        The arguments of :func:`group_metrics` (``favourable``, ``protected``, ``privileged``,
        ``intersections``, ``confidence``, ``n_boot``, ``min_group_size``, ``min_outcomes``,
        ``n_jobs``).
    random_state : int or None
        The integer seed the bootstrap used (as every :class:`fairlens._base.Result`).
    elapsed : float
        Seconds taken.
    stopped : bool
        True when ``stop`` ended the bootstrap early (the intervals rest on ``n_boot`` replicates).

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
    >>> res = group_metrics(y_true, y_pred, protected={"sex": sex}, n_boot=100, random_state=0)
    >>> res.n_rows, res.n_boot, res.stopped
    (80, 100, False)
    >>> res.groups[["group", "n", "selection_rate"]]
        group   n  selection_rate
    0  female  40             0.4
    1    male  40             0.7
    >>> len(res.measures)  # the 8 measures of GROUP_MEASURES for one attribute
    8
    """

    groups: pd.DataFrame
    measures: pd.DataFrame
    confidence: float
    n_boot: int
    n_rows: int
    params: dict = dataclasses.field(default_factory=dict)
    random_state: int | None = None
    elapsed: float = float("nan")
    stopped: bool = False
    title = "Group fairness (bootstrap intervals)"

    def measure(self, name, attribute=None):
        """The row of ``measures`` for one measure, as a dict.

        Parameters
        ----------
        name : str
            A measure of :data:`GROUP_MEASURES`, e.g. ``"demographic_parity_difference"``.
        attribute : str, optional
            The protected attribute (or intersection, e.g. ``"sex & race"``) to read.  Default: the
            attribute where the measure is furthest from its ideal value (0 for differences, 1 for
            ratios); an attribute where it is undefined is chosen only if it is undefined everywhere.

        Returns
        -------
        dict
            The columns of ``measures`` (``attribute``, ``measure``, ``label``, ``value``,
            ``ci_low``, ``ci_high``, ``ideal``, ``highest``, ``lowest``, ``privileged``,
            ``n_groups``, ``n_boot``) for that row.

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
        >>> res = group_metrics(y_true, y_pred, protected={"sex": sex}, n_boot=100, random_state=0)
        >>> row = res.measure("demographic_parity_difference")
        >>> row["attribute"], row["highest"], row["lowest"], round(row["value"], 2)
        ('sex', 'male', 'female', 0.3)
        >>> bool(row["ci_low"] <= row["value"] <= row["ci_high"])
        True
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

    def summary(self):
        """One row: the largest demographic parity difference, where, and its interval.

        Returns
        -------
        DataFrame
            One row with ``n_rows``, ``n_attributes``, ``n_groups``, ``n_small_groups``,
            ``worst_attribute`` (where the demographic parity difference is largest),
            ``demographic_parity_difference``, ``ci_low``, ``ci_high``, ``confidence`` and ``n_boot``.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.metrics import group_metrics
        >>> sex = np.repeat(["female", "male"], 40)
        >>> y_true = np.tile([1, 0], 40)
        >>> y_pred = np.r_[np.repeat([1, 0], [16, 24]), np.repeat([1, 0], [28, 12])]
        >>> res = group_metrics(y_true, y_pred, protected={"sex": sex}, n_boot=100, random_state=0)
        >>> s = res.summary()
        >>> s.shape
        (1, 10)
        >>> s.loc[0, "worst_attribute"], round(float(s.loc[0, "demographic_parity_difference"]), 2)
        ('sex', 0.3)
        """
        worst = self.measure("demographic_parity_difference")
        return pd.DataFrame([{
            "n_rows": self.n_rows, "n_attributes": int(self.measures["attribute"].nunique()),
            "n_groups": int(len(self.groups)), "n_small_groups": int(self.groups["small"].sum()),
            "worst_attribute": worst["attribute"],
            "demographic_parity_difference": worst["value"], "ci_low": worst["ci_low"],
            "ci_high": worst["ci_high"], "confidence": self.confidence, "n_boot": self.n_boot,
        }])

    def to_frame(self):
        """The between-group measures (``measures``).

        Returns
        -------
        DataFrame
            A copy of ``measures``: one row per attribute and measure.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.metrics import group_metrics
        >>> sex = np.repeat(["female", "male"], 40)
        >>> y_true = np.tile([1, 0], 40)
        >>> y_pred = np.r_[np.repeat([1, 0], [16, 24]), np.repeat([1, 0], [28, 12])]
        >>> res = group_metrics(y_true, y_pred, protected={"sex": sex}, n_boot=100, random_state=0)
        >>> frame = res.to_frame()
        >>> frame.shape
        (8, 12)
        >>> frame[["measure", "value"]].head(2).round(3)
                                 measure  value
        0  demographic_parity_difference  0.300
        1       demographic_parity_ratio  0.571
        """
        return self.measures.copy()

    def to_dict(self):
        """JSON-safe dict: the base fields plus ``measures`` and ``groups`` as records.

        Returns
        -------
        dict
            ``type``, ``title``, ``summary``, ``params``, ``random_state``, ``elapsed``, ``stopped``
            (as every :class:`fairlens._base.Result`), plus ``measures`` and ``groups``: lists of
            records (NaN becomes ``None``), ready for ``json.dumps``.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.metrics import group_metrics
        >>> sex = np.repeat(["female", "male"], 40)
        >>> y_true = np.tile([1, 0], 40)
        >>> y_pred = np.r_[np.repeat([1, 0], [16, 24]), np.repeat([1, 0], [28, 12])]
        >>> res = group_metrics(y_true, y_pred, protected={"sex": sex}, n_boot=100, random_state=0)
        >>> d = res.to_dict()
        >>> sorted(d)
        ['elapsed', 'groups', 'measures', 'params', 'random_state', 'stopped', 'summary', 'title', 'type']
        >>> len(d["groups"]), d["groups"][0]["group"]
        (2, 'female')
        """
        d = super().to_dict()
        d["measures"] = to_jsonable(self.measures)
        d["groups"] = to_jsonable(self.groups)
        return d

    def plot(self, ax=None, attribute=None):
        """Selection rate of every group of ``attribute`` with its bootstrap interval.

        Groups flagged ``small`` (too small to conclude anything) are drawn with hollow markers.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure sized to the number of groups).
        attribute : str, optional
            The protected attribute (or intersection) whose groups are drawn, as in
            ``groups["attribute"]`` (default: the first).

        Returns
        -------
        matplotlib Axes
            The axes drawn on: one point per group (y tick ``"group (n=rows)"``), the selection rate on x.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.metrics import group_metrics
        >>> sex = np.repeat(["female", "male"], 40)
        >>> y_true = np.tile([1, 0], 40)
        >>> y_pred = np.r_[np.repeat([1, 0], [16, 24]), np.repeat([1, 0], [28, 12])]
        >>> res = group_metrics(y_true, y_pred, protected={"sex": sex}, n_boot=100, random_state=0)
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
        g = self.groups[self.groups["attribute"] == attribute]
        if ax is None:
            _, ax = plt.subplots(figsize=(10, max(3, 0.5 * len(g) + 1.5)))
        y = np.arange(len(g))
        err = np.vstack([g["selection_rate"] - g["selection_rate_low"],
                         g["selection_rate_high"] - g["selection_rate"]]).clip(min=0)
        err = np.nan_to_num(err)
        for i, (_, r) in enumerate(g.iterrows()):
            ax.errorbar(r["selection_rate"], i, xerr=err[:, i:i + 1], fmt="o", color="C0",
                        mfc="white" if r["small"] else "C0", capsize=4)
        ax.set_yticks(y, [f"{s} (n={n})" for s, n in zip(g["group"], g["n"])])
        ax.set_xlabel(f"selection rate ({100 * self.confidence:.0f}% bootstrap interval)")
        ax.set_title(f"Selection rate by {attribute}")
        return ax


_GROUP_METRICS_CONSTRAINTS = {
    "confidence": [Interval(numbers.Real, 0, 1, closed="neither")],
    "n_boot": [Interval(numbers.Integral, 0, None)],
    "min_group_size": [Interval(numbers.Integral, 1, None)],
    "min_outcomes": [Interval(numbers.Integral, 0, None)],
    "intersections": ["boolean"],
    "random_state": ["random_state"],
    "n_jobs": ["n_jobs"],
    "stop": ["stop"],
    "progress": ["progress"],
}


def _result_rows(plan, point, lo, hi, defined, *, n, min_group_size, min_outcomes):
    """The rows of ``GroupMetricsResult.groups`` and ``measures`` from the point estimates and
    interval bounds of :func:`group_metrics` (one entry of ``plan`` per attribute set; the statistics
    are laid out per entry as selection, true and false positive rates per group, then the measures)."""
    group_rows, measure_rows = [], []
    pos_ = 0
    for a in plan:
        H = len(a["keys"])
        sel, tpr, fpr = (slice(pos_ + j * H, pos_ + (j + 1) * H) for j in range(3))
        for h, key in enumerate(a["keys"]):
            size, npos, nneg = int(a["size"][h]), int(a["pos"][h]), int(a["neg"][h])
            notes = []
            if size < min_group_size:
                notes.append(f"only {size} rows (< {min_group_size})")
            if npos < min_outcomes:
                notes.append(f"only {npos} favourable true labels (< {min_outcomes})")
            if nneg < min_outcomes:
                notes.append(f"only {nneg} unfavourable true labels (< {min_outcomes})")
            row = {"attribute": a["name"], "group": _group_label(a["attrs"], key), "n": size,
                   "share": size / n, "n_positive": npos, "n_negative": nneg,
                   "base_rate": npos / size if size else np.nan}
            for nm, sl in (("selection_rate", sel), ("true_positive_rate", tpr), ("false_positive_rate", fpr)):
                i = sl.start + h
                row[nm], row[nm + "_low"], row[nm + "_high"] = point[i], lo[i], hi[i]
            row["small"] = bool(notes)
            row["note"] = "; ".join(notes)
            group_rows.append(row)
        pos_ += 3 * H
        sel_pt = point[sel]
        el = a["eligible"]
        hi_g = lo_g = None
        if len(el) >= 2:
            hi_g = _group_label(a["attrs"], a["keys"][el[np.nanargmax(sel_pt[el])]])
            lo_g = _group_label(a["attrs"], a["keys"][el[np.nanargmin(sel_pt[el])]])
        priv = None if a["privileged"] is None else _group_label(a["attrs"], a["keys"][a["privileged"]])
        for j, m in enumerate(GROUP_MEASURES):
            i = pos_ + j
            signed = m in ("statistical_parity_difference", "disparate_impact", "average_odds_difference",
                           "true_positive_rate_difference")
            n_cmp = len(el) if m.startswith("demographic") else (
                len(a["eligible_pos"]) if m == "equal_opportunity_difference" else
                min(len(a["eligible_pos"]), len(a["eligible_neg"])) if m == "equalized_odds_difference" else
                (H if priv is not None else 0))
            measure_rows.append({
                "attribute": a["name"], "measure": m, "label": GROUP_MEASURES[m][0], "value": point[i],
                "ci_low": lo[i], "ci_high": hi[i], "ideal": GROUP_MEASURES[m][1],
                "highest": None if signed else hi_g, "lowest": None if signed else lo_g,
                "privileged": priv if signed else None, "n_groups": int(n_cmp), "n_boot": int(defined[i])})
        pos_ += len(GROUP_MEASURES)
    return group_rows, measure_rows


def group_metrics(y_true, y_pred, *, protected, favourable=1, privileged=None, intersections=True,
                  confidence=0.95, n_boot=1000, min_group_size=MIN_GROUP_SIZE, min_outcomes=MIN_OUTCOMES,
                  random_state=None, n_jobs=None, stop=None, progress=None):
    """Group fairness per protected attribute and their intersections, with bootstrap intervals.

    For every protected attribute (and, with ``intersections``, every combination of two or more
    of them) the rows are split into groups, and fairlearn-style and AIF360-style measures are
    computed with percentile bootstrap confidence intervals.

    Parameters
    ----------
    y_true : array-like of labels
        True labels (two values at most).
    y_pred : array-like of labels
        Predicted labels (two values at most), e.g. ``model.predict(X)``.
    protected : Series, DataFrame, dict of arrays or array
        Protected values, one per row; each column is a protected attribute.
    favourable : label, default 1
        The favourable outcome in ``y_true`` and ``y_pred`` (must occur in one of them).
    privileged : dict, optional
        ``{attribute: group}``, the reference group of the signed AIF360-style measures
        (``statistical_parity_difference``, ``disparate_impact``, ``average_odds_difference``,
        ``true_positive_rate_difference``: unprivileged = every other row, AIF360's convention).
        Default: the group with the highest selection rate among the groups large enough to compare,
        so the signed measures compare everybody else with the most-favoured group.
    intersections : bool, default True
        Also compare the groups of every combination of two or more protected attributes.
    confidence : float in (0, 1), default 0.95
        Level of the percentile intervals.
    n_boot : int >= 0, default 1000
        Bootstrap replicates (0: no intervals).  Replicates are drawn in fixed chunks of
        :data:`BOOT_CHUNK` on the counter-based streams ``fairlens._parallel.chunk_rng(seed, k)``,
        so the same ``random_state`` gives the same intervals at every ``n_jobs``.
    min_group_size : int >= 1, default 30 (:data:`MIN_GROUP_SIZE`)
        Groups with fewer rows are flagged ``small`` ("too small to conclude anything") and left out
        of the between-group differences and ratios (their own rates and intervals are still shown).
    min_outcomes : int >= 0, default 5 (:data:`MIN_OUTCOMES`)
        A group's true (false) positive rate enters the comparisons only if the group has at least
        this many favourable (unfavourable) true labels; a group below it in either is flagged too.
    random_state : None, int, Generator or RandomState
        Seeds the bootstrap (:func:`fairlens._base.resolve_random_state`); recorded in the result.
    n_jobs : int or None
        Workers for the bootstrap chunks (scikit-learn's convention).
    stop : None, threading.Event or callable
        Checked between bootstrap chunks; a stopped run keeps the replicates drawn so far
        (``result.stopped``; the intervals are then based on fewer replicates).
    progress : None, bool or callable
        ``True``: a ``tqdm.auto`` bar; a callable ``progress(done, total)`` over chunks.

    Returns
    -------
    GroupMetricsResult

    Raises
    ------
    TypeError, ValueError
        For a non-binary ``y_true``/``y_pred``, a ``favourable`` value that occurs in neither,
        mismatched lengths, missing values, an unknown ``privileged`` attribute or group, or a
        parameter out of range (the message names the argument).

    Notes
    -----
    The bootstrap resamples rows with replacement (as fairlearn's ``MetricFrame(n_boot=...)``).
    Every statistic depends only on the counts of rows per (finest group, true label, prediction)
    cell, and resampling ``n`` rows with replacement draws those counts from a multinomial
    distribution with the observed cell frequencies, so each replicate is one multinomial draw:
    the same distribution as the row-by-row loop, at a fraction of the cost.  A group may be absent
    from a replicate; a statistic undefined in a replicate is skipped (``n_boot`` in ``measures``
    counts the replicates in which it was defined).

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.metrics import group_metrics
    >>> rng = np.random.default_rng(0)
    >>> sex = rng.choice(["female", "male"], size=400)
    >>> y = rng.integers(0, 2, size=400)
    >>> pred = (rng.random(400) < np.where(sex == "male", 0.5, 0.3)).astype(int)
    >>> res = group_metrics(y, pred, protected={"sex": sex}, n_boot=200, random_state=0)
    >>> row = res.measure("demographic_parity_difference")
    >>> bool(row["ci_low"] <= row["value"] <= row["ci_high"])
    True
    """
    import time

    from ._base import check_progress, resolve_random_state, validate_params
    from ._parallel import Payload, check_n_jobs, run_chunks
    from ._validation import check_stop

    validate_params(
        dict(confidence=confidence, n_boot=n_boot, min_group_size=min_group_size, min_outcomes=min_outcomes,
             intersections=intersections, random_state=random_state, n_jobs=n_jobs, stop=stop,
             progress=progress),
        _GROUP_METRICS_CONSTRAINTS, caller="group_metrics")
    t0 = time.perf_counter()
    yt, seen_t = _labels_to_binary(y_true, favourable, "y_true")
    yp, seen_p = _labels_to_binary(y_pred, favourable, "y_pred", n=yt.size)
    if not yt.any() and not yp.any():
        raise ValueError(f"favourable={favourable!r} occurs neither in y_true (values {list(seen_t)}) nor in "
                         f"y_pred (values {list(seen_p)}); pass the label of the favourable outcome "
                         "(mind its type: 1 vs '1').")
    table = _protected_table(protected, yt.size)
    columns = list(table.columns)
    if privileged is not None and not isinstance(privileged, dict):
        raise TypeError(f"privileged must be None or a dict {{attribute: group}}; got {privileged!r}.")
    privileged = dict(privileged or {})
    unknown = [k for k in privileged if k not in columns]
    if unknown:
        raise ValueError(f"privileged names attributes {unknown} that are not protected columns {columns}.")
    stop_fn = check_stop(stop)
    report = check_progress(progress, desc="group metrics bootstrap")
    n_jobs = check_n_jobs(n_jobs)
    seed = resolve_random_state(random_state)

    # finest groups: every combination of protected values that occurs
    keys = list(table.itertuples(index=False, name=None))
    finest = sorted(set(keys), key=lambda k: tuple(map(str, k)))
    fid = {k: i for i, k in enumerate(finest)}
    gi = np.fromiter((fid[k] for k in keys), dtype=np.int64, count=len(keys))
    G = len(finest)
    cells = np.bincount(gi * 4 + yt * 2 + yp, minlength=4 * G).astype(np.float64)
    n = yt.size

    plan = []
    attr_sets = _attribute_sets(columns, _check_bool("intersections", intersections))
    observed = cells.reshape(1, G, 2, 2)
    for attrs in attr_sets:
        idx = [columns.index(a) for a in attrs]
        sub = sorted({tuple(k[i] for i in idx) for k in finest}, key=lambda k: tuple(map(str, k)))
        sid = {k: h for h, k in enumerate(sub)}
        member = np.zeros((G, len(sub)))
        for g, k in enumerate(finest):
            member[g, sid[tuple(k[i] for i in idx)]] = 1.0
        Cg = np.einsum("mgtp,gh->mhtp", observed, member)[0]
        size, pos, neg = Cg.sum((1, 2)), Cg[:, 1, :].sum(1), Cg[:, 0, :].sum(1)
        big = size >= min_group_size
        entry = {"attrs": attrs, "name": " & ".join(attrs), "keys": sub, "member": member,
                 "size": size, "pos": pos, "neg": neg,
                 "eligible": np.flatnonzero(big),
                 "eligible_pos": np.flatnonzero(big & (pos >= min_outcomes)),
                 "eligible_neg": np.flatnonzero(big & (neg >= min_outcomes)),
                 "privileged": None}
        sel = _ratio(Cg[:, :, 1].sum(1), size)
        if len(attrs) == 1 and attrs[0] in privileged:
            want = privileged[attrs[0]]
            hits = [h for h, k in enumerate(sub) if k[0] == want or str(k[0]) == str(want)]
            if not hits:
                raise ValueError(f"privileged[{attrs[0]!r}]={want!r} is not a group of {attrs[0]!r}; groups: "
                                 f"{[k[0] for k in sub]}.")
            entry["privileged"] = hits[0]
        elif len(entry["eligible"]) >= 2:
            el = entry["eligible"]
            entry["privileged"] = int(el[np.argmax(sel[el])])
        plan.append(entry)

    point = _stats_from_counts(observed, plan)[0]
    n_boot = int(n_boot)
    boots = np.empty((0, point.size))
    if n_boot > 0:
        chunks = [(k, s, min(s + BOOT_CHUNK, n_boot)) for k, s in enumerate(range(0, n_boot, BOOT_CHUNK))]
        payload = Payload(seed=seed, n=n, p=cells / n, shape=(G, 2, 2), plan=plan)
        parts = run_chunks(_boot_chunk, payload, chunks, n_jobs=n_jobs, stop=stop_fn, progress=report)
        if parts:
            boots = np.concatenate(parts, axis=0)
    stopped = boots.shape[0] < n_boot
    alpha = (1.0 - float(confidence)) / 2.0
    defined = (~np.isnan(boots)).sum(0) if boots.size else np.zeros(point.size, int)
    lo = np.full(point.size, np.nan)
    hi = np.full(point.size, np.nan)
    ok = defined >= 2
    if ok.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            lo[ok] = np.nanquantile(boots[:, ok], alpha, axis=0)
            hi[ok] = np.nanquantile(boots[:, ok], 1 - alpha, axis=0)

    group_rows, measure_rows = _result_rows(plan, point, lo, hi, defined, n=n,
                                            min_group_size=min_group_size, min_outcomes=min_outcomes)
    params = dict(favourable=favourable, protected=columns, privileged=privileged or None,
                  intersections=bool(intersections), confidence=float(confidence), n_boot=n_boot,
                  min_group_size=int(min_group_size), min_outcomes=int(min_outcomes), n_jobs=n_jobs)
    if report is not None and hasattr(report, "close"):
        report.close()
    return GroupMetricsResult(groups=pd.DataFrame(group_rows), measures=pd.DataFrame(measure_rows),
                              confidence=float(confidence), n_boot=int(boots.shape[0]), n_rows=int(n),
                              params=params, random_state=seed, elapsed=time.perf_counter() - t0,
                              stopped=bool(stopped))


def _check_bool(name, value):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {value!r}.")
    return bool(value)
