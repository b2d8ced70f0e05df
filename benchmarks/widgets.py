"""Headless control-to-update times of the four widgets (cached and uncached).

Each widget is built on bundled data, then driven through its ``.controls``:
the time from setting a control to ``wait()`` returning (every view redrawn,
PNGs rendered) is measured. *uncached*: a value never shown before (the core
computes); *cached*: a value shown before (only the redraw). Medians over a
few changes. The real-browser figures (comm round trips included) are
printed by ``pytest -m browser tests/browser -s``.

Run: ``python benchmarks/widgets.py``
"""
import statistics
import time
import warnings

import numpy as np

warnings.filterwarnings("ignore")


def timed(w, action):
    t0 = time.perf_counter()
    action()
    w.wait()
    return time.perf_counter() - t0


def report(name, uncached, cached):
    def fmt(ts):
        return f"median {1e3 * statistics.median(ts):7.0f} ms (n={len(ts)})" if ts else "n/a"

    print(f"{name:<44} uncached {fmt(uncached)}   cached {fmt(cached)}")


def setv(w, name, value):
    return lambda: setattr(w.controls[name], "value", value)


def shuffle():
    from fairlens.datasets import load_admission
    from fairlens.shuffle import ShuffleAttackExplorer

    adm = load_admission(version="1")
    cols = ["GRE Score", "TOEFL Score", "University Rating", "Research"]
    X = adm.X[:, [adm.index_of(c) for c in cols]].copy()
    lo, hi = X[:, :3].min(0), X[:, :3].max(0)
    X[:, :3] = (X[:, :3] - lo) / (hi - lo)
    w = ShuffleAttackExplorer(lambda A: np.asarray(A, float)[:, :3].mean(1), X, protected="Research",
                              favoured=1, y=adm.y, feature_names=cols)
    w.wait()
    unc = [timed(w, setv(w, "attack", a)) for a in ("dominance", "mixing")]
    unc += [timed(w, setv(w, "p", p)) for p in (0.3, 0.5, 0.7)]
    cac = [timed(w, setv(w, "p", p)) for p in (0.3, 0.5, 0.7, 0.3)]
    report("ShuffleAttackExplorer (attack / p)", unc, cac)


def maft():
    from fairlens.datasets import load_adult
    from fairlens.maft import MAFTSession
    from fairlens.models import train_mlp

    census = load_adult(encoding="benchmark")
    census = census.subset(np.random.default_rng(0).choice(census.n_samples, 4000, replace=False))
    mlp = train_mlp(census, random_state=0)
    s = MAFTSession(mlp, census, protected=["sex"], n_seeds=20, n_local=20)
    s.wait()
    unc = [timed(s, lambda: s.controls["start"].click())]
    cac = [timed(s, lambda: s.controls["start"].click()) for _ in range(3)]
    report("MAFTSession (Start; cached = same parameters)", unc, cac)


def testsgd():
    from fairlens.datasets import load_adult
    from fairlens.models import train_mlp
    from fairlens.testsgd import RuleSetBrowser, TestSGD

    people = load_adult()
    people = people.subset(np.random.default_rng(0).choice(people.n_samples, 6000, replace=False))
    m = train_mlp(people, random_state=0)
    rep = TestSGD(m, people, protected=["sex", "race"], sample_thr=200, max_samples=2000, random_state=0).run()
    b = RuleSetBrowser(rep)
    b.wait()
    vals = [v for _, v in b.controls["select"].options][:4]
    unc = [timed(b, setv(b, "select", v)) for v in vals[1:]]
    cac = [timed(b, setv(b, "select", v)) for v in vals]
    unc += [timed(b, lambda: b.controls["reestimate"].click())]
    report("RuleSetBrowser (select; uncached + re-estimate)", unc, cac)


def certify():
    from sklearn.ensemble import RandomForestClassifier

    from fairlens.certify import CoverVisualizer
    from fairlens.datasets import load_breast_cancer

    bc = load_breast_cancer()
    rf = RandomForestClassifier(n_estimators=20, max_depth=4, random_state=0).fit(bc.X[:450], bc.y[:450])
    w = CoverVisualizer(rf, bc.X[450:], bc.y[450:], budget=1, feature_names=bc.feature_names)
    w.wait()
    unc = [timed(w, setv(w, "index", i)) for i in (1, 2, 3, 4)]
    unc += [timed(w, setv(w, "budget", 2))]
    cac = [timed(w, setv(w, "budget", 1))] + [timed(w, setv(w, "index", i)) for i in (1, 2, 3)]
    report("CoverVisualizer (instance / budget)", unc, cac)


if __name__ == "__main__":
    for fn in (shuffle, certify, testsgd, maft):
        t0 = time.perf_counter()
        fn()
        print(f"    ({fn.__name__}: set-up and runs {time.perf_counter() - t0:.1f} s)")
