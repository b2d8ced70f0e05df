"""Property-based boundary tests for the TestSGD entry points (issue 11): awkward and bad
inputs give the correct result (cross-checked against brute-force twins or the model
called by hand) or a ValueError/TypeError naming the argument."""
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fairlens.testsgd import (
    TestSGD,
    frequent_rule_sets,
    frequent_rule_sets_bruteforce,
    round_edges,
    text_frequent_rule_sets,
)
from tests._support.testsgd_fixtures import PlantedModel, make_toy

SETTINGS = settings(max_examples=20, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
FAST = dict(sample_thr=50, max_samples=400, random_state=0)
TOY = make_toy(400, seed=3)
PLANTED = PlantedModel()

BAD = {
    "theta": [0, -0.1, 1.01, np.nan, np.inf, "0.1", None, True],
    "error": [0, -1, 2.0, np.nan, "x", None],
    "confidence": [0, 1, 1.5, np.nan, "0.95"],
    "sample_thr": [0, -5, 2.5, "10", None],
    "max_samples": [1, 49, 3.5, 10**13],
    "n_bins": [0, 1, -3, 2.5, "10", None],
    "threshold": [-0.1, 1.5, np.nan, np.inf, "0.5", None],
    "batch_rows": [0, -1, 1.5, "many"],
    "max_size": [0, -1, 1.5, "2"],
    "max_values": [0, 1, 2.5],
    "max_rule_sets": [0, -1, 1.5],
    "strategy": ["fast", "", 3, None],
    "rule_form": ["box", None, 1],
    "binning": ["quantile", None, 1],
    "random_state": ["abc", -1, 2**33, 1.5, [1, 2]],
    "perturbation": [0, -1, np.nan, "big", {"height": 1}, {"age": -1}],
    "bins": ["ten", {"height": 3}, {"age": 1}, {"age": [3, 2, 1]}, {"age": [0, np.nan, 5]}],
    "progress": ["yes", 1],
}


@SETTINGS
@given(data=st.data())
def test_bad_constructor_values_name_the_argument(data):
    name = data.draw(st.sampled_from(sorted(BAD)))
    value = data.draw(st.sampled_from(BAD[name]))
    kw = {**FAST, name: value}
    with pytest.raises((ValueError, TypeError)) as info:
        TestSGD(PLANTED, TOY, protected=["gender", "age"], **kw)
    assert name in str(info.value) or (name == "max_samples" and "sample_thr" in str(info.value))


@SETTINGS
@given(theta=st.floats(0.01, 1.0), max_size=st.one_of(st.none(), st.integers(1, 3)),
       n_bins=st.integers(2, 6), binning=st.sampled_from(["equal_width", "round"]),
       rule_form=st.sampled_from(["interval", "threshold"]), seed=st.integers(0, 5))
def test_frequent_rule_sets_equal_the_bruteforce_twin(theta, max_size, n_bins, binning, rule_form, seed):
    ds = make_toy(120, seed=seed)
    kw = dict(n_bins=n_bins, max_size=max_size, binning=binning, rule_form=rule_form)
    fr = frequent_rule_sets(ds, ["gender", "race", "age"], theta, **kw)
    bf = frequent_rule_sets_bruteforce(ds, ["gender", "race", "age"], theta, **kw)
    assert {str(r): int(c) for r, c in zip(fr.rule_sets, fr.counts)} == bf
    if max_size is not None:
        assert all(len(r) <= max_size for r in fr.rule_sets)


@SETTINGS
@given(lo=st.floats(-1e6, 1e6), width=st.floats(1e-3, 1e6), k=st.integers(2, 30))
def test_round_edges_cover_with_round_widths(lo, width, k):
    hi = lo + width
    assume(hi > lo and (hi - lo) / max(abs(lo), abs(hi), 1e-300) > 1e-9)
    e = round_edges(lo, hi, k)
    w = e[1] - e[0]
    mant = w / 10 ** np.floor(np.log10(w))
    assert any(np.isclose(mant, m) or np.isclose(mant, 10 * m) for m in (1, 2, 2.5, 5, 0.1))
    assert e[0] <= lo + 1e-9 * max(1, abs(lo)) and e[-1] >= hi - 1e-9 * max(1, abs(hi))
    assert 2 <= len(e) - 1 <= k + 2
    assert np.all(np.diff(e) > 0)


@pytest.fixture(scope="module")
def reordered_model():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    names = TOY.feature_names
    cols = names[::-1]
    Xdf = pd.DataFrame(TOY.X, columns=names)[cols]
    return make_pipeline(StandardScaler(), LogisticRegression()).fit(Xdf, TOY.y), cols


@SETTINGS
@given(threshold=st.floats(0.0, 1.0), fav=st.sampled_from([0, 1]))
def test_accuracy_of_a_reordered_dataframe_model_matches_the_model_called_by_hand(
        reordered_model, threshold, fav):
    model, cols = reordered_model
    t = TestSGD(model, TOY, protected=["gender"], threshold=threshold, favourable=fav, **FAST)
    p = model.predict_proba(pd.DataFrame(TOY.X, columns=TOY.feature_names)[cols])[:, fav]
    expected = float(np.mean((p >= threshold) == (TOY.y == fav)))
    rep = t.run(stop=lambda: True)
    assert rep.accuracy == pytest.approx(expected)
    assert "DataFrame" in rep.params["model_input"]


@SETTINGS
@given(k=st.integers(-5, 50))
def test_top_k(k):
    rep = _report()
    if k < 0:
        with pytest.raises(ValueError, match="k"):
            rep.top(k)
    else:
        top = rep.top(k)
        assert len(top) == min(k, len(rep.results))
        # report order: selection score throughout (the re-estimated ones are the first)
        finite = top["score"].dropna()
        assert list(finite) == sorted(finite, reverse=True)
        fresh = top["fresh_score"].notna().to_numpy()
        assert not np.any(fresh[1:] & ~fresh[:-1])  # no re-estimated row after a plain one
        assert list(top.index) == list(range(len(top)))
        assert top["fresh_score"].notna().sum() == min(k, rep.params["top_k"], len(rep.results))


_CACHE = {}


def _report():
    if "rep" not in _CACHE:
        _CACHE["rep"] = TestSGD(PLANTED, TOY, protected=["gender", "race"], **FAST).run()
    return _CACHE["rep"]


@SETTINGS
@given(docs=st.one_of(st.text(max_size=20),
                      st.lists(st.one_of(st.text(max_size=15), st.integers(), st.none()), max_size=5),
                      st.lists(st.sampled_from(["a gay man", "an old woman", "a young muslim",
                                                "the christian", ""]), max_size=6)))
def test_text_rule_sets_take_lists_of_strings(docs):
    ok = isinstance(docs, list) and docs and all(isinstance(d, str) for d in docs)
    if not ok:
        with pytest.raises((TypeError, ValueError), match="docs"):
            text_frequent_rule_sets(docs, theta=0.2)
        return
    fr = text_frequent_rule_sets(docs, theta=0.2)
    assert all(c >= 0.2 * len(docs) - 1e-9 for c in fr.counts)


@SETTINGS
@given(kind=st.sampled_from(["nan", "inf", "1row", "strings", "1d", "const"]))
def test_awkward_datasets(kind):
    ds = make_toy(60, seed=1)
    if kind == "nan":
        ds.X[0, 4] = np.nan
    elif kind == "inf":
        ds.X[5, 2] = np.inf
    elif kind == "1row":
        ds = SimpleNamespace(**{**vars(ds), "X": ds.X[:1], "y": ds.y[:1]})
    elif kind == "strings":
        ds = SimpleNamespace(**{**vars(ds), "X": np.array([["a"] * 5] * 3)})
    elif kind == "1d":
        ds = SimpleNamespace(**{**vars(ds), "X": ds.X[:, 0]})
    elif kind == "const":
        ds.X[:, 2] = 40.0
    if kind in ("nan", "inf", "strings", "1d"):
        with pytest.raises((ValueError, TypeError), match="dataset.X"):
            TestSGD(PLANTED, ds, protected=["gender", "age"], **FAST)
        return
    rep = TestSGD(PLANTED, ds, protected=["gender", "age"], **FAST).run()
    # one row: every rule set is either everybody or nobody -> "no-seeds" or not frequent
    assert all(r.status in ("ok", "cap", "no-seeds") for r in rep.results)
    if kind == "1row":
        assert all(r.status == "no-seeds" for r in rep.results)
    if kind == "const":
        # a constant age: a rule on age alone selects everybody (or nobody)
        age_only = [r for r in rep.results if r.rule_set.features == ("age",)]
        assert age_only and all(r.status == "no-seeds" for r in age_only)
