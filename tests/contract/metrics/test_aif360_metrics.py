"""AIF360's signed metrics (issue 16, item 4): equal to AIF360's own classes to 1e-12."""
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairlens import metrics as M

SIGNED = ["statistical_parity_difference", "disparate_impact", "true_positive_rate_difference",
          "average_odds_difference"]


def _aif360(y_true, y_pred, groups, privileged_values):
    """AIF360's ClassificationMetric / BinaryLabelDatasetMetric on the same data."""
    pytest.importorskip("aif360")
    from aif360.datasets import BinaryLabelDataset
    from aif360.metrics import BinaryLabelDatasetMetric, ClassificationMetric

    levels = sorted(set(groups), key=str)
    code = {v: float(i) for i, v in enumerate(levels)}
    g = np.array([code[v] for v in groups])
    df = pd.DataFrame({"g": g, "y": np.asarray(y_true, dtype=float)})
    ds = BinaryLabelDataset(df=df, label_names=["y"], protected_attribute_names=["g"],
                            favorable_label=1.0, unfavorable_label=0.0)
    pred = ds.copy(deepcopy=True)
    pred.labels = np.asarray(y_pred, dtype=float).reshape(-1, 1)
    priv = [{"g": code[v]} for v in privileged_values]
    unpriv = [{"g": code[v]} for v in levels if v not in privileged_values]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cm = ClassificationMetric(ds, pred, unprivileged_groups=unpriv, privileged_groups=priv)
        bm = BinaryLabelDatasetMetric(pred, unprivileged_groups=unpriv, privileged_groups=priv)
        return {
            "statistical_parity_difference": cm.statistical_parity_difference(),
            "disparate_impact": cm.disparate_impact(),
            "true_positive_rate_difference": cm.equal_opportunity_difference(),
            "average_odds_difference": cm.average_odds_difference(),
            "between_group_theil_index": cm.between_group_theil_index(),
            "bldm_spd": bm.statistical_parity_difference(),
            "bldm_di": bm.disparate_impact(),
        }


def _same(a, b):
    if np.isnan(b):
        return np.isnan(a)
    if np.isinf(b):
        return a == b
    return abs(a - b) <= 1e-12


FORMS = {
    "list": lambda v: list(v),
    "array": lambda v: np.asarray(v),
    "series": lambda v: pd.Series(v, index=np.arange(len(v))[::-1]),  # index order is ignored
    "frame": lambda v: pd.DataFrame({"s": v}),
}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("labels", ["int", "str", "three"])
def test_equal_to_aif360_over_seeds_and_input_forms(seed, labels):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 200))
    yt = rng.integers(0, 2, n)
    yp = (rng.random(n) < 0.2 + 0.6 * rng.random()).astype(int)
    if labels == "int":
        groups, privileged = rng.integers(0, 2, n), 1
    elif labels == "str":
        groups, privileged = np.where(rng.random(n) < 0.4, "male", "female"), "male"
    else:  # three groups; privileged given as a list of two values
        groups, privileged = rng.choice(["a", "b", "c"], n), ["a", "c"]
    groups = np.asarray(groups)
    priv_values = privileged if isinstance(privileged, list) else [privileged]
    ref = _aif360(yt, yp, list(groups), priv_values)
    assert _same(ref["bldm_spd"], ref["statistical_parity_difference"])
    for form_name, form in FORMS.items():
        sf = form(groups)
        for name in SIGNED:
            got = getattr(M, name)(list(yt), yp, protected=sf, privileged=privileged)
            assert isinstance(got, float)
            assert _same(got, ref[name]), (form_name, name, got, ref[name])
        rep = M.aif360_report(yt, pd.Series(yp), protected=sf,
                              privileged=privileged).set_index("metric")["value"]
        for name in SIGNED + ["between_group_theil_index"]:
            assert _same(rep[name], ref[name]), (name, rep[name], ref[name])


def test_division_by_zero_as_in_aif360():
    groups = np.array([0, 0, 0, 1, 1, 1])
    # privileged (1) never selected, unprivileged sometimes: inf
    yp = np.array([1, 0, 1, 0, 0, 0])
    yt = np.array([1, 0, 1, 1, 0, 1])
    ref = _aif360(yt, yp, list(groups), [1])
    assert np.isinf(ref["disparate_impact"])
    with pytest.warns(RuntimeWarning, match="division by zero"):
        assert M.disparate_impact(yt, yp, protected=groups, privileged=1) == np.inf
    # nobody selected: 0/0 = nan
    zero = np.zeros(6, int)
    ref = _aif360(yt, zero, list(groups), [1])
    assert np.isnan(ref["disparate_impact"])
    with pytest.warns(RuntimeWarning):
        assert np.isnan(M.disparate_impact(yt, zero, protected=groups, privileged=1))
    # a group without positive labels: TPR undefined -> nan in both
    yt2 = np.array([1, 0, 1, 0, 0, 0])
    ref = _aif360(yt2, yp, list(groups), [1])
    assert np.isnan(ref["average_odds_difference"]) and np.isnan(ref["true_positive_rate_difference"])
    with pytest.warns(RuntimeWarning, match="true positive rate of the privileged"):
        assert np.isnan(M.average_odds_difference(yt2, yp, protected=groups, privileged=1))


def test_sign_is_unprivileged_minus_privileged_by_hand():
    # unprivileged (f): 1 of 4 selected; privileged (m): 3 of 4 selected
    yp = [1, 0, 0, 0, 1, 1, 1, 0]
    yt = [1, 1, 0, 0, 1, 1, 0, 0]
    sf = ["f"] * 4 + ["m"] * 4
    assert M.statistical_parity_difference(None, yp, protected=sf, privileged="m") == -0.5
    assert M.disparate_impact(None, yp, protected=sf, privileged="m") == pytest.approx(1 / 3)
    # TPR: f 1/2, m 2/2; FPR: f 0/2, m 1/2
    assert M.true_positive_rate_difference(yt, yp, protected=sf, privileged="m") == -0.5
    assert M.average_odds_difference(yt, yp, protected=sf, privileged="m") == -0.5
    # swapping the roles flips the sign / inverts the ratio
    assert M.statistical_parity_difference(None, yp, protected=sf, privileged="f") == 0.5
    assert M.disparate_impact(None, yp, protected=sf, privileged="f") == pytest.approx(3)


@pytest.mark.parametrize("name", SIGNED)
def test_bad_inputs_name_the_argument(name):
    f = getattr(M, name)
    yt, yp, sf = [1, 0, 1, 0], [1, 1, 0, 0], ["a", "a", "b", "b"]
    cases = [
        (dict(y_true=yt, y_pred=yp[:3], protected=sf, privileged="a"), "differ in length"),
        (dict(y_true=yt, y_pred=yp, protected=sf[:3], privileged="a"), "protected"),
        (dict(y_true=yt, y_pred=[0, 2, 1, 0], protected=sf, privileged="a"), "y_pred"),
        (dict(y_true=yt, y_pred=[0.3, 0.9, 0.1, 0.5], protected=sf, privileged="a"), "y_pred"),
        (dict(y_true=[0, 1, 5, 0], y_pred=yp, protected=sf, privileged="a"), "y_true"),
        (dict(y_true=yt, y_pred=yp, protected=sf, privileged="z"), "privileged"),
        (dict(y_true=yt, y_pred=yp, protected=[0, 0, 1, 1], privileged="1"), "privileged"),
        (dict(y_true=yt, y_pred=yp, protected=sf, privileged=["a", "b"]), "privileged"),
        (dict(y_true=yt, y_pred=yp, protected=sf, privileged=None), "privileged"),
        (dict(y_true=yt, y_pred=yp, protected=sf, privileged=[]), "privileged"),
        (dict(y_true=yt, y_pred=yp, protected=["a", None, "b", "b"], privileged="a"),
         "protected"),
        (dict(y_true=yt, y_pred=yp, protected=np.zeros((4, 2)), privileged=0),
         "protected"),
        (dict(y_true=yt, y_pred=yp, protected=pd.DataFrame({"a": sf, "b": sf}),
              privileged="a"), "protected"),
        (dict(y_true=yt, y_pred=[], protected=[], privileged="a"), "y_pred"),
    ]
    for kw, word in cases:
        with pytest.raises(ValueError, match=word):
            f(kw.pop("y_true"), kw.pop("y_pred"), **kw)
    with pytest.raises(TypeError):
        f(yt, yp, sf, "a")  # keyword-only
    if name in ("true_positive_rate_difference", "average_odds_difference"):
        with pytest.raises(ValueError, match="y_true"):
            f(None, yp, protected=sf, privileged="a")


@settings(max_examples=25, deadline=None)
@given(data=st.data(), n=st.integers(2, 30), kind=st.sampled_from(["int", "str", "bool", "float"]))
def test_hypothesis_matches_a_brute_force_twin(data, n, kind):
    yt = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    yp = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    g = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    if g.min() == g.max():
        g[0] = 1 - g[0]
    sf = {"int": g, "str": np.where(g == 1, "yes", "no"), "bool": g == 1, "float": g * 1.0}[kind]
    priv = {"int": 1, "str": "yes", "bool": True, "float": 1.0}[kind]
    P, U = g == 1, g == 0

    def rate(num, den):
        with np.errstate(all="ignore"):
            return np.float64(num.sum()) / np.float64(den.sum())

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        spd = M.statistical_parity_difference(yt, yp, protected=sf, privileged=priv)
        di = M.disparate_impact(yt, yp, protected=sf, privileged=priv)
        aod = M.average_odds_difference(yt, yp, protected=sf, privileged=priv)
        su, sp = rate((yp == 1) & U, U), rate((yp == 1) & P, P)
        tpr = rate((yp == 1) & (yt == 1) & U, (yt == 1) & U) - rate((yp == 1) & (yt == 1) & P, (yt == 1) & P)
        fpr = rate((yp == 1) & (yt == 0) & U, (yt == 0) & U) - rate((yp == 1) & (yt == 0) & P, (yt == 0) & P)
        with np.errstate(all="ignore"):
            want_di = su / sp
    assert _same(spd, su - sp)
    assert _same(di, want_di)
    assert _same(aod, 0.5 * (fpr + tpr))
