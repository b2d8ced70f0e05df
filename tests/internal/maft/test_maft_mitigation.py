import numpy as np
import pytest

from fairlens.maft import discrimination_rate
from tests._support.maft_oracle import is_discriminatory


def test_rate_and_interval(toy, toy_mlp):
    r = discrimination_rate(toy_mlp, toy, ["sex"], n_samples=400, random_state=0)
    assert r["low"] <= r["rate"] <= r["high"] and r["n"] == 400
    # independent recount on the same samples: chunk 0 of the run's counter-based streams
    from fairlens._parallel import chunk_rng

    rng = chunk_rng(0, 0)  # an int seed is the run's seed as is
    X = np.floor(rng.random((400, 6)) * (toy.bounds[:, 1] - toy.bounds[:, 0] + 1)) + toy.bounds[:, 0]
    k = sum(is_discriminatory(toy_mlp, x, [1], toy.bounds) for x in X)
    assert r["rate"] == pytest.approx(k / 400)
    # a model that ignores the protected attributes never discriminates
    flat = lambda Z: 1 / (1 + np.exp(-(np.asarray(Z)[:, 3] - 4.5)))  # noqa: E731
    assert discrimination_rate(flat, toy, ["sex", "race"], n_samples=200)["rate"] == 0.0
