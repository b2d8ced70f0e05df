"""Full audit of the census MLP (issue #20, item 6): every check at its default budget, time per check.

The census MLP is the reference network of the MAFT/EIDIG benchmarks (``fairlens.models.train_mlp`` on
UCI Adult in the benchmark encoding, bundled with fairlens; 32,561 rows, 12 features).  The audit runs
``fairlens.audit`` with all five checks and the defaults of ``fairlens.audit.AUDIT_DEFAULTS`` (MAFT
1000 seeds x 1000 local steps as in the paper, TestSGD with the paper's theta/error/confidence,
1000 bootstrap replicates, ...), at ``n_jobs=1``, and prints the time of each check.

By default the run has no time budget (``--time-budget 0``), so every check runs its full default budget
and the times show what the budgets cost; pass ``--time-budget 60`` to see the shared budget at work.
Goal (issue #20): under 60 s in total at ``n_jobs=1`` on the 2-core machine.

Usage::

    PYTHONPATH=. python benchmarks/audit.py [--protected sex race age] [--time-budget 0] [--n-jobs 1]
"""
from __future__ import annotations

import argparse
import os
import platform
import time
import warnings


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--protected", nargs="+", default=["sex", "race", "age"])
    ap.add_argument("--time-budget", type=float, default=0.0, help="seconds; 0 = no budget (default)")
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--random-state", type=int, default=0)
    args = ap.parse_args(argv)

    import pandas as pd

    import fairlens
    from fairlens.datasets import load_adult
    from fairlens.models import train_mlp

    census = load_adult(encoding="benchmark")
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = train_mlp(census, random_state=0)
    t_train = time.perf_counter() - t
    print(f"census: {census.n_samples:,} rows x {census.n_features} features; MLP trained in {t_train:.1f} s "
          f"(held-out accuracy {model.test_score_:.3f}; not part of the audit)")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load average {load:.1f} at start")

    t = time.perf_counter()
    report = fairlens.audit(model, census, protected=args.protected,
                            time_limit=None if args.time_budget <= 0 else args.time_budget,
                            n_jobs=args.n_jobs, random_state=args.random_state, progress=False)
    total = time.perf_counter() - t
    rows = [{"check": o.id, "status": o.status, "seconds": round(o.elapsed, 2),
             "findings": sum(1 for _ in o.findings)} for o in report.outcomes]
    rows.append({"check": "total (fairlens.audit call)", "status": "", "seconds": round(total, 2),
                 "findings": len(report.findings)})
    print(pd.DataFrame(rows).to_string(index=False))
    ind = next((o for o in report.outcomes if o.id == "individual"), None)
    if ind is not None and "rate_seconds" in ind.params:
        print(f"individual: discrimination rate on {ind.params['n_rate_measured']:,} rows "
              f"{ind.params['rate_seconds']:.1f} s, MAFT search {ind.params['maft_seconds']:.1f} s "
              f"({len(ind.result.instances):,} instances)")
    print()
    f = report.findings
    print(f[f["verdict"].isin(["fail", "warn"])].groupby(["check", "verdict"]).size().to_string())
    print(f"goal < 60 s at n_jobs={args.n_jobs}: {'met' if total < 60 else 'NOT met'} ({total:.1f} s)")


if __name__ == "__main__":
    main()
