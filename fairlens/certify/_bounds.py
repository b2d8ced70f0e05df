"""The lower bounds FLB and ELB, written once for every decision rule (numba kernels).

The fast lower bound FLB (paper, section 4.3) and the exhaustive lower bound ELB (4.4), with the
per-class check of section 4.6, on the one flat ensemble ``ens``
(:class:`~fairlens.certify._flat.FlatEnsemble`). The decision rule is the argument ``vote`` (a
:class:`~fairlens.certify._votes.VoteRule`): its steps give the row's quantities (hard vote: the
trees' votes and ``delta``; soft vote and additive scores: the largest swings and the real-number
margins), the per-set weights ``W(S_k)`` and the cover search; numba compiles each bound once per
rule (and caches it).
"""
import numba
import numpy as np

from ._walk import feature_max, instance_sets, top_sum

__all__ = ["flb_search", "elb_search"]


@numba.njit(cache=True)
def flb_search(ens, vote, X, y, rows, budget):
    """Fast lower bound FLB (paper, section 4.3; per target class, section 4.6) for the rows ``rows``.

    For every target class ``c != y`` the FLB sum is the sum of the ``budget`` largest
    ``max(W(S_f^+), W(S_f^-))`` (``vote.set_sizes``); the row is *possibly attackable* when for some
    ``c`` the sum reaches the margin (hard vote: ``delta_c``, the trees an attack must turn; soft vote
    and additive scores: the real-number margin ``s_y - s_c`` less the tolerance), otherwise FLB
    certifies it.

    Parameters
    ----------
    ens : FlatEnsemble
    vote : VoteRule
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
    K = ens.base.shape[0]
    sc = vote.flb_scratch(ens, d, budget)
    flb_sum, delta_out, best0, zero = vote.flb_out(n)
    correct = np.zeros(n, np.bool_)
    attackable = np.zeros(n, np.bool_)
    target = np.full(n, -1, np.int64)
    for ii in range(n):
        i = rows[ii]
        x = X[i]
        yi = y[i]
        ok, row, tol = vote.flb_row(ens, x, yi, budget, sc)
        if not ok:
            continue
        correct[ii] = True
        ptr, trees = instance_sets(ens, x, d)
        margin = row[1]
        best = best0
        for c in range(K):
            if c == yi:
                continue
            s = top_sum(feature_max(vote.set_sizes(ens, ptr, trees, row, yi, c), d), budget, zero)
            if s - margin[c] > best:
                best = s - margin[c]
                flb_sum[ii] = s
                delta_out[ii] = margin[c]
                target[ii] = c
            if s >= margin[c] - tol:
                attackable[ii] = True
    return correct, attackable, flb_sum, delta_out, target


@numba.njit(cache=True)
def elb_search(ens, vote, X, y, rows, budget):
    """Exhaustive lower bound ELB (paper, section 4.4; per target class, section 4.6) for the rows
    ``rows``.

    A row stays *possibly attackable* when, for some class ``c``, some cover of at most ``budget``
    sets (never ``S_f^+`` with ``S_f^-``) reaches the margin of ``c`` (hard vote: ``delta_c`` trees
    not voting ``c``; soft vote and additive scores: the summed swings reach the margin less the
    tolerance); otherwise ELB certifies it.

    Parameters
    ----------
    ens : FlatEnsemble
    vote : VoteRule
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
    K = ens.base.shape[0]
    sc = vote.flb_scratch(ens, d, budget)
    covered_out, delta_out = vote.elb_out(n)
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
        ok, row, tol = vote.elb_row(ens, x, yi, budget, sc)
        if not ok:
            continue
        correct[ii] = True
        ptr, trees = instance_sets(ens, x, d)
        margin = row[1]
        first = True
        for c in range(K):
            if c == yi:
                continue
            if first:
                delta_out[ii] = margin[c]
                first = False
            if vote.elb_skip(ens, ptr, trees, row, yi, c, budget, tol):
                continue
            sizes = vote.elb_sizes(ens, ptr, trees, row, yi, c)
            found, cov = vote.cover(ens, ptr, trees, row, c, sizes, budget, tol, pf, ps)
            if found:
                attackable[ii] = True
                cover_f[ii, :] = pf
                cover_s[ii, :] = ps
                target[ii] = c
                covered_out[ii] = cov
                delta_out[ii] = margin[c]
                break
    return correct, attackable, cover_f, cover_s, target, covered_out, delta_out
