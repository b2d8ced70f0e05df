"""Issue 14 (n_jobs, same answer anywhere) and issue 16 item 3 (honest top-k) for TestSGD."""
import threading

import numpy as np
import pandas as pd
import pytest

from fairlens.testsgd import TestSGD, frequent_rule_sets
from fairlens.testsgd._rules import as_table
from fairlens.testsgd._score import (
    TABLE_SEED_BLOCK,
    Sampler,
    _reference_score,
    _score_rule_sets,
    make_scorer,
    neighbourhood_table,
    rule_set_rng,
)
from fairlens.testsgd._testsgd import simultaneous_confidence
from tests._support.testsgd_fixtures import PlantedModel, make_toy

SENS = ["gender", "race", "age"]
TOY = make_toy(n=1500, seed=3)
PLANTED = PlantedModel()


def _run(n_jobs=None, **kw):
    base = dict(theta=0.15, sample_thr=150, random_state=5)
    base.update(kw)
    return TestSGD(PLANTED, TOY, protected=SENS, **base).run(n_jobs=n_jobs)


@pytest.fixture(autouse=True)
def force_workers(monkeypatch):
    """The toy neighbourhood is far below MIN_WORK_PER_WORKER: force the workers anyway (the
    fall-back itself is tested in test_small_table_falls_back_and_says_so)."""
    import fairlens._parallel as par

    monkeypatch.setattr(par, "MIN_WORK_PER_WORKER", 0)


@pytest.fixture(scope="module")
def seq_report():
    return _run(None)


@pytest.mark.parametrize("strategy", ["table", "sample"])
def test_same_report_at_n_jobs_1_and_2(strategy):
    a = _run(1, strategy=strategy)
    b = _run(2, strategy=strategy)
    assert a.n_rule_sets > 10
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())
    assert a.n_model_rows == b.n_model_rows


def test_same_report_on_dask(dask_client, seq_report):
    import joblib

    with joblib.parallel_config(backend="dask"):
        d = _run(-1)
    pd.testing.assert_frame_equal(seq_report.to_frame(), d.to_frame())


def test_score_rule_sets_blocks_and_n_jobs_do_not_change_numbers():
    fr = frequent_rule_sets(TOY, SENS, 0.15)
    sets = fr.rule_sets[:40]
    kw = dict(random_state=7, sample_thr=120, strategy="sample")
    a, na = _score_rule_sets(PLANTED, TOY, sets, SENS, batch_rows=300, **kw)   # 1 rule set per block
    b, nb = _score_rule_sets(PLANTED, TOY, sets, SENS, batch_rows=10 ** 6, n_jobs=2, **kw)
    c, _ = _score_rule_sets(PLANTED, TOY, sets, SENS, bits=fr.bits[:40], **kw)
    key = [(r.n_samples, r.rate_in, r.rate_out, r.margin) for r in a]
    assert key == [(r.n_samples, r.rate_in, r.rate_out, r.margin) for r in b]
    assert key == [(r.n_samples, r.rate_in, r.rate_out, r.margin) for r in c]
    assert na == nb
    # the keys select the streams: rule set 5 scored alone with key 5 gives the same numbers
    d, _ = _score_rule_sets(PLANTED, TOY, [sets[5]], SENS, keys=[5], **kw)
    assert (d[0].n_samples, d[0].rate_in, d[0].rate_out) == (a[5].n_samples, a[5].rate_in, a[5].rate_out)


def test_neighbourhood_table_in_fixed_blocks_equals_one_call():
    t = as_table(make_toy(n=TABLE_SEED_BLOCK + 321, seed=1))
    sm = Sampler(t, SENS)
    scorer = make_scorer(PLANTED, t)
    one, n_rows = sm.neighbourhood_labels(scorer, 0.5, batch_rows=10 ** 7)
    blocks = neighbourhood_table(scorer, sm, 0.5, batch_rows=5000, n_jobs=2)
    np.testing.assert_array_equal(one, blocks)
    assert n_rows == t.X.shape[0] * 2 * 2


def test_progress_and_stop_still_work():
    seen = []
    ts = TestSGD(PLANTED, TOY, protected=SENS, theta=0.05, sample_thr=100, random_state=0, strategy="sample",
                 batch_rows=2000)
    full = ts.run(progress=lambda s, d, t: seen.append((s, d, t)))
    m = len(full.results)   # the rule sets scored: one per distinct row mask
    assert seen and seen[-1] == ("rule sets", m, m) and all(t == m for _, _, t in seen)
    assert [d for _, d, _ in seen] == sorted(d for _, d, _ in seen)
    done = []   # stop once two blocks are reported done

    part = ts.run(stop=lambda: len(done) >= 2, progress=lambda s, d, t: done.append(d))
    assert part.stopped and 0 < len(part.results) < m
    assert all(r.fresh is None for r in part.results)  # no re-estimation of a partial ranking
    ev = threading.Event()
    ev.set()
    none = ts.run(stop=ev)
    assert none.stopped and len(none.results) == 0


def test_bad_n_jobs():
    ts = TestSGD(PLANTED, TOY, protected=SENS, theta=0.3, sample_thr=50)
    with pytest.raises(ValueError, match="n_jobs"):
        ts.run(n_jobs=0)
    for bad in (1.5, "2", True):
        with pytest.raises(TypeError, match="n_jobs"):
            ts.run(n_jobs=bad)
    for kw, exc in ((dict(top_k=-1), ValueError), (dict(top_k=2.5), TypeError),
                    (dict(simultaneous="yes"), TypeError), (dict(merge_equivalent="yes"), TypeError),
                    (dict(min_side_rows=-1), ValueError), (dict(min_side_rows=2.5), TypeError)):
        with pytest.raises(exc, match=list(kw)[0]):
            TestSGD(PLANTED, TOY, protected=SENS, **kw)


# ------------------------------------------------------------------ honest top-k
def test_fresh_estimates_use_an_independent_stream(seq_report):
    rep = seq_report
    k = rep.params["top_k"]
    fresh = [r for r in rep.results if r.fresh is not None]
    assert len(fresh) == k
    fr = rep.frequent
    index = {str(rs): j for j, rs in enumerate(fr.rule_sets)}

    for r in fresh[:3]:
        j = index[str(r.rule_set)]
        ref = _reference_score(PLANTED, TOY, r.rule_set, SENS, sample_thr=150, rng=rule_set_rng(5, j, 1))
        assert (ref.n_samples, ref.rate_in, ref.rate_out) == (r.fresh.n_samples, r.fresh.rate_in,
                                                               r.fresh.rate_out)
        sel = _reference_score(PLANTED, TOY, r.rule_set, SENS, sample_thr=150, rng=rule_set_rng(5, j, 0))
        assert (sel.n_samples, sel.rate_in, sel.rate_out) == (r.n_samples, r.rate_in, r.rate_out)
    # the top_k are the k largest selection estimates, listed by selection estimate (issue 23:
    # re-ranking them by the fresh estimate biased the report's #1 upward again)
    sel_scores = sorted((r.score for r in rep.results if np.isfinite(r.score)), reverse=True)
    assert [r.score for r in fresh] == sel_scores[:k]
    assert rep.results[:k] == fresh
    df = rep.to_frame()
    assert {"fresh_score", "fresh_margin", "fresh_confidence"} <= set(df.columns)
    np.testing.assert_allclose(df["fresh_score"].head(k), [r.fresh.score for r in fresh])
    s = rep.summary().iloc[0]
    assert s["top_fresh_score"] == fresh[0].fresh.score and s["top_score"] == fresh[0].score


def test_top_k_zero_is_the_paper_ranking(seq_report):
    off = _run(None, top_k=0)
    assert all(r.fresh is None for r in off.results)
    # the selection estimates are the same numbers with or without the re-estimation
    a = seq_report.to_frame().set_index("rule_set")[["score", "n_samples"]]
    b = off.to_frame().set_index("rule_set")[["score", "n_samples"]]
    pd.testing.assert_frame_equal(a.sort_index(), b.sort_index())
    s = off.to_frame()["score"].to_numpy()
    s = s[np.isfinite(s)]
    assert np.all(np.diff(s) <= 0)


def test_simultaneous_bounds_are_bonferroni():
    k = 5
    c = simultaneous_confidence(0.95, k)
    assert 1 - c ** 2 == pytest.approx((1 - 0.95 ** 2) / k)
    rep = _run(None, top_k=k, simultaneous=True)
    fresh = [r for r in rep.results if r.fresh is not None]
    assert len(fresh) == k
    for r in fresh:
        assert r.fresh.confidence == pytest.approx(1 - (1 - 0.9025) / k)
    assert rep.params["fresh_confidence"] == pytest.approx(1 - (1 - 0.9025) / k)
    assert simultaneous_confidence(0.95, 1) == pytest.approx(0.95)


def _exact_scores(report):
    """EXACT score of every rule set under the section 4.3 sampling distribution, by enumeration
    of all (seed, free column, direction) samples (an independent transcription)."""
    t = as_table(TOY)
    sens = {t.index_of(f) for f in SENS}
    free = [j for j in range(t.X.shape[1]) if j not in sens]
    step = np.array([0.01 if ft == "continuous" else 1.0 for ft in t.feature_types])
    lab = np.zeros(t.X.shape[0])
    for col in free:
        for sgn in (-1.0, 1.0):
            R = t.X.copy()
            R[:, col] = np.clip(R[:, col] + sgn * step[col], t.bounds[col, 0], t.bounds[col, 1])
            lab += PLANTED.predict_proba(R)[:, 1] >= 0.5
    lab /= 2 * len(free)
    out = {}
    for r in report.results:
        m = r.rule_set.mask(t.X)
        out[str(r.rule_set)] = abs(lab[m].mean() - lab[~m].mean())
    return out


def test_fresh_bound_covers_the_exact_score_at_the_nominal_rate():
    """Statistical test (deterministic seeds, generous margin): over 15 runs x top 5, the fresh
    estimate's bound covers the exact (enumerated) score at least at about the nominal 90.25%.
    The bound of Theorem 4.2 is conservative (each group at 95%), so the true rate is higher."""
    hits_fresh = hits_sel = n = 0
    bias_sel = bias_fresh = 0.0
    exact = None
    for seed in range(15):
        rep = TestSGD(PLANTED, TOY, protected=SENS, theta=0.1, sample_thr=200, random_state=1000 + seed,
                      top_k=5).run()
        if exact is None:
            exact = _exact_scores(rep)
        for r in rep.results[:5]:
            e = exact[str(r.rule_set)]
            hits_fresh += abs(r.fresh.score - e) <= r.fresh.margin
            hits_sel += abs(r.score - e) <= r.margin
            bias_sel += r.score - e
            bias_fresh += r.fresh.score - e
            n += 1
    assert n == 75
    assert hits_fresh / n >= 0.84, (hits_fresh, n)   # nominal 0.9025; binomial sd ~ 0.034
    # selection estimates at the top are biased upward, the fresh ones much less
    assert bias_sel / n > bias_fresh / n
    assert abs(bias_fresh / n) < 0.02


def test_browser_shows_selection_and_fresh_estimates(seq_report):
    import matplotlib

    matplotlib.use("Agg")
    from fairlens.testsgd import RuleSetBrowser

    b = RuleSetBrowser(seq_report, background=False)
    b.wait(120)
    c = b.controls
    assert c["sort_by"].value == "rank"
    opts = c["select"].options
    k = seq_report.params["top_k"]
    # the list follows the report: the first k carry both numbers, in the report's order
    firsts = [b.frame.loc[v, "rule_set"] for _, v in opts[:k]]
    assert all(f"| {name}" in lab for (lab, _), name in zip(opts[:k], firsts))
    merged = seq_report.merge_equivalent()
    assert firsts == [str(r.rule_set) for r in merged.results[:k]]
    for (lab, _), r in zip(opts[:k], merged.results[:k]):   # a group standing for others says how many
        assert (f"(+{len(r.aliases)} same rows)" in lab) == bool(r.aliases)
    for (lab, _), r in zip(opts[:k], merged.results[:k]):
        if r.fresh is not None:
            assert f"fresh {r.fresh.score:5.1%} ± {r.fresh.margin:4.1%}" in lab and f"{r.score:6.1%}" in lab
    c["select"].value = opts[0][1]
    b.wait(120)
    info = b.snapshot()["info"]["params"]
    assert info["rule_set"] == firsts[0]
    assert "fresh estimate" in b.info_html.value and f"{merged.results[0].fresh.score:.1%}" in b.info_html.value
    c["sort_by"].value = "fresh_score"
    b.wait(120)
    fs = b.filtered["fresh_score"].to_numpy()
    fs = fs[np.isfinite(fs)]
    assert np.all(np.diff(fs) <= 0)


@pytest.mark.jit_heavy
def test_census_sampling_space_and_fresh_top10_against_exact_scores(require_data):
    """Issue 16 item 3 on census: the finite sampling space has 24,420 x 9 x 2 = 439,560
    labelled perturbations (75% training split, sensitive sex/race/age); the reported top 10's
    fresh bounds cover their exact (enumerated) scores (one run: at least 8 of 10, nominal 90.25%,
    measured 99.2% over 50 runs in benchmarks/testsgd_topk.py), and the fresh estimates are not
    biased upward the way the selection estimates are (mean over the 10)."""
    from sklearn.linear_model import LogisticRegression

    from fairlens.datasets import load_dataset
    from fairlens.testsgd.paper import paper_kwargs

    ds = load_dataset("adult")
    train, _ = ds.split(test_size=0.25, random_state=0)
    kw = paper_kwargs(ds)
    sens = kw.pop("protected")
    model = LogisticRegression(max_iter=300).fit(train.X, train.y)
    t = as_table(train)
    sm = Sampler(t, sens)
    labels, n_space = sm.neighbourhood_labels(make_scorer(model, t), 0.5)
    assert t.X.shape == (24_420, 12) and sm.free_cols.size == 9 and n_space == 439_560
    per_seed = labels.reshape(labels.shape[0], -1).mean(axis=1)
    rep = TestSGD(model, train, protected=sens, random_state=0, **kw).run()
    top = rep.results[:10]
    exact = []
    for r in top:
        m = r.rule_set.mask(t.X)
        exact.append(abs(per_seed[m].mean() - per_seed[~m].mean()))
    exact = np.array(exact)
    fresh = np.array([r.fresh.score for r in top])
    sel = np.array([r.score for r in top])
    covered = np.abs(fresh - exact) <= np.array([r.fresh.margin for r in top])
    assert covered.sum() >= 8, (fresh, exact)
    assert np.mean(fresh - exact) < np.mean(sel - exact) + 0.01


def test_small_table_falls_back_and_says_so(monkeypatch):
    """The neighbourhood table below MIN_WORK_PER_WORKER model rows per worker is scored in this
    process; the report says which parts ran where, and the answer does not change."""
    import fairlens._parallel as par

    forced = _run(2, strategy="table", batch_rows=2000)  # several table blocks
    assert forced.params["n_jobs_used"] == 2
    assert "neighbourhood table: parallel on 2 workers" in forced.params["parallel"]
    monkeypatch.setattr(par, "MIN_WORK_PER_WORKER", 10 ** 12)
    small = _run(2, strategy="table", batch_rows=2000)
    assert "neighbourhood table: sequential fall-back" in small.params["parallel"]
    pd.testing.assert_frame_equal(forced.to_frame(), small.to_frame())
    one = _run(1, strategy="table", batch_rows=2000)
    assert one.params["n_jobs_used"] == 1
    pd.testing.assert_frame_equal(one.to_frame(), small.to_frame())
