"""numba kernels of :mod:`fairlens.certify` (and nothing else).

All kernels work on a *flattened* forest (see :mod:`fairlens.certify._flatten`), received as the
typed groups of :mod:`fairlens.certify._flat`: ``tr`` (:class:`~fairlens.certify._flat.Trees`:
``feature`` (int64, -1 on leaves), ``threshold`` (float64), ``left``/``right`` (int64 global node
indices), ``value`` (the leaf payload: int64 class index for the hard vote, float64 (n_nodes, K)
probabilities for the soft vote), ``roots`` (int64, root node of every tree), ``missing_left``
(bool, where NaN goes at every node)), ``rule`` (:class:`~fairlens.certify._flat.Rule`: ``rank``,
the tie-break priority of every class -- among classes with the same number of votes the one with
the smallest rank wins --, ``tmax`` and ``tol`` of the soft vote) and ``vals``
(:class:`~fairlens.certify._flat.Values`: the per-feature sorted *relevant values*, CSR ``ptr``/
``values``; float64 numbers that are exactly representable in float32, see
:func:`fairlens.certify._flatten.relevant_values`). Every walk of a tree along the instance's own
values uses the one split rule :func:`_goes_left` (``x <= threshold``, NaN by ``missing_left``).
The brute-force helpers share the per-row search state as one
:class:`~fairlens.certify._flat.Search` tuple.

Inputs ``X`` must already be rounded to float32 and widened back to float64, so
that ``x <= threshold`` is the very comparison scikit-learn's trees perform.

Hard-vote kernels (FLB, ELB and the exhaustive search are written once for every decision rule in
:mod:`fairlens.certify._search`, which calls the steps here) implement the
paper's definitions on the majority of hard votes; the ``*_soft_*`` kernels certify
the soft vote of scikit-learn forests (see the section "Soft vote" below).
Callers check shapes and dtypes before every call (see ``_certify``).

Every kernel is ``@numba.njit(cache=True)`` and also valid plain Python, so the
test-suite passes with ``NUMBA_DISABLE_JIT=1``. Nothing is compiled at import.

Set indexing: for feature ``f`` the set ``S_f^+`` (paper, section 4.2: trees
whose traversal path tests ``x_f <= v`` with a *true* outcome, so that the
attacker must *increase* ``x_f``) has index ``2 f`` and ``S_f^-`` (false
outcome, attacker must *decrease*) has index ``2 f + 1``.
"""
import numba
import numpy as np

__all__ = [
    "predict_trees",
    "vote",
    "instance_sets",
    "soft_proba",
]


@numba.njit(cache=True, inline="always")
def _goes_left(v, threshold, missing_left, node):
    """The one split rule: ``v <= threshold[node]`` goes left; a missing value (NaN, ``v != v``) goes
    where ``missing_left[node]`` says (the library's default direction). ``missing_left=None`` (known at
    compile time) is the walk of a row without NaN: ``v <= threshold[node]`` alone. The NaN test is
    not free in a hot walk (it cost the boosted bounds' ``_boosted_kernels._budget_walk`` 15-20%), so the hottest
    walk is compiled both ways and picks per row."""
    if missing_left is None:  # compile time: a walk known to see no NaN (see _boosted_kernels._budget_walk)
        return v <= threshold[node]
    if v != v:
        return missing_left[node]
    return v <= threshold[node]


@numba.njit(cache=True, inline="always")
def _leaf(tr, root, x):
    """Leaf reached from ``root`` by ``x`` (the one tree walk of every kernel; NaN follows
    ``tr.missing_left``)."""
    feature, threshold, left, right, missing_left = tr.feature, tr.threshold, tr.left, tr.right, tr.missing_left
    node = root
    while feature[node] >= 0:
        node = left[node] if _goes_left(x[feature[node]], threshold, missing_left, node) else right[node]
    return node


@numba.njit(cache=True)
def predict_trees(tr, X):
    """Class index predicted by every tree for every row: (n, n_trees) int64."""
    leaf_class, roots = tr.value, tr.roots
    n = X.shape[0]
    n_trees = roots.shape[0]
    out = np.empty((n, n_trees), np.int64)
    for i in range(n):
        x = X[i]
        for t in range(n_trees):
            out[i, t] = leaf_class[_leaf(tr, roots[t], x)]
    return out


@numba.njit(cache=True)
def _winner(counts, rank):
    best = 0
    for k in range(1, counts.shape[0]):
        if counts[k] > counts[best] or (counts[k] == counts[best] and rank[k] < rank[best]):
            best = k
    return best


@numba.njit(cache=True)
def vote(tree_votes, n_classes, rank):
    """Majority (plurality) vote of hard tree predictions, ties by ``rank``."""
    n = tree_votes.shape[0]
    out = np.empty(n, np.int64)
    counts = np.zeros(n_classes, np.int64)
    for i in range(n):
        counts[:] = 0
        for t in range(tree_votes.shape[1]):
            counts[tree_votes[i, t]] += 1
        out[i] = _winner(counts, rank)
    return out


@numba.njit(cache=True)
def instance_sets(tr, x, n_features):
    """S_f^+ / S_f^- of one instance over *all* trees, as CSR (ptr, trees).

    Set ``k`` (``2 f`` for ``S_f^+``, ``2 f + 1`` for ``S_f^-``) holds the
    trees ``trees[ptr[k]:ptr[k + 1]]`` (increasing, without repetition).
    """
    feature, threshold, left, right, roots = tr.feature, tr.threshold, tr.left, tr.right, tr.roots
    missing_left = tr.missing_left
    n_trees = roots.shape[0]
    n_sets = 2 * n_features
    counts = np.zeros(n_sets + 1, np.int64)
    last = np.full(n_sets, -1, np.int64)
    for t in range(n_trees):
        node = roots[t]
        while feature[node] >= 0:
            f = feature[node]
            if _goes_left(x[f], threshold, missing_left, node):
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
            if _goes_left(x[f], threshold, missing_left, node):
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
def _prepare(tr, n_classes, rank, x, yi):
    """Tree votes, class counts, whether correct, and delta per target class.

    ``delta[c]`` (section 4.2 / 4.6) is the number of trees among those *not*
    voting ``c`` that an attack must change so that ``c`` beats ``yi``:
    ``ceil((|C_y| - |C_c| + s) / 2)`` with ``s = 1`` when ``yi`` wins a tie
    against ``c`` (else 0). In the binary case with an odd number of trees this
    is the paper's ``ceil(|T| / 2) - |C_bar|``. ``delta[yi] = -1``.
    """
    leaf_class, roots = tr.value, tr.roots
    n_trees = roots.shape[0]
    votes = np.empty(n_trees, np.int64)
    counts = np.zeros(n_classes, np.int64)
    for t in range(n_trees):
        c = leaf_class[_leaf(tr, roots[t], x)]
        votes[t] = c
        counts[c] += 1
    correct = _winner(counts, rank) == yi
    delta = np.full(n_classes, -1, np.int64)
    for c in range(n_classes):
        if c != yi:
            s = 1 if rank[yi] < rank[c] else 0
            delta[c] = (counts[yi] - counts[c] + s + 1) // 2
    return votes, counts, correct, delta


@numba.njit(cache=True)
def _sizes_in_universe(ptr, trees, votes, c, n_sets):
    """|S_k ∩ U_c| for every set k, where U_c = trees not voting class c."""
    sizes = np.zeros(n_sets, np.int64)
    for k in range(n_sets):
        cnt = 0
        for q in range(ptr[k], ptr[k + 1]):
            if votes[trees[q]] != c:
                cnt += 1
        sizes[k] = cnt
    return sizes


@numba.njit(cache=True)
def _feature_max(sizes, n_features):
    """``max(W(S_f^+), W(S_f^-))`` of every feature (the sizes' number type)."""
    m = np.empty(n_features, sizes.dtype)
    for f in range(n_features):
        a = sizes[2 * f]
        b = sizes[2 * f + 1]
        m[f] = a if a >= b else b
    return m


@numba.njit(cache=True)
def _cover_search(ptr, trees, votes, c, sizes, n_features, budget, delta, n_trees, pick_f, pick_s):
    """Exhaustive search (section 4.4) for at most ``budget`` sets, never both
    ``S_f^+`` and ``S_f^-``, covering at least ``delta`` trees not voting ``c``.

    Depth-first over features sorted by ``max(|S_f^+|, |S_f^-|)``; a branch is
    cut when the covered count plus the sizes of the next largest feature sets
    cannot reach ``delta`` (the FLB argument applied to the remaining picks), so
    the answer is that of the full enumeration. Writes the cover found into
    ``pick_f``/``pick_s`` (-1 padded) and returns ``(found, covered)``.
    """
    m = _feature_max(sizes, n_features)
    order = np.argsort(-m, kind="mergesort")
    nc = 0
    for j in range(n_features):
        if m[order[j]] > 0:
            nc += 1
    pick_f[:] = -1
    pick_s[:] = -1
    if nc == 0:
        return False, 0
    item_f = np.empty(2 * nc, np.int64)
    item_s = np.empty(2 * nc, np.int64)
    item_j = np.empty(2 * nc, np.int64)
    ni = 0
    for j in range(nc):
        f = order[j]
        for s in range(2):
            if sizes[2 * f + s] > 0:
                item_f[ni] = f
                item_s[ni] = s
                item_j[ni] = j
                ni += 1
    prefix = np.zeros(nc + 1, np.int64)
    for j in range(nc):
        prefix[j + 1] = prefix[j] + m[order[j]]
    cnt = np.zeros(n_trees, np.int64)
    covered = 0
    pick = np.full(budget, -1, np.int64)
    added = np.zeros(budget, np.bool_)
    depth = 0
    while depth >= 0:
        if added[depth]:
            k = 2 * item_f[pick[depth]] + item_s[pick[depth]]
            for q in range(ptr[k], ptr[k + 1]):
                t = trees[q]
                if votes[t] != c:
                    cnt[t] -= 1
                    if cnt[t] == 0:
                        covered -= 1
            added[depth] = False
        nxt = pick[depth] + 1
        if depth > 0:
            jprev = item_j[pick[depth - 1]]
            while nxt < ni and item_j[nxt] == jprev:
                nxt += 1
        if nxt >= ni:
            depth -= 1
            continue
        jn = item_j[nxt]
        hi = min(jn + budget - depth, nc)
        if covered + prefix[hi] - prefix[jn] < delta:
            depth -= 1
            continue
        pick[depth] = nxt
        k = 2 * item_f[nxt] + item_s[nxt]
        for q in range(ptr[k], ptr[k + 1]):
            t = trees[q]
            if votes[t] != c:
                if cnt[t] == 0:
                    covered += 1
                cnt[t] += 1
        added[depth] = True
        if covered >= delta:
            for q in range(depth + 1):
                pick_f[q] = item_f[pick[q]]
                pick_s[q] = item_s[pick[q]]
            return True, covered
        if depth + 1 < budget:
            depth += 1
            pick[depth] = pick[depth - 1]
            added[depth] = False
    return False, 0



@numba.njit(cache=True)
def _value_regions(values, values_ptr, x, d, region):
    """``region[f]``: the interval of ``x[f]`` among the relevant values of feature ``f``
    (``values[values_ptr[f]:values_ptr[f + 1]]``, sorted), 0 for a feature without any.
    Shared by the brute-force kernels (forests, hard and soft vote, and boosted trees)."""
    for f in range(d):
        a = values_ptr[f]
        b = values_ptr[f + 1]
        if b == a:
            region[f] = 0
            continue
        r = 0
        while a + r < b - 1 and values[a + r] < x[f]:
            r += 1
        region[f] = r


@numba.njit(cache=True)
def _brute_items(m, values_ptr, region, d):
    """The brute force's search items: features in decreasing order of their bound ``m``
    (stable), each with a move up (``s = 0``, a value above ``x_f``) and/or down (``s = 1``).

    Returns ``(order, item_f, item_s, item_j, ni, nc)``: ``order[:nc]`` the usable features
    (compacted), and ``ni`` items ``(feature, direction, index into order)``.
    """
    order = np.argsort(-m, kind="mergesort")
    item_f = np.empty(2 * d, np.int64)
    item_s = np.empty(2 * d, np.int64)
    item_j = np.empty(2 * d, np.int64)
    ni = 0
    nc = 0
    for j in range(d):
        f = order[j]
        nv = values_ptr[f + 1] - values_ptr[f]
        if nv == 0:
            continue
        has = False
        if region[f] + 1 < nv:  # values above
            item_f[ni] = f
            item_s[ni] = 0
            item_j[ni] = nc
            ni += 1
            has = True
        if region[f] > 0:  # values below
            item_f[ni] = f
            item_s[ni] = 1
            item_j[ni] = nc
            ni += 1
            has = True
        if has:
            order[nc] = f  # compacted order of usable features
            nc += 1
    return order, item_f, item_s, item_j, ni, nc

@numba.njit(cache=True, inline="always")
def _attack_possible(tr, S, n_aff, values, yi, rank):
    """Sound test used by the branch and bound of the brute force.

    Attacked feature ``f`` (``ppos[f] = q >= 0``) may take any relevant value
    with index in ``[rlo[q], rhi[q]]``; the others keep ``x``. Each affected
    tree is traversed along every branch some allowed value reaches, giving the
    classes it may vote. The attack is possible only if some class ``c`` can
    gather at least as many votes as ``yi`` surely keeps (ties by ``rank``).
    When every range is a single value this is the exact forest vote.
    """
    x, aff, ppos, rlo, rhi, stack = S.x, S.aff, S.ppos, S.rlo, S.rhi, S.stack
    fixed_counts, maxc = S.fixed, S.bound
    feature, threshold, left, right, roots = tr.feature, tr.threshold, tr.left, tr.right, tr.roots
    leaf_class, missing_left = tr.value, tr.missing_left
    n_classes = fixed_counts.shape[0]
    maxc[:] = fixed_counts
    miny = fixed_counts[yi]
    for a in range(n_aff):
        t = aff[a]
        mask = 0
        sp = 1
        stack[0] = roots[t]
        while sp > 0:
            sp -= 1
            node = stack[sp]
            f = feature[node]
            if f < 0:
                mask |= 1 << leaf_class[node]
                continue
            q = ppos[f]
            if q < 0:
                if _goes_left(x[f], threshold, missing_left, node):
                    stack[sp] = left[node]
                else:
                    stack[sp] = right[node]
                sp += 1
            else:
                if values[rlo[q]] <= threshold[node]:
                    stack[sp] = left[node]
                    sp += 1
                if values[rhi[q]] > threshold[node]:
                    stack[sp] = right[node]
                    sp += 1
        for c in range(n_classes):
            if (mask >> c) & 1:
                maxc[c] += 1
        if mask == (1 << yi):
            miny += 1
    for c in range(n_classes):
        if c != yi:
            if maxc[c] > miny or (maxc[c] == miny and rank[c] < rank[yi]):
                return True
    return False


@numba.njit(cache=True)
def _save_state(state, phase, depth, aux, pick, cur, budget):
    state[0] = phase
    state[1] = depth
    state[2] = aux
    for q in range(budget):
        state[3 + q] = pick[q]
        state[3 + budget + q] = cur[q]


# ---------------------------------------------------------------------------
# Soft vote (what scikit-learn's RandomForest/ExtraTrees ``predict`` returns)
# ---------------------------------------------------------------------------
# ``leaf_proba`` (n_nodes, n_classes) float64 holds every leaf's class-probability
# vector (``tree_.value``, zeros on internal nodes); ``tmax`` (n_trees, K, K) float64
# holds ``tmax[t, c, y] = max over the leaves l of tree t of p_l[c] - p_l[y]`` (the best
# a tree can do for class ``c`` against ``y`` wherever an attacker sends ``x``).
#
# The prediction is replayed with scikit-learn's own arithmetic: ``out = 0``, then
# ``out += p_t`` tree by tree in the order of ``estimators_``, then ``out /= n_trees``
# and the first index of the maximum (``numpy.argmax``). Bounds use real-number margins
# with a tolerance ``tol`` (a row is certified only when the margin exceeds the largest
# possible gain by more than ``tol``); every attack found is confirmed with the exact
# replay, so rounding can make a bound looser, never wrong.


@numba.njit(cache=True)
def _soft_argmax(leaf_proba, leaves, n_classes, out):
    n_trees = leaves.shape[0]
    for c in range(n_classes):
        out[c] = 0.0
    for t in range(n_trees):
        node = leaves[t]
        for c in range(n_classes):
            out[c] += leaf_proba[node, c]
    best = 0
    for c in range(n_classes):
        out[c] = out[c] / n_trees
        if out[c] > out[best]:
            best = c
    return best


@numba.njit(cache=True)
def soft_proba(tr, X):
    """``forest.predict_proba`` replayed in scikit-learn's summation order: (n, K) float64."""
    leaf_proba, roots = tr.value, tr.roots
    n = X.shape[0]
    n_trees = roots.shape[0]
    K = leaf_proba.shape[1]
    out = np.empty((n, K), np.float64)
    leaves = np.empty(n_trees, np.int64)
    acc = np.empty(K, np.float64)
    for i in range(n):
        x = X[i]
        for t in range(n_trees):
            leaves[t] = _leaf(tr, roots[t], x)
        _soft_argmax(leaf_proba, leaves, K, acc)
        out[i, :] = acc
    return out


@numba.njit(cache=True)
def _prepare_soft(tr, tmax, x, yi, leaves, acc, d, w, margin):
    """Leaves, exact soft prediction, and the per-tree quantities of the soft bounds.

    Fills ``leaves`` (n_trees,), ``d[t, c] = p_t[c] - p_t[y]`` at the current leaf,
    ``w[t, c] = tmax[t, c, y] - d[t, c] >= 0`` (the largest swing of tree ``t``
    towards ``c``) and ``margin[c] = sum_t p_t[y] - p_t[c]`` (real-number margin, the
    soft analogue of delta). Returns whether the exact prediction is ``yi``.
    """
    leaf_proba, roots = tr.value, tr.roots
    n_trees = roots.shape[0]
    K = leaf_proba.shape[1]
    for t in range(n_trees):
        leaves[t] = _leaf(tr, roots[t], x)
    pred = _soft_argmax(leaf_proba, leaves, K, acc)
    for c in range(K):
        margin[c] = 0.0
    for t in range(n_trees):
        node = leaves[t]
        for c in range(K):
            dd = leaf_proba[node, c] - leaf_proba[node, yi]
            d[t, c] = dd
            ww = tmax[t, c, yi] - dd
            w[t, c] = ww if ww > 0.0 else 0.0
            margin[c] -= dd
    return pred == yi


@numba.njit(cache=True)
def _weighted_sizes(ptr, trees, w, c, n_sets):
    sizes = np.zeros(n_sets, np.float64)
    for k in range(n_sets):
        s = 0.0
        for q in range(ptr[k], ptr[k + 1]):
            s += w[trees[q], c]
        sizes[k] = s
    return sizes


@numba.njit(cache=True)
def _feature_max_f(sizes, n_features):
    m = np.empty(n_features, np.float64)
    for f in range(n_features):
        a = sizes[2 * f]
        b = sizes[2 * f + 1]
        m[f] = a if a >= b else b
    return m


@numba.njit(cache=True)
def _cover_search_soft(ptr, trees, w, c, sizes, n_features, budget, need, n_trees, pick_f, pick_s):
    """ELB's exhaustive cover search (section 4.4) with tree weights ``w[:, c]``.

    Looks for at most ``budget`` sets, never both ``S_f^+`` and ``S_f^-``, whose
    union weighs at least ``need``; same depth-first order and FLB-style cut as
    :func:`_cover_search`. Returns ``(found, covered_weight)``.
    """
    m = _feature_max_f(sizes, n_features)
    order = np.argsort(-m, kind="mergesort")
    nc = 0
    for j in range(n_features):
        if m[order[j]] > 0.0:
            nc += 1
    pick_f[:] = -1
    pick_s[:] = -1
    if nc == 0:
        return need <= 0.0, 0.0
    item_f = np.empty(2 * nc, np.int64)
    item_s = np.empty(2 * nc, np.int64)
    item_j = np.empty(2 * nc, np.int64)
    ni = 0
    for j in range(nc):
        f = order[j]
        for s in range(2):
            if sizes[2 * f + s] > 0.0:
                item_f[ni] = f
                item_s[ni] = s
                item_j[ni] = j
                ni += 1
    prefix = np.zeros(nc + 1, np.float64)
    for j in range(nc):
        prefix[j + 1] = prefix[j] + m[order[j]]
    cnt = np.zeros(n_trees, np.int64)
    covered = 0.0
    pick = np.full(budget, -1, np.int64)
    added = np.zeros(budget, np.bool_)
    depth = 0
    while depth >= 0:
        if added[depth]:
            k = 2 * item_f[pick[depth]] + item_s[pick[depth]]
            for q in range(ptr[k], ptr[k + 1]):
                t = trees[q]
                cnt[t] -= 1
                if cnt[t] == 0:
                    covered -= w[t, c]
            added[depth] = False
        nxt = pick[depth] + 1
        if depth > 0:
            jprev = item_j[pick[depth - 1]]
            while nxt < ni and item_j[nxt] == jprev:
                nxt += 1
        if nxt >= ni:
            depth -= 1
            continue
        jn = item_j[nxt]
        hi = min(jn + budget - depth, nc)
        if covered + prefix[hi] - prefix[jn] < need:
            depth -= 1
            continue
        pick[depth] = nxt
        k = 2 * item_f[nxt] + item_s[nxt]
        for q in range(ptr[k], ptr[k + 1]):
            t = trees[q]
            if cnt[t] == 0:
                covered += w[t, c]
            cnt[t] += 1
        added[depth] = True
        if covered >= need:
            for q in range(depth + 1):
                pick_f[q] = item_f[pick[q]]
                pick_s[q] = item_s[pick[q]]
            return True, covered
        if depth + 1 < budget:
            depth += 1
            pick[depth] = pick[depth - 1]
            added[depth] = False
    return False, 0.0


@numba.njit(cache=True, inline="always")
def _soft_flips(tr, leaves, aff, n_aff, xp, yi, tmp_leaves, acc):
    """Exact replay of ``forest.predict`` on ``xp`` (only the trees ``aff`` re-walked)."""
    leaf_proba, roots = tr.value, tr.roots
    tmp_leaves[:] = leaves
    for a in range(n_aff):
        t = aff[a]
        tmp_leaves[t] = _leaf(tr, roots[t], xp)
    return _soft_argmax(leaf_proba, tmp_leaves, leaf_proba.shape[1], acc) != yi


@numba.njit(cache=True, inline="always")
def _attack_possible_soft(tr, S, n_aff, values, yi, tol):
    """Sound test of the soft branch and bound (the analogue of :func:`_attack_possible`).

    Every affected tree adds, for each class ``c``, the best ``p_l[c] - p_l[y]`` over
    the leaves ``l`` some allowed value reaches; ``fixed[c]`` holds the sum over the
    other trees. Some completion can beat ``y`` only if a bound reaches ``-tol``.
    """
    x, aff, ppos, rlo, rhi, stack = S.x, S.aff, S.ppos, S.rlo, S.rhi, S.stack
    fixed, bound, best = S.fixed, S.bound, S.best
    feature, threshold, left, right, roots = tr.feature, tr.threshold, tr.left, tr.right, tr.roots
    leaf_proba, missing_left = tr.value, tr.missing_left
    K = leaf_proba.shape[1]
    bound[:] = fixed
    for a in range(n_aff):
        t = aff[a]
        best[:] = -np.inf
        sp = 1
        stack[0] = roots[t]
        while sp > 0:
            sp -= 1
            node = stack[sp]
            f = feature[node]
            if f < 0:
                for c in range(K):
                    v = leaf_proba[node, c] - leaf_proba[node, yi]
                    if v > best[c]:
                        best[c] = v
                continue
            q = ppos[f]
            if q < 0:
                if _goes_left(x[f], threshold, missing_left, node):
                    stack[sp] = left[node]
                else:
                    stack[sp] = right[node]
                sp += 1
            else:
                if values[rlo[q]] <= threshold[node]:
                    stack[sp] = left[node]
                    sp += 1
                if values[rhi[q]] > threshold[node]:
                    stack[sp] = right[node]
                    sp += 1
        for c in range(K):
            bound[c] += best[c]
    for c in range(K):
        if c != yi and bound[c] >= -tol:
            return True
    return False

