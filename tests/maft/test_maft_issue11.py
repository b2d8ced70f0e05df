"""Regression tests of issue 11 for fairlens.maft: an auditor's own model and data.

Every reported instance is re-checked with an *independent* oracle that calls the
user's model the way the user would (``pipe.predict_proba(dataset.decode(rows))``,
a DataFrame in the model's own column order, the plain callable), never through
fairlens' scorer.
"""
from __future__ import annotations

import threading
import tracemalloc

import numpy as np
import pandas as pd
import pytest

from fairlens.maft import (
    ADF,
    AEQUITAS,
    EIDIG,
    MAFT,
    compare_gradients,
    discrimination_rate,
    discriminatory_mask,
    retrain_with_instances,
    select_seeds,
    zero_order_gradient,
)

from ._maft_oracle import check_result


# ----------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def german():
    from fairlens.datasets import load_german_credit

    return load_german_credit()


@pytest.fixture(scope="module")
def readable_pipe(german):
    """ColumnTransformer(OneHotEncoder on the categorical columns, scaler on numbers) +
    LogisticRegression, fitted on the readable frame with the readable target labels."""
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    F = german.frame[german.feature_names]
    cat = [c for c in F.columns if F[c].dtype == object or not pd.api.types.is_numeric_dtype(F[c])]
    num = [c for c in F.columns if c not in cat]
    pipe = make_pipeline(
        ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), cat), ("num", StandardScaler(), num)]),
        LogisticRegression(max_iter=2000),
    )
    return pipe.fit(F, german.frame[german.target])


@pytest.fixture(scope="module")
def reordered_lr(german):
    """LogisticRegression fitted on an encoded DataFrame whose columns are REVERSED."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    cols = list(german.feature_names)[::-1]
    Xdf = pd.DataFrame(german.X, columns=german.feature_names)[cols]
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(Xdf, german.y), cols


def _oracle_readable(pipe, ds):
    good = list(pipe.classes_).index("good")
    return lambda X: pipe.predict_proba(ds.decode(np.atleast_2d(X)))[:, good]


def _recheck(score, ds, result, prot):
    """Definition 2.1 by brute force through ``score`` (an independent oracle)."""
    idx = [ds.index_of(p) for p in prot]
    grids = [np.arange(ds.bounds[i, 0], ds.bounds[i, 1] + 1) for i in idx]
    combos = np.array(np.meshgrid(*grids, indexing="ij")).reshape(len(idx), -1).T
    assert result.n_instances > 0
    X = result.instances
    assert len({tuple(r) for r in X}) == len(X)
    for x, cp in zip(X, result.counterparts):
        R = np.repeat(x[None, :], len(combos), axis=0)
        R[:, idx] = combos
        lab = score(R) > 0.5
        y0 = score(x) > 0.5
        assert np.any(lab != y0), "reported instance is not discriminatory"
        assert (score(cp) > 0.5) != y0
        free = np.setdiff1d(np.arange(X.shape[1]), idx)
        np.testing.assert_array_equal(x[free], cp[free])


# ----------------------------------------------------------------------------- 1. model protocol
@pytest.mark.parametrize("cls", [MAFT, AEQUITAS])
def test_readable_pipeline_audited_directly(german, readable_pipe, cls):
    res = cls(readable_pipe, german, protected=["age"]).run(n_seeds=20, n_local=8, random_state=0)
    assert "readable" in res.params["model_input"]
    assert res.params["favourable_class"] == "good"
    _recheck(_oracle_readable(readable_pipe, german), german, res, ["age"])
    fr = res.to_frame(max_rows=3)
    assert set(fr[("x", "sex")]) <= {"male", "female"} | set(german.frame["sex"])


def test_readable_pipeline_favourable_class(german, readable_pipe):
    s = MAFT(readable_pipe, german, protected=["age"], favourable_class="good")
    assert s.params()["favourable_class"] == "good"
    with pytest.raises(ValueError, match="favourable_class"):
        MAFT(readable_pipe, german, protected=["age"], favourable_class="excellent")


@pytest.mark.parametrize("cls", [MAFT, AEQUITAS])
def test_encoded_frame_with_reordered_columns(german, reordered_lr, cls):
    model, cols = reordered_lr
    res = cls(model, german, protected=["age"]).run(n_seeds=20, n_local=8, random_state=0)
    assert "encoded columns" in res.params["model_input"] or "DataFrame" in res.params["model_input"]

    def oracle(X):
        return model.predict_proba(pd.DataFrame(np.atleast_2d(X), columns=german.feature_names)[cols])[:, 1]

    _recheck(oracle, german, res, ["age"])


@pytest.mark.parametrize("cls", [MAFT, AEQUITAS])
def test_plain_callable(german, cls):
    a, c = german.index_of("age"), german.index_of("credit_amount")
    w = np.zeros(german.n_features)
    w[a], w[c] = 0.08, -0.0004

    def f(X):
        X = np.asarray(X, dtype=float)
        return 1.0 / (1.0 + np.exp(-(X @ w - 1.5)))

    res = cls(f, german, protected=["age"]).run(n_seeds=30, n_local=8, random_state=0)
    assert "callable" in res.params["model_input"]
    _recheck(f, german, res, ["age"])


def test_mask_and_rate_on_readable_pipeline_match_oracle(german, readable_pipe):
    X = german.X[:25]
    m = discriminatory_mask(readable_pipe, german, X, protected=["age"])
    score = _oracle_readable(readable_pipe, german)
    a = german.index_of("age")
    ages = np.arange(german.bounds[a, 0], german.bounds[a, 1] + 1)
    expect = []
    for x in X:
        R = np.repeat(x[None, :], len(ages), axis=0)
        R[:, a] = ages
        expect.append(np.any((score(R) > 0.5) != (score(x) > 0.5)))
    np.testing.assert_array_equal(m, expect)
    # a readable DataFrame is accepted and encoded through the dataset
    m2 = discriminatory_mask(readable_pipe, german, german.frame[german.feature_names].iloc[:25], protected=["age"])
    np.testing.assert_array_equal(m, m2)


def test_zero_order_gradient_readable_pipeline(german, readable_pipe):
    """One-sided steps at the top of a categorical domain; same numbers as by hand."""
    X = german.X[:4]
    G = zero_order_gradient(readable_pipe, X, dataset=german, favourable_class="good")
    score = _oracle_readable(readable_pipe, german)
    j = german.index_of("checking_status")
    for r in range(4):
        x = X[r].copy()
        step = 1.0 if x[j] + 1 <= german.bounds[j, 1] else -1.0
        xp = x.copy()
        xp[j] += step
        g = (score(xp)[0] - score(x)[0]) / step
        if not score(x)[0] > 0.5:
            g = -g
        assert G[r, j] == pytest.approx(g, abs=1e-12)


def test_retrain_readable_pipeline(german, readable_pipe):
    res = MAFT(readable_pipe, german, protected=["age"]).run(n_seeds=20, n_local=8, random_state=0)
    mit = retrain_with_instances(readable_pipe, german, res, ["age"], fraction=0.02, n_samples=300)
    # the refit takes the readable frame and returns readable labels, like the original
    out = mit.model.predict(german.frame[german.feature_names].iloc[:5])
    assert set(out) <= {"good", "bad"}
    again = discrimination_rate(mit.model, german, ["age"], n_samples=300, random_state=1)
    assert again["rate"] == pytest.approx(mit.rate_after["rate"])


# ----------------------------------------------------------------------------- 2. gradient=
@pytest.mark.parametrize("cls", [EIDIG, ADF])
def test_gradient_callable_equals_builtin(toy, toy_mlp, cls):
    from fairlens.models import mlp_input_gradient

    calls = []

    def grad(X):
        calls.append(X.shape)
        return mlp_input_gradient(toy_mlp, X)

    a = cls(toy_mlp, toy, protected=["sex", "race"]).run(n_seeds=25, n_local=30, random_state=0)
    b = cls(toy_mlp, toy, protected=["sex", "race"], gradient=grad).run(n_seeds=25, n_local=30, random_state=0)
    assert calls and a.n_instances > 0
    assert {tuple(r) for r in a.instances} == {tuple(r) for r in b.instances}
    # a plain callable (black box to fairlens) with its gradient: same search again
    f = lambda X: toy_mlp.predict_proba(X)[:, 1]  # noqa: E731
    c = cls(f, toy, protected=["sex", "race"], gradient=grad).run(n_seeds=25, n_local=30, random_state=0)
    assert {tuple(r) for r in a.instances} == {tuple(r) for r in c.instances}
    assert "user gradient" in c.params["gradient"]


def test_gradient_hand_written_logistic(toy):
    w = np.array([-0.413, 1.237, 0.571, 0.613, -0.529, 0.193])  # no exact ties at logit 0
    f = lambda X: 1 / (1 + np.exp(-(np.asarray(X) @ w - 1.071)))  # noqa: E731

    def grad(X):
        p = f(X)
        return (p * (1 - p))[:, None] * w[None, :]

    for cls in (EIDIG, ADF):
        res = cls(f, toy, protected=["sex"], gradient=grad).run(n_seeds=40, n_local=40, random_state=0)
        check_result(f, res, [1], toy.bounds)
        assert res.n_local > 0
    # the gradient really drives the search: with its sign reversed the global walk differs
    seeds = toy.X[:60]
    good = EIDIG(f, toy, protected=["sex"], gradient=grad).run(n_local=0, seeds=seeds)
    bad = EIDIG(f, toy, protected=["sex"], gradient=lambda X: -grad(X)).run(n_local=0, seeds=seeds)
    assert good.n_global > bad.n_global


def test_gradient_validated(toy):
    f = lambda X: 1 / (1 + np.exp(-(np.asarray(X)[:, 3] - 4 + np.asarray(X)[:, 1])))  # noqa: E731
    with pytest.raises(TypeError, match="gradient"):
        EIDIG(f, toy)  # neither an MLP nor a gradient
    with pytest.raises(TypeError, match="gradient"):
        EIDIG(f, toy, gradient="autograd")
    with pytest.raises(ValueError, match="gradient.*shape"):
        EIDIG(f, toy, gradient=lambda X: np.zeros((X.shape[0], 3)))
    with pytest.raises(ValueError, match="gradient.*NaN"):
        ADF(f, toy, gradient=lambda X: np.full(X.shape, np.nan))


def test_builtin_gradient_on_reordered_frame_mlp(toy):
    """An MLP fitted on a DataFrame with reordered columns: the analytic gradient is
    mapped back to the dataset's column order (checked against finite differences)."""
    import warnings

    from sklearn.neural_network import MLPClassifier

    cols = toy.feature_names[::-1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = MLPClassifier((8,), max_iter=300, random_state=0).fit(
            pd.DataFrame(toy.X, columns=toy.feature_names)[cols], toy.y
        )
    c = compare_gradients(m, toy, toy.X[:30], protected=["sex"], h=1e-6, non_vectored=False)
    assert np.nanmedian(c.gradient_cos["MAFT vs EIDIG"]) > 0.999
    res = EIDIG(m, toy, protected=["sex"]).run(n_seeds=20, n_local=10, random_state=0)

    def oracle(X):
        return m.predict_proba(pd.DataFrame(np.atleast_2d(X), columns=toy.feature_names)[cols])[:, 1]

    _recheck(oracle, toy, res, ["sex"])


# ----------------------------------------------------------------------------- 3. memory safety
@pytest.fixture(scope="module")
def benchmark_result():
    """A result of the 24-feature benchmark encoding of German credit."""
    from fairlens.datasets import load_german_credit

    bench = load_german_credit(encoding="benchmark")
    w = np.linspace(-0.5, 0.5, bench.n_features)
    w[bench.index_of("AgeInYears")] = 1.5
    f = lambda X: 1 / (1 + np.exp(-(np.asarray(X) @ w - np.asarray(bench.X).mean(0) @ w)))  # noqa: E731
    res = MAFT(f, bench, protected=["AgeInYears"]).run(n_seeds=20, n_local=5, random_state=0)
    assert res.n_instances > 0 and res.instances.shape[1] == 24
    return res


def test_result_from_another_encoding_is_refused(german, benchmark_result):
    """Used to abort the interpreter ("malloc(): invalid size", "double free")."""
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(max_iter=500).fit(german.X, german.y)
    with pytest.raises(ValueError, match="does not belong to this dataset.*24 features.*21 features"):
        retrain_with_instances(model, german, benchmark_result, ["sex"])
    with pytest.raises(ValueError, match="X has 24 features"):
        discriminatory_mask(model, german, benchmark_result.instances, ["sex"])
    with pytest.raises(ValueError, match="seeds has 24 features"):
        MAFT(model, german, protected=["sex"]).run(n_local=1, seeds=benchmark_result.instances)
    with pytest.raises(TypeError, match="FairnessTestResult"):
        retrain_with_instances(model, german, benchmark_result.instances, ["sex"])
    # same feature count but other names: still refused
    fake = type(benchmark_result)(**{**benchmark_result.__dict__})
    fake.instances = german.X[:3].copy()
    fake.feature_names = [f"f{i}" for i in range(21)]
    with pytest.raises(ValueError, match="does not belong"):
        retrain_with_instances(model, german, fake, ["sex"])


def test_kernel_calls_are_checked():
    """Every caller goes through the checked wrappers; a wrong shape is a ValueError."""
    import inspect

    import fairlens.maft as fm
    from fairlens.maft import _analysis, _kcall, _mitigation, _search, _utils

    for mod in (_analysis, _mitigation, _search, _utils, fm):
        assert "_kernels." not in inspect.getsource(mod).replace("fairlens.maft._kernels", "")
    X = np.zeros((2, 3))
    with pytest.raises(ValueError, match="similar_rows.*out.*shape"):
        _kcall.similar_rows(X, np.array([0], dtype=np.int64), np.array([[0.0], [1.0]]), np.empty((2, 2, 2)))
    with pytest.raises(ValueError, match="prot_idx"):
        _kcall.similar_rows(X, np.array([5], dtype=np.int64), np.array([[0.0], [1.0]]), np.empty((2, 2, 3)))
    with pytest.raises(ValueError, match="dtype"):
        _kcall.check_discrimination(np.zeros((2, 2), dtype=np.float32), np.zeros(2), np.empty(2, bool),
                                    np.empty(2, np.int64), np.empty(2, np.int64))
    with pytest.raises(ValueError, match="store has room"):
        _kcall.table_insert(np.full(8, -1, np.int64), np.empty((2, 3)), 0, np.zeros((3, 3)),
                            np.zeros(3, np.int64), np.empty(3, bool))
    with pytest.raises(ValueError, match="C-contiguous"):
        _kcall.local_perturb(np.zeros((3, 2)).T, np.ones((2, 3)), np.zeros(2), np.zeros(2), 1.0,
                             np.zeros(3), np.ones(3), np.empty(2, np.int64), np.empty(2))
    from fairlens.maft._utils import RowSet

    with pytest.raises(ValueError, match="RowSet"):
        RowSet(4).add(np.zeros((2, 8)))


def test_protected_blow_up_refused_with_estimate(german):
    """age x credit_amount: ~1 million protected combinations (used to allocate 8 GiB)."""
    f = lambda X: 1 / (1 + np.exp(-(np.asarray(X)[:, 1] / 20 - 1)))  # noqa: E731
    s = MAFT(f, german, protected=["age", "credit_amount"])
    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as err:
            s.run(50, 5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    msg = str(err.value)
    assert "1,035,975 combinations" in msg and "57 values of 'age'" in msg and "18,175 values" in msg
    assert "GiB" in msg and "discretise" in msg
    assert peak < 256 * 1024**2
    with pytest.raises(ValueError, match="combinations"):
        AEQUITAS(f, german, protected=["age", "credit_amount"]).run(50, 5)
    # a single continuous protected attribute with few seeds still runs
    r = MAFT(f, german, protected=["credit_amount"]).run(2, 0, random_state=0)
    assert r.tries_global >= 1


def test_discriminatory_mask_many_combinations_bounded(german):
    """The mask scans the million combinations in blocks (first counterpart stops a
    row): same answer as the analytic one, bounded memory."""
    a, c = german.index_of("age"), german.index_of("credit_amount")

    def f(X):
        X = np.asarray(X, dtype=float)
        return 1 / (1 + np.exp(-((X[:, a] - 45) / 5 + (X[:, c] - 9000) / 2000)))

    X = german.X[:6].copy()
    X[0, a], X[0, c] = 19, 250  # lowest score: discriminatory (the top combination is favourable)
    lo = f(np.where(np.arange(german.n_features) == a, 19, np.where(np.arange(german.n_features) == c, 250, X)))
    hi = f(np.where(np.arange(german.n_features) == a, 75, np.where(np.arange(german.n_features) == c, 18424, X)))
    own = f(X) > 0.5
    expect = np.where(own, lo <= 0.5, hi > 0.5)
    tracemalloc.start()
    try:
        m = discriminatory_mask(f, german, X, protected=["age", "credit_amount"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(m, expect)
    assert peak < 1024**3
    # a model that ignores both never discriminates: every combination is scanned
    flat = lambda X: np.full(np.asarray(X).shape[0], 0.7)  # noqa: E731
    assert not discriminatory_mask(flat, german, X[:2], protected=["age", "credit_amount"]).any()


def test_discrimination_rate_huge_n_refused_and_blocks_invariant(toy, toy_mlp, monkeypatch):
    with pytest.raises(ValueError, match="n_samples.*MAX_SAMPLES"):
        discrimination_rate(toy_mlp, toy, ["sex"], n_samples=10**9)
    with pytest.raises(ValueError, match="confidence"):
        discrimination_rate(toy_mlp, toy, ["sex"], n_samples=10, confidence=1.5)
    import fairlens.maft._mitigation as mit

    for sample in ("domain", "data"):
        one = discrimination_rate(toy_mlp, toy, ["sex", "race"], n_samples=500, random_state=3, sample=sample)
        monkeypatch.setattr(mit, "BLOCK_ROWS", 36)  # tiny blocks: many chunks
        many = discrimination_rate(toy_mlp, toy, ["sex", "race"], n_samples=500, random_state=3, sample=sample)
        monkeypatch.undo()
        assert one == many


def test_keyboard_interrupt_propagates_and_object_reusable(toy, smooth):
    s = MAFT(smooth, toy)
    fresh = MAFT(smooth, toy).run(n_seeds=20, n_local=20, random_state=0)

    def cb(state):
        if state["phase"] == "local" and state["step"] == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        s.run(n_seeds=20, n_local=20, random_state=0, callback=cb)
    again = s.run(n_seeds=20, n_local=20, random_state=0)
    np.testing.assert_array_equal(again.instances, fresh.instances)

    class Flaky:
        def __init__(self):
            self.n = 0
            self.armed = False

        def __call__(self, X):
            self.n += 1
            if self.armed and self.n == 5:
                raise KeyboardInterrupt
            return smooth(X)

    fl = Flaky()
    a = AEQUITAS(fl, toy)
    fl.armed = True
    with pytest.raises(KeyboardInterrupt):
        a.run(n_seeds=50, n_local=20, random_state=0)
    fl.armed = False
    np.testing.assert_array_equal(a.run(n_seeds=50, n_local=20, random_state=0).instances,
                                  AEQUITAS(smooth, toy).run(n_seeds=50, n_local=20, random_state=0).instances)


# ----------------------------------------------------------------------------- 4. validation
def test_random_state_messages_name_the_argument(toy, smooth):
    for call in (
        lambda: MAFT(smooth, toy).run(3, 1, random_state="abc"),
        lambda: AEQUITAS(smooth, toy).seeds(3, random_state="abc"),
        lambda: select_seeds(toy.X, 3, random_state="abc"),
        lambda: discrimination_rate(smooth, toy, ["sex"], n_samples=5, random_state="abc"),
    ):
        with pytest.raises(TypeError, match="random_state"):
            call()


def test_stop_convention_event_or_callable(toy, smooth):
    n = {"k": 0}

    def cb(state):
        n["k"] += 1

    res = MAFT(smooth, toy).run(n_seeds=30, n_local=100, random_state=0, callback=cb, stop=lambda: n["k"] >= 4)
    assert res.stopped and 4 <= n["k"] <= 5  # the step that saw the stop, plus the phase's closing tick
    ev = threading.Event()
    ev.set()
    assert MAFT(smooth, toy).run(n_seeds=30, n_local=100, stop=ev).stopped
    with pytest.raises(TypeError, match="stop"):
        MAFT(smooth, toy).run(n_seeds=3, n_local=1, stop="yes")


def test_unknown_keywords_and_enums(toy, smooth):
    with pytest.raises(TypeError, match="stop_flag"):
        MAFT(smooth, toy).run(3, 1, stop_flag=lambda: False)
    with pytest.raises(TypeError, match="favorable_class"):
        MAFT(smooth, toy, favorable_class=1)
    with pytest.raises(ValueError, match="'lockstep', 'reference'"):
        MAFT(smooth, toy).run(3, 1, engine="fast")
    with pytest.raises(ValueError, match="'domain', 'data'"):
        discrimination_rate(smooth, toy, ["sex"], n_samples=5, sample="grid")
    with pytest.raises(ValueError, match="labelling"):
        retrain_with_instances(smooth, toy, None, labelling="vote")


@pytest.mark.parametrize(
    "kw, name",
    [({"decay": 1.0}, "decay"), ({"decay": -0.1}, "decay"), ({"epsilon": 0}, "epsilon"), ({"max_iter": 0}, "max_iter"),
     ({"global_step": float("inf")}, "global_step"), ({"n_clusters": 1.5}, "n_clusters"),
     ({"update_interval": True}, "update_interval"), ({"vectored": "yes"}, "vectored"), ({"h": float("nan")}, "h")],
)
def test_constructor_parameters(toy, smooth, kw, name):
    with pytest.raises((TypeError, ValueError), match=name):
        MAFT(smooth, toy, **kw)


def test_astronomical_combinations_refused_at_construction():
    from ._maft_toy import ToyDataset

    B = np.array([[0, 1e6], [0, 1e6], [0, 1e6], [0, 5]], float)
    ds = ToyDataset(np.zeros((3, 4)), np.array([0, 1, 0]), B, ["a", "b", "c", "d"], ["a"])
    with pytest.raises(ValueError, match=r"protected: the 1,000,003,000,003,000,001 combinations.*discretise"):
        MAFT(lambda Z: np.full(len(Z), 0.3), ds, protected=["a", "b", "c"])
