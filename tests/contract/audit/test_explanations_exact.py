"""The audit's SHAP values (issue #33): Kernel SHAP over every coalition equals a brute-force Shapley
computation of the interventional game on the background, and compiles nothing."""
from __future__ import annotations

import itertools
import math

import numpy as np

from fairlens.shuffle import explain


def _brute_shapley(f, x, bg):
    """phi_j = sum over S of |S|!(d-|S|-1)!/d! (v(S+j) - v(S)), v(S) = mean_b f(x_S, b_rest)."""
    d = x.size

    def v(S):
        Z = bg.copy()
        Z[:, list(S)] = x[list(S)]
        return f(Z).mean()

    phi = np.zeros(d)
    for j in range(d):
        rest = [k for k in range(d) if k != j]
        for r in range(d):
            for S in itertools.combinations(rest, r):
                w = math.factorial(r) * math.factorial(d - r - 1) / math.factorial(d)
                phi[j] += w * (v(S + (j,)) - v(S))
    return phi


def test_enumerated_kernel_shap_is_the_exact_shapley_value():
    rng = np.random.default_rng(3)
    d = 7
    bg, X = rng.random((50, d)), rng.random((3, d))
    w = rng.normal(size=d)

    def f(Z):
        Z = np.asarray(Z, dtype=np.float64)
        return 1.0 / (1.0 + np.exp(-(np.tanh(Z @ w) + Z[:, 0] * Z[:, 1])))

    phi = explain(f, X, "kernel", background=bg, nsamples=2 ** d, random_state=0)
    ref = np.array([_brute_shapley(f, x, bg) for x in X])
    np.testing.assert_allclose(phi, ref, rtol=0, atol=1e-12)
    # efficiency: the values add up to f(x) - E f(background)
    np.testing.assert_allclose(phi.sum(axis=1), f(X) - f(bg).mean(), atol=1e-12)
