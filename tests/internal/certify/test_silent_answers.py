"""The last silent answers of fairlens.certify (issue #37, item 5): each entry point gives the right
answer or an error naming the argument, the value and the fix."""

import numpy as np
import pytest
from sklearn.ensemble import (
    RandomForestClassifier,
)

from fairlens.certify import read_model, relevant_values
from fairlens.certify._ensemble import relevant_values64
from tests._support.certify_helpers import toy_data

RV = [relevant_values, relevant_values64]


# --- 1. relevant_values: a feature index out of range is an error, not a feature without values ----

@pytest.mark.parametrize("find", RV)
def test_relevant_values_refuses_a_feature_index_out_of_range(find):
    thr = np.array([0.5, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"feature\[0\] = 5 is out of range for n_features=2.*\[0, 1\]"):
        find(np.array([5, -1, -1]), thr, 2)
    with pytest.raises(ValueError, match=r"feature\[2\] = 2 .*n_features=2"):  # the node is named
        find(np.array([0, -1, 2, -1, -1]), np.array([0.5, 0, 0.25, 0, 0]), 2)


#: the refusal of a bad n_features (the table's wording, or the body's for the internal twin)
N_FEATURES = r"n_features must be (a non-negative integer|an int in \[0, inf\])"


@pytest.mark.parametrize("find", RV)
@pytest.mark.parametrize("feature,n_features,err,msg", [
    (np.array([0.5, -1, -1]), 2, TypeError, r"feature must hold integer feature indices; got 0\.5 at node 0"),
    (np.array([np.nan, -1, -1]), 2, TypeError, "feature must hold integer feature indices"),
    (np.array(["0", "-1", "-1"]), 2, TypeError, "feature must hold integer feature indices"),
    (np.array([0, -1, -1]), 1.5, TypeError, N_FEATURES + r".*got 1\.5"),
    (np.array([0, -1, -1]), True, TypeError, r"n_features must be .*got True"),
    (np.array([0, -1, -1]), -1, ValueError, N_FEATURES + r".*got -1"),
    (np.array([0, -1]), 2, ValueError, r"threshold must have the shape of feature \(2,\).*got shape \(3,\)"),
])
def test_relevant_values_names_the_bad_argument(find, feature, n_features, err, msg):
    with pytest.raises(err, match=msg):
        find(feature, np.array([0.5, 0.0, 0.0]), n_features)


@pytest.mark.parametrize("find", RV)
def test_relevant_values_still_reads_every_valid_encoding(find):
    """Leaves may be any negative index (-1, scikit-learn's -2); integral floats are indices. Cross-check
    against the thresholds themselves: every threshold of feature f is a value of f, plus one above."""
    X, y = toy_data(0)
    rf = RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0).fit(X, y)
    ens = read_model(rf)
    ptr, vals = find(ens.feature, ens.threshold, ens.n_features)
    ptr2, vals2 = find(np.where(ens.feature < 0, -2, ens.feature).astype(float), ens.threshold, ens.n_features)
    np.testing.assert_array_equal(ptr, ptr2)
    np.testing.assert_array_equal(vals, vals2)
    for f in range(ens.n_features):
        thr = np.unique(ens.threshold[ens.feature == f])
        v = vals[ptr[f]:ptr[f + 1]]
        assert v.size == (thr.size + 1 if thr.size else 0)
        if thr.size:  # one value per interval: <= each threshold (as read), and one above the largest
            assert (v[:-1] <= thr).all() and v[-1] > thr[-1]
