"""Rules, rule sets and frequent rule-set mining (TestSGD section 4.1, Algorithm 1)."""
from __future__ import annotations

import itertools
import numbers
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .._base import Interval, Options, strict_keywords, validated
from .._validation import check_choice, check_int, check_real
from . import _kernels
from .plots import plot_supports

__all__ = [
    "Rule",
    "RuleSet",
    "FrequentRuleSets",
    "TableView",
    "as_table",
    "single_rules",
    "frequent_rule_sets",
    "frequent_rule_sets_bruteforce",
    "round_edges",
    "BINNINGS",
]

N_BINS_DEFAULT = 10
MAX_CATEGORY_VALUES = 12


# ----------------------------------------------------------------------------
# the table view: what TestSGD needs from a dataset
# ----------------------------------------------------------------------------
@dataclass
class TableView:
    """Minimal, validated view of a structured dataset.

    Built by :func:`as_table` from a :class:`fairlens.datasets.Dataset` (or any
    object with ``X, feature_names, feature_types, bounds`` and optionally
    ``categories``).
    """

    X: np.ndarray
    feature_names: list
    feature_types: list
    bounds: np.ndarray
    categories: dict
    y: np.ndarray | None = None
    name: str = "data"
    source: object = field(default=None, repr=False, compare=False)

    def index_of(self, feature: str) -> int:
        try:
            return self.feature_names.index(feature)
        except ValueError:
            raise ValueError(
                f"sensitive feature {feature!r} is not a column of {self.name!r}; "
                f"choose from {self.feature_names}"
            ) from None


def as_table(dataset) -> TableView:
    """Validate ``dataset`` and return a :class:`TableView`.

    Raises
    ------
    TypeError
        If ``dataset`` lacks ``X``/``feature_names``.
    """
    if isinstance(dataset, TableView):
        return dataset
    for attr in ("X", "feature_names"):
        if not hasattr(dataset, attr):
            raise TypeError(
                "dataset must be a fairlens Dataset (or have X, feature_names, feature_types, "
                f"bounds); got {type(dataset).__name__} without {attr!r}"
            )
    try:
        X = np.asarray(dataset.X, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("dataset.X must be a numeric (encoded) 2-D array") from None
    if X.ndim != 2:
        raise ValueError(f"dataset.X must be 2-D, got shape {X.shape}")
    if X.shape[0] == 0:
        raise ValueError("dataset has no rows (dataset.X has shape "
                         f"{X.shape}); pass a dataset with at least one row")
    if not np.all(np.isfinite(X)):
        raise ValueError("dataset.X contains NaN or inf; TestSGD does not impute (fill or drop them)")
    names = list(dataset.feature_names)
    if len(names) != X.shape[1]:
        raise ValueError("dataset.feature_names must have one name per column of dataset.X")
    types = list(getattr(dataset, "feature_types", None) or ["continuous"] * X.shape[1])
    bounds = getattr(dataset, "bounds", None)
    if bounds is None:
        bounds = np.column_stack([X.min(axis=0), X.max(axis=0)])
    bounds = np.asarray(bounds, dtype=np.float64)
    if bounds.shape != (X.shape[1], 2):
        raise ValueError(f"dataset.bounds must have shape ({X.shape[1]}, 2); got {bounds.shape}")
    cats = dict(getattr(dataset, "categories", None) or {})
    y = getattr(dataset, "y", None)
    return TableView(X=X, feature_names=names, feature_types=types, bounds=bounds,
                     categories=cats, y=None if y is None else np.asarray(y),
                     name=str(getattr(dataset, "name", "data")), source=dataset)


# ----------------------------------------------------------------------------
# rules and rule sets
# ----------------------------------------------------------------------------
def _fmt_num(v: float) -> str:
    return f"{float(v):.6g}"


@dataclass(frozen=True)
class Rule:
    """A condition on ONE sensitive feature (section 4.1).

    Categorical: ``x[feature] in values`` (a non-empty proper subset of the
    feature's values). Range: the feature's equal-width bin index lies in
    ``[bin_lo, bin_hi]``, i.e. ``low <= x < high`` with the first bin open below
    and the last bin open above (values outside the domain fall in the end bins).
    Rules are usually built by :func:`single_rules`, not by hand.

    Parameters
    ----------
    feature : str
        Name of the sensitive feature.
    index : int
        Column of ``feature`` in the encoded ``X``.
    kind : {"categorical", "range"}
        Set membership or range of bins.
    values : tuple of float, default ()
        The codes of a categorical rule.
    labels : tuple of str, default ()
        Readable labels of ``values`` (used by ``str``).
    edges : tuple of float, default ()
        Bin edges of a range rule.
    bin_lo, bin_hi : int, default -1
        First and last bin (inclusive) of a range rule.

    Examples
    --------
    >>> from fairlens.testsgd import Rule
    >>> import numpy as np
    >>> r = Rule("sex", 0, "categorical", values=(1.0,), labels=("female",))
    >>> str(r), r.mask(np.array([[0.0], [1.0]])).tolist()
    ('sex=female', [False, True])
    >>> age = Rule("age", 1, "range", edges=(0.0, 30.0, 60.0, 90.0), bin_lo=1, bin_hi=2)
    >>> str(age), age.mask(np.array([[0, 20], [0, 45], [0, 99]])).tolist()
    ('age>=30', [False, True, True])
    """

    feature: str
    index: int
    kind: str  # "categorical" | "range"
    values: tuple = ()
    labels: tuple = ()
    edges: tuple = ()
    bin_lo: int = -1
    bin_hi: int = -1

    @property
    def low(self) -> float:
        return -np.inf if self.bin_lo <= 0 else self.edges[self.bin_lo]

    @property
    def high(self) -> float:
        return np.inf if self.bin_hi >= len(self.edges) - 2 else self.edges[self.bin_hi + 1]

    def mask(self, X: np.ndarray) -> np.ndarray:
        """Membership of the rows of ``X``.

        Parameters
        ----------
        X : array of shape (n, d)
            Encoded rows.

        Returns
        -------
        ndarray of bool, shape (n,)
            True for the rows that satisfy the rule.

        Examples
        --------
        >>> from fairlens.testsgd import Rule
        >>> import numpy as np
        >>> r = Rule("x", 0, "range", edges=(0.0, 1.0, 2.0, 3.0), bin_lo=0, bin_hi=0)
        >>> str(r), r.mask(np.array([[-5.0], [0.5], [1.5]])).tolist()
        ('x<1', [True, True, False])
        """
        col = np.asarray(X, dtype=np.float64)[:, self.index]
        if self.kind == "categorical":
            return np.isin(col, np.asarray(self.values, dtype=np.float64))
        b = bin_index(col, np.asarray(self.edges))
        return (b >= self.bin_lo) & (b <= self.bin_hi)

    def __str__(self) -> str:
        if self.kind == "categorical":
            if len(self.labels) == 1:
                return f"{self.feature}={self.labels[0]}"
            return f"{self.feature} in {{{', '.join(map(str, self.labels))}}}"
        lo, hi = self.low, self.high
        if np.isinf(lo):
            return f"{self.feature}<{_fmt_num(hi)}"
        if np.isinf(hi):
            return f"{self.feature}>={_fmt_num(lo)}"
        return f"{_fmt_num(lo)}<={self.feature}<{_fmt_num(hi)}"

    __repr__ = __str__


@dataclass(frozen=True)
class RuleSet:
    """A conjunction of rules, at most one per sensitive feature.

    Parameters
    ----------
    rules : tuple of Rule
        At least one rule, on distinct features.

    Raises
    ------
    ValueError
        If ``rules`` is empty or holds two rules on the same feature.

    Examples
    --------
    >>> from fairlens.testsgd import Rule, RuleSet
    >>> import numpy as np
    >>> sex = Rule("sex", 0, "categorical", values=(1.0,), labels=("female",))
    >>> old = Rule("age", 1, "range", edges=(0.0, 40.0, 80.0), bin_lo=1, bin_hi=1)
    >>> rs = RuleSet((sex, old))
    >>> str(rs), len(rs), rs.features
    ('sex=female, age>=40', 2, ('sex', 'age'))
    """

    rules: tuple

    def __post_init__(self):
        feats = [r.feature for r in self.rules]
        if len(set(feats)) != len(feats):
            raise ValueError(f"a rule set holds at most one rule per feature; got features {feats}")
        if not self.rules:
            raise ValueError("a rule set needs at least one rule")

    def mask(self, X: np.ndarray) -> np.ndarray:
        """Membership of the rows of ``X`` (every rule holds).

        Parameters
        ----------
        X : array of shape (n, d)
            Encoded rows.

        Returns
        -------
        ndarray of bool, shape (n,)
            True for the rows that satisfy every rule.

        Examples
        --------
        >>> from fairlens.testsgd import Rule, RuleSet
        >>> import numpy as np
        >>> sex = Rule("sex", 0, "categorical", values=(1.0,), labels=("female",))
        >>> old = Rule("age", 1, "range", edges=(0.0, 40.0, 80.0), bin_lo=1, bin_hi=1)
        >>> RuleSet((sex, old)).mask(np.array([[1, 50], [1, 20], [0, 50]])).tolist()
        [True, False, False]
        """
        m = np.ones(np.asarray(X).shape[0], dtype=bool)
        for r in self.rules:
            m &= r.mask(X)
        return m

    @property
    def features(self) -> tuple:
        return tuple(r.feature for r in self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def __str__(self) -> str:
        return ", ".join(str(r) for r in self.rules)

    __repr__ = __str__


def bin_index(col: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Equal-width bin of each value: ``searchsorted`` on the inner edges."""
    return np.searchsorted(edges[1:-1], col, side="right")


BINNINGS = ("equal_width", "round")


def _nice_edges(lo: float, hi: float, k: int) -> np.ndarray:
    e = np.linspace(lo, hi, k + 1)
    # round to 12 significant digits so that 0.3 is the edge, not 0.30000000000000004
    return np.array([float(f"{v:.12g}") for v in e])


@validated({
    "lo": [Interval(numbers.Real, None, None)], "hi": [Interval(numbers.Real, None, None)],
    "k": [Interval(numbers.Integral, 1, None)],
})
def round_edges(lo: float, hi: float, k: int) -> np.ndarray:
    """About ``k`` bins of a "nice" width covering ``[lo, hi]`` (``binning="round"``).

    The width is the smallest of ``{1, 2, 2.5, 5} x 10^p`` that is at least
    ``(hi - lo) / k``; the edges are the multiples of that width from
    ``floor(lo / w) * w`` to ``ceil(hi / w) * w``. So ages 17..90 with ``k = 10`` get
    the edges 10, 20, ..., 90 (readable "40<=age<60", not "38.9<=age<60.8"). Since
    consecutive candidate widths differ by at most a factor 2, there are between
    ``k / 2`` and ``k + 2`` bins (at least 2).

    Parameters
    ----------
    lo, hi : float
        The range to cover.
    k : int
        The wanted number of bins.

    Returns
    -------
    ndarray
        The edges.

    Examples
    --------
    >>> from fairlens.testsgd import round_edges
    >>> round_edges(17, 90, 10).tolist()
    [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0]
    """
    lo, hi = float(lo), float(hi)
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
        raise ValueError(f"round_edges needs a finite range lo < hi; got [{lo}, {hi}]")
    raw = (hi - lo) / int(k)
    p = np.floor(np.log10(raw))
    width = None
    for e in (p - 1, p, p + 1):
        for m in (1.0, 2.0, 2.5, 5.0):
            w = float(f"{m * 10.0 ** e:.12g}")
            if w >= raw * (1 - 1e-12) and (width is None or w < width):
                width = w
    def edge(i):  # rounded to 12 significant digits: 0.3, not 0.30000000000000004
        return float(f"{i * width:.12g}")

    start, stop = np.floor(lo / width), np.ceil(hi / width)
    # exact coverage on the rounded edges: lo in [edge(start), edge(start + 1)), hi <= edge(stop)
    while edge(start) > lo:
        start -= 1
    while edge(start + 1) <= lo:
        start += 1
    while edge(stop) < hi:
        stop += 1
    while edge(stop - 1) >= hi and stop - 1 > start:
        stop -= 1
    if stop - start < 2:  # at least two bins
        stop = start + 2
    return np.array([edge(i) for i in np.arange(start, stop + 1)])


@validated({
    "table": "no_validation", "feature": [str], "edges": "no_validation", "kind": "no_validation",
    "n_bins": [Interval(numbers.Integral, 2, None)], "max_values": [Interval(numbers.Integral, 2, None)],
    "rule_form": [Options("interval", "threshold")], "binning": [Options(*BINNINGS)],
})
def single_rules(table, feature: str, *, n_bins: int = N_BINS_DEFAULT,
                 edges: Sequence[float] | None = None, kind: str | None = None,
                 max_values: int = MAX_CATEGORY_VALUES, rule_form: str = "interval",
                 binning: str = "equal_width") -> list:
    """All 1-feature rules of ``feature`` (Algorithm 1, lines 2-5).

    Categorical features: every non-empty proper subset of the values that
    occur in the domain (``categories`` of the dataset, else the observed
    values), ordered by size then code. Integer/continuous features: ``n_bins``
    equal-width bins over the domain ``bounds`` (or the given ``edges``), and
    every range of adjacent bins except the full range (``rule_form="interval"``,
    the issue's reading of section 4.1), or only the one-sided ranges
    ``x < edge`` / ``x >= edge`` (``rule_form="threshold"``, the "linear
    inequality" form of section 3 that the paper's Crime rules use).

    ``binning="equal_width"`` (default, the paper's ``K`` equal-width bins over the
    domain) or ``"round"``: about ``K`` bins with round edges covering the domain and
    the observed values (:func:`round_edges`), for readable rules.

    Parameters
    ----------
    table : fairlens Dataset or TableView
        The data (any table :func:`frequent_rule_sets` accepts).
    feature : str
        The protected feature.
    n_bins : int >= 2, default 10
        ``K`` bins of a binned feature.
    edges : sequence of float, optional
        Explicit bin edges.
    kind : {"categorical", "integer", "continuous"}, optional
        Override the feature's type.
    max_values : int >= 2, default 12
        Largest number of values of a categorical feature.
    rule_form : {"interval", "threshold"}
        See above.
    binning : {"equal_width", "round"}
        See above.

    Returns
    -------
    list of Rule

    Raises
    ------
    ValueError
        If ``feature`` is not a column, a categorical feature has more than
        ``max_values`` values, or ``edges`` are not increasing.
    TypeError
        If ``table`` is not a dataset.

    Examples
    --------
    >>> from fairlens.testsgd import single_rules
    >>> from fairlens.datasets import load_german_credit
    >>> data = load_german_credit()
    >>> [str(r) for r in single_rules(data, "sex")]
    ['sex=female', 'sex=male']
    >>> [str(r) for r in single_rules(data, "age", n_bins=3, rule_form="threshold")]
    ['age<37.6667', 'age<56.3333', 'age>=37.6667', 'age>=56.3333']
    """
    check_choice("rule_form", rule_form, ("interval", "threshold"))
    check_choice("binning", binning, BINNINGS)
    table = as_table(table)
    j = table.index_of(feature)
    ftype = kind or table.feature_types[j]
    if ftype == "categorical" or (kind is None and feature in table.categories and edges is None):
        cats = table.categories.get(feature)
        if cats:
            codes = sorted(float(c) for c in cats)
            label_of = {float(c): str(v) for c, v in cats.items()}
        else:
            codes = sorted(np.unique(table.X[:, j]).tolist())
            label_of = {c: _fmt_num(c) for c in codes}
        if len(codes) < 2:
            return []
        if len(codes) > max_values:
            raise ValueError(
                f"categorical feature {feature!r} has {len(codes)} values (> max_values={max_values}); "
                f"its 2^{len(codes)}-2 subsets are too many: pass bins={{{feature!r}: K}} to treat it as "
                "ordered, or raise max_values"
            )
        out = []
        for size in range(1, len(codes)):
            for sub in itertools.combinations(codes, size):
                out.append(Rule(feature, j, "categorical", values=tuple(sub),
                                labels=tuple(label_of[c] for c in sub)))
        return out
    if edges is None:
        n_bins = check_int("n_bins", n_bins, min=2)
        lo, hi = table.bounds[j]
        if not np.isfinite(lo) or not np.isfinite(hi) or hi <= lo:
            lo, hi = float(table.X[:, j].min()), float(table.X[:, j].max())
        if hi <= lo:
            return []
        if binning == "round":
            if table.X.shape[0]:
                lo = min(lo, float(table.X[:, j].min()))
                hi = max(hi, float(table.X[:, j].max()))
            e = round_edges(lo, hi, n_bins)
        else:
            e = _nice_edges(lo, hi, n_bins)
    else:
        e = _check_edges(feature, edges)
    k = len(e) - 1
    out = []
    for a in range(k):
        for c in range(a, k):
            if a == 0 and c == k - 1:
                continue
            if rule_form == "threshold" and a != 0 and c != k - 1:
                continue
            out.append(Rule(feature, j, "range", edges=tuple(float(v) for v in e), bin_lo=a, bin_hi=c))
    return out


# ----------------------------------------------------------------------------
# frequent rule sets (Algorithm 1) with anti-monotone pruning
# ----------------------------------------------------------------------------
@dataclass
class FrequentRuleSets:
    """Result of :func:`frequent_rule_sets`.

    Parameters
    ----------
    rule_sets : list of RuleSet
        Frequent rule sets, level by level (1 rule, then 2, ...).
    counts : ndarray of int64
        Number of data rows satisfying each rule set.
    n_rows : int
        Size of the data the support is measured on.
    theta : float
        The support threshold used.
    sensitive : list of str
        The sensitive features, in mining order.
    rules : dict
        ``feature -> list of all single rules`` (frequent or not).
    bits : ndarray of uint64, shape (len(rule_sets), ceil(n_rows/64))
        Packed membership of every data row in every frequent rule set.
    n_candidates : int
        Number of candidate rule sets whose support was counted.
    n_cross_product : int
        Size of the full cross product (what Algorithm 1 line 7 materialises).
    elapsed : float, default 0.0
        Mining time in seconds.

    Examples
    --------
    >>> from fairlens.testsgd import frequent_rule_sets
    >>> from fairlens.datasets import load_german_credit
    >>> fr = frequent_rule_sets(load_german_credit(), ["sex", "age"], theta=0.2)
    >>> len(fr), fr.n_rows, str(fr.rule_sets[0]), int(fr.counts[0])
    (75, 1000, 'sex=female', 310)
    """

    rule_sets: list
    counts: np.ndarray
    n_rows: int
    theta: float
    sensitive: list
    rules: dict
    bits: np.ndarray
    n_candidates: int
    n_cross_product: int
    elapsed: float = 0.0

    @property
    def support(self) -> np.ndarray:
        return self.counts / float(self.n_rows)

    def __len__(self) -> int:
        return len(self.rule_sets)

    def masks(self, idx=None) -> np.ndarray:
        """Membership of the data rows in (a subset of) the rule sets.

        Parameters
        ----------
        idx : sequence of int, optional
            Which rule sets (default: all).

        Returns
        -------
        ndarray of bool, shape (m, n_rows)
            Row ``i`` is the membership of the data rows in rule set ``idx[i]``.

        Examples
        --------
        >>> from fairlens.testsgd import frequent_rule_sets
        >>> from fairlens.datasets import load_german_credit
        >>> fr = frequent_rule_sets(load_german_credit(), ["sex"], theta=0.2)
        >>> m = fr.masks([0, 1])
        >>> m.shape, m.sum(axis=1).tolist() == fr.counts[:2].tolist()
        ((2, 1000), True)
        """
        b = self.bits if idx is None else self.bits[np.asarray(idx, dtype=np.int64)]
        return _kernels.unpack_bits(np.ascontiguousarray(b), self.n_rows).astype(bool)

    def plot(self, ax=None):
        """Support of the frequent rule sets, by number of rules.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (a new figure if None).

        Returns
        -------
        matplotlib Axes
            The axes drawn on.

        Examples
        --------
        >>> from fairlens.testsgd import frequent_rule_sets
        >>> from fairlens.datasets import load_german_credit
        >>> fr = frequent_rule_sets(load_german_credit(), ["sex", "age"], theta=0.2)
        >>> ax = fr.plot()
        """
        return plot_supports(self, ax=ax)

    def to_frame(self) -> pd.DataFrame:
        """One row per frequent rule set: the rule set, its size and support.

        Returns
        -------
        pandas.DataFrame
            Columns ``rule_set``, ``n_rules``, ``support`` and ``count``.

        Examples
        --------
        >>> from fairlens.testsgd import frequent_rule_sets
        >>> from fairlens.datasets import load_german_credit
        >>> fr = frequent_rule_sets(load_german_credit(), ["sex"], theta=0.2)
        >>> fr.to_frame()
             rule_set  n_rules  support  count
        0  sex=female        1     0.31    310
        1    sex=male        1     0.69    690
        """
        return pd.DataFrame({
            "rule_set": [str(r) for r in self.rule_sets],
            "n_rules": [len(r) for r in self.rule_sets],
            "support": self.support,
            "count": self.counts,
        })


def _resolve_bins(bins, feature):
    if bins is None:
        return None, None
    if isinstance(bins, Mapping):
        v = bins.get(feature)
    else:
        v = bins
    if v is None:
        return None, None
    if isinstance(v, str):
        raise TypeError(f"bins[{feature!r}] must be a bin count or a list of edges; got {v!r}")
    if np.isscalar(v):
        return check_int(f"bins[{feature!r}]", v, min=2), None
    return None, list(v)


def _check_edges(feature, edges):
    try:
        e = np.asarray(edges, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"bins for {feature!r} must be a bin count or a list of numeric "
                        f"edges; got {edges!r}") from None
    if e.ndim != 1 or e.size < 3 or np.any(~np.isfinite(e)) or np.any(np.diff(e) <= 0):
        raise ValueError(f"bins for {feature!r} must be >= 3 finite increasing edges, got {edges!r}")
    return e


def check_bins(bins, feature_names):
    """Validate ``bins`` (None, a count, a list of edges, or ``{feature: count or edges}``)."""
    if bins is None:
        return None
    if isinstance(bins, str):
        raise TypeError(f"bins must be None, a bin count, a list of edges or a dict "
                        f"{{feature: count or edges}}; got {bins!r}")
    if isinstance(bins, Mapping):
        unknown = [k for k in bins if k not in feature_names]
        if unknown:
            raise ValueError(f"bins names unknown feature(s) {unknown}; choose from {list(feature_names)}")
        for k in bins:
            _, edges = _resolve_bins(bins, k)
            if edges is not None:
                _check_edges(k, edges)
    else:
        _, edges = _resolve_bins(bins, None)
        if edges is not None:
            _check_edges("every feature", edges)
    return bins


def _check_theta(theta):
    return check_real("theta", theta, min=0.0, max=1.0, include_min=False)


def build_rules(table: TableView, sensitive: Sequence[str], *, n_bins: int = N_BINS_DEFAULT,
                bins=None, max_values: int = MAX_CATEGORY_VALUES, rule_form: str = "interval",
                binning: str = "equal_width") -> dict:
    """``feature -> single rules`` for every sensitive feature (Algorithm 1 lines 1-5)."""
    if isinstance(sensitive, str):
        sensitive = [sensitive]
    sensitive = list(sensitive)
    if not sensitive:
        raise ValueError("sensitive must name at least one feature")
    bad = [f for f in sensitive if not isinstance(f, str)]
    if bad:
        raise TypeError(f"sensitive must list feature names (str); got {bad[0]!r}")
    if len(set(sensitive)) != len(sensitive):
        raise ValueError(f"sensitive features must be distinct, got {sensitive}")
    for f in sensitive:
        table.index_of(f)
    check_bins(bins, table.feature_names)
    max_values = check_int("max_values", max_values, min=2)
    out = {}
    for f in sensitive:
        nb, edges = _resolve_bins(bins, f)
        out[f] = single_rules(table, f, n_bins=nb or n_bins, edges=edges, max_values=max_values,
                              rule_form=rule_form, binning=binning)
    return out


def _min_count(theta: float, n: int) -> int:
    """Smallest row count c with c / n >= theta (with a float tolerance)."""
    c = int(np.ceil(theta * n - 1e-9))
    return max(c, 1)


@strict_keywords(renamed={"sensitive": "protected", "dataset": "data"})
@validated({
    "data": "no_validation", "protected": "no_validation",
    "theta": [Interval(numbers.Real, 0, 1, closed="right")],
    "max_size": [Interval(numbers.Integral, 1, None), None],
    "max_rule_sets": [Interval(numbers.Integral, 1, None)], "n_bins": [Interval(numbers.Integral, 2, None)],
    "bins": "no_validation", "max_values": [Interval(numbers.Integral, 2, None)],
    "rule_form": [Options("interval", "threshold")], "binning": [Options(*BINNINGS)],
})
def frequent_rule_sets(data, protected: Sequence[str], theta: float = 0.05, *,
                       n_bins: int = N_BINS_DEFAULT, bins=None, max_size: int | None = None,
                       max_values: int = MAX_CATEGORY_VALUES, rule_form: str = "interval",
                       max_rule_sets: int = 2_000_000, binning: str = "equal_width") -> FrequentRuleSets:
    """Frequent rule sets of Algorithm 1, without materialising the cross product.

    Algorithm 1 enumerates every combination of (rule or nothing) per sensitive
    feature and keeps those with ``support >= theta`` (Eq. 2). Support is
    anti-monotone (adding a rule can only shrink the group), so we grow rule
    sets level by level and only extend FREQUENT ones (Eclat-style prefix
    extension in the fixed order of ``sensitive``); supports are counted by
    AND-ing packed 64-bit row bitsets (:func:`_kernels.and_popcount`). The
    result equals Algorithm 1's (tested against the brute-force twin
    :func:`frequent_rule_sets_bruteforce`).

    Parameters
    ----------
    data : Dataset or TableView
        The data ``D`` (typically the training set).
    protected : list of str
        Protected (sensitive) feature names ``S``.
    theta : float in (0, 1]
        Support threshold (paper default 5%).
    n_bins : int
        ``K`` equal-width bins for integer/continuous features (paper: 10).
    bins : int, sequence or dict, optional
        Per-feature override: a bin count or explicit edges, e.g.
        ``{"age": [0, 10, ..., 100]}``.
    max_size : int >= 1, optional
        Largest number of rules in a rule set; ``None`` (default) means no limit (all
        sensitive features). 0 or a negative value is an error.
    max_values : int >= 2, default 12
        Largest number of values of a categorical protected feature.
    rule_form : {"interval", "threshold"}
        Rules of binned features: every range of adjacent bins, or one-sided
        thresholds only (see :func:`single_rules`).
    binning : {"equal_width", "round"}
        ``"equal_width"`` (default): the paper's ``K = n_bins`` equal-width bins over the
        feature's domain (section 4.1). ``"round"``: about ``K`` bins whose edges are
        round numbers (widths 1, 2, 2.5 or 5 times a power of ten, see
        :func:`round_edges`) covering the domain and the data, for readable rules such
        as ``40<=age<60``.
    max_rule_sets : int
        Safety cap: if more frequent rule sets than this exist, a ValueError
        suggests a larger ``theta``, ``max_size`` or ``rule_form="threshold"``
        (nothing is allocated beyond the cap).

    Returns
    -------
    FrequentRuleSets

    Raises
    ------
    TypeError, ValueError
        For a bad parameter (named in the message) or more than ``max_rule_sets`` rule sets.

    Examples
    --------
    >>> from fairlens.testsgd import frequent_rule_sets
    >>> from fairlens.datasets import load_german_credit
    >>> fr = frequent_rule_sets(load_german_credit(), ["sex", "age"], theta=0.2)
    >>> len(fr), str(fr.rule_sets[0]), round(float(fr.support[0]), 2)
    (75, 'sex=female', 0.31)
    >>> fr.n_candidates < fr.n_cross_product
    True
    """
    dataset, sensitive = data, protected
    import time

    t0 = time.perf_counter()
    theta = _check_theta(theta)
    max_size = check_int("max_size", max_size, min=1, allow_none=True)
    max_rule_sets = check_int("max_rule_sets", max_rule_sets, min=1)
    table = as_table(dataset)
    rules = build_rules(table, sensitive, n_bins=n_bins, bins=bins, max_values=max_values,
                        rule_form=rule_form, binning=binning)
    feats = list(rules)
    n = table.X.shape[0]
    if n == 0:
        raise ValueError("dataset has no rows")
    need = _min_count(float(theta), n)
    max_size = len(feats) if max_size is None else max_size

    flat_rules, rule_feat = [], []
    for fi, f in enumerate(feats):
        flat_rules.extend(rules[f])
        rule_feat.extend([fi] * len(rules[f]))
    rule_feat = np.asarray(rule_feat, dtype=np.int64)
    n_cross = int(np.prod([len(rules[f]) + 1 for f in feats]) - 1)
    if not flat_rules:
        return FrequentRuleSets([], np.zeros(0, np.int64), n, float(theta), feats, rules,
                                np.zeros((0, (n + 63) // 64), np.uint64), 0, n_cross,
                                time.perf_counter() - t0)

    masks = np.stack([r.mask(table.X) for r in flat_rules]).astype(np.uint8)
    rule_bits = _kernels.pack_masks(masks)
    del masks
    single_counts = rule_bits_counts(rule_bits)
    n_candidates = len(flat_rules)

    keep = np.flatnonzero(single_counts >= need)
    level_members = [np.array([[q] for q in keep], dtype=np.int64).reshape(-1, 1)]
    level_bits = [rule_bits[keep]]
    level_counts = [single_counts[keep]]
    level_last = [rule_feat[keep]]
    freq_rules = keep  # frequent single rules, sorted by feature
    k = 1
    while k < max_size and level_members[-1].shape[0] > 0:
        parents_last = level_last[-1]
        # candidate = frequent parent + frequent single rule of a LATER feature
        p_idx, q_idx = [], []
        for fi in range(len(feats)):
            qs = freq_rules[rule_feat[freq_rules] == fi]
            ps = np.flatnonzero(parents_last < fi)
            if qs.size == 0 or ps.size == 0:
                continue
            p_idx.append(np.repeat(ps, qs.size))
            q_idx.append(np.tile(qs, ps.size))
        if not p_idx:
            break
        p_idx = np.concatenate(p_idx).astype(np.int64)
        q_idx = np.concatenate(q_idx).astype(np.int64)
        n_candidates += p_idx.size
        counts = _kernels.and_popcount(level_bits[-1], rule_bits, p_idx, q_idx,
                                       np.zeros((0, rule_bits.shape[1]), np.uint64))
        ok = np.flatnonzero(counts >= need)
        total = sum(m.shape[0] for m in level_members) + ok.size
        if total > max_rule_sets:
            raise ValueError(
                f"more than max_rule_sets={max_rule_sets} frequent rule sets ({total} up to {k + 1} rules); "
                "raise theta, limit max_size (e.g. 2), use rule_form='threshold' or fewer sensitive features")
        p_ok, q_ok = p_idx[ok], q_idx[ok]
        new_bits = np.zeros((ok.size, rule_bits.shape[1]), np.uint64)
        if ok.size:
            _kernels.and_popcount(level_bits[-1], rule_bits, p_ok, q_ok, new_bits)
        members = np.concatenate([level_members[-1][p_ok], q_ok[:, None]], axis=1)
        level_members.append(members)
        level_bits.append(new_bits)
        level_counts.append(counts[ok])
        level_last.append(rule_feat[q_ok])
        k += 1

    rule_sets = [RuleSet(tuple(flat_rules[q] for q in row)) for mem in level_members for row in mem]
    counts = np.concatenate(level_counts).astype(np.int64)
    bits = np.concatenate(level_bits, axis=0) if level_bits else np.zeros((0, rule_bits.shape[1]), np.uint64)
    return FrequentRuleSets(rule_sets, counts, n, float(theta), feats, rules, bits,
                            int(n_candidates), n_cross, time.perf_counter() - t0)


def rule_bits_counts(bits: np.ndarray) -> np.ndarray:
    """Popcount of each row of a packed bitset matrix."""
    members = np.arange(bits.shape[0], dtype=np.int64)[:, None]
    return _kernels.and_popcount_chain(bits, members)


@strict_keywords(renamed={"sensitive": "protected", "dataset": "data"})
@validated({
    "data": "no_validation", "protected": "no_validation",
    "theta": [Interval(numbers.Real, 0, 1, closed="right")],
    "max_size": [Interval(numbers.Integral, 1, None), None], "n_bins": [Interval(numbers.Integral, 2, None)],
    "bins": "no_validation", "max_values": [Interval(numbers.Integral, 2, None)],
    "rule_form": [Options("interval", "threshold")], "binning": [Options(*BINNINGS)],
})
def frequent_rule_sets_bruteforce(data, protected, theta=0.05, *, n_bins=N_BINS_DEFAULT,
                                  bins=None, max_values=MAX_CATEGORY_VALUES, max_size=None,
                                  rule_form="interval", binning="equal_width"):
    """Literal Algorithm 1: materialise the full cross product, keep support >= theta.

    Slow reference (pure NumPy boolean masks); only for small rule spaces. It
    takes the arguments of :func:`frequent_rule_sets` (except ``max_rule_sets``).

    Parameters
    ----------
    data : Dataset or TableView
        The data ``D``.
    protected : list of str
        Protected (sensitive) feature names ``S``.
    theta : float in (0, 1], default 0.05
        Support threshold.
    n_bins : int, default 10
        ``K`` bins of integer/continuous features.
    bins : int, sequence or dict, optional
        Per-feature bin count or edges.
    max_values : int >= 2, default 12
        Largest number of values of a categorical protected feature.
    max_size : int >= 1, optional
        Largest number of rules in a rule set (None: no limit).
    rule_form : {"interval", "threshold"}
        Rules of binned features (see :func:`single_rules`).
    binning : {"equal_width", "round"}
        Bin edges of binned features (see :func:`frequent_rule_sets`).

    Returns
    -------
    dict
        ``str(rule_set) -> count`` of the data rows in every frequent rule set.

    Raises
    ------
    TypeError, ValueError
        For a bad parameter (named in the message).

    Examples
    --------
    >>> from fairlens.testsgd import frequent_rule_sets_bruteforce, frequent_rule_sets
    >>> from fairlens.datasets import load_german_credit
    >>> data = load_german_credit()
    >>> slow = frequent_rule_sets_bruteforce(data, ["sex", "age"], theta=0.2)
    >>> fast = frequent_rule_sets(data, ["sex", "age"], theta=0.2)
    >>> slow == {str(r): int(c) for r, c in zip(fast.rule_sets, fast.counts)}
    True
    """
    dataset, sensitive = data, protected
    _check_theta(theta)
    max_size = check_int("max_size", max_size, min=1, allow_none=True)
    table = as_table(dataset)
    rules = build_rules(table, sensitive, n_bins=n_bins, bins=bins, max_values=max_values,
                        rule_form=rule_form, binning=binning)
    n = table.X.shape[0]
    masks = {id(r): r.mask(table.X) for f in rules for r in rules[f]}
    out = {}
    for combo in itertools.product(*[[None] + rules[f] for f in rules]):
        chosen = [r for r in combo if r is not None]
        if not chosen or (max_size is not None and len(chosen) > max_size):
            continue
        m = np.ones(n, dtype=bool)
        for r in chosen:
            m &= masks[id(r)]
        c = int(m.sum())
        if c / n >= theta - 1e-12:  # Eq. 2 literally (independent of _min_count)
            out[str(RuleSet(tuple(chosen)))] = c
    return out
