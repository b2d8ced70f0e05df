"""The one analysis contract (issue 21) for the TestSGD slice: every bad parameter from the
constraint table is refused by name; every result shares the Result surface."""
import json

import numpy as np
import pandas as pd
import pytest

from fairlens._base import Analysis, Result, make_invalid
from fairlens.testsgd import (
    FairFictPlay,
    RuleSetScores,
    TestSGD,
    frequent_rule_sets,
    mitigate,
    score_rule_sets,
    themis_group_discrimination,
)
from tests.contract.testsgd.test_contract import ANALYSES, FAST, PLANTED, SENS, TOY


@pytest.mark.parametrize("cls", list(ANALYSES), ids=lambda c: c.__name__)
def test_every_invalid_parameter_is_refused_by_name(cls):
    assert issubclass(cls, Analysis)
    bad = make_invalid(cls._parameter_constraints)
    assert len(bad) >= 3
    for name, value in bad:
        kw = {**ANALYSES[cls], name: value}
        with pytest.raises((TypeError, ValueError)) as info:
            cls(PLANTED, TOY, **kw)
        assert name in str(info.value), (name, value, str(info.value))


def _check_result(res):
    assert isinstance(res, Result)
    s = res.summary()
    assert isinstance(s, pd.DataFrame) and len(s) == 1
    assert isinstance(res.to_frame(), pd.DataFrame)
    d = res.to_dict()
    json.dumps(d, allow_nan=False)
    assert isinstance(res._repr_html_(), str) and res.title in res._repr_html_()
    assert isinstance(res.params, dict) and isinstance(res.stopped, bool)
    return d


def test_every_result_shares_the_result_surface():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rep = TestSGD(PLANTED, TOY, protected=SENS, top_k=3, **FAST).run()
    fr = frequent_rule_sets(TOY, SENS, 0.1)
    scores = score_rule_sets(PLANTED, TOY, fr.rule_sets[:5], protected=SENS, sample_thr=60,
                             max_samples=600, random_state=0)
    themis = themis_group_discrimination(PLANTED, TOY, SENS, n_samples=50, random_state=0)
    audit = FairFictPlay(PLANTED, TOY, protected=SENS).run()

    def fit(X, y):
        return PLANTED

    mit = mitigate(PLANTED, TOY, TOY, rep[0].rule_set, SENS, amounts=[10], fit=fit, sample_thr=60,
                   max_samples=600, random_state=0)
    results = [rep, rep[0], scores, themis, audit, mit]
    for res in results:
        _check_result(res)
        ax = res.plot()
        assert ax is not None
        plt.close("all")
    # the seed actually used is recorded (an int, the one given)
    for res in (rep, scores, themis, mit):
        assert res.random_state == 0
    assert rep.to_dict()["random_state"] == 0 and isinstance(scores, RuleSetScores)


def test_pinned_numbers_with_an_int_seed_are_unchanged():
    """The streams of an int seed are those of the previous release (chunk_rng(seed, j, 0))."""
    from fairlens.testsgd._score import _reference_score, rule_set_rng

    rep = TestSGD(PLANTED, TOY, protected=SENS, top_k=0, sample_thr=60, max_samples=600,
                  random_state=123).run()
    fr = frequent_rule_sets(TOY, SENS, 0.05)
    j = len(fr) // 2
    ref = _reference_score(PLANTED, TOY, fr.rule_sets[j], SENS, rule_set_rng(123, j, 0), sample_thr=60,
                           max_samples=600)
    got = rep.result_for(fr.rule_sets[j])
    assert (got.n_samples, got.rate_in, got.rate_out) == (ref.n_samples, ref.rate_in, ref.rate_out)
    assert np.isfinite(got.score)
