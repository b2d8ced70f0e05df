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

Written once here: the fast lower bound FLB (paper, section 4.3; per-class check of 4.6) and the
exhaustive lower bound ELB (4.4). The exhaustive search (4.1) still has one kernel per family
(``_kernels``, ``_boosted_kernels``), behind the one predictor protocol.
"""
import inspect

import numba
import numpy as np
from numba.core import types
from numba.extending import overload

from . import _boosted_kernels as _bk
from . import _kernels as _k
from ._kernels import instance_sets

__all__ = ["flb_search", "elb_search", "family"]


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


def _dispatched(impls):
    """A family helper: ``impls`` maps a family to its (njit) implementation, all with one signature.
    Returns the plain-Python dispatcher (call time) after registering its numba overload
    (compile time, from the type of the first argument ``tr``)."""
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
        overload(dispatch, jit_options={"cache": True})(ns["typer"])
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
def _feature_max(sizes, n_features):
    """``max(W(S_f^+), W(S_f^-))`` of every feature (the sizes' number type)."""
    m = np.empty(n_features, sizes.dtype)
    for f in range(n_features):
        a = sizes[2 * f]
        b = sizes[2 * f + 1]
        m[f] = a if a >= b else b
    return m


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
