"""``TestSGD(...).run()``: frequent rule sets + batched Algorithm 2, ranked report."""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np
import pandas as pd

from .._validation import check_bool, check_choice, check_int
from ._rules import (BINNINGS, FrequentRuleSets, RuleSet, as_table, check_bins, frequent_rule_sets,
                     N_BINS_DEFAULT, MAX_CATEGORY_VALUES, _check_theta)
from ._score import (DEFAULT_MAX_SAMPLES, ScoreResult, Sampler, _check_alg2_params, check_perturbation,
                     group_fairness_score, resolve_stop, score_rule_sets, seed_value)

__all__ = ["TestSGD", "TestSGDReport", "simultaneous_confidence"]


@dataclass
class TestSGDReport:
    """Rule sets ranked by group fairness score.

    Honest ranking (the top of a ranking of many noisy estimates is biased upward, since
    the largest of thousands of estimates is more likely an over-estimate than not): the
    ``top_k`` rule sets of the selection ranking are re-estimated on FRESH samples (an
    independent random stream, the same sample-size rule, ``result.fresh``) and the report
    ranks those ``top_k`` first, by their fresh estimate; the other rule sets follow by their
    selection estimate. The selection estimate ``score`` of a top rule set is biased upward;
    the fresh estimate ``fresh_score`` is drawn independently of the selection, so for each
    chosen rule set it is unbiased (for the signed rate difference; up to the paper's
    data-dependent stopping rule) and its bound ``fresh_margin`` holds at the stated confidence.
    Ordering the ``top_k`` by their fresh estimates is again a (much milder) selection among
    ``top_k``; with ``simultaneous=True`` (Bonferroni over ``top_k``) all ``top_k`` fresh bounds
    hold at once with probability ``>= delta**2``, so they hold whichever rule set is read first.
    ``benchmarks/testsgd_topk.py`` measures both against exact scores on census.

    Attributes
    ----------
    results : list of ScoreResult
        One per frequent rule set: the re-estimated top rule sets first by decreasing fresh
        score, then the others by decreasing selection score (NaN last).
    frequent : FrequentRuleSets
        The mined rule sets (with their bitsets, for the widget).
    params : dict
        The parameters of the run (theta, error, confidence, sample_thr, ...).
    elapsed : float
        Total wall time in seconds (mining + scoring).
    elapsed_mining, elapsed_scoring : float
    n_model_rows : int
        Rows passed to the model.
    dataset_name : str
    accuracy : float or None
        Model accuracy on the dataset labels, if the dataset has ``y``.
    """

    __test__ = False  # not a pytest class

    results: list
    frequent: FrequentRuleSets
    params: dict
    elapsed: float
    elapsed_mining: float
    elapsed_scoring: float
    n_model_rows: int
    dataset_name: str = "data"
    accuracy: float | None = None
    stopped: bool = False
    tester: object = field(default=None, repr=False, compare=False)

    @property
    def n_rule_sets(self) -> int:
        return len(self.frequent)

    @property
    def confidence(self) -> float:
        """delta_r * delta_nr (Theorem 4.2), e.g. 0.9025 for delta = 0.95."""
        return float(self.params["confidence"]) ** 2

    @property
    def n_not_converged(self) -> int:
        """Rule sets without a converged estimate (status "cap" or "no-seeds")."""
        return int(sum(1 for r in self.results if not r.converged))

    def status_counts(self) -> dict:
        """``{"ok": .., "cap": .., "no-seeds": ..}``: "cap" hit ``max_samples`` before the bound;
        "no-seeds" are rule sets that every row (or no row) satisfies, so one group cannot be sampled."""
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
        (the rule set or its complement ``not (...)``) with their favourable rates, and
        ``aliases`` (rule sets selecting the same rows, after :meth:`merge_equivalent`).
        """
        rows = [{
            "rule_set": str(r.rule_set), "n_rules": len(r.rule_set), "support": r.support,
            "rate_in": r.rate_in, "rate_out": r.rate_out, "score": r.score,
            "signed_score": r.signed_score, "favoured": r.favoured,
            "favoured_rate": r.favoured_rate, "disfavoured": r.disfavoured,
            "disfavoured_rate": r.disfavoured_rate, "margin": r.margin,
            "n_samples": r.n_samples, "converged": r.converged, "status": r.status,
            "aliases": "; ".join(getattr(r, "aliases", ()) or ()), **r._fresh_columns(),
        } for r in self.results]
        cols = ["rule_set", "n_rules", "support", "rate_in", "rate_out", "score", "signed_score",
                "favoured", "favoured_rate", "disfavoured", "disfavoured_rate", "margin",
                "n_samples", "converged", "status", "aliases", "fresh_score", "fresh_margin",
                "fresh_rate_in", "fresh_rate_out", "fresh_n_samples", "fresh_confidence"]
        df = pd.DataFrame(rows, columns=cols)
        df.index.name = "rank"
        return df

    def top(self, k: int = 3) -> pd.DataFrame:
        """The first ``k`` (an int >= 0) rule sets of the report (largest fresh, then selection, score)."""
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
        The original report is not changed.
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
        merged, keep_idx = [], []
        for members in groups.values():
            best = min(members, key=lambda r: (len(r.rule_set), len(str(r.rule_set))))
            others = tuple(str(r.rule_set) for r in members if r is not best)
            merged.append(replace(best, aliases=tuple(best.aliases) + others))
            if str(best.rule_set) in index:
                keep_idx.append(index[str(best.rule_set)])
        keep_idx = np.asarray(sorted(keep_idx), dtype=np.int64)
        new_fr = replace(fr, rule_sets=[fr.rule_sets[i] for i in keep_idx], counts=fr.counts[keep_idx],
                         bits=fr.bits[keep_idx])
        params = dict(self.params, merged_equivalent=True)
        return replace(self, results=_rank(merged), frequent=new_fr, params=params)

    def __getitem__(self, i) -> ScoreResult:
        return self.results[i]

    def plot(self, k: int = 10, ax=None):
        from .plots import plot_top_rule_sets
        return plot_top_rule_sets(self, k=check_int("k", k, min=1), ax=ax)

    def result_for(self, rule_set) -> ScoreResult:
        """The result of a rule set (a RuleSet or its printed form)."""
        key = str(rule_set)
        for r in self.results:
            if str(r.rule_set) == key:
                return r
        raise KeyError(f"rule set {key!r} is not in the report")

    def browse(self, **kw):
        """A :class:`RuleSetBrowser` over this report (needs ipywidgets)."""
        from ._widget import RuleSetBrowser
        return RuleSetBrowser(self, **kw)

    def summary(self) -> pd.DataFrame:
        """One-line summary: time, number of rule sets, top score (Table 5 style).

        ``top_score`` is the selection estimate of the first rule set (what the paper
        reports), ``top_fresh_score``/``top_fresh_margin`` its fresh re-estimate."""
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


def _rank(results):
    """Re-estimated rule sets first, by fresh score; then the others by selection score (NaN last)."""
    def key(r):
        s = r.fresh.score if r.fresh is not None else r.score
        return (r.fresh is None, -(s if np.isfinite(s) else -1.0), str(r.rule_set))

    return sorted(results, key=key)


def simultaneous_confidence(confidence: float, k: int) -> float:
    """Per-group confidence ``delta'`` making ``k`` score bounds hold simultaneously.

    Each score bound holds with probability ``>= delta'**2`` (Theorem 4.2); Bonferroni over
    ``k`` bounds asks ``1 - delta'**2 = (1 - delta**2) / k``, so that all ``k`` hold at once with
    probability ``>= delta**2`` (the paper's per-rule-set confidence, e.g. 0.9025).
    """
    k = max(1, int(k))
    return float(np.sqrt(1.0 - (1.0 - float(confidence) ** 2) / k))


class TestSGD:
    """Interpretable testing against subtle group discrimination (Zhang et al.).

    Phase 1 mines the frequent rule sets over the sensitive features
    (Algorithm 1, :func:`frequent_rule_sets`); phase 2 estimates each rule
    set's group fairness score with an error bound (Algorithm 2, batched
    :func:`score_rule_sets`) and ranks them.

    Parameters
    ----------
    model : estimator, pipeline or callable
        Adapted ONCE with ``fairlens.models.as_scorer(model, dataset,
        favourable_class=...)``: a pipeline fitted on the readable frame
        (``dataset.frame[dataset.feature_names]``) gets decoded rows, a model fitted on
        an encoded DataFrame gets its own column order, a callable gets encoded arrays
        and must return probabilities (see :func:`fairlens.models.as_scorer`; pass a
        Scorer built with ``output="logit"`` for logits). The prediction is favourable
        (label ``l``) when the score is ``>= threshold``. ``report.params["model_input"]``
        states how the model was called.
    dataset : fairlens Dataset
        The data ``D`` seeds and supports come from (the paper uses the
        training set; pass ``dataset.split()[0]`` for that).
    sensitive : list of str
        Sensitive features ``S`` (default: ``dataset.protected``).
    theta : float in (0, 1], default 0.05
        Support threshold.
    error : float in (0, 1], default 0.05
        ``error_thr`` of Algorithm 2.
    confidence : float in (0, 1), default 0.95
        ``delta`` per group; the reported score has confidence ``delta**2``.
    sample_thr : int >= 1, default 1000
        No stop before ``num > sample_thr``.
    max_samples : int > sample_thr, default 100000
        Cap on ``num`` per rule set (not in the paper); rule sets that hit it
        are flagged ``converged=False``.
    n_bins : int >= 2, default 10
        ``K`` bins of continuous/integer features.
    binning : {"equal_width", "round"}, default "equal_width"
        ``"equal_width"``: the paper's ``K`` equal-width bins (section 4.1);
        ``"round"``: about ``K`` bins with round edges (e.g. ``40<=age<60``), see
        :func:`fairlens.testsgd.frequent_rule_sets`.
    bins : int, list of edges or dict, optional
        Per-feature bin count or explicit edges.
    max_size : int >= 1 or None
        Largest rule set; None (default) = no limit.
    rule_form, max_rule_sets :
        Passed to :func:`frequent_rule_sets` ("interval" or "threshold" rules for
        binned features, safety cap).
    perturbation : float > 0 or dict, optional
        ``s_pert`` override (default 1 for integer/categorical, 0.01 for continuous).
    threshold : float in [0, 1], default 0.5
    batch_rows : int >= 1, default 65536
        Rows per model call.
    favourable_class : default 1
        The model class ``l`` whose rate is compared (fairlens' ``y = 1`` is the good
        outcome; pass 0 to count e.g. "reoffends" on COMPAS as the paper does).
    strategy : {"auto", "table", "sample"}
        How the batched Algorithm 2 gets labels (see :func:`score_rule_sets`);
        all give identical numbers.
    random_state : None, int, RandomState or Generator
        scikit-learn semantics (an int in [0, 2**32 - 1]).
    progress : bool
        Show a tqdm progress bar.
    top_k : int >= 0, default 10
        Honest ranking: the ``top_k`` rule sets of the selection ranking are re-estimated on
        fresh samples (independent stream ``chunk_rng(seed, j, 1)``, same error/sample
        rule) and ranked by that estimate (see :class:`TestSGDReport`); 0 turns it off.
    simultaneous : bool, default False
        Give the fresh re-estimates simultaneous (Bonferroni over ``top_k``) bounds: each is
        estimated at per-group confidence :func:`simultaneous_confidence` so that all
        ``top_k`` bounds hold at once with probability ``>= confidence**2`` (more samples).
    """

    __test__ = False

    def __init__(self, model, dataset, sensitive: Sequence[str] | None = None, theta: float = 0.05,
                 error: float = 0.05, confidence: float = 0.95, sample_thr: int = 1000,
                 random_state=None, *, max_samples: int = DEFAULT_MAX_SAMPLES, n_bins: int = N_BINS_DEFAULT,
                 bins=None, perturbation=None, threshold: float = 0.5, batch_rows: int = 65_536,
                 max_values: int = MAX_CATEGORY_VALUES, max_size: int | None = None,
                 rule_form: str = "interval", max_rule_sets: int = 2_000_000, strategy: str = "auto",
                 favourable_class=1, progress: bool = False, binning: str = "equal_width",
                 top_k: int = 10, simultaneous: bool = False):
        self.model = model
        self.dataset = dataset
        self.table = as_table(dataset)
        if sensitive is None:
            sensitive = list(getattr(dataset, "protected", []) or [])
        if isinstance(sensitive, str):
            sensitive = [sensitive]
        try:
            self.sensitive = list(sensitive)
        except TypeError:
            raise TypeError(f"sensitive must be a list of feature names; got {sensitive!r}") from None
        if not self.sensitive:
            raise ValueError("sensitive must list at least one feature (dataset.protected is empty)")
        for f in self.sensitive:
            if not isinstance(f, str):
                raise TypeError(f"sensitive must list feature names (str); got {f!r}")
            self.table.index_of(f)  # raises a clear ValueError
        if len(set(self.sensitive)) != len(self.sensitive):
            raise ValueError(f"sensitive features must be distinct, got {self.sensitive}")
        self.theta = _check_theta(theta)
        self.error, self.sample_thr, self.max_samples, self.threshold = _check_alg2_params(
            error, sample_thr, max_samples, threshold, confidence, name="error")
        self.confidence = float(confidence)
        self.n_bins = check_int("n_bins", n_bins, min=2)
        self.bins = check_bins(bins, self.table.feature_names)
        self.perturbation = check_perturbation(perturbation, self.table.feature_names)
        self.batch_rows = check_int("batch_rows", batch_rows, min=1)
        self.max_values = check_int("max_values", max_values, min=2)
        self.max_size = check_int("max_size", max_size, min=1, allow_none=True)
        self.rule_form = check_choice("rule_form", rule_form, ("interval", "threshold"))
        self.max_rule_sets = check_int("max_rule_sets", max_rule_sets, min=1)
        self.strategy = check_choice("strategy", strategy, ("auto", "table", "sample"))
        self.binning = check_choice("binning", binning, BINNINGS)
        seed_value(random_state)  # validated now (a RandomState is drawn from at run time)
        self.random_state = random_state
        self.progress = check_bool("progress", progress)
        self.top_k = check_int("top_k", top_k, min=0)
        self.simultaneous = check_bool("simultaneous", simultaneous)
        self.favourable_class = favourable_class
        from ._score import make_scorer
        self.scorer = make_scorer(model, self.table, favourable_class=favourable_class)

    # ------------------------------------------------------------------
    def mine(self, theta: float | None = None) -> FrequentRuleSets:
        """Phase 1: the frequent rule sets (Algorithm 1)."""
        return frequent_rule_sets(self.table, self.sensitive, self.theta if theta is None else theta,
                                  n_bins=self.n_bins, bins=self.bins, max_values=self.max_values,
                                  max_size=self.max_size, rule_form=self.rule_form,
                                  max_rule_sets=self.max_rule_sets, binning=self.binning)

    def params(self) -> dict:
        return dict(theta=self.theta, error=self.error, confidence=self.confidence,
                    sample_thr=self.sample_thr, max_samples=self.max_samples, n_bins=self.n_bins,
                    threshold=self.threshold, random_state=self.random_state, sensitive=self.sensitive,
                    max_size=self.max_size, rule_form=self.rule_form, binning=self.binning,
                    favourable_class=self.favourable_class, model_input=self.scorer.describe(),
                    top_k=self.top_k, simultaneous=self.simultaneous,
                    fresh_confidence=self._fresh_confidence() ** 2)

    def _fresh_confidence(self) -> float:
        """Per-group confidence of the fresh re-estimates (Bonferroni-adjusted if simultaneous)."""
        if self.simultaneous and self.top_k > 1:
            return simultaneous_confidence(self.confidence, self.top_k)
        return self.confidence

    def run(self, stop=None, progress=None, *, n_jobs=None, stop_flag=None) -> TestSGDReport:
        """Mine, score every frequent rule set, re-estimate the top ones, rank.

        Returns a :class:`TestSGDReport`.

        Phase 2 runs in fixed blocks of rule sets through :func:`fairlens._parallel.run_chunks`
        (see :func:`score_rule_sets`): the answer is identical at every ``n_jobs`` and on every
        joblib backend, because rule set ``j`` draws from its own counter-based stream
        ``chunk_rng(base_seed(random_state), j, 0)`` (the fresh re-estimate from
        ``chunk_rng(..., j, 1)``). What one task carries: the bounds of one block of rule sets
        (two integers); the payload shipped once per worker holds the scorer (the census
        reference MLP pickles to about 0.25 MB), the data (2.3 MB for the 24,420 x 12
        census training rows), the packed row masks of the rule sets (7.8 MB for its 2,560
        rule sets) and the neighbourhood label table (0.44 MB). With the table strategy the
        439,560-row neighbourhood is itself scored in fixed blocks of 3,640 seeds (one model call
        of 65,520 rows per task).

        Parameters
        ----------
        n_jobs : int or None
            ``None`` = 1 (or the active ``joblib.parallel_config``), ``-1`` = all cores/workers;
            ``with joblib.parallel_config(backend="dask"):`` runs the blocks on a dask cluster.
        stop : None, threading.Event or zero-argument callable
            The one stop convention of fairlens (as ``MAFT.run(stop=...)``): checked
            between chunks of rule sets; when it fires the report holds the rule sets
            scored so far and ``report.stopped`` is True.
        progress : callable(done, total), optional
            Called after each chunk (default: a tqdm bar when ``progress=True``).
        stop_flag : callable, optional
            Deprecated alias of ``stop`` (DeprecationWarning).
        """
        stop_fn = resolve_stop(stop, stop_flag, "TestSGD.run")
        if progress is not None and not callable(progress):
            raise TypeError(f"progress must be None or a callable(done, total); got {progress!r}")
        t0 = time.perf_counter()
        fr = self.mine()
        t1 = time.perf_counter()
        bar = None
        if progress is None and self.progress:
            from tqdm.auto import tqdm
            bar = tqdm(total=len(fr), desc="TestSGD rule sets")

            def progress(done, total):
                bar.n = done
                bar.refresh()

        from .._parallel import base_seed, check_n_jobs

        n_jobs = check_n_jobs(n_jobs)
        seed = base_seed(seed_value(self.random_state))
        kw = dict(error_thr=self.error, sample_thr=self.sample_thr, max_samples=self.max_samples,
                  threshold=self.threshold, perturbation=self.perturbation, seed=seed,
                  batch_rows=self.batch_rows, n_jobs=n_jobs, stop=stop_fn)
        results, n_rows, table = score_rule_sets(
            self.scorer, self.table, fr.rule_sets, self.sensitive, bits=fr.bits, confidence=self.confidence,
            strategy=self.strategy, progress=progress, return_table=True, stream=0, **kw)
        if bar is not None:
            bar.close()
        stopped = any(r is None for r in results)
        if not stopped and self.top_k:
            results, n_fresh = self._refresh(fr, results, table, kw)
            n_rows += n_fresh
            stopped = any(r is None for r in results)
        results = [r for r in results if r is not None]
        t2 = time.perf_counter()
        acc = None
        if self.table.y is not None and len(self.table.y) == self.table.X.shape[0]:
            fav = np.asarray(self.scorer(self.table.X)) >= self.threshold
            acc = float(np.mean(fav == (self.table.y == self.favourable_class)))
        return TestSGDReport(_rank(results), fr, self.params(), t2 - t0, t1 - t0, t2 - t1, int(n_rows),
                             self.table.name, acc, stopped, tester=self)

    def _refresh(self, fr, results, table, kw):
        """Re-estimate the ``top_k`` of the selection ranking on the fresh streams ``(seed, j, 1)``."""
        finite = [j for j in range(len(results)) if np.isfinite(results[j].score)]
        order = sorted(finite, key=lambda j: (-results[j].score, str(results[j].rule_set)))[:self.top_k]
        if not order:
            return results, 0
        idx = np.asarray(order, dtype=np.int64)
        fresh, n_rows = score_rule_sets(
            self.scorer, self.table, [fr.rule_sets[j] for j in order], self.sensitive, bits=fr.bits[idx],
            keys=idx, stream=1, confidence=self._fresh_confidence(), label_table=table,
            strategy=self.strategy, **kw)
        out = list(results)
        for j, f in zip(order, fresh):
            out[j] = None if f is None else replace(results[j], fresh=f)
        return out, n_rows

    def score(self, rule_set: RuleSet, *, error: float | None = None, method: str = "batched",
              random_state=None, stop=None) -> ScoreResult | None:
        """Algorithm 2 for one rule set (e.g. re-estimate with a tighter ``error``).

        ``stop`` (None, a ``threading.Event`` or a callable) ends the sampling between
        rounds; the result is then ``None``.
        """
        if error is not None:
            _check_alg2_params(error, self.sample_thr, self.max_samples, name="error")
        return group_fairness_score(
            self.scorer, self.table, rule_set, self.sensitive, error_thr=self.error if error is None else error,
            confidence=self.confidence, sample_thr=self.sample_thr, max_samples=self.max_samples,
            threshold=self.threshold, perturbation=self.perturbation,
            random_state=self.random_state if random_state is None else random_state, method=method,
            stop=stop)

    def sampler(self) -> Sampler:
        return Sampler(self.table, self.sensitive, self.perturbation)
