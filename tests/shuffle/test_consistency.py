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
    model = ShuffledModel(f, protected, favoured, random_state=0, **kw)
    res = batch_consistency(model, X, random_state=0)
    assert isinstance(res, BatchConsistencyResult)
    assert res.suspicious, res.summary()
    assert res.max_abs_diff > 10 * res.tol


def test_honest_models_pass(X):
    from sklearn.neural_network import MLPClassifier

    y = (f(X) > 0.475).astype(int)
    mlp = MLPClassifier(hidden_layer_sizes=(8,), max_iter=300, random_state=0).fit(X, y)
    for model in (f, ShuffledModel(f, 3, 1, attack="none"),
                  lambda A: mlp.predict_proba(A)[:, 1], lambda A: mlp.predict_proba(A)):
        res = batch_consistency(model, X, random_state=0)
        assert not res.suspicious, res.summary()
        assert res.frac_rows_changed == 0.0
    # a model that does not touch the protected feature order (already dominant) is honest too
    X2 = X.copy()
    X2[:, 3] = (f(X2) > np.median(f(X2))).astype(float)
    res = batch_consistency(ShuffledModel(f, 3, 1), X2, random_state=0)
    assert not res.suspicious


def test_result_table_and_dataframe_input(X):
    df = pd.DataFrame(X, columns=list("abcde"))
    model = ShuffledModel(lambda D: f(D.to_numpy()), "d", 1)
    res = batch_consistency(model, df, n_orders=2, n_subsets=2, n_single=5, random_state=1)
    t = res.to_frame()
    assert list(t["kind"]) == ["order", "order", "subset", "subset", "duplicate", "single"]
    assert {"n_rows", "max_abs_diff", "frac_changed"} <= set(t.columns)
    assert res.row_max_diff.shape == (60,)
    assert "SUSPICIOUS" in res.summary()
    # single-row calls are never shuffled: rows only moved when queried in a batch
    assert t.loc[t.kind == "single", "max_abs_diff"].iloc[0] > 0  # reference was attacked


def test_bad_input(X):
    with pytest.raises(ValueError, match="at least 2 rows"):
        batch_consistency(f, X[:1])
    with pytest.raises(ValueError, match="subset_fraction"):
        batch_consistency(f, X, subset_fraction=1.5)
    with pytest.raises(ValueError, match="one score per row"):
        batch_consistency(lambda A: np.zeros((len(A), 3)), X)
