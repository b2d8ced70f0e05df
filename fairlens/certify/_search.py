"""The certification searches written once over the three decision rules (issue 21, item 2).

A flat model's leaf payload (``Trees.value``) says which decision rule its leaves feed, and so
which inner steps a search needs:

* ``int64`` of shape ``(n_nodes,)`` -- the **hard vote** (one-hot leaf vectors: each tree votes
  one class; ties by ``Rule.rank``), integer counts, no tolerance;
* ``float64`` of shape ``(n_nodes, K)`` -- the **soft vote** (leaf probability vectors; the
  bounds compare with ``Rule.tol``);
* ``float64`` of shape ``(n_nodes,)`` -- **additive raw scores** (boosted models: a tree adds its
  leaf value to the score of class ``Rule.group[t]``; the bounds compare with ``Rule.tol_b``).

The skeleton of a search (:func:`flb_search`) is one numba function; its inner steps are
*family helpers* -- plain Python functions that dispatch on the payload at call time (so every
kernel stays valid Python under ``NUMBA_DISABLE_JIT=1``), each with a ``numba.extending.overload``
that picks the family's implementation **at compile time from the type** of ``tr.value``. The
skeleton therefore compiles once per decision rule, with no run-time branch on the model family
and no copy of the skeleton.

Written once here: the fast lower bound FLB (paper, section 4.3; per-class check of 4.6), the
exhaustive lower bound ELB (4.4) and the exhaustive search (4.1, :func:`brute_search`: items ->
sign patterns -> branch and bound over the relevant values, exactly resumable under a work budget;
its hot family steps are inlined at numba IR level). ``_kernels`` and ``_boosted_kernels`` hold the
families' own steps (tree walks, row quantities, bounds, replays).
"""
import inspect
import warnings

import numba
import numpy as np
from numba.core import types
from numba.core.errors import NumbaIRAssumptionWarning
from numba.extending import overload

from . import _boosted_kernels as _bk
from . import _kernels as _k
from ._flat import Search
from ._kernels import _feature_max, instance_sets

__all__ = ["flb_search", "elb_search", "brute_search", "family"]

# numba's IR-level inlining of an overload (the hot steps of brute_search) leaves the renamed
# variables of the inlined body out of the caller's scope and says so once per variable while it
# compiles (an internal pedantic check; the code is right). Only those messages are silenced.
warnings.filterwarnings(
    "ignore", category=NumbaIRAssumptionWarning,
    message=r"variable '_(gain|fixed|possible|bb_leaf|decide)_(hard|soft|additive|weighted)_v\d+_")


def family(tr):
    """The decision rule fed by the leaf payload ``tr.value``: ``"hard"``, ``"soft"`` or ``"additive"``.

    Parameters
    ----------
    tr : Trees
        The typed node group (or its numba type, at compile time).

    Returns
    -------
    str

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.certify._flat import Trees
    >>> z = np.zeros(1, np.int64)
    >>> family(Trees(z, np.zeros(1), z, z, np.zeros(1, np.int64), z, np.zeros(1, bool)))
    'hard'
    >>> family(Trees(z, np.zeros(1), z, z, np.zeros((1, 2)), z, np.zeros(1, bool)))
    'soft'
    """
    if isinstance(tr, types.BaseTuple):  # numba type of the namedtuple (compile time)
        v = tr.types[4]
        if v.ndim == 2:
            return "soft"
        return "hard" if isinstance(v.dtype, types.Integer) else "additive"
    v = tr.value
    if v.ndim == 2:
        return "soft"
    return "hard" if v.dtype.kind in "iu" else "additive"


def _dispatched(impls, inline="never"):
    """A family helper: ``impls`` maps a family to its (njit) implementation, all with one signature.
    Returns the plain-Python dispatcher (call time) after registering its numba overload
    (compile time, from the type of the first argument ``tr``); ``inline="always"`` inlines the
    picked implementation at numba IR level (the hot steps of the exhaustive search: a call per
    branch-and-bound node passing the namedtuples costs a third of the hard-vote search)."""
    def deco(py):
        def dispatch(*args):
            return impls[family(args[0])](*args)

        dispatch.__name__, dispatch.__doc__ = py.__name__, py.__doc__

        def pick(tr_type):
            impl = impls[family(tr_type)]
            return impl.py_func if hasattr(impl, "py_func") else impl

        # numba wants the typing function to have the implementation's signature
        params = ", ".join(inspect.signature(py).parameters)
        ns = {"pick": pick}
        exec(f"def typer({params}):\n    return pick({params.split(',')[0]})\n", ns)
        overload(dispatch, jit_options={"cache": True}, inline=inline)(ns["typer"])
        return dispatch

    return deco


# --- FLB: the family steps ------------------------------------------------------------------------

@numba.njit(cache=True)
def _flb_scratch_hard(tr, rule, n_features, budget):
    return (rule.rank,)


@numba.njit(cache=True)
def _flb_scratch_soft(tr, rule, n_features, budget):
    n_trees = tr.roots.shape[0]
    K = tr.value.shape[1]
    return (np.empty(n_trees, np.int64), np.empty(K, np.float64), np.empty((n_trees, K), np.float64),
            np.empty((n_trees, K), np.float64), np.empty(K, np.float64))


@numba.njit(cache=True)
def _flb_scratch_additive(tr, rule, n_features, budget):
    n_trees = tr.roots.shape[0]
    K = rule.base.shape[0]
    return (np.empty(n_trees, np.int64), np.empty((n_trees, K), np.float64), np.empty(K, np.float64),
            _bk._bw_buffers(tr, n_features, budget))


@_dispatched({"hard": _flb_scratch_hard, "soft": _flb_scratch_soft, "additive": _flb_scratch_additive})
def _flb_scratch(tr, rule, n_features, budget):
    """Per-call scratch arrays of the family's FLB steps."""


@numba.njit(cache=True)
def _flb_out_hard(tr, n):
    return np.zeros(n, np.int64), np.full(n, -1, np.int64), -(1 << 62), 0


@numba.njit(cache=True)
def _flb_out_float(tr, n):
    return np.full(n, np.nan, np.float64), np.full(n, np.nan, np.float64), -np.inf, 0.0


@_dispatched({"hard": _flb_out_hard, "soft": _flb_out_float, "additive": _flb_out_float})
def _flb_out(tr, n):
    """``(flb_sum, delta, best0, zero)``: the outputs in the family's number type (int64 counts for
    the hard vote, float64 otherwise), the start of the running maximum and the number zero."""


@numba.njit(cache=True)
def _flb_row_hard(tr, rule, x, yi, budget, sc):
    votes, counts, ok, delta = _k._prepare(tr, sc[0].shape[0], sc[0], x, yi)
    return ok, (votes, delta), 0


@numba.njit(cache=True)
def _flb_row_soft(tr, rule, x, yi, budget, sc):
    leaves, acc, dmat, w, margin = sc
    ok = _k._prepare_soft(tr, rule.tmax, x, yi, leaves, acc, dmat, w, margin)
    return ok, (w, margin), rule.tol


@numba.njit(cache=True)
def _flb_row_additive(tr, rule, x, yi, budget, sc):
    leaves, w, margin, bw = sc
    _bk._prepare_row(tr, rule, x, yi, leaves, w, margin)
    _bk._budget_weights(tr, rule.group, x, yi, leaves, budget, bw)
    return True, (bw[0], margin), rule.tol_b


@_dispatched({"hard": _flb_row_hard, "soft": _flb_row_soft, "additive": _flb_row_additive})
def _flb_row(tr, rule, x, yi, budget, sc):
    """``(correct, row, tol)``: the row's quantities -- hard: tree votes and ``delta`` per class
    (section 4.2/4.6); soft: the largest swings ``w[t, c]`` and margins; additive: the budget-aware
    per-set credits and margins -- and the tolerance of the comparison."""


@numba.njit(cache=True)
def _set_sizes_hard(tr, rule, ptr, trees, row, yi, c):
    return _k._sizes_in_universe(ptr, trees, row[0], c, ptr.shape[0] - 1)


@numba.njit(cache=True)
def _set_sizes_soft(tr, rule, ptr, trees, row, yi, c):
    return _k._weighted_sizes(ptr, trees, row[0], c, ptr.shape[0] - 1)


@numba.njit(cache=True)
def _set_sizes_additive(tr, rule, ptr, trees, row, yi, c):
    return _bk._set_weights(ptr, trees, row[0], rule.group, yi, c, ptr.shape[0] - 1)


@_dispatched({"hard": _set_sizes_hard, "soft": _set_sizes_soft, "additive": _set_sizes_additive})
def _set_sizes(tr, rule, ptr, trees, row, yi, c):
    """``W(S_k)`` towards class ``c`` of every set ``k`` (``2 f``: ``S_f^+``, ``2 f + 1``: ``S_f^-``):
    hard: the trees of ``S_k`` not voting ``c``; soft: their summed swings; additive: the summed
    credits of the trees adding to ``y`` or ``c``."""


@numba.njit(cache=True)
def _top_sum(m, budget, zero):
    """Sum of the ``budget`` largest entries of ``m``, largest first, from ``zero``."""
    s = np.sort(m)
    total = zero
    n = s.shape[0]
    for q in range(min(budget, n)):
        total += s[n - 1 - q]
    return total


# --- FLB: the one skeleton ------------------------------------------------------------------------

@numba.njit(cache=True)
def flb_search(tr, rule, X, y, rows, budget):
    """Fast lower bound FLB (paper, section 4.3; per target class, section 4.6) for the rows ``rows``,
    for every decision rule.

    For every target class ``c != y`` the FLB sum is the sum of the ``budget`` largest
    ``max(W(S_f^+), W(S_f^-))`` (:func:`_set_sizes`); the row is *possibly attackable* when for some
    ``c`` the sum reaches the margin (hard vote: ``delta_c``, the trees an attack must turn; soft vote
    and additive scores: the real-number margin ``s_y - s_c`` less the tolerance), otherwise FLB
    certifies it.

    Parameters
    ----------
    tr : Trees
    rule : Rule
    X : ndarray of float64, shape (n, d)
        The rows (library-rounded; C-contiguous).
    y : ndarray of int64, shape (n,)
        Class indices.
    rows : ndarray of int64
        Which rows.
    budget : int

    Returns
    -------
    correct, attackable : ndarray of bool
        Whether the row's vote is ``y`` (additive: always True, the library decides) and FLB's verdict.
    flb_sum, delta : ndarray
        The sum and the margin of the class closest to reachable (largest ``sum - margin``); int64
        for the hard vote, float64 otherwise.
    target : ndarray of int64
        That class.
    """
    n = rows.shape[0]
    d = X.shape[1]
    K = rule.base.shape[0]
    sc = _flb_scratch(tr, rule, d, budget)
    flb_sum, delta_out, best0, zero = _flb_out(tr, n)
    correct = np.zeros(n, np.bool_)
    attackable = np.zeros(n, np.bool_)
    target = np.full(n, -1, np.int64)
    for ii in range(n):
        i = rows[ii]
        x = X[i]
        yi = y[i]
        ok, row, tol = _flb_row(tr, rule, x, yi, budget, sc)
        if not ok:
            continue
        correct[ii] = True
        ptr, trees = instance_sets(tr, x, d)
        margin = row[1]
        best = best0
        for c in range(K):
            if c == yi:
                continue
            s = _top_sum(_feature_max(_set_sizes(tr, rule, ptr, trees, row, yi, c), d), budget, zero)
            if s - margin[c] > best:
                best = s - margin[c]
                flb_sum[ii] = s
                delta_out[ii] = margin[c]
                target[ii] = c
            if s >= margin[c] - tol:
                attackable[ii] = True
    return correct, attackable, flb_sum, delta_out, target


# --- ELB: the family steps ------------------------------------------------------------------------

@numba.njit(cache=True)
def _elb_row_hard(tr, rule, x, yi, budget, sc):
    votes, counts, ok, delta = _k._prepare(tr, sc[0].shape[0], sc[0], x, yi)
    return ok, (votes, delta, delta), 0


@numba.njit(cache=True)
def _elb_row_soft(tr, rule, x, yi, budget, sc):
    leaves, acc, dmat, w, margin = sc
    ok = _k._prepare_soft(tr, rule.tmax, x, yi, leaves, acc, dmat, w, margin)
    return ok, (w, margin, w), rule.tol


@numba.njit(cache=True)
def _elb_row_additive(tr, rule, x, yi, budget, sc):
    leaves, w, margin, bw = sc
    _bk._prepare_row(tr, rule, x, yi, leaves, w, margin)
    _bk._budget_weights(tr, rule.group, x, yi, leaves, budget, bw)
    _bk._apply_budget_weights(rule.group, yi, bw[1], w)
    return True, (w, margin, bw[0]), rule.tol_b


@_dispatched({"hard": _elb_row_hard, "soft": _elb_row_soft, "additive": _elb_row_additive})
def _elb_row(tr, rule, x, yi, budget, sc):
    """``(correct, row, tol)`` of ELB: ``row = (weights, margins, credits)`` -- hard: tree votes,
    ``delta`` per class; soft: the largest swings ``w[t, c]``, margins; additive: the budget-aware
    swings, margins and the per-set credits of FLB -- and the tolerance of the comparison."""


@numba.njit(cache=True)
def _elb_skip_none(tr, rule, ptr, trees, row, yi, c, budget, tol):
    return False


@numba.njit(cache=True)
def _elb_skip_additive(tr, rule, ptr, trees, row, yi, c, budget, tol):
    # what FLB rules out stays ruled out (its per-set credits can be sharper than the union's)
    n_sets = ptr.shape[0] - 1
    s_flb = _top_sum(_feature_max(_bk._set_weights(ptr, trees, row[2], rule.group, yi, c, n_sets), n_sets // 2),
                     budget, 0.0)
    return s_flb < row[1][c] - tol


@_dispatched({"hard": _elb_skip_none, "soft": _elb_skip_none, "additive": _elb_skip_additive})
def _elb_skip(tr, rule, ptr, trees, row, yi, c, budget, tol):
    """Whether class ``c`` is ruled out before the cover search (additive scores: by FLB's sharper
    per-set credits, so that ELB certifies everything FLB certifies)."""


@numba.njit(cache=True)
def _cover_hard(tr, rule, ptr, trees, row, c, sizes, budget, tol, pf, ps):
    n_features = (ptr.shape[0] - 1) // 2
    return _k._cover_search(ptr, trees, row[0], c, sizes, n_features, budget, row[1][c], tr.roots.shape[0], pf, ps)


@numba.njit(cache=True)
def _cover_weighted(tr, rule, ptr, trees, row, c, sizes, budget, tol, pf, ps):
    n_features = (ptr.shape[0] - 1) // 2
    return _k._cover_search_soft(ptr, trees, row[0], c, sizes, n_features, budget, row[1][c] - tol,
                                 tr.roots.shape[0], pf, ps)


@_dispatched({"hard": _cover_hard, "soft": _cover_weighted, "additive": _cover_weighted})
def _cover(tr, rule, ptr, trees, row, c, sizes, budget, tol, pf, ps):
    """``(found, covered)``: the first cover of at most ``budget`` sets (never ``S_f^+`` with
    ``S_f^-``; features and signs into ``pf``/``ps``) whose union reaches the margin of ``c``
    (hard: ``delta_c`` trees not voting ``c``; weighted: ``margin_c - tol`` of summed swings)."""


@numba.njit(cache=True)
def _elb_sizes_hard(tr, rule, ptr, trees, row, yi, c):
    return _k._sizes_in_universe(ptr, trees, row[0], c, ptr.shape[0] - 1)


@numba.njit(cache=True)
def _elb_sizes_weighted(tr, rule, ptr, trees, row, yi, c):
    return _k._weighted_sizes(ptr, trees, row[0], c, ptr.shape[0] - 1)


@_dispatched({"hard": _elb_sizes_hard, "soft": _elb_sizes_weighted, "additive": _elb_sizes_weighted})
def _elb_sizes(tr, rule, ptr, trees, row, yi, c):
    """The sizes the cover search orders its sets by (hard: trees not voting ``c``; weighted: the
    summed swings ``w[t, c]``)."""


@numba.njit(cache=True)
def _elb_out_hard(tr, n):
    return np.zeros(n, np.int64), np.full(n, -1, np.int64)


@numba.njit(cache=True)
def _elb_out_float(tr, n):
    return np.zeros(n, np.float64), np.full(n, np.nan, np.float64)


@_dispatched({"hard": _elb_out_hard, "soft": _elb_out_float, "additive": _elb_out_float})
def _elb_out(tr, n):
    """``(covered, delta)`` outputs in the family's number type."""


# --- ELB: the one skeleton ------------------------------------------------------------------------

@numba.njit(cache=True)
def elb_search(tr, rule, X, y, rows, budget):
    """Exhaustive lower bound ELB (paper, section 4.4; per target class, section 4.6) for the rows
    ``rows``, for every decision rule.

    A row stays *possibly attackable* when, for some class ``c``, some cover of at most ``budget``
    sets (never ``S_f^+`` with ``S_f^-``) reaches the margin of ``c`` (hard vote: ``delta_c`` trees
    not voting ``c``; soft vote and additive scores: the summed swings reach the margin less the
    tolerance); otherwise ELB certifies it.

    Parameters
    ----------
    tr : Trees
    rule : Rule
    X : ndarray of float64, shape (n, d)
    y : ndarray of int64, shape (n,)
    rows : ndarray of int64
    budget : int

    Returns
    -------
    correct, attackable : ndarray of bool
    cover_f, cover_s : ndarray of int64, shape (len(rows), budget)
        The first cover found (features; signs 0 = ``S_f^+``, 1 = ``S_f^-``), -1 padded.
    target : ndarray of int64
        The class it serves.
    covered, delta : ndarray
        What it covers and the margin of that class (else of the first class tried); int64 for
        the hard vote, float64 otherwise.
    """
    n = rows.shape[0]
    d = X.shape[1]
    K = rule.base.shape[0]
    sc = _flb_scratch(tr, rule, d, budget)
    covered_out, delta_out = _elb_out(tr, n)
    correct = np.zeros(n, np.bool_)
    attackable = np.zeros(n, np.bool_)
    cover_f = np.full((n, budget), -1, np.int64)
    cover_s = np.full((n, budget), -1, np.int64)
    target = np.full(n, -1, np.int64)
    pf = np.empty(budget, np.int64)
    ps = np.empty(budget, np.int64)
    for ii in range(n):
        i = rows[ii]
        x = X[i]
        yi = y[i]
        ok, row, tol = _elb_row(tr, rule, x, yi, budget, sc)
        if not ok:
            continue
        correct[ii] = True
        ptr, trees = instance_sets(tr, x, d)
        margin = row[1]
        first = True
        for c in range(K):
            if c == yi:
                continue
            if first:
                delta_out[ii] = margin[c]
                first = False
            if _elb_skip(tr, rule, ptr, trees, row, yi, c, budget, tol):
                continue
            sizes = _elb_sizes(tr, rule, ptr, trees, row, yi, c)
            found, cov = _cover(tr, rule, ptr, trees, row, c, sizes, budget, tol, pf, ps)
            if found:
                attackable[ii] = True
                cover_f[ii, :] = pf
                cover_s[ii, :] = ps
                target[ii] = c
                covered_out[ii] = cov
                delta_out[ii] = margin[c]
                break
    return correct, attackable, cover_f, cover_s, target, covered_out, delta_out


# --- the exhaustive search: the family steps ------------------------------------------------------

@numba.njit(cache=True)
def _brute_scratch_hard(tr, rule, n_features, budget):
    K = rule.rank.shape[0]
    no_f = np.empty(0, np.float64)
    no_i = np.empty(0, np.int64)
    return (rule.rank,), (np.empty(K, np.int64), np.empty(K, np.int64), no_f, no_i, no_i, no_f)


@numba.njit(cache=True)
def _brute_scratch_soft(tr, rule, n_features, budget):
    n_trees = tr.roots.shape[0]
    K = tr.value.shape[1]
    leaves = np.empty(n_trees, np.int64)
    acc = np.empty(K, np.float64)
    row_sc = (leaves, acc, np.empty((n_trees, K), np.float64), np.empty((n_trees, K), np.float64),
              np.empty(K, np.float64))
    return row_sc, (np.empty(K, np.float64), np.empty(K, np.float64), np.empty(K, np.float64), leaves,
                    np.empty(n_trees, np.int64), acc)


@numba.njit(cache=True)
def _brute_scratch_additive(tr, rule, n_features, budget):
    n_trees = tr.roots.shape[0]
    K = rule.base.shape[0]
    leaves = np.empty(n_trees, np.int64)
    row_sc = (leaves, np.empty((n_trees, K), np.float64), np.empty(K, np.float64),
              _bk._bw_buffers(tr, n_features, budget), np.empty((n_trees, K), np.float64))
    return row_sc, (np.empty(K, np.float64), np.empty(K, np.float64), np.empty(0, np.float64), leaves,
                    np.empty(n_trees, np.int64), np.empty(K, np.float64))


@_dispatched({"hard": _brute_scratch_hard, "soft": _brute_scratch_soft, "additive": _brute_scratch_additive})
def _brute_scratch(tr, rule, n_features, budget):
    """``(row_scratch, (fixed, bound, best, leaves, tmp_leaves, acc))``: the per-call scratch of the
    row step and the bound / replay arrays of the :class:`~fairlens.certify._flat.Search` tuple."""


@numba.njit(cache=True)
def _brute_row_hard(tr, rule, x, yi, budget, sc):
    votes, counts, ok, delta = _k._prepare(tr, sc[0].shape[0], sc[0], x, yi)
    return ok, (votes, delta, counts), 0


@numba.njit(cache=True)
def _brute_row_soft(tr, rule, x, yi, budget, sc):
    leaves, acc, dmat, w, margin = sc
    ok = _k._prepare_soft(tr, rule.tmax, x, yi, leaves, acc, dmat, w, margin)
    return ok, (w, margin, dmat), rule.tol


@numba.njit(cache=True)
def _brute_row_additive(tr, rule, x, yi, budget, sc):
    leaves, w, margin, bw, contrib = sc
    value, group = tr.value, rule.group
    _bk._prepare_row(tr, rule, x, yi, leaves, w, margin)
    _bk._budget_weights(tr, group, x, yi, leaves, budget, bw)
    _bk._apply_budget_weights(group, yi, bw[1], w)
    K = margin.shape[0]
    for t in range(leaves.shape[0]):  # contrib[t, c]: what tree t adds to s_c - s_y at its current leaf
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
    return True, (w, margin, contrib), rule.tol_b


@_dispatched({"hard": _brute_row_hard, "soft": _brute_row_soft, "additive": _brute_row_additive})
def _brute_row(tr, rule, x, yi, budget, sc):
    """``(correct, row, tol)`` of the exhaustive search: ``row = (weights, margins, rest)`` -- hard:
    tree votes, ``delta`` per class, class counts; soft: the largest swings ``w[t, c]``, margins,
    ``p_t[c] - p_t[y]`` at the current leaves; additive: the budget-aware swings, margins, what each
    tree adds to ``s_c - s_y`` -- and the tolerance of the comparisons."""


@numba.njit(cache=True, inline="always")
def _gain_hard(tr, row, t, c):
    return 1 if row[0][t] != c else 0


@numba.njit(cache=True, inline="always")
def _gain_weighted(tr, row, t, c):
    return row[0][t, c]


@_dispatched({"hard": _gain_hard, "soft": _gain_weighted, "additive": _gain_weighted}, inline="always")
def _gain(tr, row, t, c):
    """What tree ``t`` adds to the union's coverage towards class ``c`` (hard: 1 if it does not
    vote ``c``; weighted: its swing ``w[t, c]``)."""


@numba.njit(cache=True)
def _zeros_int(tr, n):
    return np.zeros(n, np.int64)


@numba.njit(cache=True)
def _zeros_float(tr, n):
    return np.zeros(n, np.float64)


@_dispatched({"hard": _zeros_int, "soft": _zeros_float, "additive": _zeros_float})
def _zeros(tr, n):
    """Zeros in the family's number type (int64 counts for the hard vote, float64 otherwise)."""


@numba.njit(cache=True, inline="always")
def _fixed_hard(tr, rule, row, yi, cnt, S, n_aff):
    fixed, aff, votes = S.fixed, S.aff, row[0]
    fixed[:] = row[2]
    for a in range(n_aff):
        fixed[votes[aff[a]]] -= 1


@numba.njit(cache=True, inline="always")
def _fixed_soft(tr, rule, row, yi, cnt, S, n_aff):
    fixed, dmat = S.fixed, row[2]
    K = fixed.shape[0]
    fixed[:] = 0.0
    for t in range(cnt.shape[0]):
        if cnt[t] == 0:
            for c in range(K):
                fixed[c] += dmat[t, c]


@numba.njit(cache=True, inline="always")
def _fixed_additive(tr, rule, row, yi, cnt, S, n_aff):
    fixed, contrib, base = S.fixed, row[2], rule.base
    K = fixed.shape[0]
    for c in range(K):
        fixed[c] = base[c] - base[yi]
    for t in range(cnt.shape[0]):
        if cnt[t] == 0:
            for c in range(K):
                fixed[c] += contrib[t, c]


@_dispatched({"hard": _fixed_hard, "soft": _fixed_soft, "additive": _fixed_additive}, inline="always")
def _fixed(tr, rule, row, yi, cnt, S, n_aff):
    """``S.fixed``: what the trees the pattern cannot change contribute (hard: their votes per
    class; soft: their ``p[c] - p[y]``; additive: the base scores plus their ``s_c - s_y``)."""


@numba.njit(cache=True, inline="always")
def _possible_hard(tr, rule, S, n_aff, values, yi, tol):
    return _k._attack_possible(tr, S, n_aff, values, yi, rule.rank)


@numba.njit(cache=True, inline="always")
def _possible_soft(tr, rule, S, n_aff, values, yi, tol):
    return _k._attack_possible_soft(tr, S, n_aff, values, yi, tol)


@numba.njit(cache=True, inline="always")
def _possible_additive(tr, rule, S, n_aff, values, yi, tol):
    return _bk._attack_possible(tr, rule, S, n_aff, values, yi)


@_dispatched({"hard": _possible_hard, "soft": _possible_soft, "additive": _possible_additive}, inline="always")
def _possible(tr, rule, S, n_aff, values, yi, tol):
    """The sound test of the branch and bound: can some completion of the partial assignment
    (feature ``f`` confined to ``values[rlo[q]..rhi[q]]``, ``q = ppos[f]``) beat ``y``?"""


@numba.njit(cache=True, inline="always")
def _bb_leaf_hard(tr, rule, S, vals, k, n_aff, yi):
    return 1  # on single values the bound is the exact vote


@numba.njit(cache=True, inline="always")
def _bb_leaf_soft(tr, rule, S, vals, k, n_aff, yi):
    pick, item_f, x, xp, values = S.pick, S.item_f, S.x, S.xp, vals.values
    for qq in range(k):
        xp[item_f[pick[qq]]] = values[S.cur[qq]]
    flips = _k._soft_flips(tr, S.leaves, S.aff, n_aff, xp, yi, S.tmp_leaves, S.acc)
    for qq in range(k):
        f = item_f[pick[qq]]
        xp[f] = x[f]
    return 1 if flips else 0


@numba.njit(cache=True, inline="always")
def _bb_leaf_additive(tr, rule, S, vals, k, n_aff, yi):
    pick, item_f, x, xp, values = S.pick, S.item_f, S.x, S.xp, vals.values
    for qq in range(k):
        xp[item_f[pick[qq]]] = values[S.cur[qq]]
    dec = _bk._replay(tr, rule, S.leaves, S.aff, n_aff, xp, yi, S.tmp_leaves, S.acc)
    for qq in range(k):
        f = item_f[pick[qq]]
        xp[f] = x[f]
    return dec


@_dispatched({"hard": _bb_leaf_hard, "soft": _bb_leaf_soft, "additive": _bb_leaf_additive}, inline="always")
def _bb_leaf(tr, rule, S, vals, k, n_aff, yi):
    """The decision on a full assignment ``cur`` the bound did not exclude: 0 the prediction stays
    ``y``, 1 it flips (hard: the bound is exact there; soft: the exact replay of ``forest.predict``;
    additive: the replay in the library's arithmetic), 2 ambiguous (additive: within ``tol``, the
    library decides)."""


@numba.njit(cache=True, inline="always")
def _decide_hard(tr, rule, S, row, n_aff, yi):
    votes, counts, newcounts, aff, xp = row[0], row[2], S.bound, S.aff, S.xp
    leaf_class, roots = tr.value, tr.roots
    newcounts[:] = counts
    for a in range(n_aff):
        t = aff[a]
        c2 = leaf_class[_k._leaf(tr, roots[t], xp)]
        if c2 != votes[t]:
            newcounts[votes[t]] -= 1
            newcounts[c2] += 1
    return 1 if _k._winner(newcounts, rule.rank) != yi else 0


@numba.njit(cache=True, inline="always")
def _decide_soft(tr, rule, S, row, n_aff, yi):
    return 1 if _k._soft_flips(tr, S.leaves, S.aff, n_aff, S.xp, yi, S.tmp_leaves, S.acc) else 0


@numba.njit(cache=True, inline="always")
def _decide_additive(tr, rule, S, row, n_aff, yi):
    return _bk._replay(tr, rule, S.leaves, S.aff, n_aff, S.xp, yi, S.tmp_leaves, S.acc)


@_dispatched({"hard": _decide_hard, "soft": _decide_soft, "additive": _decide_additive}, inline="always")
def _decide(tr, rule, S, row, n_aff, yi):
    """The decision on the attacked copy ``S.xp`` (only the trees ``S.aff`` re-walked), as
    :func:`_bb_leaf`."""


# --- the exhaustive search: value search of one sign pattern and the one skeleton -----------------

@numba.njit(cache=True, inline="always")
def _bb_values(tr, rule, S, vals, k, n_aff, yi, tol, q_resume, max_nodes):
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
    values_ptr, values = vals.ptr, vals.values
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
        go = _possible(tr, rule, S, n_aff, values, yi, tol)
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
            if not _possible(tr, rule, S, n_aff, values, yi, tol):
                continue
            if q == k - 1:
                dec = _bb_leaf(tr, rule, S, vals, k, n_aff, yi)
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
def _enumerate_values(tr, rule, S, vals, k, n_aff, yi, row, resume, max_eval):
    """Literal enumeration of every relevant value combination of the sign pattern ``pick[:k]``
    (``prune=False``): feature ``item_f[pick[q]]`` takes in turn every relevant value strictly above
    (sign 0) or below (sign 1) the interval holding ``x``; each combination is decided by
    :func:`_decide`. Bounded and resumable (``resume=True`` continues from ``cur``). Returns
    ``(status, n_evaluated)``: 1 = a flip at ``cur``, 0 = none, 2 = paused (``cur`` is next)."""
    pick, item_f, item_s, region, x, xp = S.pick, S.item_f, S.item_s, S.region, S.x, S.xp
    cur, lo, hi = S.cur, S.lo, S.hi
    values_ptr, values = vals.ptr, vals.values
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
        if _decide(tr, rule, S, row, n_aff, yi) != 0:
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
def brute_search(tr, rule, vals, X, y, rows, budget, prune, state, max_work):
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
    (:func:`_bb_values`). The family steps (the row's weights and margins, the bound, the decision)
    are picked at compile time from the leaf payload (see :func:`family`). Additive scores
    (boosted models) always prune; a candidate whose replayed margin is within ``tol`` is
    *ambiguous*: the search returns it and the caller asks the library.

    Parameters
    ----------
    tr : Trees
    rule : Rule
    vals : Values
        The relevant values.
    X : ndarray of float64, shape (n, d)
        The rows (library-rounded; C-contiguous).
    y : ndarray of int64, shape (n,)
    rows : ndarray of int64
    budget : int
    prune : bool
    state : ndarray of int64, shape (3 + 2 * budget,)
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
    witnesses or the evaluation counts.
    """
    values_ptr, values = vals.ptr, vals.values
    n = rows.shape[0]
    d = X.shape[1]
    n_trees = tr.roots.shape[0]
    K = rule.base.shape[0]
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
    stack = np.empty(tr.feature.shape[0] + 1, np.int64)
    sc, (fixed, bound, best, leaves, tmp_leaves, acc) = _brute_scratch(tr, rule, d, budget)
    work = 0
    for ii in range(n):
        i = rows[ii]
        x = X[i]
        yi = y[i]
        resume = ii == 0 and state[0] != 0
        ok, row, tol = _brute_row(tr, rule, x, yi, budget, sc)
        if not ok:
            continue
        correct[ii] = True
        margin = row[1]
        ptr, trees = instance_sets(tr, x, d)
        _k._value_regions(values, values_ptr, x, d, region)
        # sort key: the largest set weight over the target classes
        m = _zeros(tr, d)
        for c in range(K):
            if c == yi:
                continue
            mc = _feature_max(_elb_sizes(tr, rule, ptr, trees, row, yi, c), d)
            for f in range(d):
                if mc[f] > m[f]:
                    m[f] = mc[f]
        order, item_f, item_s, item_j, ni, nc = _k._brute_items(m, values_ptr, region, d)
        if ni == 0:
            continue
        prefix = _zeros(tr, nc + 1)
        for j in range(nc):
            prefix[j + 1] = prefix[j] + m[order[j]]
        cnt = np.zeros(n_trees, np.int64)
        covered = _zeros(tr, K)
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
                            covered[c] += _gain(tr, row, t, c)
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
                    _k._save_state(state, 1, depth, 1 if added[depth] else 0, pick, cur, budget)
                    return correct, outcome, wit_f, wit_v, n_evals, ii
                if added[depth]:
                    k = 2 * item_f[pick[depth]] + item_s[pick[depth]]
                    for q in range(ptr[k], ptr[k + 1]):
                        t = trees[q]
                        cnt[t] -= 1
                        if cnt[t] == 0:
                            for c in range(K):
                                covered[c] -= _gain(tr, row, t, c)
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
                            covered[c] += _gain(tr, row, t, c)
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
                    _fixed(tr, rule, row, yi, cnt, S, n_aff)
                    st, nodes, q_at = _bb_values(tr, rule, S, vals, depth + 1, n_aff, yi, tol,
                                                 q_res if phase == 2 else -1, max_work - work)
                else:
                    st, nodes = _enumerate_values(tr, rule, S, vals, depth + 1, n_aff, yi, row, phase == 2,
                                                  max_work - work)
                    q_at = 0
                phase = 0
                n_evals[ii] += nodes
                work += nodes
                if st == 2:
                    _k._save_state(state, 2, depth, q_at, pick, cur, budget)
                    return correct, outcome, wit_f, wit_v, n_evals, ii
                if st == 1 or st == 3:
                    for q in range(depth + 1):
                        wit_f[ii, q] = item_f[pick[q]]
                        wit_v[ii, q] = values[cur[q]]
                    if st == 3:  # ambiguous: the caller asks the library; resumable right after it
                        outcome[ii] = 2
                        _k._save_state(state, 2, depth, q_at, pick, cur, budget)
                        return correct, outcome, wit_f, wit_v, n_evals, ii + 1
                    outcome[ii] = 1
                    break
            if depth + 1 < budget:
                depth += 1
                pick[depth] = pick[depth - 1]
                added[depth] = False
    state[0] = 0
    return correct, outcome, wit_f, wit_v, n_evals, n
