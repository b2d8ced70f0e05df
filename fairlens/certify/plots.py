"""matplotlib figures for :mod:`fairlens.certify` (used by the widget and the tutorial)."""
from __future__ import annotations

import numbers

import numpy as np

from .._base import Interval, validated

__all__ = [
    "STATUS_COLORS",
    "plot_status_counts",
    "plot_accuracy_vs_budget",
    "plot_cover_matrix",
    "plot_flb",
    "plot_witness",
    "plot_tree_contributions",
]

STATUS_COLORS = {
    "misclassified": "#7f7f7f",
    "certified_flb": "#1a9850",
    "certified_elb": "#91cf60",
    "robust_brute": "#d9ef8b",
    "attackable": "#d73027",
    "not_certified": "#fdae61",
    "unknown": "#c2a5cf",   # not settled before certify's time_limit
}


def _ax(ax, figsize=(6, 3)):
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


@validated({
    "result": "no_validation", "ax": "no_validation",
})
def plot_status_counts(result, ax=None):
    """Horizontal bar of how many instances got each verdict."""
    ax = _ax(ax, (6, 2.6))
    names = [k for k, v in result.stage_counts.items() if v > 0] or list(result.stage_counts)
    vals = [result.stage_counts[k] for k in names]
    ax.barh(names, vals, color=[STATUS_COLORS[k] for k in names], edgecolor="k")
    for i, v in enumerate(vals):
        ax.text(v, i, f" {v}", va="center")
    ax.invert_yaxis()
    ax.set_xlabel("instances")
    acc = "n/a" if result.accuracy is None else f"{result.accuracy:.3f}"
    interval = getattr(result, "accuracy_interval", None)
    if result.stage_counts.get("unknown", 0) and interval is not None:
        acc = f"in [{interval[0]:.3f}, {interval[1]:.3f}] (time limit)"
    ax.set_title(f"{result.method}, b = {result.budget}: accuracy under attack {acc}")
    return ax


@validated({
    "frame": "no_validation", "ax": "no_validation", "title": [str, None],
})
def plot_accuracy_vs_budget(frame, ax=None, title=None):
    """Accuracy under attack against b for FLB, ELB and exact (and clean).

    ``frame`` has columns ``budget, accuracy_clean, accuracy_flb,
    accuracy_elb, accuracy_exact`` (see :func:`fairlens.certify.accuracy_under_attack`).
    """
    ax = _ax(ax, (5, 3.2))
    b = frame["budget"].to_numpy()
    styles = [("accuracy_exact", "exact (brute force)", "k", "o-"),
              ("accuracy_elb", "ELB", "#1f77b4", "s--"),
              ("accuracy_flb", "FLB", "#ff7f0e", "^:")]
    for col, label, color, style in styles:
        if col in frame and frame[col].notna().any():
            ax.plot(b, frame[col], style, color=color, label=label)
    if "accuracy_clean" in frame:
        ax.axhline(frame["accuracy_clean"].iloc[0], color="grey", lw=1, ls="-.", label="no attack")
    ax.set_xticks(b)
    ax.set_xlabel("attacker budget b (features changed)")
    ax.set_ylabel("accuracy under attack")
    ax.set_ylim(-0.02, 1.02)
    # legend below the axes, off the points
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2, frameon=False)
    if title:
        ax.set_title(title)
    return ax


@validated({
    "covers": "no_validation", "ax": "no_validation", "cover": "no_validation",
    "feature_names": "no_validation", "max_features": [Interval(numbers.Integral, 1, None)],
})
def plot_cover_matrix(covers, ax=None, cover=None, feature_names=None, max_features=40):
    """Trees x features matrix of S_f^+ / S_f^- membership for one instance.

    Blue: tree in ``S_f^+`` (its path tests ``x_f <= v`` true: the attacker
    must increase ``x_f``), orange: ``S_f^-``, purple: both. Rows of trees not
    voting the true class are greyed (they are wrong before the attack).
    ``cover`` (list of ``(feature, "+"/"-")``) outlines the chosen sets and
    marks the trees they cover. Only features used by some path are shown
    (at most ``max_features``, the most used first).
    """
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Rectangle

    mem = covers.membership
    used = np.flatnonzero((mem > 0).any(axis=0))
    if used.size == 0:
        used = np.arange(min(mem.shape[1], 1))
    used = used[np.argsort(-(mem[:, used] > 0).sum(axis=0), kind="mergesort")][:max_features]
    cover = cover or []
    cover_feats = [f for f, _ in cover]
    # keep cover features visible
    extra = [f for f in cover_feats if f not in used]
    used = np.concatenate([used, np.array(extra, dtype=int)]) if extra else used
    sub = mem[:, used]
    n_trees, n_f = sub.shape
    ax = _ax(ax, (min(12, 1.5 + 0.28 * n_f), min(10, 1.2 + 0.18 * n_trees)))
    cmap = ListedColormap(["white", "#4575b4", "#f46d43", "#8c510a"])
    ax.imshow(sub, cmap=cmap, vmin=0, vmax=3, aspect="auto", interpolation="nearest")
    for t in np.flatnonzero(covers.wrong):
        ax.add_patch(Rectangle((-0.5, t - 0.5), n_f, 1, color="0.6", alpha=0.55, lw=0))
    covered = np.zeros(n_trees, dtype=bool)
    for f, s in cover:
        j = int(np.flatnonzero(used == f)[0])
        bit = 1 if s == "+" else 2
        ax.add_patch(Rectangle((j - 0.5, -0.5), 1, n_trees, fill=False, ec="k", lw=2))
        covered |= (mem[:, f] & bit).astype(bool) & ~covers.wrong
    for t in np.flatnonzero(covered):
        ax.plot(-0.9, t, marker=">", color="k", ms=4, clip_on=False)
    names = feature_names or [f"x{f}" for f in range(mem.shape[1])]
    ax.set_xticks(range(n_f))
    ax.set_xticklabels([names[f] for f in used], rotation=90)
    # at most ~12 row labels whatever the figure height: they never overlap
    height_in = ax.get_position().height * ax.figure.get_figheight()
    max_labels = max(2, int(height_in * 72 / (2.2 * 10)))
    step = max(1, int(np.ceil(n_trees / max_labels)))
    ax.set_yticks(range(0, n_trees, step))
    ax.set_ylabel("tree (grey: wrong before attack; > covered)")
    ax.set_title("S_f+ (blue), S_f- (orange), both (brown)")
    return ax


@validated({
    "covers": "no_validation", "ax": "no_validation", "target": "no_validation",
    "feature_names": "no_validation", "top": [Interval(numbers.Integral, 1, None)],
})
def plot_flb(covers, ax=None, target=None, feature_names=None, top=12):
    """Sorted ``max(|S_f^+|, |S_f^-|)`` with the b largest summed against delta (FLB, section 4.3)."""
    ax = _ax(ax, (5, 3))
    c = target if target is not None else min(covers.delta, key=covers.delta.get) if covers.delta else None
    if c is None:
        ax.text(0.5, 0.5, "single class", ha="center")
        return ax
    p, m = covers.plus_sizes[c], covers.minus_sizes[c]
    mx = np.maximum(p, m)
    order = np.argsort(-mx, kind="mergesort")[:top]
    names = feature_names or [f"x{f}" for f in range(len(mx))]
    colors = ["#4575b4" if p[f] >= m[f] else "#f46d43" for f in order]
    bars = ax.bar(range(len(order)), mx[order], color=colors, edgecolor="k")
    for j in range(min(covers.budget, len(order))):
        bars[j].set_hatch("//")
    total, _ = covers.flb[c]
    delta = covers.delta[c]
    soft = getattr(covers, "vote", "hard") in ("soft", "additive")
    ax.axhline(delta, color="r", ls="--", label=f"delta = {delta:.4g}")
    ax.set_xticks(range(len(order)))
    ax.set_xticklabels([names[f] for f in order], rotation=90)
    verdict = "certified" if total < delta else "not certified"
    ax.set_title(f"FLB: b = {covers.budget} largest sum to {total:.4g}\nvs delta {delta:.4g} -> {verdict}")
    if getattr(covers, "vote", "hard") == "additive":
        ax.set_ylabel("margin swing of S_f (max of + / -)")
    else:
        ax.set_ylabel("probability swing of S_f (max of + / -)" if soft else "|S_f| (max of + / -)")
    ax.legend()
    return ax


@validated({
    "x": "no_validation", "witness": "no_validation", "feature_names": "no_validation", "ax": "no_validation",
})
def plot_witness(x, witness, feature_names=None, ax=None):
    """Original and attacked values of the features a witness changes."""
    ax = _ax(ax, (5, 2.5))
    x = np.asarray(x, dtype=float)
    w = np.asarray(witness, dtype=float)
    changed = np.flatnonzero(x != w)
    names = feature_names or [f"x{f}" for f in range(len(x))]
    pos = np.arange(len(changed))
    ax.barh(pos - 0.2, x[changed], height=0.4, label="x", color="0.6")
    ax.barh(pos + 0.2, w[changed], height=0.4, label="x' (witness)", color="#d73027")
    ax.set_yticks(pos)
    ax.set_yticklabels([names[f] for f in changed])
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    ax.set_title("brute-force witness: changed features")
    return ax


@validated({
    "covers": "no_validation", "ax": "no_validation", "target": "no_validation",
    "max_trees": [Interval(numbers.Integral, 1, None)],
})
def plot_tree_contributions(covers, ax=None, target=None, max_trees=80):
    """Boosted models: each tree's contribution to the margin ``s_y - s_c`` and its worst case.

    The boosted analogue of the ``S_f^+``/``S_f^-`` matrix: one bar per tree adding to the
    true class ``y`` or to the target ``c`` (green: the tree's current leaf supports ``y``,
    red: it supports ``c``); the grey hatched extension is the tree's swing -- how far the
    margin falls if an attacked feature sends the instance to the tree's worst leaf. Trees
    that no feature on the instance's path can move (none, for a tree with a split) keep
    their bar. The margin (sum of the bars plus the base scores) is in the title.
    """
    from matplotlib.patches import Patch

    ax = _ax(ax, (6, 3))
    c = target if target is not None else (min(covers.delta, key=covers.delta.get) if covers.delta else None)
    contrib = getattr(covers, "contributions", None)
    if c is None or contrib is None:
        ax.text(0.5, 0.5, "no boosted contributions", ha="center", va="center", transform=ax.transAxes)
        return ax
    group = covers.tree_group
    y = covers.y
    sign = np.where(group == y, 1.0, np.where(group == c, -1.0, 0.0))
    keep = np.flatnonzero(sign != 0)[:max_trees]
    val = sign[keep] * contrib[keep]
    w = covers.weights[c][keep]
    pos = np.arange(keep.size)
    ax.bar(pos, val, color=np.where(val >= 0, "#1a9850", "#d73027"), edgecolor="none", width=0.8)
    ax.bar(pos, -w, bottom=val, color="0.75", hatch="///", edgecolor="0.5", lw=0, width=0.8)
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xlabel(f"tree (adding to class {y} or {c}; first {keep.size})")
    ax.set_ylabel("contribution to s_y - s_c")
    ax.set_title(f"margin s_y - s_c = {covers.delta[c]:.4g}; worst case of every tree: "
                 f"{covers.delta[c] - covers.weights[c].sum():.4g}")
    ax.legend(handles=[Patch(color="#1a9850", label="supports y"), Patch(color="#d73027", label="supports c"),
                       Patch(facecolor="0.75", hatch="///", label="swing (worst leaf)")],
              loc="upper right")
    return ax
