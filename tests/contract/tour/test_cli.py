"""The command line: --version, and --out checked before any analysis runs (issue 12)."""
import subprocess
import sys

import pytest

import fairlens
from fairlens import cli
from tests._support import REPO


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


def test_cli_refusal_in_a_subprocess(tmp_path):
    """As a user sees it: exit code 2, one line on stderr, nothing created, fast."""
    target = tmp_path / "missing" / "x.html"
    proc = subprocess.run([sys.executable, "-m", "fairlens", "tour", "--out", str(target)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "does not exist" in proc.stderr
    assert proc.stdout == ""
    assert not target.parent.exists()


def test_default_report_name_is_gitignored():
    root = REPO
    gitignore = root / ".gitignore"
    if not gitignore.is_file():
        pytest.skip("not a source checkout")
    patterns = [ln.strip() for ln in gitignore.read_text().splitlines()]
    assert "fairlens-tour.html" in patterns or "/fairlens-tour.html" in patterns


def test_subprocess_dev_full_and_seed(tmp_path):
    for argv in (["--out", "/dev/full"], ["--seed", "-1"], ["--out", "r.txt"]):
        proc = subprocess.run([sys.executable, "-m", "fairlens", "tour", "--quick", *argv],
                              capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr
        assert proc.stdout == ""
