"""numba kernels of :mod:`fairlens.maft` (per-step bookkeeping of the lockstep search).

Every kernel is array-in / array-out with explicit dtypes, compiled on first call
(``cache=True``) and written so that it also runs as plain Python when
``NUMBA_DISABLE_JIT=1``.  The heavy part of the search (the model) is *not* in
here: the engine calls the model once per step on the rows these kernels build.

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
def global_update(X, M1, M2, g1, g2, decay, sign, free, step, lo, hi):  # pragma: no cover
    """Algorithm 3 lines 14-21 for every walker (in place).

    ``M1 = decay*M1 + g1``, ``M2 = decay*M2 + g2`` (momentum; ``decay=0`` gives
    ADF's plain gradient); for every non-protected attribute ``a`` whose momentum
    signs agree, ``x[a] += step * sign * sign(M1[a])`` (``sign=-1`` for
    MAFT/EIDIG, ``+1`` for ADF's loss gradient); then clip to ``[lo, hi]``.
    """
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
def local_perturb(X, prob, u_attr, u_dir, step, lo, hi, attr_out, dir_out):  # pragma: no cover
    """Algorithm 4 lines 15-20 for every walker (in place).

    The attribute is EIDIG's ``random_pick(prob)``: the first index whose
    cumulative probability exceeds ``u_attr`` (the last positive one if rounding
    leaves none); the direction is ``-1`` if ``u_dir < 0.5`` else ``+1``.
    """
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
def table_insert(table, store, n_store, rows, hashes, is_new):  # pragma: no cover
    """Exact de-duplication with an open-addressing hash table.

    Parameters
    ----------
    table : int64 (S,)
        Slots holding an index into ``store`` or -1; ``S`` is a power of two
        and the caller keeps the load factor below 1/2.
    store : float64 (cap, d)
        Rows seen so far (``store[:n_store]``); ``cap >= n_store + len(rows)``.
    n_store : int
        Number of stored rows.
    rows : float64 (m, d)
        Candidate rows (``-0.0`` normalised to ``0.0`` by the caller).
    hashes : int64 (m,)
        Hashes of ``rows`` (any function of the row values).
    is_new : bool (m,)
        Out: True for rows not seen before (a duplicate inside ``rows`` is new
        only at its first occurrence).

    Returns
    -------
    n_store : int64
        Updated count.
    """
    mask = table.shape[0] - 1
    d = rows.shape[1]
    for i in range(rows.shape[0]):
        slot = hashes[i] & mask
        found = False
        while True:
            k = table[slot]
            if k < 0:
                break
            same = True
            for j in range(d):
                if store[k, j] != rows[i, j]:
                    same = False
                    break
            if same:
                found = True
                break
            slot = (slot + 1) & mask
        if found:
            is_new[i] = False
        else:
            for j in range(d):
                store[n_store, j] = rows[i, j]
            table[slot] = n_store
            n_store += 1
            is_new[i] = True
    return n_store


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
def aequitas_perturb(X, param_p, dir_p, u_attr, u_dir, u_edge, step, lo, hi, attr_out, dir_out):  # pragma: no cover
    """AEQUITAS' local move for every walker with the *shared* probabilities.

    Attribute ``a`` by inverse CDF of ``param_p`` (``u_attr``); direction ``-1``
    with probability ``dir_p[a]`` (``u_dir``), or a fair coin (``u_edge``) when
    ``x[a]`` sits on a bound; then step and clip.
    """
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
def key_insert(table, store, n_store, keys, index, is_new):  # pragma: no cover
    """Insert-or-find for integer keys (open addressing, linear probing).

    Parameters
    ----------
    table : int64 (S,)
        Slots holding an index into ``store`` or -1; ``S`` is a power of two and the caller
        keeps the load factor below 1/2.
    store : int64 (cap, k)
        Keys seen so far (``store[:n_store]``); ``cap >= n_store + len(keys)``.
    n_store : int
    keys : int64 (m, k)
        Candidate keys (a row packed into one int64, or the bits of a float64 row).
    index : int64 (m,)
        Output: the position of each key in ``store`` (new or old).
    is_new : bool (m,)
        Output: True where the key was inserted by this call (its first occurrence).

    Returns
    -------
    int
        The new number of stored keys.
    """
    mask = table.shape[0] - 1
    k = keys.shape[1]
    for i in range(keys.shape[0]):
        h = np.uint64(0x9E3779B97F4A7C15)
        for c in range(k):
            z = np.uint64(keys[i, c]) + h
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            h = z ^ (z >> np.uint64(31))
        slot = np.int64(h & np.uint64(mask))
        while True:
            j = table[slot]
            if j < 0:
                for c in range(k):
                    store[n_store, c] = keys[i, c]
                table[slot] = n_store
                index[i] = n_store
                is_new[i] = True
                n_store += 1
                break
            same = True
            for c in range(k):
                if store[j, c] != keys[i, c]:
                    same = False
                    break
            if same:
                index[i] = j
                is_new[i] = False
                break
            slot = (slot + 1) & mask
    return n_store


@numba.njit(cache=True)
def key_insert1(table, store, n_store, keys, index, is_new):  # pragma: no cover
    """Insert-or-find for single int64 keys, each key held in its own slot (one cache miss).

    The slot table interleaves ``(key, position)``: a look-up reads the key beside its
    position in one cache line, instead of a position in the table and then the key in
    ``store`` (two misses, :func:`key_insert`).  Open addressing, linear probing.

    Parameters
    ----------
    table : int64 (S, 2)
        ``table[s] = (key, 1 + position in store)``, 0 for an empty slot (so a fresh table
        is ``np.zeros``: the operating system's zeroed pages, no fill pass); ``S`` is a
        power of two and the caller keeps the load factor below 1/2.
    store : int64 (cap, 1)
        Keys in insertion order (``store[:n_store]``); ``cap >= n_store + len(keys)``.
    n_store : int
    keys : int64 (m, 1)
    index : int64 (m,)
        Output: the position of each key in ``store`` (new or old).
    is_new : bool (m,)
        Output: True where the key was inserted by this call (its first occurrence).

    Returns
    -------
    int
        The new number of stored keys.
    """
    for i in range(keys.shape[0]):
        pos, new = _slot_insert1(table, store, n_store, keys[i, 0])
        index[i] = pos
        is_new[i] = new
        if new:
            n_store += 1
    return n_store


@numba.njit(cache=True, inline="always")
def _home_slot(key, mask):  # pragma: no cover
    """The first slot of ``key`` in a table of ``mask + 1`` slots: splitmix64's finaliser of the
    key, masked (the one hash of :func:`key_insert1` and :func:`key_add1`)."""
    z = np.uint64(key) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.int64(z & np.uint64(mask))


#: The largest int64: no membership-only key may take it (its slot value ``key + 1`` would wrap).
_I64_MAX = np.iinfo(np.int64).max

@numba.njit(cache=True)
def key_add1(table, store, n_store, keys):  # pragma: no cover
    """Insert single non-negative int64 keys into a membership-only set: 8 bytes a slot.

    For a set that is only asked how many distinct keys it holds and which (the explored rows
    of a search), not where each key sits: the slot holds ``key + 1`` (0 = empty, so a fresh
    table is ``np.zeros``), half the memory of :func:`key_insert1`'s ``(key, position)`` slots,
    so twice as many slots per cache line and half the table to keep in the caches.  Same
    splitmix64 hash, linear probing.

    Parameters
    ----------
    table : int64 (S,)
        ``S`` a power of two; the caller keeps the load factor below 1/2.
    store : int64 (cap, 1)
        Keys in insertion order (``store[:n_store]``); ``cap >= n_store + len(keys)``.
    n_store : int
    keys : int64 (m, 1)
        Non-negative and below 2**63 - 1 (checked here, before anything is inserted: ``key + 1``
        must be a positive slot value).

    Returns
    -------
    int
        The new number of stored keys, or -1 (nothing inserted) if a key is out of range.
    """
    for i in range(keys.shape[0]):
        if keys[i, 0] < 0 or keys[i, 0] == _I64_MAX:
            return -1
    mask = table.shape[0] - 1
    for i in range(keys.shape[0]):
        key = keys[i, 0]
        slot = _home_slot(key, mask)
        while True:
            v = table[slot]
            if v == 0:
                table[slot] = key + 1
                store[n_store, 0] = key
                n_store += 1
                break
            if v == key + 1:
                break
            slot = (slot + 1) & mask
    return n_store


@numba.njit(cache=True, inline="always")
def _slot_insert1(table, store, n_store, key):  # pragma: no cover
    """Insert-or-find ONE int64 key in the slot table of :func:`key_insert1` (splitmix64 hash,
    linear probing): ``(position in store, True if inserted now)``; a new key goes to
    ``store[n_store]`` (the caller counts it)."""
    mask = table.shape[0] - 1
    slot = _home_slot(key, mask)
    while True:
        j = table[slot, 1] - 1
        if j < 0:
            store[n_store, 0] = key
            table[slot, 0] = key
            table[slot, 1] = n_store + 1
            return np.int64(n_store), True
        if table[slot, 0] == key:
            return np.int64(j), False
        slot = (slot + 1) & mask


@numba.njit(cache=True)
def pack_rows(X, lo, mult, out):  # pragma: no cover
    """Mixed-radix int64 key of each row of an integer grid, in one pass (no temporaries).

    ``out[i] = sum_j int64(X[i, j] - lo[j]) * mult[j]`` -- the same integers as
    ``((X - lo).astype(np.int64) @ mult)`` (the caller guarantees integer rows within the
    bounds and a grid below 2^62 keys, so nothing truncates or overflows).

    Parameters
    ----------
    X : float64 (n, d)
    lo : float64 (d,)
    mult : int64 (d,)
    out : int64 (n, 1)
        Output.
    """
    for i in range(X.shape[0]):
        k = np.int64(0)
        for j in range(X.shape[1]):
            k += np.int64(X[i, j] - lo[j]) * mult[j]
        out[i, 0] = k


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
def unpack_rows(K, lo, span, out):  # pragma: no cover
    """The rows of mixed-radix int64 keys (the inverse of :func:`pack_rows`), in one pass.

    ``out[i, j] = lo[j] + (k mod span[j])`` with ``k`` divided by ``span[j]`` from the last
    column to the first: the same integers, the same float64 values as
    ``fairlens.maft._utils.RowCodec.rows``'s NumPy loop.  Keys are non-negative, so the
    division is unsigned (one hardware division per column, no sign fix-up: 2.7x faster).

    Parameters
    ----------
    K : int64 (n,)
    lo : float64 (d,)
    span : int64 (d,)
    out : float64 (n, d)
        Output.
    """
    d = out.shape[1]
    for i in range(K.shape[0]):
        k = np.uint64(K[i])
        for j in range(d - 1, -1, -1):
            s = np.uint64(span[j])
            q = k // s
            out[i, j] = lo[j] + np.float64(k - q * s)
            k = q


@numba.njit(cache=True)
def unpack_pairs(K, cpv, lo, span, prot_idx, out, cp_out):  # pragma: no cover
    """The rows of the keys ``K`` (as :func:`unpack_rows`) and their counterparts (the same rows
    with the protected columns ``prot_idx`` set to ``cpv``), both written in one pass.

    Parameters
    ----------
    K : int64 (n,)
    cpv : float64 (n, P)
        The counterparts' protected values.
    lo : float64 (d,)
    span : int64 (d,)
    prot_idx : int64 (P,)
        Distinct columns in ``[0, d)``.
    out, cp_out : float64 (n, d)
        Outputs.
    """
    d = out.shape[1]
    for i in range(K.shape[0]):
        k = np.uint64(K[i])
        for j in range(d - 1, -1, -1):
            s = np.uint64(span[j])
            q = k // s
            v = lo[j] + np.float64(k - q * s)
            out[i, j] = v
            cp_out[i, j] = v
            k = q
        for p in range(prot_idx.shape[0]):
            cp_out[i, prot_idx[p]] = cpv[i, p]


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


@numba.njit(cache=True)
def finds_add(step, codec, hset, found, counts):  # pragma: no cover
    """One local step's discoveries into the found set (:class:`fairlens.maft._state.Finds`), in
    one pass: for every walker ``w`` with ``ok[w]``, in walker order, the row ``X[w]`` is packed
    (:func:`pack_rows`) and inserted (:func:`key_insert1`); a new row appends its counterpart's
    protected values (the differing-label similar instance with the largest score gap, the first
    on ties, as ``np.argmax``), its score, the counterpart's score and its order key; a row
    already found in this share keeps the smaller order key.  Rows inserted before the share
    (``position < n_pre``: the global instances) are not recorded.

    Parameters
    ----------
    step : tuple ``(ok, X, S, sc, order_key)``
        This step: ``ok`` bool (W,), ``X`` float64 (W, d), ``S`` float64 (W, C, d), ``sc``
        float64 (W, C), ``order_key`` int64 (W,).
    codec : tuple ``(prot_idx, lo, mult)``
        ``prot_idx`` int64 (P,); the row packing ``lo`` float64 (d,), ``mult`` int64 (d,).
    hset : tuple ``(table, store)``
        The set (see :func:`key_insert1`); the caller guarantees room for ``W`` more keys.
    found : tuple ``(cp, s1, s2, order)``
        ``cp`` float64 (cap, P), ``s1, s2`` float64 (cap,), ``order`` int64 (cap,); the caller
        guarantees ``cap >= n_found + W``.
    counts : tuple ``(n_store, n_pre, n_found)``
        Keys stored, keys stored before the share, rows recorded so far.

    Returns
    -------
    (int, int)
        The new ``n_store`` and ``n_found``.
    """
    ok, X, S, sc, order_key = step
    prot_idx, lo, mult = codec
    table, store = hset
    cp, s1, s2, order = found
    n_store, n_pre, n_found = counts
    W = X.shape[0]
    d = X.shape[1]
    C = sc.shape[1]
    P = prot_idx.shape[0]
    for w in range(W):
        if not ok[w]:
            continue
        key = np.int64(0)
        for j in range(d):
            key += np.int64(X[w, j] - lo[j]) * mult[j]
        pos, new = _slot_insert1(table, store, n_store, key)
        if new:
            n_store += 1
            y0 = sc[w, 0] > 0.5
            best_c = 1
            best = 0.0
            for c in range(1, C):
                g = -1.0
                if (sc[w, c] > 0.5) != y0:
                    g = abs(sc[w, c] - sc[w, 0])
                if c == 1:
                    best = g
                    if g != g:  # NaN: np.argmax returns the first NaN
                        break
                elif g != g:
                    best_c = c
                    break
                elif g > best:
                    best = g
                    best_c = c
            for q in range(P):
                cp[n_found, q] = S[w, best_c, prot_idx[q]]
            s1[n_found] = sc[w, 0]
            s2[n_found] = sc[w, best_c]
            order[n_found] = order_key[w]
            n_found += 1
        elif pos >= n_pre:
            if order_key[w] < order[pos - n_pre]:
                order[pos - n_pre] = order_key[w]
    return n_store, n_found
