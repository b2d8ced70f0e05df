"""A model never touches fairlens's arrays (issue 22): a model that writes into the array it
is given (a callable that normalises in place, an estimator that clips its input) must not
corrupt the caller's data or a search's buffers."""
import numpy as np
import pandas as pd
import pytest

from fairlens.datasets import load_german_credit
from fairlens.models import as_scorer


@pytest.fixture(scope="module")
def german():
    return load_german_credit()


def _writing_callable(ds, weight_of="sex"):
    rng = np.random.default_rng(0)
    w = rng.normal(size=ds.n_features)
    w[ds.index_of(weight_of)] = 3.0
    mu, sd = ds.X.mean(0), ds.X.std(0) + 1e-9

    def f(X):
        X -= mu  # normalises in place: writes into the array it is given
        X /= sd
        return 1 / (1 + np.exp(-(X @ w) / 3))

    def clean(X):
        return 1 / (1 + np.exp(-(((np.asarray(X) - mu) / sd) @ w) / 3))

    return f, clean


class _ClippingEstimator:
    """An estimator fitted on arrays whose predict_proba clips its input in place."""

    classes_ = np.array([0, 1])

    def __init__(self, n_features):
        self.n_features_in_ = n_features

    def predict_proba(self, X):
        if isinstance(X, pd.DataFrame):
            X = X.to_numpy(copy=False)  # a view of the frame's block where pandas allows it
        if X.flags.writeable:
            np.clip(X, 0, 1, out=X)
        p = np.clip(X, 0, 1).mean(axis=1)
        return np.column_stack([1 - p, p])


def test_writing_callable_does_not_change_the_callers_rows(german):
    f, clean = _writing_callable(german)
    s = as_scorer(f, german)
    X = german.X[:50].copy()
    before = X.copy()
    np.testing.assert_allclose(s(X), clean(before), rtol=1e-12)
    np.testing.assert_array_equal(X, before)
    # the same array again gives the same scores (it was not normalised twice)
    np.testing.assert_allclose(s(X), clean(before), rtol=1e-12)


@pytest.mark.parametrize("frame_fitted", [False, True])
def test_writing_estimator_does_not_change_the_callers_rows(german, frame_fitted):
    est = _ClippingEstimator(german.n_features)
    if frame_fitted:
        est.feature_names_in_ = np.array(german.feature_names, dtype=object)
    s = as_scorer(est, german, input="encoded")
    X = np.ascontiguousarray(german.X[:30], dtype=np.float64)
    before = X.copy()
    s(X)
    np.testing.assert_array_equal(X, before)
    np.testing.assert_array_equal(german.X[:30], before)


def test_maft_with_a_writing_model_reports_only_protected_differences(german):
    """Used to report pairs that differ outside the protected attribute (24 of 24): the
    engine handed its own buffer to the model, which normalised it in place."""
    from fairlens.maft import MAFT

    f, clean = _writing_callable(german)
    res = MAFT(f, german, protected=["sex"], n_seeds=10, n_local=5, random_state=0).run()
    assert res.n_instances > 0
    p = german.index_of("sex")
    others = np.delete(np.arange(german.n_features), p)
    np.testing.assert_array_equal(res.instances[:, others], res.counterparts[:, others])
    assert np.all(res.instances[:, p] != res.counterparts[:, p])
    # and each pair really is discriminatory for the (clean) model: labels differ
    assert np.all((clean(res.instances) > 0.5) != (clean(res.counterparts) > 0.5))
    # the same search on the well-behaved twin finds the same instances
    twin = MAFT(clean, german, protected=["sex"], n_seeds=10, n_local=5, random_state=0).run()
    np.testing.assert_array_equal(res.instances, twin.instances)
