"""Binder warm-up of the TestSGD slice (the registry's ``warmup``, run by ``binder/warmup.py``)."""
from __future__ import annotations

import numpy as np


def warm():
    """Compile and cache the TestSGD slice's numba kernels: run its widget and analyses headless on small
    slices of the bundled data, with the dtypes the tutorials use (numba compiles one version per type)."""
    # deferred: import time: the registry imports warm-up files without loading their slices
    from fairlens.datasets import load_adult
    from fairlens.models import train_mlp
    from fairlens.testsgd import RuleSetBrowser, TestSGD

    people = load_adult()
    order = np.random.default_rng(0).permutation(people.n_samples)
    train, test = people.subset(order[:2000]), people.subset(order[2000:2500])
    model = train_mlp(train, random_state=0)
    tester = TestSGD(model, train, protected=["sex", "race"], sample_thr=100, max_samples=500, random_state=0,
                     binning="round")
    b = RuleSetBrowser(tester.run(), test=test, mitigation_amounts=[20], background=False)
    b.wait()
