"""Accuracy of a tree ensemble under attackers changing ``b`` features.

Implements section 4 of the paper: brute force (4.1), the partial set cover
view with ``S_f^+``/``S_f^-`` (4.2, Proposition 2), the fast lower bound FLB
(4.3), the exhaustive lower bound ELB (4.4), the cascade FLB -> ELB -> brute
force (4.5) and the multi-class extension (4.6).

What is certified is the model's own ``predict`` (see
:mod:`fairlens.certify._flatten`): for scikit-learn forests the soft vote, for
which FLB and ELB are generalised soundly (each tree an attacked feature
reaches may move ``p[c] - p[y]`` by at most its largest swing; the margin
``sum_t p_t[y] - p_t[c]`` replaces delta) and brute force replays
``forest.predict`` exactly; with ``vote="hard"`` (and for a Feature
Partitioned Forest) the paper's definitions on the majority of hard votes.

Every stage runs as a Python loop over bounded kernel calls (chunks of rows;
brute force additionally stops and resumes inside a row after a bounded amount
of work), so Ctrl-C arrives as ``KeyboardInterrupt`` between calls and a
``progress`` callback sees every step.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import _kernels
from .._validation import check_bool, check_choice, check_int, check_memory, check_no_kwargs
from ._flatten import VOTES, flatten_forest

__all__ = [
    "certify",
    "accuracy_under_attack",
    "CertificationResult",
    "instance_covers",
    "InstanceCovers",
    "STATUSES",
    "METHODS",
    "VOTES",
    "SOFT_TOL",
]

METHODS = ("cascade", "flb", "elb", "brute")

#: Per-instance verdicts, in the order used for counts and plots.
STATUSES = (
    "misclassified",   # wrong before any attack
    "certified_flb",   # robust: FLB sum < delta (section 4.3)
    "certified_elb",   # robust: no cover of <= b sets reaches delta (section 4.4)
    "robust_brute",    # robust: brute force found no attack (section 4.1)
    "attackable",      # brute force found a witness x'
    "not_certified",   # flb/elb methods only: the bound could not prove robustness
    "unknown",         # time_limit reached before the row was settled
)


#: Relative tolerance of the soft-vote bounds: a row is certified by FLB/ELB only when
#: the margin exceeds the largest possible gain by more than ``SOFT_TOL * n_trees``
#: (floating-point sums of probabilities err by ~1e-16 * n_trees); attacks are always
#: confirmed by replaying scikit-learn's ``predict`` exactly.
SOFT_TOL = 1e-9

#: Work (patterns + forest evaluations) after which a brute-force kernel call returns at
#: the next resumable point, so that long searches are a Python loop of bounded calls.
_MAX_WORK = 200_000


def _check_budget(budget, n_features, name="budget"):
    b = check_int(name, budget, min=1)
    if b > n_features:
        raise ValueError(f"{name}={b} is larger than the number of features ({n_features}); "
                         f"use {name} <= {n_features}.")
    return b


def _check_progress(progress):
    if isinstance(progress, (bool, np.bool_)):
        return bool(progress)
    if progress is None:
        return False
    if callable(progress):
        return progress
    raise TypeError(f"progress must be True, False or a callable progress(stage, done, total); got {progress!r}.")


def _call(kernel, *args):
    """Call a numba kernel; a Ctrl-C that lands inside it surfaces as KeyboardInterrupt."""
    try:
        return kernel(*args)
    except SystemError as exc:  # "returned a result with an exception set"
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, KeyboardInterrupt):
            raise KeyboardInterrupt from None
        raise


def _check_kernel_inputs(ff, Xr, yi, rows, budget):
    """Shapes and dtypes every certify kernel relies on (checked before each call)."""
    n, d = Xr.shape
    if Xr.dtype != np.float64 or not Xr.flags.c_contiguous or d != ff.n_features:
        raise ValueError("internal: X must be a C-contiguous float64 array with n_features columns.")
    if yi.dtype != np.int64 or yi.shape != (n,):
        raise ValueError("internal: y must be an int64 array with one class index per row.")
    if n and (yi.min() < 0 or yi.max() >= ff.n_classes):
        raise ValueError("internal: class index out of range.")
    if rows.dtype != np.int64 or rows.ndim != 1 or (rows.size and (rows.min() < 0 or rows.max() >= n)):
        raise ValueError("internal: row indices out of range.")
    if not 1 <= budget <= d:
        raise ValueError("internal: budget out of range.")


@dataclass
class CertificationResult:
    """Outcome of :func:`certify`.

    Attributes
    ----------
    method, budget : what was run.
    vote : ``"soft"`` (scikit-learn's ``predict``: mean of the trees' leaf
        probabilities) or ``"hard"`` (the paper's majority of hard votes):
        the predictor that was certified.
    accuracy : certified accuracy under attack of ``method`` (ACC_FLB,
        ACC_ELB or the exact ACC_{A_b} for ``"brute"`` and ``"cascade"``).
    accuracy_clean : accuracy of the certified predictor without attack.
    accuracy_flb, accuracy_elb, accuracy_exact : the three accuracies of
        section 4 when the method computed them (the cascade gives all three,
        since ELB certifies everything FLB certifies), else ``None``.
    status : (n,) array of verdicts from :data:`STATUSES`.
    witnesses : dict row -> x' (float64 row on which the certified predictor,
        e.g. ``forest.predict``, does not return the label).
    witness_changes : dict row -> (attacked features, their new values).
    covers : dict row -> list of (feature, "+"/"-") of the ELB cover found.
    delta : (n,) hard vote: int, trees to change (section 4.2, ``-1`` where
        not computed); soft vote: float, the margin
        ``sum_t p_t[y] - p_t[c]`` (``nan`` where not computed).
    flb_sum : (n,) the FLB sum (int count for hard, float total swing for soft).
    stage_counts : instances settled by each stage.
    timings : seconds per stage; ``elapsed`` their total.
    n_evaluations : forest evaluations done by brute force.
    accuracy_interval : ``(lower, upper)`` of the exact accuracy for boosted
        models with ``method`` brute/cascade (equal when every row was settled;
        rows left ``"unknown"`` by ``time_limit`` count attackable in ``lower``
        and robust in ``upper``), else None.
    """

    method: str
    budget: int
    accuracy: float
    accuracy_clean: float
    status: np.ndarray
    witnesses: dict
    covers: dict
    delta: np.ndarray
    flb_sum: np.ndarray
    stage_counts: dict
    timings: dict
    elapsed: float
    n_evaluations: int = 0
    accuracy_flb: float | None = None
    accuracy_elb: float | None = None
    accuracy_exact: float | None = None
    y: np.ndarray | None = field(default=None, repr=False)
    feature_names: list | None = field(default=None, repr=False)
    witness_changes: dict = field(default_factory=dict, repr=False)
    vote: str = "hard"
    model: str = ""
    accuracy_interval: tuple | None = None

    @property
    def n_instances(self):
        return int(self.status.shape[0])

    @property
    def n_brute(self):
        """Number of instances that reached the brute-force stage."""
        return int(np.isin(self.status, ("robust_brute", "attackable")).sum())

    def summary(self):
        """One-row DataFrame: vote, accuracies, stage counts and timings."""
        row = {"method": self.method, "vote": self.vote, "budget": self.budget, "n": self.n_instances,
               "accuracy": self.accuracy, "accuracy_clean": self.accuracy_clean,
               "accuracy_flb": self.accuracy_flb, "accuracy_elb": self.accuracy_elb,
               "accuracy_exact": self.accuracy_exact}
        row.update({f"n_{k}": v for k, v in self.stage_counts.items()})
        row.update({f"time_{k}": v for k, v in self.timings.items()})
        row["elapsed"] = self.elapsed
        row["model"] = self.model
        return pd.DataFrame([row])

    def to_frame(self):
        """Per-instance table: status, delta, FLB sum, cover and witness (and the vote)."""
        names = self.feature_names

        def fname(f):
            return names[f] if names is not None else f"x{f}"
        cover_txt = [""] * self.n_instances
        for i, cov in self.covers.items():
            cover_txt[i] = ", ".join(f"S{s}[{fname(f)}]" for f, s in cov)
        wit_txt = [""] * self.n_instances
        for i, (feats, vals) in self.witness_changes.items():
            wit_txt[i] = ", ".join(f"{fname(f)}->{v:.6g}" for f, v in zip(feats, vals))
        df = pd.DataFrame({"status": self.status, "delta": self.delta, "flb_sum": self.flb_sum,
                           "cover": cover_txt, "witness": wit_txt})
        if self.y is not None:
            df.insert(0, "y", self.y)
        df["vote"] = self.vote
        df.index.name = "row"
        return df

    def plot(self, ax=None):
        """Bar chart of the verdicts (see :mod:`fairlens.certify.plots`)."""
        from .plots import plot_status_counts

        return plot_status_counts(self, ax=ax)


def _prepare_inputs(forest, X, y, budget, vote, tie_class):
    ff = flatten_forest(forest, tie_class=tie_class, vote=vote)
    if ff.vote == "hard" and ff.n_classes > 62:
        raise ValueError(f"vote='hard' supports at most 62 classes; the forest has {ff.n_classes}.")
    budget = _check_budget(budget, ff.n_features)
    X64, Xr = ff.check_X(X)
    n = X64.shape[0]
    if n == 0:
        raise ValueError("X has no rows; pass at least one instance to certify.")
    yi = ff.encode_y(y, n_rows=n)
    return ff, budget, X64, Xr, yi


def certify(forest, X, y, budget=1, method="cascade", *, vote=None, prune=True, tie_class=None,
            progress=False, chunk_size=64, n_jobs=None, time_limit=None):
    """Accuracy under attack of ``forest``'s own prediction, for attackers changing ``budget`` features.

    Implements section 4 of the paper on certifying tree ensembles against
    L0-bounded attacks (Feature Partitioned Forests): brute force (4.1), the partial set
    cover of ``S_f^+``/``S_f^-`` (4.2, Proposition 2), the fast lower bound
    FLB (4.3), the exhaustive lower bound ELB (4.4), the cascade (4.5) and the
    per-class check for more than two classes (4.6).

    Parameters
    ----------
    forest : fitted DecisionTreeClassifier, RandomForestClassifier,
        ExtraTreesClassifier, FeaturePartitionedForest, or a FlatForest; or a
        boosted classifier -- ``xgboost.XGBClassifier``/``Booster``,
        ``lightgbm.LGBMClassifier``/``Booster``, scikit-learn
        ``GradientBoostingClassifier``/``HistGradientBoostingClassifier`` (binary
        or multi-class) or a :class:`~fairlens.certify._boosted.BoostedModel` --
        certified on the argmax of its summed raw scores with each library's own
        split semantics (beyond the paper; see :mod:`fairlens.certify._boosted`:
        generalised FLB/ELB on margin swings, exact brute force whose witnesses
        are checked with the library's ``predict``; ``vote="additive"`` in the
        result).
    X : (n, d) array or DataFrame
        Test instances. A DataFrame is aligned to the model's
        ``feature_names_in_`` by column name (a missing or unexpected column
        is a ``ValueError`` naming it). No NaN/inf.
    y : (n,) labels, each one of ``forest.classes_``.
    budget : int
        ``b``, the number of features the attacker may change (any values),
        ``1 <= b <= n_features``.
    method : {"cascade", "flb", "elb", "brute"}
        ``"flb"`` (section 4.3) and ``"elb"`` (4.4) give lower bounds of the
        accuracy under attack; ``"brute"`` (4.1) and ``"cascade"`` (4.5,
        FLB -> ELB -> brute force on what is left) give the exact accuracy.
    vote : {"soft", "hard"}, optional
        Which predictor is certified. Default: what the model's ``predict``
        returns -- ``"soft"`` for scikit-learn forests and trees (mean of the
        trees' leaf class-probability vectors, ties to the first class, as
        ``forest.predict``), ``"hard"`` for a FeaturePartitionedForest.
        ``"hard"`` certifies the paper's majority of the trees' hard votes
        (exposed as ``flatten_forest(model, vote="hard").predict``).
        Under the soft vote FLB and ELB are generalised soundly: a tree that an
        attacked feature reaches (``S_f^+``/``S_f^-``) can move
        ``p[c] - p[y]`` by at most its largest swing (from its current leaf to
        its best leaf for ``c``); the margin ``sum_t p_t[y] - p_t[c]`` plays
        the role of delta. Brute force replays ``forest.predict`` exactly.
    prune : bool, default=True
        Brute force skips sign patterns that Proposition 2 (or its soft
        analogue) rules out and searches the relevant values by branch and
        bound; ``False`` is the literal enumeration of every value combination
        (same answer, much slower; kept as a baseline).
    tie_class : label, optional
        Class winning ties of the hard vote (see :func:`flatten_forest`).
    progress : bool or callable, default=False
        ``True`` shows a tqdm bar over the brute-force chunks; a callable is
        called as ``progress(stage, done, total)`` after every chunk of every
        stage (``stage`` in ``"vote"``, ``"flb"``, ``"elb"``, ``"brute"``).
        An exception it raises (e.g. ``KeyboardInterrupt``) stops the run.
    chunk_size : int, default=64
        Rows per kernel call. Long stages run as a Python loop over bounded
        kernel calls, so Ctrl-C arrives as ``KeyboardInterrupt`` between
        chunks and nothing is left half-done.
    n_jobs : int or None, default=None
        Boosted models only in this version: rows are certified in fixed
        blocks of 32 through joblib (scikit-learn semantics; identical results
        at every ``n_jobs`` and on dask). Each task carries its row indices and
        a reference to the payload (flat model arrays, the library model --
        about 0.2 MB pickled for 200 depth-6 XGBoost trees on census -- and the
        input rows), shipped once per worker on dask.
    time_limit : float or None, default=None
        Boosted models only in this version: seconds after which rows not yet
        settled get status ``"unknown"``; ``accuracy_interval`` is then
        ``(lower, upper)`` with unknown rows counted attackable in ``lower`` and
        robust in ``upper`` (``accuracy`` is ``lower``, ``accuracy_exact`` None).

    Returns
    -------
    CertificationResult
        With ``vote`` saying which predictor was certified; every witness
        changes that predictor's output.
    """
    from ._boosted import certify_boosted, is_boosted

    if is_boosted(forest):  # XGBoost, LightGBM, scikit-learn gradient boosting: summed raw scores
        if vote is not None or tie_class is not None:
            raise ValueError("vote and tie_class do not apply to a boosted model: its predict is the argmax of "
                             "the summed raw scores; leave them unset.")
        return certify_boosted(forest, X, y, budget=budget, method=method, progress=progress, n_jobs=n_jobs,
                               time_limit=time_limit)
    if n_jobs is not None or time_limit is not None:  # forest path: see the n_jobs/time_limit work (issue #14)
        raise TypeError("n_jobs and time_limit are only supported for boosted models in this version; "
                        "leave them unset for forests.")
    method = check_choice("method", method, METHODS)
    prune = check_bool("prune", prune)
    chunk_size = check_int("chunk_size", chunk_size, min=1)
    progress = _check_progress(progress)
    ff, budget, X64, Xr, yi = _prepare_inputs(forest, X, y, budget, vote, tie_class)
    n = X64.shape[0]
    soft = ff.vote == "soft"
    tol = SOFT_TOL * ff.n_trees
    check_memory(n * (8.0 * (4 * budget + 12)) + 8.0 * ff.n_trees * ff.n_classes * 4,
                 f"certifying {n} rows at budget {budget}", "certify fewer rows at a time.")
    status = np.full(n, "", dtype=object)
    if soft:
        delta = np.full(n, np.nan, dtype=np.float64)
        flb_sum = np.full(n, np.nan, dtype=np.float64)
    else:
        delta = np.full(n, -1, dtype=np.int64)
        flb_sum = np.full(n, -1, dtype=np.int64)
    witnesses, covers, changes = {}, {}, {}
    timings = {}
    n_eval = 0
    rows_all = np.arange(n, dtype=np.int64)

    def chunks(rows):
        return [rows[s:s + chunk_size] for s in range(0, rows.shape[0], chunk_size)]

    def report(stage, done, total):
        if callable(progress):
            progress(stage, done, total)

    # stage 0: clean prediction of the certified predictor
    t0 = time.perf_counter()
    pred = np.empty(n, dtype=np.int64)
    done = 0
    for rows in chunks(rows_all):
        sl = slice(int(rows[0]), int(rows[-1]) + 1)
        if soft:
            pred[sl] = np.argmax(_call(_kernels.soft_proba, *ff.soft_arrays(), Xr[sl]), axis=1)
        else:
            pred[sl] = _call(_kernels.vote, _call(_kernels.predict_trees, *ff.arrays(), Xr[sl]),
                             ff.n_classes, ff.rank)
        done += rows.shape[0]
        report("vote", done, n)
    correct = pred == yi
    status[~correct] = "misclassified"
    timings["vote"] = time.perf_counter() - t0
    todo = rows_all[correct]

    def run_stage(stage, kernel, rows, extra):
        """Run a row kernel chunk by chunk; returns the per-row outputs concatenated."""
        outs = []
        done = 0
        for ch in chunks(rows):
            _check_kernel_inputs(ff, Xr, yi, ch, budget)
            if soft:
                outs.append(_call(kernel, *ff.soft_arrays(), ff.tmax, *extra(ch)))
            else:
                outs.append(_call(kernel, *ff.arrays(), ff.n_classes, ff.rank, *extra(ch)))
            done += ch.shape[0]
            report(stage, done, rows.shape[0])
        if not outs:
            return None
        return [np.concatenate([o[k] for o in outs]) for k in range(len(outs[0]))]

    if method in ("flb", "cascade"):
        t0 = time.perf_counter()
        kern = _kernels.flb_soft_kernel if soft else _kernels.flb_kernel
        out = run_stage("flb", kern, todo, lambda ch: (Xr, yi, ch, budget, tol) if soft else (Xr, yi, ch, budget))
        if out is not None:
            _, att, fsum, dlt, _ = out
            flb_sum[todo] = fsum
            delta[todo] = dlt
            status[todo[~att]] = "certified_flb"
            if method == "flb":
                status[todo[att]] = "not_certified"
            todo = todo[att]
        timings["flb"] = time.perf_counter() - t0

    if method in ("elb", "cascade"):
        t0 = time.perf_counter()
        kern = _kernels.elb_soft_kernel if soft else _kernels.elb_kernel
        out = run_stage("elb", kern, todo, lambda ch: (Xr, yi, ch, budget, tol) if soft else (Xr, yi, ch, budget))
        if out is not None:
            _, att, cf, cs, _, _, dlt = out
            if method == "elb":
                delta[todo] = dlt
            status[todo[~att]] = "certified_elb"
            for k in np.flatnonzero(att):
                covers[int(todo[k])] = [(int(f), "+" if s == 0 else "-") for f, s in zip(cf[k], cs[k]) if f >= 0]
            if method == "elb":
                status[todo[att]] = "not_certified"
            todo = todo[att]
        timings["elb"] = time.perf_counter() - t0

    if method in ("brute", "cascade"):
        t0 = time.perf_counter()
        parts = chunks(todo)
        it = parts
        bar = None
        if progress is True and parts:
            from tqdm.auto import tqdm

            it = bar = tqdm(parts, desc=f"brute force b={budget}")
        done = 0
        try:
            for rows in it:
                start_item = 0
                while rows.shape[0]:
                    _check_kernel_inputs(ff, Xr, yi, rows, budget)
                    if soft:
                        out = _call(_kernels.brute_soft_kernel, *ff.soft_arrays(), ff.tmax, ff.values_ptr,
                                    ff.values, Xr, yi, rows, budget, prune, tol, start_item, _MAX_WORK)
                    else:
                        out = _call(_kernels.brute_kernel, *ff.arrays(), ff.n_classes, ff.rank, ff.values_ptr,
                                    ff.values, Xr, yi, rows, budget, prune, start_item, _MAX_WORK)
                    ok, att, wf, wv, ne, n_done, resume = out
                    n_done, resume = int(n_done), int(resume)
                    n_eval += int(ne.sum())
                    fin = rows[:n_done]
                    status[fin[~att[:n_done]]] = "robust_brute"
                    status[fin[att[:n_done]]] = "attackable"
                    for k in np.flatnonzero(att[:n_done]):
                        i = int(rows[k])
                        feats = [int(f) for f in wf[k] if f >= 0]
                        vals = [float(v) for f, v in zip(wf[k], wv[k]) if f >= 0]
                        xw = X64[i].copy()
                        xw[feats] = vals
                        witnesses[i] = xw
                        changes[i] = (feats, vals)
                    done += n_done
                    report("brute", done, todo.shape[0])
                    if resume < 0:
                        break
                    rows, start_item = rows[n_done:], resume
        finally:
            if bar is not None:
                bar.close()
        timings["brute"] = time.perf_counter() - t0
        if method == "brute":
            # delta for reporting (binary hard vote: the paper's ceil(|T|/2) - |C_bar|)
            kern = _kernels.flb_soft_kernel if soft else _kernels.flb_kernel
            out = run_stage("delta", kern, rows_all[correct],
                            lambda ch: (Xr, yi, ch, budget, tol) if soft else (Xr, yi, ch, budget))
            if out is not None:
                delta[correct] = out[3]

    counts = {s: int(np.sum(status == s)) for s in STATUSES}
    acc_clean = float(np.mean(correct))

    def acc(stats):
        return float(np.isin(status, stats).sum() / n)

    a_flb = a_elb = a_exact = None
    if method == "flb":
        a_flb = acc(("certified_flb",))
    if method == "elb":
        a_elb = acc(("certified_elb",))
    if method == "cascade":
        a_flb = acc(("certified_flb",))
        a_elb = acc(("certified_flb", "certified_elb"))
    if method in ("brute", "cascade"):
        a_exact = acc(("certified_flb", "certified_elb", "robust_brute"))
    accuracy = {"flb": a_flb, "elb": a_elb, "brute": a_exact, "cascade": a_exact}[method]
    return CertificationResult(
        method=method, budget=budget, accuracy=accuracy, accuracy_clean=acc_clean,
        status=status.astype(str), witnesses=witnesses, covers=covers, delta=delta, flb_sum=flb_sum,
        stage_counts=counts, timings=timings, elapsed=float(sum(timings.values())), n_evaluations=n_eval,
        accuracy_flb=a_flb, accuracy_elb=a_elb, accuracy_exact=a_exact, y=np.asarray(y),
        feature_names=ff.feature_names, witness_changes=changes, vote=ff.vote, model=ff.source,
    )


def accuracy_under_attack(forest, X, y, budgets=(1, 2, 3), method="cascade", **kwargs):
    """Table of accuracies (clean, FLB, ELB, exact), stage counts and times per budget.

    Runs :func:`certify` once per budget (the cascade gives all three
    accuracies of section 4 in one pass) and stacks the summaries.

    Parameters
    ----------
    forest, X, y, method : as in :func:`certify`.
    budgets : iterable of int
        The budgets ``b`` (each ``1 <= b <= n_features``), at least one.
    **kwargs
        ``vote``, ``prune``, ``tie_class``, ``progress``, ``chunk_size`` of
        :func:`certify`; any other keyword is a ``TypeError``.
    """
    allowed = {"vote", "prune", "tie_class", "progress", "chunk_size", "n_jobs", "time_limit"}
    check_no_kwargs("accuracy_under_attack", {k: v for k, v in kwargs.items() if k not in allowed})
    from ._boosted import flatten_boosted, is_boosted

    if is_boosted(forest):
        bm = flatten_boosted(forest)
        if isinstance(budgets, (str, bytes)) or not hasattr(budgets, "__iter__"):
            raise TypeError(f"budgets must be a list of integers; got {budgets!r}.")
        budgets = [_check_budget(b, bm.n_features, name="budgets") for b in list(budgets)]
        if not budgets:
            raise ValueError("budgets must contain at least one budget.")
        return pd.concat([certify(bm, X, y, budget=b, method=method, **kwargs).summary() for b in budgets],
                         ignore_index=True)
    if isinstance(budgets, (str, bytes)) or not hasattr(budgets, "__iter__"):
        raise TypeError(f"budgets must be a list of integers; got {budgets!r}.")
    budgets = list(budgets)
    if not budgets:
        raise ValueError("budgets must contain at least one budget.")
    ff = flatten_forest(forest, tie_class=kwargs.pop("tie_class", None), vote=kwargs.pop("vote", None))
    budgets = [_check_budget(b, ff.n_features, name="budgets") for b in budgets]
    frames = [certify(ff, X, y, budget=b, method=method, **kwargs).summary() for b in budgets]
    return pd.concat(frames, ignore_index=True)


@dataclass
class InstanceCovers:
    """The partial set cover problem of one instance (section 4.2 / 4.6).

    Attributes
    ----------
    membership : (n_trees, n_features) int8; bit 1 = tree in ``S_f^+`` (path
        tests ``f`` true, attacker must increase), bit 2 = in ``S_f^-``.
    votes : (n_trees,) class index voted by each tree; ``y`` the true index.
    wrong : (n_trees,) bool, trees not voting ``y``.
    correct : whether the certified predictor classifies the instance correctly.
    vote : ``"hard"`` or ``"soft"``.
    delta : dict target class index -> hard: trees to change (``delta_c``);
        soft: the margin ``sum_t p_t[y] - p_t[c]``.
    plus_sizes, minus_sizes : dict c -> (n_features,) hard: ``|S_f^± ∩ U_c|``
        with ``U_c`` the trees not voting ``c`` (binary: the correct trees);
        soft: the total swing ``sum_{t in S_f^±} w[t, c]``.
    flb : dict c -> (sum of the b largest ``max(plus, minus)``, features used).
    weights : dict c -> (n_trees,) soft: each tree's largest swing towards
        ``c``; hard: 1 for trees in ``U_c``, else 0.
    """

    membership: np.ndarray
    votes: np.ndarray
    y: int
    wrong: np.ndarray
    correct: bool
    delta: dict
    plus_sizes: dict
    minus_sizes: dict
    budget: int
    flb: dict
    vote: str = "hard"
    weights: dict = field(default_factory=dict, repr=False)

    def to_frame(self, feature_names=None):
        """Trees x features table with '+', '-', '+-' or ''."""
        sym = np.array(["", "+", "-", "+-"])
        cols = feature_names or [f"x{f}" for f in range(self.membership.shape[1])]
        df = pd.DataFrame(sym[self.membership], columns=cols)
        df.insert(0, "vote", self.votes)
        df.index.name = "tree"
        return df

    def plot(self, ax=None, cover=None, feature_names=None):
        from .plots import plot_cover_matrix

        return plot_cover_matrix(self, ax=ax, cover=cover, feature_names=feature_names)


def instance_covers(forest, x, y, budget=1, tie_class=None, *, vote=None):
    """Build ``S_f^+``/``S_f^-``, delta and the FLB sum for one instance.

    Parameters
    ----------
    forest : as in :func:`certify`.
    x : (n_features,) one instance, or a one-row DataFrame / Series (aligned
        to the model's feature names).
    y : its label (one of ``forest.classes_``).
    budget : int, ``1 <= budget <= n_features``.
    vote : {"soft", "hard"}, optional, as in :func:`certify`.
    """
    from ._boosted import boosted_instance_covers, is_boosted

    if is_boosted(forest):
        return boosted_instance_covers(forest, x, y, budget=budget)
    ff = flatten_forest(forest, tie_class=tie_class, vote=vote)
    budget = _check_budget(budget, ff.n_features)
    if hasattr(x, "to_frame") and hasattr(x, "index") and not hasattr(x, "columns"):  # a Series
        x = x.to_frame().T
    if hasattr(x, "columns"):
        if len(x) != 1:
            raise ValueError(f"x must be one instance; got a DataFrame with {len(x)} rows.")
        _, Xr = ff.check_X(x, name="x")
    else:
        try:
            xa = np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"x must be one numeric instance of {ff.n_features} values; got {x!r}.") from None
        if xa.ndim != 1:
            raise ValueError(f"x must be one instance, a 1-D array of {ff.n_features} values; got shape {xa.shape}.")
        _, Xr = ff.check_X(xa.reshape(1, -1), name="x")
    if np.ndim(y) != 0:
        raise ValueError(f"y must be the single label of x; got an array of shape {np.shape(y)}.")
    yi = int(ff.encode_y(np.asarray([y]), n_rows=1)[0])
    xr = Xr[0]
    d = ff.n_features
    votes, counts, ok, dlt = _kernels._prepare(*ff.arrays(), ff.n_classes, ff.rank, xr, yi)
    ptr, trees = _kernels.instance_sets(ff.feature, ff.threshold, ff.left, ff.right, ff.roots, xr, d)
    mem = np.zeros((ff.n_trees, d), dtype=np.int8)
    for k in range(2 * d):
        f, s = divmod(k, 2)
        mem[trees[ptr[k]:ptr[k + 1]], f] |= (1 << s)
    plus, minus, flb, delta, weights = {}, {}, {}, {}, {}
    if ff.vote == "soft":
        K = ff.n_classes
        leaves = np.empty(ff.n_trees, np.int64)
        acc = np.empty(K)
        dmat = np.empty((ff.n_trees, K))
        w = np.empty((ff.n_trees, K))
        margin = np.empty(K)
        ok = _kernels._prepare_soft(*ff.soft_arrays(), ff.tmax, xr, yi, leaves, acc, dmat, w, margin)
    for c in range(ff.n_classes):
        if c == yi:
            continue
        if ff.vote == "soft":
            wc = w[:, c]
            delta[c] = float(margin[c])
        else:
            wc = (votes != c).astype(np.float64)
            delta[c] = int(dlt[c])
        p = ((mem & 1).astype(bool) * wc[:, None]).sum(axis=0)
        m = ((mem & 2).astype(bool) * wc[:, None]).sum(axis=0)
        if ff.vote == "hard":
            p, m = p.astype(np.int64), m.astype(np.int64)
        plus[c], minus[c], weights[c] = p, m, wc
        mx = np.maximum(p, m)
        top = np.argsort(-mx, kind="mergesort")[:budget]
        total = mx[top].sum()
        flb[c] = (int(total) if ff.vote == "hard" else float(total), [int(f) for f in top])
    return InstanceCovers(membership=mem, votes=votes, y=yi, wrong=votes != yi, correct=bool(ok), delta=delta,
                          plus_sizes=plus, minus_sizes=minus, budget=budget, flb=flb, vote=ff.vote,
                          weights=weights)
