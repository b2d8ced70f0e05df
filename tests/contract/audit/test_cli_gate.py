"""`fairlens audit` end to end (subprocess): exit 0 when the gate passes, 1 when it fails; the
report files; `fairlens example` writes a table and a model the audit accepts."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests._support.audit_cli import write_files

pytest.importorskip("skops")
audit_mod = pytest.importorskip("fairlens.audit")
if not hasattr(audit_mod, "audit"):
    pytest.skip("the audit engine (fairlens.audit.audit) is not in this tree",
                allow_module_level=True)


def _run(argv, cwd):
    return subprocess.run([sys.executable, "-m", "fairlens", *argv], capture_output=True,
                          text=True, timeout=900, cwd=cwd)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return write_files(tmp_path_factory.mktemp("gate"))


@pytest.mark.parametrize("gate, code", [("demographic_parity_difference>0.99", 0),
                                        ("demographic_parity_difference>0.01", 1)])
def test_gate_exit_codes(files, tmp_path, gate, code):
    table, model = files
    out, doc = tmp_path / "audit.html", tmp_path / "audit.json"
    proc = _run(["audit", "--data", str(table), "--model", str(model), "--target", "approved",
                 "--favourable", "yes", "--protected", "sex", "--checks", "group_fairness",
                 "--out", str(out), "--json", str(doc), "--fail-on", gate, "--no-progress",
                 "--random-state", "3"], tmp_path)
    assert proc.returncode == code, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    report = json.loads(doc.read_text())
    assert report["schema"] == "fairlens.report/2" and report["kind"] == "audit"
    assert report["verdict"]["passed"] is (code == 0)
    assert report["data"]["source"] == "table.csv" and len(report["data"]["sha256"]) == 64
    assert report["model"]["source"] == "model.skops" and len(report["model"]["sha256"]) == 64
    assert report["parameters"]["random_state"] == 3
    # the file hashes are those of the files
    import hashlib
    assert report["model"]["sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()
    assert report["data"]["sha256"] == hashlib.sha256(table.read_bytes()).hexdigest()
    assert f"gate {'passed' if code == 0 else 'FAILED'}" in proc.stdout


def test_pickle_accepted_with_trust(files, tmp_path):
    import joblib
    import skops.io as sio

    table, model = files
    pkl = tmp_path / "model.joblib"
    joblib.dump(sio.load(model, trusted=sio.get_untrusted_types(file=model)), pkl)
    proc = _run(["audit", "--data", str(table), "--model", str(pkl), "--trust-pickle",
                 "--target", "approved", "--favourable", "yes", "--protected", "sex",
                 "--checks", "group_fairness", "--out", str(tmp_path / "a.html"),
                 "--no-progress"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_example_then_audit(tmp_path):
    """The README's two commands, on a fresh folder, offline."""
    proc = _run(["example", str(tmp_path / "ex")], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    table, model = tmp_path / "ex" / "example.csv", tmp_path / "ex" / "model.skops"
    assert table.is_file() and model.is_file()
    assert "fairlens audit --data" in proc.stdout
    proc = _run(["audit", "--data", str(table), "--model", str(model), "--target", "income",
                 "--favourable", ">50K", "--protected", "sex", "race",
                 "--checks", "group_fairness", "--out", str(tmp_path / "r.html"),
                 "--fail-on", "demographic_parity_difference>0.5", "--no-progress"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "r.html").stat().st_size > 5_000


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_boosted_model_files(tmp_path, library):
    """An XGBoost JSON model and a LightGBM text model, fitted on a numeric table."""
    lib = pytest.importorskip(library)
    from tests._support.audit_cli import make_table

    t = make_table()
    t["sex"] = (t["sex"] == "male").astype(int)
    t["approved"] = (t["approved"] == "yes").astype(int)
    table = tmp_path / "t.csv"
    t.to_csv(table, index=False)
    X, y = t.drop(columns="approved"), t["approved"]
    if library == "xgboost":
        model = tmp_path / "m.json"
        lib.XGBClassifier(n_estimators=20, max_depth=3).fit(X, y).save_model(model)
    else:
        model = tmp_path / "m.txt"
        lib.LGBMClassifier(n_estimators=20, verbose=-1).fit(X, y).booster_.save_model(
            str(model))
    proc = _run(["audit", "--data", str(table), "--model", str(model), "--target", "approved",
                 "--favourable", "1", "--protected", "sex", "--checks", "group_fairness", "robustness",
                 "--out", str(tmp_path / "r.html"), "--json", str(tmp_path / "r.json"), "--no-progress"],
                tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # the model file is a tree ensemble: its robustness is certified, never "not applicable"
    import json

    doc = json.loads((tmp_path / "r.json").read_text())
    rob = [s for s in doc["sections"] if s["id"] == "robustness"][0]
    assert rob["status"] in ("complete", "cut short"), rob
    # the same model on a table that lacks one of its columns: refused by name
    t2 = t.rename(columns={"income": "salary"})
    t2.to_csv(tmp_path / "t2.csv", index=False)
    proc = _run(["audit", "--data", str(tmp_path / "t2.csv"), "--model", str(model),
                 "--target", "approved", "--favourable", "1", "--protected", "sex",
                 "--out", str(tmp_path / "r2.html"), "--no-progress"], tmp_path)
    assert proc.returncode == 2 and "'income'" in proc.stderr, proc.stderr[-2000:]


def test_repeated_fail_on_flags_combine_and_the_burden_is_named(files, tmp_path):
    """Issue #33: a second --fail-on replaced the first (exit 0 with a 13.8 pp gap); now both are judged."""
    table, model = files
    doc = tmp_path / "r.json"
    proc = _run(["audit", "--data", str(table), "--model", str(model), "--target", "approved",
                 "--favourable", "yes", "--protected", "sex", "--checks", "group_fairness",
                 "--out", str(tmp_path / "r.html"), "--json", str(doc), "--no-progress",
                 "--fail-on", "demographic_parity_difference>0.1", "--fail-on", "disparate_impact<0.01"], tmp_path)
    report = json.loads(doc.read_text())
    assert report["verdict"]["fail_on"] == ["demographic_parity_difference>0.1", "disparate_impact<0.01"]
    assert report["verdict"]["burden"] == "violation" and "Holm" in report["verdict"]["rule"]
    gated = {f["measure"] for f in report["findings"] if f.get("decided_by") == "gate"}
    assert gated == {"demographic_parity_difference", "disparate_impact"}
    dpd = next(f for f in report["findings"] if f["measure"] == "demographic_parity_difference")
    assert dpd["ci_low"] > 0.1 and dpd["verdict"] == "fail"      # the data show the gap exceeds 10 pp
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert "gate FAILED (burden of proof: violation)" in proc.stdout
    # the compliance burden: a disparate impact of 0.01 is far away, but the gap fails either way
    proc = _run(["audit", "--data", str(table), "--model", str(model), "--target", "approved",
                 "--favourable", "yes", "--protected", "sex", "--checks", "group_fairness",
                 "--out", str(tmp_path / "r.html"), "--no-progress", "--burden", "compliance",
                 "--fail-on", "disparate_impact<0.01"], tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:]


def test_a_gate_on_a_measure_not_computed_exits_3_and_reports_keep_the_umask(files, tmp_path):
    import os
    import stat

    table, model = files
    old = os.umask(0o022)
    try:
        proc = _run(["audit", "--data", str(table), "--model", str(model), "--target", "approved",
                     "--favourable", "yes", "--protected", "sex", "--checks", "group_fairness",
                     "--out", str(tmp_path / "r.html"), "--json", str(tmp_path / "r.json"), "--no-progress",
                     "--fail-on", "individual_discrimination_rate>0.05"], tmp_path)
    finally:
        os.umask(old)
    assert proc.returncode == 3, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "gate NOT CHECKED" in proc.stdout
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["verdict"]["passed"] is None and doc["verdict"]["status"] == "not computed"
    for name in ("r.html", "r.json"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644
