"""The one analysis contract (issue 21) for the MAFT slice: every searcher refuses each
invalid value generated from its ``_parameter_constraints`` by name, every result is a
``fairlens._base.Result`` with a one-row summary, a JSON-safe ``to_dict`` and an HTML repr."""
from __future__ import annotations

import importlib.util
import json
import warnings

import numpy as np
import pytest

from fairlens._base import Analysis, Result, make_invalid
from fairlens.maft import (
    ADF,
    AEQUITAS,
    EIDIG,
    MAFT,
    SG,
    FairnessTestResult,
    GradientComparison,
    RetrainResult,
    compare_gradients,
    retrain_with_instances,
)

HAVE_Z3 = importlib.util.find_spec("z3") is not None
SEARCHERS = [MAFT, EIDIG, ADF, AEQUITAS] + ([SG] if HAVE_Z3 else [])


@pytest.mark.parametrize("cls", SEARCHERS, ids=lambda c: c.__name__)
def test_every_invalid_parameter_refused_by_name(cls, toy, toy_mlp):
    assert issubclass(cls, Analysis)
    bad = make_invalid(cls._parameter_constraints)
    assert {name for name, _ in bad} >= {"n_seeds", "n_local", "random_state", "max_iter"}
    for name, value in bad:
        with pytest.raises((TypeError, ValueError)) as exc:
            cls(toy_mlp, toy, protected=["sex"], **{name: value})
        assert name in str(exc.value), (name, value, str(exc.value))


@pytest.mark.parametrize("cls", SEARCHERS, ids=lambda c: c.__name__)
def test_everything_but_model_and_data_is_keyword_only(cls, toy, toy_mlp):
    kw = {"n_samples": 200} if cls is SG else {}
    name = cls.__name__
    with pytest.raises(TypeError, match=rf"{name}: protected must be passed by keyword now; call "
                                        rf"{name}\(\.\.\., protected=\.\.\.\)"):
        cls(toy_mlp, toy, ["sex"], **kw)  # the form of earlier releases
    with pytest.raises(TypeError, match="by keyword"):
        cls(toy_mlp, toy, ["sex"], 10)
    with pytest.raises(TypeError, match=rf"{name}: favourable_class= was renamed favourable="):
        cls(toy_mlp, toy, protected=["sex"], favourable_class=1, **kw)
    with pytest.raises(TypeError, match="n_seed"):
        cls(toy_mlp, toy, protected=["sex"], n_seed=10, **kw)


def _check_result(res):
    assert isinstance(res, Result)
    s = res.summary()
    assert s.shape[0] == 1
    d = res.to_dict()
    json.dumps(d, allow_nan=False)
    assert isinstance(res._repr_html_(), str)
    assert d["type"] == type(res).__name__
    return d


@pytest.mark.parametrize("cls", SEARCHERS, ids=lambda c: c.__name__)
def test_search_result_follows_the_contract(cls, toy, toy_mlp):
    kw = {"n_samples": 200} if cls is SG else {}
    res = cls(toy_mlp, toy, protected=["sex"], n_seeds=12, n_local=6, random_state=3, **kw).run()
    assert isinstance(res, FairnessTestResult)
    d = _check_result(res)
    assert res.random_state == 3 == d["random_state"] == res.params["random_state"]
    assert d["stopped"] is False and res.elapsed > 0


def test_random_state_none_is_recorded_and_reproduces(toy, smooth):
    a = MAFT(smooth, toy, n_seeds=10, n_local=10, random_state=None).run()
    assert isinstance(a.random_state, int) and 0 <= a.random_state < 2**32
    b = MAFT(smooth, toy, n_seeds=10, n_local=10, random_state=a.random_state).run()
    np.testing.assert_array_equal(a.instances, b.instances)
    g = MAFT(smooth, toy, n_seeds=10, n_local=10, random_state=np.random.default_rng(1)).run()
    again = MAFT(smooth, toy, n_seeds=10, n_local=10, random_state=g.random_state).run()
    np.testing.assert_array_equal(g.instances, again.instances)


def test_old_run_form_is_a_type_error_naming_the_constructor(toy, smooth):
    s = MAFT(smooth, toy)
    with pytest.raises(TypeError, match=r"MAFT.run: n_seeds=, n_local= moved to the constructor; pass "
                                        r"MAFT\(model, data, \.\.\., n_seeds=\.\.\., n_local=\.\.\.\)"):
        s.run(15, 10)
    with pytest.raises(TypeError, match=r"MAFT.run: random_state= moved to the constructor"):
        s.run(random_state=2)
    with pytest.raises(TypeError, match=r"block_size= was removed"):
        s.run(block_size=64)
    with pytest.raises(TypeError, match="stop_flag"):
        s.run(stop_flag=lambda: False)
    assert (s.n_seeds, s.n_local) == (1000, 1000)  # the object itself is left alone


def test_progress_callable_is_called(toy, smooth):
    seen = []
    MAFT(smooth, toy, n_seeds=10, n_local=5).run(progress=lambda stage, done, total: seen.append((stage, done, total)))
    assert seen and all(0 < d <= t for _, d, t in seen)
    assert {s for s, _, _ in seen} <= {"global", "local", "tasks"}
    with pytest.raises(TypeError, match="progress"):
        MAFT(smooth, toy, n_seeds=10, n_local=5).run(progress="yes")


def test_set_params_validates_and_rolls_back(toy, smooth):
    s = MAFT(smooth, toy, n_seeds=10)
    with pytest.raises(ValueError, match="n_local"):
        s.set_params(n_local=-1, n_seeds=20)
    assert (s.n_seeds, s.n_local) == (10, 1000)
    with pytest.raises(TypeError, match="protected"):
        s.set_params(protected=["race"])
    assert s.set_params(n_seeds=20) is s and s.n_seeds == 20


def test_retrain_and_gradient_results_follow_the_contract(toy, toy_mlp):
    res = MAFT(toy_mlp, toy, protected=["sex"], n_seeds=40, n_local=50, random_state=0).run()
    mit = retrain_with_instances(toy_mlp, toy, res, n_samples=500, random_state=4)
    assert isinstance(mit, RetrainResult)
    d = _check_result(mit)
    assert d["random_state"] == 4
    cmp = compare_gradients(toy_mlp, toy, toy.X[:20], ["sex"], non_vectored=False)
    assert isinstance(cmp, GradientComparison)
    _check_result(cmp)


def test_mitigation_result_is_gone_naming_retrain_result():
    import fairlens.maft as fm

    with pytest.raises(AttributeError, match="MitigationResult was renamed RetrainResult"):
        fm.MitigationResult  # noqa: B018
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fm.RetrainResult is RetrainResult
