"""as_scorer and train_mlp take every argument at its word (issue 22)."""
import numpy as np
import pytest
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from fairlens.datasets import load_german_credit
from fairlens.models import Scorer, as_scorer, train_mlp


@pytest.fixture(scope="module")
def german():
    return load_german_credit()


def _p1(X):
    X = np.asarray(X, dtype=float)
    return 1 / (1 + np.exp(-(X[:, 0] - X[:, 0].mean()) / (X[:, 0].std() + 1)))


def test_callable_with_favourable_class_0_scores_class_0(german):
    X = german.X[:40]
    p1 = _p1(X)
    np.testing.assert_allclose(as_scorer(_p1, german, favourable=0)(X), 1 - p1)
    np.testing.assert_allclose(as_scorer(_p1, german, favourable=1)(X), p1)
    # (n, 2) probabilities: column k is class k
    two = lambda X: np.column_stack([1 - _p1(X), _p1(X)])  # noqa: E731
    np.testing.assert_allclose(as_scorer(two, german, favourable=0)(X), 1 - p1)
    # (n, 1) and logits too
    np.testing.assert_allclose(as_scorer(lambda X: _p1(X)[:, None], german, favourable=0)(X), 1 - p1)
    z = np.log(p1 / (1 - p1))
    logit = lambda X: np.log(_p1(X) / (1 - _p1(X)))  # noqa: E731
    np.testing.assert_allclose(as_scorer(logit, german, favourable=0, output="logit")(X), 1 - p1)
    np.testing.assert_allclose(as_scorer(logit, german, output="logit")(X), 1 / (1 + np.exp(-z)))


@pytest.mark.parametrize("fav", [2, "good", True, None])
def test_callable_with_a_class_it_cannot_have_is_refused(german, fav):
    with pytest.raises(ValueError, match=r"favourable=.*callable's classes are 0 and 1"):
        as_scorer(_p1, german, favourable=fav)


def test_callable_raw_scores_cannot_be_flipped(german):
    with pytest.raises(ValueError, match="favourable=0 with output='raw'"):
        as_scorer(_p1, german, favourable=0, output="raw")


def test_readable_pipeline_without_dataset_names_the_dataset(german):
    ct = ColumnTransformer([
        ("cat", OneHotEncoder(handle_unknown="error"), make_column_selector(dtype_include=object)),
        ("num", StandardScaler(), make_column_selector(dtype_exclude=object)),
    ])
    frame = german.frame[german.feature_names].copy()
    for c in german.categories:
        frame[c] = frame[c].astype(object)
    pipe = make_pipeline(ct, LogisticRegression(max_iter=500)).fit(frame, german.frame[german.target])
    s = as_scorer(pipe, favourable="good")
    with pytest.raises(ValueError, match=r"pass data=<the Dataset>"):
        s(german.X[:5])
    # with the dataset it is the pipeline's own answer
    s = as_scorer(pipe, german, favourable="good")
    col = list(pipe.classes_).index("good")
    np.testing.assert_allclose(s(german.X[:5]), pipe.predict_proba(frame.iloc[:5])[:, col])


def test_train_mlp_without_hidden_layers(german):
    m = train_mlp(german, hidden_layer_sizes=(), n_restarts=1, max_iter=20)
    mlp = m.steps[-1][1]
    assert mlp.hidden_layer_sizes == () and len(mlp.coefs_) == 1


def test_train_mlp_hidden_layer_sizes_are_taken_as_given(german):
    m = train_mlp(german, hidden_layer_sizes=7, n_restarts=1, max_iter=5)
    assert [c.shape[1] for c in m.steps[-1][1].coefs_] == [7, 1]


@pytest.mark.parametrize("bad,exc", [((5, 0), ValueError), ((5, -1), ValueError), ("30", TypeError),
                                     ((5.0,), TypeError), ((True,), TypeError)])
def test_train_mlp_bad_hidden_layer_sizes(german, bad, exc):
    with pytest.raises(exc, match="hidden_layer_sizes"):
        train_mlp(german, hidden_layer_sizes=bad, n_restarts=1, max_iter=5)


@pytest.mark.parametrize("func", [as_scorer, Scorer], ids=["as_scorer", "Scorer"])
def test_old_keyword_names_are_a_type_error_naming_the_new_one(german, func):
    """issue 21: ``dataset`` -> ``data``, ``favourable_class`` -> ``favourable``; issue 34: the old
    spellings are refused by name (no FutureWarning period any more)."""
    name = func.__name__
    with pytest.raises(TypeError, match=rf"^{name}: favourable_class= was renamed favourable=; pass favourable="):
        func(_p1, german, favourable_class=0)
    with pytest.raises(TypeError, match=rf"^{name}: dataset= was renamed data=; pass data="):
        func(_p1, dataset=german)
    with pytest.raises(TypeError, match="favourable_class= was renamed"):
        func(_p1, german, favourable_class=0, favourable=0.0)
    with pytest.raises(TypeError, match="unexpected keyword argument.*banana"):
        func(_p1, german, banana=1)


def test_train_mlp_refuses_the_old_and_unknown_keywords_before_training(german):
    with pytest.raises(TypeError, match=r"^train_mlp: dataset= was renamed data=; pass data="):
        train_mlp(dataset=german, n_restarts=1, max_iter=5)
    with pytest.raises(TypeError, match=r"'max_iters'.*one MLPClassifier takes .*max_iter="):
        train_mlp(german, n_restarts=1, max_iters=5)
    m = train_mlp(german, n_restarts=1, max_iter=5, alpha=0.5)  # MLPClassifier's own keywords pass
    assert m.predict_proba(german.X[:2]).shape == (2, 2)


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_mlp_input_gradient_refuses_non_finite_rows(german, value):
    """Used to return NaN gradients for a NaN input (issue 22)."""
    from fairlens.models import mlp_input_gradient

    m = train_mlp(german, n_restarts=1, max_iter=5)
    X = german.X[:3].copy()
    X[1, 0] = value
    with pytest.raises(ValueError, match="X contains NaN or inf"):
        mlp_input_gradient(m, X)


@pytest.mark.parametrize("kw,exc,match", [
    (dict(n_features="abc"), TypeError, "n_features"),
    (dict(n_features=0), ValueError, "n_features"),
    (dict(n_features=2.5), TypeError, "n_features"),
    (dict(feature_names="ab"), TypeError, "feature_names"),
    (dict(feature_names=["a", "a"]), ValueError, "feature_names has duplicated"),
    (dict(feature_names=["a", "b"], n_features=3), ValueError, "n_features=3 disagrees"),
])
def test_as_scorer_refuses_bad_columns_by_name(kw, exc, match):
    with pytest.raises(exc, match=match):
        as_scorer(lambda X: X[:, 0] * 0, **kw)


# --- issue 37 (item 5): favourable is never ignored ------------------------------------------------

class _OneColumn:
    """A model whose predict_proba returns one column (P(class 1)), shape (n,) or (n, 1)."""

    def __init__(self, classes=None, keepdims=False):
        self.keepdims = keepdims
        if classes is not None:
            self.classes_ = np.asarray(classes)

    def predict_proba(self, X):
        p = _p1(X)
        return p[:, None] if self.keepdims else p


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("classes,first,second", [(None, 0, 1), ([0, 1], 0, 1), (["bad", "good"], "bad", "good")])
def test_one_column_predict_proba_honours_favourable(keepdims, classes, first, second):
    """A one-column predict_proba is P(second class): the first class as favourable scores 1 - p (it
    used to return p whatever favourable said)."""
    X = np.random.default_rng(0).normal(size=(20, 3))
    p1 = _p1(X)
    model = _OneColumn(classes, keepdims)
    np.testing.assert_allclose(as_scorer(model, favourable=second)(X), p1)
    np.testing.assert_allclose(as_scorer(model, favourable=first)(X), 1 - p1)
    with pytest.raises(ValueError, match=r"with output='raw'.*return \(n, 2\) probabilities"):
        as_scorer(model, favourable=first, output="raw")(X)
    np.testing.assert_allclose(as_scorer(model, favourable=second, output="raw")(X), p1)


def test_a_model_without_classes_takes_favourable_0_or_1_only():
    with pytest.raises(ValueError, match=r"favourable='yes': the model has no classes_.*pass favourable=1 or 0"):
        as_scorer(_OneColumn(), favourable="yes")


def test_an_adapted_scorer_refuses_arguments_it_would_ignore():
    X = np.random.default_rng(1).normal(size=(10, 3))
    s1 = as_scorer(_p1)
    with pytest.raises(ValueError, match=r"favourable=0: model is already a Scorer, scoring the favourable class 1"
                                         r".*as_scorer\(<the model>, favourable=0\)"):
        as_scorer(s1, favourable=0)
    with pytest.raises(TypeError, match=r"^as_scorer: favourable_class= was renamed favourable="):
        as_scorer(s1, favourable_class=0)
    with pytest.raises(ValueError, match=r"output='logit': model is already a Scorer with output='auto'"):
        as_scorer(s1, output="logit")
    # arguments that agree (or are left at their defaults) return the scorer as it is
    s0 = as_scorer(_p1, favourable=0)
    assert as_scorer(s0) is s0 and as_scorer(s0, favourable=np.int64(0)) is s0
    assert as_scorer(s1, output="proba") is s1 and as_scorer(s1, favourable=1) is s1
    np.testing.assert_allclose(as_scorer(s0)(X), 1 - _p1(X))
