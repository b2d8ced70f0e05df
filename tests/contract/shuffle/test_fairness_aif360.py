"""fairness_before_after with AIF360's signed metrics (issue 16, item 4)."""
import numpy as np
import pytest

from fairlens.metrics import aif360_report, statistical_parity_difference
from fairlens.shuffle import ShuffledModel, fairness_before_after


def f(A):
    return np.asarray(A, dtype=float)[:, :3].mean(1)


def test_privileged_selects_the_signed_metrics_of_the_paper():
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.random((80, 3)), rng.integers(0, 2, 80)]).astype(float)
    y = rng.integers(0, 2, 80)
    m = ShuffledModel(f, protected=3, favoured=1, attack="dominance")
    out = fairness_before_after(m, X, y, threshold=0.5, protected=X[:, 3],
                                privileged=1.0).set_index("metric")
    b = ShuffledModel(f, protected=3, favoured=1, attack="dominance").attack_batch(X)
    for col, s in (("before", b.scores_before), ("after", b.scores_after)):
        want = aif360_report(y, (s >= 0.5).astype(int), protected=X[:, 3],
                             privileged=1.0).set_index("metric")["value"]
        np.testing.assert_allclose(out[col].to_numpy(), want.to_numpy(), rtol=0, atol=0)
    # Dominance favours group 1 (privileged): the unprivileged selection rate falls behind
    assert out.loc["statistical_parity_difference", "after"] < out.loc[
        "statistical_parity_difference", "before"]
    # default groups are "favoured"/"other"
    d = fairness_before_after(m, X, y, privileged="favoured").set_index("metric")
    assert d.loc["statistical_parity_difference", "after"] == pytest.approx(
        statistical_parity_difference(y, (b.scores_after >= 0.5).astype(int),
                                      protected=b.favoured, privileged=True))
    with pytest.raises(ValueError, match="privileged"):
        fairness_before_after(m, X, y, protected=X[:, 3], privileged="male")
