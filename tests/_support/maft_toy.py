"""Synthetic fixtures for the maft tests (no mirrored data needed)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd


@dataclass
class ToyDataset:
    """Minimal stand-in with the attributes of fairlens' Dataset the search uses."""

    X: np.ndarray
    y: np.ndarray
    bounds: np.ndarray
    feature_names: list
    protected: list = field(default_factory=list)
    name: str = "toy"

    def decode(self, X):
        return pd.DataFrame(np.asarray(X), columns=self.feature_names)

    def encode(self, frame):
        return frame[self.feature_names].apply(pd.to_numeric).to_numpy(dtype=np.float64)

    def index_of(self, f):
        return self.feature_names.index(f)


def make_toy(n=600, seed=0):
    rng = np.random.default_rng(seed)
    names = ["age", "sex", "race", "edu", "hours", "job"]
    hi = np.array([4, 1, 2, 9, 6, 5], dtype=float)
    X = np.floor(rng.random((n, 6)) * (hi + 1))
    z = 0.6 * X[:, 3] - 0.5 * X[:, 4] + 0.8 * X[:, 1] + 0.3 * X[:, 2] - 0.4 * X[:, 0] + 0.2 * X[:, 5] - 1.2
    y = (z + rng.normal(0, 0.8, n) > 0).astype(np.int64)
    B = np.stack([np.zeros(6), hi], axis=1)
    return ToyDataset(X, y, B, names, ["sex", "race"])


class SmoothModel:
    """Batch-invariant smooth scorer: every row's score is computed with
    element-wise operations and a per-row reduction only, so it does not depend on
    the other rows of the batch (needed to compare engines bit for bit)."""

    def __init__(self, seed=1, d=6):
        rng = np.random.default_rng(seed)
        self.w = rng.normal(0, 0.7, d)
        self.v = rng.normal(0, 0.5, d)
        self.b = -0.3

    def logit(self, X):
        X = np.asarray(X, dtype=np.float64)
        return (X * self.w).sum(axis=1) + 0.8 * np.sin((X * self.v).sum(axis=1)) + self.b

    def __call__(self, X):
        return 1.0 / (1.0 + np.exp(-self.logit(X)))

    def grad(self, X):
        """Analytic gradient of the probability."""
        X = np.asarray(X, dtype=np.float64)
        p = self(X)
        dz = self.w[None, :] + 0.8 * np.cos((X * self.v).sum(axis=1))[:, None] * self.v[None, :]
        return (p * (1 - p))[:, None] * dz
