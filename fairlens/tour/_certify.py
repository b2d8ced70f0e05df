"""The tour's section of the certification slice (breast cancer)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..datasets import load_breast_cancer
from ._common import _RC, _data_info, _figure, _finding, _model_info


def section(budget, random_state):
    import matplotlib.pyplot as plt
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import train_test_split

    # deferred: import time: loads numba, sklearn only when used
    from ..certify import (  # deferred: import time: loads numba, sklearn only when used
        FeaturePartitionedForest,
        certify,
    )

    bc = load_breast_cancer()
    Xtr, Xte, ytr, yte = train_test_split(bc.X, bc.y, test_size=0.2, random_state=0,
                                          stratify=bc.y)
    n = budget["trees"]
    rows = []
    forests = {"random forest": RandomForestClassifier(n_estimators=n, max_depth=6,
                                                       random_state=random_state)}
    for b in budget["budgets"]:
        forests[f"FPF (b={b})"] = FeaturePartitionedForest(
            budget=b, rounds=max(1, round(n / (2 * b + 1))), random_state=random_state)
    models = []
    for name, forest in forests.items():
        forest.fit(Xtr, ytr)
        models.append(_model_info(forest, name, "encoded array"))
        budgets = budget["budgets"] if name == "random forest" else (int(name[-2]),)
        for b in budgets:
            res = certify(forest, Xte, yte, budget=b, method="cascade")
            rows.append({"forest": name, "b": b, "clean": res.accuracy_clean,
                         "FLB": res.accuracy_flb, "ELB": res.accuracy_elb,
                         "exact": res.accuracy_exact, "sent to brute force": res.n_brute,
                         "seconds": res.elapsed})
    table = pd.DataFrame(rows)
    fig, axes = _figure(11, 5.2, ncols=2)
    bars = (("clean", "#9aa5b1", ""), ("FLB", "#f5b041", "//"), ("ELB", "#e67e22", "\\\\"),
            ("exact", "#2e86c1", ""))
    with plt.rc_context(_RC):
        for ax, (label, part) in zip(axes, (
                ("random forest", table[table.forest == "random forest"]),
                ("Feature Partitioned Forests (one per b)",
                 table[table.forest != "random forest"]))):
            x = np.arange(len(part))
            w = 0.2
            for k, (col, color, hatch) in enumerate(bars):
                vals = 100 * part[col].to_numpy()
                ax.bar(x + (k - 1.5) * w, vals, w, label=col, color=color, hatch=hatch,
                       edgecolor="black")
                for xi, v in zip(x, vals):  # a bar of height 0 is still visible as a label
                    ax.annotate(f"{v:.0f}", (xi + (k - 1.5) * w, v), ha="center",
                                va="bottom", fontsize=11, xytext=(0, 2),
                                textcoords="offset points")
            ax.set_xticks(x, [f"b = {b}" for b in part.b])
            ax.set_ylim(0, 112)
            ax.set_ylabel("accuracy under attack (%)")
            ax.set_title(label)
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=4)
    plt.close(fig)
    rf = table[table.forest == "random forest"]
    worst = rf.iloc[-1]
    b = int(worst["b"])
    n_test = len(yte)
    if max(worst["FLB"], worst["ELB"]) == 0:
        bound_text = (f"the fast bounds FLB and ELB alone prove no test row robust at b = {b} "
                      f"(0% certified: the bounds are loose on this forest), so the cascade "
                      f"settled the rows by exact search")
    else:
        bound_text = (f"the fast bounds alone certify {100 * worst['FLB']:.1f}% (FLB) and "
                      f"{100 * worst['ELB']:.1f}% (ELB) without search; exact search settles "
                      f"the rest")
    headline = (f"Random forest: {100 * worst['clean']:.1f}% accurate on clean data, "
                f"{100 * worst['exact']:.1f}% when an attacker may change any {b} features "
                f"(exact); {bound_text}.")
    paragraphs = [
        "An attacker may change any b features of a test instance. The certified accuracy is "
        "the share of test rows that are classified correctly and cannot be flipped by any "
        "such change. FLB and ELB are fast lower bounds on it: a row they certify is "
        "certainly robust, a row they do not certify is undecided (not necessarily "
        "vulnerable). The cascade runs exact brute force only on the undecided rows, so the "
        "exact column is the true accuracy under attack.",
        "A Feature Partitioned Forest trains each tree on its own feature group, so b changed "
        "features corrupt at most r·b trees: its bounds are much tighter and its exact "
        "accuracy under attack is higher.",
    ]
    findings = [_finding("certify", "accuracy_exact", "Accuracy under attack (exact)",
                         r["exact"], group=f"{r['forest']}, b = {int(r['b'])}", unit="rate",
                         sentence=f"{100 * r['clean']:.1f}% clean; fast bounds certify "
                                  f"{100 * r['FLB']:.1f}% (FLB) / {100 * r['ELB']:.1f}% (ELB).")
                for _, r in table.iterrows()]
    return dict(
        table=table, figures=[fig], headline=headline, paragraphs=paragraphs,
        conclusion=(f"a random forest keeps {100 * worst['exact']:.1f}% accuracy against "
                    f"attackers changing {b} features ({100 * worst['clean']:.1f}% clean), a "
                    f"Feature Partitioned Forest built for b = {b} keeps "
                    f"{100 * table[table.forest != 'random forest']['exact'].iloc[-1]:.1f}%"),
        dataset=f"Wisconsin breast cancer (scikit-learn), {n_test} test rows",
        columns={"forest": ("Forest", None), "b": ("Features changed (b)", "count"),
                 "clean": ("Accuracy, clean", "rate"),
                 "FLB": ("Certified by FLB (fast bound)", "rate"),
                 "ELB": ("Certified by ELB (fast bound)", "rate"),
                 "exact": ("Accuracy under attack (exact)", "rate"),
                 "sent to brute force": ("Rows settled by exact search", "count"),
                 "seconds": ("Time", "seconds")},
        table_title="Accuracy under attackers that change b features",
        table_note=("FLB <= ELB <= exact <= clean on every row. A bound of 0% means the fast "
                    "bound decided no row; the exact column does not depend on the bounds. "
                    "The first certification also compiles the kernels (its time includes "
                    "that, once per machine)."),
        figure_titles=["Clean accuracy, the two fast lower bounds (FLB, ELB) and the exact "
                       "accuracy under attack, side by side for each budget b."],
        params={"trees": n, "max_depth": 6, "budgets b": list(budget["budgets"]),
                "method": "cascade", "test share": 0.2, "split random_state": 0,
                "random_state": int(random_state)},
        datasets=[_data_info(bc, "Wisconsin breast cancer (scikit-learn)")],
        models=models,
        findings=findings,
    )
