"""Accuracy of a tree ensemble under attackers changing ``b`` features.

Implements section 4 of the paper: brute force (4.1), the partial set cover
view with ``S_f^+``/``S_f^-`` (4.2, Proposition 2), the fast lower bound FLB
(4.3), the exhaustive lower bound ELB (4.4), the cascade FLB -> ELB -> brute
force (4.5) and the multi-class extension (4.6).

What is certified is the model's own ``predict`` (see
:mod:`fairlens.certify._ensemble`): for scikit-learn forests the soft vote, for
which FLB and ELB are generalised soundly (each tree an attacked feature
reaches may move ``p[c] - p[y]`` by at most its largest swing; the margin
``sum_t p_t[y] - p_t[c]`` replaces delta) and brute force replays
``forest.predict`` exactly; with ``vote="hard"`` (and for a Feature
Partitioned Forest) the paper's definitions on the majority of hard votes.

Every stage runs as a Python loop over bounded kernel calls (chunks of rows;
brute force additionally pauses inside a row -- between sign patterns or inside
one pattern's value search -- after a bounded amount of work and resumes exactly
there), so Ctrl-C arrives as ``KeyboardInterrupt`` between calls, a
``progress`` callback sees every step and a ``time_limit`` is honoured within
about a tenth of a second (anytime certification: unsettled rows are
``"unknown"`` and ``accuracy_interval`` brackets the exact accuracy).

Rows are processed in fixed blocks through :func:`fairlens._parallel.run_chunks`
(``n_jobs``; joblib, hence also dask): first FLB -> ELB on blocks of correctly
classified rows, then brute force on small strided blocks of the rows left, so
the answer is identical at every ``n_jobs``.
"""
from __future__ import annotations

import time
from dataclasses import replace
from functools import partial

import numpy as np
import pandas as pd

from .._base import check_progress, strict_keywords, validated
from .._parallel import Payload, _record, effective_n_jobs, record_plans, run_chunks
from .._validation import check_int, check_memory
from ._common import (
    CERTIFY_CONSTRAINTS,
    METHODS,
    RENAMED_MODEL,
    VOTES,
    check_budget,
    compile_seconds,
    deadline_of,
    plan_n_jobs,
    resolve_missing,
    validate_certify_params,
)
from ._nancode import decode_values
from ._predictors import SOFT_TOL, Predictor
from ._readers import read_with_coder
from ._results import STATUSES, CertificationResult, InstanceCovers, accuracies
from ._schedule import settle_rows

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


#: Work (patterns + forest evaluations) after which a brute-force kernel call returns at
#: the next resumable point, so that long searches are a Python loop of bounded calls.
_MAX_WORK = 200_000

#: Work of the first bounded brute-force call of a block; later calls adapt it so that one
#: call lasts about :data:`_CALL_SECONDS` (never more than :data:`_MAX_WORK`). Pauses are
#: exact, so this changes when Ctrl-C and the time limit are seen, never the answer.
_START_WORK = 2_000
_CALL_SECONDS = 0.1

#: Correctly classified rows per block of the FLB/ELB pass (fixed: never derived from n_jobs).
#: Small enough that the blocks split evenly between workers (1,753 rows in blocks of 256 were
#: 7 blocks, 4 + 3 on two workers: the pass took 0.49 s instead of 0.39; in blocks of 64, 14 + 14),
#: large enough that a block's kernel call costs nothing next to its rows.
_BOUNDS_BLOCK = 64

#: Rows per block of the brute-force pass (fixed; small, because one row can take seconds).
_BRUTE_BLOCK = 2

#: Rows per FLB/ELB kernel call when a time limit is set (how often the deadline is checked).
_DEADLINE_CHUNK = 8


def _check_budget(budget, n_features, name="budget"):
    b = validate_certify_params({"budget": budget})["budget"] if name == "budget" else check_int(name, budget, min=1)
    return check_budget(b, n_features, name=name)


def _check_progress(progress):
    if isinstance(progress, (bool, np.bool_)):
        return bool(progress)
    if progress is None:
        return False
    if callable(progress):
        return check_progress(progress)  # refuses a callable that cannot take (stage, done, total)
    raise TypeError(f"progress must be True, False or a callable progress(stage, done, total); got {progress!r}.")


def _run(flat, X, y, budget, p, code=None):
    """:func:`certify` on a read model, for every model (arguments validated, ``budget`` checked).

    The one predictor (:class:`fairlens.certify._predictors.Predictor`) checks the rows; the finite
    threat model on finite rows certifies the ensemble itself, otherwise the rows are certified in
    groups (:func:`_nan_groups`) on the NaN-coded ensemble (``code(offer)``, default
    ``flat.nan_coded``) and merged.
    """
    P = Predictor
    X64, nan, on, ctx = P.inputs(flat, X, y, p)
    args = (budget, p["method"], p["prune"], p["progress"], p["chunk_size"], p["n_jobs"])
    if not on and not nan.any():  # the finite threat model on finite rows: the model itself
        return _certify_rows(P, P.group(flat, ctx, None, None), *args, p["time_limit"])

    def run(rows, offer, time_limit):
        return _certify_rows(P, P.group(flat, ctx, rows, offer, code), *args, time_limit)

    return _nan_certify(run, nan, on, np.asarray(y), p["time_limit"], flat.missing_value)


def _nan_groups(nan, on):
    """Rows certified together and the features the attacker may write NaN into: every feature
    (``on``), or with the finite threat model the row's own NaN features (writing NaN there
    changes nothing), one group per NaN pattern."""
    n, d = nan.shape
    if on:
        return [(np.arange(n, dtype=np.int64), None)]
    pats, inv = np.unique(nan, axis=0, return_inverse=True)
    inv = np.asarray(inv).reshape(-1)
    return [(np.flatnonzero(inv == k).astype(np.int64), pats[k]) for k in range(pats.shape[0])]


def _nan_certify(run, nan, on, y, time_limit, missing_value=np.nan):
    """Certify with NaN: ``run(rows, offer, time_limit)`` on every group of :func:`_nan_groups`,
    merged into one result with the witnesses decoded: the NaN code back to the model's own missing
    value (NaN, or a finite sentinel such as XGBoost's ``missing=-999``, which a witness must write so
    that it stays a finite input under ``missing=False``)."""

    t0 = time.perf_counter()
    groups = _nan_groups(nan, on)
    parts = []
    for rows, offer in groups:
        left = None if time_limit is None else max(0.0, time_limit - (time.perf_counter() - t0))
        parts.append((rows, run(rows, offer, left)))
    res = parts[0][1] if len(parts) == 1 else _merge(parts, nan.shape[0], y, time.perf_counter() - t0)
    for i, (feats, vals) in list(res.witness_changes.items()):
        res.witness_changes[i] = (feats, [float(v) for v in decode_values(vals, missing_value)])
        w = decode_values(res.witnesses[i], missing_value)
        # a NaN the row had, in a feature the attack leaves alone, stays NaN: the coded model may read
        # it as the finite value whose branch NaN takes at every node of that feature (same leaves)
        kept = nan[i].copy()
        kept[np.asarray(feats, dtype=np.int64)] = False
        w[kept & (w != missing_value)] = np.nan
        res.witnesses[i] = w
    return res


def _merge(parts, n, y, elapsed):
    """One CertificationResult from the results of disjoint row groups (row indices remapped)."""
    first = parts[0][1]
    status = np.full(n, "unknown", dtype=object)
    delta = np.empty(n, dtype=first.delta.dtype)
    flb_sum = np.empty(n, dtype=first.flb_sum.dtype)
    witnesses, covers, changes, timings = {}, {}, {}, {}
    n_eval, complete_flb, complete_elb = 0, True, True
    for rows, r in parts:
        status[rows] = r.status
        delta[rows] = r.delta
        flb_sum[rows] = r.flb_sum
        for src, dst in ((r.witnesses, witnesses), (r.covers, covers), (r.witness_changes, changes)):
            for i, v in src.items():
                dst[int(rows[i])] = v
        for k, v in r.timings.items():
            timings[k] = timings.get(k, 0.0) + v
        n_eval += r.n_evaluations
        complete_flb &= r.accuracy_flb is not None or r.method not in ("flb", "cascade")
        complete_elb &= r.accuracy_elb is not None or r.method not in ("elb", "cascade")
    status = status.astype(str)
    a = accuracies(status, first.method, complete_flb, complete_elb)
    clean = float(np.mean(status != "misclassified"))
    return replace(first, status=status, delta=delta, flb_sum=flb_sum, witnesses=witnesses, covers=covers,
                   witness_changes=changes, timings=timings, n_evaluations=n_eval, elapsed=elapsed,
                   stage_counts=a["counts"], accuracy=float(a["accuracy"]), accuracy_clean=clean,
                   accuracy_flb=a["accuracy_flb"], accuracy_elb=a["accuracy_elb"],
                   accuracy_exact=a["accuracy_exact"], accuracy_interval=(float(a["lower"]), float(a["upper"])),
                   y=y)


#: The table of :func:`certify` and :func:`accuracy_under_attack` (which takes ``budgets``, not ``budget``).
_CALL_TABLE = {
    **{k: CERTIFY_CONSTRAINTS[k] for k in ("method", "vote", "prune", "progress", "chunk_size", "n_jobs",
                                           "time_limit", "missing")},
    "model": "no_validation", "X": "no_validation", "y": "no_validation", "tie_class": "no_validation",
}


@strict_keywords(renamed=RENAMED_MODEL)
@validated({**_CALL_TABLE, "budget": CERTIFY_CONSTRAINTS["budget"]})
def certify(model, X, y, *, budget=1, method="cascade", vote=None, prune=True, tie_class=None,
            progress=False, chunk_size=64, n_jobs=None, time_limit=None, missing="auto"):
    """Accuracy under attack of ``model``'s own prediction, for attackers changing ``budget`` features.

    Implements section 4 of the paper on certifying tree ensembles against
    L0-bounded attacks (Feature Partitioned Forests): brute force (4.1), the partial set
    cover of ``S_f^+``/``S_f^-`` (4.2, Proposition 2), the fast lower bound
    FLB (4.3), the exhaustive lower bound ELB (4.4), the cascade (4.5) and the
    per-class check for more than two classes (4.6).

    Parameters
    ----------
    model : fitted tree ensemble
        A DecisionTreeClassifier, RandomForestClassifier, ExtraTreesClassifier or
        FeaturePartitionedForest; or a boosted classifier --
        ``xgboost.XGBClassifier``/``Booster``, ``lightgbm.LGBMClassifier``/``Booster``,
        scikit-learn ``GradientBoostingClassifier``/``HistGradientBoostingClassifier``,
        ``catboost.CatBoostClassifier`` (numeric features), an ONNX
        ``TreeEnsembleClassifier`` model (``onnx.ModelProto``, certified against
        onnxruntime; binary or multi-class) -- certified on the argmax of its
        summed raw scores with each library's own split semantics (beyond the
        paper: generalised FLB/ELB on margin swings, exact brute force whose
        witnesses are checked with the library's ``predict``; ``vote="additive"``
        in the result; see :mod:`fairlens.certify._votes` and the library's reader
        in :mod:`fairlens.certify._readers`); or a
        :class:`~fairlens.certify.TreeEnsemble` read already
        (:func:`~fairlens.certify.read_model`).
    X : (n, d) array or DataFrame
        Test instances. A DataFrame is aligned to the model's
        ``feature_names_in_`` by column name (a missing or unexpected column
        is a ``ValueError`` naming it). No inf; NaN (a missing value) is
        accepted wherever the model's ``predict`` accepts it and routed as the
        library routes it (see ``missing``). An array given to a model
        fitted on a DataFrame is taken by position in the fitted column order,
        with a ``UserWarning`` (as scikit-learn): pass a DataFrame to have the
        columns aligned by name. pandas category columns are refused
        (categorical splits are not certified): fit on a numeric encoding.
    y : array-like of shape (n,)
        The true labels, each one of ``model.classes_``.
    budget : int
        ``b``, the number of features the attacker may change,
        ``1 <= b <= n_features``. What the attacker may write into each of
        them is set by ``missing`` (the threat model).
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
        (exposed as ``read_model(model, vote="hard").predict``).
        Under the soft vote FLB and ELB are generalised soundly: a tree that an
        attacked feature reaches (``S_f^+``/``S_f^-``) can move
        ``p[c] - p[y]`` by at most its largest swing (from its current leaf to
        its best leaf for ``c``); the margin ``sum_t p_t[y] - p_t[c]`` plays
        the role of delta. Brute force replays ``forest.predict`` exactly.
    prune : bool, default=True
        Brute force skips sign patterns that Proposition 2 (or its soft
        analogue) rules out and searches the relevant values by branch and
        bound; ``False`` is the literal enumeration of every value combination
        (same answer, much slower; kept as a baseline). For a boosted model
        ``prune=False`` is a no-op: its exhaustive search always prunes (the
        answer is the same either way; there is no literal baseline of it).
    tie_class : label, optional
        Class winning ties of the hard vote (see :func:`read_model`).
    progress : bool or callable, default=False
        ``True`` shows a ``tqdm.auto`` bar for every stage (clean vote, FLB/ELB,
        brute force); a callable is called as ``progress(stage, done, total)``
        (``stage`` in ``"vote"``, ``"flb"``, ``"elb"``, ``"brute"``, and
        ``"delta"`` for ``method="brute"``), counting rows: ``"flb"`` and
        ``"elb"`` both count the correctly classified rows (a row FLB certifies
        is past ELB too), ``"brute"`` the rows sent to brute force. Sequentially
        it is called after every bounded kernel call; with ``n_jobs > 1`` after
        every finished task. An exception it raises (e.g. ``KeyboardInterrupt``)
        stops the run. A callable that cannot take three positional arguments
        is refused with a ``TypeError`` before any work.
    chunk_size : int, default=64
        Rows per kernel call. Long stages run as a Python loop over bounded
        kernel calls (brute force also pauses *inside* a row, within its value
        search, after about 0.1 s of work and resumes exactly where it stopped),
        so Ctrl-C arrives as ``KeyboardInterrupt`` within a fraction of a second
        and nothing is left half-done. The result does not depend on it.
    n_jobs : int or None, default=None
        Parallel workers, with scikit-learn's semantics (``None`` = 1 unless
        inside ``joblib.parallel_config(n_jobs=...)``, ``-1`` = all cores, or
        all workers of a dask cluster under
        ``joblib.parallel_config(backend="dask")``). The rows are cut into fixed
        blocks (never derived from ``n_jobs``): the FLB/ELB pass runs blocks of
        256 correctly classified rows, then brute force runs blocks of 2 of the
        rows still unsettled (row ``k`` of block ``j`` is the unsettled row
        ``j + k * n_blocks``, which spreads the expensive rows over the tasks;
        in one process they run as one block: fewer kernel calls, the same answers).
        Statuses, witnesses, covers and accuracies are identical at every
        ``n_jobs`` and on every joblib backend (without ``time_limit``).
        What one task carries: its row indices (a few int64 per row) and a
        reference to one payload -- the flattened forest, ``X`` (float64) and
        the labels -- which dask scatters to each worker once per pass and
        loky memory-maps (arrays above 1 MB) or pickles once per task (at most
        4 tasks per worker per pass). For a 100-tree depth-10 soft-vote random
        forest on a binary task the flattened forest pickles to 3-5 MB (about
        57 bytes per node: 58,000 nodes on census/adult, 83,000 on 20 synthetic
        features); a fully grown 100-tree forest on census (625,000 nodes) to
        35 MB. Each pass costs a fixed overhead to ship it (measured on a loaded
        2-core machine: about 1.5 s per pass for a 4.6 MB or a 35 MB forest), so
        ``n_jobs > 1`` pays off when brute force takes tens of seconds or more.
        Never more workers are started than there are blocks (``n_jobs=10**6``
        is the same as ``n_jobs`` = number of blocks).
    time_limit : float or None, default=None
        Anytime certification: seconds (``>= 0``) after which the searches
        stop. Rows not settled by then get status ``"unknown"`` and
        ``accuracy_interval`` bounds the exact accuracy; the clean vote of
        every row is always computed. Under a time limit the FLB/ELB pass
        runs in this process (blocks of 8 rows, the deadline checked between
        them), then the rows left **share the time**: each row's exhaustive
        search is exactly resumable, so it runs in short slices (the first of
        2,000 units of work, then doubling, at most about 0.1-0.2 s), always
        continuing the row that has had the least work so far. Cheap rows
        settle in their first slices and a few hard rows cannot starve the
        rest: the rows left unknown are the ones that needed the most work.
        The slices run on ``n_jobs`` threads of this process (the kernels
        release the GIL), so no worker process has to start before the
        deadline and ``n_jobs=2`` settles at least the rows ``n_jobs=1`` does
        in the same time on an idle machine; a ``joblib.parallel_config``
        backend is not used for this pass. ``progress`` hears of each row as
        it settles. No slice starts after the deadline, so a call overruns it
        by at most one slice -- except for numba's first compilation of a
        kernel in this process (on a cold cache, seconds to tens of seconds),
        which the deadline cannot interrupt: ``timings["compile"]`` of the
        result says how long this call spent compiling (0.0 once the kernels
        are compiled or cached; ``binder/warmup.py`` fills the cache).
        **Smallest attacks first:** under a limit a row's exhaustive search
        runs at budget 1, then 2, ... up to ``budget`` (iterative deepening),
        so a row attacked through one feature the search order ranks low
        settles in milliseconds instead of after every pair through the
        features ranked above it (on a 100-tree forest at ``budget=2`` and
        ``time_limit=15``, 16-17 of 20 rows settle against 13-16 with the one
        search at the full budget). Every settled row gets the verdict it
        gets without a limit (tested); its witness is the first attack on the
        *fewest* features (the unlimited run's witness when that one is
        already the smallest, on forests), the same at every ``n_jobs`` and
        every limit, and its evaluation count includes the smaller searches.
        Which rows settle depends on timing. ``None`` or ``inf``: no limit,
        nothing changes (the one search at ``budget``, the paper's order).
        Boosted models (XGBoost, LightGBM, scikit-learn gradient boosting)
        go through the same driver, blocks and scheduler; their payload also
        carries the library model (about 0.2 MB pickled for 200 depth-6
        XGBoost trees on census), whose ``predict`` confirms a candidate
        witness inside the float32 ambiguity zone.
    missing : {"auto", True, False}, default="auto"
        The threat model: whether the attacker may also *blank* an attacked
        feature, i.e. write a missing value (NaN), which the model routes by
        each node's default direction (``missing_go_to_left`` of scikit-learn
        trees, forests and HistGradientBoosting, XGBoost's ``default_left`` and
        its ``missing`` value, LightGBM's missing types, where NaN is read as 0
        at a ``"None"`` node) and which can reach leaves no finite value
        reaches. ``"auto"``: yes iff the model's own ``predict`` accepts NaN
        (scikit-learn trees and forests -- also when fitted without NaN: they
        send it to the larger child --, HistGradientBoosting, XGBoost,
        LightGBM; not GradientBoosting, FeaturePartitionedForest or the
        TreeEnsemble of a forest given directly, which keeps no model to ask). ``True``: the same, but a ``ValueError``
        when ``predict`` refuses NaN. ``False``: finite replacement values only
        -- the threat model of a pipeline that rejects blank input before the
        model. Rows of ``X`` that contain NaN are certified under both (with
        ``False`` the attacker may write finite values into them, also into
        their blank features). An XGBoost model fitted with ``missing=v`` reads
        every ``v`` as missing, so ``v``, a finite value, is NaN to it: its
        attacker may always write ``v`` (under ``missing=False`` too), and its
        witnesses write ``v`` where they blank a feature (the model's own
        coding, a finite input). Certified exactly: brute force tries NaN
        as one more value of every attacked feature and FLB/ELB count the
        trees NaN reaches (the model is certified in a coded form where NaN is
        ``-inf`` and every node sending NaN right gets a parent that parts
        ``-inf`` from the finite values; see ``fairlens.certify._nancode``);
        every witness is an input the library's ``predict`` accepts and
        misclassifies (it may hold NaN). LightGBM models fitted with
        ``zero_as_missing=True`` are followed as their ``predict`` routes them:
        every ``|x| <= 1e-35`` and NaN take the node's default direction, and 0
        is an attack value under both threat models. Recorded in ``params["missing"]``
        (the argument), ``params["nan_attack"]`` (what was certified) and the
        ``threat_model`` column of ``summary()``.

    Returns
    -------
    CertificationResult
        With ``vote`` saying which predictor was certified; every witness
        changes that predictor's output; ``accuracy_interval`` brackets the
        exact accuracy under attack (a single point when every row is settled
        by the cascade or brute force); ``params`` the validated arguments,
        ``stopped`` True when the time limit left rows ``"unknown"``.

    Raises
    ------
    TypeError, ValueError
        For an invalid argument, naming it (``forest=``, the old name of ``model``, is a
        ``TypeError`` naming ``model=``; so is any keyword not listed). The parameters are declared once
        (``fairlens.certify._common.CERTIFY_CONSTRAINTS``) and checked the same
        way for every model type before the model is read (``prune="banana"`` or
        ``chunk_size=0`` are refused for a boosted model as for a forest).
        ``missing=True`` for a model whose ``predict`` refuses NaN is a
        ``ValueError`` naming ``missing``; NaN in ``X`` for such a model (or with
        the TreeEnsemble of a forest) is a ``ValueError`` naming ``X``. A model
        no reader reads (a Pipeline, a CalibratedClassifierCV, a regressor) is a
        ``TypeError`` naming ``model``, what was given and what is accepted; for
        a Pipeline ending in a supported model it says how to certify it:
        ``certify(pipe[-1], pipe[:-1].transform(X), y)``, whose witnesses are
        rows of the transformed space.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from fairlens.certify import certify
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X[:400], y[:400])
    >>> res = certify(rf, X[400:], y[400:], budget=1)
    >>> res.accuracy_flb <= res.accuracy_elb <= res.accuracy_exact <= res.accuracy_clean
    True
    >>> res.summary().shape[0]
    1
    """
    p = validate_certify_params(dict(budget=budget, method=method, vote=vote, prune=prune, tie_class=tie_class,
                                     progress=progress, chunk_size=chunk_size, n_jobs=n_jobs,
                                     time_limit=time_limit, missing=missing))
    p["progress"] = _check_progress(p["progress"])
    flat, code = read_with_coder(model, vote=vote, tie_class=tie_class)
    budget = check_budget(p["budget"], flat.n_features)
    p["missing_on"], p["nan_rows"] = resolve_missing(p["missing"], model, flat, X)
    return _certify_read(flat, X, y, budget, p, code)


def _certify_read(flat, X, y, budget, p, code=None):
    """:func:`certify` on a read model (``p`` validated, ``p["missing_on"]`` resolved; ``code``: the
    model's NaN coding, see :func:`fairlens.certify._readers.read_with_coder`)."""
    compiling = [0.0]
    with record_plans() as plans, compile_seconds(compiling):
        res = _run(flat, X, y, budget, p, code)
    # numba's first compilation of a kernel in this process (seconds on a cold cache) cannot be
    # interrupted by the deadline: the result says how long it took (0.0 once compiled or cached)
    res.timings["compile"] = compiling[0]
    res.params = {k: v for k, v in p.items() if k not in ("progress", "missing_on", "nan_rows")}
    # where the work ran (as the other slices say it): the most workers any stage used, and why
    widest = max(plans, key=lambda q: q["n_jobs_used"], default={"n_jobs_used": 1, "note": "sequential"})
    res.params["n_jobs_used"] = int(widest["n_jobs_used"])
    res.params["parallel"] = widest["note"]
    res.params["nan_attack"] = bool(p["missing_on"])
    res.params["budget"] = budget
    res.time_limit = p["time_limit"]
    res.stopped = bool(res.stage_counts.get("unknown", 0))
    return res


def _certify_rows(P, rows_of, budget, method, prune, progress, chunk_size, n_jobs, time_limit):
    """The one certification driver (arguments validated): the cascade of section 4.5 -- clean
    vote, FLB (4.3) -> ELB (4.4) on fixed blocks of the correctly classified rows, then brute force
    (4.1) on fixed strided blocks of the rows left (or, under a time limit, every row's exactly
    resumable search sliced by :func:`fairlens.certify._schedule.settle_rows`) -- on the predictor
    ``P(*rows_of[:4], budget, prune)`` (:mod:`fairlens.certify._predictors`), for every model.

    ``rows_of`` is ``(flat, X64, Xr, yi, y)`` from the predictor class's ``group``.
    """
    t_call = time.perf_counter()
    flat, X64, Xr, yi, y = rows_of
    deadline = deadline_of(time_limit)
    n = X64.shape[0]
    check_memory(n * 8.0 * (4 * budget + 16) + 8.0 * flat.n_trees * flat.n_classes * 4,
                 f"certifying {n} rows at budget {budget}", "certify fewer rows at a time.")
    pred_ = P(flat, X64, Xr, yi, budget, prune)
    t_vote0 = time.perf_counter() - t_call  # the predictor's own set-up (a boosted model's replay check)
    status = np.full(n, "unknown", dtype=object)
    if pred_.score_dtype == np.int64:
        delta = np.full(n, -1, dtype=np.int64)
        flb_sum = np.full(n, -1, dtype=np.int64)
    else:
        delta = np.full(n, np.nan, dtype=np.float64)
        flb_sum = np.full(n, np.nan, dtype=np.float64)
    witnesses, covers, changes = {}, {}, {}
    timings = {}
    n_eval = 0
    rows_all = np.arange(n, dtype=np.int64)
    bar = _Progress(progress, budget)
    payload = Payload(P=pred_, budget=budget, chunk_size=chunk_size, deadline=deadline,
                      run_flb=method in ("flb", "cascade"), run_elb=method in ("elb", "cascade"))
    try:
        # stage 0: clean prediction of the certified predictor (always complete: it is cheap)
        t0 = time.perf_counter()
        pred = np.empty(n, dtype=np.int64)
        bar.start("vote", n)
        for s in range(0, n, chunk_size):
            sl = slice(s, min(s + chunk_size, n))
            pred[sl] = pred_.predict_index(sl)
            bar.add("vote", sl.stop - sl.start)
        correct = pred == yi
        status[~correct] = "misclassified"
        timings["vote"] = t_vote0 + time.perf_counter() - t0
        todo = rows_all[correct]
        complete_flb = complete_elb = True

        # stage 1 (FLB -> ELB), fixed blocks of the correctly classified rows
        if method in ("flb", "elb", "cascade") and todo.size:
            t0 = time.perf_counter()
            blocks = [todo[s:s + _BOUNDS_BLOCK] for s in range(0, todo.size, _BOUNDS_BLOCK)]
            if payload.run_flb:
                bar.start("flb", todo.size)
            if payload.run_elb:
                bar.start("elb", todo.size)
            # under a time limit the bounds (cheap) settle in this process first: workers that
            # start late would leave rows unsettled that this process settles in milliseconds
            blocks, outs = _run_blocks(_bounds_block, payload, blocks, 1 if deadline is not None else n_jobs, bar,
                                       ("flb", "elb"))
            wall = time.perf_counter() - t0
            t_f = sum(o["t_flb"] for o in outs)
            t_e = sum(o["t_elb"] for o in outs)
            share = t_f / (t_f + t_e) if t_f + t_e > 0 else 1.0
            if payload.run_flb:
                timings["flb"] = wall * share
            if payload.run_elb:
                timings["elb"] = wall * (1.0 - share) if payload.run_flb else wall
            o = {k: np.concatenate([b_[k] for b_ in outs]) for k in outs[0] if not k.startswith("t_")}
            rows = np.concatenate(blocks[:len(outs)])
            done_f, att_f = o["flb_done"], o["flb_att"]
            done_e, att_e = o["elb_done"], o["elb_att"]
            if payload.run_flb:
                ok = done_f
                flb_sum[rows[ok]] = o["flb_sum"][ok]
                delta[rows[ok]] = o["flb_delta"][ok]
                status[rows[ok & ~att_f]] = "certified_flb"
                complete_flb = bool(done_f.size == todo.size and done_f.all())
                if method == "flb":
                    status[rows[ok & att_f]] = "not_certified"
            if payload.run_elb:
                need = (done_f & att_f) if payload.run_flb else np.ones(rows.size, dtype=bool)
                if method == "elb":
                    delta[rows[done_e]] = o["elb_delta"][done_e]
                status[rows[done_e & ~att_e]] = "certified_elb"
                for k in np.flatnonzero(done_e & att_e):
                    covers[int(rows[k])] = [(int(f), "+" if s_ == 0 else "-")
                                            for f, s_ in zip(o["cover_f"][k], o["cover_s"][k]) if f >= 0]
                if method == "elb":
                    status[rows[done_e & att_e]] = "not_certified"
                complete_elb = complete_flb and rows.size == todo.size and bool(np.all(done_e[need]))
            # rows the bounds could not settle go to brute force (the cascade); rows the time
            # limit kept from the bounds stay "unknown" and are not brute-forced
            todo = rows[done_e & att_e] if method == "cascade" else todo[:0]

        # stage 2: brute force over fixed, strided blocks of the rows left
        if method in ("brute", "cascade"):
            t0 = time.perf_counter()
            n_blocks = -(-todo.size // (pred_.brute_block or _BRUTE_BLOCK))
            blocks = [todo[j::n_blocks] for j in range(n_blocks)]
            bar.start("brute", todo.size)
            if deadline is None:
                # sequentially the strided blocks are one block (same rows, fewer kernel calls)
                blocks, outs = _run_blocks(_brute_block, payload, blocks, n_jobs, bar, ("brute",), merge=True)
            else:  # anytime: every row gets short slices, least worked first, on threads
                blocks = [todo]
                outs = [_brute_anytime(payload, todo, n_jobs, bar)]
            for blk, (st, wf, wv, ne) in zip(blocks, outs):
                n_eval += int(ne)
                status[blk[st == 1]] = "robust_brute"
                status[blk[st == 2]] = "attackable"
                for k in np.flatnonzero(st == 2):
                    i = int(blk[k])
                    witnesses[i], feats, vals = pred_.witness(i, wf[k], wv[k])
                    changes[i] = (feats, vals)
            timings["brute"] = time.perf_counter() - t0
            if method == "brute":
                # delta for reporting (binary hard vote: the paper's ceil(|T|/2) - |C_bar|)
                t0 = time.perf_counter()
                rows_c = rows_all[correct]
                bar.start("delta", rows_c.size)
                for s in range(0, rows_c.size, chunk_size):
                    ch = rows_c[s:s + chunk_size]
                    delta[ch] = pred_.flb(ch)[2]
                    bar.add("delta", ch.size)
                timings["delta"] = time.perf_counter() - t0
    finally:
        bar.close()
        _LOCAL.pop("slot", None)  # do not keep this call's model and rows alive

    a = accuracies(status, method, complete_flb, complete_elb)
    counts, lower, upper = a["counts"], a["lower"], a["upper"]
    a_flb, a_elb, a_exact, accuracy = a["accuracy_flb"], a["accuracy_elb"], a["accuracy_exact"], a["accuracy"]
    acc_clean = float(np.mean(correct))
    return CertificationResult(
        method=method, budget=budget, accuracy=float(accuracy), accuracy_clean=acc_clean,
        status=status.astype(str), witnesses=witnesses, covers=covers, delta=delta, flb_sum=flb_sum,
        stage_counts=counts, timings=timings, elapsed=time.perf_counter() - t_call, n_evaluations=n_eval,
        accuracy_flb=a_flb, accuracy_elb=a_elb, accuracy_exact=a_exact, y=np.asarray(y),
        feature_names=(list(pred_.feature_names) if pred_.feature_names is not None
                       else [f"x{j}" for j in range(X64.shape[1])]),
        witness_changes=changes, vote=pred_.vote, model=pred_.source,
        accuracy_interval=(float(lower), float(upper)), time_limit=time_limit,
    )


# --- the block functions run by fairlens._parallel.run_chunks (module level: pickled for workers) ---

def _deadline_passed(deadline):
    return deadline is not None and time.time() >= deadline


_LOCAL = {}  # one slot: the last payload whose predictor was made local in this worker process


def _local(payload):
    """The payload's predictor with writeable arrays (:meth:`ForestPredictor.local`), made once per
    payload and process (not once per block)."""
    hit = _LOCAL.get("slot")
    if hit is not None and hit[0] is payload:
        return hit[1]
    P = payload.P.local()
    _LOCAL["slot"] = (payload, P)
    return P


def _bounds_block(payload, rows, report=None):
    """FLB and/or ELB (as the method asks) for the rows ``rows`` of one block.

    Returns a dict of per-row arrays (``flb_done``, ``flb_att``, ``flb_sum``,
    ``flb_delta``, ``elb_done``, ``elb_att``, ``cover_f``, ``cover_s``,
    ``elb_delta``) and the seconds spent in each stage. With a deadline, kernel
    calls stop once it has passed; rows not reached keep ``*_done = False``.
    """
    p = payload
    P = _local(p)
    m = rows.shape[0]
    b = p.budget
    fdt = P.score_dtype
    out = {"flb_done": np.zeros(m, bool), "flb_att": np.zeros(m, bool),
           "flb_sum": np.zeros(m, fdt), "flb_delta": np.zeros(m, fdt),
           "elb_done": np.zeros(m, bool), "elb_att": np.zeros(m, bool),
           "cover_f": np.full((m, b), -1, np.int64), "cover_s": np.full((m, b), -1, np.int64),
           "elb_delta": np.zeros(m, fdt), "t_flb": 0.0, "t_elb": 0.0}
    step = p.chunk_size if p.deadline is None else min(p.chunk_size, _DEADLINE_CHUNK)

    cand = np.arange(m)
    if p.run_flb:
        t0 = time.perf_counter()
        for s in range(0, m, step):
            if _deadline_passed(p.deadline):
                break
            loc = np.arange(s, min(s + step, m))
            att, fsum, dlt = P.flb(rows[loc])
            out["flb_done"][loc] = True
            out["flb_att"][loc] = att
            out["flb_sum"][loc] = fsum
            out["flb_delta"][loc] = dlt
            if report is not None:
                report("flb", loc.size)
        out["t_flb"] = time.perf_counter() - t0
        cand = np.flatnonzero(out["flb_done"] & out["flb_att"])
        if report is not None and p.run_elb:
            report("elb", int(np.sum(out["flb_done"] & ~out["flb_att"])))  # certified: past ELB too
    if p.run_elb:
        t0 = time.perf_counter()
        for s in range(0, cand.size, step):
            if _deadline_passed(p.deadline):
                break
            loc = cand[s:s + step]
            att, cf, cs, dlt = P.elb(rows[loc])
            out["elb_done"][loc] = True
            out["elb_att"][loc] = att
            out["cover_f"][loc] = cf
            out["cover_s"][loc] = cs
            out["elb_delta"][loc] = dlt
            if report is not None:
                report("elb", loc.size)
        out["t_elb"] = time.perf_counter() - t0
    return out


def _next_work(work, seconds):
    """Work for the next bounded brute-force call, aiming at :data:`_CALL_SECONDS` per call."""
    if seconds <= 0:
        new = 4 * work
    else:
        new = int(work * min(4.0, max(0.25, _CALL_SECONDS / seconds)))
    return int(min(max(new, 1), _MAX_WORK))


def _brute_block(payload, rows, report=None):
    """Brute force (section 4.1) for the rows ``rows`` of one block, in bounded calls of the
    predictor's exactly resumable search.

    Returns ``(status, wit_f, wit_v, n_evaluations)`` with ``status`` 1 = robust,
    2 = attackable, 0 = not settled before the deadline. The search pauses after
    a bounded amount of work (also inside one pattern's value search) and
    resumes exactly, so the deadline and Ctrl-C are seen between short calls.
    """
    p = payload
    P = _local(p)
    m = rows.shape[0]
    b = p.budget
    st = np.zeros(m, np.int8)
    wit_f = np.full((m, b), -1, np.int64)
    wit_v = np.full((m, b), np.nan, np.float64)
    n_eval = 0
    state = P.new_state()
    work = int(min(_START_WORK if P.start_work is None else P.start_work, _MAX_WORK))
    pos = 0
    while pos < m:
        if _deadline_passed(p.deadline):
            break
        sub = np.ascontiguousarray(rows[pos:pos + p.chunk_size])
        t0 = time.perf_counter()
        n_done, att, wf, wv, ne, state = P.brute(sub, state, work)
        dt = time.perf_counter() - t0
        n_eval += ne
        st[pos:pos + n_done] = np.where(att, 2, 1)
        wit_f[pos:pos + n_done] = wf
        wit_v[pos:pos + n_done] = wv
        pos += n_done
        if report is not None:
            report("brute", n_done)
        work = _next_work(work, dt)
    return st, wit_f, wit_v, n_eval


def _remaining_work(state, budget, attained):
    """Expected remaining work of a paused exhaustive search, or ``None`` (the anytime scheduler's
    ``estimate``; :func:`fairlens.certify._schedule.settle_rows`).

    Paused inside the value search of a pattern (``state[0] == 2``), the search has done the share
    ``f`` of the range ``lo .. hi`` of its outermost value index (``state[3 + budget]``, the last two
    entries of ``state``); the rest of the pattern is expected to cost ``attained * (1 - f) / f``.
    The patterns still to come are not counted: on forests the search of a row is almost all in the
    value searches of its first patterns (the share of the patterns done is no guide there).

    Parameters
    ----------
    state : ndarray of int64, shape (5 + 2 * budget,)
        The state of :func:`fairlens.certify._search.brute_search`.
    budget : int
    attained : int
        Work the row has had.

    Returns
    -------
    float or None
        ``None`` when the search is not paused in a value search.
    """
    if state is None or state[0] != 2:
        return None
    lo, hi, cur = int(state[3 + 2 * budget]), int(state[4 + 2 * budget]), int(state[3 + budget])
    if hi < lo:
        return None
    f = min(1.0, (cur - lo + 1) / (hi - lo + 1))
    if f <= 0:
        return None
    return attained * (1.0 - f) / f


def _brute_anytime(payload, rows, n_jobs, bar):
    """Brute force of ``rows`` under a deadline, rows sharing the time (:mod:`._schedule`).

    Same return as :func:`_brute_block`. Each row's search runs in slices of growing work,
    least-worked row first, then the row with the least expected remaining work first
    (:func:`_remaining_work`), on ``n_jobs`` threads of this process (the kernels release the GIL;
    no worker process has to start before the deadline); a row is reported to ``bar`` as soon as
    it is settled.

    **Smallest attacks first.** A row's search is the exhaustive search at budget 1, then, if it
    finds no attack, at budget 2, ..., up to the budget certified (iterative deepening; each search
    exactly resumable). Without a limit the one search at the full budget visits the patterns depth
    first, every pair through the first feature before the second feature alone, so a row attacked
    by changing one low-ranked feature can cost seconds; at budget 1 it costs milliseconds, and the
    budget-1 search is a small share of a robust row's work (its patterns are among the
    budget-``b`` search's). The verdict is the same (an attack on fewer features is an attack within
    the budget; a row is robust only after the search at the full budget); the witness is the first
    attack on the fewest features, which may differ from the unlimited run's (same order within one
    size) and is the same at every ``n_jobs`` and every limit; the evaluation count includes the
    smaller searches.
    """

    p = payload
    P = _local(p)
    b = p.budget
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    m = rows.shape[0]
    st = np.zeros(m, np.int8)
    wit_f = np.full((m, b), -1, np.int64)
    wit_v = np.full((m, b), np.nan, np.float64)
    evals = np.zeros(m, np.int64)

    def step(k, state, work):
        level, inner = (1, P.new_state(1)) if state is None else state
        left = int(work)
        while True:
            n_done, att, wf, wv, ne, inner = P.brute(rows[k:k + 1], inner, left, budget=level)
            evals[k] += ne  # each row's count is touched by one thread at a time
            if n_done == 0:
                return False, None, (level, inner)
            if att[0] or level == b:
                f = np.full(b, -1, np.int64)
                v = np.full(b, np.nan, np.float64)
                f[:level], v[:level] = wf[0], wv[0]
                return True, (bool(att[0]), f, v), (level, inner)
            # no attack on `level` features: the next budget, in what is left of this slice
            level, inner = level + 1, P.new_state(level + 1)
            left -= max(int(ne), 1)
            if left <= 0:
                return False, None, (level, inner)

    def estimate(k, state, attained):
        level, inner = state
        return _remaining_work(inner, b, attained) if level == b else None

    def done(k, outcome):
        att, wf, wv = outcome
        st[k] = 2 if att else 1
        wit_f[k], wit_v[k] = wf, wv
        bar.add("brute", 1)

    workers = max(1, min(effective_n_jobs(n_jobs), m))
    _record(workers, f"anytime brute force on {workers} thread(s) of this process", m)
    settle_rows(step, m, deadline=p.deadline, n_workers=workers, first_work=_START_WORK, max_work=_MAX_WORK,
                on_done=done, estimate=estimate)
    return st, wit_f, wit_v, int(evals.sum())


def _run_blocks(func, payload, blocks, n_jobs, bar, stages, merge=False):
    """``(blocks, [func(payload, block) for block in blocks])`` through
    :func:`fairlens._parallel.run_chunks`.

    Sequentially the block function reports every kernel call to ``bar``; in
    parallel each finished task sets the stages' row counts. ``merge=True``: run sequentially,
    the blocks are one block (their rows concatenated; the blocks returned are then that one
    block). For the exhaustive search, whose rows are independent and exactly resumable, this
    changes how its work is cut into kernel calls, never a row's verdict, witness or evaluation
    count; it saves the fixed cost of a kernel call per 2-row block.
    """
    if not blocks:
        return blocks, []
    n_jobs = plan_n_jobs(n_jobs, len(blocks), payload.deadline)
    if len(blocks) == 1 or effective_n_jobs(n_jobs) <= 1:
        if merge and len(blocks) > 1:
            blocks = [np.concatenate(blocks)]
        return blocks, run_chunks(partial(func, report=bar.add), payload, blocks, n_jobs=1)
    sizes = np.cumsum([0] + [blk.size for blk in blocks])

    def on_task(done, total):
        for stage in stages:
            bar.set(stage, int(sizes[done]))

    return blocks, run_chunks(func, payload, blocks, n_jobs=n_jobs, progress=on_task)


class _Progress:
    """Progress over the stages: a ``tqdm.auto`` bar per stage and/or ``progress(stage, done, total)``."""

    _NAMES = {"vote": "clean vote", "flb": "FLB", "elb": "ELB", "brute": "brute force", "delta": "delta"}

    def __init__(self, progress, budget):
        self.callback = progress if callable(progress) and progress is not True else None
        self.use_bar = progress is True
        self.budget = budget
        self.done, self.total = {}, {}
        self.bar = None
        self.bar_stage = None

    def start(self, stage, total):
        self.done[stage], self.total[stage] = 0, int(total)
        if self.use_bar:
            if self.bar is not None:
                self.bar.close()
            from tqdm.auto import tqdm

            self.bar = tqdm(total=int(total), desc=f"{self._NAMES[stage]} b={self.budget}")
            self.bar_stage = stage

    def add(self, stage, k):
        self.set(stage, self.done.get(stage, 0) + int(k))

    def set(self, stage, done):
        self.done[stage] = done
        if self.bar is not None and stage == self.bar_stage:
            self.bar.update(done - self.bar.n)
        if self.callback is not None:
            self.callback(stage, done, self.total.get(stage, done))

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


@strict_keywords(renamed=RENAMED_MODEL)
@validated({**_CALL_TABLE, "budgets": [list, tuple, range, np.ndarray]})
def accuracy_under_attack(model, X, y, *, budgets=(1, 2, 3), method="cascade", vote=None, prune=True,
                          tie_class=None, progress=False, chunk_size=64, n_jobs=None, time_limit=None,
                          missing="auto"):
    """Table of accuracies (clean, FLB, ELB, exact), stage counts and times per budget.

    Runs :func:`certify` once per budget (the cascade gives all three
    accuracies of section 4 in one pass) and stacks the summaries.

    Parameters
    ----------
    model : fitted tree ensemble
        Any model :func:`certify` takes.
    X : array-like or DataFrame of shape (n, d)
        Test instances, as in :func:`certify`.
    y : array-like of shape (n,)
        Their true labels, each one of ``model.classes_``.
    budgets : iterable of int
        The budgets ``b`` (each ``1 <= b <= n_features``), at least one.
    method, vote, prune, tie_class, progress, chunk_size, n_jobs, missing : as in :func:`certify`
        ``n_jobs`` parallelises each budget's rows (same table at every ``n_jobs``).
    time_limit : float or None
        For the whole table: the budgets run in the order given and each gets
        what is left of it (columns ``accuracy_lower``/``accuracy_upper`` and
        ``n_unknown`` say what was settled).

    Returns
    -------
    pandas.DataFrame
        One :meth:`CertificationResult.summary` row per budget.

    Raises
    ------
    TypeError, ValueError
        For an invalid argument, naming it (the constraints declared once for
        :func:`certify`, for every model type); any other keyword is a ``TypeError`` naming
        it (``forest=``, the old name of ``model``, names ``model=``).

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from fairlens.certify import accuracy_under_attack
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X[:400], y[:400])
    >>> table = accuracy_under_attack(rf, X[400:], y[400:], budgets=(1, 2))
    >>> list(table["budget"])
    [1, 2]
    """
    p = validate_certify_params(dict(method=method, vote=vote, prune=prune, tie_class=tie_class, progress=progress,
                                     chunk_size=chunk_size, n_jobs=n_jobs, time_limit=time_limit,
                                     missing=missing),
                                caller="accuracy_under_attack")
    _check_progress(p["progress"])  # before any work: a callable of the wrong shape is refused here
    if isinstance(budgets, (str, bytes)) or not hasattr(budgets, "__iter__"):
        raise TypeError(f"budgets must be a list of integers; got {budgets!r}.")
    budgets = list(budgets)
    if not budgets:
        raise ValueError("budgets must contain at least one budget.")
    t0 = time.perf_counter()
    flat, code = read_with_coder(model, vote=vote, tie_class=tie_class)
    budgets = [_check_budget(b, flat.n_features, name="budgets") for b in budgets]
    on, nan_rows = resolve_missing(p["missing"], model, flat, X)
    limit = p["time_limit"]
    frames = []
    for b in budgets:
        left = None if limit is None else max(0.0, limit - (time.perf_counter() - t0))
        pb = dict(p, budget=b, progress=_check_progress(p["progress"]), time_limit=left, missing_on=on,
                  nan_rows=nan_rows)
        frames.append(_certify_read(flat, X, y, b, pb, code).summary())
    return pd.concat(frames, ignore_index=True)


@strict_keywords(renamed=RENAMED_MODEL)
@validated({
    "budget": CERTIFY_CONSTRAINTS["budget"], "vote": CERTIFY_CONSTRAINTS["vote"],
    "missing": CERTIFY_CONSTRAINTS["missing"], "model": "no_validation", "x": "no_validation",
    "y": "no_validation", "tie_class": "no_validation",
})
def instance_covers(model, x, y, *, budget=1, tie_class=None, vote=None, missing=False):
    """Build ``S_f^+``/``S_f^-``, delta and the FLB sum for one instance.

    By default (``missing=False``) the sets are the paper's finite ones and match
    ``certify(..., missing=False)``: an attacker writing finite values only. With
    ``missing="auto"``/``True`` (``certify``'s default threat model) they are the sets of the
    NaN-coded model that ``certify`` uses: NaN is the smallest value of every feature, so
    ``S_f^-`` also holds every tree that blanking ``f`` moves.

    Parameters
    ----------
    model : fitted tree ensemble
        Any model :func:`certify` takes.
    x : array-like of shape (n_features,), one-row DataFrame or Series
        One instance (a DataFrame or Series is aligned to the model's feature names).
    y : label
        Its label (one of ``model.classes_``).
    budget : int
        ``1 <= budget <= n_features``.
    tie_class : label, optional
        As in :func:`certify` (hard vote only).
    vote : {"soft", "hard"}, optional
        As in :func:`certify` (forests only).
    missing : {False, "auto", True}, default=False
        The threat model, as in :func:`certify` (default: finite values, the paper's sets). An
        ``x`` containing NaN is accepted wherever the model's ``predict`` accepts NaN.

    Returns
    -------
    InstanceCovers
        The membership matrix, deltas, set sizes and FLB sums of the instance.

    Raises
    ------
    TypeError, ValueError
        For an invalid argument, naming it (the same declared constraints as
        :func:`certify`, for every model type); an unknown keyword is a ``TypeError`` naming
        it (``forest=``, the old name of ``model``, names ``model=``).

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from fairlens.certify import instance_covers
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    >>> ic = instance_covers(rf, X[0], y[0], budget=1)
    >>> ic.membership.shape
    (5, 30)
    """
    t0 = time.perf_counter()
    p = validate_certify_params(dict(budget=budget, vote=vote, tie_class=tie_class, missing=missing),
                                caller="instance_covers")
    flat, code = read_with_coder(model, vote=vote, tie_class=tie_class)
    budget = check_budget(p["budget"], flat.n_features)
    on, nan_rows = resolve_missing(p["missing"], model, flat)
    if on or nan_rows:
        if not flat.nan_code:
            offer = None
            if not on:  # only the instance's own blank features (writing NaN there changes nothing)
                xa = x.to_numpy() if hasattr(x, "to_numpy") else x
                try:
                    offer = np.isnan(np.asarray(xa, dtype=np.float64)).reshape(-1)
                except (TypeError, ValueError):
                    offer = None  # one_instance names the bad x
                if offer is not None and offer.shape != (flat.n_features,):
                    offer = None
            if on or (offer is not None and offer.any()):
                flat = code(offer)
    cov = Predictor.covers(flat, x, y, budget)
    cov.params = {"budget": cov.budget, "vote": cov.vote, "missing": p["missing"], "nan_attack": bool(on)}
    cov.elapsed = time.perf_counter() - t0
    return cov
