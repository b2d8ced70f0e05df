"""Shared fixtures-as-functions for the certify tests (small, seeded forests)."""
import numpy as np
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier


def toy_data(seed, n=120, d=5, n_classes=2):
    """Random data with a learnable signal; values rounded to 2 decimals so that
    thresholds are float64 midpoints that are not float32 numbers."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(0, 1, size=(n, d)), 2)
    score = X[:, 0] + X[:, 1] - X[:, 2] + 0.3 * rng.normal(size=n)
    if n_classes == 2:
        y = (score > 0.5).astype(int)
    else:
        y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y


def toy_forest(seed, n_trees=5, depth=3, kind="rf", n_classes=2, d=5):
    X, y = toy_data(seed, d=d, n_classes=n_classes)
    cls = RandomForestClassifier if kind == "rf" else ExtraTreesClassifier
    model = cls(n_estimators=n_trees, max_depth=depth, random_state=seed).fit(X[:80], y[:80])
    return model, X[80:], y[80:]
