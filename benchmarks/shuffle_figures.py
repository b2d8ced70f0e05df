"""Figures 3 and 4 of "Fooling SHAP with Output Shuffling Attacks": why fairlens's numbers differ.

Issue 16, item 6. The paper reports that

* Figure 3 (diabetes, hybrid attacks): an auditor who rejects a model whose protected feature
  is "in the top-10 ranks or higher than 0.05" in SHAP score catches only the Dom+Mix model;
* Figure 4 (German credit, Dominance on Gender, f = loan rate only): attacking all data puts
  Gender 1st for 67.1 % of applicants; attacking the top 15 % puts it 1st / 2nd / 3rd for
  1.7 / 25.8 / 13.7 %.

This script re-runs both experiments while changing one factor at a time -- the Mixing rule,
the auditor's rule (AND / OR), the background size, the explainer (shap's default Explainer =
permutation for > 10 features, KernelSHAP), the honest scorer's resolution (4 tied levels,
a binary threshold as in Slack et al. 2020, continuous), and how tied attributions are ranked
-- and prints one line per setting.  For Figure 4 it also prints, per setting, the share of women
and of men with Gender ranked 1st (the attack on all data) and whether each of the paper's six
numbers lies within two binomial standard errors of ours ("match") or not ("differ").
All data are bundled with fairlens.

Usage::

    PYTHONPATH=. python benchmarks/shuffle_figures.py              # both figures
    PYTHONPATH=. python benchmarks/shuffle_figures.py --fig 4 --n-explain-ger 1000   # tutorial 01's full size
    PYTHONPATH=. python benchmarks/shuffle_figures.py --quick      # small sizes, a smoke test

Single process; about 10 minutes with the defaults on a 2-core machine.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

from fairlens.datasets import load_diabetes_risk, load_german_credit
from fairlens.shuffle import ShuffledModel, attributions

HYBRIDS = ["dom+mix", "dom+swap", "dom+none", "mix+swap", "mix+none"]
PAPER_ALL = (67.1, 7.4, 13.4)      # Figure 4, attack on all data: Gender 1st / 2nd / 3rd %
PAPER_TOP15 = (1.7, 25.8, 13.7)    # Figure 4, attack on the top 15 %


# ------------------------------------------------------------------------------ Figure 3
def diabetes_setup(split_seed=0):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    dia = load_diabetes_risk(download=False)
    X, y, names = dia.X, dia.y, dia.feature_names
    keep = [j for j, n in enumerate(names) if n not in ("Gender", "Age")]
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=split_seed, stratify=y)
    clf = LogisticRegression(max_iter=1000).fit(Xtr[:, keep], ytr)

    def f(A):
        return clf.predict_proba(np.asarray(A, dtype=float)[:, keep])[:, 1]

    age_med = float(np.median(X[:, names.index("Age")]))
    groups = {"Sex": ("Gender", 1),
              "Sex+Age": (["Gender", "Age"], {"Gender": 1, "Age": lambda a: a < age_med})}
    return f, Xtr, Xte, names, groups


def figure3_row(f, Xtr, Xte, names, groups, *, explainer="shap", n_bg=50, nsamples=1000,
                n_explain=None, mixing_rule="alg3", seed=0):
    """SHAP of the 10 hybrid models; how many each auditor rule catches."""
    bg = Xtr[np.random.default_rng(seed).choice(len(Xtr), min(n_bg, len(Xtr)), replace=False)]
    Xe = Xte if n_explain is None else Xte[:n_explain]
    caught_and, caught_or, detail = [], [], []
    for g, (prot, fav) in groups.items():
        for h in HYBRIDS:
            m = ShuffledModel(f, protected=prot, favoured=fav, attack=h, random_state=seed, feature_names=names,
                              mixing_rule=mixing_rule)
            d = attributions(m, Xe, explainer, background=bg, nsamples=nsamples,
                             random_state=seed).set_index("feature")
            rank = d["mean_abs"].rank(ascending=False, method="min")
            feats = ["Gender"] + (["Age"] if g == "Sex+Age" else [])
            a = any(rank[q] <= 10 and d.loc[q, "mean_abs"] > 0.05 for q in feats)
            o = any(rank[q] <= 10 or d.loc[q, "mean_abs"] > 0.05 for q in feats)
            caught_and.append(f"{h}/{g}" if a else None)
            caught_or.append(f"{h}/{g}" if o else None)
            detail.append(f"{h}/{g}: Sex {d.loc['Gender', 'mean_abs']:.3f} (#{int(rank['Gender'])})"
                          + (f", Age {d.loc['Age', 'mean_abs']:.3f} (#{int(rank['Age'])})"
                             if g == "Sex+Age" else ""))
    return ([c for c in caught_and if c], [c for c in caught_or if c], detail, len(Xe), len(bg))


def figure3(args):
    print("=" * 100)
    print("Figure 3 (diabetes): models caught by the auditor's rule, out of 10 hybrids "
          "(paper: only Dom+Mix)")
    print("AND = protected feature ranked in the top 10 of 16 by mean |SHAP| AND mean |SHAP| > "
          "0.05 (the tutorial's reading); OR = either (the paper's wording)")
    quick = args.quick
    n_explain = 12 if quick else args.n_explain_dia
    settings = [
        ("tutorial: permutation SHAP, bg 50, 1000 evals, Alg. 3 mixing",
         dict(n_bg=50, nsamples=1000, mixing_rule="alg3"), 0),
        ("same, coin mixing (fairlens's old default)",
         dict(n_bg=50, nsamples=1000, mixing_rule="coin"), 0),
        ("shap.Explainer defaults: bg 100 (max_samples), 500 evals", dict(n_bg=100, nsamples=500), 0),
        ("shap defaults, another 80/20 split (seed 1)", dict(n_bg=100, nsamples=500), 1),
        ("shap defaults, another 80/20 split (seed 2)", dict(n_bg=100, nsamples=500), 2),
        ("KernelSHAP, bg 50, 1000 samples", dict(explainer="kernel", n_bg=50, nsamples=1000), 0),
    ]
    if quick:
        settings = settings[:2]
    for label, kw, split in settings:
        f, Xtr, Xte, names, groups = diabetes_setup(split)
        if quick:
            kw = dict(kw, nsamples=200)
        t0 = time.perf_counter()
        a, o, detail, n_e, n_b = figure3_row(f, Xtr, Xte, names, groups, n_explain=n_explain, **kw)
        print(f"\n{label} [{n_e} patients explained, background {n_b}, "
              f"{time.perf_counter() - t0:.0f} s]")
        print(f"  caught AND: {len(a)}/10 {a}")
        print(f"  caught OR : {len(o)}/10 {o}")
        print("  " + "; ".join(detail))


# ------------------------------------------------------------------------------ Figure 4
def german_setup():
    ger = load_german_credit(download=False)
    X, names = ger.X, ger.feature_names
    ir = names.index("installment_rate")
    rate = X[:, ir]
    scorers = {
        # the tutorial's: loan rate (1..4) mapped linearly to [0, 1], low rate = good; 4 tied levels
        "4 levels": lambda A: 1.0 - (np.asarray(A, dtype=float)[:, ir] - 1.0) / 3.0,
        # Slack et al. (2020)'s innocuous German model: a threshold on the (standardised) loan rate
        "binary": lambda A: (np.asarray(A, dtype=float)[:, ir] <= rate.mean()).astype(float),
        # the same order with every tie broken by the credit amount (continuous score)
        "continuous": lambda A: (1.0 - (np.asarray(A, dtype=float)[:, ir] - 1.0) / 3.0
                                 + 1e-3 * np.asarray(A, dtype=float)[:, names.index("credit_amount")]
                                 / X[:, names.index("credit_amount")].max()),
    }
    return X, names, scorers


def _ranks(phi, j, rule):
    """Rank of feature ``j`` per instance: 'competition' (fairlens: ties share the better rank,
    exactly-zero attributions unranked -> 0), 'argsort' (np.argsort of -|phi|, ties broken by
    column order, zeros ranked too) or 'first' (ties broken in favour of ``j``, zeros ranked: what
    argsort gives when the protected column comes first, as Gender does in Slack et al.'s
    German table)."""
    a = np.abs(phi)
    if rule == "first":
        return 1 + (a > a[:, [j]]).sum(axis=1)
    if rule == "argsort":
        order = np.argsort(-a, axis=1, kind="stable")
        return 1 + np.argmax(order == j, axis=1)
    r = 1 + (a > a[:, [j]]).sum(axis=1)
    return np.where(a[:, j] > 1e-9 * a.max(axis=1), r, 0)


def figure4_row(model_kw, f, X, names, Xe, *, explainer="shap", n_bg=50, nsamples=300, seed=0):
    bg = X[np.random.default_rng(100 + seed).choice(len(X), min(n_bg, len(X)), replace=False)]
    out = {}
    for k in (1.0, 0.15):
        m = ShuffledModel(f, protected="sex", favoured=1, region=k, feature_names=names, output="raw", **model_kw)
        _, vals = attributions(m, Xe, explainer, background=bg, nsamples=nsamples,
                               random_state=seed, return_values=True)
        phi = vals[explainer]
        j = names.index("sex")
        for rule in ("competition", "argsort", "first"):
            r = _ranks(phi, j, rule)
            out[(k, rule)] = [100 * np.mean(r == i) for i in (1, 2, 3)]
        out[(k, "zero")] = 100 * np.mean(np.abs(phi[:, j]) <= 1e-12)
        if k == 1.0:
            # who gets Gender 1st: women (unfavoured, moved down by Dominance) vs men (favoured)
            first = _ranks(phi, j, "competition") == 1
            men = Xe[:, j] == 1
            out["first_women"] = 100 * np.mean(first[~men]) if (~men).any() else float("nan")
            out["first_men"] = 100 * np.mean(first[men]) if men.any() else float("nan")
    return out


def _verdict(ours, paper, n):
    """'match' when the paper's percentage lies within ours +- two binomial standard errors over
    ``n`` explained applicants, else 'differ'."""
    tol = 200 * np.sqrt(paper / 100 * (1 - paper / 100) / n)
    return "match" if abs(ours - paper) <= tol else "differ"


def figure4(args):
    print("=" * 100)
    print("Figure 4 (German credit): % of applicants with Gender ranked 1st / 2nd / 3rd by |SHAP|")
    print("paper: attack on all data 67.1 / 7.4 / 13.4; attack on the top 15 %: 1.7 / 25.8 / 13.7")
    X, names, scorers = german_setup()
    n_explain = 40 if args.quick else args.n_explain_ger
    Xe = X[np.random.default_rng(0).choice(len(X), n_explain, replace=False)]
    ir = names.index("installment_rate")
    for name, f in scorers.items():
        s = f(X)
        top = np.sort(s)[::-1][int(0.15 * len(s))]
        print(f"scorer '{name}': {len(np.unique(s))} distinct scores; "
              f"{100 * np.mean(s >= top):.1f}% of applicants score >= the 85th percentile "
              f"(loan rate 1: {100 * np.mean(X[:, ir] == 1):.1f}%)")
    settings = [
        ("tutorial: 4 levels, permutation SHAP, bg 50, 300 evals", "4 levels", {}),
        ("4 levels, bg 20", "4 levels", dict(n_bg=20)),
        ("4 levels, bg 100 (shap's default max_samples)", "4 levels", dict(n_bg=100)),
        ("4 levels, bg 400", "4 levels", dict(n_bg=400)),
        ("4 levels, 500 evals (shap's default max_evals)", "4 levels", dict(n_bg=100, nsamples=500)),
        ("4 levels, KernelSHAP bg 50", "4 levels", dict(explainer="kernel")),
        ("binary (Slack et al.), permutation SHAP, bg 100", "binary", dict(n_bg=100)),
        ("binary, KernelSHAP bg 50", "binary", dict(explainer="kernel")),
        ("continuous (ties broken), permutation SHAP, bg 100", "continuous", dict(n_bg=100)),
        ("continuous, KernelSHAP bg 50", "continuous", dict(explainer="kernel")),
    ]
    if args.quick:
        settings = settings[:2]
    print(f"{n_explain} applicants explained; columns: all data top1/top2/top3 | top 15 % top1/top2/"
          f"top3 | % with Gender exactly 0 at top 15 %; per setting: fairlens's competition "
          f"ranks, np.argsort ranks (ties by column order), ties broken in Gender's favour")
    for label, fname, kw in settings:
        t0 = time.perf_counter()
        r = figure4_row({}, scorers[fname], X, names, Xe, **kw)
        dt = time.perf_counter() - t0
        for rule in ("competition", "argsort", "first"):
            a, b = r[(1.0, rule)], r[(0.15, rule)]
            head = f"{label} [{dt:.0f} s]" if rule == "competition" else ""
            print(f"  {head:58s} {rule:11s} {a[0]:5.1f} {a[1]:5.1f} {a[2]:5.1f} | "
                  f"{b[0]:5.1f} {b[1]:5.1f} {b[2]:5.1f} | zero {r[(0.15, 'zero')]:5.1f}")
        a, b = r[(1.0, "competition")], r[(0.15, "competition")]
        va = [_verdict(x, p, n_explain) for x, p in zip(a, PAPER_ALL)]
        vb = [_verdict(x, p, n_explain) for x, p in zip(b, PAPER_TOP15)]
        print(f"  {'':58s} all data: Gender 1st for {r['first_women']:.1f}% of women, "
              f"{r['first_men']:.1f}% of men; vs paper (+-2 s.e.): all data {'/'.join(va)}, "
              f"top 15 % {'/'.join(vb)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fig", choices=["3", "4", "all"], default="all")
    ap.add_argument("--n-explain-ger", type=int, default=200,
                    help="German applicants explained (paper: all 1000)")
    ap.add_argument("--n-explain-dia", type=int, default=None,
                    help="diabetes test patients explained (default: the whole 20%% test set)")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    pd.set_option("display.width", 200)
    if args.fig in ("3", "all"):
        figure3(args)
    if args.fig in ("4", "all"):
        figure4(args)


if __name__ == "__main__":
    main()
