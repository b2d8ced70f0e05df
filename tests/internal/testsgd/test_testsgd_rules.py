"""Rules, rule sets and Algorithm 1, cross-checked against brute force."""
import itertools

import numpy as np
import pytest

from fairlens.testsgd import RuleSet, _kernels, single_rules
from fairlens.testsgd._rules import as_table


def test_single_rule_counts_and_printing(toy):
    t = as_table(toy)
    g = single_rules(t, "gender")
    assert [str(r) for r in g] == ["gender=female", "gender=male"]
    race = single_rules(t, "race")
    assert len(race) == 2 ** 4 - 2  # non-empty proper subsets
    assert "race in {White, Asian-Pac-Islander}" in [str(r) for r in race]
    age = single_rules(t, "age")  # 10 equal-width bins over [10, 110]
    assert len(age) == 10 * 11 // 2 - 1
    names = [str(r) for r in age]
    assert "40<=age<80" in names and "age<20" in names and "age>=100" in names
    assert "age<110" not in names  # the full range is not a rule


def test_rule_masks_match_printed_condition(toy):
    t = as_table(toy)
    age = toy.X[:, 2]
    for r in single_rules(t, "age"):
        lo, hi = r.low, r.high
        expect = (age >= lo) & (age < hi)
        np.testing.assert_array_equal(r.mask(toy.X), expect, err_msg=str(r))
    race = toy.X[:, 1]
    for r in single_rules(t, "race"):
        np.testing.assert_array_equal(r.mask(toy.X), np.isin(race, r.values))


def test_decimal_edges_are_exact():
    from types import SimpleNamespace
    X = np.array([[0.3], [0.29], [0.8], [0.0], [1.0]])
    ds = SimpleNamespace(X=X, feature_names=["p"], feature_types=["continuous"],
                         bounds=np.array([[0.0, 1.0]]))
    rules = {str(r): r for r in single_rules(as_table(ds), "p")}
    # 0.3 belongs to 0.3<=p<0.4 (no 0.30000000000000004 edge)
    np.testing.assert_array_equal(rules["0.3<=p<0.4"].mask(X), [True, False, False, False, False])
    np.testing.assert_array_equal(rules["p>=0.8"].mask(X), [False, False, True, False, True])


def test_ruleset_printing_and_validation(toy):
    t = as_table(toy)
    g = single_rules(t, "gender")[1]
    a = [r for r in single_rules(t, "age") if str(r) == "40<=age<80"][0]
    rc = [r for r in single_rules(t, "race") if str(r) == "race in {White, Asian-Pac-Islander}"][0]
    rs = RuleSet((g, a, rc))
    assert str(rs) == "gender=male, 40<=age<80, race in {White, Asian-Pac-Islander}"
    expect = (toy.X[:, 0] == 1) & (toy.X[:, 2] >= 40) & (toy.X[:, 2] < 80) & np.isin(toy.X[:, 1], [0, 2])
    np.testing.assert_array_equal(rs.mask(toy.X), expect)
    with pytest.raises(ValueError, match="one rule per feature"):
        RuleSet((g, single_rules(t, "gender")[0]))


def test_bitset_kernels_against_numpy():
    rng = np.random.default_rng(1)
    for n in (1, 63, 64, 65, 200):
        masks = (rng.random((7, n)) < 0.5).astype(np.uint8)
        masks[0, :] = 1  # includes the sign bit of each word
        bits = _kernels.pack_masks(masks)
        assert bits.shape == (7, (n + 63) // 64)
        np.testing.assert_array_equal(_kernels.unpack_bits(bits, n), masks)
        pairs = np.array(list(itertools.product(range(7), range(7))), dtype=np.int64)
        out = np.zeros((len(pairs), bits.shape[1]), np.uint64)
        counts = _kernels.and_popcount(bits, bits, pairs[:, 0].copy(), pairs[:, 1].copy(), out)
        expect = (masks[pairs[:, 0]] & masks[pairs[:, 1]]).sum(axis=1)
        np.testing.assert_array_equal(counts, expect)
        np.testing.assert_array_equal(_kernels.unpack_bits(out, n), masks[pairs[:, 0]] & masks[pairs[:, 1]])


def test_bitset_kernels_equal_their_numpy_twins():
    """The NumPy twins (used under NUMBA_DISABLE_JIT) give the kernels' exact results."""
    from fairlens.testsgd import _kernels as K

    rng = np.random.default_rng(0)
    for n in (1, 63, 64, 65, 200):
        masks = (rng.random((7, n)) < 0.4).astype(np.uint8)
        bits = K.JIT_KERNELS["pack_masks"](masks)
        np.testing.assert_array_equal(K.pack_masks_np(masks), bits)
        np.testing.assert_array_equal(K.unpack_bits_np(bits, n), masks)
        np.testing.assert_array_equal(K.JIT_KERNELS["unpack_bits"](bits, n), masks)
        p = rng.integers(0, 7, 30).astype(np.int64)
        q = rng.integers(0, 7, 30).astype(np.int64)
        out_a = np.zeros((30, bits.shape[1]), np.uint64)
        out_b = np.zeros((30, bits.shape[1]), np.uint64)
        ca = K.JIT_KERNELS["and_popcount"](bits, bits, p, q, out_a)
        cb = K.and_popcount_np(bits, bits, p, q, out_b)
        np.testing.assert_array_equal(ca, cb)
        np.testing.assert_array_equal(out_a, out_b)
        np.testing.assert_array_equal(ca, (masks[p] & masks[q]).sum(1))   # brute force
        members = np.column_stack([p, np.where(q % 2 == 0, q, -1)]).astype(np.int64)
        np.testing.assert_array_equal(K.JIT_KERNELS["and_popcount_chain"](bits, members),
                                      K.and_popcount_chain_np(bits, members))


def test_sampling_kernels_equal_their_numpy_twins():
    from fairlens.testsgd import _kernels as K

    rng = np.random.default_rng(1)
    X = rng.integers(0, 5, (40, 6)).astype(np.float64)
    lo, hi = np.zeros(6), np.full(6, 4.0)
    step = np.array([1, 1, 0.5, 1, 2, 1], dtype=np.float64)
    for free in (np.array([1, 3, 4], np.int64), np.zeros(0, np.int64)):
        seeds = [np.array([0, 5, 7], np.int64), np.arange(10, 40, dtype=np.int64)]
        flat = np.concatenate(seeds)
        start = np.array([0, 3], np.int64)
        lens = np.array([3, 30], np.int64)
        group = rng.integers(0, 2, 300).astype(np.int64)
        U = rng.random((300, 3))
        U[:5] = [0.999999, 0.999999, 0.5]                       # edge of every floor
        a = K.JIT_KERNELS["sample_rows"](X, flat, start, lens, group, U, free, step, lo, hi,
                                         np.empty((300, 6)))
        b = K.sample_rows_np(X, flat, start, lens, group, U, free, step, lo, hi, np.empty((300, 6)))
        np.testing.assert_array_equal(a, b)
        rows = np.array([0, 3, 39], np.int64)
        kk = max(1, free.size)
        a = K.JIT_KERNELS["neighbourhood_rows"](X, rows, free, step, lo, hi, np.empty((3 * kk * 2, 6)))
        b = K.neighbourhood_rows_np(X, rows, free, step, lo, hi, np.empty((3 * kk * 2, 6)))
        np.testing.assert_array_equal(a, b)
        table = rng.integers(0, 2, (40, kk, 2)).astype(np.uint8)
        a = K.JIT_KERNELS["lookup_labels"](table, np.int64(free.size), flat, start, lens, group, U,
                                           np.empty(300, np.int64))
        b = K.lookup_labels_np(table, np.int64(free.size), flat, start, lens, group, U,
                               np.empty(300, np.int64))
        np.testing.assert_array_equal(a, b)
