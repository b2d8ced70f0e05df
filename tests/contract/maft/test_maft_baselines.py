"""EIDIG and ADF (white-box gradient sources) through the same engine."""
import numpy as np
import pytest

pytest.importorskip("fairlens.models", reason="foundation models (mlp_input_gradient) not available")

from fairlens.maft import ADF, EIDIG, MAFT  # noqa: E402
from tests._support.maft_oracle import check_result  # noqa: E402


def _set(r):
    return {tuple(x) for x in r.instances}


@pytest.mark.parametrize("cls", [EIDIG, ADF])
def test_rechecked_and_engines_agree(toy, toy_mlp, cls):
    s = cls(toy_mlp, toy, protected=["sex", "race"])
    a = s.set_params(n_seeds=30, n_local=40, random_state=0).run()
    b = s.set_params(n_seeds=30, n_local=40, random_state=0, engine="reference").run()
    assert a.n_global > 0 and a.n_local > 0
    check_result(toy_mlp, a, [1, 2], toy.bounds)
    # the sklearn MLP scores a row identically in any batch here, so the engines coincide
    assert _set(a) == _set(b)
    assert a.tries_local == b.tries_local


def test_adf_and_eidig_global_directions_coincide(toy, toy_mlp):
    """sign(dLoss/dx) == -sign of EIDIG's flipped output gradient, so without momentum
    the global phases walk the same paths."""
    seeds = toy.X[:80]
    e = EIDIG(toy_mlp, toy, protected=["sex"], decay=0.0, n_local=0, seeds=seeds).run()
    a = ADF(toy_mlp, toy, protected=["sex"], n_local=0, seeds=seeds).run()
    np.testing.assert_array_equal(e.instances, a.instances)
    assert e.n_global > 5


def test_maft_small_h_tracks_eidig(toy, toy_mlp):
    seeds = toy.X[:80]
    e = EIDIG(toy_mlp, toy, protected=["sex"], n_local=0, seeds=seeds).run()
    m = MAFT(toy_mlp, toy, protected=["sex"], h=1e-6, n_local=0, seeds=seeds).run()
    inter = len(_set(e) & _set(m))
    assert inter >= 0.8 * max(e.n_instances, m.n_instances)


def test_adf_defaults(toy, toy_mlp):
    p = ADF(toy_mlp, toy).get_params()
    assert p["decay"] == 0.0 and p["update_interval"] == 1
    p = EIDIG(toy_mlp, toy).get_params()
    assert p["decay"] == 0.5 and p["update_interval"] == 5 and p["max_iter"] == 10


def test_compare_gradients(toy, toy_mlp):
    from fairlens.maft import compare_gradients

    c = compare_gradients(toy_mlp, toy, toy.X[:60], protected=["sex"], h=1e-6)
    assert np.nanmedian(c.gradient_cos["MAFT vs EIDIG"]) > 0.999
    # rows scored in different batches may differ by an ulp of f; divided by h=1e-6 that is ~1e-10
    np.testing.assert_allclose(c.gradients["MAFT"], c.gradients["MAFT (non-vectored)"], rtol=1e-6, atol=1e-8)
    # loss gradient = output gradient scaled per row -> same direction up to sign
    assert np.all(np.abs(np.abs(c.gradient_cos["ADF vs EIDIG"]) - 1) < 1e-6)
    assert np.nanmean(c.direction_cos) > 0.9
    assert c.to_frame().shape[0] == 4
