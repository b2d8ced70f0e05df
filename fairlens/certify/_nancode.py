"""Missing values (NaN) as one more attack value: the NaN code.

Every supported library routes a missing value at a node by that node's default direction
(``missing_left``), which is a direction *pattern* along a feature, not an interval. The
certification engine reduces it to plain thresholds: NaN is encoded as ``-inf`` (the *NaN
code*, below every finite value) and every node where NaN goes right (``missing_left`` False)
gets a new parent on the same feature with threshold ``-inf``: ``x <= -inf`` (the NaN code)
goes to the node's right child, every finite value goes on to the node itself. The coded
model computes exactly what the library computes for every input in which NaN is written as
``-inf`` (finite inputs walk the same nodes as before), so every kernel -- the hard and soft
votes' FLB/ELB covers and brute force and the boosted margin bounds -- is sound and exact for
an attacker who may write NaN, and needs no NaN branch: NaN is the relevant value ``-inf`` of
every feature. The nodes stay in their trees' contiguous ranges (the new parent is placed
just before its node); the node's right child gets two parents (a DAG, which every kernel
walks like a tree).

Imports nothing from :mod:`fairlens.certify` (a bottom layer like :mod:`._flat`).
"""
from __future__ import annotations

import numpy as np

__all__ = ["NAN_CODE", "code_nodes", "code_values", "encode_rows", "decode_values"]

#: How NaN is written in the coded model's inputs and relevant values.
NAN_CODE = -np.inf


def code_nodes(feature, threshold, left, right, roots, missing_left):
    """The coded node arrays (see the module docstring).

    Parameters
    ----------
    feature, threshold, left, right : ndarray of shape (n_nodes,)
        The nodes (``-1`` on leaves; ``x[feature] <= threshold`` goes left).
    roots : ndarray of int64
        Root node of every tree (trees stored one after the other).
    missing_left : ndarray of bool, shape (n_nodes,)
        Where NaN goes at every node.

    Returns
    -------
    dict
        ``feature``, ``threshold``, ``left``, ``right``, ``roots``, ``missing_left`` of the coded
        model, and ``old`` (int64, the coded index of every original node) and ``n_nodes``.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.certify._nancode import code_nodes
    >>> c = code_nodes(np.array([0, -1, -1]), np.array([0.5, 0, 0]), np.array([1, -1, -1]),
    ...                np.array([2, -1, -1]), np.array([0]), np.array([False, False, False]))
    >>> c["feature"].tolist(), float(c["threshold"][0]), c["left"].tolist(), c["right"].tolist()
    ([0, 0, -1, -1], -inf, [3, 2, -1, -1], [1, 3, -1, -1])
    """
    feature = np.asarray(feature, np.int64)
    n = feature.shape[0]
    rewrite = (feature >= 0) & ~np.asarray(missing_left, bool)
    r = rewrite.astype(np.int64)
    before = np.cumsum(r) - r
    idx = np.arange(n, dtype=np.int64)
    entry = idx + before           # where a parent points to (the new parent if rewritten)
    old = entry + r                # the original node
    m = n + int(r.sum())
    f2 = np.full(m, -1, np.int64)
    t2 = np.zeros(m, np.float64)
    l2 = np.full(m, -1, np.int64)
    r2 = np.full(m, -1, np.int64)
    internal = feature >= 0
    f2[old] = feature
    t2[old] = threshold
    l2[old[internal]] = entry[np.asarray(left)[internal]]
    r2[old[internal]] = entry[np.asarray(right)[internal]]
    w = np.flatnonzero(rewrite)
    f2[entry[w]] = feature[w]
    t2[entry[w]] = NAN_CODE
    l2[entry[w]] = entry[np.asarray(right)[w]]
    r2[entry[w]] = old[w]
    return {"feature": f2, "threshold": t2, "left": l2, "right": r2,
            "roots": np.ascontiguousarray(entry[np.asarray(roots, np.int64)]),
            "missing_left": np.ones(m, bool), "old": old, "n_nodes": m}


def code_values(values_ptr, values, tested):
    """The relevant attack values with the NaN code: ``-inf`` first for every feature in
    ``tested`` (a finite representative ``0.0`` added when the feature has no finite value).

    Parameters
    ----------
    values_ptr, values : ndarray
        Finite relevant values, CSR (see :func:`fairlens.certify.relevant_values`).
    tested : ndarray of bool, shape (n_features,)
        Features some node tests.

    Returns
    -------
    values_ptr, values : ndarray of int64 / float64

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.certify._nancode import code_values
    >>> ptr, v = code_values(np.array([0, 0, 2]), np.array([0.5, 0.75]), np.array([True, True]))
    >>> ptr.tolist(), v.tolist()
    ([0, 2, 5], [-inf, 0.0, -inf, 0.5, 0.75])
    """
    d = len(values_ptr) - 1
    ptr = np.zeros(d + 1, np.int64)
    out = []
    for f in range(d):
        v = values[values_ptr[f]:values_ptr[f + 1]]
        if tested[f]:
            v = np.concatenate([[NAN_CODE], v if v.size else [0.0]])
        out.append(np.asarray(v, np.float64))
        ptr[f + 1] = ptr[f] + v.size
    vals = np.concatenate(out) if out else np.zeros(0, np.float64)
    return ptr, np.ascontiguousarray(vals, dtype=np.float64)


def encode_rows(Xr):
    """``Xr`` with NaN written as the NaN code (a C-contiguous float64 copy)."""
    out = np.array(Xr, dtype=np.float64, order="C", copy=True)
    out[np.isnan(out)] = NAN_CODE
    return out


def decode_values(v, missing_value=np.nan):
    """Attack values back to the library's input: the NaN code becomes ``missing_value``.

    ``missing_value`` is how the model itself writes a missing value: NaN, or a finite sentinel
    (XGBoost's ``missing=v``), so that a witness means to the model what it was certified as
    (a finite sentinel also stays within the finite threat model, ``missing=False``).
    """
    v = np.array(v, dtype=np.float64, copy=True)
    v[v == NAN_CODE] = missing_value
    return v
