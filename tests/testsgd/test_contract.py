"""The one analysis contract (issue 21) for the TestSGD slice: every bad parameter from the
constraint table is refused by name; every result shares the Result surface."""
import json
import warnings

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

from .conftest import PlantedModel, make_toy

TOY = make_toy(n=600, seed=3)
PLANTED = PlantedModel()
SENS = ["gender", "age"]
FAST = dict(sample_thr=60, max_samples=600, random_state=0)
ANALYSES = {
    TestSGD: dict(protected=SENS, **FAST),
    FairFictPlay: dict(protected=SENS),
}


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


@pytest.mark.parametrize("cls", list(ANALYSES), ids=lambda c: c.__name__)
def test_keyword_only_after_model_and_data_and_run_takes_only_how(cls):
    import inspect

    sig = inspect.signature(cls.__init__)
    kinds = {n: p.kind for n, p in sig.parameters.items()}
    for name in cls._parameter_constraints:
        assert kinds[name] == inspect.Parameter.KEYWORD_ONLY, name
    run = inspect.signature(cls.run).parameters
    assert [n for n in run if n != "self"] == ["stop", "progress", "n_jobs"]
    assert all(p.kind == inspect.Parameter.KEYWORD_ONLY for n, p in run.items() if n != "self")


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


def test_random_state_none_is_recorded_and_reproduces_the_run():
    t = TestSGD(PLANTED, TOY, protected=SENS, sample_thr=60, max_samples=600, top_k=2)
    a = t.run()
    assert isinstance(a.random_state, int)
    b = TestSGD(PLANTED, TOY, protected=SENS, sample_thr=60, max_samples=600, top_k=2,
                random_state=a.random_state).run()
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())


def test_old_call_forms_are_a_type_error_naming_the_new_spelling():
    from fairlens.testsgd import group_fairness_score

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # refused outright, no FutureWarning first
        with pytest.raises(TypeError, match=r"^TestSGD: protected must be passed by keyword now; call "
                                            r"TestSGD\(\.\.\., protected=\.\.\.\)"):
            TestSGD(PLANTED, TOY, SENS, **FAST)
        with pytest.raises(TypeError, match=r"^TestSGD: protected, theta must be passed by keyword"):
            TestSGD(PLANTED, TOY, SENS, 0.1)
        for old, new in (("sensitive", "protected"), ("favourable_class", "favourable"), ("dataset", "data")):
            with pytest.raises(TypeError, match=rf"^TestSGD: {old}= was renamed {new}=; pass {new}="):
                TestSGD(PLANTED, TOY, **{old: SENS}, **FAST)
        with pytest.raises(TypeError, match=r"^TestSGD: progress= moved to TestSGD\(\.\.\.\)\.run\(progress=\.\.\.\)"):
            TestSGD(PLANTED, TOY, protected=SENS, progress=False, **FAST)
        with pytest.raises(TypeError, match=r"^FairFictPlay: protected must be passed by keyword"):
            FairFictPlay(PLANTED, TOY, SENS)
        for old, new in (("favourable_class", "favourable"), ("dataset", "data")):
            with pytest.raises(TypeError, match=rf"^FairFictPlay: {old}= was renamed {new}="):
                FairFictPlay(PLANTED, TOY, **{old: 1})
        with pytest.raises(TypeError, match=r"^group_fairness_score: error_thr= was renamed error=; pass error="):
            group_fairness_score(PLANTED, TOY, frequent_rule_sets(TOY, SENS, 0.1).rule_sets[0], SENS,
                                 error_thr=0.05, sample_thr=60, max_samples=600, random_state=0)
        with pytest.raises(TypeError, match="no_such_option"):
            TestSGD(PLANTED, TOY, protected=SENS, no_such_option=1)
        # the new spellings run
        TestSGD(PLANTED, TOY, protected=SENS, favourable=1, **FAST).run(progress=False)


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
