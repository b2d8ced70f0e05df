"""matplotlib figures of the TestSGD slice (used by the widget and the tutorial)."""
from __future__ import annotations

import numbers

import numpy as np

from .._base import Interval, validated

__all__ = ["plot_supports", "plot_top_rule_sets", "plot_rates", "plot_theta_effect", "plot_mitigation", "plot_themis"]


def _ax(ax, figsize=(7, 4)):
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def _wrap(s, width=60):
    import textwrap

    return "\n".join(textwrap.wrap(s, width)) or s


@validated({
    "report": "no_validation", "k": [Interval(numbers.Integral, 1, None)], "ax": "no_validation",
})
def plot_top_rule_sets(report, k=10, ax=None):
    """Favourable rates inside/outside the group for the first ``k`` rule sets of the report, with Eq. 7
    error bars (selection estimate); the labels also give the fresh re-estimate of the top rule sets."""
    res = [r for r in report.results if np.isfinite(r.score)][:k]
    ax = _ax(ax, figsize=(8, 0.55 * max(3, len(res)) + 1))
    y = np.arange(len(res))[::-1]
    ax.barh(y + 0.2, [r.rate_in for r in res], height=0.4, xerr=[r.margin_in for r in res],
            label="inside the group (R)", color="#d95f02", capsize=2)
    ax.barh(y - 0.2, [r.rate_out for r in res], height=0.4, xerr=[r.margin_out for r in res],
            label="outside (not R)", color="#7570b3", capsize=2)
    ax.set_yticks(y)
    ax.set_yticklabels([f"{_wrap(str(r.rule_set), 50)}\nscore {r.score:.1%} ± {r.margin:.1%}"
                        + (f"; fresh {r.fresh.score:.1%} ± {r.fresh.margin:.1%}"
                           if getattr(r, "fresh", None) is not None else "") for r in res])
    ax.set_xlabel("favourable-prediction rate")
    ax.set_xlim(0, 1)
    # the legend sits between the title and the bars: it never covers a bar
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False, borderaxespad=0.1)
    ax.set_title(f"{report.dataset_name}: top {len(res)} of {report.n_rule_sets} rule sets", pad=26)
    return ax


@validated({
    "result": "no_validation", "ax": "no_validation",
})
def plot_rates(result, ax=None):
    """The two rates of one rule set with their error bars (Theorem 4.2)."""
    ax = _ax(ax, figsize=(4.5, 3.5))
    ax.bar([0, 1], [result.rate_in, result.rate_out], yerr=[result.margin_in, result.margin_out],
           color=["#d95f02", "#7570b3"], capsize=6)
    ax.set_xticks([0, 1])
    ax.set_xticklabels(["R (in group)", "not R"])
    ax.set_ylim(0, 1)
    ax.set_ylabel("favourable-prediction rate")
    side = ("R favoured" if result.rate_in > result.rate_out else
            "R disfavoured" if result.rate_in < result.rate_out else "no difference")
    ax.set_title(f"{_wrap(str(result.rule_set), 45)}\n{side}: score {result.score:.1%} ± {result.margin:.1%} "
                 f"(conf. {result.confidence:.3g}, n={result.n_samples})")
    return ax


@validated({
    "frame": "no_validation", "ax": "no_validation",
})
def plot_theta_effect(frame, ax=None):
    """Number of rule sets and top score against theta (Table 6). ``frame``: theta, n_rule_sets, top_score."""
    ax = _ax(ax, figsize=(5.5, 3.5))
    ax.plot(frame["theta"], frame["n_rule_sets"], "o-", color="#1b9e77")
    ax.set_xscale("log")
    ax.set_xlabel("support threshold theta")
    ax.set_ylabel("frequent rule sets", color="#1b9e77")
    ax2 = ax.twinx()
    ax2.plot(frame["theta"], frame["top_score"], "s--", color="#d95f02")
    ax2.set_ylabel("top group fairness score", color="#d95f02")
    ax2.set_ylim(0, 1)
    return ax


@validated({
    "result": "no_validation", "ax": "no_validation",
})
def plot_mitigation(result, ax=None):
    """Score and accuracy against the number of generated samples added (Table 7)."""
    ax = _ax(ax, figsize=(5.5, 3.5))
    f = result.to_frame()
    x = np.maximum(f["n_added"], 1)
    ax.errorbar(x, f["score"], yerr=f["margin"], fmt="o-", color="#d95f02", label="group fairness score")
    ax.plot(x, f["accuracy"], "s--", color="#1b9e77", label="test accuracy")
    if result.best is not None:
        b = result.steps.iloc[result.best]
        ax.axvline(max(b["n_added"], 1), color="grey", lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.set_xlabel("generated samples added (0 plotted at 1)")
    ax.set_ylim(0, 1)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    ax.set_title("mitigation: " + _wrap(str(result.rule_set), 50))
    return ax


@validated({
    "result": "no_validation", "ax": "no_validation", "k": [Interval(numbers.Integral, 0, None)],
})
def plot_themis(result, ax=None, k=10):
    """Favourable rate of the ``k`` highest and lowest THEMIS subgroups."""
    f = result.to_frame()
    sel = f if len(f) <= 2 * k else f.iloc[list(range(k)) + list(range(len(f) - k, len(f)))]
    ax = _ax(ax, figsize=(7, 0.3 * len(sel) + 1))
    y = np.arange(len(sel))[::-1]
    ax.barh(y, sel["rate"], color="#7570b3")
    ax.set_yticks(y)
    ax.set_yticklabels(sel["subgroup"])
    ax.set_xlim(0, 1)
    ax.set_xlabel("favourable rate on random inputs")
    ax.set_title(f"THEMIS: max - min = {result.score:.1%} over {result.n_subgroups} subgroups")
    return ax


@validated({
    "frequent": "no_validation", "ax": "no_validation",
})
def plot_supports(frequent, ax=None):
    """Distribution of the support of frequent rule sets, one box per rule-set size."""
    ax = _ax(ax, figsize=(5.5, 3.5))
    sizes = np.array([len(r) for r in frequent.rule_sets])
    ks = sorted(set(sizes.tolist()))
    sup = frequent.support
    ax.boxplot([sup[sizes == k] for k in ks])
    ax.set_xticks(range(1, len(ks) + 1),
                  [f"{k} rule{'s' if k > 1 else ''}\n(n={int((sizes == k).sum())})" for k in ks])
    ax.axhline(frequent.theta, color="grey", ls=":", lw=1)
    ax.set_ylabel("support")
    ax.set_title(f"{len(frequent)} frequent rule sets (theta = {frequent.theta:g})")
    return ax
