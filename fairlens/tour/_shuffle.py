"""The tour's section of the shuffling-attack slice (admission data)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..datasets import load_admission
from ._common import _RC, _data_info, _figure, _finding


def _shuffle_figure(table):
    """The shuffle section's figure: the admission-rate gap before/after each attack (left) and
    the attribution of Research by exact Shapley values and linear SHAP (right)."""
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = _figure(11, 4.6, ncols=2)
    with plt.rc_context(_RC):
        x = np.arange(len(table))
        w = 0.38
        ax1.bar(x - w / 2, 100 * table["DP difference before"], w, label="honest score f",
                color="#9aa5b1", edgecolor="black")
        ax1.bar(x + w / 2, 100 * table["DP difference after"], w, label="attacked f'",
                color="#c0392b", edgecolor="black", hatch="//")
        ax1.set_xticks(x, table["attack"])
        ax1.set_ylabel("admission-rate gap (pp)")
        ax1.set_title("Demographic-parity gap, top 30% admitted")
        ax1.legend(loc="upper center", ncols=2)
        ax1.set_ylim(0, 1.3 * max(1e-9, 100 * table[["DP difference before",
                                                     "DP difference after"]].to_numpy().max()))
        ax2.bar(x - w / 2, table["exact Shapley |Research|"], w, label="exact Shapley",
                color="#2e86c1", edgecolor="black")
        ax2.bar(x + w / 2, table["linear SHAP |Research|"], w, label="linear SHAP",
                color="#f5b041", edgecolor="black", hatch="..")
        ax2.set_xticks(x, table["attack"])
        ax2.set_ylabel("mean |attribution| of Research")
        ax2.set_title("What the explanations see")
        for xi, v in zip(x - w / 2, table["exact Shapley |Research|"]):
            ax2.annotate(f"{v:.0f}" if abs(v) < 5e-4 else f"{v:.3f}", (xi, v), ha="center",
                         va="bottom", xytext=(0, 2), textcoords="offset points")
        ax2.set_ylim(0, 1.3 * max(1e-9, table[["exact Shapley |Research|",
                                               "linear SHAP |Research|"]].to_numpy().max()))
        ax2.legend(loc="upper center", ncols=2)
    plt.close(fig)
    return fig


def section(budget, random_state):
    # deferred: import time: loads numba only when used
    from ..shuffle import (  # deferred: import time: loads numba only when used
        ShuffledModel,
        attributions,
        batch_consistency,
        exact_shapley_values,
        fairness_before_after,
    )

    adm = load_admission(version="1")  # bundled (400 applicants)
    cols = ["GRE Score", "TOEFL Score", "University Rating", "Research"]
    X = adm.X[:, [adm.index_of(c) for c in cols]].copy()
    lo, hi = X[:, :3].min(0), X[:, :3].max(0)
    X[:, :3] = (X[:, :3] - lo) / (hi - lo)
    research = X[:, 3] == 1

    def honest(A):  # equal-weighted sum of the normalised scores; ignores Research
        return np.asarray(A, dtype=float)[:, :3] @ np.full(3, 1 / 3)

    threshold = float(np.quantile(honest(X), 0.7))  # admit the top 30%
    attacks = {"Dominance": dict(attack="dominance"),
               "Mixing p=0.8": dict(attack="mixing", p=0.8, mixing_rule="alg3"),  # Algorithm 3
               "Swapping q=0.5": dict(attack="swapping", quantile=0.5)}
    explainers = ("linear", "shap") if budget["shap_explain"] else ("linear",)
    n_explain = budget["shap_explain"] or 50
    rng = np.random.default_rng(random_state)
    Xe = X[rng.choice(len(X), n_explain, replace=False)]
    bg = X[rng.choice(len(X), 50, replace=False)]
    rows = []
    honest_flag = batch_consistency(honest, X, random_state=random_state).suspicious
    s0 = honest(X)
    admitted0 = s0 >= threshold
    for name, kw in attacks.items():
        model = ShuffledModel(honest, protected="Research", favoured=1, feature_names=cols,
                              random_state=random_state, **kw)
        fair = fairness_before_after(model, X, adm.y, threshold=threshold,
                                     protected=X[:, 3]).set_index("metric")
        s1 = np.asarray(model(X), dtype=float).ravel()
        admitted1 = s1 >= threshold
        att = attributions(model, Xe, explainers, background=bg, random_state=random_state)
        prot = att[att.protected].set_index("explainer")
        exact = np.mean([abs(exact_shapley_values(model, x, bg[:20])[3]) for x in Xe[:5]])
        row = {"attack": name,
               "scores changed": int(np.sum(s0 != s1)),
               "mean score gap before": float(s0[research].mean() - s0[~research].mean()),
               "mean score gap after": float(s1[research].mean() - s1[~research].mean()),
               "decisions changed": int(np.sum(admitted0 != admitted1)),
               "DP difference before": fair.loc["demographic_parity_difference", "before"],
               "DP difference after": fair.loc["demographic_parity_difference", "after"],
               "exact Shapley |Research|": exact,
               "linear SHAP |Research|": prot.loc["linear", "mean_abs"]}
        if "shap" in prot.index:
            row["SHAP |Research|"] = prot.loc["shap", "mean_abs"]
        row["detector flags it"] = bool(
            batch_consistency(model, X, random_state=random_state).suspicious)
        rows.append(row)
    table = pd.DataFrame(rows)

    fig = _shuffle_figure(table)

    caught = int(table["detector flags it"].sum())
    before = table["DP difference before"].iloc[0]
    raised = table[table["DP difference after"] > table["DP difference before"] + 1e-12]
    same = table[table["decisions changed"] == 0]
    parts = []
    if len(raised):
        parts.append(f"{' and '.join(raised['attack'])} raise the admission-rate gap between "
                     f"applicants with and without research from {100 * before:.1f} pp to "
                     f"{100 * raised['DP difference after'].max():.1f} pp")
    for _, r in same.iterrows():
        parts.append(f"{r['attack']} reorders {r['scores changed']} of {len(X)} scores "
                     f"(mean score gap {r['mean score gap before']:.3f} -> "
                     f"{r['mean score gap after']:.3f}) but admits the same applicants at "
                     f"this threshold, so its admission-rate gap is unchanged")
    headline = ("; ".join(parts) + f". The exact Shapley value of Research stays zero; the "
                f"detector caught {caught} of {len(table)} attacks"
                f"{' but also flagged the honest model' if honest_flag else ''}.")
    paragraphs = [
        "The admission score f ignores research experience. Each attack hands back the same "
        "scores re-ordered so that applicants with research rank higher: the exact Shapley "
        "value of Research stays zero, because f' shuffles whatever batch the explainer sends "
        "(the paper's theorem). Linear SHAP explains a linear model fitted to f' and sees a "
        "small part of the shift (Eq. 15).",
        "Mixing follows Algorithm 3 as printed: at each merge step a coin (p = 0.8) hands the "
        "best remaining score to the research group, and on a tail the higher original score "
        "wins, so research applicants only ever move up. On this table the applicants it "
        "moves up stay on the same side of the admission threshold (the research group "
        "already holds most of the top 30%), so it changes scores and the mean score gap but "
        "no admission decision: the demographic-parity gap, which counts decisions, is the "
        "same before and after. Dominance and Swapping move research applicants across the "
        "threshold.",
        "Querying the same rows in different batches (the batch-consistency detector) "
        "exposes each of these attacks, which fire on every call; an attack that fires on "
        "only some calls is caught only with some probability (tutorial 01 measures it).",
    ]
    data = _data_info(adm, "Graduate Admission v1 (bundled, 400 applicants)")
    findings = []
    for _, r in table.iterrows():
        findings.append(_finding(
            "shuffle", "demographic_parity_difference", "Admission-rate gap after the attack",
            r["DP difference after"], group=r["attack"], unit="difference",
            sentence=(f"{100 * r['DP difference before']:.1f} pp before the attack; "
                      f"{r['decisions changed']} of {len(X)} admission decisions changed.")))
    findings.append(_finding(
        "shuffle", "exact_shapley_research", "Largest exact Shapley value of Research",
        float(table["exact Shapley |Research|"].max()),
        sentence="Zero up to rounding: the explanation cannot see the attack."))
    findings.append(_finding(
        "shuffle", "detected", "Attacks flagged by the batch-consistency detector", caught,
        unit="count", sentence=f"{caught} of {len(table)} attacks flagged; honest model "
                               f"{'flagged (false alarm)' if honest_flag else 'not flagged'}."))
    conclusion = (f"shuffled scores raised the admission-rate gap to "
                  f"{100 * table['DP difference after'].max():.1f} pp while the exact Shapley "
                  f"value of Research stayed zero, and the batch-consistency detector caught "
                  f"{caught} of {len(table)} attacks")
    return dict(
        table=table, figures=[fig], headline=headline, paragraphs=paragraphs,
        conclusion=conclusion,
        dataset="Graduate Admission v1 (bundled, 400 applicants)",
        columns={"attack": ("Attack", None), "scores changed": ("Scores changed", "count"),
                 "mean score gap before": None,  # the same for every attack: in the note
                 "mean score gap after": ("Mean score gap, after", None),
                 "decisions changed": ("Admissions changed", "count"),
                 "DP difference before": None,
                 "DP difference after": ("Admission-rate gap, after", "difference"),
                 "exact Shapley |Research|": ("Exact Shapley |Research|", None),
                 "linear SHAP |Research|": ("Linear SHAP |Research|", None),
                 "SHAP |Research|": ("KernelSHAP |Research|", None),
                 "detector flags it": ("Detector flags it", None)},
        table_title="Three attacks on the honest admission score",
        table_note=(f"Before any attack the admission-rate gap is {100 * before:.1f} pp and "
                    f"the mean score gap {table['mean score gap before'].iloc[0]:.3f}. "
                    "Admission-rate gap = admission rate of applicants with research minus "
                    "without, in percentage points; mean score gap = difference of the groups' "
                    "mean scores (0-1 scale). Shapley values: mean over 5 applicants, 20 "
                    "background rows."),
        figure_titles=["Left: the admission-rate gap before and after each attack. Right: the "
                       "attribution of Research by exact Shapley values and linear SHAP."],
        params={"protected": ["Research"], "favoured value": 1,
                "threshold (admit top 30%)": threshold, "attacks": list(attacks),
                "mixing p": 0.8, "mixing rule": "alg3", "swapping quantile": 0.5,
                "explainers": list(explainers), "rows explained": n_explain,
                "background rows": 50, "random_state": int(random_state)},
        datasets=[data],
        models=[{"class": "honest linear score (admission)", "module": "fairlens.tour",
                 "params": {"weights": "1/3 each of GRE, TOEFL, University Rating"},
                 "source": None, "sha256": None, "input": "encoded array"}],
        findings=findings,
    )
