"""Binder warm-up of the MAFT slice (the registry's ``warmup``, run by ``binder/warmup.py``)."""
from __future__ import annotations

import numpy as np


def warm():
    """Compile and cache the MAFT slice's numba kernels: run its widget and analyses headless on small
    slices of the bundled data, with the dtypes the tutorials use (numba compiles one version per type)."""
    # deferred: import time: the registry imports warm-up files without loading their slices
    from fairlens.datasets import load_adult
    from fairlens.maft import MAFTSession
    from fairlens.models import train_mlp

    census = load_adult(encoding="benchmark")
    census = census.subset(np.random.default_rng(0).choice(census.n_samples, 2000, replace=False))
    mlp = train_mlp(census, random_state=0)
    s = MAFTSession(mlp, census, protected=["sex"], n_seeds=5, n_local=5, background=False)
    s.start()
    s.wait()
