"""Binder warm-up of the shuffling-attack slice (the registry's ``warmup``, run by ``binder/warmup.py``)."""
from __future__ import annotations

import numpy as np


def warm():
    """Compile and cache the shuffling-attack slice's numba kernels: run its widget and analyses headless on small
    slices of the bundled data, with the dtypes the tutorials use (numba compiles one version per type)."""
    # deferred: import time: the registry imports warm-up files without loading their slices
    from fairlens.datasets import load_admission
    from fairlens.shuffle import ShuffleAttackExplorer, ShuffledModel, batch_consistency

    adm = load_admission(version="1")
    cols = ["GRE Score", "TOEFL Score", "University Rating", "Research"]
    X = adm.X[:, [adm.index_of(c) for c in cols]].copy()
    lo, hi = X[:, :3].min(0), X[:, :3].max(0)
    X[:, :3] = (X[:, :3] - lo) / (hi - lo)

    def score(A):
        return np.asarray(A, dtype=float)[:, :3] @ np.full(3, 1 / 3)

    w = ShuffleAttackExplorer(score, X, protected="Research", favoured=1, y=adm.y, feature_names=cols,
                              background=False)
    c = w.controls
    for attack in ("dominance", "mixing", "swapping"):
        c["attack"].value = attack
    c["swapping_rule"].value = "once"
    c["bottom_attack"].value = "dominance"
    w.wait()
    batch_consistency(ShuffledModel(score, protected="Research", favoured=1, attack="dominance",
                                    feature_names=cols, random_state=0), X, random_state=0)
