"""The certify kernels take the vote rule as an argument and are still cached on disk: a second fresh
process loads every kernel it calls from numba's cache (no compilation) and the cache does not grow.

A numba function taking another jitted function as a plain argument is typed by that function
*object* and compiled (and appended to the cache) again in every process; the vote rules are typed
by their name (``fairlens.certify._votes.VoteRuleType``), which this test guards.
"""
import json
import os
import subprocess
import sys

import pytest

from tests.conftest import JIT_DISABLED

CODE = """
import json
import numpy as np
from sklearn.ensemble import RandomForestClassifier
from fairlens.certify import certify, _bounds, _search, _votes, _walk
rng = np.random.default_rng(0)
X = np.round(rng.normal(size=(80, 4)), 2); y = (X[:, 0] + X[:, 1] > 0).astype(int)
rf = RandomForestClassifier(5, max_depth=3, random_state=0).fit(X, y)
certify(rf, X[:20], y[:20], budget=2, missing=False)  # the soft vote (one rule: compiling is slow)
out = {}
for mod in (_bounds, _search, _walk, _votes):
    for name in mod.__all__:
        k = getattr(mod, name)
        if hasattr(k, "stats"):
            out[mod.__name__ + "." + name] = [len(k.stats.cache_hits), len(k.stats.cache_misses)]
print(json.dumps(out))
"""


@pytest.mark.slow
@pytest.mark.skipif(JIT_DISABLED, reason="tests numba's on-disk cache")
def test_a_second_process_loads_every_certify_kernel_from_the_cache(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("NUMBA_DISABLE_JIT", None)
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", CODE], env=env, check=True, capture_output=True, text=True)
        files = sorted(p.name for p in (tmp_path / "cache").rglob("*.nb*"))
        runs.append((json.loads(out.stdout.strip().splitlines()[-1]), files))
    (first, files1), (second, files2) = runs
    for name in ("fairlens.certify._bounds.flb_search", "fairlens.certify._bounds.elb_search",
                 "fairlens.certify._search.brute_search"):
        assert first[name][1] >= 1, (name, first[name])  # compiled for the rule
        assert second[name] == [1, 0], (name, second[name])  # loaded: a hit, no compilation
    assert all(miss == 0 for _, miss in second.values()), second
    assert files2 == files1  # nothing compiled again, nothing appended
