"""First-call (JIT compilation) cost of each slice's numba kernels, cold and warm.

Each slice runs a small representative job in a fresh Python process:
* cold: an empty ``NUMBA_CACHE_DIR`` (what a new Binder session or CI pays once);
* warm: a second process on the same cache (what every later session pays).
The difference between the two is compilation; the warm figure is the real work plus
loading compiled code from the cache.

Run: ``python benchmarks/numba_first_call.py``
"""
import os
import subprocess
import sys
import tempfile
import time

JOBS = {
    "shuffle": """
import numpy as np
from fairlens.shuffle import shuffle_scores
s = np.random.default_rng(0).random(1000); g = np.arange(1000) % 2 == 0
for a in ("dominance", "mixing", "swapping"):
    shuffle_scores(s, g, a, random_state=0)
""",
    "maft": """
import warnings; warnings.simplefilter("ignore")
from sklearn.linear_model import LogisticRegression
from fairlens.datasets import load_adult
from fairlens.maft import MAFT
d = load_adult(encoding="benchmark")
m = LogisticRegression(max_iter=200).fit(d.X[:2000], d.y[:2000])
MAFT(m, d, protected=["sex"], n_seeds=4, n_local=4, random_state=0).run()
""",
    "testsgd": """
from fairlens.datasets import load_adult
from fairlens.testsgd import frequent_rule_sets
frequent_rule_sets(load_adult(), ["sex", "race", "age"], 0.05)
""",
    "certify": """
from sklearn.ensemble import RandomForestClassifier
from fairlens.datasets import load_breast_cancer
from fairlens.certify import certify
d = load_breast_cancer()
rf = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(d.X, d.y)
certify(rf, d.X[:40], d.y[:40], budget=2, method="cascade")
""",
}


def run(code, cache):
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    env.pop("FAIRLENS_DATA_HOME", None)  # bundled data only
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    return time.perf_counter() - t


def main():
    base = [sys.executable, "-c", "import fairlens.datasets, sklearn"]
    t = time.perf_counter()
    subprocess.run(base, check=True)
    startup = time.perf_counter() - t
    print(f"python + fairlens.datasets + sklearn import: {startup:.2f} s (included below)")
    print(f"{'slice':8s} {'cold s':>8s} {'warm s':>8s} {'compile s':>10s} {'cache files':>12s}")
    for name, code in JOBS.items():
        with tempfile.TemporaryDirectory() as cache:
            cold = run(code, cache)
            warm = run(code, cache)
            n = sum(len(files) for _, _, files in os.walk(cache))
        print(f"{name:8s} {cold:8.2f} {warm:8.2f} {cold - warm:10.2f} {n:12d}")


if __name__ == "__main__":
    main()
