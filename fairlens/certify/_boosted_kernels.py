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

from ._flat import Search
from ._kernels import (
    _brute_items,
    _feature_max_f,
    _goes_left,
    _leaf,
    _value_regions,
    _weighted_sizes,
    instance_sets,
)

__all__ = ["raw_scores", "brute_boost_kernel", "row_quantities"]


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
    """
    best, wb, st_node, st_f1, st_cnt, st_df, st_ds = bw
    feature, threshold, left, right, roots = tr.feature, tr.threshold, tr.left, tr.right, tr.roots
    value, missing_left = tr.value, tr.missing_left
    n_trees = roots.shape[0]
    for t in range(n_trees):
        for k in range(best.shape[1]):
            best[t, k] = 0.0
        wb[t] = 0.0
        cur = value[leaves[t]]
        sign = 1.0 if group[t] == yi else -1.0
        sp = 1
        st_node[0] = roots[t]
        st_f1[0] = -1
        st_cnt[0] = 0
        while sp > 0:
            sp -= 1
            node = st_node[sp]
            k1 = st_f1[sp]
            cnt = st_cnt[sp]
            f = feature[node]
            if f < 0:
                if k1 >= 0:
                    gain = sign * (cur - value[node])
                    if gain > best[t, k1]:
                        best[t, k1] = gain
                        if gain > wb[t]:
                            wb[t] = gain
                continue
            go_left = _goes_left(x[f], threshold, missing_left, node)
            same = left[node] if go_left else right[node]
            other = right[node] if go_left else left[node]
            dirn = 0 if go_left else 1  # 0: the attacker must increase x_f to go the other way
            # the child the instance's value would take: no new disagreement
            st_node[sp] = same
            st_f1[sp] = k1
            st_cnt[sp] = cnt
            for q in range(cnt):
                st_df[sp, q] = st_df[sp - 0, q]
                st_ds[sp, q] = st_ds[sp - 0, q]
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
            st_node[sp] = other
            st_f1[sp] = k1 if k1 >= 0 else 2 * f + dirn
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
    return (best, wb, np.empty(N, np.int64), np.empty(N, np.int64), np.empty(N, np.int64),
            np.empty((N, budget + 1), np.int64), np.empty((N, budget + 1), np.int64))


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


@numba.njit(cache=True, inline="always")
def _bb_pattern(tr, rule, S, vals, k, n_aff, yi, skip):
    """Branch and bound over the relevant values of one sign pattern.

    Returns ``(outcome, n_nodes, n_ambiguous_skipped)`` with ``outcome`` 0 (no
    attack), 1 (decisive witness in ``cur``) or 2 (the ``skip``-th ambiguous
    candidate, in ``cur``); ambiguous candidates before it are counted and passed.
    """
    pick, item_f, item_s, region, ppos = S.pick, S.item_f, S.item_s, S.region, S.ppos
    x, xp, aff, leaves, tmp_leaves, acc = S.x, S.xp, S.aff, S.leaves, S.tmp_leaves, S.acc
    cur, lo, hi, rlo, rhi = S.cur, S.lo, S.hi, S.rlo, S.rhi
    values_ptr, values = vals.ptr, vals.values
    for q in range(k):
        f = item_f[pick[q]]
        ppos[f] = q
        if item_s[pick[q]] == 0:
            lo[q] = values_ptr[f] + region[f] + 1
            hi[q] = values_ptr[f + 1] - 1
        else:
            lo[q] = values_ptr[f]
            hi[q] = values_ptr[f] + region[f] - 1
        rlo[q] = lo[q]
        rhi[q] = hi[q]
    nodes = 1
    outcome = 0
    seen = 0
    if _attack_possible(tr, rule, S, n_aff, values, yi):
        q = 0
        cur[0] = lo[0] - 1
        while q >= 0:
            cur[q] += 1
            if cur[q] > hi[q]:
                rlo[q] = lo[q]
                rhi[q] = hi[q]
                q -= 1
                continue
            rlo[q] = cur[q]
            rhi[q] = cur[q]
            nodes += 1
            if not _attack_possible(tr, rule, S, n_aff, values, yi):
                continue
            if q == k - 1:
                for qq in range(k):
                    xp[item_f[pick[qq]]] = values[cur[qq]]
                dec = _replay(tr, rule, leaves, aff, n_aff, xp, yi, tmp_leaves, acc)
                for qq in range(k):
                    f = item_f[pick[qq]]
                    xp[f] = x[f]
                if dec == 1:
                    outcome = 1
                    break
                if dec == 2:
                    if seen >= skip:
                        outcome = 2
                        break
                    seen += 1
                continue
            q += 1
            cur[q] = lo[q] - 1
    for q in range(k):
        ppos[item_f[pick[q]]] = -1
    return outcome, nodes, seen


@numba.njit(cache=True, nogil=True)  # released: anytime slices run on threads
def brute_boost_kernel(tr, rule, vals, X, y, rows, budget, state, max_work):
    """Exact attack search (section 4.1) against the summed raw scores.

    Every set of at most ``budget`` attacked features and every sign pattern
    (each attacked feature leaves its interval upwards, ``S_f^+``, or
    downwards, ``S_f^-``) is considered in the depth-first order of the soft
    forest kernel, pruned by the ELB-style union of swings; the relevant values
    of a pattern are searched by branch and bound (:func:`_bb_pattern`), every
    full assignment replayed with the library's arithmetic.

    Bounded work: the first row starts at top-level item ``start_item = state[0]`` and
    passes its first ``skip = state[1]`` ambiguous candidates there (``state``: int64 (2,)). The kernel returns
    when a row yields an ambiguous candidate (the caller asks the library) or
    after about ``max_work`` steps (at a top-level item boundary).

    Returns ``outcome, wit_f, wit_v, n_evals, n_done, resume_item, amb_item,
    amb_skip``: ``outcome[ii]`` 0 robust / 1 witness / 2 ambiguous candidate of
    the rows ``rows[:n_done]``; ``resume_item >= 0`` when row ``rows[n_done]``
    must be resumed at that item (with ``skip=0``); for an ambiguous candidate
    (always the last done row) ``amb_item``/``amb_skip`` say where to resume if
    the library rejects it (``start_item=amb_item, skip=amb_skip + 1``).
    """
    feature, value, roots = tr.feature, tr.value, tr.roots
    group, base, tol_b = rule.group, rule.base, rule.tol_b
    values_ptr, values = vals.ptr, vals.values
    start_item, skip = state[0], state[1]
    n = rows.shape[0]
    d = X.shape[1]
    n_trees = roots.shape[0]
    K = base.shape[0]
    outcome = np.zeros(n, np.int64)
    wit_f = np.full((n, budget), -1, np.int64)
    wit_v = np.full((n, budget), np.nan, np.float64)
    n_evals = np.zeros(n, np.int64)
    cur = np.empty(budget, np.int64)
    lo = np.empty(budget, np.int64)
    hi = np.empty(budget, np.int64)
    region = np.zeros(d, np.int64)
    ppos = np.full(d, -1, np.int64)
    rlo = np.empty(budget, np.int64)
    rhi = np.empty(budget, np.int64)
    stack = np.empty(feature.shape[0] + 1, np.int64)
    fixed = np.empty(K, np.float64)
    bound = np.empty(K, np.float64)
    no_f = np.empty(0, np.float64)
    leaves = np.empty(n_trees, np.int64)
    tmp_leaves = np.empty(n_trees, np.int64)
    acc = np.empty(K, np.float64)
    w = np.empty((n_trees, K), np.float64)
    margin = np.empty(K, np.float64)
    contrib = np.empty((n_trees, K), np.float64)
    bw = _bw_buffers(tr, d, budget)
    wb = bw[1]
    work = 0
    for ii in range(n):
        i = rows[ii]
        x = X[i]
        yi = y[i]
        _prepare_row(tr, rule, x, yi, leaves, w, margin)
        _budget_weights(tr, group, x, yi, leaves, budget, bw)
        _apply_budget_weights(group, yi, wb, w)
        # contrib[t, c]: what tree t adds to s_c - s_y at its current leaf
        for t in range(n_trees):
            g = group[t]
            v = value[leaves[t]]
            for c in range(K):
                contrib[t, c] = 0.0
            if g == yi:
                for c in range(K):
                    if c != yi:
                        contrib[t, c] = -v
            else:
                contrib[t, g] = v
        ptr, trees = instance_sets(tr, x, d)
        _value_regions(values, values_ptr, x, d, region)
        m = np.zeros(d, np.float64)
        for c in range(K):
            if c == yi:
                continue
            mc = _feature_max_f(_weighted_sizes(ptr, trees, w, c, 2 * d), d)
            for f in range(d):
                if mc[f] > m[f]:
                    m[f] = mc[f]
        order, item_f, item_s, item_j, ni, nc = _brute_items(m, values_ptr, region, d)
        if ni == 0:
            continue
        prefix = np.zeros(nc + 1, np.float64)
        for j in range(nc):
            prefix[j + 1] = prefix[j] + m[order[j]]
        cnt = np.zeros(n_trees, np.int64)
        covered = np.zeros(K, np.float64)
        aff = np.empty(n_trees, np.int64)
        xp = x.copy()
        pick = np.full(budget, -1, np.int64)
        row_skip = 0
        item_seen = 0
        if ii == 0:
            pick[0] = start_item - 1
            row_skip = skip
        added = np.zeros(budget, np.bool_)
        S = Search(pick, item_f, item_s, region, ppos, cur, lo, hi, rlo, rhi, stack, aff, x, xp, fixed, bound, no_f,
                   leaves, tmp_leaves, acc)
        depth = 0
        while depth >= 0:
            if added[depth]:
                k = 2 * item_f[pick[depth]] + item_s[pick[depth]]
                for q in range(ptr[k], ptr[k + 1]):
                    t = trees[q]
                    cnt[t] -= 1
                    if cnt[t] == 0:
                        for c in range(K):
                            covered[c] -= w[t, c]
                added[depth] = False
                if depth == 0:
                    row_skip = 0  # skips only apply within the item the row was resumed at
                    item_seen = 0
                    if work >= max_work:
                        return outcome, wit_f, wit_v, n_evals, ii, pick[0] + 1, -1, -1
            nxt = pick[depth] + 1
            if depth > 0:
                jprev = item_j[pick[depth - 1]]
                while nxt < ni and item_j[nxt] == jprev:
                    nxt += 1
            if nxt >= ni:
                depth -= 1
                continue
            jn = item_j[nxt]
            hi_j = min(jn + budget - depth, nc)
            bnd = prefix[hi_j] - prefix[jn]
            hope = False
            for c in range(K):
                if c != yi and covered[c] + bnd >= margin[c] - tol_b:
                    hope = True
            if not hope:
                depth -= 1
                continue
            pick[depth] = nxt
            work += 1
            k = 2 * item_f[nxt] + item_s[nxt]
            for q in range(ptr[k], ptr[k + 1]):
                t = trees[q]
                if cnt[t] == 0:
                    for c in range(K):
                        covered[c] += w[t, c]
                cnt[t] += 1
            added[depth] = True
            feasible = False
            for c in range(K):
                if c != yi and covered[c] >= margin[c] - tol_b:
                    feasible = True
            if feasible:
                n_aff = 0
                for c in range(K):
                    fixed[c] = base[c] - base[yi]
                for t in range(n_trees):
                    if cnt[t] > 0:
                        aff[n_aff] = t
                        n_aff += 1
                    else:
                        for c in range(K):
                            fixed[c] += contrib[t, c]
                res, nodes, seen = _bb_pattern(tr, rule, S, vals, depth + 1, n_aff, yi, row_skip)
                n_evals[ii] += nodes
                work += nodes
                row_skip -= seen
                item_seen += seen
                if res > 0:
                    outcome[ii] = res
                    for q in range(depth + 1):
                        wit_f[ii, q] = item_f[pick[q]]
                        wit_v[ii, q] = values[cur[q]]
                    if res == 2:
                        return outcome, wit_f, wit_v, n_evals, ii + 1, -1, pick[0], item_seen
                    break
            if depth + 1 < budget:
                depth += 1
                pick[depth] = pick[depth - 1]
                added[depth] = False
    return outcome, wit_f, wit_v, n_evals, n, -1, -1, -1

