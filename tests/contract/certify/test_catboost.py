"""CatBoost classifiers (numeric features, binary and multi-class), certified through one reader file.

Oracle, independent of fairlens' reader and kernels: a literal enumeration that calls CatBoost's own
``predict`` on every combination of a dense per-feature grid (each border from CatBoost's public
``get_borders()``, the float32 numbers either side of it, values beyond the ends, and NaN when the
attacker may write it) for every set of ``b`` features. Every witness must flip ``predict``; every
row certified robust must be robust under the enumeration.
"""
import itertools

import numpy as np
import pytest

from fairlens.certify import can_certify, certify

catboost = pytest.importorskip("catboost")

ROBUST = ("certified_flb", "certified_elb", "robust_brute")


def _fit(loss="Logloss", seed=0, nan=0.0, nan_mode="Min", iterations=4, depth=2, d=4):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(220, d)), 2)
    s = X[:, 0] + X[:, 1] * X[:, 2] - 0.5 * X[:, 3] + 0.3 * rng.normal(size=220)
    y = (s > 0).astype(int) if loss != "MultiClass" else np.digitize(s, [-0.6, 0.6])
    if nan:
        X[rng.random(X.shape) < nan] = np.nan
    m = catboost.CatBoostClassifier(iterations=iterations, depth=depth, learning_rate=0.5, loss_function=loss,
                                    nan_mode=nan_mode, random_seed=seed, verbose=0, thread_count=1,
                                    allow_writing_files=False)
    m.fit(X[:180], y[:180])
    return m, X[180:], y[180:]


def _grid(model, f, missing):
    borders = [float(b) for b in model.get_borders().get(f, [])]
    vals = set()
    for b in borders:
        b32 = np.float32(b)
        lo, hi = np.nextafter(b32, np.float32(-np.inf)), np.nextafter(b32, np.float32(np.inf))
        vals.update(float(v) for v in (b32, lo, hi))
    if borders:
        vals.update([min(borders) - 1.0, max(borders) + 1.0])
    out = sorted(vals)
    return out + [float("nan")] if missing else out


def _oracle(model, X, y, budget, missing):
    """None (misclassified), True (robust) or False (attackable) per row, by CatBoost's own predict."""
    d = X.shape[1]
    grids = {f: _grid(model, f, missing) for f in range(d)}
    used = [f for f in range(d) if grids[f]]
    pred = np.asarray(model.predict(X)).reshape(-1)
    out = []
    for i in range(X.shape[0]):
        if pred[i] != y[i]:
            out.append(None)
            continue
        rows = []
        for F in itertools.combinations(used, min(budget, len(used))):
            for combo in itertools.product(*[grids[f] for f in F]):
                xp = X[i].copy()
                xp[list(F)] = combo
                rows.append(xp)
        out.append(bool(np.all(np.asarray(model.predict(np.asarray(rows))).reshape(-1) == y[i])))
    return out


@pytest.mark.parametrize("loss", ["Logloss", "MultiClass"])
@pytest.mark.parametrize("budget", [1, 2])
@pytest.mark.parametrize("nan,nan_mode", [(0.0, "Min"), (0.15, "Min"), (0.15, "Max")])
def test_exact_against_catboost_predict(loss, budget, nan, nan_mode):
    model, X, y = _fit(loss, nan=nan, nan_mode=nan_mode)
    X, y = X[:14], y[:14]
    for missing in ("auto", False):
        ref = _oracle(model, X, y, budget, missing == "auto")
        for method in ("cascade", "brute"):
            res = certify(model, X, y, budget=budget, method=method, missing=missing)
            assert res.params["nan_attack"] == (missing == "auto")
            for i, r in enumerate(ref):
                if r is None:
                    assert res.status[i] == "misclassified", (i, res.status[i])
                else:
                    assert (res.status[i] in ROBUST) == r, (i, res.status[i], r, missing)
            if res.witnesses:
                att = sorted(res.witnesses)
                W = np.vstack([res.witnesses[i] for i in att])
                assert np.all(np.asarray(model.predict(W)).reshape(-1) != y[att])  # every witness flips predict
                for w, i in zip(W, att):
                    changed = np.flatnonzero(~((w == X[i]) | (np.isnan(w) & np.isnan(X[i]))))
                    assert 1 <= changed.size <= budget


def test_bounds_settle_rows_and_never_certify_an_attacked_one():
    # stumps on ten features that each matter a little: the bounds settle many rows
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(260, 10)), 2)
    y = (X.sum(1) + 0.3 * rng.normal(size=260) > 0).astype(int)
    model = catboost.CatBoostClassifier(iterations=20, depth=1, learning_rate=0.3, verbose=0, random_seed=0,
                                        allow_writing_files=False,
                                        thread_count=1).fit(X[:200], y[:200])
    X, y = X[200:], y[200:]
    for budget in (1, 2):
        for missing in ("auto", False):
            brute = certify(model, X, y, budget=budget, method="brute", missing=missing)
            casc = certify(model, X, y, budget=budget, missing=missing)
            flb = certify(model, X, y, budget=budget, method="flb", missing=missing)
            assert flb.accuracy <= casc.accuracy_exact == brute.accuracy_exact
            assert not np.any(np.isin(flb.status, ROBUST) & (brute.status == "attackable"))
            np.testing.assert_array_equal(np.isin(casc.status, ROBUST), brute.status == "robust_brute")
    assert certify(model, X, y, budget=1, missing=False).stage_counts["certified_flb"] > 0  # the bounds settle rows


def test_replay_equals_catboost_raw_scores():
    from fairlens.certify import read_model

    for loss in ("Logloss", "MultiClass"):
        model, X, y = _fit(loss, nan=0.1, iterations=6, depth=3)
        bm = read_model(model)
        rep = bm.nan_coded().replay_scores(X)
        raw = np.asarray(model.predict(X, prediction_type="RawFormulaVal"), dtype=np.float64)
        raw = np.column_stack([np.zeros_like(raw), raw]) if raw.ndim == 1 else raw
        np.testing.assert_allclose(rep - rep[:, :1], raw - raw[:, :1], rtol=0, atol=1e-12)


def test_refusals_name_the_model():
    import pandas as pd

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"num": rng.normal(size=100), "colour": rng.choice(["red", "blue"], 100)})
    y = (X["num"] > 0).astype(int)
    m = catboost.CatBoostClassifier(iterations=3, verbose=0, cat_features=["colour"],
                                    allow_writing_files=False).fit(X, y)
    with pytest.raises(ValueError, match="model.*categorical"):
        certify(m, X, y)
    ok, why = can_certify(m)
    assert not ok and "categorical" in why
    Xn = rng.normal(size=(100, 3))
    reg = catboost.CatBoostRegressor(iterations=3, verbose=0, allow_writing_files=False).fit(Xn, Xn[:, 0])
    with pytest.raises(TypeError, match="model"):
        certify(reg, Xn, (Xn[:, 0] > 0).astype(int))
    model, Xt, yt = _fit("Logloss")
    model.set_probability_threshold(0.7)
    with pytest.raises(ValueError, match="model.*threshold"):
        certify(model, Xt, yt)
    assert can_certify(_fit("MultiClass")[0]) == (True, "CatBoost")
