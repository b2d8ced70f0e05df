"""Issue 14 for the shuffle explainers: instance blocks through fairlens._parallel.run_chunks give
the same attributions at n_jobs=1, 2 and on dask."""
import joblib
import numpy as np
import pytest

from fairlens.shuffle import ShuffledModel, attributions, explain
from fairlens.shuffle._detect import EXPLAIN_BLOCK

NAMES = ["a", "b", "c", "g"]


def f(A):
    return np.asarray(A, dtype=float)[:, :3] @ np.array([0.5, 0.3, 0.2])


@pytest.fixture(autouse=True)
def force_workers(monkeypatch):
    """The toy workloads are far below MIN_WORK_PER_WORKER: force the workers anyway (the
    fall-back itself is tested in test_small_work_falls_back_and_says_so)."""
    import fairlens._parallel as par

    monkeypatch.setattr(par, "MIN_WORK_PER_WORKER", 0)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.random((40, 3)), rng.integers(0, 2, 40)]).astype(float)
    return X


def _model():
    # Mixing draws coins from the model's own generator: the hardest case for reproducibility
    return ShuffledModel(f, protected=3, favoured=1, attack="mixing", p=0.7, random_state=5, feature_names=NAMES)


@pytest.mark.parametrize("name,nsamples", [("kernel", 60), ("lime", 60), ("shap", None)])
def test_same_attributions_at_n_jobs_1_and_2(data, name, nsamples):
    X = data
    n = 2 * EXPLAIN_BLOCK + 1  # three blocks, the last one partial
    one = explain(_model(), X[:n], name, X[20:], nsamples=nsamples, random_state=3, n_jobs=1)
    two = explain(_model(), X[:n], name, X[20:], nsamples=nsamples, random_state=3, n_jobs=2)
    assert np.isfinite(one).all()
    np.testing.assert_array_equal(one, two)
    # and the seed matters (a different random_state gives different sampling)
    if name != "shap":  # exact enumeration (d <= 10) has no sampling, only the Mixing coins
        other = explain(_model(), X[:n], name, X[20:], nsamples=nsamples, random_state=4)
        assert not np.array_equal(one, other)


def test_same_attributions_on_dask(data, dask_client):
    X = data
    n = 2 * EXPLAIN_BLOCK + 1
    ref = attributions(_model(), X[:n], ("kernel", "lime"), X[20:], nsamples=50, random_state=1,
                       return_values=True)[1]
    with joblib.parallel_config(backend="dask"):
        got = attributions(_model(), X[:n], ("kernel", "lime"), X[20:], nsamples=50,
                           random_state=1, return_values=True, n_jobs=-1)[1]
    for k in ref:
        np.testing.assert_array_equal(ref[k], got[k])


def test_blocks_are_fixed_so_a_prefix_explains_the_same(data):
    """Row i's attribution depends only on its block: explaining the first block alone gives
    the same rows as explaining more rows (the block streams do not depend on n)."""
    X = data
    full = explain(_model(), X[:2 * EXPLAIN_BLOCK], "kernel", X[20:], nsamples=40, random_state=2)
    head = explain(_model(), X[:EXPLAIN_BLOCK], "kernel", X[20:], nsamples=40, random_state=2)
    np.testing.assert_array_equal(full[:EXPLAIN_BLOCK], head)


def test_callback_stop_and_bad_n_jobs(data):
    X = data
    seen = []
    phi = explain(_model(), X[:6], "lime", X[20:], nsamples=40,
                  callback=lambda i, n: seen.append(i) or i < 2)
    assert seen == [1, 2]
    assert np.isfinite(phi[:2]).all() and np.isnan(phi[2:]).all()
    # the rows explained before the stop equal those of a full run
    full = explain(_model(), X[:6], "lime", X[20:], nsamples=40)
    np.testing.assert_array_equal(phi[:2], full[:2])
    for bad, exc in ((0, ValueError), (1.5, TypeError), ("2", TypeError), (True, TypeError)):
        with pytest.raises(exc, match="n_jobs"):
            explain(_model(), X[:2], "lime", X[20:], nsamples=20, n_jobs=bad)
        with pytest.raises(exc, match="n_jobs"):
            attributions(_model(), X[:2], "lime", X[20:], nsamples=20, n_jobs=bad)


def test_small_work_falls_back_and_says_so(data, monkeypatch):
    """Below MIN_WORK_PER_WORKER model rows per worker the blocks run in this process (no
    joblib.Parallel is built), the answer is the same and the table says so."""
    import fairlens._parallel as par

    X = data
    n = 2 * EXPLAIN_BLOCK + 1
    forced, vals_forced = attributions(_model(), X[:n], ("kernel",), X[20:], nsamples=40, random_state=1,
                                       return_values=True, n_jobs=2)
    assert forced.attrs["n_jobs_used"] == 2 and "parallel on 2 workers" in forced.attrs["parallel"]
    monkeypatch.setattr(par, "MIN_WORK_PER_WORKER", 10 ** 12)
    built = []
    real = joblib.Parallel.__init__
    monkeypatch.setattr(joblib.Parallel, "__init__", lambda self, *a, **k: built.append(1) or real(self, *a, **k))
    small, vals_small = attributions(_model(), X[:n], ("kernel",), X[20:], nsamples=40, random_state=1,
                                     return_values=True, n_jobs=2)
    assert built == []
    assert small.attrs["n_jobs_used"] == 1
    assert "sequential fall-back" in small.attrs["parallel"] and "kernel" in small.attrs["parallel"]
    np.testing.assert_array_equal(vals_small["kernel"], vals_forced["kernel"])
