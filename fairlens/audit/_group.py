"""The group fairness check of :func:`fairlens.audit` (the audit's own: group measures with intervals)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..metrics import GROUP_RATES, group_metrics
from ._core import (
    CheckOutcome,
    _cell,
    _finding,
    _num,
    _spelled,
    _val,
    figure,
)
from ._gate import MEASURES

# ------------------------------------------------------------------------ 1. group fairness
#: Rates shown in the per-group tables (every confusion-matrix rate; AUC and calibration when the model scores).
_TABLE_RATES = ("selection_rate", "true_positive_rate", "false_positive_rate", "false_negative_rate",
                "positive_predictive_value", "false_discovery_rate", "negative_predictive_value",
                "false_omission_rate", "accuracy")


def check(ctx, seconds):
    """Group fairness per protected attribute and intersection (:func:`fairlens.metrics.group_metrics`),
    every measure with a score interval that covers its true value (0 and 1 included)."""
    import matplotlib.pyplot as plt


    opts = ctx.options
    out = CheckOutcome("group_fairness", "Group fairness", random_state=None)
    prot, binned, bin_order = _protected_groups(ctx)
    res = group_metrics(ctx.y, ctx.pred, protected=prot, favourable=1, privileged=ctx.privileged,
                        y_score=ctx.score, confidence=opts["confidence"], min_group_size=opts["min_group_size"],
                        max_groups=opts["max_groups"])
    out.result = res
    out.params = dict(res.params, threshold=ctx.threshold, binned=binned,
                      favourable=ctx.dataset.label_names.get(1, 1))
    conf = res.confidence
    for col, how in binned.items():
        out.notes.append(f"{col!r} has many numeric values; it is compared in {how}.")
    for col, k in (res.params.get("lumped") or {}).items():
        out.notes.append(f"{col!r} has many values: its {opts['max_groups'] - 1} largest groups are compared and "
                         f"the other {k:,} values form one group 'other ({k:,} values)'.")
    groups, measures = res.groups, res.measures
    singles = list(prot.columns)
    for _, m in measures.iterrows():
        out.findings.append(_group_finding(m, groups, res, conf))
    has_score = bool(groups["auc"].notna().any())
    rates = list(_TABLE_RATES) + (["auc", "calibration_gap"] if has_score else [])
    labels = {r: GROUP_RATES[r][0] for r in _TABLE_RATES}
    labels.update(auc="AUC", calibration_gap="Calibration gap (mean score - favourable rate)")
    for attr in dict.fromkeys(groups["attribute"]):
        g = groups[groups["attribute"] == attr]
        if attr in bin_order:  # quartile bins in their numeric order, not in the order of their names
            g = g.sort_values("group", key=lambda c: c.map(bin_order[attr].index), kind="stable")
        rows = []
        for _, r in g.iterrows():
            cells = [r["group"], int(r["n"]), _cell(r["share"], unit="rate")]
            for rate in rates:
                unit = "difference" if rate == "calibration_gap" else ("ratio" if rate == "auc" else "rate")
                cells.append(_cell(r[rate], r[rate + "_low"], r[rate + "_high"], unit))
            cells += [_cell(r["base_rate"], r["base_rate_low"], r["base_rate_high"], "rate"), r["note"] or ""]
            rows.append(cells)
        out.tables.append({
            "title": f"Groups of {attr}",
            "columns": ["Group", "Rows", "Share of rows", *[labels[r] for r in rates], "Favourable rate in the data",
                        "Left out of comparisons"],
            "rows": rows,
            "units": [None, "count", "rate", *[("difference" if r == "calibration_gap" else "ratio" if r == "auc"
                                                 else "rate") for r in rates], "rate", None],
            "note": (f"Each rate with its {100 * conf:.0f}% Wilson interval"
                     + ("; AUC with DeLong's interval (logit scale) and the calibration gap with a Student-t "
                        "interval" if has_score else "")
                     + f". One rule for every comparison: a group's rate is compared only when the rate's "
                       f"denominator has at least {opts['min_group_size']} rows (rows for the selection rate, "
                       "favourable true labels for the true positive rate, unfavourable ones for the false "
                       "positive rate); otherwise it is left out of every comparison of that rate, on both sides.")})
    rows = []
    for _, m in measures.iterrows():
        unit = MEASURES[m["measure"]][1]
        rows.append([m["attribute"], _spelled(m["label"]), _cell(m["value"], m["ci_low"], m["ci_high"], unit),
                     _compared(m), int(m["n_groups"]), int(m["n_contrasts"])])
    out.tables.append({"title": "All group measures", "columns": ["Attribute", "Measure",
                                                                  f"Value ({100 * conf:.0f}% interval)",
                                                                  "Compared", "Groups compared",
                                                                  "Comparisons sharing the level"],
                       "rows": rows, "units": [None, None, None, None, "count", "count"], "key_columns": 2,
                       "note": "Differences of rates are in percentage points (pp); ratios are plain numbers (1 = "
                               "equal rates). A measure over several groups has an interval simultaneous over the "
                               "comparisons behind it (every pair of groups, or every group against its reference), "
                               "so it covers the measure whichever pair or group turns out extreme."})
    c = res.contrasts
    if len(c):
        out.tables.append({
            "title": "Each group against its reference (signed measures)",
            "columns": ["Attribute", "Measure", "Group", "Reference", f"Value ({100 * conf:.0f}% interval)"],
            "rows": [[r["attribute"], MEASURES[r["measure"]][0], r["group"], r["reference"],
                      _cell(r["value"], r["ci_low"], r["ci_high"], MEASURES[r["measure"]][1])]
                     for _, r in c.iterrows()],
            "units": [None, None, None, None, None],
            "note": ("The reference is fixed before looking at the outcomes: "
                     + ("the privileged group given (everyone else against it, AIF360's convention)."
                        if ctx.privileged else "each group against everyone else, every group shown (negative "
                        "differences and ratios below 1: the group is worse off than everyone else).")
                     + " Intervals are simultaneous over the groups of each attribute.")})
    with plt.rc_context({"font.size": 12}):
        for attr in singles[:4]:
            fig, ax = plt.subplots(figsize=(10, max(3.0, 0.55 * (groups["attribute"] == attr).sum() + 1.8)))
            res.plot(ax=ax, attribute=attr)
            from matplotlib.ticker import PercentFormatter

            ax.xaxis.set_major_formatter(PercentFormatter(xmax=1.0, decimals=0))
            out.figures.append(figure(fig, f"Selection rate by {attr}",
                                      f"The share of each group of {attr} that the model predicts favourable "
                                      f"(dot), with its {100 * conf:.0f}% Wilson interval (bar); the number of "
                                      "rows of each group is its n in the label; hollow markers are groups too small "
                                      "to compare."))
    out.paragraphs.append(
        f"Predictions are the model's favourable-class probability thresholded at {ctx.threshold:g}. "
        f"Each protected attribute ({', '.join(singles)}) and every combination of them splits the "
        f"{res.n_rows:,} rows into groups. Every rate of every group has a {100 * conf:.0f}% Wilson interval; "
        "differences between groups have Newcombe/MOVER score intervals and ratios MOVER-R intervals, "
        "Bonferroni-adjusted over the comparisons behind each measure, so each interval covers its true value "
        "-- a true difference of 0 and a true ratio of 1 included -- with at least the stated probability "
        "(checked by simulation: benchmarks/audit_statistics.py).")
    return out


def _compared(m):
    """What a measure's value compares, in words."""
    if isinstance(m["group"], str):
        return f"{m['group']} vs {m['reference']}"
    if isinstance(m["highest"], str):
        rate = {"selection_rate": "selection", "true_positive_rate": "true positive",
                "false_positive_rate": "false positive"}.get(m["rate"], m["rate"])
        return f"{m['highest']} vs {m['lowest']} ({rate} rate)"
    return ""


def _protected_groups(ctx):
    """The protected columns as readable group labels; numeric columns with more than ``max_groups``
    values are cut into quartile bins (described in ``binned``; ``order``: the bins, lowest first).
    Columns with few values (0/1 included) are compared value by value, as written in the table."""
    frame = ctx.dataset.frame
    out, binned, order = {}, {}, {}
    for p in ctx.protected:
        col = frame[p]
        numeric = pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)
        if numeric and col.nunique() > ctx.options["max_groups"]:
            edges = np.unique(np.quantile(col.astype(float), [0.25, 0.5, 0.75]))
            codes = np.searchsorted(edges, col.astype(float).to_numpy(), side="left")
            names = [f"{p} <= {edges[0]:g}"] + [f"{a:g} < {p} <= {b:g}" for a, b in zip(edges[:-1], edges[1:])] \
                + [f"{p} > {edges[-1]:g}"]
            out[p] = np.asarray(names, dtype=object)[codes]
            binned[p] = "quartile bins: " + "; ".join(names)
            order[p] = list(names)
        else:
            out[p] = col.astype(str).to_numpy(dtype=object)
    return pd.DataFrame(out), binned, order


def _group_finding(m, groups, res, conf):
    """The finding of one measure of one attribute set (its sentence names the groups compared)."""
    measure, attr = m["measure"], m["attribute"]
    value, lo, hi = m["value"], m["ci_low"], m["ci_high"]
    label = MEASURES[measure][0].lower()
    unit = MEASURES[measure][1]
    F = int(m["n_contrasts"])
    what = (f"{100 * conf:.0f}% interval" if F <= 1 else
            f"{100 * conf:.0f}% interval simultaneous over {F} comparisons")
    g = groups[groups["attribute"] == attr].set_index("group")
    if not np.isfinite(value):
        sentence = (f"{attr}: the {label} cannot be computed: fewer than two groups are large enough to compare "
                    "(see the groups table).")
    elif isinstance(m["group"], str):   # signed, against a fixed reference
        side = "worse off than" if (value < m["ideal"]) else ("better off than" if value > m["ideal"] else "as")
        sentence = (f"{attr}: {m['group']!r} against {m['reference']!r}: {label} {_val(value, unit)} "
                    f"({what}: {_val(lo, unit)} to {_val(hi, unit)}); {m['group']!r} is {side} "
                    f"{m['reference']!r} (of the {int(m['n_groups'])} groups compared, the one departing most clearly "
                    "from parity; a condition is judged over every group, all in the section's table)")
    else:
        rate = m["rate"] if m["rate"] in g.columns else "selection_rate"
        a, b = m["lowest"], m["highest"]
        rname = {"selection_rate": "selected", "true_positive_rate": "given the favourable prediction when the "
                 "favourable outcome is true", "false_positive_rate": "given the favourable prediction when it "
                 "is not"}.get(rate, rate)
        sentence = (f"{attr}: {a!r} is {rname} at {_num(g.loc[a, rate])} against {_num(g.loc[b, rate])} for "
                    f"{b!r}: {'an' if label[0] in 'aeiou' else 'a'} {label} of {_val(value, unit)} ({what}: "
                    f"{_val(lo, unit)} to {_val(hi, unit)})")
    test = (lambda cond, _n=measure, _a=attr: res.test(_n, _a, cond.op, cond.value, absolute=cond.absolute))
    se = res.standard_error(measure, attr)
    return _finding("group_fairness", measure, attr, value, lo, hi, sentence, interval=what, test=test, se=se)
