"""fairlens.audit on the model kinds of the one model protocol: an encoded-array MLP, XGBoost (tree
ensemble: robustness applies), a plain callable and an output-shuffling model."""
import numpy as np
import pandas as pd
import pytest

import fairlens


def test_encoded_array_mlp_on_a_dataset(german, encoded_mlp, small):
    rep = fairlens.audit(encoded_mlp, german, protected=["sex"], time_limit=None, progress=False, options=small)
    assert rep.info["model"]["input"] == "encoded array"
    assert {o.id: o.status for o in rep.outcomes} == {
        "group_fairness": "complete", "individual": "complete", "subgroup": "complete",
        "explanations": "complete", "robustness": "not applicable"}
    # the MLP is scored on the encoded X: the group measure equals the one on its own predictions
    from fairlens.metrics import group_metrics

    pred = encoded_mlp.predict(german.X)
    ref = group_metrics(german.y, pred, protected={"sex": german.frame["sex"]})
    got = rep.findings.query("measure == 'demographic_parity_difference' and group == 'sex'")["value"].iloc[0]
    assert got == pytest.approx(ref.measure("demographic_parity_difference")["value"], abs=1e-12)
    assert "MLPClassifier" in str(rep.info["model"]["params"]) or rep.info["model"]["class"] == "Pipeline"


def test_callable_model(german, encoded_mlp, small):
    def f(X):
        return encoded_mlp.predict_proba(np.asarray(X))[:, 1]

    rep = fairlens.audit(f, german, protected=["sex"], checks=["group_fairness", "individual", "robustness"],
                         time_limit=None, progress=False, options=small)
    assert rep.info["model"]["input"] == "callable"
    assert rep.section("robustness").status == "not applicable"
    ref = fairlens.audit(encoded_mlp, german, protected=["sex"], checks=["group_fairness", "individual"],
                         time_limit=None, progress=False, options=small)
    pd.testing.assert_frame_equal(rep.findings.query("check != 'robustness'").reset_index(drop=True),
                                  ref.findings.reset_index(drop=True))


def test_output_shuffling_model_is_flagged(german, small):
    from sklearn.linear_model import LogisticRegression

    from fairlens.shuffle import ShuffledModel

    honest = LogisticRegression(max_iter=2000).fit(german.X, german.y)
    attacked = ShuffledModel(honest, protected="sex", favoured="male", data=german, random_state=0)
    rep = fairlens.audit(attacked, german, protected=["sex"], checks=["explanations"], time_limit=None,
                         progress=False, options=small)
    row = rep.findings.query("measure == 'batch_inconsistency'").iloc[0]
    assert row["verdict"] == "fail" and row["value"] > 0
    assert "depends on the batch" in row["sentence"]
    assert rep.passed() is False
    ok = fairlens.audit(honest, german, protected=["sex"], checks=["explanations"], time_limit=None,
                        progress=False, options=small)
    assert ok.findings.query("measure == 'batch_inconsistency'")["verdict"].iloc[0] == "pass"


def test_same_random_state_same_findings_at_n_jobs_1_and_2(german, readable_pipe, small):
    kw = dict(target=german.target, protected=["sex"], favourable="good", time_limit=None, progress=False,
              options=small, random_state=3, checks=["group_fairness", "individual", "subgroup", "explanations"])
    a = fairlens.audit(readable_pipe, german.frame, n_jobs=1, **kw)
    b = fairlens.audit(readable_pipe, german.frame, n_jobs=2, **kw)
    pd.testing.assert_frame_equal(a.findings, b.findings)
    c = fairlens.audit(readable_pipe, german.frame, n_jobs=1, **{**kw, "random_state": 4})
    assert not a.findings["ci_low"].fillna(0).equals(c.findings["ci_low"].fillna(0))


def test_tight_time_limit_cuts_checks_short_and_keeps_intervals(german, readable_pipe):
    rep = fairlens.audit(readable_pipe, german.frame, target=german.target, protected=["sex", "age"],
                         favourable="good", time_limit=0.5, progress=False,
                         options={"n_explain": 20, "n_background": 20})
    status = {o.id: o.status for o in rep.outcomes}
    assert "cut short" in status.values(), status
    assert rep.stopped
    for o in rep.outcomes:
        if o.status == "cut short":
            assert o.notes, o.id
    # the group check still reports intervals
    g = rep.findings.query("check == 'group_fairness' and measure == 'demographic_parity_difference'")
    assert g["ci_low"].notna().all() or status["group_fairness"] == "failed"
    doc = rep.to_dict()
    assert any("cut short" in s for s in doc["limitations"])
