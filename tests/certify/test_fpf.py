import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer

from fairlens.certify import FeaturePartitionedForest, certify, flatten_forest
from fairlens.certify._reference import reference_brute, reference_tree_votes


@pytest.fixture(scope="module")
def bc():
    X, y = load_breast_cancer(return_X_y=True)
    idx = np.random.default_rng(0).permutation(len(y))
    return X[idx[:455]], y[idx[:455]], X[idx[455:]], y[idx[455:]]


def test_structure_and_partition(bc):
    Xtr, ytr, _, _ = bc
    fpf = FeaturePartitionedForest(budget=2, rounds=6, random_state=0).fit(Xtr, ytr)
    assert len(fpf.estimators_) == 6 * 5 and fpf.n_rounds_ == 6
    for rnd in fpf.rounds_:
        groups = [fpf.estimators_features_[t] for t in rnd]
        allf = np.concatenate(groups)
        assert len(allf) == Xtr.shape[1] and len(set(allf)) == Xtr.shape[1]  # a partition
        # the round's vote beats the majority-class rate on the training data
        votes = np.column_stack([fpf.estimators_[t].predict(Xtr[:, fpf.estimators_features_[t]]) for t in rnd])
        assert np.mean((votes.sum(1) > 2).astype(int) == ytr) > max(np.mean(ytr), 1 - np.mean(ytr))
    for t in fpf.estimators_:
        assert t.get_n_leaves() <= 8
    assert fpf.score(Xtr, ytr) > 0.9


def test_reproducible(bc):
    Xtr, ytr, Xte, _ = bc
    a = FeaturePartitionedForest(budget=1, rounds=5, random_state=3).fit(Xtr, ytr)
    b = FeaturePartitionedForest(budget=1, rounds=5, random_state=3).fit(Xtr, ytr)
    c = FeaturePartitionedForest(budget=1, rounds=5, random_state=4).fit(Xtr, ytr)
    assert all(np.array_equal(f, g) for f, g in zip(a.estimators_features_, b.estimators_features_))
    np.testing.assert_array_equal(a.predict_proba(Xte), b.predict_proba(Xte))
    assert not all(np.array_equal(f, g) for f, g in zip(a.estimators_features_, c.estimators_features_))


def test_ties_go_to_majority_class(bc):
    Xtr, ytr, Xte, _ = bc
    fpf = FeaturePartitionedForest(budget=1, rounds=2, max_leaf_nodes=3, random_state=1).fit(Xtr, ytr)
    votes = fpf.predict_trees(np.vstack([Xtr, Xte]))
    tied = votes.sum(1) * 2 == votes.shape[1]
    assert tied.any()
    maj = fpf.classes_[np.argmax(np.bincount(ytr))]
    assert np.all(fpf.predict(np.vstack([Xtr, Xte]))[tied] == maj)
    ff = flatten_forest(fpf)
    np.testing.assert_array_equal(ff.predict(np.vstack([Xtr, Xte])), fpf.predict(np.vstack([Xtr, Xte])))


@pytest.mark.parametrize("b,r", [(1, 5), (1, 6), (2, 3)])
def test_rb_guarantee(bc, b, r):
    """Changing b features changes at most r*b trees; fewer than ceil(r/2) wrong trees => robust."""
    Xtr, ytr, Xte, yte = bc
    fpf = FeaturePartitionedForest(budget=b, rounds=r, random_state=b + r).fit(Xtr, ytr)
    rng = np.random.default_rng(0)
    base = fpf.predict_trees(Xte)
    lo, hi = Xtr.min(0), Xtr.max(0)
    for _ in range(30):  # random attacks on b features, with extreme values
        feats = np.array([rng.choice(Xte.shape[1], b, replace=False) for _ in range(len(Xte))])
        Xa = Xte.copy()
        rows = np.arange(len(Xte))[:, None]
        Xa[rows, feats] = rng.uniform(lo[feats] - 1, hi[feats] + 1)
        changed = (fpf.predict_trees(Xa) != base).sum(1)
        assert changed.max() <= r * b
    guaranteed = fpf.guaranteed_robust(Xte, yte)
    assert guaranteed.sum() > 0.5 * len(yte)
    res = certify(fpf, Xte, yte, budget=b, method="cascade")
    # guaranteed instances are certified (already by FLB, whose sum is at most r*b)
    assert np.all(res.status[guaranteed] == "certified_flb")
    assert not set(res.witnesses) & set(np.flatnonzero(guaranteed))
    assert res.accuracy >= guaranteed.mean()


def test_fpf_brute_force_matches_reference():
    X, y = load_breast_cancer(return_X_y=True)
    X = X[:, :9]
    fpf = FeaturePartitionedForest(budget=1, rounds=3, max_leaf_nodes=4, random_state=0).fit(X[:400], y[:400])
    Xte, yte = X[400:460], y[400:460]
    for b in (1, 2):
        res = certify(fpf, Xte, yte, budget=b, method="cascade")
        correct, att = reference_brute(fpf, Xte, yte, b)
        np.testing.assert_array_equal(res.status == "attackable", att)
        for i, xw in res.witnesses.items():
            votes = reference_tree_votes(fpf, xw.reshape(1, -1))
            assert fpf.predict(xw.reshape(1, -1))[0] != yte[i]
            assert votes.shape == (1, 9)


def test_bad_parameters(bc):
    Xtr, ytr, _, _ = bc
    with pytest.raises(ValueError, match="budget"):
        FeaturePartitionedForest(budget=0).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="rounds"):
        FeaturePartitionedForest(rounds=0).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="2\\*budget\\+1"):
        FeaturePartitionedForest(budget=15).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="binary"):
        FeaturePartitionedForest().fit(Xtr, np.arange(len(ytr)) % 3)
    fpf = FeaturePartitionedForest(rounds=2, random_state=0).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="features"):
        fpf.predict(Xtr[:, :5])


def test_sklearn_estimator_protocol(bc):
    from sklearn.base import clone

    Xtr, ytr, Xte, yte = bc
    fpf = FeaturePartitionedForest(budget=1, rounds=3, random_state=0)
    assert fpf.get_params()["rounds"] == 3
    a = clone(fpf).fit(Xtr, ytr)
    assert a is not fpf and not hasattr(fpf, "estimators_")
    assert 0.8 < a.score(Xte, yte) <= 1.0
    proba = a.predict_proba(Xte)
    assert proba.shape == (len(Xte), 2) and np.allclose(proba.sum(1), 1)
