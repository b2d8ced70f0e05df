"""Issue 11 regressions for TestSGD: one model protocol, validation at the boundary, one
stop convention; and the issue-13 options (round bins, merged equivalents, signed scores)."""
import threading
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from fairlens.testsgd import TestSGD, frequent_rule_sets, round_edges, text_frequent_rule_sets
from tests._support.testsgd_fixtures import make_toy

FAST = dict(sample_thr=100, max_samples=2000, random_state=0)


@pytest.fixture(scope="module")
def german():
    from fairlens.datasets import load_german_credit

    return load_german_credit()


# ------------------------------------------------------------------ model protocol
def test_readable_frame_pipeline_is_decoded(german):
    """A ColumnTransformer+OneHotEncoder+LogisticRegression pipeline fitted on
    dataset.frame[dataset.feature_names] gives the same report as the same model called
    correctly (rows decoded by hand)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    ds = german
    frame = ds.frame[ds.feature_names]
    cats = [c for c, t in zip(ds.feature_names, ds.feature_types) if t == "categorical"]
    pipe = make_pipeline(
        ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), cats)],
                          remainder=StandardScaler()),
        LogisticRegression(max_iter=500)).fit(frame, ds.y)

    def by_hand(A):
        return pipe.predict_proba(ds.decode(A)[ds.feature_names])[:, 1]

    rep = TestSGD(pipe, ds, protected=["sex", "age"], **FAST).run()
    ref = TestSGD(by_hand, ds, protected=["sex", "age"], **FAST).run()
    assert rep.params["model_input"].startswith("Pipeline") and "readable" in rep.params["model_input"]
    assert "callable" in ref.params["model_input"]
    expected_acc = float(np.mean(pipe.predict(frame) == ds.y))
    assert rep.accuracy == pytest.approx(expected_acc) and ref.accuracy == pytest.approx(expected_acc)
    pd.testing.assert_frame_equal(rep.to_frame(), ref.to_frame())


def test_encoded_dataframe_model_with_reordered_columns(german):
    """TestSGD on a model fitted with reordered columns reported accuracy 0.40."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    ds = german
    names = list(ds.feature_names)
    Xdf = pd.DataFrame(ds.X, columns=names)[names[::-1]]
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)).fit(Xdf, ds.y)

    def by_hand(A):
        return model.predict_proba(pd.DataFrame(A, columns=names)[names[::-1]])[:, 1]

    rep = TestSGD(model, ds, protected=["sex"], **FAST).run()
    ref = TestSGD(by_hand, ds, protected=["sex"], **FAST).run()
    assert "DataFrame" in rep.params["model_input"]
    expected_acc = float(np.mean(model.predict(Xdf) == ds.y))
    assert expected_acc > 0.7
    assert rep.accuracy == pytest.approx(expected_acc)
    pd.testing.assert_frame_equal(rep.to_frame(), ref.to_frame())


def test_callable_logits_are_refused_unless_declared(toy):
    def logits(A):
        return np.asarray(A)[:, 3] - 4.5          # education - 4.5: outside [0, 1]

    with pytest.raises(ValueError, match="logit"):
        TestSGD(logits, toy, protected=["gender"], **FAST).run()
    from fairlens.models import as_scorer

    rep = TestSGD(as_scorer(logits, output="logit"), toy, protected=["gender"], **FAST).run()
    expected = float(np.mean((toy.X[:, 3] - 4.5 >= 0) == (toy.y == 1)))
    assert rep.accuracy == pytest.approx(expected)


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize("kw, exc, name", [
    (dict(threshold=1.5), ValueError, "threshold"),
    (dict(threshold=float("nan")), ValueError, "threshold"),
    (dict(threshold="0.5"), TypeError, "threshold"),
    (dict(theta=0), ValueError, "theta"),
    (dict(theta=1.2), ValueError, "theta"),
    (dict(theta=float("nan")), ValueError, "theta"),
    (dict(error=0), ValueError, "error"),
    (dict(error=float("inf")), ValueError, "error"),
    (dict(confidence=1.0), ValueError, "confidence"),
    (dict(confidence=0), ValueError, "confidence"),
    (dict(sample_thr=0), ValueError, "sample_thr"),
    (dict(sample_thr=10.5), TypeError, "sample_thr"),
    (dict(max_samples=50, sample_thr=100), ValueError, "max_samples"),
    (dict(max_samples=10**12), ValueError, "max_samples"),
    (dict(n_bins=1), ValueError, "n_bins"),
    (dict(n_bins=2.5), TypeError, "n_bins"),
    (dict(bins={"height": 5}), ValueError, "bins"),
    (dict(bins={"age": 1}), ValueError, "bins"),
    (dict(bins={"age": "ten"}), TypeError, "bins"),
    (dict(bins={"age": [0, 50, 40]}), ValueError, "bins"),
    (dict(perturbation=-1), ValueError, "perturbation"),
    (dict(perturbation={"height": 1}), ValueError, "perturbation"),
    (dict(batch_rows=0), ValueError, "batch_rows"),
    (dict(strategy="fast"), ValueError, "strategy"),
    (dict(rule_form="box"), ValueError, "rule_form"),
    (dict(binning="quantile"), ValueError, "binning"),
    (dict(max_size=0), ValueError, "max_size"),
    (dict(max_size=-2), ValueError, "max_size"),
    (dict(random_state="abc"), TypeError, "random_state"),
    (dict(random_state=-1), ValueError, "random_state"),
    (dict(progress="yes"), TypeError, "progress"),
])
def test_bad_parameters_name_the_argument(toy, planted, kw, exc, name):
    kw = {**FAST, **kw}
    with pytest.raises(exc, match=name):
        TestSGD(planted, toy, protected=["gender", "age"], **kw)


def test_max_size_none_is_no_limit_and_zero_is_refused(toy):
    full = frequent_rule_sets(toy, ["gender", "race", "age"], 0.05, max_size=None)
    assert max(len(r) for r in full.rule_sets) == 3
    one = frequent_rule_sets(toy, ["gender", "race", "age"], 0.05, max_size=1)
    assert max(len(r) for r in one.rule_sets) == 1
    with pytest.raises(ValueError, match="max_size"):
        frequent_rule_sets(toy, ["gender", "race", "age"], 0.05, max_size=0)
    with pytest.raises(ValueError, match="max_size"):
        text_frequent_rule_sets(["a gay man"], max_size=0)


def test_top_k_must_be_non_negative(toy, planted):
    rep = TestSGD(planted, toy, protected=["gender"], **FAST).run()
    assert len(rep.top(1)) == 1 and len(rep.top(0)) == 0
    with pytest.raises(ValueError, match="k"):
        rep.top(k=-1)
    with pytest.raises(TypeError, match="k"):
        rep.top(k=1.5)


def test_text_docs_must_be_a_list_of_strings():
    with pytest.raises(TypeError, match="docs"):
        text_frequent_rule_sets("a gay man")
    with pytest.raises(TypeError, match="docs"):
        text_frequent_rule_sets(["a gay man", 3])
    with pytest.raises(ValueError, match="docs"):
        text_frequent_rule_sets([])
    fr = text_frequent_rule_sets(["a gay man", "an old woman"], categories="gender", theta=0.5)
    assert len(fr) == len(fr.rules["gender"])


def test_nan_in_data_is_refused(planted):
    ds = make_toy(200)
    ds.X[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        TestSGD(planted, ds, protected=["gender"], **FAST)


# ------------------------------------------------------------------ stop convention
def test_stop_accepts_event_and_callable_and_stop_flag_is_gone(toy, planted):
    """One stop name (issue 21): ``stop_flag`` was a deprecated alias and is now refused."""
    t = TestSGD(planted, toy, protected=["gender", "race"], **FAST)
    ev = threading.Event()
    ev.set()
    rep = t.run(stop=ev)
    assert rep.stopped and len(rep.results) == 0
    rep = t.run(stop=lambda: True)
    assert rep.stopped and len(rep.results) == 0
    full = t.run(stop=threading.Event())
    assert not full.stopped and len(full.results) == full.n_rule_sets > 0
    with pytest.raises(TypeError, match="stop_flag"):
        t.run(stop_flag=lambda: True)
    with pytest.raises(TypeError, match="stop"):
        t.run(stop="now")
    with pytest.raises(TypeError):
        t.run(ev)  # run() takes keywords only


# ------------------------------------------------------------------ issue 13 options
def test_round_edges_are_round_and_cover_the_range():
    e = round_edges(17, 90, 10)
    np.testing.assert_allclose(e, np.arange(10, 91, 10))
    for lo, hi, k in [(0.013, 0.977, 10), (-3.2, 41.7, 7), (1, 2, 2), (1990, 2024, 10), (0, 1e6, 4)]:
        e = round_edges(lo, hi, k)
        w = e[1] - e[0]
        mant = w / 10 ** np.floor(np.log10(w))
        assert any(np.isclose(mant, m) for m in (1, 2, 2.5, 5)), (lo, hi, k, w)
        np.testing.assert_allclose(np.diff(e), w)
        assert e[0] <= lo and e[-1] >= hi
        assert k / 2 <= len(e) - 1 <= k + 2


def test_round_binning_gives_readable_rules():
    rng = np.random.default_rng(1)
    n = 600
    age = rng.integers(17, 91, n)
    ds = SimpleNamespace(name="ages", X=np.column_stack([rng.integers(0, 2, n), age]).astype(float),
                         feature_names=["sex", "age"], feature_types=["categorical", "integer"],
                         bounds=np.array([[0, 1], [17, 90]], float), categories={"sex": {0: "f", 1: "m"}})
    eq = frequent_rule_sets(ds, ["age"], 0.05)
    rd = frequent_rule_sets(ds, ["age"], 0.05, binning="round")
    edges = rd.rules["age"][0].edges
    np.testing.assert_allclose(edges, np.arange(10, 91, 10))
    assert any(str(r) == "40<=age<60" for r in rd.rule_sets)
    assert any("38.9" in str(r) or "60.8" in str(r) for r in eq.rule_sets)   # the paper's edges
    # every row falls in some bin of the round edges and supports are counted exactly
    for r, c in zip(rd.rule_sets, rd.counts):
        assert c == int(r.mask(ds.X).sum())


def _merge_data():
    """Nobody is younger than 20, so age<30 and 20<=age<30 select the same people."""
    rng = np.random.default_rng(0)
    n = 400
    age = rng.integers(20, 100, n)
    g = rng.integers(0, 2, n)
    X = np.column_stack([g, age, rng.integers(0, 10, n)]).astype(float)
    return SimpleNamespace(name="merge", X=X, y=None, feature_names=["gender", "age", "edu"],
                           feature_types=["categorical", "integer", "integer"],
                           bounds=np.array([[0, 1], [0, 100], [0, 9]], float),
                           categories={"gender": {0: "female", 1: "male"}})


def test_merge_equivalent_hand_example():
    ds = _merge_data()

    def model(A):
        A = np.asarray(A)
        return np.where((A[:, 0] == 1) & (A[:, 1] >= 50), 0.9, 0.2)

    rep = TestSGD(model, ds, protected=["age"], theta=0.05, merge_equivalent=False, **FAST).run()
    merged = rep.merge_equivalent()
    strs = [str(r.rule_set) for r in rep.results]
    assert "age<30" in strs and "20<=age<30" in strs
    kept = merged.result_for("age<30")
    assert "20<=age<30" in kept.aliases
    assert "20<=age<30" not in [str(r.rule_set) for r in merged.results]
    assert merged.result_for("20<=age<30") is kept          # an alias finds its finding
    assert kept.score == rep.result_for("age<30").score
    # brute force: one row per distinct support mask, each alias has the kept mask
    masks = {r.rule_set.mask(ds.X).tobytes() for r in rep.results}
    assert len(merged.results) == len(masks) < len(rep.results)
    assert merged.n_rule_sets == rep.n_rule_sets == len(rep.results)   # the mined rule sets stay counted
    for r in merged.results:
        for a in r.aliases:
            np.testing.assert_array_equal(rep.result_for(a).rule_set.mask(ds.X), r.rule_set.mask(ds.X))
            assert len(a) >= len(str(r.rule_set))
    assert merged.to_frame().loc[merged.to_frame().rule_set == "age<30", "aliases"].iloc[0].count(
        "20<=age<30") == 1
    assert len(rep.results) == len(strs)      # the original report is unchanged


def test_identical_masks_are_one_finding_by_default():
    """TestSGD scores one rule set per distinct row mask (issue 36): the others are its aliases,
    the numbers are those the unmerged run gives that rule set (same stream), nothing is lost."""
    ds = _merge_data()

    def model(A):
        A = np.asarray(A)
        return np.where((A[:, 0] == 1) & (A[:, 1] >= 50), 0.9, 0.2)

    rep = TestSGD(model, ds, protected=["age", "gender"], theta=0.05, random_state=3, top_k=4,
                  **{k: v for k, v in FAST.items() if k != "random_state"}).run()
    full = TestSGD(model, ds, protected=["age", "gender"], theta=0.05, random_state=3, top_k=0,
                   merge_equivalent=False, **{k: v for k, v in FAST.items() if k != "random_state"}).run()
    assert rep.params["merge_equivalent"] and not full.params["merge_equivalent"]
    masks = {}
    for r in full.results:
        masks.setdefault(r.rule_set.mask(ds.X).tobytes(), []).append(str(r.rule_set))
    assert len(rep.results) == len(masks) < len(full.results)       # one finding per distinct mask
    assert rep.n_rule_sets == full.n_rule_sets                      # the mined rule sets still counted
    seen = set()
    for r in rep.results:
        key = r.rule_set.mask(ds.X).tobytes()
        assert key not in seen
        seen.add(key)
        assert sorted([str(r.rule_set), *r.aliases]) == sorted(masks[key])   # the whole class, once
        for a in r.aliases:                                                  # the simplest text is kept
            assert (len(a.split(", ")), len(a)) >= (len(r.rule_set), len(str(r.rule_set)))
            assert rep.result_for(a) is r
        twin = full.result_for(str(r.rule_set))
        assert (r.score, r.rate_in, r.rate_out, r.n_samples) == (twin.score, twin.rate_in, twin.rate_out,
                                                                 twin.n_samples)
    again = rep.merge_equivalent()                                   # a merged report stays as it is
    assert [str(r.rule_set) for r in again.results] == [str(r.rule_set) for r in rep.results]
    assert [r.aliases for r in again.results] == [r.aliases for r in rep.results]


def test_small_rest_is_flagged_with_its_row_count():
    """A rule set that almost everybody satisfies compares its group with a handful of rows: the
    result says how many (n_out) and flags it (small_side="rest"); the ranking is unchanged."""
    rng = np.random.default_rng(0)
    n = 400
    age = np.where(np.arange(n) < 3, 19, rng.integers(25, 70, n))       # three 19-year-olds
    X = np.column_stack([age, rng.integers(0, 2, n), rng.integers(0, 10, n)]).astype(float)
    ds = SimpleNamespace(name="rest", X=X, y=None, feature_names=["age", "sex", "edu"],
                         feature_types=["integer", "categorical", "integer"],
                         bounds=np.array([[0, 100], [0, 1], [0, 9]], float),
                         categories={"sex": {0: "female", 1: "male"}})

    def model(A):
        return np.where(np.asarray(A)[:, 0] < 20, 0.9, 0.1)

    kw = {k: v for k, v in FAST.items() if k != "random_state"}
    rep = TestSGD(model, ds, protected=["age", "sex"], theta=0.05, random_state=0, **kw).run()
    assert rep.params["min_side_rows"] == max(30, int(np.ceil(0.05 * n)))
    for r in rep.results:
        mask = r.rule_set.mask(X)
        assert (r.n_in, r.n_out) == (int(mask.sum()), int((~mask).sum()))
        want = "rest" if r.n_out < 30 else ("group" if r.n_in < 30 else "")
        assert r.small_side == want
    top = rep.results[0]
    assert top.n_out == 3 and top.small_side == "rest"              # age>=20 vs three people
    df = rep.to_frame()
    assert {"n_in", "n_out", "small_side"} <= set(df.columns)
    assert df.loc[0, "small_side"] == "rest" and df.loc[0, "n_out"] == 3
    off = TestSGD(model, ds, protected=["age", "sex"], theta=0.05, random_state=0, min_side_rows=0, **kw).run()
    assert not any(r.small_side for r in off.results)
    assert [str(r.rule_set) for r in off.results] == [str(r.rule_set) for r in rep.results]


def test_signed_scores_say_which_side_is_favoured(toy, planted):
    rep = TestSGD(planted, toy, protected=["gender"], **FAST).run()
    male, female = rep.result_for("gender=male"), rep.result_for("gender=female")
    assert male.rate_in > male.rate_out and male.sign == 1
    assert male.favoured == "gender=male" and male.disfavoured == "not (gender=male)"
    assert female.favoured == "not (gender=female)" and female.sign == -1
    df = rep.to_frame()
    assert {"signed_score", "favoured", "favoured_rate", "disfavoured", "disfavoured_rate",
            "aliases"} <= set(df.columns)
    np.testing.assert_allclose(df["favoured_rate"], np.maximum(df["rate_in"], df["rate_out"]))
    np.testing.assert_allclose(df["score"], np.abs(df["signed_score"]))   # the paper's score stays


# ------------------------------------------------------------------ mitigation
def _readable_pipe(ds, target):
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    cats = [c for c, t in zip(ds.feature_names, ds.feature_types) if t == "categorical"]
    return make_pipeline(
        ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), cats)],
                          remainder=StandardScaler()),
        LogisticRegression(max_iter=500)).fit(ds.frame[ds.feature_names], target)


def test_mitigation_refits_a_readable_pipeline_in_its_own_form(german):
    """The retrained clone is fitted on the readable frame with the model's own (string)
    class labels, like the model the auditor deployed."""
    from fairlens.testsgd import mitigate

    train, test = german.split(test_size=0.3, random_state=0)
    pipe = _readable_pipe(train, train.frame[train.target])  # classes are label strings
    rep = TestSGD(pipe, train, protected=["sex"], **FAST).run()
    rs = rep.results[0].rule_set
    res = mitigate(pipe, train, test, rs, ["sex"], amounts=[20, 60], sample_thr=100,
                   max_samples=2000, random_state=0)
    assert len(res.steps) == 2  # before: clone(pipe).fit(encoded array, 0/1) raised
    assert res.steps["accuracy"].between(0.5, 1.0).all()
    if res.best_model is not None:
        assert list(res.best_model.classes_) == list(pipe.classes_)
        assert list(res.best_model.feature_names_in_) == list(pipe.feature_names_in_)


def test_stop_during_a_retraining_abandons_it_at_once(toy, planted):
    """A stop pressed while a retraining runs ends mitigate without waiting for that fit;
    the steps done are kept."""
    from sklearn.linear_model import LogisticRegression

    from fairlens.testsgd import mitigate

    release = threading.Event()
    fits = []
    stop = threading.Event()

    def fit(X, y):
        fits.append(len(y))
        if len(fits) == 2:  # the second retraining hangs until released
            stop.set()
            release.wait(60)
        return LogisticRegression(max_iter=200).fit(X, y)

    train = test = toy
    rep = TestSGD(planted, train, protected=["gender"], **FAST).run()
    try:
        res = mitigate(planted, train, test, rep.results[0].rule_set, ["gender"], amounts=[20, 40, 80],
                       fit=fit, sample_thr=100, max_samples=2000, random_state=0, stop=stop)
        assert release.is_set() is False  # returned while the second fit was still hanging
        assert len(res.steps) == 1 and len(fits) == 2
    finally:
        release.set()
