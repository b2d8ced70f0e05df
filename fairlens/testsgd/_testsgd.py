"""``TestSGD(...).run()``: frequent rule sets + batched Algorithm 2, ranked report."""
from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, field, replace
from numbers import Integral, Real
from typing import Sequence

import numpy as np
import pandas as pd

from .._base import Analysis, Interval, Options, Result, strict_keywords, validated
from .._validation import check_int
from ._rules import (
    BINNINGS,
    MAX_CATEGORY_VALUES,
    N_BINS_DEFAULT,
    FrequentRuleSets,
    RuleSet,
    _check_theta,
    as_table,
    check_bins,
    frequent_rule_sets,
)
from ._score import (
    DEFAULT_MAX_SAMPLES,
    Sampler,
    ScoreResult,
    _check_alg2_params,
    _score_rule_sets,
    check_perturbation,
    favourable_labels,
    group_fairness_score,
)
from .plots import plot_top_rule_sets

__all__ = ["TestSGD", "TestSGDReport", "simultaneous_confidence"]


@dataclass
class TestSGDReport(Result):
    """Rule sets ranked by group fairness score.

    Honest ranking (the top of a ranking of many noisy estimates is biased upward, since
    the largest of thousands of estimates is more likely an over-estimate than not): the
    report ranks every rule set by its SELECTION estimate ``score`` (Algorithm 2 on the
    ranking stream, what the paper ranks by), and the ``top_k`` first rule sets are
    re-estimated on FRESH samples (an independent random stream, the same sample-size rule,
    ``result.fresh``). The number to quote for a top rule set is its fresh estimate
    ``fresh_score`` with its bound ``fresh_margin`` (``result.reported_score``): it is drawn
    independently of the choice, so it is unbiased for the chosen rule set (for the signed
    rate difference; up to the paper's data-dependent stopping rule) and its bound holds at the
    stated confidence. The order is never changed by the fresh estimates: re-ranking the
    ``top_k`` by their fresh estimates would be a new selection (among ``top_k``) and bias the
    report's #1 upward again (+0.027 on census, against +0.003 for this rule; see
    ``benchmarks/README.md``). With ``simultaneous=True`` (Bonferroni over ``top_k``) all
    ``top_k`` fresh bounds hold at once with probability ``>= delta**2``.
    ``benchmarks/testsgd_topk.py`` measures both against exact scores on census.

    Parameters
    ----------
    results : list of ScoreResult
        One per frequent rule set, by decreasing selection score (NaN last); the first
        ``top_k`` carry their fresh re-estimate.
    frequent : FrequentRuleSets
        The mined rule sets (with their bitsets, for the widget).
    params : dict
        The parameters of the run (theta, error, confidence, sample_thr, ...).
    elapsed : float
        Total wall time in seconds (mining + scoring).
    elapsed_mining, elapsed_scoring : float
        Wall time in seconds of phase 1 (mining) and phase 2 (scoring).
    n_model_rows : int
        Rows passed to the model.
    dataset_name : str, default "data"
        Name of the dataset (shown by :meth:`summary`).
    accuracy : float or None
        Model accuracy on the dataset labels, if the dataset has ``y``.
    stopped : bool
        True when the run was cut short by ``stop``.
    tester : TestSGD, optional
        The analysis that made the report (model and data, for the widget).
    random_state : int or None
        The integer seed actually used (None: deterministic).

    Examples
    --------
    >>> from fairlens.datasets import load_german_credit
    >>> from fairlens.testsgd import TestSGD
    >>> data = load_german_credit()
    >>> k = data.index_of("duration")
    >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
    >>> tester = TestSGD(model, data, protected=["sex", "age"], theta=0.2, n_bins=4,
    ...                  top_k=2, random_state=0)
    >>> report = tester.run()
    >>> report.n_rule_sets, report.confidence, report.random_state
    (16, 0.9025, 0)
    >>> str(report[0].rule_set), round(report[0].score, 4), round(report[0].fresh_score, 4)
    ('age<61', 0.1094, 0.1565)
    """

    __test__ = False  # not a pytest class

    results: list
    frequent: FrequentRuleSets
    params: dict = field()  # field(): no default inherited from Result's class attributes
    elapsed: float = field()
    elapsed_mining: float
    elapsed_scoring: float
    n_model_rows: int
    dataset_name: str = "data"
    accuracy: float | None = None
    stopped: bool = False
    tester: object = field(default=None, repr=False, compare=False)
    random_state: int | None = None

    title = "TestSGD: rule sets ranked by group fairness score"

    @property
    def n_rule_sets(self) -> int:
        """Rule sets mined (several may select the same rows: see :attr:`n_groups`)."""
        return len(self.frequent)

    @property
    def n_groups(self) -> int:
        """Distinct groups among the mined rule sets (distinct row masks): what is scored when equivalent
        rule sets are merged (the default), else :attr:`n_rule_sets`."""
        if not bool(self.params.get("merge_equivalent", True)):
            return self.n_rule_sets
        return int(len(_distinct_masks(self.frequent)[0]))

    @property
    def confidence(self) -> float:
        """delta_r * delta_nr (Theorem 4.2), e.g. 0.9025 for delta = 0.95."""
        return float(self.params["confidence"]) ** 2

    @property
    def n_not_converged(self) -> int:
        """Rule sets without a converged estimate (status "cap" or "no-seeds")."""
        return int(sum(1 for r in self.results if not r.converged))

    def status_counts(self) -> dict:
        """Number of rule sets per status.

        Returns
        -------
        dict
            ``{"ok": .., "cap": .., "no-seeds": ..}``: "cap" hit ``max_samples`` before the
            bound; "no-seeds" are rule sets that every row (or no row) satisfies, so one group
            cannot be sampled.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import TestSGD
        >>> data = load_german_credit()
        >>> k = data.index_of("duration")
        >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
        >>> tester = TestSGD(model, data, protected=["sex", "age"], theta=0.2, n_bins=4,
        ...                  top_k=2, random_state=0)
        >>> report = tester.run()
        >>> report.status_counts()
        {'ok': 16, 'cap': 0, 'no-seeds': 0}
        """
        out = {"ok": 0, "cap": 0, "no-seeds": 0}
        for r in self.results:
            out[r.status] = out.get(r.status, 0) + 1
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row per rule set, in report order (see the class docstring).

        ``score``/``margin`` are the selection estimate (Algorithm 2 on the ranking stream;
        biased upward at the top of the ranking); ``fresh_score``/``fresh_margin`` (and
        ``fresh_rate_in``, ``fresh_rate_out``, ``fresh_n_samples``, ``fresh_confidence``) the
        re-estimate on fresh samples of the top rule sets (NaN for the others).
        Besides the paper's unsigned ``score`` it shows which way the group is treated:
        ``signed_score = rate_in - rate_out``, the ``favoured`` and ``disfavoured`` group
        (the rule set or its complement ``not (...)``) with their favourable rates,
        ``aliases`` (rule sets selecting the same rows of the data: one finding), the rows of
        the data inside and outside the group (``n_in``, ``n_out``) and ``small_side``
        (``"rest"`` when everybody else is fewer rows than ``params["min_side_rows"]``).

        Returns
        -------
        pandas.DataFrame
            One row per rule set, index ``rank``.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import TestSGD
        >>> data = load_german_credit()
        >>> k = data.index_of("duration")
        >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
        >>> tester = TestSGD(model, data, protected=["sex", "age"], theta=0.2, n_bins=4,
        ...                  top_k=2, random_state=0)
        >>> report = tester.run()
        >>> report.to_frame()[["rule_set", "score", "fresh_score"]].head(3).round(4)
                      rule_set   score  fresh_score
        rank
        0               age<61  0.1094       0.1565
        1             sex=male  0.1057       0.1024
        2     sex=male, age<33  0.1008          NaN
        """
        rows = [{
            "rule_set": str(r.rule_set), "n_rules": len(r.rule_set), "support": r.support,
            "rate_in": r.rate_in, "rate_out": r.rate_out, "score": r.score,
            "signed_score": r.signed_score, "favoured": r.favoured,
            "favoured_rate": r.favoured_rate, "disfavoured": r.disfavoured,
            "disfavoured_rate": r.disfavoured_rate, "margin": r.margin,
            "n_samples": r.n_samples, "converged": r.converged, "status": r.status,
            "aliases": "; ".join(getattr(r, "aliases", ()) or ()), "n_in": int(r.n_in),
            "n_out": int(r.n_out), "small_side": r.small_side, **r._fresh_columns(),
        } for r in self.results]
        cols = ["rule_set", "n_rules", "support", "rate_in", "rate_out", "score", "signed_score",
                "favoured", "favoured_rate", "disfavoured", "disfavoured_rate", "margin",
                "n_samples", "converged", "status", "aliases", "n_in", "n_out", "small_side",
                "fresh_score", "fresh_margin", "fresh_rate_in", "fresh_rate_out", "fresh_n_samples",
                "fresh_confidence"]
        df = pd.DataFrame(rows, columns=cols)
        df.index.name = "rank"
        return df

    def top(self, k: int = 3) -> pd.DataFrame:
        """The first ``k`` rule sets of the report (largest selection score first).

        Parameters
        ----------
        k : int >= 0, default 3
            Number of rows.

        Returns
        -------
        pandas.DataFrame
            The first ``k`` rows of :meth:`to_frame`; quote their ``fresh_score``.

        Raises
        ------
        TypeError, ValueError
            If ``k`` is not an int >= 0.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import TestSGD
        >>> data = load_german_credit()
        >>> k = data.index_of("duration")
        >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
        >>> tester = TestSGD(model, data, protected=["sex", "age"], theta=0.2, n_bins=4,
        ...                  top_k=2, random_state=0)
        >>> report = tester.run()
        >>> report.top(2)["rule_set"].tolist()
        ['age<61', 'sex=male']
        """
        k = check_int("k", k, min=0)
        return self.to_frame().head(k)

    def merge_equivalent(self) -> "TestSGDReport":
        """A new report in which rule sets selecting exactly the same rows of D are merged.

        Two rule sets are equivalent when their support masks on the data ``D`` are
        identical (so are the complements: both groups ``R`` and ``not R`` are the same
        rows, and Algorithm 2 samples from the same seeds). Of each class the simplest
        description is kept (fewest rules, then the shortest text, then the first in
        rank order), with its own estimate; the others are listed in its ``aliases``
        (shown in :meth:`to_frame`). E.g. with ``age`` bins 0-10 empty in the data,
        ``age<20`` and ``10<=age<20`` select the same people and become one row.
        :class:`TestSGD` does this by default before scoring (``merge_equivalent=True``), so
        this method matters for reports run with ``merge_equivalent=False`` (it leaves a merged
        report as it is). ``frequent`` (the mined rule sets, ``n_rule_sets``) is kept whole.
        The original report is not changed.

        Returns
        -------
        TestSGDReport
            The merged report.

        Raises
        ------
        ValueError
            For a report without row masks (text reports).

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import TestSGD
        >>> data = load_german_credit()
        >>> k = data.index_of("duration")
        >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
        >>> tester = TestSGD(model, data, protected=["sex", "age"], theta=0.2, n_bins=4,
        ...                  top_k=2, random_state=0)
        >>> report = tester.run()
        >>> merged = report.merge_equivalent()
        >>> len(merged.results) <= len(report.results), merged.params["merged_equivalent"]
        (True, True)
        """
        fr = self.frequent
        if fr.bits is None or fr.bits.shape[0] != len(fr.rule_sets) or not len(fr.rule_sets):
            if len(fr.rule_sets):
                raise ValueError("merge_equivalent needs structured rule sets with row masks; "
                                 "text reports carry none")
        index = {str(rs): i for i, rs in enumerate(fr.rule_sets)}
        groups: dict = {}
        for r in self.results:
            i = index.get(str(r.rule_set))
            key = fr.bits[i].tobytes() if i is not None else ("unmatched", str(r.rule_set))
            groups.setdefault(key, []).append(r)
        merged = []
        for members in groups.values():
            best = min(members, key=lambda r: (len(r.rule_set), len(str(r.rule_set))))
            others = tuple(str(r.rule_set) for r in members if r is not best)
            merged.append(replace(best, aliases=tuple(best.aliases) + others))
        params = dict(self.params, merged_equivalent=True)
        return replace(self, results=_rank(merged), params=params)

    def __getitem__(self, i) -> ScoreResult:
        return self.results[i]

    def plot(self, ax=None, *, k: int = 10):
        """The ``k`` first rule sets of the report with their rates, scores and bounds.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (a new figure if None).
        k : int >= 1, default 10
            Number of rule sets.

        Returns
        -------
        matplotlib Axes
            The axes drawn on.

        Raises
        ------
        TypeError, ValueError
            If ``k`` is not an int >= 1.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import TestSGD
        >>> data = load_german_credit()
        >>> k = data.index_of("duration")
        >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
        >>> tester = TestSGD(model, data, protected=["sex", "age"], theta=0.2, n_bins=4,
        ...                  top_k=2, random_state=0)
        >>> report = tester.run()
        >>> ax = report.plot(k=5)
        """
        return plot_top_rule_sets(self, k=check_int("k", k, min=1), ax=ax)

    def result_for(self, rule_set) -> ScoreResult:
        """The result of one rule set.

        Parameters
        ----------
        rule_set : RuleSet or str
            The rule set or its printed form.

        Returns
        -------
        ScoreResult
            Its estimate (with ``fresh`` for a top rule set); for an alias (a rule set selecting
            the same rows as a listed one), the listed rule set's result.

        Raises
        ------
        KeyError
            If the rule set is not in the report (nor an alias of one).

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import TestSGD
        >>> data = load_german_credit()
        >>> k = data.index_of("duration")
        >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
        >>> tester = TestSGD(model, data, protected=["sex", "age"], theta=0.2, n_bins=4,
        ...                  top_k=2, random_state=0)
        >>> report = tester.run()
        >>> res = report.result_for("sex=male")
        >>> str(res.rule_set), res.status, round(res.score, 4)
        ('sex=male', 'ok', 0.1057)
        """
        key = str(rule_set)
        for r in self.results:
            if str(r.rule_set) == key:
                return r
        for r in self.results:   # an alias: the same rows as a listed rule set, one finding
            if key in (getattr(r, "aliases", ()) or ()):
                return r
        raise KeyError(f"rule set {key!r} is not in the report")

    def browse(self, **kw):
        """A :class:`RuleSetBrowser` over this report (needs ipywidgets).

        Parameters
        ----------
        **kw
            Passed to :class:`RuleSetBrowser`.

        Returns
        -------
        RuleSetBrowser
            The widget (display it in a notebook).

        Raises
        ------
        ImportError
            If ipywidgets is not installed.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import TestSGD
        >>> data = load_german_credit()
        >>> k = data.index_of("duration")
        >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
        >>> tester = TestSGD(model, data, protected=["sex", "age"], theta=0.2, n_bins=4,
        ...                  top_k=2, random_state=0)
        >>> report = tester.run()
        >>> browser = report.browse()  # doctest: +SKIP
        """
        from ._widget import RuleSetBrowser  # deferred: circle: testsgd._widget imports this module
        return RuleSetBrowser(self, **kw)

    def summary(self) -> pd.DataFrame:
        """One-line summary: time, number of rule sets, top score (Table 5 style).

        ``top_rule_set`` is the rule set with the largest selection estimate (the paper's
        top-1); ``top_fresh_score``/``top_fresh_margin`` is its fresh re-estimate, the number
        to quote (unbiased for the chosen rule set); ``top_score`` its selection estimate
        (biased upward: it is the largest of many).

        Returns
        -------
        pandas.DataFrame
            One row.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import TestSGD
        >>> data = load_german_credit()
        >>> k = data.index_of("duration")
        >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
        >>> tester = TestSGD(model, data, protected=["sex", "age"], theta=0.2, n_bins=4,
        ...                  top_k=2, random_state=0)
        >>> report = tester.run()
        >>> row = report.summary().iloc[0]
        >>> row["dataset"], int(row["n_rule_sets"]), row["top_rule_set"], float(row["accuracy"])
        ('german_credit', 16, 'age<61', 0.602)
        """
        best = self.results[0] if self.results else None
        return pd.DataFrame([{
            "dataset": self.dataset_name, "theta": self.params["theta"],
            "n_rule_sets": self.n_rule_sets, "time_s": self.elapsed,
            "top_rule_set": str(best.rule_set) if best else None,
            "top_score": best.score if best else np.nan,
            "top_fresh_score": best.fresh_score if best else np.nan,
            "top_fresh_margin": best.fresh_margin if best else np.nan,
            "accuracy": self.accuracy,
        }])


def _distinct_masks(fr):
    """One rule set per distinct row mask of the mined rule sets ``fr``.

    Returns ``(scored, aliases)``: the indices (into ``fr.rule_sets``, ascending) of the rule
    set kept for each mask -- the simplest description: fewest rules, then the shortest text,
    then the first mined -- and ``{kept index: (printed aliases, in mining order)}``.
    """
    m = len(fr.rule_sets)
    if fr.bits is None or fr.bits.shape[0] != m:
        return np.arange(m, dtype=np.int64), {}
    classes: dict = {}
    for j in range(m):
        classes.setdefault(fr.bits[j].tobytes(), []).append(j)
    keep, aliases = [], {}
    for members in classes.values():
        best = min(members, key=lambda j: (len(fr.rule_sets[j]), len(str(fr.rule_sets[j])), j))
        keep.append(best)
        if len(members) > 1:
            aliases[best] = tuple(str(fr.rule_sets[j]) for j in members if j != best)
    return np.asarray(sorted(keep), dtype=np.int64), aliases


def _finish(result, aliases, min_side):
    """A scored result with its aliases and its small-side flag (``min_side`` rows, 0 = off)."""
    small = ""
    if min_side > 0 and result.n_out >= 0 and result.n_in >= 0:
        if result.n_out < min_side:
            small = "rest"
        elif result.n_in < min_side:
            small = "group"
    if not aliases and small == result.small_side:
        return result
    return replace(result, aliases=tuple(result.aliases) + tuple(aliases), small_side=small)


def _rank(results):
    """By selection score (NaN last), ties by name: the rule that chooses the #1 and the top k.

    The fresh re-estimates never reorder the report: choosing by the fresh estimate would make
    the quoted fresh estimate of the #1 a maximum again, biased upward."""
    def key(r):
        s = r.score
        ok = np.isfinite(s)
        return (not ok, -(s if ok else 0.0), str(r.rule_set))

    return sorted(results, key=key)


@validated({
    "confidence": [Interval(numbers.Real, 0, 1, closed="neither")], "k": [Interval(numbers.Integral, 1, None)],
})
def simultaneous_confidence(confidence: float, k: int) -> float:
    """Per-group confidence ``delta'`` making ``k`` score bounds hold simultaneously.

    Each score bound holds with probability ``>= delta'**2`` (Theorem 4.2); Bonferroni over
    ``k`` bounds asks ``1 - delta'**2 = (1 - delta**2) / k``, so that all ``k`` hold at once with
    probability ``>= delta**2`` (the paper's per-rule-set confidence, e.g. 0.9025).

    Parameters
    ----------
    confidence : float in (0, 1)
        The per-group ``delta``.
    k : int
        Number of bounds (values below 1 count as 1).

    Returns
    -------
    float
        ``delta'``.

    Examples
    --------
    >>> from fairlens.testsgd import simultaneous_confidence
    >>> round(simultaneous_confidence(0.95, 10), 4)
    0.9951
    """
    k = max(1, int(k))
    return float(np.sqrt(1.0 - (1.0 - float(confidence) ** 2) / k))


class TestSGD(Analysis):
    """Interpretable testing against subtle group discrimination (Zhang et al.).

    Phase 1 mines the frequent rule sets over the protected features
    (Algorithm 1, :func:`frequent_rule_sets`); phase 2 estimates each rule
    set's group fairness score with an error bound (Algorithm 2, batched
    :func:`score_rule_sets`) and ranks them.

    Parameters
    ----------
    model : estimator, pipeline or callable
        Adapted ONCE with ``fairlens.models.as_scorer(model, data,
        favourable_class=favourable)``: a pipeline fitted on the readable frame
        (``data.frame[data.feature_names]``) gets decoded rows, a model fitted on
        an encoded DataFrame gets its own column order, a callable gets encoded arrays
        and must return probabilities (see :func:`fairlens.models.as_scorer`; pass a
        Scorer built with ``output="logit"`` for logits). The prediction is favourable
        (label ``l``) when the score is ``>= threshold``. ``report.params["model_input"]``
        states how the model was called.
    data : fairlens Dataset
        The data ``D`` seeds and supports come from (the paper uses the
        training set; pass ``data.split()[0]`` for that).
    protected : str or list of str, optional
        Protected (sensitive) features ``S`` (default: ``data.protected``).
    theta : float in (0, 1], default 0.05
        Support threshold.
    error : float in (0, 1], default 0.05
        ``error_thr`` of Algorithm 2.
    confidence : float in (0, 1), default 0.95
        ``delta`` per group; the reported score has confidence ``delta**2``.
    sample_thr : int >= 1, default 1000
        No stop before ``num > sample_thr``.
    random_state : None, int, numpy Generator or RandomState
        Resolved once per run by :func:`fairlens._base.resolve_random_state`; the integer
        used is ``report.random_state`` (pass it back to reproduce the run).
    max_samples : int > sample_thr, default 100000
        Cap on ``num`` per rule set (not in the paper); rule sets that hit it
        are flagged ``converged=False``.
    n_bins : int >= 2, default 10
        ``K`` bins of continuous/integer features.
    bins : int, list of edges or dict, optional
        Per-feature bin count or explicit edges.
    perturbation : float > 0 or dict, optional
        ``s_pert`` override (default 1 for integer/categorical, 0.01 for continuous).
    threshold : float in [0, 1], default 0.5
        A score ``>= threshold`` is the favourable decision.
    batch_rows : int >= 1, default 65536
        Rows per model call.
    max_values : int >= 2, default 12
        Largest number of values of a categorical protected feature.
    max_size : int >= 1 or None
        Largest rule set; None (default) = no limit.
    rule_form : {"interval", "threshold"}, default "interval"
        Rules of binned features (see :func:`frequent_rule_sets`).
    max_rule_sets : int >= 1, default 2000000
        Safety cap on the number of frequent rule sets.
    strategy : {"auto", "table", "sample"}
        How the batched Algorithm 2 gets labels (see :func:`score_rule_sets`);
        all give identical numbers.
    favourable : default 1
        The model class ``l`` whose rate is compared (fairlens' ``y = 1`` is the good
        outcome; pass 0 to count e.g. "reoffends" on COMPAS as the paper does; a model
        fitted on readable target labels takes its label, e.g. ``"good"``).
    binning : {"equal_width", "round"}, default "equal_width"
        ``"equal_width"``: the paper's ``K`` equal-width bins (section 4.1);
        ``"round"``: about ``K`` bins with round edges (e.g. ``40<=age<60``), see
        :func:`fairlens.testsgd.frequent_rule_sets`.
    top_k : int >= 0, default 10
        Honest ranking: the ``top_k`` rule sets of the selection ranking are re-estimated on
        fresh samples (independent stream ``chunk_rng(seed, j, 1)``, same error/sample
        rule), see :class:`TestSGDReport`; 0 turns it off.
    simultaneous : bool, default False
        Give the fresh re-estimates simultaneous (Bonferroni over ``top_k``) bounds: each is
        estimated at per-group confidence :func:`simultaneous_confidence` so that all
        ``top_k`` bounds hold at once with probability ``>= confidence**2`` (more samples).
    merge_equivalent : bool, default True
        Rule sets whose row masks on the data are identical describe the same group (e.g.
        ``age>=20`` and ``20<=age<90`` when nobody is 90 or older): they are one finding. Only
        the simplest description of each such class (fewest rules, then the shortest text,
        then the first mined) is scored and ranked, on its own random stream; the others are
        listed in its ``aliases`` (:meth:`TestSGDReport.result_for` finds them). ``False``
        scores and ranks every frequent rule set separately (the paper's listing, where the
        same group can appear several times); ``n_rule_sets`` counts the mined rule sets
        either way.
    min_side_rows : int >= 0, optional
        A finding whose group or whose rest (everybody else) holds fewer rows of the data than
        this is flagged: ``result.small_side`` is ``"group"`` or ``"rest"`` and the row counts
        are in ``n_in``/``n_out`` (a comparison with one 19-year-old is not one with
        "everybody else"). Default: ``max(30, ceil(theta * n))``, the paper's own support
        threshold applied to the rest too, and at least 30 rows; 0 turns the flag off. The
        ranking is unchanged (the paper's).

    Raises
    ------
    TypeError, ValueError
        For a parameter of the wrong type or out of range (the message names it), a
        protected feature that is not a column, an empty dataset or NaN in ``data.X``.
        Old call forms are a ``TypeError`` naming the keyword to use: the protected
        features (and ``theta``, ``error``, ``confidence``, ``sample_thr``, ``random_state``)
        passed by position, ``sensitive=`` (now ``protected``), ``favourable_class=`` (now
        ``favourable``), ``dataset=`` (now ``data``) and ``progress=`` in ``__init__`` (now an
        argument of :meth:`run`).

    Examples
    --------
    >>> from fairlens.datasets import load_german_credit
    >>> from fairlens.testsgd import TestSGD
    >>> data = load_german_credit()
    >>> k = data.index_of("duration")
    >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
    >>> tester = TestSGD(model, data, protected=["sex", "age"], theta=0.2, n_bins=4,
    ...                  top_k=2, random_state=0)
    >>> report = tester.run()
    >>> report.top(3)[["rule_set", "score", "fresh_score", "favoured"]].round(4)
                  rule_set   score  fresh_score                favoured
    rank
    0               age<61  0.1094       0.1565            not (age<61)
    1             sex=male  0.1057       0.1024          not (sex=male)
    2     sex=male, age<33  0.1008          NaN  not (sex=male, age<33)
    """

    __test__ = False

    _parameter_constraints = {
        "protected": [str, "str-list", None],
        "theta": [Interval(Real, 0, 1, closed="right")],
        "error": [Interval(Real, 0, 1, closed="right")],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "sample_thr": [Interval(Integral, 1, None)],
        "random_state": ["random_state"],
        "max_samples": [Interval(Integral, 2, None)],
        "n_bins": [Interval(Integral, 2, None)],
        "bins": "no_validation",
        "perturbation": "no_validation",
        "threshold": [Interval(Real, 0, 1)],
        "batch_rows": [Interval(Integral, 1, None)],
        "max_values": [Interval(Integral, 2, None)],
        "max_size": [Interval(Integral, 1, None), None],
        "rule_form": [Options("interval", "threshold")],
        "max_rule_sets": [Interval(Integral, 1, None)],
        "strategy": [Options("auto", "table", "sample")],
        "favourable": "no_validation",
        "binning": [Options(*BINNINGS)],
        "top_k": [Interval(Integral, 0, None)],
        "simultaneous": ["boolean"],
        "merge_equivalent": ["boolean"],
        "min_side_rows": [Interval(Integral, 0, None), None],
    }

    @strict_keywords(renamed={"sensitive": "protected", "favourable_class": "favourable", "dataset": "data"},
                     keyword_only=("protected", "theta", "error", "confidence", "sample_thr", "random_state"),
                     moved={"progress": "TestSGD(...).run(progress=...)"})
    def __init__(self, model, data, *, protected: Sequence[str] | str | None = None,
                 theta: float = 0.05, error: float = 0.05, confidence: float = 0.95,
                 sample_thr: int = 1000, random_state=None, max_samples: int = DEFAULT_MAX_SAMPLES,
                 n_bins: int = N_BINS_DEFAULT, bins=None, perturbation=None, threshold: float = 0.5,
                 batch_rows: int = 65_536, max_values: int = MAX_CATEGORY_VALUES,
                 max_size: int | None = None, rule_form: str = "interval",
                 max_rule_sets: int = 2_000_000, strategy: str = "auto", favourable=1,
                 binning: str = "equal_width", top_k: int = 10, simultaneous: bool = False,
                 merge_equivalent: bool = True, min_side_rows: int | None = None):
        self.model = model
        self.data = data
        self.protected = protected
        self.theta, self.error, self.confidence = theta, error, confidence
        self.sample_thr, self.random_state = sample_thr, random_state
        self.favourable = favourable
        self.max_samples, self.n_bins, self.bins, self.perturbation = max_samples, n_bins, bins, perturbation
        self.threshold, self.batch_rows, self.max_values, self.max_size = threshold, batch_rows, max_values, max_size
        self.rule_form, self.max_rule_sets, self.strategy = rule_form, max_rule_sets, strategy
        self.binning, self.top_k, self.simultaneous = binning, top_k, simultaneous
        self.merge_equivalent, self.min_side_rows = merge_equivalent, min_side_rows
        self._validate_params()
        # ---- semantic checks beyond the table (columns exist, sample sizes, memory)
        self.table = as_table(data)
        prot = self.protected
        if prot is None:
            prot = list(getattr(data, "protected", []) or [])
        prot = [prot] if isinstance(prot, str) else list(prot)
        if not prot:
            raise ValueError("protected must list at least one feature (data.protected is empty)")
        for f in prot:
            self.table.index_of(f)  # raises a clear ValueError
        if len(set(prot)) != len(prot):
            raise ValueError(f"protected features must be distinct, got {prot}")
        self._protected = prot
        self.theta = _check_theta(self.theta)
        self.error, self.sample_thr, self.max_samples, self.threshold = _check_alg2_params(
            self.error, self.sample_thr, self.max_samples, self.threshold, self.confidence, name="error")
        self.confidence = float(self.confidence)
        self._bins = check_bins(bins, self.table.feature_names)
        self._perturbation = check_perturbation(perturbation, self.table.feature_names)
        from ._score import make_scorer  # deferred: circle: testsgd._score imports this module
        self.scorer = make_scorer(model, self.table, favourable_class=self.favourable)

    # old attribute names (read-only) for code written against the previous release
    @property
    def sensitive(self) -> list:
        """The protected features as a list (old name of :attr:`protected`)."""
        return list(self._protected)

    @property
    def dataset(self):
        """The data (old name of :attr:`data`)."""
        return self.data

    @property
    def favourable_class(self):
        """Old name of :attr:`favourable`."""
        return self.favourable

    # ------------------------------------------------------------------
    def mine(self, theta: float | None = None) -> FrequentRuleSets:
        """Phase 1: the frequent rule sets (Algorithm 1).

        Parameters
        ----------
        theta : float in (0, 1], optional
            Support threshold (default: the analysis's ``theta``).

        Returns
        -------
        FrequentRuleSets
            The frequent rule sets over the protected features.

        Raises
        ------
        TypeError, ValueError
            For a bad ``theta`` (or too many rule sets, see :func:`frequent_rule_sets`).

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import TestSGD
        >>> data = load_german_credit()
        >>> k = data.index_of("duration")
        >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
        >>> tester = TestSGD(model, data, protected=["sex", "age"], theta=0.2, n_bins=4,
        ...                  top_k=2, random_state=0)
        >>> len(tester.mine()), len(tester.mine(theta=0.5))
        (16, 6)
        """
        return frequent_rule_sets(self.table, self._protected, self.theta if theta is None else theta,
                                  n_bins=self.n_bins, bins=self._bins, max_values=self.max_values,
                                  max_size=self.max_size, rule_form=self.rule_form,
                                  max_rule_sets=self.max_rule_sets, binning=self.binning)

    def _report_params(self, seed) -> dict:
        return dict(protected=list(self._protected), theta=self.theta, error=self.error,
                    confidence=self.confidence, sample_thr=self.sample_thr, max_samples=self.max_samples,
                    n_bins=self.n_bins, threshold=self.threshold, random_state=seed,
                    max_size=self.max_size, rule_form=self.rule_form, binning=self.binning,
                    favourable=self.favourable, model_input=self.scorer.describe(),
                    top_k=self.top_k, simultaneous=self.simultaneous,
                    fresh_confidence=self._fresh_confidence() ** 2,
                    merge_equivalent=bool(self.merge_equivalent), min_side_rows=self._min_side())

    def _min_side(self) -> int:
        """Rows each side of a finding needs before it is flagged (``min_side_rows``)."""
        if self.min_side_rows is not None:
            return int(self.min_side_rows)
        n = self.table.X.shape[0]
        return int(max(30, np.ceil(self.theta * n - 1e-9)))

    def _fresh_confidence(self) -> float:
        """Per-group confidence of the fresh re-estimates (Bonferroni-adjusted if simultaneous)."""
        if self.simultaneous and self.top_k > 1:
            return simultaneous_confidence(self.confidence, self.top_k)
        return self.confidence

    def run(self, *, stop=None, progress=None, n_jobs=None) -> TestSGDReport:
        """Mine, score every frequent rule set, re-estimate the top ones, rank.

        Phase 2 runs in fixed blocks of rule sets through :func:`fairlens._parallel.run_chunks`
        (see :func:`score_rule_sets`): the answer is identical at every ``n_jobs`` and on every
        joblib backend, because rule set ``j`` draws from its own counter-based stream
        ``chunk_rng(seed, j, 0)`` (the fresh re-estimate from ``chunk_rng(seed, j, 1)``), where
        ``seed`` is ``resolve_random_state(random_state)``. What one task carries: the bounds of
        one block of rule sets (two integers); the payload shipped once per worker holds the
        scorer (the census reference MLP pickles to about 0.25 MB), the data (2.3 MB for the
        24,420 x 12 census training rows), the packed row masks of the rule sets (7.8 MB for its
        2,560 rule sets) and the neighbourhood label table (0.44 MB). With the table strategy the
        439,560-row neighbourhood is itself scored in fixed blocks of 3,640 seeds (one model call
        of 65,520 rows per task).

        Parameters
        ----------
        stop : None, threading.Event or zero-argument callable
            The one stop convention of fairlens: checked between chunks of rule sets; when it
            fires the report holds the rule sets scored so far and ``report.stopped`` is True.
        progress : None, bool or callable, optional
            ``True`` shows a ``tqdm.auto`` bar; a callable is called as
            ``progress(stage, done, total)`` after each chunk (``stage="rule sets"``, ``done``
            the rule sets scored).  A callable that cannot take three positional arguments is
            refused with a ``TypeError`` before any work.
        n_jobs : int or None
            ``None`` = 1 (or the active ``joblib.parallel_config``), ``-1`` = all cores/workers;
            ``with joblib.parallel_config(backend="dask"):`` runs the blocks on a dask cluster.

        Returns
        -------
        TestSGDReport
            The ranked rule sets; ``report.random_state`` is the integer seed used.

        Raises
        ------
        TypeError, ValueError
            For a bad ``stop``, ``progress`` or ``n_jobs`` (the message names it).

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import TestSGD
        >>> data = load_german_credit()
        >>> k = data.index_of("duration")
        >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
        >>> tester = TestSGD(model, data, protected=["sex", "age"], theta=0.2, n_bins=4,
        ...                  top_k=2, random_state=0)
        >>> report = tester.run()
        >>> report.random_state, report.stopped, str(report[0].rule_set)
        (0, False, 'age<61')
        >>> tester.run(n_jobs=2).to_frame().equals(report.to_frame())
        True
        """
        stop_fn, report, n_jobs, seed, t0 = self._start(stop, progress, n_jobs, desc="TestSGD rule sets")
        fr = self.mine()
        t1 = time.perf_counter()
        info = {}
        kw = dict(error=self.error, sample_thr=self.sample_thr, max_samples=self.max_samples,
                  threshold=self.threshold, perturbation=self._perturbation, seed=seed,
                  batch_rows=self.batch_rows, n_jobs=n_jobs, stop=stop_fn, info=info)
        # which rule sets are scored: one per distinct row mask (merge_equivalent) or all; rule
        # set j (its index among the mined ones) keeps its own stream either way
        scored, aliases = _distinct_masks(fr) if self.merge_equivalent else (np.arange(len(fr)), {})
        try:
            results, n_rows, table = _score_rule_sets(
                self.scorer, self.table, [fr.rule_sets[j] for j in scored], self._protected,
                bits=None if fr.bits is None else fr.bits[scored], keys=scored,
                confidence=self.confidence, strategy=self.strategy, progress=report, return_table=True,
                stream=0, **kw)
        finally:
            if hasattr(report, "close"):
                report.close()
        stopped = any(r is None for r in results)
        if not stopped and self.top_k:
            results, n_fresh = self._refresh(fr, scored, results, table, kw)
            n_rows += n_fresh
            stopped = any(r is None for r in results)
        min_side = self._min_side()
        results = [_finish(r, aliases.get(int(j), ()), min_side)
                   for j, r in zip(scored, results) if r is not None]
        t2 = time.perf_counter()
        acc = None
        if self.table.y is not None and len(self.table.y) == self.table.X.shape[0]:
            fav = np.asarray(self.scorer(self.table.X)) >= self.threshold
            try:
                acc = float(np.mean(fav == favourable_labels(self.table, self.favourable)))
            except ValueError:  # labels the model's classes cannot be matched with: no accuracy
                acc = None
        params = self._report_params(seed)
        # what ran where (the one fall-back rule of fairlens._parallel.plan_workers)
        params.update(n_jobs=n_jobs, n_jobs_used=int(info.get("n_jobs_used", 1)),
                      parallel="; ".join(info.get("notes", [])) or "sequential (n_jobs=1)")
        return TestSGDReport(_rank(results), fr, params, t2 - t0, t1 - t0, t2 - t1,
                             int(n_rows), self.table.name, acc, stopped, tester=self, random_state=seed)

    def _refresh(self, fr, scored, results, table, kw):
        """Re-estimate the ``top_k`` of the selection ranking on the fresh streams ``(seed, j, 1)``
        (``j`` the rule set's index among the mined ones, ``scored[t]`` for ``results[t]``)."""
        finite = [t for t in range(len(results)) if np.isfinite(results[t].score)]
        order = sorted(finite, key=lambda t: (-results[t].score, str(results[t].rule_set)))[:self.top_k]
        if not order:
            return results, 0
        idx = np.asarray([scored[t] for t in order], dtype=np.int64)
        fresh, n_rows = _score_rule_sets(
            self.scorer, self.table, [fr.rule_sets[j] for j in idx], self._protected, bits=fr.bits[idx],
            keys=idx, stream=1, confidence=self._fresh_confidence(), label_table=table,
            strategy=self.strategy, **kw)
        out = list(results)
        for t, f in zip(order, fresh):
            out[t] = None if f is None else replace(results[t], fresh=f)
        return out, n_rows

    def score(self, rule_set: RuleSet, *, error: float | None = None, method: str = "batched",
              random_state=None, stop=None) -> ScoreResult | None:
        """Algorithm 2 for one rule set (e.g. re-estimate with a tighter ``error``).

        Parameters
        ----------
        rule_set : RuleSet
            The group.
        error : float in (0, 1], optional
            Error threshold (default: the analysis's ``error``).
        method : {"batched", "reference"}
            See :func:`group_fairness_score`.
        random_state : None, int, numpy Generator or RandomState
            Default: the analysis's ``random_state``.
        stop : None, threading.Event or callable
            Ends the sampling between rounds; the result is then ``None``.

        Returns
        -------
        ScoreResult or None
            None when ``stop`` fired.

        Raises
        ------
        TypeError, ValueError
            For a bad ``rule_set`` or ``error``, or a rule set that all rows (or none) satisfy.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import TestSGD
        >>> data = load_german_credit()
        >>> k = data.index_of("duration")
        >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
        >>> tester = TestSGD(model, data, protected=["sex", "age"], theta=0.2, n_bins=4,
        ...                  top_k=2, random_state=0)
        >>> rs = tester.mine().rule_sets[0]
        >>> res = tester.score(rs, error=0.03)
        >>> str(rs), res.margin <= 0.03, res.converged
        ('sex=female', True, True)
        """
        if error is not None:
            _check_alg2_params(error, self.sample_thr, self.max_samples, name="error")
        return group_fairness_score(
            self.scorer, self.table, rule_set, self._protected, error=self.error if error is None else error,
            confidence=self.confidence, sample_thr=self.sample_thr, max_samples=self.max_samples,
            threshold=self.threshold, perturbation=self._perturbation,
            random_state=self.random_state if random_state is None else random_state, method=method,
            stop=stop)

    def sampler(self) -> Sampler:
        """The section 4.3 sampler of this analysis (seeds from the data, protected kept).

        Returns
        -------
        Sampler
            Seeds from the data; the protected features are never perturbed.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import TestSGD
        >>> data = load_german_credit()
        >>> k = data.index_of("duration")
        >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
        >>> tester = TestSGD(model, data, protected=["sex", "age"], theta=0.2, n_bins=4,
        ...                  top_k=2, random_state=0)
        >>> sampler = tester.sampler()
        >>> [data.feature_names[j] for j in range(data.n_features) if j not in sampler.free_cols]
        ['sex', 'age']
        """
        return Sampler(self.table, self._protected, self._perturbation)
