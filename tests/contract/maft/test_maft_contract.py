"""The one analysis contract (issue 21) for the MAFT slice: every searcher refuses each
invalid value generated from its ``_parameter_constraints`` by name, every result is a
``fairlens._base.Result`` with a one-row summary, a JSON-safe ``to_dict`` and an HTML repr."""
from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import pytest

from fairlens.maft import (
    ADF,
    AEQUITAS,
    EIDIG,
    MAFT,
    SG,
    RetrainResult,
)

HAVE_Z3 = importlib.util.find_spec("z3") is not None
SEARCHERS = [MAFT, EIDIG, ADF, AEQUITAS] + ([SG] if HAVE_Z3 else [])


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


def test_mitigation_result_is_gone_naming_retrain_result():
    import fairlens.maft as fm

    with pytest.raises(AttributeError, match="MitigationResult was renamed RetrainResult"):
        fm.MitigationResult  # noqa: B018
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fm.RetrainResult is RetrainResult
