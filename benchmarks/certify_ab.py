"""Old against new certify code, in one run: the same workloads, alternately, on the same machine.

Each repeat runs every workload once in a fresh subprocess per side (``PYTHONPATH`` = that
checkout), after a warm-up call that compiles (or loads) the numba kernels; the minimum over
repeats (the least disturbed run on a shared machine) and the median are reported, with the ratios
new / old.
Statuses are compared too: the two sides must give the same verdicts.

Workloads: the cascade of ``certify_forests.py`` section 3 (digits 0-4 vs 5-9, 1,000 test rows,
b = 2) for a 100-tree random forest and a FeaturePartitionedForest; brute force (soft vote) of a
30-tree random forest on breast cancer at b = 2; the cascade of ``certify_boosted.py`` (census,
200 depth-6 XGBoost and LightGBM trees, 100 test rows) at b = 1 and 2.

Run:  python benchmarks/certify_ab.py OLD_CHECKOUT NEW_CHECKOUT [--repeats 3]
(FAIRLENS_DATA_HOME must point at a dataset mirror if census is not cached.)
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time

import numpy as np


def _workloads():
    import numpy as np
    from sklearn.datasets import load_breast_cancer, load_digits
    from sklearn.ensemble import RandomForestClassifier

    from fairlens.certify import FeaturePartitionedForest, certify

    out = {}

    def run(name, model, X, y, **kw):
        certify(model, X[:5], y[:5], **kw)  # warm-up: compile or load the kernels
        t0 = time.perf_counter()
        res = certify(model, X, y, **kw)
        out[name] = {"seconds": time.perf_counter() - t0,
                     "status": hashlib.sha1(",".join(map(str, res.status)).encode()).hexdigest()[:12]}

    Xd, yd = load_digits(return_X_y=True)
    yd = (yd >= 5).astype(int)
    perm = np.random.default_rng(0).permutation(len(yd))
    Xd, yd = Xd[perm], yd[perm]
    rf = RandomForestClassifier(n_estimators=100, random_state=0).fit(Xd[:797], yd[:797])
    fpf = FeaturePartitionedForest(budget=2, rounds=20, random_state=0).fit(Xd[:797], yd[:797])
    run("digits RF(100) cascade b=2", rf, Xd[797:], yd[797:], budget=2)
    run("digits FPF(b=2,r=20) cascade b=2", fpf, Xd[797:], yd[797:], budget=2)
    Xb, yb = load_breast_cancer(return_X_y=True)
    rfb = RandomForestClassifier(n_estimators=30, max_depth=6, random_state=0).fit(Xb[:400], yb[:400])
    run("breast cancer RF(30) brute b=2", rfb, Xb[400:], yb[400:], budget=2, method="brute")
    try:
        import lightgbm as lgb
        import xgboost as xgb
    except ImportError:
        return out
    from fairlens.datasets import load_adult

    ds = load_adult()
    Xa, ya = np.asarray(ds.X, dtype=np.float64), np.asarray(ds.y).astype(int)
    p = np.random.default_rng(0).permutation(len(ya))
    Xtr, ytr, Xte, yte = Xa[p[:20000]], ya[p[:20000]], Xa[p[-100:]], ya[p[-100:]]
    xm = xgb.XGBClassifier(n_estimators=200, max_depth=6, learning_rate=0.1, n_jobs=1, random_state=0).fit(Xtr, ytr)
    lm = lgb.LGBMClassifier(n_estimators=200, max_depth=6, num_leaves=63, learning_rate=0.1, n_jobs=1,
                            random_state=0, verbose=-1).fit(Xtr, ytr)
    for b in (1, 2):
        run(f"census XGBoost(200) cascade b={b}", xm, Xte, yte, budget=b)
        run(f"census LightGBM(200) cascade b={b}", lm, Xte, yte, budget=b)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", nargs="?")
    ap.add_argument("new", nargs="?")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(_workloads()))
        return
    sides = {"old": os.path.abspath(args.old), "new": os.path.abspath(args.new)}
    best, status, samples = {}, {}, {}
    for r in range(args.repeats):
        for side, path in sides.items():
            env = dict(os.environ, PYTHONPATH=path, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
            res = json.loads(subprocess.run([sys.executable, os.path.abspath(__file__), "--worker"], env=env,
                                            check=True, capture_output=True, text=True).stdout.splitlines()[-1])
            for name, v in res.items():
                key = (name, side)
                best[key] = min(best.get(key, float("inf")), v["seconds"])
                samples.setdefault(key, []).append(v["seconds"])
                status.setdefault(key, v["status"])
            print(f"repeat {r + 1}/{args.repeats} {side} done", flush=True)
    names = sorted({n for n, _ in best}, key=lambda n: list(best).index((n, "old")))
    print(f"\n{'workload':40s} {'old min':>8s} {'new min':>8s} {'new/old':>8s} {'old med':>8s} {'new med':>8s} "
          f"{'new/old':>8s}  same verdicts")
    for n in names:
        o, w = best[(n, "old")], best[(n, "new")]
        om, wm = float(np.median(samples[(n, "old")])), float(np.median(samples[(n, "new")]))
        print(f"{n:40s} {o:8.3f} {w:8.3f} {w / o:8.2f} {om:8.3f} {wm:8.3f} {wm / om:8.2f}  "
              f"{status[(n, 'old')] == status[(n, 'new')]}")


if __name__ == "__main__":
    main()
