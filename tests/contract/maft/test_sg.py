"""SG (Symbolic Generation, Aggarwal et al. 2019): local decision-tree paths solved with Z3."""
import sys

import numpy as np
import pytest

pytest.importorskip("z3")

from fairlens.maft import SG  # noqa: E402
from tests._support.maft_oracle import check_result, is_discriminatory  # noqa: E402

SEX, EDU, HOURS, JOB = 1, 3, 4, 5


def region_model(X):
    """Discriminates only where edu >= 7 and hours <= 2 (there: label = sex, reversed for
    job >= 3, so the tree around an instance of the region also splits on job and the local
    search has something to negate); elsewhere the label follows edu alone."""
    X = np.asarray(X, dtype=float)
    inside = (X[:, EDU] >= 7) & (X[:, HOURS] <= 2)
    z = np.where(inside, 4.0 * (X[:, SEX] - 0.5) * np.sign(X[:, JOB] - 2.5), X[:, EDU] - 4.5)
    return 1.0 / (1.0 + np.exp(-z))


def test_finds_the_region_from_seeds_outside_it(toy):
    seeds = toy.X[(toy.X[:, EDU] < 7)][:15]
    assert not any(is_discriminatory(region_model, x, [SEX], toy.bounds) for x in seeds)
    res = SG(region_model, toy, protected=["sex"], n_samples=1000, n_local=20, seeds=seeds, random_state=0).run()
    assert res.n_global > 0 and res.n_local > 0
    X = res.instances
    assert np.all((X[:, EDU] >= 7) & (X[:, HOURS] <= 2))  # every instance lies in the region
    check_result(region_model, res, [SEX], toy.bounds)  # and re-checks (oracle, one call per row)
    # the global budget and the explained-once rule
    assert res.tries_global <= 15 * 10 and res.n_explored == res.tries_global + res.tries_local
    assert res.params["n_samples"] == 1000 and res.method == "SG"


def test_same_seed_same_result_and_rechecked_on_mlp(toy, toy_mlp):
    s = SG(toy_mlp, toy, protected=["sex", "race"], n_samples=500, max_iter=2)
    a = s.set_params(n_seeds=8, n_local=5, random_state=1).run()
    b = s.set_params(n_seeds=8, n_local=5, random_state=1).run()
    np.testing.assert_array_equal(a.instances, b.instances)
    assert a.tries_global == b.tries_global
    check_result(toy_mlp, a, [1, 2], toy.bounds)


def test_stop_and_callback(toy):
    seen = []
    res = SG(region_model, toy, protected=["sex"], n_samples=300, n_seeds=10, n_local=5,
             random_state=0).run(callback=seen.append, stop=lambda: len(seen) >= 3)
    assert res.stopped and len(seen) == 3
    assert res.tries_global + res.tries_local == 3
    assert {"phase", "step", "total", "n_global", "n_total", "elapsed"} <= set(seen[0])


def test_constant_model_has_no_path_and_no_instance(toy):
    flat = lambda X: np.full(np.asarray(X).shape[0], 0.8)  # noqa: E731
    res = SG(flat, toy, protected=["sex"], n_samples=200, n_seeds=5, n_local=5).run()
    assert res.n_instances == 0 and res.instances.shape == (0, 6)
    assert res.tries_global == 5  # nothing to negate: only the seeds are explained


@pytest.mark.parametrize("kw, name", [({"n_samples": 1}, "n_samples"), ({"max_depth": 0}, "max_depth"),
                                      ({"confidence_threshold": 1.5}, "confidence_threshold"),
                                      ({"n_samples": 2.5}, "n_samples")])
def test_parameters_validated(toy, kw, name):
    with pytest.raises((TypeError, ValueError), match=name):
        SG(region_model, toy, protected=["sex"], **kw)


def test_missing_z3_is_a_clear_error(toy, monkeypatch):
    monkeypatch.setitem(sys.modules, "z3", None)
    with pytest.raises(ImportError, match="z3-solver"):
        SG(region_model, toy, protected=["sex"])
