"""The tests of ``tests/contract/certify/test_anytime_scheduling.py`` that pin internals
(its docstring describes both halves)."""
import time

import numpy as np
import pytest

from fairlens.certify._schedule import settle_rows

# --- the scheduler alone (deterministic: a fake resumable search) ----------------------------


def _fake(need, calls=None):
    def step(k, state, work):
        if calls is not None:
            calls.append((k, work))
        done = (state or 0) + work
        if done >= need[k]:
            return True, 10 * k, None
        return False, None, done
    return step


@pytest.mark.parametrize("n_workers", [1, 2, 3])
def test_every_row_finishes_with_its_own_outcome(n_workers):
    need = [5, 1, 1, 200, 2, 3, 1, 1, 1, 50]
    order = []
    out, attained = settle_rows(_fake(need), len(need), first_work=1, n_workers=n_workers,
                                on_done=lambda k, o: order.append(k))
    assert out == [10 * k for k in range(len(need))]
    assert sorted(order) == list(range(len(need)))
    assert all(a >= n for a, n in zip(attained, need))
    assert all(a < 2 * n for a, n in zip(attained, need))  # doubling slices: less than twice the need


def test_least_attained_service_first():
    need = [1000, 1, 2, 4, 8, 1000]
    calls, order = [], []
    settle_rows(_fake(need, calls), len(need), first_work=1, on_done=lambda k, o: order.append(k))
    assert order == [1, 2, 3, 4, 0, 5]  # cheap rows settle first, whatever their position
    # no row gets a slice while another row has had less work
    got = [0] * len(need)
    for k, work in calls:
        live = [j for j in range(len(need)) if got[j] < need[j]]
        assert got[k] == min(got[j] for j in live)
        got[k] += work


def test_stop_and_past_deadline_start_nothing():
    calls = []
    out, attained = settle_rows(_fake([3, 3], calls), 2, deadline=time.time() - 1)
    assert calls == [] and out == [None, None] and attained == [0, 0]
    out, _ = settle_rows(_fake([3, 3], calls), 2, stop=lambda: True, n_workers=2)
    assert calls == [] and out == [None, None]


class _Clock:
    """A fake clock for ``time.time`` and ``time.perf_counter``: a slice advances it by its work."""

    def __init__(self):
        self.t = 1000.0

    def time(self):
        return self.t

    def perf_counter(self):
        return self.t


def test_slices_are_cut_to_the_deadline(monkeypatch):
    import fairlens.certify._schedule as sched

    clock = _Clock()
    monkeypatch.setattr(sched, "time", clock)

    def step(k, state, work):  # never finishes; 1,000 work units a second
        clock.t += work * 1e-3
        return False, None, (state or 0) + work

    deadline = clock.t + 10.0
    _, attained = settle_rows(step, 3, deadline=deadline, first_work=16, max_work=1 << 40)
    # doubling slices alone run past the deadline (here by 0.19 s, on a real forest by 2-3 s); cut to
    # the measured rate, the last slice is at most a first slice (16 units: 0.016 s) late
    assert clock.t <= deadline + 0.016 + 1e-9, clock.t - deadline
    assert sum(attained) >= 0.9 * 10_000  # and the time was used, not given up early


def _settled_by_deadline(monkeypatch, estimate):
    """Three hard rows (listed first), three medium, three cheap, on a fake clock (a work unit is a
    millisecond): which rows settle, in which order, by a deadline 0.25 s away."""
    import fairlens.certify._schedule as sched

    clock = _Clock()
    monkeypatch.setattr(sched, "time", clock)
    need = [1000, 1000, 1000, 50, 50, 50, 1, 1, 1]

    def step(k, state, work):
        done = (state or 0) + work
        clock.t += (min(done, need[k]) - (state or 0)) * 1e-3
        if done >= need[k]:
            return True, k, None
        return False, None, done

    order = []
    settle_rows(step, len(need), deadline=clock.t + 0.25, first_work=1, on_done=lambda k, o: order.append(k),
                estimate=estimate)
    return order


def test_medium_rows_settle_before_hard_ones_given_an_estimate(monkeypatch):
    need = [1000, 1000, 1000, 50, 50, 50]
    seen = []

    def estimate(k, state, attained):  # the search's own progress: here exact (a real one is rough)
        seen.append((k, attained))
        return need[k] - state

    order = _settled_by_deadline(monkeypatch, estimate)
    assert order == [6, 7, 8, 3, 4, 5]  # the cheap rows first, then every medium row; no hard one
    assert min(a for _, a in seen) >= 2  # estimated only after the rows' first slices (explore_work)
    # least attained service alone shares the time with the hard rows: no medium row settles
    assert _settled_by_deadline(monkeypatch, None) == [6, 7, 8]


def test_the_estimate_is_turned_into_time_with_the_rows_own_speed(monkeypatch):
    """Row 0 needs 100 units at 4 ms each (0.4 s), row 1 needs 150 units at 1 ms each (0.15 s): the
    smaller work is the longer time. Ordered by expected work, row 0 takes the time and nothing
    settles by 0.3 s; ordered by expected time, row 1 settles."""
    import fairlens.certify._schedule as sched

    need, ms = [100, 150], [4e-3, 1e-3]

    def run():
        clock = _Clock()
        monkeypatch.setattr(sched, "time", clock)

        def step(k, state, work):
            done = (state or 0) + work
            clock.t += (min(done, need[k]) - (state or 0)) * ms[k]
            return (True, k, None) if done >= need[k] else (False, None, done)

        order = []
        settle_rows(step, 2, deadline=clock.t + 0.3, first_work=1, on_done=lambda k, o: order.append(k),
                    estimate=lambda k, state, attained: need[k] - state)
        return order

    assert run() == [1]
    # the same two rows at the same speed: the smaller expected work goes first, as before
    ms[:] = [1e-3, 1e-3]
    assert run()[:1] == [0]


def test_an_estimate_of_none_is_least_attained_service():
    need = [1000, 1, 2, 4, 8, 1000, 37]
    plain, unsure = [], []
    out_p, att_p = settle_rows(_fake(need, plain), len(need), first_work=1)
    out_u, att_u = settle_rows(_fake(need, unsure), len(need), first_work=1, estimate=lambda k, s, a: None)
    assert unsure == plain and out_u == out_p and att_u == att_p


def test_remaining_work_from_the_value_search():
    from fairlens.certify._certify import _remaining_work

    b = 2  # state: phase, depth, level, pick[0..1], cur[0..1], lo, hi (of cur[0])
    half = np.array([2, 1, 1, 0, 3, 149, 7, 100, 199], np.int64)  # cur[0] = 149: half of 100 .. 199 done
    assert _remaining_work(half, b, 1000) == pytest.approx(1000.0)
    assert _remaining_work(np.array([2, 1, 1, 0, 3, 190, 7, 100, 199], np.int64), b, 1000) < 200
    assert _remaining_work(np.array([2, 1, 1, 0, 3, 99, 7, 100, 199], np.int64), b, 1000) is None  # not started
    assert _remaining_work(np.array([1, 1, 1, 0, 3, 0, 0, -1, -1], np.int64), b, 1000) is None  # between patterns
    assert _remaining_work(None, b, 0) is None


@pytest.mark.parametrize("n_workers", [1, 2])
def test_an_error_in_a_slice_propagates(n_workers):
    def step(k, state, work):
        if k == 1:
            raise ZeroDivisionError("boom")
        return True, k, None

    with pytest.raises(ZeroDivisionError, match="boom"):
        settle_rows(step, 3, n_workers=n_workers)
