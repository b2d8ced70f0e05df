"""matplotlib figures for shuffling attacks (used by the widget and tutorial 01)."""
from __future__ import annotations

import numbers
import textwrap

import numpy as np

from .._base import Interval, validated

__all__ = [
    "plot_score_change",
    "plot_attributions",
    "plot_attribution_sweep",
    "plot_rank_counts",
    "plot_fairness",
    "plot_batch_consistency",
]

FAVOURED_COLOR = "#e6a700"  # the paper's yellow group (favoured)
OTHER_COLOR = "#2a9d5c"  # the paper's green group


def _ax(ax, figsize=(5, 4)):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


@validated({
    "batch": "no_validation", "ax": "no_validation", "max_lines": [Interval(numbers.Integral, 1, None)],
    "title": [str, None], "labels": "no_validation", "threshold": [Interval(numbers.Real, None, None), None],
})
def plot_score_change(batch, ax=None, max_lines=500, title=None, labels=None, threshold=None):
    """Figure 1: one line per instance from ``f(x)`` (left) to ``f'(x)`` (right).

    Parameters
    ----------
    batch : ShuffleBatch
    ax : matplotlib Axes, optional
    max_lines : int
        At most this many instances are drawn (evenly spaced by index).
    labels : (str, str), optional
        Legend labels of the favoured and the other group.
    threshold : float, optional
        Decision threshold, drawn as a dotted line.
    """
    ax = _ax(ax)
    before, after, fav = batch.scores_before, batch.scores_after, batch.favoured
    idx = np.arange(len(before))
    if len(idx) > max_lines:
        idx = np.linspace(0, len(before) - 1, max_lines).astype(int)
    labels = labels or batch.group_labels
    from matplotlib.collections import LineCollection

    for group, color, lab in ((False, OTHER_COLOR, labels[1]), (True, FAVOURED_COLOR, labels[0])):
        sel = idx[fav[idx] == group]
        if sel.size == 0:
            continue
        segs = np.stack([np.column_stack([np.zeros(sel.size), before[sel]]),
                         np.column_stack([np.ones(sel.size), after[sel]])], axis=1)
        ax.add_collection(LineCollection(segs, colors=color, alpha=0.45, linewidths=0.8))
        ax.plot([], [], color=color, label=f"{lab} (n={int((fav == group).sum())})")
    lo = min(before.min(), after.min()) if len(before) else 0.0
    hi = max(before.max(), after.max()) if len(before) else 1.0
    pad = 0.03 * (hi - lo if hi > lo else 1.0)
    ax.set_ylim(lo - pad, hi + pad)
    ax.set_xticks([0, 1])
    ax.set_xticklabels(["f (honest)", "f' (attacked)"])
    ax.set_ylabel("score")
    ax.set_xlim(-0.05, 1.05)
    if threshold is not None:
        ax.axhline(threshold, color="k", ls=":", lw=1.2)
        ax.text(1.06, threshold, f"threshold {threshold:.3g}", va="center", clip_on=False)
    # legend outside the data (below the axes)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=1, frameon=False)
    if title:
        ax.set_title(title)
    return ax


@validated({
    "df": "no_validation", "ax": "no_validation", "value": [str], "title": [str, None],
})
def plot_attributions(df, ax=None, value="mean_abs", title=None):
    """Grouped bars: ``value`` per feature for each explainer (one Figure 2 column)."""
    ax = _ax(ax, (6, 4))
    explainers = list(dict.fromkeys(df["explainer"]))
    features = list(dict.fromkeys(df["feature"]))
    width = 0.8 / max(len(explainers), 1)
    x = np.arange(len(features))
    for k, e in enumerate(explainers):
        sub = df[df["explainer"] == e].set_index("feature").reindex(features)
        ax.bar(x + k * width - 0.4 + width / 2, sub[value].to_numpy(), width, label=e)
    prot = set(df.loc[df["protected"], "feature"])
    ax.set_xticks(x)
    ax.set_xticklabels([f"{f}*" if f in prot else f for f in features], rotation=30, ha="right")
    ax.set_ylabel(f"{value.replace('_', ' ')} attribution")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    ax.set_title(title or "attribution per feature (* = protected)")
    return ax


@validated({
    "sweep": "no_validation", "param": [str], "ax": "no_validation", "explainer": [str, None],
    "title": [str, None],
})
def plot_attribution_sweep(sweep, param, ax=None, explainer=None, title=None):
    """Figure 2 row: mean |attribution| of every feature against an attack parameter.

    ``sweep`` is a DataFrame as returned by :func:`attributions` with an extra
    column ``param``; one line per feature (protected dashed).
    """
    ax = _ax(ax)
    d = sweep if explainer is None else sweep[sweep["explainer"] == explainer]
    for feat, g in d.groupby("feature", sort=False):
        g = g.sort_values(param)
        prot = bool(g["protected"].iloc[0])
        ax.plot(g[param], g["mean_abs"], marker="o", ls="--" if prot else "-",
                lw=2 if prot else 1, label=f"{feat}{' (protected)' if prot else ''}")
    ax.set_xlabel(param)
    ax.set_ylabel("mean |attribution|")
    ax.set_title(title or (explainer or ""))
    ax.legend()
    return ax


@validated({
    "table": "no_validation", "ax": "no_validation", "title": [str, None],
})
def plot_rank_counts(table, ax=None, title=None):
    """Figure 4: fraction of instances where the protected feature ranks 1st/2nd/3rd.

    ``table`` has one row per setting (index = setting label) and columns
    ``top1, top2, top3``.
    """
    ax = _ax(ax, (6, 3.5))
    t = table[["top1", "top2", "top3"]] * 100
    t.plot.barh(stacked=True, ax=ax, color=["#c0392b", "#e67e22", "#f1c40f"])
    ax.set_xlabel("% of explained instances")
    ax.set_xlim(0, 100)
    ax.invert_yaxis()
    ax.set_title(title or "rank of the protected feature")
    return ax


@validated({
    "df": "no_validation", "ax": "no_validation", "title": [str, None], "ax_ratio": "no_validation",
})
def plot_fairness(df, ax=None, title=None, ax_ratio=None):
    """Figure 3 v: fairness metrics of ``f`` and ``f'`` side by side.

    Differences (ideal 0) and ratios (ideal 1, metric names containing
    ``ratio``) are drawn on separate axes: ``ax_ratio`` if given, else a new
    axes appended to the right of ``ax``. A NaN value (e.g. a group without
    favourable outcomes) is written as "NaN" where its bar would be, never
    dropped silently.
    """
    ax = _ax(ax, (7, 3.5))
    is_ratio = df["metric"].astype(str).str.contains("ratio").to_numpy()
    parts = [(ax, df[~is_ratio], 0.0)]
    if is_ratio.any():
        if ax_ratio is None:
            from mpl_toolkits.axes_grid1 import make_axes_locatable

            ax_ratio = make_axes_locatable(ax).append_axes("right", size="30%", pad=0.9)
        parts.append((ax_ratio, df[is_ratio], 1.0))
    for k, (a, sub, ideal) in enumerate(parts):
        x = np.arange(len(sub))
        for off, col, lab, color in ((-0.2, "before", "f (before)", "#7f8c8d"),
                                     (0.2, "after", "f' (after)", "#c0392b")):
            vals = sub[col].to_numpy(dtype=float)
            a.bar(x + off, np.nan_to_num(vals, nan=0.0), 0.4, label=lab if k == 0 else None, color=color)
            for xi, v in zip(x, vals):
                if not np.isfinite(v):
                    a.text(xi + off, ideal, "NaN", ha="center", va="bottom", rotation=90,
                           color=color)
        a.set_xticks(x)
        a.set_xticklabels([str(m).replace("_difference", " diff.").replace("_", " ") for m in sub["metric"]],
                          rotation=30, ha="right")
        a.axhline(ideal, color="k", lw=0.8, ls="--")
        a.set_ylabel("ratio (ideal 1)" if ideal else "difference (ideal 0)")
    if len(parts[0][1]):
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False,
                  borderaxespad=-2.2)
    ax.set_title(title or "group fairness before / after", pad=28)
    return ax


@validated({
    "result": "no_validation", "ax": "no_validation", "title": [str, None],
})
def plot_batch_consistency(result, ax=None, title=None):
    """Max |score change| per query of the batch-consistency detector."""
    ax = _ax(ax, (6, 3))
    q = result.queries
    colors = ["#c0392b" if v > result.tol else "#2a9d5c" for v in q["max_abs_diff"]]
    ax.bar(np.arange(len(q)), q["max_abs_diff"], color=colors)
    ax.set_xticks(np.arange(len(q)))
    ax.set_xticklabels(q["kind"], rotation=30, ha="right")
    ax.axhline(result.tol, color="k", ls=":", lw=1, label="tolerance")
    ax.set_ylabel("max |score change|")
    # the verdict is a sentence: wrapped to the axes, so the figure keeps its width
    ax.set_title(textwrap.fill(title or result.verdict, 55))
    ax.legend()
    return ax
