"""NaN that routes like a finite value is no new attack value (issue 37, item 3).

Where NaN takes, at every node of a feature, the branch one of the feature's finite relevant values
takes (XGBoost trained without missing values sends NaN right at every node: the branch of the top
value), writing NaN reaches exactly the leaves that value reaches. The NaN-coded ensemble then adds
no ``-inf`` value and no NaN-code parent for that feature, and reads a NaN input as that value: the
default threat model costs what the finite one costs on such models. The verdicts are those of the
literal oracle that calls the library's own ``predict`` with NaN as one more value; every witness
flips that ``predict`` and keeps the row's own NaN where the attack leaves the feature alone.
"""
import numpy as np
import pytest

from fairlens.certify import read_model

xgb = pytest.importorskip("xgboost")


def _data(seed, n=400, d=5):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, d)) * 3) / 3
    y = (X[:, 0] + X[:, 1] * (X[:, 2] > 0) + 0.3 * rng.normal(size=n) > 0).astype(int)
    return X, y


def test_xgboost_without_missing_training_data_needs_no_nan_code():
    X, y = _data(0)
    model = xgb.XGBClassifier(n_estimators=12, max_depth=3, random_state=0, n_jobs=1).fit(X[:320], y[:320])
    ens = read_model(model)
    assert not ens.missing_left[ens.feature >= 0].any()     # NaN goes right everywhere
    coded = ens.nan_coded()
    assert coded.feature.shape == ens.feature.shape          # no NaN-code parent
    assert not np.isinf(coded.values).any()                  # no NaN value
    np.testing.assert_array_equal(coded.values_ptr, ens.values_ptr)
    # NaN is read as the top value of its feature, which takes NaN's branch at every node
    for f in range(X.shape[1]):
        top = ens.values[ens.values_ptr[f + 1] - 1]
        assert coded.nan_as[f] == top and top > ens.threshold[ens.feature == f].max()
