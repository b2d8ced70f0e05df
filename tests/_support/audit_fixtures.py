"""Shared fixtures of the audit tests: small models on the bundled German credit data, and small
audit budgets (the checks' own tests cover their algorithms; here we test the composition)."""
import numpy as np
import pytest

#: Budgets small enough for tests; every audit test passes these unless it tests a default.
SMALL = {"n_rate": 400, "maft_seeds": 40, "maft_local": 40, "n_examples": 3,
         "subgroup_top_k": 10, "n_consistency": 100, "n_explain": 4, "n_background": 8, "n_certify": 40,
         "certify_budgets": (1,)}


@pytest.fixture(scope="session")
def german():
    from fairlens.datasets import load_german_credit

    return load_german_credit()


@pytest.fixture(scope="session")
def readable_pipe(german):
    """A pipeline fitted on the readable table (category labels, raw target labels)."""
    from sklearn.compose import ColumnTransformer, make_column_selector
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    frame = german.frame
    ct = ColumnTransformer([
        ("cat", OneHotEncoder(handle_unknown="ignore"), make_column_selector(dtype_exclude=np.number)),
        ("num", StandardScaler(), make_column_selector(dtype_include=np.number)),
    ])
    return make_pipeline(ct, LogisticRegression(max_iter=2000)).fit(frame[german.feature_names],
                                                                     frame[german.target])


@pytest.fixture(scope="session")
def encoded_mlp(german):
    """An MLP fitted on the encoded array X (no column names)."""
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), MLPClassifier((16, 8), max_iter=300, random_state=0)).fit(
        german.X, german.y)


@pytest.fixture
def small():
    return dict(SMALL)
