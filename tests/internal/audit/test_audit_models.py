"""fairlens.audit on the model kinds of the one model protocol: an encoded-array MLP, XGBoost (tree
ensemble: robustness applies), a plain callable and an output-shuffling model."""
import numpy as np
import pandas as pd
import pytest

import fairlens


@pytest.mark.jit_heavy
def test_xgboost_model_gets_a_certified_robustness_interval(german, small):
    xgb = pytest.importorskip("xgboost")
    X = pd.DataFrame(german.X, columns=german.feature_names)
    model = xgb.XGBClassifier(n_estimators=20, max_depth=3, random_state=0).fit(X, german.y)
    rep = fairlens.audit(model, german, protected=["sex"], checks=["group_fairness", "robustness"],
                         time_limit=None, progress=False, options=small)
    sec = rep.section("robustness")
    assert sec.status == "complete"
    rows = rep.findings.query("measure == 'accuracy_under_attack'")
    assert len(rows) == 1 and rows["group"].iloc[0] == "b=1"
    lo, v, hi = rows[["ci_low", "value", "ci_high"]].iloc[0]
    assert 0 <= lo <= v <= hi <= 1
    assert rows["interval"].iloc[0] == "95% Wilson interval"   # every row settled: an exact accuracy
    clean = rep.findings.query("measure == 'clean_accuracy'")["value"].iloc[0]
    assert v <= clean + 1e-12
    # the same number as certify on the same rows
    from fairlens.certify import certify

    res = sec.result[1]
    again = certify(model, X.iloc[np.sort(_rows(rep, german))], german.y[np.sort(_rows(rep, german))], budget=1)
    assert again.accuracy == pytest.approx(res.accuracy)


def _rows(rep, german):
    from fairlens._parallel import chunk_rng

    return chunk_rng(rep.random_state, 0, 29).permutation(german.n_samples)[: rep.params["n_certify"]]


def test_model_that_does_not_read_the_protected_column(german, small):
    """Fairness through unawareness: a model without `sex` among its inputs is audited for `sex`; changing
    only `sex` can never change its decision, so the individual rate is exactly 0 (a hand-checkable answer),
    while the group check still compares the sexes. Extra columns the model does not read are ignored."""
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    frame = german.frame.copy()
    frame["row_id"] = range(len(frame))
    feats = [c for c in german.feature_names if c != "sex"]
    cat = [c for c in feats if not pd.api.types.is_numeric_dtype(frame[c])]
    num = [c for c in feats if c not in cat]
    model = make_pipeline(make_column_transformer((OneHotEncoder(handle_unknown="ignore"), cat),
                                                  (StandardScaler(), num)),
                          LogisticRegression(max_iter=2000)).fit(frame[feats], frame["class"])
    rep = fairlens.audit(model, frame, target="class", protected=["sex"], favourable="good",
                         checks=["group_fairness", "individual"], time_limit=None, progress=False, options=small)
    rate = rep.findings.query("measure == 'individual_discrimination_rate'").iloc[0]
    assert rate["value"] == 0.0 and rate["verdict"] == "pass"
    assert rep.findings.query("measure == 'individual_instances_found'")["value"].iloc[0] == 0
    assert "row_id" not in rep.dataset.feature_names and "sex" in rep.dataset.feature_names
    assert rep.findings.query("check == 'group_fairness' and group == 'sex'")["value"].notna().all()
    assert "does not read" in rep.to_dict()["model"]["note"]
    schema = pytest.importorskip("fairlens.report._schema")
    schema.validate_document(rep.to_dict())
