"""Binder warm-up of the certification slice (the registry's ``warmup``, run by ``binder/warmup.py``)."""
from __future__ import annotations


def warm():
    """Compile and cache the certification slice's numba kernels: run its widget and analyses headless on small
    slices of the bundled data, with the dtypes the tutorials use (numba compiles one version per type)."""
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

    # deferred: import time: the registry imports warm-up files without loading their slices
    from fairlens.certify import CoverVisualizer, certify
    from fairlens.datasets import load_breast_cancer

    bc = load_breast_cancer()
    X, y = bc.X[:120], bc.y[:120]
    rf = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0).fit(X, y)
    certify(rf, X[:20], y[:20], budget=1)
    v = CoverVisualizer(rf, X[:20], y[:20], budget=1, max_budget=2, feature_names=bc.feature_names,
                        background=False)
    v.compute_summary(block=True)
    gb = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0).fit(X, y)
    certify(gb, X[:10], y[:10], budget=1)
