"""Reader of CatBoost classifiers (numeric features; binary ``Logloss``/``CrossEntropy``, ``MultiClass``,
``MultiClassOneVsAll``): summed raw scores, certified like every boosted model.

CatBoost grows *oblivious* trees: every node of a level tests the same split, and a row's leaf is
``sum_d [x_{f_d} > border_d] << d`` over the levels ``d``. The reader reads the model's own JSON
export (``save_model(format="json")``) and writes each oblivious tree as a plain binary tree (level
``d`` at depth ``d``; the left child ``x <= border`` is bit 0), so the engine's one split rule
applies: CatBoost compares the input as float32 with float32 borders (``float32(x) > border`` is
bit 1), exactly scikit-learn's ``float32(x) <= threshold`` going left. A multi-class tree adds one
value per class at its leaf: it is written as one scalar tree per class (same splits). The raw
score is ``scale * sum + bias`` (``scale_and_bias``): leaf values are multiplied by ``scale``
and ``bias`` is the base score; the replay is checked against
``predict(prediction_type="RawFormulaVal")`` on every certified row and a candidate witness inside
the ambiguity zone is decided by CatBoost's own ``predict``.

Missing values: a float feature's ``nan_value_treatment`` says where NaN goes -- ``"AsTrue"``
(``nan_mode="Max"``): every split of the feature is true (right); ``"AsFalse"`` (``nan_mode="Min"``)
and ``"AsIs"`` (a feature without NaN in training; ``NaN > border`` is false): left. That is the
recorded ``missing_left`` of every node, and CatBoost's ``predict`` accepts NaN.

Refused (``ValueError`` naming ``model``): categorical, text or embedding features, other losses,
a probability threshold other than 0.5 (``set_probability_threshold``); regressors and rankers are
a ``TypeError``.
"""
from __future__ import annotations

import json
import os
import tempfile

import numpy as np

from .._ensemble import Library, assemble
from . import Reader, loaded_classes

_LOSSES = ("Logloss", "CrossEntropy", "MultiClass", "MultiClassOneVsAll")


def _claims(model):
    classes = loaded_classes("catboost", "CatBoost")
    return bool(classes) and isinstance(model, classes)


class CatBoostLibrary(Library):
    """CatBoost's own ``predict`` (labels) and raw scores (``prediction_type="RawFormulaVal"``)."""

    def predict(self, model, X64):
        return np.asarray(model.predict(X64)).reshape(-1)

    def raw_scores(self, model, X64):
        return np.asarray(model.predict(X64, prediction_type="RawFormulaVal"), dtype=np.float64)


def _export(model):
    """The model's JSON export (CatBoost writes it to a file)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.json")
        model.save_model(path, format="json")
        with open(path) as fh:
            return json.load(fh)


def _expand(splits, leaf_values, dim, k, scale, col, nan_left):
    """One oblivious tree (class ``k`` of ``dim`` values per leaf) as plain node arrays, pre-order."""
    depth = len(splits)
    feat, thr, L, R, val, ML = [], [], [], [], [], []

    def add(level, index):
        i = len(feat)
        feat.append(-1)
        thr.append(0.0)
        L.append(-1)
        R.append(-1)
        val.append(0.0)
        ML.append(False)
        if level == depth:
            val[i] = scale * float(leaf_values[index * dim + k])
            return i
        sp = splits[level]
        f = col[int(sp["float_feature_index"])]
        feat[i] = f
        thr[i] = float(np.float32(sp["border"]))
        ML[i] = nan_left[f]
        L[i] = add(level + 1, index)                    # x <= border: bit 0
        R[i] = add(level + 1, index | (1 << level))     # x > border: bit 1
        return i

    add(0, 0)
    return (np.asarray(feat, np.int64), np.asarray(thr, np.float64), np.asarray(L, np.int64), np.asarray(R, np.int64),
            np.asarray(val, np.float64), np.asarray(ML, bool))


def _read(model):
    name = type(model).__name__
    if not model.is_fitted():
        raise ValueError(f"model (a {name}) is not fitted; call fit first.")
    js = _export(model)
    params = js.get("model_info", {}).get("params", {})
    loss = str(params.get("loss_function", {}).get("type", "")) if isinstance(params, dict) else ""
    if loss not in _LOSSES:
        kind = "TypeError" if loss in ("RMSE", "MAE", "Quantile", "Poisson", "YetiRank", "PairLogit") else ""
        msg = (f"model (a {name}) has loss_function={loss!r}; certify reads CatBoost classifiers trained with "
               f"{', '.join(_LOSSES)} (regressors and rankers are not certified: certify decides a class).")
        raise (TypeError if kind else ValueError)(msg)
    info = js["features_info"]
    others = [k for k in ("categorical_features", "text_features", "embedding_features") if info.get(k)]
    if others or list(model.get_cat_feature_indices()):
        raise ValueError(f"model (a {name}) has {' and '.join(others) or 'categorical features'}: certify reads "
                         "CatBoost models on numeric features only (categorical splits are not certified); fit it "
                         "on a numeric encoding of those columns.")
    threshold = model.get_probability_threshold() if hasattr(model, "get_probability_threshold") else 0.5
    if loss in ("Logloss", "CrossEntropy") and threshold is not None and float(threshold) != 0.5:
        raise ValueError(f"model (a {name}) predicts with probability threshold {threshold}; certify certifies "
                         "the argmax of the raw scores (threshold 0.5): call model.set_probability_threshold(0.5) "
                         "or certify a copy without the threshold.")
    n_features = len(model.feature_names_)
    floats = info.get("float_features", [])
    col = {int(f["feature_index"]): int(f["flat_feature_index"]) for f in floats}
    nan_left = np.ones(n_features, bool)
    for f in floats:
        nan_left[int(f["flat_feature_index"])] = f.get("nan_value_treatment", "AsIs") != "AsTrue"
    scale, bias = js.get("scale_and_bias", [1.0, [0.0]])
    bias = np.atleast_1d(np.asarray(bias, dtype=np.float64))
    dim = int(bias.shape[0])
    trees, groups = [], []
    for t in js["oblivious_trees"]:
        splits = t.get("splits", [])
        bad = [s.get("split_type") for s in splits if s.get("split_type") != "FloatFeature"]
        if bad:
            raise ValueError(f"model (a {name}) has {bad[0]} splits: certify reads numeric (FloatFeature) splits only.")
        lv = t["leaf_values"]
        if len(lv) != dim << len(splits):
            raise ValueError(f"model (a {name}): a tree has {len(lv)} leaf values for depth {len(splits)} and "
                             f"{dim} dimensions; this CatBoost export is not supported.")
        for k in range(dim):
            trees.append(_expand(splits, lv, dim, k, float(scale), col, nan_left))
            groups.append(1 if dim == 1 else k)
    classes = np.asarray(model.classes_)
    K = 2 if dim == 1 else dim
    if len(classes) != K:
        raise ValueError(f"model (a {name}) has {dim} raw outputs but {len(classes)} classes; not supported.")
    base = np.zeros(K)
    if dim == 1:
        base[1] = bias[0]
    else:
        base[:] = bias
    names = [str(c) for c in model.feature_names_]
    names_in = None if names == [str(j) for j in range(n_features)] else np.asarray(names, dtype=object)
    ens = assemble(trees, classes=classes, n_features=n_features, vote="additive", groups=groups, base=base,
                   f32=False, f32_input=True, source=name, model=model, library=CatBoostLibrary())
    if names_in is not None:  # fitted on a DataFrame: its columns are aligned by name
        ens.feature_names_in = names_in
        ens.feature_names = list(names)
    return ens


READER = Reader("CatBoost", _claims, _read)
