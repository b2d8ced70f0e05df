"""``TestSGD(...).run()``: frequent rule sets + batched Algorithm 2, ranked report."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from ._rules import (FrequentRuleSets, RuleSet, as_table, frequent_rule_sets, N_BINS_DEFAULT,
                     MAX_CATEGORY_VALUES, _check_theta)
from ._score import (DEFAULT_MAX_SAMPLES, ScoreResult, Sampler, group_fairness_score, score_rule_sets,
                     z_value)

__all__ = ["TestSGD", "TestSGDReport"]


@dataclass
class TestSGDReport:
    """Rule sets ranked by group fairness score.

    Attributes
    ----------
    results : list of ScoreResult
        One per frequent rule set, sorted by decreasing score (NaN last).
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
        """One row per rule set, ranked by score."""
        rows = [{
            "rule_set": str(r.rule_set), "n_rules": len(r.rule_set), "support": r.support,
            "rate_in": r.rate_in, "rate_out": r.rate_out, "score": r.score, "margin": r.margin,
            "n_samples": r.n_samples, "converged": r.converged, "status": r.status,
        } for r in self.results]
        cols = ["rule_set", "n_rules", "support", "rate_in", "rate_out", "score", "margin",
                "n_samples", "converged", "status"]
        df = pd.DataFrame(rows, columns=cols)
        df.index.name = "rank"
        return df

    def top(self, k: int = 3) -> pd.DataFrame:
        """The ``k`` rule sets with the largest score."""
        return self.to_frame().head(int(k))

    def __getitem__(self, i) -> ScoreResult:
        return self.results[i]

    def plot(self, k: int = 10, ax=None):
        from .plots import plot_top_rule_sets
        return plot_top_rule_sets(self, k=k, ax=ax)

    def result_for(self, rule_set) -> ScoreResult:
        """The result of a rule set (a RuleSet or its printed form)."""
        key = str(rule_set)
        for r in self.results:
            if str(r.rule_set) == key:
                return r
        raise KeyError(f"rule set {key!r} is not in the report")

    def browse(self, **kw):
        """A :class:`RuleSetBrowser` over this report (needs ipywidgets)."""
        from .widget import RuleSetBrowser
        return RuleSetBrowser(self, **kw)

    def summary(self) -> pd.DataFrame:
        """One-line summary: time, number of rule sets, top score (Table 5 style)."""
        best = self.results[0] if self.results else None
        return pd.DataFrame([{
            "dataset": self.dataset_name, "theta": self.params["theta"],
            "n_rule_sets": self.n_rule_sets, "time_s": self.elapsed,
            "top_rule_set": str(best.rule_set) if best else None,
            "top_score": best.score if best else np.nan,
            "accuracy": self.accuracy,
        }])


def _rank(results):
    return sorted(results, key=lambda r: (-(r.score if np.isfinite(r.score) else -1.0), str(r.rule_set)))


class TestSGD:
    """Interpretable testing against subtle group discrimination (Zhang et al.).

    Phase 1 mines the frequent rule sets over the sensitive features
    (Algorithm 1, :func:`frequent_rule_sets`); phase 2 estimates each rule
    set's group fairness score with an error bound (Algorithm 2, batched
    :func:`score_rule_sets`) and ranks them.

    Parameters
    ----------
    model : classifier with ``predict_proba`` or callable ``X -> scores``
        Adapted once with :func:`fairlens.models.as_scorer`; the prediction
        is favourable (label ``l``) when the score is ``>= threshold``.
    dataset : fairlens Dataset
        The data ``D`` seeds and supports come from (the paper uses the
        training set; pass ``dataset.split()[0]`` for that).
    sensitive : list of str
        Sensitive features ``S`` (default: ``dataset.protected``).
    theta : float in (0, 1], default 0.05
        Support threshold.
    error : float > 0, default 0.05
        ``error_thr`` of Algorithm 2.
    confidence : float in (0, 1), default 0.95
        ``delta`` per group; the reported score has confidence ``delta**2``.
    sample_thr : int, default 1000
        No stop before ``num > sample_thr``.
    max_samples : int, default 100000
        Cap on ``num`` per rule set (not in the paper); rule sets that hit it
        are flagged ``converged=False``.
    n_bins : int, default 10
        ``K`` equal-width bins of continuous/integer features.
    bins : dict, optional
        Per-feature bin count or explicit edges.
    max_size, rule_form, max_rule_sets :
        Passed to :func:`frequent_rule_sets` (largest rule set, "interval" or
        "threshold" rules for binned features, safety cap).
    perturbation : float or dict, optional
        ``s_pert`` override (default 1 for integer/categorical, 0.01 for continuous).
    threshold : float, default 0.5
    batch_rows : int, default 65536
        Rows per model call.
    favourable_class : int, default 1
        The label ``l`` whose rate is compared (fairlens' ``y = 1`` is the good
        outcome; pass 0 to count e.g. "reoffends" on COMPAS as the paper does).
    strategy : {"auto", "table", "sample"}
        How the batched Algorithm 2 gets labels (see :func:`score_rule_sets`);
        all give identical numbers.
    random_state : int, optional
    """

    __test__ = False

    def __init__(self, model, dataset, sensitive: Sequence[str] | None = None, theta: float = 0.05,
                 error: float = 0.05, confidence: float = 0.95, sample_thr: int = 1000,
                 random_state=None, *, max_samples: int = DEFAULT_MAX_SAMPLES, n_bins: int = N_BINS_DEFAULT,
                 bins=None, perturbation=None, threshold: float = 0.5, batch_rows: int = 65_536,
                 max_values: int = MAX_CATEGORY_VALUES, max_size: int | None = None,
                 rule_form: str = "interval", max_rule_sets: int = 2_000_000, strategy: str = "auto",
                 favourable_class: int = 1, progress: bool = False):
        self.model = model
        self.dataset = dataset
        self.table = as_table(dataset)
        if sensitive is None:
            sensitive = list(getattr(dataset, "protected", []) or [])
        if isinstance(sensitive, str):
            sensitive = [sensitive]
        self.sensitive = list(sensitive)
        if not self.sensitive:
            raise ValueError("sensitive must list at least one feature (dataset.protected is empty)")
        for f in self.sensitive:
            self.table.index_of(f)  # raises a clear ValueError
        _check_theta(theta)
        if not (isinstance(error, (int, float, np.floating)) and float(error) > 0):
            raise ValueError(f"error must be > 0 (the error_thr of Algorithm 2, e.g. 0.05); got {error}")
        z_value(confidence)
        if int(max_samples) <= int(sample_thr):
            raise ValueError(f"max_samples ({max_samples}) must exceed sample_thr ({sample_thr})")
        self.theta = float(theta)
        self.error = float(error)
        self.confidence = float(confidence)
        self.sample_thr = int(sample_thr)
        self.max_samples = int(max_samples)
        self.n_bins = int(n_bins)
        self.bins = bins
        self.perturbation = perturbation
        self.threshold = float(threshold)
        self.batch_rows = int(batch_rows)
        self.max_values = int(max_values)
        self.max_size = max_size
        self.rule_form = rule_form
        self.max_rule_sets = int(max_rule_sets)
        if strategy not in ("auto", "table", "sample"):
            raise ValueError(f"strategy must be 'auto', 'table' or 'sample', got {strategy!r}")
        self.strategy = strategy
        self.random_state = random_state
        self.progress = progress
        self.favourable_class = favourable_class
        from ..models import as_scorer
        self.scorer = as_scorer(model, favourable_class=favourable_class)

    # ------------------------------------------------------------------
    def mine(self, theta: float | None = None) -> FrequentRuleSets:
        """Phase 1: the frequent rule sets (Algorithm 1)."""
        return frequent_rule_sets(self.table, self.sensitive, self.theta if theta is None else theta,
                                  n_bins=self.n_bins, bins=self.bins, max_values=self.max_values,
                                  max_size=self.max_size, rule_form=self.rule_form,
                                  max_rule_sets=self.max_rule_sets)

    def params(self) -> dict:
        return dict(theta=self.theta, error=self.error, confidence=self.confidence,
                    sample_thr=self.sample_thr, max_samples=self.max_samples, n_bins=self.n_bins,
                    threshold=self.threshold, random_state=self.random_state, sensitive=self.sensitive,
                    max_size=self.max_size, rule_form=self.rule_form)

    def run(self, stop_flag=None, progress=None) -> TestSGDReport:
        """Mine, score every frequent rule set, rank. Returns a :class:`TestSGDReport`."""
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

        results, n_rows = score_rule_sets(
            self.scorer, self.table, fr.rule_sets, self.sensitive,
            mask_fn=lambda idx: fr.masks(idx), error_thr=self.error, confidence=self.confidence,
            sample_thr=self.sample_thr, max_samples=self.max_samples, threshold=self.threshold,
            perturbation=self.perturbation, random_state=self.random_state, batch_rows=self.batch_rows,
            strategy=self.strategy, progress=progress, stop_flag=stop_flag)
        if bar is not None:
            bar.close()
        stopped = any(r is None for r in results)
        results = [r for r in results if r is not None]
        t2 = time.perf_counter()
        acc = None
        if self.table.y is not None and len(self.table.y) == self.table.X.shape[0]:
            fav = np.asarray(self.scorer(self.table.X)) >= self.threshold
            acc = float(np.mean(fav == (self.table.y == self.favourable_class)))
        return TestSGDReport(_rank(results), fr, self.params(), t2 - t0, t1 - t0, t2 - t1, int(n_rows),
                             self.table.name, acc, stopped, tester=self)

    def score(self, rule_set: RuleSet, *, error: float | None = None, method: str = "batched",
              random_state=None) -> ScoreResult:
        """Algorithm 2 for one rule set (e.g. re-estimate with a tighter ``error``)."""
        return group_fairness_score(
            self.scorer, self.table, rule_set, self.sensitive, error_thr=self.error if error is None else error,
            confidence=self.confidence, sample_thr=self.sample_thr, max_samples=self.max_samples,
            threshold=self.threshold, perturbation=self.perturbation,
            random_state=self.random_state if random_state is None else random_state, method=method)

    def sampler(self) -> Sampler:
        return Sampler(self.table, self.sensitive, self.perturbation)
