"""Coverage of the audit's intervals and error rates of its gate, by simulation against known truths.

Issue #33, item 8.  Two tables:

1. **Coverage.**  Populations whose group rates are known exactly (balanced groups, a minority group
   of 35 rows, four groups, a 2 x 2 intersection; fair and unfair), sampled ``--reps`` times at
   n = 200 / 1,000 / 5,000 rows (group sizes fixed, labels and predictions drawn).  For every
   interval of :func:`fairlens.metrics.group_metrics` -- each group's rates, the range and ratio
   measures, every signed "group against everyone else" comparison, and the one shown as the finding
   -- the share of replications whose interval contains the true value, and its median width.  The
   same samples get the percentile bootstrap that fairlearn's ``MetricFrame(n_boot=...)`` computes
   (implemented as multinomial redraws of the cell counts, which have the row bootstrap's
   distribution), and, on the first ``--fairlearn-reps`` replications, fairlearn itself.
   The individual discrimination rate (a binomial proportion, Wilson) is simulated directly.

2. **Gate.**  Sex (50/50), race (50/30/20) and age (50/50) and their four intersections: seven
   demographic parity findings judged together for ``demographic_parity_difference>0.1`` (Holm),
   under the burdens "violation" and "compliance", for an exactly fair model and for a model whose
   true gap is 0.15 on sex alone; the old point-estimate comparison is shown beside them.  Printed:
   how often each model fails each gate, and the power an oracle test (one comparison, known
   variance, no multiplicity) would have -- the ceiling any valid test is under.

Usage::

    PYTHONPATH=. python benchmarks/audit_statistics.py              # 300 replications (about 40 min)
    PYTHONPATH=. python benchmarks/audit_statistics.py --reps 60    # a quick look

The reduced version in ``tests/contract/audit/test_statistics.py`` runs the same code with few replications.
"""
from __future__ import annotations

import argparse
import itertools
import math
import os
import platform
import time

import numpy as np
import pandas as pd

SIZES = (200, 1000, 5000)

#: Populations for the coverage table: ``{name: (attributes, cell parameters)}``; each attribute is
#: ``(name, groups, shares)`` (a share may be an int: that many rows whatever n); cell parameters map
#: a tuple of groups to ``(base rate, true positive rate, false positive rate)`` (default FAIR).
FAIR = (0.4, 0.7, 0.2)                       # selection rate 0.4 * 0.7 + 0.6 * 0.2 = 0.40
LOW = (0.4, 0.6, 0.1833333333333333)         # selection rate 0.35
HIGH = (0.4, 0.8, 0.3)                       # selection rate 0.50
SETTINGS = {
    "2 groups, fair": ([("A", ("a", "b"), (0.5, 0.5))], {}),
    "2 groups, gap 0.15": ([("A", ("a", "b"), (0.5, 0.5))], {("a",): HIGH, ("b",): LOW}),
    "minority of 35 rows, fair": ([("A", ("a", "b", "m"), (0.6, None, 35))], {}),
    "minority of 35 rows, gap": ([("A", ("a", "b", "m"), (0.6, None, 35))], {("m",): (0.4, 0.5, 0.1)}),
    "4 groups, fair": ([("A", ("a", "b", "c", "d"), (0.25, 0.25, 0.25, 0.25))], {}),
    "2 x 2 intersection, fair": ([("A", ("a", "b"), (0.5, 0.5)), ("B", ("x", "y"), (0.6, 0.4))], {}),
    "2 x 2 intersection, gap": ([("A", ("a", "b"), (0.5, 0.5)), ("B", ("x", "y"), (0.6, 0.4))],
                                {("a", "x"): HIGH, ("a", "y"): HIGH, ("b", "x"): LOW, ("b", "y"): FAIR}),
}


# -------------------------------------------------------------------------------- populations
def cell_sizes(attrs, n):
    """Rows per finest cell (attributes independent; an int share is a fixed number of rows)."""
    per_attr = []
    for _, groups, shares in attrs:
        fixed = {g: s for g, s in zip(groups, shares) if isinstance(s, int)}
        free = [g for g, s in zip(groups, shares) if not isinstance(s, int)]
        left = 1.0 - sum(s for s in shares if isinstance(s, float))
        frac = {g: (s if isinstance(s, float) else left / max(1, sum(1 for t in shares if t is None)))
                for g, s in zip(groups, shares) if g in free}
        per_attr.append((groups, fixed, frac))
    sizes = {}
    for combo in itertools.product(*[a[1] for a in attrs]):
        share, fixed_rows = 1.0, None
        for (_groups, fixed, frac), g in zip(per_attr, combo):
            if g in fixed:
                fixed_rows = fixed[g]
            else:
                share *= frac[g]
        sizes[combo] = fixed_rows if fixed_rows is not None else share
    n_fixed = sum(v for v in sizes.values() if isinstance(v, int))
    out = {k: (v if isinstance(v, int) else int(round(v * (n - n_fixed)))) for k, v in sizes.items()}
    return out


def draw(attrs, params, n, rng):
    """One stratified sample: ``(y, pred, protected DataFrame, sizes)``."""
    sizes = cell_sizes(attrs, n)
    ys, ps, cols = [], [], {a[0]: [] for a in attrs}
    for combo, m in sizes.items():
        base, tpr, fpr = params.get(combo) or params.get(combo[:1]) or FAIR
        y = (rng.random(m) < base).astype(np.int64)
        p = (rng.random(m) < np.where(y == 1, tpr, fpr)).astype(np.int64)
        ys.append(y)
        ps.append(p)
        for (name, _, _), g in zip(attrs, combo):
            cols[name].append(np.full(m, g, dtype=object))
    return (np.concatenate(ys), np.concatenate(ps), pd.DataFrame({k: np.concatenate(v) for k, v in cols.items()}),
            sizes)


def true_rates(attrs, params, sizes, attr_set):
    """Expected counts per group of ``attr_set``: rows, positives, negatives, selected, TP, FP."""
    idx = [[a[0] for a in attrs].index(x) for x in attr_set]
    out = {}
    for combo, m in sizes.items():
        base, tpr, fpr = params.get(combo) or params.get(combo[:1]) or FAIR
        key = tuple(combo[i] for i in idx)
        acc = out.setdefault(key, np.zeros(6))
        acc += m * np.array([1.0, base, 1 - base, base * tpr + (1 - base) * fpr, base * tpr, (1 - base) * fpr])
    return out


def _label(attr_set, key):
    return key[0] if len(attr_set) == 1 else " & ".join(f"{a}={v}" for a, v in zip(attr_set, key))


# ------------------------------------------------------------------------------------ coverage
def _range_of(rate, el, r):
    v = [rate[b][r] for b in el[r]]
    return (max(v) - min(v)) if len(v) >= 2 else math.nan


def _rest_rate(T, lab, b, members, what):
    """True rate of everyone compared except ``b`` (expected counts of the other groups)."""
    others = [lab[o] for o in members if o != b]
    rows = sum(T[k][0] for k in others)
    if what == "selection_rate":
        return sum(T[k][3] for k in others) / rows
    if what == "true_positive_rate":
        return sum(T[k][4] for k in others) / sum(T[k][1] for k in others)
    return sum(T[k][5] for k in others) / sum(T[k][2] for k in others)


def _signed_truth(m, rate, T, lab, b, members):
    rest = lambda what: _rest_rate(T, lab, b, members, what)  # noqa: E731
    if m == "statistical_parity_difference":
        return rate[b]["selection_rate"] - rest("selection_rate")
    if m == "disparate_impact":
        return rate[b]["selection_rate"] / rest("selection_rate")
    if m == "true_positive_rate_difference":
        return rate[b]["true_positive_rate"] - rest("true_positive_rate")
    return 0.5 * (rate[b]["true_positive_rate"] - rest("true_positive_rate")
                  + rate[b]["false_positive_rate"] - rest("false_positive_rate"))


def truths(res, attrs, params, sizes):
    """True value of every interval of ``res`` (the groups compared are those the result compared)."""
    from fairlens._groupstats import GROUP_MEASURES

    names = [a[0] for a in attrs]
    sets = [s for k in range(1, len(names) + 1) for s in itertools.combinations(names, k)]
    out = {}
    for attr_set in sets:
        aname = " & ".join(attr_set)
        T = true_rates(attrs, params, sizes, attr_set)
        g = res.groups[res.groups["attribute"] == aname].set_index("group")
        lab = {_label(attr_set, k): k for k in T}
        rate = {}
        for lb, k in lab.items():
            rows, pos, neg, sel, tp, fp = T[k]
            rate[lb] = {"selection_rate": sel / rows, "true_positive_rate": tp / pos,
                        "false_positive_rate": fp / neg, "positive_predictive_value": tp / sel,
                        "accuracy": (tp + (neg - fp)) / rows}
            for r, v in rate[lb].items():
                out[("rate", aname, lb, r)] = v
        el = {"selection_rate": [b for b in lab if g.loc[b, "n"] >= 30],
              "true_positive_rate": [b for b in lab if g.loc[b, "n_positive"] >= 30],
              "false_positive_rate": [b for b in lab if g.loc[b, "n_negative"] >= 30]}
        sel = [rate[b]["selection_rate"] for b in el["selection_rate"]]
        out[("measure", aname, "demographic_parity_difference")] = _range_of(rate, el, "selection_rate")
        out[("measure", aname, "demographic_parity_ratio")] = (min(sel) / max(sel)) if len(sel) >= 2 else math.nan
        out[("measure", aname, "equal_opportunity_difference")] = _range_of(rate, el, "true_positive_rate")
        out[("measure", aname, "equalized_odds_difference")] = max(_range_of(rate, el, "true_positive_rate"),
                                                                  _range_of(rate, el, "false_positive_rate"))
        for m, (_, _, kind, rates) in GROUP_MEASURES.items():
            if not kind.startswith("signed"):
                continue
            members = set(el[rates[0]])
            for r in rates[1:]:
                members &= set(el[r])
            if len(members) < 2:
                continue
            for b in members:
                out[("contrast", aname, m, b)] = _signed_truth(m, rate, T, lab, b, members)
    return out


def bootstrap_ci(y, pred, prot, attr, rng, B=1000, conf=0.95):
    """fairlearn's percentile bootstrap of max - min and min / max selection rate (rows resampled with
    replacement, as ``MetricFrame(n_boot=B)``), by multinomial redraws of the cell counts."""
    codes, _ = pd.factorize(prot[attr], sort=True)
    G = codes.max() + 1
    cells = np.bincount(codes * 2 + pred, minlength=2 * G).astype(float)
    draws = rng.multinomial(len(y), cells / cells.sum(), size=B).reshape(B, G, 2)
    n = draws.sum(2)
    with np.errstate(invalid="ignore", divide="ignore"):
        sel = draws[:, :, 1] / n
    dpd = np.nanmax(sel, 1) - np.nanmin(sel, 1)
    dpr = np.nanmin(sel, 1) / np.nanmax(sel, 1)
    a = (1 - conf) / 2
    return {"demographic_parity_difference": tuple(np.nanquantile(dpd, [a, 1 - a])),
            "demographic_parity_ratio": tuple(np.nanquantile(dpr, [a, 1 - a]))}


def fairlearn_ci(y, pred, prot, attr, seed, B=200, conf=0.95):
    """fairlearn's own ``MetricFrame`` bootstrap intervals of the difference and ratio of selection rates."""
    from fairlearn.metrics import MetricFrame, selection_rate

    a = (1 - conf) / 2
    mf = MetricFrame(metrics=selection_rate, y_true=y, y_pred=pred, sensitive_features=prot[attr],
                     n_boot=B, ci_quantiles=[a, 1 - a], random_state=seed)
    return {"demographic_parity_difference": tuple(mf.difference_ci()),
            "demographic_parity_ratio": tuple(mf.ratio_ci())}


def coverage(settings=None, sizes=SIZES, reps=300, seed=0, fairlearn_reps=0, progress=True):
    """Coverage and median width of every interval, per setting and n (a long DataFrame)."""
    from fairlens.metrics import group_metrics

    rows = []
    for name, (attrs, params) in (settings or SETTINGS).items():
        for n in sizes:
            t0 = time.perf_counter()
            rng = np.random.default_rng([seed, n, sum(map(ord, name))])
            hits = {}
            for rep in range(reps):
                y, pred, prot, sz = draw(attrs, params, n, rng)
                res = group_metrics(y, pred, protected=prot)
                tr = truths(res, attrs, params, sz)
                recs = []
                for _, g in res.groups.iterrows():
                    for r in ("selection_rate", "true_positive_rate", "false_positive_rate",
                              "positive_predictive_value", "accuracy"):
                        recs.append((("rate", g["attribute"], g["group"], r), f"rate: {r}", g[r + "_low"],
                                     g[r + "_high"]))
                for _, m in res.measures.iterrows():
                    if isinstance(m["group"], str):   # the signed finding: the contrast it shows
                        key = ("contrast", m["attribute"], m["measure"], m["group"])
                    else:
                        key = ("measure", m["attribute"], m["measure"])
                    recs.append((key, f"finding: {m['measure']}", m["ci_low"], m["ci_high"]))
                for _, c in res.contrasts.iterrows():
                    recs.append((("contrast", c["attribute"], c["measure"], c["group"]),
                                 f"each group vs rest: {c['measure']}", c["ci_low"], c["ci_high"]))
                single = attrs[0][0]
                boot = bootstrap_ci(y, pred, prot, single, rng)
                for m, (lo, hi) in boot.items():
                    recs.append((("measure", single, m), f"bootstrap (fairlearn's method): {m}", lo, hi))
                if rep < fairlearn_reps:
                    for m, (lo, hi) in fairlearn_ci(y, pred, prot, single, seed + rep).items():
                        recs.append((("measure", single, m), f"fairlearn MetricFrame bootstrap: {m}", lo, hi))
                for key, label, lo, hi in recs:
                    truth = tr.get(key, math.nan)
                    if not (np.isfinite(truth) and np.isfinite(lo) and np.isfinite(hi)):
                        continue
                    h = hits.setdefault(label, [0, 0, [], 0])
                    h[0] += bool(lo - 1e-12 <= truth <= hi + 1e-12)
                    h[1] += 1
                    h[2].append(hi - lo)
                    what = key[3] if key[0] == "rate" else key[2]
                    ideal = 1.0 if ("ratio" in what or "impact" in what) else 0.0
                    h[3] += bool(key[0] != "rate" and abs(truth - ideal) < 1e-12)
            for label, (k, m, widths, at_ideal) in hits.items():
                rows.append({"setting": name, "n": n, "interval": label, "coverage": k / m, "intervals": m,
                             "at_parity": at_ideal / m, "median_width": float(np.median(widths))})
            if progress:
                print(f"  {name}, n={n}: {reps} replications in {time.perf_counter() - t0:.1f} s", flush=True)
    return pd.DataFrame(rows)


def wilson_coverage(reps=2000, seed=0):
    """Coverage of the individual discrimination rate's Wilson interval (k of n rows discriminated)."""
    from fairlens import _stats

    rng = np.random.default_rng(seed)
    rows = []
    z = float(_stats.z_of(0.975))
    for n in (200, 1000, 10000):
        for p in (0.0, 0.01, 0.05, 0.2, 0.5):
            k = rng.binomial(n, p, size=reps)
            lo, hi = _stats.wilson(k, n, z)
            rows.append({"n": n, "true rate": p, "coverage": float(np.mean((lo <= p) & (p <= hi))),
                         "median_width": float(np.median(hi - lo))})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------- gate
GATE_ATTRS = [("sex", ("female", "male"), (0.5, 0.5)), ("race", ("r1", "r2", "r3"), (0.5, 0.3, 0.2)),
              ("age", ("young", "old"), (0.5, 0.5))]


def gate_draw(n, gap, rng):
    """Simple random sample of the gate population: selection rate 0.4 for everyone, or 0.325 for women
    and 0.475 for men (a true demographic parity difference of ``gap`` on sex)."""
    cols = {}
    for name, groups, shares in GATE_ATTRS:
        cols[name] = rng.choice(np.asarray(groups, dtype=object), size=n, p=shares)
    rate = np.where(cols["sex"] == "female", 0.4 - gap / 2, 0.4 + gap / 2)
    y = rng.integers(0, 2, n)
    pred = (rng.random(n) < rate).astype(np.int64)
    return y, pred, pd.DataFrame(cols)


def gate_once(y, pred, prot, threshold=0.1, confidence=0.95):
    """``{burden: gate failed?}`` for ``demographic_parity_difference>threshold`` over the 7 findings."""
    from fairlens.audit._gate import Condition, decide, gate_outcome
    from fairlens.metrics import group_metrics

    res = group_metrics(y, pred, protected=prot, confidence=confidence)
    cond = Condition("demographic_parity_difference", ">", threshold, f"demographic_parity_difference>{threshold}")
    rows = res.measures[res.measures["measure"] == "demographic_parity_difference"]
    entries = [{"value": r["value"], "cond": cond, "how": "test",
                "test": (lambda c, a=r["attribute"]: res.test(c.measure, a, c.op, c.value))}
               for _, r in rows.iterrows()]
    out = {}
    for burden in ("violation", "compliance", "estimate"):
        verdicts = [d["verdict"] for d in decide(entries, burden=burden, confidence=confidence)]
        passed, _ = gate_outcome(verdicts, burden)
        out[burden] = passed is False or passed is None
    return out, len(entries)


def gate_rates(sizes=SIZES, reps=300, seed=0, gaps=(0.0, 0.15), progress=True):
    """How often each model fails each gate."""
    rows = []
    for gap in gaps:
        for n in sizes:
            t0 = time.perf_counter()
            rng = np.random.default_rng([seed, n, int(gap * 1000)])
            fails = {"violation": 0, "compliance": 0, "estimate": 0}
            m = 0
            for _ in range(reps):
                out, m = gate_once(*gate_draw(n, gap, rng))
                for k, v in out.items():
                    fails[k] += v
            se = math.sqrt(2 * 0.4 * 0.6 / (n / 2)) if gap == 0 else math.sqrt(
                (0.325 * 0.675 + 0.475 * 0.525) / (n / 2))
            oracle = (1 - _phi(1.959963984540054 - (gap - 0.1) / se)) if gap > 0.1 else float("nan")
            rows.append({"true gap on sex": gap, "n": n, "findings": m,
                         "fails, evidence of violation": fails["violation"] / reps,
                         "fails, evidence of compliance": fails["compliance"] / reps,
                         "fails, point estimate (before)": fails["estimate"] / reps,
                         "oracle power (one test, 2.5%)": oracle})
            if progress:
                print(f"  gate, gap {gap}, n={n}: {reps} replications in {time.perf_counter() - t0:.1f} s", flush=True)
    return pd.DataFrame(rows)


def _phi(x):
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


# ----------------------------------------------------------------------------------------- main
def summarise(cov):
    """Coverage per interval kind: the worst setting and n, overall and where the truth is at parity."""
    g = cov.groupby("interval")
    return pd.DataFrame({"lowest coverage": g["coverage"].min(), "highest coverage": g["coverage"].max(),
                         "median width": g["median_width"].median()}).sort_index()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--fairlearn-reps", type=int, default=20,
                    help="replications that also run fairlearn's MetricFrame bootstrap (slow: ~20 s each)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", choices=("coverage", "gate"), default=None)
    args = ap.parse_args(argv)
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 500)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load average {load:.1f}; "
          f"{args.reps} replications per setting")
    if args.only in (None, "coverage"):
        print("\n== 1. Coverage of the 95% intervals (share of replications containing the true value) ==")
        cov = coverage(reps=args.reps, seed=args.seed, fairlearn_reps=args.fairlearn_reps)
        wide = cov.pivot_table(index=["setting", "interval"], columns="n", values="coverage")
        print(wide.round(3).to_string())
        print("\nmedian width:")
        print(cov.pivot_table(index=["setting", "interval"], columns="n", values="median_width").round(3).to_string())
        print("\nsummary over settings and n:")
        print(summarise(cov).round(3).to_string())
        print("\nindividual discrimination rate (Wilson):")
        print(wilson_coverage(seed=args.seed).round(3).to_string(index=False))
    if args.only in (None, "gate"):
        print("\n== 2. The gate demographic_parity_difference>0.1 over sex, race, age and their intersections ==")
        print(gate_rates(reps=args.reps, seed=args.seed).round(3).to_string(index=False))


if __name__ == "__main__":
    main()
