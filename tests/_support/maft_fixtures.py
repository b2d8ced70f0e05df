import pandas as pd
import pytest

from tests._support.maft_toy import SmoothModel, make_toy


@pytest.fixture(scope="session")
def toy():
    return make_toy()


@pytest.fixture(scope="session")
def smooth():
    return SmoothModel()


@pytest.fixture(scope="session")
def toy_mlp(toy):
    import warnings

    from sklearn.neural_network import MLPClassifier

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return MLPClassifier((16, 8), max_iter=400, random_state=0).fit(toy.X, toy.y)


# an auditor's own model and data (German credit, readable pipeline, reordered frame)
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
