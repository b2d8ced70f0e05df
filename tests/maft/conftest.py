import pytest

from ._maft_toy import SmoothModel, make_toy


@pytest.fixture(scope="session")
def toy():
    return make_toy()


@pytest.fixture(scope="session")
def smooth():
    return SmoothModel()


@pytest.fixture(scope="session")
def toy_mlp(toy):
    from sklearn.neural_network import MLPClassifier

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return MLPClassifier((16, 8), max_iter=400, random_state=0).fit(toy.X, toy.y)
