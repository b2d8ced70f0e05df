"""matplotlib figures of :mod:`fairlens.maft` (shared by the widget and the tutorial)."""
from __future__ import annotations

import numbers

import numpy as np

from .._base import Interval, validated

__all__ = [
    "plot_timeline",
    "plot_comparison",
    "plot_projection",
    "plot_h_sweep",
    "plot_gradient_similarity",
    "plot_gradient_pca",
    "plot_mitigation",
]


def _ax(ax, figsize=(5, 3.5)):
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


@validated({
    "results": "no_validation", "ax": "no_validation", "title": [str, None],
})
def plot_timeline(results, ax=None, title="Cumulative discriminatory instances"):
    """One line per method: unique instances against wall time.

    ``results`` maps a label to a :class:`FairnessTestResult` (or to a
    ``(k, 2)`` array of ``(seconds, count)``).
    """
    ax = _ax(ax)
    for label, res in results.items():
        tl = res if isinstance(res, np.ndarray) else res.timeline
        if tl.size:
            ax.step(tl[:, 0], tl[:, 1], where="post", label=str(label))
    ax.set_xlabel("seconds")
    ax.set_ylabel("unique discriminatory instances")
    ax.set_title(title)
    ax.legend(loc="upper left")
    return ax


@validated({
    "frame": "no_validation", "ax": "no_validation", "value": [str], "by": [str], "hue": [str, None],
})
def plot_comparison(frame, ax=None, value="instances", by="method", hue="dataset"):
    """Grouped bars of ``value`` per ``by`` (and ``hue``) from a summary frame."""
    ax = _ax(ax, (6, 3.5))
    if hue in frame.columns:
        piv = frame.pivot_table(index=hue, columns=by, values=value, aggfunc="mean")
    else:
        piv = frame.set_index(by)[[value]].T
    piv.plot.bar(ax=ax, rot=25)
    for t in ax.get_xticklabels():
        t.set_ha("right")
    ax.set_ylabel(value)
    ax.set_xlabel("")
    return ax


@validated({
    "seeds": "no_validation", "instances": "no_validation", "ax": "no_validation", "pool": "no_validation",
    "max_points": [Interval(numbers.Integral, 1, None)], "random_state": ["random_state"],
})
def plot_projection(seeds, instances, ax=None, pool=None, max_points=3000, random_state=0):
    """2-D PCA projection (fit on ``pool`` or the seeds) of seeds and instances."""
    from sklearn.decomposition import PCA

    ax = _ax(ax)
    base = np.asarray(pool if pool is not None else seeds, dtype=float)
    if base.shape[0] < 2:
        ax.set_title("not enough points to project")
        return ax
    pca = PCA(n_components=2, random_state=random_state).fit(base)
    rng = np.random.default_rng(random_state)

    def _sub(A):
        A = np.asarray(A, dtype=float)
        if A.shape[0] > max_points:
            A = A[rng.choice(A.shape[0], max_points, replace=False)]
        return A

    S = _sub(seeds)
    ax.scatter(*pca.transform(S).T, s=8, c="0.6", label=f"seeds ({len(seeds)})")
    if len(instances):
        Ins = _sub(instances)
        ax.scatter(*pca.transform(Ins).T, s=6, c="C3", alpha=0.5, label=f"discriminatory ({len(instances)})")
    ax.set_xlabel("PC1")
    ax.set_ylabel("PC2")
    ax.legend()
    return ax


@validated({
    "frame": "no_validation", "axes": "no_validation",
})
def plot_h_sweep(frame, axes=None):
    """RQ1: count, speed and success rate against the perturbation size ``h``.

    ``frame`` has columns ``h``, ``instances``, ``per_second``, ``success_rate``
    (one row per run; several runs per ``h`` are shown as a spread).
    """
    import matplotlib.pyplot as plt

    if axes is None:
        _, axes = plt.subplots(3, 1, figsize=(8.4, 9), layout="constrained")
    for ax, col, lab in zip(
        axes, ("instances", "per_second", "success_rate"), ("instances", "instances / s", "success rate")
    ):
        g = frame.groupby("h")[col]
        m, lo, hi = g.mean(), g.min(), g.max()
        ax.plot(m.index, m.values, "o-")
        ax.fill_between(m.index, lo.values, hi.values, alpha=0.2)
        ax.set_xscale("log")
        ax.set_xlabel("perturbation size h")
        ax.set_ylabel(lab)
    return axes


@validated({
    "sims": "no_validation", "ax": "no_validation",
})
def plot_gradient_similarity(sims, ax=None):
    """Violin plot of cosine similarities (dict label -> array)."""
    ax = _ax(ax)
    labels = list(sims)
    ax.violinplot([np.asarray(sims[k])[np.isfinite(sims[k])] for k in labels], showmeans=True)
    ax.set_xticks(range(1, len(labels) + 1))
    ax.set_xticklabels(labels, rotation=0)
    ax.set_ylabel("cosine similarity")
    return ax


@validated({
    "grads": "no_validation", "ax": "no_validation",
})
def plot_gradient_pca(grads, ax=None):
    """RQ3 (Fig. 11): 2-D PCA of several gradient sets (dict label -> (n, d))."""
    from sklearn.decomposition import PCA

    ax = _ax(ax)
    allg = np.concatenate([np.asarray(g) for g in grads.values()])
    pca = PCA(n_components=2).fit(allg)
    for i, (k, g) in enumerate(grads.items()):
        ax.scatter(*pca.transform(np.asarray(g)).T, s=6, alpha=0.5, label=k, c=f"C{i}")
    ax.legend()
    ax.set_xlabel("PC1")
    ax.set_ylabel("PC2")
    return ax


@validated({
    "res": "no_validation", "ax": "no_validation",
})
def plot_mitigation(res, ax=None):
    """Discrimination rate (with CI) and accuracy before/after retraining."""
    ax = _ax(ax)
    fr = res.to_frame()
    x = np.arange(len(fr))
    err = np.vstack([fr.discrimination_rate - fr.ci_low, fr.ci_high - fr.discrimination_rate])
    ax.bar(x - 0.2, fr.discrimination_rate, 0.4, yerr=err, label="discrimination rate", color="C3")
    ax.bar(x + 0.2, fr.accuracy, 0.4, label="accuracy", color="C0")
    ax.set_xticks(x)
    ax.set_xticklabels(fr.model)
    ax.legend()
    return ax
