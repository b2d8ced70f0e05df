"""numba kernels of :mod:`fairlens.maft` (per-step bookkeeping of the lockstep search).

Every kernel is array-in / array-out with explicit dtypes, compiled on first call
(``cache=True``) and written so that it also runs as plain Python when
``NUMBA_DISABLE_JIT=1``.  The heavy part of the search (the model) is *not* in
here: the engine calls the model once per step on the rows these kernels build.

The row-set kernels (hash sets, row keys, the found set) live in
:mod:`fairlens.maft._rowkernels` and are re-exported here.

Conventions
-----------
* ``X`` is a C-contiguous ``float64`` array ``(W, d)`` holding one walker per row.
* ``scores`` is ``(W, C)``: column 0 is the walker itself, columns ``1..C-1`` its
  similar instances (every *other* combination of the protected attributes'
  values), in the order produced by :func:`similar_rows`.
* A label is ``score > 0.5`` (the paper's ``model(x) > 0.5``).
"""
from __future__ import annotations

import numba
import numpy as np

from ._rowkernels import (  # the row-set kernels, re-exported: every kernel of the slice is here
    finds_add,
    key_add1,
    key_insert,
    key_insert1,
    pack_rows,
    table_insert,
    unpack_pairs,
    unpack_rows,
)

__all__ = [
    "similar_rows",
    "check_discrimination",
    "global_update",
    "normalized_probability",
    "local_perturb",
    "table_insert",
    "key_insert",
    "key_insert1",
    "key_add1",
    "pack_rows",
    "stream_fill",
    "local_commit",
    "unpack_rows",
    "unpack_pairs",
    "zo_probe_rows",
    "zo_gradient",
    "finds_add",
    "aequitas_update",
    "aequitas_perturb",
]


@numba.njit(cache=True)
def similar_rows(X, prot_idx, combos, out):  # pragma: no cover - exercised via engine
    """Fill ``out[w, 0] = X[w]`` and ``out[w, 1:]`` with its similar instances.

    Parameters
    ----------
    X : float64 (W, d)
    prot_idx : int64 (P,)
        Column indices of the protected attributes.
    combos : float64 (C, P)
        Every combination of the protected attributes' values (Cartesian product).
    out : float64 (W, C, d)
        Output.  For each walker the combination equal to its own protected
        values is skipped, the remaining ``C - 1`` fill rows ``1..C-1`` in the
        order of ``combos``.

    Returns
    -------
    n_off_grid : int64
        Number of walkers whose protected values matched no combination (the
        caller validates inputs so that this is 0).
    """
    W = X.shape[0]
    d = X.shape[1]
    C = combos.shape[0]
    P = prot_idx.shape[0]
    n_off = 0
    for w in range(W):
        own = -1
        for c in range(C):
            match = True
            for p in range(P):
                if combos[c, p] != X[w, prot_idx[p]]:
                    match = False
                    break
            if match:
                own = c
                break
        if own < 0:
            n_off += 1
        for j in range(d):
            out[w, 0, j] = X[w, j]
        r = 1
        for c in range(C):
            if c == own:
                continue
            if r >= C:
                break
            for j in range(d):
                out[w, r, j] = X[w, j]
            for p in range(P):
                out[w, r, prot_idx[p]] = combos[c, p]
            r += 1
    return n_off


@numba.njit(cache=True)
def check_discrimination(scores, u_pair, is_disc, pair_idx, maxdiff_idx):  # pragma: no cover
    """Discrimination check, FindPair and max-difference partner for every walker.

    Parameters
    ----------
    scores : float64 (W, C)
        Model scores, column 0 = the walker, 1.. = its similar instances.
    u_pair : float64 (W,)
        Uniform numbers in [0, 1) used to pick a random discriminatory partner
        (EIDIG's ``find_pair``: uniform choice among the similar instances whose
        label differs).
    is_disc : bool (W,)
        Out: True if some similar instance has a different label (Definition 2.1).
    pair_idx : int64 (W,)
        Out: column of the randomly picked differing partner (``-1`` if none).
    maxdiff_idx : int64 (W,)
        Out: column maximising ``(f(x) - f(x'))**2`` (EIDIG's ``max_diff``);
        0 (the walker itself) if every difference is exactly 0.
    """
    W = scores.shape[0]
    C = scores.shape[1]
    for w in range(W):
        y0 = scores[w, 0] > 0.5
        n_diff = 0
        best = 0.0
        best_c = 0
        for c in range(1, C):
            yc = scores[w, c] > 0.5
            if yc != y0:
                n_diff += 1
            dist = (scores[w, 0] - scores[w, c]) ** 2
            if dist > best:
                best = dist
                best_c = c
        maxdiff_idx[w] = best_c
        is_disc[w] = n_diff > 0
        if n_diff == 0:
            pair_idx[w] = -1
        else:
            k = int(u_pair[w] * n_diff)
            if k >= n_diff:
                k = n_diff - 1
            seen = 0
            for c in range(1, C):
                if (scores[w, c] > 0.5) != y0:
                    if seen == k:
                        pair_idx[w] = c
                        break
                    seen += 1


@numba.njit(cache=True)
def global_update(walk, grads, rule, domain):  # pragma: no cover
    """Algorithm 3 lines 14-21 for every walker (in place).

    ``walk = (X, M1, M2)``: the walkers (W, d) and their momenta; ``grads = (g1, g2)``: the
    gradients at the walkers and at their partners; ``rule = (decay, sign, step)``; ``domain =
    (free, lo, hi)``: the non-protected attributes and the bounds.

    ``M1 = decay*M1 + g1``, ``M2 = decay*M2 + g2`` (momentum; ``decay=0`` gives
    ADF's plain gradient); for every non-protected attribute ``a`` whose momentum
    signs agree, ``x[a] += step * sign * sign(M1[a])`` (``sign=-1`` for
    MAFT/EIDIG, ``+1`` for ADF's loss gradient); then clip to ``[lo, hi]``.
    """
    X, M1, M2 = walk
    g1, g2 = grads
    decay, sign, step = rule
    free, lo, hi = domain
    W = X.shape[0]
    d = X.shape[1]
    for w in range(W):
        for j in range(d):
            M1[w, j] = decay * M1[w, j] + g1[w, j]
            M2[w, j] = decay * M2[w, j] + g2[w, j]
            if not free[j]:
                continue
            s1 = 0.0
            if M1[w, j] > 0.0:
                s1 = 1.0
            elif M1[w, j] < 0.0:
                s1 = -1.0
            s2 = 0.0
            if M2[w, j] > 0.0:
                s2 = 1.0
            elif M2[w, j] < 0.0:
                s2 = -1.0
            if s1 == s2:
                v = X[w, j] + step * sign * s1
                if v < lo[j]:
                    v = lo[j]
                elif v > hi[j]:
                    v = hi[j]
                X[w, j] = v
            else:
                # clip is applied to the whole instance in the paper (line 21)
                v = X[w, j]
                if v < lo[j]:
                    v = lo[j]
                elif v > hi[j]:
                    v = hi[j]
                X[w, j] = v


@numba.njit(cache=True)
def normalized_probability(g1, g2, free, eps, out):  # pragma: no cover
    """Attribute probabilities of Algorithm 4 line 11 (EIDIG's ``normalization``).

    ``out[w, a] = (1 / (|g1[w,a]| + |g2[w,a]| + eps)) / sum`` over non-protected
    attributes, 0 for protected ones: attributes with small gradients (little
    effect on the output) are perturbed more often.
    """
    W = g1.shape[0]
    d = g1.shape[1]
    for w in range(W):
        tot = 0.0
        for j in range(d):
            if free[j]:
                v = 1.0 / (abs(g1[w, j]) + abs(g2[w, j]) + eps)
                out[w, j] = v
                tot += v
            else:
                out[w, j] = 0.0
        for j in range(d):
            out[w, j] = out[w, j] / tot


@numba.njit(cache=True)
def local_perturb(X, prob, draws, step, domain, out):  # pragma: no cover
    """Algorithm 4 lines 15-20 for every walker (in place).

    ``X`` (W, d) the walkers, ``prob`` (W, d) their attribute probabilities, ``draws = (u_attr,
    u_dir)`` (W,) uniforms, ``domain = (lo, hi)``, ``out = (attr_out, dir_out)`` (W,): the
    attribute and the direction each walker took.

    The attribute is EIDIG's ``random_pick(prob)``: the first index whose
    cumulative probability exceeds ``u_attr`` (the last positive one if rounding
    leaves none); the direction is ``-1`` if ``u_dir < 0.5`` else ``+1``.
    """
    u_attr, u_dir = draws
    lo, hi = domain
    attr_out, dir_out = out
    W = X.shape[0]
    d = X.shape[1]
    for w in range(W):
        acc = 0.0
        a = -1
        last = -1
        for j in range(d):
            if prob[w, j] > 0.0:
                last = j
            acc += prob[w, j]
            if acc > u_attr[w]:
                a = j
                break
        if a < 0:
            a = last
        s = -1.0
        if u_dir[w] >= 0.5:
            s = 1.0
        v = X[w, a] + s * step
        if v < lo[a]:
            v = lo[a]
        elif v > hi[a]:
            v = hi[a]
        X[w, a] = v
        attr_out[w] = a
        dir_out[w] = s


@numba.njit(cache=True)
def aequitas_update(param_p, dir_p, attrs, dirs, disc, change_p, change_d, step):  # pragma: no cover
    """AEQUITAS' adaptive probabilities, updated walker after walker (in place).

    For each (attribute ``a``, direction ``s``, outcome) in order: the
    probability of stepping ``-1`` on ``a`` grows by ``change_d * step`` when
    ``-1`` succeeded or ``+1`` failed and shrinks otherwise (clipped to [0, 1]);
    the attribute's selection weight grows by ``change_p`` on success and
    shrinks by it on failure (floored at 0), then the weights are renormalised.
    """
    d = param_p.shape[0]
    for i in range(attrs.shape[0]):
        a = attrs[i]
        ok = disc[i]
        if (ok and dirs[i] < 0) or ((not ok) and dirs[i] > 0):
            v = dir_p[a] + change_d * step
            dir_p[a] = v if v < 1.0 else 1.0
        else:
            v = dir_p[a] - change_d * step
            dir_p[a] = v if v > 0.0 else 0.0
        if ok:
            param_p[a] = param_p[a] + change_p
        else:
            v = param_p[a] - change_p
            param_p[a] = v if v > 0.0 else 0.0
        tot = 0.0
        for j in range(d):
            tot += param_p[j]
        for j in range(d):
            param_p[j] = param_p[j] / tot


@numba.njit(cache=True)
def aequitas_perturb(X, probs, draws, step, domain, out):  # pragma: no cover
    """AEQUITAS' local move for every walker with the *shared* probabilities.

    ``X`` (W, d) the walkers, ``probs = (param_p, dir_p)`` (d,) the shared probabilities,
    ``draws = (u_attr, u_dir, u_edge)`` (W,) uniforms, ``domain = (lo, hi)``, ``out =
    (attr_out, dir_out)`` (W,): the attribute and the direction each walker took.

    Attribute ``a`` by inverse CDF of ``param_p`` (``u_attr``); direction ``-1``
    with probability ``dir_p[a]`` (``u_dir``), or a fair coin (``u_edge``) when
    ``x[a]`` sits on a bound; then step and clip.
    """
    param_p, dir_p = probs
    u_attr, u_dir, u_edge = draws
    lo, hi = domain
    attr_out, dir_out = out
    W = X.shape[0]
    d = X.shape[1]
    for w in range(W):
        acc = 0.0
        a = -1
        last = -1
        for j in range(d):
            if param_p[j] > 0.0:
                last = j
            acc += param_p[j]
            if acc > u_attr[w]:
                a = j
                break
        if a < 0:
            a = last
        s = 1.0
        if u_dir[w] < dir_p[a]:
            s = -1.0
        if X[w, a] == lo[a] or X[w, a] == hi[a]:
            s = -1.0
            if u_edge[w] >= 0.5:
                s = 1.0
        v = X[w, a] + s * step
        if v < lo[a]:
            v = lo[a]
        elif v > hi[a]:
            v = hi[a]
        X[w, a] = v
        attr_out[w] = a
        dir_out[w] = s


@numba.njit(cache=True)
def stream_fill(key, walkers, counter, out):  # pragma: no cover
    """The counter-based uniform numbers of :func:`fairlens.maft._utils.stream_uniform`, in one pass.

    ``out[i] = F(key, walkers[i], counter)``: the same SplitMix64 mix, in the same unsigned
    64-bit arithmetic, so the numbers are bit for bit those of ``stream_uniform`` (the
    NumPy twin, kept for the reference engine and the tests).

    Parameters
    ----------
    key : uint64
        The run's stream key.
    walkers : int64 (n,)
        Walker ids (non-negative).
    counter : uint64
        ``(iteration * 0x8CB92BA72F3D8DD7 + slot) mod 2**64`` (see ``stream_uniform``).
    out : float64 (n,)
        Output, uniform in [0, 1).
    """
    for i in range(walkers.shape[0]):
        z = key ^ (np.uint64(walkers[i]) * np.uint64(0xD1B54A32D192ED03))
        z = z + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
        z = z ^ counter
        z = z + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
        out[i] = np.float64(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@numba.njit(cache=True)
def local_commit(is_disc, new, cur, home):  # pragma: no cover
    """The end of a local step (Algorithm 4 lines 21-26) for every walker, in place.

    A walker that found a discriminatory instance keeps it (``S_cur[w] = S[w]``,
    ``sc_cur[w] = sc[w]``); the others go back to their global instance (``X[w] = X0[w]``,
    ``P[w] = P0[w]``, ``suc[w] = 0``, ``S_cur[w] = gS[w]``, ``sc_cur[w] = gsc[w]``).  Plain
    copies: the same values as the masked NumPy assignments it replaces.

    Parameters
    ----------
    is_disc : bool (W,)
    new : tuple ``(S, sc)``
        This step's similar sets ``float64 (W, C, d)`` and scores ``float64 (W, C)``.
    cur : tuple ``(X, P, suc, S_cur, sc_cur)``
        The walkers' state, updated in place: ``X, P`` float64 (W, d), ``suc`` int64 (W,),
        ``S_cur`` float64 (W, C, d), ``sc_cur`` float64 (W, C).
    home : tuple ``(X0, P0, gS, gsc)``
        The global instances' state (same shapes as the matching ``cur`` entries).
    """
    S, sc = new
    X, P, suc, S_cur, sc_cur = cur
    X0, P0, gS, gsc = home
    W = X.shape[0]
    d = X.shape[1]
    C = S.shape[1]
    for w in range(W):
        if is_disc[w]:
            for c in range(C):
                sc_cur[w, c] = sc[w, c]
                for j in range(d):
                    S_cur[w, c, j] = S[w, c, j]
        else:
            for j in range(d):
                X[w, j] = X0[w, j]
                P[w, j] = P0[w, j]
            suc[w] = 0
            for c in range(C):
                sc_cur[w, c] = gsc[w, c]
                for j in range(d):
                    S_cur[w, c, j] = gS[w, c, j]


@numba.njit(cache=True)
def zo_probe_rows(X, steps, out):  # pragma: no cover
    """The rows of Algorithm 2 for every row of ``X``, in one pass: ``out[:n] = X``, then row
    ``n + i d + j`` is ``X[i] + steps[i, j] e_j``.

    Each entry is ``X[i, k] + steps[i, j] * (1.0 if j == k else 0.0)``: the same floating-point
    operations as ``np.repeat(X, d, axis=0).reshape(n, d, d) + steps[:, :, None] * np.eye(d)``.

    Parameters
    ----------
    X : float64 (n, d)
    steps : float64 (n, d)
    out : float64 (n (d + 1), d)
        Output.
    """
    n = X.shape[0]
    d = X.shape[1]
    for i in range(n):
        for k in range(d):
            out[i, k] = X[i, k]
    for i in range(n):
        for j in range(d):
            r = n + i * d + j
            s = steps[i, j]
            for k in range(d):
                e = 0.0
                if j == k:
                    e = 1.0
                out[r, k] = X[i, k] + s * e


@numba.njit(cache=True)
def zo_gradient(Y, steps, G):  # pragma: no cover
    """Algorithm 2's estimate from the scores ``Y`` of :func:`zo_probe_rows`' rows.

    ``G[i, j] = (Y[n + i d + j] - Y[i]) / steps[i, j]`` (0 where the step is 0), negated where
    ``Y[i] > 0.5`` is false: the same operations as the NumPy expression it replaces.

    Parameters
    ----------
    Y : float64 (n (d + 1),)
    steps : float64 (n, d)
    G : float64 (n, d)
        Output.
    """
    n = steps.shape[0]
    d = steps.shape[1]
    for i in range(n):
        yi = Y[i]
        flip = not (yi > 0.5)
        for j in range(d):
            s = steps[i, j]
            g = 0.0
            if s != 0.0:
                g = (Y[n + i * d + j] - yi) / s
            if flip:
                g = -g
            G[i, j] = g
