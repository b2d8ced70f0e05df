"""THEMIS baseline and rule-set-guided mitigation."""
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from fairlens.testsgd import RuleSet, generate_group_samples, mitigate, single_rules
from fairlens.testsgd._rules import as_table
from tests.contract.testsgd.test_testsgd_baselines import SENS


def _split(toy):
    idx = np.random.default_rng(0).permutation(toy.X.shape[0])
    mk = lambda ix: SimpleNamespace(**{**vars(toy), "X": toy.X[ix], "y": toy.y[ix]})
    return mk(idx[:2000]), mk(idx[2000:])


def _rs(toy, *texts):
    t = as_table(toy)
    rules = []
    for f, txt in texts:
        rules.append([r for r in single_rules(t, f) if str(r) == txt][0])
    return RuleSet(tuple(rules))


def test_generated_samples_satisfy_rule_and_label(toy):
    rs = _rs(toy, ("gender", "gender=male"), ("age", "age>=40"))
    m = LogisticRegression(max_iter=500).fit(toy.X, toy.y)
    X = generate_group_samples(m, toy, rs, SENS, 300, 0, random_state=0)
    assert X.shape == (300, 5)
    assert rs.mask(X).all()
    assert (m.predict_proba(X)[:, 1] < 0.5).all()


def test_mitigation_moves_the_group_rate(toy):
    train, test = _split(toy)
    # biased labels: inside the group, education alone decides, which the model learns
    model = LogisticRegression(max_iter=1000).fit(train.X, train.y)
    rs = _rs(toy, ("gender", "gender=female"), ("race", "race=White"))
    res = mitigate(model, train, test, rs, SENS, amounts=[50, 400, 1500], sample_thr=300, random_state=0)
    before = res.before
    assert res.target_label == (1 if before["rate_in"] < before["rate_out"] else 0)
    steps = res.to_frame()
    assert list(steps.n_added) == [0, 50, 400, 1500]
    # adding many samples labelled target pushes the in-group rate toward the target label
    moved = steps.rate_in.iloc[-1] - before["rate_in"]
    assert (moved > 0.05) if res.target_label == 1 else (moved < -0.05)
    assert steps.score.iloc[-1] < before["score"]
    # best = lowest score within the accuracy budget
    ok = res.steps[(res.steps.accuracy >= before["accuracy"] - res.max_accuracy_drop) & ~res.steps.constant]
    if len(ok):
        assert res.best == int(ok.score.idxmin())
    else:
        assert res.best is None
    with pytest.raises(ValueError, match="amounts"):
        mitigate(model, train, test, rs, SENS, amounts=[0])


def test_mitigation_flags_a_constant_model_and_never_keeps_it(toy):
    """Issue 36: a retraining that predicts the same decision for everybody scores 0 trivially
    and has accuracy = the base rate; it is flagged (constant, pred_rate) and never chosen."""
    from sklearn.dummy import DummyClassifier

    train, test = _split(toy)
    model = LogisticRegression(max_iter=1000).fit(train.X, train.y)
    rs = _rs(toy, ("gender", "gender=female"), ("race", "race=White"))

    def collapse(X, y):            # every retraining collapses to the majority class
        return DummyClassifier(strategy="most_frequent").fit(X, y)

    res = mitigate(model, train, test, rs, SENS, amounts=[50, 400], sample_thr=300, random_state=0,
                   fit=collapse, max_accuracy_drop=1.0)
    base = float(np.mean(test.y == 1))
    assert res.before["base_rate"] == pytest.approx(base) and not res.before["constant"]
    assert res.steps["constant"].all() and res.n_constant == 2
    assert set(res.steps["pred_rate"]) <= {0.0, 1.0}
    # a constant "favourable" scores the base rate, a constant "unfavourable" its complement
    want = np.where(res.steps["pred_rate"] == 1.0, base, 1 - base)
    assert np.allclose(res.steps["accuracy"], want)
    assert (res.steps["score"].fillna(0) == 0).all()                          # the trivial 0
    assert res.best is None and res.after is None                             # not a mitigation
    assert res.summary()["n_constant"].iloc[0] == 2
    assert res.params["retrain"] == "custom fit"


def test_mitigation_continue_and_baseline(toy):
    """retrain="continue" trains a COPY of the original network further from its weights (the
    paper's "retrain the original model"); baseline=True retrains once with nothing added."""
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.tree import DecisionTreeClassifier

    train, test = _split(toy)
    net = make_pipeline(StandardScaler(), MLPClassifier((8,), max_iter=30, random_state=0)).fit(train.X, train.y)
    w0 = [c.copy() for c in net[-1].coefs_]
    mean0 = net[0].mean_.copy()
    rs = _rs(toy, ("gender", "gender=female"), ("race", "race=White"))
    res = mitigate(net, train, test, rs, SENS, amounts=[50], sample_thr=300, random_state=0,
                   retrain="continue", baseline=True)
    assert all(np.array_equal(a, b) for a, b in zip(w0, net[-1].coefs_))     # the original is untouched
    assert not net[-1].warm_start
    assert res.params["retrain"] == "continue" and res.baseline is not None
    assert res.baseline["n_added"] == 0 and {"score", "accuracy", "constant"} <= set(res.baseline)
    assert res.summary()["score_baseline"].iloc[0] == res.baseline["score"]
    # one more epoch from the original weights stays near them; a refit from scratch does not
    seen = {}

    def spy(X, y):
        m = fit_continue(X, y)
        seen["model"] = m
        return m

    from fairlens.testsgd._mitigate import _continue_fit
    from fairlens.testsgd._score import make_scorer

    fit_continue = _continue_fit(net, make_scorer(net, train))
    net1 = spy(train.X, train.y)
    assert np.array_equal(net1[0].mean_, mean0)                              # preprocessing kept
    drift = max(np.abs(a - b).max() for a, b in zip(net1[-1].coefs_, w0))
    fresh = make_pipeline(StandardScaler(), MLPClassifier((8,), max_iter=30, random_state=1)).fit(train.X, train.y)
    far = max(np.abs(a - b).max() for a, b in zip(fresh[-1].coefs_, w0))
    assert drift < far
    with pytest.raises(ValueError, match="retrain"):
        mitigate(DecisionTreeClassifier(max_depth=2).fit(train.X, train.y), train, test, rs, SENS,
                 amounts=[50], retrain="continue")
    with pytest.raises(ValueError, match="retrain"):
        mitigate(net, train, test, rs, SENS, amounts=[50], retrain="warm")
