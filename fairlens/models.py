"""Reference models and the one model protocol of fairlens.

* :func:`train_mlp` -- the papers' six-layer fully connected network, with scikit-learn.
* :func:`as_scorer` -- adapt any classifier with ``predict_proba`` or any callable into a
  batch scorer ``f(X) -> (n,)`` probability of the favourable class, counting the rows it
  scores (the "model queries" the search methods report).
* :func:`mlp_input_gradient` -- the analytic gradient of an ``MLPClassifier``'s output with
  respect to its input (the white-box baselines EIDIG/ADF need it).
"""
from __future__ import annotations

import numpy as np

__all__ = ["MLP_HIDDEN_LAYERS", "train_mlp", "Scorer", "as_scorer", "mlp_input_gradient"]

#: Hidden layer sizes of the reference networks (five hidden layers + one output unit).
#: census, german and bank as in the EIDIG/ADF/MAFT benchmarks; the other datasets use the
#: bank architecture (TestSGD trains "six-layer fully-connected" networks on all of them).
MLP_HIDDEN_LAYERS = {
    "adult": (30, 20, 15, 15, 10),
    "german_credit": (50, 30, 15, 10, 5),
    "bank_marketing": (30, 20, 15, 10, 5),
}
_DEFAULT_HIDDEN = (30, 20, 15, 10, 5)


#: Training settings per dataset size: deep, narrow ReLU networks on a few hundred rows
#: often collapse to the majority class with early stopping, so small datasets train with
#: small batches for a fixed number of epochs and keep the best of several restarts.
_SMALL_DATA_PARAMS = dict(batch_size=32, early_stopping=False, max_iter=60, alpha=1.0)
_LARGE_DATA_PARAMS = dict(early_stopping=True, n_iter_no_change=15, max_iter=300)
_SMALL = 5000


def train_mlp(
    dataset, *, hidden_layer_sizes=None, random_state=0, test_size=0.2, scale=True,
    n_restarts=None, **mlp_params,
):
    """Train the reference six-layer MLP on ``dataset`` (a :class:`~fairlens.datasets.Dataset`).

    Parameters
    ----------
    dataset : Dataset
        Training data (``dataset.X``, ``dataset.y``).
    hidden_layer_sizes : tuple of int, optional
        Defaults to :data:`MLP_HIDDEN_LAYERS` for the dataset (``(30, 20, 15, 10, 5)`` else).
    random_state : int
        Seeds the split and the network's initialisation and shuffling.
    test_size : float in [0, 1)
        Held-out share (stratified) on which ``model.test_score_`` (accuracy) is measured;
        0 trains on everything and sets ``test_score_`` to ``nan``.
    scale : bool, default True
        Standardise inputs first (``Pipeline(StandardScaler, MLPClassifier)``); the model
        still takes inputs in the dataset's encoding, and :func:`mlp_input_gradient`
        differentiates through the scaler. ``False`` returns a bare ``MLPClassifier``.
    n_restarts : int, optional
        Train this many networks (seeds drawn from ``random_state``) on 80% of the training
        part and keep the one with the best accuracy on the other 20%. Default: 5 for
        training sets under 5,000 rows, else 1 (trained on the whole training part).
    **mlp_params
        Passed to :class:`sklearn.neural_network.MLPClassifier` (defaults: ReLU, adam;
        early stopping on large data; on small data 60 epochs of batch 32 with L2 penalty alpha=1.0).

    Returns
    -------
    MLPClassifier or Pipeline
        Fitted, with ``predict_proba``; ``test_score_``, ``train_index_`` and ``test_index_``
        record the held-out accuracy and the split.
    """
    from sklearn.model_selection import train_test_split
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = getattr(dataset, "X", None), getattr(dataset, "y", None)
    if X is None or y is None:
        raise TypeError("dataset must be a fairlens Dataset (with .X and .y); see "
                        "fairlens.datasets.load_dataset")
    if np.unique(y).size != 2:
        raise ValueError(f"train_mlp needs a binary target; dataset.y has values {np.unique(y)}")
    if not 0 <= test_size < 1:
        raise ValueError(f"test_size must be in [0, 1); got {test_size!r}")
    hidden = hidden_layer_sizes or MLP_HIDDEN_LAYERS.get(dataset.name, _DEFAULT_HIDDEN)
    idx = np.arange(len(y))
    if test_size > 0:
        train_idx, test_idx = train_test_split(
            idx, test_size=test_size, random_state=random_state, stratify=y
        )
    else:
        train_idx, test_idx = idx, idx[:0]
    small = len(train_idx) < _SMALL
    if n_restarts is None:
        n_restarts = 5 if small else 1
    if int(n_restarts) < 1:
        raise ValueError(f"n_restarts must be >= 1; got {n_restarts!r}")
    params = dict(hidden_layer_sizes=tuple(hidden), activation="relu",
                  **(_SMALL_DATA_PARAMS if small else _LARGE_DATA_PARAMS))
    params.update(mlp_params)

    def build(seed):
        mlp = MLPClassifier(**{**params, "random_state": seed})
        return make_pipeline(StandardScaler(), mlp) if scale else mlp

    import warnings

    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # fixed epochs on small data
        if n_restarts == 1:
            model = build(random_state).fit(X[train_idx], y[train_idx])
        else:
            fit_idx, val_idx = train_test_split(
                train_idx, test_size=0.2, random_state=random_state, stratify=y[train_idx]
            )
            seeds = np.random.RandomState(random_state).randint(0, 2**31 - 1, size=n_restarts)
            best = -1.0
            for seed in seeds:
                cand = build(int(seed)).fit(X[fit_idx], y[fit_idx])
                score = float((cand.predict(X[val_idx]) == y[val_idx]).mean())
                if score > best:
                    model, best = cand, score
    model.train_index_ = train_idx
    model.test_index_ = test_idx
    model.test_score_ = (
        float((model.predict(X[test_idx]) == y[test_idx]).mean()) if len(test_idx) else np.nan
    )
    return model


class Scorer:
    """Batch scorer ``f(X) -> (n,)`` float64: probability of the favourable class.

    Counts what it scores: ``n_calls`` (model calls) and ``n_rows`` (rows scored, the
    "queries" of black-box testing). ``reset_counts()`` zeroes both.
    """

    def __init__(self, model, favourable_class=1, n_features=None):
        self.model = model
        self.favourable_class = favourable_class
        self.n_features = n_features
        self.n_calls = 0
        self.n_rows = 0
        self._column = None
        if hasattr(model, "predict_proba"):
            classes = getattr(model, "classes_", None)
            if classes is not None:
                classes = list(np.asarray(classes).tolist())
                if len(classes) != 2:
                    raise ValueError(
                        f"model has {len(classes)} classes {classes}; fairlens scores binary "
                        "classifiers (favourable vs. not)"
                    )
                if favourable_class not in classes:
                    raise ValueError(
                        f"favourable_class={favourable_class!r} is not one of the model's "
                        f"classes {classes}"
                    )
                self._column = classes.index(favourable_class)
            self._fn = model.predict_proba
            self._kind = "proba"
        elif callable(model):
            self._fn = model
            self._kind = "callable"
        else:
            raise TypeError(
                f"{type(model).__name__} has no predict_proba and is not callable. Pass a "
                "classifier with predict_proba (e.g. SVC(probability=True)) or a function "
                "mapping an (n, d) array to n scores."
            )

    def reset_counts(self):
        self.n_calls = 0
        self.n_rows = 0

    def __call__(self, X) -> np.ndarray:
        if not hasattr(X, "iloc"):
            X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (n_samples, n_features); got shape {X.shape}")
        if self.n_features is not None and X.shape[1] != self.n_features:
            raise ValueError(f"X has {X.shape[1]} features; the model expects {self.n_features}")
        n = X.shape[0]
        out = np.asarray(self._fn(X), dtype=np.float64)
        self.n_calls += 1
        self.n_rows += n
        if out.ndim == 2 and out.shape == (n, 2):
            out = out[:, self._column if self._column is not None else
                      int(self.favourable_class == 1)]
        elif out.ndim == 2 and out.shape == (n, 1):
            out = out[:, 0]
        if out.shape != (n,):
            raise ValueError(
                f"the model returned shape {out.shape} for {n} rows; a scorer must return "
                f"({n},) scores or ({n}, 2) class probabilities"
            )
        if not np.all(np.isfinite(out)):
            raise ValueError("the model returned non-finite scores (nan or inf)")
        return out


def as_scorer(model, favourable_class=1, *, n_features=None) -> Scorer:
    """Adapt ``model`` into a :class:`Scorer` (idempotent on a Scorer).

    ``model`` may be a fitted binary classifier with ``predict_proba`` (its column for
    ``favourable_class`` is used) or a callable returning ``(n,)`` scores or ``(n, 2)``
    probabilities (column ``favourable_class``).
    """
    if isinstance(model, Scorer):
        return model
    if n_features is None:
        n_features = getattr(model, "n_features_in_", None)
    return Scorer(model, favourable_class=favourable_class, n_features=n_features)


_ACTIVATIONS = {
    # name: (forward, derivative as a function of the activation's output)
    "relu": (lambda z: np.maximum(z, 0.0), lambda a: (a > 0).astype(np.float64)),
    "tanh": (np.tanh, lambda a: 1.0 - a * a),
    "logistic": (lambda z: 1.0 / (1.0 + np.exp(-z)), lambda a: a * (1.0 - a)),
    "identity": (lambda z: z, lambda a: np.ones_like(a)),
}


def _unwrap_mlp(model):
    """(MLPClassifier, input scale vector, input shift vector) from an MLP or a scaled pipeline."""
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import MinMaxScaler, StandardScaler

    if isinstance(model, MLPClassifier):
        return model, None, None
    if isinstance(model, Pipeline) and isinstance(model.steps[-1][1], MLPClassifier):
        scale, shift = None, None
        for _, step in model.steps[:-1]:
            if isinstance(step, StandardScaler):
                s = step.scale_ if step.scale_ is not None else 1.0
                m = step.mean_ if step.mean_ is not None else 0.0
                a, b = 1.0 / np.asarray(s, float), -np.asarray(m, float) / s
            elif isinstance(step, MinMaxScaler):
                a, b = step.scale_, step.min_
            else:
                raise TypeError(
                    f"mlp_input_gradient supports StandardScaler/MinMaxScaler before the MLP, "
                    f"not {type(step).__name__}"
                )
            scale = a if scale is None else scale * a
            shift = b if shift is None else shift * a + b
        return model.steps[-1][1], scale, shift
    raise TypeError(
        f"mlp_input_gradient needs a fitted MLPClassifier (or a Pipeline of scalers ending in "
        f"one); got {type(model).__name__}. For other models use "
        "fairlens.maft.zero_order_gradient."
    )


def mlp_input_gradient(model, X, output="proba") -> np.ndarray:
    """Analytic gradient of a binary ``MLPClassifier``'s positive-class output w.r.t. ``X``.

    Back-propagation through the fitted weights (``coefs_``, ``intercepts_``) for the hidden
    activation of the network; through a leading ``StandardScaler``/``MinMaxScaler`` by the
    chain rule.

    Parameters
    ----------
    model : MLPClassifier or Pipeline
        Fitted binary network (one logistic output unit).
    X : array of shape (n, d)
    output : {"proba", "logit"}
        Differentiate P(class 1 | x) or the pre-sigmoid output z(x).

    Returns
    -------
    ndarray of shape (n, d)
    """
    mlp, scale, shift = _unwrap_mlp(model)
    if not hasattr(mlp, "coefs_"):
        raise ValueError("the MLPClassifier is not fitted; call fit first")
    if getattr(mlp, "out_activation_", "logistic") != "logistic":
        raise ValueError("mlp_input_gradient supports binary networks (one logistic output)")
    if output not in ("proba", "logit"):
        raise ValueError(f"output must be 'proba' or 'logit'; got {output!r}")
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[None, :]
    if X.shape[1] != mlp.coefs_[0].shape[0]:
        raise ValueError(f"X has {X.shape[1]} features; the network expects "
                         f"{mlp.coefs_[0].shape[0]}")
    act, dact = _ACTIVATIONS[mlp.activation]
    a = X * scale + shift if scale is not None else X
    derivs = []
    for W, b in zip(mlp.coefs_[:-1], mlp.intercepts_[:-1]):
        a = act(a @ W + b)
        derivs.append(dact(a))
    z = a @ mlp.coefs_[-1] + mlp.intercepts_[-1]  # (n, 1)
    # backward: delta = dz/da_l, shape (n, width_l)
    delta = np.broadcast_to(mlp.coefs_[-1][:, 0], (X.shape[0], mlp.coefs_[-1].shape[0]))
    for W, d in zip(reversed(mlp.coefs_[:-1]), reversed(derivs)):
        delta = (delta * d) @ W.T
    grad = delta
    if scale is not None:
        grad = grad * scale
    if output == "proba":
        p = 1.0 / (1.0 + np.exp(-z))
        grad = grad * (p * (1.0 - p))
    return np.ascontiguousarray(grad)
