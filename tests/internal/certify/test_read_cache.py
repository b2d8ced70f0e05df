"""A model is read once per *content* (``Reader.fingerprint``): repeated certify calls on the same
XGBoost or LightGBM model do not pay its reading again, and nothing stale can come back -- a model refitted in
place has another content, a reading handed out is a private copy bound to the caller's model."""
import numpy as np
import pytest

from fairlens.certify import (  # noqa: E402
    _readers,  # noqa: E402
    certify,
    read_model,
)


def _data(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(400, 6))
    y = (X[:, 0] + 0.5 * X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=400) > 0).astype(int)
    return X, y


LIBRARIES = ("XGBoost", "LightGBM")


@pytest.fixture(params=LIBRARIES)
def lib(request):
    pytest.importorskip(request.param.lower())
    return request.param


def _fit(lib, seed, n=20):
    X, y = _data(seed)
    if lib == "XGBoost":
        import xgboost as xgb

        m = xgb.XGBClassifier(n_estimators=n, max_depth=3, random_state=0, n_jobs=1)
    else:
        import lightgbm as lgb

        m = lgb.LGBMClassifier(n_estimators=n, max_depth=3, num_leaves=8, random_state=0, n_jobs=1, verbose=-1)
    return m.fit(X, y), X, y


def _same(a, b):
    return (np.array_equal(a.status, b.status) and a.witness_changes.keys() == b.witness_changes.keys()
            and all(np.array_equal(a.witnesses[i], b.witnesses[i], equal_nan=True) for i in a.witnesses))


def test_same_content_is_read_once_and_bound_to_the_callers_model(monkeypatch, lib):
    _readers._READ_CACHE.clear()
    calls = []
    reader = next(r for r in _readers.READERS if r.name == lib)
    assert reader.fingerprint is not None
    counted = reader._replace(read=lambda m: (calls.append(m), reader.read(m))[1])
    monkeypatch.setattr(_readers, "READERS", tuple(counted if r is reader else r for r in _readers.READERS))
    m1, X, y = _fit(lib, 0)
    m2, _, _ = _fit(lib, 0)                      # another object, the same content
    e1, e2, e3 = read_model(m1), read_model(m2), read_model(m1)
    assert len(calls) == 1                  # read once
    assert e1.model is m1 and e2.model is m2 and e3.model is m1
    for a in ("feature", "threshold", "value", "base", "values"):
        np.testing.assert_array_equal(getattr(e1, a), getattr(e2, a))
    e1.base[:] += 1.0                       # a caller's copy: nothing reaches the cache
    np.testing.assert_array_equal(read_model(m1).base, e2.base)


def test_a_model_refitted_in_place_is_read_again(lib):
    _readers._READ_CACHE.clear()
    m, X, y = _fit(lib, 0)
    before = certify(m, X[:40], y[:40], budget=1)
    X2, y2 = _data(1)
    m.fit(X2, y2)                           # the same object, new trees
    after = certify(m, X[:40], y[:40], budget=1)
    _readers._READ_CACHE.clear()
    fresh = certify(m, X[:40], y[:40], budget=1)
    assert _same(after, fresh)              # as if never cached
    assert not np.array_equal(read_model(m).threshold, read_model(_fit(lib, 0)[0]).threshold)
    assert before.n_evaluations != after.n_evaluations or not _same(before, after)
    for i, xw in after.witnesses.items():  # every witness flips this model's own predict
        assert m.predict(xw.reshape(1, -1))[0] != y[i]


def test_results_are_identical_with_and_without_the_cache(lib):
    m, X, y = _fit(lib, 2, n=40)
    _readers._READ_CACHE.clear()
    cold = certify(m, X[:60], y[:60], budget=2)
    warm = certify(m, X[:60], y[:60], budget=2)
    assert _same(cold, warm) and cold.n_evaluations == warm.n_evaluations


def test_the_cache_is_bounded(lib):
    _readers._READ_CACHE.clear()
    for seed in range(_readers._READ_CACHE_SIZE + 3):
        read_model(_fit(lib, seed, n=3)[0])
    assert len(_readers._READ_CACHE) == _readers._READ_CACHE_SIZE
