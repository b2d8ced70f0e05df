import numpy as np
import pandas as pd
import pytest

from fairlens import metrics as M

fl = pytest.importorskip("fairlearn.metrics")

PAIRS = [
    (M.demographic_parity_difference, fl.demographic_parity_difference),
    (M.equal_opportunity_difference, fl.equal_opportunity_difference),
    (M.equalized_odds_difference, fl.equalized_odds_difference),
    (M.disparate_impact_ratio, fl.demographic_parity_ratio),
]


@pytest.mark.parametrize("ours,theirs", PAIRS, ids=[p[0].__name__ for p in PAIRS])
@pytest.mark.parametrize("seed", range(5))
def test_agrees_with_fairlearn(ours, theirs, seed):
    rng = np.random.default_rng(seed)
    n = 500
    yt = rng.integers(0, 2, n)
    yp = (rng.random(n) < 0.3 + 0.4 * yt).astype(int)
    one = rng.choice(["a", "b", "c", "d"], n, p=[0.4, 0.3, 0.2, 0.1])
    two = pd.DataFrame({"g": one, "age": rng.integers(0, 3, n)})
    for sf in (one, pd.Series(one), two, two.to_numpy()):
        assert ours(yt, yp, protected=sf) == pytest.approx(
            theirs(yt, yp, sensitive_features=sf), abs=1e-9)


def test_hand_example():
    # group a: selection 3/4, TPR 2/2, FPR 1/2 ; group b: selection 1/4, TPR 1/2, FPR 0/2
    yt = np.array([1, 1, 0, 0, 1, 1, 0, 0])
    yp = np.array([1, 1, 1, 0, 1, 0, 0, 0])
    g = np.array(list("aaaabbbb"))
    assert M.demographic_parity_difference(yt, yp, protected=g) == pytest.approx(0.5)
    assert M.disparate_impact_ratio(yt, yp, protected=g) == pytest.approx(1 / 3)
    assert M.equal_opportunity_difference(yt, yp, protected=g) == pytest.approx(0.5)
    assert M.equalized_odds_difference(yt, yp, protected=g) == pytest.approx(0.5)
    # benefits b = yp - yt + 1: a -> [1,1,2,1] mean 1.25; b -> [1,0,1,1] mean 0.75; mu = 1
    expected = 0.5 * (1.25 * np.log(1.25) + 0.75 * np.log(0.75))
    assert M.theil_index(yt, yp, protected=g) == pytest.approx(expected, abs=1e-12)


def test_theil_index_properties():
    rng = np.random.default_rng(0)
    yt = rng.integers(0, 2, 400)
    yp = rng.integers(0, 2, 400)
    g = rng.choice(["x", "y"], 400)
    # equal group mean benefits -> 0
    same = np.tile([1, 0], 200)
    assert M.theil_index(same, same, protected=np.repeat(["x", "y"], 200)) == 0.0
    # between-group part never exceeds the individual-level Theil index (decomposition)
    between = M.theil_index(yt, yp, protected=g)
    total = M.generalized_entropy_index(yt, yp, alpha=1)
    assert 0 <= between <= total
    # brute-force twin of the between-group formula
    b = yp - yt + 1.0
    mu = b.mean()
    mg = {k: b[g == k].mean() for k in ("x", "y")}
    twin = np.mean([mg[k] / mu * np.log(mg[k] / mu) for k in g])
    assert between == pytest.approx(twin, abs=1e-12)


def test_undefined_rates_warn_and_skip():
    yt = np.array([1, 1, 0, 0, 0, 0])
    yp = np.array([1, 0, 1, 0, 0, 1])
    g = np.array(list("aabbcc"))  # groups b and c have no positives
    with pytest.warns(UserWarning, match="true positive rate is undefined for groups"):
        assert M.equal_opportunity_difference(yt, yp, protected=g) == 0.0


def test_bad_input():
    yt = np.array([0, 1, 1])
    with pytest.raises(ValueError, match="y_pred must hold binary 0/1 values.*Threshold"):
        M.demographic_parity_difference(yt, [0.2, 0.9, 0.4], protected=[0, 1, 1])
    with pytest.raises(ValueError, match="protected has 2 rows but y_true/y_pred have 3"):
        M.equalized_odds_difference(yt, yt, protected=[0, 1])
    with pytest.raises(ValueError, match="differ in length"):
        M.equal_opportunity_difference(yt, [0, 1], protected=[0, 1])
    with pytest.raises(ValueError, match="missing values"):
        M.theil_index(yt, yt, protected=[0, None, 1])


def test_fairness_report_and_group_rates():
    yt = np.array([1, 1, 0, 0, 1, 1, 0, 0])
    yp = np.array([1, 1, 1, 0, 1, 0, 0, 0])
    g = np.array(list("aaaabbbb"))
    rep = M.fairness_report(yt, yp, protected=g)
    assert list(rep.metric) == ["demographic_parity_difference", "equal_opportunity_difference",
                                "equalized_odds_difference", "disparate_impact_ratio",
                                "theil_index"]
    rates = M.group_rates(yt, yp, protected=g)
    assert rates.loc["a", "selection_rate"] == 0.75 and rates.loc["b", "count"] == 4
