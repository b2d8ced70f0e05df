import numpy as np
import pytest

from fairlens.maft import MAFT
from tests._support.maft_toy import ToyDataset


def test_protected_not_in_dataset(toy, smooth):
    with pytest.raises(ValueError, match="gender.*not a feature"):
        MAFT(smooth, toy, protected=["gender"])


def test_protected_single_value(toy, smooth):
    B = toy.bounds.copy()
    B[1] = [1, 1]
    ds = ToyDataset(toy.X.clip(B[:, 0], B[:, 1]), toy.y, B, toy.feature_names, ["sex"])
    with pytest.raises(ValueError, match="single value"):
        MAFT(smooth, ds, protected=["sex"])


def test_bounds_exclude_seeds(toy, smooth):
    B = toy.bounds.copy()
    B[3] = [0, 4]
    ds = ToyDataset(toy.X, toy.y, B, toy.feature_names, ["sex"])
    with pytest.raises(ValueError, match="bounds exclude"):
        MAFT(smooth, ds, n_seeds=50, n_local=1).run()


def test_model_without_probabilities(toy):
    from sklearn.svm import LinearSVC

    with pytest.raises((TypeError, ValueError)):
        MAFT(LinearSVC().fit(toy.X, toy.y), toy)


@pytest.mark.parametrize("h", [0, -0.5])
def test_bad_h(toy, smooth, h):
    with pytest.raises(ValueError, match="h"):
        MAFT(smooth, toy, h=h)


@pytest.mark.parametrize("n", [0, -3, 2.5])
def test_zero_seeds(toy, smooth, n):
    with pytest.raises((TypeError, ValueError), match="n_seeds"):
        MAFT(smooth, toy, n_seeds=n, n_local=1).run()


def test_bad_engine_and_budget(toy, smooth):
    s = MAFT(smooth, toy)
    with pytest.raises(ValueError, match="engine"):
        s.set_params(n_seeds=2, engine="fast").run()
    with pytest.raises(ValueError, match="n_local"):
        s.set_params(n_seeds=2, n_local=-1).run()


def test_white_box_needs_mlp(toy, smooth):
    from fairlens.maft import ADF, EIDIG

    for cls in (EIDIG, ADF):
        with pytest.raises(TypeError, match="MLPClassifier"):
            cls(smooth, toy)


def test_not_a_dataset(smooth):
    with pytest.raises(TypeError, match="Dataset"):
        MAFT(smooth, np.zeros((3, 3)))


def test_random_state_types(toy, smooth):
    s = MAFT(smooth, toy)
    for bad in ("abc", 1.5, [1, 2]):
        with pytest.raises(TypeError, match="random_state"):
            s.set_params(n_seeds=3, n_local=1, random_state=bad).run()
    with pytest.raises(ValueError, match="random_state"):
        s.set_params(n_seeds=3, n_local=1, random_state=-1).run()
    # a Generator / RandomState is accepted (scikit-learn semantics); the int drawn is recorded
    g = s.set_params(n_seeds=3, n_local=1, random_state=np.random.default_rng(0)).run()
    g2 = s.set_params(n_seeds=3, n_local=1, random_state=g.params["random_state"]).run()
    np.testing.assert_array_equal(g.instances, g2.instances)
    r = s.set_params(n_seeds=3, n_local=1, random_state=None).run()
    assert isinstance(r.params["random_state"], int)
    r2 = s.set_params(n_seeds=3, n_local=1, random_state=r.params["random_state"]).run()
    np.testing.assert_array_equal(r.instances, r2.instances)
