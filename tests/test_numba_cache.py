"""numba's cache goes to NUMBA_CACHE_DIR, so a read-only site-packages works (Binder)."""
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import fairlens

CODE = """
import numpy as np
from fairlens.shuffle import shuffle_scores
s = np.random.default_rng(0).random(50); g = np.arange(50) % 2 == 0
out = shuffle_scores(s, g, "swapping", quantile=1.0)
assert sorted(out) == sorted(s)
"""


def test_kernels_cache_outside_a_read_only_package(tmp_path):
    site = tmp_path / "site"
    shutil.copytree(Path(fairlens.__file__).parent, site / "fairlens",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for path in site.rglob("*"):  # read-only, like a system site-packages
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    cache = tmp_path / "numba-cache"
    env = {**os.environ, "PYTHONPATH": str(site), "NUMBA_CACHE_DIR": str(cache),
           "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("NUMBA_DISABLE_JIT", None)
    for _ in range(2):  # compile and write the cache, then load from it
        subprocess.run([sys.executable, "-c", CODE], env=env, check=True, cwd=tmp_path)
    index = list(cache.rglob("*.nbi"))
    assert index, "numba wrote no cache index into NUMBA_CACHE_DIR"
    assert not list((site / "fairlens").rglob("*.nbi")), "cache written into the package"
