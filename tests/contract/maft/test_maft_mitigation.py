import numpy as np
import pytest

from fairlens.maft import MAFT, discrimination_rate, discriminatory_mask, retrain_with_instances
from tests._support.maft_oracle import is_discriminatory


def test_mask_matches_oracle(toy, toy_mlp):
    X = toy.X[:80]
    m = discriminatory_mask(toy_mlp, toy, X, protected=["sex", "race"])
    expect = [is_discriminatory(toy_mlp, x, [1, 2], toy.bounds) for x in X]
    np.testing.assert_array_equal(m, expect)


def test_retraining_reduces_discrimination(toy, toy_mlp):
    res = MAFT(toy_mlp, toy, protected=["sex"], n_seeds=60, n_local=200, random_state=0).run()
    assert res.n_instances > 30
    mit = retrain_with_instances(toy_mlp, toy, res, fraction=0.2, n_samples=2000, random_state=0)
    fr = mit.to_frame()
    assert list(fr.model) == ["before", "baseline refit", "after"]
    # the reported rates are those of the returned models
    again = discrimination_rate(mit.model, toy, ["sex"], n_samples=2000, random_state=1)
    assert again["rate"] == pytest.approx(mit.rate_after["rate"])
    assert mit.rate_after["rate"] < mit.rate_baseline["rate"]
    assert 0 < mit.n_added <= res.n_instances
    assert abs(mit.accuracy_after - mit.accuracy_baseline) < 0.1


def test_retrain_rejects_empty(toy, toy_mlp):
    res = MAFT(toy_mlp, toy, protected=["sex"], n_local=0, seeds=toy.X[:1], random_state=0).run()
    if res.n_instances == 0:
        with pytest.raises(ValueError, match="no discriminatory"):
            retrain_with_instances(toy_mlp, toy, res)
    with pytest.raises(ValueError, match="labelling"):
        retrain_with_instances(toy_mlp, toy, res, labelling="vote")


def test_soft_vote_labels_whole_similar_sets(toy, toy_mlp, monkeypatch):
    """The rows added to the refit are complete similar sets with one label each."""
    from sklearn.neural_network import MLPClassifier

    res = MAFT(toy_mlp, toy, protected=["sex"], n_seeds=40, n_local=50, random_state=0).run()
    seen = {}
    orig_fit = MLPClassifier.fit

    def spy(self, X, y):
        seen.setdefault("calls", []).append((np.asarray(X).copy(), np.asarray(y).copy()))
        return orig_fit(self, X, y)

    monkeypatch.setattr(MLPClassifier, "fit", spy)
    mit = retrain_with_instances(toy_mlp, toy, res, protected=["sex"], fraction=0.05, n_samples=200)
    (Xb, yb), (Xn, yn) = seen["calls"]
    k = mit.n_rows_added
    assert k == 2 * mit.n_added and len(Xn) == len(Xb) + k
    Xa, ya = Xn[-k:], yn[-k:]
    np.testing.assert_array_equal(Xa[0::2][:, [0, 2, 3, 4, 5]], Xa[1::2][:, [0, 2, 3, 4, 5]])
    assert np.all(Xa[0::2, 1] != Xa[1::2, 1]) and np.all(ya[0::2] == ya[1::2])
    p = toy_mlp.predict_proba(Xa)[:, 1].reshape(-1, 2).mean(axis=1)
    np.testing.assert_array_equal(ya[0::2], (p > 0.5).astype(int))
