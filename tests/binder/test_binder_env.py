"""The Binder environment, as repo2docker's pip path builds it from ``binder/``.

Two levels, both opt-in because they need the package registry (every other test is offline):

Offline, always: ``binder/requirements.txt`` pins every package exactly (``binder/lock.py``
writes it from ``binder/requirements.in``), within ``requirements.in`` and pyproject's bounds, and
holds no course-building tool (otter-grader, Sphinx, Playwright...).

``FAIRLENS_BINDER_TEST=1`` (what ``.ci/run`` runs, last, in its own stage): **resolve, don't
rebuild.** ``pip install --dry-run --ignore-installed --report`` resolves
``binder/requirements.txt`` from the repository root against PyPI, exactly as repo2docker's
``pip install -r binder/requirements.txt`` would, reusing the pip cache; the test then checks the
resolved set: fairlens itself (from this checkout, with its ``lab`` extra), JupyterLab 4 and
ipywidgets 8, every runtime dependency of ``pyproject.toml`` present and within its bounds, the
Python of ``binder/runtime.txt`` accepted by ``requires-python``, and ``binder/postBuild`` /
``binder/start`` executable and keeping numba's cache in a writable folder. That the package then
*works* on bundled data without a mirror is what the offline notebook stage shows.

``FAIRLENS_BINDER_TEST=full``: additionally builds a fresh virtual environment (no system
packages) from ``binder/requirements.txt``, imports fairlens there and runs tutorial 04 in
reduced mode with that environment's kernel and no data mirror (several minutes to ~20 minutes
on a cold cache).
"""
import json
import os
import re
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tomllib

REPO = Path(__file__).resolve().parents[2]
LEVEL = os.environ.get("FAIRLENS_BINDER_TEST", "")

pytestmark = [pytest.mark.slow]

#: course-building tools that must not be in the student image (issue 35)
COURSE_TOOLS = {"otter-grader", "sphinx", "pydata-sphinx-theme", "myst-nb", "myst-parser", "playwright",
                "pytest", "nbmake", "ruff", "numpydoc", "voila"}


def _pins():
    pins = {}
    for line in (REPO / "binder" / "requirements.txt").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#") or line.startswith("-e "):
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;=<>!~]+)", line)
        assert m, f"binder/requirements.txt: {line!r} is not an exact pin (name==version); run binder/lock.py"
        pins[_canon(m.group(1))] = m.group(2)
    return pins


def test_binder_environment_is_pinned_and_has_no_course_tools():
    """Offline: every package of binder/requirements.txt is pinned exactly (a rebuild on the day of
    class installs what was tested), the pins satisfy binder/requirements.in and pyproject's
    bounds, and no course-building tool is in the student image."""
    from packaging.requirements import Requirement

    pins = _pins()
    assert len(pins) > 50, "binder/requirements.txt should pin the whole environment (binder/lock.py)"
    assert not COURSE_TOOLS & set(pins), f"course-building tools in the student image: {COURSE_TOOLS & set(pins)}"
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = [line for line in (REPO / "binder" / "requirements.in").read_text().splitlines()
              if line.strip() and not line.startswith(("#", "-e "))]
    for spec in wanted + project["dependencies"] + project["optional-dependencies"]["lab"]:
        req = Requirement(spec)
        name = _canon(req.name)
        assert name in pins, f"{req.name} is not pinned in binder/requirements.txt (run binder/lock.py)"
        assert req.specifier.contains(pins[name], prereleases=True), f"{req.name}=={pins[name]} outside {req.specifier}"


NEEDS_REGISTRY = pytest.mark.skipif(
    LEVEL not in ("1", "full"), reason="needs the package registry: set FAIRLENS_BINDER_TEST=1 (resolve, "
    ".ci/run does) or FAIRLENS_BINDER_TEST=full (build and run)")


def _run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert proc.returncode == 0, f"{cmd} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return proc


def _registry_env():
    # the test suite's offline guard is for fairlens; pip here must reach the registry
    env = dict(os.environ)
    for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        if env.get(k, "").startswith("http://127.0.0.1:9"):
            env.pop(k)
    return env


def _canon(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def test_binder_files_are_consistent():
    from packaging.specifiers import SpecifierSet

    runtime = (REPO / "binder" / "runtime.txt").read_text().strip()
    assert re.fullmatch(r"python-3\.\d+", runtime), f"binder/runtime.txt must pin python-3.X, got {runtime!r}"
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert SpecifierSet(project["requires-python"]).contains(runtime.removeprefix("python-") + ".0"), (
        f"binder/runtime.txt ({runtime}) is outside requires-python {project['requires-python']}")
    for name in ("postBuild", "start"):
        path = REPO / "binder" / name
        assert path.stat().st_mode & stat.S_IXUSR, f"binder/{name} must be executable"
        assert "NUMBA_CACHE_DIR" in path.read_text() or "cache/numba" in path.read_text()
    reqs = (REPO / "binder" / "requirements.txt").read_text()
    assert re.search(r"^-e \.\[lab\]", reqs, re.M), "binder/requirements.txt must install this checkout (-e .[lab])"


@NEEDS_REGISTRY
@pytest.mark.network
def test_binder_requirements_resolve(tmp_path):
    from packaging.requirements import Requirement

    report = tmp_path / "report.json"
    t = time.perf_counter()
    _run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
          "--report", str(report), "-r", "binder/requirements.txt"], cwd=REPO, env=_registry_env(),
         timeout=900)
    print(f"binder resolve: {time.perf_counter() - t:.0f} s")
    resolved = {_canon(item["metadata"]["name"]): item["metadata"]["version"]
                for item in json.loads(report.read_text())["install"]}
    assert "fairlens-lab" in resolved, sorted(resolved)
    assert resolved["jupyterlab"].startswith("4."), resolved["jupyterlab"]
    assert resolved["ipywidgets"].startswith("8."), resolved["ipywidgets"]
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    for spec in project["dependencies"] + project["optional-dependencies"]["lab"]:
        req = Requirement(spec)
        name = _canon(req.name)
        assert name in resolved, f"{req.name} (a dependency of fairlens) is not in the Binder environment"
        assert req.specifier.contains(resolved[name], prereleases=True), (
            f"Binder resolves {req.name} {resolved[name]}, outside {req.specifier}")


@pytest.mark.network
@pytest.mark.skipif(LEVEL != "full", reason="full Binder build: FAIRLENS_BINDER_TEST=full")
def test_binder_files_build_a_working_environment(tmp_path):
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    py = str(venv / "bin" / "python")
    t = time.perf_counter()
    _run([py, "-m", "pip", "install", "--quiet", "-r", "binder/requirements.txt"], cwd=REPO,
         env=_registry_env(), timeout=1800)
    print(f"binder install: {time.perf_counter() - t:.0f} s")
    out = _run([py, "-c", "import fairlens, jupyterlab, ipywidgets; print(fairlens.__version__, "
                "jupyterlab.__version__, ipywidgets.__version__)"]).stdout.split()
    assert out[1].startswith("4.") and out[2].startswith("8.")
    env = {**os.environ, "FAIRLENS_REDUCED": "1", "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
           "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("FAIRLENS_DATA_HOME", None)  # Binder has no data mirror: bundled files only
    _run([py, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
          "--ExecutePreprocessor.timeout=1800", "--ExecutePreprocessor.startup_timeout=600",
          "--output-dir", str(tmp_path), str(REPO / "tutorials" / "04_certify_forests.ipynb")],
         env=env, timeout=2400)
    assert (tmp_path / "04_certify_forests.ipynb").stat().st_size > 10_000
