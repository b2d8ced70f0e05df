"""The tour's section of the TestSGD slice (census, readable values)."""
from __future__ import annotations

import numpy as np

from ..datasets import load_adult
from ..models import train_mlp
from ._common import _RC, _data_info, _figure, _finding, _model_info, _wrap


def section(budget, random_state):
    import matplotlib.pyplot as plt

    from ..testsgd import TestSGD  # deferred: import time: loads numba, scipy only when used

    census = load_adult()
    model = train_mlp(census, random_state=random_state)
    analysis = TestSGD(model, census, protected=["sex", "race", "age"], theta=0.05,
                       sample_thr=budget["testsgd_samples"], max_samples=budget["testsgd_max"],
                       random_state=random_state)
    report = analysis.run()
    top = report.top(5)
    keep = [c for c in ("rule_set", "support", "rate_in", "rate_out", "fresh_score",
                        "fresh_margin", "score", "n_samples") if c in top.columns]
    table = top[keep].reset_index(drop=True)
    table["rule_set"] = table["rule_set"].astype(str)
    if "rate_in" in table and "rate_out" in table:
        table.insert(1, "direction", np.where(table["rate_in"] < table["rate_out"],
                                              "disfavoured", "favoured"))
    fig, ax = _figure(11, 1.6 + 0.85 * len(table))
    with plt.rc_context(_RC):
        y = np.arange(len(table))[::-1]
        ax.barh(y, 100 * table["fresh_score"], 0.5,
                xerr=100 * table["fresh_margin"], capsize=5, color="#2e86c1",
                edgecolor="black", label="re-estimated on fresh samples, with its margin")
        ax.plot(100 * table["score"], y, "D", color="#c0392b", markersize=9,
                label="estimate when selected (biased upward)")
        ax.set_yticks(y, [_wrap(r, 44) for r in table["rule_set"]])
        ax.set_xlabel("gap in favourable-outcome rate, inside vs outside the group (pp)")
        ax.set_title("The five groups with the largest fairness score")
        fig.legend(loc="outside lower center", ncols=2)
        ax.margins(x=0.05)
    plt.close(fig)
    best = table.iloc[0]
    direction = best.get("direction", "")
    headline = (f"{report.n_groups:,} distinct frequent groups over sex, race and age were scored; the "
                f"largest gap is for {best['rule_set']} ({direction}): "
                f"{100 * best['fresh_score']:.1f} pp ± {100 * best['fresh_margin']:.1f} pp "
                f"re-estimated on fresh samples ({100 * best['score']:.1f} pp when selected).")
    paragraphs = [
        "A rule set such as 'sex=Male, race=White, 40<=age<60' names a group; its score is the "
        "gap between the favourable-outcome (income >50K) rates inside and outside the group, "
        "estimated by sampling until the error margin is small. 'Favoured' means the group's "
        "rate is higher than the rest's, 'disfavoured' lower.",
        "The top of a ranking of thousands of noisy estimates is biased upward, so the top "
        "groups are re-estimated on fresh samples; the table and the ranking use that fresh "
        "estimate, and show the selection estimate only for comparison.",
    ]
    findings = [_finding("testsgd", "fresh_score", "Group fairness score (fresh estimate)",
                         r["fresh_score"], group=r["rule_set"],
                         ci=(r["fresh_score"] - r["fresh_margin"],
                             r["fresh_score"] + r["fresh_margin"]), unit="difference",
                         sentence=f"{r.get('direction', '')}; support "
                                  f"{100 * r['support']:.1f}% of the rows.")
                for _, r in table.head(3).iterrows()]
    return dict(
        table=table, figures=[fig], headline=headline, paragraphs=paragraphs,
        conclusion=(f"TestSGD's largest subgroup gap is {100 * best['fresh_score']:.1f} pp "
                    f"± {100 * best['fresh_margin']:.1f} pp ({best['rule_set']}, "
                    f"{direction})"),
        dataset="UCI Adult, readable values (bundled)",
        columns={"rule_set": ("Group (rule set)", None), "direction": ("Direction", None),
                 "support": ("Share of rows in the group", "rate"),
                 "rate_in": ("Favourable rate inside", "rate"),
                 "rate_out": ("Favourable rate outside", "rate"),
                 "fresh_score": ("Gap, fresh estimate", "difference"),
                 "fresh_margin": ("Error margin of the fresh estimate", "difference"),
                 "score": ("Gap when selected (biased up)", "difference"),
                 "n_samples": ("Samples used", "count")},
        table_title="The five groups with the largest gap, ranked by the fresh estimate",
        table_note=(f"Error margins hold at confidence {1 - 0.05:.2f} (theta 0.05)."),
        figure_titles=["Gap per group: the fresh estimate with its error margin (bars) and "
                       "the estimate at selection (diamonds)."],
        params={"protected": ["sex", "race", "age"], "theta": 0.05,
                "samples per estimate": budget["testsgd_samples"],
                "max samples": budget["testsgd_max"], "random_state": int(random_state)},
        datasets=[_data_info(census, "UCI Adult, readable values")],
        models=[_model_info(model, "census MLP, readable values", "readable frame")],
        findings=findings,
    )
