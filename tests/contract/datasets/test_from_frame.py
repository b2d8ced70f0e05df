"""from_frame keeps the user's own category codes, values and dtypes (issue 11, Data)."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from fairlens import datasets as D


def _coded_frame(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "region": rng.choice([0, 1, 2, 10, 11], size=n),          # integer codes
        "member": rng.choice([True, False], size=n),               # booleans
        "grade": rng.choice([0.5, 1.5, 2.25], size=n),             # real-valued categories
        "small": rng.choice([3, 4, 7], size=n).astype(np.int16),   # narrow integer dtype
        "city": rng.choice(["b", "a", "c"], size=n),
        "income": rng.normal(size=n),
        "y": np.r_[0, 1, rng.integers(0, 2, size=n - 2)],
    })


CATS = ["region", "member", "grade", "small", "city"]


def test_integer_codes_are_kept_not_resorted():
    """The reproducer: 0, 1, 2, 10, 11 used to become 0, 1, 4, 2, 3 (string sort)."""
    df = pd.DataFrame({"c": [0, 1, 2, 10, 11, 2], "y": [0, 1, 0, 1, 0, 1]})
    ds = D.from_frame(df, "y", protected=["c"], categorical=["c"])
    np.testing.assert_array_equal(ds.X[:, 0], [0, 1, 2, 10, 11, 2])
    assert ds.categories["c"] == {0: 0, 1: 1, 2: 2, 10: 10, 11: 11}
    assert all(type(v) is int for v in ds.categories["c"].values())
    assert tuple(ds.bounds[0]) == (0, 11)
    decoded = ds.decode(ds.X)
    assert decoded["c"].dtype == df["c"].dtype
    np.testing.assert_array_equal(decoded["c"], df["c"])
    np.testing.assert_array_equal(ds.encode(df), ds.X)


def test_codes_labels_and_dtypes_per_kind():
    df = _coded_frame()
    ds = D.from_frame(df, "y", protected=["region"], categorical=CATS)
    X = pd.DataFrame(ds.X, columns=ds.feature_names)
    np.testing.assert_array_equal(X["region"], df["region"])          # value = code
    np.testing.assert_array_equal(X["small"], df["small"])
    np.testing.assert_array_equal(X["member"], df["member"].astype(int))
    # real-valued categories: codes by increasing value
    np.testing.assert_array_equal(X["grade"], df["grade"].map({0.5: 0, 1.5: 1, 2.25: 2}))
    assert ds.categories["grade"] == {0: 0.5, 1: 1.5, 2: 2.25}
    np.testing.assert_array_equal(X["city"], df["city"].map({"a": 0, "b": 1, "c": 2}))
    assert ds.categories["member"] == {0: False, 1: True}
    # the frame keeps the user's values and dtypes
    for c in ds.feature_names:
        assert ds.frame[c].dtype == df[c].dtype, c
        np.testing.assert_array_equal(ds.frame[c].to_numpy(), df[c].to_numpy())
    # decode gives back the same values in the same dtypes
    decoded = ds.decode(ds.X)
    for c in ["region", "member", "grade", "small"]:
        assert decoded[c].dtype == df[c].dtype, c
        np.testing.assert_array_equal(decoded[c].to_numpy(), df[c].to_numpy())
    np.testing.assert_array_equal(decoded["city"].astype(str), df["city"])
    np.testing.assert_allclose(decoded["income"], df["income"])
    np.testing.assert_array_equal(ds.encode(decoded), ds.X)
    np.testing.assert_array_equal(ds.encode(df[ds.feature_names]), ds.X)


def test_pipeline_fitted_on_users_frame_equals_one_fitted_on_dataset_frame():
    """A pipeline fitted on dataset.frame is the pipeline fitted on the user's own frame,
    and scoring decoded rows reproduces its predictions on the user's rows."""
    df = _coded_frame(n=120, seed=3)
    ds = D.from_frame(df, "y", protected=["region"], categorical=CATS)

    def pipe():
        pre = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="error"), CATS)],
                                remainder="passthrough")
        return make_pipeline(pre, LogisticRegression(max_iter=500))

    feats = ds.feature_names
    mine = pipe().fit(df[feats], df["y"])
    theirs = pipe().fit(ds.frame[feats], ds.y)
    np.testing.assert_allclose(mine.predict_proba(df[feats]),
                               theirs.predict_proba(ds.frame[feats]))
    np.testing.assert_allclose(mine.predict_proba(ds.decode(ds.X)),
                               mine.predict_proba(df[feats]))


def test_model_trained_on_original_codes_gets_original_codes():
    df = pd.DataFrame({"code": [0, 1, 2, 10, 11] * 8, "x": np.arange(40.0),
                       "y": [0, 1] * 20})
    model = LogisticRegression().fit(df[["code", "x"]].to_numpy(float), df["y"])
    ds = D.from_frame(df, "y", protected=["code"], categorical=["code"])
    np.testing.assert_allclose(model.predict_proba(ds.X),
                               model.predict_proba(df[["code", "x"]].to_numpy(float)))


def test_encode_refuses_unknown_numeric_category():
    df = pd.DataFrame({"c": [0, 1, 2, 10], "y": [0, 1, 0, 1]})
    ds = D.from_frame(df, "y", protected=[], categorical=["c"])
    with pytest.raises(ValueError, match=r"column 'c' has values \['3'\]"):
        ds.encode(pd.DataFrame({"c": [0, 3]}))
    # integer values written as text are matched by value
    np.testing.assert_array_equal(ds.encode(pd.DataFrame({"c": ["10", "2"]}))[:, 0], [10, 2])
    assert ds.decode([[5.0]])["c"].iloc[0] == "<code 5>"


def test_string_categories_still_sorted():
    df = pd.DataFrame({"s": ["10", "2", "1", "2"], "y": [0, 1, 0, 1]})
    ds = D.from_frame(df, "y", protected=["s"])
    assert ds.categories["s"] == {0: "1", 1: "10", 2: "2"}
    np.testing.assert_array_equal(ds.X[:, 0], [1, 2, 0, 2])


@pytest.mark.parametrize("kwargs,error,pattern", [
    ({"protected": "sex"}, TypeError, "protected must be a list of strings"),
    ({"protected": ["sex"], "categorical": "sex"}, TypeError, "categorical must be a list"),
    ({"protected": ["sex"], "categorical": ["zzz"]}, ValueError, r"categorical columns \['zzz'\]"),
    ({"protected": ["sex"], "features": ["age", "age"]}, ValueError, "duplicated"),
    ({"protected": ["sex"], "name": 3}, TypeError, "name must be a str"),
])
def test_from_frame_parameters_validated(kwargs, error, pattern):
    df = pd.DataFrame({"age": [1, 2, 3, 4], "sex": ["f", "m", "f", "m"], "y": [0, 1, 0, 1]})
    with pytest.raises(error, match=pattern):
        D.from_frame(df, "y", **kwargs)


def test_from_frame_refuses_empty_frame():
    with pytest.raises(ValueError, match="no rows"):
        D.from_frame(pd.DataFrame({"a": pd.Series([], dtype=int), "y": pd.Series([], dtype=int)}),
                     "y", protected=[])


# --------------------------------------------------------------------- property-based
_values = st.one_of(
    st.lists(st.integers(-50, 10**6), min_size=1, max_size=6, unique=True),
    st.lists(st.sampled_from([0.25, 0.5, 3.0, -1.75, 7.5]), min_size=1, max_size=5,
             unique=True),
    st.lists(st.booleans(), min_size=1, max_size=2, unique=True),
    st.lists(st.text("abcxyz0123", min_size=1, max_size=4), min_size=1, max_size=5,
             unique=True),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=_values, picks=st.lists(st.integers(0, 10**6), min_size=2, max_size=25),
       dtype=st.sampled_from([None, "int32", "int64", "uint32"]))
def test_round_trip_keeps_values_and_dtype(values, picks, dtype):
    col = pd.Series([values[p % len(values)] for p in picks])
    if dtype is not None and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        if dtype == "uint32" and min(values) < 0:
            dtype = "int64"
        col = col.astype(dtype)
    y = np.r_[0, 1, np.zeros(len(picks) - 2, dtype=int)]
    df = pd.DataFrame({"c": col, "y": y})
    ds = D.from_frame(df, "y", protected=["c"], categorical=["c"])
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        np.testing.assert_array_equal(ds.X[:, 0], col.to_numpy(dtype=float))
    decoded = ds.decode(ds.X)["c"]
    if all(isinstance(v, str) for v in values):
        assert list(decoded.astype(str)) == list(col.astype(str))
    else:
        assert decoded.dtype == col.dtype
        np.testing.assert_array_equal(decoded.to_numpy(), col.to_numpy())
    np.testing.assert_array_equal(ds.encode(df), ds.X)
    np.testing.assert_array_equal(ds.encode(ds.decode(ds.X)), ds.X)
    assert ds.bounds[0, 0] <= ds.X[:, 0].min() and ds.X[:, 0].max() <= ds.bounds[0, 1]
