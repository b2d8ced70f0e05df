"""Core properties of the shuffling attacks (Algorithms 1-4)."""
import numpy as np
import pytest

from fairlens.shuffle import parse_attack, shuffle_scores


def _random_case(rng, n=None, ties=False):
    n = int(rng.integers(0, 40)) if n is None else n
    if ties:
        y = rng.integers(0, 5, size=n).astype(float)
    else:
        y = rng.random(n)
    fav = rng.random(n) < rng.random()
    return y, fav


# ---------------------------------------------------------------- properties
ATTACK_SETTINGS = [
    dict(attack="dominance"),
    dict(attack="mixing", p=0.8, mixing_rule="coin"),
    dict(attack="mixing", p=0.3, mixing_rule="alg3"),
    dict(attack="mixing", p=0.8),
    dict(attack="swapping", quantile=0.0),
    dict(attack="swapping", swapping_rule="once"),
    dict(attack="mix+swap", swapping_rule="once", max_count=2),
    dict(attack="swapping", quantile=0.4),
    dict(attack="dom+mix"),
    dict(attack="mix+swap", quantile=0.5),
    dict(attack="dominance", region=0.15),
    dict(attack="swapping", region=(0.2, 0.7), quantile=1.0),
    dict(attack="dominance", max_count=3),
    dict(attack="swapping", quantile=1.0, max_count=5),
]


@pytest.mark.parametrize("kw", ATTACK_SETTINGS)
def test_output_is_permutation_of_scores(kw):
    rng = np.random.default_rng(5)
    for _ in range(50):
        y, fav = _random_case(rng, n=int(rng.integers(2, 80)), ties=bool(rng.random() < 0.3))
        out = shuffle_scores(y, fav, random_state=0, **kw)
        np.testing.assert_array_equal(np.sort(out), np.sort(y))


@pytest.mark.parametrize("kw", [s for s in ATTACK_SETTINGS
                                if "mix" not in s["attack"] or s.get("mixing_rule", "alg3") == "alg3"])
def test_favoured_group_never_loses(kw):
    """Dominance, Swapping and literal Alg. 3 only ever move the favoured group up."""
    rng = np.random.default_rng(6)
    for _ in range(100):
        y, fav = _random_case(rng, n=int(rng.integers(2, 60)))
        if fav.all() or not fav.any():
            continue
        out = shuffle_scores(y, fav, random_state=1, **kw)
        assert out[fav].mean() >= y[fav].mean() - 1e-12
        assert out[~fav].mean() <= y[~fav].mean() + 1e-12
        # and item-wise: no favoured row gets a worse score, no other row a better one
        assert np.all(out[fav] >= y[fav])
        assert np.all(out[~fav] <= y[~fav])


def test_favoured_mean_moves_up_under_biased_coin_mixing():
    # group independent of the score: p > 0.5 favours, p = 0.5 is unbiased on average
    rng = np.random.default_rng(7)
    gains = {0.5: [], 0.8: []}
    for p in gains:
        for t in range(300):
            y = rng.random(40)
            fav = rng.random(40) < 0.5
            out = shuffle_scores(y, fav, "mixing", p=p, mixing_rule="coin", random_state=t)
            gains[p].append(out[fav].mean() - y[fav].mean())
    assert np.mean(gains[0.8]) > 0.05
    assert abs(np.mean(gains[0.5])) < 0.02


def test_dominance_puts_every_favoured_above_every_other():
    rng = np.random.default_rng(8)
    y = rng.random(100)
    fav = rng.random(100) < 0.4
    out = shuffle_scores(y, fav, "dominance")
    assert out[fav].min() > out[~fav].max()
    lower = shuffle_scores(y, fav, "dominance", higher_is_better=False)
    assert lower[fav].max() < lower[~fav].min()


@pytest.mark.parametrize("rule", ["coin", "alg3"])
def test_mixing_p1_and_swapping_q1_equal_dominance(rule):
    rng = np.random.default_rng(9)
    for _ in range(100):
        y, fav = _random_case(rng, ties=bool(rng.random() < 0.5))
        dom = shuffle_scores(y, fav, "dominance")
        np.testing.assert_array_equal(
            shuffle_scores(y, fav, "mixing", p=1.0, mixing_rule=rule, random_state=3), dom)
        np.testing.assert_array_equal(shuffle_scores(y, fav, "swapping", quantile=1.0), dom)


def test_alg3_mixing_p0_is_identity_and_swapping_is_not_dominance():
    rng = np.random.default_rng(10)
    y = rng.random(50)
    fav = rng.random(50) < 0.5
    np.testing.assert_array_equal(
        shuffle_scores(y, fav, "mixing", p=0.0, mixing_rule="alg3"), y)
    one_pass = shuffle_scores(y, fav, "swapping", quantile=0.0)
    assert not np.array_equal(one_pass, shuffle_scores(y, fav, "dominance"))
    assert not np.array_equal(one_pass, y)


def test_single_swap_pass_hand_example():
    # sorted scores 5>4>3>2>1 with groups F M M F M (M favoured): one pass of
    # Algorithm 4 gives M M F M F  (the first F sinks through two males).
    y = np.array([5.0, 4.0, 3.0, 2.0, 1.0])
    fav = np.array([False, True, True, False, True])
    out = shuffle_scores(y, fav, "swapping", quantile=0.0)
    np.testing.assert_array_equal(out, [3.0, 5.0, 4.0, 1.0, 2.0])


def test_lone_top_female_sinks_to_bottom_in_one_pass():
    # paper: "only one female ... scored highest ... ends up at the bottom"
    y = np.arange(10, 0, -1).astype(float)
    fav = np.ones(10, bool)
    fav[0] = False
    out = shuffle_scores(y, fav, "swapping", quantile=0.0)
    assert out[0] == 1.0
    np.testing.assert_array_equal(out, shuffle_scores(y, fav, "dominance"))


def test_region_only_touches_top_fraction():
    rng = np.random.default_rng(11)
    y = rng.random(200)
    fav = rng.random(200) < 0.5
    out = shuffle_scores(y, fav, "dominance", region=0.15)
    top = np.argsort(-y, kind="stable")[:30]
    rest = np.setdiff1d(np.arange(200), top)
    np.testing.assert_array_equal(out[rest], y[rest])
    assert set(out[top]) == set(y[top])
    assert out[top][fav[top]].min() > out[top][~fav[top]].max()


def test_hybrid_applies_each_attack_to_its_half():
    rng = np.random.default_rng(12)
    y = rng.random(101)
    fav = rng.random(101) < 0.5
    order = np.argsort(-y, kind="stable")
    m = 51  # floor(0.5 * 101 + 0.5)
    out = shuffle_scores(y, fav, "dom+none")
    top, bottom = order[:m], order[m:]
    np.testing.assert_array_equal(out[bottom], y[bottom])
    np.testing.assert_array_equal(
        out[top], shuffle_scores(y[top], fav[top], "dominance"))
    out2 = shuffle_scores(y, fav, "none+swap", quantile=1.0)
    np.testing.assert_array_equal(out2[top], y[top])
    np.testing.assert_array_equal(out2[bottom], shuffle_scores(y[bottom], fav[bottom], "dominance"))


def test_max_count_limits_number_of_swaps():
    rng = np.random.default_rng(13)
    y = rng.random(60)
    fav = rng.random(60) < 0.5
    _, (_, _, n_full) = shuffle_scores(y, fav, "swapping", quantile=1.0, return_details=True)
    out, (_, _, n3) = shuffle_scores(y, fav, "swapping", quantile=1.0, max_count=3,
                                     return_details=True)
    assert n_full > 3 and n3 == 3
    # exactly three adjacent swaps -> at most 6 rows changed
    assert 0 < np.sum(out != y) <= 6
    assert np.array_equal(shuffle_scores(y, fav, "dominance", max_count=0), y)


def test_no_shuffle_for_single_row_or_single_group():
    y = np.array([0.3, 0.9, 0.1])
    np.testing.assert_array_equal(shuffle_scores(y, np.ones(3, bool), "dominance"), y)
    np.testing.assert_array_equal(shuffle_scores(y[:1], np.zeros(1, bool), "dominance"), y[:1])


def test_parse_attack():
    assert parse_attack("Dom+Mix") == ("dominance", "mixing")
    assert parse_attack("swapping") == ("swapping",)
    with pytest.raises(ValueError, match="attack"):
        parse_attack("dom+mix+swap")
    with pytest.raises(ValueError, match="attack"):
        parse_attack("shuffle")


def test_shuffle_scores_bad_input():
    with pytest.raises(ValueError, match="favoured_mask"):
        shuffle_scores([1.0, 2.0, 3.0], [True, False])
    with pytest.raises(ValueError, match="1-D"):
        shuffle_scores(np.zeros((2, 2)), np.zeros((2, 2), bool))
    with pytest.raises(ValueError, match="split"):
        shuffle_scores([1.0, 2.0], [True, False], "dom+mix", split=1.5)


def test_import_does_not_compile_kernels():
    import subprocess
    import sys

    code = ("import fairlens, fairlens.shuffle as s; from fairlens.shuffle import _kernels as k; "
            "print(len(k.mixing_order.signatures) + len(k.swapping_order_fast.signatures) "
            "+ len(k.swapping_order_literal.signatures), 'shap' in sys.modules, 'lime' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", "import sys; " + code], capture_output=True,
                         text=True, check=True, env={**__import__("os").environ, "NUMBA_DISABLE_JIT": "0"})
    assert out.stdout.split() == ["0", "False", "False"]
