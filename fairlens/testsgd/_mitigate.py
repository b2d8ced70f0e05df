"""Discrimination mitigation guided by a rule set (TestSGD RQ3, Table 7)."""
from __future__ import annotations

import numbers
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._base import Interval, Options, Result, check_progress, resolve_random_state, strict_keywords, validated
from .._validation import check_bool, check_choice, check_int, check_probability, check_real, check_stop
from ._rules import RuleSet, as_table
from ._score import DEFAULT_MAX_SAMPLES, Sampler, group_fairness_score, make_scorer
from .plots import plot_mitigation

__all__ = ["MitigationResult", "mitigate", "generate_group_samples"]


@dataclass
class MitigationResult(Result):
    """Retraining with growing numbers of generated samples.

    Parameters
    ----------
    rule_set : RuleSet
        The discriminated group.
    target_label : int
        Label given to the generated samples (the one the model under-predicts
        inside the group).
    before : dict
        ``accuracy, score, rate_in, rate_out, margin, pred_rate, constant`` of the original
        model, and ``base_rate``: the share of favourable labels in the test data (the
        accuracy of a model that predicts "favourable" for everybody).
    steps : pandas.DataFrame
        One row per amount: ``n_added, accuracy, score, rate_in, rate_out, margin,
        pred_rate, constant``. ``pred_rate`` is the share of test rows the retrained model
        predicts favourable; ``constant`` is True when that is 0 or 1: the retraining
        produced a model that gives everybody the same decision, whose score is 0 (or NaN)
        trivially and whose accuracy is the base rate (or its complement) -- a collapse, not a
        mitigation.
    best : int or None
        Row of ``steps`` with the lowest score among the non-constant models whose accuracy
        dropped by at most ``max_accuracy_drop`` (None if none qualifies).
    best_model : estimator or None
        The retrained model of row ``best``.
    elapsed : float
        Wall time in seconds.
    max_accuracy_drop : float
        Largest accepted loss of test accuracy.
    params : dict
        The parameters of the run.
    random_state : int or None
        The integer seed actually used (None: deterministic).
    stopped : bool
        True when the run was cut short by ``stop``.
    baseline : dict or None
        With ``baseline=True``: the same retraining with nothing added (the columns of a
        ``steps`` row, ``n_added`` 0), which separates what the added samples do from what
        retraining alone does.

    Examples
    --------
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from fairlens.datasets import load_german_credit
    >>> from fairlens.testsgd import frequent_rule_sets, mitigate
    >>> train, test = load_german_credit().split(test_size=0.3, random_state=0)
    >>> model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(train.X, train.y)
    >>> rs = frequent_rule_sets(train, ["sex"], theta=0.2).rule_sets[0]
    >>> res = mitigate(model, train, test, rs, ["sex"], amounts=[20, 50], random_state=0)
    >>> str(res.rule_set), res.target_label, len(res.steps), res.best
    ('sex=female', 0, 2, 0)
    >>> int(res.after["n_added"]), bool(res.after["constant"])
    (20, False)
    >>> bool(res.steps["constant"].any()), round(res.before["base_rate"], 3)
    (False, 0.7)
    """

    rule_set: RuleSet
    target_label: int
    before: dict
    steps: pd.DataFrame
    best: int | None
    best_model: object
    elapsed: float = field()
    max_accuracy_drop: float = 0.01
    params: dict = field(default_factory=dict)
    random_state: int | None = None
    stopped: bool = False
    baseline: dict | None = None

    title = "TestSGD mitigation by retraining"

    @property
    def n_constant(self) -> int:
        """Retrained models (steps) that predict the same decision for every test row."""
        return int(self.steps["constant"].sum()) if "constant" in self.steps else 0

    @property
    def after(self) -> dict | None:
        """The chosen step (``steps`` row ``best``) as a dict, or None."""
        return None if self.best is None else self.steps.iloc[self.best].to_dict()

    def to_frame(self) -> pd.DataFrame:
        """The original model (``n_added`` 0) and one row per retraining.

        Returns
        -------
        pandas.DataFrame
            Columns ``n_added, accuracy, score, rate_in, rate_out, margin``.

        Examples
        --------
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import frequent_rule_sets, mitigate
        >>> train, test = load_german_credit().split(test_size=0.3, random_state=0)
        >>> model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(train.X, train.y)
        >>> rs = frequent_rule_sets(train, ["sex"], theta=0.2).rule_sets[0]
        >>> res = mitigate(model, train, test, rs, ["sex"], amounts=[20, 50], random_state=0)
        >>> res.to_frame()[["n_added", "accuracy", "score"]].round(3)
           n_added  accuracy  score
        0        0     0.747  0.087
        1       20     0.747  0.087
        2       50     0.733  0.108
        """
        b = pd.DataFrame([{"n_added": 0, **self.before}])
        return pd.concat([b, self.steps], ignore_index=True)

    def summary(self) -> pd.DataFrame:
        """One row: the rule set, score and accuracy before and after the chosen retraining.

        Returns
        -------
        pandas.DataFrame
            One row (NaN after-columns when no step qualifies).

        Examples
        --------
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import frequent_rule_sets, mitigate
        >>> train, test = load_german_credit().split(test_size=0.3, random_state=0)
        >>> model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(train.X, train.y)
        >>> rs = frequent_rule_sets(train, ["sex"], theta=0.2).rule_sets[0]
        >>> res = mitigate(model, train, test, rs, ["sex"], amounts=[20, 50], random_state=0)
        >>> row = res.summary().iloc[0]
        >>> row["rule_set"], int(row["n_steps"]), float(row["n_added"])
        ('sex=female', 2, 20.0)
        """
        a = self.after or {}
        b = self.baseline or {}
        nan = float("nan")
        return pd.DataFrame([{
            "rule_set": str(self.rule_set), "target_label": int(self.target_label),
            "n_steps": int(len(self.steps)), "n_constant": self.n_constant,
            "score_before": self.before.get("score", nan),
            "accuracy_before": self.before.get("accuracy", nan), "base_rate": self.before.get("base_rate", nan),
            "score_baseline": b.get("score", nan), "accuracy_baseline": b.get("accuracy", nan),
            "n_added": a.get("n_added", nan),
            "score_after": a.get("score", nan), "accuracy_after": a.get("accuracy", nan),
        }])

    def plot(self, ax=None):
        """Score and accuracy against the number of added samples; returns the axes.

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
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import frequent_rule_sets, mitigate
        >>> train, test = load_german_credit().split(test_size=0.3, random_state=0)
        >>> model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(train.X, train.y)
        >>> rs = frequent_rule_sets(train, ["sex"], theta=0.2).rule_sets[0]
        >>> res = mitigate(model, train, test, rs, ["sex"], amounts=[20, 50], random_state=0)
        >>> ax = res.plot()
        """
        return plot_mitigation(self, ax=ax)


@strict_keywords(renamed={"sensitive": "protected", "dataset": "data"})
@validated({
    "model": "no_validation", "data": "no_validation", "rule_set": "no_validation",
    "protected": "no_validation", "n": [Interval(numbers.Integral, 0, None)], "label": "no_validation",
    "threshold": [Interval(numbers.Real, 0, 1)], "perturbation": "no_validation",
    "random_state": ["random_state"], "max_draws": [Interval(numbers.Integral, 1, None)],
})
def generate_group_samples(model, data, rule_set: RuleSet, protected, n: int, label: int, *,
                           threshold: float = 0.5, perturbation=None, random_state=None,
                           max_draws: int = 2_000_000):
    """``n`` section-4.3 samples satisfying ``rule_set`` that the model labels ``label``.

    Draws in batches from ``Sample(D, R)`` and keeps the rows whose prediction
    is ``label`` (the paper's "generated instances with the opposite label").
    Returns fewer than ``n`` rows only if ``max_draws`` draws did not suffice.

    Parameters
    ----------
    model : estimator, pipeline or callable
        The model whose labels select the samples.
    data : fairlens Dataset
        The seeds ``D``.
    rule_set : RuleSet
        The group ``R`` the samples satisfy.
    protected : list of str
        Protected features (never perturbed).
    n : int >= 0
        Samples wanted.
    label : {0, 1}
        The predicted label to keep.
    threshold : float in [0, 1], default 0.5
        A score ``>= threshold`` is label 1.
    perturbation : float > 0 or dict, optional
        ``s_pert`` override.
    random_state : None, int, numpy Generator or RandomState
        Resolved once by :func:`fairlens._base.resolve_random_state`.
    max_draws : int >= 1
        Cap on draws.

    Returns
    -------
    ndarray of shape (m, d), m <= n
        Encoded rows.

    Raises
    ------
    ValueError
        If no row satisfies ``rule_set`` or a parameter is out of range (named).

    Examples
    --------
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from fairlens.datasets import load_german_credit
    >>> from fairlens.testsgd import frequent_rule_sets, generate_group_samples
    >>> data = load_german_credit()
    >>> model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(data.X, data.y)
    >>> rs = frequent_rule_sets(data, ["sex"], theta=0.2).rule_sets[0]
    >>> X = generate_group_samples(model, data, rs, ["sex"], 5, 1, random_state=0)
    >>> X.shape, bool(rs.mask(X).all()), bool((model.predict(X) == 1).all())
    ((5, 21), True, True)
    """

    n = check_int("n", n, min=0)
    if isinstance(label, (str, bytes)) or label not in (0, 1):
        raise ValueError(f"label must be 0 or 1 (the predicted label to keep); got {label!r}")
    threshold = check_probability("threshold", threshold)
    max_draws = check_int("max_draws", max_draws, min=1)
    table = as_table(data)
    scorer = make_scorer(model, table)
    rng = np.random.default_rng(resolve_random_state(random_state))
    sampler = Sampler(table, protected, perturbation)
    seeds = np.flatnonzero(rule_set.mask(table.X))
    if seeds.size == 0:
        raise ValueError(f"no row of the data satisfies the rule set {rule_set}")
    out, drawn = [], 0
    have = 0
    while have < n and drawn < max_draws:
        b = int(min(max(4 * (n - have), 1024), max_draws - drawn))
        rows = sampler.sample([seeds], np.zeros(b, np.int64), rng.random((b, 3)))
        drawn += b
        keep = (np.asarray(scorer(rows)) >= threshold).astype(int) == int(label)
        out.append(rows[keep])
        have += int(keep.sum())
    X = np.concatenate(out)[:n] if out else np.zeros((0, table.X.shape[1]))
    return X


def _accuracy(model, X, y, threshold, table=None):
    s = make_scorer(model, table)
    return float(np.mean((np.asarray(s(X)) >= threshold).astype(int) == np.asarray(y)))


def _decisions(model, X, y, threshold, table=None):
    """Accuracy, share predicted favourable and whether that share is 0 or 1 (a constant model)."""
    pred = (np.asarray(make_scorer(model, table)(X)) >= threshold).astype(int)
    rate = float(pred.mean()) if pred.size else float("nan")
    return dict(accuracy=float(np.mean(pred == np.asarray(y))), pred_rate=rate,
                constant=bool(pred.size and (rate == 0.0 or rate == 1.0)))


#: How ``mitigate`` retrains (``retrain=``).
RETRAIN = ("scratch", "continue")


def _continue_fit(model, own):
    """``fit(X, y)`` that continues training a COPY of ``model`` from its fitted weights.

    The paper: "we retrain the original model with these additional instances". The final
    estimator of the pipeline (or the model) must have scikit-learn's ``warm_start``; the
    preprocessing steps of a pipeline keep their fitted state (the weights were learned on their
    output), only the final estimator is fitted again, starting from its current weights.
    """
    import copy

    last = model.steps[-1][1] if hasattr(model, "steps") else model
    if not hasattr(last, "get_params") or "warm_start" not in last.get_params():
        raise ValueError(f"retrain='continue' needs a model (or pipeline whose last step) has scikit-learn's "
                         f"warm_start parameter; {type(last).__name__} has none. Use retrain='scratch' or pass "
                         "fit=callable(X, y) -> fitted model")

    def fit(X, y):
        m = copy.deepcopy(model)
        est = m.steps[-1][1] if hasattr(m, "steps") else m
        est.set_params(warm_start=True)
        Xin, yin = own.model_input(X), own.model_labels(y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if hasattr(m, "steps") and len(m.steps) > 1:
                est.fit(m[:-1].transform(Xin), yin)
            else:
                est.fit(Xin, yin)
        return m

    return fit


def _fit_or_stop(fit, X, y, stop_fn, poll=0.05):
    """``fit(X, y)`` in a daemon thread, polled every ``poll`` s: the fitted model, or
    ``None`` as soon as ``stop_fn()`` is true (the abandoned fit's result is discarded)."""
    import threading

    box = {}

    def run():
        try:
            box["model"] = fit(X, y)
        except BaseException as exc:  # re-raised in the caller
            box["error"] = exc

    worker = threading.Thread(target=run, name="fairlens-mitigate-fit", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(poll)
        if worker.is_alive() and stop_fn():
            return None
    if "error" in box:
        raise box["error"]
    return box["model"]


@strict_keywords(renamed={"sensitive": "protected"})
@validated({
    "model": "no_validation", "train": "no_validation", "test": "no_validation", "rule_set": "no_validation",
    "protected": "no_validation", "amounts": "no_validation",
    "max_accuracy_drop": [Interval(numbers.Real, 0, 1)], "fit": [None, "callable"],
    "retrain": [Options(*RETRAIN)], "baseline": ["boolean"],
    "error": [Interval(numbers.Real, 0, 1, closed="right")],
    "confidence": [Interval(numbers.Real, 0, 1, closed="neither")],
    "sample_thr": [Interval(numbers.Integral, 1, None)], "max_samples": [Interval(numbers.Integral, 1, None)],
    "threshold": [Interval(numbers.Real, 0, 1)], "perturbation": "no_validation",
    "random_state": ["random_state"], "progress": ["progress"], "stop": ["stop"],
})
def mitigate(model, train, test, rule_set: RuleSet, protected, *, amounts=None, max_accuracy_drop: float = 0.01,
             fit=None, retrain: str = "scratch", baseline: bool = False, error: float = 0.05,
             confidence: float = 0.95, sample_thr: int = 1000,
             max_samples: int = DEFAULT_MAX_SAMPLES, threshold: float = 0.5, perturbation=None,
             random_state=None, progress=None, stop=None) -> MitigationResult:
    """Mitigate the discrimination of ``rule_set`` by retraining (RQ3).

    Generates samples satisfying ``rule_set`` that the ORIGINAL model labels
    with the label it under-predicts in the group (favourable if
    ``rate_in < rate_out``, else unfavourable), adds the first ``k`` of them
    with that label to the training data for ``k`` in ``amounts`` (default: 6
    geometric steps from 50 to 10% of the training size), retrains, and
    re-measures accuracy on ``test`` and the group fairness score of
    ``rule_set`` (Algorithm 2 on ``train``, same seed). The best trade-off is
    the lowest score whose accuracy drop is at most ``max_accuracy_drop``, among the
    retrained models that do not predict the same decision for everybody (a constant model
    scores 0 trivially: it is flagged in ``steps["constant"]``, never chosen).

    Retraining (the paper says "retrain the original model with these additional
    instances"): ``fit(X, y) -> model`` if given; else ``retrain="scratch"`` (default):
    ``sklearn.base.clone(model).fit`` (same hyper-parameters and seed, trained from scratch),
    or ``retrain="continue"``: a copy of the original model trained further from its fitted
    weights (scikit-learn's ``warm_start``; a pipeline's preprocessing keeps its fitted state).
    ``baseline=True`` also retrains with nothing added (``result.baseline``).

    A model fitted on the readable frame (or on the readable target labels) is refit in
    that same form (:meth:`fairlens.models.Scorer.model_input` / ``model_labels``); a
    custom ``fit`` receives the encoded ``X`` and 0/1 ``y``.

    ``stop`` (None, a ``threading.Event`` or a zero-argument callable) is checked before
    each retraining and, every 50 ms, during it: a retraining in flight is then abandoned
    (it finishes in a daemon thread and is discarded), so a stop takes effect at once; the
    steps done are kept (``result.stopped`` is True).

    Parameters
    ----------
    model : scikit-learn estimator or pipeline
        The model to retrain (cloned unless ``fit`` is given).
    train, test : fairlens Dataset
        Retraining data (and the seeds of the generated samples) and the accuracy data.
    rule_set : RuleSet
        The discriminated group.
    protected : list of str
        Protected features (never perturbed).
    amounts : list of int, optional
        Numbers of generated samples to add.
    max_accuracy_drop : float in [0, 1], default 0.01
        Largest accepted loss of test accuracy.
    fit : callable, optional
        ``fit(X, y) -> fitted model`` on encoded ``X`` and 0/1 ``y`` (overrides ``retrain``).
    retrain : {"scratch", "continue"}, default "scratch"
        See above.
    baseline : bool, default False
        Also retrain once with no sample added (``result.baseline``).
    error, confidence, sample_thr, max_samples, threshold, perturbation
        Algorithm 2's parameters (see :func:`group_fairness_score`).
    random_state : None, int, numpy Generator or RandomState
        Resolved once (:func:`fairlens._base.resolve_random_state`) and used for every score
        and for the generated samples; recorded as ``result.random_state``.
    progress : None, bool or callable, optional
        ``True`` shows a ``tqdm.auto`` bar; a callable is called as
        ``progress(stage, done, total)`` after each retraining (``stage="retrainings"``).  A
        callable that cannot take three positional arguments is refused with a ``TypeError``
        before any work.
    stop : None, threading.Event or zero-argument callable
        See above.

    Returns
    -------
    MitigationResult
        The score and accuracy before and after each retraining, and the best step.

    Raises
    ------
    TypeError, ValueError
        For data without labels, a model that cannot be cloned without ``fit``, a model without
        ``warm_start`` under ``retrain="continue"`` or a bad parameter (named in the message).

    Examples
    --------
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from fairlens.datasets import load_german_credit
    >>> from fairlens.testsgd import frequent_rule_sets, mitigate
    >>> train, test = load_german_credit().split(test_size=0.3, random_state=0)
    >>> model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(train.X, train.y)
    >>> rs = frequent_rule_sets(train, ["sex"], theta=0.2).rule_sets[0]
    >>> res = mitigate(model, train, test, rs, ["sex"], amounts=[20, 50], random_state=0)
    >>> res.target_label  # the model over-favours the group: add unfavourable samples
    0
    >>> res.steps[["n_added", "score"]].round(3)
       n_added  score
    0       20  0.087
    1       50  0.108
    """
    stop_fn = check_stop(stop)
    stop_given = stop is not None
    report = check_progress(progress, desc="mitigate")
    seed = resolve_random_state(random_state)
    t0 = time.perf_counter()
    tr, te = as_table(train), as_table(test)
    if tr.y is None or te.y is None:
        raise ValueError("train and test must carry labels y for retraining and accuracy")
    n = tr.X.shape[0]
    if amounts is None:
        top = max(50, int(0.1 * n))
        amounts = np.unique(np.geomspace(50, top, 6).astype(int))

    if isinstance(amounts, (str, bytes)) or np.ndim(amounts) != 1 or len(amounts) == 0:
        raise TypeError(f"amounts must be a non-empty list of positive integers; got {amounts!r}")
    amounts = [check_int("amounts[i]", int(a) if isinstance(a, np.integer) else a, min=1)
               for a in amounts]
    max_accuracy_drop = check_real("max_accuracy_drop", max_accuracy_drop, min=0.0, max=1.0)
    custom_fit = fit is not None
    if fit is not None and not callable(fit):
        raise TypeError(f"fit must be None or a callable fit(X, y) -> model; got {fit!r}")

    check_choice("retrain", retrain, RETRAIN)
    check_bool("baseline", baseline)
    if fit is None:
        from sklearn.base import clone

        if not hasattr(model, "get_params"):
            raise TypeError(f"{type(model).__name__} is not a scikit-learn estimator and cannot be cloned for "
                            "retraining; pass fit=callable(X, y) -> fitted model")

        own = make_scorer(model, train)  # the model's own input form and class labels
        if retrain == "continue":
            fit = _continue_fit(model, own)
        else:
            def fit(X, y):
                m = clone(model)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    return m.fit(own.model_input(X), own.model_labels(y))

    kw = dict(error=error, confidence=confidence, sample_thr=sample_thr, max_samples=max_samples,
              threshold=threshold, perturbation=perturbation, random_state=seed)
    s0 = group_fairness_score(model, tr, rule_set, protected, **kw)
    before = dict(score=s0.score, rate_in=s0.rate_in, rate_out=s0.rate_out, margin=s0.margin,
                  **_decisions(model, te.X, te.y, threshold, te),
                  base_rate=float(np.mean(np.asarray(te.y) == 1)))
    label = 1 if s0.rate_in < s0.rate_out else 0
    extra = generate_group_samples(model, tr, rule_set, protected, max(amounts), label, threshold=threshold,
                                   perturbation=perturbation, random_state=seed)

    def step(k):
        """Retrain with the first k generated samples; the step's row and model (None if stopped)."""
        k = min(k, extra.shape[0])
        X = np.vstack([tr.X, extra[:k]])
        y = np.concatenate([tr.y, np.full(k, label, dtype=tr.y.dtype)])
        m = _fit_or_stop(fit, X, y, stop_fn) if stop_given else fit(X, y)
        if m is None:  # stopped during the retraining: that step is abandoned
            return None, None
        s = group_fairness_score(m, tr, rule_set, protected, **kw)
        return dict(n_added=k, score=s.score, rate_in=s.rate_in, rate_out=s.rate_out, margin=s.margin,
                    **_decisions(m, te.X, te.y, threshold, te)), m

    base_row = None
    if baseline and not stop_fn():
        base_row, _ = step(0)
    rows, models = [], []
    for i, k in enumerate(amounts):
        if stop_fn():
            break
        row, m = step(k)
        if row is None:
            break
        rows.append(row)
        models.append(m)
        if report is not None:
            report("retrainings", i + 1, len(amounts))
    cols = ["n_added", "accuracy", "score", "rate_in", "rate_out", "margin", "pred_rate", "constant"]
    steps = pd.DataFrame(rows, columns=cols)
    steps["constant"] = steps["constant"].astype(bool)
    ok = steps.index[(steps["accuracy"] >= before["accuracy"] - max_accuracy_drop) & ~steps["constant"]]
    best = None if len(ok) == 0 else int(steps.loc[ok, "score"].idxmin())
    params = dict(protected=list(protected) if not isinstance(protected, str) else [protected],
                  amounts=list(amounts), max_accuracy_drop=max_accuracy_drop, error=error,
                  confidence=confidence, sample_thr=sample_thr, max_samples=max_samples, threshold=threshold,
                  retrain="custom fit" if custom_fit else retrain, baseline=bool(baseline))
    return MitigationResult(rule_set, label, before, steps, best, None if best is None else models[best],
                            time.perf_counter() - t0, max_accuracy_drop, params=params, random_state=seed,
                            stopped=len(rows) < len(amounts), baseline=base_row)
