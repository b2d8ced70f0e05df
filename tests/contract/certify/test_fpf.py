import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer

from fairlens.certify import FeaturePartitionedForest, certify, flatten_forest


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


# --- issue 11: column names, scikit-learn estimator checks ----------------------------

def _bc_frame():
    from sklearn.datasets import load_breast_cancer as _lbc

    data = _lbc(as_frame=True)
    X, y = data.data, data.target
    return X.iloc[:455], y.iloc[:455], X.iloc[455:], y.iloc[455:]


def test_fpf_aligns_dataframe_columns_by_name():
    Xtr, ytr, Xte, yte = _bc_frame()
    fpf = FeaturePartitionedForest(budget=1, rounds=10, random_state=0).fit(Xtr, ytr)
    assert fpf.n_features_in_ == 30
    assert list(fpf.feature_names_in_) == list(Xtr.columns)
    rev = Xte[Xte.columns[::-1]]
    # reproducer: 22 of 114 predictions changed with reordered columns
    np.testing.assert_array_equal(fpf.predict(rev), fpf.predict(Xte))
    np.testing.assert_array_equal(fpf.predict_trees(rev), fpf.predict_trees(Xte))
    np.testing.assert_array_equal(fpf.guaranteed_robust(rev, yte), fpf.guaranteed_robust(Xte, yte))
    with pytest.raises(ValueError, match="mean radius"):
        fpf.predict(Xte.drop(columns=["mean radius"]))
    with pytest.raises(ValueError, match="surprise"):
        fpf.predict(Xte.assign(surprise=1.0))
    # certify aligns by name too, and certifies the same thing
    a = certify(fpf, Xte, yte, budget=1)
    b = certify(fpf, rev, yte, budget=1)
    np.testing.assert_array_equal(a.status, b.status)


def test_certify_aligns_dataframe_columns_for_sklearn_forests():
    from sklearn.ensemble import RandomForestClassifier

    Xtr, ytr, Xte, yte = _bc_frame()
    rf = RandomForestClassifier(n_estimators=7, max_depth=3, random_state=0).fit(Xtr, ytr)
    rev = Xte[Xte.columns[::-1]]
    a = certify(rf, Xte, yte, budget=1)
    b = certify(rf, rev, yte, budget=1)  # reproducer: 0.68 instead of 0.83
    assert a.accuracy == b.accuracy
    np.testing.assert_array_equal(a.status, b.status)
    assert a.witnesses.keys() == b.witnesses.keys()
    for i in a.witnesses:
        np.testing.assert_array_equal(a.witnesses[i], b.witnesses[i])
    # witnesses are in the model's column order: they flip rf.predict as a frame too
    for i, xw in a.witnesses.items():
        assert rf.predict(pd.DataFrame([xw], columns=Xtr.columns))[0] != yte.iloc[i]
    with pytest.raises(ValueError, match="mean texture"):
        certify(rf, Xte.drop(columns=["mean texture"]), yte)
    assert a.feature_names == list(Xtr.columns)


def test_fpf_guaranteed_robust_validates_labels(bc):
    Xtr, ytr, Xte, yte = bc
    fpf = FeaturePartitionedForest(budget=1, rounds=3, random_state=0).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="y"):
        fpf.guaranteed_robust(Xte, 0.5)  # reproducer: certified 74 rows
    with pytest.raises(ValueError, match="0.5"):
        fpf.guaranteed_robust(Xte, np.full(len(Xte), 0.5))
    with pytest.raises(ValueError, match="rows"):
        fpf.guaranteed_robust(Xte, yte[:-1])
    with pytest.raises(ValueError, match="not one of"):
        fpf.guaranteed_robust(Xte, yte + 2)


def test_fpf_sklearn_checks_on_enough_features(bc):
    # the checks listed as expected failures, redone on data with enough features
    import pickle

    from sklearn.base import clone

    Xtr, ytr, Xte, yte = bc
    est = FeaturePartitionedForest(budget=1, rounds=3, random_state=0)
    params = est.get_params()
    fitted = est.fit(Xtr, ytr)
    assert fitted is est and est.get_params() == params  # fit returns self, params untouched
    p1 = clone(est).fit(Xtr, ytr).predict(Xte)
    p2 = est.fit(Xtr, ytr).predict(Xte)
    np.testing.assert_array_equal(p1, p2)  # idempotent
    assert est.n_features_in_ == Xtr.shape[1] and not hasattr(est, "feature_names_in_")
    labels = np.where(ytr == 1, "benign", "malignant")
    est2 = clone(est).fit(Xtr.tolist(), labels.tolist())  # not an array, string classes
    assert set(est2.predict(Xte)) <= {"benign", "malignant"}
    assert list(est2.classes_) == ["benign", "malignant"]
    ro = np.asarray(Xtr).copy()
    ro.setflags(write=False)
    np.testing.assert_array_equal(clone(est).fit(ro, ytr).predict(Xte), p1)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(est)).predict(Xte), p1)
    with pytest.raises(ValueError, match="features"):
        est.predict(Xte[:, :4])
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        clone(est).predict(Xte)
    with pytest.raises(ValueError, match="3 features"):
        clone(est).fit(Xtr[:, :2], ytr)
