"""Time the first interaction of each widget of the start-here notebook, in a fresh process.

Run with the environment of a student's pod (``NUMBA_CACHE_DIR`` warmed by ``binder/warmup.py``,
``NUMBA_CPU_NAME=generic``); ``measure.py --widgets`` does that. Prints one JSON line: for each
widget the seconds from the first control change (or button) to the settled views, and the
seconds of TestSGD's *mitigate* with the widget's default amounts. Same data and settings as
``tutorials/00_start_here.ipynb`` (its reduced mode when ``FAIRLENS_REDUCED=1``).
"""
import json
import os
import time
import warnings

import matplotlib

matplotlib.use("Agg")
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402

from fairlens.datasets import load_admission, load_adult, load_breast_cancer  # noqa: E402
from fairlens.models import train_mlp  # noqa: E402

out = {}
REDUCED = os.environ.get("FAIRLENS_REDUCED") == "1"   # as the notebook: Binder runs the full mode


def timed(name, w, action, timeout=1800):
    w.wait(timeout)
    t0 = time.perf_counter()
    action()
    time.sleep(0.05)
    w.wait(timeout)
    out[name] = round(time.perf_counter() - t0, 2)
    if w.last_error:
        out[name + " error"] = w.last_error


from fairlens.shuffle import ShuffleAttackExplorer  # noqa: E402

adm = load_admission(version="1")
cols = ["GRE Score", "TOEFL Score", "University Rating", "Research"]
X = adm.X[:, [adm.index_of(c) for c in cols]].copy()
lo, hi = X[:, :3].min(0), X[:, :3].max(0)
X[:, :3] = (X[:, :3] - lo) / (hi - lo)


def admission_score(A):
    return np.asarray(A, dtype=float)[:, :3] @ np.full(3, 1 / 3)


w = ShuffleAttackExplorer(admission_score, X, protected="Research", favoured=1, y=adm.y, feature_names=cols,
                          threshold=0.66)
timed("ShuffleAttackExplorer: attack -> dominance", w, lambda: setattr(w.controls["attack"], "value", "dominance"))
timed("ShuffleAttackExplorer: quantile -> 0.3", w, lambda: setattr(w.controls["quantile"], "value", 0.3))

from fairlens.maft import MAFTSession  # noqa: E402

census = load_adult(encoding="benchmark")
mlp = train_mlp(census, random_state=0)
k = 20 if REDUCED else 50
s = MAFTSession(mlp, census, protected=["sex"], n_seeds=k, n_local=k)
timed(f"MAFTSession: Start ({k} seeds x {k} local)", s, s.start)

from fairlens.testsgd import RuleSetBrowser, TestSGD  # noqa: E402

people = load_adult()
order = np.random.default_rng(0).permutation(people.n_samples)
n_train = int(0.8 * people.n_samples)
train, test = people.subset(order[:n_train]), people.subset(order[n_train:n_train + 2000])
income_model = train_mlp(train, random_state=0)
report = TestSGD(income_model, train, protected=["sex", "race"] if REDUCED else ["sex", "race", "age"],
                 sample_thr=200 if REDUCED else 500, max_samples=2000 if REDUCED else 10000,
                 random_state=0, binning="round").run()
b = RuleSetBrowser(report, test=test)
sel = b.controls["select"]
timed("RuleSetBrowser: select the second rule set", b, lambda: setattr(sel, "value", sel.options[1][1]
                                                                        if isinstance(sel.options[1], tuple)
                                                                        else sel.options[1]))
timed("RuleSetBrowser: mitigate (default amounts)", b, lambda: b.controls["mitigate"].click(), timeout=3600)

from sklearn.ensemble import RandomForestClassifier  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from fairlens.certify import CoverVisualizer  # noqa: E402

bc = load_breast_cancer()
Xtr, Xte, ytr, yte = train_test_split(bc.X, bc.y, test_size=0.2, random_state=0, stratify=bc.y)
forest = RandomForestClassifier(n_estimators=30, max_depth=5, random_state=0).fit(Xtr, ytr)
v = CoverVisualizer(forest, Xte, yte, budget=1, feature_names=bc.feature_names)
timed("CoverVisualizer: next instance", v, lambda: v.controls["next"].click())
timed("CoverVisualizer: budget -> 2", v, lambda: setattr(v.controls["budget"], "value", 2))
print(json.dumps(out))
