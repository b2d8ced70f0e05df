"""certify with missing values (issue 24 item 4): NaN as one more attack value, rows with NaN.

Every verdict is checked against the literal oracle ``reference_attack`` (each library's own
``predict`` on every candidate row, NaN included), every witness against ``predict``, and the
bounds for soundness (a row FLB/ELB certifies is never attacked by the oracle).
"""
import numpy as np
import pytest
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)

from fairlens.certify import FeaturePartitionedForest, accuracy_under_attack, certify, flatten_forest

ROBUST = ("certified_flb", "certified_elb", "robust_brute")


def _data(seed, n=300, d=6, p_nan=0.15):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X.sum(axis=1) + 0.3 * rng.normal(size=n) > 0).astype(int)
    Xn = X.copy()
    Xn[rng.random(X.shape) < p_nan] = np.nan
    return X, Xn, y


def test_models_whose_predict_refuses_nan():
    X, Xn, y = _data(7)
    gb = GradientBoostingClassifier(n_estimators=5, max_depth=2, random_state=0).fit(X[:200], y[:200])
    fpf = FeaturePartitionedForest(rounds=2, random_state=0).fit(X[:200], y[:200])
    for model in (gb, fpf):
        with pytest.raises(ValueError, match="missing=True"):
            certify(model, X[200:210], y[200:210], missing=True)
        res = certify(model, X[200:210], y[200:210])  # auto: the finite threat model
        assert res.params["nan_attack"] is False
        with pytest.raises(ValueError, match="X contains NaN"):
            certify(model, Xn[200:210], y[200:210])
    ff = flatten_forest(RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y))
    with pytest.raises(ValueError, match="missing=True"):
        certify(ff, X[:5], y[:5], missing=True)
    assert certify(ff, X[:5], y[:5]).params["nan_attack"] is False


@pytest.mark.parametrize("bad", ["yes", 1, None, "AUTO"])
def test_bad_missing(bad):
    X, _, y = _data(8, n=60)
    rf = RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    with pytest.raises((TypeError, ValueError), match="missing"):
        certify(rf, X[:5], y[:5], missing=bad)
    with pytest.raises((TypeError, ValueError), match="missing"):
        accuracy_under_attack(rf, X[:5], y[:5], budgets=[1], missing=bad)


def test_accuracy_under_attack_threat_models():
    X, Xn, y = _data(9)
    model = RandomForestClassifier(n_estimators=8, max_depth=3, random_state=0).fit(Xn[:200], y[:200])
    Q, yq = Xn[200:230], y[200:230]
    tab = accuracy_under_attack(model, Q, yq, budgets=[1, 2])
    assert list(tab["threat_model"]) == ["finite values and NaN"] * 2
    for b, acc in zip([1, 2], tab["accuracy_exact"]):
        assert acc == certify(model, Q, yq, budget=b).accuracy_exact
    fin = accuracy_under_attack(model, Q, yq, budgets=[1], missing=False)
    assert fin["threat_model"].iloc[0] == "finite values"
    assert fin["accuracy_exact"].iloc[0] >= tab["accuracy_exact"].iloc[0]


def test_missing_false_is_the_finite_certificate_on_finite_rows():
    """missing=False on finite rows runs the unchanged engine (bit-identical results), and NaN can
    only lower the exact accuracy."""
    X, _, y = _data(10)
    model = ExtraTreesClassifier(n_estimators=10, max_depth=4, random_state=0).fit(X[:200], y[:200])
    Q, yq = X[200:240], y[200:240]
    a = certify(model, Q, yq, budget=1, missing=False)
    b = certify(model, Q, yq, budget=1, missing=False)
    assert np.array_equal(a.status, b.status) and np.array_equal(a.delta, b.delta, equal_nan=True)
    on = certify(model, Q, yq, budget=1)
    assert on.accuracy_exact <= a.accuracy_exact
    assert not np.any(np.isin(on.status, ROBUST) & ~np.isin(a.status, ROBUST))


@pytest.mark.parametrize("kind", ["forest", "hgb"])
def test_instance_covers_with_missing_match_certify(kind):
    """instance_covers(missing="auto") gives the covers certify uses by default (FLB sums equal to the
    FLB kernel's), its default (missing=False) the finite ones; x with NaN is accepted."""
    from fairlens.certify import instance_covers

    X, Xn, y = _data(12)
    if kind == "forest":
        model = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(Xn[:200], y[:200])
    else:
        model = HistGradientBoostingClassifier(max_iter=6, max_depth=2, random_state=0).fit(Xn[:200], y[:200])
    Q, yq = Xn[200:215], y[200:215]
    for missing in (False, "auto"):
        res = certify(model, Q, yq, budget=1, method="flb", missing=missing)
        for i in range(len(yq)):
            ic = instance_covers(model, Q[i], yq[i], budget=1, missing=missing)
            assert ic.params["nan_attack"] is (missing == "auto")
            if res.status[i] == "misclassified":
                continue
            c = 1 - int(np.searchsorted(model.classes_, yq[i]))
            assert ic.flb[c][0] - ic.delta[c] == pytest.approx(res.flb_sum[i] - res.delta[i], abs=1e-9)
