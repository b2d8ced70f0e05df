"""Issue 22 regressions for the shuffle slice: silent answers turned into the right answer
or a ValueError naming the argument; the Mixing kernel against the literal Algorithm 3 in
both directions of superiority."""
import numpy as np
import pandas as pd
import pytest

from fairlens.shuffle import ShuffledModel, fairness_before_after, shuffle_scores
from fairlens.shuffle._reference import algorithm1, dominance_reference, mixing_reference


def _batch(rng):
    n = int(rng.integers(0, 40))
    y = rng.integers(0, 6, n).astype(float) if rng.random() < 0.5 else rng.random(n)
    fav = rng.random(n) < rng.random()
    return y, fav


@pytest.mark.parametrize("higher", [True, False])
@pytest.mark.parametrize("rule", ["alg3", "coin"])
def test_mixing_kernel_equals_literal_algorithm3_in_both_directions(higher, rule):
    """300 random batches (ties and no ties), random p and coins: the kernel equals the
    literal transcription; with higher_is_better=False it disagreed in 218 of 300."""
    rng = np.random.default_rng(22)
    for _ in range(300):
        y, fav = _batch(rng)
        p = float(rng.random())
        seed = int(rng.integers(1 << 30))
        coins = np.random.default_rng(seed).random(len(y))
        ref = algorithm1(y, fav, mixing_reference, higher_is_better=higher, coins=coins, prob=p,
                         literal=(rule == "alg3"))
        got = shuffle_scores(y, fav, "mixing", p=p, mixing_rule=rule, higher_is_better=higher,
                             random_state=seed)
        np.testing.assert_array_equal(got, np.asarray(ref, dtype=float))


@pytest.mark.parametrize("higher", [True, False])
def test_mixing_properties_that_need_no_reference(higher):
    """Independent of any transcription: p = 0 (no bias) is the identity, p = 1 is
    Dominance, and lower-is-better on y is higher-is-better on -y (mirrored)."""
    rng = np.random.default_rng(5)
    for _ in range(300):
        y, fav = _batch(rng)
        seed = int(rng.integers(1 << 30))
        s0 = shuffle_scores(y, fav, "mixing", p=0.0, higher_is_better=higher, random_state=seed)
        np.testing.assert_array_equal(s0, y)
        s1 = shuffle_scores(y, fav, "mixing", p=1.0, higher_is_better=higher, random_state=seed)
        dom = algorithm1(y, fav, dominance_reference, higher_is_better=higher)
        np.testing.assert_array_equal(s1, np.asarray(dom, dtype=float))
        p = float(rng.random())
        low = shuffle_scores(y, fav, "mixing", p=p, higher_is_better=False, random_state=seed)
        high = shuffle_scores(-y, fav, "mixing", p=p, higher_is_better=True, random_state=seed)
        np.testing.assert_array_equal(low, -high)
        # the favoured group never loses under the printed rule (alg3), in either direction
        if fav.any() and (~fav).any():
            s = shuffle_scores(y, fav, "mixing", p=p, higher_is_better=higher, random_state=seed)
            sign = 1.0 if higher else -1.0
            assert sign * s[fav].mean() >= sign * y[fav].mean() - 1e-12


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
