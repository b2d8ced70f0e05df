"""A forest small enough to certify by hand (sections 4.1-4.5)."""
import numpy as np

from fairlens.certify import TreeEnsemble, certify, instance_covers, relevant_values


def three_stumps():
    """Tree t (t = 0, 1, 2) votes class 1 iff x_t > 0.5."""
    feature, threshold, left, right, leaf = [], [], [], [], []
    for t in range(3):
        o = 3 * t
        feature += [t, -1, -1]
        threshold += [0.5, 0.0, 0.0]
        left += [o + 1, -1, -1]
        right += [o + 2, -1, -1]
        leaf += [0, 0, 1]
    arr = lambda v, dt: np.asarray(v, dtype=dt)  # noqa: E731
    feature = arr(feature, np.int64)
    threshold = arr(threshold, np.float64)
    vptr, vals = relevant_values(feature, threshold, 4)
    return TreeEnsemble(feature=feature, threshold=threshold, left=arr(left, np.int64), right=arr(right, np.int64),
                        leaf_class=arr(leaf, np.int64), roots=arr([0, 3, 6], np.int64), classes_=np.array([0, 1]),
                        n_features=4, rank=arr([1, 2], np.int64), values_ptr=vptr, values=vals)


def test_three_stumps_by_hand():
    ff = three_stumps()
    X = np.array([[1.0, 1.0, 1.0, 7.0],    # all three trees right: delta = 2
                  [1.0, 1.0, 0.0, 7.0],    # two right, one wrong: delta = 1
                  [0.0, 0.0, 1.0, 7.0]])   # majority wrong: misclassified
    y = np.array([1, 1, 1])
    # V_f = {0.5, +inf} for the three used features (0.5 is a float32 number), none for x3
    assert list(ff.values_ptr) == [0, 2, 4, 6, 6]
    assert ff.values[0] == 0.5 and ff.values[1] > 0.5
    ic = instance_covers(ff, X[0], 1, budget=1)
    # every tree tests its feature false (x_t > 0.5): S_t^- = {t}, S^+ empty
    assert ic.membership[:, :3].tolist() == [[2, 0, 0], [0, 2, 0], [0, 0, 2]]
    assert ic.delta == {0: 2}
    r1 = certify(ff, X, y, budget=1)
    # b = 1: FLB sum = 1 < delta = 2 -> certified; row 1: delta 1 <= 1 -> brute force finds x_0 = 0.5
    assert list(r1.status) == ["certified_flb", "attackable", "misclassified"]
    assert r1.witness_changes[1] in (([0], [0.5]), ([1], [0.5]))
    assert r1.accuracy == 1 / 3
    r2 = certify(ff, X, y, budget=2)
    # b = 2: FLB sum = 2 >= 2, ELB finds S_0^- and S_1^- (2 trees), brute force sets x_0 = x_1 = 0.5
    assert list(r2.status) == ["attackable", "attackable", "misclassified"]
    assert r2.covers[0] == [(0, "-"), (1, "-")]
    feats, vals = r2.witness_changes[0]
    assert sorted(feats) in ([0, 1], [0, 2], [1, 2]) and vals == [0.5, 0.5]
    assert ff.predict(r2.witnesses[0].reshape(1, -1))[0] == 0
    assert r2.accuracy == 0.0
