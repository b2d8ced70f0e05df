"""Confidence intervals and tests for proportions and their contrasts (the statistics of verdicts).

Every interval and every verdict of :func:`fairlens.metrics.group_metrics` and :func:`fairlens.audit`
is built from the few constructions of this module, all from the statistics literature and all
vectorised (one call for every group, pair and level):

* :func:`wilson` -- the Wilson score interval for one binomial proportion (Wilson 1927), recommended
  for small and moderate samples by Brown, Cai & DasGupta (2001) and Agresti & Coull (1998).
* :func:`mover` -- the *method of variance estimates recovery* (MOVER) interval for a linear
  combination ``sum_k w_k p_k`` of independent proportions, each with its Wilson limits
  (Zou & Donner 2008; for a difference of two proportions it is Newcombe's hybrid score interval,
  method 10 of Newcombe 1998).
* :func:`mover_ratio` -- MOVER-R for the ratio of two independent proportions with Wilson limits
  (Donner & Zou 2012; recommended by Fagerland, Lydersen & Laake 2015).  A ratio is compared with a
  threshold ``c`` through the contrast ``p1 - c p2`` (the construction MOVER-R inverts).
* :func:`pvalue` -- the one-sided p-value of ``H0: theta <= c`` (or ``>= c``) obtained by inverting
  the MOVER limits over their level (the confidence-distribution p-value: the largest one-sided
  level at which the bound still reaches ``c``), so that a test and the interval shown beside it
  never disagree.
* :func:`holm` -- Holm's (1979) step-down adjustment, which controls the family-wise error rate.
* :func:`auc_interval` -- the area under the ROC curve with DeLong et al.'s (1988) variance, on the
  logit scale (Pepe 2003, section 5.2).

References
----------
Agresti, A. & Coull, B. A. (1998). Approximate is better than "exact" for interval estimation of
binomial proportions. *The American Statistician* 52(2), 119-126.
Brown, L. D., Cai, T. T. & DasGupta, A. (2001). Interval estimation for a binomial proportion.
*Statistical Science* 16(2), 101-133.
DeLong, E. R., DeLong, D. M. & Clarke-Pearson, D. L. (1988). Comparing the areas under two or more
correlated receiver operating characteristic curves. *Biometrics* 44(3), 837-845.
Donner, A. & Zou, G. Y. (2012). Closed-form confidence intervals for functions of the normal mean
and standard deviation. *Statistical Methods in Medical Research* 21(4), 347-359.
Fagerland, M. W., Lydersen, S. & Laake, P. (2015). Recommended confidence intervals for two
independent binomial proportions. *Statistical Methods in Medical Research* 24(2), 224-254.
Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
Statistics* 6(2), 65-70.
Newcombe, R. G. (1998). Interval estimation for the difference between independent proportions:
comparison of eleven methods. *Statistics in Medicine* 17(8), 873-890.
Pepe, M. S. (2003). *The Statistical Evaluation of Medical Tests for Classification and Prediction.*
Oxford University Press.
Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference.
*Journal of the American Statistical Association* 22(158), 209-212.
Zou, G. Y. & Donner, A. (2008). Construction of confidence limits about effect measures: a general
approach. *Statistics in Medicine* 27(10), 1693-1702.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["z_of", "wilson", "mover", "mover_ratio", "pvalue", "holm", "auc_interval", "mean_interval"]

#: Largest z the p-value inversion searches (1 - Phi(38) underflows to 0 in float64).
_Z_MAX = 38.0
#: Bisection steps of the inversion: the bracket [0, 38] shrinks to 38 / 2**44 (2e-12 in z).
_STEPS = 44


def _ndtr(z):
    from scipy.special import ndtr

    return ndtr(z)


def z_of(level_one_sided):
    """The standard normal quantile ``Phi^{-1}(level)`` (``level`` = one-sided coverage).

    Parameters
    ----------
    level_one_sided : float or array
        One-sided coverage in (0, 1), e.g. 0.975 for a two-sided 95% interval.

    Returns
    -------
    float or ndarray
    """
    from scipy.special import ndtri

    return ndtri(level_one_sided)


def wilson(x, n, z):
    """Wilson score limits of the proportion ``x / n`` at normal quantile ``z`` (Wilson 1927).

    Parameters
    ----------
    x, n : array-like
        Successes and trials (broadcast together); ``n == 0`` gives NaN limits.
    z : float or array-like
        The normal quantile (1.96 for a two-sided 95% interval; broadcast with ``x``).

    Returns
    -------
    (lower, upper) : ndarrays
        The limits, within [0, 1].

    Examples
    --------
    >>> from fairlens._stats import wilson
    >>> lo, hi = wilson(4, 20, 1.959963984540054)
    >>> round(float(lo), 4), round(float(hi), 4)
    (0.0807, 0.416)
    """
    x = np.asarray(x, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        z2 = z * z
        denom = n + z2
        center = (x + z2 / 2.0) / denom
        half = z * np.sqrt(np.maximum(x * (n - x) / n, 0.0) + z2 / 4.0) / denom
        lo = np.where(n > 0, np.clip(center - half, 0.0, 1.0), np.nan)
        hi = np.where(n > 0, np.clip(center + half, 0.0, 1.0), np.nan)
    # exact ends: x = 0 has lower limit 0 and x = n upper limit 1 (rounding otherwise leaves 1e-17)
    lo = np.where(x <= 0, 0.0, lo)
    hi = np.where(x >= n, 1.0, hi)
    return np.where(n > 0, lo, np.nan), np.where(n > 0, hi, np.nan)


def _check_terms(x, n, w):
    if not (len(x) == len(n) == len(w)) or not len(x):
        raise ValueError("mover: x, n and w must have one entry per proportion")
    x = [np.asarray(a, dtype=np.float64) for a in x]
    n = [np.asarray(a, dtype=np.float64) for a in n]
    w = [np.asarray(a, dtype=np.float64) for a in w]
    return x, n, w


def mover(x, n, w, z):
    """MOVER limits of ``theta = sum_k w_k x_k / n_k`` for independent proportions (Zou & Donner 2008).

    Each proportion contributes its Wilson limits at the same ``z``; for ``w = (1, -1)`` this is
    Newcombe's (1998) hybrid score interval for a difference of proportions (his method 10).

    Parameters
    ----------
    x, n : sequence of array-like
        Successes and trials of each proportion (arrays broadcast together).
    w : sequence of float or array-like
        The weights of the linear combination (broadcast with the counts).
    z : float or array-like
        Normal quantile of each limit (each limit is one-sided at level ``Phi(z)``).

    Returns
    -------
    (estimate, lower, upper) : ndarrays
        NaN where some proportion has ``n == 0``.

    Examples
    --------
    >>> from fairlens._stats import mover
    >>> est, lo, hi = mover([56, 48], [70, 80], [1, -1], 1.959963984540054)  # Newcombe (1998), ex. (a)
    >>> round(float(est), 4), round(float(lo), 4), round(float(hi), 4)
    (0.2, 0.0524, 0.3339)
    """
    x, n, w = _check_terms(x, n, w)
    est = lo_sq = hi_sq = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        for xk, nk, wk in zip(x, n, w):
            p = np.where(nk > 0, xk / np.where(nk > 0, nk, 1.0), np.nan)
            lk, uk = wilson(xk, nk, z)
            est = est + wk * p
            down = np.where(wk >= 0, p - lk, p - uk)   # how far the term can move down / up
            up = np.where(wk >= 0, uk - p, lk - p)
            lo_sq = lo_sq + (wk * down) ** 2
            hi_sq = hi_sq + (wk * up) ** 2
    est = np.asarray(est, dtype=np.float64)
    return est, est - np.sqrt(lo_sq), est + np.sqrt(hi_sq)


def mover_ratio(x1, n1, x2, n2, z):
    """MOVER-R limits of the ratio ``(x1/n1) / (x2/n2)`` with Wilson limits (Donner & Zou 2012).

    Parameters
    ----------
    x1, n1, x2, n2 : array-like
        Successes and trials of the numerator and denominator proportions.
    z : float or array-like
        Normal quantile of each limit.

    Returns
    -------
    (estimate, lower, upper) : ndarrays
        The upper limit is ``inf`` when the denominator's lower Wilson limit is 0 (no favourable
        outcome in the denominator group); everything is NaN when the estimate is undefined.

    Examples
    --------
    >>> from fairlens._stats import mover_ratio
    >>> est, lo, hi = mover_ratio(30, 100, 45, 100, 1.959963984540054)
    >>> round(float(est), 3), round(float(lo), 3), round(float(hi), 3)
    (0.667, 0.461, 0.959)
    """
    x1, n1, x2, n2 = (np.asarray(a, dtype=np.float64) for a in (x1, n1, x2, n2))
    with np.errstate(divide="ignore", invalid="ignore"):
        p1 = np.where(n1 > 0, x1 / np.where(n1 > 0, n1, 1.0), np.nan)
        p2 = np.where(n2 > 0, x2 / np.where(n2 > 0, n2, 1.0), np.nan)
        l1, u1 = wilson(x1, n1, z)
        l2, u2 = wilson(x2, n2, z)
        est = np.where(p2 > 0, p1 / np.where(p2 > 0, p2, 1.0), np.nan)
        a = p1 * p2
        # lower limit: solve the MOVER contrast p1 - theta p2 = 0 at its lower end (Donner & Zou 2012)
        disc_lo = a * a - l1 * u2 * (2 * p1 - l1) * (2 * p2 - u2)
        den_lo = u2 * (2 * p2 - u2)
        lo = np.where(den_lo > 0, (a - np.sqrt(np.maximum(disc_lo, 0.0))) / np.where(den_lo > 0, den_lo, 1.0), 0.0)
        disc_hi = a * a - u1 * l2 * (2 * p1 - u1) * (2 * p2 - l2)
        den_hi = l2 * (2 * p2 - l2)
        hi = np.where(den_hi > 0, (a + np.sqrt(np.maximum(disc_hi, 0.0))) / np.where(den_hi > 0, den_hi, 1.0),
                      np.inf)
    lo = np.where(np.isnan(est), np.nan, np.maximum(lo, 0.0))
    hi = np.where(np.isnan(est), np.nan, hi)
    return est, lo, hi


def pvalue(x, n, w, c, alternative):
    """One-sided p-value for ``theta = sum_k w_k x_k / n_k`` against the value ``c``, inverting :func:`mover`.

    ``alternative="greater"`` tests ``H0: theta <= c`` (small p: the data show ``theta > c``);
    ``"less"`` tests ``H0: theta >= c``.  The p-value is ``1 - Phi(z*)`` where ``z*`` is the
    quantile at which the MOVER bound on the side of ``c`` equals ``c`` (found by bisection), so the
    test rejects at level ``a`` exactly when the one-sided ``1 - a`` MOVER bound excludes ``c``; for
    a single contrast it agrees with the two-sided ``1 - 2a`` interval.

    Parameters
    ----------
    x, n : sequence of array-like
        Successes and trials of each proportion (broadcast together).
    w : sequence of float or array-like
        Weights of the linear combination.
    c : float or array-like
        The value under test (broadcast with the counts).
    alternative : {"greater", "less"} or array-like of +1 / -1
        The side of ``c`` the data must show ``theta`` to be on (+1: greater, -1: less; an array tests
        several sides in one call, broadcast with the counts).

    Returns
    -------
    ndarray
        p-values in [0, 1]; NaN where ``theta`` is undefined (some ``n == 0``).

    Examples
    --------
    >>> from fairlens._stats import pvalue
    >>> p = pvalue([56, 48], [70, 80], [1, -1], 0.0, "greater")   # is p1 - p2 > 0?
    >>> bool(0.001 < float(p) < 0.025)   # the two-sided 95% Newcombe interval excludes 0
    True
    """
    if isinstance(alternative, str):
        if alternative not in ("greater", "less"):
            raise ValueError(f"alternative must be 'greater' or 'less'; got {alternative!r}")
        alternative = 1.0 if alternative == "greater" else -1.0
    x, n, w = _check_terms(x, n, w)
    est, _, _ = mover(x, n, w, 0.0)
    sign = np.asarray(alternative, dtype=np.float64)
    shape = np.broadcast_shapes(est.shape, np.shape(c), sign.shape)
    est = np.broadcast_to(est, shape)
    c = np.broadcast_to(np.asarray(c, dtype=np.float64), shape)
    sign = np.broadcast_to(sign, shape)
    x = [np.broadcast_to(a, shape) for a in x]
    n = [np.broadcast_to(a, shape) for a in n]
    w = [np.broadcast_to(a, shape) for a in w]
    fwd = sign * (est - c) > 0     # the estimate is on the alternative's side of c
    lo_z = np.zeros(shape)
    hi_z = np.full(shape, _Z_MAX)
    for _ in range(_STEPS):
        mid = 0.5 * (lo_z + hi_z)
        _, lo, hi = mover(x, n, w, mid)
        near = np.where(sign > 0, lo, hi)   # the bound on c's side
        far = np.where(sign > 0, hi, lo)
        # forward: the bound on c's side still excludes c; backward: the far bound has not reached c
        up = np.where(fwd, sign * (near - c) > 0, sign * (c - far) > 0)
        lo_z = np.where(up, mid, lo_z)
        hi_z = np.where(up, hi_z, mid)
    zstar = 0.5 * (lo_z + hi_z)
    p = np.where(fwd, 1.0 - _ndtr(zstar), _ndtr(zstar))
    p = np.where(est == c, 0.5, p)
    return np.where(np.isnan(est), np.nan, np.clip(p, 0.0, 1.0))


def holm(p):
    """Holm's (1979) step-down adjusted p-values (family-wise error control).

    Reject ``H_i`` at family-wise level ``a`` when its adjusted p-value is ``<= a``.  NaN p-values
    (hypotheses that could not be tested) count in the family as p = 1.

    Parameters
    ----------
    p : array-like
        Unadjusted p-values.

    Returns
    -------
    ndarray
        Adjusted p-values, in the input order.

    Examples
    --------
    >>> from fairlens._stats import holm
    >>> holm([0.01, 0.04, 0.03, 0.005]).round(3).tolist()
    [0.03, 0.06, 0.06, 0.02]
    """
    p = np.asarray(p, dtype=np.float64).ravel()
    m = p.size
    if m == 0:
        return p.copy()
    q = np.where(np.isnan(p), 1.0, p)
    order = np.argsort(q, kind="stable")
    adj = np.minimum(1.0, (m - np.arange(m)) * q[order])
    adj = np.maximum.accumulate(adj)
    out = np.empty(m)
    out[order] = adj
    return out


def mean_interval(values, confidence):
    """Mean of ``values`` with a Student-t interval (for a per-group calibration gap).

    Parameters
    ----------
    values : array-like
        The observations (NaN-free).
    confidence : float
        Two-sided level.

    Returns
    -------
    (mean, lower, upper) : floats
        NaN limits for fewer than two values.
    """
    from scipy.stats import t

    v = np.asarray(values, dtype=np.float64)
    k = v.size
    if k == 0:
        return math.nan, math.nan, math.nan
    m = float(v.mean())
    if k < 2:
        return m, math.nan, math.nan
    se = float(v.std(ddof=1)) / math.sqrt(k)
    h = float(t.ppf(0.5 + confidence / 2.0, k - 1)) * se
    return m, m - h, m + h


def auc_interval(scores, labels, confidence):
    """AUC of ``scores`` for ``labels`` with DeLong's variance on the logit scale.

    Parameters
    ----------
    scores : array-like of float
        The model's favourable-class scores.
    labels : array-like of 0/1
        True labels (1 = favourable).
    confidence : float
        Two-sided level.

    Returns
    -------
    (auc, lower, upper) : floats
        NaN when one class is absent; the limits are the logit-scale Wald interval with DeLong et
        al.'s (1988) variance (Pepe 2003, section 5.2), which stays within (0, 1).
    """
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels).astype(bool)
    pos, neg = s[y], s[~y]
    m, k = pos.size, neg.size
    if m == 0 or k == 0:
        return math.nan, math.nan, math.nan
    from scipy.stats import rankdata

    # structural components (DeLong): V10_i = share of negatives a positive beats (ties count 1/2)
    allr = rankdata(np.r_[pos, neg])
    rp = rankdata(pos)
    rn = rankdata(neg)
    v10 = (allr[:m] - rp) / k
    v01 = 1.0 - (allr[m:] - rn) / m
    auc = float(v10.mean())
    if m < 2 or k < 2:
        return auc, math.nan, math.nan
    var = float(v10.var(ddof=1)) / m + float(v01.var(ddof=1)) / k
    zq = float(z_of(0.5 + confidence / 2.0))
    if auc <= 0.0 or auc >= 1.0 or var <= 0:
        # logit undefined at 0/1: fall back to the score-like bound of a proportion of m*k pairs
        lo, hi = wilson(auc * min(m, k), min(m, k), zq)
        return auc, float(lo), float(hi)
    lg = math.log(auc / (1 - auc))
    se = math.sqrt(var) / (auc * (1 - auc))
    return auc, 1 / (1 + math.exp(-(lg - zq * se))), 1 / (1 + math.exp(-(lg + zq * se)))
