"""Fixtures for the TestSGD tests: a small synthetic table with readable categories."""
from types import SimpleNamespace

import numpy as np
import pytest


def make_toy(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    gender = rng.integers(0, 2, n)
    race = rng.choice(4, n, p=[0.55, 0.2, 0.15, 0.1])
    age = np.clip(np.round(rng.normal(42, 15, n)), 15, 95)
    edu = rng.integers(0, 10, n)
    hours = np.round(rng.uniform(0, 1, n), 2)
    X = np.column_stack([gender, race, age, edu, hours]).astype(float)
    y = ((gender == 1) & (age >= 40) | (edu >= 8)).astype(np.int64)
    return SimpleNamespace(
        name="toy",
        X=X,
        y=y,
        feature_names=["gender", "race", "age", "education", "hours"],
        feature_types=["categorical", "categorical", "integer", "integer", "continuous"],
        bounds=np.array([[0, 1], [0, 3], [10, 110], [0, 9], [0, 1]], dtype=float),
        categories={"gender": {0: "female", 1: "male"},
                    "race": {0: "White", 1: "Black", 2: "Asian-Pac-Islander", 3: "Other"}},
        protected=["gender", "race", "age"],
    )


class PlantedModel:
    """Hand-built classifier: favourable iff (male and age >= 40) or education >= 8,
    plus a parity term on education so that rates are not all 0/1."""

    def predict_proba(self, X):
        X = np.asarray(X, dtype=float)
        fav = ((X[:, 0] == 1) & (X[:, 2] >= 40)) | (X[:, 3] >= 8)
        fav = fav ^ ((X[:, 3] % 3 == 0) & (X[:, 4] > 0.5))
        p = np.where(fav, 0.9, 0.1)
        return np.column_stack([1 - p, p])


@pytest.fixture
def toy():
    return make_toy()


@pytest.fixture
def planted():
    return PlantedModel()
