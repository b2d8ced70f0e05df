"""The timeline of a MAFT result ends at the count the result reports, stopped or not (a run stopped in
its global phase used to show a timeline at 0 beside a status with its instances)."""
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from fairlens.datasets import load_german_credit
from fairlens.maft import MAFT


@pytest.fixture(scope="module")
def model_and_data():
    ds = load_german_credit()
    return LogisticRegression(max_iter=300).fit(ds.X, ds.y), ds


@pytest.mark.parametrize("stop_after", [1, 3, None])
def test_timeline_ends_at_the_reported_count(model_and_data, stop_after):
    model, ds = model_and_data
    calls = [0]

    def stop():
        calls[0] += 1
        return stop_after is not None and calls[0] >= stop_after

    res = MAFT(model, ds, protected=["sex", "age"], n_seeds=60, n_local=30, random_state=0).run(stop=stop)
    tl = np.asarray(res.timeline)
    assert res.stopped == (stop_after is not None)
    assert tl[-1, 1] == res.n_instances
    assert np.all(np.diff(tl[:, 0]) >= 0) and np.all(np.diff(tl[:, 1]) >= 0)
