"""A Dataset is validated on every construction, ``dataclasses.replace`` included (issue 22)."""
import dataclasses

import numpy as np
import pytest

from fairlens.datasets import load_german_credit


@pytest.fixture(scope="module")
def german():
    return load_german_credit()


def test_replace_with_three_classes_is_refused(german):
    y = german.y.copy()
    y[:5] = 2
    with pytest.raises(ValueError, match=r"y must hold only 0 and 1.*\[2\]"):
        dataclasses.replace(german, y=y)


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_replace_with_non_finite_X_is_refused(german, value):
    X = german.X.copy()
    X[3, german.index_of("age")] = value
    with pytest.raises(ValueError, match=r"X has NaN or infinite values in columns \['age'\]"):
        dataclasses.replace(german, X=X)


def test_replace_with_text_X_or_y_is_refused(german):
    with pytest.raises(TypeError, match="X must hold real numbers"):
        dataclasses.replace(german, X=german.X.astype(str))
    with pytest.raises(TypeError, match="y must hold"):
        dataclasses.replace(german, y=german.y.astype(str))


def test_replace_with_valid_values_normalises_dtypes(german):
    ds = dataclasses.replace(german, X=german.X.astype(np.int32), y=german.y.astype(bool))
    assert ds.X.dtype == np.float64 and ds.y.dtype == np.int64
    np.testing.assert_array_equal(ds.y, german.y)


def test_bounds_must_be_ordered(german):
    b = german.bounds.copy()
    b[0] = [5, 1]
    with pytest.raises(ValueError, match="min <= max"):
        dataclasses.replace(german, bounds=b)


@pytest.mark.parametrize("idx", [[0, 1000], [-1001], [10**9]])
def test_subset_out_of_range_names_idx(german, idx):
    with pytest.raises(ValueError, match=r"idx: row indices .* out of range .*1000 rows"):
        german.subset(idx)


def test_subset_wrong_mask_and_dtype(german):
    with pytest.raises(ValueError, match="idx: a boolean mask"):
        german.subset(np.ones(5, dtype=bool))
    with pytest.raises(TypeError, match="idx must hold integer"):
        german.subset([0.5, 1.0])


def test_subset_keeps_rows(german):
    sub = german.subset([-1, 0, 2])
    np.testing.assert_array_equal(sub.X, german.X[[-1, 0, 2]])
    np.testing.assert_array_equal(sub.y, german.y[[-1, 0, 2]])
    assert sub.frame.iloc[0].equals(german.frame.iloc[-1].rename(0))
    assert german.subset([]).n_samples == 0
    assert german.subset(german.y == 1).n_samples == int(german.y.sum())
