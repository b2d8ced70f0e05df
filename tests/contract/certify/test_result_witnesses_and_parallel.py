"""Witnesses come back in the model's feature order; witness_frame() hands them to predict."""
import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier

from fairlens.certify import certify


def _data(seed=3, n=500):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"income": np.round(rng.normal(size=n), 1), "debt": np.round(rng.normal(size=n), 1),
                       "age": rng.integers(18, 70, n).astype(float)})
    y = ((df.income + 0.5 * df.debt > 0.2)).astype(int).to_numpy()
    return df, y


def _models():
    yield "rf", lambda df, y: RandomForestClassifier(n_estimators=25, max_depth=5, random_state=0).fit(df, y)
    yield "hgb", lambda df, y: HistGradientBoostingClassifier(max_iter=20, max_depth=3, random_state=0).fit(df, y)
    lgb = pytest.importorskip("lightgbm")
    yield "lgbm_zero", lambda df, y: lgb.LGBMClassifier(n_estimators=30, num_leaves=8, zero_as_missing=True,
                                                        verbose=-1, random_state=0).fit(df, y)


@pytest.mark.parametrize("name,fit", list(_models()), ids=[m[0] for m in _models()])
def test_witness_frame_flips_predict_on_reordered_columns(name, fit):
    df, y = _data()
    model = fit(df, y)
    X = df.iloc[:50][["age", "debt", "income"]]  # the caller's order differs from the model's
    res = certify(model, X, y[:50], budget=1)
    W = res.witness_frame()
    assert list(W.columns) == list(df.columns)
    assert len(W) == len(res.witnesses) > 0
    assert np.all(model.predict(W) != y[W.index.to_numpy()])
    # the same rows read in the caller's column order would be a different (wrong) input
    wrong = pd.DataFrame(W.to_numpy(), columns=list(X.columns))[df.columns]
    assert np.any(model.predict(wrong) == y[W.index.to_numpy()])
    for i, (feats, vals) in res.witness_changes.items():
        for f, v in zip(feats, vals):
            assert (np.isnan(v) and np.isnan(W.loc[i].iloc[f])) or W.loc[i].iloc[f] == v


def test_witness_frame_without_feature_names_and_without_witnesses():
    df, y = _data()
    rf = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(df.to_numpy(), y)
    res = certify(rf, df.to_numpy()[:40], y[:40], budget=1)
    W = res.witness_frame()
    assert W.shape[1] == 3
    assert np.all(rf.predict(W.to_numpy()) != y[W.index.to_numpy()])
    none = certify(rf, df.to_numpy()[:40], y[:40], budget=1, method="flb")
    assert none.witness_frame().shape == (0, 3)


def test_certify_says_where_it_ran():
    df, y = _data()
    rf = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(df, y)
    one = certify(rf, df.iloc[:30], y[:30], budget=1, n_jobs=1)
    assert one.params["n_jobs_used"] == 1 and "sequential" in one.params["parallel"]
    lim = certify(rf, df.iloc[:30], y[:30], budget=2, n_jobs=2, time_limit=30.0, method="brute")
    assert lim.params["n_jobs_used"] in (1, 2) and "thread" in lim.params["parallel"]
    assert list(lim.status) == list(certify(rf, df.iloc[:30], y[:30], budget=2, method="brute").status)
