"""Checked entry points to the numba kernels of :mod:`fairlens.maft._kernels`.

A numba kernel does no bounds checking: called with an array of the wrong shape it
writes past its buffer and corrupts the heap ("malloc(): invalid size", "double
free").  Every caller in :mod:`fairlens.maft` therefore goes through the wrappers
below, which check dtype, C-contiguity, writeability and every shape relation the
kernel relies on (:func:`_check_kernel_args`) and only then call the kernel.  The
checks are O(1) per call (plus O(d) index checks), so they cost nothing next to a
model call.

Each wrapper has the kernel's name and signature; a mismatch is a ``ValueError``
naming the kernel, the argument, the expected and the received dtype/shape (an
internal error: public entry points validate user input before it gets here).

**Checked once per phase.**  The lockstep engine calls a few kernels at every step (1,000
steps of the local phase) on buffers that it allocates once per phase and whose shapes never
change.  It checks those buffers ONCE, at the phase boundary, with :func:`check_phase` (the
same checks as the wrappers), checks what changes per step (the model's scores, the rows of the
walkers refreshed at that step) with the O(1) :func:`check_step`, and then calls the kernels
through :data:`raw` (the unchecked kernels).  ``KeySet`` and ``RowCodec``
(:mod:`fairlens.maft._utils`) own their tables and allocate their outputs, so they check the
incoming keys or rows themselves and call :data:`raw` as well.
"""
from __future__ import annotations

import numpy as np

from . import _kernels

# one checked wrapper per kernel, under the kernel's own name
__all__ = list(_kernels.__all__)

_F = np.dtype(np.float64)
_I = np.dtype(np.int64)
_B = np.dtype(np.bool_)


def _check_kernel_args(kernel, specs, out=()):
    """Check ``specs`` = ``{name: (array, dtype, shape)}`` before calling ``kernel``.

    ``shape`` is a tuple of ints or ``None`` (any length on that axis); the
    resolved lengths are returned so that callers can relate axes.  Arrays named
    in ``out`` must be writeable.
    """
    for name, (a, dtype, shape) in specs.items():
        if not isinstance(a, np.ndarray):
            raise ValueError(f"{kernel}: argument {name} must be a numpy array, got {type(a).__name__}")
        if a.dtype != dtype:
            raise ValueError(f"{kernel}: argument {name} must have dtype {dtype}, got {a.dtype}")
        if a.ndim != len(shape) or any(s is not None and s != n for s, n in zip(shape, a.shape)):
            want = "(" + ", ".join("?" if s is None else str(s) for s in shape) + ")"
            raise ValueError(f"{kernel}: argument {name} must have shape {want}, got {a.shape}")
        if not a.flags.c_contiguous:
            raise ValueError(f"{kernel}: argument {name} must be C-contiguous")
        if name in out and not a.flags.writeable:
            raise ValueError(f"{kernel}: output argument {name} must be writeable")


#: The unchecked kernels, for callers that checked their arguments at a phase boundary
#: (:func:`check_phase`) or own every argument's allocation (see the module docstring).
raw = _kernels


def check_phase(kernel, specs, out=()):
    """Check, once per phase, the buffers a lockstep phase passes to ``kernel`` at every step.

    Parameters
    ----------
    kernel : str
        The kernel's name (for the message).
    specs : dict
        ``{name: (array, dtype, shape)}``; ``shape`` a tuple of ints or ``None`` (any length).
    out : tuple of str
        The names of output arguments (must be writeable).

    Raises
    ------
    ValueError
        Naming the kernel, the argument, the expected and the received dtype or shape.
    """
    _check_kernel_args(kernel, specs, out)


def check_step(kernel, name, a, dtype, shape):
    """The O(1) check of one array that changes at every step (dtype, exact shape, C order).

    Raises
    ------
    ValueError
        Naming the kernel, the argument, the expected and the received dtype or shape.
    """
    if not (isinstance(a, np.ndarray) and a.dtype == dtype and a.shape == shape and a.flags.c_contiguous):
        _check_kernel_args(kernel, {name: (a, dtype, shape)})


def _check_index(kernel, name, idx, n):
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise ValueError(f"{kernel}: argument {name} holds indices outside [0, {n})")


def _check_any_free(kernel, free):
    if not free.any():
        raise ValueError(f"{kernel}: argument free has no free (non-protected) attribute")


def similar_rows(X, prot_idx, combos, out):
    W, d = X.shape if X.ndim == 2 else (-1, -1)
    C, P = combos.shape if combos.ndim == 2 else (-1, -1)
    _check_kernel_args(
        "similar_rows",
        {"X": (X, _F, (None, None)), "prot_idx": (prot_idx, _I, (P,)), "combos": (combos, _F, (None, None)),
         "out": (out, _F, (W, C, d))},
        out=("out",),
    )
    _check_index("similar_rows", "prot_idx", prot_idx, d)
    return _kernels.similar_rows(X, prot_idx, combos, out)


def check_discrimination(scores, u_pair, is_disc, pair_idx, maxdiff_idx):
    W = scores.shape[0] if scores.ndim == 2 else -1
    _check_kernel_args(
        "check_discrimination",
        {"scores": (scores, _F, (None, None)), "u_pair": (u_pair, _F, (W,)), "is_disc": (is_disc, _B, (W,)),
         "pair_idx": (pair_idx, _I, (W,)), "maxdiff_idx": (maxdiff_idx, _I, (W,))},
        out=("is_disc", "pair_idx", "maxdiff_idx"),
    )
    return _kernels.check_discrimination(scores, u_pair, is_disc, pair_idx, maxdiff_idx)


def global_update(walk, grads, rule, domain):
    X, M1, M2 = walk
    g1, g2 = grads
    decay, sign, step = rule
    free, lo, hi = domain
    W, d = X.shape if X.ndim == 2 else (-1, -1)
    m = (W, d)
    _check_kernel_args(
        "global_update",
        {"X": (X, _F, (None, None)), "M1": (M1, _F, m), "M2": (M2, _F, m), "g1": (g1, _F, m), "g2": (g2, _F, m),
         "free": (free, _B, (d,)), "lo": (lo, _F, (d,)), "hi": (hi, _F, (d,))},
        out=("X", "M1", "M2"),
    )
    return _kernels.global_update((X, M1, M2), (g1, g2), (float(decay), float(sign), float(step)), (free, lo, hi))


def normalized_probability(g1, g2, free, eps, out):
    W, d = g1.shape if g1.ndim == 2 else (-1, -1)
    _check_kernel_args(
        "normalized_probability",
        {"g1": (g1, _F, (None, None)), "g2": (g2, _F, (W, d)), "free": (free, _B, (d,)), "out": (out, _F, (W, d))},
        out=("out",),
    )
    _check_any_free("normalized_probability", free)
    return _kernels.normalized_probability(g1, g2, free, float(eps), out)


def local_perturb(X, prob, draws, step, domain, out):
    (u_attr, u_dir), (lo, hi), (attr_out, dir_out) = draws, domain, out
    W, d = X.shape if X.ndim == 2 else (-1, -1)
    _check_kernel_args(
        "local_perturb",
        {"X": (X, _F, (None, None)), "prob": (prob, _F, (W, d)), "u_attr": (u_attr, _F, (W,)),
         "u_dir": (u_dir, _F, (W,)), "lo": (lo, _F, (d,)), "hi": (hi, _F, (d,)),
         "attr_out": (attr_out, _I, (W,)), "dir_out": (dir_out, _F, (W,))},
        out=("X", "attr_out", "dir_out"),
    )
    if W and not np.all((prob > 0).any(axis=1)):
        raise ValueError("local_perturb: every row of prob needs a positive entry")
    return _kernels.local_perturb(X, prob, (u_attr, u_dir), float(step), (lo, hi), (attr_out, dir_out))


def table_insert(table, store, n_store, rows, hashes, is_new):
    m, d = rows.shape if rows.ndim == 2 else (-1, -1)
    _check_kernel_args(
        "table_insert",
        {"table": (table, _I, (None,)), "store": (store, _F, (None, d)), "rows": (rows, _F, (None, None)),
         "hashes": (hashes, _I, (m,)), "is_new": (is_new, _B, (m,))},
        out=("table", "store", "is_new"),
    )
    S = table.shape[0]
    n_store = int(n_store)
    if S < 2 or S & (S - 1):
        raise ValueError(f"table_insert: table size must be a power of two, got {S}")
    if not 0 <= n_store <= store.shape[0] or n_store + m > store.shape[0]:
        raise ValueError(
            f"table_insert: store has room for {store.shape[0]} rows, {n_store} used, {m} to insert"
        )
    if n_store + m >= S:
        raise ValueError(f"table_insert: {n_store + m} rows do not fit a table of {S} slots")
    return _kernels.table_insert(table, store, n_store, rows, hashes, is_new)


def _check_table(kernel, table, store, n_store, m):
    """The hash-set kernels' shared preconditions: a power-of-two slot table, room in the store for
    ``m`` more keys, the load at most 1/2 after them.  Returns ``n_store`` as an int."""
    S = table.shape[0]
    n_store = int(n_store)
    if S < 2 or S & (S - 1):
        raise ValueError(f"{kernel}: table size must be a power of two, got {S}")
    if not 0 <= n_store <= store.shape[0] or n_store + m > store.shape[0]:
        raise ValueError(f"{kernel}: store has room for {store.shape[0]} keys, {n_store} used, {m} to insert")
    if 2 * (n_store + m) > S:
        raise ValueError(f"{kernel}: {n_store + m} keys do not fit a table of {S} slots at load 1/2")
    return n_store


def key_insert(table, store, n_store, keys, index, is_new):
    m, k = keys.shape if keys.ndim == 2 else (-1, -1)
    _check_kernel_args(
        "key_insert",
        {"table": (table, _I, (None,)), "store": (store, _I, (None, k)), "keys": (keys, _I, (None, None)),
         "index": (index, _I, (m,)), "is_new": (is_new, _B, (m,))},
        out=("table", "store", "index", "is_new"),
    )
    n_store = _check_table("key_insert", table, store, n_store, m)
    return _kernels.key_insert(table, store, n_store, keys, index, is_new)


def key_add1(table, store, n_store, keys):
    m = keys.shape[0] if keys.ndim == 2 else -1
    _check_kernel_args("key_add1", {"table": (table, _I, (None,)), "store": (store, _I, (None, 1)),
                                    "keys": (keys, _I, (None, 1))}, out=("table", "store"))
    n_store = _check_table("key_add1", table, store, n_store, m)
    n = _kernels.key_add1(table, store, n_store, keys)  # checks the keys' range before inserting
    if n < 0:
        raise ValueError("key_add1: argument keys must lie in [0, 2**63 - 1)")
    return n


def key_insert1(table, store, n_store, keys, index, is_new):
    m = keys.shape[0] if keys.ndim == 2 else -1
    _check_kernel_args(
        "key_insert1",
        {"table": (table, _I, (None, 2)), "store": (store, _I, (None, 1)), "keys": (keys, _I, (None, 1)),
         "index": (index, _I, (m,)), "is_new": (is_new, _B, (m,))},
        out=("table", "store", "index", "is_new"),
    )
    n_store = _check_table("key_insert1", table, store, n_store, m)
    return _kernels.key_insert1(table, store, n_store, keys, index, is_new)


def pack_rows(X, lo, mult, out):
    n, d = X.shape if X.ndim == 2 else (-1, -1)
    _check_kernel_args(
        "pack_rows",
        {"X": (X, _F, (None, None)), "lo": (lo, _F, (d,)), "mult": (mult, _I, (d,)), "out": (out, _I, (n, 1))},
        out=("out",),
    )
    return _kernels.pack_rows(X, lo, mult, out)


def aequitas_update(param_p, dir_p, attrs, dirs, disc, change_p, change_d, step):
    d = param_p.shape[0] if param_p.ndim == 1 else -1
    W = attrs.shape[0] if attrs.ndim == 1 else -1
    _check_kernel_args(
        "aequitas_update",
        {"param_p": (param_p, _F, (None,)), "dir_p": (dir_p, _F, (d,)), "attrs": (attrs, _I, (None,)),
         "dirs": (dirs, _F, (W,)), "disc": (disc, _B, (W,))},
        out=("param_p", "dir_p"),
    )
    _check_index("aequitas_update", "attrs", attrs, d)
    return _kernels.aequitas_update(param_p, dir_p, attrs, dirs, disc, float(change_p), float(change_d), float(step))


def aequitas_perturb(X, probs, draws, step, domain, out):
    (param_p, dir_p), (u_attr, u_dir, u_edge), (lo, hi), (attr_out, dir_out) = probs, draws, domain, out
    W, d = X.shape if X.ndim == 2 else (-1, -1)
    _check_kernel_args(
        "aequitas_perturb",
        {"X": (X, _F, (None, None)), "param_p": (param_p, _F, (d,)), "dir_p": (dir_p, _F, (d,)),
         "u_attr": (u_attr, _F, (W,)), "u_dir": (u_dir, _F, (W,)), "u_edge": (u_edge, _F, (W,)),
         "lo": (lo, _F, (d,)), "hi": (hi, _F, (d,)), "attr_out": (attr_out, _I, (W,)),
         "dir_out": (dir_out, _F, (W,))},
        out=("X", "attr_out", "dir_out"),
    )
    if W and not (param_p > 0).any():
        raise ValueError("aequitas_perturb: param_p needs a positive entry")
    return _kernels.aequitas_perturb(X, (param_p, dir_p), (u_attr, u_dir, u_edge), float(step), (lo, hi),
                                     (attr_out, dir_out))


_U = np.dtype(np.uint64)


def stream_fill(key, walkers, counter, out):
    n = walkers.shape[0] if walkers.ndim == 1 else -1
    _check_kernel_args("stream_fill", {"walkers": (walkers, _I, (None,)), "out": (out, _F, (n,))}, out=("out",))
    if n > 0 and walkers.min() < 0:
        raise ValueError("stream_fill: argument walkers holds negative walker ids")
    return _kernels.stream_fill(np.uint64(key), walkers, np.uint64(counter), out)


def local_commit(is_disc, new, cur, home):
    S, sc = new
    X, P, suc, S_cur, sc_cur = cur
    X0, P0, gS, gsc = home
    W, d = X.shape if X.ndim == 2 else (-1, -1)
    C = S.shape[1] if S.ndim == 3 else -1
    s3, s2, sd = (W, C, d), (W, C), (W, d)
    _check_kernel_args(
        "local_commit",
        {"is_disc": (is_disc, _B, (W,)), "S": (S, _F, s3), "sc": (sc, _F, s2), "X": (X, _F, (None, None)),
         "X0": (X0, _F, sd), "P": (P, _F, sd), "P0": (P0, _F, sd), "suc": (suc, _I, (W,)),
         "S_cur": (S_cur, _F, s3), "sc_cur": (sc_cur, _F, s2), "gS": (gS, _F, s3), "gsc": (gsc, _F, s2)},
        out=("X", "P", "suc", "S_cur", "sc_cur"),
    )
    return _kernels.local_commit(is_disc, (S, sc), (X, P, suc, S_cur, sc_cur), (X0, P0, gS, gsc))


def unpack_rows(K, lo, span, out):
    d = lo.shape[0] if lo.ndim == 1 else -1
    n = K.shape[0] if K.ndim == 1 else -1
    _check_kernel_args("unpack_rows", {"K": (K, _I, (None,)), "lo": (lo, _F, (None,)), "span": (span, _I, (d,)),
                                       "out": (out, _F, (n, d))}, out=("out",))
    if n > 0 and K.min() < 0:
        raise ValueError("unpack_rows: argument K holds negative keys")
    if d > 0 and span.min() < 1:
        raise ValueError("unpack_rows: argument span must be positive")
    return _kernels.unpack_rows(K, lo, span, out)


def unpack_pairs(K, cpv, lo, span, prot_idx, out, cp_out):
    d = lo.shape[0] if lo.ndim == 1 else -1
    n = K.shape[0] if K.ndim == 1 else -1
    P = prot_idx.shape[0] if prot_idx.ndim == 1 else -1
    _check_kernel_args("unpack_pairs", {"K": (K, _I, (None,)), "cpv": (cpv, _F, (n, P)), "lo": (lo, _F, (None,)),
                                        "span": (span, _I, (d,)), "prot_idx": (prot_idx, _I, (None,)),
                                        "out": (out, _F, (n, d)), "cp_out": (cp_out, _F, (n, d))},
                       out=("out", "cp_out"))
    if n > 0 and K.min() < 0:
        raise ValueError("unpack_pairs: argument K holds negative keys")
    if d > 0 and span.min() < 1:
        raise ValueError("unpack_pairs: argument span must be positive")
    _check_index("unpack_pairs", "prot_idx", prot_idx, d)
    return _kernels.unpack_pairs(K, cpv, lo, span, prot_idx, out, cp_out)


def zo_probe_rows(X, steps, out):
    n, d = X.shape if X.ndim == 2 else (-1, -1)
    _check_kernel_args("zo_probe_rows", {"X": (X, _F, (None, None)), "steps": (steps, _F, (n, d)),
                                         "out": (out, _F, (n * (d + 1), d))}, out=("out",))
    return _kernels.zo_probe_rows(X, steps, out)


def zo_gradient(Y, steps, G):
    n, d = steps.shape if steps.ndim == 2 else (-1, -1)
    _check_kernel_args("zo_gradient", {"Y": (Y, _F, (n * (d + 1),)), "steps": (steps, _F, (None, None)),
                                       "G": (G, _F, (n, d))}, out=("G",))
    return _kernels.zo_gradient(Y, steps, G)


def finds_add(step, codec, hset, found, counts):
    ok, X, S, sc, order_key = step
    prot_idx, lo, mult = codec
    table, store = hset
    cp, s1, s2, order = found
    n_store, n_pre, n_found = counts
    W, d = X.shape if X.ndim == 2 else (-1, -1)
    C = sc.shape[1] if sc.ndim == 2 else -1
    P = prot_idx.shape[0] if prot_idx.ndim == 1 else -1
    _check_kernel_args(
        "finds_add",
        {"ok": (ok, _B, (W,)), "X": (X, _F, (None, None)), "S": (S, _F, (W, C, d)), "sc": (sc, _F, (W, None)),
         "prot_idx": (prot_idx, _I, (None,)), "lo": (lo, _F, (d,)), "mult": (mult, _I, (d,)),
         "order_key": (order_key, _I, (W,)), "table": (table, _I, (None, 2)), "store": (store, _I, (None, 1)),
         "cp": (cp, _F, (None, P)), "s1": (s1, _F, (None,)), "s2": (s2, _F, (None,)), "order": (order, _I, (None,))},
        out=("table", "store", "cp", "s1", "s2", "order"),
    )
    _check_index("finds_add", "prot_idx", prot_idx, d)
    Sz, n_store, n_found, n_pre = table.shape[0], int(n_store), int(n_found), int(n_pre)
    if Sz < 2 or Sz & (Sz - 1):
        raise ValueError(f"finds_add: table size must be a power of two, got {Sz}")
    if not 0 <= n_store <= store.shape[0] or n_store + W > store.shape[0] or 2 * (n_store + W) > Sz:
        raise ValueError(f"finds_add: the set has no room for {W} more keys ({n_store} stored)")
    if not 0 <= n_found or n_found + W > min(cp.shape[0], s1.shape[0], s2.shape[0], order.shape[0]):
        raise ValueError(f"finds_add: the found rows have no room for {W} more ({n_found} recorded)")
    if not 0 <= n_pre <= n_store or n_store - n_pre != n_found:
        raise ValueError("finds_add: n_pre, n_store and n_found disagree")
    return _kernels.finds_add((ok, X, S, sc, order_key), (prot_idx, lo, mult), (table, store), (cp, s1, s2, order),
                              (n_store, n_pre, n_found))
