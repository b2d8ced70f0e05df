"""from_frame on awkward columns (issue 22): every column either round-trips exactly through
``decode()`` (values and types) or is refused with a ValueError/TypeError naming it."""
import numpy as np
import pandas as pd
import pytest

from fairlens import datasets as D

Y = [0, 1, 0, 1, 1, 0]


def _frame(col):
    return pd.DataFrame({"c": col, "x": np.arange(6, dtype=float), "y": Y})


def _round_trip(ds, df, name="c"):
    decoded = ds.decode(ds.X)[name]
    expected = df[name]
    assert [type(v) for v in decoded.tolist()] == [type(v) for v in expected.tolist()]
    assert decoded.tolist() == expected.tolist()
    np.testing.assert_array_equal(ds.encode(df), ds.X)
    np.testing.assert_array_equal(ds.encode(ds.decode(ds.X)), ds.X)


@pytest.mark.parametrize("col", [
    pd.date_range("2020-01-01", periods=6),
    pd.to_timedelta(np.arange(6), unit="D"),
    pd.period_range("2020-01", periods=6, freq="M"),
    pd.Series(pd.date_range("2020-01-01", periods=6)).astype(object),  # Timestamps in an object column
    pd.Series(pd.date_range("2020-01-01", periods=6, tz="UTC")),
], ids=["datetime64", "timedelta64", "period", "timestamp-objects", "datetime-tz"])
def test_time_columns_are_refused_by_name(col):
    with pytest.raises((TypeError, ValueError), match=r"'c'.*(date|time|[Pp]eriod)"):
        D.from_frame(_frame(col), "y", protected=[])


def test_mixed_int_and_text_column_decodes_to_the_original_values():
    df = _frame(pd.Series([1, "a", 1, "b", 2, "a"], dtype=object))
    ds = D.from_frame(df, "y", protected=["c"])
    assert ds.feature_types[0] == "categorical"
    _round_trip(ds, df)
    assert ds.decode(ds.X)["c"].tolist()[0] == 1  # was '1'


def test_mixed_column_whose_values_print_alike_is_refused():
    df = _frame(pd.Series([1, "1", 1, "b", 2, "a"], dtype=object))
    with pytest.raises(ValueError, match=r"'c'.*'1'"):
        D.from_frame(df, "y", protected=[])


def test_complex_column_is_refused_by_name():
    df = _frame(np.array([1 + 2j, 1 - 2j, 3, 3j, 0, 1], dtype=complex))
    with pytest.raises(TypeError, match=r"'c'.*complex"):
        D.from_frame(df, "y", protected=[])


@pytest.mark.parametrize("values", [
    [2**63 - 1, 2**63 - 2, 2**63 - 1, 2**63 - 3, 0, 2**63 - 2],      # int64 near 2**63
    [-(2**63), -(2**63) + 1, 5, -(2**63), 5, 7],
], ids=["near-max", "near-min"])
def test_int64_categories_near_the_limits_keep_distinct_codes(values):
    df = _frame(pd.Series(values, dtype="int64"))
    ds = D.from_frame(df, "y", protected=["c"], categorical=["c"])
    assert len(np.unique(ds.X[:, 0])) == len(set(values))
    _round_trip(ds, df)


def test_python_ints_beyond_int64_keep_distinct_codes():
    values = [2**70, 2**70 + 1, 3, 2**70, -(2**70), 3]
    df = _frame(pd.Series(values, dtype=object))
    ds = D.from_frame(df, "y", protected=["c"])
    assert len(np.unique(ds.X[:, 0])) == 4
    _round_trip(ds, df)


def test_huge_integer_feature_that_is_not_categorical_is_refused():
    """float64 cannot hold 2**63 - 1 and 2**63 - 2 apart: refused, with the fix."""
    df = _frame(pd.Series([2**63 - 1, 2**63 - 2, 1, 2, 3, 4], dtype="int64"))
    with pytest.raises(ValueError, match=r"'c'.*2\*\*53.*categorical"):
        D.from_frame(df, "y", protected=[], categorical=[])


def test_column_of_lists_is_refused_by_name():
    df = _frame(pd.Series([[1], [2], [1], [2], [1], [3]], dtype=object))
    with pytest.raises(TypeError, match=r"'c'.*list"):
        D.from_frame(df, "y", protected=[])


@pytest.mark.parametrize("categorical", [None, ["c"]])
@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_infinite_values_are_refused_by_name(value, categorical):
    df = _frame(np.array([0.5, value, 1.5, 2.0, 0.5, 1.0]))
    with pytest.raises(ValueError, match=r"'c'.*infinite"):
        D.from_frame(df, "y", protected=[], categorical=categorical)


def test_infinite_target_is_refused_by_name():
    df = pd.DataFrame({"x": np.arange(6.0), "y": [0.0, 1.0, np.inf, 1.0, 0.0, 1.0]})
    with pytest.raises(ValueError, match=r"'y'"):
        D.from_frame(df, "y", protected=[], favourable=1.0)
