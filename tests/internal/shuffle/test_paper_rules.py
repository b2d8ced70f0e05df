"""Issue 16, item 1: Algorithm 3 as printed is the default Mixing rule; Algorithm 4 without its
line 4 ("each pair swapped at most once") is an option of Swapping."""
import numpy as np
import pytest

from fairlens.shuffle import _kernels, shuffle_scores
from fairlens.shuffle._reference import algorithm1, mixing_reference, swapping_reference


def test_default_mixing_matches_the_literal_transcription_of_algorithm3():
    rng = np.random.default_rng(11)
    for _ in range(200):
        n = int(rng.integers(0, 40))
        y = rng.integers(0, 6, n).astype(float) if rng.random() < 0.5 else rng.random(n)
        fav = rng.random(n) < rng.random()
        p = float(rng.random())
        seed = int(rng.integers(1 << 30))
        coins = np.random.default_rng(seed).random(n)
        ref = algorithm1(y, fav, mixing_reference, coins=coins, prob=p, literal=True)
        got = shuffle_scores(y, fav, "mixing", p=p, random_state=seed)
        np.testing.assert_array_equal(got, np.asarray(ref, dtype=float).reshape(-1))


# ---------------------------------------------------------------- Algorithm 4 without line 4
@pytest.mark.parametrize("higher", [True, False])
@pytest.mark.parametrize("ties", [False, True])
def test_swap_once_matches_literal_algorithm4_without_line4(higher, ties):
    rng = np.random.default_rng(12)
    for _ in range(300):
        n = int(rng.integers(0, 50))
        y = rng.integers(0, 5, n).astype(float) if ties else rng.random(n)
        fav = rng.random(n) < rng.random()
        ref = algorithm1(y, fav, swapping_reference, higher_is_better=higher, line4=False)
        got = shuffle_scores(y, fav, "swapping", swapping_rule="once", higher_is_better=higher)
        np.testing.assert_array_equal(got, np.asarray(ref, dtype=float).reshape(-1))


def test_swap_once_count_relaxation_takes_the_top_pairs():
    fav = np.array([0, 1, 0, 1, 0, 1, 1, 0], dtype=np.int8)
    full, c_full = _kernels.swapping_order_once(fav, -1)
    assert int(c_full) == 3
    two, c_two = _kernels.swapping_order_once(fav, 2)
    assert int(c_two) == 2
    np.testing.assert_array_equal(two[:4], full[:4])
    np.testing.assert_array_equal(two[4:], np.arange(4, 8))
