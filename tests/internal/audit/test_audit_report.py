"""fairlens.audit on a pipeline fitted on a readable table: findings, document, gate, invariances."""
import json

import pytest

from tests.contract.audit.test_audit_report import report  # noqa: F401 (fixtures)


def test_report_document_is_json_safe_and_valid(report, tmp_path):
    doc = report.to_dict()
    json.dumps(doc, allow_nan=False)
    assert doc["schema"] == "fairlens.report/2" and doc["kind"] == "audit"
    assert doc["data"]["n_rows"] == 1000 and len(doc["data"]["sha256"]) == 64
    assert doc["model"]["class"] == "Pipeline" and doc["model"]["input"] == "readable frame"
    assert doc["parameters"]["random_state"] == 0
    assert [s["id"] for s in doc["sections"]] == ["group_fairness", "individual", "subgroup", "explanations",
                                                  "robustness"]
    assert all(s["elapsed"] is not None for s in doc["sections"]) and doc["limitations"]
    schema = pytest.importorskip("fairlens.report._schema")
    schema.validate_document(doc)
    p = report.to_json(tmp_path / "audit.json")
    assert json.loads(open(p).read())["findings"]
    pytest.importorskip("fairlens.report._render")
    html = report.to_html(tmp_path / "audit.html")
    assert "<html" in html.lower() and (tmp_path / "audit.html").exists()
    assert isinstance(report._repr_html_(), str)
