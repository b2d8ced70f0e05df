"""The :class:`Dataset` container shared by every loader."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

__all__ = ["Dataset", "FEATURE_TYPES"]

FEATURE_TYPES = ("categorical", "integer", "continuous")


@dataclass(frozen=True, eq=False)
class Dataset:
    """A tabular dataset in two synchronised views: readable and model-ready.

    Built by the loaders (:func:`~fairlens.datasets.load_dataset`) and by
    :func:`~fairlens.datasets.from_frame`; validated on every construction, including
    ``dataclasses.replace(dataset, ...)`` (``X`` finite, ``y`` in {0, 1}, shapes agree).

    Parameters
    ----------
    name : str
        Short name, e.g. ``"adult"``.
    frame : pandas.DataFrame
        Human-readable features (category labels, real values) plus the ``target`` column.
    X : ndarray of shape (n_samples, n_features), float64
        Encoded features: categorical features as integer codes (see ``categories``),
        numeric features as values.
    y : ndarray of shape (n_samples,), int64
        Binary label, **1 = the favourable outcome** (see ``label_names``).
    feature_names : list of str
        Column names of ``X`` (and of the feature part of ``frame``).
    target : str
        Name of the target column in ``frame``.
    label_names : dict
        ``{0: "...", 1: "..."}`` -- what each value of ``y`` means.
    protected : list of str
        Sensitive attributes the papers study on this dataset.
    bounds : ndarray of shape (n_features, 2)
        Per-feature domain ``[min, max]`` in the encoded space (for search methods).
    feature_types : list of str
        ``"categorical"``, ``"integer"`` or ``"continuous"`` per feature.
    categories : dict
        ``feature -> {code: label}`` for every categorical feature.
    description, citation : str
        What the data is and how it was prepared; whom to cite.
    encoding : str
        ``"raw"`` (readable values, codes for categories) or ``"benchmark"`` (the
        discretised encoding of the EIDIG/ADF/MAFT line of work).

    Attributes
    ----------
    n_samples, n_features : int
        Shape of ``X``.
    protected_indices : list of int
        Column indices of ``protected`` in ``X``.
    categorical_mask : ndarray of bool
        Which columns are categorical.

    Raises
    ------
    TypeError, ValueError
        If the fields disagree (shapes, types), ``X`` holds NaN/inf or ``y`` holds values
        other than 0 and 1.

    Examples
    --------
    >>> from fairlens.datasets import load_german_credit
    >>> ds = load_german_credit()
    >>> ds.n_samples, ds.n_features, ds.protected
    (1000, 21, ['sex', 'age'])
    >>> ds.label_names[1]
    'good credit'
    """

    name: str
    frame: pd.DataFrame
    X: np.ndarray
    y: np.ndarray
    feature_names: list
    target: str
    label_names: dict
    protected: list
    bounds: np.ndarray
    feature_types: list
    categories: dict = field(default_factory=dict)
    description: str = ""
    citation: str = ""
    encoding: str = "raw"

    def __post_init__(self):
        # Validated on every construction, dataclasses.replace(...) included: a Dataset is
        # trusted everywhere downstream (kernels take X and y as they are).
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a str; got {type(self.name).__name__}")
        if not isinstance(self.frame, pd.DataFrame):
            raise TypeError(f"frame must be a pandas DataFrame; got {type(self.frame).__name__}")
        X = np.asarray(self.X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (n_samples, n_features); got shape {X.shape}")
        if X.dtype.kind not in "biuf":
            raise TypeError(f"X must hold real numbers (encoded features); got dtype {X.dtype}")
        X = np.ascontiguousarray(X, dtype=np.float64)
        if not np.isfinite(X).all():
            cols = [str(self.feature_names[j]) if j < len(self.feature_names) else str(j)
                    for j in np.flatnonzero(~np.isfinite(X).all(axis=0))]
            raise ValueError(f"X has NaN or infinite values in columns {cols[:5]}; a Dataset holds "
                             "finite encoded values (fill or drop them first)")
        y = np.asarray(self.y)
        if y.dtype.kind not in "biuf":
            raise TypeError(f"y must hold the binary labels 0/1 (1 = favourable); got dtype {y.dtype}")
        if y.size and not np.isin(y, (0, 1)).all():
            raise ValueError(
                f"y must hold only 0 and 1 (1 = favourable outcome); got values "
                f"{np.unique(y[~np.isin(y, (0, 1))])[:5].tolist()}. Binarise the target first "
                "(fairlens.datasets.from_frame(..., favourable=<value>) does it)")
        y = y.astype(np.int64)
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y)
        n, d = X.shape
        if len(self.feature_names) != d or len(self.feature_types) != d:
            raise ValueError("feature_names/feature_types must have one entry per column of X")
        if y.shape != (n,) or len(self.frame) != n:
            raise ValueError("X, y and frame must have the same number of rows")
        bounds = np.asarray(self.bounds, dtype=np.float64)
        if bounds.shape != (d, 2):
            raise ValueError("bounds must have shape (n_features, 2)")
        if np.isnan(bounds).any() or (bounds[:, 0] > bounds[:, 1]).any():
            raise ValueError("bounds must hold [min, max] with min <= max for every feature")
        object.__setattr__(self, "bounds", bounds)
        unknown = [t for t in self.feature_types if t not in FEATURE_TYPES]
        if unknown:
            raise ValueError(f"unknown feature types {unknown}; use one of {FEATURE_TYPES}")
        extra = [k for k in self.categories if k not in self.feature_names]
        if extra:
            raise ValueError(f"categories names {extra}, which are not features")
        for p in self.protected:
            self.index_of(p)

    # ------------------------------------------------------------------ basics
    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def protected_indices(self) -> list:
        """Column indices of the ``protected`` attributes in ``X``."""
        return [self.index_of(p) for p in self.protected]

    @property
    def categorical_mask(self) -> np.ndarray:
        return np.array([t == "categorical" for t in self.feature_types])

    def index_of(self, feature) -> int:
        """Column index of ``feature`` in ``X``.

        Parameters
        ----------
        feature : str or int
            A feature name, or a column index (checked and passed through).

        Returns
        -------
        int

        Raises
        ------
        ValueError
            If the name is unknown or the index out of range.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> load_german_credit().index_of("age")
        13
        """
        if isinstance(feature, (int, np.integer)) and not isinstance(feature, bool):
            if not 0 <= feature < self.n_features:
                raise ValueError(
                    f"feature index {feature} is out of range for {self.name!r} "
                    f"({self.n_features} features)"
                )
            return int(feature)
        try:
            return self.feature_names.index(feature)
        except ValueError:
            raise ValueError(
                f"unknown feature {feature!r} for dataset {self.name!r}; "
                f"choose one of {self.feature_names}"
            ) from None

    def __repr__(self) -> str:
        return (
            f"Dataset({self.name!r}, encoding={self.encoding!r}, n_samples={self.n_samples}, "
            f"n_features={self.n_features}, protected={self.protected}, "
            f"favourable rate={self.y.mean():.3f})"
        )

    # ----------------------------------------------------------- two-way codes
    def decode(self, X, columns=None) -> pd.DataFrame:
        """Readable DataFrame of encoded rows ``X`` (codes become category labels).

        Parameters
        ----------
        X : array-like of shape (n, n_features) or (n_features,)
            Encoded rows.
        columns : list of str, optional
            Decode only these features, in this order (default: every feature, in
            ``feature_names`` order).  A model that reads a few columns of a wide table is
            then not handed (or made to wait for) the others.

        Returns
        -------
        pandas.DataFrame
            One column per feature; category labels and integer values come back with the
            type and dtype of ``frame``'s column.  Codes that are not in ``categories``
            (e.g. a search that left the domain) are shown as ``"<code k>"`` rather than
            silently dropped.

        Raises
        ------
        ValueError
            If ``X`` has the wrong number of columns, or ``columns`` names no feature.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> ds = load_german_credit()
        >>> ds.decode(ds.X[:2])["sex"].tolist() == ds.frame["sex"][:2].tolist()
        True
        >>> list(ds.decode(ds.X[:2], columns=["sex", "age"]).columns)
        ['sex', 'age']
        """
        X = np.asarray(X, dtype=float)
        if X.ndim == 1:
            X = X[None, :]
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(
                f"X must have shape (n, {self.n_features}) for dataset {self.name!r}; "
                f"got {X.shape}"
            )
        names = list(self.feature_names) if columns is None else [str(c) for c in columns]
        unknown = [c for c in names if c not in self.feature_names]
        if unknown:
            raise ValueError(f"columns={unknown!r} are not features of dataset {self.name!r}; "
                             f"choose from {list(self.feature_names)!r}")
        out = {}
        for name in names:
            j = self.feature_names.index(name)
            col = X[:, j]
            dtype = self._frame_dtype(name)
            if name in self.categories:
                out[name] = _decode_codes(col, self.categories[name], dtype)
            elif self.feature_types[j] == "integer" and np.all(np.mod(col, 1) == 0):
                out[name] = _as_int_dtype(col, dtype)
            else:
                out[name] = col
        return pd.DataFrame(out, columns=names)

    def encode(self, frame: pd.DataFrame) -> np.ndarray:
        """Encode a readable DataFrame (as in ``frame``) into the ``X`` space.

        Parameters
        ----------
        frame : pandas.DataFrame
            Readable rows with (at least) the feature columns.

        Returns
        -------
        ndarray of shape (n, n_features), float64

        Raises
        ------
        TypeError
            If ``frame`` is not a DataFrame.
        ValueError
            If a feature column is missing or holds a value that is no category.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.datasets import load_german_credit
        >>> ds = load_german_credit()
        >>> np.array_equal(ds.encode(ds.frame), ds.X)
        True
        """
        if not isinstance(frame, pd.DataFrame):
            raise TypeError("frame must be a pandas DataFrame with the dataset's feature columns")
        missing = [c for c in self.feature_names if c not in frame.columns]
        if missing:
            raise ValueError(f"frame is missing the feature columns {missing}")
        X = np.empty((len(frame), self.n_features), dtype=np.float64)
        for j, name in enumerate(self.feature_names):
            if name in self.categories:
                X[:, j] = _encode_labels(frame[name], self.categories[name], name)
            else:
                X[:, j] = pd.to_numeric(frame[name]).to_numpy(dtype=np.float64)
        return X

    def _frame_dtype(self, name):
        frame = self.frame
        if isinstance(frame, pd.DataFrame) and name in frame.columns:
            return frame[name].dtype
        return None

    # ----------------------------------------------------------------- subsets
    def subset(self, idx) -> "Dataset":
        """Rows ``idx`` as a new Dataset (same domain, bounds and category tables).

        Parameters
        ----------
        idx : array-like of int or bool
            Row indices (negative ones count from the end) or a boolean mask of length
            ``n_samples``.

        Returns
        -------
        Dataset
            The selected rows, in the order given.

        Raises
        ------
        TypeError
            If ``idx`` holds neither integers nor booleans.
        ValueError
            If an index is out of range or a mask has the wrong length.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> load_german_credit().subset([0, 1, 2]).n_samples
        3
        """
        idx = np.asarray(idx)
        if idx.ndim != 1:
            raise ValueError(f"idx must be 1-D (row indices or a boolean mask); got shape {idx.shape}")
        if idx.dtype == bool:
            if idx.shape[0] != self.n_samples:
                raise ValueError(f"idx: a boolean mask must have one entry per row "
                                 f"({self.n_samples}); got {idx.shape[0]}")
            idx = np.flatnonzero(idx)
        elif idx.size == 0:
            idx = idx.astype(np.int64)
        elif idx.dtype.kind not in "iu":
            raise TypeError(f"idx must hold integer row indices or booleans; got dtype {idx.dtype}")
        n = self.n_samples
        bad = (idx < -n) | (idx >= n)
        if bad.any():
            raise ValueError(f"idx: row indices {idx[bad][:5].tolist()} are out of range for a "
                             f"dataset of {n} rows (valid: -{n} .. {n - 1})")
        return replace(
            self,
            frame=self.frame.iloc[idx].reset_index(drop=True),
            X=self.X[idx],
            y=self.y[idx],
        )

    def split(self, test_size=0.25, random_state=0, stratify=True):
        """Train/test split (``sklearn.model_selection.train_test_split``).

        Parameters
        ----------
        test_size : float or int, default 0.25
            Share (or number) of rows in the test part.
        random_state : int, default 0
            Seeds the split.
        stratify : bool, default True
            Keep the share of ``y = 1`` equal in both parts.

        Returns
        -------
        train, test : Dataset

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> train, test = load_german_credit().split(test_size=0.2)
        >>> train.n_samples, test.n_samples
        (800, 200)
        """
        from sklearn.model_selection import train_test_split

        idx = np.arange(self.n_samples)
        train, test = train_test_split(
            idx, test_size=test_size, random_state=random_state,
            stratify=self.y if stratify else None,
        )
        return self.subset(train), self.subset(test)


def _numeric_labels(mapping: dict) -> bool:
    """Whether every label of a category table is a number (int, float or bool)."""
    return bool(mapping) and all(
        isinstance(v, (bool, np.bool_, int, np.integer, float, np.floating))
        for v in mapping.values()
    )


def _as_int_dtype(col: np.ndarray, dtype) -> np.ndarray:
    """Integral floats as the frame's integer dtype when the values fit, else int64."""
    if dtype is not None and pd.api.types.is_integer_dtype(dtype) and not isinstance(
        dtype, pd.api.extensions.ExtensionDtype
    ):
        info = np.iinfo(dtype)
        if col.size == 0 or (col.min() >= info.min and col.max() <= info.max):
            return col.astype(dtype)
    return col.astype(np.int64)


#: Largest integer float64 holds exactly (with all integers below it).
_EXACT_INT = 2**53


def _exact_in_float(mapping: dict) -> bool:
    """Whether every numeric label is held exactly by a float64 (so matching by float works)."""
    return all(not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_))
               or abs(int(v)) <= _EXACT_INT for v in mapping.values())


def _decode_codes(col: np.ndarray, mapping: dict, dtype=None) -> np.ndarray:
    """Vectorised ``code -> label`` (labels keep their own type and value exactly); unknown
    codes, including non-integral ones, become the string ``"<code k>"``.

    Numeric labels (a user's integer, boolean or real category values) come back in the
    dtype of the dataset's frame column, so a pipeline fitted on ``dataset.frame`` sees
    exactly the values and dtype it was fitted on.
    """
    col = np.asarray(col, dtype=np.float64)
    keys = sorted(mapping, key=float)
    table = np.asarray([float(k) for k in keys], dtype=np.float64)
    labs = np.empty(len(keys), dtype=object)
    labs[:] = [mapping[k] for k in keys]
    pos = np.minimum(np.searchsorted(table, col), max(len(keys) - 1, 0))
    known = (table[pos] == col) if len(keys) else np.zeros(col.shape, dtype=bool)
    if not known.all():
        out = np.empty(col.shape, dtype=object)
        out[known] = labs[pos[known]]
        out[~known] = [f"<code {v:g}>" for v in col[~known]]
        return out
    values = labs[pos]
    if _numeric_labels(mapping):
        kinds = {type(v) for v in mapping.values()}
        ints = [v for v in mapping.values()
                if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))]
        fits64 = all(-(2**63) <= int(v) <= 2**63 - 1 for v in ints)
        if dtype is not None and (pd.api.types.is_bool_dtype(dtype)
                                  or pd.api.types.is_numeric_dtype(dtype)):
            try:
                return pd.Series(values, dtype=object).astype(dtype).to_numpy()
            except (TypeError, ValueError, OverflowError):
                pass
        if all(issubclass(k, (bool, np.bool_)) for k in kinds):
            return values.astype(bool)
        if ints and len(ints) == len(mapping):
            return values.astype(np.int64) if fits64 else values
        return values.astype(np.float64) if _exact_in_float(mapping) else values
    return values


def _encode_labels(column: pd.Series, mapping: dict, name: str) -> np.ndarray:
    """Vectorised ``label -> code`` for one categorical column (inverse of ``decode``).

    Numeric labels (integer, boolean or real category values of a user's frame) are
    matched by value (``1``, ``1.0`` and ``True`` are the same value); text labels by their
    string form.
    """
    if _numeric_labels(mapping) and not _exact_in_float(mapping):
        # integers beyond 2**53: matched by exact value (a float would merge neighbours)
        exact = {v: float(k) for k, v in mapping.items()}
        values = column.tolist() if hasattr(column, "tolist") else list(column)
        codes = np.array([exact.get(v, np.nan) if isinstance(v, (int, float, np.number))
                          else np.nan for v in values], dtype=np.float64)
        bad_mask = np.isnan(codes)
        if bad_mask.any():
            bad = sorted({str(v) for v, b in zip(values, bad_mask) if b})
            raise ValueError(
                f"column {name!r} has values {bad[:5]} that are not categories of this "
                f"dataset; known: {list(mapping.values())}"
            )
        return codes
    if _numeric_labels(mapping):
        inverse = {float(v): float(k) for k, v in mapping.items()}
        values = column
        if not (pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values)):
            values = pd.to_numeric(values, errors="coerce")
        keys = pd.Series(values, copy=False).astype(float)
        codes = keys.map(inverse)
        bad_mask = codes.isna().to_numpy()
        if bad_mask.any():
            bad = sorted({str(v) for v in column[bad_mask]})
            raise ValueError(
                f"column {name!r} has values {bad[:5]} that are not categories of this "
                f"dataset; known: {list(mapping.values())}"
            )
        return codes.to_numpy(dtype=np.float64)
    inverse = {str(label): code for code, label in mapping.items()}
    values = column.astype(str)
    bad = sorted(set(values) - set(inverse))
    if bad:
        raise ValueError(
            f"column {name!r} has values {bad[:5]} that are not categories of "
            f"this dataset; known: {list(inverse)}"
        )
    return values.map(inverse).to_numpy(dtype=np.float64)
