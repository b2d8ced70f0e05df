"""One unit per kind of quantity across the audit: the document keeps raw proportions with their
``unit``; everything a person reads (the HTML tables, the findings, the sentences, the gate's
verdict) shows rates in % and differences of rates in percentage points, with the same numbers."""

import numpy as np
import pytest

import fairlens


@pytest.fixture(scope="module")
def group_report(german):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    data = german.subset(np.arange(600))
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(data.X, data.y)
    return fairlens.audit(model, data, protected=["sex", "age"], checks=["group_fairness"],
                          time_limit=None, progress=False)


def test_sentences_speak_the_same_units(group_report):
    f = group_report.findings
    for _, r in f.iterrows():
        if r["unit"] == "difference" and np.isfinite(r["value"]):
            pp = 100 * r["value"]
            digits = max(0, 2 - int(np.floor(np.log10(abs(pp))))) if pp else 0
            assert f"{pp:.{digits}f} pp" in r["sentence"], (r["measure"], r["sentence"])
        if r["unit"] == "ratio" and np.isfinite(r["value"]):
            assert f"{r['value']:.3g}" in r["sentence"] and f"{100 * r['value']:.3g} pp" not in r["sentence"]
    assert not f["sentence"].str.contains("TPR|FPR|\\+-", regex=True).any()


def test_gate_reasons_and_verdict_gloss_the_threshold(group_report):
    ok, reasons = group_report.gate("demographic_parity_difference>0.001", burden="estimate")
    assert ok is False and reasons
    value = float(group_report.findings.query("measure == 'demographic_parity_difference'")["value"].iloc[0])
    assert reasons[0].startswith("demographic_parity_difference (sex): fail: ")
    assert f"{100 * value:.3g} pp" in reasons[0]
    assert reasons[0].endswith("against demographic_parity_difference>0.001 [point estimate]")
    doc = group_report.to_dict("demographic_parity_difference>0.5")
    assert doc["verdict"]["passed"] is True and doc["verdict"]["burden"] == "violation"
    assert "demographic_parity_difference>0.5 (> 50.0 pp)" in doc["verdict"]["sentence"]
    assert doc["verdict"]["fail_on"] == ["demographic_parity_difference>0.5"]  # machine form unchanged
    # ratios have no reader unit: no gloss
    assert "(< 2 pp" not in " ".join(group_report.gate("disparate_impact<2", burden="estimate")[1])


def test_section_verdict_quotes_a_failing_finding(german):
    """The group section's verdict names a finding that fails, not merely the largest parity gap."""
    data = german.subset(np.arange(600))
    j = data.index_of("sex")
    male = next(code for code, label in data.categories["sex"].items() if label == "male")
    model = lambda X: np.where(X[:, j] == male, 0.9, 0.2)  # noqa: E731 - decided by sex alone
    # only the demographic parity ratio can fail: the other thresholds are out of reach
    report = fairlens.audit(model, data, protected=["sex"], checks=["group_fairness"],
                            thresholds={"equalized_odds_difference": 0.99, "demographic_parity_difference": 0.99,
                                        "equal_opportunity_difference": 0.99, "disparate_impact": 0.01,
                                        "statistical_parity_difference": 0.99, "average_odds_difference": 0.99,
                                        "true_positive_rate_difference": 0.99},
                            time_limit=None, progress=False)
    sec = report.section("group_fairness")
    failing = [f for f in sec.findings if f["verdict"] == "fail"]
    assert [f["measure"] for f in failing] == ["demographic_parity_ratio"]
    assert sec.verdict.endswith(failing[0]["sentence"])


def test_binned_groups_are_listed_lowest_first(group_report):
    """age (many values) is cut into quartile bins; its table lists them in numeric order."""
    sec = group_report.section("group_fairness")
    table = next(t for t in sec.tables if t["title"] == "Groups of age")
    names = [r[0] for r in table["rows"]]
    assert names[0].startswith("age <= ") and names[-1].startswith("age > ") and len(names) == 4
    uppers = [float(n.rsplit("<=", 1)[1]) for n in names[:-1]]
    assert uppers == sorted(uppers)
    # the same rows, only reordered: every group of the result is there once
    res_groups = sec.result.groups.query("attribute == 'age'")["group"]
    assert sorted(names) == sorted(res_groups)
