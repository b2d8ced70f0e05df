"""Compile and cache fairlens's numba kernels once, when the Binder image is built.

``binder/postBuild`` runs this with the same ``NUMBA_CACHE_DIR`` that ``binder/start`` gives the
notebook server, so a student's first Run All of ``tutorials/00_start_here.ipynb`` loads the
compiled kernels from the cache instead of compiling them (numba compiles one machine-code
version per argument type, so this runs the four widgets and analyses headless, on small slices
of the same bundled data and with the same dtypes the notebook uses).

Run it by hand with ``python binder/warmup.py`` (prints the time per slice).
"""
from __future__ import annotations

import sys
import time
import warnings

import numpy as np


def _shuffle():
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


def _maft():
    from fairlens.datasets import load_adult
    from fairlens.maft import MAFTSession
    from fairlens.models import train_mlp

    census = load_adult(encoding="benchmark")
    census = census.subset(np.random.default_rng(0).choice(census.n_samples, 2000, replace=False))
    mlp = train_mlp(census, random_state=0)
    s = MAFTSession(mlp, census, protected=["sex"], n_seeds=5, n_local=5, background=False)
    s.start()
    s.wait()


def _testsgd():
    from fairlens.datasets import load_adult
    from fairlens.models import train_mlp
    from fairlens.testsgd import RuleSetBrowser, TestSGD

    people = load_adult()
    order = np.random.default_rng(0).permutation(people.n_samples)
    train, test = people.subset(order[:2000]), people.subset(order[2000:2500])
    model = train_mlp(train, random_state=0)
    try:
        tester = TestSGD(model, train, protected=["sex", "race"], sample_thr=100, max_samples=500,
                         random_state=0, binning="round")
    except TypeError:  # before the rename of sensitive= to protected=
        tester = TestSGD(model, train, sensitive=["sex", "race"], sample_thr=100, max_samples=500,
                         random_state=0, binning="round")
    b = RuleSetBrowser(tester.run(), test=test, mitigation_amounts=[20], background=False)
    b.wait()


def _certify():
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

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


SLICES = {"shuffle": _shuffle, "maft": _maft, "testsgd": _testsgd, "certify": _certify}


def main(argv=None):
    """Warm every slice (or those named on the command line); returns the exit status."""
    import matplotlib

    matplotlib.use("Agg")
    names = list(argv if argv else SLICES)
    failed = []
    for name in names:
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                SLICES[name]()
            print(f"warmup {name}: {time.perf_counter() - t0:.1f} s", flush=True)
        except Exception as exc:  # a failed warm-up only costs the student the compile time
            failed.append(name)
            print(f"warmup {name}: FAILED ({type(exc).__name__}: {exc})", file=sys.stderr, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
