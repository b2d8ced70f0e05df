"""THEMIS group discrimination baseline (Galhotra et al. 2017), for Table 8."""
from __future__ import annotations

import itertools
import numbers
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._base import Interval, Result, resolve_random_state, strict_keywords, validated
from .._validation import check_int, check_probability
from ._rules import N_BINS_DEFAULT, RuleSet, as_table, build_rules
from ._score import make_scorer
from .plots import plot_themis

__all__ = ["ThemisResult", "themis_group_discrimination"]


@dataclass
class ThemisResult(Result):
    """THEMIS group discrimination: max minus min favourable rate over subgroups.

    Parameters
    ----------
    score : float
        Largest minus smallest favourable rate over the subgroups.
    max_group, min_group : str
        Subgroups with the largest / smallest favourable rate.
    rates : pandas.DataFrame
        One row per subgroup: ``subgroup, rate, n``.
    n_subgroups, n_samples : int
        Subgroups tested and random inputs per subgroup.
    elapsed : float
        Wall time in seconds.
    params : dict
        The parameters of the run.
    random_state : int or None
        The integer seed actually used (None: deterministic).
    stopped : bool
        True when the run was cut short by ``stop``.

    Examples
    --------
    >>> from fairlens.datasets import load_german_credit
    >>> from fairlens.testsgd import themis_group_discrimination
    >>> data = load_german_credit()
    >>> k, a = data.index_of("duration"), data.index_of("age")
    >>> model = lambda X: ((X[:, k] < 24) & (X[:, a] >= 30)).astype(float)
    >>> res = themis_group_discrimination(model, data, ["sex", "age"], n_bins=3,
    ...                                   n_samples=200, random_state=0)
    >>> round(res.score, 3), res.n_subgroups, res.max_group
    (0.2, 6, 'sex=male, age>=56.3333')
    """

    score: float
    max_group: str
    min_group: str
    rates: pd.DataFrame
    n_subgroups: int
    n_samples: int
    elapsed: float = field()
    params: dict = field(default_factory=dict)
    random_state: int | None = None
    stopped: bool = False

    title = "THEMIS group discrimination"

    def to_frame(self) -> pd.DataFrame:
        """One row per subgroup (``subgroup, rate, n``), largest rate first.

        Returns
        -------
        pandas.DataFrame
            Columns ``subgroup``, ``rate`` and ``n``.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import themis_group_discrimination
        >>> data = load_german_credit()
        >>> k, a = data.index_of("duration"), data.index_of("age")
        >>> model = lambda X: ((X[:, k] < 24) & (X[:, a] >= 30)).astype(float)
        >>> res = themis_group_discrimination(model, data, ["sex", "age"], n_bins=3,
        ...                                   n_samples=200, random_state=0)
        >>> res.to_frame().head(2)
                                   subgroup   rate    n
        0            sex=male, age>=56.3333  0.310  200
        1  sex=female, 37.6667<=age<56.3333  0.305  200
        """
        return self.rates.sort_values("rate", ascending=False).reset_index(drop=True)

    def summary(self) -> pd.DataFrame:
        """One row: the score, the subgroups with the largest and smallest rate, sizes, time.

        Returns
        -------
        pandas.DataFrame
            One row.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import themis_group_discrimination
        >>> data = load_german_credit()
        >>> k, a = data.index_of("duration"), data.index_of("age")
        >>> model = lambda X: ((X[:, k] < 24) & (X[:, a] >= 30)).astype(float)
        >>> res = themis_group_discrimination(model, data, ["sex", "age"], n_bins=3,
        ...                                   n_samples=200, random_state=0)
        >>> res.summary()[["score", "min_group", "n_subgroups"]]
           score              min_group  n_subgroups
        0    0.2  sex=male, age<37.6667            6
        """
        return pd.DataFrame([{
            "score": self.score, "max_group": self.max_group, "min_group": self.min_group,
            "n_subgroups": int(self.n_subgroups), "n_samples": int(self.n_samples), "time_s": self.elapsed,
        }])

    def plot(self, ax=None, *, k: int = 10):
        """Favourable rates of the ``k`` highest and lowest subgroups; returns the axes.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (a new figure if None).
        k : int, default 10
            Number of rows shown.

        Returns
        -------
        matplotlib Axes
            The axes drawn on.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import themis_group_discrimination
        >>> data = load_german_credit()
        >>> k, a = data.index_of("duration"), data.index_of("age")
        >>> model = lambda X: ((X[:, k] < 24) & (X[:, a] >= 30)).astype(float)
        >>> res = themis_group_discrimination(model, data, ["sex", "age"], n_bins=3,
        ...                                   n_samples=200, random_state=0)
        >>> ax = res.plot(k=3)
        """
        return plot_themis(self, ax=ax, k=k)


def _atoms(table, feature, n_bins, bins):
    """The values (categorical) or single bins (binned) of one sensitive feature, as rules."""
    rules = build_rules(table, [feature], n_bins=n_bins, bins=bins)[feature]
    if not rules:
        return []
    if rules[0].kind == "categorical":
        return [r for r in rules if len(r.values) == 1]
    return [r for r in rules if r.bin_lo == r.bin_hi]


@strict_keywords(renamed={"sensitive": "protected", "dataset": "data", "favourable_class": "favourable"})
@validated({
    "model": "no_validation", "data": "no_validation", "protected": "no_validation",
    "n_samples": [Interval(numbers.Integral, 1, None)], "n_bins": [Interval(numbers.Integral, 2, None)],
    "bins": "no_validation", "threshold": [Interval(numbers.Real, 0, 1)],
    "max_subgroups": [Interval(numbers.Integral, 1, None)], "batch_rows": [Interval(numbers.Integral, 1, None)],
    "random_state": ["random_state"], "favourable": "no_validation",
})
def themis_group_discrimination(model, data, protected, *, n_samples: int = 1000, n_bins: int = N_BINS_DEFAULT,
                                bins=None, threshold: float = 0.5, max_subgroups: int = 100_000,
                                batch_rows: int = 65_536, random_state=None, favourable=1) -> ThemisResult:
    """THEMIS's group discrimination score over the subgroups of ``sensitive``.

    Every combination of one value (categorical) or one equal-width bin
    (binned features, the same bins as TestSGD) per sensitive feature is a
    subgroup. For each, ``n_samples`` random inputs are generated uniformly
    over the input domain (``bounds``; integer/categorical features get
    integers) with the sensitive features fixed inside the subgroup (a binned
    feature uniformly inside its bin, clipped to its domain); the score is
    the largest minus the smallest favourable-prediction rate (Galhotra et al.,
    "Fairness testing", 2017). Choice: a fixed ``n_samples`` per subgroup
    instead of THEMIS's adaptive confidence-driven sampling. Subgroups whose
    bin lies outside the domain are skipped. All rows are scored in batched
    model calls.

    Parameters
    ----------
    model : estimator, pipeline or callable
        Adapted with :func:`fairlens.models.as_scorer`.
    data : fairlens Dataset
        Gives the domain (``bounds``), the feature types and the categories.
    protected : str or list of str
        Protected features whose value/bin combinations are the subgroups.
    n_samples : int >= 1, default 1000
        Random inputs per subgroup.
    n_bins : int >= 2, default 10
        Equal-width bins of binned features.
    bins : int, list of edges or dict, optional
        Per-feature bins (as :func:`frequent_rule_sets`).
    threshold : float in [0, 1], default 0.5
        A score ``>= threshold`` is favourable.
    max_subgroups : int >= 1, default 100000
        Refuse more subgroups than this.
    batch_rows : int >= 1, default 65536
        Rows per model call.
    random_state : None, int, numpy Generator or RandomState
        Resolved once by :func:`fairlens._base.resolve_random_state` (recorded in the result).
    favourable : default 1
        The model class whose rate is compared.

    Returns
    -------
    ThemisResult
        The score, the extreme subgroups and the rate of every subgroup.

    Raises
    ------
    ValueError
        If there are more than ``max_subgroups`` subgroups (the paper reports a
        24-hour timeout on Crime), or for a bad parameter (named in the message).

    Examples
    --------
    >>> from fairlens.datasets import load_german_credit
    >>> from fairlens.testsgd import themis_group_discrimination
    >>> data = load_german_credit()
    >>> k, a = data.index_of("duration"), data.index_of("age")
    >>> model = lambda X: ((X[:, k] < 24) & (X[:, a] >= 30)).astype(float)
    >>> res = themis_group_discrimination(model, data, ["sex", "age"], n_bins=3,
    ...                                   n_samples=200, random_state=0)
    >>> res.max_group, res.min_group, round(res.score, 3)
    ('sex=male, age>=56.3333', 'sex=male, age<37.6667', 0.2)
    """

    t0 = time.perf_counter()
    n_samples = check_int("n_samples", n_samples, min=1)
    n_bins = check_int("n_bins", n_bins, min=2)
    threshold = check_probability("threshold", threshold)
    max_subgroups = check_int("max_subgroups", max_subgroups, min=1)
    batch_rows = check_int("batch_rows", batch_rows, min=1)
    table = as_table(data)
    sensitive = [protected] if isinstance(protected, str) else list(protected)
    scorer = make_scorer(model, table, favourable_class=favourable)
    seed = resolve_random_state(random_state)
    rng = np.random.default_rng(seed)
    atoms = [_atoms(table, f, n_bins, bins) for f in sensitive]
    lo, hi = table.bounds[:, 0], table.bounds[:, 1]
    # drop bins outside the domain
    kept = []
    for f, at in zip(sensitive, atoms):
        j = table.index_of(f)
        keep = []
        for r in at:
            if r.kind == "range":
                a = max(r.edges[r.bin_lo], lo[j])
                b = min(r.edges[r.bin_hi + 1], hi[j])
                if (r.bin_hi == len(r.edges) - 2 and b >= a) or b > a:
                    keep.append(r)
            else:
                keep.append(r)
        kept.append(keep)
    n_sub = int(np.prod([len(a) for a in kept]))
    if n_sub > max_subgroups:
        raise ValueError(f"{n_sub} THEMIS subgroups exceed max_subgroups={max_subgroups}; use fewer "
                         "sensitive features or fewer bins")
    integer = np.array([t != "continuous" for t in table.feature_types])
    d = table.X.shape[1]
    combos = list(itertools.product(*kept))
    rates, names = np.empty(len(combos)), []
    per = max(1, int(batch_rows) // int(n_samples))
    for c0 in range(0, len(combos), per):
        block = combos[c0:c0 + per]
        R = rng.random((len(block) * n_samples, d))
        Xs = np.where(integer, np.floor(lo + R * (hi - lo + 1)), lo + R * (hi - lo))
        Xs = np.minimum(Xs, hi)
        for t, combo in enumerate(block):
            sl = slice(t * n_samples, (t + 1) * n_samples)
            for r in combo:
                j = r.index
                if r.kind == "categorical":
                    Xs[sl, j] = r.values[0]
                else:
                    a = max(r.edges[r.bin_lo], lo[j])
                    b = min(r.edges[r.bin_hi + 1], hi[j] + (1 if integer[j] else 0))
                    u = rng.random(n_samples)
                    v = np.floor(a + u * (np.ceil(b) - np.ceil(a))) if integer[j] else a + u * (b - a)
                    if integer[j]:
                        v = np.clip(v, np.ceil(a), max(np.ceil(a), np.ceil(b) - 1))
                    Xs[sl, j] = np.clip(v, lo[j], hi[j])
        lab = np.asarray(scorer(Xs), dtype=np.float64) >= threshold
        rates[c0:c0 + len(block)] = lab.reshape(len(block), n_samples).mean(axis=1)
        names += [str(RuleSet(tuple(c))) for c in block]
    df = pd.DataFrame({"subgroup": names, "rate": rates, "n": n_samples})
    i_max, i_min = int(np.argmax(rates)), int(np.argmin(rates))
    params = dict(protected=sensitive, n_samples=n_samples, n_bins=n_bins, threshold=threshold,
                  favourable=favourable)
    return ThemisResult(float(rates[i_max] - rates[i_min]), names[i_max], names[i_min], df, len(combos),
                        int(n_samples), time.perf_counter() - t0, params=params, random_state=seed)
