"""Each library's own missing-value routing, per flattened node.

A tree ensemble whose ``predict`` accepts NaN sends a missing value down a
*default direction* stored at every split; an attacker who can blank a field
therefore reaches leaves that no finite value reaches. This module reads that
routing from the fitted model -- independently of the certification kernels --
as per-node arrays in exactly the node order of the readers
(:func:`fairlens.certify.flatten_forest` for scikit-learn trees, forests and
:class:`~fairlens.certify.FeaturePartitionedForest`;
:func:`fairlens.certify.flatten_boosted` for the boosted libraries), so a
kernel can take ``x != x -> missing_left[node]`` next to its ``x <= threshold``.
``MissingRouting.feature`` repeats the reader's ``feature`` array: compare the
two to check the alignment.

Semantics, verified against each installed library's ``predict`` (tests in
``tests/certify/test_missing_values.py``):

========================  =========================================================================
model                     what ``predict`` does with a NaN at a split on feature ``f``
========================  =========================================================================
scikit-learn trees and    ``tree_.missing_go_to_left[node]`` (scikit-learn >= 1.3; forests >= 1.4;
forests (RF, ExtraTrees,  ExtraTrees >= 1.6). A tree fitted *without* NaN still accepts NaN and sends
DecisionTree)             it to the child that received more training samples (the stored flag).
                          Whether ``predict`` accepts NaN is asked literally: :func:`accepts_missing`.
FeaturePartitionedForest  refuses NaN (``allow_nan=False``): ``accepts_missing`` is False.
GradientBoosting          refuses NaN: ``accepts_missing`` is False (the stored flags are returned
                          for completeness; ``predict`` never takes them).
HistGradientBoosting      ``nodes["missing_go_to_left"]`` (a feature without NaN in training sends
                          NaN to the child with more samples).
XGBoost                   ``default_left`` of the JSON dump, for NaN *and* for every value equal to
                          the ``missing`` parameter of an ``XGBClassifier`` (``missing_value``; a
                          Booster gets it from the DMatrix the caller builds: NaN assumed).
LightGBM                  per node ``missing_type``: ``"NaN"`` -> NaN takes ``default_left``;
                          ``"Zero"`` (``zero_as_missing=True``) -> NaN *and* zero (every
                          ``|x| <= 1e-35f``) take ``default_left`` (the reader writes such a node
                          as three plain threshold nodes, see :func:`_routing_lightgbm`); ``"None"``
                          (no NaN in training, or ``use_missing=False``) -> NaN is read as 0 and
                          compared: it goes left iff ``0 <= threshold``.
========================  =========================================================================

This module imports no kernel and no reader (only the boosted readers' family
detection, ``_families.boosted_family``); it reads the fitted models.
"""
from __future__ import annotations

import json
import warnings
from dataclasses import dataclass

import numpy as np

__all__ = ["MissingRouting", "missing_routing", "accepts_missing", "route_leaves", "LGB_MISSING_TYPES"]

#: LightGBM's ``MissingType`` codes (as in its C++ ``decision_type`` bits): index = code.
LGB_MISSING_TYPES = ("None", "Zero", "NaN")

#: LightGBM's ``kZeroThreshold`` as a double: ``predict`` reads every ``|x| <=`` this as 0.
LGB_ZERO = float(np.float32(1e-35))


@dataclass(frozen=True)
class MissingRouting:
    """Where a missing value goes at every node of a flattened ensemble.

    Parameters
    ----------
    library : str
        ``"sklearn_tree"`` (DecisionTree, RandomForest, ExtraTrees,
        FeaturePartitionedForest), ``"sklearn_gb"``, ``"sklearn_hgb"``,
        ``"xgboost"`` or ``"lightgbm"``.
    feature : ndarray of int64, shape (n_nodes,)
        Feature tested by every node (-1 on leaves), in the reader's node
        order: equal to the reader's ``feature`` array.
    missing_left : ndarray of bool, shape (n_nodes,)
        Whether a NaN in ``x[feature[node]]`` goes to the left child, as the
        library's ``predict`` routes it (False on leaves).
    accepts_missing : bool
        Whether the model's ``predict`` accepts NaN at all (see
        :func:`accepts_missing`).
    zero_as_missing : ndarray of bool, shape (n_nodes,)
        Nodes at which a *zero* input also takes the missing direction instead
        of being compared: LightGBM nodes with ``missing_type="Zero"`` (zero
        meaning every ``|x| <= 1.0000000180025095e-35``; the three nodes the
        reader writes for each), and every node of an XGBoost model fitted with
        ``missing=0``. All False elsewhere.
    missing_type : ndarray of int8, shape (n_nodes,), or None
        LightGBM only: the node's ``missing_type`` code, an index into
        :data:`LGB_MISSING_TYPES` (0 None, 1 Zero, 2 NaN; -1 on leaves).
    missing_value : float
        XGBoost only: the ``missing`` parameter (values equal to it, compared in
        float32, are missing besides NaN); NaN for every other library.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from fairlens.certify._missing import missing_routing
    >>> X = np.array([[0.0], [1.0], [np.nan], [np.nan]])
    >>> tree = DecisionTreeClassifier(random_state=0).fit(X, [0, 1, 1, 1])
    >>> r = missing_routing(tree)
    >>> r.library, r.accepts_missing, r.feature.tolist()
    ('sklearn_tree', True, [0, -1, -1])
    >>> bool(r.missing_left[0]) == bool(tree.apply([[np.nan]])[0] == tree.tree_.children_left[0])
    True
    """

    library: str
    feature: np.ndarray
    missing_left: np.ndarray
    accepts_missing: bool
    zero_as_missing: np.ndarray
    missing_type: np.ndarray | None = None
    missing_value: float = float("nan")

    @property
    def n_nodes(self):
        """Number of nodes (internal and leaves) over all trees."""
        return int(self.feature.shape[0])

    def is_missing(self, node, value):
        """Whether ``value`` (already rounded as the library reads it) takes node ``node``'s
        missing direction rather than the threshold comparison.

        Parameters
        ----------
        node : int
            Internal node index.
        value : float
            The input value of ``feature[node]``.

        Returns
        -------
        bool

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from fairlens.certify._missing import missing_routing
        >>> r = missing_routing(DecisionTreeClassifier(random_state=0).fit([[0.0], [1.0]], [0, 1]))
        >>> r.is_missing(0, float("nan")), r.is_missing(0, 0.0)
        (True, False)
        """
        if value != value:
            return True
        if self.zero_as_missing[node] and value == 0.0:
            return True
        mv = self.missing_value
        return bool(mv == mv and np.float32(value) == np.float32(mv))


def _leaf_false(feature, flags):
    out = np.asarray(flags, dtype=bool).copy()
    out[np.asarray(feature) < 0] = False
    return out


def _family(model):
    """The reader family of ``model`` (None when unsupported); never imports xgboost/lightgbm.

    The boosted libraries are told apart by :func:`fairlens.certify._families.boosted_family` (its refused
    ``*_other`` relatives, e.g. regressors, are None here); scikit-learn trees, forests and
    :class:`~fairlens.certify.FeaturePartitionedForest` by their classes.
    """
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier

    from ._families import boosted_family as _boosted_family
    from ._fpf import FeaturePartitionedForest

    if isinstance(model, FeaturePartitionedForest):
        return "fpf"
    if isinstance(model, (RandomForestClassifier, ExtraTreesClassifier, DecisionTreeClassifier)):
        return "sklearn_tree"
    fam = _boosted_family(model)
    return None if fam is None or fam.endswith("_other") else fam


def _unwrap(model):
    """The library model behind a BoostedModel; refuse a FlatForest (no routing recorded)."""
    names = {c.__name__ for c in type(model).__mro__}
    if "BoostedModel" in names and type(model).__module__.startswith("fairlens"):
        if model.model is None:
            raise ValueError("the BoostedModel has no library model (model=None); pass the fitted "
                             "XGBoost/LightGBM/scikit-learn model instead.")
        return model.model
    if "FlatForest" in names and type(model).__module__.startswith("fairlens"):
        raise TypeError("a FlatForest does not record the missing-value routing; pass the fitted "
                        "scikit-learn model it was flattened from.")
    return model


def _probe_predict(model):
    """Whether ``model.predict`` accepts one all-NaN row (scikit-learn models)."""
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


def accepts_missing(model):
    """Whether ``model``'s own ``predict`` accepts NaN inputs at all.

    XGBoost and LightGBM always do; scikit-learn trees, forests and
    HistGradientBoosting do when the fitted model supports missing values
    (every configuration tried with scikit-learn 1.9 does); GradientBoosting and
    :class:`~fairlens.certify.FeaturePartitionedForest` never do. scikit-learn
    models are asked literally: their ``predict`` is called on one all-NaN row.

    Parameters
    ----------
    model : fitted classifier
        Any model :func:`missing_routing` supports (a BoostedModel stands for its
        library model).

    Returns
    -------
    bool

    Raises
    ------
    TypeError
        For an unsupported model or a FlatForest (it does not keep its model).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier
    >>> from fairlens.certify._missing import accepts_missing
    >>> X, y = np.arange(20.0).reshape(10, 2), [0, 1] * 5
    >>> accepts_missing(HistGradientBoostingClassifier(max_iter=2).fit(X, y))
    True
    >>> accepts_missing(GradientBoostingClassifier(n_estimators=2).fit(X, y))
    False
    """
    model = _unwrap(model)
    fam = _family(model)
    if fam is None:
        raise TypeError(f"model must be a fitted tree ensemble supported by certify; got {type(model).__name__}.")
    if fam.startswith("xgboost") or fam.startswith("lightgbm"):
        return True
    if fam in ("fpf", "sklearn_gb"):
        return False
    return _probe_predict(model)


# ---------------------------------------------------------------------------------------------
# readers (node order of fairlens.certify._flatten / _boosted)
# ---------------------------------------------------------------------------------------------
def _sklearn_tree_nodes(tree, feature_map=None):
    t = tree.tree_
    feat = np.asarray(t.feature, dtype=np.int64).copy()
    internal = feat >= 0
    if feature_map is not None:
        feat[internal] = np.asarray(feature_map, dtype=np.int64)[feat[internal]]
    feat[~internal] = -1
    mgl = getattr(t, "missing_go_to_left", None)
    mgl = np.zeros(feat.shape, dtype=bool) if mgl is None else np.asarray(mgl, dtype=bool)
    return feat, _leaf_false(feat, mgl)


def _routing_sklearn_trees(model, fam):
    if fam == "fpf":
        parts = [_sklearn_tree_nodes(t, m) for t, m in zip(model.estimators_, model.estimators_features_)]
    elif hasattr(model, "estimators_"):
        parts = [_sklearn_tree_nodes(t) for t in model.estimators_]
    else:
        parts = [_sklearn_tree_nodes(model)]
    feat = np.concatenate([p[0] for p in parts])
    mgl = np.concatenate([p[1] for p in parts])
    return MissingRouting(library="sklearn_tree", feature=feat, missing_left=mgl,
                          accepts_missing=accepts_missing(model), zero_as_missing=np.zeros(feat.shape, dtype=bool))


def _routing_sklearn_gb(model):
    parts = [_sklearn_tree_nodes(model.estimators_[i, k])
             for i in range(model.estimators_.shape[0]) for k in range(model.estimators_.shape[1])]
    feat = np.concatenate([p[0] for p in parts])
    return MissingRouting(library="sklearn_gb", feature=feat, missing_left=np.concatenate([p[1] for p in parts]),
                          accepts_missing=False, zero_as_missing=np.zeros(feat.shape, dtype=bool))


def _routing_sklearn_hgb(model):
    feats, mgls = [], []
    for it in model._predictors:  # pinned private API, as the reader
        for pred in it:
            nd = pred.nodes
            leaf = nd["is_leaf"].astype(bool)
            f = np.where(leaf, -1, nd["feature_idx"]).astype(np.int64)
            feats.append(f)
            mgls.append(_leaf_false(f, nd["missing_go_to_left"]))
    feat = np.concatenate(feats)
    return MissingRouting(library="sklearn_hgb", feature=feat, missing_left=np.concatenate(mgls),
                          accepts_missing=accepts_missing(model), zero_as_missing=np.zeros(feat.shape, dtype=bool))


def _xgb_n_use(model, fam, tmodel):
    n_use = len(tmodel["trees"])
    if fam == "xgboost":
        try:
            best = getattr(model, "best_iteration", None)
        except AttributeError:
            best = None
        indptr = tmodel.get("iteration_indptr")
        if best is not None and indptr is not None:
            n_use = int(indptr[int(best) + 1])
    return n_use


def _routing_xgboost(model, fam):
    booster = model if fam == "xgboost_booster" else model.get_booster()
    js = json.loads(bytes(booster.save_raw(raw_format="json")))
    tmodel = js["learner"]["gradient_booster"]["model"]
    feats, dls = [], []
    for t in tmodel["trees"][:_xgb_n_use(model, fam, tmodel)]:
        L = np.asarray(t["left_children"], dtype=np.int64)
        f = np.where(L < 0, -1, np.asarray(t["split_indices"], dtype=np.int64))
        feats.append(f)
        dls.append(_leaf_false(f, t["default_left"]))
    feat = np.concatenate(feats)
    mv = float("nan") if fam == "xgboost_booster" else model.missing
    mv = float("nan") if mv is None else float(mv)
    zero = np.zeros(feat.shape, dtype=bool)
    if mv == 0.0:
        zero = feat >= 0
    return MissingRouting(library="xgboost", feature=feat, missing_left=np.concatenate(dls), accepts_missing=True,
                          zero_as_missing=zero, missing_value=mv)


def lgb_nodes(model):
    """LightGBM trees as per-node lists in the reader's order (pre-order: node, left subtree,
    right subtree; trees in ``tree_info`` order).

    Parameters
    ----------
    model : lightgbm.LGBMClassifier or lightgbm.Booster

    Returns
    -------
    dict of ndarray
        ``feature``, ``threshold`` (raw, as dumped), ``left``, ``right`` (global indices, -1 on
        leaves), ``value`` (leaf values), ``default_left``, ``missing_type`` (codes of
        :data:`LGB_MISSING_TYPES`, -1 on leaves) and ``roots``.

    Examples
    --------
    >>> import numpy as np, lightgbm as lgb
    >>> from fairlens.certify._missing import lgb_nodes
    >>> X = np.arange(40.0).reshape(20, 2); y = [0] * 10 + [1] * 10
    >>> m = lgb.LGBMClassifier(n_estimators=2, num_leaves=2, min_child_samples=2, verbose=-1).fit(X, y)
    >>> nodes = lgb_nodes(m)
    >>> nodes["roots"].tolist(), nodes["feature"][:3].tolist()
    ([0, 3], [0, -1, -1])
    """
    booster = model.booster_ if hasattr(model, "booster_") else model
    dump = booster.dump_model()
    F, T, L, R, V, D, M, roots = [], [], [], [], [], [], [], []

    def add(node):
        i = len(F)
        F.append(-1)
        T.append(0.0)
        L.append(-1)
        R.append(-1)
        V.append(0.0)
        D.append(False)
        M.append(-1)
        if "leaf_value" in node or "split_feature" not in node:
            V[i] = float(node.get("leaf_value", 0.0))
            return i
        F[i] = int(node["split_feature"])
        T[i] = float(node["threshold"])
        D[i] = bool(node.get("default_left", True))
        M[i] = LGB_MISSING_TYPES.index(node.get("missing_type", "None"))
        a = add(node["left_child"])
        b = add(node["right_child"])
        L[i], R[i] = a, b
        return i

    for ti in dump["tree_info"]:
        roots.append(len(F))
        add(ti["tree_structure"])
    return {"feature": np.asarray(F, dtype=np.int64), "threshold": np.asarray(T, dtype=np.float64),
            "left": np.asarray(L, dtype=np.int64), "right": np.asarray(R, dtype=np.int64),
            "value": np.asarray(V, dtype=np.float64), "default_left": np.asarray(D, dtype=bool),
            "missing_type": np.asarray(M, dtype=np.int8), "roots": np.asarray(roots, dtype=np.int64)}


def _routing_lightgbm(model):
    """The routing in the reader's node order, where every ``"Zero"`` node is three plain nodes.

    LightGBM's ``NumericalDecision``: NaN at a node whose type is not ``"NaN"`` is read as 0; then a
    ``"Zero"`` node sends 0 (every ``|x| <= 1e-35f``) and a ``"NaN"`` node sends NaN to its default
    child, and any other value goes left iff ``x <= threshold``. The reader writes a ``"Zero"`` node
    as ``P1: x < -1e-35f`` -> ``N`` else ``P2``; ``P2: x <= 0`` -> the default child else ``N``;
    ``N``: the comparison. NaN goes right at ``P1`` and left at ``P2`` (to the default child) and
    never reaches ``N`` (recorded as left); zero takes those same branches, so the three nodes keep
    ``zero_as_missing`` (and ``missing_type`` 1): :meth:`MissingRouting.is_missing` and the
    thresholds agree on them.
    """
    nd = lgb_nodes(model)
    feat, mt, dl = nd["feature"], nd["missing_type"], nd["default_left"]
    # None: NaN is read as 0.0 and compared with the threshold; NaN: the default direction
    left = _leaf_false(feat, np.where(mt == 0, 0.0 <= nd["threshold"], dl))
    zero = mt == 1
    reps = np.where(zero, 3, 1)
    first = np.cumsum(reps) - reps  # expanded index of P1 (or of the node itself)
    left_x = np.repeat(left, reps)
    left_x[first[zero]] = False      # P1: NaN (read as 0) goes on to P2
    left_x[first[zero] + 1] = True   # P2: to the default child
    left_x[first[zero] + 2] = True   # N: reached by no NaN
    return MissingRouting(library="lightgbm", feature=np.repeat(feat, reps), missing_left=left_x,
                          accepts_missing=True, zero_as_missing=np.repeat(zero, reps),
                          missing_type=np.repeat(mt, reps))


def missing_routing(model):
    """The model's own missing-value routing, per node in the readers' node order.

    Parameters
    ----------
    model : fitted classifier
        DecisionTreeClassifier, RandomForestClassifier, ExtraTreesClassifier,
        FeaturePartitionedForest, GradientBoostingClassifier,
        HistGradientBoostingClassifier, xgboost.XGBClassifier/Booster,
        lightgbm.LGBMClassifier/Booster, or a BoostedModel (its library model).

    Returns
    -------
    MissingRouting
        ``missing_left`` and the library's extra semantics, aligned with the
        ``feature`` array of :func:`~fairlens.certify.flatten_forest` /
        :func:`~fairlens.certify.flatten_boosted` (a LightGBM ``"Zero"`` node,
        ``zero_as_missing=True``, is three nodes there, as the reader writes it).

    Raises
    ------
    TypeError
        For an unsupported model or a FlatForest (it does not keep its model).
    ValueError
        For a BoostedModel without its library model.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import HistGradientBoostingClassifier
    >>> from fairlens.certify import flatten_boosted
    >>> from fairlens.certify._missing import missing_routing
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = (X[:, 0] > 0).astype(int)
    >>> X[rng.random(X.shape) < 0.2] = np.nan
    >>> hgb = HistGradientBoostingClassifier(max_iter=5, max_depth=2, random_state=0).fit(X, y)
    >>> r = missing_routing(hgb)
    >>> bool(np.array_equal(r.feature, flatten_boosted(hgb).feature)), r.accepts_missing
    (True, True)
    """
    model = _unwrap(model)
    fam = _family(model)
    if fam is None:
        raise TypeError(f"model must be a fitted tree ensemble supported by certify; got {type(model).__name__}.")
    if fam in ("fpf", "sklearn_tree"):
        return _routing_sklearn_trees(model, fam)
    if fam == "sklearn_gb":
        return _routing_sklearn_gb(model)
    if fam == "sklearn_hgb":
        return _routing_sklearn_hgb(model)
    if fam.startswith("xgboost"):
        return _routing_xgboost(model, fam)
    return _routing_lightgbm(model)


def route_leaves(feature, threshold, left, right, roots, routing, Xr):
    """Leaf reached in every tree, with NaN routed by ``routing`` (pure NumPy reference).

    The traversal the kernels need: at an internal node, a value that
    :meth:`MissingRouting.is_missing` calls missing goes to
    ``left if missing_left[node] else right``; any other value goes left iff
    ``x <= threshold``.

    Parameters
    ----------
    feature, threshold, left, right : ndarray of shape (n_nodes,)
        The reader's flat arrays (``x[f] <= threshold`` goes left).
    roots : ndarray of int64, shape (n_trees,)
        Root of every tree.
    routing : MissingRouting
        The same model's routing (``routing.feature`` equal to ``feature``).
    Xr : ndarray of float64, shape (n_samples, n_features)
        Inputs as the library reads them (the reader's ``round_X``), NaN kept.

    Returns
    -------
    ndarray of int64, shape (n_samples, n_trees)
        Leaf node indices.

    Raises
    ------
    ValueError
        If ``routing`` is not aligned with ``feature``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from fairlens.certify import flatten_forest
    >>> from fairlens.certify._missing import missing_routing, route_leaves
    >>> X = np.array([[0.0], [1.0], [np.nan], [np.nan]])
    >>> tree = DecisionTreeClassifier(random_state=0).fit(X, [0, 1, 1, 1])
    >>> ff = flatten_forest(tree)
    >>> Xq = np.array([[0.0], [np.nan]])
    >>> leaves = route_leaves(ff.feature, ff.threshold, ff.left, ff.right, ff.roots, missing_routing(tree), Xq)
    >>> bool((leaves[:, 0] == tree.apply(Xq)).all())
    True
    """
    if not np.array_equal(np.asarray(feature), routing.feature):
        raise ValueError("routing is not aligned with feature: build both from the same model.")
    Xr = np.asarray(Xr, dtype=np.float64)
    out = np.empty((Xr.shape[0], len(roots)), dtype=np.int64)
    for i in range(Xr.shape[0]):
        for t, r in enumerate(roots):
            node = int(r)
            while feature[node] >= 0:
                v = Xr[i, feature[node]]
                if routing.is_missing(node, v):
                    node = int(left[node] if routing.missing_left[node] else right[node])
                else:
                    node = int(left[node] if v <= threshold[node] else right[node])
            out[i, t] = node
    return out
