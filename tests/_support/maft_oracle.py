"""Independent re-check of reported instances (does not use fairlens.maft code).

Definition 2.1 literally: for each instance, enumerate every combination of the
protected attributes' values with itertools, score each candidate with its own
model call, and compare labels ``score > 0.5``.
"""
from __future__ import annotations

import itertools

import numpy as np


def _predict(model, x):
    x = np.asarray(x, dtype=float)[None, :]
    if hasattr(model, "predict_proba"):
        return float(model.predict_proba(x)[0, 1])
    return float(np.ravel(model(x))[0])


def is_discriminatory(model, x, prot_idx, bounds):
    ranges = [range(int(bounds[i][0]), int(bounds[i][1]) + 1) for i in prot_idx]
    y0 = _predict(model, x) > 0.5
    for comb in itertools.product(*ranges):
        xp = np.array(x, dtype=float)
        for i, v in zip(prot_idx, comb):
            xp[i] = v
        if np.array_equal(xp, x):
            continue
        if (_predict(model, xp) > 0.5) != y0:
            return True
    return False


def check_result(model, result, prot_idx, bounds):
    """Assert every reported instance is discriminatory, unique, inside the bounds,
    and that its counterpart differs only in protected attributes with another label."""
    X = result.instances
    assert len({tuple(r) for r in X}) == X.shape[0], "duplicate instances reported"
    B = np.asarray(bounds, dtype=float)
    assert np.all(X >= B[:, 0]) and np.all(X <= B[:, 1]), "instance outside the domain"
    free = np.setdiff1d(np.arange(X.shape[1]), prot_idx)
    for x, cp, s1, s2 in zip(X, result.counterparts, result.instance_scores, result.counterpart_scores):
        assert is_discriminatory(model, x, prot_idx, bounds)
        assert np.array_equal(x[free], cp[free]) and not np.array_equal(x, cp)
        assert (_predict(model, cp) > 0.5) != (_predict(model, x) > 0.5)
        assert np.isclose(_predict(model, x), s1) and np.isclose(_predict(model, cp), s2)
    assert result.n_global + result.n_local == X.shape[0]


def _oracle_readable(pipe, ds):
    good = list(pipe.classes_).index("good")
    return lambda X: pipe.predict_proba(ds.decode(np.atleast_2d(X)))[:, good]


def _recheck(score, ds, result, prot):
    """Definition 2.1 by brute force through ``score`` (an independent oracle)."""
    idx = [ds.index_of(p) for p in prot]
    grids = [np.arange(ds.bounds[i, 0], ds.bounds[i, 1] + 1) for i in idx]
    combos = np.array(np.meshgrid(*grids, indexing="ij")).reshape(len(idx), -1).T
    assert result.n_instances > 0
    X = result.instances
    assert len({tuple(r) for r in X}) == len(X)
    for x, cp in zip(X, result.counterparts):
        R = np.repeat(x[None, :], len(combos), axis=0)
        R[:, idx] = combos
        lab = score(R) > 0.5
        y0 = score(x) > 0.5
        assert np.any(lab != y0), "reported instance is not discriminatory"
        assert (score(cp) > 0.5) != y0
        free = np.setdiff1d(np.arange(X.shape[1]), idx)
        np.testing.assert_array_equal(x[free], cp[free])
