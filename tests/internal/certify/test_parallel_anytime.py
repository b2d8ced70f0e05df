"""The tests of ``tests/contract/certify/test_parallel_anytime.py`` that pin internals
(its docstring describes both halves)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairlens.certify._certify as C
from fairlens.certify import STATUSES, certify
from tests._support.certify_helpers import check_smallest_first, toy_forest
from tests.contract.certify.test_parallel_anytime import _check_sound, _same, bc  # noqa: F401 (fixtures)

SETTLED = ("misclassified", "certified_flb", "certified_elb", "robust_brute", "attackable")


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 6), budget=st.integers(1, 3), n_checks=st.integers(0, 40),
       method=st.sampled_from(["cascade", "brute", "flb", "elb"]), vote=st.sampled_from(["soft", "hard"]),
       max_work=st.sampled_from([1, 7, 200_000]))
def test_deadline_anywhere_gives_a_sound_interval(seed, budget, n_checks, method, vote, max_work):
    """The deadline is replaced by a counter that expires after ``n_checks`` checks, so the
    search stops at every possible point (inside FLB, ELB, between or inside brute-force calls)."""
    model, X, y = toy_forest(seed, n_trees=7, depth=4, n_classes=2 + seed % 2)
    exact = certify(model, X, y, budget=budget, vote=vote).accuracy_exact
    ref = certify(model, X, y, budget=budget, vote=vote, method=method)  # same method, no limit
    assert "unknown" not in set(ref.status)
    calls = [0]

    def passed(deadline):
        calls[0] += 1
        return calls[0] > n_checks

    mp = pytest.MonkeyPatch()
    try:
        mp.setattr(C, "_deadline_passed", passed)
        mp.setattr(C, "_MAX_WORK", max_work)
        mp.setattr(C, "_START_WORK", max_work)
        res = certify(model, X, y, budget=budget, vote=vote, method=method, time_limit=100.0, chunk_size=3)
    finally:
        mp.undo()
    assert set(res.status) <= set(STATUSES)
    lo, hi = res.accuracy_interval
    assert lo <= exact <= hi
    settled = res.status != "unknown"
    np.testing.assert_array_equal(res.status[settled], ref.status[settled])  # every settled row is right
    check_smallest_first(res, ref)
    if method in ("brute", "cascade"):
        _check_sound(res, ref)
    elif "unknown" not in set(res.status):
        _same(res, ref)


@pytest.mark.parametrize("vote", ["soft", "hard"])
@pytest.mark.parametrize("prune", [True, False])
def test_pauses_inside_value_search_resume_exactly(bc, monkeypatch, vote, prune, jit_scale):
    model, X, y = bc
    # 5 rows as plain Python (NUMBA_DISABLE_JIT=1) for the literal enumeration; the pruned search needs
    # the 25 rows (among the first 5 no row pauses inside a value search) and is cheap enough
    n = 25 if prune else max(5, int(25 * jit_scale))
    X, y = X[:n], y[:n]
    ref = certify(model, X, y, budget=2, method="brute", vote=vote, prune=prune)
    work = 1 if prune else 97  # the literal enumeration votes on ~10^5 combinations
    monkeypatch.setattr(C, "_MAX_WORK", work)
    monkeypatch.setattr(C, "_START_WORK", work)
    calls = []
    from fairlens.certify import _search

    real = _search.brute_search  # the one exhaustive search (soft and hard vote)

    ranges = []

    def spy(*args):
        out = real(*args)
        state, b = args[-2], args[5]
        calls.append(int(state[0]))  # phase of the state after the call: 2 = inside a value search
        # the scheduler's reading: the range of the outermost value index cur[0] (-1 outside a value search)
        ranges.append((int(state[0]), int(state[3 + 2 * b]), int(state[3 + b]), int(state[4 + 2 * b])))
        return out

    monkeypatch.setattr(_search, "brute_search", spy)
    res = certify(model, X, y, budget=2, method="brute", vote=vote, prune=prune)
    _same(res, ref)
    assert 2 in calls and 1 in calls  # paused both between patterns and inside a value search
    for phase, lo, cur, hi in ranges:
        if phase == 2:
            assert 0 <= lo <= hi and lo - 1 <= cur <= hi
        elif phase == 1:
            assert lo == hi == -1
