"""The tour's section of the MAFT slice (census, benchmark encoding)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..datasets import load_adult
from ..models import train_mlp
from ._common import _RC, _data_info, _figure, _finding, _model_info


def section(budget, random_state):
    import matplotlib.pyplot as plt

    from ..maft import AEQUITAS, MAFT  # deferred: import time: fairlens.maft loads only when used

    census = load_adult(encoding="benchmark")
    model = train_mlp(census, random_state=random_state)
    rows, results = [], {}
    for name, cls in (("MAFT", MAFT), ("AEQUITAS", AEQUITAS)):
        res = cls(model, census, protected=["sex"], n_seeds=budget["maft_seeds"],
                  n_local=budget["maft_local"], random_state=random_state).run()
        results[name] = res
        rows.append({"method": name,
                     "discriminatory instances": res.n_instances,
                     "global": res.n_global, "local": res.n_local,
                     "model queries (rows)": res.queries,
                     "instances / s": res.instances_per_second,
                     "seconds": res.elapsed})
    table = pd.DataFrame(rows)
    fig, (ax1, ax2) = _figure(11, 4.6, ncols=2)
    with plt.rc_context(_RC):
        for (name, res), style in zip(results.items(), ("-", "--")):
            tl = np.asarray(res.timeline)
            if tl.size:
                ax1.step(tl[:, 0], tl[:, 1], style, where="post", label=name, linewidth=2)
        ax1.set_xlabel("seconds")
        ax1.set_ylabel("discriminatory instances found")
        ax1.set_title("Found over time")
        ax1.legend(loc="upper left")
        x = np.arange(len(table))
        ax2.bar(x, table["discriminatory instances"], 0.55, color=["#2e86c1", "#f5b041"],
                edgecolor="black")
        for xi, v in zip(x, table["discriminatory instances"]):
            ax2.annotate(f"{int(v):,}", (xi, v), ha="center", va="bottom",
                         xytext=(0, 3), textcoords="offset points")
        ax2.set_xticks(x, table["method"])
        ax2.set_ylabel("discriminatory instances")
        ax2.set_title(f"Same budget: {budget['maft_seeds']} seeds x {budget['maft_local']} "
                      "local steps")
        ax2.margins(y=0.15)
    plt.close(fig)
    m, a = results["MAFT"], results["AEQUITAS"]
    headline = (f"On the census MLP (test accuracy {model.test_score_:.3f}), MAFT found "
                f"{m.n_instances:,} people whose predicted income class flips when only their "
                f"sex is changed; AEQUITAS found {a.n_instances:,} with the same budget.")
    paragraphs = [
        "Each discriminatory instance is a person whose predicted income class flips when "
        "only their sex is changed. MAFT estimates gradients from two model calls per feature "
        "(zero-order), so it needs no access to the network's weights; AEQUITAS searches "
        "randomly around the discriminatory inputs it finds.",
        "These are counts of distinct inputs found within the budget, not a rate over the "
        "population: a larger budget finds more.",
    ]
    findings = [_finding("maft", "discriminatory_instances", "Discriminatory instances found",
                         r["discriminatory instances"], group=r["method"], unit="count",
                         sentence=f"{int(r['model queries (rows)']):,} model queries "
                                  f"(rows) in {r['seconds']:.1f} s.")
                for _, r in table.iterrows()]
    return dict(
        table=table, figures=[fig], headline=headline, paragraphs=paragraphs,
        conclusion=(f"MAFT found {m.n_instances:,} inputs of the census MLP whose decision "
                    f"flips with sex alone (AEQUITAS {a.n_instances:,} on the same budget)"),
        dataset="UCI Adult, benchmark encoding (bundled)",
        columns={"method": ("Method", None),
                 "discriminatory instances": ("Discriminatory instances", "count"),
                 "global": ("Found in the global phase", "count"),
                 "local": ("Found in the local phase", "count"),
                 "model queries (rows)": ("Model queries (rows)", "count"),
                 "instances / s": ("Instances per second", None),
                 "seconds": ("Time", "seconds")},
        table_title="MAFT against AEQUITAS, protected attribute: sex",
        figure_titles=["Left: distinct discriminatory instances found over time. Right: the "
                       "totals at the same budget."],
        params={"protected": ["sex"], "seeds": budget["maft_seeds"],
                "local steps per seed": budget["maft_local"], "random_state": int(random_state)},
        datasets=[_data_info(census, "UCI Adult, benchmark encoding")],
        models=[_model_info(model, "census MLP, benchmark encoding", "encoded array")],
        findings=findings,
    )
