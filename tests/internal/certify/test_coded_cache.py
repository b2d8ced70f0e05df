"""The NaN coding of the default threat model is paid once per model (``read_with_coder``): repeated
``certify(missing="auto")`` calls on one XGBoost or LightGBM model code it once, with the same
answers, and nothing stale can come back -- a model refitted in place has another content, and a
coding handed out is a private copy bound to the caller's model."""
import numpy as np
import pytest

from fairlens.certify import _ensemble, _readers, accuracy_under_attack, certify, instance_covers

CODED = ("feature", "threshold", "left", "right", "roots", "leaf_class", "value", "missing_left", "values_ptr",
         "values")


@pytest.fixture
def counted(monkeypatch):
    """Empty caches, and the codings actually computed."""
    monkeypatch.setattr(_readers, "_CODED_CACHE", type(_readers._CODED_CACHE)())
    monkeypatch.setattr(_readers, "_READ_CACHE", type(_readers._READ_CACHE)())
    calls = []
    real = _ensemble.TreeEnsemble.nan_coded

    def counting(self, offer=None):
        calls.append(None if offer is None else np.asarray(offer).copy())
        return real(self, offer)

    monkeypatch.setattr(_ensemble.TreeEnsemble, "nan_coded", counting)
    return calls


def _xgb(seed=0, n=20):
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(300, 5))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    model = xgb.XGBClassifier(n_estimators=n, max_depth=3, random_state=seed, n_jobs=1).fit(X, y)
    return model, X, y


def test_repeated_calls_code_the_model_once_with_the_same_answers(counted):
    model, X, y = _xgb()
    first = certify(model, X[:12], y[:12], budget=1)
    assert len(counted) == 1
    again = certify(model, X[:12], y[:12], budget=1)
    table = accuracy_under_attack(model, X[:12], y[:12], budgets=(1,))
    instance_covers(model, X[0], y[0], budget=1)
    assert len(counted) == 1
    assert first.to_frame().equals(again.to_frame())
    assert first.witness_frame().equals(again.witness_frame())
    assert table["accuracy_exact"].iloc[0] == first.accuracy_exact
    # the answers are those of a coding computed afresh
    _readers._CODED_CACHE.clear()
    fresh = certify(model, X[:12], y[:12], budget=1)
    assert len(counted) == 2 and fresh.to_frame().equals(first.to_frame())


def test_a_coding_is_a_private_copy_bound_to_the_callers_model(counted):
    model, X, y = _xgb()
    twin, _, _ = _xgb()                                   # the same content, another object
    _, code = _readers.read_with_coder(model)
    a = code()
    _, code_twin = _readers.read_with_coder(twin)
    b = code_twin()
    assert len(counted) == 1
    assert a.model is model and b.model is twin
    for name in CODED:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
        assert not np.shares_memory(getattr(a, name), getattr(b, name)), name
    a.threshold[:] = 0.0                                  # a caller's change reaches neither b nor the cache
    c = _readers.read_with_coder(model)[1]()
    assert np.array_equal(c.threshold, b.threshold)


def test_a_model_refitted_in_place_is_coded_again(counted):
    model, X, y = _xgb()
    certify(model, X[:5], y[:5], budget=1)
    model.fit(X, (X[:, 2] > 0).astype(int))               # another content
    certify(model, X[:5], y[:5], budget=1)
    assert len(counted) == 2
    coded = _readers.read_with_coder(model)[1]()          # the cached coding: the refitted model's
    assert len(counted) == 2
    Xq = X[:60].copy()
    Xq[::3, 2] = np.nan
    Xq[1::4, 0] = np.nan
    assert np.array_equal(coded.predict(Xq), model.predict(Xq))


def test_the_offer_vote_and_model_are_part_of_the_key(counted):
    model, X, y = _xgb()
    other, _, _ = _xgb(seed=1)
    _, code = _readers.read_with_coder(model)
    offer = np.zeros(X.shape[1], bool)
    offer[0] = True
    code(), code(offer), code(offer)
    _readers.read_with_coder(other)[1]()
    assert len(counted) == 3
