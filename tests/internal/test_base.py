"""The one analysis contract (fairlens._base): constraints, random state, progress, results."""
import inspect
import json
import numbers
import threading

import numpy as np
import pandas as pd
import pytest

from fairlens._base import (
    Analysis,
    Interval,
    Options,
    Result,
    check_progress,
    make_invalid,
    refuse_renamed,
    resolve_random_state,
    strict_keywords,
    to_jsonable,
    validate_params,
)

CONSTRAINTS = {
    "n": [Interval(numbers.Integral, 1, None)],
    "share": [Interval(numbers.Real, 0, 1, closed="neither"), None],
    "mode": [Options("fast", "exact")],
    "flag": ["boolean"],
    "random_state": ["random_state"],
    "n_jobs": ["n_jobs"],
    "progress": ["progress"],
    "names": ["str-list"],
}
GOOD = {"n": 3, "share": 0.5, "mode": "fast", "flag": True, "random_state": 7, "n_jobs": None,
        "progress": None, "names": ["a", "b"]}


def test_good_values_pass():
    validate_params(GOOD, CONSTRAINTS)
    validate_params({**GOOD, "share": None, "random_state": np.random.default_rng(0), "n_jobs": -1,
                     "progress": print}, CONSTRAINTS)


@pytest.mark.parametrize("name,bad", make_invalid(CONSTRAINTS))
def test_every_generated_bad_value_is_refused_by_name(name, bad):
    with pytest.raises((TypeError, ValueError), match=name):
        validate_params({**GOOD, name: bad}, CONSTRAINTS, caller="Thing")


@pytest.mark.parametrize("name,bad,exc", [
    ("n", 0, ValueError), ("n", 2.0, TypeError), ("n", True, TypeError),
    ("share", 1.0, ValueError), ("share", float("nan"), ValueError), ("mode", "slow", ValueError),
    ("random_state", -1, ValueError), ("random_state", 2**32, ValueError), ("random_state", "0", TypeError),
    ("n_jobs", 0, ValueError), ("names", "ab", TypeError), ("flag", 1, TypeError),
])
def test_hand_picked_bad_values(name, bad, exc):
    with pytest.raises(exc, match=f"Thing: {name} must be"):
        validate_params({**GOOD, name: bad}, CONSTRAINTS, caller="Thing")


def test_make_invalid_covers_every_parameter():
    assert sorted(n for n, _ in make_invalid(CONSTRAINTS)) == sorted(CONSTRAINTS)


def test_random_state_policy():
    assert resolve_random_state(5) == 5
    assert resolve_random_state(2**32 - 1) == 2**32 - 1
    # a Generator / RandomState is drawn from once, reproducibly
    a = resolve_random_state(np.random.default_rng(3))
    assert a == resolve_random_state(np.random.default_rng(3))
    assert 0 <= a < 2**32
    assert resolve_random_state(np.random.RandomState(3)) == resolve_random_state(np.random.RandomState(3))
    # None: a fresh seed each time (two equal draws from 2**32 are astronomically unlikely)
    assert resolve_random_state(None) != resolve_random_state(None)
    with pytest.raises(TypeError, match="seed must be"):
        resolve_random_state(1.5, name="seed")
    with pytest.raises(ValueError, match="random_state must be"):
        resolve_random_state(-3)


def test_progress_policy():
    """One shape for every progress callable: ``progress(stage, done, total)`` (issue #34 item 4)."""
    assert check_progress(None) is None and check_progress(False) is None
    calls = []
    cb = check_progress(lambda s, d, t: calls.append((s, d, t)))
    cb("rows", 1, 2)
    assert calls == [("rows", 1, 2)]
    check_progress(lambda *args: None)  # *args takes three
    check_progress(lambda s, d, t, extra=None: None)  # a defaulted fourth is fine
    check_progress(print)  # a builtin whose signature may not be readable is accepted
    bar = check_progress(True, desc="x")
    bar("a", 1, 2)
    bar("b", 1, 3)  # a new stage: a new bar labelled by it
    bar("b", 3, 3)
    with pytest.raises(TypeError, match="progress must be"):
        check_progress("yes")


@pytest.mark.parametrize("old", [lambda done, total: None, lambda: None, lambda s, d, t, x: None])
def test_progress_of_another_shape_is_refused_naming_the_shape_and_fix(old):
    with pytest.raises(TypeError, match=r"^progress must be a callable progress\(stage, done, total\).*"
                                        r"def progress\(stage, done, total\)"):
        check_progress(old)
    with pytest.raises(TypeError, match=r"^on_step must be"):
        check_progress(old, name="on_step")


def test_to_jsonable_is_json_safe():
    obj = {"a": np.float32(1.5), "b": np.array([1, 2]), "c": float("nan"), "d": {1, 2},
           "e": pd.DataFrame({"x": [1, 2]}), "f": np.bool_(True), "g": pd.Timestamp("2020-01-01")}
    out = to_jsonable(obj)
    json.dumps(out, allow_nan=False)
    assert out["a"] == 1.5 and out["b"] == [1, 2] and out["c"] is None and out["e"] == [{"x": 1}, {"x": 2}]
    with pytest.raises(ValueError, match="too large"):
        to_jsonable(np.zeros(20), max_items=10)


def test_refuse_renamed_names_the_new_keyword():
    refuse_renamed("f", {"protected": 1}, {"sensitive": "protected"})  # the new name passes
    with pytest.raises(TypeError, match=r"^f: sensitive= was renamed protected=; pass protected=\.\.\. instead\.$"):
        refuse_renamed("f", {"sensitive": 1}, {"sensitive": "protected"})


def test_strict_keywords_refuses_old_unknown_moved_removed_and_positional_before_the_call():
    calls = []

    @strict_keywords(renamed={"sensitive": "protected"}, keyword_only=("protected", "theta"),
                     removed={"n_boot": "the intervals are exact now"}, moved={"progress": "f(...).run()"})
    def f(data, *, protected=None, theta=0.5):
        calls.append((data, protected, theta))
        return protected

    assert f(1, protected=["sex"], theta=0.1) == ["sex"]
    assert inspect.signature(f) == inspect.signature(f.__wrapped__)  # the real signature shows
    cases = [
        (dict(sensitive=["sex"]), r"f: sensitive= was renamed protected=; pass protected="),
        (dict(protected=["sex"], sensitive=["sex"]), r"sensitive= was renamed protected="),
        (dict(prot=["sex"]), r"unexpected keyword argument 'prot'; it takes data=, protected=, theta="),
        (dict(n_boot=10), r"f: n_boot= was removed: the intervals are exact now; drop the argument"),
        (dict(progress=True), r"f: progress= moved to f\(...\).run\(\); pass it there"),
    ]
    for kwargs, msg in cases:
        with pytest.raises(TypeError, match=msg):
            f(1, **kwargs)
    with pytest.raises(TypeError, match=r"f: protected, theta must be passed by keyword.*protected=\.\.\., theta="):
        f(1, ["sex"], 0.1)
    with pytest.raises(TypeError, match=r"f: protected must be passed by keyword"):
        f(1, ["sex"])
    assert calls == [(1, ["sex"], 0.1)]  # nothing refused reached the function


def test_strict_keywords_checks_a_forwarded_catch_all_against_its_target():
    @strict_keywords(forwarded=("target", lambda: {"alpha", "beta"}))
    def g(data, *, gamma=1, **forwarded):
        return forwarded

    assert g(1, alpha=2) == {"alpha": 2}
    with pytest.raises(TypeError, match=r"'alpah': it is neither one of its own \(data=, gamma=\) nor "
                                        r"one target takes \(alpha=, beta=\)"):
        g(1, alpah=2)
    with pytest.raises(TypeError, match="alpah"):
        g(alpah=2)  # before Python would complain about the missing data


class _Counter(Analysis):
    _parameter_constraints = {"n": [Interval(numbers.Integral, 1, None)], "random_state": ["random_state"]}

    def __init__(self, model, data, *, n=3, random_state=None):
        self.model, self.data, self.n, self.random_state = model, data, n, random_state
        self._validate_params()

    def run(self, *, stop=None, progress=None, n_jobs=None):
        stop_fn, report, n_jobs, seed, t0 = self._start(stop, progress, n_jobs)
        rng = np.random.default_rng(seed)
        draws = []
        for i in range(self.n):
            if stop_fn():
                break
            draws.append(float(rng.random()))
            if report:
                report(i + 1, self.n)
        return _CounterResult(draws, params=self.get_params(), random_state=seed,
                              stopped=len(draws) < self.n)


class _CounterResult(Result):
    title = "counter"

    def __init__(self, draws, params, random_state, stopped):
        self.draws, self.params, self.random_state, self.stopped, self.elapsed = (
            draws, params, random_state, stopped, 0.01)

    def summary(self):
        return pd.DataFrame([{"draws": len(self.draws), "mean": np.mean(self.draws) if self.draws else np.nan}])


def test_analysis_contract_end_to_end():
    with pytest.raises(ValueError, match="_Counter: n must be"):
        _Counter(None, None, n=0)
    res = _Counter(None, None, n=4, random_state=None).run()
    again = _Counter(None, None, n=4, random_state=res.random_state).run()
    assert again.draws == res.draws  # the recorded seed reproduces the run
    d = res.to_dict()
    json.dumps(d, allow_nan=False)
    assert d["summary"]["draws"] == 4 and d["random_state"] == res.random_state
    assert "counter" in res._repr_html_()
    ev = threading.Event()
    ev.set()
    stopped = _Counter(None, None, n=4, random_state=1).run(stop=ev)
    assert stopped.stopped and stopped.draws == []
    with pytest.raises(TypeError, match="stop must be"):
        _Counter(None, None).run(stop=3)
    with pytest.raises(ValueError, match="n_jobs"):
        _Counter(None, None).run(n_jobs=0)
    assert "n=3" in repr(_Counter(None, None))


def test_repr_html_escapes_and_formats():
    class R(Result):
        title = "<b>t</b>"
        params = {"col": "<img src=x>"}

        def summary(self):
            return pd.DataFrame([{"<x>": 1234567.0, "small": 2.4e-17, "mid": 0.001827}])

    html = R()._repr_html_()
    assert "<img" not in html and "&lt;img" in html and "&lt;b&gt;t" in html
    assert "1.235e+06" in html and "2.400e-17" in html and "0.001827" in html
