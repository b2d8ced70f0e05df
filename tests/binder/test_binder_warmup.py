"""binder/postBuild warms numba's cache (issue 22 item 4): after ``binder/warmup.py`` has run
with the notebook server's NUMBA_CACHE_DIR, the start-here notebook's first use of a slice loads
every kernel from the cache and compiles none. Offline (no registry needed)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

# the start-here notebook's shuffle cell, then count what numba compiled vs loaded from the cache
USE = """
import json, numpy as np, matplotlib
matplotlib.use("Agg")
from fairlens.datasets import load_admission
from fairlens.shuffle import ShuffleAttackExplorer
from fairlens.shuffle import _kernels as K
adm = load_admission(version="1")
cols = ["GRE Score", "TOEFL Score", "University Rating", "Research"]
X = adm.X[:, [adm.index_of(c) for c in cols]].copy()
lo, hi = X[:, :3].min(0), X[:, :3].max(0)
X[:, :3] = (X[:, :3] - lo) / (hi - lo)
f = lambda A: np.asarray(A, dtype=float)[:, :3] @ np.full(3, 1 / 3)
w = ShuffleAttackExplorer(f, X, protected="Research", favoured=1, y=adm.y, feature_names=cols, background=False)
for a in ("dominance", "mixing", "swapping"):
    w.controls["attack"].value = a
w.wait()
st = {n: (sum(getattr(K, n).stats.cache_hits.values()), sum(getattr(K, n).stats.cache_misses.values()))
      for n in K.__all__ if hasattr(getattr(K, n), "stats")}
print(json.dumps(st))
"""


def _env(cache):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
           "NUMBA_CACHE_DIR": str(cache), "MPLBACKEND": "Agg",
           "NUMBA_CPU_NAME": "generic", "NUMBA_CPU_FEATURES": ""}  # as binder/postBuild and binder/start
    env.pop("NUMBA_DISABLE_JIT", None)
    env.pop("FAIRLENS_DATA_HOME", None)  # bundled data, as on Binder
    return env


def test_postbuild_runs_the_warmup_with_the_servers_cache_dir():
    post = (REPO / "binder" / "postBuild").read_text()
    start = (REPO / "binder" / "start").read_text()
    assert "python binder/warmup.py" in post
    cache = re.search(r'NUMBA_CACHE_DIR="([^"]+)"', post).group(1)
    assert f'NUMBA_CACHE_DIR="{cache}"' in start  # the same folder at build and at run time
    for var in ('NUMBA_CPU_NAME="generic"', 'NUMBA_CPU_FEATURES=""'):  # and the same CPU target
        assert f"export {var}" in post and f"export {var}" in start
    assert "python binder/student_tree.py" in post  # the image holds the student tree only


def test_student_tree_removes_the_instructor_material(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("student_tree", REPO / "binder" / "student_tree.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    (tmp_path / "exercises" / "instructor" / "x").mkdir(parents=True)
    (tmp_path / "exercises" / "instructor" / "x" / "x.ipynb").write_text("{}")
    (tmp_path / "exercises" / "x").mkdir()
    (tmp_path / "exercises" / "x" / "x.ipynb").write_text("{}")
    (tmp_path / ".git").mkdir()
    removed = mod.apply(tmp_path)
    assert "exercises/instructor" in removed and ".git" in removed
    assert not (tmp_path / "exercises" / "instructor").exists()
    assert (tmp_path / "exercises" / "x" / "x.ipynb").exists()  # the student notebook stays


def test_after_the_warmup_the_notebook_compiles_nothing(tmp_path):
    import json

    cache = tmp_path / "numba"
    subprocess.run([sys.executable, str(REPO / "binder" / "warmup.py"), "shuffle"], env=_env(cache),
                   cwd=tmp_path, check=True, capture_output=True, text=True)
    assert list(cache.rglob("*.nbi")), "the warm-up wrote no cache"
    out = subprocess.run([sys.executable, "-c", USE], env=_env(cache), cwd=tmp_path, check=True,
                         capture_output=True, text=True).stdout
    stats = json.loads(out.strip().splitlines()[-1])
    used = {n: hm for n, hm in stats.items() if sum(hm)}
    assert used, "the notebook's cell called no kernel"
    assert all(misses == 0 for hits, misses in used.values()), used  # every kernel loaded, none compiled
    # and without the warm-up, the same cell compiles (the test can tell the difference)
    cold = subprocess.run([sys.executable, "-c", USE], env=_env(tmp_path / "empty"), cwd=tmp_path, check=True,
                          capture_output=True, text=True).stdout
    assert any(m > 0 for h, m in json.loads(cold.strip().splitlines()[-1]).values())
