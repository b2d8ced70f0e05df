"""group_metrics: fairlearn/AIF360 point estimates; score intervals checked against statsmodels and by
brute-force inversion; one rule for small groups; a fixed reference for the signed measures."""
import itertools

import numpy as np
import pytest

from fairlens import _groupstats as GS
from fairlens import metrics as M
from fairlens._base import make_invalid
from tests.contract.metrics.test_group_metrics import _row

Z95 = 1.959963984540054


def test_range_interval_contains_a_true_zero_and_is_simultaneous():
    """The reproducer of the issue: a fair model's interval of max - min now starts at 0."""
    rng = np.random.default_rng(0)
    g = rng.choice(["a", "b"], 1000)
    y = rng.integers(0, 2, 1000)
    p = (rng.random(1000) < .4).astype(int)
    row = M.group_metrics(y, p, protected={"A": g}).measure("demographic_parity_difference")
    assert row["ci_low"] == 0.0 <= row["value"] <= row["ci_high"]
    # four groups: the interval is the pairwise Newcombe intervals at Bonferroni level 0.05 / 6
    g4 = rng.choice(list("abcd"), 2000)
    p4 = (rng.random(2000) < np.where(g4 == "d", 0.5, 0.3)).astype(int)
    res = M.group_metrics(rng.integers(0, 2, 2000), p4, protected={"A": g4})
    row = _row(res, "A", "demographic_parity_difference")
    z = float(GS._z(0.95, 6))
    lows, highs = [], []
    for a, b in itertools.combinations("abcd", 2):
        ma, mb = g4 == a, g4 == b
        _, lo, hi = GS._stats.mover([p4[ma].sum(), p4[mb].sum()], [ma.sum(), mb.sum()], [1, -1], z)
        lows.append(max(0.0, lo, -hi))
        highs.append(max(abs(lo), abs(hi)))
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((max(lows), max(highs)), abs=1e-12)
    assert row["n_contrasts"] == 6


def test_ratio_interval_is_mover_r_and_contains_one_when_no_pair_differs():
    from scipy.optimize import brentq

    rng = np.random.default_rng(1)
    g = rng.choice(["a", "b"], 600)
    p = (rng.random(600) < 0.5).astype(int)
    res = M.group_metrics(p, p, protected={"A": g})
    row = _row(res, "A", "demographic_parity_ratio")
    assert row["ci_low"] < 1.0 == row["ci_high"]
    # MOVER-R is the set of ratios r for which the MOVER interval of p_num - r p_den contains 0
    x = {k: int(p[g == k].sum()) for k in "ab"}
    n = {k: int((g == k).sum()) for k in "ab"}
    num, den = sorted("ab", key=lambda k: x[k] / n[k])
    f = lambda r: GS._stats.mover([x[num], x[den]], [n[num], n[den]], [1, -r], Z95)  # noqa: E731
    lo = brentq(lambda r: float(f(r)[1]), 1e-6, x[num] / n[num] / (x[den] / n[den]))
    assert row["ci_low"] == pytest.approx(lo, abs=1e-9)


def test_every_invalid_parameter_value_is_refused_by_name():
    for name, bad in make_invalid(GS._GROUP_METRICS_CONSTRAINTS):
        with pytest.raises((TypeError, ValueError), match=name):
            M.group_metrics([0, 1, 1, 0], [1, 1, 0, 0], protected={"s": list("aabb")}, **{name: bad})
