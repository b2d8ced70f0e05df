"""The tour: runs on bundled data only, writes a self-contained HTML report."""
import re
import subprocess
import sys

import pytest

from fairlens import tour


@pytest.fixture
def no_data_home(monkeypatch):
    """The tour must work from the bundled files alone."""
    monkeypatch.delenv("FAIRLENS_DATA_HOME", raising=False)


def test_quick_tour_sections_and_html(tmp_path, no_data_home):
    out = tmp_path / "report.html"
    report = tour.run_tour(quick=True, out=out, progress=False, only=["shuffle", "certify"])
    assert report.ok, [s.error for s in report.sections]
    summary = report.summary()
    assert list(summary.columns) == ["analysis", "data", "result", "seconds"]
    assert len(summary) == 2
    shuffle = report.sections[0].table
    # the paper's story, measured: fairness gets worse, the exact Shapley value stays ~0,
    # and the detector flags every attack
    strong = shuffle.attack.isin(["Dominance", "Swapping q=0.5"])
    assert (shuffle["DP difference after"][strong] > shuffle["DP difference before"][strong]).all()
    assert (shuffle["exact Shapley |Research|"] < 1e-9).all()
    assert shuffle["detector flags it"].all()
    cert = report.sections[1].table
    assert (cert.FLB <= cert.ELB).all() and (cert.ELB <= cert.exact).all()
    assert (cert.exact <= cert.clean).all()
    text = out.read_text()
    assert text.startswith("<!DOCTYPE html>")
    # the one renderer writes src="..." (double quotes)
    assert len(re.findall(r'src="data:image/png;base64,[A-Za-z0-9+/=]{1000,}"', text)) == 2
    assert "<script" not in text and "http://" not in text  # self-contained, no fetches
    # issue 20: readable headers, date, versions, checksums, conclusion, limitations
    for needle in ("Admission-rate gap, after", "Accuracy under attack (exact)", "created 20",
                   "Environment", "scikit-learn", "sha256", "Limitations", "Findings"):
        assert needle in text, needle
    for code_name in ("rate_in", "fresh_margin", "sent to brute force</th>"):
        assert code_name not in text
    assert not re.search(r"\d\.\d+e[-+]\d", re.sub(r"base64,[^\"]+", "", text))  # no 1e-17
    # the mixing row says what happened: scores reordered, no decision changed
    mixing = shuffle[shuffle.attack == "Mixing p=0.8"].iloc[0]
    if mixing["DP difference after"] == mixing["DP difference before"]:
        assert mixing["decisions changed"] == 0 and mixing["scores changed"] > 0
        assert "admits the same applicants" in report.sections[0].headline
    # FLB/ELB at 0% is explained, not shown as "certify 0.000"
    assert "certify 0.000" not in report.sections[1].headline
    doc = report.to_dict()
    from fairlens.report import validate_document
    validate_document(doc)
    assert doc["kind"] == "tour" and len(doc["data"]["datasets"]) == 2
    # the conclusion states the results, not only that the analyses ran
    assert "exact Shapley value of Research stayed zero" in doc["verdict"]["sentence"]
    assert "% accuracy against attackers changing" in doc["verdict"]["sentence"]
    assert all(len(d["sha256"]) == 64 for d in doc["data"]["datasets"])
    assert all(f["width_px"] >= 1000 for s in doc["sections"] for f in s["figures"])


def test_unknown_section():
    with pytest.raises(ValueError, match="unknown tour sections \\['nope'\\]"):
        tour.run_tour(only=["nope"], progress=False)


def test_cli_quick_tour(tmp_path, no_data_home):
    """`python -m fairlens tour --quick` as a newcomer runs it: exit 0, table, report."""
    out = tmp_path / "tour.html"
    proc = subprocess.run(
        [sys.executable, "-m", "fairlens", "tour", "--quick", "--no-progress", "--out",
         str(out)], capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    for title in ("Shuffling attacks", "MAFT", "TestSGD", "Certified accuracy"):
        assert title in proc.stdout
    assert "report written to" in proc.stdout
    assert out.stat().st_size > 20_000


def test_cli_usage():
    proc = subprocess.run([sys.executable, "-m", "fairlens"], capture_output=True, text=True)
    assert proc.returncode == 2 and "tour" in proc.stdout
