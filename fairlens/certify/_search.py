"""The exhaustive search (paper, section 4.1), written once for every decision rule (numba kernel).

:func:`brute_search` enumerates every set of at most ``budget`` attacked features, every sign
pattern and every combination of relevant values, on the one flat ensemble ``ens``
(:class:`~fairlens.certify._flat.FlatEnsemble`); the decision rule is the argument ``vote`` (a
:class:`~fairlens.certify._votes.VoteRule`), whose steps give the row's weights and margins, the
sound bound of the branch and bound (``vote.possible``) and the decision on a full assignment
(``vote.bb_leaf``, ``vote.decide``). The search is exactly resumable under a work budget (the
anytime scheduler, :mod:`fairlens.certify._schedule`, relies on it).
"""
from collections import namedtuple

import numba
import numpy as np

from ._walk import feature_max, instance_sets

__all__ = ["brute_search", "Search"]

#: The exhaustive search's per-row state, built inside :func:`brute_search` and handed to the vote
#: rule's steps as one argument: the search items (``item_f``/``item_s``), the picked items, the value
#: ranges (``cur``/``lo``/``hi``/``rlo``/``rhi``), the row ``x`` and its attacked copy ``xp``, and the
#: scratch arrays of the bounds and the replay (``fixed``/``bound``/``best``, ``leaves``/``tmp_leaves``/
#: ``acc``; empty where a rule does not use them).
Search = namedtuple("Search", "pick item_f item_s region ppos cur lo hi rlo rhi stack aff x xp fixed bound best leaves "
                              "tmp_leaves acc")


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


@numba.njit(cache=True)
def _save_state(state, phase, depth, aux, pick, cur, budget, lo, hi):
    """Where the search of a row paused: phase, depth, level, ``pick``, ``cur``; then, read by the
    scheduler only (never by the resume), the range ``lo[0] .. hi[0]`` of the outermost value index
    of a paused value search (phase 2; -1 otherwise)."""
    state[0] = phase
    state[1] = depth
    state[2] = aux
    for q in range(budget):
        state[3 + q] = pick[q]
        state[3 + budget + q] = cur[q]
    state[3 + 2 * budget] = lo[0] if phase == 2 else -1
    state[4 + 2 * budget] = hi[0] if phase == 2 else -1


@numba.njit(cache=True, inline="always")
def _bb_values(ens, vote, S, k, n_aff, yi, tol, q_resume, max_nodes):
    """Branch and bound over the relevant values of the sign pattern ``pick[:k]`` (every decision rule).

    Assigns the attacked features one after the other; before going deeper :func:`_possible` checks,
    with the unassigned features free over their whole range, whether any completion can succeed; a
    full assignment is decided by :func:`_bb_leaf`. Bounded and resumable: the search pauses once
    ``max_nodes`` nodes were visited in this call; ``q_resume >= 0`` continues a paused (or
    ambiguous) search at level ``q_resume`` with the value indices ``cur``, exactly where it stopped
    (right after the candidate), visiting the same nodes in the same order as an uninterrupted one.
    Returns ``(status, n_nodes, q)``: 0 no attack, 1 attack (``cur``), 2 paused at level ``q``,
    3 ambiguous candidate (``cur``, level ``q``; the library decides).
    """
    pick, item_f, item_s, region, ppos = S.pick, S.item_f, S.item_s, S.region, S.ppos
    cur, lo, hi, rlo, rhi = S.cur, S.lo, S.hi, S.rlo, S.rhi
    values_ptr = ens.values_ptr
    resume = q_resume >= 0
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
    nodes = 0
    status = 0
    q = 0
    go = True
    if resume:
        q = q_resume
        for qq in range(q_resume):
            rlo[qq] = cur[qq]
            rhi[qq] = cur[qq]
    else:
        nodes = 1
        go = vote.possible(ens, S, n_aff, yi, tol)
        cur[0] = lo[0] - 1
    if go:
        while q >= 0:
            if nodes >= max_nodes:
                status = 2
                break
            cur[q] += 1
            if cur[q] > hi[q]:
                rlo[q] = lo[q]
                rhi[q] = hi[q]
                q -= 1
                continue
            rlo[q] = cur[q]
            rhi[q] = cur[q]
            nodes += 1
            if not vote.possible(ens, S, n_aff, yi, tol):
                continue
            if q == k - 1:
                dec = vote.bb_leaf(ens, S, k, n_aff, yi)
                if dec == 1:
                    status = 1
                    break
                if dec == 2:
                    status = 3
                    break
                continue
            q += 1
            cur[q] = lo[q] - 1
    for qq in range(k):
        ppos[item_f[pick[qq]]] = -1
    return status, nodes, q


@numba.njit(cache=True, inline="always")
def _enumerate_values(ens, vote, S, k, n_aff, yi, row, resume, max_eval):
    """Literal enumeration of every relevant value combination of the sign pattern ``pick[:k]``
    (``prune=False``): feature ``item_f[pick[q]]`` takes in turn every relevant value strictly above
    (sign 0) or below (sign 1) the interval holding ``x``; each combination is decided by
    :func:`_decide`. Bounded and resumable (``resume=True`` continues from ``cur``). Returns
    ``(status, n_evaluated)``: 1 = a flip at ``cur``, 0 = none, 2 = paused (``cur`` is next)."""
    pick, item_f, item_s, region, x, xp = S.pick, S.item_f, S.item_s, S.region, S.x, S.xp
    cur, lo, hi = S.cur, S.lo, S.hi
    values_ptr, values = ens.values_ptr, ens.values
    for q in range(k):
        f = item_f[pick[q]]
        if item_s[pick[q]] == 0:
            lo[q] = values_ptr[f] + region[f] + 1
            hi[q] = values_ptr[f + 1]
        else:
            lo[q] = values_ptr[f]
            hi[q] = values_ptr[f] + region[f]
        if not resume:
            cur[q] = lo[q]
        xp[f] = values[cur[q]]
    n_eval = 0
    status = 0
    while True:
        if n_eval >= max_eval:
            status = 2
            break
        n_eval += 1
        if vote.decide(ens, S, row, n_aff, yi) != 0:
            status = 1
            break
        q = k - 1
        while q >= 0:
            f = item_f[pick[q]]
            cur[q] += 1
            if cur[q] < hi[q]:
                xp[f] = values[cur[q]]
                break
            cur[q] = lo[q]
            xp[f] = values[lo[q]]
            q -= 1
        if q < 0:
            break
    for q in range(k):
        f = item_f[pick[q]]
        xp[f] = x[f]
    return status, n_eval


@numba.njit(cache=True, nogil=True)  # released: anytime slices run on threads
def brute_search(ens, vote, X, y, rows, budget, prune, state, max_work):
    """Exact attack search (paper, section 4.1) for the rows ``rows``, for every decision rule.

    Enumerates every set of at most ``budget`` attacked features and, for each, every sign pattern
    (each attacked feature leaves its interval upwards, ``S_f^+``, or downwards, ``S_f^-``) and every
    combination of relevant values (one representative per interval of the thresholds ``V_f``, the
    last one standing for ``+inf``); attacks keeping a feature in its interval are the attacks on a
    smaller feature set, enumerated too. A feature only changes the trees whose path tests it in the
    direction of the change, so each combination re-evaluates only those trees. Items are visited
    depth first, features in decreasing order of their largest set weight towards any class.

    With ``prune=False`` this is the literal enumeration: every combination of every pattern is
    decided (:func:`_enumerate_values`). With ``prune=True`` (same answer, far less work) a sign
    pattern is skipped when the union of its sets cannot reach the margin of any class (ELB's
    condition applied to the pattern; Proposition 2), and its values are searched by branch and bound
    (:func:`_bb_values`). The rule's steps (the row's weights and margins, the bound, the decision)
    come from ``vote``. Additive scores
    (boosted models) always prune; a candidate whose replayed margin is within ``tol`` is
    *ambiguous*: the search returns it and the caller asks the library.

    Parameters
    ----------
    ens : FlatEnsemble
        The model (its relevant values included).
    vote : VoteRule
        The decision rule.
    X : ndarray of float64, shape (n, d)
        The rows (library-rounded; C-contiguous).
    y : ndarray of int64, shape (n,)
    rows : ndarray of int64
    budget : int
    prune : bool
    state : ndarray of int64, shape (5 + 2 * budget,)
        Where ``rows[0]`` resumes (``state[0] != 0``); modified in place (see Notes).
    max_work : int
        Work units of this call (patterns picked plus nodes / combinations evaluated), >= 1.

    Returns
    -------
    correct : ndarray of bool
        Whether the row's prediction is ``y`` (additive: always True, the library decides).
    outcome : ndarray of int64
        0 no attack, 1 attack (witness), 2 ambiguous candidate (additive only; always the last
        row done, ``state`` then says where to resume if the library rejects it).
    wit_f, wit_v : ndarray, shape (len(rows), budget)
        The attacked features and their new values (-1 / nan padded).
    n_evals : ndarray of int64
        (Full or partial) evaluations per row.
    n_done : int
        Rows finished.

    Notes
    -----
    Bounded work, exactly resumable: once the work of this call reaches ``max_work`` the search
    pauses -- between two patterns, or inside the value search of one pattern -- and returns
    ``n_done < len(rows)``; ``state`` (phase, depth, level, the picked items, the value indices)
    then describes where row ``rows[n_done]`` stopped, and a call with ``state[0] != 0`` resumes
    ``rows[0]`` from there (the caller passes the unfinished rows again). An ambiguous candidate
    saves the state right after it the same way. The pauses change nothing in the answer, the
    witnesses or the evaluation counts. The last two entries of ``state``, the range ``lo .. hi``
    of the outermost value index ``state[3 + budget]`` of a paused value search (-1 outside one),
    are never read back: they only tell the anytime scheduler how far the pattern's search got.
    """
    values_ptr, values = ens.values_ptr, ens.values
    n = rows.shape[0]
    d = X.shape[1]
    n_trees = ens.roots.shape[0]
    K = ens.base.shape[0]
    correct = np.zeros(n, np.bool_)
    outcome = np.zeros(n, np.int64)
    wit_f = np.full((n, budget), -1, np.int64)
    wit_v = np.full((n, budget), np.nan, np.float64)
    n_evals = np.zeros(n, np.int64)
    cur = np.zeros(budget, np.int64)
    lo = np.empty(budget, np.int64)
    hi = np.empty(budget, np.int64)
    region = np.zeros(d, np.int64)
    ppos = np.full(d, -1, np.int64)
    rlo = np.empty(budget, np.int64)
    rhi = np.empty(budget, np.int64)
    stack = np.empty(ens.feature.shape[0] + 1, np.int64)
    sc, (fixed, bound, best, leaves, tmp_leaves, acc) = vote.brute_scratch(ens, d, budget)
    work = 0
    for ii in range(n):
        i = rows[ii]
        x = X[i]
        yi = y[i]
        resume = ii == 0 and state[0] != 0
        ok, row, tol = vote.brute_row(ens, x, yi, budget, sc)
        if not ok:
            continue
        correct[ii] = True
        margin = row[1]
        ptr, trees = instance_sets(ens, x, d)
        _value_regions(values, values_ptr, x, d, region)
        # sort key: the largest set weight over the target classes
        m = vote.zeros(d)
        for c in range(K):
            if c == yi:
                continue
            mc = feature_max(vote.elb_sizes(ens, ptr, trees, row, yi, c), d)
            for f in range(d):
                if mc[f] > m[f]:
                    m[f] = mc[f]
        order, item_f, item_s, item_j, ni, nc = _brute_items(m, values_ptr, region, d)
        if ni == 0:
            continue
        prefix = vote.zeros(nc + 1)
        for j in range(nc):
            prefix[j + 1] = prefix[j] + m[order[j]]
        cnt = np.zeros(n_trees, np.int64)
        covered = vote.zeros(K)
        aff = np.empty(n_trees, np.int64)
        xp = x.copy()
        pick = np.full(budget, -1, np.int64)
        added = np.zeros(budget, np.bool_)
        S = Search(pick, item_f, item_s, region, ppos, cur, lo, hi, rlo, rhi, stack, aff, x, xp, fixed, bound, best,
                   leaves, tmp_leaves, acc)
        depth = 0
        phase = 0
        q_res = 0
        if resume:  # rebuild the search state where the previous call paused
            phase = state[0]
            depth = state[1]
            for q in range(budget):
                pick[q] = state[3 + q]
            top = depth + 1 if (phase == 2 or state[2] == 1) else depth
            for lev in range(top):
                added[lev] = True
                k = 2 * item_f[pick[lev]] + item_s[pick[lev]]
                for q in range(ptr[k], ptr[k + 1]):
                    t = trees[q]
                    if cnt[t] == 0:
                        for c in range(K):
                            covered[c] += vote.gain(row, t, c)
                    cnt[t] += 1
            if phase == 2:
                q_res = state[2]
                for q in range(budget):
                    cur[q] = state[3 + budget + q]
            state[0] = 0
        while depth >= 0:
            if phase == 2:  # resume inside the value search of the pattern pick[:depth + 1]
                feasible = True
            else:
                if work >= max_work:
                    _save_state(state, 1, depth, 1 if added[depth] else 0, pick, cur, budget, lo, hi)
                    return correct, outcome, wit_f, wit_v, n_evals, ii
                if added[depth]:
                    k = 2 * item_f[pick[depth]] + item_s[pick[depth]]
                    for q in range(ptr[k], ptr[k + 1]):
                        t = trees[q]
                        cnt[t] -= 1
                        if cnt[t] == 0:
                            for c in range(K):
                                covered[c] -= vote.gain(row, t, c)
                    added[depth] = False
                nxt = pick[depth] + 1
                if depth > 0:
                    jprev = item_j[pick[depth - 1]]
                    while nxt < ni and item_j[nxt] == jprev:
                        nxt += 1
                if nxt >= ni:
                    depth -= 1
                    continue
                if prune:
                    jn = item_j[nxt]
                    hi_j = min(jn + budget - depth, nc)
                    bnd = prefix[hi_j] - prefix[jn]
                    hope = False
                    for c in range(K):
                        if c != yi and covered[c] + bnd >= margin[c] - tol:
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
                            covered[c] += vote.gain(row, t, c)
                    cnt[t] += 1
                added[depth] = True
                feasible = True
                if prune:
                    feasible = False
                    for c in range(K):
                        if c != yi and covered[c] >= margin[c] - tol:
                            feasible = True
            if feasible:
                n_aff = 0
                for t in range(n_trees):
                    if cnt[t] > 0:
                        aff[n_aff] = t
                        n_aff += 1
                if prune:
                    vote.fixed(ens, row, yi, cnt, S, n_aff)
                    st, nodes, q_at = _bb_values(ens, vote, S, depth + 1, n_aff, yi, tol,
                                                 q_res if phase == 2 else -1, max_work - work)
                else:
                    st, nodes = _enumerate_values(ens, vote, S, depth + 1, n_aff, yi, row, phase == 2,
                                                  max_work - work)
                    q_at = 0
                phase = 0
                n_evals[ii] += nodes
                work += nodes
                if st == 2:
                    _save_state(state, 2, depth, q_at, pick, cur, budget, lo, hi)
                    return correct, outcome, wit_f, wit_v, n_evals, ii
                if st == 1 or st == 3:
                    for q in range(depth + 1):
                        wit_f[ii, q] = item_f[pick[q]]
                        wit_v[ii, q] = values[cur[q]]
                    if st == 3:  # ambiguous: the caller asks the library; resumable right after it
                        outcome[ii] = 2
                        _save_state(state, 2, depth, q_at, pick, cur, budget, lo, hi)
                        return correct, outcome, wit_f, wit_v, n_evals, ii + 1
                    outcome[ii] = 1
                    break
            if depth + 1 < budget:
                depth += 1
                pick[depth] = pick[depth - 1]
                added[depth] = False
    state[0] = 0
    return correct, outcome, wit_f, wit_v, n_evals, n
