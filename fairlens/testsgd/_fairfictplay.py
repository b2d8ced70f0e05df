"""FairFictPlay's subgroup auditor (Kearns, Neel, Roth, Wu 2018), the baseline of TestSGD's Table 8.

Kearns et al., "Preventing Fairness Gerrymandering: Auditing and Learning for Subgroup
Fairness" (ICML 2018), audit a classifier for *subgroup* fairness: over a class G of groups
defined on the protected attributes ``x'`` (here: linear threshold functions), find the group
``g`` maximising the weighted disparity ``gamma(g) = alpha(g) * beta(g)`` with

* statistical parity (their Definition 2.1): ``alpha(g) = P(g(x') = 1)`` and
  ``beta(g) = |P(D(x) = 1) - P(D(x) = 1 | g(x') = 1)|``;
* false-positive rates (Definition 2.3): ``alpha(g) = P(g(x') = 1, y = 0)`` and
  ``beta(g) = |P(D(x) = 1 | y = 0) - P(D(x) = 1 | g(x') = 1, y = 0)|`` (false negatives likewise on
  ``y = 1`` with ``1 - D``).

Auditing is reduced to cost-sensitive classification (CSC) of the audited rows: labelling row
``i`` "in g" costs ``c1_i = (D_i - baseline) / n`` (or its negative, for the other direction of the
disparity) and "not in g" costs ``c0_i = 0``; the CSC oracle of their experiments (and of the
authors' ``gerryfair`` package, shipped in AIF360 as ``aif360.algorithms.inprocessing.gerryfair``)
fits one least-squares linear regression per cost over ``x'`` and puts ``x`` in ``g`` when the
predicted ``c1`` is below the predicted ``c0`` (= 0). Both directions are tried and the group
with the larger ``gamma`` is reported. FairFictPlay (their learning algorithm) calls this auditor
at every round of fictitious play; TestSGD's Table 8 uses it to *find* the subgroup.

This module implements the auditor itself (no aif360 needed); the tests cross-check it against
AIF360's ``Auditor`` (same members and ``gamma``). One difference on purpose: AIF360 computes the
rate of the "negative direction" group over the complement of the positive group (a slip in its
``get_group``); we use that group's own members (the two agree unless a fitted cost is exactly 0).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from numbers import Real

import numpy as np
import pandas as pd

from .._base import Analysis, Interval, Options, Result, strict_keywords, validated
from .._validation import check_choice
from ._rules import as_table

__all__ = ["FairFictPlay", "SubgroupAudit", "audit_subgroups"]

METRICS = ("SP", "FP", "FN")


@dataclass
class SubgroupAudit(Result):
    """The most violated subgroup found by the auditor.

    Parameters
    ----------
    members : ndarray of bool, shape (n,)
        ``g(x')`` for every row of the audited data.
    alpha : float
        Size of the group as Kearns et al. define it: share of ALL ``n`` rows that are in ``g``
        and in the audited subset (all rows for "SP", ``y = 0`` for "FP", ``y = 1`` for "FN").
    beta : float
        ``|rate in g - baseline|`` (the unweighted disparity).
    gamma : float
        ``alpha * beta``: the fairness violation (weighted disparity).
    direction : int
        +1 when the group's rate is above the baseline, -1 below.
    rate_in, rate_out, baseline : float
        The audited rate (favourable decisions for "SP", false positives / negatives) in ``g``,
        in the rest of the audited subset, and over the whole subset.
    score : float
        ``|rate_in - rate_out|``: TestSGD's group fairness score (Definition 4.1) of the found
        group on the data, the number comparable with TestSGD's scores.
    coef : pandas.Series
        Weights of the linear threshold function over the encoded protected attributes; the
        group is ``{x : coef . x' + intercept < 0}``.
    intercept : float
        Intercept of the linear threshold function.
    metric : str
        The audited rate: "SP", "FP" or "FN".
    protected : list of str
        The protected features ``x'`` is built from.
    params : dict
        ``model_input``, threshold, soft, favourable, n rows.
    elapsed : float
        Wall seconds.
    stopped : bool
        True when the run was cut short by ``stop``.

    Examples
    --------
    >>> from fairlens.datasets import load_german_credit
    >>> from fairlens.testsgd import FairFictPlay
    >>> data = load_german_credit()
    >>> k, a = data.index_of("duration"), data.index_of("age")
    >>> model = lambda X: ((X[:, k] < 24) & (X[:, a] >= 30)).astype(float)
    >>> auditor = FairFictPlay(model, data, protected=["sex", "age"])
    >>> res = auditor.run()
    >>> round(res.gamma, 4), res.alpha, round(res.beta, 3), res.direction
    (0.1005, 0.432, 0.233, 1)
    >>> round(res.rate_in, 3), round(res.rate_out, 3), round(res.score, 3)
    (0.6, 0.19, 0.409)
    """

    members: np.ndarray
    alpha: float
    beta: float
    gamma: float
    direction: int
    rate_in: float
    rate_out: float
    baseline: float
    score: float
    coef: pd.Series
    intercept: float
    metric: str
    protected: list
    params: dict = field(default_factory=dict)
    elapsed: float = float("nan")
    random_state = None  # deterministic (least squares)
    stopped: bool = False

    title = "FairFictPlay subgroup audit"

    def summary(self) -> pd.DataFrame:
        """One row: metric, alpha, beta, gamma, rates, score and the subgroup (as :meth:`to_frame`).

        Returns
        -------
        pandas.DataFrame
            One row.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import FairFictPlay
        >>> data = load_german_credit()
        >>> k, a = data.index_of("duration"), data.index_of("age")
        >>> model = lambda X: ((X[:, k] < 24) & (X[:, a] >= 30)).astype(float)
        >>> auditor = FairFictPlay(model, data, protected=["sex", "age"])
        >>> res = auditor.run()
        >>> res.summary()[["metric", "alpha", "direction"]]
          metric  alpha  direction
        0     SP  0.432          1
        """
        return self.to_frame()

    @property
    def size(self) -> float:
        """Share of the audited rows (all rows for "SP") that are in the group."""
        return float(self.members.mean()) if self.members.size else float("nan")

    def describe(self, digits: int = 3) -> str:
        """The linear threshold function as text, ``w1*x1 + w2*x2 + b < 0`` (largest weights first).

        Parameters
        ----------
        digits : int, default 3
            Significant digits of the weights.

        Returns
        -------
        str
            The weights over the encoded protected columns (in brackets) and the intercept.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import FairFictPlay
        >>> data = load_german_credit()
        >>> k, a = data.index_of("duration"), data.index_of("age")
        >>> model = lambda X: ((X[:, k] < 24) & (X[:, a] >= 30)).astype(float)
        >>> auditor = FairFictPlay(model, data, protected=["sex", "age"])
        >>> res = auditor.run()
        >>> res.describe(digits=2)
        '2.6e-05*[sex=female] - 2.6e-05*[sex=male] - 1.8e-05*[age] + 0.00067 < 0'
        """
        c = self.coef[self.coef.abs().sort_values(ascending=False).index]
        terms = " ".join(f"{'+' if v >= 0 else '-'} {abs(v):.{digits}g}*[{k}]" for k, v in c.items() if v != 0)
        b = self.intercept
        return f"{terms} {'+' if b >= 0 else '-'} {abs(b):.{digits}g} < 0".lstrip("+ ")

    def to_frame(self) -> pd.DataFrame:
        """One row: metric, alpha, beta, gamma, rates, TestSGD-style score, the function.

        Returns
        -------
        pandas.DataFrame
            One row; ``subgroup`` is :meth:`describe`.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import FairFictPlay
        >>> data = load_german_credit()
        >>> k, a = data.index_of("duration"), data.index_of("age")
        >>> model = lambda X: ((X[:, k] < 24) & (X[:, a] >= 30)).astype(float)
        >>> auditor = FairFictPlay(model, data, protected=["sex", "age"])
        >>> res = auditor.run()
        >>> list(res.to_frame().columns)  # doctest: +NORMALIZE_WHITESPACE
        ['metric', 'protected', 'alpha', 'size', 'beta', 'gamma', 'direction', 'rate_in',
         'rate_out', 'baseline', 'score', 'subgroup']
        """
        return pd.DataFrame([{
            "metric": self.metric, "protected": ", ".join(self.protected), "alpha": self.alpha,
            "size": self.size, "beta": self.beta, "gamma": self.gamma, "direction": self.direction,
            "rate_in": self.rate_in, "rate_out": self.rate_out, "baseline": self.baseline,
            "score": self.score, "subgroup": self.describe(),
        }])

    def coefficients(self) -> pd.DataFrame:
        """The weights of the linear threshold function, one row per encoded protected column.

        Returns
        -------
        pandas.DataFrame
            Columns ``column`` (one-hot ``feature=level`` or a numeric feature) and ``weight``.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import FairFictPlay
        >>> data = load_german_credit()
        >>> k, a = data.index_of("duration"), data.index_of("age")
        >>> model = lambda X: ((X[:, k] < 24) & (X[:, a] >= 30)).astype(float)
        >>> auditor = FairFictPlay(model, data, protected=["sex", "age"])
        >>> res = auditor.run()
        >>> res.coefficients()["column"].tolist()
        ['sex=female', 'sex=male', 'age']
        """
        return pd.DataFrame({"column": list(self.coef.index), "weight": self.coef.to_numpy()})

    def plot(self, ax=None):
        """Weights of the linear threshold function and the rates in/out of the group.

        ``ax`` is one axes (weights only) or a pair; returns the array of axes.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (a new figure if None).

        Returns
        -------
        ndarray of matplotlib Axes
            The axes drawn on.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import FairFictPlay
        >>> data = load_german_credit()
        >>> k, a = data.index_of("duration"), data.index_of("age")
        >>> model = lambda X: ((X[:, k] < 24) & (X[:, a] >= 30)).astype(float)
        >>> auditor = FairFictPlay(model, data, protected=["sex", "age"])
        >>> res = auditor.run()
        >>> axes = res.plot()
        >>> len(axes)
        2
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(1, 2, figsize=(8.4, 0.3 * max(6, len(self.coef)) + 1), layout="constrained",
                                 gridspec_kw={"width_ratios": [2, 1]})
        ax = np.atleast_1d(ax)
        c = self.coef
        y = np.arange(len(c))[::-1]
        ax[0].barh(y, c.to_numpy(), color=np.where(c.to_numpy() < 0, "#d95f02", "#1b9e77"))
        ax[0].set_yticks(y)
        ax[0].set_yticklabels(list(c.index))
        ax[0].axvline(0, color="0.3", lw=0.8)
        ax[0].set_xlabel("weight (group: weights . x' + intercept < 0)")
        ax[0].set_title(f"FairFictPlay auditor ({self.metric}): linear threshold function")
        if len(ax) > 1:
            ax[1].bar([0, 1, 2], [self.rate_in, self.rate_out, self.baseline],
                      color=["#d95f02", "#7570b3", "0.6"])
            ax[1].set_xticks([0, 1, 2])
            ax[1].set_xticklabels(["in g", "not g", "all"])
            ax[1].set_ylim(0, 1)
            ax[1].set_title(f"alpha {self.alpha:.3f}, beta {self.beta:.3f}\ngamma {self.gamma:.4f}, "
                            f"score {self.score:.3f}")
        return ax


def _encode_protected(table, protected):
    """``x'``: categorical protected features one-hot (every level), numeric ones as they are."""
    cols, names = [], []
    for f in protected:
        j = table.index_of(f)
        col = table.X[:, j]
        cats = table.categories.get(f)
        if table.feature_types[j] == "categorical" or cats:
            levels = sorted(float(c) for c in cats) if cats else sorted(np.unique(col).tolist())
            for v in levels:
                label = cats.get(int(v), v) if cats else f"{v:g}"
                cols.append((col == v).astype(np.float64))
                names.append(f"{f}={label}")
        else:
            cols.append(col.astype(np.float64))
            names.append(f)
    return np.column_stack(cols), names


def _linear_oracle(Xp, cost1):
    """CSC oracle of Kearns et al.: least-squares regressions of the two costs over ``x'``;
    ``x`` is labelled 1 (in the group) when the predicted cost of 1 is below that of 0.

    The cost of 0 is identically 0, so its regression predicts 0 and the rule is
    ``reg1(x') < 0``. Returns (members, coef, intercept)."""
    from sklearn.linear_model import LinearRegression

    reg = LinearRegression().fit(Xp, cost1)
    return reg.predict(Xp) < 0.0, np.asarray(reg.coef_, dtype=np.float64), float(reg.intercept_)


@validated({
    "decisions": "no_validation", "Xp": "no_validation", "y": "no_validation", "metric": [Options(*METRICS)],
})
def audit_subgroups(decisions, Xp, *, y=None, metric="SP"):
    """The auditor on arrays.

    Parameters
    ----------
    decisions : array of shape (n,)
        Decisions in [0, 1] (hard 0/1 or soft).
    Xp : array of shape (n, p)
        Protected attributes (numeric).
    y : array of shape (n,), optional
        0/1 labels (1 = favourable), needed for "FP"/"FN".
    metric : {"SP", "FP", "FN"}
        The audited rate.

    Returns
    -------
    dict
        ``members`` (over all n rows), ``alpha``, ``beta``, ``gamma``, ``direction``,
        ``rate_in``, ``rate_out``, ``baseline``, ``coef``, ``intercept`` (see
        :class:`SubgroupAudit`).

    Raises
    ------
    ValueError
        For arrays of the wrong shape, non-finite values, or no row to audit.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.testsgd import audit_subgroups
    >>> Xp = np.array([[0.0], [1.0], [0.0], [1.0], [0.0], [1.0]])  # one protected column
    >>> decisions = np.array([1.0, 0.0, 1.0, 0.0, 1.0, 1.0])
    >>> r = audit_subgroups(decisions, Xp)
    >>> r["members"].tolist(), r["alpha"], r["rate_in"], r["rate_out"], r["direction"]
    ([True, False, True, False, True, False], 0.5, 1.0, 0.3333333333333333, 1)
    >>> round(r["gamma"], 4)  # alpha * |rate_in - baseline| = 0.5 * (1 - 2/3)
    0.1667
    """
    metric = check_choice("metric", metric, METRICS)
    d = np.asarray(decisions, dtype=np.float64)
    Xp = np.asarray(Xp, dtype=np.float64)
    n = d.shape[0]
    if Xp.ndim != 2 or Xp.shape[0] != n:
        raise ValueError(f"Xp must have shape ({n}, p) (one row per decision); got {Xp.shape}")
    if not (np.all(np.isfinite(d)) and np.all(np.isfinite(Xp))):
        raise ValueError("decisions and protected attributes must be finite (no NaN/inf)")
    if metric == "SP":
        subset = np.ones(n, dtype=bool)
        rate = d
    else:
        if y is None:
            raise ValueError(f"metric={metric!r} needs the labels y (false positive/negative rates)")
        y = np.asarray(y)
        if y.shape != (n,):
            raise ValueError(f"y must have shape ({n},); got {y.shape}")
        subset = (y == 0) if metric == "FP" else (y == 1)
        rate = d if metric == "FP" else 1.0 - d
    if not subset.any():
        raise ValueError(f"no row to audit for metric={metric!r} (no y={0 if metric == 'FP' else 1})")
    Xs, p = Xp[subset], rate[subset]
    base = float(p.mean())
    best = None
    for sign in (1.0, -1.0):  # +1: members below the baseline; -1: above (gerryfair's func / func_neg)
        mem, coef, b = _linear_oracle(Xs, sign * (p - base) / n)
        r_in = float(p[mem].mean()) if mem.any() else 0.0
        alpha = float(mem.sum()) / n
        beta = abs(r_in - base)
        cand = dict(mem=mem, coef=coef, intercept=b, rate_in=r_in, alpha=alpha, beta=beta, gamma=alpha * beta,
                    direction=1 if r_in > base else -1)
        if best is None or cand["gamma"] > best["gamma"]:  # ties: the first direction, as gerryfair
            best = cand
    members = np.zeros(n, dtype=bool)
    members[np.flatnonzero(subset)[best["mem"]]] = True
    rest = p[~best["mem"]]
    best.update(members=members, baseline=base, rate_out=float(rest.mean()) if rest.size else float("nan"))
    del best["mem"]
    return best


class FairFictPlay(Analysis):
    """Subgroup-fairness auditor of FairFictPlay (Kearns et al. 2018), TestSGD's Table 8 baseline.

    Finds the linear threshold function ``g`` over the protected attributes that maximises the
    fairness violation ``gamma = alpha * beta`` of the model's decisions on a dataset (see the
    module docstring for the definitions and the cost-sensitive-classification oracle).

    Parameters
    ----------
    model : estimator, pipeline or callable
        Adapted once with :func:`fairlens.models.as_scorer` (the same protocol as TestSGD).
    data : fairlens Dataset
        The audited rows ``D`` (the paper's Table 8 audits the models TestSGD tests).
    protected : str or list of str, optional
        Protected attributes ``x'`` (default ``data.protected``). Categorical ones are one-hot
        encoded (every level), numeric ones used as they are.
    metric : {"SP", "FP", "FN"}, default "SP"
        Statistical parity of the favourable decision (what TestSGD's score measures), or
        false-positive / false-negative rates (need ``data.y``).
    threshold : float in [0, 1], default 0.5
        The decision is favourable when the model's score is ``>= threshold``.
    favourable : default 1
        The model class that is the favourable outcome: 1 for a model fitted on ``data.y``
        (1 = favourable), or the readable label (e.g. ``"good"``) of a model fitted on the
        readable target column; for "FP"/"FN" the labels ``y`` are matched the same way.
    soft : bool, default False
        Audit the scores themselves instead of the 0/1 decisions (gerryfair accepts both).

    Raises
    ------
    TypeError, ValueError
        For a bad parameter (named in the message), a protected feature that is not a
        column, or "FP"/"FN" on data without labels.  ``protected`` by position and the
        old names ``favourable_class=`` and ``dataset=`` are a ``TypeError`` naming the
        keyword to use.

    Examples
    --------
    >>> from fairlens.datasets import load_german_credit
    >>> from fairlens.testsgd import FairFictPlay
    >>> data = load_german_credit()
    >>> k, a = data.index_of("duration"), data.index_of("age")
    >>> model = lambda X: ((X[:, k] < 24) & (X[:, a] >= 30)).astype(float)
    >>> auditor = FairFictPlay(model, data, protected=["sex", "age"])
    >>> res = auditor.run()
    >>> res.metric, res.alpha, round(res.gamma, 4), round(res.score, 3)
    ('SP', 0.432, 0.1005, 0.409)
    """

    __test__ = False

    _parameter_constraints = {
        "protected": [str, "str-list", None],
        "metric": [Options(*METRICS)],
        "threshold": [Interval(Real, 0, 1)],
        "favourable": "no_validation",
        "soft": ["boolean"],
    }

    @strict_keywords(renamed={"favourable_class": "favourable", "dataset": "data"}, keyword_only=("protected",))
    def __init__(self, model, data, *, protected=None, metric: str = "SP",
                 threshold: float = 0.5, favourable=1, soft: bool = False):
        from ._score import make_scorer  # deferred: circle: testsgd._score imports this module

        self.model, self.data = model, data
        self.protected, self.metric, self.threshold = protected, metric, threshold
        self.favourable, self.soft = favourable, soft
        self._validate_params()
        self.table = as_table(data)
        prot = protected
        if prot is None:
            prot = list(getattr(data, "protected", []) or [])
        prot = [prot] if isinstance(prot, str) else list(prot)
        if not prot:
            raise ValueError("protected must list at least one feature (data.protected is empty)")
        for f in prot:
            self.table.index_of(f)
        if len(set(prot)) != len(prot):
            raise ValueError(f"protected features must be distinct; got {prot}")
        self._protected = prot
        self.threshold = float(threshold)
        if self.metric != "SP" and self.table.y is None:
            raise ValueError(f"metric={metric!r} needs labels: the data has no y")
        self.scorer = make_scorer(model, self.table, favourable_class=favourable)

    @property
    def dataset(self):
        """The data (old name of :attr:`data`)."""
        return self.data

    @property
    def favourable_class(self):
        """Old name of :attr:`favourable`."""
        return self.favourable

    def run(self, *, stop=None, progress=None, n_jobs=None) -> SubgroupAudit:
        """Run the auditor once on the model's decisions.

        Parameters
        ----------
        stop, progress, n_jobs
            The run arguments of every fairlens analysis (validated; the audit is one
            least-squares fit per direction, so they have nothing to act on).

        Returns
        -------
        SubgroupAudit
            The most violated subgroup.

        Raises
        ------
        ValueError
            If the labels cannot be matched with ``favourable`` ("FP"/"FN").

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import FairFictPlay
        >>> data = load_german_credit()
        >>> k, a = data.index_of("duration"), data.index_of("age")
        >>> model = lambda X: ((X[:, k] < 24) & (X[:, a] >= 30)).astype(float)
        >>> auditor = FairFictPlay(model, data, protected=["sex", "age"])
        >>> res = auditor.run()
        >>> res.alpha, res.direction, round(res.baseline, 3)
        (0.432, 1, 0.367)
        """
        self._start(stop, progress, n_jobs)
        t0 = time.perf_counter()
        X = self.table.X
        s = np.asarray(self.scorer(X), dtype=np.float64)
        d = s if self.soft else (s >= self.threshold).astype(np.float64)
        Xp, names = _encode_protected(self.table, self._protected)
        y = None
        if self.metric != "SP":
            from ._score import favourable_labels  # deferred: circle: testsgd._score imports this module

            y = favourable_labels(self.table, self.favourable).astype(np.int64)
        r = audit_subgroups(d, Xp, y=y, metric=self.metric)
        return SubgroupAudit(
            members=r["members"], alpha=r["alpha"], beta=r["beta"], gamma=r["gamma"], direction=r["direction"],
            rate_in=r["rate_in"], rate_out=r["rate_out"], baseline=r["baseline"],
            score=float(abs(r["rate_in"] - r["rate_out"])), coef=pd.Series(r["coef"], index=names),
            intercept=r["intercept"], metric=self.metric, protected=list(self._protected),
            params=dict(model_input=self.scorer.describe(), threshold=self.threshold, soft=self.soft,
                        favourable=self.favourable, n=int(X.shape[0])),
            elapsed=time.perf_counter() - t0)

    def audit(self) -> SubgroupAudit:
        """Same as :meth:`run` (the auditor's own name for it).

        Returns
        -------
        SubgroupAudit
            The most violated subgroup.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import FairFictPlay
        >>> data = load_german_credit()
        >>> k, a = data.index_of("duration"), data.index_of("age")
        >>> model = lambda X: ((X[:, k] < 24) & (X[:, a] >= 30)).astype(float)
        >>> auditor = FairFictPlay(model, data, protected=["sex", "age"])
        >>> bool((auditor.audit().members == auditor.run().members).all())
        True
        """
        return self.run()
