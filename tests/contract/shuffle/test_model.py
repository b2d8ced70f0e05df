"""ShuffledModel: the Algorithm 1 wrapper, groups, relaxations and bad input."""
import numpy as np
import pandas as pd
import pytest

from fairlens.shuffle import ShuffledModel, shuffle_scores


def linear_f(X):
    """Honest linear score in [0, 1] (a probability, as the model protocol requires)."""
    A = np.asarray(X, dtype=float)
    return (A[:, 0] + 2.0 * A[:, 1] - A[:, 2] + 1.0) / 4.0


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    n = 60
    X = np.column_stack([rng.random(n), rng.random(n), rng.random(n), rng.integers(0, 2, n),
                         rng.integers(20, 70, n)]).astype(float)
    return X


def test_call_equals_shuffle_scores_on_the_batch(data):
    m = ShuffledModel(linear_f, protected=3, favoured=1, attack="dominance")
    out = m(data)
    np.testing.assert_array_equal(out, shuffle_scores(linear_f(data), data[:, 3] == 1, "dominance"))
    assert out[data[:, 3] == 1].min() > out[data[:, 3] == 0].max()
    # batch dependence: the same row scores differently in a different batch
    single = np.array([m(data[i:i + 1])[0] for i in range(len(data))])
    np.testing.assert_allclose(single, linear_f(data))
    assert not np.allclose(out, single)


def test_dataframe_and_named_array_agree(data):
    cols = ["gre", "toefl", "rating", "research", "age"]
    df = pd.DataFrame(data, columns=cols)
    # the model protocol: a callable receives encoded arrays; a DataFrame batch is
    # aligned by column name to feature_names (reordered columns give the same answer)
    a = ShuffledModel(linear_f, protected="research", favoured=1, attack="swapping", quantile=0.3,
                      feature_names=cols)(df[cols[::-1]])
    b = ShuffledModel(linear_f, protected="research", favoured=1, attack="swapping", quantile=0.3,
                      feature_names=cols)(data)
    c = ShuffledModel(linear_f, protected=3, favoured=1, attack="swapping", quantile=0.3)(data)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(b, c)


def test_conjunction_group(data):
    m = ShuffledModel(linear_f, protected=[3, 4], favoured={3: 1, 4: lambda a: a < 40})
    mask = m.favoured_mask(data)
    np.testing.assert_array_equal(mask, (data[:, 3] == 1) & (data[:, 4] < 40))
    out = m(data)
    assert out[mask].min() > out[~mask].max()
    m2 = ShuffledModel(linear_f, protected=[3, 4], favoured=(1, lambda a: a < 40))
    np.testing.assert_array_equal(m2(data), out)
    # membership rule for one feature
    m3 = ShuffledModel(linear_f, protected=4, favoured=[20, 21, 22, 23, 24])
    np.testing.assert_array_equal(m3.favoured_mask(data), np.isin(data[:, 4], [20, 21, 22, 23, 24]))


def test_lower_is_better(data):
    m = ShuffledModel(linear_f, protected=3, favoured=1, higher_is_better=False)
    out = m(data)
    assert out[data[:, 3] == 1].max() < out[data[:, 3] == 0].min()


def test_seeded_mixing_is_reproducible_and_batch_random(data):
    a = ShuffledModel(linear_f, protected=3, favoured=1, attack="mixing", p=0.6, random_state=42)
    b = ShuffledModel(linear_f, protected=3, favoured=1, attack="mixing", p=0.6, random_state=42)
    first = [a(data) for _ in range(3)]
    second = [b(data) for _ in range(3)]
    for x, y in zip(first, second):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(first[0], first[1])  # new coins each call


def test_frequency_relaxation(data):
    never = ShuffledModel(linear_f, protected=3, favoured=1, frequency=0.0, random_state=0)
    np.testing.assert_array_equal(never(data), linear_f(data))
    half = ShuffledModel(linear_f, protected=3, favoured=1, frequency=0.5, random_state=0)
    attacked = [half.attack_batch(data).attacked for _ in range(200)]
    assert 0.35 < np.mean(attacked) < 0.65


def test_predict_proba_scorer(data):
    from sklearn.linear_model import LogisticRegression

    y = (linear_f(data) > 0.5).astype(int)
    clf = LogisticRegression().fit(data[:, :3], y)
    scorer = lambda X: clf.predict_proba(np.asarray(X)[:, :3])  # noqa: E731  (n, 2)
    m = ShuffledModel(scorer, protected=3, favoured=1)
    b = m.attack_batch(data)
    np.testing.assert_allclose(b.scores_before, clf.predict_proba(data[:, :3])[:, 1])
    np.testing.assert_array_equal(np.sort(b.scores_after), np.sort(b.scores_before))
    df = b.to_frame()
    assert list(df.columns) == ["score_before", "score_after", "change", "group"]
    gm = b.group_means()
    assert gm.loc["favoured", "score_after"] >= gm.loc["favoured", "score_before"]


def test_with_params_and_repr(data):
    m = ShuffledModel(linear_f, protected=3, favoured=1, attack="mixing", p=0.9)
    m2 = m.with_params(attack="swapping", quantile=1.0)
    np.testing.assert_array_equal(m2(data), ShuffledModel(linear_f, protected=3, favoured=1)(data))
    assert "swapping" in repr(m2)


# ------------------------------------------------------------------ bad input
def test_bad_protected(data):
    df = pd.DataFrame(data, columns=list("abcde"))
    m = ShuffledModel(lambda D: np.zeros(len(D)), protected="sex", favoured=1)
    with pytest.raises(ValueError, match="'sex' is not a column"):
        m(df)
    with pytest.raises(ValueError, match="feature_names"):
        m(data)
    with pytest.raises(ValueError, match="out of range"):
        ShuffledModel(linear_f, protected=9, favoured=1)(data)
    with pytest.raises(TypeError, match="protected"):
        ShuffledModel(linear_f, protected=1.5, favoured=1)


def test_favoured_value_absent(data):
    with pytest.raises(ValueError, match="do not occur"):
        ShuffledModel(linear_f, protected=3, favoured=7, reference=data)
    with pytest.raises(ValueError, match="some but not all"):
        ShuffledModel(linear_f, protected=4, favoured=lambda a: a > 1000, reference=data)
    with pytest.raises(ValueError, match="missing a rule"):
        ShuffledModel(linear_f, protected=[3, 4], favoured={3: 1})
    with pytest.raises(ValueError, match="dict"):
        ShuffledModel(linear_f, protected=[3, 4], favoured=1)


@pytest.mark.parametrize("kw, match", [
    (dict(p=1.5), "p must lie in"),
    (dict(p=-0.1), "p must lie in"),
    (dict(quantile=2.0), "quantile must lie in"),
    (dict(quantile=float("nan")), "quantile must lie in"),
    (dict(region=0.0), "region"),
    (dict(region=(0.5, 0.2)), "lo < hi"),
    (dict(frequency=1.1), "frequency"),
    (dict(max_count=-1), "max_count"),
    (dict(mixing_rule="fair"), "mixing_rule"),
    (dict(attack="scaffold"), "attack"),
])
def test_bad_parameters(kw, match):
    with pytest.raises(ValueError, match=match):
        ShuffledModel(linear_f, protected=3, favoured=1, **kw)


def test_bad_types():
    with pytest.raises(TypeError, match="scorer"):
        ShuffledModel(None, protected=3, favoured=1)
    with pytest.raises(TypeError, match="p must be a number"):
        ShuffledModel(linear_f, protected=3, favoured=1, p="high")
    with pytest.raises(TypeError, match="higher_is_better"):
        ShuffledModel(linear_f, protected=3, favoured=1, higher_is_better="yes")


def test_scorer_wrong_shape(data):
    m = ShuffledModel(lambda X: np.zeros((len(X), 3)), protected=3, favoured=1)
    with pytest.raises(ValueError, match="shape|score"):
        m(data)
    m = ShuffledModel(lambda X: np.zeros(len(X) + 1), protected=3, favoured=1)
    with pytest.raises(ValueError, match="shape|score"):
        m(data)
