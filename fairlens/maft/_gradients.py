"""Gradient sources of the two-phase search.

* :func:`zero_order_gradient` — MAFT's black-box estimate (Algorithms 1 and 2).
* :class:`ZeroOrderSource` (MAFT), :class:`OutputGradientSource` (EIDIG, the
  true gradient of the output probability) and :class:`LossGradientSource`
  (ADF, the gradient of the cross-entropy loss w.r.t. the predicted label) give
  the search engine a batched ``gradient(X) -> (n, d)``.
"""
from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "zero_order_gradient",
    "ZeroOrderSource",
    "OutputGradientSource",
    "LossGradientSource",
]


def _check_h(h):
    if isinstance(h, bool) or not isinstance(h, numbers.Real) or not np.isfinite(h) or h <= 0:
        raise ValueError(f"h (perturbation size) must be a finite number > 0, got {h!r}; the paper recommends h=1.0.")
    return float(h)


def _zo_vectored(scorer, X, h):
    """Algorithm 2 for every row of X in ONE model call (rows x, then x + h e_i)."""
    n, d = X.shape
    P = np.repeat(X, d, axis=0).reshape(n, d, d)
    P += h * np.eye(d)[None, :, :]
    rows = np.concatenate([X, P.reshape(n * d, d)], axis=0)
    Y = scorer(rows)
    y = Y[:n]
    G = (Y[n:].reshape(n, d) - y[:, None]) / h
    flip = ~(y > 0.5)
    G[flip] = -G[flip]
    return G, y


def _zo_loop(scorer, X, h):
    """Algorithm 1 literally: per row one call for f(x) and one call per attribute."""
    n, d = X.shape
    G = np.empty((n, d))
    y = np.empty(n)
    for r in range(n):
        x = X[r]
        y_pred = float(scorer(x[None, :])[0])
        for i in range(d):
            xp = x.copy()
            xp[i] += h
            G[r, i] = (float(scorer(xp[None, :])[0]) - y_pred) / h
        y[r] = y_pred
        if not y_pred > 0.5:
            G[r] = -G[r]
    return G, y


def zero_order_gradient(model, X, h=1.0, vectored=True):
    """Zero-order (finite-difference) gradient of the favourable-class confidence.

    Implements Equation (6), ``g_i = (f(x + h e_i) - f(x)) / h``, with the sign
    convention of Algorithms 1 and 2: the estimate is returned as is when
    ``f(x) > 0.5`` and negated otherwise, i.e. it is the gradient of the
    confidence *of the predicted class*.

    Parameters
    ----------
    model : estimator with ``predict_proba`` or callable
        Black-box model; adapted with :func:`fairlens.models.as_scorer`.
    X : array-like, shape (n, d) or (d,)
        Points at which to estimate the gradient.
    h : float, default=1.0
        Perturbation size (> 0).  The paper recommends 1.0 for discretised
        tabular data (RQ1).
    vectored : bool, default=True
        ``True``: Algorithm 2, all ``n * (d + 1)`` rows scored in one model call.
        ``False``: Algorithm 1, one model call per row and attribute
        (``n * (d + 1)`` calls); same numbers, much slower.

    Returns
    -------
    ndarray, shape (n, d) (or (d,) for a 1-D ``X``)
    """
    from ._utils import resolve_scorer

    h = _check_h(h)
    scorer = resolve_scorer(model)
    Xa = np.asarray(X, dtype=np.float64)
    one = Xa.ndim == 1
    Xa = np.atleast_2d(Xa)
    if Xa.ndim != 2 or Xa.shape[0] == 0:
        raise ValueError(f"X must be a non-empty (n, d) array or a (d,) vector, got shape {np.shape(X)}.")
    G, _ = (_zo_vectored if vectored else _zo_loop)(scorer, Xa, h)
    return G[0] if one else G


class ZeroOrderSource:
    """MAFT's gradient source: the zero-order estimate through the black box.

    ``queries`` are the rows scored through ``scorer`` (which counts them).
    """

    name = "MAFT"
    direction_sign = -1.0  # Algorithm 3 line 21: direction = -sign(grad)

    def __init__(self, scorer, h=1.0, vectored=True):
        self.scorer = scorer
        self.h = _check_h(h)
        self.vectored = bool(vectored)

    def __call__(self, X):
        if X.shape[0] == 0:
            return np.empty_like(X)
        return (_zo_vectored if self.vectored else _zo_loop)(self.scorer, X, self.h)[0]


class _MLPSource:
    def __init__(self, model, scorer, n_features=None):
        from fairlens.models import mlp_input_gradient

        if n_features is not None:
            try:
                mlp_input_gradient(model, np.zeros((1, n_features)))
            except TypeError as exc:
                raise TypeError(
                    f"{self.name} is white-box: it needs the analytic input gradient of a fitted sklearn "
                    f"MLPClassifier (optionally behind a scaler, as train_mlp returns), got "
                    f"{type(model).__name__}. Use MAFT (black-box, zero-order gradients) for other models. ({exc})"
                ) from None
        self.model = model
        self.scorer = scorer
        self.rows = 0

    def _grad(self, X, output):
        from fairlens.models import mlp_input_gradient

        self.rows += X.shape[0]
        return np.asarray(mlp_input_gradient(self.model, X, output=output), dtype=np.float64)


class OutputGradientSource(_MLPSource):
    """EIDIG's gradient source: the analytic gradient of the output probability,
    negated when the prediction is not favourable (``compute_grad`` of EIDIG)."""

    name = "EIDIG"
    direction_sign = -1.0

    def __call__(self, X):
        if X.shape[0] == 0:
            return np.empty_like(X)
        G = self._grad(X, "proba")
        y = self.scorer(X)
        flip = ~(y > 0.5)
        G[flip] = -G[flip]
        return G


class LossGradientSource(_MLPSource):
    """ADF's gradient source: gradient of the binary cross-entropy between the
    predicted label ``y = [f(x) > 0.5]`` and ``f(x)``.

    For a sigmoid output ``f = s(z)`` this is ``(f - y) * dz/dx`` (analytic; the
    TensorFlow original clips ``f`` to ``[1e-7, 1 - 1e-7]``, which only matters
    for saturated outputs).  ADF steps *along* its sign (``direction_sign=+1``).
    """

    name = "ADF"
    direction_sign = 1.0

    def __call__(self, X):
        if X.shape[0] == 0:
            return np.empty_like(X)
        Gz = self._grad(X, "logit")
        p = self.scorer(X)
        y = (p > 0.5).astype(np.float64)
        return (p - y)[:, None] * Gz
