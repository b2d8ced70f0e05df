"""Benchmark: TestSGD frequent rule sets + batched Algorithm 2 vs the faithful reference.

For each dataset: number of frequent rule sets (theta = 5%), wall time of the
mining and of the batched scoring, peak traced memory, and the speed ratio
against the literal one-sample-at-a-time Algorithm 2
(:func:`fairlens.testsgd.group_fairness_score_reference`) measured IN THE SAME
RUN on a few of the same rule sets (their per-rule-set cost is extrapolated to
all rule sets; the script also checks that both give identical numbers on
those rule sets).

Usage::

    PYTHONPATH=. python benchmarks/testsgd_rulesets.py   # bundled data (law school: FAIRLENS_DATA_HOME)
    ... --datasets adult compas --n-ref 3
    FAIRLENS_REDUCED=1 ...   # small smoke run
"""
from __future__ import annotations

import argparse
import os
import resource
import time
import tracemalloc

import numpy as np

from fairlens.datasets import load_dataset
from fairlens.testsgd import TestSGD
from fairlens.testsgd._score import _reference_score, _score_rule_sets, rule_set_rng
from fairlens.testsgd.paper import PAPER_NAMES, PAPER_TABLE4, PAPER_TABLE5, paper_kwargs, paper_model

ALL = ["adult", "bank_marketing", "german_credit", "compas", "law_school", "crime"]


def bench(name, n_ref=3, random_state=0, reduced=False):
    ds = load_dataset(name)
    train, test = ds.split(test_size=0.25, random_state=random_state)
    t = time.perf_counter()
    model = paper_model(train, random_state=random_state, max_iter=30 if reduced else None)
    t_fit = time.perf_counter() - t
    acc = float(np.mean(model.predict(test.X) == test.y))
    kw = paper_kwargs(ds)
    sens = kw.pop("protected")
    # every mined rule set scored on its own (merge_equivalent=False): the paper's workload of Table 5,
    # and the rule sets the faithful reference below is compared with, one by one
    ts = TestSGD(model, train, protected=sens, theta=0.05, random_state=random_state, merge_equivalent=False,
                 **kw)

    tracemalloc.start()
    rep = ts.run()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    # faithful reference on n_ref of the same rule sets, same per-rule-set streams
    fr = rep.frequent
    m = len(fr)
    # rule set j of the run draws from its own stream keyed by (seed, j, 0)
    pick = np.unique(np.linspace(0, m - 1, n_ref).astype(int)) if m else []
    by_name = {str(r.rule_set): r for r in rep.results}
    t = time.perf_counter()
    same = True
    ref_rs = 0
    for j in pick:
        rs = fr.rule_sets[j]
        ref = _reference_score(model, train, rs, sens, rule_set_rng(random_state, j, 0))
        got = by_name[str(rs)]
        if ref.status == "ok":
            ref_rs += 1
            same &= (ref.n_samples, ref.rate_in, ref.rate_out) == (got.n_samples, got.rate_in, got.rate_out)
    t_ref = time.perf_counter() - t
    per_ref = t_ref / max(1, len(pick))
    ref_total = per_ref * m
    # batched without the neighbourhood table (rows sampled in numba, big model calls) on a subset
    sub = list(range(0, m, max(1, m // 50)))[:50]
    t = time.perf_counter()
    _score_rule_sets(model, train, [fr.rule_sets[j] for j in sub], sens, strategy="sample",
                    rngs=[rule_set_rng(random_state, j, 0) for j in sub])
    per_sample = (time.perf_counter() - t) / max(1, len(sub))
    top = rep.results[0] if rep.results else None
    paper_acc, paper_time, paper_n = PAPER_TABLE5[name]
    return dict(
        dataset=PAPER_NAMES[name], n_rule_sets=m, paper_n_rule_sets=paper_n, fit_s=t_fit,
        mining_s=rep.elapsed_mining, scoring_s=rep.elapsed_scoring, total_s=rep.elapsed, paper_s=paper_time,
        model_rows=rep.n_model_rows, peak_mb=peak / 1e6, ref_s_per_rule_set=per_ref,
        ref_extrapolated_s=ref_total, ratio=ref_total / rep.elapsed if rep.elapsed > 0 else np.nan,
        sample_strategy_s_per_rule_set=per_sample, identical_to_reference=bool(same), n_checked=len(pick),
        not_converged=rep.status_counts()["cap"], no_seeds=rep.status_counts()["no-seeds"],
        max_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3, accuracy=acc, paper_accuracy=paper_acc,
        top=str(top.rule_set) if top else None, top_score=top.score if top else np.nan,
        paper_top=PAPER_TABLE4[name][0][0], paper_top_score=PAPER_TABLE4[name][0][1],
    )


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--datasets", nargs="*", default=None)
    p.add_argument("--n-ref", type=int, default=3, help="rule sets timed with the faithful reference")
    p.add_argument("--random-state", type=int, default=0)
    a = p.parse_args(argv)
    reduced = os.environ.get("FAIRLENS_REDUCED") == "1"
    names = a.datasets or (["german_credit", "law_school"] if reduced else ALL)
    import pandas as pd

    rows = []
    for n in names:
        r = bench(n, n_ref=1 if reduced else a.n_ref, random_state=a.random_state, reduced=reduced)
        rows.append(r)
        print(f"[{r['dataset']}] {r['n_rule_sets']} frequent rule sets (paper {r['paper_n_rule_sets']}); "
              f"TestSGD {r['total_s']:.2f} s (mining {r['mining_s']:.2f} s, scoring {r['scoring_s']:.2f} s; "
              f"paper {r['paper_s']:.0f} s), {r['model_rows']:,} model rows, traced peak {r['peak_mb']:.0f} MB "
              f"(process max RSS so far {r['max_rss_mb']:.0f} MB); "
              f"faithful Alg. 2 {r['ref_s_per_rule_set']:.3f} s/rule set -> {r['ref_extrapolated_s']:.0f} s "
              f"extrapolated, ratio {r['ratio']:.0f}x; identical on {r['n_checked']} checked: "
              f"{r['identical_to_reference']}; batched-sampling path {r['sample_strategy_s_per_rule_set']*1e3:.1f} "
              f"ms/rule set", flush=True)
        print(f"    flagged: {r['not_converged']} hit the cap, {r['no_seeds']} without not-R seeds")
        print(f"    top: {r['top']}  {r['top_score']:.3f}   (paper: {r['paper_top']}  {r['paper_top_score']:.3f}); "
              f"accuracy {r['accuracy']:.3f} (paper {r['paper_accuracy']:.3f})", flush=True)
    df = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(df[["dataset", "n_rule_sets", "paper_n_rule_sets", "total_s", "paper_s", "peak_mb",
                  "ref_extrapolated_s", "ratio", "identical_to_reference", "top_score",
                  "paper_top_score"]].round(3).to_string(index=False))
    return df


if __name__ == "__main__":
    main()
