"""group_metrics: fairlearn/AIF360 point estimates, bootstrap intervals on counter-based streams."""
import json
import threading
import warnings

import numpy as np
import pandas as pd
import pytest

from fairlens import metrics as M
from fairlens._base import make_invalid


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    sex = rng.choice(["female", "male"], size=n, p=[0.4, 0.6])
    race = rng.choice(["a", "b", "c"], size=n, p=[0.6, 0.3, 0.1])
    y = (rng.random(n) < np.where(race == "a", 0.5, 0.35)).astype(int)
    pred = (rng.random(n) < np.where(sex == "male", 0.45, 0.3) + 0.2 * y).astype(int)
    return y, pred, pd.DataFrame({"sex": sex, "race": race})


def _row(res, attribute, measure):
    m = res.measures
    return m[(m["attribute"] == attribute) & (m["measure"] == measure)].iloc[0]


def test_point_estimates_equal_fairlearn_metricframe():
    fl = pytest.importorskip("fairlearn.metrics")
    y, pred, prot = _data()
    res = M.group_metrics(y, pred, protected=prot, n_boot=0, min_group_size=1, min_outcomes=0)
    for attrs in (["sex"], ["race"], ["sex", "race"]):
        name = " & ".join(attrs)
        sf = prot[attrs] if len(attrs) > 1 else prot[attrs[0]]
        mf = fl.MetricFrame(metrics={"sel": fl.selection_rate, "tpr": fl.true_positive_rate,
                                     "fpr": fl.false_positive_rate},
                            y_true=y, y_pred=pred, sensitive_features=sf)
        g = res.groups[res.groups["attribute"] == name]
        assert len(g) == len(mf.by_group)
        assert np.allclose(np.sort(g["selection_rate"]), np.sort(mf.by_group["sel"]), atol=1e-12)
        assert np.allclose(np.sort(g["true_positive_rate"]), np.sort(mf.by_group["tpr"]), atol=1e-12)
        assert np.allclose(np.sort(g["false_positive_rate"]), np.sort(mf.by_group["fpr"]), atol=1e-12)
        assert _row(res, name, "demographic_parity_difference")["value"] == pytest.approx(
            fl.demographic_parity_difference(y, pred, sensitive_features=sf), abs=1e-12)
        assert _row(res, name, "demographic_parity_ratio")["value"] == pytest.approx(
            fl.demographic_parity_ratio(y, pred, sensitive_features=sf), abs=1e-12)
        assert _row(res, name, "equalized_odds_difference")["value"] == pytest.approx(
            fl.equalized_odds_difference(y, pred, sensitive_features=sf), abs=1e-12)
        assert _row(res, name, "equal_opportunity_difference")["value"] == pytest.approx(
            mf.difference()["tpr"], abs=1e-12)


def test_signed_measures_equal_aif360():
    from tests.metrics.test_aif360_metrics import _aif360

    y, pred, prot = _data(seed=3)
    res = M.group_metrics(y, pred, protected=prot, privileged={"race": "a"}, n_boot=0)
    ref = _aif360(y, pred, list(prot["race"]), ["a"])
    for m in ("statistical_parity_difference", "disparate_impact", "average_odds_difference",
              "true_positive_rate_difference"):
        assert _row(res, "race", m)["value"] == pytest.approx(ref[m], abs=1e-12), m
        assert _row(res, "race", m)["privileged"] == "a"
    # and the module's own functions agree too
    assert _row(res, "race", "disparate_impact")["value"] == pytest.approx(
        M.disparate_impact(y, pred, protected=prot["race"], privileged="a"), abs=1e-12)


def test_default_privileged_group_is_the_most_selected_large_group():
    y, pred, prot = _data()
    res = M.group_metrics(y, pred, protected=prot[["sex"]], n_boot=0)
    assert _row(res, "sex", "statistical_parity_difference")["privileged"] == "male"
    assert _row(res, "sex", "statistical_parity_difference")["value"] < 0


def test_bootstrap_matches_a_plain_numpy_row_bootstrap():
    """The multinomial shortcut has the row bootstrap's distribution: a plain loop resampling
    rows with replacement gives the same interval up to Monte-Carlo error."""
    y, pred, prot = _data(n=1500, seed=5)
    sex = prot["sex"].to_numpy()
    B = 3000
    res = M.group_metrics(y, pred, protected=prot[["sex"]], n_boot=B, random_state=11)
    rng = np.random.default_rng(123)
    dpd, sel_f = np.empty(B), np.empty(B)
    for b in range(B):
        i = rng.integers(0, len(y), size=len(y))
        s, p = sex[i], pred[i]
        rf, rm = p[s == "female"].mean(), p[s == "male"].mean()
        dpd[b], sel_f[b] = abs(rm - rf), rf
    row = _row(res, "sex", "demographic_parity_difference")
    assert row["ci_low"] == pytest.approx(np.quantile(dpd, 0.025), abs=0.006)
    assert row["ci_high"] == pytest.approx(np.quantile(dpd, 0.975), abs=0.006)
    g = res.groups[(res.groups["attribute"] == "sex") & (res.groups["group"] == "female")].iloc[0]
    assert g["selection_rate_low"] == pytest.approx(np.quantile(sel_f, 0.025), abs=0.006)
    assert g["selection_rate_high"] == pytest.approx(np.quantile(sel_f, 0.975), abs=0.006)
    # the spread is the binomial one: sd of a group rate ~ sqrt(p(1-p)/n_g)
    assert res.n_boot == B


def test_same_seed_same_intervals_at_any_n_jobs():
    y, pred, prot = _data(n=800)
    a = M.group_metrics(y, pred, protected=prot, n_boot=300, random_state=7, n_jobs=1)
    b = M.group_metrics(y, pred, protected=prot, n_boot=300, random_state=7, n_jobs=2)
    pd.testing.assert_frame_equal(a.measures, b.measures)
    pd.testing.assert_frame_equal(a.groups, b.groups)
    c = M.group_metrics(y, pred, protected=prot, n_boot=300, random_state=8, n_jobs=1)
    assert not np.allclose(a.measures["ci_low"].fillna(0), c.measures["ci_low"].fillna(0))
    assert a.random_state == 7


def test_small_groups_are_flagged_and_left_out_of_the_comparison():
    rng = np.random.default_rng(2)
    g = np.array(["a"] * 500 + ["b"] * 500 + ["tiny"] * 12)
    y = rng.integers(0, 2, size=g.size)
    pred = np.where(g == "tiny", 0, rng.integers(0, 2, size=g.size))  # tiny: never selected
    res = M.group_metrics(y, pred, protected={"grp": g}, n_boot=50, random_state=0)
    tiny = res.groups[res.groups["group"] == "tiny"].iloc[0]
    assert tiny["small"] and "12 rows" in tiny["note"]
    row = _row(res, "grp", "demographic_parity_difference")
    assert row["n_groups"] == 2 and row["value"] < 0.2  # the 0 of "tiny" does not drive it
    few = M.group_metrics(np.r_[np.ones(40, int), np.zeros(40, int)], np.r_[np.ones(40, int), np.zeros(40, int)],
                          protected={"g": np.r_[["x"] * 38, ["y"] * 2 + ["y"] * 40]}, n_boot=0)
    assert few.groups.set_index("group").loc["x", "small"]  # 0 unfavourable true labels


def test_result_contract_and_labels_other_than_01():
    y, pred, prot = _data(n=600)
    lab = np.where(y == 1, ">50K", "<=50K")
    plab = np.where(pred == 1, ">50K", "<=50K")
    a = M.group_metrics(lab, plab, protected=prot, favourable=">50K", n_boot=100, random_state=0)
    b = M.group_metrics(y, pred, protected=prot, n_boot=100, random_state=0)
    pd.testing.assert_frame_equal(a.measures, b.measures)
    s = a.summary()
    assert isinstance(s, pd.DataFrame) and len(s) == 1
    json.dumps(a.to_dict(), allow_nan=False)
    assert isinstance(a._repr_html_(), str)
    import matplotlib

    matplotlib.use("Agg")
    assert a.plot() is not None


def test_stopped_bootstrap_keeps_its_replicates_and_intervals():
    y, pred, prot = _data(n=500)
    ev = threading.Event()
    calls = []

    def progress(done, total):
        calls.append(done)
        if done >= 2:
            ev.set()

    res = M.group_metrics(y, pred, protected=prot, n_boot=1000, random_state=0, stop=ev, progress=progress)
    assert res.stopped and res.n_boot == 2 * M.BOOT_CHUNK
    assert np.isfinite(_row(res, "sex", "demographic_parity_difference")["ci_low"])


@pytest.mark.parametrize("kw,match", [
    (dict(y_true=[0, 1, 2, 1]), "y_true must be binary"),
    (dict(favourable="yes"), "favourable='yes' occurs neither"),
    (dict(protected={"s": ["a", "b"]}), "protected has 2 rows"),
    (dict(privileged={"nope": 1}), "privileged names attributes"),
    (dict(privileged={"s": "zzz"}), "is not a group"),
    (dict(protected={"s": ["a", None, "b", "a"]}), "missing values"),
])
def test_bad_arguments_are_refused_by_name(kw, match):
    args = dict(y_true=[0, 1, 1, 0], y_pred=[1, 1, 0, 0], protected={"s": ["a", "a", "b", "b"]})
    args.update(kw)
    with pytest.raises((ValueError, TypeError), match=match):
        M.group_metrics(args.pop("y_true"), args.pop("y_pred"), **args)


def test_every_invalid_parameter_value_is_refused_by_name():
    for name, bad in make_invalid(M._GROUP_METRICS_CONSTRAINTS):
        with pytest.raises((TypeError, ValueError), match=name):
            M.group_metrics([0, 1, 1, 0], [1, 1, 0, 0], protected={"s": list("aabb")}, **{name: bad})


def test_old_keyword_sensitive_features_still_works_with_a_futurewarning():
    y, pred, prot = _data(n=300)
    with pytest.warns(FutureWarning, match="'sensitive_features' was renamed 'protected'"):
        old = M.demographic_parity_difference(y, pred, sensitive_features=prot["sex"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = M.demographic_parity_difference(y, pred, protected=prot["sex"])
    assert old == new
    with pytest.raises(TypeError, match="got both"):
        M.demographic_parity_difference(y, pred, protected=prot["sex"], sensitive_features=prot["sex"])
