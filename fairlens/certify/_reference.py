"""Slow, literal reference implementations used to cross-check the kernels.

Everything here is written independently of the flattened arrays and the
numba kernels: trees are evaluated with scikit-learn's own ``predict`` and
``decision_path``, covers are enumerated with :mod:`itertools`. Only for small
forests (tests, and the slow baseline in ``benchmarks/certify_forests.py``).

Missing values: :func:`reference_brute` and :func:`reference_attack` take
``missing=True`` to let the attacker also write NaN ("missing") into each
attacked feature -- one more candidate value, routed by the library's own
``predict`` -- the threat model of a pipeline that passes blank fields to the
model. ``missing=False`` (the default) tries finite values only. Rows of ``X``
may contain NaN wherever the model's ``predict`` accepts it.
"""
from __future__ import annotations

import itertools
import numbers

import numpy as np

from .._base import Interval, validated
from ._fpf import FeaturePartitionedForest

__all__ = [
    "sklearn_trees",
    "reference_tree_votes",
    "reference_vote",
    "reference_sets",
    "reference_deltas",
    "reference_flb",
    "reference_elb",
    "reference_brute",
    "reference_thresholds",
    "reference_candidates",
    "reference_attack",
]


def sklearn_trees(model):
    """``(trees, feature_maps, classes, tie_index)`` of a supported model."""
    from sklearn.tree import DecisionTreeClassifier


    if isinstance(model, FeaturePartitionedForest):
        return list(model.estimators_), list(model.estimators_features_), model.classes_, model.majority_class_index_
    if isinstance(model, DecisionTreeClassifier):
        return [model], [None], model.classes_, -1
    return list(model.estimators_), [None] * len(model.estimators_), model.classes_, -1


def _tree_index_predict(model, tree, fmap, X):
    from sklearn.tree import DecisionTreeClassifier

    Xs = X if fmap is None else X[:, fmap]
    p = tree.predict(Xs)
    if isinstance(model, DecisionTreeClassifier):
        return np.searchsorted(model.classes_, p)
    return p.astype(np.int64)  # forests' trees are fitted on class indices


def reference_tree_votes(model, X):
    """(n, n_trees) class indices predicted by scikit-learn's own trees."""
    trees, maps, _, _ = sklearn_trees(model)
    return np.column_stack([_tree_index_predict(model, t, m, X) for t, m in zip(trees, maps)])


def reference_vote(votes, n_classes, tie_index=-1):
    """Plurality vote; ties to ``tie_index`` if tied, else the lowest index."""
    out = np.empty(votes.shape[0], dtype=np.int64)
    for i, row in enumerate(votes):
        counts = np.bincount(row, minlength=n_classes)
        tied = np.flatnonzero(counts == counts.max())
        out[i] = tie_index if tie_index in tied else tied[0]
    return out


def reference_sets(model, x, missing=False):
    """Dict ``(f, key) -> set of trees`` from ``decision_path`` (section 4.2).

    ``key`` is ``'+'`` (the path goes left at a node on ``f``: raising ``x_f``
    may flip it) or ``'-'`` (it goes right: lowering ``x_f`` may). Beyond the
    paper, for missing values:

    * ``missing=True`` adds ``(f, 'nan')``: the trees whose path has a node on
      ``f`` where the instance's direction differs from the tree's
      ``missing_go_to_left`` -- exactly the trees whose leaf changes when
      ``x_f := NaN``. NaN is a *direction pattern*, not an interval: it can go
      left at one node on ``f`` and right at another, so the set can hold trees
      of both ``'+'`` and ``'-'``.
    * where ``x_f`` itself is NaN, the path follows ``missing_go_to_left`` at
      every node on ``f``; a finite value can then flip nodes of both
      directions at once, so the only key is ``(f, '*')`` (every tree with a
      node on ``f`` on its path).

    At most one set per feature may enter a cover (one value per feature).
    """
    trees, maps, _, _ = sklearn_trees(model)
    sets = {}
    x = np.asarray(x, dtype=np.float64)
    x32 = x.astype(np.float32)
    for t, (tree, fmap) in enumerate(zip(trees, maps)):
        xs = x if fmap is None else x[fmap]
        path = tree.decision_path(np.asarray(xs, dtype=np.float64).reshape(1, -1)).indices
        mgl = getattr(tree.tree_, "missing_go_to_left", None)
        for node in path:
            f_local = tree.tree_.feature[node]
            if f_local < 0:
                continue
            f = int(f_local if fmap is None else fmap[f_local])
            if np.isnan(x32[f]):
                sets.setdefault((f, "*"), set()).add(t)
                continue
            true = float(x32[f]) <= tree.tree_.threshold[node]
            sets.setdefault((f, "+" if true else "-"), set()).add(t)
            if missing and mgl is not None and bool(mgl[node]) != true:
                sets.setdefault((f, "nan"), set()).add(t)
    return sets


def reference_deltas(votes_row, y_idx, n_classes, tie_index=-1):
    """``{c: delta_c}``: trees to change so that class c wins (sections 4.2, 4.6).

    Counted literally: the smallest k such that moving k trees from class y to
    class c makes c win the vote (ties by the same rule as the vote).
    """
    counts = np.bincount(votes_row, minlength=n_classes)
    out = {}
    for c in range(n_classes):
        if c == y_idx:
            continue
        for k in range(0, len(votes_row) + 1):
            cy, cc = counts[y_idx] - k, counts[c] + k
            c_wins = cc > cy or (cc == cy and (c == tie_index or (tie_index != y_idx and c < y_idx)))
            if c_wins:
                out[c] = k
                break
    return out


def _universe_sets(sets, votes_row, c):
    return {key: {t for t in trees if votes_row[t] != c} for key, trees in sets.items()}


def reference_flb(model, x, y_idx, budget, n_classes, tie_index=-1, missing=False):
    """True when FLB (section 4.3) cannot certify ``x`` (for some class c).

    ``missing=True``: the attacker may also write NaN (the ``(f, 'nan')`` sets
    of :func:`reference_sets`); each feature contributes its largest set.
    """
    votes_row = reference_tree_votes(model, np.asarray(x).reshape(1, -1))[0]
    sets = reference_sets(model, x, missing=missing)
    deltas = reference_deltas(votes_row, y_idx, n_classes, tie_index)
    feats = {f for f, _ in sets}
    for c, dc in deltas.items():
        us = _universe_sets(sets, votes_row, c)
        best = sorted((max(len(v) for (g, _), v in us.items() if g == f) for f in feats), reverse=True)
        if sum(best[:budget]) >= dc:
            return True
    return False


def reference_elb(model, x, y_idx, budget, n_classes, tie_index=-1, missing=False):
    """True when some cover of <= budget sets (never S_f^+ with S_f^-) reaches delta_c.

    ``missing=True``: the ``(f, 'nan')`` sets of :func:`reference_sets` join the
    covers (still at most one set per feature).
    """
    votes_row = reference_tree_votes(model, np.asarray(x).reshape(1, -1))[0]
    sets = reference_sets(model, x, missing=missing)
    deltas = reference_deltas(votes_row, y_idx, n_classes, tie_index)
    keys = sorted(sets)
    for c, dc in deltas.items():
        us = _universe_sets(sets, votes_row, c)
        for size in range(1, budget + 1):
            for combo in itertools.combinations(keys, size):
                if len({f for f, _ in combo}) < size:
                    continue
                if len(set().union(*(us[k] for k in combo))) >= dc:
                    return True
    return False


def _candidate_values(model, n_features):
    """For every threshold v: the float32 just at/below v and just above it."""
    trees, maps, _, _ = sklearn_trees(model)
    cands = {f: set() for f in range(n_features)}
    for tree, fmap in zip(trees, maps):
        for f_local, v in zip(tree.tree_.feature, tree.tree_.threshold):
            if f_local < 0 or not np.isfinite(v):  # a split at inf parts NaN from every finite value
                continue
            f = int(f_local if fmap is None else fmap[f_local])
            lo = np.float32(v)
            while float(lo) > v:
                lo = np.nextafter(lo, np.float32(-np.inf))
            hi = np.nextafter(lo, np.float32(np.inf))
            cands[f].update((float(lo), float(hi)))
    return {f: sorted(v) for f, v in cands.items() if v}


@validated({
    "model": "no_validation", "X": "no_validation", "y": "no_validation",
    "budget": [Interval(numbers.Integral, 0, None)], "max_rows": [Interval(numbers.Integral, 1, None)],
    "missing": ["boolean"],
})
def reference_brute(model, X, y, budget, max_rows=2_000_000, missing=False):
    """Literal brute force (section 4.1), independent of certify's kernels.

    Every set of ``min(budget, #used features)`` features, every combination of
    candidate values around every threshold (plus the instance's own value), and
    the hard majority vote of scikit-learn's own trees (``tree.predict``) on each
    candidate x'. Pure Python and NumPy: slow, and meant for small forests -- it is
    the test suite's independent cross-check of :func:`certify` and the slow
    baseline of the tutorial's timing table.

    Parameters
    ----------
    model : FeaturePartitionedForest, RandomForestClassifier, ExtraTreesClassifier or DecisionTreeClassifier
        A fitted forest. What is checked is the majority of the trees' hard votes
        (the paper's predictor: ``certify(..., vote="hard")``, the default for a
        FeaturePartitionedForest).
    X : (n, d) array
        Instances, in the columns the model was fitted on.
    y : (n,) array
        Their labels (values of ``model.classes_``).
    budget : int
        Number of features the attacker may change.
    max_rows : int, default=2_000_000
        Largest number of candidate rows enumerated for one instance.
    missing : bool, default=False
        Also try NaN as a value of every attacked feature (the trees route it by
        their own ``missing_go_to_left``). False: finite values only.

    Returns
    -------
    correct : (n,) bool array
        Whether the hard vote classifies each row correctly without attack.
    attackable : (n,) bool array
        Whether some change of at most ``budget`` features flips a correct row.

    Raises
    ------
    ValueError
        When one instance would need more than ``max_rows`` candidates.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from fairlens.certify import FeaturePartitionedForest, certify, reference_brute
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> fpf = FeaturePartitionedForest(budget=1, rounds=3, random_state=0).fit(X[:455], y[:455])
    >>> correct, attackable = reference_brute(fpf, X[455:460], y[455:460], budget=1)
    >>> res = certify(fpf, X[455:460], y[455:460], budget=1, method="brute")
    >>> bool(((res.status == "attackable") == attackable).all())
    True
    """
    trees, maps, classes, tie = sklearn_trees(model)
    X = np.asarray(X, dtype=np.float64)
    y_idx = np.searchsorted(classes, np.asarray(y))
    K = len(classes)
    cands = _candidate_values(model, X.shape[1])
    used = sorted(cands)
    size = min(budget, len(used))
    pred = reference_vote(reference_tree_votes(model, X), K, tie)
    correct = pred == y_idx
    attackable = np.zeros(X.shape[0], dtype=bool)
    for i in np.flatnonzero(correct):
        rows = []
        for F in itertools.combinations(used, size):
            grids = [cands[f] + [X[i, f]] + ([np.nan] if missing else []) for f in F]
            for vals in itertools.product(*grids):
                xp = X[i].copy()
                xp[list(F)] = vals
                rows.append(xp)
        if len(rows) > max_rows:
            raise ValueError("reference_brute: too many candidates; use a smaller forest.")
        if not rows:
            continue
        Xp = np.array(rows)
        votes = reference_tree_votes(model, Xp)
        attackable[i] = bool(np.any(reference_vote(votes, K, tie) != y_idx[i]))
    return correct, attackable



# ---------------------------------------------------------------------------------------------
# every supported model, through its own predict (finite values and, optionally, NaN)
# ---------------------------------------------------------------------------------------------
def _library_model(model):
    if hasattr(model, "library") and hasattr(model, "vote_rule") and type(model).__module__.startswith("fairlens"):
        if model.model is None:  # a TreeEnsemble that keeps no model (a forest's: its replay is its predict)
            raise TypeError("reference_attack calls the model's own predict; pass the fitted classifier, not a "
                            "TreeEnsemble that keeps no model.")
        model = model.model
    names = {c.__name__ for c in type(model).__mro__}
    if "Booster" in names:
        raise TypeError(f"reference_attack calls the model's own predict; pass a fitted classifier "
                        f"(XGBClassifier, LGBMClassifier, scikit-learn), not a {type(model).__name__}.")
    if not hasattr(model, "predict"):
        raise TypeError(f"model must be a fitted classifier with predict; got {type(model).__name__}.")
    return model


def _accepts_nan(model):
    """Whether ``model.predict`` accepts a row of NaN (asked literally)."""
    import warnings

    X = np.full((1, int(model.n_features_in_)), np.nan)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _predict(model, X)
    except ValueError:
        return False
    return True


def reference_thresholds(model):
    """Per feature, the split values of ``model`` as each library's public dump gives them.

    Read independently of the certification readers: XGBoost's
    ``trees_to_dataframe`` (``x < split``, float32), LightGBM's ``dump_model``
    (``x <= threshold``, double), scikit-learn's ``tree_.threshold`` (trees,
    forests, FeaturePartitionedForest, GradientBoosting: ``float32(x) <=
    threshold``) and HistGradientBoosting's ``num_threshold`` (``x <=
    threshold``).

    Parameters
    ----------
    model : fitted classifier
        A scikit-learn tree, forest, FeaturePartitionedForest,
        (Hist)GradientBoostingClassifier, XGBClassifier or LGBMClassifier.

    Returns
    -------
    dict
        ``{feature index: sorted list of float}`` over the features some node tests.

    Examples
    --------
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from fairlens.certify._reference import reference_thresholds
    >>> reference_thresholds(DecisionTreeClassifier().fit([[0.0, 5.0], [1.0, 5.0]], [0, 1]))
    {0: [0.5]}
    """
    model = _library_model(model)
    mod = type(model).__module__.split(".")[0]
    out = {}

    def put(f, t):
        out.setdefault(int(f), set()).add(float(t))

    if mod == "xgboost":
        df = model.get_booster().trees_to_dataframe()
        df = df[df["Feature"] != "Leaf"]
        names = model.get_booster().feature_names
        for f, t in zip(df["Feature"], df["Split"]):
            put(names.index(f) if names else int(str(f).lstrip("f")), np.float32(t))
    elif mod == "lightgbm":
        df = model.booster_.trees_to_dataframe()
        df = df[df["split_feature"].notna()]
        names = model.booster_.feature_name()
        for f, t in zip(df["split_feature"], df["threshold"]):
            put(names.index(f), t)
    elif hasattr(model, "_predictors"):
        for it in model._predictors:
            for p in it:
                nd = p.nodes
                for leaf, f, t in zip(nd["is_leaf"], nd["feature_idx"], nd["num_threshold"]):
                    if not leaf:
                        put(f, t)
    else:

        if isinstance(model, FeaturePartitionedForest):
            pairs = zip(model.estimators_, model.estimators_features_)
        elif hasattr(model, "estimators_"):
            pairs = ((e, None) for e in np.ravel(model.estimators_))
        else:
            pairs = [(model, None)]
        for est, fmap in pairs:
            tr = est.tree_
            for f, t in zip(tr.feature, tr.threshold):
                if f >= 0:
                    put(f if fmap is None else fmap[f], t)
    return {f: sorted(v) for f, v in sorted(out.items())}


#: Values LightGBM reads specially (its zero band: every ``|x| <= 1e-35f`` is read as 0).
_LGB_BAND = (0.0, float(np.float32(1e-35)), -float(np.float32(1e-35)),
             float(np.nextafter(float(np.float32(1e-35)), np.inf)),
             -float(np.nextafter(float(np.float32(1e-35)), np.inf)))


def reference_candidates(model, missing=False):
    """Per feature, a dense grid of attack values: every threshold, one ulp either side in float64
    and in float32, one unit beyond the ends, LightGBM's zero band, and NaN if ``missing``.

    A superset of one representative per interval between consecutive
    thresholds under every library's comparison (float32 or float64, ``<`` or
    ``<=``), so enumerating it is exact. For LightGBM the zero band (0 and
    ``+-1e-35f`` with the doubles just outside) is always in the grid: its
    ``predict`` reads every ``|x| <= 1e-35f`` as 0, and a node of a model fitted
    with ``zero_as_missing=True`` sends 0 to its default child. Only values the library accepts are
    kept: finite, and within the float32 range for the libraries that read
    float32 (scikit-learn trees and forests, GradientBoosting, XGBoost); a split
    at an infinite threshold (scikit-learn's split of NaN from every finite
    value) parts no finite values and adds none.

    Parameters
    ----------
    model : fitted classifier
        As for :func:`reference_thresholds`.
    missing : bool, default=False
        Add NaN to every feature's grid.

    Returns
    -------
    dict
        ``{feature index: list of float}`` (NaN last when ``missing``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from fairlens.certify._reference import reference_candidates
    >>> c = reference_candidates(DecisionTreeClassifier().fit([[0.0], [1.0]], [0, 1]), missing=True)
    >>> 0.5 in c[0], bool(np.isnan(c[0][-1]))
    (True, True)
    """
    lib = _library_model(model)
    mod = type(lib).__module__.split(".")[0]
    band = mod == "lightgbm"
    # libraries reading the input in float32 refuse (scikit-learn) or overflow (XGBoost) beyond it
    f32 = mod == "xgboost" or not hasattr(lib, "_predictors")
    limit = float(np.finfo(np.float32).max) if f32 and mod != "lightgbm" else float(np.finfo(np.float64).max)
    out = {}
    for f, thr in reference_thresholds(lib).items():
        # a split at +-inf (scikit-learn's "NaN versus every finite value") parts no finite values
        thr = [t for t in thr if np.isfinite(t)]
        vals = set(_LGB_BAND) if band else set()
        for t in thr:
            vals.update(float(v) for v in (t, np.nextafter(t, -np.inf), np.nextafter(t, np.inf)))
            with np.errstate(over="ignore"):  # LightGBM's NaN-only splits sit at 1e300
                t32 = np.float32(t)
            vals.update(float(v) for v in (t32, np.nextafter(t32, np.float32(-np.inf)),
                                           np.nextafter(t32, np.float32(np.inf))))
        if thr:
            vals.update([thr[0] - 1.0, thr[-1] + 1.0])
        vals = sorted(v for v in vals if abs(v) <= limit)
        if vals or missing:
            out[f] = vals + ([float("nan")] if missing else [])
    return out


def _predict(model, X):
    names = getattr(model, "feature_names_in_", None)
    if names is not None:
        import pandas as pd

        X = pd.DataFrame(X, columns=list(names))
    return np.asarray(model.predict(X))


def reference_attack(model, X, y, budget, *, missing=False, max_rows=500_000, return_witness=False):
    """Literal enumeration of L0 attacks through the model's own ``predict`` (independent oracle).

    For every correctly classified row: every set of ``min(budget, #tested
    features)`` features, every combination of values from
    :func:`reference_candidates` (plus the row's own value), all predicted in one
    call of ``model.predict``. Pure NumPy and the library: no flattening, no
    kernels. With ``missing=True`` NaN is one more candidate value of every
    attacked feature, routed by the library itself -- the oracle for
    certificates under the "attacker may blank a field" threat model.

    Parameters
    ----------
    model : fitted classifier
        DecisionTree/RandomForest/ExtraTreesClassifier (soft vote: their
        ``predict``), FeaturePartitionedForest, (Hist)GradientBoostingClassifier,
        XGBClassifier, LGBMClassifier, or a TreeEnsemble that keeps its library model.
    X : (n, d) array
        Rows in the model's column order; NaN allowed where ``predict`` accepts it.
    y : (n,) array
        Their labels.
    budget : int
        Number of features the attacker may change.
    missing : bool, default=False
        Whether the attacker may also write NaN.
    max_rows : int, default=500_000
        Largest number of candidate rows for one instance.
    return_witness : bool, default=False
        Also return, per row, one flipping input (or None).

    Returns
    -------
    correct : (n,) bool array
        ``predict(X) == y``.
    attackable : (n,) bool array
        Whether some change of at most ``budget`` features flips a correct row.
    witnesses : list of (d,) arrays or None
        Only with ``return_witness=True``.

    Raises
    ------
    TypeError
        For a Booster, a TreeEnsemble without its model or an object without ``predict``.
    ValueError
        For a negative budget, ``missing=True`` on a model whose ``predict``
        refuses NaN, or when one row needs more than ``max_rows`` candidates.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import HistGradientBoostingClassifier
    >>> from fairlens.certify._reference import reference_attack
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); y = (X[:, 0] > 0).astype(int)
    >>> X[(y == 0) & (rng.random(200) < 0.5), 1] = np.nan   # missing goes with the label
    >>> hgb = HistGradientBoostingClassifier(max_iter=5, random_state=0).fit(X, y)
    >>> _, finite = reference_attack(hgb, X[:20], y[:20], budget=1)
    >>> _, blank = reference_attack(hgb, X[:20], y[:20], budget=1, missing=True)
    >>> bool((blank >= finite).all())
    True
    """
    model = _library_model(model)
    if int(budget) != budget or budget < 0:
        raise ValueError(f"budget must be a non-negative integer; got {budget!r}.")
    if missing and not _accepts_nan(model):
        raise ValueError(f"missing=True, but the {type(model).__name__}'s predict refuses NaN; use missing=False.")
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    cands = reference_candidates(model, missing=missing)
    used = sorted(cands)
    size = min(int(budget), len(used))
    correct = _predict(model, X) == y
    attackable = np.zeros(X.shape[0], dtype=bool)
    witnesses = [None] * X.shape[0]
    for i in np.flatnonzero(correct):
        blocks = []
        n_rows = 0
        for F in itertools.combinations(used, size):
            grids = [cands[f] + [X[i, f]] for f in F]
            n = int(np.prod([len(g) for g in grids]))
            n_rows += n
            if n_rows > max_rows:
                raise ValueError(f"reference_attack: row {i} needs more than max_rows={max_rows} candidates; "
                                 "use a smaller model or budget, or raise max_rows.")
            mesh = np.array(list(itertools.product(*grids)), dtype=np.float64).reshape(n, len(F))
            block = np.repeat(X[i][None, :], n, axis=0)
            block[:, list(F)] = mesh
            blocks.append(block)
        if not blocks:
            continue
        Xp = np.vstack(blocks)
        flips = np.flatnonzero(_predict(model, Xp) != y[i])
        if flips.size:
            attackable[i] = True
            witnesses[i] = Xp[flips[0]]
    if return_witness:
        return correct, attackable, witnesses
    return correct, attackable
