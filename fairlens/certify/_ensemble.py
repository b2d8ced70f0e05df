"""The one tree-ensemble representation of :mod:`fairlens.certify`: :class:`TreeEnsemble`.

Every supported model -- scikit-learn trees and forests, FeaturePartitionedForest, XGBoost,
LightGBM, scikit-learn (Hist)GradientBoosting, CatBoost, ONNX tree ensembles -- is read by its
library's reader (:mod:`fairlens.certify._readers`) into one *additive* tree ensemble: every tree
adds its leaf's payload to class scores, and a vote rule (:mod:`fairlens.certify._votes`) turns the
scores into the prediction:

* ``vote="soft"`` (scikit-learn forests and trees, their ``predict``): a leaf's payload is its
  class-probability vector (``value`` has one column per class); the mean over the trees, first
  class on ties, replayed with scikit-learn's own arithmetic (sum of the trees' ``tree_.value`` rows
  in the order of ``estimators_``, then ``/ n_trees``, then ``numpy.argmax``);
* ``vote="hard"`` (a FeaturePartitionedForest, and the paper's rule for any forest): a leaf votes
  for the class ``leaf_class``; the majority of the trees' hard votes (section 4), ties by ``rank``;
* ``vote="additive"`` (boosted trees): a leaf's payload is one raw score (``value`` has one
  column) added to the class ``group[t]`` of its tree, on top of the base scores ``base``.

How a library reads its input and what its own ``predict`` does are the reader's business: each
reader hands the ensemble a :class:`Library` (how the input is read, how the library's ``predict``
and raw scores are called, whether its ``predict`` accepts NaN). A library whose ``predict`` the
replay reproduces bit for bit (scikit-learn's trees and forests, the FPF) says so
(``Library.exact``): their prediction is the replay and their witnesses need no confirmation. The
other ensembles keep their model: the clean prediction is the library's ``predict``, and a candidate
witness inside the float32 ambiguity zone of the replay is decided by it.

The float32 trap
----------------
scikit-learn trees, XGBoost and GradientBoosting compare float32 inputs (``float32(x) <=
threshold``); a float64 value a hair below a threshold can round *above* it. The ensemble rounds
its inputs as the library does (:meth:`TreeEnsemble.round_X`) and its relevant attack values are
numbers the library reads as themselves (:func:`relevant_values`, :func:`relevant_values64`), so
every witness behaves on the fitted model exactly as certified.

Missing values
--------------
``missing_left`` holds, per node, where the library's ``predict`` sends a missing value (NaN, and a
finite ``missing_value`` the library also reads as missing); :meth:`TreeEnsemble.nan_coded` makes
NaN one more attack value (:mod:`fairlens.certify._nancode`).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field, replace

import numpy as np

from .._base import Interval, validated
from .._validation import check_choice, check_memory
from . import _votes, _walk
from ._flat import FlatEnsemble, check_flat
from ._inputs import check_X as _check_X
from ._inputs import encode_labels
from ._nancode import NAN_CODE, code_nodes, code_values

__all__ = ["TreeEnsemble", "Library", "assemble", "relevant_values", "relevant_values64", "VOTES", "RULES"]

#: The votes a voting forest can be certified under.
VOTES = ("soft", "hard")

#: Every decision rule a :class:`TreeEnsemble` can have (its ``vote``).
RULES = ("soft", "hard", "additive")

#: Thresholds from here up separate no finite value a library reads (LightGBM reads every
#: ``x >= 1e300`` as 1e300 and splits NaN from every finite value at 1e300; scikit-learn at inf).
HUGE = 1e300


def _check_nodes(feature, threshold, n_features, func):
    """``(feature, threshold, n_features)`` of :func:`relevant_values` checked: int64 and float64
    arrays of one length, every non-leaf feature index in ``[0, n_features)``.

    A feature index outside that range (or a non-integer one) would be silently dropped, and the
    feature it meant would have no attack values: the certificate would be wrong without a word.
    """
    import numbers

    if isinstance(n_features, (bool, np.bool_)) or not isinstance(n_features, numbers.Integral):
        raise TypeError(f"{func}: n_features must be a non-negative integer (the number of input "
                        f"features); got {n_features!r} ({type(n_features).__name__}).")
    n_features = int(n_features)
    if n_features < 0:
        raise ValueError(f"{func}: n_features must be a non-negative integer (the number of input "
                         f"features); got {n_features}.")
    feature = np.asarray(feature)
    threshold = np.asarray(threshold)
    if feature.ndim != 1:
        raise ValueError(f"{func}: feature must be a 1-d array (one feature index per node); got shape "
                         f"{feature.shape}.")
    if threshold.shape != feature.shape:
        raise ValueError(f"{func}: threshold must have the shape of feature {feature.shape} (one threshold "
                         f"per node); got shape {threshold.shape}.")
    if feature.dtype.kind == "b" or feature.dtype.kind not in "iuf":
        raise TypeError(f"{func}: feature must hold integer feature indices; got dtype {feature.dtype}.")
    if feature.dtype.kind == "f":
        bad = ~np.isfinite(feature) | (feature != np.round(feature))
        if bad.any():
            raise TypeError(f"{func}: feature must hold integer feature indices; got "
                            f"{float(feature[bad][0])!r} at node {int(np.flatnonzero(bad)[0])}. Pass an integer array "
                            "(negative on leaves).")
    if threshold.dtype.kind not in "iuf":
        raise TypeError(f"{func}: threshold must be a numeric array; got dtype {threshold.dtype}.")
    feature = feature.astype(np.int64)
    bad = feature >= n_features
    if bad.any():
        node = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{func}: feature[{node}] = {int(feature[node])} is out of range for n_features="
                         f"{n_features}: a split's feature index must be in [0, {n_features - 1}] (negative "
                         "marks a leaf). Pass the model's number of input features as n_features, or fix the "
                         "node's feature index.")
    return feature, threshold.astype(np.float64), n_features


@validated({
    "feature": "no_validation", "threshold": "no_validation",
    "n_features": [Interval(numbers.Integral, 0, None)],
})
def relevant_values(feature, threshold, n_features):
    """Relevant attack values ``V_f`` (section 4.1), made float32-exact.

    For a float32 input ``z`` and a node threshold ``v``, ``z <= v`` holds iff
    ``z <= floor32(v)`` (the largest float32 not above ``v``). The values of
    feature ``f`` are the sorted distinct ``floor32(v)`` over all nodes testing
    ``f``, plus the next float32 above the largest one, which plays the role of
    the paper's ``+inf`` (scikit-learn rejects infinite inputs). Every interval
    between consecutive thresholds thus has exactly one representative.

    Parameters
    ----------
    feature : ndarray of int64, shape (n_nodes,)
        Feature tested by every node (negative on leaves).
    threshold : ndarray of float64, shape (n_nodes,)
        Threshold of every node (``x[feature] <= threshold`` goes left).
    n_features : int
        Number of input features.

    Returns
    -------
    values_ptr : ndarray of int64, shape (n_features + 1,)
        Offsets into ``values``.
    values : ndarray of float64, shape (n_values,)
        Values of feature ``f`` in ``values[values_ptr[f]:values_ptr[f + 1]]``
        (empty if ``f`` is unused).

    Raises
    ------
    ValueError
        If a node's feature index is ``>= n_features``, ``n_features`` is negative, or
        ``threshold`` and ``feature`` differ in shape.
    TypeError
        If ``feature`` holds non-integer indices or ``n_features`` is not an integer.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.certify import relevant_values
    >>> feature = np.array([1, -1, -1])              # one split: x[1] <= 0.5
    >>> threshold = np.array([0.5, 0.0, 0.0])
    >>> ptr, values = relevant_values(feature, threshold, 2)
    >>> ptr.tolist()                                 # feature 0 has no values
    [0, 0, 2]
    >>> bool(values[0] == 0.5), bool(values[1] == np.nextafter(np.float32(0.5), np.float32(np.inf)))
    (True, True)
    >>> relevant_values(np.array([2, -1, -1]), threshold, 2)
    Traceback (most recent call last):
    ...
    ValueError: relevant_values: feature[0] = 2 is out of range for n_features=2: ... must be in [0, 1] ...
    """
    feature, threshold, n_features = _check_nodes(feature, threshold, n_features, "relevant_values")
    ptr = np.zeros(n_features + 1, dtype=np.int64)
    chunks = []
    for f in range(n_features):
        thr = np.asarray(threshold[feature == f], dtype=np.float64)
        thr = thr[np.isfinite(thr)]  # a NaN-only split (scikit-learn: +inf) separates no finite values
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


def relevant_values64(feature, threshold, n_features):
    """Relevant attack values for ``x <= threshold`` on float64 inputs (LightGBM, HistGradientBoosting).

    For feature ``f`` the sorted distinct thresholds ``t_1 < ... < t_k`` and the next float64 above
    ``t_k``: ``t_j`` is the largest number of the interval ``(t_{j-1}, t_j]``, so each interval has
    exactly one representative. Non-finite thresholds and thresholds ``>= 1e300`` (splits of NaN from
    every finite value, which every finite input reaches the left side of) are left out, so every
    value is finite and read by the library as itself.

    Parameters
    ----------
    feature : ndarray of int64, shape (n_nodes,)
        Feature tested by every node (negative on leaves).
    threshold : ndarray of float64, shape (n_nodes,)
        Threshold of every node.
    n_features : int
        Number of input features.

    Returns
    -------
    values_ptr : ndarray of int64, shape (n_features + 1,)
    values : ndarray of float64

    Raises
    ------
    ValueError, TypeError
        As :func:`relevant_values`.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.certify._ensemble import relevant_values64
    >>> ptr, values = relevant_values64(np.array([0, -1, -1]), np.array([0.1, 0.0, 0.0]), 1)
    >>> ptr.tolist(), bool(values[0] == 0.1), bool(values[1] == np.nextafter(0.1, 1.0))
    ([0, 2], True, True)
    """
    feature, threshold, n_features = _check_nodes(feature, threshold, n_features, "relevant_values64")
    ptr = np.zeros(n_features + 1, dtype=np.int64)
    chunks = []
    for f in range(n_features):
        thr = np.asarray(threshold[feature == f], dtype=np.float64)
        thr = thr[np.isfinite(thr) & (thr < HUGE)]  # NaN-only splits separate no finite values
        if thr.size == 0:
            ptr[f + 1] = ptr[f]
            continue
        u = np.unique(thr)
        vals = np.concatenate([u, [np.nextafter(u[-1], np.inf)]])
        chunks.append(vals)
        ptr[f + 1] = ptr[f] + vals.size
    values = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float64)
    return ptr, values


class Library:
    """How a library's own model reads its input and predicts; a reader subclasses it (a new library
    touches its reader file only).

    ``exact = True`` says that the replay of the ensemble *is* the model's ``predict`` bit for bit
    (scikit-learn's trees and forests, the FPF): nothing is asked of the model while certifying.
    Otherwise the ensemble keeps the model and asks its ``predict`` for the clean prediction and to
    decide candidate witnesses inside the replay's ambiguity zone.

    Examples
    --------
    >>> from fairlens.certify._ensemble import Library
    >>> Library().accepts_nan(None), Library.exact
    (True, False)
    """

    #: Whether the replay is the model's predict, bit for bit (no model call is needed).
    exact = False

    def predict(self, model, X64):
        """The labels of the library's own ``predict`` on float64 rows (one label per row)."""
        raise NotImplementedError

    def raw_scores(self, model, X64):
        """The library's raw scores: ``(n,)`` (binary margin) or ``(n, n_classes)``."""
        raise NotImplementedError

    def accepts_nan(self, model):
        """Whether the library's ``predict`` accepts NaN (the reader recorded where it routes it)."""
        return True

    def read_input(self, X64):
        """The float64 input as the library's comparisons read it (after float32 rounding, if any)."""
        return X64

    def frame(self, X):
        """A DataFrame ``X`` with its columns named as the library names them (to align by name)."""
        return X


def _one_hot(leaf_class, feature, K):
    m = feature.shape[0]
    v = np.zeros((m, K), np.float64)
    leaf = feature < 0
    v[np.flatnonzero(leaf), leaf_class[leaf]] = 1.0
    return v


def _tree_max_gain(value, feature, roots):
    """``tmax[t, c, y] = max over the leaves l of tree t of p_l[c] - p_l[y]``."""
    K = value.shape[1]
    n_trees = roots.shape[0]
    tmax = np.empty((n_trees, K, K), dtype=np.float64)
    ends = np.append(roots[1:], feature.shape[0])
    for t in range(n_trees):
        sl = slice(int(roots[t]), int(ends[t]))
        leaves = value[sl][feature[sl] < 0]
        tmax[t] = (leaves[:, :, None] - leaves[:, None, :]).max(axis=0)
    return tmax


def _leaf_range(value, feature, roots):
    """Smallest and largest leaf value (column 0) of every tree."""
    n_trees = roots.shape[0]
    ends = np.append(roots[1:], feature.shape[0])
    vmin, vmax = np.empty(n_trees), np.empty(n_trees)
    for t in range(n_trees):
        sl = slice(int(roots[t]), int(ends[t]))
        lv = value[sl, 0][feature[sl] < 0]
        vmin[t], vmax[t] = lv.min(), lv.max()
    return vmin, vmax


@dataclass
class TreeEnsemble:
    """A fitted tree ensemble as flat arrays, with the decision rule that is certified.

    Built by a reader (:func:`fairlens.certify.read_model`) or by hand; the parameters are its fields.

    Parameters
    ----------
    feature, threshold, left, right : ndarray of shape (n_nodes,)
        Node arrays over all trees, one tree after the other (``x[feature] <= threshold`` goes left on
        the input as the library reads it, see :meth:`round_X`; ``feature == -1`` and children
        ``-1`` on leaves).
    roots : ndarray of int64, shape (n_trees,)
        Root node of every tree, in the library's order.
    classes_ : ndarray
        The class labels.
    n_features : int
        Number of input features.
    vote : {"soft", "hard", "additive"}, default="hard"
        The decision rule (see the module docstring).
    value : ndarray of float64, shape (n_nodes, W), optional
        Each leaf's payload (zeros on internal nodes): its class-probability vector (``W =
        n_classes``; default: one-hot of ``leaf_class``) or one raw score (``W = 1``, additive).
    leaf_class : ndarray of int64, shape (n_nodes,), optional
        The class a leaf votes for (the hard vote; default: ``argmax`` of ``value``, zeros for an
        additive ensemble).
    missing_left : ndarray of bool, shape (n_nodes,), optional
        Where the library sends a missing value at every node (default: right).
    group : ndarray of int64, shape (n_trees,), optional
        The class a tree's raw score adds to (additive; binary: 1). Default zeros.
    base : ndarray of float64, shape (n_classes,), optional
        Base scores (additive; binary ``[0, base]``). Default zeros.
    rank : ndarray of int64, shape (n_classes,), optional
        Tie-break priority of the hard vote (smallest wins): default the first class in
        ``classes_`` (``numpy.argmax``'s rule), with ``tie_class`` put first.
    tie_class : int, default=-1
        Index of the class winning ties of the hard vote (-1: the default rule).
    votes : tuple of str, optional
        The votes this model may be certified under (default: ``(vote,)``); scikit-learn forests
        ``("soft", "hard")``.
    f32 : bool, default=False
        Whether the raw scores are accumulated in float32, in tree order (XGBoost).
    f32_input : bool, default=True
        Whether the library compares float32-rounded inputs.
    tol : float, default=0.0
        Half-width of the replay's ambiguity zone (additive).
    acc_err : float, default=0.0
        Bound on the float accumulation error of a margin (added to ``tol`` in the bounds).
    source : str, default="TreeEnsemble"
        The estimator class the ensemble was read from.
    model : object, optional
        The library model whose ``predict`` decides (kept when ``library.exact`` is False).
    library : Library, optional
        How the library reads inputs and predicts (None: a hand-made ensemble, whose replay is its
        prediction).
    feature_names : list of str, optional
        Names for display in results and widgets.
    feature_names_in : ndarray, optional
        Column names the model was fitted with (DataFrames are aligned to them), or None.
    missing_value : float, default=nan
        A finite input value the library also reads as missing (XGBoost's ``missing``), else NaN.
    values_ptr, values : ndarray, optional
        Relevant attack values of every feature (default: :func:`relevant_values` or
        ``fairlens.certify._ensemble.relevant_values64`` by ``f32_input``).
    tmax : ndarray of shape (n_trees, n_classes, n_classes), optional
        Voting ensembles: the largest ``p_l[c] - p_l[y]`` over each tree's leaves (computed).
    vmin, vmax : ndarray of shape (n_trees,), optional
        Additive ensembles: each tree's smallest/largest leaf value (computed).
    nan_code : bool, default=False
        Whether this is the NaN-coded ensemble of :meth:`nan_coded` (its inputs write NaN as ``-inf``).
    nan_as : ndarray of shape (n_features,), optional
        A NaN-coded ensemble's reading of NaN per feature: ``-inf`` (the NaN code), or the finite
        value whose branch NaN takes at every node of that feature (None: ``-inf`` everywhere).

    Raises
    ------
    ValueError
        For an unknown ``vote`` or node arrays that disagree in shape.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from fairlens.certify import read_model
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> y = np.array([0, 0, 1, 1])                      # the label is feature 1
    >>> ens = read_model(DecisionTreeClassifier(random_state=0).fit(X, y))
    >>> ens.n_trees, ens.vote, ens.feature.tolist(), ens.threshold.tolist()
    (1, 'soft', [1, -1, -1], [0.5, 0.0, 0.0])
    """

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    roots: np.ndarray
    classes_: np.ndarray
    n_features: int
    vote: str = "hard"
    value: np.ndarray | None = field(default=None, repr=False)
    leaf_class: np.ndarray | None = field(default=None, repr=False)
    missing_left: np.ndarray | None = field(default=None, repr=False)
    group: np.ndarray | None = field(default=None, repr=False)
    base: np.ndarray | None = field(default=None, repr=False)
    rank: np.ndarray | None = field(default=None, repr=False)
    tie_class: int = -1
    votes: tuple = ()
    f32: bool = False
    f32_input: bool = True
    tol: float = 0.0
    acc_err: float = 0.0
    source: str = "TreeEnsemble"
    model: object = field(default=None, repr=False)
    library: Library | None = field(default=None, repr=False)
    feature_names: list | None = field(default=None, repr=False)
    feature_names_in: np.ndarray | None = field(default=None, repr=False)
    missing_value: float = float("nan")
    values_ptr: np.ndarray | None = field(default=None, repr=False)
    values: np.ndarray | None = field(default=None, repr=False)
    tmax: np.ndarray | None = field(default=None, repr=False)
    vmin: np.ndarray | None = field(default=None, repr=False)
    vmax: np.ndarray | None = field(default=None, repr=False)
    nan_code: bool = field(default=False, repr=False)
    nan_as: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self):
        if self.vote not in RULES:
            raise ValueError(f"vote must be one of {RULES}; got {self.vote!r}.")
        self.votes = tuple(self.votes) or (self.vote,)
        self.feature = np.ascontiguousarray(self.feature, dtype=np.int64)
        m = self.feature.shape[0]
        for nm in ("threshold", "left", "right"):
            if np.shape(getattr(self, nm)) != (m,):
                raise ValueError(f"TreeEnsemble.{nm} must have shape ({m},); got {np.shape(getattr(self, nm))}.")
        self.threshold = np.ascontiguousarray(self.threshold, dtype=np.float64)
        self.left = np.ascontiguousarray(self.left, dtype=np.int64)
        self.right = np.ascontiguousarray(self.right, dtype=np.int64)
        self.roots = np.ascontiguousarray(self.roots, dtype=np.int64)
        T, K = self.n_trees, self.n_classes
        additive = self.vote == "additive"
        if self.value is None:
            if additive or self.leaf_class is None:
                raise ValueError("TreeEnsemble needs value (or, for a voting forest, leaf_class).")
            self.value = _one_hot(np.asarray(self.leaf_class, np.int64), self.feature, K)
        value = np.asarray(self.value, dtype=np.float64)
        self.value = np.ascontiguousarray(value.reshape(m, 1) if value.ndim == 1 else value)
        if self.value.shape not in ((m, 1), (m, K)) or (not additive and self.value.shape != (m, K)):
            raise ValueError(f"TreeEnsemble.value must have shape ({m}, {1 if additive else K}); "
                             f"got {self.value.shape}.")
        if self.leaf_class is None:
            self.leaf_class = (np.zeros(m, np.int64) if additive else
                               np.argmax(self.value, axis=1).astype(np.int64))
        self.leaf_class = np.ascontiguousarray(self.leaf_class, dtype=np.int64)
        if self.missing_left is None:
            self.missing_left = np.zeros(m, dtype=bool)
        self.missing_left = np.ascontiguousarray(self.missing_left, dtype=bool)
        self.group = np.zeros(T, np.int64) if self.group is None else np.ascontiguousarray(self.group, np.int64)
        self.base = np.zeros(K, np.float64) if self.base is None else np.ascontiguousarray(self.base, np.float64)
        if self.rank is None:
            if additive:
                self.rank = np.arange(K, dtype=np.int64)
            else:
                self.rank = np.arange(1, K + 1, dtype=np.int64)
                if self.tie_class >= 0:
                    self.rank[self.tie_class] = 0
        if self.values_ptr is None or self.values is None:
            find = relevant_values if self.f32_input else relevant_values64
            self.values_ptr, self.values = find(self.feature, self.threshold, self.n_features)
        if self.tmax is None:
            self.tmax = np.zeros((0, 0, 0)) if additive else _tree_max_gain(self.value, self.feature, self.roots)
        if self.vmin is None or self.vmax is None:
            if additive and T:
                self.vmin, self.vmax = _leaf_range(self.value, self.feature, self.roots)
            else:
                self.vmin, self.vmax = np.zeros(T), np.zeros(T)
        for nm, shape in (("leaf_class", (m,)), ("missing_left", (m,)), ("group", (T,)), ("base", (K,)),
                          ("rank", (K,)), ("vmin", (T,)), ("vmax", (T,))):
            if np.shape(getattr(self, nm)) != shape:
                raise ValueError(f"TreeEnsemble.{nm} must have shape {shape}; got {np.shape(getattr(self, nm))}.")

    # --- what it is ----------------------------------------------------------------------------
    @property
    def n_trees(self):
        """Number of trees."""
        return int(self.roots.shape[0])

    @property
    def n_classes(self):
        """Number of classes."""
        return int(len(self.classes_))

    @property
    def vote_rule(self):
        """The :class:`~fairlens.certify._votes.VoteRule` of ``vote``, handed to the kernels."""
        return _votes.vote_rule(self.vote)

    @property
    def exact(self):
        """Whether the replay is the model's prediction (nothing to ask of the model)."""
        return self.library.exact if self.library is not None else self.vote != "additive"

    def flat(self, tol=None, tol_b=None):
        """The kernels' one :class:`~fairlens.certify._flat.FlatEnsemble` of this ensemble.

        Parameters
        ----------
        tol : float, optional
            Half-width of the replay's ambiguity zone, and the soft vote's tolerance (default:
            the ``tol`` field).
        tol_b : float, optional
            Tolerance of the bounds (default ``tol + acc_err``).

        Returns
        -------
        FlatEnsemble

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from fairlens.certify import read_model
        >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        >>> ens = read_model(DecisionTreeClassifier(random_state=0).fit(X, [0, 0, 1, 1])).flat()
        >>> ens.value.shape, ens.leaf_class.tolist(), ens.rank.tolist(), ens.tmax.shape
        ((3, 2), [0, 0, 1], [1, 2], (1, 2, 2))
        """
        tol = float(self.tol if tol is None else tol)
        tol_b = float(tol + self.acc_err if tol_b is None else tol_b)
        return FlatEnsemble(self.feature, self.threshold, self.left, self.right, self.missing_left, self.roots,
                            self.leaf_class, self.value, self.group, self.base, self.rank, self.tmax, self.vmin,
                            self.vmax, bool(self.f32), tol, tol_b, self.values_ptr, self.values)

    def check_arrays(self):
        """Dtypes, shapes and index ranges of the arrays every kernel relies on (checked once per
        call of ``certify``, before any kernel: a hand-made or altered ensemble fails here).

        Raises
        ------
        ValueError
            Naming the array that is wrong.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.ensemble import GradientBoostingClassifier
        >>> from fairlens.certify import read_model
        >>> X = np.arange(40.0).reshape(20, 2); y = [0, 1] * 10
        >>> ens = read_model(GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y))
        >>> ens.check_arrays()             # silent when consistent
        >>> ens.group = ens.group.astype(np.int32)
        >>> ens.check_arrays()
        Traceback (most recent call last):
        ...
        ValueError: internal: FlatEnsemble.group must be a C-contiguous int64 array of shape (3,); got int32 (3,).
        """
        check_flat(self.flat(), self.n_features)
        m, K, T, d = self.feature.shape[0], self.n_classes, self.n_trees, self.n_features
        if T and (self.group.min() < 0 or self.group.max() >= K):
            raise ValueError("internal: TreeEnsemble.group holds a class index out of range.")
        if m and (self.feature.max() >= d or self.roots.min() < 0 or self.roots.max() >= m):
            raise ValueError("internal: TreeEnsemble feature or root index out of range.")

    # --- the vote ------------------------------------------------------------------------------
    def with_vote(self, vote=None, tie_class=None):
        """This ensemble certified under another vote and/or tie rule.

        Parameters
        ----------
        vote : {"soft", "hard"}, optional
            The vote to certify (default: unchanged).
        tie_class : label, optional
            The class winning ties of the hard vote (default: unchanged, the model's own rule).

        Returns
        -------
        TreeEnsemble
            ``self`` when nothing changes, else a copy.

        Raises
        ------
        ValueError
            For a vote the model does not predict by (``"soft"`` for a FeaturePartitionedForest),
            ``tie_class`` with the soft vote or not one of the classes, or any of them for an
            additive (boosted) ensemble.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from fairlens.certify import read_model
        >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        >>> ens = read_model(DecisionTreeClassifier(random_state=0).fit(X, [0, 0, 1, 1]))
        >>> ens.with_vote("hard").vote, ens.vote, ens.with_vote("hard", tie_class=1).rank.tolist()
        ('hard', 'soft', [1, 0])
        """
        if vote is None and tie_class is None:
            return self
        if self.vote == "additive":
            raise ValueError(f"vote and tie_class do not apply to a {self.source}: its predict is the argmax of "
                             "the summed raw scores; leave them unset.")

        new = self.vote if vote is None else check_choice("vote", vote, VOTES)
        if new not in self.votes:
            raise ValueError(f"vote={new!r} is not what a {self.source} predicts (it predicts by the majority of its "
                             f"trees' hard votes); use vote={self.votes[0]!r} (its default).")
        tie = self.tie_class
        if tie_class is not None:
            if new == "soft":
                raise ValueError("tie_class only applies to vote='hard'; the soft vote breaks ties as "
                                 "scikit-learn's predict does (first class in classes_).")
            hits = np.flatnonzero(np.asarray(self.classes_) == tie_class)
            if hits.size != 1:
                raise ValueError(f"tie_class={tie_class!r} is not one of the classes {list(self.classes_)}.")
            tie = int(hits[0])
        if new == self.vote and tie == self.tie_class:
            return self
        return replace(self, vote=new, tie_class=tie, rank=None if tie != self.tie_class else self.rank)

    # --- inputs --------------------------------------------------------------------------------
    def round_X(self, X64):
        """The input as the library's comparisons read it: a finite ``missing_value`` as NaN, rounded to
        float32 where the library compares float32, the library's own reading (LightGBM's zero band),
        and NaN written as the NaN code ``-inf`` in a NaN-coded ensemble.

        Parameters
        ----------
        X64 : ndarray of float64, shape (n_samples, n_features)
            Validated input (see :meth:`check_X`).

        Returns
        -------
        ndarray of float64, shape (n_samples, n_features)
            A C-contiguous copy (never the caller's array).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from fairlens.certify import read_model
        >>> ens = read_model(DecisionTreeClassifier().fit([[0.0], [1.0]], [0, 1]))
        >>> Xr = ens.round_X(np.array([[0.1]]))
        >>> bool(Xr[0, 0] == np.float32(0.1)), bool(Xr[0, 0] == 0.1)
        (True, False)
        """
        X = np.asarray(X64, dtype=np.float64)
        mv = self.missing_value
        if mv == mv:  # e.g. XGBoost's missing=v: every v (compared in float32) is read as missing
            X = np.where(X.astype(np.float32) == np.float32(mv), np.nan, X)
        if self.f32_input:
            X = X.astype(np.float32).astype(np.float64)
        if self.library is not None:
            X = self.library.read_input(X)
        X = np.array(X, dtype=np.float64, order="C", copy=True)
        if self.nan_code:
            missing = np.isnan(X)
            if self.nan_as is None:
                X[missing] = NAN_CODE
            else:  # read as the value whose branch NaN takes at every node of its feature
                X = np.ascontiguousarray(np.where(missing, self.nan_as[None, :], X))
        return X

    def check_X(self, X, name="X", allow_nan=None):
        """``(X64, Xr)``: the validated float64 input (a DataFrame aligned by column name) and its
        copy as the library reads it (:meth:`round_X`).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Instances; no inf; NaN only with ``allow_nan`` (missing values).
        name : str, default="X"
            Name used in error messages.
        allow_nan : bool, optional
            Keep NaN (default: only in a NaN-coded ensemble).

        Returns
        -------
        X64 : ndarray of float64, shape (n_samples, n_features)
        Xr : ndarray of float64, shape (n_samples, n_features)

        Raises
        ------
        TypeError, ValueError
            For a non-numeric, non-finite or wrongly shaped ``X`` (naming ``name``).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from fairlens.certify import read_model
        >>> ens = read_model(DecisionTreeClassifier().fit([[0.0, 0.0], [1.0, 1.0]], [0, 1]))
        >>> X64, Xr = ens.check_X([[0.1, 0.2]])
        >>> X64.tolist(), Xr.tolist() == [[float(np.float32(0.1)), float(np.float32(0.2))]]
        ([[0.1, 0.2]], True)
        """
        if self.library is not None and self.feature_names_in is not None and hasattr(X, "columns"):
            X = self.library.frame(X)
        X64, _ = _check_X(X, self.n_features, name=name, feature_names=self.feature_names_in,
                          allow_nan=self.nan_code if allow_nan is None else bool(allow_nan))
        return X64, self.round_X(X64)

    def encode_y(self, y, name="y", n_rows=None):
        """Map labels to class indices, with a clear error for unknown labels.

        Parameters
        ----------
        y : array-like of labels
            Labels, each one of ``classes_``.
        name : str, default="y"
            Name used in error messages.
        n_rows : int, optional
            Expected number of labels (default: the length of ``y``).

        Returns
        -------
        ndarray of int64
            Index of each label in ``classes_``.

        Raises
        ------
        ValueError
            For a label not in ``classes_`` or a length other than ``n_rows``.

        Examples
        --------
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from fairlens.certify import read_model
        >>> ens = read_model(DecisionTreeClassifier().fit([[0.0], [1.0]], ["no", "yes"]))
        >>> ens.encode_y(["yes", "no"]).tolist()
        [1, 0]
        """
        if n_rows is None:
            n_rows = np.shape(y)[0] if np.ndim(y) >= 1 else 1
        return encode_labels(y, self.classes_, n_rows, name=name)

    # --- missing values ------------------------------------------------------------------------
    def accepts_nan(self, model=None):
        """Whether the ``predict`` of ``model`` (default: the ensemble's own model) accepts NaN, asked of
        the ensemble's library; False for an ensemble without a library or a model to ask.

        Parameters
        ----------
        model : object, optional
            The fitted model this ensemble was read from (default: the ``model`` field, kept only by
            ensembles whose library's ``predict`` decides; a TreeEnsemble stands for the model it keeps).

        Returns
        -------
        bool

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier
        >>> from fairlens.certify import read_model
        >>> X, y = np.arange(20.0).reshape(10, 2), [0, 1] * 5
        >>> read_model(HistGradientBoostingClassifier(max_iter=2).fit(X, y)).accepts_nan()
        True
        >>> read_model(GradientBoostingClassifier(n_estimators=2).fit(X, y)).accepts_nan()
        False
        """
        model = self.model if model is None else model
        if isinstance(model, TreeEnsemble):  # an ensemble given for its model: the model it keeps
            model = model.model
        if self.library is None or model is None:
            return False
        return bool(self.library.accepts_nan(model))

    def nan_coded(self, offer=None):
        """This ensemble with NaN as one more attack value (see :mod:`fairlens.certify._nancode`).

        Parameters
        ----------
        offer : ndarray of bool, shape (n_features,), optional
            Features into which the attacker may write NaN (default: every feature a node tests).
            Ignored when the library reads a finite ``missing_value`` as missing (it reaches every
            feature's nodes).

        Returns
        -------
        TreeEnsemble
            The coded ensemble: NaN (and ``missing_value``) is written ``-inf`` in its inputs, every
            node where NaN goes right has a new parent at threshold ``-inf``, and ``-inf`` is the first
            relevant value of every offered feature a node tests (``missing_value`` is never a finite
            candidate). Its verdicts on coded inputs are the library's verdicts with NaN; its library
            calls decode ``-inf`` back to NaN. A feature where NaN takes, at every node, the branch
            of one of its finite relevant values gets no ``-inf`` value and no new parents: NaN is
            read there as that value (``nan_as``), which reaches exactly the same leaves.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from fairlens.certify import read_model
        >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        >>> tree = DecisionTreeClassifier(random_state=0).fit(X, [0, 0, 1, 1])
        >>> fc = read_model(tree).nan_coded()
        >>> Xq = np.array([[0.0, np.nan], [np.nan, 1.0], [np.nan, np.nan]])
        >>> bool((fc.predict_proba(Xq) == tree.predict_proba(Xq)).all())
        True
        """
        if self.nan_code:
            raise ValueError("internal: the ensemble is NaN-coded already.")
        mv = self.missing_value
        ml = self.missing_left
        node_feature = np.where(self.feature >= 0, self.feature, -1)
        if offer is not None and mv != mv:  # NaN never reaches the features not offered: their nodes stay
            off = ~np.append(np.asarray(offer, bool), False)
            ml = ml | off[node_feature]
        nan_as = None
        if mv != mv:
            # a feature where NaN takes, at every node, the branch of a finite value the attacker
            # already has (e.g. XGBoost's default direction "right" at every node of a feature trained
            # without missing values: the branch of its top value): NaN is no new attack value there,
            # and a NaN input is read as that value, so its nodes need no NaN-code parent
            nan_as = _nan_routes_as_a_value(self.feature, self.threshold, ml, self.values_ptr, self.values)
            like = ~np.isnan(nan_as)
            ml = ml | np.append(like, False)[node_feature]
            nan_as[~like] = NAN_CODE
            if not like.any():
                nan_as = None
        c = code_nodes(self.feature, self.threshold, self.left, self.right, self.roots, ml)
        old, m = c["old"], c["n_nodes"]
        leaf_class = np.full(m, -1, dtype=np.int64)
        leaf_class[old] = self.leaf_class
        value = np.zeros((m, self.value.shape[1]), dtype=np.float64)
        value[old] = self.value
        tested = np.zeros(self.n_features, bool)
        tested[self.feature[self.feature >= 0]] = True
        if offer is not None:
            tested &= np.asarray(offer, bool)
        ptr, vals = self.values_ptr, self.values
        if mv == mv:
            ptr, vals = _without_value(ptr, vals, mv, self.f32_input)
        elif nan_as is not None:
            tested &= nan_as == NAN_CODE
        ptr, vals = code_values(ptr, vals, tested)
        return replace(self, feature=c["feature"], threshold=c["threshold"], left=c["left"], right=c["right"],
                       roots=c["roots"], leaf_class=leaf_class, value=value, missing_left=c["missing_left"],
                       values_ptr=ptr, values=vals, nan_code=True, nan_as=nan_as)

    def _decoded(self, X64):
        if not self.nan_code:
            return X64
        X = np.array(X64, dtype=np.float64, copy=True)
        X[X == NAN_CODE] = np.nan
        return X

    # --- predictions ---------------------------------------------------------------------------
    def library_predict_index(self, X64):
        """Class index predicted by the model's own ``predict`` for float64 rows.

        Parameters
        ----------
        X64 : ndarray of float64, shape (n_samples, n_features)
            Validated rows (see :meth:`check_X`; the NaN code of a coded ensemble is read as NaN).

        Returns
        -------
        ndarray of int64, shape (n_samples,)
            Index into ``classes_`` of the prediction (the replay's for an exact ensemble).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.ensemble import GradientBoostingClassifier
        >>> from fairlens.certify import read_model
        >>> X = np.arange(40.0).reshape(20, 2); y = [0, 1] * 10
        >>> gb = GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
        >>> bool((read_model(gb).library_predict_index(X) == gb.predict(X)).all())
        True
        """
        X64 = np.ascontiguousarray(X64, dtype=np.float64)
        if X64.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        if self.exact:
            return self.vote_rule.replay(self.flat(), self.round_X(self._decoded(X64)))
        if self.library is None or self.model is None:
            raise ValueError(f"the additive {self.source} keeps no model: its library's predict decides ties; "
                             "read the fitted model itself (certify(model, ...)).")
        labels = np.asarray(self.library.predict(self.model, self._decoded(X64))).reshape(-1)
        return self.encode_y(labels, name="predict")

    def library_scores(self, X64):
        """Raw scores from the model's library (n, n_classes; binary ``[0, margin]``).

        Parameters
        ----------
        X64 : ndarray of float64, shape (n_samples, n_features)
            Validated rows (see :meth:`check_X`).

        Returns
        -------
        ndarray of float64, shape (n_samples, n_classes)

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.ensemble import GradientBoostingClassifier
        >>> from fairlens.certify import read_model
        >>> X = np.arange(40.0).reshape(20, 2); y = [0, 1] * 10
        >>> ens = read_model(GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y))
        >>> bool(np.allclose(ens.library_scores(X), ens.replay_scores(X)))
        True
        """
        X64 = np.ascontiguousarray(X64, dtype=np.float64)
        r = np.asarray(self.library.raw_scores(self.model, self._decoded(X64)), dtype=np.float64)
        if r.ndim == 1 or r.shape[1] == 1:
            r = r.reshape(-1)
            return np.column_stack([np.zeros_like(r), r])
        return r

    def replay_scores(self, X):
        """Raw scores (n, n_classes) of an additive ensemble, replayed from the flat arrays with the
        library's arithmetic (binary: ``[0, margin]``).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Instances.

        Returns
        -------
        ndarray of float64, shape (n_samples, n_classes)

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.ensemble import HistGradientBoostingClassifier
        >>> from fairlens.certify import read_model
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 3)); y = (X[:, 0] > 0).astype(int)
        >>> X[rng.random(X.shape) < 0.2] = np.nan
        >>> hgb = HistGradientBoostingClassifier(max_iter=5, max_depth=2, random_state=0).fit(X, y)
        >>> ens = read_model(hgb).nan_coded()
        >>> bool(np.allclose(ens.replay_scores(X)[:, 1], hgb.decision_function(X)))
        True
        """
        if self.vote != "additive":
            raise ValueError(f"replay_scores is for additive ensembles; this one votes {self.vote!r} "
                             "(predict_proba gives the soft vote).")
        _, Xr = self.check_X(X)
        return _votes.raw_scores(self.flat(), Xr)

    def predict_proba(self, X):
        """The soft vote's class probabilities (mean of the trees' leaf vectors, scikit-learn's order).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Instances.

        Returns
        -------
        ndarray of float64, shape (n_samples, n_classes)
            Equal to a scikit-learn forest's ``predict_proba``.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> from fairlens.certify import read_model
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> rf = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
        >>> bool(np.array_equal(read_model(rf).predict_proba(X), rf.predict_proba(X)))
        True
        """
        if self.vote == "additive":
            raise ValueError("predict_proba is the soft vote of a voting forest; an additive ensemble has "
                             "replay_scores.")
        _, Xr = self.check_X(X)
        return _votes.soft_proba(self.flat(), Xr)

    def predict_trees(self, X):
        """Class index voted by every tree (the hard votes), shape (n_samples, n_trees).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Instances.

        Returns
        -------
        ndarray of int64, shape (n_samples, n_trees)

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from fairlens.certify import read_model
        >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        >>> ens = read_model(DecisionTreeClassifier(random_state=0).fit(X, [0, 0, 1, 1]))
        >>> ens.predict_trees(X).ravel().tolist()
        [0, 0, 1, 1]
        """
        _, Xr = self.check_X(X)
        return _walk.leaf_classes(self.flat(), Xr)

    def predict(self, X):
        """The certified prediction: the replay of an exact ensemble (a forest's soft or hard vote), else
        the model's own ``predict``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Instances.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted labels (values of ``classes_``).

        Examples
        --------
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> from fairlens.certify import read_model
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> rf = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
        >>> bool((read_model(rf).predict(X) == rf.predict(X)).all())
        True
        """
        X64, _ = self.check_X(X)
        return np.asarray(self.classes_)[self.library_predict_index(X64)]


def _nan_routes_as_a_value(feature, threshold, missing_left, ptr, vals):
    """Per feature: a finite relevant value whose branch NaN takes at every node that tests the
    feature (writing NaN there reaches exactly the leaves that value reaches: NaN is no new attack
    value, and a NaN input can be read as that value), or NaN where there is none.

    At a node ``v <= threshold`` goes left and NaN goes left where ``missing_left``; a finite ``v``
    routes like NaN at every node of the feature iff ``lo < v <= hi``, with ``lo`` the largest
    threshold where NaN goes right and ``hi`` the smallest where it goes left.

    Parameters
    ----------
    feature, threshold : ndarray of shape (n_nodes,)
        The nodes (``feature`` negative on leaves).
    missing_left : ndarray of bool, shape (n_nodes,)
        Where NaN goes at every node.
    ptr, vals : ndarray
        The finite relevant values, CSR by feature.

    Returns
    -------
    ndarray of float64, shape (n_features,)
        The smallest such value of each feature, NaN where NaN routes like no value.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.certify._ensemble import _nan_routes_as_a_value
    >>> feature, threshold = np.array([0, 0, 1, -1]), np.array([0.5, 2.0, 1.0, 0.0])
    >>> ptr, vals = np.array([0, 3, 5]), np.array([0.5, 2.0, 2.5, 1.0, 1.5])
    >>> # feature 0: NaN goes right at both nodes, like 2.5; feature 1: left at 1.0, like 1.0
    >>> _nan_routes_as_a_value(feature, threshold, np.array([False, False, True, True]), ptr, vals).tolist()
    [2.5, 1.0]
    >>> # feature 0: NaN right at 0.5 and left at 2.0, like 2.0; feature 1: right at 1.0, like 1.5
    >>> _nan_routes_as_a_value(feature, threshold, np.array([False, True, False, True]), ptr, vals).tolist()
    [2.0, 1.5]
    >>> # NaN left at 0.5 but right at 2.0: no value does that
    >>> _nan_routes_as_a_value(feature, threshold, np.array([True, False, True, True]), ptr, vals).tolist()
    [nan, 1.0]
    """
    n_features = ptr.shape[0] - 1
    out = np.full(n_features, np.nan)
    internal = feature >= 0
    f_int = feature[internal]
    t_int = threshold[internal]
    ml_int = np.asarray(missing_left, bool)[internal]
    lo = np.full(n_features, -np.inf)
    hi = np.full(n_features, np.inf)
    np.maximum.at(lo, f_int[~ml_int], t_int[~ml_int])
    np.minimum.at(hi, f_int[ml_int], t_int[ml_int])
    for f in range(n_features):
        v = vals[ptr[f]:ptr[f + 1]]
        like = v[(v > lo[f]) & (v <= hi[f])]
        if like.size:
            out[f] = like.min()
    return out


def _without_value(ptr, vals, mv, f32):
    """The relevant values without a finite value ``mv`` the library reads as missing (each interval
    keeps another representative where it has one)."""
    keep, out_ptr = [], np.zeros_like(ptr)
    if f32:
        def step(a, d):
            return float(np.nextafter(np.float32(a), np.float32(d)))
    else:
        def step(a, d):
            return float(np.nextafter(a, d))
    for f in range(ptr.shape[0] - 1):
        v = vals[ptr[f]:ptr[f + 1]].copy()
        hit = (v.astype(np.float32) == np.float32(mv)) if f32 else (v == mv)
        for k in np.flatnonzero(hit):
            lo = v[k - 1] if k > 0 else -np.inf
            below = step(v[k], -np.inf)
            if k == v.size - 1:  # the top value stands for (t_max, inf): go up
                v[k] = step(v[k], np.inf)
            else:  # v[k] is the threshold: another value of (lo, v[k]], else the interval is {v}
                v[k] = below if below > lo else np.nan
        v = v[~np.isnan(v)]
        keep.append(v)
        out_ptr[f + 1] = out_ptr[f] + v.size
    return out_ptr, (np.concatenate(keep) if keep else vals[:0])


def assemble(trees, *, classes, n_features, vote, source, library=None, model=None, votes=(), groups=None,
             base=None, tie_class=-1, f32=False, f32_input=True, eps=2.0**-52, feature_names_in=None,
             missing_value=float("nan"), values=None):
    """One :class:`TreeEnsemble` from per-tree arrays (the readers' common last step).

    Parameters
    ----------
    trees : list of tuple
        Per tree ``(feature, threshold, left, right, value, missing_left)`` with tree-local child
        indices and ``value`` of shape (n,) (a raw score per leaf) or (n, n_classes), optionally a
        seventh ``leaf_class``.
    classes : array-like
        The labels.
    n_features : int
        Number of input features.
    vote : {"soft", "hard", "additive"}
        The model's own decision rule.
    source : str
        The estimator's class name.
    library, model, votes, tie_class, f32, f32_input, feature_names_in, missing_value
        As the :class:`TreeEnsemble` fields (``model`` is kept only when the library is not exact).
    groups, base : array-like, optional
        Additive ensembles: the class of every tree, the base scores.
    eps : float, default=2**-52
        Unit roundoff of the score accumulation (``2**-24`` when it is float32).
    values : tuple, optional
        ``(values_ptr, values)`` when the library reads values in its own way (default from the
        thresholds).

    Returns
    -------
    TreeEnsemble

    Raises
    ------
    ValueError
        For no trees, a feature index out of range, or a model too large for memory.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.certify._ensemble import assemble
    >>> stump = (np.array([0, -1, -1]), np.array([0.5, 0, 0]), np.array([1, -1, -1]), np.array([2, -1, -1]),
    ...          np.array([0.0, -1.0, 1.0]), np.zeros(3, bool))
    >>> ens = assemble([stump, stump], classes=[0, 1], n_features=1, vote="additive", source="two stumps",
    ...                groups=[1, 1], base=[0.0, 0.25])
    >>> ens.roots.tolist(), ens.left.tolist()[3:], ens.vmax.tolist()
    ([0, 3], [4, -1, -1], [1.0, 1.0])
    """

    classes = np.asarray(classes)
    if classes.ndim != 1:
        raise ValueError("multi-output classifiers are not supported.")
    n_nodes = int(sum(t[0].shape[0] for t in trees))
    K = len(classes)
    additive = vote == "additive"
    W = 1 if additive else K
    check_memory(8.0 * n_nodes * (6 + W) + 8.0 * len(trees) * (K + 4 if additive else K * K),
                 f"reading {len(trees)} trees with {n_nodes} nodes and {K} classes",
                 "certify a smaller forest (fewer or shallower trees).")
    if not trees:
        raise ValueError(f"the {source} has no trees; fit it before certifying.")
    offsets = np.cumsum([0] + [t[0].shape[0] for t in trees])
    feature = np.concatenate([t[0] for t in trees]).astype(np.int64)
    if feature.size and feature.max() >= n_features:
        raise ValueError(f"the {source} tests feature {int(feature.max())} but has {n_features} features.")
    kw = {}
    if len(trees[0]) > 6:
        kw["leaf_class"] = np.concatenate([t[6] for t in trees])
    value = np.concatenate([np.asarray(t[4], np.float64).reshape(t[0].shape[0], -1) for t in trees])
    tol = acc_err = 0.0
    if additive:
        groups = np.asarray(groups, dtype=np.int64)
        base = np.asarray(base, dtype=np.float64)
        # float accumulation error bound (float32 sums: XGBoost) and the ambiguous zone
        absmax = np.array([np.abs(np.asarray(t[4]).reshape(-1)[t[0] < 0]).max() for t in trees])
        per_group, count = np.zeros(K), np.zeros(K)
        np.add.at(per_group, groups, absmax)
        np.add.at(count, groups, 1)
        scale = float((per_group + np.abs(base)).max())
        acc_err = float((count.max() + 2) * (eps if f32 else 2.0**-52) * scale)
        tol = (1e-5 if f32 else 1e-9) * max(1.0, scale)
    if values is not None:
        kw["values_ptr"], kw["values"] = values
    names_in = feature_names_in
    return TreeEnsemble(
        feature=feature, threshold=np.concatenate([t[1] for t in trees]).astype(np.float64),
        left=np.concatenate([np.where(t[2] >= 0, t[2] + o, -1) for t, o in zip(trees, offsets)]),
        right=np.concatenate([np.where(t[3] >= 0, t[3] + o, -1) for t, o in zip(trees, offsets)]),
        roots=offsets[:-1].astype(np.int64), classes_=classes, n_features=int(n_features), vote=vote,
        value=value, missing_left=np.concatenate([np.asarray(t[5], bool) for t in trees]), group=groups, base=base,
        tie_class=int(tie_class), votes=tuple(votes), f32=bool(f32), f32_input=bool(f32_input), tol=float(tol),
        acc_err=acc_err, source=source, model=None if (library is not None and library.exact) else model,
        library=library, feature_names=None if names_in is None else [str(c) for c in names_in],
        feature_names_in=None if names_in is None else np.asarray(names_in, dtype=object),
        missing_value=float(missing_value), **kw)
