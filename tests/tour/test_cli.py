"""The command line: --version, and --out checked before any analysis runs (issue 12)."""
import subprocess
import sys
from pathlib import Path

import pytest

import fairlens
from fairlens import cli, tour


@pytest.fixture
def no_analysis(monkeypatch):
    """Any analysis that starts is a failure: the CLI must refuse first."""
    def boom(*args, **kwargs):
        raise AssertionError("an analysis ran before --out was validated")

    monkeypatch.setattr(tour, "_SECTIONS", [(k, t, boom) for k, t, _ in tour._SECTIONS])
    monkeypatch.setattr(tour, "run_tour", boom)


def test_version_flag_subprocess():
    proc = subprocess.run([sys.executable, "-m", "fairlens", "--version"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"fairlens {fairlens.__version__}"


def test_version_flag_and_subcommand(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0
    assert fairlens.__version__ in capsys.readouterr().out
    assert cli.main(["version"]) == 0
    assert capsys.readouterr().out.strip() == fairlens.__version__


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


def test_cli_refusal_in_a_subprocess(tmp_path):
    """As a user sees it: exit code 2, one line on stderr, nothing created, fast."""
    target = tmp_path / "missing" / "x.html"
    proc = subprocess.run([sys.executable, "-m", "fairlens", "tour", "--out", str(target)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "does not exist" in proc.stderr
    assert proc.stdout == ""
    assert not target.parent.exists()


def test_run_tour_checks_out_before_running(tmp_path, monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("analysis ran")

    monkeypatch.setattr(tour, "_SECTIONS", [(k, t, boom) for k, t, _ in tour._SECTIONS])
    with pytest.raises(ValueError, match="does not exist"):
        tour.run_tour(out=tmp_path / "no" / "r.html", progress=False)
    with pytest.raises(ValueError, match="is a directory"):
        tour.run_tour(out=tmp_path, progress=False)
    with pytest.raises(TypeError, match="out must be a file path"):
        tour.run_tour(out=3, progress=False)


def test_default_report_name_is_gitignored():
    root = Path(__file__).resolve().parents[2]
    gitignore = root / ".gitignore"
    if not gitignore.is_file():
        pytest.skip("not a source checkout")
    patterns = [ln.strip() for ln in gitignore.read_text().splitlines()]
    assert "fairlens-tour.html" in patterns or "/fairlens-tour.html" in patterns
