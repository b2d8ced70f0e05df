"""The individual discrimination check of :func:`fairlens.audit` (the MAFT slice's)."""
from __future__ import annotations

import math
import time

import numpy as np

from .._parallel import chunk_rng
from .._stats import wilson, z_of
from ._core import (
    CheckOutcome,
    _cell,
    _ci,
    _deadline_stop,
    _finding,
    _pct,
    _wilson_test,
)

# ------------------------------------------------------------------------ 2. individual (MAFT)
#: the most model rows one MAFT lockstep step may score under a time share (see ``check``)
_ROWS_PER_STEP = 250_000

class _AtThreshold:
    """The audit's scorer, rescaled so that its decision threshold ``t`` maps to MAFT's 0.5.

    Piecewise linear and increasing (``s < t`` -> ``[0, 0.5)``, ``s >= t`` -> ``(0.5, 1]``), so the
    predicted label of every row is the audit's ``score >= threshold`` and the zero-order gradients
    MAFT follows keep their direction."""

    def __init__(self, scorer, t):
        self.scorer, self.t = scorer, float(t)

    def __call__(self, X):
        s = np.asarray(self.scorer(X), dtype=np.float64)
        t = self.t
        return np.where(s >= t, 0.5 + 1e-9 + (0.5 - 1e-9) * (s - t) / (1.0 - t), 0.5 * s / t)


def _decision_model(ctx):
    """What the individual check asks: the user's model when the audit thresholds at 0.5, else the
    scorer rescaled to the audit's threshold (``(model, favourable)``)."""
    if ctx.threshold == 0.5:
        return ctx.model, ctx.favourable_class
    return _AtThreshold(ctx.scorer, ctx.threshold), 1


def _make_maft(ctx, n_seeds, n_local, random_state):
    """ADAPTER: build the MAFT search (the paper's defaults) for ``ctx``; returns ``(maft, run_kwargs)``."""
    from ..maft import MAFT  # deferred: import time: fairlens.maft loads only when used

    model, fav = _decision_model(ctx)
    maft = MAFT(model, ctx.dataset, protected=list(ctx.protected), favourable=fav,
                n_seeds=n_seeds, n_local=n_local, random_state=random_state)
    return maft, {}


def _discriminatory(ctx, X):
    """ADAPTER: which rows of ``X`` change their predicted label when only the protected
    attributes change (:func:`fairlens.maft.discriminatory_mask`), at the audit's threshold."""
    from ..maft import discriminatory_mask  # deferred: import time: fairlens.maft loads only when used

    model, fav = (ctx.scorer, ctx.favourable_class) if ctx.threshold == 0.5 else _decision_model(ctx)
    return np.asarray(discriminatory_mask(model, ctx.dataset, X, list(ctx.protected), favourable=fav), dtype=bool)


def check(ctx, seconds):
    """Individual discrimination: the rate on a seeded sample of the data (Wilson interval) and MAFT's
    discriminatory pairs (Wang et al., ICSE 2024, with the paper's defaults)."""

    opts = ctx.options
    out = CheckOutcome("individual", "Individual discrimination (MAFT)", random_state=ctx.random_state)
    t0 = time.perf_counter()
    ds = ctx.dataset
    conf = opts["confidence"]
    # 1. the rate, on a seeded sample of the rows, in fixed chunks until the sample or its time is used
    rate_end = t0 + 0.45 * seconds
    order = chunk_rng(ctx.random_state, 0, 17).permutation(ds.n_samples)[: opts["n_rate"]]
    k = n = 0
    combos = int(np.prod([len(np.unique(ds.X[:, ds.index_of(p)])) for p in ctx.protected]))
    step = int(max(10, min(250, 250_000 // max(1, combos))))   # ~250,000 model rows per time check
    rate_cut = False
    for s in range(0, order.size, step):
        if time.perf_counter() >= rate_end and n > 0:
            rate_cut = True
            break
        rows = np.sort(order[s:s + step])
        k += int(_discriminatory(ctx, ds.X[rows]).sum())
        n += rows.size
    lo, hi = (float(v) for v in wilson(k, n, float(z_of(0.5 + conf / 2))))
    rate = k / n
    t_rate = time.perf_counter() - t0
    out.params = {"n_rate": opts["n_rate"], "rate_sample": "rows of the data, without replacement",
                  "confidence": conf, "protected": list(ctx.protected), "threshold": ctx.threshold}
    pv = ", ".join(ctx.protected)
    sentence = (f"Of {n:,} individuals drawn from the data, {_pct(rate)} ({_ci(lo, hi, conf)}, Wilson) get a "
                f"different prediction when only their protected attributes ({pv}) change")
    f = _finding("individual", "individual_discrimination_rate", None, rate, lo, hi, sentence,
                 interval=f"{100 * conf:.0f}% Wilson interval", test=_wilson_test(k, n),
                 se=(math.sqrt(max(rate * (1 - rate), 1.0 / n) / n), 1))
    out.findings.append(f)
    if rate_cut:
        out.status = "cut short"
        out.notes.append(f"The rate was measured on {n:,} of the {order.size:,} sampled rows before its time "
                         "ran out; the interval accounts for the smaller sample.")
    # 2. MAFT search for example pairs, for the rest of the time.  MAFT checks its stop between
    # lockstep steps, and one step scores every active seed's C similar instances; under a time
    # share the seeds are capped so that a step is at most ~250,000 model rows (else a protected
    # column with thousands of values makes one step outlast the share many times over)
    stop, _ = _deadline_stop(max(0.0, t0 + seconds - time.perf_counter()))
    n_seeds = opts["maft_seeds"]
    if seconds < 1e9 and n_seeds * combos > _ROWS_PER_STEP:
        n_seeds = max(1, _ROWS_PER_STEP // combos)
        out.notes.append(f"The protected attributes have {combos:,} value combinations: MAFT ran with "
                         f"{n_seeds:,} seeds instead of {opts['maft_seeds']:,} so that one step of its "
                         "search (every seed's similar instances scored at once) stays within the time "
                         "budget's reach; run the audit without a time budget for the paper's 1,000.")
    maft, run_kw = _make_maft(ctx, n_seeds, opts["maft_local"], ctx.random_state)
    t_maft = time.perf_counter()
    res = maft.run(stop=stop, n_jobs=ctx.n_jobs, **run_kw)
    t_maft = time.perf_counter() - t_maft
    out.result = res
    mp = maft.params() if callable(getattr(maft, "params", None)) else dict(getattr(maft, "params", {}) or {})
    out.params.update({"maft_" + k_: v for k_, v in mp.items() if k_ not in ("protected",)})
    out.params.update(maft_n_seeds=n_seeds, maft_n_local=opts["maft_local"], n_rate_measured=n,
                      rate_seconds=round(t_rate, 3), maft_seconds=round(t_maft, 3))
    if res.stopped:
        out.status = "cut short"
        out.notes.append("The MAFT search was cut short by the time budget; it reports the instances found "
                         "until then (the rate above is measured separately).")
    n_inst = int(len(res.instances))
    out.findings.append(_finding(
        "individual", "individual_instances_found", None, n_inst, None, None,
        f"MAFT found {n_inst:,} unique discriminatory instances "
        f"({'cut short by the time budget' if res.stopped else 'with its full budget'}); a count of what one "
        "seeded search found, not an estimate of a rate.", interval=None))
    if n_inst:
        out.tables.append(_pairs_table(ctx, res, opts["n_examples"]))
    out.verdict = f["sentence"]
    out.paragraphs.append(
        "An individual is discriminated against when changing only their protected attributes changes "
        "the model's decision (Definition 2.1 of the MAFT paper). The rate is the share of real rows of "
        "the data for which some other combination of protected values flips the prediction, with a "
        "Wilson interval. MAFT (black-box, zero-order gradients) then searches for such individuals; "
        "the table shows some of its pairs in readable values, the changed attribute marked.")
    return out


def _pairs_table(ctx, res, n_examples):
    ds = ctx.dataset
    k = min(n_examples, len(res.instances))
    a = ds.decode(np.asarray(res.instances[:k]))
    b = ds.decode(np.asarray(res.counterparts[:k]))
    cols = list(ds.feature_names)
    rows = []
    for i in range(k):
        changed = [c for c in cols if str(a.iloc[i][c]) != str(b.iloc[i][c])]
        for which, frame, sc in (("original", a, res.instance_scores), ("changed", b, res.counterpart_scores)):
            cells = [f"pair {i + 1}" if which == "original" else "", which]
            for c in cols:
                v = frame.iloc[i][c]
                v = v.item() if hasattr(v, "item") else v
                cells.append({"text": str(v), "highlight": c in changed})
            cells.append(_cell(sc[i], unit="rate"))
            rows.append(cells)
    return {"title": "Discriminatory pairs found by MAFT", "columns": ["Pair", "Row", *cols, "Favourable score"],
            "rows": rows, "note": "Each pair differs only in the highlighted protected attribute(s) and gets "
                                  "different predictions.",
            "changed": [[c for c in cols if str(a.iloc[i][c]) != str(b.iloc[i][c])] for i in range(k)]}
