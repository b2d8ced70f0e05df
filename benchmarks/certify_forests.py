"""Benchmark of fairlens.certify: FLB, ELB, cascade and brute force on tree ensembles.

Prints, for a random forest and a Feature Partitioned Forest of about 100
trees on breast cancer, wine (class 1 against the rest) and a digits pair
(3 vs 8), at b = 1, 2, 3: accuracies (clean, FLB, ELB, exact), the share of
instances that reach brute force in the cascade, and the time of each method.
Then:

* the authors' setting: brute force on a 30-tree FPF over breast cancer's 114
  test rows at k = 1, 2, 3 (their code: 6 s, 83 s, 309 s), both pruned and as
  the literal enumeration (``prune=False``, k <= 2 unless ``--full``);
* the cascade on 1,000 test instances of a 100-tree forest at b = 2 (target < 5 s);
* numba against plain Python: the *same* brute-force kernel run with
  ``NUMBA_DISABLE_JIT=1`` in a subprocess on the same rows (target >= 50x).

Run:  PYTHONPATH=. python benchmarks/certify_forests.py [--quick] [--full]
All times exclude numba compilation (a warm-up call runs first).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def datasets():
    from sklearn.datasets import load_breast_cancer, load_digits, load_wine

    out = {}
    X, y = load_breast_cancer(return_X_y=True)
    out["breast_cancer"] = (X, y)
    X, y = load_wine(return_X_y=True)
    out["wine(1 vs rest)"] = (X, (y == 1).astype(int))
    X, y = load_digits(return_X_y=True)
    keep = (y == 3) | (y == 8)
    out["digits 3 vs 8"] = (X[keep], (y[keep] == 8).astype(int))
    return out


def split(X, y, seed=0):
    from sklearn.model_selection import train_test_split

    return train_test_split(X, y, test_size=0.2, random_state=seed, stratify=y)


def models(Xtr, ytr, b, n_trees=100, seed=0):
    from sklearn.ensemble import RandomForestClassifier

    from fairlens.certify import FeaturePartitionedForest

    rf = RandomForestClassifier(n_estimators=n_trees, random_state=seed).fit(Xtr, ytr)
    r = max(1, round(n_trees / (2 * b + 1)))
    fpf = FeaturePartitionedForest(budget=b, rounds=r, random_state=seed).fit(Xtr, ytr)
    return {"RF": rf, f"FPF(b={b},r={r})": fpf}


def timed(fn, *a, **k):
    t0 = time.perf_counter()
    out = fn(*a, **k)
    return out, time.perf_counter() - t0


PLAIN_SNIPPET = r"""
import json, sys, time, numpy as np
sys.path.insert(0, {root!r})
from fairlens.certify import flatten_forest
from fairlens.certify import _kernels as K
d = np.load({path!r}, allow_pickle=True)
ff = d["ff"].item()
t0 = time.perf_counter()
out = K.brute_kernel(*ff.arrays(), ff.n_classes, ff.rank, ff.values_ptr, ff.values, d["Xr"], d["y"],
                     d["rows"], int(d["budget"]), bool(d["prune"]), 0, 2**62)
print(json.dumps({{"seconds": time.perf_counter() - t0, "attackable": out[1].tolist()}}))
"""


def plain_python_brute(ff, Xr, y, rows, budget, prune=True):
    """Run the same brute-force kernel with NUMBA_DISABLE_JIT=1 in a subprocess."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "case.npz")
        np.savez(path, ff=np.array(ff, dtype=object), Xr=Xr, y=y, rows=rows, budget=budget, prune=prune)
        env = dict(os.environ, NUMBA_DISABLE_JIT="1")
        code = PLAIN_SNIPPET.format(root=ROOT, path=path)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="b <= 2, 50 trees, fewer plain-Python rows")
    parser.add_argument("--full", action="store_true", help="also the literal enumeration at k = 3")
    args = parser.parse_args(argv)

    import pandas as pd

    from fairlens.certify import FeaturePartitionedForest, certify, flatten_forest
    from fairlens.certify._flatten import check_X
    from fairlens.certify import _kernels as K

    pd.set_option("display.width", 200)
    pd.set_option("display.max_columns", 30)
    budgets = (1, 2) if args.quick else (1, 2, 3)
    n_trees = 50 if args.quick else 100

    # warm-up (compilation, or loading the numba cache)
    Xw, yw = datasets()["breast_cancer"]
    warm = FeaturePartitionedForest(rounds=2, random_state=0).fit(Xw, yw)
    for m in ("cascade", "brute"):
        certify(warm, Xw[:5], yw[:5], budget=2, method=m)
    certify(warm, Xw[:5], yw[:5], budget=2, method="brute", prune=False)

    print("== 1. accuracy under attack and time per method ==")
    rows = []
    plain_cases = []
    for name, (X, y) in datasets().items():
        Xtr, Xte, ytr, yte = split(X, y)
        for b in budgets:
            for mname, model in models(Xtr, ytr, b, n_trees=n_trees).items():
                ff = flatten_forest(model)
                cas, t_cas = timed(certify, ff, Xte, yte, budget=b, method="cascade")
                flb, t_flb = timed(certify, ff, Xte, yte, budget=b, method="flb")
                elb, t_elb = timed(certify, ff, Xte, yte, budget=b, method="elb")
                brute, t_brute = timed(certify, ff, Xte, yte, budget=b, method="brute")
                assert brute.accuracy == cas.accuracy
                rows.append({
                    "data": name, "model": mname, "trees": ff.n_trees, "b": b, "n_test": len(yte),
                    "acc_clean": cas.accuracy_clean, "acc_FLB": flb.accuracy, "acc_ELB": elb.accuracy,
                    "acc_exact": cas.accuracy, "share_to_brute": cas.n_brute / len(yte),
                    "t_FLB_s": t_flb, "t_ELB_s": t_elb, "t_brute_s": t_brute, "t_cascade_s": t_cas,
                })
                if name == "breast_cancer" and (b == 2 or (b == 3 and mname == "RF")):
                    plain_cases.append((f"{name} {mname} b={b}", ff, Xte, yte, b))
    print(pd.DataFrame(rows).round(4).to_string(index=False))

    print("\n== 2. the authors' setting: brute force, 30-tree FPF, breast cancer, 114 test rows ==")
    X, y = datasets()["breast_cancer"]
    Xtr, Xte, ytr, yte = split(X, y)
    fpf30 = FeaturePartitionedForest(budget=1, rounds=10, random_state=0).fit(Xtr, ytr)
    paper = {1: 6.0, 2: 83.0, 3: 309.0}
    rows = []
    for k in (1, 2, 3):
        res, t = timed(certify, fpf30, Xte, yte, budget=k, method="brute")
        row = {"k": k, "paper_s": paper[k], "pruned_s": t, "speedup_pruned": paper[k] / t,
               "acc_exact": res.accuracy}
        if k <= 2 or args.full:
            lit, tl = timed(certify, fpf30, Xte, yte, budget=k, method="brute", prune=False)
            assert lit.accuracy == res.accuracy
            row.update({"literal_s": tl, "speedup_literal": paper[k] / tl})
        casc, tc = timed(certify, fpf30, Xte, yte, budget=k, method="cascade")
        row.update({"cascade_s": tc, "to_brute": casc.n_brute})
        rows.append(row)
    print(pd.DataFrame(rows).round(4).to_string(index=False))

    print("\n== 3. cascade on 1,000 test instances, 100-tree forest, b = 2 ==")
    from sklearn.datasets import load_digits
    from sklearn.ensemble import RandomForestClassifier

    Xd, yd = load_digits(return_X_y=True)
    yd = (yd >= 5).astype(int)
    perm = np.random.default_rng(0).permutation(len(yd))
    Xd, yd = Xd[perm], yd[perm]
    rf = RandomForestClassifier(n_estimators=100, random_state=0).fit(Xd[:797], yd[:797])
    fpf = FeaturePartitionedForest(budget=2, rounds=20, random_state=0).fit(Xd[:797], yd[:797])
    for mname, model in (("RF(100)", rf), ("FPF(b=2,r=20)", fpf)):
        res, t = timed(certify, model, Xd[797:], yd[797:], budget=2, method="cascade")
        print(f"digits 0-4 vs 5-9, {mname}: {len(res.status)} instances in {t:.3f} s "
              f"(flb {res.timings.get('flb', 0):.3f}, elb {res.timings.get('elb', 0):.3f}, "
              f"brute {res.timings.get('brute', 0):.3f}); to brute force: {res.n_brute}; "
              f"acc clean {res.accuracy_clean:.3f}, FLB {res.accuracy_flb:.3f}, ELB {res.accuracy_elb:.3f}, "
              f"exact {res.accuracy_exact:.3f}")

    print("\n== 4. numba against plain Python, same brute-force kernel, same rows ==")
    max_rows = 10 if args.quick else 30
    for label, ff, Xte, yte, b in plain_cases:
        _, Xr = check_X(Xte, ff.n_features)
        yi = ff.encode_y(yte)
        n_rows = max_rows if b <= 2 else max_rows // 3  # b = 3 on a deep RF: ~0.2 s per row in plain Python
        rows_ = np.arange(min(n_rows, len(yte)), dtype=np.int64)
        out_nb, t_nb = timed(K.brute_kernel, *ff.arrays(), ff.n_classes, ff.rank, ff.values_ptr, ff.values,
                             Xr, yi, rows_, b, True, 0, 2**62)
        # repeat the numba run to get a stable time on short runs
        reps = max(1, int(0.5 / max(t_nb, 1e-6)))
        t0 = time.perf_counter()
        for _ in range(reps):
            K.brute_kernel(*ff.arrays(), ff.n_classes, ff.rank, ff.values_ptr, ff.values, Xr, yi, rows_, b, True, 0, 2**62)
        t_nb = (time.perf_counter() - t0) / reps
        plain = plain_python_brute(ff, Xr, yi, rows_, b)
        assert plain["attackable"] == out_nb[1].tolist()
        print(f"{label}: {len(rows_)} rows, numba {t_nb * 1e3:.2f} ms, plain Python {plain['seconds']:.2f} s, "
              f"ratio {plain['seconds'] / t_nb:.0f}x")


if __name__ == "__main__":
    main()
