"""A small table and model files for the `fairlens audit` command-line tests."""
from __future__ import annotations

import numpy as np
import pandas as pd


def make_table(n=400, seed=0):
    """A loan table whose approvals depend on sex (so the demographic-parity gap is large)."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["female", "male"], n)
    income = rng.normal(50, 15, n).round(1)
    age = rng.integers(18, 70, n)
    logit = 0.06 * (income - 50) + 1.5 * (sex == "male") - 0.7
    approved = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), "yes", "no")
    return pd.DataFrame({"sex": sex, "age": age, "income": income, "approved": approved})


def make_model(frame, target="approved", drop=()):
    """A scikit-learn pipeline fitted on the readable table (minus ``drop``)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    X = frame.drop(columns=[target, *drop])
    cats = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    pipe = Pipeline([("encode", ColumnTransformer([("cat", OneHotEncoder(), cats)],
                                                  remainder="passthrough")),
                     ("clf", LogisticRegression(max_iter=1000))])
    return pipe.fit(X, frame[target])


def write_files(folder):
    """``(table.csv, model.skops)`` in ``folder``."""
    import skops.io as sio

    frame = make_table()
    table = folder / "table.csv"
    frame.to_csv(table, index=False)
    model = folder / "model.skops"
    sio.dump(make_model(pd.read_csv(table)), model)
    return table, model
