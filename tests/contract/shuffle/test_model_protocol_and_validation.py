"""Issue 11 regressions for fairlens.shuffle: one model protocol for every entry point
that takes a model (ShuffledModel, explainers, batch_consistency), validated parameters."""
import numpy as np
import pandas as pd
import pytest

from fairlens.shuffle import (
    ShuffledModel,
    attributions,
    batch_consistency,
    exact_shapley_values,
    explain,
    shuffle_scores,
)


@pytest.fixture(scope="module")
def german():
    from fairlens.datasets import load_german_credit

    return load_german_credit()


@pytest.fixture(scope="module")
def readable_pipe(german):
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    ds = german
    cats = [c for c, t in zip(ds.feature_names, ds.feature_types) if t == "categorical"]
    return make_pipeline(
        ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), cats)],
                          remainder=StandardScaler()),
        LogisticRegression(max_iter=500)).fit(ds.frame[ds.feature_names], ds.y)


def test_shuffled_model_on_a_readable_frame_pipeline(german, readable_pipe):
    ds = german
    X = ds.X[:80]
    m = ShuffledModel(readable_pipe, protected="sex", favoured="male", attack="dominance", data=ds)
    assert "readable" in m.describe()
    b = m.attack_batch(X)
    expected = readable_pipe.predict_proba(ds.decode(X)[ds.feature_names])[:, 1]
    np.testing.assert_allclose(b.scores_before, expected)
    male = ds.decode(X)["sex"].to_numpy() == "male"          # the label was translated to its code
    np.testing.assert_array_equal(b.favoured, male)
    assert b.scores_after[male].min() >= b.scores_after[~male].max()
    # the encoded DataFrame with reordered columns is aligned by name
    df = pd.DataFrame(X, columns=ds.feature_names)[ds.feature_names[::-1]]
    np.testing.assert_allclose(m.base_scores(df), expected)
    # batch_consistency and the explainers take the same model
    res = batch_consistency(readable_pipe, X, data=ds, random_state=0)
    assert not res.suspicious and "readable" in res.model_input
    assert batch_consistency(m, X, random_state=0).suspicious


def test_explainers_take_fitted_estimators():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    X = rng.random((60, 4))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    clf = LogisticRegression().fit(X, y)
    x, bg = X[0], X[1:13]
    phi = exact_shapley_values(clf, x, bg)
    phi_hand = exact_shapley_values(lambda A: clf.predict_proba(A)[:, 1], x, bg)
    np.testing.assert_allclose(phi, phi_hand)
    lin = explain(clf, X[:3], "linear", bg)
    assert lin.shape == (3, 4) and np.isfinite(lin).all()
    df = pd.DataFrame(X, columns=list("abcd"))
    clf_df = LogisticRegression().fit(df, y)
    t1 = attributions(clf_df, df[list("dcba")].iloc[:3], "linear", background=df[list("dcba")])
    t2 = attributions(clf_df, df.iloc[:3], "linear", background=df)
    np.testing.assert_allclose(t1.set_index("feature").loc[list("abcd"), "mean_abs"],
                               t2.set_index("feature").loc[list("abcd"), "mean_abs"])


def test_raw_scores_need_output_raw():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.random((20, 2)) * 10, rng.integers(0, 2, 20)])

    def rank_score(A):
        return np.asarray(A)[:, 0] + np.asarray(A)[:, 1]       # on a 0..20 scale

    with pytest.raises(ValueError, match="output='raw'"):
        ShuffledModel(rank_score, protected=2, favoured=1)(X)
    out = ShuffledModel(rank_score, protected=2, favoured=1, output="raw")(X)
    np.testing.assert_array_equal(np.sort(out), np.sort(rank_score(X)))
    logit = ShuffledModel(lambda A: rank_score(A) - 10, protected=2, favoured=1, output="logit", attack="none")(X)
    np.testing.assert_allclose(logit, 1 / (1 + np.exp(-(rank_score(X) - 10))))


def test_random_state_and_other_bad_values_name_the_argument():
    f = lambda A: np.asarray(A)[:, 0]  # noqa: E731
    with pytest.raises(TypeError, match="random_state"):
        ShuffledModel(f, protected=1, favoured=1, random_state="abc")
    with pytest.raises(TypeError, match="random_state"):
        shuffle_scores([0.2, 0.4], [True, False], "mixing", random_state="abc")
    with pytest.raises(ValueError, match="scores"):
        shuffle_scores([0.2, np.nan], [True, False])
    with pytest.raises(ValueError, match="favoured_mask"):
        shuffle_scores([0.2, 0.4], [2, 0])
    with pytest.raises(TypeError, match="ShuffledModel"):
        ShuffledModel(ShuffledModel(f, protected=1, favoured=1), protected=1, favoured=1)
    with pytest.raises(ValueError, match="nsamples"):
        explain(f, np.random.rand(3, 2), "lime", nsamples=0)
    with pytest.raises(ValueError, match="background"):
        explain(f, np.random.rand(3, 2), "linear", np.random.rand(3, 3))
