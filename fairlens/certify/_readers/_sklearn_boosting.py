"""Reader of scikit-learn's gradient boosting: ``GradientBoostingClassifier`` and
``HistGradientBoostingClassifier`` (binary or multi-class).

* GradientBoosting: ``estimators_[i, k].tree_`` (one regression tree per class and round) compares
  ``float32(x) <= threshold``; the raw score is the constant init prediction (``init=None`` or
  ``"zero"``; ``_raw_predict_init``, pinned private API) plus ``learning_rate`` times the leaf values;
  ``predict`` decides ties ``>= 0``. Its ``predict`` refuses NaN.
* HistGradientBoosting: ``_predictors[iteration][k].nodes`` and ``_baseline_prediction`` (pinned
  private API, scikit-learn 1.4-1.9) compare ``x <= threshold`` in double precision; NaN follows
  ``missing_go_to_left`` (a feature without NaN in training sends it to the child with more samples);
  whether ``predict`` accepts NaN is asked literally, once per model. Categorical features are refused
  (naming the feature).
* Regressors are refused (``TypeError``).
"""
from __future__ import annotations

import numpy as np

from .._ensemble import Library, assemble
from . import Reader, not_a_classifier
from ._sklearn import probe_nan, with_names


def _classes():
    from sklearn.ensemble import (
        GradientBoostingClassifier,
        GradientBoostingRegressor,
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
    )

    return (GradientBoostingClassifier, HistGradientBoostingClassifier), (GradientBoostingRegressor,
                                                                          HistGradientBoostingRegressor)


def _claims(model):
    ok, regressors = _classes()
    return isinstance(model, ok + regressors)


class SklearnBoosting(Library):
    """scikit-learn's ``predict`` and ``decision_function``; whether ``predict`` accepts NaN is asked once
    (GradientBoosting: never)."""

    def __init__(self, hist):
        self.hist = bool(hist)
        self._nan = None

    def accepts_nan(self, model):
        if not self.hist:
            return False
        if self._nan is None:
            self._nan = probe_nan(model)
        return self._nan

    def predict(self, model, X64):
        return np.asarray(model.predict(with_names(model, X64)))

    def raw_scores(self, model, X64):
        return model.decision_function(with_names(model, X64))


def _base(raw, K_iter):
    K = 2 if K_iter == 1 else K_iter
    base = np.zeros(K)
    if K_iter == 1:
        base[1] = raw[0]
    else:
        base[:] = raw
    return base


def _read_gb(model):
    from sklearn.dummy import DummyClassifier
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(model, "estimators_")
    init = model.init_
    if not (isinstance(init, str) and init == "zero") and not isinstance(init, DummyClassifier):
        raise ValueError(f"GradientBoostingClassifier with init={type(init).__name__} is not supported: its "
                         "raw score is not a constant plus trees; use init=None (the default) or 'zero'.")
    n_features = int(model.n_features_in_)
    # the init raw prediction is a constant (prior or zero); pinned private API, see tests
    base_raw = np.asarray(model._raw_predict_init(np.zeros((1, n_features))), dtype=np.float64)[0]
    est = model.estimators_
    K_iter = est.shape[1]
    lr = float(model.learning_rate)
    trees, groups = [], []
    for i in range(est.shape[0]):
        for k in range(K_iter):
            tr = est[i, k].tree_
            feat = np.asarray(tr.feature, dtype=np.int64).copy()
            leaf = tr.children_left < 0
            feat[leaf] = -1
            thr = np.where(leaf, 0.0, np.asarray(tr.threshold, dtype=np.float64))
            val = np.where(leaf, lr * np.asarray(tr.value[:, 0, 0], dtype=np.float64), 0.0)
            mgl = getattr(tr, "missing_go_to_left", np.zeros(leaf.shape, dtype=np.uint8))
            trees.append((feat, thr, np.asarray(tr.children_left, dtype=np.int64),
                          np.asarray(tr.children_right, dtype=np.int64), val, np.asarray(mgl, dtype=bool)))
            groups.append(1 if K_iter == 1 else k)
    return assemble(trees, classes=np.asarray(model.classes_), n_features=n_features, vote="additive", groups=groups,
                    base=_base(base_raw, K_iter), f32=False, f32_input=True, source=type(model).__name__, model=model,
                    library=SklearnBoosting(hist=False), feature_names_in=getattr(model, "feature_names_in_", None))


def _read_hgb(model):
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(model, "_predictors")
    n_features = int(model.n_features_in_)
    names_in = getattr(model, "feature_names_in_", None)
    names = [str(c) for c in names_in] if names_in is not None else [f"x{j}" for j in range(n_features)]
    is_cat = getattr(model, "is_categorical_", None)
    if is_cat is not None and np.any(is_cat):
        f = int(np.flatnonzero(is_cat)[0])
        raise ValueError(f"feature {names[f]!r} (index {f}) is categorical in this HistGradientBoostingClassifier; "
                         "categorical splits are not supported -- one-hot encode it instead "
                         "(or fit with categorical_features=None).")
    # pinned private API (scikit-learn 1.4-1.9): _predictors[iteration][k].nodes, _baseline_prediction
    baseline = np.asarray(model._baseline_prediction, dtype=np.float64).reshape(-1)
    trees, groups = [], []
    K_iter = len(model._predictors[0]) if model._predictors else 1
    for it in model._predictors:
        for k, pred in enumerate(it):
            nd = pred.nodes
            leaf = nd["is_leaf"].astype(bool)
            if np.any(nd["is_categorical"][~leaf]):
                f = int(nd["feature_idx"][~leaf][nd["is_categorical"][~leaf].astype(bool)][0])
                raise ValueError(f"feature {names[f]!r} (index {f}) has categorical splits; not supported.")
            feat = np.where(leaf, -1, nd["feature_idx"]).astype(np.int64)
            thr = np.where(leaf, 0.0, nd["num_threshold"]).astype(np.float64)
            L = np.where(leaf, -1, nd["left"].astype(np.int64))
            R = np.where(leaf, -1, nd["right"].astype(np.int64))
            val = np.where(leaf, nd["value"], 0.0).astype(np.float64)
            trees.append((feat, thr, L, R, val, nd["missing_go_to_left"].astype(bool)))
            groups.append(1 if K_iter == 1 else k)
    return assemble(trees, classes=np.asarray(model.classes_), n_features=n_features, vote="additive", groups=groups,
                    base=_base(baseline, K_iter), f32=False, f32_input=False, source=type(model).__name__,
                    model=model, library=SklearnBoosting(hist=True), feature_names_in=names_in)


def _read(model):
    (gb, hgb), _ = _classes()
    if isinstance(model, gb):
        return _read_gb(model)
    if isinstance(model, hgb):
        return _read_hgb(model)
    raise not_a_classifier(model, "GradientBoostingClassifier or HistGradientBoostingClassifier")


READER = Reader("scikit-learn GradientBoosting, HistGradientBoosting", _claims, _read)
