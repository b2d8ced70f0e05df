"""Memory safety of the MAFT slice: results from another encoding, kernel shape checks,
protected-value blow-ups refused with an estimate, Ctrl-C, bounded memory.
"""

import tracemalloc

import numpy as np
import pytest

from fairlens.maft import (
    AEQUITAS,
    MAFT,
    discriminatory_mask,
    retrain_with_instances,
)


@pytest.fixture(scope="module")
def benchmark_result():
    """A result of the 24-feature benchmark encoding of German credit."""
    from fairlens.datasets import load_german_credit

    bench = load_german_credit(encoding="benchmark")
    w = np.linspace(-0.5, 0.5, bench.n_features)
    w[bench.index_of("AgeInYears")] = 1.5
    f = lambda X: 1 / (1 + np.exp(-(np.asarray(X) @ w - np.asarray(bench.X).mean(0) @ w)))  # noqa: E731
    res = MAFT(f, bench, protected=["AgeInYears"], n_seeds=20, n_local=5, random_state=0).run()
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
        MAFT(model, german, protected=["sex"], n_local=1, seeds=benchmark_result.instances).run()
    with pytest.raises(TypeError, match="FairnessTestResult"):
        retrain_with_instances(model, german, benchmark_result.instances, ["sex"])
    # same feature count but other names: still refused
    fake = type(benchmark_result)(**{**benchmark_result.__dict__})
    fake.instances = german.X[:3].copy()
    fake.feature_names = [f"f{i}" for i in range(21)]
    with pytest.raises(ValueError, match="does not belong"):
        retrain_with_instances(model, german, fake, ["sex"])


def test_protected_blow_up_refused_with_estimate(german):
    """age x credit_amount: ~1 million protected combinations (used to allocate 8 GiB)."""
    f = lambda X: 1 / (1 + np.exp(-(np.asarray(X)[:, 1] / 20 - 1)))  # noqa: E731
    s = MAFT(f, german, protected=["age", "credit_amount"])
    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as err:
            s.set_params(n_seeds=50, n_local=5).run()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    msg = str(err.value)
    assert "1,035,975 combinations" in msg and "57 values of 'age'" in msg and "18,175 values" in msg
    assert "GiB" in msg and "discretise" in msg
    assert peak < 256 * 1024**2
    with pytest.raises(ValueError, match="combinations"):
        AEQUITAS(f, german, protected=["age", "credit_amount"], n_seeds=50, n_local=5).run()
    # a single continuous protected attribute with few seeds still runs
    r = MAFT(f, german, protected=["credit_amount"], n_seeds=2, n_local=0, random_state=0).run()
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


def test_keyboard_interrupt_propagates_and_object_reusable(toy, smooth):
    s = MAFT(smooth, toy)
    fresh = MAFT(smooth, toy, n_seeds=20, n_local=20, random_state=0).run()

    def cb(state):
        if state["phase"] == "local" and state["step"] == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        s.set_params(n_seeds=20, n_local=20, random_state=0).run(callback=cb)
    again = s.set_params(n_seeds=20, n_local=20, random_state=0).run()
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
        a.set_params(n_seeds=50, n_local=20, random_state=0).run()
    fl.armed = False
    np.testing.assert_array_equal(a.set_params(n_seeds=50, n_local=20, random_state=0).run().instances,
                                  AEQUITAS(smooth, toy, n_seeds=50, n_local=20, random_state=0).run().instances)
