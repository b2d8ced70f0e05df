"""Algorithm 2: faithful reference vs batched, stopping rule, caps, paper hand example."""
import math

import numpy as np
import pytest

from fairlens.testsgd import (
    RuleSet,
    Sampler,
    frequent_rule_sets,
    group_fairness_score,
    group_fairness_score_reference,
    z_value,
)
from fairlens.testsgd._rules import as_table, single_rules
from fairlens.testsgd._score import _margin, _reference_score, _score_rule_sets, rule_set_rng

SENS = ["gender", "race", "age"]


def _rule(toy, feature, text):
    return [r for r in single_rules(as_table(toy), feature) if str(r) == text][0]


def _rs(toy, *pairs):
    return RuleSet(tuple(_rule(toy, f, t) for f, t in pairs))


def test_paper_hand_example_margin():
    # Section 4.2 example: 283/1000 vs 91/1000 -> eps_r 0.028, eps_nr 0.018, eps 0.046, f 19.2%
    z = z_value(0.95)
    assert z == pytest.approx(1.96, abs=1e-3)
    e_r = z * math.sqrt(0.283 * 0.717 / 1000)
    e_n = z * math.sqrt(0.091 * 0.909 / 1000)
    assert round(e_r, 3) == 0.028 and round(e_n, 3) == 0.018
    assert _margin(283, 91, 1000.0, z) == pytest.approx(0.046, abs=5e-4)
    assert 0.95 ** 2 == pytest.approx(0.9025)


def _independent_alg2(model, toy, rule_set, seed, error_thr, sample_thr, max_samples):
    """Third implementation: numpy-only sampling from the documented stream, then a scan."""
    X = toy.X
    mask = rule_set.mask(X)
    s_in, s_out = np.flatnonzero(mask), np.flatnonzero(~mask)
    free = np.array([3, 4])
    step = np.array([1.0, 1.0, 1.0, 1.0, 0.01])
    U = np.random.default_rng(seed).random((max_samples, 6))

    def make(seeds, u):
        src = seeds[np.minimum((u[:, 0] * len(seeds)).astype(int), len(seeds) - 1)]
        rows = X[src].copy()
        col = free[np.minimum((u[:, 1] * len(free)).astype(int), len(free) - 1)]
        v = rows[np.arange(len(rows)), col] + np.where(u[:, 2] < 0.5, -1.0, 1.0) * step[col]
        rows[np.arange(len(rows)), col] = np.clip(v, toy.bounds[col, 0], toy.bounds[col, 1])
        return rows

    lin = model.predict_proba(make(s_in, U[:, :3]))[:, 1] >= 0.5
    lout = model.predict_proba(make(s_out, U[:, 3:]))[:, 1] >= 0.5
    z = 1.959963984540054
    ci, co = np.cumsum(lin), np.cumsum(lout)
    for num in range(sample_thr + 1, max_samples + 1):
        p, q = ci[num - 1] / num, co[num - 1] / num
        eps = z * math.sqrt(p * (1 - p) / num) + z * math.sqrt(q * (1 - q) / num)
        if eps <= error_thr:
            return num, p, q, eps, True
    return max_samples, p, q, eps, False


@pytest.mark.parametrize("seed", [0, 1, 7])
@pytest.mark.parametrize("error_thr,sample_thr", [(0.05, 1000), (0.03, 200), (0.1, 50)])
def test_reference_batched_and_independent_agree(toy, planted, seed, error_thr, sample_thr):
    rs = _rs(toy, ("gender", "gender=male"), ("age", "age>=40"))
    kw = dict(error=error_thr, sample_thr=sample_thr, max_samples=6000, random_state=seed)
    ref = group_fairness_score_reference(planted, toy, rs, SENS, **kw)
    bat = group_fairness_score(planted, toy, rs, SENS, **kw)
    num, p, q, eps, conv = _independent_alg2(planted, toy, rs, seed, error_thr, sample_thr, 6000)
    for r in (ref, bat):
        assert r.n_samples == num
        assert r.rate_in == pytest.approx(p, abs=1e-12)
        assert r.rate_out == pytest.approx(q, abs=1e-12)
        assert r.margin == pytest.approx(eps, rel=1e-9)
        assert r.converged == conv
        assert r.score == pytest.approx(abs(p - q), abs=1e-12)
        assert r.n_samples > sample_thr and r.margin <= error_thr
    assert ref.confidence == pytest.approx(0.9025)


def test_stopping_needs_more_than_first_block(toy, planted):
    # a rule set with rates near 1/2 needs > sample_thr + 1 samples: exercises the extra blocks
    rs = _rs(toy, ("race", "race in {White, Black}"))
    kw = dict(error=0.04, sample_thr=100, max_samples=20000, random_state=3)
    ref = group_fairness_score_reference(planted, toy, rs, SENS, **kw)
    bat = group_fairness_score(planted, toy, rs, SENS, **kw)
    assert ref.n_samples > 600
    assert (ref.n_samples, ref.rate_in, ref.rate_out) == (bat.n_samples, bat.rate_in, bat.rate_out)


def test_cap_is_reported_not_looped(toy, planted):
    rs = _rs(toy, ("race", "race in {White, Black}"))
    kw = dict(error=1e-4, sample_thr=100, max_samples=700, random_state=0)
    for method in ("reference", "batched"):
        r = group_fairness_score(planted, toy, rs, SENS, method=method, **kw)
        assert not r.converged and r.status == "cap"
        assert r.n_samples == 700 and r.margin > 1e-4


def test_bad_inputs(toy, planted):
    rs = _rs(toy, ("gender", "gender=male"))
    with pytest.raises(ValueError, match="error"):
        group_fairness_score(planted, toy, rs, SENS, error=0)
    with pytest.raises(ValueError, match="confidence"):
        group_fairness_score(planted, toy, rs, SENS, confidence=1.5)
    with pytest.raises(ValueError, match="max_samples"):
        group_fairness_score(planted, toy, rs, SENS, sample_thr=100, max_samples=50)
    nobody = _rs(toy, ("age", "age>=100"), ("gender", "gender=female"))
    nobody_mask = nobody.mask(toy.X)
    if nobody_mask.any():  # make sure: restrict the data
        pytest.skip("toy data has old women")
    with pytest.raises(ValueError, match="no row"):
        group_fairness_score(planted, toy, nobody, SENS)
    with pytest.raises(ValueError, match="method"):
        group_fairness_score(planted, toy, rs, SENS, method="fast")
    # in the batched multi-rule-set path an unsamplable group is flagged, not raised
    res, _ = _score_rule_sets(planted, toy, [nobody, rs], SENS, random_state=0)
    assert res[0].status == "no-seeds" and not res[0].converged and np.isnan(res[0].score)
    assert res[1].status == "ok"


def test_samples_stay_in_group_and_domain(toy):
    t = as_table(toy)
    s = Sampler(t, SENS)
    rng = np.random.default_rng(0)
    rs = _rs(toy, ("gender", "gender=male"), ("age", "40<=age<80"))
    m = rs.mask(toy.X)
    seeds = [np.flatnonzero(m), np.flatnonzero(~m)]
    group = rng.integers(0, 2, 5000)
    U = rng.random((5000, 3))
    rows = s.sample(seeds, group, U)
    inside = rs.mask(rows)
    np.testing.assert_array_equal(inside, group == 0)  # sensitive features never move
    np.testing.assert_array_equal(rows[:, :3] % 1, 0)
    assert np.all(rows >= toy.bounds[:, 0]) and np.all(rows <= toy.bounds[:, 1])
    # each sample differs from its seed in at most one non-sensitive column, by +-s_pert or a clip
    src = np.concatenate(seeds)[np.where(group == 0, 0, len(seeds[0]))
                               + np.minimum((U[:, 0] * np.where(group == 0, len(seeds[0]), len(seeds[1]))).astype(int),
                                            np.where(group == 0, len(seeds[0]), len(seeds[1])) - 1)]
    diff = rows - toy.X[src]
    changed = (np.abs(diff) > 1e-12).sum(axis=1)
    assert changed.max() <= 1
    assert np.all(diff[:, :3] == 0)
    d = np.abs(diff[:, 3])
    assert set(np.round(d[d > 0], 9)) <= {1.0}
    d = np.abs(diff[:, 4])
    assert set(np.round(d[d > 0], 9)) <= {0.01}
    # the one-at-a-time reference sampler builds the same rows
    for i in range(50):
        one = s.sample_one(seeds[group[i]], U[i])
        np.testing.assert_array_equal(one, rows[i])


def _exact_rates(model, toy, rs):
    """Exact expectation of the favourable rate under the section 4.3 sampling distribution."""
    X = toy.X
    out = []
    for m in (rs.mask(X), ~rs.mask(X)):
        seeds = X[m]
        tot = 0.0
        for col, step in ((3, 1.0), (4, 0.01)):
            for sgn in (-1, 1):
                r = seeds.copy()
                r[:, col] = np.clip(r[:, col] + sgn * step, toy.bounds[col, 0], toy.bounds[col, 1])
                tot += np.mean(model.predict_proba(r)[:, 1] >= 0.5) / 4
        out.append(tot)
    return out


def test_error_bound_coverage(toy, planted):
    # Theorem 4.2: |f_hat - f| <= margin with probability >= delta^2 (here 0.9025)
    rs = _rs(toy, ("gender", "gender=male"), ("race", "race in {White, Asian-Pac-Islander}"))
    p, q = _exact_rates(planted, toy, rs)
    truth = abs(p - q)
    hits = 0
    runs = 40
    for seed in range(runs):
        r = group_fairness_score(planted, toy, rs, SENS, random_state=100 + seed, sample_thr=300)
        hits += abs(r.score - truth) <= r.margin
    assert hits >= 34, (hits, truth)


def test_batched_independent_of_chunking(toy, planted):
    fr = frequent_rule_sets(toy, SENS, 0.1)
    sets = fr.rule_sets[:40]
    a, na = _score_rule_sets(planted, toy, sets, SENS, random_state=5, sample_thr=200, batch_rows=500,
                           strategy="sample")
    b, nb = _score_rule_sets(planted, toy, sets, SENS, random_state=5, sample_thr=200, batch_rows=10 ** 6,
                           strategy="sample")
    assert [(r.n_samples, r.rate_in, r.rate_out) for r in a] == [(r.n_samples, r.rate_in, r.rate_out) for r in b]
    assert na == nb >= 2 * sum(r.n_samples for r in a)


def test_table_strategy_equals_sampling(toy, planted):
    fr = frequent_rule_sets(toy, SENS, 0.1)
    sets = fr.rule_sets[:30]
    kw = dict(random_state=9, sample_thr=150, error=0.06)
    a, na = _score_rule_sets(planted, toy, sets, SENS, strategy="sample", **kw)
    b, nb = _score_rule_sets(planted, toy, sets, SENS, strategy="table", **kw)
    assert [(r.n_samples, r.rate_in, r.rate_out, r.margin) for r in a] == \
        [(r.n_samples, r.rate_in, r.rate_out, r.margin) for r in b]
    assert nb == toy.X.shape[0] * 2 * 2  # n seeds x 2 free columns x 2 directions
    # and both equal the one-sample-at-a-time reference with the per-rule-set child stream
    for j in (0, 7, 29):
        ref = _reference_score(planted, toy, sets[j], SENS, rule_set_rng(9, j, 0),
                                             sample_thr=150, error=0.06)
        assert (ref.n_samples, ref.rate_in, ref.rate_out) == (a[j].n_samples, a[j].rate_in, a[j].rate_out)


def test_stop_between_sampling_rounds_returns_no_score(planted, toy):
    """A stop raised after the first sampling round ends Algorithm 2 for that rule set with
    no (half-estimated) score; a stop that never fires changes nothing."""
    import threading

    rs = _rs(toy, ("gender", "gender=male"))
    kw = dict(error=0.01, sample_thr=200, max_samples=50_000, random_state=3)
    full = group_fairness_score(planted, toy, rs, SENS, **kw)
    assert full.n_samples > 200  # needs more than one round
    never = threading.Event()
    assert group_fairness_score(planted, toy, rs, SENS, stop=never, **kw) == full
    calls = []

    def counting(X):
        calls.append(len(X))
        return planted.predict_proba(X)

    assert group_fairness_score(counting, toy, rs, SENS, stop=lambda: len(calls) >= 1, **kw) is None
    assert len(calls) == 1  # one round drawn, then stopped
