"""The paper's theory: Eq. (6) by brute force, and linear SHAP Eq. (10)-(15)."""
import numpy as np
import pytest

from fairlens.shuffle import ShuffledModel, exact_shapley_values, linear_shap_values

BETA = np.array([1.0, 2.0, -1.0, 0.0])


def linear_f(X):
    return np.asarray(X, dtype=float) @ BETA


def nonlinear_f(X):
    A = np.asarray(X, dtype=float)
    return np.tanh(A[:, 0] * A[:, 1]) + A[:, 2] ** 2  # ignores column 3


@pytest.fixture
def small():
    rng = np.random.default_rng(0)
    bg = np.column_stack([rng.random(12), rng.random(12), rng.random(12), rng.integers(0, 2, 12)])
    bg[:2, 3] = [0, 1]
    X = np.column_stack([rng.random(6), rng.random(6), rng.random(6), np.zeros(6)])
    s = linear_f(X)
    X[:, 3] = (s < np.median(s)).astype(float)  # favoured group scores lower: attacks bite
    return bg, X


ATTACKS = [dict(attack="dominance"), dict(attack="swapping", quantile=0.0),
           dict(attack="swapping", quantile=0.5), dict(attack="mixing", p=0.7, random_state=3),
           dict(attack="dom+mix", random_state=1), dict(attack="dominance", region=0.3)]


@pytest.mark.parametrize("f", [linear_f, nonlinear_f])
@pytest.mark.parametrize("kw", ATTACKS)
def test_exact_shapley_of_protected_feature_is_zero(small, f, kw):
    """Theorem (Eq. 6): shuffling never changes v(S), so phi_p = 0 and the other
    features keep their honest Shapley values -- while f' really differs from f."""
    bg, X = small
    attacked = ShuffledModel(f, protected=3, favoured=1, output="raw", **kw)
    for x in X:
        phi_att = exact_shapley_values(attacked, x, bg)
        phi_f = exact_shapley_values(f, x, bg)
        assert abs(phi_att[3]) < 1e-12
        np.testing.assert_allclose(phi_att, phi_f, atol=1e-12)
    # the attack is real on the background batch
    assert not np.allclose(attacked.with_params()(bg), f(bg))


def test_brute_force_detects_a_model_that_uses_the_feature(small):
    bg, X = small
    unfair = lambda A: linear_f(A) + 0.5 * np.asarray(A)[:, 3]  # noqa: E731
    phi = exact_shapley_values(unfair, X[1], bg)
    np.testing.assert_allclose(phi[3], 0.5 * (X[1, 3] - bg[:, 3].mean()), atol=1e-12)


def test_brute_force_matches_shap_exact_explainer(small):
    shap = pytest.importorskip("shap")
    bg, X = small
    ex = shap.explainers.Exact(nonlinear_f, shap.maskers.Independent(bg, max_samples=len(bg)))
    sv = ex(X).values
    ours = np.array([exact_shapley_values(nonlinear_f, x, bg) for x in X])
    np.testing.assert_allclose(ours, sv, atol=1e-10)


@pytest.mark.parametrize("kw", ATTACKS[:4])
def test_linear_shap_eq15(small, kw):
    bg, X = small
    model = ShuffledModel(linear_f, protected=3, favoured=1, output="raw", **kw)
    phi = linear_shap_values(model, X, bg)
    twin = ShuffledModel(linear_f, protected=3, favoured=1, output="raw", **kw)  # same seed, same call sequence
    expected_p = twin(X) - linear_f(X)
    np.testing.assert_allclose(phi[:, 3], expected_p, atol=1e-12)
    # Eq. (10)/(13): scoring features beta_j (x_j - E[x_j]), beta from least squares (exact here)
    np.testing.assert_allclose(phi[:, :3], BETA[:3] * (X[:, :3] - bg[:, :3].mean(0)), atol=1e-10)
    # Eq. (14): efficiency with E[f'] = E[f]
    np.testing.assert_allclose(phi.sum(1), expected_p + linear_f(X) - linear_f(bg).mean(), atol=1e-10)
    assert np.abs(expected_p).max() > 0  # the attack moved something
    # Eq. (16): mean |phi_p| <= max |f' - f|
    assert np.abs(phi[:, 3]).mean() <= np.abs(expected_p).max()


def test_linear_shap_matches_shap_linear_explainer_on_scoring_features(small):
    shap = pytest.importorskip("shap")
    bg, X = small
    lin = shap.explainers.Linear((BETA, 0.0), shap.maskers.Independent(bg, max_samples=len(bg)))
    ref = lin(X).values
    model = ShuffledModel(linear_f, protected=3, favoured=1, output="raw")
    phi = linear_shap_values(model, X, bg)
    np.testing.assert_allclose(phi[:, :3], ref[:, :3], atol=1e-10)
    assert np.allclose(ref[:, 3], 0.0)  # the honest model: Research has no weight


def test_linear_shap_for_black_box_fits_surrogate(small):
    bg, X = small
    phi = linear_shap_values(linear_f, X, bg)
    np.testing.assert_allclose(phi, BETA * (X - bg.mean(0)), atol=1e-10)


def test_exact_shapley_bad_input(small):
    bg, X = small
    with pytest.raises(ValueError, match="features"):
        exact_shapley_values(linear_f, X[0, :3], bg)
    with pytest.raises(ValueError, match="too large"):
        exact_shapley_values(lambda A: A.sum(1), np.zeros(17), np.zeros((3, 17)))
