"""The command line: --version, and --out checked before any analysis runs (issue 12)."""
from pathlib import Path

import pytest

from fairlens import cli, tour


@pytest.fixture
def no_analysis(monkeypatch):
    """Any analysis that starts is a failure: the CLI must refuse first."""
    def boom(*args, **kwargs):
        raise AssertionError("an analysis ran before --out was validated")

    monkeypatch.setattr("fairlens._registry.resolve", lambda ref: boom)
    monkeypatch.setattr(tour, "run_tour", boom)


def _refused(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err  # one clear line
    assert lines[0].startswith("fairlens tour: error: --out")
    return lines[0]


def test_out_in_missing_folder_is_refused_and_not_created(tmp_path, capsys, no_analysis):
    target = tmp_path / "nonexistent" / "dir" / "x.html"
    line = _refused(["tour", "--quick", "--out", str(target)], capsys)
    assert "does not exist" in line and str(target.parent) in line
    assert not (tmp_path / "nonexistent").exists()


def test_out_that_is_a_directory_is_refused(tmp_path, capsys, no_analysis):
    line = _refused(["tour", "--quick", "--out", str(tmp_path)], capsys)
    assert "is a directory" in line


def test_out_under_a_file_is_refused(tmp_path, capsys, no_analysis):
    a_file = tmp_path / "report.txt"
    a_file.write_text("not a folder")
    line = _refused(["tour", "--quick", "--out", str(a_file / "sub" / "x.html")], capsys)
    assert "which is a file" in line and str(a_file) in line


def test_run_tour_checks_out_before_running(tmp_path, monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("analysis ran")

    monkeypatch.setattr("fairlens._registry.resolve", lambda ref: boom)
    with pytest.raises(ValueError, match="does not exist"):
        tour.run_tour(out=tmp_path / "no" / "r.html", progress=False)
    with pytest.raises(ValueError, match="is a directory"):
        tour.run_tour(out=tmp_path, progress=False)
    with pytest.raises(TypeError, match="out must be a file path"):
        tour.run_tour(out=3, progress=False)


# ---------------------------------------------------------------- issue 20 / issue 22
def _one_line_exit2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("seed", ["-1", str(2**40), "2**40", "x"])
def test_bad_seed_refused_before_any_analysis(seed, capsys, no_analysis):
    line = _one_line_exit2(["tour", "--quick", "--seed", seed], capsys)
    assert "--seed" in line and "[0, 2**32 - 1]" in line


def test_out_with_wrong_extension_refused(tmp_path, capsys, no_analysis):
    line = _one_line_exit2(["tour", "--out", str(tmp_path / "report.txt")], capsys)
    assert "report.txt" in line and ".html" in line and ".json" in line
    assert not (tmp_path / "report.txt").exists()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_out_on_a_device_refused(capsys, no_analysis):
    line = _one_line_exit2(["tour", "--out", "/dev/full"], capsys)
    assert "/dev/full" in line


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="no /proc")
def test_out_in_proc_refused(capsys, no_analysis):
    line = _one_line_exit2(["tour", "--out", "/proc/r.html"], capsys)
    assert "/proc/r.html" in line and "cannot be written" in line


def test_json_out_checked_before_any_analysis(tmp_path, capsys, no_analysis):
    line = _one_line_exit2(["tour", "--out", str(tmp_path / "r.html"), "--json",
                            str(tmp_path / "r.html")], capsys)
    assert "--json" in line and ".json" in line
    line = _one_line_exit2(["tour", "--json", str(tmp_path / "missing" / "r.json")], capsys)
    assert "--json" in line and "does not exist" in line


def test_run_tour_refuses_bad_seed_and_extension(tmp_path, monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("analysis ran")

    monkeypatch.setattr("fairlens._registry.resolve", lambda ref: boom)
    with pytest.raises(ValueError, match=r"random_state must be an int in \[0, 2\*\*32 - 1\]"):
        tour.run_tour(random_state=2**40, progress=False)
    with pytest.raises(TypeError, match="random_state"):
        tour.run_tour(random_state=1.5, progress=False)
    with pytest.raises(ValueError, match="extension '.txt'"):
        tour.run_tour(out=tmp_path / "r.txt", progress=False)


def test_report_written_by_extension(tmp_path, monkeypatch):
    """--out r.json writes the report document; r.html the page (no analysis needed)."""
    import json

    def tiny(budget, random_state):
        return dict(table=None, figures=[], headline="nothing to see", paragraphs=["p"],
                    dataset="none", params={"random_state": random_state})

    monkeypatch.setattr("fairlens._registry.resolve", lambda ref: tiny)
    report = tour.run_tour(out=tmp_path / "r.json", json_out=tmp_path / "d.json",
                           progress=False, random_state=7, only=["shuffle"])
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["schema"] == "fairlens.report/2" and doc["kind"] == "tour"
    assert doc["parameters"]["random_state"] == 7 and doc["sections"][0]["verdict"] == \
        "nothing to see"
    assert json.loads((tmp_path / "d.json").read_text())["title"] == "fairlens tour"
    report.save(tmp_path / "r.html")
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
