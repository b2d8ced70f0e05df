"""Detection of shuffling attacks by explainers, and fairness before/after.

* :func:`exact_shapley_values` -- brute-force Shapley values (Eq. 2-5) with one
  model call per coalition; the theorem of the paper (Eq. 6) says the
  protected feature of a :class:`ShuffledModel` gets exactly zero.
* :func:`linear_shap_values` -- the paper's linear SHAP estimate (Eq. 10-15).
* :func:`explain` / :func:`attributions` -- LIME, SHAP (shap's default
  ``Explainer`` on a function), KernelSHAP and linear SHAP attributions and
  the tidy per-feature summary used in Figures 2-4.
* :func:`fairness_before_after` -- group fairness of ``f`` and ``f'`` at a
  decision threshold (Figure 3 v).
"""
from __future__ import annotations

import itertools
import math
import numbers
import warnings

import numpy as np
import pandas as pd

from .._base import Interval, Options, check_progress, resolve_random_state, strict_keywords, validated
from .._parallel import Payload, check_n_jobs, chunk_rng, fixed_chunks, plan_workers, run_chunks
from .._validation import check_int, check_real
from ..metrics import aif360_report, fairness_report
from ..models import Scorer, as_scorer
from ._shuffled import ShuffledModel

__all__ = [
    "EXPLAINERS",
    "EXPLAIN_BLOCK",
    "attributions",
    "explain",
    "exact_shapley_values",
    "fairness_before_after",
    "linear_shap_values",
]

EXPLAINERS = ("linear", "shap", "kernel", "lime")


def _as_array(X, name="X"):
    if isinstance(X, (str, bytes)) or X is None:
        raise TypeError(f"{name} must be a 2-D array or a DataFrame; got {type(X).__name__}.")
    if isinstance(X, pd.DataFrame):
        try:
            A = X.to_numpy(dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must hold numbers (encoded columns); got dtypes "
                            f"{sorted(set(map(str, X.dtypes)))}.") from None
        cols = list(map(str, X.columns))
    else:
        try:
            A = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a numeric 2-D array or a DataFrame.") from None
        cols = None
    if A.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_rows, n_features); got shape {A.shape}.")
    if A.shape[0] == 0:
        raise ValueError(f"{name} has no rows.")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or inf; fill or drop them first.")
    return A, cols


def _adapt(model, dataset=None, feature_names=None):
    """The model the explainers call: a ShuffledModel as it is; anything else adapted once
    with :func:`fairlens.models.as_scorer` (``output="raw"``: attributions explain the
    model's score as returned -- an estimator's probability of the favourable class, a
    callable's output unchanged)."""
    if isinstance(model, ShuffledModel):
        return model

    if isinstance(model, Scorer):
        return as_scorer(model, dataset)
    return as_scorer(model, dataset, feature_names=None if dataset is not None else feature_names,
                     output="raw")


def _array_model(model, columns):
    """Model taking arrays; rebuilds a DataFrame when the user worked with one."""
    if columns is None:
        return lambda A: np.asarray(model(np.asarray(A, dtype=np.float64)), dtype=np.float64)
    return lambda A: np.asarray(
        model(pd.DataFrame(np.asarray(A, dtype=np.float64), columns=columns)), dtype=np.float64
    )


def _protected_indices(model, protected, names, d):
    prot = protected
    if prot is None and isinstance(model, ShuffledModel):
        prot = model._protected
    if prot is None:
        return []
    prot = list(prot) if isinstance(prot, (list, tuple)) else [prot]
    out = []
    for q in prot:
        if isinstance(q, str):
            if names is None or q not in names:
                raise ValueError(
                    f"protected feature {q!r} not found in feature names {names}; pass "
                    f"feature_names or a DataFrame."
                )
            out.append(names.index(q))
        else:
            if not 0 <= int(q) < d:
                raise ValueError(f"protected index {q} out of range for {d} features.")
            out.append(int(q))
    return out


@strict_keywords(renamed={"dataset": "data"})
@validated({
    "model": "no_validation", "x": "no_validation", "background": "no_validation",
    "feature_names": "no_validation", "data": "no_validation",
})
def exact_shapley_values(model, x, background, *, feature_names=None, data=None):
    """Exact Shapley values of one instance by enumerating all coalitions.

    The value function is Eq. (3)/(5): ``v(S) = mean_i f((x_S, X_bg[i, S̄]))``
    where ``X_bg`` is the background data. Each coalition is evaluated with
    ONE call to ``model`` on the ``len(background)`` rows of that coalition,
    the setting of the paper's theorem (Eq. 6). Cost ``2^d`` model calls.

    Parameters
    ----------
    model : callable
        Batch scorer (e.g. a :class:`ShuffledModel`).
    x : array-like of shape (d,)
        The instance to explain.
    background : array-like or DataFrame of shape (m, d)
        The background data ``X_bg`` of the value function.
    feature_names : list of str, optional
        When given (or when ``background`` is a DataFrame) the model is
        called with DataFrames.

    data : fairlens Dataset, optional
        The data a fitted model belongs to (see :func:`fairlens.models.as_scorer`).

    Returns
    -------
    ndarray of shape (d,)
        The Shapley value of every feature.

    Raises
    ------
    TypeError, ValueError
        For a bad ``x`` (non-numeric, NaN, wrong length) or more than 16 features.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.shuffle import ShuffledModel, exact_shapley_values
    >>> X = np.random.default_rng(0).random((40, 3)); X[:, 2] = X[:, 2] > 0.5  # column 2: protected
    >>> f = lambda A: (A[:, 0] + A[:, 1]) / 2  # ignores the protected column
    >>> m = ShuffledModel(f, protected=2, favoured=1, random_state=0)
    >>> exact_shapley_values(f, X[0], X[:8]).round(4)
    array([ 0.0902, -0.1538,  0.    ])

    One model call per coalition on the whole background: the attack permutes scores
    within each call, the mean is unchanged, so the values are the honest ones (Eq. 6):

    >>> np.allclose(exact_shapley_values(m, X[0], X[:8]), exact_shapley_values(f, X[0], X[:8]))
    True
    """
    bg, cols = _as_array(background, "background")
    if feature_names is not None:
        cols = list(feature_names)
    model = _adapt(model, data, cols)
    try:
        x = np.asarray(x, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise TypeError("x must be one row of numbers (shape (d,)).") from None
    if not np.all(np.isfinite(x)):
        raise ValueError("x contains NaN or inf.")
    d = bg.shape[1]
    if x.shape[0] != d:
        raise ValueError(f"x has {x.shape[0]} features but background has {d}.")
    if d > 16:
        raise ValueError(f"exact enumeration needs 2^d model calls; d={d} is too large (max 16).")
    f = _array_model(model, cols)
    v = {}
    for r in range(d + 1):
        for S in itertools.combinations(range(d), r):
            batch = bg.copy()
            if S:
                batch[:, list(S)] = x[list(S)]
            v[frozenset(S)] = float(np.mean(f(batch)))
    phi = np.zeros(d)
    fact = math.factorial
    for j in range(d):
        others = [k for k in range(d) if k != j]
        for r in range(d):
            w = fact(r) * fact(d - r - 1) / fact(d)
            for S in itertools.combinations(others, r):
                s = frozenset(S)
                phi[j] += w * (v[s | {j}] - v[s])
    return phi


def _fit_linear(f, bg):
    """Least-squares coefficients of ``f`` on the background (with intercept)."""
    y = f(bg)
    A = np.column_stack([bg, np.ones(len(bg))])
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    return coef[:-1]


@strict_keywords(renamed={"dataset": "data"})
@validated({
    "model": "no_validation", "X": "no_validation", "background": "no_validation", "coef": "no_validation",
    "protected": "no_validation", "feature_names": "no_validation", "data": "no_validation",
})
def linear_shap_values(model, X, background=None, *, coef=None, protected=None,
                       feature_names=None, data=None):
    """Linear SHAP attributions of the paper, Eq. (10)-(15).

    For a :class:`ShuffledModel` ``f'`` wrapping ``f``:
    ``Phi_j = beta_j (X_j - E[X_j])`` for the scoring features (Eq. 10, 13)
    and ``Phi_p = f'(X) - f(X)`` for the protected feature (Eq. 15), where
    ``f'(X)`` is ONE call on the batch ``X`` of explained instances.

    ``beta`` is ``coef`` when given, else a least-squares fit of the honest
    ``f`` on ``background`` (exact for a linear ``f``; a linear surrogate
    otherwise). ``E[X_j]`` is the background mean. With several protected
    features ``f'(X) - f(X)`` is split equally between them (Eq. 15 only
    identifies their joint attribution).

    For a model that is not a :class:`ShuffledModel` (an auditor's black box)
    every feature gets ``beta_j (X_j - E[X_j])`` from a least-squares fit of
    the model on the background.

    Parameters
    ----------
    model : ShuffledModel, estimator, pipeline or callable
        The (attacked) model.
    X : array or DataFrame of shape (n, d)
        The explained instances (one batch).
    background : array or DataFrame, optional
        Background data for ``E[X_j]`` and the fit (defaults to ``X``).
    coef : array of shape (d,), optional
        The honest model's coefficients ``beta`` when known.
    protected : str, int or list, optional
        Protected feature(s) of a model that is not a ShuffledModel.
    feature_names : list of str, optional
        Column names of an array ``X``.
    data : fairlens Dataset, optional
        The data a fitted model belongs to.

    Returns
    -------
    ndarray of shape (n, d)

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.shuffle import ShuffledModel, linear_shap_values
    >>> X = np.random.default_rng(0).random((20, 3)); X[:, 2] = X[:, 2] > 0.5
    >>> m = ShuffledModel(lambda A: (A[:, 0] + A[:, 1]) / 2, protected=2, favoured=1)
    >>> linear_shap_values(m, X).shape
    (20, 3)
    """
    A, cols = _as_array(X)
    if feature_names is not None:
        cols = list(feature_names)
    model = _adapt(model, data, cols)
    bg = A if background is None else _as_array(background, "background")[0]
    if bg.shape[1] != A.shape[1]:
        raise ValueError(f"background has {bg.shape[1]} features but X has {A.shape[1]}.")
    d = A.shape[1]
    mu = bg.mean(axis=0)
    if isinstance(model, ShuffledModel):
        base = _array_model(model.base_scores, cols)
        prot = _protected_indices(model, protected, cols or model.feature_names, d)
        beta = np.asarray(coef, dtype=np.float64) if coef is not None else _fit_linear(base, bg)
        if beta.shape != (d,):
            raise ValueError(f"coef must have one entry per feature ({d}); got shape {beta.shape}.")
        phi = beta * (A - mu)
        attacked = _array_model(model, cols)(A)
        diff = attacked - base(A)
        for k in prot:
            phi[:, k] = diff / len(prot)
        return phi
    f = _array_model(model, cols)
    beta = np.asarray(coef, dtype=np.float64) if coef is not None else _fit_linear(f, bg)
    return beta * (A - mu)


def _categorical_columns(bg, max_levels=10):
    """Columns LIME should treat as categorical: integer codes with few levels.

    LIME perturbs continuous columns with real-valued draws, which would never
    equal a protected code such as ``Research == 1``; categorical columns are
    sampled from their observed codes, as the attack (and the paper) needs.
    """
    out = []
    for j in range(bg.shape[1]):
        col = bg[:, j]
        if np.all(np.isfinite(col)) and np.all(col == np.round(col)) and len(np.unique(col)) <= max_levels:
            out.append(j)
    return out


def _progress(iterable, progress, total=None, desc=None):
    if not progress:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, leave=False)


#: Instances per block of :func:`explain` (fixed: the per-block random streams, hence the
#: attributions, do not depend on ``n_jobs``).
EXPLAIN_BLOCK = 4

#: Work of one explained instance in model-row equivalents, for the fall-back rule of
#: :func:`fairlens._parallel.plan_workers`: SHAP and KernelSHAP call the model on
#: ``evaluations x background`` rows per instance; LIME's own per-sample work (discretising,
#: distances, the ridge fit) costs about as much as 50 rows of a small MLP (measured on census:
#: 7 ms per instance for SHAP and KernelSHAP at 200 x 50 rows, 6 ms for LIME at 200 samples).
LIME_ROWS_PER_SAMPLE = 50

#: Where :func:`attributions` collects what ran where (set only inside its calls).
_EXPLAIN_INFO = __import__("contextvars").ContextVar("fairlens_explain_info", default=None)


def _explain_work(explainer, n, d, n_bg, nsamples):
    """Estimated model rows of explaining ``n`` instances (see :data:`LIME_ROWS_PER_SAMPLE`)."""
    if explainer == "lime":
        return float(n) * (5000 if nsamples is None else nsamples) * LIME_ROWS_PER_SAMPLE
    if explainer == "kernel":
        evals = 2 * d + 2048 if nsamples is None else nsamples
    else:  # shap: exact below 11 features (2**d coalitions), else permutation with max_evals
        evals = 2 ** d if d <= 10 else max(500 if nsamples is None else nsamples, 2 * d + 1)
    return float(n) * evals * n_bg


def _block_model(model, block_seed):
    """The model one block calls. A :class:`ShuffledModel` draws Mixing coins and frequency
    decisions from its own generator, which every call advances; each block gets a copy seeded
    from the block's stream so that the coins do not depend on which blocks ran before it (or
    where). ``block_seed`` is None for a model built with ``random_state=None`` (fresh entropy)."""
    if isinstance(model, ShuffledModel):
        return model.with_params(random_state=block_seed)
    return model


def _explain_block(payload, chunk):
    """Explain the instances ``start:stop`` of ``payload.A`` (one block; a pure function)."""

    block, start, stop = chunk
    rng = chunk_rng(payload.seed, block)
    seed32 = int(rng.integers(0, 2**31 - 1))
    model_seed = (None if payload.model_seed is None
                  else int(chunk_rng(payload.seed, block, 1, payload.model_seed).integers(0, 2**32 - 1)))
    model = _block_model(payload.model, model_seed)
    f = _array_model(model, payload.cols)
    A, bg, d, name = payload.A, payload.bg, payload.A.shape[1], payload.explainer
    out = np.full((stop - start, d), np.nan)
    callback = getattr(payload, "callback", None)
    n_total = A.shape[0]

    def proceed(i):
        return callback is None or callback(start + i + 1, n_total) is not False

    state = np.random.get_state()  # shap's permutation and kernel explainers draw from it
    try:
        np.random.seed(seed32)
        if name == "shap":
            import shap

            masker = shap.maskers.Independent(bg, max_samples=len(bg))
            ex = shap.Explainer(f, masker, **({"seed": seed32} if d > 10 else {}))
            call_kw = {"silent": True}
            if payload.nsamples is not None and d > 10:
                call_kw["max_evals"] = max(int(payload.nsamples), 2 * d + 1)
            for i in range(stop - start):
                out[i] = np.asarray(ex(A[start + i:start + i + 1], **call_kw).values)[0]
                if not proceed(i):
                    break
        elif name == "kernel":
            import shap

            ex = shap.KernelExplainer(f, bg)
            kw = {"silent": True}
            if payload.nsamples is not None:
                kw["nsamples"] = int(payload.nsamples)
                if d <= 30 and payload.nsamples >= 2 ** d - 2:
                    # every coalition is evaluated: the exact Shapley values, with no l1 feature
                    # selection (shap's default keeps 10 features and moves values by ~1e-5)
                    kw["l1_reg"] = False
            kw.update(getattr(payload, "kernel_kwargs", None) or {})
            for i in range(stop - start):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    out[i] = np.asarray(ex.shap_values(A[start + i], **kw)).ravel()[:d]
                if not proceed(i):
                    break
        else:  # lime
            from lime.lime_tabular import LimeTabularExplainer

            kw = dict(payload.lime_kwargs)
            kw["random_state"] = seed32
            ex = LimeTabularExplainer(bg, **kw)
            call_kw = {"num_features": d}
            if payload.nsamples is not None:
                call_kw["num_samples"] = int(payload.nsamples)
            for i in range(stop - start):
                e = ex.explain_instance(A[start + i], f, **call_kw)
                for j, w in e.local_exp[1]:
                    out[i, int(j)] = w
                if not proceed(i):
                    break
    finally:
        np.random.set_state(state)
    return out


@strict_keywords(renamed={"dataset": "data"})
@validated({
    "model": "no_validation", "X": "no_validation", "explainer": [Options(*EXPLAINERS)],
    "background": "no_validation", "nsamples": [Interval(numbers.Integral, 1, None), None],
    "random_state": ["random_state"], "feature_names": "no_validation", "protected": "no_validation",
    "progress": ["progress"], "lime_kwargs": [dict, None], "callback": [None, "callable"],
    "data": "no_validation", "n_jobs": ["n_jobs"], "kernel_kwargs": [dict, None],
})
def explain(model, X, explainer="shap", background=None, *, nsamples=None, random_state=0,
            feature_names=None, protected=None, progress=False, lime_kwargs=None,
            callback=None, data=None, n_jobs=None, kernel_kwargs=None):
    """Attributions of ``model`` for every row of ``X`` with one explainer.

    Parameters
    ----------
    model : callable
        Batch scorer, e.g. a :class:`ShuffledModel` (called on whatever
        batches the explainer builds).
    X : array or DataFrame of shape (n, d)
        Instances to explain.
    explainer : {"linear", "shap", "kernel", "lime"}
        ``"shap"``: ``shap.Explainer(model, Independent(background))`` -- the
        default algorithm picks exact enumeration for ``d <= 10`` and the
        permutation explainer otherwise (``nsamples`` -> ``max_evals``);
        ``"kernel"``: ``shap.KernelExplainer`` with ``nsamples`` (with
        ``nsamples >= 2**d - 2`` every coalition is evaluated and shap's l1 feature
        selection is switched off: the exact Shapley values, no numba compilation);
        ``"lime"``: ``LimeTabularExplainer`` in regression mode with
        ``num_samples=nsamples`` (coefficients of the local surrogate);
        integer-coded columns with at most 10 levels in the background are
        declared categorical so that LIME's samples keep real codes
        (override with ``lime_kwargs={"categorical_features": [...]}``);
        ``"linear"``: :func:`linear_shap_values` (Eq. 10-15), one call on the whole ``X``.
    background : array or DataFrame, optional
        Background / training data (defaults to ``X``).
    nsamples : int, optional
        Model evaluations per explained instance (explainer default if None).
    random_state : None, int, numpy Generator or RandomState, default 0
        Resolved once by :func:`fairlens._base.resolve_random_state`; seeds every random
        step. The instances are cut into fixed blocks of
        :data:`EXPLAIN_BLOCK` rows; block ``b`` draws from the counter-based stream
        ``chunk_rng(random_state, b)`` (``fairlens._parallel``), which seeds shap's
        permutation explainer and KernelSHAP (through ``numpy.random``, restored
        afterwards, as shap offers no other hook) and LIME, and re-seeds a
        :class:`ShuffledModel`'s Mixing/frequency generator for that block (from the
        model's resolved seed ``model.random_state_`` and the block). The attributions are therefore
        identical at every ``n_jobs`` and on every joblib backend.
    callback : callable, optional
        ``callback(i, n)`` after explained instances (every instance when the blocks
        run in this process, after every block of workers otherwise); return
        ``False`` to stop early (rows not explained are NaN).
    data : fairlens Dataset, optional
        The data a fitted model belongs to; any model that is not a
        :class:`ShuffledModel` is adapted once with ``fairlens.models.as_scorer(model,
        dataset, output="raw")`` (a classifier's probability, a callable's output as is).
    n_jobs : int or None
        Workers for the instance blocks (scikit-learn semantics: None = 1 unless inside
        ``joblib.parallel_config``, -1 = all cores; ``joblib.parallel_config(backend="dask")``
        runs them on a dask cluster). One task carries a few block descriptions; the model,
        the instances and the background travel once in a :class:`fairlens._parallel.Payload`
        (for the tutorial's models: the pickled honest scorer -- a few kB for a logistic
        regression -- plus ``(n + m) * d * 8`` bytes of data). ``"linear"`` is one batch call
        and ignores it. Calls made in workers do not advance ``model.n_calls_``.  Each
        worker gets one share of the blocks; when the estimated work (model rows, see
        :data:`LIME_ROWS_PER_SAMPLE`) is below
        :data:`fairlens._parallel.MIN_WORK_PER_WORKER` per worker, the blocks run in this
        process (:func:`attributions` reports it in ``table.attrs["parallel"]``).

    feature_names : list of str, optional
        Column names of an array ``X``.
    protected : str, int or list, optional
        Protected feature(s) (for a model that is not a ShuffledModel).
    progress : bool or callable, default False
        ``True`` shows a ``tqdm.auto`` bar; a callable is called as
        ``progress(stage, done, total)`` with ``stage`` the explainer (``"shap"``, ``"kernel"``,
        ``"lime"``) and ``done`` of ``total`` instances explained (the ``"linear"`` explainer
        is one matrix product and reports nothing).  A callable that cannot take three
        positional arguments is refused with a ``TypeError`` before any work.
    lime_kwargs : dict, optional
        Passed to ``LimeTabularExplainer``.
    kernel_kwargs : dict, optional
        Passed to ``KernelExplainer.shap_values`` (``explainer="kernel"`` only), e.g.
        ``{"l1_reg": False}``: shap's default (``"num_features(10)"``) keeps at most 10
        features per row and gives the others an attribution of 0.

    Returns
    -------
    ndarray of shape (n, d)
        The attribution of every feature for every row of ``X`` (NaN rows when a
        ``callback`` stopped early).

    Raises
    ------
    TypeError, ValueError
        For an unknown explainer or a bad parameter (named in the message).

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.shuffle import ShuffledModel, explain
    >>> X = np.random.default_rng(0).random((40, 3)); X[:, 2] = X[:, 2] > 0.5  # column 2: protected
    >>> f = lambda A: (A[:, 0] + A[:, 1]) / 2  # ignores the protected column
    >>> m = ShuffledModel(f, protected=2, favoured=1, random_state=0)
    >>> phi = explain(m, X[:5], "linear", background=X)
    >>> phi.shape
    (5, 3)
    >>> phi_shap = explain(m, X[:5], "shap", background=X[:20], random_state=0)  # doctest: +SKIP
    """

    # before any work: None/bool (a bar or nothing) or a callable progress(stage, done, total)
    report = None if progress is None or isinstance(progress, (bool, np.bool_)) else check_progress(progress)
    if not isinstance(explainer, str) or explainer not in EXPLAINERS:
        raise ValueError(f"explainer must be one of {EXPLAINERS}; got {explainer!r}.")
    nsamples = check_int("nsamples", nsamples, min=1, allow_none=True)
    random_state = resolve_random_state(random_state)
    n_jobs = check_n_jobs(n_jobs)
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be None or a callable(i, n); got {callback!r}.")
    A, cols = _as_array(X)
    names = list(feature_names) if feature_names is not None else cols
    model = _adapt(model, data, names)
    bg = A if background is None else _as_array(background, "background")[0]
    if bg.shape[1] != A.shape[1]:
        raise ValueError(f"background has {bg.shape[1]} features but X has {A.shape[1]}.")
    n, d = A.shape
    if explainer == "linear":
        return linear_shap_values(model, A if cols is None else X, bg, protected=protected,
                                  feature_names=feature_names)
    model_seed = None
    if isinstance(model, ShuffledModel):
        model_seed = model.random_state_
    if kernel_kwargs is not None and not isinstance(kernel_kwargs, dict):
        raise TypeError(f"kernel_kwargs must be a dict or None; got {type(kernel_kwargs).__name__}.")
    lime_kw = {}
    if explainer == "lime":
        lime_kw = dict(mode="regression",
                       feature_names=names if names is not None else [f"x{j}" for j in range(d)],
                       categorical_features=_categorical_columns(bg))
        lime_kw.update(lime_kwargs or {})
    chunks = [(b, s0, s1) for b, (s0, s1) in enumerate(fixed_chunks(n, EXPLAIN_BLOCK))]
    work = _explain_work(explainer, n, d, bg.shape[0], nsamples)
    workers = plan_workers(n_jobs, len(chunks), work=work)[0]  # the same rule as run_chunks below
    bar = None
    if progress and report is None:  # True: a bar (a callable reports instead)
        from tqdm.auto import tqdm

        bar = tqdm(total=n, desc={"shap": "SHAP", "kernel": "KernelSHAP", "lime": "LIME"}[explainer],
                   leave=False)
    stopped = [False]

    def per_row(i, total):  # in-process blocks: per instance (i: instances explained so far)
        if bar is not None:
            bar.update(1)
        if report is not None:
            report(explainer, i, total)
        if callback is not None and callback(i, total) is False:
            stopped[0] = True
            return False
        return True

    payload = Payload(model=model, cols=cols, A=A, bg=bg, explainer=explainer, nsamples=nsamples,
                      lime_kwargs=lime_kw, seed=random_state, model_seed=model_seed,
                      kernel_kwargs=dict(kernel_kwargs or {}))
    progress_cb = None
    if workers <= 1:
        payload.callback = per_row
    else:
        def progress_cb(done, total):  # parallel: per finished task
            rows = chunks[done - 1][2]
            if bar is not None:
                bar.update(rows - bar.n)
            if report is not None:
                report(explainer, rows, n)
            if callback is not None and callback(rows, n) is False:
                stopped[0] = True
    info = {}
    try:
        blocks = run_chunks(_explain_block, payload, chunks, n_jobs=n_jobs,
                            stop=lambda: stopped[0], progress=progress_cb,
                            work=work, info=info)
        sink = _EXPLAIN_INFO.get()
        if sink is not None:
            sink[explainer] = info
    finally:
        if bar is not None:
            bar.close()
    out = np.full((n, d), np.nan)
    for (_, s0, s1), vals in zip(chunks, blocks):
        out[s0:s1] = vals
    return out


def _summarise(name, phi, names, prot):
    phi = phi[~np.isnan(phi).any(axis=1)]
    n, d = phi.shape
    absphi = np.abs(phi)
    # competition ranking: rank = 1 + number of features with a strictly larger |attribution|
    # (ties share the better rank); features with zero attribution (<= 1e-9 x the row's
    # largest) are not ranked at all, so an ignored feature never "ranks 3rd" by tie-breaking
    ranks = 1 + (absphi[:, None, :] > absphi[:, :, None]).sum(axis=2)
    rowmax = absphi.max(axis=1, keepdims=True) if d else np.zeros((n, 1))
    ranks = np.where(absphi > 1e-9 * rowmax, ranks, 0)
    recs = []
    for j in range(d):
        recs.append({
            "explainer": name,
            "feature": names[j],
            "protected": j in prot,
            "mean_abs": float(absphi[:, j].mean()) if n else np.nan,
            "mean": float(phi[:, j].mean()) if n else np.nan,
            "top1": float(np.mean(ranks[:, j] == 1)) if n else np.nan,
            "top2": float(np.mean(ranks[:, j] == 2)) if n else np.nan,
            "top3": float(np.mean(ranks[:, j] == 3)) if n else np.nan,
            "n_instances": n,
        })
    return recs


@strict_keywords(renamed={"dataset": "data"})
@validated({
    "model": "no_validation", "X": "no_validation", "explainers": "no_validation",
    "background": "no_validation", "nsamples": [Interval(numbers.Integral, 1, None), None],
    "random_state": ["random_state"], "feature_names": "no_validation", "protected": "no_validation",
    "progress": ["progress"], "return_values": ["boolean"], "lime_kwargs": [dict, None],
    "data": "no_validation", "n_jobs": ["n_jobs"],
})
def attributions(model, X, explainers=("linear", "shap", "lime"), background=None, *,
                 nsamples=None, random_state=0, feature_names=None, protected=None,
                 progress=False, return_values=False, lime_kwargs=None, data=None,
                 n_jobs=None):
    """Per-feature attribution summary for several explainers in one tidy table.

    For each explainer and feature: ``mean_abs`` (mean |attribution| over the
    ``n`` explained instances, the dots of Figure 2), ``mean``, and the
    fraction of instances where the feature ranks exactly 1st/2nd/3rd by
    |attribution| (``top1``/``top2``/``top3``, Figures 3 and 4). Ranks are
    competition ranks (tied features share the better rank) and a feature
    with zero attribution in an instance is not ranked in it.

    Parameters
    ----------
    model : callable
        Usually a :class:`ShuffledModel`; its protected features are flagged.
    X : array or DataFrame (n, d)
        Instances to explain.
    explainers : sequence of {"linear", "shap", "kernel", "lime"}
    background : array or DataFrame, optional
        Background / training data (defaults to ``X``).
    nsamples, random_state, lime_kwargs
        Passed to :func:`explain`.
    protected : str/int or list, optional
        Protected feature(s) to flag when ``model`` is not a ShuffledModel.
    return_values : bool
        Also return ``{explainer: (n, d) array}``.
    data : fairlens Dataset, optional
        The data a fitted model belongs to (see :func:`explain`).
    n_jobs : int or None
        Workers for the instance blocks of each explainer (see :func:`explain`); the
        result is the same at every ``n_jobs``.  An explainer whose estimated work is too
        small to gain runs in this process (the rule of
        :func:`fairlens._parallel.plan_workers`); ``table.attrs["parallel"]`` says what ran
        where and ``table.attrs["n_jobs_used"]`` how many workers were used at most.

    feature_names : list of str, optional
        Column names of an array ``X``.
    progress : bool or callable, default False
        ``True`` shows a ``tqdm.auto`` bar per explainer; a callable is called as
        ``progress(stage, done, total)`` with ``stage`` the explainer and ``done`` of ``total``
        instances explained (see :func:`explain`).  A callable that cannot take three
        positional arguments is refused with a ``TypeError`` before any work.

    Returns
    -------
    pandas.DataFrame
        Columns ``explainer, feature, protected, mean_abs, mean, top1, top2, top3,
        n_instances`` (and the ``{explainer: values}`` dict with ``return_values=True``).

    Raises
    ------
    TypeError, ValueError
        For an unknown explainer, mismatched ``feature_names`` or a bad parameter.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.shuffle import ShuffledModel, attributions
    >>> X = np.random.default_rng(0).random((40, 3)); X[:, 2] = X[:, 2] > 0.5  # column 2: protected
    >>> f = lambda A: (A[:, 0] + A[:, 1]) / 2  # ignores the protected column
    >>> m = ShuffledModel(f, protected=2, favoured=1, random_state=0)
    >>> table = attributions(m, X[:10], ("linear",), background=X)
    >>> table[["explainer", "feature", "protected", "n_instances"]]
      explainer feature  protected  n_instances
    0    linear      x0      False           10
    1    linear      x1      False           10
    2    linear      x2       True           10
    """
    if progress is not None and not isinstance(progress, (bool, np.bool_)):
        check_progress(progress)  # before any work: a callable progress(stage, done, total)
    if isinstance(explainers, str):
        explainers = (explainers,)
    try:
        explainers = tuple(explainers)
    except TypeError:
        raise TypeError(f"explainers must be a name or a list of names from {EXPLAINERS}; "
                        f"got {explainers!r}.") from None
    if not explainers:
        raise ValueError(f"explainers must name at least one of {EXPLAINERS}.")
    bad = [e for e in explainers if not isinstance(e, str) or e not in EXPLAINERS]
    if bad:
        raise ValueError(f"unknown explainer(s) {bad}; choose from {EXPLAINERS}.")
    A, cols = _as_array(X)
    names = list(feature_names) if feature_names is not None else cols
    if data is not None and names is None:
        names = list(data.feature_names)
    model = _adapt(model, data, names)
    if names is None and isinstance(model, ShuffledModel) and model.feature_names is not None:
        names = model.feature_names
    if names is None:
        names = [f"x{j}" for j in range(A.shape[1])]
    if len(names) != A.shape[1]:
        raise ValueError(f"feature_names has {len(names)} entries but X has {A.shape[1]} columns.")
    prot = _protected_indices(model, protected, names, A.shape[1])
    if isinstance(model, ShuffledModel) and background is not None:
        model.validate(background)

    n_jobs = check_n_jobs(n_jobs)
    recs, values = [], {}
    ran = {}
    token = _EXPLAIN_INFO.set(ran)
    try:
        for name in explainers:
            phi = explain(model, X, name, background, nsamples=nsamples, random_state=random_state,
                          feature_names=feature_names, protected=protected, progress=progress,
                          lime_kwargs=lime_kwargs, data=data, n_jobs=n_jobs)
            values[name] = phi
            recs.extend(_summarise(name, phi, names, prot))
    finally:
        _EXPLAIN_INFO.reset(token)
    df = pd.DataFrame.from_records(recs)
    # what ran where (the fall-back rule of fairlens._parallel.plan_workers), per explainer
    df.attrs["n_jobs_used"] = max([int(i.get("n_jobs_used", 1)) for i in ran.values()] or [1])
    df.attrs["parallel"] = "; ".join(f"{k}: {i.get('note', '')}" for k, i in ran.items()) or "linear only"
    if return_values:
        return df, values
    return df


@strict_keywords(renamed={"sensitive_features": "protected"})
@validated({
    "model": "no_validation", "X": "no_validation", "y_true": "no_validation",
    "threshold": [Interval(numbers.Real, None, None)], "protected": "no_validation",
    "privileged": "no_validation",
})
def fairness_before_after(model, X, y_true, *, threshold=0.5, protected=None, privileged=None):
    """Group fairness of ``f`` and ``f'`` at a decision threshold (Figure 3 v).

    ``f`` and ``f'`` are evaluated on the whole batch ``X`` in one call each;
    a row is predicted favourable (1) when its score is ``>= threshold``
    (``<= threshold`` when ``model.higher_is_better`` is False). The metrics
    are :func:`fairlens.metrics.fairness_report` (demographic parity, equal
    opportunity, equalized odds differences, disparate impact ratio, Theil
    index; fairlearn's unsigned max - min form) or, when ``privileged`` is given,
    :func:`fairlens.metrics.aif360_report` -- the same five metrics as AIF360
    computes them (the toolkit the paper used): unprivileged minus (or over)
    privileged, so a negative difference means the unprivileged group is worse off.

    Parameters
    ----------
    model : ShuffledModel
        The attacked model (its honest scorer gives ``f``).
    X : array or DataFrame
        The batch (scored in one call by ``f`` and by ``f'``).
    y_true : array-like of 0/1 (1 = favourable)
        The true labels of the rows of ``X``.
    threshold : float
        A probability in [0, 1] (the scores are probabilities); any finite number when the
        model was built with ``output="raw"`` (scores on their own scale).
    protected : array-like, optional
        The protected group of every row (fairlearn's ``sensitive_features``). Defaults to
        the favoured-group membership of the model (``"favoured"`` / ``"other"``).
    privileged : value or list of values, optional
        The privileged value(s) of ``protected`` (e.g. ``"male"``, or
        ``"favoured"`` with the default groups); selects the AIF360 metrics.

    Returns
    -------
    pandas.DataFrame
        Columns ``metric, before, after, change, ideal``.

    Raises
    ------
    TypeError
        If ``model`` is not a ShuffledModel.
    ValueError
        If ``threshold`` is not a probability (any finite number for ``output="raw"``) or
        ``y_true`` has another length than ``X``.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.shuffle import ShuffledModel, fairness_before_after
    >>> X = np.random.default_rng(0).random((40, 3)); X[:, 2] = X[:, 2] > 0.5  # column 2: protected
    >>> f = lambda A: (A[:, 0] + A[:, 1]) / 2  # ignores the protected column
    >>> m = ShuffledModel(f, protected=2, favoured=1, random_state=0)
    >>> y = (X[:, 0] > 0.5).astype(int)
    >>> fairness_before_after(m, X, y).round(3)
                              metric  before  after  change  ideal
    0  demographic_parity_difference   0.035  0.944   0.909    0.0
    1   equal_opportunity_difference   0.141  0.889   0.747    0.0
    2      equalized_odds_difference   0.212  1.000   0.788    0.0
    3         disparate_impact_ratio   0.940  0.056  -0.885    1.0
    4                    theil_index   0.000  0.102   0.102    0.0
    """
    if not isinstance(model, ShuffledModel):
        raise TypeError("model must be a ShuffledModel (fairness of f versus f').")

    if getattr(model, "output", "auto") == "raw":  # ranking scores on their own scale
        threshold = check_real("threshold", threshold)
    else:  # the scores are probabilities: a threshold outside [0, 1] decides nothing
        threshold = check_real("threshold", threshold, min=0.0, max=1.0)

    batch = model.attack_batch(X)
    sensitive_features = protected
    if sensitive_features is None:
        sensitive_features = np.where(batch.favoured, "favoured", "other")
    y_true = np.asarray(y_true)
    if y_true.shape[0] != len(batch.scores_before):
        raise ValueError(f"y_true has {y_true.shape[0]} rows but X has {len(batch.scores_before)}.")

    def pred(s):
        return (s >= threshold if model.higher_is_better else s <= threshold).astype(int)

    if privileged is not None:

        def report(yp):
            return aif360_report(y_true, yp, protected=sensitive_features,
                                 privileged=privileged)
    else:
        def report(yp):
            return fairness_report(y_true, yp, protected=sensitive_features)

    before = report(pred(batch.scores_before))
    after = report(pred(batch.scores_after))
    out = pd.DataFrame({
        "metric": before["metric"].to_numpy(),
        "before": before["value"].to_numpy(dtype=float),
        "after": after["value"].to_numpy(dtype=float),
    })
    out["change"] = out["after"] - out["before"]
    if "ideal" in before.columns:
        out["ideal"] = before["ideal"].to_numpy()
    return out
