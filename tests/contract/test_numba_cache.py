"""numba's cache goes to NUMBA_CACHE_DIR, so a read-only site-packages works (Binder)."""
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import fairlens
from tests._support import REPO

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


# --- a cache built on one CPU is used on another (Binder: build node vs user pod) -------------
# The subprocess pretends to run on the CPU named in FAKE_CPU (llvmlite's host CPU name and
# features are replaced before numba reads them), compiles or loads the kernels, and prints the
# cache hits and misses of every dispatcher it used, and numba's cache key for this machine.
CROSS_CPU = """
import json, os, sys
import llvmlite.binding as ll
name, feats = os.environ["FAKE_CPU"].split(":")
ll.get_host_cpu_name = lambda: name
ll.get_host_cpu_features = lambda: ll.FeatureMap({f: True for f in feats.split(",") if f})
from numba.core import codegen as cg
from numba.core.registry import cpu_target
key = list(cpu_target.target_context.codegen().magic_tuple())
if os.environ.get("COMPILE") == "1":
    import numpy as np
    from fairlens.shuffle import _kernels as K
    from fairlens.shuffle import shuffle_scores
    s = np.random.default_rng(0).random(50); g = np.arange(50) % 2 == 0
    for attack in ("swapping", "dominance", "mixing"):
        shuffle_scores(s, g, attack, quantile=0.5, random_state=0)
    stats = [(sum(d.stats.cache_hits.values()), sum(d.stats.cache_misses.values()))
             for d in (getattr(K, n) for n in dir(K)) if hasattr(d, "stats")]
    used = [hm for hm in stats if sum(hm)]
    print(json.dumps({"key": key, "hits": sum(h for h, _ in used), "misses": sum(m for _, m in used)}))
else:
    print(json.dumps({"key": key}))
"""


def _run_as(cpu, cache, generic, compile_=True):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "FAKE_CPU": cpu, "COMPILE": "1" if compile_ else "0"}
    env.pop("NUMBA_DISABLE_JIT", None)
    env.pop("NUMBA_CPU_FEATURES", None)
    env.pop("NUMBA_CPU_NAME", None)
    if generic:
        env["NUMBA_CPU_NAME"] = "generic"   # what binder/postBuild and binder/start export
    out = subprocess.run([sys.executable, "-c", CROSS_CPU], env=env, check=True, capture_output=True,
                         text=True, cwd=cache.parent).stdout
    import json

    return json.loads(out.strip().splitlines()[-1])


def test_cache_built_on_one_cpu_loads_on_another_with_the_generic_target(tmp_path):
    """binder/postBuild compiles on the build node; a student's pod has another CPU. With
    NUMBA_CPU_NAME=generic the cache key names no host CPU, so the pod loads every kernel."""
    cache = tmp_path / "numba"
    build = _run_as("skylake-avx512:+avx2,+avx512f,+sse4.2", cache, generic=True)
    assert build["misses"] > 0, build  # it compiled (an empty cache)
    pod = _run_as("znver3:+avx2,+sse4.2,+sha", cache, generic=True)
    assert pod["misses"] == 0 and pod["hits"] > 0, pod   # loaded, nothing compiled
    assert pod["key"] == build["key"] and "generic" in pod["key"]


def test_without_the_generic_target_the_cache_key_names_the_host_cpu(tmp_path):
    """The control: numba's default key holds the host CPU's name and features, so a cache
    warmed on one CPU is a miss on another (the cold start of issue 35)."""
    a = _run_as("skylake-avx512:+avx2,+avx512f", tmp_path / "a", generic=False, compile_=False)
    b = _run_as("znver3:+avx2,+sha", tmp_path / "b", generic=False, compile_=False)
    assert a["key"] != b["key"] and "skylake-avx512" in a["key"] and "znver3" in b["key"]
    g1 = _run_as("skylake-avx512:+avx2,+avx512f", tmp_path / "c", generic=True, compile_=False)
    g2 = _run_as("znver3:+avx2,+sha", tmp_path / "d", generic=True, compile_=False)
    assert g1["key"] == g2["key"]


def test_binder_compiles_and_runs_for_the_generic_cpu():
    repo = REPO
    for name in ("postBuild", "start"):
        text = (repo / "binder" / name).read_text()
        assert 'export NUMBA_CPU_NAME="generic"' in text, f"binder/{name} must export NUMBA_CPU_NAME=generic"
