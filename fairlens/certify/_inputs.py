"""Input checks shared by every model type: column alignment, X, labels, one instance.

No other certify module is imported here, so the readers (forests, FPF, boosted models) and
the engine all depend on this module and never on each other.
"""
from __future__ import annotations

import numpy as np

__all__ = ["align_frame", "check_X", "encode_labels", "one_instance"]


def align_frame(X, feature_names, name="X"):
    """Align a DataFrame's columns to ``feature_names`` by name (arrays pass through).

    A missing or unexpected column is a ``ValueError`` naming it, as scikit-learn
    does; with ``feature_names=None`` (model fitted on an array) columns are
    taken by position, as scikit-learn does.
    """
    if feature_names is None:
        return X
    if not (hasattr(X, "columns") and hasattr(X, "iloc")):
        # scikit-learn warns here too: the columns are taken by position, which is right only
        # if they come in the fitted order (a reordered array gives a silently wrong answer)
        import warnings

        names = [str(c) for c in feature_names]
        shown = names if len(names) <= 8 else names[:8] + ["..."]
        warnings.warn(
            f"{name} is an array but the model was fitted on a DataFrame with the columns {shown}: its "
            f"columns are taken by position, in that order. Pass {name} as a DataFrame with those column "
            f"names (pd.DataFrame({name}, columns=model.feature_names_in_) if the order is right) so that "
            "certify aligns the columns by name.", UserWarning, stacklevel=5)
        return X
    cols = list(X.columns)
    names = [str(c) for c in feature_names]
    scols = [str(c) for c in cols]
    if len(set(scols)) != len(scols):
        dup = sorted({c for c in scols if scols.count(c) > 1})
        raise ValueError(f"{name} has duplicated column names {dup}; column names must be unique.")
    missing = [c for c in names if c not in scols]
    extra = [c for c in scols if c not in names]
    if missing or extra:
        parts = []
        if extra:
            parts.append(f"Feature names unseen at fit time: {extra}")
        if missing:
            parts.append(f"Feature names seen at fit time, yet now missing: {missing}")
        raise ValueError(
            f"The feature names of {name} should match those that were passed during fit. "
            + "; ".join(parts) + f". Expected the columns {names}."
        )
    X = X.set_axis(scols, axis=1)
    return X[names]


def check_X(X, n_features, name="X", feature_names=None, allow_nan=False):
    """Validate ``X`` and round it to float32 like scikit-learn's trees.

    A DataFrame is aligned to ``feature_names`` by column name first (see
    :func:`align_frame`). Returns ``(X64, Xr)``: the validated float64 array
    and its float32-rounded float64 copy used by the kernels. With
    ``allow_nan=True`` NaN (a missing value) is kept in both (inf is still
    refused).
    """
    X = align_frame(X, feature_names, name=name)
    if hasattr(X, "columns") and hasattr(X, "dtypes"):
        import pandas as pd
        from pandas.api.types import is_bool_dtype, is_numeric_dtype

        cat = [c for c, dt in zip(X.columns, X.dtypes) if isinstance(dt, pd.CategoricalDtype)]
        if cat:
            raise TypeError(
                f"{name} has pandas category columns {cat}: certify does not support categorical features "
                "(a boosted model fitted on them may split on sets of categories, which the certificate does "
                "not model). Fit the model on a numeric "
                "encoding of these columns (one-hot columns, or integer codes such as X[c].cat.codes) and "
                "certify it with the same encoded columns.")
        bad = [c for c, dt in zip(X.columns, X.dtypes) if not (is_numeric_dtype(dt) or is_bool_dtype(dt))]
        if bad:
            raise TypeError(f"{name} has non-numeric columns {bad}; certify needs numbers: pass the numeric "
                            "columns the model was fitted on (encode text or category columns before fitting).")
    if hasattr(X, "to_numpy"):
        X = X.to_numpy()
    if isinstance(X, (str, bytes)):
        raise TypeError(f"{name} must be a numeric 2-D array or DataFrame; got a string.")
    try:
        X64 = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric 2-D array or DataFrame; got {type(X).__name__} "
                        f"that cannot be converted to float.") from exc
    if X64.ndim == 1:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features); for one row use {name}.reshape(1, -1).")
    if X64.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features); got {X64.ndim} dimensions.")
    if X64.shape[1] != n_features:
        raise ValueError(
            f"{name} has {X64.shape[1]} features (columns) but the forest was fitted on {n_features} features; "
            "pass the same columns used to fit it."
        )
    if allow_nan:
        if np.any(np.isinf(X64)):
            raise ValueError(f"{name} contains NaN or infinite values: inf is refused (NaN, a missing value, is "
                             "accepted where the model's predict accepts it); replace it before certifying.")
    elif not np.all(np.isfinite(X64)):
        raise ValueError(f"{name} contains NaN or infinite values and this model's predict refuses them; impute "
                         "or drop them before certifying.")
    with np.errstate(over="ignore"):
        X32 = X64.astype(np.float32)
    if not np.all(np.isfinite(X32) | np.isnan(X64)):
        raise ValueError(f"{name} has values outside the float32 range that scikit-learn trees work in.")
    return X64, np.ascontiguousarray(X32.astype(np.float64))


def encode_labels(y, classes, n_rows, name="y"):
    """Class indices of ``y``; every label must be one of ``classes``, one per row."""
    if np.ndim(y) == 0:
        raise ValueError(f"{name} must be a 1-D array with one label per row of X ({n_rows}); got the "
                         f"scalar {y!r}.")
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D with one label per row; got shape {y.shape}.")
    if y.shape[0] != n_rows:
        raise ValueError(f"X has {n_rows} rows but {name} has {y.shape[0]} labels; they must match.")
    lookup = {}
    for k, c in enumerate(classes):
        key = c.item() if hasattr(c, "item") else c
        lookup.setdefault(key, k)
    out = np.empty(y.shape[0], dtype=np.int64)
    for i, v in enumerate(y):
        key = v.item() if hasattr(v, "item") else v
        try:
            hit = lookup.get(key)
        except TypeError:  # unhashable label
            hit = None
        if hit is None or (isinstance(key, float) and not np.isfinite(key)):
            raise ValueError(
                f"{name} contains the label {key!r}, which is not one of the model's classes "
                f"{[c.item() if hasattr(c, 'item') else c for c in classes]}."
            )
        out[i] = hit
    return out


def one_instance(flat, x, y):
    """``(X64, Xr, yi)`` for one instance ``x`` (a Series, a one-row DataFrame aligned by
    column name, or a 1-D array) with the single label ``y``, validated by the flattened
    model ``flat`` (a forest's or a boosted model's: ``check_X``, ``encode_y``)."""
    if hasattr(x, "to_frame") and hasattr(x, "index") and not hasattr(x, "columns"):  # a Series
        x = x.to_frame().T
    if hasattr(x, "columns"):
        if len(x) != 1:
            raise ValueError(f"x must be one instance; got a DataFrame with {len(x)} rows.")
        X64, Xr = flat.check_X(x, name="x")
    else:
        try:
            xa = np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"x must be one numeric instance of {flat.n_features} values; got {x!r}.") from None
        if xa.ndim != 1:
            raise ValueError(f"x must be one instance, a 1-D array of {flat.n_features} values; got shape {xa.shape}.")
        X64, Xr = flat.check_X(xa.reshape(1, -1), name="x")
    if np.ndim(y) != 0:
        raise ValueError(f"y must be the single label of x; got an array of shape {np.shape(y)}.")
    return X64, Xr, int(flat.encode_y(np.asarray([y]), n_rows=1)[0])
