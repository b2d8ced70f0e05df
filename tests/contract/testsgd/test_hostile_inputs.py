"""Issue 22 regressions for TestSGD's slice: each reproducer gave a silently wrong answer or a
crash deep inside; now the right answer or a ValueError naming the argument."""
import numpy as np
import pytest

from fairlens.testsgd import FairFictPlay, TestSGD
from tests._support.testsgd_fixtures import make_toy


@pytest.fixture(scope="module")
def german_readable():
    """German credit and a pipeline fitted on the readable frame AND the readable target
    labels ("good"/"bad"), as a user would fit it."""
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from fairlens.datasets import load_german_credit

    ds = load_german_credit()
    frame = ds.frame[ds.feature_names]
    cats = [c for c, t in zip(ds.feature_names, ds.feature_types) if t == "categorical"]
    pipe = make_pipeline(
        ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), cats)],
                          remainder=StandardScaler()),
        LogisticRegression(max_iter=1000)).fit(frame, ds.frame[ds.target])
    return ds, pipe


def test_testsgd_accuracy_with_the_label_spelling(german_readable):
    """TestSGD's accuracy compared y with the favourable label too."""
    ds, pipe = german_readable
    expected = float(np.mean(pipe.predict(ds.frame[ds.feature_names]) == ds.frame[ds.target].to_numpy()))
    for fav in ("good", 1):
        rep = TestSGD(pipe, ds, protected=["sex"], favourable=fav, sample_thr=50, max_samples=500,
                      random_state=0, top_k=0).run()
        assert rep.accuracy == pytest.approx(expected), fav


def test_an_unknown_favourable_label_is_refused_by_fairfictplay():
    toy = make_toy(n=300)

    def model(X):
        return (X[:, 3] >= 5).astype(float)

    with pytest.raises(ValueError, match="favourable"):
        FairFictPlay(model, toy, protected=["gender"], metric="FP", favourable="yes").audit()


def test_testsgd_on_an_empty_dataset_is_a_clear_error(planted):
    """TestSGD on an empty dataset ended in an IndexError deep inside."""
    toy = make_toy(n=50)
    toy.X = toy.X[:0]
    toy.y = toy.y[:0]
    with pytest.raises(ValueError, match="no rows"):
        TestSGD(planted, toy, protected=["gender"])
