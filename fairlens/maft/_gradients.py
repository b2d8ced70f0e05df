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

from fairlens._base import strict_keywords

from .._base import Interval, Options, validated
from .._validation import check_bool, check_choice, check_real
from ..models import Scorer, as_scorer, mlp_input_gradient
from . import _kcall
from ._utils import BLOCK_ROWS

__all__ = [
    "zero_order_gradient",
    "check_gradient_output",
    "ZeroOrderSource",
    "OutputGradientSource",
    "LossGradientSource",
]


def _check_h(h):

    try:
        return check_real("h", h, min=0.0, include_min=False)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{exc} h is the perturbation size; the paper recommends h=1.0.") from None


def _zo_steps(X, h, lo, hi):
    """Per (row, attribute) step: ``+h``, or ``-h`` where ``x + h`` leaves the domain
    (``0`` where neither fits).  Used only for models that cannot be called outside the
    domain (readable-frame pipelines: an out-of-range code has no category label)."""
    up = X + h <= hi[None, :]
    down = X - h >= lo[None, :]
    return np.where(up, h, np.where(down, -h, 0.0))


def _zo_vectored(scorer, X, h, bounds=None):
    """Algorithm 2 for every row of X in ONE model call (rows x, then x + h e_i).

    Rows are processed in blocks of at most ``BLOCK_ROWS // (d + 1)`` points so that the
    ``n (d + 1)`` probe rows never exceed one model batch (bounded memory for any ``n``);
    below that size this is exactly one call.
    """

    n, d = X.shape
    per = max(1, BLOCK_ROWS // (d + 1))
    if n > per:
        parts = [_zo_vectored(scorer, X[s : s + per], h, bounds) for s in range(0, n, per)]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    X = np.ascontiguousarray(X, dtype=np.float64)
    if bounds is None:
        steps = np.full((n, d), float(h))
    else:
        steps = np.ascontiguousarray(_zo_steps(X, h, *bounds), dtype=np.float64)
    # X (n, d) and steps (n, d) float64 C order, rows allocated here: the kernel's preconditions
    # hold by construction, so it is called unchecked (about 1,000 calls a run)
    rows = np.empty((n * (d + 1), d))
    _kcall.raw.zo_probe_rows(X, steps, rows)  # X, then X + steps[i, j] e_j for every (i, j)
    Y = np.ascontiguousarray(np.asarray(scorer(rows), dtype=np.float64))
    _kcall.check_step("zo_gradient", "Y", Y, np.dtype(np.float64), (n * (d + 1),))
    G = np.empty((n, d))
    with np.errstate(invalid="ignore", divide="ignore"):
        _kcall.raw.zo_gradient(Y, steps, G)  # (Y[x + h e_j] - Y[x]) / h, 0 where no step, sign flipped below 0.5
    return G, Y[:n]


def _zo_loop(scorer, X, h, bounds=None):
    """Algorithm 1 literally: per row one call for f(x) and one call per attribute."""
    n, d = X.shape
    G = np.empty((n, d))
    y = np.empty(n)
    steps = np.full((n, d), h) if bounds is None else _zo_steps(X, h, *bounds)
    for r in range(n):
        x = X[r]
        y_pred = float(scorer(x[None, :])[0])
        for i in range(d):
            if steps[r, i] == 0:
                G[r, i] = 0.0
                continue
            xp = x.copy()
            xp[i] += steps[r, i]
            G[r, i] = (float(scorer(xp[None, :])[0]) - y_pred) / steps[r, i]
        y[r] = y_pred
        if not y_pred > 0.5:
            G[r] = -G[r]
    return G, y


def _zo_bounds(scorer, dataset):
    """Domain bounds for the one-sided steps, only for readable-frame models."""
    if dataset is None or getattr(scorer, "input_kind", None) != "readable":
        return None
    B = np.asarray(dataset.bounds, dtype=np.float64)
    return np.ascontiguousarray(B[:, 0]), np.ascontiguousarray(B[:, 1])


@strict_keywords(renamed={"dataset": "data", "favourable_class": "favourable"})
@validated({
    "model": "no_validation", "X": "no_validation", "h": [Interval(numbers.Real, 0, None, closed="neither")],
    "vectored": ["boolean"], "data": "no_validation", "favourable": "no_validation",
    "output": [Options("raw", "proba", "logit", "auto")],
})
def zero_order_gradient(model, X, h=1.0, vectored=True, *, data=None, favourable=1, output="raw"):
    """Zero-order (finite-difference) gradient of the favourable-class confidence.

    Implements Equation (6), ``g_i = (f(x + h e_i) - f(x)) / h``, with the sign
    convention of Algorithms 1 and 2: the estimate is returned as is when
    ``f(x) > 0.5`` and negated otherwise, i.e. it is the gradient of the
    confidence *of the predicted class*.

    Parameters
    ----------
    model : estimator with ``predict_proba``, pipeline or callable
        Black-box model; adapted once with :func:`fairlens.models.as_scorer`.
    X : array-like (n, d) or (d,), or DataFrame
        Points (in the dataset's encoded space) at which to estimate the gradient;
        a DataFrame is aligned by column name to the dataset's features.
    h : float, default=1.0
        Perturbation size (> 0).  The paper recommends 1.0 for discretised
        tabular data (RQ1).
    vectored : bool, default=True
        ``True``: Algorithm 2, all ``n * (d + 1)`` rows scored in one model call
        (in bounded blocks for very large ``n``).
        ``False``: Algorithm 1, one model call per row and attribute
        (``n * (d + 1)`` calls); same numbers, much slower.
    data : Dataset, optional
        The data the model is audited on; needed for a pipeline fitted on the
        readable frame (rows are decoded before each call).  For such a model an
        attribute whose ``x + h`` leaves ``data.bounds`` (a code without a
        category label) is differentiated one-sidedly, ``(f(x) - f(x - h e_i)) / h``.
    favourable : default=1
        The model class whose probability is the confidence.
    output : {"raw", "proba", "logit", "auto"}, default="raw"
        How a callable's output is read (:func:`fairlens.models.as_scorer`).  The
        default differentiates whatever the callable returns (Equation 6 holds for
        any ``f``, e.g. the paper's example ``f(x) = x**2``); ``"proba"`` refuses
        scores outside [0, 1], ``"logit"`` applies the sigmoid first.  The sign
        convention always thresholds the (transformed) score at 0.5.

    Returns
    -------
    ndarray, shape (n, d) (or (d,) for a 1-D ``X``)
        The estimated gradient of each point, signed towards the predicted class's confidence.

    Raises
    ------
    TypeError, ValueError
        Refused arguments (named), an empty ``X``.

    Examples
    --------
    The paper's example ``f(x) = x1**2 + x2**2`` at ``(1, 2)`` with ``h = 1``:

    >>> import numpy as np
    >>> from fairlens.maft import zero_order_gradient
    >>> f = lambda X: (np.asarray(X) ** 2).sum(axis=1)
    >>> zero_order_gradient(f, [1.0, 2.0])
    array([3., 5.])
    """

    dataset, favourable_class = data, favourable

    h = _check_h(h)
    vectored = check_bool("vectored", vectored)
    output = check_choice("output", output, ("raw", "proba", "logit", "auto"))
    scorer = as_scorer(model, dataset, favourable=favourable_class, output=output)
    one = not hasattr(X, "columns") and np.ndim(X) == 1
    if one:
        X = np.asarray(X)[None, :]
    Xa = scorer.check_X(X, "X")
    if Xa.shape[0] == 0:
        raise ValueError(f"X must be a non-empty (n, d) array or a (d,) vector, got shape {np.shape(X)}.")
    G, _ = (_zo_vectored if vectored else _zo_loop)(scorer, Xa, h, _zo_bounds(scorer, dataset))
    return G[0] if one else G


class ZeroOrderSource:
    """MAFT's gradient source: the zero-order estimate through the black box.

    ``queries`` are the rows scored through ``scorer`` (which counts them).
    """

    name = "MAFT"
    direction_sign = -1.0  # Algorithm 3 line 21: direction = -sign(grad)

    def __init__(self, scorer, h=1.0, vectored=True, bounds=None):
        self.scorer = scorer
        self.h = _check_h(h)
        self.vectored = bool(vectored)
        self.bounds = bounds

    def __call__(self, X):
        if X.shape[0] == 0:
            return np.empty_like(X)
        return (_zo_vectored if self.vectored else _zo_loop)(self.scorer, X, self.h, self.bounds)[0]


def check_gradient_output(G, shape, name="gradient"):
    """Validate what a user ``gradient=`` callable returned for a batch of ``shape``."""
    try:
        G = np.asarray(G, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must return a numeric (n, d) array of d score / d x, "
                        f"got {type(G).__name__}.") from None
    if G.shape != tuple(shape):
        raise ValueError(
            f"{name} returned shape {G.shape} for a batch of shape {tuple(shape)}; it must return d score / d x "
            "with one row per input row and one column per encoded feature."
        )
    if not np.all(np.isfinite(G)):
        raise ValueError(f"{name} returned NaN or inf; it must return finite d score / d x.")
    return np.ascontiguousarray(G)


class _GradientSource:
    """White-box gradient of the favourable-class probability ``d p / d x`` (encoded space).

    From a user ``gradient`` callable (any differentiable model: autograd of TensorFlow,
    PyTorch, JAX..., or an analytic formula), else from the analytic gradient of a fitted
    scikit-learn ``MLPClassifier`` (:func:`fairlens.models.mlp_input_gradient`; a model
    fitted on an encoded DataFrame is differentiated in its own column order and the
    gradient is mapped back to the dataset's).
    """

    name = "?"

    def __init__(self, model, scorer, n_features=None, gradient=None):
        self.model = model
        self.scorer = scorer
        self.gradient = gradient
        self.rows = 0
        base = getattr(scorer, "scorer", scorer)  # CountingScorer -> Scorer
        self._perm = None
        if gradient is not None:
            if not callable(gradient):
                raise TypeError(
                    f"gradient must be a callable mapping an (n, d) array to d score / d x of shape (n, d), "
                    f"got {type(gradient).__name__}."
                )
        else:

            if isinstance(model, Scorer):
                self.model = model = model.model
            kind = getattr(base, "input_kind", "encoded")
            if kind == "encoded_frame":
                names = list(base.feature_names)
                self._perm = np.asarray([names.index(c) for c in base.model_feature_names], dtype=np.int64)
            ok = kind in ("encoded", "encoded_frame")
            exc = None
            if ok and n_features is not None:
                try:
                    self._mlp(np.zeros((1, n_features)), "proba")
                except (TypeError, ValueError) as e:
                    ok, exc = False, e
            if not ok:
                raise TypeError(
                    f"{self.name} is white-box: it needs d score / d x. Pass gradient=<callable (n, d) -> (n, d)> "
                    "(e.g. from torch.autograd or tf.GradientTape, in the dataset's encoded space), or a fitted "
                    f"sklearn MLPClassifier (optionally behind a scaler, as train_mlp returns); got "
                    f"{type(model).__name__} ({getattr(base, 'input_kind', '?')} input). Use MAFT (black-box, "
                    "zero-order gradients) for any other model." + (f" ({exc})" if exc else "")
                ) from None

    def _mlp(self, X, output):

        if self._perm is None:
            return np.asarray(mlp_input_gradient(self.model, X, output=output), dtype=np.float64)
        Gm = np.asarray(mlp_input_gradient(self.model, np.ascontiguousarray(X[:, self._perm]), output=output))
        G = np.empty_like(Gm, dtype=np.float64)
        G[:, self._perm] = Gm
        return G

    def proba_gradient(self, X):
        """``d p / d x`` for the batch ``X`` (validated)."""
        self.rows += X.shape[0]
        if self.gradient is not None:
            return check_gradient_output(self.gradient(X), X.shape)
        return self._mlp(X, "proba")


class OutputGradientSource(_GradientSource):
    """EIDIG's gradient source: the analytic gradient of the output probability,
    negated when the prediction is not favourable (``compute_grad`` of EIDIG)."""

    name = "EIDIG"
    direction_sign = -1.0

    def __call__(self, X):
        if X.shape[0] == 0:
            return np.empty_like(X)
        G = self.proba_gradient(X)
        y = self.scorer(X)
        flip = ~(y > 0.5)
        G[flip] = -G[flip]
        return G


class LossGradientSource(_GradientSource):
    """ADF's gradient source: gradient of the binary cross-entropy between the
    predicted label ``y = [f(x) > 0.5]`` and ``f(x)``.

    For a sigmoid output ``f = s(z)`` this is ``(f - y) * dz/dx`` (analytic; the
    TensorFlow original clips ``f`` to ``[1e-7, 1 - 1e-7]``, which only matters
    for saturated outputs).  With a user ``gradient`` (``df/dx``) it is the same
    cross-entropy derivative written for any output, ``-df/dx / f`` when ``y = 1`` and
    ``df/dx / (1 - f)`` when ``y = 0`` (``f >= 1/2`` resp. ``1 - f >= 1/2``, so no
    division by a small number).  ADF steps *along* its sign (``direction_sign=+1``).
    """

    name = "ADF"
    direction_sign = 1.0

    def __call__(self, X):
        if X.shape[0] == 0:
            return np.empty_like(X)
        p = self.scorer(X)
        y = p > 0.5
        if self.gradient is None:
            self.rows += X.shape[0]
            Gz = self._mlp(X, "logit")
            return (p - y.astype(np.float64))[:, None] * Gz
        G = self.proba_gradient(X)
        scale = np.where(y, -1.0 / np.where(y, p, 1.0), 1.0 / np.where(y, 1.0, 1.0 - p))
        return scale[:, None] * G
