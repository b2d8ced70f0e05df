"""Recovery from an interrupted first compilation (issue: Ctrl-C or a timeout while numba compiles
the kernels must leave every kernel usable). A child process with an empty numba cache is
interrupted at its third compilation (``KeyboardInterrupt`` raised from numba's compile event,
deterministically), then uses the slice again; a second child reads the cache the first one left.
Both must give the results this process gives."""
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from tests._support import REPO, TESTS

CHILD = TESTS / "_interrupted_compile_child.py"


def _child(slice_, phase, cache):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    env.pop("NUMBA_DISABLE_JIT", None)
    proc = subprocess.run([sys.executable, str(CHILD), slice_, "3", phase], env=env, capture_output=True,
                          text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


@pytest.fixture(scope="module")
def probes():
    spec = importlib.util.spec_from_file_location("_interrupted_compile_child", CHILD)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.PROBES


@pytest.mark.parametrize("slice_", ["shuffle", "testsgd"])
def test_an_interrupted_first_compile_leaves_the_kernels_usable(slice_, probes, tmp_path):
    if os.environ.get("NUMBA_DISABLE_JIT") == "1":
        pytest.skip("nothing is compiled under NUMBA_DISABLE_JIT=1")
    first = _child(slice_, "interrupt", tmp_path)
    assert first["interrupted"] and first["compiles"] == 3, first   # the interrupt really happened
    again = _child(slice_, "again", tmp_path)                        # what the interrupted run cached
    expected = json.loads(json.dumps(probes[slice_]()))
    assert first["probe"] == expected
    assert again["probe"] == expected
