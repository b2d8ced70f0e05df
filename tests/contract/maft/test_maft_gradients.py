import numpy as np
import pytest

from fairlens.maft import zero_order_gradient


def test_paper_example_x_squared():
    # Sec. 3.1 example: f(x) = x^2 at x = 2, h = 0.001 -> 4.001 (f > 0.5 so no flip)
    f = lambda X: np.asarray(X)[:, 0] ** 2  # noqa: E731
    g = zero_order_gradient(f, np.array([[2.0]]), h=0.001)
    assert g.shape == (1, 1)
    assert g[0, 0] == pytest.approx(4.001, rel=1e-9)


def test_paper_example_two_dims():
    f = lambda X: (np.asarray(X) ** 2).sum(axis=1)  # noqa: E731
    g = zero_order_gradient(f, [2.0, 3.0], h=0.001)
    np.testing.assert_allclose(g, [4.001, 6.001], rtol=1e-9)


def test_sign_flip_when_not_above_half():
    # f(x) = 0.2 + 0.1 x0 at x0=1 -> 0.3 <= 0.5 -> gradient negated
    f = lambda X: 0.2 + 0.1 * np.asarray(X)[:, 0]  # noqa: E731
    g = zero_order_gradient(f, [[1.0, 5.0]], h=1.0)
    np.testing.assert_allclose(g, [[-0.1, 0.0]], atol=1e-12)
    g2 = zero_order_gradient(f, [[4.0, 5.0]], h=1.0)  # 0.6 > 0.5 -> no flip
    np.testing.assert_allclose(g2, [[0.1, 0.0]], atol=1e-12)


@pytest.mark.parametrize("h", [1e-4, 1.0, 3.0])
def test_vectored_equals_non_vectored(toy, toy_mlp, h):
    X = toy.X[:25]
    a = zero_order_gradient(toy_mlp, X, h=h, vectored=True)
    b = zero_order_gradient(toy_mlp, X, h=h, vectored=False)
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_close_to_analytic_for_small_h(toy, smooth):
    X = toy.X[:50]
    true = smooth.grad(X)
    p = smooth(X)
    true[p <= 0.5] *= -1
    est = zero_order_gradient(smooth, X, h=1e-6)
    np.testing.assert_allclose(est, true, atol=5e-6)
    # error shrinks roughly linearly with h (Eq. 9: O(h))
    e1 = np.abs(zero_order_gradient(smooth, X, h=1e-2) - true).max()
    e2 = np.abs(zero_order_gradient(smooth, X, h=1e-3) - true).max()
    assert 5 < e1 / e2 < 20


def test_close_to_analytic_mlp_proba(toy, toy_mlp):
    mlp_input_gradient = pytest.importorskip("fairlens.models").mlp_input_gradient

    X = toy.X[:40]
    true = mlp_input_gradient(toy_mlp, X, output="proba")
    p = toy_mlp.predict_proba(X)[:, 1]
    true[p <= 0.5] *= -1
    est = zero_order_gradient(toy_mlp, X, h=1e-5)
    cos = (est * true).sum(1) / (np.linalg.norm(est, axis=1) * np.linalg.norm(true, axis=1) + 1e-300)
    assert np.median(cos) > 0.999


@pytest.mark.parametrize("h", [0, -1.0, float("nan"), "1"])
def test_bad_h(toy_mlp, h):
    with pytest.raises((TypeError, ValueError), match="h"):
        zero_order_gradient(toy_mlp, np.zeros((1, 6)), h=h)


def test_model_without_probabilities(toy):
    from sklearn.svm import LinearSVC

    svc = LinearSVC().fit(toy.X, toy.y)
    with pytest.raises((TypeError, ValueError)):
        zero_order_gradient(svc, toy.X[:2])


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_mlp_input_gradient_refuses_non_finite_input(toy, toy_mlp, bad):
    """Issue 22: a NaN row used to come back as a NaN gradient, silently."""
    from fairlens.models import mlp_input_gradient

    X = np.array(toy.X[:3], dtype=float)
    X[1, 2] = bad
    with pytest.raises(ValueError, match=r"X contains NaN or inf \(first at row 1, column 2\)"):
        mlp_input_gradient(toy_mlp, X)
    assert np.all(np.isfinite(mlp_input_gradient(toy_mlp, toy.X[:3])))
