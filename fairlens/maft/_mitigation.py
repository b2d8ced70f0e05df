"""Discrimination measurement and mitigation by retraining."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._search import _Problem
from ._utils import CountingScorer, resolve_scorer, wilson_interval

__all__ = ["discriminatory_mask", "discrimination_rate", "retrain_with_instances", "MitigationResult"]


def discriminatory_mask(model, dataset, X, protected=None):
    """Which rows of ``X`` are individual discriminatory instances (Definition 2.1).

    A row is discriminatory if some other combination of the protected
    attributes' values (all other attributes unchanged) changes the predicted
    label ``[f(x) > 0.5]``.

    Returns
    -------
    ndarray of bool (n,)
    """
    pb = _Problem(dataset, protected)
    X = pb.check_rows(X, "X")
    if X.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    scorer = CountingScorer(resolve_scorer(model))
    S = pb.similar(X)
    sc = scorer(S.reshape(-1, pb.d)).reshape(-1, pb.C)
    return np.any((sc[:, 1:] > 0.5) != (sc[:, :1] > 0.5), axis=1)


def _uniform_grid(pb, n, rng):
    lo = np.ceil(pb.lo)
    hi = np.floor(pb.hi)
    return lo + np.floor(rng.random((n, pb.d)) * (hi - lo + 1.0))


def discrimination_rate(model, dataset, protected=None, n_samples=10000, random_state=0, confidence=0.95, sample="domain"):
    """Share of random inputs that are individual discriminatory instances.

    Parameters
    ----------
    sample : {"domain", "data"}
        ``"domain"``: uniform on the integer grid of ``dataset.bounds`` (as the
        ADF/EIDIG retraining experiments estimate it); ``"data"``: rows drawn
        with replacement from ``dataset.X``.

    Returns
    -------
    dict with ``rate``, ``low``, ``high`` (Wilson interval), ``n``.
    """
    if sample not in ("domain", "data"):
        raise ValueError(f"sample must be 'domain' or 'data', got {sample!r}.")
    if int(n_samples) < 1:
        raise ValueError(f"n_samples must be >= 1, got {n_samples!r}.")
    pb = _Problem(dataset, protected)
    rng = np.random.default_rng(random_state)
    if sample == "domain":
        X = _uniform_grid(pb, int(n_samples), rng)
    else:
        X = pb.pool[rng.integers(pb.pool.shape[0], size=int(n_samples))]
    k = int(discriminatory_mask(model, dataset, X, protected).sum())
    lo, hi = wilson_interval(k, int(n_samples), confidence)
    return {"rate": k / int(n_samples), "low": lo, "high": hi, "n": int(n_samples)}


@dataclass
class MitigationResult:
    """Figures of :func:`retrain_with_instances`.

    ``before`` is the model under test; ``baseline`` a clone refit on the same
    training split *without* the generated instances (isolates their effect
    from the refit itself); ``after`` the clone refit *with* them.
    """

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

    def to_frame(self):
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
        from .plots import plot_mitigation

        return plot_mitigation(self, ax=ax)


def retrain_with_instances(
    model,
    dataset,
    result,
    protected=None,
    *,
    fraction=0.05,
    labelling="majority",
    add_similar=True,
    test_size=0.25,
    n_samples=10000,
    random_state=0,
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
    (``sklearn.base.clone``: same hyper-parameters and ``random_state``).
    ``labelling="original"`` uses the model's own prediction of ``x`` instead.

    Discrimination is measured for the original model, a baseline clone refit
    without the instances and the augmented clone as :func:`discrimination_rate`
    (the same uniform domain samples for all three, Wilson interval), and
    accuracy on the same held-out split (the original model may have seen part
    of it during its own training; the two refits have not).

    Returns
    -------
    MitigationResult
    """
    from sklearn.base import clone
    from sklearn.model_selection import train_test_split

    if labelling not in ("majority", "original"):
        raise ValueError(f"labelling must be 'majority' or 'original', got {labelling!r}.")
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction!r}.")
    if result.n_instances == 0:
        raise ValueError("result holds no discriminatory instances: run a search with a larger budget first.")
    pb = _Problem(dataset, protected if protected is not None else result.params.get("protected"))
    X = np.asarray(dataset.X, dtype=np.float64)
    y = np.asarray(dataset.y)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=test_size, random_state=random_state, stratify=y)
    rng = np.random.default_rng(random_state)
    n_add = min(result.n_instances, max(1, int(round(fraction * Xtr.shape[0]))))
    pick = rng.choice(result.n_instances, size=n_add, replace=False)
    Xa = result.instances[pick]
    scorer = resolve_scorer(model)
    S = pb.similar(Xa)
    if labelling == "majority":
        ya = (scorer(S.reshape(-1, pb.d)).reshape(-1, pb.C).mean(axis=1) > 0.5).astype(y.dtype)
    else:
        ya = (scorer(Xa) > 0.5).astype(y.dtype)
    if add_similar:
        Xa = S.reshape(-1, pb.d)
        ya = np.repeat(ya, pb.C)
    def acc(m):
        return float(np.mean((resolve_scorer(m)(Xte) > 0.5).astype(int) == yte))

    def rate(m):
        return discrimination_rate(m, dataset, pb.protected, n_samples, random_state + 1)

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings of short refits
        base = clone(model).fit(Xtr, ytr)
        new = clone(model).fit(np.concatenate([Xtr, Xa]), np.concatenate([ytr, ya]))
    return MitigationResult(
        rate(model), rate(base), rate(new), acc(model), acc(base), acc(new), int(n_add), new, base, labelling,
        int(Xa.shape[0]),
    )
