"""LightGBM's zero band (issue 24): its ``predict`` reads every ``|x| <= 1.0000000180025095e-35`` as 0
and stores the split of the negatives from zero at ``-1.0000000180025095e-35``. certify replays that
as LightGBM does: no call raises "the replay ... found an attack ... that the library's own predict
does not confirm" (before: 8 of 30 calls on this data), and the verdicts equal a literal enumeration
that calls LightGBM's own predict on every threshold, one ulp either side and the values of the band."""
import itertools

import numpy as np
import pytest

from fairlens.certify import certify
from tests.contract.certify.test_boosted import _grid, _thresholds

lgb = pytest.importorskip("lightgbm")

ZERO = float(np.float32(1e-35))
BAND = [0.0, ZERO, -ZERO, float(np.nextafter(ZERO, np.inf)), -float(np.nextafter(ZERO, np.inf)), 1e-36, -1e-36,
        5e-324, -5e-324]


def _model(seed):
    rng = np.random.default_rng(seed)
    n, d = 300, 4
    X = np.round(rng.normal(size=(n, d)) * 3) / 3  # values rounded to thirds ...
    X[rng.random((n, d)) < 0.3] = 0.0  # ... with many zeros next to negative values
    y = (X[:, 0] + X[:, 1] * (X[:, 2] >= 0) - 0.5 * (X[:, 3] < 0) + 0.3 * rng.normal(size=n) > 0).astype(int)
    m = lgb.LGBMClassifier(n_estimators=8, num_leaves=4, min_child_samples=5, learning_rate=0.5, verbose=-1,
                           n_jobs=1, random_state=seed).fit(X[:240], y[:240])
    return m, X[240:270], y[240:270]


def _oracle(model, X, y, budget):
    thr = _thresholds(model)
    grids = {f: sorted(set(_grid(v, False)) | set(BAND)) for f, v in thr.items()}
    pred = model.predict(X)
    out = []
    for i in range(X.shape[0]):
        if pred[i] != y[i]:
            out.append(None)
            continue
        rows = []
        for F in itertools.combinations(range(X.shape[1]), budget):
            for combo in itertools.product(*[grids[f] for f in F]):
                xp = X[i].copy()
                xp[list(F)] = combo
                rows.append(xp)
        out.append(bool(np.all(model.predict(np.asarray(rows)) == y[i])))
    return out


def test_the_zero_band_is_real():
    m, X, y = _model(0)
    split = [t for v in _thresholds(m).values() for t in v if -ZERO <= t < 0]
    assert split, "the data must make LightGBM split negatives from zero"
    x = X[:1].copy()
    f = next(f for f, v in _thresholds(m).items() if any(-ZERO <= t < 0 for t in v))
    probe = np.repeat(x, 3, axis=0)
    probe[:, f] = [0.0, -ZERO, -1e-36]
    raw = m.predict(probe, raw_score=True)
    assert raw[0] == raw[1] == raw[2]  # LightGBM reads all three as 0


@pytest.mark.parametrize("seed", range(10))
def test_no_call_raises_and_verdicts_match_lightgbm_predict(seed):
    m, X, y = _model(seed)
    for b in (1, 2, 3):
        res = certify(m, X, y, budget=b)  # raised RuntimeError on 8 of these 30 calls before
        assert res.stage_counts["unknown"] == 0
        for i, w in res.witnesses.items():
            assert m.predict(w.reshape(1, -1))[0] != y[i]
        if b <= 2:
            ref = _oracle(m, X, y, b)
            got = [None if s == "misclassified" else s != "attackable" for s in res.status]
            assert got == ref
