"""Issue 22 regressions for the shuffle slice: silent answers turned into the right answer
or a ValueError naming the argument; the Mixing kernel against the literal Algorithm 3 in
both directions of superiority."""
import numpy as np
import pandas as pd
import pytest

from fairlens.shuffle import ShuffledModel, fairness_before_after


def _f(X):
    A = np.asarray(X, dtype=float)
    return (A[:, 0] + A[:, 1]) / 2.0


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return np.column_stack([rng.random(50), rng.random(50), rng.integers(0, 2, 50)]).astype(float)


def test_absent_favoured_value_is_refused_naming_favoured(data):
    """ShuffledModel(f, protected=2, favoured=7) silently returned f's scores unchanged."""
    m = ShuffledModel(_f, protected=2, favoured=7, attack="dominance")
    with pytest.raises(ValueError, match=r"favoured=7.*do not occur"):
        m(data)
    # present values still attack; one-row batches (explainers) are never refused
    np.testing.assert_array_equal(ShuffledModel(_f, protected=2, favoured=7)(data[:1]), _f(data[:1]))
    ok = ShuffledModel(_f, protected=2, favoured=1)
    assert not np.array_equal(ok(data), _f(data))
    # once the value was seen, a batch with one group only is legitimate (returned as is)
    only0 = data[data[:, 2] == 0]
    np.testing.assert_array_equal(ok(only0), _f(only0))


def test_absent_favoured_label_with_a_dataset_is_refused_at_construction():
    from types import SimpleNamespace

    rng = np.random.default_rng(1)
    X = np.column_stack([rng.random(30), rng.random(30), rng.integers(0, 2, 30)]).astype(float)
    ds = SimpleNamespace(X=X, feature_names=["a", "b", "sex"], categories={"sex": {0: "female", 1: "male"}})
    with pytest.raises(ValueError, match="favoured='Martian'.*categories"):
        ShuffledModel(_f, protected="sex", favoured="Martian", data=ds)
    X0 = X.copy()
    X0[:, 2] = 0.0
    ds0 = SimpleNamespace(X=X0, feature_names=["a", "b", "sex"], categories={"sex": {0: "female", 1: "male"}})
    with pytest.raises(ValueError, match="favoured='male'.*do not occur in the dataset"):
        ShuffledModel(_f, protected="sex", favoured="male", data=ds0)
    assert ShuffledModel(_f, protected="sex", favoured="male", data=ds)(X).shape == (30,)


@pytest.mark.parametrize("bad", [5, -0.1, 1.5])
def test_fairness_threshold_is_a_probability(data, bad):
    """fairness_before_after(threshold=5) was accepted (every row predicted unfavourable)."""
    m = ShuffledModel(_f, protected=2, favoured=1)
    y = (data[:, 0] > 0.5).astype(int)
    with pytest.raises(ValueError, match="threshold"):
        fairness_before_after(m, data, y, threshold=bad)
    out = fairness_before_after(m, data, y, threshold=0.5)
    assert isinstance(out, pd.DataFrame) and len(out)
    raw = ShuffledModel(lambda X: 10 * _f(X), protected=2, favoured=1, output="raw")
    assert len(fairness_before_after(raw, data, y, threshold=5))  # raw scores: own scale
