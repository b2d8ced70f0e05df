"""Flatten fitted tree ensembles into arrays the certification kernels walk.

Certification (paper, section 4) is about the **majority vote of the trees'
hard predictions**. scikit-learn's ``RandomForestClassifier`` and
``ExtraTreesClassifier`` predict by *averaging probabilities* instead, so the
label certified here can differ from ``forest.predict`` on a few instances;
:meth:`FlatForest.predict` gives the voted label that is certified.

The float32 trap
----------------
scikit-learn trees cast inputs to float32 and compare them with float64
thresholds (``float32(x) <= threshold``). A float64 value a hair below a
threshold can therefore round *above* it. The kernels replay exactly this
comparison (inputs are rounded to float32 first), and the relevant attack
values of every feature are float32 numbers (:func:`relevant_values`), so
every witness behaves on the fitted scikit-learn trees exactly as certified.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import _kernels

__all__ = ["FlatForest", "flatten_forest", "relevant_values", "check_X"]


def relevant_values(feature, threshold, n_features):
    """Relevant attack values ``V_f`` (section 4.1), made float32-exact.

    For a float32 input ``z`` and a node threshold ``v``, ``z <= v`` holds iff
    ``z <= floor32(v)`` (the largest float32 not above ``v``). The values of
    feature ``f`` are the sorted distinct ``floor32(v)`` over all nodes testing
    ``f``, plus the next float32 above the largest one, which plays the role of
    the paper's ``+inf`` (scikit-learn rejects infinite inputs). Every interval
    between consecutive thresholds thus has exactly one representative.

    Returns
    -------
    values_ptr : (n_features + 1,) int64
    values : (n_values,) float64, values of feature ``f`` in
        ``values[values_ptr[f]:values_ptr[f + 1]]`` (empty if ``f`` is unused).
    """
    ptr = np.zeros(n_features + 1, dtype=np.int64)
    chunks = []
    for f in range(n_features):
        thr = np.asarray(threshold[feature == f], dtype=np.float64)
        if thr.size == 0:
            ptr[f + 1] = ptr[f]
            continue
        t32 = thr.astype(np.float32)
        above = t32.astype(np.float64) > thr
        t32[above] = np.nextafter(t32[above], np.float32(-np.inf))
        u = np.unique(t32)
        top = np.nextafter(u[-1], np.float32(np.inf))
        vals = np.concatenate([u, [top]]).astype(np.float64)
        chunks.append(vals)
        ptr[f + 1] = ptr[f] + vals.size
    values = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float64)
    return ptr, values


def check_X(X, n_features, name="X"):
    """Validate ``X`` and round it to float32 like scikit-learn's trees.

    Returns ``(X64, Xr)``: the validated float64 array and its float32-rounded
    float64 copy used by the kernels.
    """
    if hasattr(X, "to_numpy"):
        X = X.to_numpy()
    try:
        X64 = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric 2-D array; got {type(X).__name__}.") from exc
    if X64.ndim == 1:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features); for one row use {name}.reshape(1, -1).")
    if X64.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features); got {X64.ndim} dimensions.")
    if X64.shape[1] != n_features:
        raise ValueError(
            f"{name} has {X64.shape[1]} columns but the forest was fitted on {n_features} features; "
            "pass the same columns used to fit it."
        )
    if not np.all(np.isfinite(X64)):
        raise ValueError(f"{name} contains NaN or infinite values; impute or drop them before certifying.")
    with np.errstate(over="ignore"):
        X32 = X64.astype(np.float32)
    if not np.all(np.isfinite(X32)):
        raise ValueError(f"{name} has values outside the float32 range that scikit-learn trees work in.")
    return X64, np.ascontiguousarray(X32.astype(np.float64))


@dataclass
class FlatForest:
    """A tree ensemble as flat arrays, certified as a majority vote.

    Attributes
    ----------
    feature, threshold, left, right, leaf_class : node arrays over all trees
        (``feature == -1`` on leaves; ``leaf_class`` is a class *index*).
    roots : (n_trees,) int64 root node of every tree.
    classes_ : the class labels; ``leaf_class`` indexes them.
    n_features : number of input features.
    rank : (n_classes,) int64 tie-break priority: among classes with the same
        number of votes the smallest rank wins. By default ties go to the
        class listed first in ``classes_`` (``numpy.argmax``'s rule);
        ``tie_class`` puts one class first (the FPF uses the majority class).
    values_ptr, values : relevant attack values (see :func:`relevant_values`).
    source : name of the estimator class it came from.
    """

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    leaf_class: np.ndarray
    roots: np.ndarray
    classes_: np.ndarray
    n_features: int
    rank: np.ndarray
    values_ptr: np.ndarray
    values: np.ndarray
    source: str = "FlatForest"
    tie_class: int = -1
    feature_names: list | None = field(default=None, repr=False)

    @property
    def n_trees(self):
        return int(self.roots.shape[0])

    @property
    def n_classes(self):
        return int(len(self.classes_))

    def arrays(self):
        """The node arrays in kernel argument order."""
        return (self.feature, self.threshold, self.left, self.right, self.leaf_class, self.roots)

    def predict_trees(self, X):
        """Class index voted by every tree, shape (n_samples, n_trees)."""
        _, Xr = check_X(X, self.n_features)
        return _kernels.predict_trees(*self.arrays(), Xr)

    def vote_index(self, X):
        """Index (into ``classes_``) of the majority-vote prediction."""
        return _kernels.vote(self.predict_trees(X), self.n_classes, self.rank)

    def predict(self, X):
        """Majority vote of the trees' hard predictions (the certified label)."""
        return self.classes_[self.vote_index(X)]

    def encode_y(self, y, name="y"):
        """Map labels to class indices, with a clear error for unknown labels."""
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"{name} must be 1-D with one label per row; got shape {y.shape}.")
        lookup = {c.item() if hasattr(c, "item") else c: k for k, c in enumerate(self.classes_)}
        out = np.empty(y.shape[0], dtype=np.int64)
        for i, v in enumerate(y):
            key = v.item() if hasattr(v, "item") else v
            if key not in lookup:
                raise ValueError(
                    f"{name} contains the label {v!r}, which is not one of the forest's classes "
                    f"{list(self.classes_)}."
                )
            out[i] = lookup[key]
        return out


def _tree_arrays(est, feature_map=None):
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
    leaf = np.argmax(tree.value[:, 0, :], axis=1).astype(np.int64)
    return feat, thr, left, right, leaf


def flatten_forest(model, tie_class=None, feature_names=None):
    """Flatten a fitted classifier ensemble into a :class:`FlatForest`.

    Parameters
    ----------
    model : DecisionTreeClassifier, RandomForestClassifier, ExtraTreesClassifier,
        FeaturePartitionedForest or FlatForest (returned unchanged).
    tie_class : label, optional
        Class that wins ties of the vote. Default: the FPF's own rule (its
        majority class); for scikit-learn models the first class in
        ``classes_`` (``numpy.argmax``'s rule).
    feature_names : list of str, optional
        Kept for display in results and widgets.
    """
    from sklearn.base import is_classifier
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier
    from sklearn.utils.validation import check_is_fitted

    from ._fpf import FeaturePartitionedForest

    if isinstance(model, FlatForest):
        return model
    if isinstance(model, FeaturePartitionedForest):
        check_is_fitted(model, "estimators_")
        trees = list(model.estimators_)
        maps = list(model.estimators_features_)
        classes = np.asarray(model.classes_)
        n_features = int(model.n_features_in_)
        default_tie = int(model.majority_class_index_)
    elif isinstance(model, (RandomForestClassifier, ExtraTreesClassifier)):
        check_is_fitted(model, "estimators_")
        if getattr(model, "n_outputs_", 1) != 1:
            raise ValueError("multi-output forests are not supported; fit one forest per output.")
        trees = list(model.estimators_)
        maps = [None] * len(trees)
        classes = np.asarray(model.classes_)
        n_features = int(model.n_features_in_)
        default_tie = -1
    elif isinstance(model, DecisionTreeClassifier):
        check_is_fitted(model, "tree_")
        if getattr(model, "n_outputs_", 1) != 1:
            raise ValueError("multi-output trees are not supported; fit one tree per output.")
        trees = [model]
        maps = [None]
        classes = np.asarray(model.classes_)
        n_features = int(model.n_features_in_)
        default_tie = -1
    else:
        kind = "a regressor" if hasattr(model, "predict") and not is_classifier(model) else type(model).__name__
        raise TypeError(
            f"forest must be a fitted DecisionTreeClassifier, RandomForestClassifier, ExtraTreesClassifier "
            f"or FeaturePartitionedForest; got {kind}. Regression forests and boosted ensembles are not supported."
        )
    if classes.ndim != 1:
        raise ValueError("multi-output classifiers are not supported.")
    parts = [_tree_arrays(t, m) for t, m in zip(trees, maps)]
    offsets = np.cumsum([0] + [p[0].shape[0] for p in parts])
    feature = np.concatenate([p[0] for p in parts])
    threshold = np.concatenate([p[1] for p in parts])
    left = np.concatenate([np.where(p[2] >= 0, p[2] + o, -1) for p, o in zip(parts, offsets)])
    right = np.concatenate([np.where(p[3] >= 0, p[3] + o, -1) for p, o in zip(parts, offsets)])
    leaf = np.concatenate([p[4] for p in parts])
    roots = offsets[:-1].astype(np.int64)
    K = len(classes)
    if tie_class is None:
        tie = default_tie
    else:
        hits = np.flatnonzero(classes == tie_class)
        if hits.size != 1:
            raise ValueError(f"tie_class={tie_class!r} is not one of the classes {list(classes)}.")
        tie = int(hits[0])
    rank = np.arange(1, K + 1, dtype=np.int64)
    if tie >= 0:
        rank[tie] = 0
    vptr, vals = relevant_values(feature, threshold, n_features)
    if feature_names is None and hasattr(model, "feature_names_in_"):
        feature_names = [str(c) for c in model.feature_names_in_]
    return FlatForest(
        feature=np.ascontiguousarray(feature, dtype=np.int64),
        threshold=np.ascontiguousarray(threshold, dtype=np.float64),
        left=np.ascontiguousarray(left, dtype=np.int64),
        right=np.ascontiguousarray(right, dtype=np.int64),
        leaf_class=np.ascontiguousarray(leaf, dtype=np.int64),
        roots=roots,
        classes_=classes,
        n_features=n_features,
        rank=rank,
        values_ptr=vptr,
        values=vals,
        source=type(model).__name__,
        tie_class=tie,
        feature_names=list(feature_names) if feature_names is not None else None,
    )
