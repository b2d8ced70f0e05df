"""The tests of ``tests/contract/certify/test_nan_like_a_value.py`` that pin internals
(its docstring describes both halves)."""
import numpy as np
import pytest

from fairlens.certify import certify, read_model
from fairlens.certify._reference import reference_attack
from tests.contract.certify.test_nan_like_a_value import _data, xgb


def _verdicts(res):
    st = np.asarray(res.status)
    return np.where(np.isin(st, ("certified_flb", "certified_elb", "robust_brute")), "robust", st)


def _oracle(model, X, y, budget):
    correct, attackable = reference_attack(model, X, y, budget, missing=True)
    return np.where(~correct, "misclassified", np.where(attackable, "attackable", "robust"))


@pytest.mark.parametrize("budget", [1, 2])
def test_verdicts_equal_the_literal_oracle_and_witnesses_flip_predict(budget):
    X, y = _data(1)
    model = xgb.XGBClassifier(n_estimators=12, max_depth=3, random_state=0, n_jobs=1).fit(X[:320], y[:320])
    Xt, yt = X[320:360].copy(), y[320:360]
    Xt[::3, 1] = np.nan                                      # rows with their own NaN
    Xt[1::5, 4] = np.nan
    res = certify(model, Xt, yt, budget=budget, method="brute")
    np.testing.assert_array_equal(_verdicts(res), _oracle(model, Xt, yt, budget))
    assert res.witnesses
    for i, w in res.witnesses.items():
        feats, vals = res.witness_changes[i]
        assert model.predict(w[None, :])[0] != yt[i]
        untouched = np.setdiff1d(np.arange(X.shape[1]), feats)
        np.testing.assert_array_equal(w[untouched], Xt[i, untouched])   # NaN stays NaN
        assert not np.isnan(vals).any()                      # NaN adds nothing here: finite witnesses
    # the cascade agrees with brute force, and the default threat model with the finite one
    casc = certify(model, Xt, yt, budget=budget)
    np.testing.assert_array_equal(_verdicts(casc), _verdicts(res))
    fin = certify(model, np.nan_to_num(Xt, nan=0.0), yt, budget=budget, missing=False)
    assert fin.n_evaluations == certify(model, np.nan_to_num(Xt, nan=0.0), yt, budget=budget).n_evaluations


def test_a_feature_where_nan_is_its_own_branch_keeps_the_nan_value():
    """Trained with NaN in feature 0 (NaN's branch there is learnt, and differs from every finite
    value's somewhere): feature 0 keeps its NaN value, the others do not need one."""
    X, y = _data(2)
    rng = np.random.default_rng(2)
    hole = rng.random(X.shape[0]) < np.where(y == 1, 0.4, 0.05)
    X[hole, 0] = np.nan
    model = xgb.XGBClassifier(n_estimators=12, max_depth=3, random_state=0, n_jobs=1).fit(X[:320], y[:320])
    ens = read_model(model)
    coded = ens.nan_coded()
    kept = [f for f in range(X.shape[1]) if np.isinf(coded.values[coded.values_ptr[f]:coded.values_ptr[f + 1]]).any()]
    assert 0 in kept
    assert coded.nan_as is None or np.isinf(coded.nan_as[0])
    Xt, yt = X[320:360], y[320:360]
    for budget in (1, 2):
        res = certify(model, Xt, yt, budget=budget, method="brute")
        np.testing.assert_array_equal(_verdicts(res), _oracle(model, Xt, yt, budget))
        for i, w in res.witnesses.items():
            assert model.predict(w[None, :])[0] != yt[i]
