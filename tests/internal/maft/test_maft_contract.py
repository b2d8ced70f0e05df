"""The tests of ``tests/contract/maft/test_maft_contract.py`` that pin internals
(its docstring describes both halves)."""
from __future__ import annotations

import json

import pytest

from fairlens._base import Analysis, Result, make_invalid
from fairlens.maft import (
    MAFT,
    SG,
    FairnessTestResult,
    GradientComparison,
    RetrainResult,
    compare_gradients,
    retrain_with_instances,
)
from tests.contract.maft.test_maft_contract import SEARCHERS


@pytest.mark.parametrize("cls", SEARCHERS, ids=lambda c: c.__name__)
def test_every_invalid_parameter_refused_by_name(cls, toy, toy_mlp):
    assert issubclass(cls, Analysis)
    bad = make_invalid(cls._parameter_constraints)
    assert {name for name, _ in bad} >= {"n_seeds", "n_local", "random_state", "max_iter"}
    for name, value in bad:
        with pytest.raises((TypeError, ValueError)) as exc:
            cls(toy_mlp, toy, protected=["sex"], **{name: value})
        assert name in str(exc.value), (name, value, str(exc.value))


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


def test_retrain_and_gradient_results_follow_the_contract(toy, toy_mlp):
    res = MAFT(toy_mlp, toy, protected=["sex"], n_seeds=40, n_local=50, random_state=0).run()
    mit = retrain_with_instances(toy_mlp, toy, res, n_samples=500, random_state=4)
    assert isinstance(mit, RetrainResult)
    d = _check_result(mit)
    assert d["random_state"] == 4
    cmp = compare_gradients(toy_mlp, toy, toy.X[:20], ["sex"], non_vectored=False)
    assert isinstance(cmp, GradientComparison)
    _check_result(cmp)
