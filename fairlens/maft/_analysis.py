"""RQ3: how close are MAFT's estimated gradients to the true ones?"""
from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fairlens._base import Result, strict_keywords

from .._base import Interval, validated
from .._validation import check_bool, check_real
from . import _kcall
from ._gradients import LossGradientSource, OutputGradientSource, ZeroOrderSource, _check_h, _zo_bounds
from ._problem import _Problem
from ._utils import CountingScorer, resolve_scorer
from .plots import plot_gradient_similarity

__all__ = ["cosine_similarity", "compare_gradients", "GradientComparison"]


@validated({
    "A": "no_validation", "B": "no_validation",
})
def cosine_similarity(A, B):
    """Row-wise cosine similarity (Eq. 10); NaN where a row has zero norm.

    Parameters
    ----------
    A, B : array (n, d) or (d,)
        Arrays of the same shape (a ``(d,)`` vector is one row); finite numbers.

    Returns
    -------
    ndarray (n,)
        Cosine of the angle between row ``i`` of ``A`` and of ``B`` (NaN where either is zero).

    Raises
    ------
    TypeError, ValueError
        Non-numeric input, different shapes, NaN or inf.

    Examples
    --------
    >>> from fairlens.maft import cosine_similarity
    >>> cosine_similarity([1.0, 0.0], [2.0, 0.0])
    array([1.])
    """
    A = _as_rows(A, "A")
    B = _as_rows(B, "B")
    if A.shape != B.shape:
        raise ValueError(f"A and B must have the same shape, got {A.shape} and {B.shape}.")
    num = (A * B).sum(axis=1)
    den = np.linalg.norm(A, axis=1) * np.linalg.norm(B, axis=1)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _as_rows(A, name):
    try:
        A = np.asarray(A, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a numeric (n, d) array.") from None
    if A.ndim == 1:
        A = A[None, :]
    if A.ndim != 2:
        raise ValueError(f"{name} must be a (n, d) array, got shape {A.shape}.")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or inf.")
    return A


@dataclass
class GradientComparison(Result):
    """Gradients of the same points by MAFT (estimate), EIDIG and ADF (analytic).

    Parameters
    ----------
    gradients : dict name -> (n, d)
        ``"MAFT"``, ``"MAFT (non-vectored)"``, ``"EIDIG"``, ``"ADF"``.
    times : dict name -> seconds
        Time to compute them (batched, except the non-vectored loop).
    gradient_cos : dict
        RQ3.1: cosine similarity of MAFT vs EIDIG and ADF vs EIDIG per point.
    direction_cos : ndarray
        RQ3.2: first-iteration global directions (sign agreement of the pair's
        gradients) from estimated vs true gradients, non-discriminatory seeds only.
    probability_cos : ndarray
        RQ3.3: local attribute probabilities from estimated vs true gradients.
    h : float
        Perturbation size of the estimate.
    extra : dict
        ``discriminatory``: which points were already discriminatory (skipped in RQ3.2).
    params : dict
        The parameters of the call.
    elapsed : float
        Seconds.
    stopped : bool
        Always False.
    random_state : None
        Deterministic.

    Examples
    --------
    See :func:`compare_gradients`.
    """

    title = "Estimated vs true gradients (RQ3)"

    gradients: dict
    times: dict
    gradient_cos: dict
    direction_cos: np.ndarray
    probability_cos: np.ndarray
    h: float = 1.0
    extra: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    elapsed: float = float("nan")
    stopped: bool = False
    random_state: object = None

    def summary(self):
        """One-row :class:`pandas.DataFrame`: the mean cosine of each comparison.

        Returns
        -------
        pandas.DataFrame
            One column ``mean_cos <comparison>`` per row of :meth:`to_frame`.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.maft import GradientComparison
        >>> cmp = GradientComparison(
        ...     gradients={}, times={},
        ...     gradient_cos={"MAFT vs EIDIG": np.array([0.9, 0.7]), "ADF vs EIDIG": np.array([1.0, 1.0])},
        ...     direction_cos=np.array([1.0, 0.5]), probability_cos=np.array([0.8, 0.6]))
        >>> cmp.summary()["mean_cos gradient MAFT vs EIDIG"].round(2).tolist()
        [0.8]
        """
        f = self.to_frame()
        return pd.DataFrame([{f"mean_cos {c}": v for c, v in zip(f["comparison"], f["mean_cos"])}])

    def to_frame(self):
        """One row per comparison: mean and median cosine similarity, number of points.

        Returns
        -------
        pandas.DataFrame
            Columns ``comparison``, ``mean_cos``, ``median_cos``, ``n`` (finite values).

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.maft import GradientComparison
        >>> cmp = GradientComparison(
        ...     gradients={}, times={},
        ...     gradient_cos={"MAFT vs EIDIG": np.array([0.9, 0.7]), "ADF vs EIDIG": np.array([1.0, 1.0])},
        ...     direction_cos=np.array([1.0, 0.5]), probability_cos=np.array([0.8, 0.6]))
        >>> cmp.to_frame().round(2)
                          comparison  mean_cos  median_cos  n
        0     gradient MAFT vs EIDIG      0.80        0.80  2
        1      gradient ADF vs EIDIG      1.00        1.00  2
        2    direction MAFT vs EIDIG      0.75        0.75  2
        3  probability MAFT vs EIDIG      0.70        0.70  2
        """
        rows = []
        for k, v in self.gradient_cos.items():
            rows.append({"comparison": f"gradient {k}", "mean_cos": np.nanmean(v), "median_cos": np.nanmedian(v),
                         "n": int(np.isfinite(v).sum())})
        for k, v in (("direction MAFT vs EIDIG", self.direction_cos),
                     ("probability MAFT vs EIDIG", self.probability_cos)):
            rows.append({"comparison": k, "mean_cos": np.nanmean(v) if v.size else np.nan,
                         "median_cos": np.nanmedian(v) if v.size else np.nan, "n": int(np.isfinite(v).sum())})
        return pd.DataFrame(rows)

    def plot(self, ax=None):
        """Box plots of the cosine similarities.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Drawn on a new figure if None.

        Returns
        -------
        matplotlib Axes
            The axes drawn on.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.maft import GradientComparison
        >>> cmp = GradientComparison(
        ...     gradients={}, times={},
        ...     gradient_cos={"MAFT vs EIDIG": np.array([0.9, 0.7]), "ADF vs EIDIG": np.array([1.0, 1.0])},
        ...     direction_cos=np.array([1.0, 0.5]), probability_cos=np.array([0.8, 0.6]))
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> type(cmp.plot()).__name__
        'Axes'
        """

        sims = dict(self.gradient_cos)
        sims["direction\nMAFT~EIDIG"] = self.direction_cos
        sims["probability\nMAFT~EIDIG"] = self.probability_cos
        return plot_gradient_similarity(sims, ax=ax)


@strict_keywords(renamed={"dataset": "data", "favourable_class": "favourable"})
@validated({
    "model": "no_validation", "data": "no_validation", "X": "no_validation", "protected": "no_validation",
    "h": [Interval(numbers.Real, 0, None, closed="neither")],
    "epsilon": [Interval(numbers.Real, 0, None, closed="neither")], "non_vectored": ["boolean"],
    "gradient": [None, "callable"], "favourable": "no_validation",
})
def compare_gradients(
    model, data, X, protected=None, h=1.0, epsilon=1e-6, non_vectored=True, *, gradient=None,
    favourable=1,
):
    """RQ3 of the paper on the points ``X`` (typically 1000 seeds).

    Needs the true gradients: a fitted sklearn ``MLPClassifier`` (analytic), or any
    model with ``gradient=`` (a callable ``(n, d) -> (n, d)`` returning d score / d x,
    as for :class:`EIDIG`).
    For each point ``x1`` its pair ``x2`` is the max-output-difference similar
    instance (as in Algorithm 3); directions use Algorithm 3 lines 17-20 with
    zero momentum, probabilities Algorithm 4 line 11.

    Parameters
    ----------
    model, data, protected, favourable
        As :class:`MAFT`.
    X : array (n, d) or DataFrame
        Points in the encoded space, within ``dataset.bounds``.
    h : float > 0, default=1.0
        Perturbation size of the estimate.
    epsilon : float > 0, default=1e-6
        Guard of the local probabilities.
    non_vectored : bool, default=True
        Also time Algorithm 1 (one model call per point and attribute).
    gradient : callable, optional
        ``d score / d x`` of the model (as :class:`EIDIG`); default: an ``MLPClassifier``'s.

    Returns
    -------
    GradientComparison
        The gradients of each method, their timings and the RQ3 cosine similarities.

    Raises
    ------
    TypeError, ValueError
        Refused arguments (named), a model without a true gradient.

    Examples
    --------
    >>> from fairlens.maft import compare_gradients
    >>> from fairlens.datasets import load_dataset
    >>> from sklearn.neural_network import MLPClassifier
    >>> census = load_dataset("census", encoding="benchmark")
    >>> mlp = MLPClassifier((16,), max_iter=300, random_state=0).fit(census.X[:2000], census.y[:2000])
    >>> cmp = compare_gradients(mlp, census, census.X[:20], ["sex"], non_vectored=False)
    >>> cmp.summary().shape[0]
    1
    """
    t0 = time.perf_counter()
    dataset, favourable_class = data, favourable

    h = _check_h(h)
    epsilon = check_real("epsilon", epsilon, min=0.0, include_min=False)
    non_vectored = check_bool("non_vectored", non_vectored)
    pb = _Problem(dataset, protected)
    X = pb.check_rows(X, "X")
    if X.shape[0] == 0:
        raise ValueError("X must hold at least one point.")
    pb.check_similar_memory(X.shape[0], "compare_gradients", 1, "points")
    base = resolve_scorer(model, dataset, favourable_class)
    scorer = CountingScorer(base)

    bounds = _zo_bounds(base, dataset)
    srcs = {
        "MAFT": ZeroOrderSource(scorer, h, True, bounds),
        "EIDIG": OutputGradientSource(model, scorer, pb.d, gradient),
        "ADF": LossGradientSource(model, scorer, pb.d, gradient),
    }
    grads, times = {}, {}
    for k, s in srcs.items():
        t = time.perf_counter()
        grads[k] = s(X)
        times[k] = time.perf_counter() - t
    if non_vectored:
        t = time.perf_counter()
        grads["MAFT (non-vectored)"] = ZeroOrderSource(scorer, h, False, bounds)(X)
        times["MAFT (non-vectored)"] = time.perf_counter() - t
    gcos = {
        "MAFT vs EIDIG": cosine_similarity(grads["MAFT"], grads["EIDIG"]),
        "ADF vs EIDIG": cosine_similarity(grads["ADF"], grads["EIDIG"]),
    }
    # pairs
    S = pb.similar(X)
    sc = scorer(S.reshape(-1, pb.d)).reshape(-1, pb.C)
    n = X.shape[0]
    disc = np.empty(n, dtype=np.bool_)
    pair = np.empty(n, dtype=np.int64)
    mdiff = np.empty(n, dtype=np.int64)
    _kcall.check_discrimination(sc, np.zeros(n), disc, pair, mdiff)
    X2 = S[np.arange(n), mdiff]

    def direction(src, sign):
        g1, g2 = src(X), src(X2)
        s1, s2 = np.sign(g1), np.sign(g2)
        return np.where((s1 == s2) & pb.free[None, :], sign * s1, 0.0), g1, g2

    dm, m1, m2 = direction(srcs["MAFT"], -1.0)
    de, e1, e2 = direction(srcs["EIDIG"], -1.0)
    keep = ~disc
    dcos = cosine_similarity(dm[keep], de[keep])

    def prob(g1, g2):
        out = np.empty_like(g1)
        _kcall.normalized_probability(np.ascontiguousarray(g1), np.ascontiguousarray(g2), pb.free, epsilon, out)
        return out

    pcos = cosine_similarity(prob(m1, m2), prob(e1, e2))
    params = {"h": h, "epsilon": epsilon, "non_vectored": non_vectored, "n_points": int(n),
              "protected": list(pb.protected)}
    return GradientComparison(grads, times, gcos, dcos, pcos, h, {"discriminatory": disc}, params=params,
                              elapsed=time.perf_counter() - t0)
