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


def bc_forest(seed, n_features=8, n_test=60):
    """A shallow random forest (max_features=1) on a random subset of breast
    cancer features: small enough for the literal references, varied enough
    that FLB, ELB and brute force each settle some instances."""
    from sklearn.datasets import load_breast_cancer

    Xb, yb = load_breast_cancer(return_X_y=True)
    rng = np.random.default_rng(seed)
    feats = rng.choice(Xb.shape[1], n_features, replace=False)
    idx = rng.permutation(len(yb))
    X, y = Xb[idx][:, feats], yb[idx]
    n_trees = int(rng.choice([9, 11, 15, 21]))
    depth = int(rng.integers(2, 4))
    model = RandomForestClassifier(n_estimators=n_trees, max_depth=depth, max_features=1,
                                   random_state=seed).fit(X[:300], y[:300])
    return model, X[300:300 + n_test], y[300:300 + n_test]


def bc_full_forest(seed, n_trees=21, depth=3, kind="rf"):
    """Shallow max_features=1 forest on all 30 breast cancer features: FLB, ELB
    and brute force each settle a good share of the 169 test rows at b = 2, 3."""
    from sklearn.datasets import load_breast_cancer

    Xb, yb = load_breast_cancer(return_X_y=True)
    idx = np.random.default_rng(0).permutation(len(yb))
    X, y = Xb[idx], yb[idx]
    cls = RandomForestClassifier if kind == "rf" else ExtraTreesClassifier
    model = cls(n_estimators=n_trees, max_depth=depth, max_features=1, random_state=seed).fit(X[:400], y[:400])
    return model, X[400:], y[400:]
