"""Discrimination measurement and mitigation by retraining."""
from __future__ import annotations

import copy
import numbers
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fairlens._base import Result, resolve_random_state, strict_keywords
from fairlens._validation import check_bool, check_choice, check_int, check_probability

from .._base import Interval, Options, validated
from .._parallel import Payload, check_n_jobs, chunk_rng, fixed_chunks, run_chunks
from ..models import Scorer
from ._problem import _Problem
from ._result import FairnessTestResult
from ._utils import BLOCK_ROWS, CountingScorer, resolve_scorer, wilson_interval
from .plots import plot_mitigation

__all__ = ["discriminatory_mask", "discrimination_rate", "retrain_with_instances", "RetrainResult", "MAX_SAMPLES"]


#: Keywords renamed in earlier releases: passing the old one is a ``TypeError`` naming the new.
_RENAMED = {"dataset": "data", "favourable_class": "favourable"}

#: Largest ``n_samples`` of :func:`discrimination_rate`: the Wilson interval is then at
#: most +-0.0003 wide, more samples only cost time.  Above it the call is refused.
MAX_SAMPLES = 10**7


def _mask(pb, scorer, X):
    """Definition 2.1 for every row of ``X`` in bounded memory.

    Few protected combinations: blocks of rows, each scored with all its similar
    instances in one call (the layout of the search engines).  Many combinations: for
    each block of rows, the combinations are scanned in blocks and a row leaves the scan
    at its first differing counterpart -- the same answer, in memory bounded by
    ``BLOCK_ROWS`` rows of the model's input.
    """
    n, d, C = X.shape[0], pb.d, pb.C
    out = np.zeros(n, dtype=bool)
    if n == 0:
        return out
    if C <= max(1, BLOCK_ROWS // 4):
        per = max(1, BLOCK_ROWS // C)
        for s in range(0, n, per):
            S = pb.similar(X[s : s + per])
            sc = scorer(S.reshape(-1, d)).reshape(-1, C)
            out[s : s + per] = np.any((sc[:, 1:] > 0.5) != (sc[:, :1] > 0.5), axis=1)
        return out
    rows_per = max(1, BLOCK_ROWS // 64)
    P = pb.prot_idx
    for s in range(0, n, rows_per):
        Xb = X[s : s + rows_per]
        y0 = scorer(Xb) > 0.5
        live = np.arange(Xb.shape[0])
        c0 = 0
        while live.size and c0 < C:
            cb = max(1, BLOCK_ROWS // live.size)  # bounded rows per call, more combinations as rows leave
            combos = pb.combos_block(c0, min(C, c0 + cb))
            c0 += combos.shape[0]
            k = combos.shape[0]
            R = np.repeat(Xb[live], k, axis=0).reshape(live.size, k, d)
            R[:, :, P] = combos[None, :, :]
            own = np.all(R[:, :, P] == Xb[live][:, None, P], axis=2)
            lab = (scorer(R.reshape(-1, d)) > 0.5).reshape(live.size, k)
            hit = np.any((lab != y0[live][:, None]) & ~own, axis=1)
            out[s + live[hit]] = True
            live = live[~hit]
    return out


@strict_keywords(renamed=_RENAMED)
@validated({
    "model": "no_validation", "data": "no_validation", "X": "no_validation", "protected": "no_validation",
    "favourable": "no_validation",
})
def discriminatory_mask(model, data, X, protected=None, *, favourable=1):
    """Which rows of ``X`` are individual discriminatory instances (Definition 2.1).

    A row is discriminatory if some other combination of the protected
    attributes' values (all other attributes unchanged) changes the predicted
    label ``[f(x) > 0.5]``.  Any number of combinations is handled in bounded
    memory (blocks of combinations, each row stops at its first counterpart).

    Parameters
    ----------
    model : estimator, pipeline or callable
        Adapted once with :func:`fairlens.models.as_scorer` (readable-frame
        pipelines, encoded-DataFrame or array models, callables).
    data : Dataset
        The dataset (encoding, bounds, protected attributes).
    X : array (n, d) or DataFrame
        Rows in the dataset's encoded space (a DataFrame is aligned by column
        name; a readable frame is encoded through the dataset), within ``data.bounds``.
    protected : list of str or int, optional
        Default ``data.protected``.
    favourable : default=1
        The model class that is the favourable outcome.

    Returns
    -------
    ndarray of bool (n,)
        True where row ``i`` of ``X`` is an individual discriminatory instance.

    Raises
    ------
    TypeError, ValueError
        Rows outside the bounds or of another encoding, unknown protected attributes.

    Examples
    --------
    >>> from fairlens.maft import discriminatory_mask
    >>> from fairlens.datasets import load_dataset
    >>> from sklearn.linear_model import LogisticRegression
    >>> census = load_dataset("census", encoding="benchmark")
    >>> model = LogisticRegression(max_iter=500).fit(census.X[:2000], census.y[:2000])
    >>> discriminatory_mask(model, census, census.X[:5], ["sex"]).shape
    (5,)
    """
    dataset, favourable_class = data, favourable
    pb = _Problem(dataset, protected)
    X = pb.check_rows(X, "X")
    if X.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    scorer = CountingScorer(resolve_scorer(model, dataset, favourable_class))
    return _mask(pb, scorer, X)


def _uniform_grid(pb, n, rng):
    lo = np.ceil(pb.lo)
    hi = np.floor(pb.hi)
    return lo + np.floor(rng.random((n, pb.d)) * (hi - lo + 1.0))


#: Samples per chunk of :func:`discrimination_rate`, the unit of parallel work.  A constant:
#: chunk ``k`` draws its samples from the stream ``(random_state, k)``, so the estimate is the
#: same at every ``n_jobs``.
RATE_CHUNK = 16384


def _rate_chunk(payload, chunk):
    """Discriminatory samples among chunk ``(k, (start, stop))`` (a parallel task)."""

    k, (a, e) = chunk
    pb = payload.problem
    rng = chunk_rng(payload.seed, k)
    if payload.sample == "domain":
        X = _uniform_grid(pb, e - a, rng)
    else:
        X = pb.pool[rng.integers(pb.pool.shape[0], size=e - a)]
    return int(_mask(pb, CountingScorer(payload.scorer), np.ascontiguousarray(X)).sum())


@strict_keywords(renamed=_RENAMED)
@validated({
    "model": "no_validation", "data": "no_validation", "protected": "no_validation",
    "n_samples": [Interval(numbers.Integral, 1, None)], "random_state": ["random_state"],
    "confidence": [Interval(numbers.Real, 0, 1, closed="neither")], "sample": [Options("domain", "data")],
    "favourable": "no_validation", "n_jobs": ["n_jobs"],
})
def discrimination_rate(
    model, data, protected=None, n_samples=10000, random_state=0, confidence=0.95, sample="domain",
    *, favourable=1, n_jobs=None,
):
    """Share of random inputs that are individual discriminatory instances.

    Parameters
    ----------
    model : estimator, pipeline or callable
        As :func:`discriminatory_mask`.
    data : Dataset
        The dataset (encoding, bounds, protected attributes).
    protected : list of str or int, optional
        Default ``data.protected``.
    n_samples : int, default=10000
        Number of random inputs, at most :data:`MAX_SAMPLES` (10**7; the interval
        is then +-0.0003 at most).  They are drawn and checked in bounded blocks, with
        the same answer as one block for a given ``random_state``.
    random_state : int, RandomState, Generator or None, default=0
        Resolved once by :func:`fairlens._base.resolve_random_state`; the samples of chunk
        ``k`` (``RATE_CHUNK`` = 16,384 samples per chunk) come from the counter-based stream
        ``fairlens._parallel.chunk_rng(seed, k)``.
    confidence : float in (0, 1), default=0.95
        Level of the Wilson interval.
    sample : {"domain", "data"}
        ``"domain"``: uniform on the integer grid of ``dataset.bounds`` (as the
        ADF/EIDIG retraining experiments estimate it); ``"data"``: rows drawn
        with replacement from ``dataset.X``.
    favourable : default=1
        The model class that is the favourable outcome.
    n_jobs : int or None, default=None
        Workers for the sample chunks (scikit-learn's convention; ``-1`` all cores, or
        all dask workers under ``joblib.parallel_config(backend="dask")``).  The estimate
        is the same at every ``n_jobs``.  One task carries a chunk index and range; the
        model adapter and the input domain (and the data rows for ``sample="data"``)
        travel once per call in a :class:`fairlens._parallel.Payload`.

    Returns
    -------
    dict
        ``rate``, ``low``, ``high`` (Wilson interval), ``n``, ``random_state`` (the seed used).

    Raises
    ------
    TypeError, ValueError
        For refused arguments (named).

    Examples
    --------
    >>> from fairlens.maft import discrimination_rate
    >>> from fairlens.datasets import load_dataset
    >>> from sklearn.linear_model import LogisticRegression
    >>> census = load_dataset("census", encoding="benchmark")
    >>> model = LogisticRegression(max_iter=500).fit(census.X[:2000], census.y[:2000])
    >>> r = discrimination_rate(model, census, ["sex"], n_samples=1000)
    >>> 0 <= r["low"] <= r["rate"] <= r["high"] <= 1
    True
    """
    dataset, favourable_class = data, favourable
    sample = check_choice("sample", sample, ("domain", "data"))
    n_samples = check_int("n_samples", n_samples, min=1)
    if n_samples > MAX_SAMPLES:
        raise ValueError(
            f"n_samples must be an integer in [1, {MAX_SAMPLES:,}] (MAX_SAMPLES); got {n_samples:,}. At "
            f"{MAX_SAMPLES:,} samples the Wilson interval is at most +-0.0003 wide; for more precision "
            "average several calls with different random_state values."
        )
    confidence = check_probability("confidence", confidence, include_0=False, include_1=False)

    n_jobs = check_n_jobs(n_jobs)
    seed = resolve_random_state(random_state)
    pb = _Problem(dataset, protected)
    scorer = resolve_scorer(model, dataset, favourable_class)
    # fixed chunks of samples; within a chunk _mask bounds memory to BLOCK_ROWS model rows
    chunks = list(enumerate(fixed_chunks(n_samples, RATE_CHUNK)))
    ship = copy.copy(pb)
    ship.dataset = None
    if sample == "domain":
        ship.pool = pb.pool[:0]
    payload = Payload(problem=ship, scorer=scorer, seed=seed, sample=sample)
    k = sum(run_chunks(_rate_chunk, payload, chunks, n_jobs=n_jobs))
    lo, hi = wilson_interval(k, n_samples, confidence)
    return {"rate": k / n_samples, "low": lo, "high": hi, "n": n_samples, "random_state": seed}


def _check_result_fits(result, pb, dataset):
    """A result must come from a search on this dataset's encoding (names, count, bounds)."""
    if not isinstance(result, FairnessTestResult):
        raise TypeError(
            f"result must be a FairnessTestResult returned by MAFT/EIDIG/ADF/AEQUITAS(...).run(), "
            f"got {type(result).__name__}."
        )
    X = np.asarray(result.instances)
    names = [str(c) for c in (result.feature_names or [])]
    if X.ndim != 2 or X.shape[1] != pb.d or (names and names != pb.feature_names):
        got = f"{X.shape[1] if X.ndim == 2 else '?'} features"
        if names and names != pb.feature_names:
            diff = [c for c in names if c not in pb.feature_names][:3]
            got += f" ({names[:3]}...; not in the dataset: {diff})" if diff else " (in another order)"
        raise ValueError(
            f"result does not belong to this dataset: its instances have {got}, the dataset "
            f"{getattr(dataset, 'name', '')!r} has {pb.d} features {pb.feature_names[:4]}... "
            f"(encoding {getattr(dataset, 'encoding', '?')!r}). Pass the dataset (same encoding) the search ran on."
        )
    if X.shape[0]:
        bad = (X < pb.lo) | (X > pb.hi)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise ValueError(
                f"result does not belong to this dataset: instance {r} has {pb.feature_names[c]!r} = {X[r, c]} "
                f"outside the dataset's bounds [{pb.lo[c]}, {pb.hi[c]}]. Pass the dataset the search ran on."
            )
    return np.ascontiguousarray(X, dtype=np.float64)


@dataclass
class RetrainResult(Result):
    """Figures of :func:`retrain_with_instances` (formerly ``MitigationResult``).

    ``before`` is the model under test; ``baseline`` a clone refit on the same training split
    *without* the generated instances (isolates their effect from the refit itself); ``after``
    the clone refit *with* them.

    Parameters
    ----------
    rate_before, rate_baseline, rate_after : dict
        :func:`discrimination_rate` of each model (``rate``, ``low``, ``high``, ``n``).
    accuracy_before, accuracy_baseline, accuracy_after : float
        Accuracy on the held-out split.
    n_added : int
        Generated instances added.
    model, baseline_model : estimator
        The refit with and without them.
    labelling : str
        ``"majority"`` or ``"original"``.
    n_rows_added : int
        Rows added (instances and, with ``add_similar``, their similar instances).
    params : dict
        The parameters of the call.
    random_state : int
        The seed actually used.
    elapsed : float
        Seconds.
    stopped : bool
        Always False (the call cannot be stopped).

    Examples
    --------
    Built by :func:`retrain_with_instances` (which has a full example); by hand:

    >>> from fairlens.maft import RetrainResult
    >>> rate = lambda r: {"rate": r, "low": r - 0.01, "high": r + 0.01, "n": 1000}
    >>> mit = RetrainResult(
    ...     rate_before=rate(0.10), rate_baseline=rate(0.09), rate_after=rate(0.02),
    ...     accuracy_before=0.85, accuracy_baseline=0.85, accuracy_after=0.84,
    ...     n_added=50, model=None, baseline_model=None, n_rows_added=50)
    >>> mit.summary().shape
    (1, 8)
    """

    title = "Retraining on generated instances"

    rate_before: dict
    rate_baseline: dict
    rate_after: dict
    accuracy_before: float
    accuracy_baseline: float
    accuracy_after: float
    n_added: int
    model: object = field(repr=False)
    baseline_model: object = field(repr=False)
    labelling: str = "majority"
    n_rows_added: int = 0
    params: dict = field(default_factory=dict)
    random_state: object = None
    elapsed: float = float("nan")
    stopped: bool = False

    def summary(self):
        """One-row :class:`pandas.DataFrame`: the three rates and accuracies, instances added.

        Returns
        -------
        pandas.DataFrame
            Columns ``rate_before``, ``rate_baseline``, ``rate_after``, ``accuracy_before``,
            ``accuracy_baseline``, ``accuracy_after``, ``n_added``, ``n_rows_added``.

        Examples
        --------
        >>> from fairlens.maft import RetrainResult
        >>> rate = lambda r: {"rate": r, "low": r - 0.01, "high": r + 0.01, "n": 1000}
        >>> mit = RetrainResult(
        ...     rate_before=rate(0.10), rate_baseline=rate(0.09), rate_after=rate(0.02),
        ...     accuracy_before=0.85, accuracy_baseline=0.85, accuracy_after=0.84,
        ...     n_added=50, model=None, baseline_model=None, n_rows_added=50)
        >>> mit.summary()[["rate_before", "rate_after", "n_added"]]
           rate_before  rate_after  n_added
        0          0.1        0.02       50
        """
        return pd.DataFrame([{
            "rate_before": self.rate_before["rate"],
            "rate_baseline": self.rate_baseline["rate"],
            "rate_after": self.rate_after["rate"],
            "accuracy_before": self.accuracy_before,
            "accuracy_baseline": self.accuracy_baseline,
            "accuracy_after": self.accuracy_after,
            "n_added": self.n_added,
            "n_rows_added": self.n_rows_added,
        }])

    def to_frame(self):
        """One row per model (before, baseline refit, after) with rate, interval and accuracy.

        Returns
        -------
        pandas.DataFrame
            Rows ``before``, ``baseline refit``, ``after``; columns ``model``,
            ``discrimination_rate``, ``ci_low``, ``ci_high``, ``samples``, ``accuracy``.

        Examples
        --------
        >>> from fairlens.maft import RetrainResult
        >>> rate = lambda r: {"rate": r, "low": r - 0.01, "high": r + 0.01, "n": 1000}
        >>> mit = RetrainResult(
        ...     rate_before=rate(0.10), rate_baseline=rate(0.09), rate_after=rate(0.02),
        ...     accuracy_before=0.85, accuracy_baseline=0.85, accuracy_after=0.84,
        ...     n_added=50, model=None, baseline_model=None, n_rows_added=50)
        >>> mit.to_frame()[["model", "discrimination_rate", "accuracy"]]
                    model  discrimination_rate  accuracy
        0          before                 0.10      0.85
        1  baseline refit                 0.09      0.85
        2           after                 0.02      0.84
        """
        rows = []
        for when, rate, acc in (
            ("before", self.rate_before, self.accuracy_before),
            ("baseline refit", self.rate_baseline, self.accuracy_baseline),
            ("after", self.rate_after, self.accuracy_after),
        ):
            rows.append(
                {
                    "model": when,
                    "discrimination_rate": rate["rate"],
                    "ci_low": rate["low"],
                    "ci_high": rate["high"],
                    "samples": rate["n"],
                    "accuracy": acc,
                }
            )
        return pd.DataFrame(rows)

    def plot(self, ax=None):
        """Rates (with intervals) and accuracies of the three models.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Drawn on a new figure if None.

        Returns
        -------
        matplotlib Axes
            The axes drawn on.

        Examples
        --------
        >>> from fairlens.maft import RetrainResult
        >>> rate = lambda r: {"rate": r, "low": r - 0.01, "high": r + 0.01, "n": 1000}
        >>> mit = RetrainResult(
        ...     rate_before=rate(0.10), rate_baseline=rate(0.09), rate_after=rate(0.02),
        ...     accuracy_before=0.85, accuracy_baseline=0.85, accuracy_after=0.84,
        ...     n_added=50, model=None, baseline_model=None, n_rows_added=50)
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> type(mit.plot()).__name__
        'Axes'
        """

        return plot_mitigation(self, ax=ax)


@strict_keywords(renamed=_RENAMED)
@validated({
    "model": "no_validation", "data": "no_validation", "result": "no_validation", "protected": "no_validation",
    "fraction": [Interval(numbers.Real, 0, 1, closed="right")], "labelling": [Options("majority", "original")],
    "add_similar": ["boolean"], "test_size": [Interval(numbers.Real, 0, 1, closed="neither")],
    "n_samples": [Interval(numbers.Integral, 1, MAX_SAMPLES)], "random_state": ["random_state"],
    "favourable": "no_validation",
})
def retrain_with_instances(
    model,
    data,
    result,
    protected=None,
    *,
    fraction=0.05,
    labelling="majority",
    add_similar=True,
    test_size=0.25,
    n_samples=10000,
    random_state=0,
    favourable=1,
):
    """Retrain on generated discriminatory instances and measure the effect.

    In the spirit of the ADF/EIDIG retraining experiment (the MAFT paper defers
    retraining to them): a ``fraction`` of the generated instances (default 5%
    of the training-set size, capped by what was found) is added to the training
    data.  Those papers label generated instances by a majority vote; here the
    vote is taken over the instance *and its similar instances* (every protected
    combination) under the tested model — a documented choice that gives a whole
    similar set one label, so that the refit is taught to ignore the protected
    attributes; a clone of ``model`` is refit on the augmented training split
    (``sklearn.base.clone``: same hyper-parameters and ``random_state``), in the
    form it was fitted on (readable frame, encoded DataFrame or array; labels in
    the model's own classes).  ``labelling="original"`` uses the model's own
    prediction of ``x`` instead.

    Discrimination is measured for the original model, a baseline clone refit
    without the instances and the augmented clone as :func:`discrimination_rate`
    (the same uniform domain samples for all three, Wilson interval), and
    accuracy on the same held-out split (the original model may have seen part
    of it during its own training; the two refits have not).

    Parameters
    ----------
    model : fitted scikit-learn classifier or pipeline
        Must support ``sklearn.base.clone`` and ``fit`` (a plain callable cannot be
        retrained).
    data : Dataset
        The dataset the search ran on (same encoding): ``result`` is checked to
        belong to it (feature names, count, bounds).
    result : FairnessTestResult
        A search result on ``data``.
    protected : list, optional
        Default: the protected attributes of ``result``.
    fraction : float in (0, 1], default=0.05
        Instances added, as a fraction of the training split (capped by what was found).
    labelling : {"majority", "original"}, default="majority"
        Majority vote over the instance and its similar instances, or the model's own label.
    add_similar : bool, default=True
        Also add every similar instance (with the same label).
    test_size : float in (0, 1), default=0.25
        Held-out share for the accuracies.
    n_samples : int, default=10000
        Samples of each :func:`discrimination_rate`.
    random_state : int, Generator, RandomState or None, default=0
        Resolved once (:func:`fairlens._base.resolve_random_state`): the split, the pick of
        instances and (seed + 1) the discrimination-rate samples.
    favourable : default=1
        The model class that is the favourable outcome.

    Returns
    -------
    RetrainResult
        Discrimination rates and accuracies before, after a plain refit and after the refit
        with the generated instances, and both refit models.

    Raises
    ------
    TypeError
        A model that cannot be cloned and refit, a result of the wrong type.
    ValueError
        A result from another dataset or encoding, an empty result, refused arguments.

    Examples
    --------
    >>> from fairlens.maft import MAFT, retrain_with_instances
    >>> from fairlens.datasets import load_dataset
    >>> from sklearn.linear_model import LogisticRegression
    >>> census = load_dataset("census", encoding="benchmark")
    >>> model = LogisticRegression(max_iter=500).fit(census.X[:2000], census.y[:2000])
    >>> res = MAFT(model, census, protected=["sex"], n_seeds=20, n_local=20, random_state=0).run()
    >>> mit = retrain_with_instances(model, census, res, n_samples=500, random_state=0)
    >>> mit.n_added == res.n_instances, mit.to_frame()["model"].tolist()
    (True, ['before', 'baseline refit', 'after'])
    """
    t0 = time.perf_counter()
    dataset, favourable_class = data, favourable
    from sklearn.base import clone
    from sklearn.model_selection import train_test_split


    labelling = check_choice("labelling", labelling, ("majority", "original"))
    fraction = check_probability("fraction", fraction, include_0=False)
    add_similar = check_bool("add_similar", add_similar)
    test_size = check_probability("test_size", test_size, include_0=False, include_1=False)
    n_samples = check_int("n_samples", n_samples, min=1, max=MAX_SAMPLES)
    random_state = resolve_random_state(random_state)
    if not isinstance(result, FairnessTestResult):
        _check_result_fits(result, None, dataset)  # raises the TypeError naming result
    pb = _Problem(dataset, protected if protected is not None else result.params.get("protected"))
    instances = _check_result_fits(result, pb, dataset)
    if instances.shape[0] == 0:
        raise ValueError("result holds no discriminatory instances: run a search with a larger budget first.")
    est = model.model if isinstance(model, Scorer) else model
    if not (hasattr(est, "fit") and hasattr(est, "get_params")):
        raise TypeError(
            f"model must be a scikit-learn estimator or pipeline (clone + fit) to be retrained, got "
            f"{type(est).__name__}; a plain callable cannot be refit."
        )
    scorer = resolve_scorer(est, dataset, favourable_class)
    X = np.asarray(dataset.X, dtype=np.float64)
    y = np.asarray(dataset.y)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=test_size, random_state=random_state, stratify=y)
    rng = np.random.default_rng(random_state)
    n_add = min(instances.shape[0], max(1, int(round(fraction * Xtr.shape[0]))))
    pick = rng.choice(instances.shape[0], size=n_add, replace=False)
    Xa = instances[pick]
    if labelling == "majority" or add_similar:
        pb.check_similar_memory(n_add, "retrain_with_instances", 2, "added instances")
        S = pb.similar(Xa)
    if labelling == "majority":
        ya = (scorer(S.reshape(-1, pb.d)).reshape(-1, pb.C).mean(axis=1) > 0.5).astype(y.dtype)
    else:
        ya = (scorer(Xa) > 0.5).astype(y.dtype)
    if add_similar:
        Xa = S.reshape(-1, pb.d)
        ya = np.repeat(ya, pb.C)

    # the model's own input form and labels
    fav = scorer.favourable_class
    form, labels = scorer.model_input, scorer.model_labels

    def acc(m):
        return float(np.mean((resolve_scorer(m, dataset, fav)(Xte) > 0.5).astype(int) == yte))

    def rate(m):
        return discrimination_rate(m, dataset, pb.protected, n_samples, (random_state + 1) % 2**32, favourable=fav)

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings of short refits
        base = clone(est).fit(form(Xtr), labels(ytr))
        new = clone(est).fit(form(np.concatenate([Xtr, Xa])), labels(np.concatenate([ytr, ya])))
    params = {"fraction": fraction, "labelling": labelling, "add_similar": add_similar, "test_size": test_size,
              "n_samples": n_samples, "protected": list(pb.protected), "favourable": fav}
    out = RetrainResult(
        rate(est), rate(base), rate(new), acc(est), acc(base), acc(new), int(n_add), new, base, labelling,
        int(Xa.shape[0]), params=params, random_state=random_state,
    )
    out.elapsed = time.perf_counter() - t0
    return out
