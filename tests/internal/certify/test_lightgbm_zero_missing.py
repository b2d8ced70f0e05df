"""The tests of ``tests/contract/certify/test_lightgbm_zero_missing.py`` that pin internals
(its docstring describes both halves)."""
import numpy as np
import pytest

from fairlens.certify import certify, read_model
from fairlens.certify._readers._lightgbm import LGB_ZERO, LGB_ZERO_LO, lgb_threshold
from fairlens.certify._reference import reference_attack, reference_candidates
from tests._support.certify_helpers import lgb_nodes, route_leaves
from tests.contract.certify.test_lightgbm_zero_missing import _data, _model, lgb

ROBUST = ("certified_flb", "certified_elb", "robust_brute")
BAND = [0.0, 1e-36, -1e-36, LGB_ZERO, -LGB_ZERO, 5e-324, -5e-324]


def _walk_raw(nd, x):
    """LightGBM's NumericalDecision on the raw dump (independent of the reader's expansion)."""
    total = 0.0
    for r in nd["roots"]:
        n = int(r)
        while nd["feature"][n] >= 0:
            v = x[nd["feature"][n]]
            v = 0.0 if abs(v) <= LGB_ZERO else v  # dense rows: the band is pushed as 0
            mt = nd["missing_type"][n]
            if v != v and mt != 2:
                v = 0.0
            if (mt == 1 and v == 0.0) or (mt == 2 and v != v):
                n = int(nd["left"][n] if nd["default_left"][n] else nd["right"][n])
            else:
                n = int(nd["left"][n] if v <= nd["threshold"][n] else nd["right"][n])
        total += nd["value"][n]
    return total


def _queries(m, Q, seed):
    """Rows with thresholds, one ulp either side, the band and NaN written into random features."""
    rng = np.random.default_rng(seed)
    cands = sorted({v for vals in reference_candidates(m).values() for v in vals} | set(BAND))
    P = np.repeat(Q, 8, axis=0)
    mask = rng.random(P.shape) < 0.4
    P[mask] = rng.choice(np.array(cands + [np.nan]), mask.sum())
    return P


def _nontrivial_zero_nodes(m):
    """Zero nodes where zero goes elsewhere than the comparison would send it (default matters)."""
    nd = lgb_nodes(m)
    i = nd["missing_type"] == 1
    t = np.array([lgb_threshold(v) for v in nd["threshold"][i]])
    return int((nd["default_left"][i] != (0.0 <= t)).sum())


@pytest.mark.parametrize("seed", [0, 1])
def test_raw_semantics_and_the_flat_model_replay_predict(seed):
    m, Q, _ = _model(seed)
    nd = lgb_nodes(m)
    internal = nd["feature"] >= 0
    assert (nd["missing_type"][internal] == 1).all()  # every node treats zero as missing
    assert _nontrivial_zero_nodes(m) > 0
    P = _queries(m, Q, seed)
    lib = m.predict(P, raw_score=True)
    assert np.array_equal(np.array([_walk_raw(nd, x) for x in P]), lib)
    bm = read_model(m)
    # each Zero node is three nodes on its feature: P1 at the band's lower edge, P2 at 0, N
    roots = bm.roots
    assert bm.feature.size == nd["feature"].size + 2 * internal.sum()
    assert bm.threshold[roots].tolist() == [LGB_ZERO_LO] * roots.size
    assert bm.threshold[roots + 1].tolist() == [0.0] * roots.size
    for f in np.unique(bm.feature[bm.feature >= 0]):  # 0 (the zero band) is an attack value of each feature
        assert 0.0 in bm.values[bm.values_ptr[f]:bm.values_ptr[f + 1]]
        coded = bm.nan_coded()
        assert 0.0 in coded.values[coded.values_ptr[f]:coded.values_ptr[f + 1]]
    fin = ~np.isnan(P).any(axis=1)
    assert np.array_equal(bm.replay_scores(P[fin])[:, 1], lib[fin])
    assert np.array_equal(bm.nan_coded().replay_scores(P)[:, 1], lib)
    leaves = route_leaves(bm, bm.round_X(P))  # the recorded NaN routing, walked in plain NumPy
    assert np.allclose(bm.value[leaves, 0].sum(axis=1), lib, rtol=1e-12, atol=1e-12)  # numpy sums pairwise


def test_the_zero_routing_is_needed():
    """Compared as a number (the Zero type ignored), zero and NaN reach other leaves: the replay
    tests above could fail."""
    m, Q, _ = _model(0)
    nd = lgb_nodes(m)
    plain = dict(nd, missing_type=np.where(nd["missing_type"] == 1, 0, nd["missing_type"]).astype(np.int8))
    P = _queries(m, Q, 0)
    lib = m.predict(P, raw_score=True)
    assert not np.array_equal(np.array([_walk_raw(plain, x) for x in P]), lib)


def test_oracle_tries_the_zero_band():
    m, _, _ = _model(0)
    cands = reference_candidates(m, missing=True)
    assert sorted(cands) == sorted({int(f) for f in lgb_nodes(m)["feature"] if f >= 0})
    for vals in cands.values():
        assert 0.0 in vals and LGB_ZERO in vals and -LGB_ZERO in vals and np.isnan(vals[-1])


def _verdicts(res):
    st = np.asarray(res.status)
    return np.where(np.isin(st, ROBUST), "robust", st)


def _oracle(m, Q, yq, budget, missing):
    return reference_attack(m, Q, yq, budget, missing=missing, max_rows=2_000_000)


def _check(m, Q, yq, res, budget, missing, exact, oracle=None):
    correct, attackable = oracle if oracle is not None else _oracle(m, Q, yq, budget, missing)
    # the replay is exact on these rows (certify widens its ambiguous zone by any replay error and
    # lets predict decide there, so only an exact replay makes the verdicts a test of the reader)
    rep = read_model(m).nan_coded().replay_scores(Q)
    lib = m.predict(Q, raw_score=True)
    assert np.allclose(rep[:, 1] if lib.ndim == 1 else rep, lib, rtol=0, atol=1e-12)
    st = np.asarray(res.status)
    robust = np.isin(st, ROBUST)
    assert np.array_equal(st == "misclassified", ~correct)
    assert not np.any(robust & attackable), "a certified row is attacked by the oracle"
    if exact:
        assert np.array_equal(robust, correct & ~attackable)
        assert np.array_equal(st == "attackable", correct & attackable)
    for i, w in res.witnesses.items():
        w = np.asarray(w, dtype=np.float64)
        assert missing or not np.isnan(w[~np.isnan(Q[i])]).any()
        assert m.predict(w[None, :])[0] != yq[i]
    return correct, attackable


@pytest.mark.parametrize("missing", ["auto", False])
@pytest.mark.parametrize("budget", [1, 2])
def test_binary_every_method_equals_the_oracle(missing, budget):
    m, Q, yq = _model(1)
    oracle = _oracle(m, Q, yq, budget, missing == "auto")
    seen = set()
    for method in ("cascade", "brute", "flb", "elb"):
        res = certify(m, Q, yq, budget=budget, method=method, missing=missing)
        assert res.params["nan_attack"] is (missing == "auto")
        _check(m, Q, yq, res, budget, missing == "auto", exact=method in ("cascade", "brute"), oracle=oracle)
        seen.update(_verdicts(res).tolist())
    assert {"robust", "attackable", "misclassified"} <= seen
    assert (oracle[0] & ~oracle[1]).sum() >= (10 if budget == 1 else 2)


@pytest.mark.parametrize("budget", [1, 2])
def test_three_classes_equal_the_oracle(budget):
    m, Q, yq = _model(0, n_classes=3)
    assert m.n_classes_ == 3 and _nontrivial_zero_nodes(m) > 0
    for missing in ("auto", False):
        oracle = _oracle(m, Q, yq, budget, missing == "auto")
        assert oracle[0].sum() > 0 and (budget > 1 or (oracle[0] & ~oracle[1]).sum() > 0)
        for method in ("cascade", "brute", "flb", "elb"):
            res = certify(m, Q, yq, budget=budget, method=method, missing=missing)
            _check(m, Q, yq, res, budget, missing == "auto", exact=method in ("cascade", "brute"), oracle=oracle)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_booster_equals_the_classifier(n_classes):
    """A lightgbm.Booster is certified the same (its predict: probabilities, read by certify; its
    labels are the class indices, here equal to the classifier's labels)."""
    m, Q, yq = _model(2, n_classes=n_classes)
    assert np.array_equal(m.classes_, np.arange(n_classes))
    for missing in ("auto", False):
        res_m = certify(m, Q, yq, budget=1, missing=missing)
        res_b = certify(m.booster_, Q, yq, budget=1, missing=missing)
        assert np.array_equal(res_m.status, res_b.status)
        assert res_b.params["nan_attack"] is (missing == "auto")
        _check(m, Q, yq, res_m, 1, missing == "auto", exact=True)
        for i, w in res_b.witnesses.items():
            assert m.predict(np.asarray(w)[None, :])[0] != yq[i]


@pytest.mark.parametrize("missing", ["auto", False])
def test_attacks_only_a_zero_opens(missing, monkeypatch):
    """Rows that only writing 0 (or NaN, read as 0) flips -- the oracle without the band's values
    calls them robust -- are attackable for certify, with a witness that writes 0 or NaN; every
    verdict on the 100 held-out rows equals the oracle."""
    import fairlens.certify._reference as ref

    m, _, _ = _model(2)
    X, y = _data(2)
    Q, yq = X[500:], y[500:]
    on = missing == "auto"
    correct, attackable = ref.reference_attack(m, Q, yq, 1, missing=on)
    full = ref.reference_candidates
    monkeypatch.setattr(ref, "reference_candidates", lambda model, missing=False: {
        f: [v for v in vals if not abs(v) <= LGB_ZERO and v == v] for f, vals in full(model, missing).items()})
    _, attackable_no_zero = ref.reference_attack(m, Q, yq, 1)
    monkeypatch.undo()
    only_zero = np.flatnonzero(attackable & ~attackable_no_zero)
    assert only_zero.size >= 3
    for method in ("brute", "cascade"):
        res = certify(m, Q, yq, budget=1, method=method, missing=missing)
        _check(m, Q, yq, res, 1, on, exact=True, oracle=(correct, attackable))
        for i in only_zero:
            feats, vals = res.witness_changes[i]
            assert len(vals) == 1 and (vals[0] == 0.0 or vals[0] != vals[0])


# ---------------------------------------------------------------------------------------------
# the issue's data (values rounded to thirds, zeros next to negatives), zero_as_missing=True
# ---------------------------------------------------------------------------------------------
def _issue_model(seed, zero_as_missing):
    rng = np.random.default_rng(seed)
    n, d = 300, 4
    X = np.round(rng.normal(size=(n, d)) * 3) / 3
    X[rng.random((n, d)) < 0.3] = 0.0
    y = (X[:, 0] + X[:, 1] * (X[:, 2] >= 0) - 0.5 * (X[:, 3] < 0) + 0.3 * rng.normal(size=n) > 0).astype(int)
    m = lgb.LGBMClassifier(n_estimators=8, num_leaves=4, min_child_samples=5, learning_rate=0.5, verbose=-1,
                           n_jobs=1, random_state=seed, zero_as_missing=zero_as_missing).fit(X[:240], y[:240])
    return m, X[240:270], y[240:270]


@pytest.mark.parametrize("zero_as_missing", [True, False])
@pytest.mark.parametrize("seed", range(10))
def test_issue_data_never_raises(seed, zero_as_missing):
    """10 models, b = 1-3, both settings: no call raises (with zero_as_missing=True the reader refused
    every model before), no row is left unknown, every witness flips predict, and b = 1-2 equal the
    oracle (NaN allowed)."""
    m, X, y = _issue_model(seed, zero_as_missing)
    for b in (1, 2, 3):
        res = certify(m, X, y, budget=b)
        assert res.stage_counts["unknown"] == 0
        for i, w in res.witnesses.items():
            assert m.predict(np.asarray(w).reshape(1, -1))[0] != y[i]
        if b <= 2:
            _check(m, X, y, res, b, True, exact=True)
