"""Flatten fitted tree ensembles into arrays the certification kernels walk.

This module is the one model-adapter layer of :mod:`fairlens.certify`: every
supported model becomes a :class:`FlatForest` here, and nothing downstream
special-cases a model type (boosted ensembles would be added here).

Which vote is certified
-----------------------
A certificate is about the model's own ``predict``:

* ``vote="soft"`` (default for ``RandomForestClassifier``,
  ``ExtraTreesClassifier`` and ``DecisionTreeClassifier``): the mean of the
  trees' leaf class-probability vectors, first class on ties -- exactly
  ``forest.predict``, replayed with scikit-learn's own arithmetic (sum of the
  trees' ``tree_.value`` rows in the order of ``estimators_``, then ``/ n_trees``,
  then ``numpy.argmax``), so even float near-ties come out as in scikit-learn.
  (A forest predicting with ``n_jobs > 1`` adds the trees in thread order; that
  can only change rows tied to the last bit.)
* ``vote="hard"`` (default, and the only choice, for
  :class:`FeaturePartitionedForest`): the paper's majority of the trees' hard
  votes (section 4), ties by ``rank``.

:meth:`FlatForest.predict` is the predictor that is certified.

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

from dataclasses import dataclass, field, replace

import numpy as np

from . import _votes, _walk
from ._inputs import align_frame, check_X

__all__ = ["FlatForest", "flatten_forest", "relevant_values", "check_X", "align_frame", "VOTES"]

#: The votes a forest can be certified under.
VOTES = ("soft", "hard")


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
    """
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


def _tree_max_gain(leaf_proba, feature, roots, n_nodes_total):
    """``tmax[t, c, y] = max over the leaves l of tree t of p_l[c] - p_l[y]``."""
    K = leaf_proba.shape[1]
    n_trees = roots.shape[0]
    tmax = np.empty((n_trees, K, K), dtype=np.float64)
    ends = np.append(roots[1:], n_nodes_total)
    for t in range(n_trees):
        sl = slice(int(roots[t]), int(ends[t]))
        leaves = leaf_proba[sl][feature[sl] < 0]
        # (n_leaves, K, K): p[c] - p[y]
        tmax[t] = (leaves[:, :, None] - leaves[:, None, :]).max(axis=0)
    return tmax


@dataclass
class FlatForest:
    """A tree ensemble as flat arrays, with the vote that is certified.

    Built by :func:`flatten_forest`; the parameters are its fields.

    Parameters
    ----------
    feature, threshold, left, right, leaf_class : ndarray of shape (n_nodes,)
        Node arrays over all trees (``feature == -1`` on leaves, children
        ``-1`` on leaves; ``leaf_class`` is a class *index*, the tree's hard
        vote at that leaf).
    roots : ndarray of int64, shape (n_trees,)
        Root node of every tree (trees are stored one after the other, in the
        order of ``estimators_``).
    classes_ : ndarray
        The class labels; ``leaf_class`` indexes them.
    n_features : int
        Number of input features.
    rank : ndarray of int64, shape (n_classes,)
        Tie-break priority of the hard vote: among classes with the same number
        of votes the smallest rank wins. By default ties go to the class listed
        first in ``classes_`` (``numpy.argmax``'s rule); ``tie_class`` puts one
        class first (the FPF uses its training majority class).
    values_ptr, values : ndarray
        Relevant attack values (see :func:`relevant_values`).
    source : str, default="FlatForest"
        Name of the estimator class it came from.
    tie_class : int, default=-1
        Index of the class winning ties of the hard vote (-1: the default rule).
    feature_names : list of str, optional
        Names for display in results and widgets.
    vote : {"soft", "hard"}, default="hard"
        ``"soft"`` (mean of leaf probabilities, scikit-learn's ``predict``) or
        ``"hard"`` (the paper's majority of hard votes).
    leaf_proba : ndarray of shape (n_nodes, n_classes), optional
        Class-probability vector of every leaf (``tree_.value``; one-hot of
        ``leaf_class`` if not given).
    tmax : ndarray of shape (n_trees, n_classes, n_classes), optional
        ``tmax[t, c, y]`` the largest ``p_l[c] - p_l[y]`` over the leaves of
        tree ``t`` (computed if not given).
    feature_names_in : ndarray, optional
        Column names the model was fitted with (DataFrames are aligned to
        them), or None.
    soft_allowed : bool, default=True
        Whether the soft vote is the model's own prediction rule (False for a
        :class:`FeaturePartitionedForest`).
    missing_left : ndarray of bool, shape (n_nodes,), optional
        Where a missing value (NaN) goes at every node: scikit-learn's
        ``tree_.missing_go_to_left`` (False if not given). Recorded for the
        kernels' one tree walk.
    nan_code : bool, default=False
        True for the NaN-coded forest of :meth:`nan_coded` (its :meth:`check_X` accepts NaN and
        writes it as ``-inf``).

    Raises
    ------
    ValueError
        If ``vote`` is not one of :data:`VOTES` or the node arrays disagree in shape.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from fairlens.certify import flatten_forest
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> y = np.array([0, 0, 1, 1])                      # the label is feature 1
    >>> ff = flatten_forest(DecisionTreeClassifier(random_state=0).fit(X, y))
    >>> ff.n_trees, ff.vote, ff.feature.tolist(), ff.threshold.tolist()
    (1, 'soft', [1, -1, -1], [0.5, 0.0, 0.0])
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
    vote: str = "hard"
    leaf_proba: np.ndarray | None = field(default=None, repr=False)
    tmax: np.ndarray | None = field(default=None, repr=False)
    feature_names_in: np.ndarray | None = field(default=None, repr=False)
    soft_allowed: bool = True
    missing_left: np.ndarray | None = field(default=None, repr=False)
    nan_code: bool = field(default=False, repr=False)

    def __post_init__(self):
        if self.vote not in VOTES:
            raise ValueError(f"vote must be one of {VOTES}; got {self.vote!r}.")
        n_nodes = self.feature.shape[0]
        for nm in ("threshold", "left", "right", "leaf_class"):
            if getattr(self, nm).shape != (n_nodes,):
                raise ValueError(f"FlatForest.{nm} must have shape ({n_nodes},); got {getattr(self, nm).shape}.")
        if self.leaf_proba is None:
            lp = np.zeros((n_nodes, self.n_classes), dtype=np.float64)
            leaf = self.feature < 0
            lp[np.flatnonzero(leaf), self.leaf_class[leaf]] = 1.0
            self.leaf_proba = lp
        self.leaf_proba = np.ascontiguousarray(self.leaf_proba, dtype=np.float64)
        if self.leaf_proba.shape != (n_nodes, self.n_classes):
            raise ValueError(f"FlatForest.leaf_proba must have shape ({n_nodes}, {self.n_classes}); "
                             f"got {self.leaf_proba.shape}.")
        if self.tmax is None:
            self.tmax = _tree_max_gain(self.leaf_proba, self.feature, self.roots, n_nodes)
        if self.missing_left is None:
            self.missing_left = np.zeros(n_nodes, dtype=bool)
        self.missing_left = np.ascontiguousarray(self.missing_left, dtype=bool)
        if self.missing_left.shape != (n_nodes,):
            raise ValueError(f"FlatForest.missing_left must have shape ({n_nodes},); got {self.missing_left.shape}.")

    def nan_coded(self, offer=None):
        """This forest with NaN as one more attack value (see :mod:`fairlens.certify._nancode`).

        Parameters
        ----------
        offer : ndarray of bool, shape (n_features,), optional
            Features into which the attacker may write NaN (default: every feature a node tests).

        Returns
        -------
        FlatForest
            The coded forest: NaN is written ``-inf`` in its inputs, every node where NaN goes
            right has a new parent at threshold ``-inf``, and ``-inf`` is the first relevant
            value of every feature a node tests. Its verdicts on coded inputs are the
            library's verdicts with NaN.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from fairlens.certify import flatten_forest
        >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        >>> tree = DecisionTreeClassifier(random_state=0).fit(X, [0, 0, 1, 1])
        >>> fc = flatten_forest(tree).nan_coded()
        >>> Xq = np.array([[0.0, np.nan], [np.nan, 1.0], [np.nan, np.nan]])
        >>> from fairlens.certify import _votes
        >>> p = _votes.soft_proba(fc.flat(), np.where(np.isnan(Xq), -np.inf, Xq))
        >>> bool((p == tree.predict_proba(Xq)).all())
        True
        """
        import dataclasses

        from ._nancode import code_nodes, code_values

        if self.nan_code:
            raise ValueError("internal: the forest is NaN-coded already.")
        ml = self.missing_left
        if offer is not None:  # NaN never reaches the other features: their nodes stay as they are
            off = ~np.append(np.asarray(offer, bool), False)
            ml = ml | off[np.where(self.feature >= 0, self.feature, -1)]
        c = code_nodes(self.feature, self.threshold, self.left, self.right, self.roots, ml)
        old, m = c["old"], c["n_nodes"]
        leaf_class = np.full(m, -1, dtype=self.leaf_class.dtype)
        leaf_class[old] = self.leaf_class
        leaf_proba = np.zeros((m, self.n_classes), dtype=np.float64)
        leaf_proba[old] = self.leaf_proba
        tested = np.zeros(self.n_features, bool)
        tested[self.feature[self.feature >= 0]] = True
        if offer is not None:
            tested &= np.asarray(offer, bool)
        ptr, values = code_values(self.values_ptr, self.values, tested)
        return dataclasses.replace(self, feature=c["feature"], threshold=c["threshold"], left=c["left"],
                                   right=c["right"], roots=c["roots"], leaf_class=leaf_class,
                                   leaf_proba=leaf_proba, tmax=self.tmax, missing_left=c["missing_left"],
                                   values_ptr=ptr, values=values, nan_code=True)

    def flat(self, tol=0.0):
        """The kernels' one :class:`~fairlens.certify._flat.FlatEnsemble` of this forest.

        Parameters
        ----------
        tol : float, default=0.0
            Tolerance of the soft-vote bounds (``SOFT_TOL * n_trees`` in ``certify``).

        Returns
        -------
        FlatEnsemble
            The nodes, ``leaf_class`` (the hard vote), ``value`` (the leaves' class probabilities),
            ``rank``, ``tmax`` and the relevant values; the boosted fields are zeros.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from fairlens.certify import flatten_forest
        >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        >>> ff = flatten_forest(DecisionTreeClassifier(random_state=0).fit(X, [0, 0, 1, 1]))
        >>> ens = ff.flat()
        >>> ens.value.shape, ens.leaf_class.tolist(), ens.rank.tolist(), ens.tmax.shape
        ((3, 2), [0, 0, 1], [1, 2], (1, 2, 2))
        """
        from ._flat import FlatEnsemble

        T, K = self.n_trees, self.n_classes
        z = np.zeros(T, np.float64)
        return FlatEnsemble(self.feature, self.threshold, self.left, self.right, self.missing_left, self.roots,
                            self.leaf_class, self.leaf_proba, np.zeros(T, np.int64), np.zeros(K, np.float64),
                            self.rank, self.tmax, z, z.copy(), False, float(tol), float(tol), self.values_ptr,
                            self.values)

    @property
    def vote_rule(self):
        """The :class:`~fairlens.certify._votes.VoteRule` of this forest's vote."""
        from ._votes import HARD, SOFT

        return SOFT if self.vote == "soft" else HARD

    @property
    def n_trees(self):
        return int(self.roots.shape[0])

    @property
    def n_classes(self):
        return int(len(self.classes_))

    def with_vote(self, vote):
        """This forest certified under another vote (``"soft"`` or ``"hard"``).

        Parameters
        ----------
        vote : {"soft", "hard"}
            The vote to certify.

        Returns
        -------
        FlatForest
            ``self`` if ``vote`` is already its vote, else a copy with ``vote`` changed.

        Raises
        ------
        ValueError
            If ``vote`` is not one of :data:`VOTES`, or is ``"soft"`` for a model that
            predicts by hard votes (a :class:`FeaturePartitionedForest`).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from fairlens.certify import flatten_forest
        >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        >>> y = np.array([0, 0, 1, 1])                      # the label is feature 1
        >>> ff = flatten_forest(DecisionTreeClassifier(random_state=0).fit(X, y))
        >>> ff.with_vote("hard").vote, ff.vote
        ('hard', 'soft')
        """
        from .._validation import check_choice

        vote = check_choice("vote", vote, VOTES)
        if vote == self.vote:
            return self
        if vote == "soft" and not self.soft_allowed:
            raise ValueError(
                f"vote='soft' is not what a {self.source} predicts (it predicts by the majority of its "
                "trees' hard votes); use vote='hard' (the default for it)."
            )
        return replace(self, vote=vote)

    def arrays(self):
        """The node arrays in (hard-vote) kernel argument order.

        Returns
        -------
        tuple of ndarray
            ``(feature, threshold, left, right, leaf_class, roots)``.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from fairlens.certify import flatten_forest
        >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        >>> y = np.array([0, 0, 1, 1])                      # the label is feature 1
        >>> ff = flatten_forest(DecisionTreeClassifier(random_state=0).fit(X, y))
        >>> [a.tolist() for a in ff.arrays()]
        [[1, -1, -1], [0.5, 0.0, 0.0], [1, -1, -1], [2, -1, -1], [0, 0, 1], [0]]
        """
        return (self.feature, self.threshold, self.left, self.right, self.leaf_class, self.roots)

    def soft_arrays(self):
        """The node arrays in soft-vote kernel argument order (without ``tmax``).

        Returns
        -------
        tuple of ndarray
            ``(feature, threshold, left, right, leaf_proba, roots)``.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from fairlens.certify import flatten_forest
        >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        >>> y = np.array([0, 0, 1, 1])                      # the label is feature 1
        >>> ff = flatten_forest(DecisionTreeClassifier(random_state=0).fit(X, y))
        >>> ff.soft_arrays()[4].tolist()      # zero rows on internal nodes
        [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]
        """
        return (self.feature, self.threshold, self.left, self.right, self.leaf_proba, self.roots)

    def check_X(self, X, name="X"):
        """``(X64, Xr)`` for this forest (DataFrames aligned to ``feature_names_in``).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Instances; no NaN or inf.
        name : str, default="X"
            Name used in error messages.

        Returns
        -------
        X64 : ndarray of float64, shape (n_samples, n_features)
            The validated input.
        Xr : ndarray of float64, shape (n_samples, n_features)
            ``X64`` rounded to float32 (what scikit-learn's trees compare).

        Raises
        ------
        TypeError, ValueError
            For a non-numeric, non-finite or wrongly shaped ``X`` (naming ``name``).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from fairlens.certify import flatten_forest
        >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        >>> y = np.array([0, 0, 1, 1])                      # the label is feature 1
        >>> ff = flatten_forest(DecisionTreeClassifier(random_state=0).fit(X, y))
        >>> X64, Xr = ff.check_X([[0.1, 0.2]])
        >>> X64.tolist(), Xr.tolist() == [[float(np.float32(0.1)), float(np.float32(0.2))]]
        ([[0.1, 0.2]], True)
        """
        if not self.nan_code:
            return check_X(X, self.n_features, name=name, feature_names=self.feature_names_in)
        from ._nancode import encode_rows

        X64, Xr = check_X(X, self.n_features, name=name, feature_names=self.feature_names_in, allow_nan=True)
        return X64, encode_rows(Xr)  # the NaN-coded forest reads NaN as -inf

    def predict_trees(self, X):
        """Class index voted by every tree, shape (n_samples, n_trees).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Instances.

        Returns
        -------
        ndarray of int64, shape (n_samples, n_trees)
            Each tree's hard vote, as an index into ``classes_``.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from fairlens.certify import flatten_forest
        >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        >>> y = np.array([0, 0, 1, 1])                      # the label is feature 1
        >>> ff = flatten_forest(DecisionTreeClassifier(random_state=0).fit(X, y))
        >>> ff.predict_trees(X).ravel().tolist()
        [0, 0, 1, 1]
        """
        _, Xr = self.check_X(X)
        return _walk.leaf_classes(self.flat(), Xr)

    def vote_index(self, X, vote=None):
        """Index (into ``classes_``) of the prediction under ``vote`` (default ``self.vote``).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Instances.
        vote : {"soft", "hard"}, optional
            The vote (default: this forest's ``vote``).

        Returns
        -------
        ndarray of int64, shape (n_samples,)
            Index of the predicted class in ``classes_``.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from fairlens.certify import flatten_forest
        >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        >>> y = np.array([0, 0, 1, 1])                      # the label is feature 1
        >>> ff = flatten_forest(DecisionTreeClassifier(random_state=0).fit(X, y))
        >>> ff.vote_index(X).tolist(), ff.vote_index(X, vote="hard").tolist()
        ([0, 0, 1, 1], [0, 0, 1, 1])
        """
        vote = self.vote if vote is None else vote
        if vote == "soft":
            return np.argmax(self.predict_proba(X), axis=1)
        return _votes.hard_vote(self.predict_trees(X), self.n_classes, self.rank)

    def predict_proba(self, X):
        """Mean of the trees' leaf probabilities, in scikit-learn's summation order.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Instances.

        Returns
        -------
        ndarray of float64, shape (n_samples, n_classes)
            The soft vote's class probabilities (equal to the scikit-learn model's
            ``predict_proba``).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> from fairlens.certify import flatten_forest
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> rf = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
        >>> np.allclose(flatten_forest(rf).predict_proba(X), rf.predict_proba(X))
        True
        """
        _, Xr = self.check_X(X)
        return _votes.soft_proba(self.flat(), Xr)

    def predict(self, X, vote=None):
        """The certified label: soft vote (``forest.predict``) or the hard majority vote.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Instances.
        vote : {"soft", "hard"}, optional
            The vote (default: this forest's ``vote``).

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted labels (values of ``classes_``).

        Examples
        --------
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> from fairlens.certify import flatten_forest
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> rf = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
        >>> bool((flatten_forest(rf).predict(X) == rf.predict(X)).all())
        True
        """
        return self.classes_[self.vote_index(X, vote)]

    def predict_hard(self, X):
        """The paper's majority of the trees' hard votes (the predictor of ``vote="hard"``).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Instances.

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels of the hard majority vote (ties by ``rank``).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> from fairlens.certify import flatten_forest
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> rf = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
        >>> ff = flatten_forest(rf)
        >>> votes = np.stack([t.predict(X) for t in rf.estimators_], axis=1)   # class indices
        >>> majority = (2 * votes.sum(axis=1) > votes.shape[1]).astype(int)     # ties -> class 0
        >>> bool((ff.predict_hard(X) == rf.classes_[majority]).all())
        True
        """
        return self.predict(X, vote="hard")

    def encode_y(self, y, name="y", n_rows=None):
        """Map labels to class indices, with a clear error for unknown labels.

        Parameters
        ----------
        y : label or array-like of labels
            Labels, each one of ``classes_``.
        name : str, default="y"
            Name used in error messages.
        n_rows : int, optional
            Expected number of labels (default: the length of ``y``, 1 for a scalar).

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
        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from fairlens.certify import flatten_forest
        >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        >>> y = np.array([0, 0, 1, 1])                      # the label is feature 1
        >>> ff = flatten_forest(DecisionTreeClassifier(random_state=0).fit(X, y))
        >>> ff.encode_y([1, 0]).tolist()
        [1, 0]
        """
        from ._inputs import encode_labels as _encode_labels

        if n_rows is None:
            n_rows = np.shape(y)[0] if np.ndim(y) >= 1 else 1
        return _encode_labels(y, self.classes_, n_rows, name=name)


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
    value = np.asarray(tree.value[:, 0, :], dtype=np.float64)
    leaf = np.argmax(value, axis=1).astype(np.int64)
    proba = value.copy()  # what tree_.predict returns (fractions in scikit-learn >= 1.4)
    proba[internal] = 0.0
    return feat, thr, left, right, leaf, proba


def _tree_missing_left(est):
    """scikit-learn's per-node direction of a missing value (``tree_.missing_go_to_left``, in the
    node order of :func:`_tree_arrays`); False where the installed version does not record it."""
    tree = est.tree_
    ml = getattr(tree, "missing_go_to_left", None)
    if ml is None:
        return np.zeros(tree.node_count, dtype=bool)
    return np.asarray(ml, dtype=bool).copy()


def flatten_forest(model, tie_class=None, feature_names=None, vote=None):
    """Flatten a fitted classifier ensemble into a :class:`FlatForest`.

    The one model-adapter of :mod:`fairlens.certify`.

    Parameters
    ----------
    model : fitted classifier
        A DecisionTreeClassifier, RandomForestClassifier, ExtraTreesClassifier,
        FeaturePartitionedForest or FlatForest.
    tie_class : label, optional
        Class that wins ties of the *hard* vote. Default: the FPF's own rule
        (its majority class); for scikit-learn models the first class in
        ``classes_`` (``numpy.argmax``'s rule). The soft vote always follows
        scikit-learn (first class), so ``tie_class`` requires ``vote="hard"``.
    feature_names : list of str, optional
        Kept for display in results and widgets (default: the model's
        ``feature_names_in_``).
    vote : {"soft", "hard"}, optional
        The vote to certify. Default: ``"soft"`` for scikit-learn forests and
        trees (what their ``predict`` returns), ``"hard"`` for a
        :class:`FeaturePartitionedForest` (its ``predict``, the only choice)
        and for a FlatForest its own ``vote``.

    Returns
    -------
    FlatForest
        The trees' nodes concatenated, with the relevant attack values and the
        vote; its :meth:`FlatForest.predict` is the certified predictor.

    Raises
    ------
    TypeError
        For a model that is not one of the supported classifiers (boosted
        models go to :func:`flatten_boosted`).
    ValueError
        For a multi-output model, an invalid ``vote`` or ``tie_class``, a
        ``feature_names`` of the wrong length, or a forest too large for memory.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from fairlens.certify import flatten_forest
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
    >>> ff = flatten_forest(rf)
    >>> ff.n_trees, ff.vote, ff.source
    (10, 'soft', 'RandomForestClassifier')
    >>> flatten_forest(rf, vote="hard").vote
    'hard'
    """
    from sklearn.base import is_classifier
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier
    from sklearn.utils.validation import check_is_fitted

    from .._validation import check_choice, check_memory
    from ._fpf import FeaturePartitionedForest

    if vote is not None:
        check_choice("vote", vote, VOTES)
    if isinstance(model, FlatForest):
        if tie_class is not None:
            raise ValueError("tie_class cannot be changed on a FlatForest; pass it when flattening the model.")
        return model if vote is None else model.with_vote(vote)
    if isinstance(model, FeaturePartitionedForest):
        check_is_fitted(model, "estimators_")
        trees = list(model.estimators_)
        maps = list(model.estimators_features_)
        classes = np.asarray(model.classes_)
        n_features = int(model.n_features_in_)
        default_tie = int(model.majority_class_index_)
        default_vote, soft_allowed = "hard", False
    elif isinstance(model, (RandomForestClassifier, ExtraTreesClassifier)):
        check_is_fitted(model, "estimators_")
        if getattr(model, "n_outputs_", 1) != 1:
            raise ValueError("multi-output forests are not supported; fit one forest per output.")
        trees = list(model.estimators_)
        maps = [None] * len(trees)
        classes = np.asarray(model.classes_)
        n_features = int(model.n_features_in_)
        default_tie = -1
        default_vote, soft_allowed = "soft", True
    elif isinstance(model, DecisionTreeClassifier):
        check_is_fitted(model, "tree_")
        if getattr(model, "n_outputs_", 1) != 1:
            raise ValueError("multi-output trees are not supported; fit one tree per output.")
        trees = [model]
        maps = [None]
        classes = np.asarray(model.classes_)
        n_features = int(model.n_features_in_)
        default_tie = -1
        default_vote, soft_allowed = "soft", True
    else:
        kind = "a regressor" if hasattr(model, "predict") and not is_classifier(model) else type(model).__name__
        raise TypeError(
            f"model must be a fitted DecisionTreeClassifier, RandomForestClassifier, ExtraTreesClassifier "
            f"or FeaturePartitionedForest for flatten_forest; got {kind}. Regression forests are not supported; "
            "boosted classifiers and the other tree ensembles certify reads are certified by certify() directly "
            "(fairlens.certify.can_certify(model) says whether it reads a model)."
        )
    if classes.ndim != 1:
        raise ValueError("multi-output classifiers are not supported.")
    vote = default_vote if vote is None else vote
    if vote == "soft" and not soft_allowed:
        raise ValueError(
            f"vote='soft' is not what a {type(model).__name__} predicts (it predicts by the majority of its "
            "trees' hard votes); use vote='hard' (its default)."
        )
    K = len(classes)
    n_nodes = int(sum(t.tree_.node_count for t in trees))
    check_memory(8.0 * n_nodes * (6 + K) + 8.0 * len(trees) * K * K,
                 f"flattening {len(trees)} trees with {n_nodes} nodes and {K} classes",
                 "certify a smaller forest (fewer or shallower trees).")
    parts = [_tree_arrays(t, m) for t, m in zip(trees, maps)]
    for p in parts:
        if p[5].shape[1] != K:
            raise ValueError(f"a tree of the forest knows {p[5].shape[1]} classes but the forest has {K}.")
    offsets = np.cumsum([0] + [p[0].shape[0] for p in parts])
    feature = np.concatenate([p[0] for p in parts])
    threshold = np.concatenate([p[1] for p in parts])
    left = np.concatenate([np.where(p[2] >= 0, p[2] + o, -1) for p, o in zip(parts, offsets)])
    right = np.concatenate([np.where(p[3] >= 0, p[3] + o, -1) for p, o in zip(parts, offsets)])
    leaf = np.concatenate([p[4] for p in parts])
    proba = np.concatenate([p[5] for p in parts])
    missing_left = np.concatenate([_tree_missing_left(t) for t in trees])
    roots = offsets[:-1].astype(np.int64)
    if tie_class is None:
        tie = default_tie
    else:
        if vote == "soft":
            raise ValueError("tie_class only applies to vote='hard'; the soft vote breaks ties as "
                             "scikit-learn's predict does (first class in classes_).")
        hits = np.flatnonzero(classes == tie_class)
        if hits.size != 1:
            raise ValueError(f"tie_class={tie_class!r} is not one of the classes {list(classes)}.")
        tie = int(hits[0])
    rank = np.arange(1, K + 1, dtype=np.int64)
    if tie >= 0:
        rank[tie] = 0
    vptr, vals = relevant_values(feature, threshold, n_features)
    names_in = getattr(model, "feature_names_in_", None)
    if feature_names is None and names_in is not None:
        feature_names = [str(c) for c in names_in]
    if feature_names is not None:
        feature_names = [str(c) for c in feature_names]
        if len(feature_names) != n_features:
            raise ValueError(f"feature_names has {len(feature_names)} names but the model has {n_features} features.")
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
        feature_names=feature_names,
        vote=vote,
        leaf_proba=np.ascontiguousarray(proba, dtype=np.float64),
        feature_names_in=None if names_in is None else np.asarray(names_in, dtype=object),
        soft_allowed=soft_allowed,
        missing_left=missing_left,
    )
