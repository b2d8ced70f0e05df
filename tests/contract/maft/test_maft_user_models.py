"""MAFT and its baselines on an auditor's own model and data (readable pipeline, reordered
encoded frame, plain callable), every instance re-checked by an independent oracle that
calls the model the way the user would.
"""


import numpy as np
import pandas as pd
import pytest

from fairlens.maft import (
    AEQUITAS,
    MAFT,
    discrimination_rate,
    discriminatory_mask,
    retrain_with_instances,
    zero_order_gradient,
)
from tests._support.maft_oracle import _oracle_readable, _recheck


@pytest.mark.parametrize("cls", [MAFT, AEQUITAS])
def test_readable_pipeline_audited_directly(german, readable_pipe, cls):
    res = cls(readable_pipe, german, protected=["age"], n_seeds=20, n_local=8, random_state=0).run()
    assert "readable" in res.params["model_input"]
    assert res.params["favourable"] == "good"
    _recheck(_oracle_readable(readable_pipe, german), german, res, ["age"])
    fr = res.to_frame(max_rows=3)
    assert set(fr[("x", "sex")]) <= {"male", "female"} | set(german.frame["sex"])


def test_readable_pipeline_favourable_class(german, readable_pipe):
    s = MAFT(readable_pipe, german, protected=["age"], favourable="good")
    assert s._result_params()["favourable"] == "good"
    with pytest.raises(ValueError, match="favourable"):
        MAFT(readable_pipe, german, protected=["age"], favourable="excellent")
    with pytest.raises(TypeError, match="MAFT: favourable_class= was renamed favourable=; pass favourable="):
        MAFT(readable_pipe, german, protected=["age"], favourable_class="good")


@pytest.mark.parametrize("cls", [MAFT, AEQUITAS])
def test_encoded_frame_with_reordered_columns(german, reordered_lr, cls):
    model, cols = reordered_lr
    res = cls(model, german, protected=["age"], n_seeds=20, n_local=8, random_state=0).run()
    assert "encoded columns" in res.params["model_input"] or "DataFrame" in res.params["model_input"]

    def oracle(X):
        return model.predict_proba(pd.DataFrame(np.atleast_2d(X), columns=german.feature_names)[cols])[:, 1]

    _recheck(oracle, german, res, ["age"])


@pytest.mark.parametrize("cls", [MAFT, AEQUITAS])
def test_plain_callable(german, cls):
    a, c = german.index_of("age"), german.index_of("credit_amount")
    w = np.zeros(german.n_features)
    w[a], w[c] = 0.08, -0.0004

    def f(X):
        X = np.asarray(X, dtype=float)
        return 1.0 / (1.0 + np.exp(-(X @ w - 1.5)))

    res = cls(f, german, protected=["age"], n_seeds=30, n_local=8, random_state=0).run()
    assert "callable" in res.params["model_input"]
    _recheck(f, german, res, ["age"])


def test_mask_and_rate_on_readable_pipeline_match_oracle(german, readable_pipe):
    X = german.X[:25]
    m = discriminatory_mask(readable_pipe, german, X, protected=["age"])
    score = _oracle_readable(readable_pipe, german)
    a = german.index_of("age")
    ages = np.arange(german.bounds[a, 0], german.bounds[a, 1] + 1)
    expect = []
    for x in X:
        R = np.repeat(x[None, :], len(ages), axis=0)
        R[:, a] = ages
        expect.append(np.any((score(R) > 0.5) != (score(x) > 0.5)))
    np.testing.assert_array_equal(m, expect)
    # a readable DataFrame is accepted and encoded through the dataset
    m2 = discriminatory_mask(readable_pipe, german, german.frame[german.feature_names].iloc[:25], protected=["age"])
    np.testing.assert_array_equal(m, m2)


def test_zero_order_gradient_readable_pipeline(german, readable_pipe):
    """One-sided steps at the top of a categorical domain; same numbers as by hand."""
    X = german.X[:4]
    G = zero_order_gradient(readable_pipe, X, data=german, favourable="good")
    score = _oracle_readable(readable_pipe, german)
    j = german.index_of("checking_status")
    for r in range(4):
        x = X[r].copy()
        step = 1.0 if x[j] + 1 <= german.bounds[j, 1] else -1.0
        xp = x.copy()
        xp[j] += step
        g = (score(xp)[0] - score(x)[0]) / step
        if not score(x)[0] > 0.5:
            g = -g
        assert G[r, j] == pytest.approx(g, abs=1e-12)


def test_retrain_readable_pipeline(german, readable_pipe):
    res = MAFT(readable_pipe, german, protected=["age"], n_seeds=20, n_local=8, random_state=0).run()
    mit = retrain_with_instances(readable_pipe, german, res, ["age"], fraction=0.02, n_samples=300)
    # the refit takes the readable frame and returns readable labels, like the original
    out = mit.model.predict(german.frame[german.feature_names].iloc[:5])
    assert set(out) <= {"good", "bad"}
    again = discrimination_rate(mit.model, german, ["age"], n_samples=300, random_state=1)
    assert again["rate"] == pytest.approx(mit.rate_after["rate"])
