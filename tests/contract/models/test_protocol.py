"""The one model protocol (issue: trustworthy answers on an auditor's own model and data).

A scorer takes encoded rows and calls the model the way it was fitted: on the readable
frame (decoded rows), on an encoded DataFrame (its own column order) or on an array.
Each case is checked against the model's own ``predict_proba`` on the matching input.
"""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from fairlens.datasets import load_german_credit
from fairlens.models import as_scorer

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def german():
    return load_german_credit()


def _readable_pipe(d, target=None):
    ct = ColumnTransformer([
        ("cat", OneHotEncoder(handle_unknown="ignore"), make_column_selector(dtype_include=object)),
        ("num", StandardScaler(), make_column_selector(dtype_include=np.number)),
    ])
    frame = d.frame[d.feature_names]
    return make_pipeline(ct, LogisticRegression(max_iter=2000)).fit(
        frame, d.y if target is None else target)


@pytest.fixture(scope="module")
def readable_pipe(german):
    return _readable_pipe(german)


def test_pipeline_on_readable_frame_is_called_on_decoded_rows(german, readable_pipe):
    s = as_scorer(readable_pipe, german)
    assert s.input_kind == "readable"
    assert "readable frame" in s.describe()
    expected = readable_pipe.predict_proba(german.frame[german.feature_names])[:, 1]
    np.testing.assert_array_equal(s(german.X), expected)
    assert s.n_rows == german.n_samples and s.n_calls == 1


def test_readable_pipeline_on_readable_target_labels(german):
    pipe = _readable_pipe(german, target=german.frame[german.target])
    s = as_scorer(pipe, german)  # favourable class found through the dataset's labels
    fav = german.frame[german.target][german.y == 1].iloc[0]
    assert s.favourable == fav
    with pytest.raises(ValueError, match="favourable='excellent' is not one of"):
        as_scorer(pipe, german, favourable="excellent")
    col = list(pipe.classes_).index(fav)
    np.testing.assert_array_equal(
        s(german.X[:40]), pipe.predict_proba(german.frame[german.feature_names].iloc[:40])[:, col])


def test_dataframe_inputs_are_aligned_by_column_name(german, readable_pipe):
    s = as_scorer(readable_pipe, german)
    expected = s(german.X[:30])
    rev = german.feature_names[::-1]
    encoded = pd.DataFrame(german.X[:30], columns=german.feature_names)[rev]
    np.testing.assert_array_equal(s(encoded), expected)
    readable = german.frame[german.feature_names].iloc[:30][rev]
    np.testing.assert_array_equal(s(readable), expected)
    with pytest.raises(ValueError, match=r"missing \['age'\]"):
        s(encoded.drop(columns="age"))
    with pytest.raises(ValueError, match=r"unexpected \['zzz'\]"):
        s(encoded.assign(zzz=1.0))


def test_model_fitted_on_reordered_encoded_frame(german):
    rev = german.feature_names[::-1]
    Xdf = pd.DataFrame(german.X, columns=german.feature_names)[rev]
    rf = RandomForestClassifier(n_estimators=15, random_state=0).fit(Xdf, german.y)
    s = as_scorer(rf, german)
    assert s.input_kind == "encoded_frame"
    np.testing.assert_array_equal(s(german.X), rf.predict_proba(Xdf)[:, 1])


def test_model_fitted_on_array_and_callable(german):
    rf = RandomForestClassifier(n_estimators=15, random_state=0).fit(german.X, german.y)
    s = as_scorer(rf, german)
    assert s.input_kind == "encoded"
    np.testing.assert_array_equal(s(german.X[:9]), rf.predict_proba(german.X[:9])[:, 1])
    c = as_scorer(lambda X: rf.predict_proba(X), german)
    assert c.input_kind == "callable"
    np.testing.assert_array_equal(c(german.X[:9]), s(german.X[:9]))


def test_column_mismatch_between_model_and_data_is_named(german):
    cols = [c for c in german.feature_names if c != "age"]
    rf = RandomForestClassifier(n_estimators=5, random_state=0).fit(
        pd.DataFrame(german.X, columns=german.feature_names)[cols], german.y)
    with pytest.raises(ValueError, match=r"columns \['age'\] the model was not fitted on"):
        as_scorer(rf, german)


def test_logits_are_refused_unless_declared(german):
    rng = np.random.default_rng(0)
    w = rng.normal(size=german.n_features)
    logit = lambda X: (X - german.X.mean(0)) @ w  # noqa: E731
    with pytest.raises(ValueError, match="outside \\[0, 1\\].*output='logit'"):
        as_scorer(logit, german)(german.X[:50])
    s = as_scorer(logit, german, output="logit")
    from scipy.special import expit

    np.testing.assert_allclose(s(german.X[:50]), expit(logit(german.X[:50])))
    raw = as_scorer(logit, german, output="raw")
    np.testing.assert_allclose(raw(german.X[:5]), logit(german.X[:5]))


def test_output_dtype_is_recorded(german):
    s = as_scorer(lambda X: np.full(len(X), 0.5, dtype=np.float32), german)
    s(german.X[:3])
    assert s.output_dtype == np.float32


def test_scorer_pickles(german, readable_pipe):
    import pickle

    s = as_scorer(readable_pipe, german)
    s2 = pickle.loads(pickle.dumps(s))
    np.testing.assert_array_equal(s2(german.X[:7]), s(german.X[:7]))


def test_bad_arguments_are_named(german, readable_pipe):
    with pytest.raises(ValueError, match="input must be one of"):
        as_scorer(readable_pipe, german, input="frame")
    with pytest.raises(ValueError, match="output must be one of"):
        as_scorer(readable_pipe, german, output="probability")
    with pytest.raises(ValueError, match="favourable='yes' is not one of"):
        as_scorer(readable_pipe, german, favourable="yes")
    s = as_scorer(readable_pipe, german)
    with pytest.raises(ValueError, match="NaN or inf"):
        s(np.full((2, german.n_features), np.nan))
    with pytest.raises(ValueError, match="2-D"):
        s(german.X[0])
    assert s(german.X[:0]).shape == (0,)


# --------------------------------------------------------------- property-based
@SETTINGS
@given(data=st.data())
def test_scorer_on_awkward_inputs(german, readable_pipe, data):
    """Any input: the pipeline's own answer on the same rows, or a named error."""
    s = as_scorer(readable_pipe, german)
    n = data.draw(st.integers(0, 4))
    rows = german.X[data.draw(st.lists(st.integers(0, german.n_samples - 1), min_size=n,
                                       max_size=n))]
    kind = data.draw(st.sampled_from(["array", "frame", "shuffled", "missing", "extra",
                                      "nan", "wrong_width", "strings"]))
    cols = list(german.feature_names)
    if kind == "array":
        X = rows
    elif kind == "frame":
        X = pd.DataFrame(rows, columns=cols)
    elif kind == "shuffled":
        perm = data.draw(st.permutations(cols))
        X = pd.DataFrame(rows, columns=cols)[list(perm)]
    elif kind == "missing":
        X = pd.DataFrame(rows, columns=cols).drop(columns=data.draw(st.sampled_from(cols)))
    elif kind == "extra":
        X = pd.DataFrame(rows, columns=cols).assign(extra=0.0)
    elif kind == "nan":
        X = rows.copy()
        if n:
            X[0, data.draw(st.integers(0, len(cols) - 1))] = data.draw(
                st.sampled_from([np.nan, np.inf, -np.inf]))
    elif kind == "wrong_width":
        X = rows[:, :-1]
    else:
        X = np.full((max(n, 1), len(cols)), "a", dtype=object)
    try:
        out = s(X)
    except (ValueError, TypeError) as exc:
        assert kind in ("missing", "extra", "nan", "wrong_width", "strings"), exc
        assert any(w in str(exc) for w in ("X", "columns", "numeric")), exc
        return
    assert kind in ("array", "frame", "shuffled") or (kind == "nan" and n == 0)
    expected = (readable_pipe.predict_proba(german.decode(rows))[:, 1] if n
                else np.empty(0))
    np.testing.assert_array_equal(out, expected)
