import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier, RandomForestRegressor
from sklearn.tree import DecisionTreeClassifier

from fairlens.certify import certify, flatten_forest, instance_covers


@pytest.fixture(scope="module")
def data():
    X, y = load_breast_cancer(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    return rf, X[:20], y[:20]


def test_regression_and_boosting_rejected(data):
    _, X, y = data
    reg = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    with pytest.raises(TypeError, match="regress"):
        certify(reg, X, y)
    gb = GradientBoostingClassifier(n_estimators=3).fit(X, y)
    with pytest.raises(TypeError, match="RandomForestClassifier"):
        certify(gb, X, y)


def test_multi_output_rejected(data):
    _, X, y = data
    Y = np.column_stack([y, 1 - y])
    with pytest.raises(ValueError, match="multi-output"):
        flatten_forest(RandomForestClassifier(n_estimators=2, random_state=0).fit(X, Y))
    with pytest.raises(ValueError, match="multi-output"):
        flatten_forest(DecisionTreeClassifier(random_state=0).fit(X, Y))


@pytest.mark.parametrize("budget,err,msg", [(0, ValueError, ">= 1"), (-2, ValueError, ">= 1"),
                                            (31, ValueError, "larger than the number of features"),
                                            (1.5, TypeError, "integer"), (True, TypeError, "integer")])
def test_bad_budget(data, budget, err, msg):
    rf, X, y = data
    with pytest.raises(err, match=msg):
        certify(rf, X, y, budget=budget)


def test_bad_X_and_y(data):
    rf, X, y = data
    with pytest.raises(ValueError, match="30 features"):
        certify(rf, X[:, :10], y)
    Xn = X.copy()
    Xn[0, 3] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        certify(rf, Xn, y)
    Xi = X.copy()
    Xi[1, 0] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        certify(rf, Xi, y)
    Xb = X.copy()
    Xb[2, 0] = 1e300
    with pytest.raises(ValueError, match="float32"):
        certify(rf, Xb, y)
    with pytest.raises(ValueError, match="rows"):
        certify(rf, X, y[:-1])
    with pytest.raises(ValueError, match="no rows"):
        certify(rf, X[:0], y[:0])
    with pytest.raises(ValueError, match="not one of the model's classes"):
        certify(rf, X, y + 5)
    with pytest.raises(ValueError, match="method"):
        certify(rf, X, y, method="exact")
    with pytest.raises(ValueError, match="2-D"):
        certify(rf, X[0], y[:1])
    with pytest.raises(ValueError, match="1-D"):
        instance_covers(rf, X[:2], y[0])


def test_unfitted_rejected(data):
    _, X, y = data
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        certify(RandomForestClassifier(), X, y)
