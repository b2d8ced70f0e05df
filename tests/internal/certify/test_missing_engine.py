"""The tests of ``tests/contract/certify/test_missing_engine.py`` that pin internals
(its docstring describes both halves)."""
import numpy as np
import pytest
from sklearn.ensemble import (
    ExtraTreesClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)

from fairlens.certify import certify, flatten_forest
from fairlens.certify._reference import reference_attack, reference_brute
from tests.contract.certify.test_missing_engine import ROBUST, _data


def _check(model, res, Q, yq, budget, missing=True, exact=True):
    correct, attackable = reference_attack(model, Q, yq, budget, missing=missing)
    st = np.asarray(res.status)
    robust = np.isin(st, ROBUST)
    assert not np.any(robust & attackable), "a certified row is attacked by the oracle"
    assert np.array_equal(st == "misclassified", ~correct)
    if exact:
        assert np.array_equal(robust, correct & ~attackable)
        assert np.array_equal(st == "attackable", correct & attackable)
    for i, w in res.witnesses.items():
        w = np.asarray(w, dtype=np.float64)
        feats, vals = res.witness_changes[i]
        assert len(feats) <= budget and not np.isinf(w).any()
        assert missing or np.isfinite(vals).all()  # finite threat model: only finite values written
        unchanged = np.setdiff1d(np.arange(w.size), feats)
        assert np.array_equal(w[unchanged], Q[i][unchanged], equal_nan=True)
        assert model.predict(w[None, :])[0] != yq[i]
    return robust


@pytest.mark.parametrize("cls", [RandomForestClassifier, ExtraTreesClassifier])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_forests_equal_the_oracle_with_nan(cls, seed):
    """Soft vote (predict), trees fitted with and without NaN, query rows with and without NaN."""
    X, Xn, y = _data(seed)
    model = cls(n_estimators=12, max_depth=3, max_features=2, random_state=seed).fit(Xn if seed % 2 else X, y)
    Q, yq = Xn[200:230], y[200:230]
    assert np.isnan(Q).any()
    for budget in (1, 2) if seed == 0 else (1,):
        for method in ("cascade", "brute"):
            _check(model, certify(model, Q, yq, budget=budget, method=method), Q, yq, budget)
        for method in ("flb", "elb"):
            _check(model, certify(model, Q, yq, budget=budget, method=method), Q, yq, budget, exact=False)


@pytest.mark.parametrize("missing", [False, True])
def test_forest_rows_with_nan_under_both_threat_models(missing):
    X, Xn, y = _data(3)
    model = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(Xn, y)
    Q, yq = Xn[200:240], y[200:240]
    res = certify(model, Q, yq, budget=1, missing=missing)
    _check(model, res, Q, yq, 1, missing=missing)
    assert res.params["missing"] is missing and res.params["nan_attack"] is missing
    tm = res.summary()["threat_model"].iloc[0]
    assert tm == ("finite values and NaN" if missing else "finite values")


def test_bounds_certify_soundly_with_nan():
    """Many shallow trees: FLB/ELB certify rows with NaN on (the bounds are used, not skipped), and
    every certified row is robust for the oracle; the cascade equals the oracle."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(600, 20))
    y = (X.sum(axis=1) > 0).astype(int)
    X[rng.random(X.shape) < 0.1] = np.nan
    model = RandomForestClassifier(n_estimators=80, max_depth=2, max_features=3, random_state=0).fit(X[:500], y[:500])
    Q, yq = X[500:540], y[500:540]
    res = certify(model, Q, yq, budget=1)
    robust = _check(model, res, Q, yq, 1)
    assert res.stage_counts["certified_flb"] + res.stage_counts["certified_elb"] > 0
    assert robust.sum() > 0


def test_hard_vote_equals_the_hard_oracle_with_nan():
    X, Xn, y = _data(4)
    model = RandomForestClassifier(n_estimators=9, max_depth=3, random_state=4).fit(Xn, y)
    Q, yq = Xn[200:225], y[200:225]
    for budget in (1, 2):
        res = certify(model, Q, yq, budget=budget, vote="hard")
        correct, attackable = reference_brute(model, Q, yq, budget, missing=True)
        st = np.asarray(res.status)
        assert np.array_equal(np.isin(st, ROBUST), correct & ~attackable)
        ff = flatten_forest(model, vote="hard")
        for i, (feats, vals) in res.witness_changes.items():
            w = np.asarray(res.witnesses[i])
            assert np.array_equal(np.isnan(w), np.isnan(Q[i]) & ~np.isin(np.arange(w.size), feats) |
                                  np.isin(np.arange(w.size), [f for f, v in zip(feats, vals) if v != v]))
            assert ff is not None


@pytest.mark.parametrize("n_classes", [2, 3])
def test_hist_gradient_boosting_equals_the_oracle_with_nan(n_classes):
    X, Xn, y = _data(6)
    if n_classes == 3:
        y = np.digitize(X.sum(axis=1), [-1.0, 1.0])
    model = HistGradientBoostingClassifier(max_iter=8, max_depth=2, random_state=0).fit(Xn[:200], y[:200])
    Q, yq = Xn[200:230], y[200:230]
    _check(model, certify(model, Q, yq, budget=1), Q, yq, 1)


def _boosted_models(Xn, y):
    xgb = pytest.importorskip("xgboost")
    lgb = pytest.importorskip("lightgbm")
    return {"hgb": HistGradientBoostingClassifier(max_iter=6, max_depth=2, random_state=0).fit(Xn, y),
            "xgb": xgb.XGBClassifier(n_estimators=6, max_depth=2, random_state=0, n_jobs=1).fit(Xn, y),
            "lgb": lgb.LGBMClassifier(n_estimators=6, num_leaves=4, random_state=0, n_jobs=1, verbose=-1).fit(Xn, y)}


def test_nan_coded_boosted_replay_equals_the_library_and_x_is_not_changed():
    """The coded model (NaN = -inf) replays each library's raw scores on rows with NaN, and neither
    it nor certify writes into the caller's X."""
    from fairlens.certify import read_model

    X, Xn, y = _data(11)
    for name, model in _boosted_models(Xn[:200], y[:200]).items():
        Q = Xn[200:260].copy()
        keep = Q.copy()
        bm = read_model(model).nan_coded()
        np.testing.assert_allclose(bm.replay_scores(Q), bm.library_scores(Q), rtol=1e-5, atol=1e-5, err_msg=name)
        res = certify(model, Q, y[200:260], budget=1)
        np.testing.assert_array_equal(Q, keep)
        _check(model, res, Q, y[200:260], 1)
