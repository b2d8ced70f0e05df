"""group_metrics: fairlearn/AIF360 point estimates; score intervals checked against statsmodels and by
brute-force inversion; one rule for small groups; a fixed reference for the signed measures."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from fairlens import metrics as M


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
    res = M.group_metrics(y, pred, protected=prot, min_group_size=1)
    for attrs in (["sex"], ["race"], ["sex", "race"]):
        name = " & ".join(attrs)
        sf = prot[attrs] if len(attrs) > 1 else prot[attrs[0]]
        mf = fl.MetricFrame(metrics={"sel": fl.selection_rate, "tpr": fl.true_positive_rate,
                                     "fpr": fl.false_positive_rate, "fnr": fl.false_negative_rate,
                                     "acc": __import__("sklearn.metrics").metrics.accuracy_score},
                            y_true=y, y_pred=pred, sensitive_features=sf)
        g = res.groups[res.groups["attribute"] == name]
        assert len(g) == len(mf.by_group)
        for ours, theirs in (("selection_rate", "sel"), ("true_positive_rate", "tpr"),
                             ("false_positive_rate", "fpr"), ("false_negative_rate", "fnr"), ("accuracy", "acc")):
            assert np.allclose(np.sort(g[ours]), np.sort(mf.by_group[theirs]), atol=1e-12), ours
        assert _row(res, name, "demographic_parity_difference")["value"] == pytest.approx(
            fl.demographic_parity_difference(y, pred, sensitive_features=sf), abs=1e-12)
        assert _row(res, name, "demographic_parity_ratio")["value"] == pytest.approx(
            fl.demographic_parity_ratio(y, pred, sensitive_features=sf), abs=1e-12)
        assert _row(res, name, "equalized_odds_difference")["value"] == pytest.approx(
            fl.equalized_odds_difference(y, pred, sensitive_features=sf), abs=1e-12)
        assert _row(res, name, "equal_opportunity_difference")["value"] == pytest.approx(
            mf.difference()["tpr"], abs=1e-12)


def test_signed_measures_with_a_privileged_group_equal_aif360():
    from tests.contract.metrics.test_aif360_metrics import _aif360

    y, pred, prot = _data(seed=3)
    res = M.group_metrics(y, pred, protected=prot, privileged={"race": "a"})
    ref = _aif360(y, pred, list(prot["race"]), ["a"])
    for m in ("statistical_parity_difference", "disparate_impact", "average_odds_difference",
              "true_positive_rate_difference"):
        row = _row(res, "race", m)
        assert row["value"] == pytest.approx(ref[m], abs=1e-12), m
        assert row["reference"] == "a" and row["group"] == "everyone else"
        assert row["ci_low"] <= row["value"] <= row["ci_high"]
    assert _row(res, "race", "disparate_impact")["value"] == pytest.approx(
        M.disparate_impact(y, pred, protected=prot["race"], privileged="a"), abs=1e-12)


def test_without_a_privileged_group_every_group_faces_everyone_else():
    """The reference is fixed in advance (each group against the rest), never the most-selected group:
    every group's signed difference is listed, and the finding shows the one departing most clearly
    from parity (largest estimate over its standard error)."""
    y, pred, prot = _data()
    res = M.group_metrics(y, pred, protected=prot[["race"]])
    c = res.contrasts[(res.contrasts["attribute"] == "race")
                      & (res.contrasts["measure"] == "statistical_parity_difference")]
    assert sorted(c["group"]) == ["a", "b", "c"] and set(c["reference"]) == {"everyone else"}
    race = prot["race"].to_numpy()
    for _, r in c.iterrows():   # hand computation: the group's selection rate minus the others'
        g = race == r["group"]
        assert r["value"] == pytest.approx(pred[g].mean() - pred[~g].mean(), abs=1e-12)
    row = _row(res, "race", "statistical_parity_difference")
    se = []
    for _, r in c.iterrows():
        g = race == r["group"]
        p1, p2 = pred[g].mean(), pred[~g].mean()
        se.append(np.sqrt(p1 * (1 - p1) / g.sum() + p2 * (1 - p2) / (~g).sum()))
    z = np.abs(c["value"].to_numpy()) / np.asarray(se)
    assert row["group"] == c["group"].iloc[int(np.argmax(z))]
    assert row["n_contrasts"] == 3   # the interval is simultaneous over the three groups
    # both directions: some group is favoured, some disfavoured
    assert (c["value"] > 0).any() and (c["value"] < 0).any()


def test_rates_equal_statsmodels_wilson_and_differences_newcombe():
    sm = pytest.importorskip("statsmodels.stats.proportion")
    y, pred, prot = _data(n=900, seed=4)
    res = M.group_metrics(y, pred, protected=prot[["sex"]])
    g = res.groups.set_index("group")
    for grp in ("female", "male"):
        m = (prot["sex"] == grp).to_numpy()
        for rate, num, den in (("selection_rate", pred[m] == 1, np.ones(m.sum(), bool)),
                               ("true_positive_rate", (pred[m] == 1) & (y[m] == 1), y[m] == 1),
                               ("positive_predictive_value", (y[m] == 1) & (pred[m] == 1), pred[m] == 1)):
            lo, hi = sm.proportion_confint(int(num[den].sum()), int(den.sum()), alpha=0.05, method="wilson")
            assert (g.loc[grp, rate + "_low"], g.loc[grp, rate + "_high"]) == pytest.approx((lo, hi), abs=1e-12)
    # two groups: the range's interval is Newcombe's interval of |difference| (one pair, no adjustment)
    f, ma = (prot["sex"] == "female").to_numpy(), (prot["sex"] == "male").to_numpy()
    lo, hi = sm.confint_proportions_2indep(int(pred[ma].sum()), int(ma.sum()), int(pred[f].sum()), int(f.sum()),
                                           method="newcomb", compare="diff", alpha=0.05)
    row = _row(res, "sex", "demographic_parity_difference")
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((max(0.0, lo, -hi), max(abs(lo), abs(hi))), abs=1e-12)


def test_tests_agree_with_the_printed_intervals():
    """For one comparison, the verdict's p-value is below 2.5% exactly when the 95% interval excludes
    the threshold on that side (the test inverts the interval)."""
    rng = np.random.default_rng(7)
    for trial in range(30):
        n = int(rng.integers(80, 600))
        g = rng.choice(["a", "b"], n)
        p = (rng.random(n) < np.where(g == "a", rng.uniform(0.1, 0.6), rng.uniform(0.1, 0.6))).astype(int)
        res = M.group_metrics(p, p, protected={"A": g})
        row = _row(res, "A", "demographic_parity_difference")
        c = float(rng.uniform(0.0, 0.3))
        p_hold, p_not = res.test("demographic_parity_difference", "A", ">", c)
        if abs(p_hold - 0.025) > 1e-6:
            assert (p_hold < 0.025) == (row["ci_low"] > c), (trial, p_hold, row["ci_low"], c)
        if abs(p_not - 0.025) > 1e-6:
            assert (p_not < 0.025) == (row["ci_high"] < c), (trial, p_not, row["ci_high"], c)


def test_test_semantics_for_signed_families_and_ratios():
    rng = np.random.default_rng(3)
    g = np.repeat(["a", "b", "c"], [600, 600, 600])
    p = (rng.random(1800) < np.repeat([0.2, 0.5, 0.5], 600)).astype(int)   # "a" is selected 30 pp less
    res = M.group_metrics(p, p, protected={"A": g})
    ph, pn = res.test("statistical_parity_difference", "A", "<", -0.1)   # some group more than 10 pp behind
    assert ph < 1e-6 and pn > 0.5
    ph, pn = res.test("statistical_parity_difference", "A", ">", 0.3)    # nobody 30 pp ahead of the rest
    assert ph > 0.5 and pn < 1e-3
    ph, pn = res.test("disparate_impact", "A", "<", 0.8)                 # a: 0.2 / 0.5 = 0.4
    assert ph < 1e-6
    ph, pn = res.test("demographic_parity_ratio", "A", "<", 0.8)
    assert ph < 1e-6
    ph, pn = res.test("statistical_parity_difference", "A", ">", 0.1, absolute=True)
    assert ph < 1e-6


def test_one_rule_for_small_groups_everywhere():
    """A group whose rate has fewer than min_group_size rows in its denominator is left out of every
    comparison of that rate -- range, ratio and signed measures, and the "everyone else" side too."""
    rng = np.random.default_rng(2)
    g = np.array(["a"] * 500 + ["b"] * 500 + ["tiny"] * 12)
    y = rng.integers(0, 2, size=g.size)
    pred = np.where(g == "tiny", 0, rng.integers(0, 2, size=g.size))  # tiny: never selected
    res = M.group_metrics(y, pred, protected={"grp": g})
    tiny = res.groups[res.groups["group"] == "tiny"].iloc[0]
    assert tiny["small"] and "12 rows" in tiny["note"]
    row = _row(res, "grp", "demographic_parity_difference")
    assert row["n_groups"] == 2 and row["value"] < 0.2  # the 0 of "tiny" does not drive it
    c = res.contrasts[res.contrasts["measure"] == "disparate_impact"]
    assert "tiny" not in set(c["group"])
    a = (g == "a")
    b = (g == "b")
    di_a = c[c["group"] == "a"]["value"].iloc[0]
    assert di_a == pytest.approx(pred[a].mean() / pred[b].mean())   # the rest excludes the tiny group
    # 40 rows but only 3 favourable true labels: compared on its selection rate, not on its TPR
    g2 = np.array(["x"] * 40 + ["y"] * 400)
    y2 = np.r_[np.r_[np.ones(3), np.zeros(37)], rng.integers(0, 2, 400)].astype(int)
    p2 = np.r_[np.zeros(40), rng.integers(0, 2, 400)].astype(int)
    res2 = M.group_metrics(y2, p2, protected={"g": g2})
    assert _row(res2, "g", "demographic_parity_difference")["n_groups"] == 2
    assert _row(res2, "g", "equal_opportunity_difference")["n_groups"] == 1
    assert np.isnan(_row(res2, "g", "equal_opportunity_difference")["value"])
    assert "true positive rate left out" in res2.groups.set_index("group").loc["x", "note"]


def test_many_groups_are_lumped_in_bounded_time():
    import time

    rng = np.random.default_rng(0)
    n = 20000
    ids = rng.integers(0, 4000, n).astype(str)
    p = rng.integers(0, 2, n)
    t = time.perf_counter()
    res = M.group_metrics(p, p, protected={"zip": ids, "sex": rng.choice(["f", "m"], n)}, max_groups=20)
    assert time.perf_counter() - t < 60
    zips = res.groups[res.groups["attribute"] == "zip"]
    k = len(set(ids)) - 19
    assert len(zips) == 20 and (zips["group"] == f"other ({k:,} values)").sum() == 1
    assert res.params["lumped"] == {"zip": k}
    assert int(zips["n"].sum()) == n


def test_scores_add_auc_and_calibration_per_group():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(5)
    n = 1200
    g = rng.choice(["a", "b"], n)
    y = rng.integers(0, 2, n)
    s = np.clip(0.3 * y + rng.uniform(0, 0.7, n) + np.where(g == "a", 0.0, 0.05), 0, 1)
    res = M.group_metrics(y, (s >= 0.5).astype(int), protected={"g": g}, y_score=s)
    r = res.groups.set_index("group")
    for grp in "ab":
        m = g == grp
        assert r.loc[grp, "auc"] == pytest.approx(roc_auc_score(y[m], s[m]), abs=1e-12)
        assert r.loc[grp, "auc_low"] < r.loc[grp, "auc"] < r.loc[grp, "auc_high"] <= 1
        assert r.loc[grp, "calibration_gap"] == pytest.approx((s[m] - y[m]).mean(), abs=1e-12)
    with pytest.raises(ValueError, match="y_score must be probabilities"):
        M.group_metrics(y, y, protected={"g": g}, y_score=s + 1)


def test_binary_numeric_protected_column_is_two_groups():
    y = np.tile([0, 1], 100)
    res = M.group_metrics(y, y, protected={"sex": np.repeat([0, 1], 100)})
    assert list(res.groups["group"]) == ["0", "1"]


def test_result_contract_and_labels_other_than_01():
    y, pred, prot = _data(n=600)
    lab = np.where(y == 1, ">50K", "<=50K")
    plab = np.where(pred == 1, ">50K", "<=50K")
    a = M.group_metrics(lab, plab, protected=prot, favourable=">50K")
    b = M.group_metrics(y, pred, protected=prot)
    pd.testing.assert_frame_equal(a.measures, b.measures)
    assert a.params["favourable"] == ">50K"
    s = a.summary()
    assert isinstance(s, pd.DataFrame) and len(s) == 1
    json.dumps(a.to_dict(), allow_nan=False)
    assert isinstance(a._repr_html_(), str)
    import matplotlib

    matplotlib.use("Agg")
    assert a.plot() is not None


@pytest.mark.parametrize("kw,match", [
    (dict(y_true=[0, 1, 2, 1]), "y_true must be binary"),
    (dict(favourable="yes"), "favourable='yes' occurs neither"),
    (dict(protected={"s": ["a", "b"]}), "protected has 2 rows"),
    (dict(privileged={"nope": 1}), "privileged names attributes"),
    (dict(privileged={"s": "zzz"}), "is not a group"),
    (dict(protected={"s": ["a", None, "b", "a"]}), "missing values"),
    (dict(protected=pd.DataFrame([[1, 2]] * 4, columns=["s", "s"])), "duplicated column names"),
    (dict(n_boot=100), "group_metrics: n_boot= was removed"),
    (dict(random_state=0), "group_metrics: random_state= was removed"),
    (dict(nope=1), "unexpected keyword argument 'nope'"),
])
def test_bad_arguments_are_refused_by_name(kw, match):
    args = dict(y_true=[0, 1, 1, 0], y_pred=[1, 1, 0, 0], protected={"s": ["a", "a", "b", "b"]})
    args.update(kw)
    with pytest.raises((ValueError, TypeError), match=match):
        M.group_metrics(args.pop("y_true"), args.pop("y_pred"), **args)


def test_old_keyword_sensitive_features_is_a_type_error_naming_protected():
    y, pred, prot = _data(n=300)
    msg = r"demographic_parity_difference: sensitive_features= was renamed protected=; pass protected="
    with pytest.raises(TypeError, match=msg):
        M.demographic_parity_difference(y, pred, sensitive_features=prot["sex"])
    with pytest.raises(TypeError, match=msg):
        M.demographic_parity_difference(y, pred, protected=prot["sex"], sensitive_features=prot["sex"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        M.demographic_parity_difference(y, pred, protected=prot["sex"])
