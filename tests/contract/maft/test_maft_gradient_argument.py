"""EIDIG/ADF's ``gradient=``: a user callable equals the built-in analytic gradient, a
hand-written logistic gradient works, bad callables are refused.
"""


import numpy as np
import pandas as pd
import pytest

from fairlens.maft import (
    ADF,
    EIDIG,
    compare_gradients,
)
from tests._support.maft_oracle import _recheck, check_result


@pytest.mark.parametrize("cls", [EIDIG, ADF])
def test_gradient_callable_equals_builtin(toy, toy_mlp, cls):
    from fairlens.models import mlp_input_gradient

    calls = []

    def grad(X):
        calls.append(X.shape)
        return mlp_input_gradient(toy_mlp, X)

    a = cls(toy_mlp, toy, protected=["sex", "race"], n_seeds=25, n_local=30, random_state=0).run()
    b = cls(toy_mlp, toy, protected=["sex", "race"], gradient=grad, n_seeds=25, n_local=30, random_state=0).run()
    assert calls and a.n_instances > 0
    assert {tuple(r) for r in a.instances} == {tuple(r) for r in b.instances}
    # a plain callable (black box to fairlens) with its gradient: same search again
    f = lambda X: toy_mlp.predict_proba(X)[:, 1]  # noqa: E731
    c = cls(f, toy, protected=["sex", "race"], gradient=grad, n_seeds=25, n_local=30, random_state=0).run()
    assert {tuple(r) for r in a.instances} == {tuple(r) for r in c.instances}
    assert "user gradient" in c.params["gradient"]


def test_gradient_hand_written_logistic(toy):
    w = np.array([-0.413, 1.237, 0.571, 0.613, -0.529, 0.193])  # no exact ties at logit 0
    f = lambda X: 1 / (1 + np.exp(-(np.asarray(X) @ w - 1.071)))  # noqa: E731

    def grad(X):
        p = f(X)
        return (p * (1 - p))[:, None] * w[None, :]

    for cls in (EIDIG, ADF):
        res = cls(f, toy, protected=["sex"], gradient=grad, n_seeds=40, n_local=40, random_state=0).run()
        check_result(f, res, [1], toy.bounds)
        assert res.n_local > 0
    # the gradient really drives the search: with its sign reversed the global walk differs
    seeds = toy.X[:60]
    good = EIDIG(f, toy, protected=["sex"], gradient=grad, n_local=0, seeds=seeds).run()
    bad = EIDIG(f, toy, protected=["sex"], gradient=lambda X: -grad(X), n_local=0, seeds=seeds).run()
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
    res = EIDIG(m, toy, protected=["sex"], n_seeds=20, n_local=10, random_state=0).run()

    def oracle(X):
        return m.predict_proba(pd.DataFrame(np.atleast_2d(X), columns=toy.feature_names)[cols])[:, 1]

    _recheck(oracle, toy, res, ["sex"])
