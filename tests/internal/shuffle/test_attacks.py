"""Core properties of the shuffling attacks (Algorithms 1-4)."""
import numpy as np
import pytest

from fairlens.shuffle import _kernels, shuffle_scores
from fairlens.shuffle._reference import (
    algorithm1,
    dominance_reference,
    mixing_reference,
    swapping_reference,
)
from tests.contract.shuffle.test_attacks import _random_case


# ---------------------------------------------------------------- vs literal pseudocode
@pytest.mark.parametrize("higher", [True, False])
@pytest.mark.parametrize("ties", [False, True])
def test_dominance_matches_algorithm2(higher, ties):
    rng = np.random.default_rng(1)
    for _ in range(200):
        y, fav = _random_case(rng, ties=ties)
        ref = algorithm1(y, fav, dominance_reference, higher_is_better=higher)
        got = shuffle_scores(y, fav, "dominance", higher_is_better=higher)
        np.testing.assert_array_equal(got, np.asarray(ref, dtype=float).reshape(-1))


@pytest.mark.parametrize("rule", ["coin", "alg3"])
@pytest.mark.parametrize("ties", [False, True])
def test_mixing_matches_algorithm3(rule, ties):
    rng = np.random.default_rng(2)
    for _ in range(200):
        y, fav = _random_case(rng, ties=ties)
        p = float(rng.random())
        seed = int(rng.integers(1 << 30))
        coins = np.random.default_rng(seed).random(len(y))
        ref = algorithm1(y, fav, mixing_reference, coins=coins, prob=p, literal=(rule == "alg3"))
        got = shuffle_scores(y, fav, "mixing", p=p, mixing_rule=rule,
                             random_state=seed)
        np.testing.assert_array_equal(got, np.asarray(ref, dtype=float).reshape(-1))


@pytest.mark.parametrize("ties", [False, True])
def test_swapping_matches_algorithm4_with_quantile_loop(ties):
    rng = np.random.default_rng(3)
    for _ in range(300):
        y, fav = _random_case(rng, ties=ties)
        q = float(rng.choice([0.0, 1.0, rng.random()]))
        j0 = int(np.floor(q * len(y) + 1e-12))
        ref = algorithm1(y, fav, swapping_reference, j0=j0)
        got = shuffle_scores(y, fav, "swapping", quantile=q)
        np.testing.assert_array_equal(got, np.asarray(ref, dtype=float).reshape(-1))


def test_fast_swapping_equals_literal_kernel_including_swap_counts():
    rng = np.random.default_rng(4)
    for _ in range(2000):
        n = int(rng.integers(0, 60))
        fav = (rng.random(n) < rng.random()).astype(np.int8)
        j0 = int(rng.integers(0, n + 3))
        a, ca = _kernels.swapping_order_literal(fav, j0, -1)
        b, cb = _kernels.swapping_order_fast(fav, j0)
        np.testing.assert_array_equal(a, b)
        assert int(ca) == int(cb)
    # a larger case with long runs
    fav = np.repeat(rng.random(300) < 0.5, rng.integers(1, 8, size=300)).astype(np.int8)
    for j0 in (0, 5, len(fav) // 3, len(fav)):
        a, ca = _kernels.swapping_order_literal(fav, j0, -1)
        b, cb = _kernels.swapping_order_fast(fav, j0)
        np.testing.assert_array_equal(a, b)
        assert int(ca) == int(cb)
