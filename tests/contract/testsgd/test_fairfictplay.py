"""FairFictPlay's subgroup auditor (Kearns et al. 2018): brute-force twin, AIF360 cross-check, inputs."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairlens.testsgd import FairFictPlay, SubgroupAudit, audit_subgroups
from tests._support.testsgd_fixtures import PlantedModel, make_toy

TOY = make_toy(n=800, seed=2)
PLANTED = PlantedModel()


class OnlySensitive:
    """Favourable iff male and age >= 40."""

    def predict_proba(self, X):
        p = ((X[:, 0] == 1) & (X[:, 2] >= 40)).astype(float)
        return np.column_stack([1 - p, p])


def _twin(d, Xp, subset, n):
    """Independent transcription of the auditor with numpy least squares (intercept column)."""
    A = np.column_stack([Xp[subset], np.ones(subset.sum())])
    p = d[subset]
    base = p.mean()
    out = []
    for sign in (1.0, -1.0):
        w, *_ = np.linalg.lstsq(A, sign * (p - base) / n, rcond=None)
        mem = A @ w < 0
        r = p[mem].mean() if mem.any() else 0.0
        out.append((mem.sum() / n * abs(r - base), mem))
    return max(out, key=lambda t: t[0]) if out[1][0] > out[0][0] else out[0]


def test_auditor_equals_an_independent_least_squares_twin():
    rng = np.random.default_rng(0)
    n = 600
    Xp = np.column_stack([rng.integers(0, 2, n), rng.normal(size=n), rng.integers(0, 3, n)]).astype(float)
    d = (rng.random(n) < 0.2 + 0.5 * Xp[:, 0] * (Xp[:, 1] > 0)).astype(float)
    y = rng.integers(0, 2, n)
    for metric in ("SP", "FP", "FN"):
        r = audit_subgroups(d, Xp, y=y, metric=metric)
        subset = {"SP": np.ones(n, bool), "FP": y == 0, "FN": y == 1}[metric]
        rate = 1 - d if metric == "FN" else d
        gamma, mem = _twin(rate, Xp, subset, n)
        assert r["gamma"] == pytest.approx(gamma, abs=1e-12)
        np.testing.assert_array_equal(r["members"][subset], mem)
        assert not r["members"][~subset].any()
        assert r["alpha"] == pytest.approx(r["members"].sum() / n)
        assert r["gamma"] == pytest.approx(r["alpha"] * r["beta"])
        assert r["beta"] == pytest.approx(abs(rate[r["members"]].mean() - rate[subset].mean()))


def _aif360_audit(Xp, names, d, y, metric):
    aif = pytest.importorskip("aif360")  # noqa: F841  (test dependency only)
    from aif360.algorithms.inprocessing.gerryfair.auditor import Auditor
    from aif360.datasets import BinaryLabelDataset

    df = pd.DataFrame(Xp, columns=names).assign(label=np.asarray(y, float))
    ds = BinaryLabelDataset(df=df, label_names=["label"], protected_attribute_names=names)
    return Auditor(ds, metric).audit(np.asarray(d, float))


@pytest.mark.parametrize("metric", ["FP", "FN", "SP"])
def test_cross_check_against_aif360_gerryfair_auditor(metric):
    """Same group and the same gamma as AIF360's Auditor (gerryfair, Kearns et al.'s code).
    SP is the FP audit with every label 0 (all rows audited)."""
    rng = np.random.default_rng(1)
    n = 500
    Xp = np.column_stack([rng.integers(0, 2, n), rng.normal(40, 12, n), rng.integers(0, 2, n)]).astype(float)
    names = ["sex", "age", "race_black"]
    d = (rng.random(n) < 0.15 + 0.5 * Xp[:, 0] * (Xp[:, 1] > 40)).astype(float)
    y = rng.integers(0, 2, n)
    ours = audit_subgroups(d, Xp, y=y, metric=metric)
    if metric == "SP":
        mem, gamma = _aif360_audit(Xp, names, d, np.zeros(n), "FP")
    else:
        mem, gamma = _aif360_audit(Xp, names, d, y, metric)
    subset = {"SP": np.ones(n, bool), "FP": y == 0, "FN": y == 1}[metric]
    np.testing.assert_array_equal(np.asarray(mem)[subset].astype(bool), ours["members"][subset])
    assert ours["gamma"] == pytest.approx(gamma, rel=1e-9, abs=1e-12)


def test_fairfictplay_on_a_model_finds_the_planted_group():
    res = FairFictPlay(OnlySensitive(), TOY, protected=["gender", "race", "age"]).audit()
    assert isinstance(res, SubgroupAudit)
    group = (TOY.X[:, 0] == 1) & (TOY.X[:, 2] >= 40)
    # a linear threshold function over (gender one-hot, race one-hot, age) cannot express the AND
    # exactly; the auditor finds a superset of the favoured men over 40: everybody favourable is in
    # it (rate outside 0) and its rate is about twice the baseline
    assert (res.members & group).sum() == group.sum() and res.rate_out == 0.0
    assert res.direction == 1 and res.rate_in > 1.8 * res.baseline
    d = group.astype(float)
    assert res.baseline == pytest.approx(d.mean())
    assert res.rate_in == pytest.approx(d[res.members].mean())
    assert res.rate_out == pytest.approx(d[~res.members].mean())
    assert res.score == pytest.approx(abs(res.rate_in - res.rate_out))
    assert res.gamma == pytest.approx(res.alpha * res.beta) and res.gamma > 0.1
    assert list(res.coef.index) == ["gender=female", "gender=male", "race=White", "race=Black",
                                    "race=Asian-Pac-Islander", "race=Other", "age"]
    # the reported function reproduces the members
    Xp = np.column_stack([TOY.X[:, 0] == 0, TOY.X[:, 0] == 1] + [TOY.X[:, 1] == v for v in range(4)]
                         + [TOY.X[:, 2]]).astype(float)
    np.testing.assert_array_equal(Xp @ res.coef.to_numpy() + res.intercept < 0, res.members)
    f = res.to_frame()
    assert f.loc[0, "gamma"] == res.gamma and "< 0" in f.loc[0, "subgroup"]
    assert "callable" in res.params["model_input"] or "encoded" in res.params["model_input"]


def test_fairfictplay_fp_uses_labels_and_favourable_class():
    a = FairFictPlay(PLANTED, TOY, protected=["gender", "age"], metric="FP").audit()
    fav = PLANTED.predict_proba(TOY.X)[:, 1] >= 0.5
    neg = TOY.y == 0
    assert not a.members[~neg].any()
    assert a.baseline == pytest.approx(fav[neg].mean())
    b = FairFictPlay(PLANTED, TOY, protected=["gender", "age"], metric="SP", soft=True).audit()
    assert b.baseline == pytest.approx(PLANTED.predict_proba(TOY.X)[:, 1].mean())


def test_plot_and_describe():
    import matplotlib

    matplotlib.use("Agg")
    res = FairFictPlay(PLANTED, TOY, protected=["gender", "race", "age"]).audit()
    ax = res.plot()
    assert len(ax) == 2
    assert res.coefficients().shape == (7, 2)
    assert res.describe().endswith("< 0")


@pytest.mark.parametrize("kw, exc, name", [
    (dict(protected=["height"]), ValueError, "height"),
    (dict(protected=[3]), TypeError, "protected"),
    (dict(protected=[]), ValueError, "protected"),
    (dict(protected=["gender", "gender"]), ValueError, "distinct"),
    (dict(metric="EO"), ValueError, "metric"),
    (dict(threshold=1.5), ValueError, "threshold"),
    (dict(threshold="x"), TypeError, "threshold"),
    (dict(soft="no"), TypeError, "soft"),
])
def test_bad_inputs(kw, exc, name):
    base = dict(protected=["gender", "age"])
    base.update(kw)
    with pytest.raises(exc, match=name):
        FairFictPlay(PLANTED, TOY, **base)


def test_fp_without_labels_is_refused():
    from types import SimpleNamespace

    ds = SimpleNamespace(**{k: getattr(TOY, k) for k in ("X", "feature_names", "feature_types", "bounds",
                                                          "categories", "protected")}, y=None, name="nolab")
    with pytest.raises(ValueError, match="labels"):
        FairFictPlay(PLANTED, ds, protected=["gender"], metric="FP")


@settings(max_examples=20, deadline=None)
@given(n=st.integers(0, 6), bad=st.sampled_from(["nan", "inf", "shape", "ok"]),
       metric=st.sampled_from(["SP", "FP", "FN"]))
def test_audit_subgroups_awkward_inputs(n, bad, metric):
    rng = np.random.default_rng(n)
    d = rng.integers(0, 2, n).astype(float)
    Xp = rng.normal(size=(n, 2))
    y = rng.integers(0, 2, n)
    if bad == "nan" and n:
        Xp[0, 0] = np.nan
    if bad == "inf" and n:
        d = d.copy()
        d[0] = np.inf
    if bad == "shape":
        Xp = Xp[:, 0]
    try:
        r = audit_subgroups(d, Xp, y=y, metric=metric)
    except ValueError as e:
        assert any(w in str(e) for w in ("Xp", "finite", "no row", "metric", "y"))
        return
    assert bad == "ok" or n == 0
    assert 0 <= r["alpha"] <= 1 and r["gamma"] >= 0 and r["members"].shape == (n,)
