"""The explanations check of :func:`fairlens.audit` (the shuffling-attack slice's)."""
from __future__ import annotations

import math
import time

import numpy as np

from .._parallel import chunk_rng
from ._core import (
    CheckOutcome,
    _cell,
    _ci,
    _deadline_stop,
    _finding,
    _float,
    _pct,
    _plain,
)


# ------------------------------------------------------------------------ 4. explanations
def _bootstrap_test(boot):
    """Percentile-bootstrap p-values of a condition (the share of replicates on the null's side)."""
    b = np.asarray(boot, dtype=np.float64)
    b = b[np.isfinite(b)]

    def test(cond):
        if not b.size:
            return math.nan, math.nan
        below, above = int((b <= cond.value).sum()), int((b >= cond.value).sum())
        p_up, p_down = (1 + below) / (b.size + 1), (1 + above) / (b.size + 1)
        return (p_up, p_down) if cond.upward else (p_down, p_up)

    return test


def _explain(ctx, X, background, random_state, nsamples, stop, explainer="shap"):
    """ADAPTER: SHAP or LIME attributions of the model on encoded rows (:func:`fairlens.shuffle.explain`);
    rows not explained when ``stop()`` turns true are NaN.  Kernel SHAP runs without shap's l1
    feature selection (which would give all but 10 features an attribution of 0)."""
    from ..shuffle import ShuffledModel, explain  # deferred: import time: loads numba only when used

    model = ctx.model if isinstance(ctx.model, ShuffledModel) else ctx.scorer
    kw = {"kernel_kwargs": {"l1_reg": False}} if explainer == "kernel" else {}
    return np.asarray(explain(model, X, explainer, background, nsamples=nsamples, random_state=random_state, **kw,
                              feature_names=list(ctx.dataset.feature_names), data=ctx.dataset,
                              callback=lambda i, n: (i < MIN_EXPLAINED and time.perf_counter() < ctx.deadline)
                              or not stop(), n_jobs=ctx.n_jobs),
                      dtype=np.float64)


# SHAP's exact and permutation explainers compile shap's own numba functions on their first call
# in a process: 10-40 s measured on two cores (shap 0.51), not cached by numba and not interruptible
# by a time budget.  The audit therefore computes SHAP values of at most MAX_ENUMERATED features
# with Kernel SHAP over **every** coalition (no numba, no sampling: the exact Shapley values of the
# interventional game on the background, Lundberg & Lee 2017, Theorem 2; equal to the exact
# explainer's to 3e-16 in our check).  For more features it uses the permutation explainer (two
# antithetic permutations by default), except that a cold process under a time budget with a share
# below SHAP_COLD_SECONDS uses Kernel SHAP with the same number of evaluations (sampled coalitions,
# no l1 feature selection), and says so.
MAX_ENUMERATED = 10
SHAP_COLD_SECONDS = 30.0


def _shap_algorithm(ctx, explainer, nsamples):
    """``(explainer, nsamples, description)`` the audit runs for the user's ``explainer``."""
    d = ctx.dataset.n_features
    if explainer == "shap" and d <= MAX_ENUMERATED:
        return "kernel", 2 ** d, f"Kernel SHAP over all {2 ** d - 2:,} coalitions (exact Shapley values)"
    if explainer == "shap":
        return "shap", nsamples, f"permutation SHAP, {nsamples:,} evaluations per row"
    if explainer == "kernel":
        return "kernel", nsamples, f"Kernel SHAP, {nsamples:,} sampled coalitions per row"
    return explainer, nsamples, f"LIME, {nsamples:,} samples per row"


def _shap_cold():
    """Whether shap's masker has not been compiled in this process."""
    import sys

    masking = getattr(sys.modules.get("shap.maskers._tabular"), "_delta_masking", None)
    return not getattr(masking, "signatures", None)


#: Rows every explainer explains even past its share of the time, as long as the audit's whole budget is
#: not spent (the first call of an explainer in a process can take seconds to compile; an attribution
#: share from fewer rows would say nothing).
MIN_EXPLAINED = 5


def _consistency(ctx, X, random_state):
    """ADAPTER: the batch-consistency check of the scoring function (:func:`fairlens.shuffle.batch_consistency`)."""
    from ..shuffle import ShuffledModel, batch_consistency  # deferred: import time: loads numba only when used

    kw = {} if isinstance(ctx.model, ShuffledModel) else {"favourable": ctx.favourable_class}
    return batch_consistency(ctx.model, X, random_state=random_state, data=ctx.dataset, **kw)


def check(ctx, seconds):
    """Explanations: SHAP attribution share of the protected features, and whether the model's
    scores depend on the batch (the shuffling attack's signature, Yadav et al.)."""

    opts = ctx.options
    out = CheckOutcome("explanations", "Explanations and output shuffling", random_state=ctx.random_state)
    t0 = time.perf_counter()
    ds = ctx.dataset
    rng = chunk_rng(ctx.random_state, 0, 23)
    idx = np.sort(rng.permutation(ds.n_samples)[: opts["n_consistency"]])
    bc = _consistency(ctx, ds.X[idx], ctx.random_state)
    frac = float(bc.frac_rows_changed)
    sentence = (f"Scoring the same {idx.size:,} rows in different batches, orders and one by one moved "
                f"{_pct(frac)} of the scores (largest change {_plain(bc.max_abs_diff)}; changes up to "
                f"{_plain(bc.tol)} count as rounding)")
    sentence += (": the model's output depends on the batch, as an output-shuffling model's does, so its "
                 "explanations cannot be trusted (one such row proves it)" if bc.suspicious else
                 ": no score depended on the batch (which does not prove that none ever does)")
    value = max(frac, 1.0 / idx.size) if bc.suspicious else frac
    out.findings.append(_finding("explanations", "batch_inconsistency", None, value, None, None, sentence,
                                 interval=None))
    out.tables.append({"title": "Batch-consistency queries",
                       "columns": ["Query", "Rows", "Largest change", "Share of rows changed", "Non-finite answers"],
                       "rows": [[str(q["kind"]), int(q["n_rows"]), _float(q["max_abs_diff"]),
                                 _cell(q["frac_changed"], unit="rate"), int(q["n_nonfinite"])]
                                for _, q in bc.queries.iterrows()], "note": None})
    # SHAP (then LIME) on a small seeded sample, for what is left of the time
    n_exp, n_bg = opts["n_explain"], opts["n_background"]
    eidx0 = np.sort(rng.permutation(ds.n_samples)[:n_exp])
    bidx = np.sort(chunk_rng(ctx.random_state, 1, 23).permutation(ds.n_samples)[:n_bg])
    conf = opts["confidence"]
    names = list(ds.feature_names)
    prot_idx = [ds.index_of(p) for p in ctx.protected]
    explainers = [e for e in opts["explainers"]]
    out.result = {"batch_consistency": bc, "attributions": {}, "rows": {}}
    used = {}
    for k, explainer in enumerate(explainers):
        label = {"shap": "SHAP", "kernel": "SHAP", "lime": "LIME"}.get(explainer, explainer)
        if explainer == "lime":
            nsamples = opts["lime_nsamples"]
        else:  # default: two permutations (forward and back) of the permutation explainer
            nsamples = opts["shap_nsamples"] or 4 * ds.n_features + 2
        # SHAP may use what LIME leaves: the first explainer gets the time minus a share for the others
        left = max(0.0, t0 + seconds - time.perf_counter())
        if time.perf_counter() >= ctx.deadline:   # the audit's budget is spent: do not start another explainer
            out.status = "cut short"
            out.notes.append(f"{label} did not run: the audit's time budget was spent.")
            used[explainer] = {"nsamples": int(nsamples), "rows": 0}
            continue
        mine = left * (0.6 if k < len(explainers) - 1 else 1.0)
        run_as, nsamples, algorithm = _shap_algorithm(ctx, explainer, nsamples)
        if seconds < 1e9 and mine < SHAP_COLD_SECONDS and run_as == "shap" and _shap_cold():
            run_as, algorithm = "kernel", f"Kernel SHAP, {nsamples:,} sampled coalitions per row"
            out.notes.append(f"SHAP values by Kernel SHAP ({nsamples:,} sampled coalitions per row) instead of "
                             "the permutation explainer, whose first call in a process compiles shap's numba "
                             f"code (10-40 s measured on two cores), more than this check's {mine:.1f} s share; "
                             f"a share of at least {SHAP_COLD_SECONDS:.0f} s, or no time budget, uses the "
                             "permutation explainer.")
        stop, _ = _deadline_stop(mine)
        A = _explain(ctx, ds.X[eidx0], ds.X[bidx], ctx.random_state, nsamples, stop, run_as)
        done = ~np.isnan(A).any(axis=1)
        eidx = eidx0[done]
        if not done.all():
            out.status = "cut short"
            out.notes.append(f"{label} explained {int(done.sum())} of {eidx0.size} rows before its time ran out.")
            A = A[done]
        out.result["attributions"][explainer], out.result["rows"][explainer] = A, eidx
        used[explainer] = {"nsamples": int(nsamples), "rows": int(eidx.size), "algorithm": algorithm}
        if A.shape[0] == 0:
            continue
        absA = np.abs(A)
        mean_abs = absA.mean(axis=0)
        total = mean_abs.sum()
        share = float(mean_abs[prot_idx].sum() / total) if total > 0 else float("nan")
        boot = []  # bootstrap over the explained rows (counter-based stream)
        brng = chunk_rng(ctx.random_state, 2 + k, 23)
        for _ in range(500):
            m = absA[brng.integers(0, absA.shape[0], absA.shape[0])].mean(axis=0)
            boot.append(m[prot_idx].sum() / m.sum() if m.sum() > 0 else np.nan)
        boot = np.asarray(boot)
        lo, hi = (np.nanquantile(boot, [(1 - conf) / 2, (1 + conf) / 2])
                  if np.isfinite(boot).any() and eidx.size >= 5 else (np.nan, np.nan))  # no interval from < 5 rows
        ranks = (-mean_abs).argsort().argsort() + 1
        prot_words = ", ".join(f"{names[j]} (rank {ranks[j]} of {len(names)})" for j in prot_idx)
        out.findings.append(_finding(
            "explanations", "protected_attribution_share", label, share, lo, hi,
            f"{label} puts {_pct(share)} ({_ci(lo, hi, conf)}, bootstrap over the explained rows) of the model's "
            f"attribution on the protected features: {prot_words}, over {eidx.size} explained rows",
            interval=f"{100 * conf:.0f}% percentile bootstrap interval", test=_bootstrap_test(boot)))
        out.tables.append({"title": f"Mean |{label} attribution| per feature",
                           "columns": ["Feature", "Protected", f"Mean |{label} attribution|", "Share", "Rank"],
                           "rows": [[names[j], j in prot_idx, float(mean_abs[j]),
                                     _cell(mean_abs[j] / total if total > 0 else None, unit="rate"), int(ranks[j])]
                                    for j in np.argsort(-mean_abs)], "note": None})
    if time.perf_counter() - t0 > seconds * 1.05:
        out.notes.append(f"The explanations took {time.perf_counter() - t0:.1f} s, beyond this check's share of the "
                         f"time budget ({seconds:.1f} s): each explainer explains at least {MIN_EXPLAINED} rows while "
                         "the audit's budget lasts, and its first call in a process can take seconds.")
    out.params = {"n_consistency": int(idx.size), "n_explain": int(eidx0.size), "n_background": int(bidx.size),
                  "explainers": used, "consistency_tolerance": float(bc.tol), "confidence": conf}
    out.verdict = out.findings[0]["sentence"]
    out.paragraphs.append(
        "A model can hide its use of a protected feature from SHAP and LIME by shuffling its outputs within "
        "each batch the explainer sends (Yadav et al., output-shuffling attacks). The batch-consistency check "
        "sends the same rows in several batches: an honest model scores each row the same way every time. "
        "The SHAP and LIME shares are informative only for a consistent model. "
        + " ".join(f"{'SHAP' if e != 'lime' else 'LIME'}: {u['algorithm']}." for e, u in used.items()
                   if u.get("algorithm")))
    return out
