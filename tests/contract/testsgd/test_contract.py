"""The one analysis contract (issue 21) for the TestSGD slice: every bad parameter from the
constraint table is refused by name; every result shares the Result surface."""
import warnings

import pandas as pd
import pytest

from fairlens.testsgd import (
    FairFictPlay,
    TestSGD,
    frequent_rule_sets,
)
from tests._support.testsgd_fixtures import PlantedModel, make_toy

TOY = make_toy(n=600, seed=3)
PLANTED = PlantedModel()
SENS = ["gender", "age"]
FAST = dict(sample_thr=60, max_samples=600, random_state=0)
ANALYSES = {
    TestSGD: dict(protected=SENS, **FAST),
    FairFictPlay: dict(protected=SENS),
}


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
