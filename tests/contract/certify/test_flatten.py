import numpy as np
from sklearn.ensemble import RandomForestClassifier

from fairlens.certify import flatten_forest
from tests._support.certify_helpers import toy_data


def test_relevant_values_are_float32_and_split_every_threshold():
    X, y = toy_data(4, n=200, d=4)
    model = RandomForestClassifier(n_estimators=8, max_depth=4, random_state=0).fit(X, y)
    ff = flatten_forest(model)
    for f in range(ff.n_features):
        vals = ff.values[ff.values_ptr[f]:ff.values_ptr[f + 1]]
        thr = ff.threshold[ff.feature == f]
        if thr.size == 0:
            assert vals.size == 0
            continue
        assert np.all(np.diff(vals) > 0)
        np.testing.assert_array_equal(vals.astype(np.float32).astype(np.float64), vals)
        # one value per interval: the "left at v" pattern of consecutive values differs,
        # and every distinct threshold is separated by some pair of values
        pattern = (vals[:, None] <= thr[None, :])
        assert len({tuple(p) for p in pattern}) == len(vals)
        assert not pattern[-1].any()  # the +inf representative goes right everywhere
        assert pattern[0][np.argmin(thr)]  # lowest value goes left at the lowest threshold
