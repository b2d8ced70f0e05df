"""Anytime certification shares the time between rows (issue #24, item 5).

Under ``time_limit`` the exhaustive search of every row runs in short, exactly resumable slices,
least-worked row first (``fairlens.certify._schedule.settle_rows``), on threads of this process:
a few hard rows cannot starve the rest, rows are reported as they settle, a settled row gets the
verdict it gets without a limit and the first attack on the fewest features as its witness (issue
#37: the smaller budgets are searched first), and ``n_jobs=2`` settles at least as many rows as
``n_jobs=1``.
"""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier

from fairlens.certify import certify
from tests._support.certify_helpers import check_smallest_first

# --- certify under a time limit --------------------------------------------------------------

@pytest.fixture(scope="module")
def forest():
    X, y = load_breast_cancer(return_X_y=True)
    model = RandomForestClassifier(n_estimators=60, random_state=0).fit(X[:400], y[:400])
    # row 400: robust at b = 3; its literal search (prune=False) is > 30 million forest evaluations
    # (tens of seconds); rows attackable at b = 1 are found in the first few thousand
    b1 = certify(model, X[400:569], y[400:569], budget=1, method="brute")
    cheap = 400 + np.flatnonzero(b1.status == "attackable")
    return model, X, y, cheap


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_hard_rows_first_do_not_starve_the_rest(forest, n_jobs, jit_scale):
    model, X, y, cheap = forest
    if jit_scale < 1:  # plain Python (NUMBA_DISABLE_JIT=1): each evaluation ~100x slower
        cheap = cheap[:3]
    rows = np.r_[400, 400, cheap]  # the two hard rows first: worked in order they would eat the limit
    seen = []
    limit = 8 if jit_scale == 1 else 25
    res = certify(model, X[rows], y[rows], budget=3, method="brute", prune=False, time_limit=limit, n_jobs=n_jobs,
                  progress=lambda stage, done, total: seen.append((stage, done)) if stage == "brute" else None)
    assert set(res.status[2:]) == {"attackable"}  # every cheap row settled
    assert set(res.status[:2]) <= {"unknown", "robust_brute"}  # sound either way
    brute = [d for s, d in seen]
    assert brute[-1] == int(np.sum(res.status != "unknown"))
    assert len(set(brute)) >= len(cheap)  # reported row by row as they settled, not once at the end
    for i in np.flatnonzero(res.status == "attackable"):  # every witness flips the model's own predict
        assert model.predict(res.witnesses[i][None, :])[0] != y[rows][i]


def test_settled_rows_get_the_unlimited_verdict_and_the_smallest_witness(forest):
    model, X, y, _ = forest
    rows = np.arange(400, 569)
    ref = certify(model, X[rows], y[rows], budget=2, method="cascade")
    one = certify(model, X[rows], y[rows], budget=1, method="cascade")
    runs = [certify(model, X[rows], y[rows], budget=2, method="cascade", time_limit=600, n_jobs=n_jobs)
            for n_jobs in (1, 2)]
    for res in runs:
        np.testing.assert_array_equal(res.status, ref.status)
        check_smallest_first(res, ref)
        for i in res.witnesses:  # the fewest features: one exactly where one is enough
            assert len(res.witness_changes[i][0]) == (1 if one.status[i] == "attackable" else 2)
            assert model.predict(res.witnesses[i][None, :])[0] != y[rows][i]
    # the unlimited run's witness has more features on some row here (row 558): the limit changed it
    assert any(len(ref.witness_changes[i][0]) > len(runs[0].witness_changes[i][0]) for i in ref.witnesses)
    # the same witnesses and evaluation counts at every n_jobs
    assert runs[0].n_evaluations == runs[1].n_evaluations
    for i in runs[0].witnesses:
        np.testing.assert_array_equal(runs[0].witnesses[i], runs[1].witnesses[i])


def test_boosted_rows_share_the_time_too():
    xgb = pytest.importorskip("xgboost")
    X, y = load_breast_cancer(return_X_y=True)
    model = xgb.XGBClassifier(n_estimators=40, max_depth=3, random_state=0, n_jobs=1).fit(X[:400], y[:400])
    rows = np.arange(400, 469)
    ref = certify(model, X[rows], y[rows], budget=2)
    seen = []
    for n_jobs in (1, 2):
        res = certify(model, X[rows], y[rows], budget=2, time_limit=600, n_jobs=n_jobs,
                      progress=lambda stage, done, total: seen.append(stage))
        np.testing.assert_array_equal(res.status, ref.status)
        check_smallest_first(res, ref, exact_order=False)  # boosted: the order depends on the budget
        for i in res.witnesses:
            assert model.predict(res.witnesses[i][None, :])[0] != y[rows][i]
    if np.any(np.isin(ref.status, ["robust_brute", "attackable"])):
        assert "brute" in seen
