"""The fairlens tour: the four analyses on bundled data, at a teaching-sized budget.

``fairlens tour`` (or :func:`run_tour`) needs no data download and no Jupyter: it uses the
datasets bundled with fairlens (Graduate Admission v1, UCI Adult, scikit-learn's breast
cancer), prints a summary table, and writes a self-contained HTML report with the figures
embedded, which a student can open in any browser.

1. Shuffling attacks (admission): an honest score that ignores research experience is
   shuffled by Dominance / Mixing / Swapping; fairness drops, linear SHAP stays blind, the
   batch-consistency detector catches it.
2. MAFT (census, benchmark encoding): black-box search for individual discrimination on the
   reference MLP, against AEQUITAS on the same budget.
3. TestSGD (census, readable values): the rule sets over sex, race and age with the largest
   group fairness scores, each with its error margin.
4. Certification (breast cancer): accuracy of a random forest and a Feature Partitioned
   Forest under attackers that change b features, by FLB, ELB and exact brute force.
"""
from __future__ import annotations

import base64
import html
import io
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["TourSection", "TourReport", "run_tour", "BUDGETS"]

#: budgets of the two tour sizes
BUDGETS = {
    "quick": dict(shap_explain=0, maft_seeds=20, maft_local=20, testsgd_samples=200,
                  testsgd_max=2000, trees=30, budgets=(1, 2)),
    "full": dict(shap_explain=20, maft_seeds=100, maft_local=100, testsgd_samples=1000,
                 testsgd_max=20000, trees=60, budgets=(1, 2, 3)),
}


@dataclass
class TourSection:
    """One analysis of the tour: a summary table, figures and a short explanation."""

    key: str
    title: str
    dataset: str
    headline: str = ""
    table: pd.DataFrame | None = None
    figures: list = field(default_factory=list)
    text: str = ""
    elapsed: float = 0.0
    error: str | None = None


@dataclass
class TourReport:
    """All sections of a tour run; ``summary()`` for the table, ``save()`` for HTML."""

    sections: list
    mode: str
    random_state: int
    elapsed: float

    @property
    def ok(self) -> bool:
        return all(s.error is None for s in self.sections)

    def summary(self) -> pd.DataFrame:
        return pd.DataFrame([
            {"analysis": s.title, "data": s.dataset,
             "result": s.headline if s.error is None else "FAILED: " + s.error.splitlines()[-1],
             "seconds": round(s.elapsed, 1)}
            for s in self.sections
        ])

    def to_html(self) -> str:
        from . import __version__

        parts = [
            "<!DOCTYPE html><html><head><meta charset='utf-8'>",
            "<title>fairlens tour</title><style>",
            "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;"
            "padding:0 1em;color:#222;line-height:1.45}",
            "table{border-collapse:collapse;margin:1em 0;font-size:.9em}",
            "td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}",
            "th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}",
            "img{max-width:100%;border:1px solid #eee;margin:.5em 0}",
            ".err{background:#fee;border:1px solid #c00;padding:1em;white-space:pre-wrap}",
            "section{border-top:2px solid #ddd;margin-top:2em}",
            "</style></head><body>",
            f"<h1>fairlens tour</h1><p>fairlens {__version__}, {self.mode} mode, "
            f"random_state={self.random_state}, {self.elapsed:.0f} s in all. Every number "
            "below was computed on this machine by <code>fairlens tour</code>.</p>",
            "<h2>Summary</h2>", self.summary().to_html(index=False, escape=True),
        ]
        for s in self.sections:
            parts.append(f"<section id='{s.key}'><h2>{html.escape(s.title)}</h2>")
            parts.append(f"<p><em>Data: {html.escape(s.dataset)} &middot; {s.elapsed:.1f} s"
                         "</em></p>")
            if s.text:
                parts.append(f"<p>{s.text}</p>")
            if s.error is not None:
                parts.append(f"<div class='err'>{html.escape(s.error)}</div>")
            if s.table is not None:
                parts.append(s.table.to_html(index=False, float_format=lambda v: f"{v:.4g}"))
            for fig in s.figures:
                parts.append(f"<img alt='{html.escape(s.title)}' "
                             f"src='data:image/png;base64,{_png(fig)}'>")
            parts.append("</section>")
        parts.append("</body></html>")
        return "\n".join(parts)

    def save(self, path) -> Path:
        """Write the HTML report to ``path`` (its folder must exist; never created)."""
        path = check_report_path(path)
        path.write_text(self.to_html(), encoding="utf-8")
        return path


def check_report_path(path, name="out") -> Path:
    """Validate where a report will be written, before any work is done.

    The folder must exist (it is never created silently), ``path`` must not be a folder,
    no part of it may be an existing file, and the folder must be writable. Returns the
    path; raises ``ValueError`` (``TypeError`` for a non-path) with a one-line message.
    """
    import os

    if not isinstance(path, (str, os.PathLike)) or str(path) == "":
        raise TypeError(f"{name} must be a file path (str or os.PathLike); got {path!r}")
    path = Path(path).expanduser()
    if path.is_dir():
        raise ValueError(f"{name}: {str(path)!r} is a directory; give a file name, e.g. "
                         f"{str(path / 'fairlens-tour.html')!r}")
    parent = path.parent
    ancestor = parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if ancestor.exists() and not ancestor.is_dir():
        raise ValueError(f"{name}: {str(path)!r} is under {str(ancestor)!r}, which is a file, "
                         "not a folder")
    if not parent.is_dir():
        raise ValueError(f"{name}: the folder {str(parent)!r} does not exist; create it "
                         "first or choose another path")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{name}: the folder {str(parent)!r} is not writable")
    if path.exists() and not os.access(path, os.W_OK):
        raise ValueError(f"{name}: {str(path)!r} exists and is not writable")
    return path


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode("ascii")


# ------------------------------------------------------------------------ sections
def _shuffle_section(budget, random_state):
    import matplotlib.pyplot as plt

    from .datasets import load_admission
    from .shuffle import (ShuffledModel, attributions, batch_consistency, exact_shapley_values,
                          fairness_before_after, plots)

    adm = load_admission(version="1")  # bundled (400 applicants)
    cols = ["GRE Score", "TOEFL Score", "University Rating", "Research"]
    X = adm.X[:, [adm.index_of(c) for c in cols]].copy()
    lo, hi = X[:, :3].min(0), X[:, :3].max(0)
    X[:, :3] = (X[:, :3] - lo) / (hi - lo)

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
    for name, kw in attacks.items():
        model = ShuffledModel(honest, "Research", 1, feature_names=cols,
                              random_state=random_state, **kw)
        fair = fairness_before_after(model, X, adm.y, threshold=threshold,
                                     sensitive_features=X[:, 3]).set_index("metric")
        att = attributions(model, Xe, explainers, background=bg, random_state=random_state)
        prot = att[att.protected].set_index("explainer")
        exact = np.mean([abs(exact_shapley_values(model, x, bg[:20])[3]) for x in Xe[:5]])
        row = {"attack": name,
               "DP difference before": fair.loc["demographic_parity_difference", "before"],
               "DP difference after": fair.loc["demographic_parity_difference", "after"],
               "exact Shapley |Research|": exact,
               "linear SHAP |Research|": prot.loc["linear", "mean_abs"]}
        if "shap" in prot.index:
            row["SHAP |Research|"] = prot.loc["shap", "mean_abs"]
        row["detector flags it"] = batch_consistency(model, X, random_state=random_state).suspicious
        rows.append(row)
    table = pd.DataFrame(rows)
    dom = ShuffledModel(honest, "Research", 1, attack="dominance", feature_names=cols,
                        random_state=random_state)
    batch = dom.attack_batch(X)
    batch.group_labels = ("research", "no research")
    fig, ax = plt.subplots(figsize=(6, 3.5))
    plots.plot_score_change(batch, ax=ax, title="Dominance: score per applicant, f -> f'")
    plt.close(fig)
    caught = int(table["detector flags it"].sum())
    headline = (f"attacks raise the demographic-parity gap from "
                f"{table['DP difference before'].iloc[0]:.2f} to up to "
                f"{table['DP difference after'].max():.2f}, while the exact Shapley value of "
                f"Research stays at most {table['exact Shapley |Research|'].max():.1e}; "
                f"detector caught {caught}/3 attacks"
                f"{' but wrongly flagged the honest model' if honest_flag else ''}")
    text = ("The admission score f ignores research experience. Each attack hands back the "
            "same scores re-ordered so that applicants with research rank higher: the group "
            "gap grows, yet the exact Shapley value of <b>Research</b> is zero, because f' "
            "shuffles whatever batch the explainer sends (the paper's theorem). Linear SHAP "
            "explains a linear model fitted to f' and does see part of the shift (Eq. 15). "
            "Mixing follows Algorithm 3 as printed (on a tail of the coin the higher original "
            "score wins), so it only ever moves research applicants up. "
            "Querying the same rows in different batches (the detector) exposes the attack.")
    return table, [fig], headline, text, "Graduate Admission v1 (bundled, 400 applicants)"


def _maft_section(budget, random_state):
    import matplotlib.pyplot as plt

    from .datasets import load_adult
    from .maft import AEQUITAS, MAFT
    from .models import train_mlp

    census = load_adult(encoding="benchmark")
    model = train_mlp(census, random_state=random_state)
    rows, results = [], {}
    for name, cls in (("MAFT", MAFT), ("AEQUITAS", AEQUITAS)):
        res = cls(model, census, protected=["sex"]).run(
            n_seeds=budget["maft_seeds"], n_local=budget["maft_local"],
            random_state=random_state)
        results[name] = res
        rows.append({"method": name, "seeds x local": f"{budget['maft_seeds']} x "
                                                        f"{budget['maft_local']}",
                     "discriminatory instances": res.n_instances,
                     "global": res.n_global, "local": res.n_local,
                     "model queries (rows)": res.queries,
                     "instances / s": res.instances_per_second,
                     "seconds": res.elapsed})
    table = pd.DataFrame(rows)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    results["MAFT"].plot(ax=ax)
    ax.set_title("MAFT on census (protected: sex)")
    plt.close(fig)
    m = results["MAFT"]
    headline = (f"MLP accuracy {model.test_score_:.3f}; MAFT found {m.n_instances} "
                f"discriminatory inputs ({m.instances_per_second:.0f}/s), AEQUITAS "
                f"{results['AEQUITAS'].n_instances}")
    text = ("Each discriminatory instance is a person whose predicted income class flips "
            "when only their sex is changed. MAFT estimates gradients from two model calls "
            "per feature (zero-order), so it needs no access to the network's weights.")
    return table, [fig], headline, text, "UCI Adult, benchmark encoding (bundled)"


def _testsgd_section(budget, random_state):
    import matplotlib.pyplot as plt

    from .datasets import load_adult
    from .models import train_mlp
    from .testsgd import TestSGD

    census = load_adult()
    model = train_mlp(census, random_state=random_state)
    report = TestSGD(model, census, sensitive=["sex", "race", "age"], theta=0.05,
                     sample_thr=budget["testsgd_samples"], max_samples=budget["testsgd_max"],
                     random_state=random_state).run()
    top = report.top(5)
    keep = [c for c in ("rule_set", "support", "rate_in", "rate_out", "score", "margin",
                        "fresh_score", "fresh_margin", "n_samples") if c in top.columns]
    table = top[keep].reset_index(drop=True)
    table["rule_set"] = table["rule_set"].astype(str)
    fig = report.plot()
    fig = fig if hasattr(fig, "savefig") else fig.figure
    plt.close(fig)
    best = table.iloc[0]
    headline = (f"{report.n_rule_sets} frequent rule sets; worst: {best['rule_set']} "
                f"(score {best['fresh_score']:.3f} +- {best['fresh_margin']:.3f} re-estimated on "
                f"fresh samples; {best['score']:.3f} when selected)")
    text = ("A rule set such as <i>sex=Male, race=White, 40&le;age&lt;60</i> names a "
            "group; its score is the gap between the favourable-outcome rates inside and "
            "outside the group, estimated by sampling until the error margin is small. "
            "The top of a ranking of thousands of noisy estimates is biased upward, so the "
            "top rule sets are re-estimated on fresh samples and ranked by that.")
    return table, [fig], headline, text, "UCI Adult, readable values (bundled)"


def _certify_section(budget, random_state):
    import matplotlib.pyplot as plt
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import train_test_split

    from .certify import FeaturePartitionedForest, certify
    from .datasets import load_breast_cancer

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
    for name, forest in forests.items():
        forest.fit(Xtr, ytr)
        budgets = budget["budgets"] if name == "random forest" else (int(name[-2]),)
        for b in budgets:
            res = certify(forest, Xte, yte, budget=b, method="cascade")
            rows.append({"forest": name, "b": b, "clean": res.accuracy_clean,
                         "FLB": res.accuracy_flb, "ELB": res.accuracy_elb,
                         "exact": res.accuracy_exact, "sent to brute force": res.n_brute,
                         "seconds": res.elapsed})
    table = pd.DataFrame(rows)
    rf = table[table.forest == "random forest"]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for col, style in (("FLB", "o--"), ("ELB", "s-."), ("exact", "^-")):
        ax.plot(rf.b, rf[col], style, label=f"random forest, {col}")
    fpf = table[table.forest != "random forest"]
    ax.plot(fpf.b, fpf.exact, "k*-", label="FPF (one per b), exact")
    ax.set_xlabel("attacker budget b (features changed)")
    ax.set_ylabel("accuracy under attack")
    ax.set_xticks(list(budget["budgets"]))
    ax.legend(fontsize=8)
    plt.close(fig)
    worst = rf.iloc[-1]
    headline = (f"random forest: {worst['clean']:.3f} clean -> {worst['exact']:.3f} exact "
                f"under b={int(worst['b'])}; FLB/ELB certify {worst['FLB']:.3f}/"
                f"{worst['ELB']:.3f} without search")
    text = ("An attacker may change any b features of a test instance. FLB and ELB are fast "
            "lower bounds on the accuracy under attack; the cascade runs exact brute force "
            "only where they cannot decide. A Feature Partitioned Forest trains each tree on "
            "its own feature group, so b changed features corrupt at most r&middot;b trees.")
    return table, [fig], headline, text, "Wisconsin breast cancer (scikit-learn), 114 test rows"


_SECTIONS = [
    ("shuffle", "1. Shuffling attacks hide a protected feature from SHAP", _shuffle_section),
    ("maft", "2. MAFT: black-box individual fairness testing", _maft_section),
    ("testsgd", "3. TestSGD: subtle group discrimination", _testsgd_section),
    ("certify", "4. Certified accuracy of tree ensembles under b-feature attacks",
     _certify_section),
]


def run_tour(quick=False, out=None, random_state=0, progress=True, only=None) -> TourReport:
    """Run the tour; write the HTML report to ``out`` when given.

    Parameters
    ----------
    quick : bool
        About a minute in all (smaller budgets, no SHAP) instead of a few minutes.
    out : path-like, optional
        Where to write the self-contained HTML report. Checked before any analysis runs:
        its folder must exist and it must not be a directory (``ValueError`` otherwise).
    random_state : int
        Seed of every random step.
    progress : bool
        Show a progress bar over the four analyses.
    only : list of str, optional
        Run only these sections (``"shuffle"``, ``"maft"``, ``"testsgd"``, ``"certify"``).

    A section that fails is reported (with its traceback) in the summary and the HTML, and
    the others still run; ``report.ok`` tells whether all succeeded.
    """
    from tqdm.auto import tqdm

    if out is not None:
        out = check_report_path(out)
    keys = [k for k, _, _ in _SECTIONS]
    if only is not None:
        unknown = sorted(set(only) - set(keys))
        if unknown:
            raise ValueError(f"unknown tour sections {unknown}; choose from {keys}")
    mode = "quick" if quick else "full"
    budget = BUDGETS[mode]
    sections = []
    start = time.perf_counter()
    todo = [s for s in _SECTIONS if only is None or s[0] in only]
    bar = tqdm(todo, desc="fairlens tour", disable=not progress, unit="analysis")
    for key, title, fn in bar:
        bar.set_postfix_str(key)
        t0 = time.perf_counter()
        section = TourSection(key=key, title=title, dataset="")
        try:
            table, figs, headline, text, data = fn(budget, random_state)
            section.table, section.figures = table, figs
            section.headline, section.text, section.dataset = headline, text, data
        except Exception:  # reported, not swallowed: the summary and HTML show it
            section.error = traceback.format_exc()
        section.elapsed = time.perf_counter() - t0
        sections.append(section)
    report = TourReport(sections=sections, mode=mode, random_state=random_state,
                        elapsed=time.perf_counter() - start)
    if out is not None:
        report.save(out)
    return report
