"""`fairlens audit`: every bad input is one line on stderr and exit code 2, before any analysis.

Each case below is refused before the audit engine is called: ``no_audit`` makes any call of
``fairlens.audit.audit`` a test failure.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import joblib
import pytest

from fairlens import cli
from tests._support.audit_cli import make_model, make_table, write_files


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    pytest.importorskip("skops")
    return write_files(tmp_path_factory.mktemp("cli"))


@pytest.fixture
def no_audit(monkeypatch):
    import fairlens.audit as audit_pkg

    def boom(*args, **kwargs):
        raise AssertionError("the audit ran before the input was validated")

    monkeypatch.setattr(audit_pkg, "audit", boom, raising=False)


def _argv(files, tmp_path, **changes):
    table, model = files
    args = {"--data": str(table), "--model": str(model), "--target": "approved",
            "--favourable": "yes", "--protected": ["sex"], "--out": str(tmp_path / "r.html")}
    args.update(changes)
    argv = ["audit", "--no-progress"]
    for k, v in args.items():
        if v is None:
            continue
        argv += [k, *v] if isinstance(v, list) else [k, v]
    return argv


def _refused(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err  # one clear line
    assert lines[0].startswith("fairlens audit: error: ")
    return lines[0]


def test_missing_data_file(files, tmp_path, capsys, no_audit):
    line = _refused(_argv(files, tmp_path, **{"--data": str(tmp_path / "nope.csv")}), capsys)
    assert "--data" in line and "does not exist" in line and "nope.csv" in line


def test_data_is_a_folder(files, tmp_path, capsys, no_audit):
    line = _refused(_argv(files, tmp_path, **{"--data": str(tmp_path)}), capsys)
    assert "--data" in line and "is a folder" in line


@pytest.mark.parametrize("name, content, words", [
    ("table.xlsx", b"PK\x03\x04", "neither .csv nor .parquet"),
    ("table.csv", b"\xff\xfe\x00\x81\x00garbage\x00\x9f", "--data"),
    ("table.parquet", b"sex,approved\nmale,yes\n", "cannot be read as Parquet"),
    ("table.csv", b"", "cannot be read as CSV"),
])
def test_wrong_format_data(files, tmp_path, capsys, no_audit, name, content, words):
    bad = tmp_path / name
    bad.write_bytes(content)
    line = _refused(_argv(files, tmp_path, **{"--data": str(bad)}), capsys)
    assert words in line and name in line


def test_target_not_binary(files, tmp_path, capsys, no_audit):
    line = _refused(_argv(files, tmp_path, **{"--target": "age", "--favourable": "30"}), capsys)
    assert "--target" in line and "must be binary" in line


def test_target_absent(files, tmp_path, capsys, no_audit):
    line = _refused(_argv(files, tmp_path, **{"--target": "outcome"}), capsys)
    assert "--target" in line and "'outcome' is not a column" in line


def test_favourable_does_not_occur(files, tmp_path, capsys, no_audit):
    line = _refused(_argv(files, tmp_path, **{"--favourable": "approved"}), capsys)
    assert "--favourable" in line and "does not occur" in line and "'yes'" in line


def test_protected_absent(files, tmp_path, capsys, no_audit):
    line = _refused(_argv(files, tmp_path, **{"--protected": ["sex", "race"]}), capsys)
    assert "--protected" in line and "'race'" in line and "sex" not in line.split("columns:")[0]


def test_model_feature_names_do_not_match(files, tmp_path, capsys, no_audit):
    import skops.io as sio

    frame = make_table()
    frame["region"] = "north"
    other = tmp_path / "other.skops"
    sio.dump(make_model(frame), other)
    line = _refused(_argv(files, tmp_path, **{"--model": str(other)}), capsys)
    assert "--model" in line and "'region'" in line and "does not have" in line


def test_pickle_refused_without_trust(files, tmp_path, capsys, no_audit):
    pkl = tmp_path / "model.joblib"
    joblib.dump(make_model(make_table()), pkl)
    line = _refused(_argv(files, tmp_path, **{"--model": str(pkl)}), capsys)
    assert "--trust-pickle" in line and "runs any code" in line


def test_unknown_model_format(files, tmp_path, capsys, no_audit):
    odd = tmp_path / "model.onnx"
    odd.write_bytes(b"\x08\x01")
    line = _refused(_argv(files, tmp_path, **{"--model": str(odd)}), capsys)
    assert "unknown extension" in line


def test_corrupt_skops_file(files, tmp_path, capsys, no_audit):
    bad = tmp_path / "broken.skops"
    bad.write_bytes(b"not a zip file")
    line = _refused(_argv(files, tmp_path, **{"--model": str(bad)}), capsys)
    assert "--model" in line and "broken.skops" in line


def test_xgboost_and_lightgbm_files_that_are_not_models(files, tmp_path, capsys, no_audit):
    pytest.importorskip("xgboost")
    pytest.importorskip("lightgbm")
    for name in ("model.json", "model.txt"):
        bad = tmp_path / name
        bad.write_text("{not a model")
        line = _refused(_argv(files, tmp_path, **{"--model": str(bad)}), capsys)
        assert "--model" in line and name in line


@pytest.mark.parametrize("out, words", [
    ("missing/r.html", "does not exist"),
    ("r.txt", "extension '.txt'"),
    ("/proc/r.html", "cannot be written"),
    ("/dev/full", "--out"),
])
def test_output_that_cannot_be_written_is_checked_first(files, tmp_path, capsys, no_audit, out,
                                                        words):
    if out.startswith("/proc") and not Path("/proc/self").exists():
        pytest.skip("no /proc")
    target = out if out.startswith("/") else str(tmp_path / out)
    # the data file is missing too: the output is checked first, before any file is read
    line = _refused(_argv(files, tmp_path, **{"--out": target,
                                               "--data": str(tmp_path / "absent.csv")}), capsys)
    assert words in line and "--out" in line


def test_json_output_checked(files, tmp_path, capsys, no_audit):
    line = _refused(_argv(files, tmp_path, **{"--json": str(tmp_path / "r.html")}), capsys)
    assert "--json" in line and ".json" in line


@pytest.mark.parametrize("gate", ["demographic_parity_difference>>0.1", "nonsense>0.1", ","])
def test_unreadable_gate(files, tmp_path, capsys, no_audit, gate):
    import fairlens.audit as audit_pkg

    if not hasattr(audit_pkg, "parse_fail_on"):
        pytest.skip("the audit engine (fairlens.audit.parse_fail_on) is not in this tree")
    line = _refused(_argv(files, tmp_path, **{"--fail-on": gate}), capsys)
    assert "--fail-on" in line


@pytest.mark.parametrize("extra, words", [
    ({"--random-state": "-1"}, "--random-state"),
    ({"--random-state": str(2**40)}, "--random-state"),
    ({"--time-limit": "0"}, "--time-limit"),
    ({"--time-budget": "nan"}, "--time-budget"),
    ({"--checks": ["group_fairness", "magic"]}, "--checks"),
])
def test_bad_run_options(files, tmp_path, capsys, no_audit, extra, words):
    line = _refused(_argv(files, tmp_path, **extra), capsys)
    assert words in line


def test_missing_required_option_is_one_line(capsys):
    line = _refused(["audit", "--data", "x.csv"], capsys)
    assert "required" in line


def test_subprocess_pickle_refusal(files, tmp_path):
    """As a user sees it: exit code 2, one line on stderr, no report written."""
    pkl = tmp_path / "model.pkl"
    joblib.dump(make_model(make_table()), pkl)
    proc = subprocess.run([sys.executable, "-m", "fairlens", *_argv(
        files, tmp_path, **{"--model": str(pkl)})], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "--trust-pickle" in proc.stderr
    assert not (tmp_path / "r.html").exists()


def test_report_never_overwrites_the_input(files, tmp_path, capsys, no_audit):
    table, model = files
    before = table.read_bytes()
    html_copy = tmp_path / "table.html"
    html_copy.write_bytes(before)
    line = _refused(_argv(files, tmp_path, **{"--data": str(html_copy),
                                               "--out": str(html_copy)}), capsys)
    assert "--out" in line and "would overwrite" in line
    assert html_copy.read_bytes() == before
