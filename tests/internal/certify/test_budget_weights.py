"""The budget-aware swings of the boosted bounds (``_votes._budget_weights``) against a
leaf-by-leaf enumeration written independently here.

For every tree and every leaf ``L`` the enumeration lists the nodes where ``L``'s path leaves the
instance's path (feature and direction); ``L`` counts when no feature must move both ways and at
most ``budget`` features are involved, and its gain is credited to the set of the first such
node. The kernel's walk skips subtrees that cannot raise a credit (their extreme leaf value), so
this checks that the skipping changes no credit, bit for bit, on real XGBoost / LightGBM /
scikit-learn models, binary and multiclass (trees adding to ``y`` and to other classes), at
budgets 1-3, with and without a missing value in the row.
"""
import numpy as np
import pytest

from fairlens.certify import read_model
from fairlens.certify._votes import _subtree_extremes, row_quantities
from tests.contract.certify.test_boosted import _fit


def _goes_left(v, thr, miss):
    return bool(miss) if v != v else v <= thr


def _reference_best(tr, group, x, yi, budget, n_features):
    feature, threshold, left, right = tr.feature, tr.threshold, tr.left, tr.right
    value, roots, miss = tr.value[:, 0], tr.roots, tr.missing_left
    n_trees = roots.shape[0]
    best = np.zeros((n_trees, 2 * n_features))
    for t in range(n_trees):
        node = roots[t]
        while feature[node] >= 0:  # the instance's leaf
            node = left[node] if _goes_left(x[feature[node]], threshold[node], miss[node]) else right[node]
        cur = value[node]
        sign = 1.0 if group[t] == yi else -1.0
        # every root-to-leaf path, with the deviations (feature, direction) along it
        todo = [(roots[t], [])]
        while todo:
            node, dev = todo.pop()
            f = feature[node]
            if f < 0:
                dirs = {}
                ok = True
                for g, s in dev:
                    if dirs.setdefault(g, s) != s:
                        ok = False
                if ok and dev and len(dirs) <= budget:
                    g, s = dev[0]
                    k = 2 * g + s
                    gain = sign * (cur - value[node])
                    if gain > best[t, k]:
                        best[t, k] = gain
                continue
            gl = _goes_left(x[f], threshold[node], miss[node])
            s = 0 if gl else 1
            same, other = (left[node], right[node]) if gl else (right[node], left[node])
            todo.append((same, dev))
            todo.append((other, dev + [(f, s)]))
    return best


CASES = [("xgboost", 2), ("xgboost", 3), ("lightgbm", 2), ("lightgbm", 3), ("gb", 3), ("hgb", 2)]


@pytest.mark.parametrize("kind,n_classes", CASES)
def test_budget_credits_match_leaf_enumeration(kind, n_classes):
    model, Xt, yt = _fit(kind, n_classes, seed=3, n_trees=6, depth=4)
    bm = read_model(model)
    tr = bm.flat()
    _, Xr = bm.check_X(Xt[:12])
    yi = bm.encode_y(yt[:12])
    rows = [(Xr[i], int(yi[i])) for i in range(Xr.shape[0])]
    if kind in ("xgboost", "lightgbm", "hgb"):  # the library routes NaN: the walk's NaN variant
        xn = Xr[0].copy()
        xn[1] = np.nan
        rows.append((xn, int(yi[0])))
    d = Xr.shape[1]
    n_checked = 0
    for x, y in rows:
        for budget in (1, 2, 3):
            _, _, _, best = row_quantities(tr, x, y, budget)
            ref = _reference_best(tr, tr.group, x, y, budget, d)
            assert np.array_equal(best, ref), (kind, n_classes, budget)
            n_checked += int(np.count_nonzero(ref))
    assert n_checked > 0  # the models do have reachable gains


def test_subtree_extremes_hand_tree():
    # two trees; node order deliberately not parent-before-child in the second one
    from fairlens.certify._flat import FlatEnsemble

    def flat(feature, left, right, value, roots):
        m, T = feature.shape[0], roots.shape[0]
        z = np.zeros(T)
        return FlatEnsemble(feature, np.zeros(m), left, right, np.zeros(m, bool), roots, np.zeros(m, np.int64),
                            value.reshape(m, 1).copy(), np.ones(T, np.int64), np.zeros(2), np.arange(2),
                            np.zeros((0, 0, 0)), z, z, False, 0.0, 0.0, np.zeros(4, np.int64), np.zeros(0))

    # tree 1: 0 -> (1, 2), 2 -> (3, 4); tree 2: 7 -> (5, 6)
    feature = np.array([0, -1, 1, -1, -1, -1, -1, 2], np.int64)
    left = np.array([1, -1, 3, -1, -1, -1, -1, 5], np.int64)
    right = np.array([2, -1, 4, -1, -1, -1, -1, 6], np.int64)
    value = np.array([0.0, -1.5, 0.0, 2.0, 0.25, 7.0, -3.0, 0.0])
    tr = flat(feature, left, right, value, np.array([0, 7], np.int64))
    lo, hi = _subtree_extremes(tr)
    assert lo[0] == -1.5 and hi[0] == 2.0
    assert lo[2] == 0.25 and hi[2] == 2.0
    assert lo[7] == -3.0 and hi[7] == 7.0
    for leaf in (1, 3, 4, 5, 6):
        assert lo[leaf] == hi[leaf] == value[leaf]
    # the first tree alone is in parent-before-child order: the one backward pass, same answers
    tr1 = flat(feature[:5], left[:5], right[:5], value[:5], np.array([0], np.int64))
    lo1, hi1 = _subtree_extremes(tr1)
    assert np.array_equal(lo1, lo[:5]) and np.array_equal(hi1, hi[:5])
