"""The tests of ``tests/contract/certify/test_contract.py`` that pin internals
(its docstring describes both halves)."""
import json
import math

import numpy as np
import pandas as pd
import pytest

from fairlens._base import Result, make_invalid
from fairlens.certify import accuracy_under_attack, certify, instance_covers
from fairlens.certify._common import CERTIFY_CONSTRAINTS
from tests.contract.certify.test_contract import fitted  # noqa: F401 (fixtures)


def test_the_table_generates_a_bad_value_for_every_declared_parameter():
    bad = dict(make_invalid(CERTIFY_CONSTRAINTS))
    assert set(bad) == set(CERTIFY_CONSTRAINTS) - {"tie_class"}


def test_every_invalid_value_is_refused_by_name(fitted):
    _, (model, X, y, extra) = fitted
    cases = make_invalid(CERTIFY_CONSTRAINTS) + [("prune", "banana"), ("chunk_size", 0), ("budget", 99),
                                                 ("budget", True), ("n_jobs", 2.0), ("time_limit", np.nan)]
    for name, bad in cases:
        kw = dict(extra)
        kw[name] = bad
        with pytest.raises((TypeError, ValueError), match=name):
            certify(model, X, y, **kw)
        if name in ("budget", "vote"):
            with pytest.raises((TypeError, ValueError), match=name):
                instance_covers(model, X[0], y[0], **kw)
        elif name != "tie_class":
            kw.setdefault("budgets", (1,))
            with pytest.raises((TypeError, ValueError), match=name):
                accuracy_under_attack(model, X, y, **kw)


def test_results_follow_the_contract(fitted):
    kind, (model, X, y, extra) = fitted
    res = certify(model, X, y, budget=1, **extra)
    assert isinstance(res, Result)
    s = res.summary()
    assert isinstance(s, pd.DataFrame) and len(s) == 1
    d = res.to_dict()
    json.dumps(d, allow_nan=False)
    assert d["type"] == "CertificationResult" and d["params"]["budget"] == 1
    assert d["params"]["method"] == "cascade"
    assert isinstance(res._repr_html_(), str)
    assert res.random_state is None and res.stopped is False and math.isfinite(res.elapsed)
    lo, hi = res.accuracy_interval
    assert lo == hi == res.accuracy_exact
    # a time limit that settles nothing is a stopped run with a sound interval
    cut = certify(model, X, y, budget=1, time_limit=0, **extra)
    assert cut.stopped and cut.to_dict()["stopped"] is True
    assert cut.accuracy_interval[0] <= res.accuracy <= cut.accuracy_interval[1]
    for method in ("flb", "elb"):
        r = certify(model, X, y, budget=1, method=method, **extra)
        assert r.accuracy_interval[0] <= res.accuracy <= r.accuracy_interval[1]
    ic = instance_covers(model, X[0], y[0], budget=1, **extra)
    assert isinstance(ic, Result)
    s = ic.summary()
    assert len(s) == 1 and s.loc[0, "budget"] == 1
    json.dumps(ic.to_dict(), allow_nan=False)
    assert isinstance(ic._repr_html_(), str) and ic.params["budget"] == 1
