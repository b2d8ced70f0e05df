"""The tree walks every certify kernel shares (the bottom kernel layer: imports no other certify module).

Every kernel receives the one flat ensemble ``ens`` (:class:`fairlens.certify._flat.FlatEnsemble`):
the nodes of all trees one after the other (``feature`` int64, -1 on leaves; ``threshold`` float64,
``x[f] <= threshold`` goes left; ``left``/``right`` global node indices; ``missing_left``, where a
missing value, NaN, goes), the ``roots`` of the trees, and the leaves' payload read by the decision
rules of :mod:`fairlens.certify._votes`. The one split rule is :func:`goes_left`; the one walk of a
tree along the instance's own values is :func:`leaf`.

Set indexing of the paper's covers (section 4.2): for feature ``f`` the set ``S_f^+`` (trees whose
path tests ``x_f <= v`` with a *true* outcome: the attacker must *increase* ``x_f``) has index
``2 f`` and ``S_f^-`` (false outcome: she must *decrease* it) has index ``2 f + 1``.

Every kernel is ``@numba.njit(cache=True)`` and also valid plain Python (``NUMBA_DISABLE_JIT=1``).
"""
import numba
import numpy as np

__all__ = ["goes_left", "leaf", "leaf_classes", "leaf_values", "instance_sets", "feature_max", "top_sum"]


@numba.njit(cache=True, inline="always")
def goes_left(v, threshold, missing_left, node):
    """The one split rule: ``v <= threshold[node]`` goes left; a missing value (NaN, ``v != v``) goes
    where ``missing_left[node]`` says (the library's default direction). ``missing_left=None`` (known at
    compile time) is the walk of a row without NaN: ``v <= threshold[node]`` alone. The NaN test is
    not free in a hot walk (it cost the additive rule's budget walk 15-20%), so the hottest walk is
    compiled both ways and picks per row."""
    if missing_left is None:  # compile time: a walk known to see no NaN
        return v <= threshold[node]
    if v != v:
        return missing_left[node]
    return v <= threshold[node]


@numba.njit(cache=True, inline="always")
def leaf(ens, root, x):
    """Leaf reached from ``root`` by ``x`` (the one tree walk of every kernel; NaN follows
    ``ens.missing_left``)."""
    feature, threshold, left, right, missing_left = ens.feature, ens.threshold, ens.left, ens.right, ens.missing_left
    node = root
    while feature[node] >= 0:
        node = left[node] if goes_left(x[feature[node]], threshold, missing_left, node) else right[node]
    return node


@numba.njit(cache=True)
def leaf_classes(ens, X):
    """Class index voted by every tree for every row (the leaf's ``leaf_class``): (n, n_trees) int64."""
    leaf_class, roots = ens.leaf_class, ens.roots
    n = X.shape[0]
    n_trees = roots.shape[0]
    out = np.empty((n, n_trees), np.int64)
    for i in range(n):
        x = X[i]
        for t in range(n_trees):
            out[i, t] = leaf_class[leaf(ens, roots[t], x)]
    return out


@numba.njit(cache=True)
def leaf_values(ens, X):
    """First leaf value (``value[leaf, 0]``) reached in every tree by every row: (n, n_trees) float64."""
    value, roots = ens.value, ens.roots
    n = X.shape[0]
    n_trees = roots.shape[0]
    out = np.empty((n, n_trees), np.float64)
    for i in range(n):
        for t in range(n_trees):
            out[i, t] = value[leaf(ens, roots[t], X[i]), 0]
    return out


@numba.njit(cache=True)
def instance_sets(ens, x, n_features):
    """S_f^+ / S_f^- of one instance over *all* trees, as CSR (ptr, trees).

    Set ``k`` (``2 f`` for ``S_f^+``, ``2 f + 1`` for ``S_f^-``) holds the
    trees ``trees[ptr[k]:ptr[k + 1]]`` (increasing, without repetition).
    """
    feature, threshold, left, right, roots = ens.feature, ens.threshold, ens.left, ens.right, ens.roots
    missing_left = ens.missing_left
    n_trees = roots.shape[0]
    n_sets = 2 * n_features
    counts = np.zeros(n_sets + 1, np.int64)
    last = np.full(n_sets, -1, np.int64)
    for t in range(n_trees):
        node = roots[t]
        while feature[node] >= 0:
            f = feature[node]
            if goes_left(x[f], threshold, missing_left, node):
                k = 2 * f
                nxt = left[node]
            else:
                k = 2 * f + 1
                nxt = right[node]
            if last[k] != t:
                last[k] = t
                counts[k + 1] += 1
            node = nxt
    ptr = np.cumsum(counts)
    trees = np.empty(ptr[n_sets], np.int64)
    fill = ptr[:n_sets].copy()
    last[:] = -1
    for t in range(n_trees):
        node = roots[t]
        while feature[node] >= 0:
            f = feature[node]
            if goes_left(x[f], threshold, missing_left, node):
                k = 2 * f
                nxt = left[node]
            else:
                k = 2 * f + 1
                nxt = right[node]
            if last[k] != t:
                last[k] = t
                trees[fill[k]] = t
                fill[k] += 1
            node = nxt
    return ptr, trees


@numba.njit(cache=True)
def feature_max(sizes, n_features):
    """``max(W(S_f^+), W(S_f^-))`` of every feature (the sizes' number type)."""
    m = np.empty(n_features, sizes.dtype)
    for f in range(n_features):
        a = sizes[2 * f]
        b = sizes[2 * f + 1]
        m[f] = a if a >= b else b
    return m


@numba.njit(cache=True)
def top_sum(m, budget, zero):
    """Sum of the ``budget`` largest entries of ``m``, largest first, from ``zero`` (FLB's sum)."""
    s = np.sort(m)
    total = zero
    n = s.shape[0]
    for q in range(min(budget, n)):
        total += s[n - 1 - q]
    return total
