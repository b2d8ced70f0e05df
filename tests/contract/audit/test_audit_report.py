"""fairlens.audit on a pipeline fitted on a readable table: findings, document, gate, invariances."""

import pandas as pd
import pytest

import fairlens
from fairlens.audit import FINDING_COLUMNS, KNOWN_MEASURES, AuditReport


@pytest.fixture(scope="module")
def report(german, readable_pipe):
    from tests._support.audit_fixtures import SMALL

    return fairlens.audit(readable_pipe, german.frame, target=german.target, protected=["sex", "age"],
                          favourable="good", time_limit=None, progress=False, options=SMALL)


def test_audit_is_callable_package_and_lazy():
    import fairlens.audit as pkg

    assert callable(fairlens.audit) and pkg is fairlens.audit
    assert pkg.AuditReport is AuditReport


def test_findings_table_has_every_column_and_check(report):
    f = report.findings
    assert list(f.columns) == list(FINDING_COLUMNS)
    assert set(f["check"]) == {"group_fairness", "individual", "subgroup", "explanations", "robustness"}
    assert set(f["verdict"]) <= {"pass", "fail", "inconclusive", "not computed", "info", "not applicable"}
    judged = f[f["verdict"].isin(["pass", "fail", "inconclusive"])]
    assert judged["condition"].notna().all() and judged["decided_by"].eq("thresholds").all()
    assert not f.columns.str.startswith("_").any()
    assert set(f["measure"]) <= set(KNOWN_MEASURES)
    num = f[f["verdict"] != "not applicable"]
    ok = num["ci_low"].notna()
    assert (num.loc[ok, "ci_low"] <= num.loc[ok, "value"] + 1e-12).all()
    assert (num.loc[ok, "value"] <= num.loc[ok, "ci_high"] + 1e-12).all()
    assert all(isinstance(s, str) and len(s) > 20 for s in f["sentence"])


def test_group_finding_agrees_with_group_metrics_and_says_it_plainly(report, german, readable_pipe):
    from fairlens.metrics import group_metrics

    pred = readable_pipe.predict(german.frame[german.feature_names]) == "good"
    ref = group_metrics(german.y, pred.astype(int), protected=german.frame[["sex"]])
    row = report.findings.query("measure == 'demographic_parity_difference' and group == 'sex'").iloc[0]
    assert row["value"] == pytest.approx(ref.measure("demographic_parity_difference", "sex")["value"], abs=1e-12)
    assert "'female' is selected at" in row["sentence"] and "'male'" in row["sentence"]
    assert "95% interval" in row["sentence"]
    assert ref.measure("demographic_parity_difference", "sex")["ci_high"] == pytest.approx(row["ci_high"])
    # the sentence ends with how the verdict was decided
    assert row["condition"] == "demographic_parity_difference>0.1"
    assert any(w in row["sentence"].lower() for w in ("the data show", "the data cannot tell"))
    # age has 53 values: compared in quartile bins, and said so
    sec = report.section("group_fairness")
    assert any("age" in n and "quartile" in n for n in sec.notes)


def test_subgroups_are_reported_honestly(report):
    sec = report.section("subgroup")
    rep = sec.result
    rows = report.findings.query("check == 'subgroup'")
    assert len(rows)
    for _, r in rows.iterrows():
        res = rep.result_for(r["group"])
        assert res.fresh is not None and r["value"] == pytest.approx(res.fresh.score)  # fresh, not selection
        assert min(res.support, 1 - res.support) >= 0.05  # both sides of the comparison are large
        assert ("favoured" in r["sentence"]) or ("disfavoured" in r["sentence"])
    table = sec.tables[0]
    assert "Share of everyone else" in table["columns"] and "Gap (fresh estimate, 95% interval)" in table["columns"]


def test_individual_pairs_are_readable_with_the_changed_attribute_marked(report, german):
    sec = report.section("individual")
    assert sec.result is not None
    pairs = [t for t in sec.tables if "pairs" in t["title"]]
    if not pairs:
        pytest.skip("MAFT found no pair at this budget")
    t = pairs[0]
    sex = t["columns"].index("sex")
    for changed, (a, _b) in zip(t["changed"], zip(t["rows"][::2], t["rows"][1::2])):
        assert set(changed) <= {"sex", "age"} and changed
        for j, col in enumerate(t["columns"]):
            if isinstance(a[j], dict) and "highlight" in a[j]:
                assert a[j]["highlight"] == (col in changed)
        assert a[sex]["text"] in ("male", "female")  # readable values, not codes


def test_non_tree_model_robustness_is_not_applicable_and_says_why(report):
    sec = report.section("robustness")
    assert sec.status == "not applicable"
    assert "Pipeline" in sec.verdict and "tree ensembles" in sec.verdict
    row = report.findings.query("check == 'robustness'").iloc[0]
    assert row["verdict"] == "not applicable"


def test_result_contract(report):
    s = report.summary()
    assert isinstance(s, pd.DataFrame) and len(s) == 1
    assert report.random_state == 0 and report.elapsed > 0


def test_gate_is_parsed_strictly(report):
    dpd = report.findings.query("measure == 'demographic_parity_difference'")["value"].max()
    assert report.passed(f"demographic_parity_difference>{dpd + 0.01}", burden="estimate") is True
    assert report.passed(f"demographic_parity_difference>{dpd - 0.01}", burden="estimate") is False
    assert report.passed(["individual_discrimination_rate>0.99", f"demographic_parity_difference>{dpd - 0.01}"],
                         burden="estimate") is False
    # a measure that was not computed cannot pass a gate: the gate is "not checked"
    assert report.gate("accuracy_under_attack<0.5")[0] is None
    assert report.passed("accuracy_under_attack<0.5") is False
    with pytest.raises(ValueError, match="unknown measure 'dp_diff'.*demographic_parity_difference"):
        report.passed("dp_diff>0.1")
    for bad in ("demographic_parity_difference>>0.1", "demographic_parity_difference=0.1",
                "demographic_parity_difference>0.1,", "demographic_parity_difference>abc"):
        with pytest.raises(ValueError, match="fail_on"):
            report.passed(bad)
    doc = report.to_dict(fail_on=f"demographic_parity_difference>{dpd - 0.01}", burden="estimate")
    assert doc["verdict"]["passed"] is False and doc["verdict"]["fail_on"]
    assert doc["verdict"]["burden"] == "estimate" and "no error control" in doc["verdict"]["rule"].replace(
        "no error rate is controlled", "no error control")


def test_gate_decides_from_intervals_with_the_burden_named(report):
    f = report.findings
    row = f.query("measure == 'demographic_parity_difference'").sort_values("value").iloc[-1]
    c = row["ci_low"] - 0.02   # the interval lies above this: the data show the gap exceeds it
    ok, reasons = report.gate(f"demographic_parity_difference>{c:.4f}")
    assert ok is False and any(row["group"] in r for r in reasons)
    doc = report.to_dict(f"demographic_parity_difference>{c:.4f}")
    assert doc["verdict"]["status"] == "failed" and doc["verdict"]["burden"] == "violation"
    assert "Holm" in doc["verdict"]["rule"]
    gated = [x for x in doc["findings"] if x.get("decided_by") == "gate"]
    assert len(gated) == 3 and {x["group"] for x in gated} == {"sex", "age", "sex & age"}
    # a threshold inside the interval: inconclusive -- passes on "violation", fails on "compliance"
    mid = (row["ci_low"] + row["ci_high"]) / 2
    assert report.gate(f"demographic_parity_difference>{mid:.4f}")[0] is True
    ok, reasons = report.gate(f"demographic_parity_difference>{mid:.4f}", burden="compliance")
    assert ok is False and any("inconclusive" in r for r in reasons)
    # the report itself is not changed by asking about another gate
    assert report.fail_on == [] and (report.findings["decided_by"] != "gate").all()


def test_reordered_columns_give_the_same_findings(report, german, readable_pipe):
    from tests._support.audit_fixtures import SMALL

    frame = german.frame
    cols = list(frame.columns)[::-1]
    again = fairlens.audit(readable_pipe, frame[cols], target=german.target, protected=["sex", "age"],
                           favourable="good", time_limit=None, progress=False, options=SMALL)
    pd.testing.assert_frame_equal(report.findings, again.findings)
