"""Plot functions draw what they are given (headless Agg)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402

from fairlens.shuffle import ShuffledModel, attributions, batch_consistency, plots  # noqa: E402


def f(A):
    return np.asarray(A, dtype=float)[:, :2].mean(1)


def _X():
    rng = np.random.default_rng(0)
    return np.column_stack([rng.random(30), rng.random(30), rng.integers(0, 2, 30)])


def test_score_change_draws_one_segment_per_instance():
    X = _X()
    b = ShuffledModel(f, protected=2, favoured=1).attack_batch(X)
    ax = b.plot()
    cols = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert sum(len(c.get_segments()) for c in cols) == 30
    segs = np.concatenate([c.get_segments() for c in cols])
    # every segment goes from a score of f to a score of f'
    assert set(np.round(segs[:, 0, 1], 12)) == set(np.round(b.scores_before, 12))
    assert set(np.round(segs[:, 1, 1], 12)) == set(np.round(b.scores_after, 12))
    plt.close("all")


def test_other_plots():
    X = _X()
    m = ShuffledModel(f, protected=2, favoured=1, feature_names=["a", "b", "p"])
    df = attributions(m, X[:5], "linear", background=X)
    ax = plots.plot_attributions(df)
    assert len(ax.patches) == 3 and "p*" in [t.get_text() for t in ax.get_xticklabels()]
    sweep = pd.concat([df.assign(q=q) for q in (0.0, 1.0)])
    ax = plots.plot_attribution_sweep(sweep, "q", explainer="linear")
    assert len(ax.lines) == 3
    ranks = pd.DataFrame({"top1": [0.5, 0.0], "top2": [0.2, 0.3], "top3": [0.1, 0.1]}, index=["a", "b"])
    ax = plots.plot_rank_counts(ranks)
    assert len(ax.patches) == 6
    fair = pd.DataFrame({"metric": ["dp", "di"], "before": [0.1, 0.9], "after": [0.3, 0.6]})
    ax = plots.plot_fairness(fair)
    assert len(ax.patches) == 4
    res = batch_consistency(m, X, random_state=0)
    ax = res.plot()
    assert len(ax.patches) == len(res.queries)
    plt.close("all")
