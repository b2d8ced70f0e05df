"""The auditor-side batch-consistency detector flags every attack, passes honest models."""
import numpy as np
import pandas as pd
import pytest

from fairlens.shuffle import BatchConsistencyResult, ShuffledModel, batch_consistency


def f(A):
    """Honest linear score in [0, 1]."""
    A = np.asarray(A, dtype=float)
    return (A[:, 0] + 2 * A[:, 1] - A[:, 2] + 1) / 4


@pytest.fixture(scope="module")
def X():
    rng = np.random.default_rng(0)
    n = 60
    return np.column_stack([rng.random(n), rng.random(n), rng.random(n), rng.integers(0, 2, n),
                            rng.integers(20, 70, n)]).astype(float)


ATTACKS = [
    dict(attack="dominance"),
    dict(attack="mixing", p=0.5),
    dict(attack="mixing", p=0.8),
    dict(attack="mixing", p=0.3, mixing_rule="alg3"),
    dict(attack="swapping", quantile=0.0),
    dict(attack="swapping", quantile=0.5),
    dict(attack="swapping", quantile=1.0),
    dict(attack="dom+mix"), dict(attack="dom+swap"), dict(attack="mix+swap"),
    dict(attack="dom+none"), dict(attack="mix+none"), dict(attack="none+dom"),
    dict(attack="dominance", region=0.15),
    dict(attack="swapping", max_count=1),
    dict(attack="dominance", frequency=0.3),
    dict(attack="dominance", protected=[3, 4], favoured=(1, lambda a: a < 40)),
]


@pytest.mark.parametrize("kw", ATTACKS, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()
                                                                if k != "favoured"))
def test_every_attack_is_flagged(X, kw):
    kw = dict(kw)
    protected = kw.pop("protected", 3)
    favoured = kw.pop("favoured", 1)
    model = ShuffledModel(f, protected=protected, favoured=favoured, random_state=0, **kw)
    res = batch_consistency(model, X, random_state=0)
    assert isinstance(res, BatchConsistencyResult)
    assert res.suspicious, res.verdict
    assert res.max_abs_diff > 10 * res.tol


def test_honest_models_pass(X):
    from sklearn.neural_network import MLPClassifier

    y = (f(X) > 0.475).astype(int)
    mlp = MLPClassifier(hidden_layer_sizes=(8,), max_iter=300, random_state=0).fit(X, y)
    for model in (f, ShuffledModel(f, protected=3, favoured=1, attack="none"),
                  lambda A: mlp.predict_proba(A)[:, 1], lambda A: mlp.predict_proba(A)):
        res = batch_consistency(model, X, random_state=0)
        assert not res.suspicious, res.verdict
        assert res.frac_rows_changed == 0.0
    # a model that does not touch the protected feature order (already dominant) is honest too
    X2 = X.copy()
    X2[:, 3] = (f(X2) > np.median(f(X2))).astype(float)
    res = batch_consistency(ShuffledModel(f, protected=3, favoured=1), X2, random_state=0)
    assert not res.suspicious


def test_result_table_and_dataframe_input(X):
    df = pd.DataFrame(X, columns=list("abcde"))
    model = ShuffledModel(f, protected="d", favoured=1)
    res = batch_consistency(model, df, n_orders=2, n_subsets=2, n_single=5, random_state=1)
    t = res.to_frame()
    assert list(t["kind"]) == ["reference", "order", "order", "subset", "subset", "duplicate",
                               "single"]
    assert {"n_rows", "max_abs_diff", "frac_changed", "n_nonfinite"} <= set(t.columns)
    assert res.row_max_diff.shape == (60,)
    assert "SUSPICIOUS" in res.verdict
    # single-row calls are never shuffled: rows only moved when queried in a batch
    assert t.loc[t.kind == "single", "max_abs_diff"].iloc[0] > 0  # reference was attacked


def test_bad_input(X):
    with pytest.raises(ValueError, match="at least 2 rows"):
        batch_consistency(f, X[:1])
    with pytest.raises(ValueError, match="subset_fraction"):
        batch_consistency(f, X, subset_fraction=1.5)
    with pytest.raises(ValueError, match="shape"):
        batch_consistency(lambda A: np.zeros((len(A), 3)), X)
    with pytest.raises(ValueError, match="outside \\[0, 1\\]"):
        batch_consistency(lambda A: 10 * f(A), X)          # raw scores need output="raw"
    assert not batch_consistency(lambda A: 10 * f(A), X, output="raw", random_state=0).suspicious
    with pytest.raises(TypeError, match="random_state"):
        batch_consistency(f, X, random_state="abc")
    with pytest.raises(TypeError, match="n_orders"):
        batch_consistency(f, X, n_orders=1.5)
    with pytest.raises(ValueError, match="n_single"):
        batch_consistency(f, X, n_single=-1)
    with pytest.raises(ValueError, match="atol"):
        batch_consistency(f, X, atol=float("nan"))
    with pytest.raises(ValueError, match="X contains NaN"):
        batch_consistency(f, np.where(X == X[0, 0], np.nan, X))


# ------------------------------------------------------------- issue 11 regressions
def test_fitted_estimator_and_pipeline_are_accepted(X):
    """It rejected a fitted scikit-learn estimator ("object is not callable")."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    y = (f(X) > 0.475).astype(int)
    for est in (LogisticRegression().fit(X, y),
                make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y)):
        res = batch_consistency(est, X, random_state=0)
        assert not res.suspicious, res.verdict
        assert res.output_dtype == "float64" and "array" in res.model_input
    # fitted on a DataFrame: audited with the columns in another order, aligned by name
    df = pd.DataFrame(X, columns=list("abcde"))
    est = LogisticRegression().fit(df, y)
    res = batch_consistency(est, df[list("edcba")], random_state=0)
    assert not res.suspicious and "DataFrame" in res.model_input


def _float32_net(seed=0, d=5, width=256):
    rng = np.random.default_rng(seed)
    W1 = (rng.normal(size=(d, width)) / np.sqrt(d)).astype(np.float32)
    W2 = (rng.normal(size=(width, width)) / np.sqrt(width)).astype(np.float32)
    w3 = (rng.normal(size=(width, 1)) / np.sqrt(width)).astype(np.float32)
    return W1, W2, w3


def test_honest_float32_network_with_batch_dependent_rounding_passes(X):
    """An honest float32 network whose BLAS blocking depends on the batch size (simulated:
    the hidden sums are accumulated in chunks whose size depends on the batch) moves scores
    by ~1e-7; the default tolerance follows the float32 output precision, so it passes."""
    W1, W2, w3 = _float32_net()

    def net(A):
        h = np.maximum(np.asarray(A, dtype=np.float32) @ W1, 0)
        chunk = 7 + len(A) % 13                       # blocking depends on the batch
        acc = np.zeros((h.shape[0], W2.shape[1]), np.float32)
        for k in range(0, h.shape[1], chunk):
            acc += h[:, k:k + chunk] @ W2[k:k + chunk]
        z = (np.maximum(acc, 0) @ w3)[:, 0]
        return (1 / (1 + np.exp(-z))).astype(np.float32)

    # the noise is real: the same rows in another batch size score differently
    assert 0 < np.abs(net(X[:31]) - net(X)[:31]).max() < 1e-5
    res = batch_consistency(net, X, random_state=0)
    assert res.output_dtype == "float32"
    assert not res.suspicious, res.verdict
    assert 0 < res.max_abs_diff <= res.tol
    # the old fixed float64-scale tolerance would have flagged it
    assert batch_consistency(net, X, atol=1e-9, rtol=1e-7, random_state=0).suspicious
    # a shuffling attack on the same float32 network is still flagged
    att = ShuffledModel(net, protected=3, favoured=1, attack="swapping", quantile=0.0, random_state=0)
    res = batch_consistency(att, X, random_state=0)
    assert res.suspicious and res.max_abs_diff > 100 * res.tol


def test_nan_answers_fail_the_audit(X):
    """An endpoint answering NaN passed the audit; it must fail it."""
    def nan_endpoint(A):
        out = f(A)
        out[np.asarray(A)[:, 0] > 0.8] = np.nan            # NaN for some rows, every call
        return out

    res = batch_consistency(nan_endpoint, X, random_state=0)
    assert res.suspicious and res.n_nonfinite > 0
    assert "non-finite" in res.verdict

    def nan_in_big_batches(A):                               # NaN only in batches > 40 rows
        out = f(A)
        return np.full(len(out), np.nan) if len(out) > 40 else out

    res = batch_consistency(nan_in_big_batches, X, random_state=0)
    assert res.suspicious and res.n_nonfinite > 0
    inf = batch_consistency(lambda A: np.where(np.asarray(A)[:, 1] > 0.9, np.inf, f(A)), X,
                            output="raw", random_state=0)
    assert inf.suspicious and inf.n_nonfinite > 0


def test_default_tolerance_follows_the_output_dtype(X):
    r64 = batch_consistency(f, X, random_state=0)
    r32 = batch_consistency(lambda A: f(A).astype(np.float32), X, random_state=0)
    assert r64.output_dtype == "float64" and r32.output_dtype == "float32"
    assert r64.tol == pytest.approx(64 * np.finfo(np.float64).eps)
    assert r32.tol == pytest.approx(64 * np.finfo(np.float32).eps)
