"""Certify boosted tree ensembles: XGBoost, LightGBM, scikit-learn gradient boosting.

Beyond the paper (section 4 certifies forests voting by majority): a boosted model
predicts from the *sum* of its trees' leaf values, one raw score per class
(binary models: one margin). The attacker's question is unchanged -- can changing
``b`` features flip ``predict``? -- and the cascade carries over:

* **FLB, generalised** (section 4.3): tree ``t`` can lower the margin
  ``s_y - s_c`` by at most its swing (current leaf value minus its smallest
  *reachable* leaf when it adds to ``y``; its largest reachable leaf minus the
  current one when it adds to ``c``), and only if an attacked feature is tested
  on the instance's path in ``t`` (``S_f^+`` when the attacker must increase
  ``x_f``, ``S_f^-`` when she must decrease it). A leaf is reachable with budget
  ``b`` only if its path leaves the instance's path on at most ``b`` distinct
  features, each in one direction; its gain is credited to the set of the first
  node where the paths part. If the margin exceeds the sum of the ``b`` largest
  per-feature swings (``max(W(S_f^+), W(S_f^-))``), the row is certified.
* **ELB, generalised** (section 4.4): no cover of at most ``b`` sets whose
  union's total swing reaches the margin (and FLB does not already rule the
  class out) -- certified.
* **Brute force** (section 4.1): every set of at most ``b`` features and every
  relevant value (one representative per interval between the thresholds,
  chosen so that the library's own comparison puts it in that interval),
  searched by branch and bound with the same swing bound, each assignment
  replayed with the library's arithmetic; every witness is then checked with the
  library's own ``predict``.

Each library's trees are read from its public model dump and evaluated on its own
split semantics:

=====================  ===================================  ==========================
library                split (left branch)                  raw score
=====================  ===================================  ==========================
XGBoost                ``float32(x) < split`` (float32)     float32 sum, tree order
LightGBM               ``x <= threshold`` (double)          double sum (init score in
                                                            the first tree)
HistGradientBoosting   ``x <= threshold`` (double)          baseline + double sum
GradientBoosting       ``float32(x) <= threshold``          init raw + learning_rate *
                                                            leaf values
=====================  ===================================  ==========================

LightGBM's ``predict`` reads every ``|x| <= 1.0000000180025095e-35`` (``kZeroThreshold``) as 0
and splits the negatives from zero at ``-1.0000000180025095e-35``: the replay zeroes that band
in the input, moves each threshold inside it to the equivalent one outside it and never tries
an attack value inside it (see :func:`_lgb_threshold`).

XGBoost's ``x < s`` is rewritten as ``x <= s^-`` with ``s^-`` the float32 just
below ``s``, so every model becomes the same flat arrays the forest kernels walk
(``x[f] <= threshold``). The arrays here take finite inputs; a missing value (NaN, and
XGBoost's ``missing`` value) is followed by each node's default direction in the coded model
:meth:`BoostedModel.nan_coded` builds (see :mod:`fairlens.certify._nancode`). LightGBM nodes of
missing type ``"Zero"`` (``zero_as_missing=True``) are written as three plain threshold nodes
that send the zero band and NaN to the default child (:func:`_lgb_tree`). Categorical splits
raise a ``ValueError`` naming the feature.

Replay and ties: the replay sums the leaves as the library does (float32 in tree
order for XGBoost, bit-for-bit; float64 otherwise). Scores within ``tol`` of a tie
are *ambiguous* -- the library's link (sigmoid/softmax in float32 for XGBoost) or
tie rule (``>= 0`` for GradientBoosting, ``> 0`` for HistGradientBoosting) decides
them -- and are resolved by calling the library's ``predict`` on that input. The
clean prediction is always the library's ``predict``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_memory
from . import _votes, _walk
from ._families import boosted_family as _family

__all__ = ["BoostedModel", "Library", "flatten_boosted", "is_boosted", "boosted_instance_covers",
           "relevant_values64"]

# ---------------------------------------------------------------------------------------------
# detection (never imports xgboost or lightgbm)
# ---------------------------------------------------------------------------------------------
def is_boosted(model):
    """Whether ``model`` is a boosted ensemble handled by this module (or a refused relative)."""
    return isinstance(model, BoostedModel) or _family(model) is not None


# ---------------------------------------------------------------------------------------------
# flat representation
# ---------------------------------------------------------------------------------------------
#: LightGBM reads every ``x >= 1e300`` (even inf) as 1e300 and dumps a split that parts NaN from
#: every finite value at threshold 1e300: thresholds from here up separate no input LightGBM reads.
LGB_BIG = 1e300


def relevant_values64(feature, threshold, n_features):
    """Relevant attack values for ``x <= threshold`` on float64 inputs (LightGBM, HGB).

    For feature ``f`` the sorted distinct thresholds ``t_1 < ... < t_k`` and the
    next float64 above ``t_k``: ``t_j`` is the largest number of the interval
    ``(t_{j-1}, t_j]``, so each interval has exactly one representative.
    Non-finite thresholds and thresholds ``>= 1e300`` (splits of NaN from every finite
    value: scikit-learn's ``inf``, LightGBM's ``1e300``, which every finite input reaches the
    left side of) are left out, so every value is finite and read by the library as itself.
    """
    ptr = np.zeros(n_features + 1, dtype=np.int64)
    chunks = []
    for f in range(n_features):
        thr = np.asarray(threshold[feature == f], dtype=np.float64)
        thr = thr[np.isfinite(thr) & (thr < LGB_BIG)]  # NaN-only splits separate no finite values
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
    """How a boosted library's own model predicts, for a reader that registers one (the reader's file
    subclasses it; :class:`BoostedModel` calls it, so a new library touches no other module).

    Examples
    --------
    >>> from fairlens.certify._boosted import Library
    >>> Library().accepts_nan(None)
    True
    """

    def predict(self, model, X64):
        """The labels of the library's own ``predict`` on float64 rows (any shape with one label per row)."""
        raise NotImplementedError

    def raw_scores(self, model, X64):
        """The library's raw scores: ``(n,)`` (binary margin) or ``(n, n_classes)``."""
        raise NotImplementedError

    def accepts_nan(self, model):
        """Whether the library's ``predict`` accepts NaN (the reader recorded where it routes it)."""
        return True


@dataclass
class BoostedModel:
    """A boosted ensemble as flat arrays plus the library calls that define it.

    Built by :func:`flatten_boosted`; the parameters are its fields.

    Parameters
    ----------
    feature, threshold, left, right : ndarray of shape (n_nodes,)
        Node arrays (``x[f] <= threshold`` goes left on the library-rounded
        input, see :meth:`round_X`; ``feature == -1`` on leaves).
    value : ndarray of float64, shape (n_nodes,)
        Leaf values (0 on internal nodes).
    default_left : ndarray of bool, shape (n_nodes,)
        The library's direction for a missing value (taken by the coded model of
        :meth:`BoostedModel.nan_coded`).
    roots : ndarray of int64, shape (n_trees,)
        Root node of each tree, in the library's order.
    group : ndarray of int64, shape (n_trees,)
        Class index each tree adds to (binary: 1).
    base : ndarray of float64, shape (n_classes,)
        Base score / init raw prediction (binary: ``[0, base]``).
    classes_ : ndarray
        The labels.
    n_features : int
        Number of input features.
    f32 : bool
        Whether the library accumulates the scores in float32 (XGBoost).
    f32_input : bool
        Whether the library rounds the input to float32 (XGBoost, GradientBoosting).
    tol : float
        Half-width of the ambiguous zone around ties of the replayed scores.
    acc_err : float
        Bound on the float32 accumulation error of a real-number margin (added
        to ``tol`` in the bounds).
    source : str
        Estimator class name.
    library : str
        The family: ``"xgboost"``, ``"xgboost_booster"``, ``"lightgbm"``,
        ``"lightgbm_booster"``, ``"sklearn_gb"`` or ``"sklearn_hgb"``.
    model : object, optional
        The library model (its ``predict`` is the certified predictor).
    feature_names : list of str, optional
        Names for display.
    feature_names_in : ndarray, optional
        Column names the model was fitted with (DataFrames are aligned to them).
    vmin, vmax : ndarray of float64, shape (n_trees,), optional
        Smallest and largest leaf value of each tree (computed on creation).
    values_ptr, values : ndarray, optional
        Relevant attack values of every feature (computed on creation, as
        :func:`relevant_values` with the library's rounding).
    vote : str, default="additive"
        The certified predictor: argmax of the summed raw scores.
    _objective : str, default=""
        The booster's objective where it decides how ``predict`` reads scores
        (e.g. ``"multi:softmax"``).
    missing_value : float, default=nan
        The input value the library reads as missing: NaN, or XGBoost's
        ``missing`` parameter when it is set to a finite value (every such value
        then takes the node's default direction, as NaN does).
    adapter : Library, optional
        How the library's own model predicts and reads NaN (a :class:`Library` from the reader
        module of a library that registers one); its ``default_left`` is then the
        effective routing of NaN. None: the built-in XGBoost/LightGBM/scikit-learn calls.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import GradientBoostingClassifier
    >>> from fairlens.certify import flatten_boosted
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> gb = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0).fit(X, y)
    >>> bm = flatten_boosted(gb)
    >>> bm.n_trees, bm.library, bm.vote, bm.f32_input
    (10, 'sklearn_gb', 'additive', True)
    """

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    default_left: np.ndarray
    roots: np.ndarray
    group: np.ndarray
    base: np.ndarray
    classes_: np.ndarray
    n_features: int
    f32: bool
    f32_input: bool
    tol: float
    acc_err: float
    source: str
    library: str
    model: object = field(default=None, repr=False)
    feature_names: list | None = field(default=None, repr=False)
    feature_names_in: np.ndarray | None = field(default=None, repr=False)
    vmin: np.ndarray = field(default=None, repr=False)
    vmax: np.ndarray = field(default=None, repr=False)
    values_ptr: np.ndarray = field(default=None, repr=False)
    values: np.ndarray = field(default=None, repr=False)
    vote: str = "additive"
    missing_value: float = float("nan")
    adapter: object = field(default=None, repr=False)

    def __post_init__(self):
        n_trees = self.roots.shape[0]
        ends = np.append(self.roots[1:], self.feature.shape[0])
        self.vmin = np.empty(n_trees)
        self.vmax = np.empty(n_trees)
        for t in range(n_trees):
            sl = slice(int(self.roots[t]), int(ends[t]))
            lv = self.value[sl][self.feature[sl] < 0]
            self.vmin[t], self.vmax[t] = lv.min(), lv.max()
        if self.f32_input:
            from ._flatten import relevant_values

            self.values_ptr, self.values = relevant_values(self.feature, self.threshold, self.n_features)
        else:
            self.values_ptr, self.values = relevant_values64(self.feature, self.threshold, self.n_features)
        if self.library.startswith("lightgbm"):
            _lgb_zero_tops(self.values_ptr, self.values)

    @property
    def n_trees(self):
        return int(self.roots.shape[0])

    @property
    def n_classes(self):
        return int(len(self.classes_))

    def arrays(self):
        """Kernel argument order: feature, threshold, left, right, value, roots, group, base, vmin, vmax.

        Returns
        -------
        tuple of ndarray
            ``(feature, threshold, left, right, value, roots, group, base, vmin, vmax)``.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import GradientBoostingClassifier
        >>> from fairlens.certify import flatten_boosted
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> gb = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0).fit(X, y)
        >>> bm = flatten_boosted(gb)
        >>> len(bm.arrays()), bm.arrays()[5].tolist() == bm.roots.tolist()
        (10, True)
        """
        return (self.feature, self.threshold, self.left, self.right, self.value, self.roots, self.group,
                self.base, self.vmin, self.vmax)

    def flat(self, tol=None, tol_b=None):
        """The kernels' one :class:`~fairlens.certify._flat.FlatEnsemble` of this model (``value`` the
        raw leaf values as one column, ``missing_left`` the library's default directions).

        Parameters
        ----------
        tol : float, optional
            Half-width of the ambiguous zone of the replay (default: the model's ``tol`` attribute).
        tol_b : float, optional
            Tolerance of the bounds (default ``tol + acc_err``).

        Returns
        -------
        FlatEnsemble

        Examples
        --------
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import GradientBoostingClassifier
        >>> from fairlens.certify import flatten_boosted
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> bm = flatten_boosted(GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y))
        >>> ens = bm.flat()
        >>> ens.roots.tolist(), ens.group.tolist(), ens.value.shape[1], ens.f32
        ([0, 7, 14], [1, 1, 1], 1, False)
        """
        from ._flat import FlatEnsemble

        tol = float(self.tol if tol is None else tol)
        tol_b = float(tol + self.acc_err if tol_b is None else tol_b)
        m = self.feature.shape[0]
        return FlatEnsemble(self.feature, self.threshold, self.left, self.right,
                            np.ascontiguousarray(self.default_left, dtype=bool), self.roots, np.zeros(m, np.int64),
                            np.ascontiguousarray(self.value.reshape(m, 1)), self.group, self.base,
                            np.arange(self.n_classes, dtype=np.int64), np.zeros((0, 0, 0), np.float64), self.vmin,
                            self.vmax, bool(self.f32), tol, tol_b, self.values_ptr, self.values)

    #: The decision rule: summed raw scores (see :mod:`fairlens.certify._votes`).
    @property
    def vote_rule(self):
        """The :class:`~fairlens.certify._votes.VoteRule` of a boosted model (``ADDITIVE``)."""
        from ._votes import ADDITIVE

        return ADDITIVE

    def check_arrays(self):
        """Shapes and dtypes of the flat arrays every boosted kernel relies on (checked once per
        call of ``certify``, before any kernel; a hand-made or altered model fails here, not inside
        a kernel).

        Raises
        ------
        ValueError
            If an array has the wrong dtype or shape, or an index is out of range.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import GradientBoostingClassifier
        >>> from fairlens.certify import flatten_boosted
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> gb = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0).fit(X, y)
        >>> bm = flatten_boosted(gb)
        >>> bm.check_arrays()             # silent when consistent
        >>> bm.group = bm.group.astype(np.int32)
        >>> bm.check_arrays()
        Traceback (most recent call last):
        ...
        ValueError: internal: BoostedModel.group must be int64 of shape (10,); got int32 (10,).
        """
        m = self.feature.shape[0]
        K, T, d = self.n_classes, self.n_trees, self.n_features
        spec = {"feature": (np.int64, (m,)), "threshold": (np.float64, (m,)), "left": (np.int64, (m,)),
                "right": (np.int64, (m,)), "value": (np.float64, (m,)), "roots": (np.int64, (T,)),
                "group": (np.int64, (T,)), "base": (np.float64, (K,)), "vmin": (np.float64, (T,)),
                "vmax": (np.float64, (T,)), "values_ptr": (np.int64, (d + 1,))}
        for name, (dt, shape) in spec.items():
            a = getattr(self, name)
            if a.dtype != dt or a.shape != shape:
                raise ValueError(f"internal: BoostedModel.{name} must be {np.dtype(dt).name} of shape {shape}; "
                                 f"got {a.dtype} {a.shape}.")
        if T and (self.group.min() < 0 or self.group.max() >= K):
            raise ValueError("internal: BoostedModel.group holds a class index out of range.")
        if m and (self.feature.max() >= d or self.roots.min() < 0 or self.roots.max() >= m):
            raise ValueError("internal: BoostedModel feature or root index out of range.")
        if self.values_ptr[-1] != self.values.shape[0]:
            raise ValueError("internal: BoostedModel.values_ptr does not match values.")

    def round_X(self, X64):
        """The input as the library's comparisons see it (float32-rounded for XGBoost/GB;
        LightGBM reads every ``|x| <= 1.0000000180025095e-35`` as 0).

        Parameters
        ----------
        X64 : ndarray of float64, shape (n_samples, n_features)
            Validated input (see :meth:`check_X`).

        Returns
        -------
        ndarray of float64, shape (n_samples, n_features)
            The rounded copy, C-contiguous.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import GradientBoostingClassifier
        >>> from fairlens.certify import flatten_boosted
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> gb = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0).fit(X, y)
        >>> bm = flatten_boosted(gb)
        >>> Xr = bm.round_X(np.full((1, 30), 0.1))
        >>> bool(Xr[0, 0] == np.float32(0.1)), bool(Xr[0, 0] == 0.1)
        (True, False)
        """
        mv = self.missing_value
        if mv == mv:  # XGBoost's missing=v: every v (compared in float32) is read as missing
            X64 = np.where(np.asarray(X64, np.float64).astype(np.float32) == np.float32(mv), np.nan, X64)
        if self.f32_input:
            return np.ascontiguousarray(X64.astype(np.float32).astype(np.float64))
        if self.library.startswith("lightgbm"):
            # LightGBM reads |x| <= 1e-35f as 0 and clamps |x| >= 1e300 to +-1e300 (NaN kept)
            Xl = np.clip(np.where(np.abs(X64) <= LGB_ZERO, 0.0, X64), -LGB_BIG, LGB_BIG)
            return np.ascontiguousarray(Xl, dtype=np.float64)
        return np.ascontiguousarray(X64, dtype=np.float64)

    def check_X(self, X, name="X", allow_nan=None):
        """``(X64, Xr)``: validated float64 input (DataFrames aligned by column name) and its
        library-rounded copy.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Instances; no inf; NaN only with ``allow_nan`` (missing values).
        name : str, default="X"
            Name used in error messages.
        allow_nan : bool, optional
            Keep NaN (default: only for the NaN-coded model, ``NanCodedBoosted``).

        Returns
        -------
        X64 : ndarray of float64, shape (n_samples, n_features)
            The validated input.
        Xr : ndarray of float64, shape (n_samples, n_features)
            ``X64`` as :meth:`round_X` rounds it.

        Raises
        ------
        TypeError, ValueError
            For a non-numeric, non-finite or wrongly shaped ``X`` (naming ``name``).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import GradientBoostingClassifier
        >>> from fairlens.certify import flatten_boosted
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> gb = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0).fit(X, y)
        >>> bm = flatten_boosted(gb)
        >>> X64, Xr = bm.check_X(X[:3])
        >>> X64.shape, bool(np.array_equal(Xr, X64.astype(np.float32)))
        ((3, 30), True)
        """
        from ._inputs import check_X

        if self.library == "lightgbm" and hasattr(X, "columns") and self.feature_names_in is not None:
            # LightGBM stores the names it was fitted on with spaces replaced by underscores
            # (``feature_names_in_`` too) and its own predict reads columns by position; align the
            # caller's frame by name under that same renaming, so "mean radius" finds "mean_radius".
            X = X.rename(columns=lambda c: str(c).replace(" ", "_"))
        X64, _ = check_X(X, self.n_features, name=name, feature_names=self.feature_names_in,
                         allow_nan=self._allow_nan if allow_nan is None else bool(allow_nan))
        return X64, self.round_X(X64)

    #: Whether :meth:`check_X` keeps NaN (the NaN-coded model, ``NanCodedBoosted``).
    _allow_nan = False

    def nan_coded(self, offer=None, missing_left=None, missing_value=float("nan")):
        """This model with NaN as one more attack value (see :mod:`fairlens.certify._nancode`).

        Parameters
        ----------
        offer : ndarray of bool, shape (n_features,), optional
            Features into which the attacker may write NaN (default: every feature a node tests).
        missing_left : ndarray of bool, shape (n_nodes,), optional
            Where NaN goes at every node (default: the library's own routing,
            :func:`fairlens.certify._missing.missing_routing`, or ``default_left`` without a
            library model).
        missing_value : float, default=nan
            A finite value the library also reads as missing (default: this model's
            ``missing_value``, XGBoost's ``missing`` parameter); it is written as the NaN code and
            never offered as a finite value.

        Returns
        -------
        BoostedModel
            A ``NanCodedBoosted``: this model with NaN coded as ``-inf`` and a node
            parting ``-inf`` from the finite values above every node that sends NaN right.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.ensemble import HistGradientBoostingClassifier
        >>> from fairlens.certify import flatten_boosted
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 3)); y = (X[:, 0] > 0).astype(int)
        >>> X[rng.random(X.shape) < 0.2] = np.nan
        >>> hgb = HistGradientBoostingClassifier(max_iter=5, max_depth=2, random_state=0).fit(X, y)
        >>> bm = flatten_boosted(hgb).nan_coded()
        >>> bool(np.allclose(bm.replay_scores(X)[:, 1], hgb.decision_function(X)))
        True
        """
        import dataclasses

        from ._nancode import code_nodes

        missing_value = self.missing_value if missing_value != missing_value else missing_value
        if missing_left is None:
            missing_left = self.default_left
            if self.model is not None and self.adapter is None:
                from ._missing import missing_routing

                # the library's routing of this model, read once (it dumps the model): the flat
                # arrays are a snapshot of the model, and so is the routing aligned to them
                r = self.__dict__.get("_routing")
                if r is None:
                    r = self.__dict__["_routing"] = missing_routing(self.model)
                if not np.array_equal(r.feature, self.feature):
                    raise RuntimeError("internal: the missing-value routing is not aligned with the flat model.")
                missing_left, missing_value = r.missing_left, r.missing_value
        base = self
        if isinstance(self, NanCodedBoosted):
            raise ValueError("internal: the model is NaN-coded already.")
        ml = np.asarray(missing_left, bool)
        if offer is not None and missing_value != missing_value:
            # NaN never reaches the features not offered: their nodes stay as they are
            off = ~np.append(np.asarray(offer, bool), False)
            ml = ml | off[np.where(base.feature >= 0, base.feature, -1)]
        c = code_nodes(base.feature, base.threshold, base.left, base.right, base.roots, ml)
        value = np.zeros(c["n_nodes"], np.float64)
        value[c["old"]] = base.value
        kw = {f.name: getattr(base, f.name) for f in dataclasses.fields(base) if f.init}
        kw.update(feature=c["feature"], threshold=c["threshold"], left=c["left"], right=c["right"], value=value,
                  default_left=c["missing_left"], roots=c["roots"], missing_value=float(missing_value))
        tested = np.zeros(self.n_features, bool)
        tested[self.feature[self.feature >= 0]] = True
        offer = tested if offer is None else (tested & np.asarray(offer, bool))
        return NanCodedBoosted(**kw, offer=offer)

    def replay_scores(self, X):
        """Raw scores (n, n_classes) replayed from the flat arrays (binary: ``[0, margin]``).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Instances.

        Returns
        -------
        ndarray of float64, shape (n_samples, n_classes)
            Base score plus the leaf values of every tree, per class.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import GradientBoostingClassifier
        >>> from fairlens.certify import flatten_boosted
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> gb = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0).fit(X, y)
        >>> bm = flatten_boosted(gb)
        >>> bool(np.allclose(bm.replay_scores(X)[:, 1], gb.decision_function(X)))
        True
        """
        _, Xr = self.check_X(X)
        return _votes.raw_scores(self.flat(), Xr)

    def _lib_input(self, X64):
        if self.feature_names_in is not None and self.library in ("xgboost", "lightgbm", "sklearn_gb",
                                                                   "sklearn_hgb"):
            import pandas as pd

            return pd.DataFrame(X64, columns=list(self.feature_names_in))
        return X64

    def library_predict_index(self, X64):
        """Class index predicted by the library's own ``predict`` for float64 rows.

        Parameters
        ----------
        X64 : ndarray of float64, shape (n_samples, n_features)
            Validated rows (see :meth:`check_X`).

        Returns
        -------
        ndarray of int64, shape (n_samples,)
            Index into ``classes_`` of the library's prediction.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import GradientBoostingClassifier
        >>> from fairlens.certify import flatten_boosted
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> gb = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0).fit(X, y)
        >>> bm = flatten_boosted(gb)
        >>> bool((bm.classes_[bm.library_predict_index(X)] == gb.predict(X)).all())
        True
        """
        X64 = np.ascontiguousarray(X64, dtype=np.float64)
        if X64.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        m = self.model
        lib = self.library
        if self.adapter is not None:
            return self.encode_y(np.asarray(self.adapter.predict(m, X64)).reshape(-1), name="predict")
        if lib in ("xgboost", "lightgbm", "sklearn_gb", "sklearn_hgb"):
            labels = np.asarray(m.predict(self._lib_input(X64)))
            return self.encode_y(labels, name="predict")
        if lib == "xgboost_booster":
            import xgboost as xgb

            p = np.asarray(m.predict(xgb.DMatrix(X64, feature_names=m.feature_names)))
        else:  # lightgbm_booster
            p = np.asarray(m.predict(X64))
        if p.ndim == 1:
            if self._objective == "multi:softmax":
                return p.astype(np.int64)
            if lib == "xgboost_booster":
                return (p > 0.5).astype(np.int64)
            return np.argmax(np.column_stack([1.0 - p, p]), axis=1).astype(np.int64)
        return np.argmax(p, axis=1).astype(np.int64)

    def library_scores(self, X64):
        """Raw scores from the library (n, n_classes; binary ``[0, margin]``).

        Parameters
        ----------
        X64 : ndarray of float64, shape (n_samples, n_features)
            Validated rows (see :meth:`check_X`).

        Returns
        -------
        ndarray of float64, shape (n_samples, n_classes)
            The library's margins (``output_margin``, ``raw_score`` or
            ``decision_function``); binary: ``[0, margin]``.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import GradientBoostingClassifier
        >>> from fairlens.certify import flatten_boosted
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> gb = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0).fit(X, y)
        >>> bm = flatten_boosted(gb)
        >>> bool(np.allclose(bm.library_scores(X), bm.replay_scores(X)))
        True
        """
        X64 = np.ascontiguousarray(X64, dtype=np.float64)
        m = self.model
        lib = self.library
        if self.adapter is not None:
            r = self.adapter.raw_scores(m, X64)
        elif lib == "xgboost":
            r = m.predict(self._lib_input(X64), output_margin=True)
        elif lib == "xgboost_booster":
            import xgboost as xgb

            r = m.predict(xgb.DMatrix(X64, feature_names=m.feature_names), output_margin=True)
        elif lib == "lightgbm":
            r = m.predict(self._lib_input(X64), raw_score=True)
        elif lib == "lightgbm_booster":
            r = m.predict(X64, raw_score=True)
        else:
            r = m.decision_function(self._lib_input(X64))
        r = np.asarray(r, dtype=np.float64)
        if r.ndim == 1 or r.shape[1] == 1:
            r = r.reshape(-1)
            return np.column_stack([np.zeros_like(r), r])
        return r

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
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import GradientBoostingClassifier
        >>> from fairlens.certify import flatten_boosted
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> gb = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0).fit(X, y)
        >>> bm = flatten_boosted(gb)
        >>> bm.encode_y([1, 0]).tolist()
        [1, 0]
        """
        from ._inputs import encode_labels as _encode_labels

        if n_rows is None:
            n_rows = np.shape(y)[0] if np.ndim(y) >= 1 else 1
        return _encode_labels(y, self.classes_, n_rows, name=name)

    def predict(self, X):
        """The certified prediction: the library's own ``predict`` (labels).

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
        >>> import numpy as np
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import GradientBoostingClassifier
        >>> from fairlens.certify import flatten_boosted
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> gb = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0).fit(X, y)
        >>> bm = flatten_boosted(gb)
        >>> bool((bm.predict(X) == gb.predict(X)).all())
        True
        """
        X64, _ = self.check_X(X)
        return self.classes_[self.library_predict_index(X64)]

    _objective: str = ""


@dataclass
class NanCodedBoosted(BoostedModel):
    """A :class:`BoostedModel` whose inputs write NaN (and XGBoost's ``missing`` value) as the NaN
    code ``-inf`` (see :mod:`fairlens.certify._nancode`; built by :meth:`BoostedModel.nan_coded`).

    Its node arrays are the coded ones; ``-inf`` is the first relevant value of the features in
    ``offer``; :meth:`round_X` codes the inputs; the library calls decode them (``-inf`` -> NaN),
    so every witness is replayed and checked with the library's own ``predict`` on NaN.
    """

    offer: np.ndarray = field(default=None, repr=False)
    _allow_nan = True

    def __post_init__(self):
        super().__post_init__()
        from ._nancode import code_values

        ptr, vals = self.values_ptr, self.values
        mv = self.missing_value
        if mv == mv:  # a finite value read as missing is never a finite candidate
            keep, out_ptr = [], np.zeros_like(ptr)
            for f in range(ptr.shape[0] - 1):
                v = vals[ptr[f]:ptr[f + 1]].copy()
                hit = (v.astype(np.float32) == np.float32(mv)) if self.f32_input else (v == mv)
                step = (lambda a, d: float(np.nextafter(np.float32(a), np.float32(d)))) if self.f32_input else \
                    (lambda a, d: float(np.nextafter(a, d)))
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
            ptr, vals = out_ptr, (np.concatenate(keep) if keep else vals[:0])
        self.values_ptr, self.values = code_values(ptr, vals, self.offer)

    def round_X(self, X64):
        Xr = np.array(super().round_X(X64), dtype=np.float64, order="C", copy=True)  # never the caller's array
        Xr[np.isnan(Xr)] = -np.inf
        return Xr

    def _decoded(self, X64):
        X64 = np.array(X64, dtype=np.float64, copy=True)
        X64[X64 == -np.inf] = np.nan
        return X64

    def library_predict_index(self, X64):
        return super().library_predict_index(self._decoded(X64))

    def library_scores(self, X64):
        return super().library_scores(self._decoded(X64))


def _assemble(trees, groups, base, classes, n_features, *, f32, f32_input, source, library, model,
              feature_names_in, eps, objective="", adapter=None):
    """Concatenate per-tree arrays ``(feature, threshold, left, right, value, default_left)``."""
    n_nodes = int(sum(t[0].shape[0] for t in trees))
    K = len(classes)
    check_memory(8.0 * n_nodes * 7 + 8.0 * len(trees) * (K + 4),
                 f"flattening {len(trees)} boosted trees with {n_nodes} nodes",
                 "certify a smaller model (fewer or shallower trees).")
    if not trees:
        raise ValueError(f"the {source} has no trees; fit it before certifying.")
    offsets = np.cumsum([0] + [t[0].shape[0] for t in trees])
    feature = np.concatenate([t[0] for t in trees]).astype(np.int64)
    threshold = np.concatenate([t[1] for t in trees]).astype(np.float64)
    left = np.concatenate([np.where(t[2] >= 0, t[2] + o, -1) for t, o in zip(trees, offsets)]).astype(np.int64)
    right = np.concatenate([np.where(t[3] >= 0, t[3] + o, -1) for t, o in zip(trees, offsets)]).astype(np.int64)
    value = np.concatenate([t[4] for t in trees]).astype(np.float64)
    dleft = np.concatenate([t[5] for t in trees]).astype(bool)
    if feature.size and feature.max() >= n_features:
        raise ValueError(f"the {source} tests feature {int(feature.max())} but has {n_features} features.")
    roots = offsets[:-1].astype(np.int64)
    groups = np.asarray(groups, dtype=np.int64)
    base = np.asarray(base, dtype=np.float64)
    # float accumulation error bound (only XGBoost sums in float32) and the ambiguous zone
    absmax = np.array([np.abs(t[4][t[0] < 0]).max() for t in trees])
    per_group = np.zeros(K)
    count = np.zeros(K)
    np.add.at(per_group, groups, absmax)
    np.add.at(count, groups, 1)
    scale = float((per_group + np.abs(base)).max())
    acc_err = float(((count.max() + 2) * eps * scale)) if f32 else float((count.max() + 2) * 2.0**-52 * scale)
    tol = (1e-5 if f32 else 1e-9) * max(1.0, scale)
    names_in = getattr(model, "feature_names_in_", None)
    feature_names = [str(c) for c in names_in] if names_in is not None else None
    bm = BoostedModel(
        feature=np.ascontiguousarray(feature), threshold=np.ascontiguousarray(threshold),
        left=np.ascontiguousarray(left), right=np.ascontiguousarray(right), value=np.ascontiguousarray(value),
        default_left=dleft, roots=roots, group=np.ascontiguousarray(groups), base=np.ascontiguousarray(base),
        classes_=np.asarray(classes), n_features=int(n_features), f32=bool(f32), f32_input=bool(f32_input),
        tol=float(tol), acc_err=acc_err, source=source, library=library, model=model,
        feature_names=feature_names,
        feature_names_in=None if names_in is None else np.asarray(names_in, dtype=object), adapter=adapter,
    )
    bm._objective = objective
    return bm


# ---------------------------------------------------------------------------------------------
# XGBoost
# ---------------------------------------------------------------------------------------------
def _flatten_xgboost(model, library):
    booster = model if library == "xgboost_booster" else model.get_booster()
    js = json.loads(bytes(booster.save_raw(raw_format="json")))
    learner = js["learner"]
    objective = learner["objective"]["name"]
    if objective not in ("binary:logistic", "multi:softprob", "multi:softmax"):
        raise ValueError(f"XGBoost objective {objective!r} is not supported; certify a classifier trained with "
                         "'binary:logistic', 'multi:softprob' or 'multi:softmax'.")
    gb = learner["gradient_booster"]
    if gb["name"] != "gbtree":
        raise ValueError(f"XGBoost booster {gb['name']!r} is not supported; use booster='gbtree' "
                         "(dart drops trees at random, gblinear has no trees).")
    mp = learner["learner_model_param"]
    if int(mp.get("num_target", "1")) != 1:
        raise ValueError("multi-target XGBoost models are not supported; fit one model per target.")
    num_class = int(mp.get("num_class", "0"))
    n_features = int(mp["num_feature"])
    tmodel = gb["model"]
    trees_js = tmodel["trees"]
    info = [int(g) for g in tmodel["tree_info"]]
    n_use = len(trees_js)
    if library == "xgboost":
        best = getattr(model, "best_iteration", None) if _xgb_has_best(model) else None
        if best is not None:
            indptr = tmodel.get("iteration_indptr")
            if indptr is not None:
                n_use = int(indptr[int(best) + 1])
    names = booster.feature_names or [f"f{j}" for j in range(n_features)]
    trees = []
    for t in trees_js[:n_use]:
        L = np.asarray(t["left_children"], dtype=np.int64)
        R = np.asarray(t["right_children"], dtype=np.int64)
        F = np.asarray(t["split_indices"], dtype=np.int64)
        C = np.asarray(t["split_conditions"], dtype=np.float32)
        D = np.asarray(t["default_left"], dtype=bool)
        S = np.asarray(t.get("split_type", [0] * L.size), dtype=np.int64)
        leaf = L < 0
        if np.any(S[~leaf] != 0):
            f = int(F[~leaf][S[~leaf] != 0][0])
            raise ValueError(f"feature {names[f]!r} (index {f}) has categorical splits in this XGBoost model; "
                             "categorical splits are not supported -- one-hot encode it instead.")
        feat = np.where(leaf, -1, F)
        # x < s  (float32)  <=>  x <= the float32 just below s
        thr = np.where(leaf, 0.0, np.nextafter(C, np.float32(-np.inf)).astype(np.float64))
        val = np.where(leaf, C.astype(np.float64), 0.0)
        trees.append((feat, thr, np.where(leaf, -1, L), np.where(leaf, -1, R), val, D))
    if num_class <= 1:
        classes = np.asarray(model.classes_) if library == "xgboost" else np.array([0, 1])
        groups = [1] * n_use
        K = 2
    else:
        classes = np.asarray(model.classes_) if library == "xgboost" else np.arange(num_class)
        groups = info[:n_use]
        K = num_class
    if len(classes) != K:
        raise ValueError(f"the XGBoost model has {K} outputs but {len(classes)} classes.")
    bm = _assemble(trees, groups, np.zeros(K), classes, n_features, f32=True, f32_input=True,
                   source=type(model).__name__, library=library, model=model,
                   feature_names_in=getattr(model, "feature_names_in_", None), eps=2.0**-24,
                   objective=objective)
    bm.base = _xgb_base(bm, booster, info, K)
    return bm


def _xgb_has_best(model):
    try:
        return getattr(model, "best_iteration", None) is not None
    except AttributeError:
        return False


def _xgb_base(bm, booster, info, K):
    """Base margin per class: the float32 with which the float32 replay of all trees matches
    ``predict(output_margin=True)`` bit for bit on probe rows drawn from the relevant values
    (candidates: the configured ``base_score`` through the objective's link, and a scan of
    float32 neighbours of the value implied by the first round)."""
    import xgboost as xgb

    rng = np.random.default_rng(0)
    n_probe = 64
    X = np.zeros((n_probe, bm.n_features))
    for f in range(bm.n_features):
        v = bm.values[bm.values_ptr[f]:bm.values_ptr[f + 1]]
        X[:, f] = rng.choice(v, n_probe) if v.size else 0.0
    dm = xgb.DMatrix(X, feature_names=booster.feature_names)
    full = np.asarray(booster.predict(dm, output_margin=True), dtype=np.float32).reshape(n_probe, -1)
    m01 = np.asarray(booster.predict(dm, output_margin=True, iteration_range=(0, 1)),
                     dtype=np.float32).reshape(n_probe, -1)
    cfg = json.loads(booster.save_config())["learner"]
    try:
        bs = [float(v) for v in cfg["learner_model_param"]["base_score"].strip("[]").split(",")]
    except (KeyError, ValueError):  # pragma: no cover - other formats
        bs = []
    indptr = None
    try:
        indptr = json.loads(bytes(booster.save_raw(raw_format="json")))["learner"]["gradient_booster"]["model"].get(
            "iteration_indptr")
    except Exception:  # pragma: no cover - older formats
        indptr = None
    n0 = int(indptr[1]) if indptr is not None and len(indptr) > 1 else 1
    Xr = bm.round_X(X)
    leaves = _walk.leaf_values(bm.flat(), Xr).astype(np.float32)
    base = np.zeros(K)
    for gcol in range(full.shape[1]):
        g = 1 if K == 2 else gcol
        ts = np.flatnonzero(bm.group == g)
        cands = []
        if len(bs) == full.shape[1] or len(bs) == 1:
            p = bs[gcol] if len(bs) == full.shape[1] else bs[0]
            if bm._objective == "binary:logistic" and 0.0 < p < 1.0:
                cands += [np.float32(np.log(p / (1.0 - p))), np.float32(-np.log(1.0 / np.float32(p) - 1.0)),
                          -np.log(np.float32(1.0) / np.float32(p) - np.float32(1.0))]
            else:
                cands.append(np.float32(p))
        t0 = [t for t in ts if t < n0]
        guess = np.float32(float(m01[0, gcol]) - float(leaves[0, t0].astype(np.float64).sum()))
        c = guess
        for _ in range(48):
            c = np.nextafter(c, np.float32(-np.inf))
        for _ in range(97):
            cands.append(c)
            c = np.nextafter(c, np.float32(np.inf))
        best, best_hits = cands[0], -1
        cand_arr = np.asarray(cands, dtype=np.float32)
        accs = np.repeat(cand_arr[:, None], n_probe, axis=1)  # all candidates at once
        for t in ts:
            accs = (accs + leaves[None, :, t]).astype(np.float32)
        for cand, acc in zip(cand_arr, accs):
            hits = int(np.sum(acc == full[:, gcol]))
            if hits > best_hits:
                best, best_hits = cand, hits
            if hits == n_probe:
                break
        base[g] = float(best)
    return base


# ---------------------------------------------------------------------------------------------
# LightGBM
# ---------------------------------------------------------------------------------------------
def _flatten_lightgbm(model, library):
    booster = model if library == "lightgbm_booster" else model.booster_
    dump = booster.dump_model()
    objective = str(dump.get("objective", "")).split(" ")[0]
    if objective not in ("binary", "multiclass", "multiclassova"):
        raise ValueError(f"LightGBM objective {objective!r} is not supported; certify a classifier trained with "
                         "'binary', 'multiclass' or 'multiclassova'.")
    if dump.get("average_output", False):
        raise ValueError("LightGBM boosting='rf' (averaged output) is not supported; use boosting='gbdt'.")
    K_iter = int(dump["num_tree_per_iteration"])
    n_features = int(dump["max_feature_idx"]) + 1
    names = dump.get("feature_names") or [f"Column_{j}" for j in range(n_features)]
    trees = []
    groups = []
    for k, ti in enumerate(dump["tree_info"]):
        trees.append(_lgb_tree(ti["tree_structure"], names))
        groups.append(1 if K_iter == 1 else k % K_iter)
    if library == "lightgbm":
        classes = np.asarray(model.classes_)
    else:
        classes = np.arange(2 if K_iter == 1 else K_iter)
    K = 2 if K_iter == 1 else K_iter
    if len(classes) != K:
        raise ValueError(f"the LightGBM model has {K} outputs but {len(classes)} classes.")
    return _assemble(trees, groups, np.zeros(K), classes, n_features, f32=False, f32_input=False,
                     source=type(model).__name__, library=library, model=model,
                     feature_names_in=getattr(model, "feature_names_in_", None), eps=2.0**-52,
                     objective=objective)


#: LightGBM's ``kZeroThreshold`` (the float ``1e-35f`` as a double): its ``predict`` reads every
#: ``|x| <= LGB_ZERO`` as exactly 0 (dense rows are pushed as sparse non-zeros), and a split of
#: the negatives from zero is stored at ``-LGB_ZERO``.
LGB_ZERO = float(np.float32(1e-35))


def _lgb_threshold(t):
    """The threshold equivalent to LightGBM's ``x <= t`` on inputs as LightGBM reads them.

    Inputs are 0 or ``|x| > LGB_ZERO``; so ``t`` in ``[-LGB_ZERO, 0)`` sends left exactly the
    ``x < -LGB_ZERO`` (``x <= nextafter(-LGB_ZERO, -inf)``), and ``t`` in ``[0, LGB_ZERO]``
    exactly the ``x <= 0``. Other thresholds are unchanged.
    """
    if -LGB_ZERO <= t < 0.0:
        return float(np.nextafter(-LGB_ZERO, -np.inf))
    if 0.0 <= t <= LGB_ZERO:
        return 0.0
    return t


def _lgb_zero_tops(ptr, values):
    """Make every feature's top attack value one LightGBM does not read as something else.

    The top value is ``nextafter(t_max, inf)``; after :func:`_lgb_threshold` it can only fall
    in LightGBM's zero band when ``t_max`` is 0 (top ``5e-324``, read as 0: use the first
    double above ``LGB_ZERO``) or ``nextafter(-LGB_ZERO, -inf)`` (top ``-LGB_ZERO``, read as
    0 anyway: use 0). Every other value is a threshold, never inside the band.
    """
    for f in range(ptr.shape[0] - 1):
        if ptr[f + 1] > ptr[f]:
            k = ptr[f + 1] - 1
            v = values[k]
            if 0.0 < v <= LGB_ZERO:
                values[k] = float(np.nextafter(LGB_ZERO, np.inf))
            elif -LGB_ZERO <= v < 0.0:
                values[k] = 0.0


#: The largest double LightGBM reads as a negative number (``x <= LGB_ZERO_LO`` iff ``x < -LGB_ZERO``).
LGB_ZERO_LO = float(np.nextafter(-LGB_ZERO, -np.inf))


def _lgb_tree(root, names):
    """One LightGBM tree as plain ``x <= threshold`` nodes (pre-order; a DAG where a node is expanded).

    A ``missing_type="Zero"`` node (``zero_as_missing=True``) sends every input LightGBM reads as 0
    (``|x| <= LGB_ZERO``, and NaN, which it reads as 0 at such a node) to its default child and
    compares the others with its threshold. It becomes three plain nodes: ``P1: x <= LGB_ZERO_LO``
    (the negatives) -> ``N`` else ``P2``; ``P2: x <= 0`` (the zero band) -> the default child else
    ``N``; ``N: x <= threshold`` -> left/right. ``default_left`` is False at ``P1`` and True at ``P2``
    (NaN reaches the default child through them, as predict sends it) and True at ``N`` (reached by
    no NaN). :func:`fairlens.certify._missing.missing_routing` lays out the same nodes.
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
        zero = node.get("missing_type", "None") == "Zero"
        dl = bool(node.get("default_left", True))
        if zero:
            p1, p2 = new(), new()
        i = new()
        feat[i] = f
        thr[i] = _lgb_threshold(float(node["threshold"]))
        D[i] = True if zero else dl
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


# ---------------------------------------------------------------------------------------------
# scikit-learn
# ---------------------------------------------------------------------------------------------
def _flatten_sklearn_gb(model):
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
    classes = np.asarray(model.classes_)
    K = 2 if K_iter == 1 else K_iter
    base = np.zeros(K)
    if K_iter == 1:
        base[1] = base_raw[0]
    else:
        base[:] = base_raw
    return _assemble(trees, groups, base, classes, n_features, f32=False, f32_input=True,
                     source=type(model).__name__, library="sklearn_gb", model=model,
                     feature_names_in=getattr(model, "feature_names_in_", None), eps=2.0**-52)


def _flatten_sklearn_hgb(model):
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
    classes = np.asarray(model.classes_)
    K = 2 if K_iter == 1 else K_iter
    base = np.zeros(K)
    if K_iter == 1:
        base[1] = baseline[0]
    else:
        base[:] = baseline
    return _assemble(trees, groups, base, classes, n_features, f32=False, f32_input=False,
                     source=type(model).__name__, library="sklearn_hgb", model=model,
                     feature_names_in=names_in, eps=2.0**-52)


def flatten_boosted(model):
    """Read a fitted boosted classifier into a :class:`BoostedModel`.

    Parameters
    ----------
    model : fitted boosted classifier
        An xgboost.XGBClassifier or Booster, lightgbm.LGBMClassifier or Booster,
        sklearn GradientBoostingClassifier or HistGradientBoostingClassifier
        (binary or multi-class), or a BoostedModel (returned as is).

    Returns
    -------
    BoostedModel
        The trees as flat arrays with the library model; its :meth:`BoostedModel.predict`
        is the certified predictor.

    Raises
    ------
    TypeError
        Regressors and rankers.
    ValueError
        Unsupported objectives, boosters, categorical splits (naming the feature),
        an unfitted model.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import HistGradientBoostingClassifier
    >>> from fairlens.certify import flatten_boosted
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> hgb = HistGradientBoostingClassifier(max_iter=10, max_depth=2, random_state=0).fit(X, y)
    >>> bm = flatten_boosted(hgb)
    >>> bm.n_trees, bm.library
    (10, 'sklearn_hgb')
    >>> bool((bm.predict(X) == hgb.predict(X)).all())
    True
    """
    if isinstance(model, BoostedModel):
        return model
    fam = _family(model)
    if fam in ("xgboost_other", "lightgbm_other", "sklearn_other"):
        raise TypeError(f"{type(model).__name__} is not a classifier; certify classifies the attacked decision, "
                        "so pass a boosted classifier (XGBClassifier, LGBMClassifier, GradientBoostingClassifier, "
                        "HistGradientBoostingClassifier).")
    if fam in ("xgboost", "xgboost_booster"):
        if fam == "xgboost":
            try:
                model.get_booster()
            except Exception as exc:  # xgboost raises NotFittedError (a ValueError) or AttributeError
                raise ValueError(f"the XGBClassifier is not fitted; call fit first ({exc}).") from None
        bm = _flatten_xgboost(model, fam)
        mv = getattr(model, "missing", np.nan) if fam == "xgboost" else np.nan
        # XGBClassifier(missing=v): predict reads every v as missing (round_X reads it as NaN)
        bm.missing_value = float("nan") if mv is None else float(mv)
        return bm
    if fam in ("lightgbm", "lightgbm_booster"):
        if fam == "lightgbm" and not getattr(model, "fitted_", False):
            raise ValueError("the LGBMClassifier is not fitted; call fit first.")
        return _flatten_lightgbm(model, fam)
    if fam == "sklearn_gb":
        return _flatten_sklearn_gb(model)
    if fam == "sklearn_hgb":
        return _flatten_sklearn_hgb(model)
    raise TypeError(f"{type(model).__name__} is not a supported boosted ensemble.")


def boosted_instance_covers(model, x, y, budget=1):
    """:func:`fairlens.certify.instance_covers` for a boosted model.

    ``membership`` is the trees x features ``S_f^+``/``S_f^-`` matrix of the
    instance, ``weights[c]`` each tree's swing towards ``c``, ``delta[c]`` the
    margin ``s_y - s_c``; ``contributions`` (trees,) the current leaf value of each
    tree and ``tree_group`` the class it adds to.
    """
    from ._common import check_budget, validate_certify_params
    from ._inputs import one_instance as _one_instance
    from ._results import InstanceCovers

    bm = flatten_boosted(model)
    budget = check_budget(validate_certify_params({"budget": budget})["budget"], bm.n_features)
    X64, Xr, yi = _one_instance(bm, x, y)
    xr = Xr[0]
    d = bm.n_features
    pred = int(bm.library_predict_index(X64)[0])
    ens = bm.flat()
    leaves, w, margin, best = _votes.row_quantities(ens, xr, yi, budget)
    ptr, trees = _walk.instance_sets(ens, xr, d)
    mem = np.zeros((bm.n_trees, d), dtype=np.int8)
    for k in range(2 * d):
        f, sg = divmod(k, 2)
        mem[trees[ptr[k]:ptr[k + 1]], f] |= (1 << sg)
    plus, minus, flb, delta, weights = {}, {}, {}, {}, {}
    for c in range(bm.n_classes):
        if c == yi:
            continue
        wc = w[:, c]
        rel = (bm.group == yi) | (bm.group == c)
        p = (best[:, 0::2] * rel[:, None]).sum(axis=0)  # W(S_f^+) with the budget-aware credits, as FLB
        m = (best[:, 1::2] * rel[:, None]).sum(axis=0)
        plus[c], minus[c], weights[c] = p, m, wc
        mx = np.maximum(p, m)
        top = np.argsort(-mx, kind="mergesort")[:budget]
        flb[c] = (float(mx[top].sum()), [int(f) for f in top])
        delta[c] = float(margin[c])
    contrib = bm.value[leaves]
    cov = InstanceCovers(membership=mem, votes=bm.group.copy(), y=yi, wrong=np.zeros(bm.n_trees, dtype=bool),
                         correct=pred == yi, delta=delta, plus_sizes=plus, minus_sizes=minus, budget=budget,
                         flb=flb, vote="additive", weights=weights)
    cov.contributions = contrib
    cov.tree_group = bm.group.copy()
    return cov
