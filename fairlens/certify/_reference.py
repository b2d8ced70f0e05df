"""Slow, literal reference implementations used to cross-check the kernels.

Everything here is written independently of the flattened arrays and the
numba kernels: trees are evaluated with scikit-learn's own ``predict`` and
``decision_path``, covers are enumerated with :mod:`itertools`. Only for small
forests (tests, and the slow baseline in ``benchmarks/certify_forests.py``).
"""
from __future__ import annotations

import itertools

import numpy as np

__all__ = [
    "sklearn_trees",
    "reference_tree_votes",
    "reference_vote",
    "reference_sets",
    "reference_deltas",
    "reference_flb",
    "reference_elb",
    "reference_brute",
]


def sklearn_trees(model):
    """``(trees, feature_maps, classes, tie_index)`` of a supported model."""
    from sklearn.tree import DecisionTreeClassifier

    from ._fpf import FeaturePartitionedForest

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


def reference_sets(model, x):
    """Dict ``(f, '+'|'-') -> set of trees`` from ``decision_path`` (section 4.2)."""
    trees, maps, _, _ = sklearn_trees(model)
    sets = {}
    x32 = np.asarray(x, dtype=np.float32)
    for t, (tree, fmap) in enumerate(zip(trees, maps)):
        xs = x if fmap is None else np.asarray(x)[fmap]
        path = tree.decision_path(np.asarray(xs, dtype=np.float64).reshape(1, -1)).indices
        for node in path:
            f_local = tree.tree_.feature[node]
            if f_local < 0:
                continue
            f = f_local if fmap is None else int(fmap[f_local])
            true = float(x32[f]) <= tree.tree_.threshold[node]
            sets.setdefault((int(f), "+" if true else "-"), set()).add(t)
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


def reference_flb(model, x, y_idx, budget, n_classes, tie_index=-1):
    """True when FLB (section 4.3) cannot certify ``x`` (for some class c)."""
    votes_row = reference_tree_votes(model, np.asarray(x).reshape(1, -1))[0]
    sets = reference_sets(model, x)
    deltas = reference_deltas(votes_row, y_idx, n_classes, tie_index)
    feats = {f for f, _ in sets}
    for c, dc in deltas.items():
        us = _universe_sets(sets, votes_row, c)
        best = sorted((max(len(us.get((f, "+"), ())), len(us.get((f, "-"), ()))) for f in feats), reverse=True)
        if sum(best[:budget]) >= dc:
            return True
    return False


def reference_elb(model, x, y_idx, budget, n_classes, tie_index=-1):
    """True when some cover of <= budget sets (never S_f^+ with S_f^-) reaches delta_c."""
    votes_row = reference_tree_votes(model, np.asarray(x).reshape(1, -1))[0]
    sets = reference_sets(model, x)
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
            if f_local < 0:
                continue
            f = int(f_local if fmap is None else fmap[f_local])
            lo = np.float32(v)
            while float(lo) > v:
                lo = np.nextafter(lo, np.float32(-np.inf))
            hi = np.nextafter(lo, np.float32(np.inf))
            cands[f].update((float(lo), float(hi)))
    return {f: sorted(v) for f, v in cands.items() if v}


def reference_brute(model, X, y, budget, max_rows=2_000_000):
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
            grids = [cands[f] + [X[i, f]] for f in F]
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

