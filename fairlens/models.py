"""Reference models and the one model protocol of fairlens.

* :func:`train_mlp` -- the papers' six-layer fully connected network, with scikit-learn.
* :func:`as_scorer` -- adapt any classifier with ``predict_proba`` or any callable into a
  batch scorer ``f(X) -> (n,)`` probability of the favourable class, counting the rows it
  scores (the "model queries" the search methods report).
* :func:`mlp_input_gradient` -- the analytic gradient of an ``MLPClassifier``'s output with
  respect to its input (the white-box baselines EIDIG/ADF need it).
"""
from __future__ import annotations

import numbers

import numpy as np

from ._base import Interval, Options, strict_keywords, validated
from ._validation import check_choice, check_int

__all__ = ["MLP_HIDDEN_LAYERS", "INPUT_KINDS", "train_mlp", "Scorer", "as_scorer",
           "mlp_input_gradient"]

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


def _mlp_keywords():
    """The keywords of :class:`sklearn.neural_network.MLPClassifier` (for ``train_mlp``)."""
    from sklearn.neural_network import MLPClassifier

    return MLPClassifier().get_params()


@strict_keywords(renamed={"dataset": "data"}, forwarded=("MLPClassifier", _mlp_keywords))
@validated({
    "data": "no_validation", "hidden_layer_sizes": "no_validation", "random_state": ["random_state"],
    "test_size": [Interval(numbers.Real, 0, 1, closed="left")], "scale": ["boolean"],
    "n_restarts": [Interval(numbers.Integral, 1, None), None],
})
def train_mlp(
    data, *, hidden_layer_sizes=None, random_state=0, test_size=0.2, scale=True,
    n_restarts=None, **mlp_params,
):
    """Train the reference six-layer MLP on ``data`` (a :class:`~fairlens.datasets.Dataset`).

    Parameters
    ----------
    data : Dataset
        Training data (``data.X``, ``data.y``).
    hidden_layer_sizes : int or tuple of int, optional
        Widths of the hidden layers (``()``: none, a logistic regression trained by adam).
        Default: :data:`MLP_HIDDEN_LAYERS` for the dataset (``(30, 20, 15, 10, 5)`` else).
    random_state : int, default 0
        Seeds the split and the network's initialisation and shuffling.
    test_size : float in [0, 1), default 0.2
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
        early stopping on large data; on small data 60 epochs of batch 32 with L2 penalty
        alpha=1.0).  Any other keyword is a ``TypeError`` naming it, before any work;
        ``dataset=``, the old name of ``data``, is one naming ``data=``.

    Returns
    -------
    MLPClassifier or Pipeline
        Fitted, with ``predict_proba``; ``test_score_``, ``train_index_`` and ``test_index_``
        record the held-out accuracy and the split.

    Raises
    ------
    TypeError
        If ``data`` is not a Dataset, ``hidden_layer_sizes`` holds non-integers, or a keyword
        is neither one of ``train_mlp``'s nor one of ``MLPClassifier``'s (named, before any work).
    ValueError
        If the target is not binary, or ``test_size``, ``n_restarts`` or
        ``hidden_layer_sizes`` is out of range.

    Examples
    --------
    >>> from fairlens.datasets import load_german_credit
    >>> from fairlens.models import train_mlp
    >>> model = train_mlp(load_german_credit(), n_restarts=1, max_iter=5)
    >>> model.predict_proba(load_german_credit().X[:2]).shape
    (2, 2)
    """
    dataset = data
    from sklearn.model_selection import train_test_split
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = getattr(dataset, "X", None), getattr(dataset, "y", None)
    if X is None or y is None:
        raise TypeError("data must be a fairlens Dataset (with .X and .y); see "
                        "fairlens.datasets.load_dataset")
    if np.unique(y).size != 2:
        raise ValueError(f"train_mlp needs a binary target; data.y has values {np.unique(y)}")
    if not 0 <= test_size < 1:
        raise ValueError(f"test_size must be in [0, 1); got {test_size!r}")
    if hidden_layer_sizes is None:
        hidden = MLP_HIDDEN_LAYERS.get(dataset.name, _DEFAULT_HIDDEN)
    else:
        hidden = _check_hidden(hidden_layer_sizes)
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


def _check_hidden(sizes):
    """``hidden_layer_sizes`` as a tuple of positive ints (``()``: no hidden layer)."""
    import numbers

    if isinstance(sizes, numbers.Integral) and not isinstance(sizes, (bool, np.bool_)):
        sizes = (sizes,)
    if isinstance(sizes, str) or not hasattr(sizes, "__iter__"):
        raise TypeError(f"hidden_layer_sizes must be a tuple of positive ints (() for no hidden "
                        f"layer); got {sizes!r}")
    sizes = tuple(sizes)
    for v in sizes:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
            raise TypeError(f"hidden_layer_sizes must hold ints; got {v!r} in {sizes!r}")
        if v < 1:
            raise ValueError(f"hidden_layer_sizes must hold positive ints; got {sizes!r}")
    return tuple(int(v) for v in sizes)


#: Keywords renamed in issue 21 (old -> new); the old ones are a TypeError naming the new one.
_RENAMED = {"dataset": "data", "favourable_class": "favourable"}


#: How a scorer hands rows to the model (decided once, in :func:`as_scorer`).
INPUT_KINDS = {
    "readable": "an estimator/pipeline fitted on the readable frame: rows are decoded "
                "(codes -> category labels) into a DataFrame with the model's columns",
    "encoded_frame": "an estimator fitted on a DataFrame of the encoded columns: rows are "
                     "passed as a DataFrame with the model's column names and order",
    "encoded": "an estimator fitted on the encoded array X: rows are passed as an array",
    "callable": "a callable on the encoded array X",
}


class Scorer:
    """Batch scorer ``f(X) -> (n,)`` float64: probability of the favourable class.

    The one model protocol of fairlens.  A scorer always takes rows in the **encoded
    space** of its dataset (``data.X``, columns ``feature_names``) -- as an array in
    that column order, or as a DataFrame aligned by column name -- and hands the model a
    copy of them in the form the model was fitted on (``input_kind``, see
    :data:`INPUT_KINDS`).  Build it with :func:`as_scorer`, which documents the parameters.

    Parameters
    ----------
    model : estimator, pipeline or callable
        See :func:`as_scorer`.
    data : Dataset, optional
        See :func:`as_scorer`.
    favourable : default 1
        See :func:`as_scorer`.
    n_features : int, optional
        See :func:`as_scorer`.
    feature_names : list of str, optional
        See :func:`as_scorer`.
    input : {"auto", "readable", "encoded"}, default "auto"
        See :func:`as_scorer`.
    output : {"auto", "proba", "logit", "raw"}, default "auto"
        See :func:`as_scorer`.

    Attributes
    ----------
    input_kind : str
        How rows reach the model, a key of :data:`INPUT_KINDS`.
    n_calls, n_rows : int
        Model calls and rows scored (the "queries" of black-box testing);
        :meth:`reset_counts` zeroes both.
    output_dtype : numpy.dtype or None
        The dtype of the model's raw output (float32 networks have float32 precision).
    favourable : object
        The model class whose probability is the score.
    data : Dataset or None
        The dataset rows are decoded with.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.models import as_scorer
    >>> scorer = as_scorer(lambda X: np.full(len(X), 0.25))
    >>> scorer(np.zeros((2, 3))), scorer.input_kind
    (array([0.25, 0.25]), 'callable')
    """

    @strict_keywords(renamed=_RENAMED)
    def __init__(self, model, data=None, *, favourable=1, n_features=None, feature_names=None,
                 input="auto", output="auto"):
        dataset = data
        check_choice("input", input, ("auto", "readable", "encoded"))
        check_choice("output", output, ("auto", "proba", "logit", "raw"))
        n_features = check_int("n_features", n_features, min=1, allow_none=True)
        if feature_names is not None:
            if isinstance(feature_names, str) or not hasattr(feature_names, "__iter__"):
                raise TypeError(f"feature_names must be a list of column names; got {feature_names!r}")
            feature_names = [str(c) for c in feature_names]
            if len(set(feature_names)) != len(feature_names):
                raise ValueError(f"feature_names has duplicated names: {feature_names}")
            if n_features is not None and n_features != len(feature_names):
                raise ValueError(f"n_features={n_features} disagrees with the {len(feature_names)} "
                                 "feature_names; pass one of them")
        self.model = model
        self.data = data
        self.output = output
        self.n_calls = 0
        self.n_rows = 0
        self.output_dtype = None
        self._column = None
        if feature_names is None and dataset is not None:
            feature_names = list(dataset.feature_names)
        model_names = getattr(model, "feature_names_in_", None)
        if model_names is not None:
            model_names = [str(c) for c in model_names]
        if feature_names is None and model_names is not None:
            feature_names = list(model_names)
        self.feature_names = None if feature_names is None else [str(c) for c in feature_names]
        if n_features is None:
            n_features = (len(self.feature_names) if self.feature_names is not None
                          else getattr(model, "n_features_in_", None))
        self.n_features = None if n_features is None else int(n_features)
        self.model_feature_names = model_names

        if hasattr(model, "predict_proba"):
            self._fn = model.predict_proba
            self._kind = "proba"
            favourable = self._resolve_favourable(model, favourable, dataset, "favourable")
        elif callable(model):
            self._fn = model
            self._kind = "callable"
            if isinstance(favourable, (bool, np.bool_)) or favourable not in (0, 1):
                raise ValueError(
                    f"favourable={favourable!r}: a callable's classes are 0 and 1 "
                    "(its (n,) output is the probability of class 1, column k of an (n, 2) "
                    f"output that of class k); pass favourable=1 or 0"
                )
            if favourable == 0 and output == "raw":
                raise ValueError(
                    "favourable=0 with output='raw': fairlens cannot turn raw scores of "
                    "class 1 into scores of class 0; return (n, 2) probabilities, or negate "
                    "the scores yourself and pass favourable=1"
                )
        else:
            raise TypeError(
                f"model: {type(model).__name__} has no predict_proba and is not callable. Pass "
                "a fitted classifier with predict_proba (e.g. SVC(probability=True)), a "
                "pipeline ending in one, or a function mapping an (n, d) array to n scores."
            )
        self.favourable = favourable

        # ---- input kind, decided once
        if model_names is not None and self.feature_names is not None:
            missing = [c for c in model_names if c not in self.feature_names]
            extra = [c for c in self.feature_names if c not in model_names]
            if missing or extra:
                parts = []
                if missing:
                    parts.append(f"the model needs columns {missing} that the data lacks")
                if extra:
                    parts.append(f"the data has columns {extra} the model was not fitted on")
                raise ValueError(
                    "model and data disagree on the feature columns: " + "; ".join(parts)
                    + ". Pass the dataset the model was fitted on (for a model that ignores "
                    "some columns, wrap it in a callable that drops them)."
                )
        if self._kind == "callable":
            kind = "callable"
        elif model_names is None:
            kind = "encoded"
            if input == "readable":
                raise ValueError(
                    "input='readable' needs a model fitted on a DataFrame (with "
                    "feature_names_in_); this model was fitted on an array"
                )
        elif input == "encoded" or dataset is None or not getattr(dataset, "categories", None):
            kind = "encoded_frame"
        elif input == "readable":
            kind = "readable"
        else:
            kind = self._probe_input_kind()
        self.input_kind = kind

    # ------------------------------------------------------------------ setup
    @staticmethod
    def _resolve_favourable(model, favourable, dataset, arg="favourable"):
        classes = getattr(model, "classes_", None)
        if classes is None:
            # no classes_: like a callable's, its classes are 0 and 1 (else the column picked
            # for an unknown label would be a silent guess)
            if isinstance(favourable, (bool, np.bool_)) or favourable not in (0, 1):
                raise ValueError(
                    f"{arg}={favourable!r}: the model has no classes_, so its classes are taken as "
                    "0 and 1 (column k of its predict_proba is class k; a one-column output is class "
                    f"1); pass {arg}=1 or 0, or give the model a classes_ attribute"
                )
            return favourable
        classes = list(np.asarray(classes).tolist())
        if len(classes) != 2:
            raise ValueError(
                f"model has {len(classes)} classes {classes}; fairlens scores binary "
                "classifiers (favourable vs. not)"
            )
        # fairlens's y = 1 is the favourable outcome: a model fitted on the readable target
        # labels is matched through the dataset (only for the default 1, never for an
        # explicit label that the model lacks, which is an error below)
        if favourable == 1 and favourable not in classes and dataset is not None:
            label = getattr(dataset, "label_names", {}).get(1)
            frame = getattr(dataset, "frame", None)
            target = getattr(dataset, "target", None)
            if frame is not None and target in getattr(frame, "columns", ()):
                fav = _first_values(frame[target].to_numpy()[np.asarray(dataset.y) == 1])
                if len(fav) == 1 and fav[0] in classes:
                    label = fav[0]
            if label in classes:
                favourable = label
        if favourable not in classes:
            raise ValueError(
                f"{arg}={favourable!r} is not one of the model's classes "
                f"{classes}; pass {arg}=<the class that is the favourable outcome>"
            )
        return favourable

    def _probe_input_kind(self):
        """Readable first (a readable-frame pipeline with ``handle_unknown='ignore'`` would
        accept codes silently; a numeric model refuses category labels loudly)."""
        X = np.asarray(self.data.X[: min(8, self.data.n_samples)], dtype=np.float64)
        errors = {}
        for kind in ("readable", "encoded_frame"):
            try:
                out = self._raw(X, kind)
                self._to_scores(out, X.shape[0], check_range=False)
                return kind
            except Exception as exc:  # noqa: BLE001 - reported below
                errors[kind] = f"{type(exc).__name__}: {exc}"
        raise ValueError(
            "could not call the model on this dataset's rows, neither as the readable frame "
            f"({errors['readable']}) nor as the encoded columns ({errors['encoded_frame']}). "
            "Check that the model was fitted on this dataset's columns."
        )

    def describe(self) -> str:
        """One line saying what the model is and how it is called.

        Returns
        -------
        str
            The model's type and the :data:`INPUT_KINDS` entry of ``input_kind``.

        Examples
        --------
        >>> from fairlens.models import as_scorer
        >>> def f(X):
        ...     return X[:, 0] * 0
        >>> as_scorer(f).describe()
        'function: a callable on the encoded array X'
        """
        return f"{type(self.model).__name__}: {INPUT_KINDS[self.input_kind]}"

    def reset_counts(self):
        """Set ``n_calls`` and ``n_rows`` back to 0.

        Returns
        -------
        None

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.models import as_scorer
        >>> s = as_scorer(lambda X: X[:, 0] * 0)
        >>> _ = s(np.zeros((4, 1))); s.reset_counts(); s.n_rows
        0
        """
        self.n_calls = 0
        self.n_rows = 0

    # ------------------------------------------------------------------ calls
    def check_X(self, X, name="X") -> np.ndarray:
        """Encoded rows as a C-contiguous float64 array in ``feature_names`` order.

        Parameters
        ----------
        X : array-like of shape (n, d) or DataFrame
            Encoded rows; a DataFrame is aligned by column name (a missing or extra column
            is an error; a readable frame with category labels is encoded through ``data``).
        name : str, default "X"
            The argument's name in error messages.

        Returns
        -------
        ndarray of shape (n, d), float64

        Raises
        ------
        TypeError
            If ``X`` is not numeric (and cannot be encoded).
        ValueError
            If the shape or the columns do not match, or ``X`` holds NaN or inf.

        Examples
        --------
        >>> from fairlens.models import as_scorer
        >>> as_scorer(lambda X: X[:, 0] * 0, n_features=2).check_X([[1, 2]])
        array([[1., 2.]])
        """
        return _as_encoded(X, self.feature_names, self.n_features, self.data, name)

    def _raw(self, X, kind):
        return self._fn(self._in_form(X, kind))

    def _in_form(self, X, kind):
        # The model never receives an array fairlens keeps using: a model that writes into
        # its input (e.g. normalises in place) must not corrupt a search's buffers.  A copy,
        # not a read-only view: read-only arrays make some models raise.
        if kind in ("callable", "encoded"):
            return np.array(X, dtype=np.float64, order="C", copy=True)
        if kind == "readable":
            # only the columns the model reads are decoded (a wide table's others cost time)
            return self.data.decode(X, columns=self.model_feature_names)
        else:
            import pandas as pd

            frame = pd.DataFrame(np.array(X, dtype=np.float64, copy=True), columns=self.feature_names)
        return frame[self.model_feature_names]

    def model_input(self, X):
        """Encoded rows ``X`` in the form the model was fitted on (to refit a clone).

        Parameters
        ----------
        X : array-like of shape (n, d) or DataFrame
            Encoded rows (see :meth:`check_X`).

        Returns
        -------
        ndarray or DataFrame
            A copy: the readable frame, an encoded DataFrame in the model's column order,
            or the array.

        Examples
        --------
        >>> from fairlens.models import as_scorer
        >>> as_scorer(lambda X: X[:, 0] * 0, n_features=1).model_input([[3.0]])
        array([[3.]])
        """
        return self._in_form(self.check_X(X), self.input_kind)

    def model_labels(self, y):
        """fairlens labels as the model's own classes (to refit a clone of the model).

        Parameters
        ----------
        y : array-like of shape (n,)
            fairlens labels: 1 = favourable, 0 = not.

        Returns
        -------
        ndarray of shape (n,)
            The labels in the model's classes (e.g. ``"good"``/``"bad"`` for a model fitted
            on the readable target); unchanged for a model without ``classes_``.

        Examples
        --------
        >>> from fairlens.models import as_scorer
        >>> as_scorer(lambda X: X[:, 0] * 0).model_labels([1, 0])
        array([1, 0])
        """
        y = np.asarray(y)
        classes = getattr(self.model, "classes_", None)
        if classes is None:
            return y
        classes = np.asarray(classes)
        fav = self.favourable
        other = [c for c in classes.tolist() if c != fav][0]
        if fav == 1 and other == 0:
            return y
        return np.where(y == 1, np.asarray(fav, dtype=object),
                        np.asarray(other, dtype=object)).astype(classes.dtype)

    def _to_scores(self, out, n, check_range=True, check_finite=True):
        out = np.asarray(out)
        if out.dtype.kind not in "fiub":
            raise TypeError(
                f"the model returned {out.dtype} values; a scorer must return numbers")
        self.output_dtype = out.dtype
        out = out.astype(np.float64, copy=False)
        if out.ndim == 2 and out.shape == (n, 2):
            col = self._column_index()
            out = out[:, col]
            flip = False
        elif out.ndim == 2 and out.shape == (n, 1):
            out = out[:, 0]
            flip = True
        else:
            flip = out.ndim == 1
        if out.shape != (n,):
            raise ValueError(
                f"the model returned shape {out.shape} for {n} rows; a scorer must return "
                f"({n},) scores or ({n}, 2) class probabilities"
            )
        finite = np.isfinite(out)
        if check_finite and not np.all(finite):
            raise ValueError("the model returned non-finite scores (nan or inf)")
        # a one-column output (a callable's or a predict_proba's) scores class 1 (the second of
        # classes_): the other class as favourable takes its complement
        flip = flip and self._favourable_is_first()
        if flip and self.output == "raw":
            raise ValueError(
                f"favourable={self.favourable!r} with output='raw': the model returned one "
                "score per row (of class 1, the second of its classes), and fairlens cannot turn raw "
                "scores of that class into scores of the other; return (n, 2) probabilities, or negate "
                "the scores yourself and pass the second class as favourable"
            )
        if self.output == "logit":
            from scipy.special import expit

            out = expit(-out if flip else out)  # expit(+-inf) = 1/0; NaN stays NaN
            flip = False
        elif check_range and self.output != "raw" and finite.any() and (
                out[finite].min() < 0.0 or out[finite].max() > 1.0):
            raise ValueError(
                f"the model returned scores in [{out.min():.4g}, {out.max():.4g}], outside "
                "[0, 1]: fairlens thresholds probabilities of the favourable class. If these "
                "are logits or decision values pass output='logit' (the sigmoid is applied), "
                "else return probabilities."
            )
        return 1.0 - out if flip else out

    def _favourable_is_first(self):
        """Whether the favourable class is the first of the model's two (class 0), whose score is
        the complement of a one-column output."""
        classes = getattr(self.model, "classes_", None) if self._kind == "proba" else None
        if classes is not None:
            return bool(list(np.asarray(classes).tolist()).index(self.favourable) == 0)
        return bool(self.favourable == 0)

    def _column_index(self):
        if self._column is None:
            classes = getattr(self.model, "classes_", None)
            if classes is not None:
                self._column = list(np.asarray(classes).tolist()).index(self.favourable)
            else:
                self._column = int(self.favourable == 1)
        return self._column

    def __call__(self, X, *, check_finite=True) -> np.ndarray:
        """Scores of the rows ``X``.

        Parameters
        ----------
        X : array-like of shape (n, d) or DataFrame
            Encoded rows (see :meth:`check_X`); the model receives a copy.
        check_finite : bool, default True
            ``False`` returns NaN/inf answers as they are (NaN for a logit's inf) instead
            of raising, for audits that flag them.

        Returns
        -------
        ndarray of shape (n,), float64
            Probability of the favourable class for each row.

        Raises
        ------
        ValueError
            If the model returns the wrong shape, scores outside [0, 1] (``output="auto"``)
            or non-finite scores, or a DataFrame-fitted model cannot score encoded rows
            without ``data``.
        TypeError
            If the model returns non-numbers.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.models import as_scorer
        >>> as_scorer(lambda X: X[:, 0])(np.array([[0.2], [0.9]]))
        array([0.2, 0.9])
        """
        X = self.check_X(X)
        n = X.shape[0]
        if n == 0:
            return np.empty(0, dtype=np.float64)
        try:
            raw = self._raw(X, self.input_kind)
        except Exception as exc:
            if self.input_kind == "encoded_frame" and self.data is None:
                # a model fitted on the readable frame cannot score codes, and without the
                # dataset fairlens cannot decode them: say so instead of the model's error
                raise ValueError(
                    f"the model could not score encoded rows ({type(exc).__name__}: {exc}). If "
                    "it was fitted on the readable frame (category labels), pass data=<the "
                    "Dataset> so that fairlens can decode the rows"
                ) from exc
            raise
        out = self._to_scores(raw, n, check_finite=check_finite)
        self.n_calls += 1
        self.n_rows += n
        return out

    # old names of two attributes (fairlens < 0.3), read and written through
    @property
    def dataset(self):
        """Old name of :attr:`data`."""
        return self.data

    @dataset.setter
    def dataset(self, value):
        self.data = value

    @property
    def favourable_class(self):
        """Old name of :attr:`favourable`."""
        return self.favourable

    def _for_workers(self):
        """A shallow copy to ship to parallel workers: ``data`` keeps its columns, types and
        category tables but none of its rows (what :meth:`__call__` needs to decode rows for
        a readable-frame model), so a payload no longer carries the whole table (about 10 MB
        on census).  Used only by :class:`fairlens._parallel.Payload` when it is pickled; the
        scores are the same (the rows of ``data`` are read only when the scorer is built)."""
        import copy

        c = copy.copy(self)
        if self.data is not None and getattr(self.data, "n_samples", 0):
            c.data = self.data.subset(np.empty(0, dtype=np.int64))
        return c

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_fn", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._fn = self.model.predict_proba if self._kind == "proba" else self.model


def _same(a, b):
    """Whether two class labels are equal (numpy scalars included; never an array)."""
    try:
        return bool(a == b) and type(a == b) is not np.ndarray
    except (TypeError, ValueError):
        return False


def _first_values(values):
    out = []
    for v in values:
        if v not in out:
            out.append(v)
            if len(out) > 1:
                break
    return out


def _as_encoded(X, feature_names, n_features, dataset, name="X"):
    """Shared input check: DataFrames aligned by name, arrays checked for shape/finiteness."""
    if hasattr(X, "columns") and hasattr(X, "iloc"):
        cols = [str(c) for c in X.columns]
        if feature_names is not None:
            missing = [c for c in feature_names if c not in cols]
            extra = [c for c in cols if c not in feature_names]
            if missing or extra:
                raise ValueError(
                    f"{name}: DataFrame columns do not match the features "
                    + (f"(missing {missing}) " if missing else "")
                    + (f"(unexpected {extra}) " if extra else "")
                    + f"; expected the columns {list(feature_names)}"
                )
            if len(set(cols)) != len(cols):
                raise ValueError(f"{name}: DataFrame has duplicated column names")
            X = X.set_axis(cols, axis=1)[list(feature_names)]
        from pandas.api.types import is_bool_dtype, is_numeric_dtype

        numeric = all(is_numeric_dtype(dt) or is_bool_dtype(dt) for dt in X.dtypes)
        if not numeric:
            if dataset is None:
                bad = [c for c, dt in zip(X.columns, X.dtypes) if not is_numeric_dtype(dt)]
                raise TypeError(
                    f"{name}: columns {bad} are not numeric; pass encoded rows, or a dataset "
                    "to encode readable rows"
                )
            X = dataset.encode(X)
        X = X.to_numpy(dtype=np.float64) if hasattr(X, "to_numpy") else X
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a numeric 2-D array or a DataFrame") from None
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features); got shape {X.shape}")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{name} has {X.shape[1]} features; the model expects {n_features}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or inf; fairlens does not impute (fill or drop them)")
    return np.ascontiguousarray(X)


@strict_keywords(renamed=_RENAMED)
@validated({
    "model": "no_validation", "data": "no_validation", "favourable": "no_validation",
    "n_features": [Interval(numbers.Integral, 1, None), None], "feature_names": "no_validation",
    "input": [Options("auto", "readable", "encoded")], "output": [Options("auto", "proba", "logit", "raw")],
})
def as_scorer(model, data=None, *, favourable=1, n_features=None, feature_names=None,
              input="auto", output="auto") -> Scorer:
    """Adapt ``model`` into a :class:`Scorer` (idempotent on a Scorer): the one model protocol.

    Parameters
    ----------
    model : estimator, pipeline, callable or Scorer
        (a) a fitted binary classifier or pipeline with ``predict_proba`` fitted on the
        dataset's **readable frame** (``data.frame[data.feature_names]``: category
        labels, real values); (b) one fitted on the **encoded** ``data.X`` (an array,
        or a DataFrame of the encoded columns); (c) a **callable** mapping an ``(n, d)``
        encoded array to ``(n,)`` scores of class 1 or ``(n, 2)`` class probabilities.  Which
        one it is, is decided here, once, from ``feature_names_in_``: a model without it takes
        arrays; one with it takes a DataFrame with its own column order, readable (decoded)
        when it accepts the category labels, else encoded.  ``scorer.input_kind`` and
        ``scorer.describe()`` state the decision.  The model always receives a copy of the
        rows, never an array fairlens keeps using.
    data : Dataset, optional
        The data the model is audited on; needed for readable-frame models and to align
        DataFrames by column name.
    favourable : default 1
        The model class whose probability is the score.  With ``data``, a model fitted
        on the readable target labels is matched through the dataset's favourable label.
        A callable's classes are 0 and 1 (and so are those of a model without ``classes_``). A
        one-column output ``p`` (shape ``(n,)`` or ``(n, 1)``, of a callable or of
        ``predict_proba``) is the probability of class 1, the second of the model's classes:
        with the other class as favourable (``favourable=0``) the score is ``1 - p`` (the
        sigmoid of ``-z`` for logits; refused for ``output="raw"``). For a ``model`` that is
        already a :class:`Scorer`, ``favourable`` and ``output`` other than their defaults must
        agree with it (a Scorer is returned as it is).
    n_features : int, optional
        Number of encoded columns (default: the dataset's, else the model's).
    feature_names : list of str, optional
        The encoded columns, in order (default: the dataset's, else the model's).
    input : {"auto", "readable", "encoded"}, default "auto"
        Override the decision for a DataFrame-fitted model.
    output : {"auto", "proba", "logit", "raw"}, default "auto"
        A callable must return probabilities in [0, 1] ("auto"/"proba"; scores outside
        are refused, since the methods threshold probabilities); "logit" applies the
        sigmoid to its (n,) output; "raw" passes scores through unchecked, for methods
        whose threshold the caller sets to the score's own scale.

    Returns
    -------
    Scorer
        Calling it on encoded rows returns the ``(n,)`` float64 scores.

    Raises
    ------
    TypeError
        If ``model`` has no ``predict_proba`` and is not callable, or an unknown keyword is given
        (``dataset=`` and ``favourable_class=``, the old names of ``data`` and ``favourable``,
        name the new ones).
    ValueError
        If ``favourable`` is not one of the model's classes (0 or 1 for a callable or a model
        without ``classes_``), the model and ``data`` disagree on the feature columns,
        ``input``/``output`` is not one of the choices, ``model`` is a Scorer and
        ``favourable``/``output`` disagree with it, or (when called) a one-column output would
        have to be flipped under ``output="raw"``.

    See Also
    --------
    Scorer : the adapted model.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.models import as_scorer
    >>> scorer = as_scorer(lambda X: 1 / (1 + np.exp(-X[:, 0])))
    >>> scorer(np.zeros((3, 2)))
    array([0.5, 0.5, 0.5])
    >>> scorer.n_rows
    3
    """
    if isinstance(model, Scorer):
        fav_name = "favourable"
        # a Scorer is returned as it is: an argument it would ignore must agree with it
        if not (type(favourable) is int and favourable == 1) and not _same(favourable, model.favourable):
            raise ValueError(
                f"{fav_name}={favourable!r}: model is already a Scorer, scoring the favourable class "
                f"{model.favourable!r}, and as_scorer returns a Scorer as it is. Build it with "
                f"as_scorer(<the model>, {fav_name}={favourable!r}), or pass the Scorer without {fav_name}."
            )
        if output != "auto" and {"auto": "proba"}.get(model.output, model.output) != output:
            raise ValueError(
                f"output={output!r}: model is already a Scorer with output={model.output!r}, and as_scorer "
                f"returns a Scorer as it is. Build it with as_scorer(<the model>, output={output!r}), or "
                "pass the Scorer without output."
            )
        if data is not None and model.data is None and model.feature_names is None:
            model.feature_names = list(data.feature_names)
            model.data = data
        return model
    return Scorer(model, data, favourable=favourable, n_features=n_features,
                  feature_names=feature_names, input=input, output=output)


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


@validated({
    "model": "no_validation", "X": "no_validation", "output": [Options("proba", "logit")],
})
def mlp_input_gradient(model, X, output="proba") -> np.ndarray:
    """Analytic gradient of a binary ``MLPClassifier``'s positive-class output w.r.t. ``X``.

    Back-propagation through the fitted weights (``coefs_``, ``intercepts_``) for the hidden
    activation of the network; through a leading ``StandardScaler``/``MinMaxScaler`` by the
    chain rule.

    Parameters
    ----------
    model : MLPClassifier or Pipeline
        Fitted binary network (one logistic output unit).
    X : array-like of shape (n, d) or (d,)
        Encoded rows (finite), in the order the network was fitted on.
    output : {"proba", "logit"}, default "proba"
        Differentiate P(class 1 | x) or the pre-sigmoid output z(x).

    Returns
    -------
    ndarray of shape (n, d)
        The gradient at each row.

    Raises
    ------
    TypeError
        If ``model`` is not an MLPClassifier (or a pipeline of scalers ending in one).
    ValueError
        If the network is not fitted or not binary, ``output`` is unknown, or ``X`` has the
        wrong number of features or holds NaN/inf.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.neural_network import MLPClassifier
    >>> from fairlens.models import mlp_input_gradient
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 0, 1, 1])
    >>> net = MLPClassifier(hidden_layer_sizes=(), max_iter=50, random_state=0).fit(X, y)
    >>> mlp_input_gradient(net, X).shape
    (4, 1)
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
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features); got shape {X.shape}")
    if X.shape[1] != mlp.coefs_[0].shape[0]:
        raise ValueError(f"X has {X.shape[1]} features; the network expects "
                         f"{mlp.coefs_[0].shape[0]}")
    if not np.all(np.isfinite(X)):
        bad = np.argwhere(~np.isfinite(X))[0]
        raise ValueError(f"X contains NaN or inf (first at row {int(bad[0])}, column {int(bad[1])}): the "
                         "gradient of a missing value is undefined; fill or drop those rows.")
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
