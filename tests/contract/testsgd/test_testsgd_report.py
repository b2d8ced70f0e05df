"""TestSGD(...).run(): report, ranking, reproducibility, bad input."""
import numpy as np
import pandas as pd
import pytest

from fairlens.testsgd import TestSGD, TestSGDReport, frequent_rule_sets

SENS = ["gender", "race", "age"]


class OnlySensitive:
    """Favourable iff male and age >= 40: the truth is known exactly."""

    def predict_proba(self, X):
        p = ((X[:, 0] == 1) & (X[:, 2] >= 40)).astype(float)
        return np.column_stack([1 - p, p])


@pytest.fixture
def report(toy, planted):
    return TestSGD(planted, toy, protected=SENS, theta=0.1, sample_thr=200, random_state=0).run()


def test_report_frame_and_top(report):
    assert isinstance(report, TestSGDReport)
    df = report.to_frame()
    for col in ("rule_set", "support", "rate_in", "rate_out", "score", "margin", "n_samples"):
        assert col in df.columns
    # one row per distinct row mask (identical masks are one finding, their aliases listed)
    n_masks = len({report.frequent.bits[i].tobytes() for i in range(report.n_rule_sets)})
    assert len(df) == n_masks <= report.n_rule_sets == len(report.frequent)
    assert sum(1 + len(a.split("; ")) if a else 1 for a in df["aliases"]) == report.n_rule_sets
    # ranked by selection score (issue 23: the fresh estimates are reported, never used to
    # re-rank); the first top_k carry their fresh re-estimate
    k = report.params["top_k"]
    fresh = df["fresh_score"].to_numpy()
    assert k == 10 and np.isfinite(fresh[:k]).all() and np.isnan(fresh[k:]).all()
    s = df["score"].to_numpy()
    assert np.all(np.diff(s[np.isfinite(s)]) <= 0)
    rest = s[k:][np.isfinite(s[k:])]
    assert s[:k].min() >= rest.max()  # the top_k are the k largest selection estimates
    np.testing.assert_allclose(df["score"], (df["rate_in"] - df["rate_out"]).abs())
    assert report.top(3).equals(df.head(3))
    assert report.elapsed > 0 and report.elapsed >= report.elapsed_mining
    assert report.confidence == pytest.approx(0.9025)
    assert (df["support"] >= 0.1 - 1e-12).all()
    conv = df[df.converged]
    assert (conv["margin"] <= 0.05 + 1e-12).all() and (conv["n_samples"] > 200).all()
    assert 0 <= report.accuracy <= 1


def test_planted_discrimination_is_found(toy):
    rep = TestSGD(OnlySensitive(), toy, protected=SENS, theta=0.05, sample_thr=200, random_state=1).run()
    top = rep.results[0]
    # the exact group of the model: all of it favourable, nobody outside
    assert top.rate_in == 1.0 and top.rate_out == 0.0 and top.score == 1.0
    # ties at score 1: the rule sets selecting exactly the model's group on the data score 1
    # surely (every sample inside favourable, none outside); others only by chance when their
    # EXACT score (labels = group membership: the samples never move a sensitive feature) is
    # close to 1, e.g. "male, 40<=age<90" misses the few men over 90 of the group.
    group = (toy.X[:, 0] == 1) & (toy.X[:, 2] >= 40)

    def exact(rs):
        m = rs.mask(toy.X)
        return abs(group[m].mean() - group[~m].mean())

    tops = [r for r in rep.results if r.score == 1.0]
    named = {str(r.rule_set) for r in tops} | {a for r in tops for a in r.aliases}
    assert {"gender=male, age>=40", "gender=male, 40<=age<100"} <= named
    # the two select the same rows: one finding, listed once, the other its alias
    assert rep.result_for("gender=male, 40<=age<100") is rep.result_for("gender=male, age>=40")
    assert all(r.score == 1.0 for r in rep.results[:len(tops)])  # ranked first
    for r in tops:
        assert exact(r.rule_set) > 0.97, str(r.rule_set)
    for r in rep.results:
        if np.array_equal(r.rule_set.mask(toy.X), group):
            assert r.score == 1.0 and (r.fresh is None or r.fresh.score == 1.0)
    assert all(not (r.score >= 1.0) for r in rep.results[len(tops):])
    # rule sets everybody satisfies (e.g. age<100 on this data) cannot be sampled outside: flagged
    flagged = [r for r in rep.results if r.status == "no-seeds"]
    assert all(r.support == 1.0 and np.isnan(r.score) for r in flagged)


def test_same_seed_same_report(toy, planted):
    a = TestSGD(planted, toy, protected=SENS, theta=0.2, sample_thr=100, random_state=3).run().to_frame()
    b = TestSGD(planted, toy, protected=SENS, theta=0.2, sample_thr=100, random_state=3).run().to_frame()
    c = TestSGD(planted, toy, protected=SENS, theta=0.2, sample_thr=100, random_state=4).run().to_frame()
    pd.testing.assert_frame_equal(a, b)
    assert not a[["rate_in", "rate_out"]].equals(c[["rate_in", "rate_out"]])


def test_cap_flagged_in_report(toy, planted):
    rep = TestSGD(planted, toy, protected=["gender"], theta=0.05, error=1e-3, sample_thr=50, max_samples=300,
                  random_state=0).run()
    df = rep.to_frame()
    assert (~df.converged).all() and (df.status == "cap").all() and (df.n_samples == 300).all()
    assert rep.n_not_converged == len(df)


def test_bad_inputs(toy, planted):
    with pytest.raises(ValueError, match="religion"):
        TestSGD(planted, toy, protected=["gender", "religion"])
    for bad in (0, 1.2, -1):
        with pytest.raises(ValueError, match="theta"):
            TestSGD(planted, toy, protected=SENS, theta=bad)
    for bad in (0, -0.1):
        with pytest.raises(ValueError, match="error"):
            TestSGD(planted, toy, protected=SENS, error=bad)
    with pytest.raises(ValueError, match="confidence"):
        TestSGD(planted, toy, protected=SENS, confidence=1.0)
    with pytest.raises(ValueError, match="max_samples"):
        TestSGD(planted, toy, protected=SENS, sample_thr=1000, max_samples=1000)
    with pytest.raises(ValueError, match="strategy"):
        TestSGD(planted, toy, protected=SENS, strategy="gpu")


def test_default_sensitive_from_dataset(toy, planted):
    ts = TestSGD(planted, toy)
    assert ts.sensitive == ["gender", "race", "age"]


def test_theta_larger_gives_subset(toy, planted):
    a = frequent_rule_sets(toy, SENS, 0.05)
    b = frequent_rule_sets(toy, SENS, 0.2)
    assert {str(r) for r in b.rule_sets} <= {str(r) for r in a.rule_sets}


def test_favourable_class_flips_rates_not_scores(toy, planted):
    a = TestSGD(planted, toy, protected=SENS, theta=0.2, sample_thr=100, random_state=2).run()
    b = TestSGD(planted, toy, protected=SENS, theta=0.2, sample_thr=100, random_state=2, favourable=0).run()
    fa, fb = a.to_frame().set_index("rule_set"), b.to_frame().set_index("rule_set")
    fb = fb.loc[fa.index]
    ok = fa.converged & fb.converged & (fa.n_samples == fb.n_samples)
    assert ok.sum() > 5
    np.testing.assert_allclose(fa.rate_in[ok], 1 - fb.rate_in[ok])
    np.testing.assert_allclose(fa.score[ok], fb.score[ok])
    assert a.accuracy == pytest.approx(b.accuracy)
