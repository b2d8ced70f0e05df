"""Argument validation of the MAFT searches: random_state, stop, unknown keywords and
enums, constructor parameters, astronomical protected combinations.
"""

import threading

import numpy as np
import pytest

from fairlens.maft import (
    AEQUITAS,
    MAFT,
    discrimination_rate,
    retrain_with_instances,
    select_seeds,
)


def test_random_state_messages_name_the_argument(toy, smooth):
    for call in (
        lambda: MAFT(smooth, toy, n_seeds=3, n_local=1, random_state="abc").run(),
        lambda: AEQUITAS(smooth, toy).draw_seeds(3, random_state="abc"),
        lambda: select_seeds(toy.X, 3, random_state="abc"),
        lambda: discrimination_rate(smooth, toy, ["sex"], n_samples=5, random_state="abc"),
    ):
        with pytest.raises(TypeError, match="random_state"):
            call()


def test_stop_convention_event_or_callable(toy, smooth):
    n = {"k": 0}

    def cb(state):
        n["k"] += 1

    res = MAFT(smooth, toy, n_seeds=30, n_local=100, random_state=0).run(callback=cb, stop=lambda: n["k"] >= 4)
    assert res.stopped and 4 <= n["k"] <= 5  # the step that saw the stop, plus the phase's closing tick
    ev = threading.Event()
    ev.set()
    assert MAFT(smooth, toy, n_seeds=30, n_local=100).run(stop=ev).stopped
    with pytest.raises(TypeError, match="stop"):
        MAFT(smooth, toy, n_seeds=3, n_local=1).run(stop="yes")


def test_unknown_keywords_and_enums(toy, smooth):
    with pytest.raises(TypeError, match="stop_flag"):
        MAFT(smooth, toy, n_seeds=3, n_local=1, stop_flag=lambda: False).run()
    with pytest.raises(TypeError, match="favorable_class"):
        MAFT(smooth, toy, favorable_class=1)
    with pytest.raises(ValueError, match="'lockstep', 'reference'"):
        MAFT(smooth, toy, n_seeds=3, n_local=1, engine="fast").run()
    with pytest.raises(ValueError, match="'domain', 'data'"):
        discrimination_rate(smooth, toy, ["sex"], n_samples=5, sample="grid")
    with pytest.raises(ValueError, match="labelling"):
        retrain_with_instances(smooth, toy, None, labelling="vote")


@pytest.mark.parametrize(
    "kw, name",
    [({"decay": 1.0}, "decay"), ({"decay": -0.1}, "decay"), ({"epsilon": 0}, "epsilon"), ({"max_iter": 0}, "max_iter"),
     ({"global_step": float("inf")}, "global_step"), ({"n_clusters": 1.5}, "n_clusters"),
     ({"update_interval": True}, "update_interval"), ({"vectored": "yes"}, "vectored"), ({"h": float("nan")}, "h")],
)
def test_constructor_parameters(toy, smooth, kw, name):
    with pytest.raises((TypeError, ValueError), match=name):
        MAFT(smooth, toy, **kw)


def test_astronomical_combinations_refused_at_construction():
    from tests._support.maft_toy import ToyDataset

    B = np.array([[0, 1e6], [0, 1e6], [0, 1e6], [0, 5]], float)
    ds = ToyDataset(np.zeros((3, 4)), np.array([0, 1, 0]), B, ["a", "b", "c", "d"], ["a"])
    with pytest.raises(ValueError, match=r"protected: the 1,000,003,000,003,000,001 combinations.*discretise"):
        MAFT(lambda Z: np.full(len(Z), 0.3), ds, protected=["a", "b", "c"])
