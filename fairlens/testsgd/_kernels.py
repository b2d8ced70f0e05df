"""numba kernels of the TestSGD slice (and nothing else).

All kernels are ``@numba.njit(cache=True)`` array-in/array-out functions with
explicit dtypes; they compile on first call (importing this module compiles
nothing) and stay valid plain Python under ``NUMBA_DISABLE_JIT=1``. Bit
arithmetic uses ``np.uint64`` constants only, so the plain-Python fallback never
silently promotes to float.
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = [
    "pack_masks",
    "and_popcount",
    "and_popcount_chain",
    "unpack_bits",
    "sample_rows",
    "neighbourhood_rows",
    "lookup_labels",
]

_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_ONE = np.uint64(1)
_S1 = np.uint64(1)
_S2 = np.uint64(2)
_S4 = np.uint64(4)
_S8 = np.uint64(8)
_S16 = np.uint64(16)
_S32 = np.uint64(32)
_LOW7 = np.uint64(0x7F)


@numba.njit(cache=True)
def _popcount64(x):
    """Number of set bits of one uint64 (SWAR, no overflowing multiply)."""
    x = x - ((x >> _S1) & _M1)
    x = (x & _M2) + ((x >> _S2) & _M2)
    x = (x + (x >> _S4)) & _M4
    x = x + (x >> _S8)
    x = x + (x >> _S16)
    x = x + (x >> _S32)
    return np.int64(x & _LOW7)


@numba.njit(cache=True)
def pack_masks(masks):
    """Pack boolean rows into 64-bit words.

    Parameters
    ----------
    masks : ndarray of uint8, shape (m, n)
        0/1 membership of each of ``n`` data rows in each of ``m`` sets.

    Returns
    -------
    ndarray of uint64, shape (m, ceil(n / 64))
        Bit ``i % 64`` of word ``i // 64`` is set iff ``masks[:, i]`` is 1.
    """
    m, n = masks.shape
    n_words = (n + 63) // 64
    out = np.zeros((m, n_words), dtype=np.uint64)
    for r in range(m):
        for i in range(n):
            if masks[r, i] != 0:
                w = i // 64
                out[r, w] = out[r, w] | (_ONE << np.uint64(i % 64))
    return out


@numba.njit(cache=True)
def unpack_bits(bits, n):
    """Inverse of :func:`pack_masks`: (m, n_words) uint64 -> (m, n) uint8."""
    m = bits.shape[0]
    out = np.zeros((m, n), dtype=np.uint8)
    for r in range(m):
        for i in range(n):
            if (bits[r, i // 64] >> np.uint64(i % 64)) & _ONE:
                out[r, i] = 1
    return out


@numba.njit(cache=True)
def and_popcount(parent_bits, rule_bits, parent_idx, rule_idx, out_bits):
    """Support counts of candidate rule sets ``parent AND rule``.

    Parameters
    ----------
    parent_bits : uint64 (P, W)
        Bitsets of the frequent rule sets of the previous level.
    rule_bits : uint64 (Q, W)
        Bitsets of the single rules.
    parent_idx, rule_idx : int64 (C,)
        Candidate ``c`` is ``parent_idx[c]`` extended by ``rule_idx[c]``.
    out_bits : uint64 (C, W) or (0, W)
        If it has ``C`` rows, the AND bitsets are written there.

    Returns
    -------
    int64 (C,)
        Number of data rows satisfying each candidate.
    """
    n_cand = parent_idx.shape[0]
    n_words = parent_bits.shape[1]
    write = out_bits.shape[0] == n_cand
    counts = np.zeros(n_cand, dtype=np.int64)
    for c in range(n_cand):
        p = parent_idx[c]
        q = rule_idx[c]
        s = np.int64(0)
        for w in range(n_words):
            v = parent_bits[p, w] & rule_bits[q, w]
            if write:
                out_bits[c, w] = v
            s += _popcount64(v)
        counts[c] = s
    return counts


@numba.njit(cache=True)
def and_popcount_chain(rule_bits, members):
    """Support counts of arbitrary rule sets given as rows of rule indices.

    ``members`` is int64 (C, k) with ``-1`` padding; used by the brute-force
    twin and for user-supplied rule sets.
    """
    n_cand, k = members.shape
    n_words = rule_bits.shape[1]
    counts = np.zeros(n_cand, dtype=np.int64)
    full = ~np.uint64(0)
    for c in range(n_cand):
        s = np.int64(0)
        for w in range(n_words):
            v = full
            for j in range(k):
                q = members[c, j]
                if q >= 0:
                    v = v & rule_bits[q, w]
            s += _popcount64(v)
        counts[c] = s
    return counts


@numba.njit(cache=True)
def sample_rows(X, seeds_flat, seeds_start, seeds_len, group, U, free_cols, step, lo, hi, out):
    """Section 4.3 structured-data sampling, many groups at once.

    Row ``i`` of ``out`` is a copy of seed
    ``seeds_flat[seeds_start[g] + floor(U[i, 0] * seeds_len[g])]`` (``g = group[i]``)
    with one non-sensitive column ``free_cols[floor(U[i, 1] * len(free_cols))]``
    moved by ``-step`` (``U[i, 2] < 0.5``) or ``+step`` and clipped to
    ``[lo, hi]``.

    Parameters
    ----------
    X : float64 (n, d)
    seeds_flat : int64 (total,)
    seeds_start, seeds_len : int64 (G,)
    group : int64 (B,)
    U : float64 (B, 3), uniforms in [0, 1)
    free_cols : int64 (k,)
    step, lo, hi : float64 (d,)
    out : float64 (B, d), written in place
    """
    n_rows = group.shape[0]
    d = X.shape[1]
    k = free_cols.shape[0]
    for i in range(n_rows):
        g = group[i]
        pick = np.int64(U[i, 0] * seeds_len[g])
        if pick >= seeds_len[g]:
            pick = seeds_len[g] - 1
        src = seeds_flat[seeds_start[g] + pick]
        for j in range(d):
            out[i, j] = X[src, j]
        if k > 0:
            c = np.int64(U[i, 1] * k)
            if c >= k:
                c = k - 1
            col = free_cols[c]
            v = X[src, col]
            if U[i, 2] < 0.5:
                v = v - step[col]
            else:
                v = v + step[col]
            if v < lo[col]:
                v = lo[col]
            if v > hi[col]:
                v = hi[col]
            out[i, col] = v
    return out


@numba.njit(cache=True)
def neighbourhood_rows(X, rows, free_cols, step, lo, hi, out):
    """All section 4.3 perturbations of the seeds ``rows``.

    ``out[(t * k + c) * 2 + s]`` is seed ``rows[t]`` with column ``free_cols[c]``
    moved by ``-step`` (``s = 0``) or ``+step`` (``s = 1``), clipped to
    ``[lo, hi]``; ``k = len(free_cols)`` (if ``k == 0`` the seed itself twice).
    """
    d = X.shape[1]
    k = free_cols.shape[0]
    kk = k if k > 0 else 1
    for t in range(rows.shape[0]):
        src = rows[t]
        for c in range(kk):
            for s in range(2):
                r = (t * kk + c) * 2 + s
                for j in range(d):
                    out[r, j] = X[src, j]
                if k > 0:
                    col = free_cols[c]
                    v = X[src, col] - step[col] if s == 0 else X[src, col] + step[col]
                    if v < lo[col]:
                        v = lo[col]
                    if v > hi[col]:
                        v = hi[col]
                    out[r, col] = v
    return out


@numba.njit(cache=True)
def lookup_labels(label_table, n_free, seeds_flat, seeds_start, seeds_len, group, U, out):
    """Labels of the samples :func:`sample_rows` would draw, read from a table.

    ``label_table[i, c, s]`` is the model's label of seed ``i`` perturbed on
    free column ``c`` in direction ``s`` (see :func:`neighbourhood_rows`); the
    seed/column/direction choice from ``U`` is exactly that of
    :func:`sample_rows`, so the result equals sampling and calling the model.
    """
    n_rows = group.shape[0]
    for i in range(n_rows):
        g = group[i]
        pick = np.int64(U[i, 0] * seeds_len[g])
        if pick >= seeds_len[g]:
            pick = seeds_len[g] - 1
        src = seeds_flat[seeds_start[g] + pick]
        c = np.int64(0)
        if n_free > 0:
            c = np.int64(U[i, 1] * n_free)
            if c >= n_free:
                c = n_free - 1
        s = 0 if U[i, 2] < 0.5 else 1
        out[i] = label_table[src, c, s]
    return out


# ----------------------------------------------------------------------------
# pure-NumPy twins of the bitset kernels (same inputs, same outputs)
# ----------------------------------------------------------------------------
def pack_masks_np(masks):
    """NumPy twin of :func:`pack_masks` (``np.packbits`` little-endian, viewed as uint64)."""
    masks = np.ascontiguousarray(masks, dtype=np.uint8)
    m, n = masks.shape
    n_words = (n + 63) // 64
    packed = np.packbits(masks != 0, axis=1, bitorder="little")
    buf = np.zeros((m, n_words * 8), dtype=np.uint8)
    buf[:, :packed.shape[1]] = packed
    return np.ascontiguousarray(buf).view("<u8").astype(np.uint64).reshape(m, n_words)


def unpack_bits_np(bits, n):
    """NumPy twin of :func:`unpack_bits`."""
    bits = np.ascontiguousarray(bits, dtype=np.uint64)
    m = bits.shape[0]
    as_bytes = bits.astype("<u8").view(np.uint8).reshape(m, -1)
    return np.unpackbits(as_bytes, axis=1, bitorder="little")[:, :n].astype(np.uint8)


def and_popcount_np(parent_bits, rule_bits, parent_idx, rule_idx, out_bits, block=4096):
    """NumPy twin of :func:`and_popcount` (vectorised in blocks of candidates)."""
    n_cand = parent_idx.shape[0]
    counts = np.zeros(n_cand, dtype=np.int64)
    write = out_bits.shape[0] == n_cand
    for a in range(0, n_cand, block):
        b = min(n_cand, a + block)
        v = parent_bits[parent_idx[a:b]] & rule_bits[rule_idx[a:b]]
        if write:
            out_bits[a:b] = v
        counts[a:b] = np.bitwise_count(v).sum(axis=1, dtype=np.int64)
    return counts


def and_popcount_chain_np(rule_bits, members):
    """NumPy twin of :func:`and_popcount_chain`."""
    n_cand, k = members.shape
    v = np.full((n_cand, rule_bits.shape[1]), ~np.uint64(0), dtype=np.uint64)
    for j in range(k):
        q = members[:, j]
        ok = q >= 0
        v[ok] &= rule_bits[q[ok]]
    return np.bitwise_count(v).sum(axis=1, dtype=np.int64)


def _picks(seeds_flat, seeds_start, seeds_len, group, U, n_free):
    g = group
    pick = np.minimum((U[:, 0] * seeds_len[g]).astype(np.int64), seeds_len[g] - 1)
    src = seeds_flat[seeds_start[g] + pick]
    c = (np.minimum((U[:, 1] * n_free).astype(np.int64), n_free - 1) if n_free > 0
         else np.zeros(g.shape[0], np.int64))
    return src, c, (U[:, 2] >= 0.5).astype(np.int64)


def sample_rows_np(X, seeds_flat, seeds_start, seeds_len, group, U, free_cols, step, lo, hi, out):
    """NumPy twin of :func:`sample_rows`."""
    k = free_cols.shape[0]
    src, c, s = _picks(seeds_flat, seeds_start, seeds_len, group, U, k)
    out[:] = X[src]
    if k > 0 and group.shape[0]:
        col = free_cols[c]
        i = np.arange(group.shape[0])
        v = np.where(s == 0, X[src, col] - step[col], X[src, col] + step[col])
        out[i, col] = np.minimum(np.maximum(v, lo[col]), hi[col])
    return out


def neighbourhood_rows_np(X, rows, free_cols, step, lo, hi, out):
    """NumPy twin of :func:`neighbourhood_rows`."""
    k = free_cols.shape[0]
    kk = k if k > 0 else 1
    t = np.repeat(np.arange(rows.shape[0]), kk * 2)
    c = np.tile(np.repeat(np.arange(kk), 2), rows.shape[0])
    s = np.tile(np.array([0, 1]), rows.shape[0] * kk)
    src = rows[t]
    out[:] = X[src]
    if k > 0 and src.size:
        col = free_cols[c]
        v = np.where(s == 0, X[src, col] - step[col], X[src, col] + step[col])
        out[np.arange(src.size), col] = np.minimum(np.maximum(v, lo[col]), hi[col])
    return out


def lookup_labels_np(label_table, n_free, seeds_flat, seeds_start, seeds_len, group, U, out):
    """NumPy twin of :func:`lookup_labels`."""
    src, c, s = _picks(seeds_flat, seeds_start, seeds_len, group, U, int(n_free))
    out[:] = label_table[src, c, s]
    return out


#: Under ``NUMBA_DISABLE_JIT=1`` the kernels above would run as slow plain Python; they
#: are then replaced by their NumPy twins (identical results, tested against each other).
JIT_KERNELS = dict(pack_masks=pack_masks, unpack_bits=unpack_bits, and_popcount=and_popcount,
                   and_popcount_chain=and_popcount_chain, sample_rows=sample_rows,
                   neighbourhood_rows=neighbourhood_rows, lookup_labels=lookup_labels)
if numba.config.DISABLE_JIT:  # pragma: no cover - exercised by the NUMBA_DISABLE_JIT run
    pack_masks = pack_masks_np
    unpack_bits = unpack_bits_np
    and_popcount = and_popcount_np
    and_popcount_chain = and_popcount_chain_np
    sample_rows = sample_rows_np
    neighbourhood_rows = neighbourhood_rows_np
    lookup_labels = lookup_labels_np
