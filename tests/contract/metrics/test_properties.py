"""Property-based boundary tests for fairlens.metrics (issue 11): awkward inputs give the
correct value (cross-checked against a brute-force twin) or a ValueError/TypeError naming
the argument."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairlens import metrics as M

SETTINGS = settings(max_examples=25, deadline=None)
METRICS = [M.demographic_parity_difference, M.equal_opportunity_difference,
           M.equalized_odds_difference, M.disparate_impact_ratio, M.theil_index]


def _dp_brute(yp, sf):
    rates = [np.mean([p for p, s in zip(yp, sf) if s == g]) for g in sorted(set(sf))]
    return max(rates) - min(rates)


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1), st.sampled_from("abc")),
                min_size=1, max_size=40))
def test_demographic_parity_matches_brute_force(rows):
    yt, yp, sf = map(list, zip(*rows))
    got = M.demographic_parity_difference(yt, yp, protected=sf)
    assert got == pytest.approx(_dp_brute(yp, sf))


@SETTINGS
@given(bad=st.one_of(
    st.lists(st.sampled_from([0.5, 2, -1, np.nan, np.inf]), min_size=1, max_size=5),
    st.lists(st.sampled_from(["yes", "no"]), min_size=1, max_size=5)),
    which=st.sampled_from(["y_true", "y_pred"]), metric=st.sampled_from(METRICS))
def test_non_binary_or_nan_labels_are_refused(bad, which, metric):
    n = len(bad)
    good = [0, 1] * n
    kw = {"y_true": good[:n], "y_pred": good[:n]}
    kw[which] = bad
    with pytest.raises((ValueError, TypeError), match=which):
        metric(kw["y_true"], kw["y_pred"], protected=["a"] * n)


@SETTINGS
@given(n=st.integers(1, 20), delta=st.integers(-3, 3).filter(lambda d: d != 0),
       metric=st.sampled_from(METRICS))
def test_protected_length_must_match(n, delta, metric):
    m = max(1, n + delta)
    if m == n:
        return
    y = np.arange(n) % 2
    with pytest.raises(ValueError, match="protected"):
        metric(y, y, protected=["a"] * m)


@pytest.mark.parametrize("metric", METRICS)
def test_empty_none_nan_and_scalar_inputs(metric):
    with pytest.raises(ValueError, match="empty"):
        metric([], [], protected=[])
    with pytest.raises(ValueError, match="protected"):
        metric([0, 1], [0, 1], protected=["a", None])
    with pytest.raises(ValueError, match="protected"):
        metric([0, 1], [0, 1], protected=pd.Series(["a", np.nan]))
    with pytest.raises((ValueError, TypeError), match="y_pred"):
        metric([0, 1], "10", protected=["a", "b"])
    with pytest.raises(ValueError, match="y_true and y_pred"):
        metric([0, 1, 1], [0, 1], protected=["a", "b"])


def test_metrics_that_need_y_true_say_so():
    for metric in (M.equal_opportunity_difference, M.equalized_odds_difference, M.theil_index):
        with pytest.raises((ValueError, TypeError), match="y_true"):
            metric(None, [0, 1], protected=["a", "b"])
    with pytest.raises(ValueError, match="alpha"):
        M.theil_index([0, 1], [0, 1], protected=["a", "b"], alpha=np.nan)
    with pytest.raises(TypeError, match="alpha"):
        M.generalized_entropy_index([0, 1], [0, 1], alpha="2")
