"""The notebook the browser tests open: each of the four widgets on real (bundled) data."""
import nbformat

SETUP = """\
import warnings
warnings.filterwarnings("ignore")
import numpy as np
from sklearn.ensemble import RandomForestClassifier
from fairlens.datasets import load_admission, load_adult, load_breast_cancer
from fairlens.models import train_mlp

def tag(w, css_class):
    # mark the widget's root box so the browser test can find it in the page
    getattr(w, "widget", w).add_class(css_class)
    return w
"""

SHUFFLE = """\
from fairlens.shuffle import ShuffleAttackExplorer
adm = load_admission(version="1")
cols = ["GRE Score", "TOEFL Score", "University Rating", "Research"]
X = adm.X[:, [adm.index_of(c) for c in cols]].copy()
lo, hi = X[:, :3].min(0), X[:, :3].max(0)
X[:, :3] = (X[:, :3] - lo) / (hi - lo)
f = lambda A: np.asarray(A, dtype=float)[:, :3] @ np.full(3, 1 / 3)
tag(ShuffleAttackExplorer(f, X, protected="Research", favoured=1, y=adm.y, feature_names=cols),
    "fl-shuffle")
"""

MAFT = """\
from fairlens.maft import MAFTSession
census = load_adult(encoding="benchmark")
mlp = train_mlp(census, random_state=0)
tag(MAFTSession(mlp, census, protected=["sex"], n_seeds=10, n_local=10), "fl-maft")
"""

TESTSGD = """\
from fairlens.testsgd import TestSGD, RuleSetBrowser
people = load_adult()
order = np.random.default_rng(0).permutation(people.n_samples)
train, test = people.subset(order[:8000]), people.subset(order[8000:10000])
mlp_raw = train_mlp(train, random_state=0)
extra = {"binning": "round"}
report = TestSGD(mlp_raw, train, protected=["sex", "race"], sample_thr=200, max_samples=2000,
                 random_state=0, **extra).run()
tag(RuleSetBrowser(report, test=test), "fl-testsgd")
"""

CERTIFY = """\
from fairlens.certify import CoverVisualizer
bc = load_breast_cancer()
rf = RandomForestClassifier(n_estimators=20, max_depth=4, random_state=0).fit(bc.X[:450], bc.y[:450])
tag(CoverVisualizer(rf, bc.X[450:], bc.y[450:], budget=1, feature_names=bc.feature_names),
    "fl-certify")
"""


def write(path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in (SETUP, SHUFFLE, MAFT, TESTSGD, CERTIFY)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, str(path))
    return path
