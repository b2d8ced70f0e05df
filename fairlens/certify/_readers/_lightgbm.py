"""Reader of LightGBM classifiers: ``lightgbm.LGBMClassifier`` and ``lightgbm.Booster`` (objectives
``binary``, ``multiclass``, ``multiclassova``; ``boosting="gbdt"``).

* Trees: ``dump_model()``, pre-order (node, left subtree, right subtree), trees in ``tree_info``
  order. LightGBM compares ``x <= threshold`` in double precision; the raw score is the double sum
  of the leaves (the init score is in the first tree).
* LightGBM's ``predict`` reads every ``|x| <= 1.0000000180025095e-35`` (``kZeroThreshold``) as 0 and
  clamps ``|x| >= 1e300`` to ``+-1e300``; a split of the negatives from zero is stored at
  ``-kZeroThreshold``: the ensemble reads its input that way (:class:`LightGBMLibrary`), moves each
  threshold inside the zero band to the equivalent one outside it (:func:`lgb_threshold`) and never
  tries an attack value inside it (:func:`_zero_tops`).
* Missing values, per node ``missing_type``: ``"NaN"`` -- NaN takes ``default_left``; ``"None"`` (no NaN
  in training, or ``use_missing=False``) -- NaN is read as 0 and compared: left iff ``0 <= threshold``;
  ``"Zero"`` (``zero_as_missing=True``) -- NaN *and* zero take ``default_left``: such a node is written
  as three plain threshold nodes (:func:`_tree`). ``predict`` accepts NaN.
* LightGBM stores the names it was fitted on with spaces replaced by underscores (``feature_names_in_``
  too) and its ``predict`` reads columns by position: a DataFrame is aligned by name under that
  renaming.
* Refused: regressors and rankers (``TypeError``), other objectives, ``boosting="rf"``, linear trees,
  categorical splits (``ValueError`` naming the feature).
"""
from __future__ import annotations

import numpy as np

from .._ensemble import Library, assemble, relevant_values64
from . import Reader, loaded_classes, not_a_classifier

_OBJECTIVES = ("binary", "multiclass", "multiclassova")

#: LightGBM's ``kZeroThreshold`` (the float ``1e-35f`` as a double): its ``predict`` reads every
#: ``|x| <= LGB_ZERO`` as exactly 0 (dense rows are pushed as sparse non-zeros), and a split of
#: the negatives from zero is stored at ``-LGB_ZERO``.
LGB_ZERO = float(np.float32(1e-35))

#: The largest double LightGBM reads as a negative number (``x <= LGB_ZERO_LO`` iff ``x < -LGB_ZERO``).
LGB_ZERO_LO = float(np.nextafter(-LGB_ZERO, -np.inf))

#: LightGBM reads every ``x >= 1e300`` (even inf) as 1e300.
LGB_BIG = 1e300


def _claims(model):
    classes = loaded_classes("lightgbm", "Booster", "LGBMModel")
    return bool(classes) and isinstance(model, classes)


class LightGBMLibrary(Library):
    """LightGBM's reading of its input, its ``predict`` (labels) and ``raw_score`` raw scores."""

    def __init__(self, booster):
        self.booster = bool(booster)

    def read_input(self, X64):
        # LightGBM reads |x| <= 1e-35f as 0 and clamps |x| >= 1e300 to +-1e300 (NaN kept)
        return np.clip(np.where(np.abs(X64) <= LGB_ZERO, 0.0, X64), -LGB_BIG, LGB_BIG)

    def frame(self, X):
        return X.rename(columns=lambda c: str(c).replace(" ", "_"))

    def predict(self, model, X64):
        if not self.booster:
            from ._sklearn import with_names  # deferred: circle: certify._readers._sklearn imports this module

            return np.asarray(model.predict(with_names(model, X64)))
        p = np.asarray(model.predict(X64))
        if p.ndim == 1:
            return np.argmax(np.column_stack([1.0 - p, p]), axis=1).astype(np.int64)
        return np.argmax(p, axis=1).astype(np.int64)

    def raw_scores(self, model, X64):
        if self.booster:
            return model.predict(X64, raw_score=True)
        from ._sklearn import with_names  # deferred: circle: certify._readers._sklearn imports this module

        return model.predict(with_names(model, X64), raw_score=True)


def lgb_threshold(t):
    """The threshold equivalent to LightGBM's ``x <= t`` on inputs as LightGBM reads them.

    Inputs are 0 or ``|x| > LGB_ZERO``; so ``t`` in ``[-LGB_ZERO, 0)`` sends left exactly the
    ``x < -LGB_ZERO`` (``x <= nextafter(-LGB_ZERO, -inf)``), and ``t`` in ``[0, LGB_ZERO]``
    exactly the ``x <= 0``. Other thresholds are unchanged.

    Parameters
    ----------
    t : float
        A dumped threshold.

    Returns
    -------
    float

    Examples
    --------
    >>> from fairlens.certify._readers._lightgbm import LGB_ZERO_LO, lgb_threshold
    >>> lgb_threshold(1e-36), lgb_threshold(-1e-36) == LGB_ZERO_LO, lgb_threshold(0.5)
    (0.0, True, 0.5)
    """
    if -LGB_ZERO <= t < 0.0:
        return LGB_ZERO_LO
    if 0.0 <= t <= LGB_ZERO:
        return 0.0
    return t


def _zero_tops(ptr, values):
    """Make every feature's top attack value one LightGBM does not read as something else.

    The top value is ``nextafter(t_max, inf)``; after :func:`lgb_threshold` it can only fall
    in LightGBM's zero band when ``t_max`` is 0 (top ``5e-324``, read as 0: use the first
    double above ``LGB_ZERO``) or ``LGB_ZERO_LO`` (top ``-LGB_ZERO``, read as 0 anyway: use 0).
    Every other value is a threshold, never inside the band.
    """
    for f in range(ptr.shape[0] - 1):
        if ptr[f + 1] > ptr[f]:
            k = ptr[f + 1] - 1
            v = values[k]
            if 0.0 < v <= LGB_ZERO:
                values[k] = float(np.nextafter(LGB_ZERO, np.inf))
            elif -LGB_ZERO <= v < 0.0:
                values[k] = 0.0
    return ptr, values


def _tree(root, names):
    """One LightGBM tree as plain ``x <= threshold`` nodes (pre-order; a DAG where a node is expanded),
    with the node's NaN direction as ``predict`` takes it.

    A ``missing_type="Zero"`` node (``zero_as_missing=True``) sends every input LightGBM reads as 0
    (``|x| <= LGB_ZERO``, and NaN, which it reads as 0 at such a node) to its default child and
    compares the others with its threshold. It becomes three plain nodes: ``P1: x <= LGB_ZERO_LO``
    (the negatives) -> ``N`` else ``P2``; ``P2: x <= 0`` (the zero band) -> the default child else
    ``N``; ``N: x <= threshold`` -> left/right. NaN goes right at ``P1`` and left at ``P2`` (to the
    default child, as predict sends it) and never reaches ``N`` (recorded as left). At a ``"NaN"``
    node NaN takes ``default_left``; at a ``"None"`` node LightGBM reads NaN as 0 and compares it:
    left iff ``0 <= threshold``.
    """
    feat, thr, L, R, val, D = [], [], [], [], [], []

    def new():
        feat.append(-1)
        thr.append(0.0)
        L.append(-1)
        R.append(-1)
        val.append(0.0)
        D.append(False)
        return len(feat) - 1

    def add(node):
        if "leaf_value" in node or "split_feature" not in node:
            i = new()
            if "leaf_coeff" in node or "leaf_features" in node:
                raise ValueError("LightGBM linear trees (linear_tree=True) are not supported.")
            val[i] = float(node.get("leaf_value", 0.0))
            return i
        f = int(node["split_feature"])
        if node.get("decision_type", "<=") != "<=":
            raise ValueError(f"feature {names[f]!r} (index {f}) has categorical splits in this LightGBM model; "
                             "categorical splits are not supported -- one-hot encode it instead.")
        kind = node.get("missing_type", "None")
        zero = kind == "Zero"
        dl = bool(node.get("default_left", True))
        if zero:
            p1, p2 = new(), new()
        i = new()
        raw = float(node["threshold"])
        feat[i] = f
        thr[i] = lgb_threshold(raw)
        D[i] = True if zero else (dl if kind == "NaN" else 0.0 <= raw)
        a = add(node["left_child"])
        b = add(node["right_child"])
        L[i], R[i] = a, b
        if zero:
            feat[p1], thr[p1], L[p1], R[p1], D[p1] = f, LGB_ZERO_LO, i, p2, False
            feat[p2], thr[p2], L[p2], R[p2], D[p2] = f, 0.0, (a if dl else b), i, True
            return p1
        return i

    add(root)
    return (np.asarray(feat, dtype=np.int64), np.asarray(thr, dtype=np.float64), np.asarray(L, dtype=np.int64),
            np.asarray(R, dtype=np.int64), np.asarray(val, dtype=np.float64), np.asarray(D, dtype=bool))


def _read(model):
    booster_only = isinstance(model, loaded_classes("lightgbm", "Booster"))
    if not booster_only:
        if not isinstance(model, loaded_classes("lightgbm", "LGBMClassifier")):
            raise not_a_classifier(model, "LGBMClassifier")
        if not getattr(model, "fitted_", False):
            raise ValueError("model (an LGBMClassifier) is not fitted; call fit first.")
    booster = model if booster_only else model.booster_
    dump = booster.dump_model()
    objective = str(dump.get("objective", "")).split(" ")[0]
    if objective not in _OBJECTIVES:
        raise ValueError(f"LightGBM objective {objective!r} is not supported; certify a classifier trained with "
                         "'binary', 'multiclass' or 'multiclassova'.")
    if dump.get("average_output", False):
        raise ValueError("LightGBM boosting='rf' (averaged output) is not supported; use boosting='gbdt'.")
    K_iter = int(dump["num_tree_per_iteration"])
    n_features = int(dump["max_feature_idx"]) + 1
    names = dump.get("feature_names") or [f"Column_{j}" for j in range(n_features)]
    trees, groups = [], []
    for k, ti in enumerate(dump["tree_info"]):
        trees.append(_tree(ti["tree_structure"], names))
        groups.append(1 if K_iter == 1 else k % K_iter)
    classes = np.arange(2 if K_iter == 1 else K_iter) if booster_only else np.asarray(model.classes_)
    K = 2 if K_iter == 1 else K_iter
    if len(classes) != K:
        raise ValueError(f"the LightGBM model has {K} outputs but {len(classes)} classes.")
    feature = np.concatenate([t[0] for t in trees]) if trees else np.zeros(0, np.int64)
    threshold = np.concatenate([t[1] for t in trees]) if trees else np.zeros(0)
    values = _zero_tops(*relevant_values64(feature, threshold, n_features))
    return assemble(trees, classes=classes, n_features=n_features, vote="additive", groups=groups, base=np.zeros(K),
                    f32=False, f32_input=False, source=type(model).__name__, model=model,
                    library=LightGBMLibrary(booster_only), feature_names_in=getattr(model, "feature_names_in_", None),
                    values=values)


def _fingerprint(model):
    """Everything :func:`_read` reads: the booster's model text (``model_to_string``: trees, objective,
    feature names; about 1/20 of the cost of the ``dump_model`` JSON that ``_read`` parses), its best
    iteration, and the classifier's classes and input feature names."""
    booster_only = isinstance(model, loaded_classes("lightgbm", "Booster"))
    if not booster_only and not getattr(model, "fitted_", False):
        return repr(("unfitted", id(model))).encode()  # not fitted: no content; _read says so
    booster = model if booster_only else model.booster_
    names = getattr(model, "feature_names_in_", None)
    extra = (getattr(booster, "best_iteration", None),
             None if booster_only else np.asarray(model.classes_).tolist(),
             None if names is None else list(names))
    return booster.model_to_string().encode() + repr(extra).encode()


READER = Reader("LightGBM", _claims, _read, _fingerprint)
