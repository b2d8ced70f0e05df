"""certify on several workers (n_jobs, loky and dask) and anytime certification (time_limit).

Issue 14: fixed row blocks give the same statuses, witnesses and covers at any n_jobs and on
dask; ``time_limit`` leaves unsettled rows "unknown" with a sound ``accuracy_interval``; the
brute-force kernel pauses inside one pattern's value search and resumes exactly.
"""
import math

import joblib
import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

from fairlens.certify import STATUSES, FeaturePartitionedForest, accuracy_under_attack, certify
from tests._support.certify_helpers import bc_full_forest, check_smallest_first

SETTLED = ("misclassified", "certified_flb", "certified_elb", "robust_brute", "attackable")


def _same(a, b):
    np.testing.assert_array_equal(a.status, b.status)
    assert a.witnesses.keys() == b.witnesses.keys()
    for i in a.witnesses:
        np.testing.assert_array_equal(a.witnesses[i], b.witnesses[i])
    assert a.covers == b.covers
    assert a.accuracy == b.accuracy and a.accuracy_interval == b.accuracy_interval
    assert (a.accuracy_flb, a.accuracy_elb, a.accuracy_exact) == (b.accuracy_flb, b.accuracy_elb, b.accuracy_exact)
    assert a.n_evaluations == b.n_evaluations
    np.testing.assert_array_equal(a.delta, b.delta)


@pytest.fixture(scope="module")
def bc():
    return bc_full_forest(0, n_trees=21, depth=3)


@pytest.fixture(scope="module")
def fpf():
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    model = FeaturePartitionedForest(budget=1, rounds=5, random_state=0).fit(X[:400], y[:400])
    return model, X[400:], y[400:]


@pytest.fixture(scope="module")
def many_blocks(bc):
    # enough rows for several FLB/ELB blocks (256 rows each) and many brute-force blocks
    model, X, y = bc
    return model, np.vstack([X, X[::-1], X]), np.concatenate([y, y[::-1], y])


# --- n_jobs: identical results ------------------------------------------------------------

@pytest.mark.parametrize("vote", ["soft", "hard"])
def test_same_result_at_n_jobs_1_and_2(many_blocks, vote):
    model, X, y = many_blocks
    ref = certify(model, X, y, budget=2, vote=vote)
    assert ref.stage_counts["attackable"] > 0 and ref.stage_counts["certified_elb"] > 0  # all stages used
    for n_jobs in (2, -1):
        _same(certify(model, X, y, budget=2, vote=vote, n_jobs=n_jobs), ref)
    # the row blocks do not depend on chunk_size either
    _same(certify(model, X, y, budget=2, vote=vote, n_jobs=2, chunk_size=5), ref)


@pytest.mark.parametrize("method", ["flb", "elb", "brute"])
def test_other_methods_same_at_n_jobs_2(bc, method):
    model, X, y = bc
    ref = certify(model, X, y, budget=2, method=method)
    _same(certify(model, X, y, budget=2, method=method, n_jobs=2), ref)


def test_fpf_and_literal_brute_same_at_n_jobs_2(fpf):
    model, X, y = fpf
    ref = certify(model, X[:40], y[:40], budget=1, method="brute", prune=False)
    _same(certify(model, X[:40], y[:40], budget=1, method="brute", prune=False, n_jobs=2), ref)


def test_same_result_on_dask(dask_client, many_blocks):
    model, X, y = many_blocks
    ref = certify(model, X, y, budget=2)
    with joblib.parallel_config(backend="dask"):
        got = certify(model, X, y, budget=2, n_jobs=-1)
    _same(got, ref)


@pytest.mark.parametrize("backend", ["threading", "multiprocessing"])
def test_same_result_on_every_local_joblib_backend(bc, backend):
    # joblib's "multiprocessing" backend hands no results back before the end (no generator): it
    # raised ValueError ("does not support return_as=generator") before issue #37's round six
    model, X, y = bc
    ref = certify(model, X, y, budget=2)
    with joblib.parallel_config(backend=backend):
        got = certify(model, X, y, budget=2, n_jobs=2)
    _same(got, ref)


def test_accuracy_under_attack_n_jobs(bc):
    model, X, y = bc
    a = accuracy_under_attack(model, X, y, budgets=(1, 2))
    b = accuracy_under_attack(model, X, y, budgets=(1, 2), n_jobs=2)
    cols = ["budget", "accuracy", "accuracy_flb", "accuracy_elb", "accuracy_exact", "accuracy_lower",
            "accuracy_upper"] + [f"n_{s}" for s in STATUSES]
    assert a[cols].equals(b[cols])
    assert (a["accuracy_lower"] == a["accuracy_exact"]).all() and (a["accuracy_upper"] == a["accuracy_exact"]).all()


def test_witnesses_flip_sklearn_predict_at_n_jobs_2(many_blocks):
    model, X, y = many_blocks
    res = certify(model, X, y, budget=2, n_jobs=2)
    assert res.witnesses
    for i, xw in res.witnesses.items():
        assert model.predict(xw.reshape(1, -1))[0] != y[i]
        assert np.sum(xw != X[i]) <= 2


# --- progress ----------------------------------------------------------------------------

@pytest.mark.parametrize("n_jobs", [1, 2])
def test_progress_covers_every_stage(bc, n_jobs):
    model, X, y = bc
    seen = []
    certify(model, X, y, budget=2, n_jobs=n_jobs, progress=lambda s, d, t: seen.append((s, d, t)))
    stages = [s for s, _, _ in seen]
    assert [s for s in dict.fromkeys(stages)] == ["vote", "flb", "elb", "brute"]
    for stage in ("vote", "flb", "elb", "brute"):
        counts = [(d, t) for s, d, t in seen if s == stage]
        assert [d for d, _ in counts] == sorted(d for d, _ in counts)
        assert counts[-1][0] == counts[-1][1]  # every stage reaches its total


def test_progress_bar_true_runs(bc):
    model, X, y = bc
    res = certify(model, X[:30], y[:30], budget=1, progress=True)
    assert "unknown" not in set(res.status)


# --- time_limit ----------------------------------------------------------------------------

def _check_sound(res, ref):
    check_smallest_first(res, ref)
    lo, hi = res.accuracy_interval
    assert lo <= ref.accuracy_exact <= hi
    n = len(res.status)
    counts = res.stage_counts
    assert math.isclose(lo, (counts["certified_flb"] + counts["certified_elb"] + counts["robust_brute"]) / n)
    assert math.isclose(hi, 1 - (counts["misclassified"] + counts["attackable"]) / n)
    if counts["unknown"]:
        assert res.accuracy_exact is None and res.accuracy == lo
    else:
        assert lo == hi == res.accuracy_exact == ref.accuracy_exact
    # the clean vote is always complete
    np.testing.assert_array_equal(res.status == "misclassified", ref.status == "misclassified")


def test_time_limit_zero_is_sound(bc):
    model, X, y = bc
    ref = certify(model, X, y, budget=2)
    for n_jobs in (1, 2):
        res = certify(model, X, y, budget=2, time_limit=0, n_jobs=n_jobs)
        assert set(res.status) <= {"misclassified", "unknown"}
        _check_sound(res, ref)
        assert res.accuracy_interval == (0.0, res.accuracy_clean)
        assert res.accuracy_flb is None and res.accuracy_elb is None and res.accuracy_exact is None
        assert res.time_limit == 0.0
        assert res.summary()["n_unknown"].iloc[0] == res.stage_counts["unknown"] > 0


def test_no_time_limit_changes_nothing(bc):
    model, X, y = bc
    ref = certify(model, X, y, budget=2)
    _same(certify(model, X, y, budget=2, time_limit=float("inf")), ref)  # inf: no limit
    # a limit never reached settles every row with the unlimited verdicts; the anytime search
    # tries the smaller budgets first, so a witness may change fewer features
    res = certify(model, X, y, budget=2, time_limit=1e6)
    assert "unknown" not in set(res.status)
    check_smallest_first(res, ref)
    assert res.accuracy_interval == (ref.accuracy_exact, ref.accuracy_exact)
    assert res.to_frame().attrs["accuracy_interval"] == res.accuracy_interval
    # at budget 1 there is nothing smaller: the same witnesses and evaluation counts
    _same(certify(model, X, y, budget=1, time_limit=1e6), certify(model, X, y, budget=1))


@pytest.fixture(scope="module")
def hard_row():
    """A deep 20-tree forest and a row robust at b = 3: its literal brute force (prune=False,
    every value combination of every 3 features) takes hours, its pruned one ~0.05 s."""
    import os

    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    model = RandomForestClassifier(n_estimators=20, random_state=0).fit(X[:400], y[:400])
    i = 432
    if os.environ.get("NUMBA_DISABLE_JIT", "0") in ("", "0"):  # cheap with the JIT only
        assert certify(model, X[i:i + 1], y[i:i + 1], budget=3).status[0] == "robust_brute"
    return model, X[i:i + 1], y[i:i + 1]


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_time_limit_interrupts_one_long_row(hard_row, n_jobs):
    import time

    model, X, y = hard_row
    certify(model, X, y, budget=1, method="brute", prune=False)  # compile first
    t0 = time.perf_counter()
    res = certify(model, np.vstack([X] * 3), np.concatenate([y] * 3), budget=3, method="brute", prune=False,
                  time_limit=0.5, n_jobs=n_jobs)
    took = time.perf_counter() - t0
    assert list(res.status) == ["unknown"] * 3  # returned although one row alone takes hours
    assert res.accuracy_interval == (0.0, 1.0)
    assert res.n_evaluations > 0
    assert took < 120  # generous: returns, not a timing claim


def test_keyboard_interrupt_inside_a_long_row(hard_row):
    model, X, y = hard_row
    calls = []

    def interrupt(stage, done, total):
        if stage == "brute":
            calls.append(done)
            if len(calls) >= 3:
                raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        certify(model, X, y, budget=3, method="brute", prune=False, progress=interrupt)
    assert calls == [0, 0, 0]  # three bounded calls inside the one row, none finished it


# --- validation ----------------------------------------------------------------------------

@pytest.mark.parametrize("bad, exc", [(0, ValueError), (1.5, TypeError), (True, TypeError), ("2", TypeError),
                                      (np.nan, TypeError)])
def test_n_jobs_validated(bc, bad, exc):
    model, X, y = bc
    with pytest.raises(exc, match="n_jobs"):
        certify(model, X, y, n_jobs=bad)
    with pytest.raises(exc, match="n_jobs"):
        accuracy_under_attack(model, X, y, budgets=(1,), n_jobs=bad)


@pytest.mark.parametrize("bad, exc", [(-1, ValueError), (-0.5, ValueError), (np.nan, ValueError),
                                      (True, TypeError), ("1", TypeError),
                                      ([1], TypeError)])
def test_time_limit_validated(bc, bad, exc):
    model, X, y = bc
    with pytest.raises(exc, match="time_limit"):
        certify(model, X, y, time_limit=bad)
    with pytest.raises(exc, match="time_limit"):
        accuracy_under_attack(model, X, y, budgets=(1,), time_limit=bad)


def test_accuracy_under_attack_time_limit_is_for_the_whole_table(bc):
    model, X, y = bc
    frame = accuracy_under_attack(model, X, y, budgets=(1, 2, 3), time_limit=0)
    assert (frame["n_unknown"] > 0).all()
    assert (frame["accuracy_lower"] <= frame["accuracy_upper"]).all()
