"""Rules, rule sets and Algorithm 1, cross-checked against brute force."""

import numpy as np
import pytest

from fairlens.testsgd import frequent_rule_sets, frequent_rule_sets_bruteforce


@pytest.mark.parametrize("theta", [0.01, 0.05, 0.2, 0.5])
def test_frequent_equals_bruteforce(toy, theta):
    sens = ["gender", "race", "age"]
    fr = frequent_rule_sets(toy, sens, theta)
    bf = frequent_rule_sets_bruteforce(toy, sens, theta)
    mine = {str(r): int(c) for r, c in zip(fr.rule_sets, fr.counts)}
    assert mine == bf
    assert len(mine) == len(fr.rule_sets)  # no duplicates
    # counts are the true support counts, and bitsets are the true masks
    for i in range(0, len(fr), max(1, len(fr) // 25)):
        m = fr.rule_sets[i].mask(toy.X)
        assert m.sum() == fr.counts[i]
        np.testing.assert_array_equal(fr.masks([i])[0], m)
    assert np.all(fr.support >= theta - 1e-12)


def test_frequent_with_explicit_bins_and_decimal_feature(toy):
    sens = ["gender", "age", "hours"]
    bins = {"age": [0, 20, 40, 60, 80, 120], "hours": 4}
    fr = frequent_rule_sets(toy, sens, 0.03, bins=bins)
    bf = frequent_rule_sets_bruteforce(toy, sens, 0.03, bins=bins)
    assert {str(r): int(c) for r, c in zip(fr.rule_sets, fr.counts)} == bf


def test_pruning_counts_fewer_candidates_than_cross_product(toy):
    fr = frequent_rule_sets(toy, ["gender", "race", "age"], 0.2)
    assert fr.n_cross_product == 3 * 15 * 55 - 1
    assert fr.n_candidates < fr.n_cross_product / 2
    assert len(fr) <= fr.n_candidates


def test_theta_monotone(toy):
    sizes = [len(frequent_rule_sets(toy, ["gender", "race", "age"], th)) for th in (0.02, 0.05, 0.1, 0.3)]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] > sizes[-1]


def test_bad_inputs(toy):
    with pytest.raises(ValueError, match="not a column"):
        frequent_rule_sets(toy, ["gender", "religion"], 0.05)
    for bad in (0, -0.1, 1.5):
        with pytest.raises(ValueError, match="theta"):
            frequent_rule_sets(toy, ["gender"], bad)
    with pytest.raises(TypeError):
        frequent_rule_sets(toy, ["gender"], "5%")
    with pytest.raises(TypeError, match="Dataset"):
        frequent_rule_sets(object(), ["gender"], 0.05)
    from types import SimpleNamespace
    all_cat = SimpleNamespace(X=toy.X, feature_names=toy.feature_names,
                              feature_types=["categorical"] * 5, bounds=toy.bounds)
    with pytest.raises(ValueError, match="max_values"):
        frequent_rule_sets(all_cat, ["education"], 0.05, max_values=3)
