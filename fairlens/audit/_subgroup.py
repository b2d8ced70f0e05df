"""The subgroup discrimination check of :func:`fairlens.audit` (the TestSGD slice's)."""
from __future__ import annotations

import math
import time

import numpy as np

from .. import _groupstats as gs
from .. import _stats
from ._core import (
    CheckOutcome,
    _cell,
    _ci,
    _deadline_stop,
    _finding,
    _num,
    _pct,
    _val,
)


# ------------------------------------------------------------------------ 3. subgroup (TestSGD)
def _many_valued(ctx):
    """The protected attributes TestSGD cannot enumerate: categorical with more than its
    ``max_values`` (12) values, whose 2^k - 2 value subsets are too many to mine."""
    from ..testsgd._rules import MAX_CATEGORY_VALUES  # deferred: import time: loads numba, scipy only when used

    ds, out = ctx.dataset, []
    for p in ctx.protected:
        j = ds.index_of(p)
        cats = ds.categories.get(p)
        if cats or ds.feature_types[j] == "categorical":
            k = len(cats) if cats else int(np.unique(ds.X[:, j]).size)
            if k > MAX_CATEGORY_VALUES:
                out.append((p, k))
    return out


def _make_testsgd(ctx, random_state, top_k, protected=None):
    """ADAPTER: TestSGD with the paper's defaults (theta 5%, error 0.05, delta 0.95, sample_thr
    1000) on ``ctx`` (over ``protected``, default the audit's)."""
    from ..testsgd import TestSGD  # deferred: import time: loads numba, scipy only when used

    protected = list(ctx.protected) if protected is None else list(protected)
    return TestSGD(ctx.model, ctx.dataset, protected=protected, favourable=ctx.favourable_class,
                   threshold=ctx.threshold, random_state=random_state, top_k=top_k)


def _run_testsgd(tester, stop, n_jobs):
    """ADAPTER: run it (stop, n_jobs)."""
    return tester.run(stop=stop, n_jobs=n_jobs)


def check(ctx, seconds):
    """Subgroup discrimination (TestSGD, Zhang et al.): the rule sets with the largest FRESH estimate.

    Rule sets whose smaller side (the group or everyone else) holds fewer than ``min_side`` of the
    rows (default 5%, TestSGD's own support threshold) or fewer than ``min_group_size`` rows are not
    listed: their comparison would rest on a handful of people (counted in the notes)."""
    opts = ctx.options
    out = CheckOutcome("subgroup", "Subgroup discrimination (TestSGD)", random_state=ctx.random_state)
    t0 = time.perf_counter()
    many = _many_valued(ctx)
    protected = [p for p in ctx.protected if p not in dict(many)]
    for p, k in many:
        out.notes.append(f"'{p}' has {k:,} values: TestSGD mines rules over subsets of a protected "
                         f"attribute's values (2^{k:,} - 2 of them here), so it searches the other protected "
                         f"attributes only; the group check compares '{p}''s largest groups.")
    if not protected:
        out.status = "not applicable"
        out.verdict = ("Not computed: every protected attribute has more than 12 values, too many for "
                       "TestSGD's rule mining (see the notes).")
        return out
    stop, end = _deadline_stop(0.8 * seconds)
    tester = _make_testsgd(ctx, ctx.random_state, opts["subgroup_top_k"], protected)
    rep = _run_testsgd(tester, stop, ctx.n_jobs)
    out.result = rep
    params = dict(rep.params)
    params.pop("random_state", None)
    out.params = dict(params, min_side=opts["min_side"], min_group_size=opts["min_group_size"],
                      n_listed=opts["n_subgroups"])
    n_rows = ctx.dataset.n_samples
    valid, dropped = [], 0
    for r in rep.results:
        side = min(r.support, 1.0 - r.support)
        if side < opts["min_side"] or side * n_rows < opts["min_group_size"]:
            dropped += 1
            continue
        valid.append(r)
    chosen = []
    refreshed = same_split = 0
    seen = set()
    index = {str(rs): i for i, rs in enumerate(rep.frequent.rule_sets)}
    for r in valid:
        if len(chosen) >= opts["n_subgroups"]:
            break
        key = _split_key(rep.frequent, index.get(str(r.rule_set)), n_rows)
        if key is not None and key in seen:  # R and not-R (or equivalent rule sets): one comparison
            same_split += 1
            continue
        seen.add(key)
        fr = getattr(r, "fresh", None)
        if fr is None:  # cut short before the fresh re-estimates: re-estimate here, on another stream
            if time.perf_counter() > t0 + seconds:
                break
            fr = tester.score(r.rule_set, random_state=(ctx.random_state + 7919) % 2**32)
            refreshed += 1
            if fr is None:
                continue
        chosen.append((r, fr))
    chosen.sort(key=lambda t: -t[1].score)
    if rep.stopped:
        out.status = "cut short"
        out.notes.append(f"TestSGD was cut short by the time budget: {len(rep.results):,} of "
                         f"{rep.n_groups:,} distinct groups ({rep.n_rule_sets:,} frequent rule sets) were scored.")
    if same_split:
        out.notes.append(f"{same_split} rule set(s) split the rows exactly as a listed one does (e.g. a group and "
                         "its complement) and are not listed again.")
    if refreshed:
        out.notes.append(f"{refreshed} listed rule set(s) were re-estimated on an independent stream after the "
                         "cut (TestSGD had not reached its own fresh re-estimates).")
    if dropped:
        out.notes.append(f"{dropped:,} rule set(s) are not listed because one side of the comparison holds "
                         f"fewer than {100 * opts['min_side']:.0f}% of the rows or fewer than "
                         f"{opts['min_group_size']} rows.")
    rows = []
    conf = opts["confidence"]
    for r, fr in chosen:
        signed = fr.rate_in - fr.rate_out
        m = int(fr.n_samples)
        x_in, x_out = int(round(fr.rate_in * m)), int(round(fr.rate_out * m))
        fam = _abs_gap(x_in, m, x_out, m, conf)
        side = "disfavoured" if signed < 0 else "favoured"
        sentence = (f"People matching {r.rule_set} ({_pct(r.support)} of the rows) are predicted favourable at "
                    f"{_num(fr.rate_in)} against {_num(fr.rate_out)} for everyone else ({_pct(1 - r.support)}): "
                    f"a gap of {_val(fr.score, 'difference')} ({_ci(fam['lo'], fam['hi'], conf, 'difference')}, "
                    f"Newcombe, on {m:,} fresh samples per side); the group is {side}")
        out.findings.append(_finding("subgroup", "subgroup_score", str(r.rule_set), fr.score, fam["lo"], fam["hi"],
                                     sentence, interval=f"{100 * conf:.0f}% Newcombe interval", test=fam["test"],
                                     se=(fam["se"], 1)))
        rows.append([str(r.rule_set), side, _cell(r.support, unit="rate"), _cell(1 - r.support, unit="rate"),
                     _cell(fr.rate_in, unit="rate"), _cell(fr.rate_out, unit="rate"),
                     _cell(fr.score, fam["lo"], fam["hi"], "difference"), _cell(r.score, unit="difference"), m])
    out.tables.append({
        "title": "Rule sets with the largest gaps (fresh estimates)",
        "columns": ["Group (rule set)", "Treated", "Share of rows in the group", "Share of everyone else",
                    "Favourable rate in the group", "Favourable rate of everyone else",
                    f"Gap (fresh estimate, {100 * conf:.0f}% interval)", "Selection estimate (biased upward)",
                    "Samples per side"],
        "rows": rows,
        "note": ("The gap is re-estimated on fresh samples, independent of the search that picked the rule set, "
                 "with a Newcombe interval from the fresh counts; the selection estimate is shown for reference "
                 "only (the largest of many noisy estimates is biased upward).")})
    if not chosen:
        if rep.stopped and not len(rep.results):
            out.verdict = ("Not computed: the time budget ran out before TestSGD scored any rule set "
                           f"({rep.n_groups:,} distinct groups among {rep.n_rule_sets:,} frequent rule sets were "
                           "found).")
        elif rep.stopped:
            out.verdict = (f"Not computed: the time budget ran out after {len(rep.results):,} of {rep.n_groups:,} "
                           "rule sets, none with both sides large enough to report.")
        else:
            out.verdict = "No rule set with both sides large enough could be reported."
    out.paragraphs.append(
        "TestSGD mines every group described by a conjunction of conditions on the protected attributes "
        f"(rule sets with support >= {100 * float(rep.params['theta']):.0f}%) and estimates, by sampling around "
        "real rows, how differently the model treats the group and everyone else (the paper's defaults: "
        f"error {rep.params['error']}, confidence {rep.params['confidence']}).")
    return out


def _abs_gap(x1, n1, x2, n2, conf):
    """``|p1 - p2|`` of two independent samples: its Newcombe interval, test and standard error."""

    z = float(_stats.z_of(0.5 + conf / 2))
    d, lo, hi = (float(v) for v in _stats.mover([x1, x2], [n1, n2], [1.0, -1.0], z))
    lo_abs, hi_abs = max(0.0, lo, -hi), max(abs(lo), abs(hi))
    fam_X, fam_N = np.array([[x1, x2]], float), np.array([[n1, n2]], float)

    def test(cond):

        fam = gs._Family("range", fam_X, fam_N, (1.0, -1.0), 1, [None])
        ph, pn = gs._elementary(fam, cond.op, cond.value, False)
        return gs._aggregate(fam, cond.op, cond.value, np.atleast_1d(ph), np.atleast_1d(pn), False)

    p1, p2 = x1 / n1, x2 / n2
    se = math.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)
    return {"lo": lo_abs, "hi": hi_abs, "test": test, "se": se, "value": abs(d)}


def _split_key(frequent, i, n_rows):
    """The partition of the rows a rule set makes (the same for R and not R), or None."""
    bits = getattr(frequent, "bits", None)
    if i is None or bits is None or i >= len(bits):
        return None
    m = np.unpackbits(np.ascontiguousarray(bits[i]).view(np.uint8), bitorder="little")[:n_rows].astype(bool)
    a, b = np.packbits(m).tobytes(), np.packbits(~m).tobytes()
    return min(a, b)
