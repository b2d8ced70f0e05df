"""numba kernels for certifying boosted tree ensembles (additive raw scores).

A boosted model (see :mod:`fairlens.certify._boosted`) is flattened into the node
arrays of the forest kernels, received as the typed groups of :mod:`fairlens.certify._flat`:
``tr`` (:class:`~fairlens.certify._flat.Trees`; ``value`` float64: the leaf value of every leaf
node, 0 on internal nodes; ``missing_left``: the library's default direction) and ``rule``
(:class:`~fairlens.certify._flat.Rule`) with

* ``group`` (int64, per tree): the class whose raw score the tree adds to
  (binary models: class 1, whose score is the margin; class 0 keeps score 0);
* ``base`` (float64, per class): base score / init raw prediction;
* ``vmin``/``vmax`` (float64, per tree): the smallest and largest leaf value;
* ``f32`` (bool): the library accumulates the scores in float32 (XGBoost): the
  replay rounds to float32 after every addition, in tree order (bit-for-bit what
  XGBoost's CPU predictor does);
* ``tol``/``tol_b`` (float): the ambiguity half-width of the replay and the tolerance of the bounds.

Every split is ``x[f] <= threshold`` on the library-rounded input (``_boosted``
converts XGBoost's ``x < split`` in float32 to that form), so the tree walk
:func:`fairlens.certify._kernels._leaf` and the per-instance sets ``S_f^+`` /
``S_f^-`` (:func:`fairlens.certify._kernels.instance_sets`) are shared with the
forest kernels.

Decisions: for an instance predicted ``y`` the margin towards class ``c`` is
``s_y - s_c``. A replayed score vector is *decisive* for ``y`` when every margin
exceeds ``tol`` and decisive against ``y`` when some margin is below ``-tol``;
in between it is *ambiguous* (the library's own link/tie rule may go either
way) and the caller resolves it by calling the library's ``predict``.

Bounds (generalised FLB/ELB of section 4.3/4.4; their skeletons are written once for every decision
rule in :mod:`fairlens.certify._search`, which calls the steps here): tree ``t`` can lower the margin
towards ``c`` by at most its swing -- ``value(leaf) - value(L)`` when ``t`` adds
to ``y``, ``value(L) - value(leaf)`` when it adds to ``c``, else 0, over the leaves
``L`` reachable with ``b`` features (:func:`_budget_weights`; ``vmin``/``vmax`` give
the budget-free swing) -- and only if an attacked feature is tested on its path
(``S_f^+``/``S_f^-``).
Bounds compare real-number margins with ``tol_b`` (``tol`` plus the worst
float32 accumulation error), so they are sound for the library's arithmetic.

Every kernel is plain Python as well (``NUMBA_DISABLE_JIT=1``).
"""
import numba
import numpy as np

from ._kernels import _goes_left, _leaf

__all__ = ["raw_scores", "row_quantities"]


@numba.njit(cache=True)
def _add_scores(value, group, leaves, base, f32, out):
    """``out = base + sum_t value[leaf_t]`` into ``out[group[t]]``, in tree order
    (float32 rounding after each addition when ``f32``)."""
    K = base.shape[0]
    for c in range(K):
        out[c] = base[c]
    n_trees = leaves.shape[0]
    if f32:
        for t in range(n_trees):
            g = group[t]
            out[g] = np.float64(np.float32(out[g] + value[leaves[t]]))
    else:
        for t in range(n_trees):
            g = group[t]
            out[g] = out[g] + value[leaves[t]]


@numba.njit(cache=True)
def raw_scores(tr, rule, X):
    """Replayed raw scores (n, K) of the rows of ``X`` (the library's arithmetic)."""
    value, roots = tr.value, tr.roots
    group, base, f32 = rule.group, rule.base, rule.f32
    n = X.shape[0]
    n_trees = roots.shape[0]
    K = base.shape[0]
    out = np.empty((n, K), np.float64)
    leaves = np.empty(n_trees, np.int64)
    acc = np.empty(K, np.float64)
    for i in range(n):
        for t in range(n_trees):
            leaves[t] = _leaf(tr, roots[t], X[i])
        _add_scores(value, group, leaves, base, f32, acc)
        out[i, :] = acc
    return out


@numba.njit(cache=True)
def leaf_values(tr, X):
    """Leaf value reached in every tree by every row: (n, n_trees) float64."""
    value, roots = tr.value, tr.roots
    n = X.shape[0]
    n_trees = roots.shape[0]
    out = np.empty((n, n_trees), np.float64)
    for i in range(n):
        for t in range(n_trees):
            out[i, t] = value[_leaf(tr, roots[t], X[i])]
    return out


@numba.njit(cache=True)
def _decide(s, yi, tol):
    """0: decisively ``yi``; 1: decisively another class; 2: ambiguous (within ``tol``)."""
    amb = False
    for c in range(s.shape[0]):
        if c == yi:
            continue
        d = s[yi] - s[c]
        if d < -tol:
            return 1
        if d <= tol:
            amb = True
    return 2 if amb else 0


@numba.njit(cache=True)
def _prepare_row(tr, rule, x, yi, leaves, w, margin):
    """Leaves, swings ``w[t, c]`` and real-number margins ``margin[c] = s_y - s_c``."""
    value, roots = tr.value, tr.roots
    group, base, vmin, vmax = rule.group, rule.base, rule.vmin, rule.vmax
    n_trees = roots.shape[0]
    K = base.shape[0]
    for c in range(K):
        margin[c] = base[yi] - base[c]
    for t in range(n_trees):
        lf = _leaf(tr, roots[t], x)
        leaves[t] = lf
        g = group[t]
        v = value[lf]
        for c in range(K):
            w[t, c] = 0.0
        if g == yi:
            for c in range(K):
                if c != yi:
                    margin[c] += v
                    w[t, c] = v - vmin[t]
        else:
            margin[g] -= v
            w[t, g] = vmax[t] - v


@numba.njit(cache=True)
def _budget_weights(tr, group, x, yi, leaves, budget, bw):
    """Budget-aware swings (sharper than the global swing ``w``; still sound).

    A leaf ``L`` of tree ``t`` can only be reached by an attack on the features
    ``D(L)`` where ``L``'s path leaves the instance's path side (each in one
    direction); so with at most ``budget`` features only leaves with
    ``|D(L)| <= budget`` and consistent directions count. Its gain (``value(leaf)
    - value(L)`` when ``t`` adds to ``y``, the opposite when it adds to another
    class) is credited to the set ``k`` (``2 f`` for ``S_f^+``, ``2 f + 1`` for
    ``S_f^-``) of the *first* node where ``L``'s path leaves the instance's path
    -- a node on the instance's path, so ``t`` is in that ``S_f^±``. Any attack
    that moves ``t`` to ``L`` attacks that feature in that direction, hence
    ``sum over the attacked sets of best[:, k]`` bounds the margin's fall.

    ``bw`` holds the buffers of :func:`_bw_buffers`; fills ``best = bw[0]`` (n_trees, 2 d) and
    ``wb = bw[1]`` with ``wb[t] = max_k best[t, k]``.

    A row without NaN walks the trees without the NaN test (:func:`_budget_walk` compiled with
    ``missing_left=None``): the same answer (a finite value never reads ``missing_left``), and the
    NaN test in this hot walk cost FLB/ELB 15-20% on boosted models.
    """
    for f in range(x.shape[0]):
        if x[f] != x[f]:
            _budget_walk(tr, tr.missing_left, group, x, yi, leaves, budget, bw)
            return
    _budget_walk(tr, None, group, x, yi, leaves, budget, bw)


@numba.njit(cache=True)
def _budget_walk(tr, missing_left, group, x, yi, leaves, budget, bw):
    """The walk of :func:`_budget_weights`; ``missing_left`` is ``tr.missing_left`` or ``None`` (the
    row has no NaN: the split rule :func:`~fairlens.certify._kernels._goes_left` then compiles to
    ``x <= threshold``)."""
    best, wb, st_node, st_f1, st_cnt, st_df, st_ds, sub_lo, sub_hi = bw
    feature, threshold, left, right, roots = tr.feature, tr.threshold, tr.left, tr.right, tr.roots
    value = tr.value
    n_trees = roots.shape[0]
    for t in range(n_trees):
        for k in range(best.shape[1]):
            best[t, k] = 0.0
        wb[t] = 0.0
        cur = value[leaves[t]]
        up = group[t] == yi
        sign = 1.0 if up else -1.0
        # Pruning (the same credits, less walk): the most a leaf under ``node`` can gain is
        # sign * (cur - ext[node]) with ext the subtree's smallest (up) or largest leaf value --
        # exactly the largest leaf gain, since the rounded cur - v is monotone in v. A subtree whose
        # bound cannot raise the credit it would feed is skipped: the "other" child when pushed,
        # and a node when popped, as its credit may have grown meanwhile. Only at budget >= 2, where
        # a deviation's subtree branches again: at budget 1 (one path below each deviation) the
        # checks and the per-call pass of _subtree_extremes cost more than they save.
        ext = sub_lo if up else sub_hi
        deep = budget >= 2
        sp = 1
        st_node[0] = roots[t]
        st_f1[0] = -1
        st_cnt[0] = 0
        while sp > 0:
            sp -= 1
            node = st_node[sp]
            k1 = st_f1[sp]
            f = feature[node]
            if f < 0:
                if k1 >= 0:
                    gain = sign * (cur - value[node])
                    if gain > best[t, k1]:
                        best[t, k1] = gain
                        if gain > wb[t]:
                            wb[t] = gain
                continue
            if deep and k1 >= 0 and sign * (cur - ext[node]) <= best[t, k1]:
                continue  # no leaf below can raise best[t, k1]
            cnt = st_cnt[sp]
            go_left = _goes_left(x[f], threshold, missing_left, node)
            same = left[node] if go_left else right[node]
            other = right[node] if go_left else left[node]
            dirn = 0 if go_left else 1  # 0: the attacker must increase x_f to go the other way
            # the child the instance's value would take: no new disagreement (its path's features
            # st_df/st_ds[sp] are the popped node's, already in place)
            st_node[sp] = same
            st_f1[sp] = k1
            st_cnt[sp] = cnt
            sp += 1
            # the other child: f joins D(L) in direction dirn
            pos = -1
            for q in range(cnt):
                if st_df[sp - 1, q] == f:
                    pos = q
            if pos >= 0:
                if st_ds[sp - 1, pos] != dirn:
                    continue  # f would have to move both ways: unreachable
                ncnt = cnt
            else:
                ncnt = cnt + 1
                if ncnt > budget:
                    continue
            k2 = k1 if k1 >= 0 else 2 * f + dirn
            if deep and sign * (cur - ext[other]) <= best[t, k2]:
                continue  # no leaf below can raise best[t, k2]
            st_node[sp] = other
            st_f1[sp] = k2
            st_cnt[sp] = ncnt
            for q in range(cnt):
                st_df[sp, q] = st_df[sp - 1, q]
                st_ds[sp, q] = st_ds[sp - 1, q]
            if pos < 0:
                st_df[sp, cnt] = f
                st_ds[sp, cnt] = dirn
            sp += 1


@numba.njit(cache=True)
def _apply_budget_weights(group, yi, wb, w):
    """Replace the global swings ``w[t, c]`` by the budget-aware ``wb[t]``."""
    n_trees = w.shape[0]
    K = w.shape[1]
    for t in range(n_trees):
        g = group[t]
        for c in range(K):
            w[t, c] = 0.0
        if g == yi:
            for c in range(K):
                if c != yi:
                    w[t, c] = wb[t]
        else:
            w[t, g] = wb[t]


@numba.njit(cache=True)
def _set_weights(ptr, trees, best, group, yi, c, n_sets):
    """``W(S_k)`` towards ``c``: sum of ``best[t, k]`` over the trees of ``S_k`` adding to ``y`` or ``c``."""
    sizes = np.zeros(n_sets, np.float64)
    for k in range(n_sets):
        s = 0.0
        for q in range(ptr[k], ptr[k + 1]):
            t = trees[q]
            g = group[t]
            if g == yi or g == c:
                s += best[t, k]
        sizes[k] = s
    return sizes


@numba.njit(cache=True)
def _bw_buffers(tr, n_features, budget):
    feature, roots = tr.feature, tr.roots
    n_trees = roots.shape[0]
    best = np.zeros((n_trees, 2 * n_features), np.float64)
    wb = np.zeros(n_trees, np.float64)
    N = feature.shape[0] + 2
    if budget >= 2:  # the walk's pruning (at budget 1 it does not pay: no per-call pass)
        sub_lo, sub_hi = _subtree_extremes(tr)
    else:
        sub_lo, sub_hi = np.empty(0, np.float64), np.empty(0, np.float64)
    return (best, wb, np.empty(N, np.int64), np.empty(N, np.int64), np.empty(N, np.int64),
            np.empty((N, budget + 1), np.int64), np.empty((N, budget + 1), np.int64), sub_lo, sub_hi)


@numba.njit(cache=True)
def _subtree_extremes(tr):
    """``(lo, hi)``: the smallest and largest leaf value under every node (a leaf: its own value), for
    the pruning of :func:`_budget_walk`. One backward pass when every child comes after its parent
    (the readers' order), else a post-order walk of every tree (any node order)."""
    feature, left, right, roots, value = tr.feature, tr.left, tr.right, tr.roots, tr.value
    m = feature.shape[0]
    lo = np.empty(m, np.float64)
    hi = np.empty(m, np.float64)
    ordered = True
    for node in range(m - 1, -1, -1):
        if feature[node] < 0:
            lo[node] = value[node]
            hi[node] = value[node]
        else:
            a, b = left[node], right[node]
            if a <= node or b <= node:
                ordered = False
                break
            lo[node] = lo[a] if lo[a] <= lo[b] else lo[b]
            hi[node] = hi[a] if hi[a] >= hi[b] else hi[b]
    if ordered:
        return lo, hi
    stack = np.empty(m + 1, np.int64)
    done = np.zeros(m, np.bool_)
    for t in range(roots.shape[0]):
        sp = 1
        stack[0] = roots[t]
        while sp > 0:
            node = stack[sp - 1]
            if feature[node] < 0:
                lo[node] = value[node]
                hi[node] = value[node]
                sp -= 1
            elif done[node]:
                a, b = left[node], right[node]
                lo[node] = lo[a] if lo[a] <= lo[b] else lo[b]
                hi[node] = hi[a] if hi[a] >= hi[b] else hi[b]
                sp -= 1
            else:
                done[node] = True
                stack[sp] = left[node]
                stack[sp + 1] = right[node]
                sp += 2
    return lo, hi


@numba.njit(cache=True)
def row_quantities(tr, rule, x, yi, budget):
    """``(leaves, w, margin, best)`` of one instance at ``budget`` (budget-aware swings ``w`` and
    per-set credits ``best``, see :func:`_budget_weights`), for ``instance_covers`` and the widget."""
    roots = tr.roots
    group, base = rule.group, rule.base
    n_trees = roots.shape[0]
    K = base.shape[0]
    leaves = np.empty(n_trees, np.int64)
    w = np.empty((n_trees, K), np.float64)
    margin = np.empty(K, np.float64)
    _prepare_row(tr, rule, x, yi, leaves, w, margin)
    bw = _bw_buffers(tr, x.shape[0], budget)
    bbest, wb = bw[0], bw[1]
    _budget_weights(tr, group, x, yi, leaves, budget, bw)
    _apply_budget_weights(group, yi, wb, w)
    return leaves, w, margin, bbest


@numba.njit(cache=True, inline="always")
def _attack_possible(tr, rule, S, n_aff, values, yi):
    """Sound test of the branch and bound: can some completion of the partial
    assignment (attacked feature ``f`` confined to ``values[rlo[q]..rhi[q]]``,
    ``q = ppos[f]``) give some class ``c`` a score within ``tol_b`` of ``y``'s?

    Each affected tree is relaxed independently: the smallest (tree adds to
    ``y``) or largest (tree adds to ``c``) leaf value among the leaves some
    allowed value reaches. ``fixed[c]`` holds ``s_c - s_y`` of the other trees.
    """
    group, tol_b = rule.group, rule.tol_b
    x, aff, ppos, rlo, rhi, stack = S.x, S.aff, S.ppos, S.rlo, S.rhi, S.stack
    fixed, bound = S.fixed, S.bound
    feature, threshold, left, right, roots = tr.feature, tr.threshold, tr.left, tr.right, tr.roots
    value, missing_left = tr.value, tr.missing_left
    K = fixed.shape[0]
    for c in range(K):
        bound[c] = fixed[c]
    for a in range(n_aff):
        t = aff[a]
        lo_v = np.inf
        hi_v = -np.inf
        sp = 1
        stack[0] = roots[t]
        while sp > 0:
            sp -= 1
            node = stack[sp]
            f = feature[node]
            if f < 0:
                v = value[node]
                if v < lo_v:
                    lo_v = v
                if v > hi_v:
                    hi_v = v
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
        g = group[t]
        if g == yi:
            for c in range(K):
                if c != yi:
                    bound[c] -= lo_v
        else:
            bound[g] += hi_v
    for c in range(K):
        if c != yi and bound[c] >= -tol_b:
            return True
    return False


@numba.njit(cache=True, inline="always")
def _replay(tr, rule, leaves, aff, n_aff, xp, yi, tmp_leaves, acc):
    """Decision (see :func:`_decide`) of the exact replay on ``xp``; only the trees
    ``aff`` are re-walked."""
    value, roots = tr.value, tr.roots
    group, base, f32, tol = rule.group, rule.base, rule.f32, rule.tol
    tmp_leaves[:] = leaves
    for a in range(n_aff):
        t = aff[a]
        tmp_leaves[t] = _leaf(tr, roots[t], xp)
    _add_scores(value, group, tmp_leaves, base, f32, acc)
    return _decide(acc, yi, tol)

