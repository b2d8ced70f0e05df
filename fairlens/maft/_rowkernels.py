"""numba kernels of the row sets of :mod:`fairlens.maft` (hash sets of int64 keys and of float
rows, rows packed into keys and back, one local step's discoveries into the found set).

The conventions of :mod:`fairlens.maft._kernels` hold here too (array-in / array-out, explicit
dtypes, ``cache=True``, plain Python under ``NUMBA_DISABLE_JIT=1``); callers go through the checked
wrappers of :mod:`fairlens.maft._kcall` (which reaches these kernels through
:mod:`fairlens.maft._kernels`, re-exporting them).  A key is ``sum((x - lo) * mult)`` of a row on
the integer grid (:class:`fairlens.maft._utils.RowCodec`).
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = [
    "table_insert",
    "key_insert",
    "key_insert1",
    "key_add1",
    "pack_rows",
    "unpack_rows",
    "unpack_pairs",
    "finds_add",
]


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
