"""Reader of scikit-learn's decision trees and forests: ``DecisionTreeClassifier``,
``RandomForestClassifier``, ``ExtraTreesClassifier`` (and their subclasses).

* Trees: ``tree_.feature``/``threshold``/``children_left``/``children_right`` in the order of
  ``estimators_``; scikit-learn compares ``float32(x) <= threshold`` (float64 thresholds), so the
  ensemble rounds its inputs to float32 and its relevant values are float32 numbers.
* Leaves: ``tree_.value`` (what ``tree_.predict`` returns: class fractions in scikit-learn >= 1.4) is
  the soft vote's payload; its ``argmax`` the tree's hard vote.
* Decision rule: ``predict`` is the soft vote (the mean of the leaves' vectors, first class on ties),
  replayed bit for bit; ``vote="hard"`` certifies the paper's majority of hard votes instead.
* Missing values: ``tree_.missing_go_to_left`` (scikit-learn >= 1.3; forests >= 1.4; ExtraTrees >= 1.6;
  False where the installed version does not record it). A tree fitted *without* NaN still accepts
  NaN and sends it to the child that received more training samples (the stored flag). Whether
  ``predict`` accepts NaN is asked literally, once per model (:class:`SklearnTrees`).
"""
from __future__ import annotations

import warnings

import numpy as np

from .._ensemble import Library, assemble
from . import Reader


def _classes():
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier

    return RandomForestClassifier, ExtraTreesClassifier, DecisionTreeClassifier


def _claims(model):
    return isinstance(model, _classes())


def probe_nan(model):
    """Whether a scikit-learn model's ``predict`` accepts one all-NaN row (asked literally)."""
    d = int(model.n_features_in_)
    X = np.full((1, d), np.nan)
    names = getattr(model, "feature_names_in_", None)
    if names is not None:
        import pandas as pd

        X = pd.DataFrame(X, columns=list(names))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.predict(X)
    except ValueError:
        return False
    return True


def with_names(model, X64):
    """``X64`` as a DataFrame with the model's ``feature_names_in_`` (when fitted on one), for its ``predict``."""
    names = getattr(model, "feature_names_in_", None)
    if names is None:
        return X64
    import pandas as pd

    return pd.DataFrame(X64, columns=list(names))


class SklearnTrees(Library):
    """scikit-learn trees and forests: the replay is their ``predict`` (``exact``); whether ``predict``
    accepts NaN is asked of the model once (one all-NaN row) and remembered."""

    exact = True

    def __init__(self):
        self._nan = None

    def accepts_nan(self, model):
        if self._nan is None:
            self._nan = probe_nan(model)
        return self._nan

    def predict(self, model, X64):
        return model.predict(with_names(model, X64))


def tree_arrays(est, feature_map=None):
    """One fitted scikit-learn tree as ``(feature, threshold, left, right, value, missing_left, leaf_class)``
    (``feature_map`` maps the tree's columns to the model's, for a tree fitted on a subset)."""
    tree = est.tree_
    if tree.n_outputs != 1:
        raise ValueError("multi-output trees are not supported; fit one classifier per output.")
    feat = np.asarray(tree.feature, dtype=np.int64).copy()
    internal = feat >= 0
    if feature_map is not None:
        feat[internal] = np.asarray(feature_map, dtype=np.int64)[feat[internal]]
    feat[~internal] = -1
    thr = np.asarray(tree.threshold, dtype=np.float64).copy()
    thr[~internal] = 0.0
    left = np.asarray(tree.children_left, dtype=np.int64).copy()
    right = np.asarray(tree.children_right, dtype=np.int64).copy()
    value = np.asarray(tree.value[:, 0, :], dtype=np.float64)
    leaf = np.argmax(value, axis=1).astype(np.int64)
    proba = value.copy()  # what tree_.predict returns (fractions in scikit-learn >= 1.4)
    proba[internal] = 0.0
    ml = getattr(tree, "missing_go_to_left", None)
    ml = np.zeros(tree.node_count, dtype=bool) if ml is None else np.asarray(ml, dtype=bool).copy()
    return feat, thr, left, right, proba, ml, leaf


def read_trees(model, trees, maps, classes, *, vote, votes, tie_class, library):
    """The ensemble of scikit-learn trees ``trees`` (columns mapped by ``maps``) voting over ``classes``."""
    K = len(classes)
    parts = [tree_arrays(t, m) for t, m in zip(trees, maps)]
    for p in parts:
        if p[4].shape[1] != K:
            raise ValueError(f"a tree of the forest knows {p[4].shape[1]} classes but the forest has {K}.")
    return assemble(parts, classes=classes, n_features=int(model.n_features_in_), vote=vote, votes=votes,
                    tie_class=tie_class, f32_input=True, source=type(model).__name__, library=library,
                    feature_names_in=getattr(model, "feature_names_in_", None))


def _read(model):
    from sklearn.utils.validation import check_is_fitted

    forest = not isinstance(model, _classes()[2])
    check_is_fitted(model, "estimators_" if forest else "tree_")
    if getattr(model, "n_outputs_", 1) != 1:
        raise ValueError(f"multi-output {'forests' if forest else 'trees'} are not supported; fit one "
                         f"{'forest' if forest else 'tree'} per output.")
    trees = list(model.estimators_) if forest else [model]
    return read_trees(model, trees, [None] * len(trees), np.asarray(model.classes_), vote="soft",
                      votes=("soft", "hard"), tie_class=-1, library=SklearnTrees())


READER = Reader("scikit-learn trees and forests", _claims, _read)
