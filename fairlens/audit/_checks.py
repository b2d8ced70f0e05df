"""The five checks of :func:`fairlens.audit`, each ONE adapter function over a slice's public API.

Every adapter has the signature ``check_<id>(ctx, seconds) -> CheckOutcome``: ``ctx`` is the
audit's :class:`Context` (the Dataset, the adapted model, predictions, options), ``seconds`` the
check's share of the global ``time_budget``.  An adapter only calls a slice and turns its Result
into findings, tables and figures; when a slice's API changes, only its adapter changes.

Default thresholds (:data:`DEFAULT_THRESHOLDS`) and the measures they apply to are documented in
:func:`fairlens.audit.audit`.
"""
from __future__ import annotations

import base64
import dataclasses
import io
import math
import time

import numpy as np
import pandas as pd

from ._gate import MEASURES


@dataclasses.dataclass
class CheckOutcome:
    """What one check produced: a report-document section plus its findings and its Result.

    Parameters
    ----------
    id : str
        The check id (a key of :data:`CHECKS`): ``"group_fairness"``, ``"individual"``,
        ``"subgroup"``, ``"explanations"`` or ``"robustness"``.
    title : str
        Readable title of the section.
    status : str, default "complete"
        ``"complete"``, ``"cut short"`` (stopped by its share of the time budget; what it measured
        still holds), ``"not applicable"`` (e.g. robustness for a model that is not a tree
        ensemble) or ``"failed"`` (the check raised; see ``error``).
    elapsed : float or None
        Seconds the check took (set by :func:`fairlens.audit.audit`).
    verdict : str
        One sentence concluding the section.
    findings : list of dict
        One dict per finding: the columns of :data:`fairlens.audit.FINDING_COLUMNS` (``verdict``:
        ``"pass"``, ``"fail"``, ``"inconclusive"``, ``"not computed"``, ``"info"`` or ``"not applicable"``,
        decided by the audit once every check has run), plus private keys (``_test``: the test behind
        the verdict) that the report document leaves out.
    paragraphs : list of str
        Explanatory text of the section (method, data used).
    tables : list of dict
        Tables of the report document (``title``, ``columns``, ``rows``, optional ``units`` and
        ``note``; see :mod:`fairlens.audit._schema`).
    figures : list of dict
        Figures as built by ``fairlens.audit._checks.figure``: ``title``, ``alt``, ``png_base64``, ``width_px``.
    params : dict
        The parameters the check ran with (including its ``time_share`` in seconds).
    random_state : int or None
        The seed the check used.
    notes : list of str
        Caveats (cut short, binned protected columns, ...).
    error : str or None
        ``"ExceptionType: message"`` when the check failed to run.
    result : object
        The slice's own Result for drill-down (e.g. a
        :class:`fairlens.metrics.GroupMetricsResult` for ``"group_fairness"``), or None.

    See Also
    --------
    fairlens.audit.AuditReport : Holds one CheckOutcome per check that ran.

    Examples
    --------
    >>> from fairlens.audit import CheckOutcome
    >>> out = CheckOutcome("robustness", "Robustness", status="not applicable",
    ...                    verdict="Not applicable: the model is not a tree ensemble.")
    >>> out.status, out.findings, out.error
    ('not applicable', [], None)
    >>> out.section()["verdict"]
    'Not applicable: the model is not a tree ensemble.'
    """

    id: str
    title: str
    status: str = "complete"
    elapsed: float | None = None
    verdict: str = ""
    findings: list = dataclasses.field(default_factory=list)
    paragraphs: list = dataclasses.field(default_factory=list)
    tables: list = dataclasses.field(default_factory=list)
    figures: list = dataclasses.field(default_factory=list)
    params: dict = dataclasses.field(default_factory=dict)
    random_state: int | None = None
    notes: list = dataclasses.field(default_factory=list)
    error: str | None = None
    result: object = None

    def section(self):
        """The report-document section (a JSON-safe dict).

        Returns
        -------
        dict
            ``id``, ``title``, ``status``, ``elapsed``, ``verdict``, ``paragraphs``, ``tables``,
            ``figures``, ``params`` (made JSON-safe), ``random_state``, ``notes``, and ``error`` when
            the check failed.  The findings and ``result`` are not part of it (the report document
            lists the findings of every check in one place).

        Examples
        --------
        >>> from fairlens.audit import CheckOutcome
        >>> out = CheckOutcome("group_fairness", "Group fairness", status="failed",
        ...                    error="ValueError: y_true has one value")
        >>> sec = out.section()
        >>> list(sec)  # doctest: +NORMALIZE_WHITESPACE
        ['id', 'title', 'status', 'elapsed', 'verdict', 'paragraphs', 'tables', 'figures', 'params',
         'random_state', 'notes', 'error']
        >>> sec["status"], sec["error"]
        ('failed', 'ValueError: y_true has one value')
        """
        from .._base import to_jsonable

        out = {"id": self.id, "title": self.title, "status": self.status, "elapsed": self.elapsed,
               "verdict": self.verdict, "paragraphs": list(self.paragraphs), "tables": list(self.tables),
               "figures": list(self.figures), "params": to_jsonable(self.params),
               "random_state": self.random_state, "notes": list(self.notes)}
        if self.error:
            out["error"] = self.error
        return out


@dataclasses.dataclass
class Context:
    """Everything the checks share (built once by :func:`fairlens.audit.audit`)."""

    model: object
    user_model: object
    dataset: object
    scorer: object
    favourable_class: object
    protected: list
    y: np.ndarray
    score: np.ndarray
    pred: np.ndarray
    threshold: float
    random_state: int
    n_jobs: int | None
    options: dict
    input: str
    privileged: dict | None = None
    deadline: float = math.inf


# ------------------------------------------------------------------------------------ helpers
def _sig(v):
    """Three significant digits, never in scientific notation (the renderer's convention)."""
    if v is None or not np.isfinite(v):
        return "n/a"
    v = float(v)
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if v == 0:
        return "0"
    digits = max(0, 2 - int(math.floor(math.log10(abs(v)))))
    return f"{v:.{digits}f}"


def _val(v, unit=None):
    """A number for a sentence, in the renderer's units: a rate as a percentage, a difference of rates
    in percentage points, anything else as a plain number."""
    if v is None or not np.isfinite(v):
        return "n/a"
    if unit == "rate":
        return f"{_sig(100 * v)}%"
    if unit == "difference":
        return f"{_sig(100 * v)} pp"
    return _sig(v)


def _plain(v):
    """A plain number as the renderer shows it (``1.4e-14`` -> ``< 0.001``, never scientific)."""
    from ._render import format_number

    return format_number(_float(v))


def _num(v):
    return _val(v, "rate")


def _pct(v):
    return _val(v, "rate")


def _ci(lo, hi, conf, unit="rate"):
    if lo is None or hi is None or not np.isfinite(lo) or not np.isfinite(hi):
        return "no interval"
    return f"{100 * conf:.0f}% CI {_val(lo, unit)} to {_val(hi, unit)}"


def _spelled(text):
    """``text`` with the abbreviations of the metrics' labels spelled out (a report is read by people
    who do not know that TPR is the true positive rate)."""
    return str(text).replace("TPR and FPR", "true and false positive rate")


def _float(v):
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _finding(check, measure, group, value, lo, hi, sentence, *, interval=None, test=None, se=None, label=None):
    """One finding: the estimate and its interval, a sentence describing them, and the test behind its
    verdict (``test(cond) -> (p_hold, p_not)``; ``se``: ``(standard error, comparisons)`` for the
    smallest detectable departure).  The verdict, threshold and p-values are filled in by the audit
    once every check has run (:func:`fairlens.audit._gate.decide`)."""
    value, lo, hi = _float(value), _float(lo), _float(hi)
    meta = MEASURES.get(measure, (measure, None))
    return {"check": check, "measure": measure, "label": label or meta[0], "group": group, "value": value,
            "ci_low": lo, "ci_high": hi, "interval": interval, "condition": None, "threshold": None,
            "verdict": "info", "p_fail": None, "p_pass": None, "detectable": None, "decided_by": None,
            "sentence": sentence, "unit": meta[1], "_test": test, "_se": se}


def _wilson_limits(k, n, conf):
    from .. import _stats

    lo, hi = _stats.wilson(k, n, float(_stats.z_of(0.5 + conf / 2)))
    return float(lo), float(hi)


def _bounds_test(k_lo, k_hi, n):
    """Test of a proportion known only to lie in ``[k_lo, k_hi] / n`` (certified bounds): evidence for
    ``> c`` must hold at the lower bound, evidence for ``< c`` at the upper one."""
    low, high = _wilson_test(k_lo, n), _wilson_test(k_hi, n)

    def test(cond):
        a, b = low(cond), high(cond)
        return (a[0], b[1]) if cond.upward else (b[0], a[1])

    return test


def _wilson_test(k, n):
    """Test of a proportion ``k / n`` against a condition (inverting its Wilson limits)."""
    from .. import _stats

    def test(cond):
        c, (alt_hold, alt_not) = cond.value, (("greater", "less") if cond.upward else ("less", "greater"))
        return (float(_stats.pvalue([k], [n], [1.0], c, alt_hold)), float(_stats.pvalue([k], [n], [1.0], c, alt_not)))

    return test


def figure(fig, title, alt):
    """A figure entry of the report document (PNG, base64) from a matplotlib figure."""
    import matplotlib.pyplot as plt

    # drawn at its natural size (no tight cropping): a 10-inch figure at 100 dpi is 1000 px wide,
    # so the report shows it unscaled with its 12 px text
    if fig.get_layout_engine() is None:
        fig.set_layout_engine("constrained")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    png = buf.getvalue()
    width = int.from_bytes(png[16:20], "big")  # the PNG header's IHDR width
    return {"title": title, "alt": alt, "png_base64": base64.b64encode(png).decode("ascii"),
            "width_px": width}


def _deadline_stop(seconds):
    end = time.perf_counter() + max(0.0, float(seconds))
    return (lambda: time.perf_counter() >= end), end


def _cell(value, lo=None, hi=None, unit=None):
    return {"value": _float(value), "ci_low": _float(lo), "ci_high": _float(hi), "unit": unit}


# ------------------------------------------------------------------------ 1. group fairness
#: Rates shown in the per-group tables (every confusion-matrix rate; AUC and calibration when the model scores).
_TABLE_RATES = ("selection_rate", "true_positive_rate", "false_positive_rate", "false_negative_rate",
                "positive_predictive_value", "false_discovery_rate", "negative_predictive_value",
                "false_omission_rate", "accuracy")


def check_group_fairness(ctx, seconds):
    """Group fairness per protected attribute and intersection (:func:`fairlens.metrics.group_metrics`),
    every measure with a score interval that covers its true value (0 and 1 included)."""
    import matplotlib.pyplot as plt

    from ..metrics import GROUP_RATES, group_metrics

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
                       "rows": rows, "units": [None, None, None, None, "count", "count"],
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


# ------------------------------------------------------------------------ 2. individual (MAFT)
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
    from ..maft import MAFT

    model, fav = _decision_model(ctx)
    maft = MAFT(model, ctx.dataset, protected=list(ctx.protected), favourable=fav,
                n_seeds=n_seeds, n_local=n_local, random_state=random_state)
    return maft, {}


def _discriminatory(ctx, X):
    """ADAPTER: which rows of ``X`` change their predicted label when only the protected
    attributes change (:func:`fairlens.maft.discriminatory_mask`), at the audit's threshold."""
    from ..maft import discriminatory_mask

    model, fav = (ctx.scorer, ctx.favourable_class) if ctx.threshold == 0.5 else _decision_model(ctx)
    return np.asarray(discriminatory_mask(model, ctx.dataset, X, list(ctx.protected), favourable=fav), dtype=bool)


def check_individual(ctx, seconds):
    """Individual discrimination: the rate on a seeded sample of the data (Wilson interval) and MAFT's
    discriminatory pairs (Wang et al., ICSE 2024, with the paper's defaults)."""
    from .._parallel import chunk_rng
    from .._stats import wilson, z_of

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
    # 2. MAFT search for example pairs, for the rest of the time
    stop, _ = _deadline_stop(max(0.0, t0 + seconds - time.perf_counter()))
    maft, run_kw = _make_maft(ctx, opts["maft_seeds"], opts["maft_local"], ctx.random_state)
    t_maft = time.perf_counter()
    res = maft.run(stop=stop, n_jobs=ctx.n_jobs, **run_kw)
    t_maft = time.perf_counter() - t_maft
    out.result = res
    mp = maft.params() if callable(getattr(maft, "params", None)) else dict(getattr(maft, "params", {}) or {})
    out.params.update({"maft_" + k_: v for k_, v in mp.items() if k_ not in ("protected",)})
    out.params.update(maft_n_seeds=opts["maft_seeds"], maft_n_local=opts["maft_local"], n_rate_measured=n,
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


# ------------------------------------------------------------------------ 3. subgroup (TestSGD)
def _make_testsgd(ctx, random_state, top_k):
    """ADAPTER: TestSGD with the paper's defaults (theta 5%, error 0.05, delta 0.95, sample_thr
    1000) on ``ctx``."""
    from ..testsgd import TestSGD

    return TestSGD(ctx.model, ctx.dataset, protected=list(ctx.protected), favourable=ctx.favourable_class,
                   threshold=ctx.threshold, random_state=random_state, top_k=top_k)


def _run_testsgd(tester, stop, n_jobs):
    """ADAPTER: run it (stop, n_jobs)."""
    return tester.run(stop=stop, n_jobs=n_jobs)


def check_subgroup(ctx, seconds):
    """Subgroup discrimination (TestSGD, Zhang et al.): the rule sets with the largest FRESH estimate.

    Rule sets whose smaller side (the group or everyone else) holds fewer than ``min_side`` of the
    rows (default 5%, TestSGD's own support threshold) or fewer than ``min_group_size`` rows are not
    listed: their comparison would rest on a handful of people (counted in the notes)."""
    opts = ctx.options
    out = CheckOutcome("subgroup", "Subgroup discrimination (TestSGD)", random_state=ctx.random_state)
    t0 = time.perf_counter()
    stop, end = _deadline_stop(0.8 * seconds)
    tester = _make_testsgd(ctx, ctx.random_state, opts["subgroup_top_k"])
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
    from .. import _stats

    z = float(_stats.z_of(0.5 + conf / 2))
    d, lo, hi = (float(v) for v in _stats.mover([x1, x2], [n1, n2], [1.0, -1.0], z))
    lo_abs, hi_abs = max(0.0, lo, -hi), max(abs(lo), abs(hi))
    fam_X, fam_N = np.array([[x1, x2]], float), np.array([[n1, n2]], float)

    def test(cond):
        from .. import _groupstats as gs

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
    rows not explained when ``stop()`` turns true are NaN."""
    from ..shuffle import ShuffledModel, explain

    model = ctx.model if isinstance(ctx.model, ShuffledModel) else ctx.scorer
    return np.asarray(explain(model, X, explainer, background, nsamples=nsamples, random_state=random_state,
                              feature_names=list(ctx.dataset.feature_names), data=ctx.dataset,
                              callback=lambda i, n: (i < MIN_EXPLAINED and time.perf_counter() < ctx.deadline)
                              or not stop(), n_jobs=ctx.n_jobs),
                      dtype=np.float64)


#: Rows every explainer explains even past its share of the time, as long as the audit's whole budget is
#: not spent (the first call of an explainer in a process can take seconds to compile; an attribution
#: share from fewer rows would say nothing).
MIN_EXPLAINED = 5


def _consistency(ctx, X, random_state):
    """ADAPTER: the batch-consistency check of the scoring function (:func:`fairlens.shuffle.batch_consistency`)."""
    from ..shuffle import ShuffledModel, batch_consistency

    kw = {} if isinstance(ctx.model, ShuffledModel) else {"favourable": ctx.favourable_class}
    return batch_consistency(ctx.model, X, random_state=random_state, data=ctx.dataset, **kw)


def check_explanations(ctx, seconds):
    """Explanations: SHAP attribution share of the protected features, and whether the model's
    scores depend on the batch (the shuffling attack's signature, Yadav et al.)."""
    from .._parallel import chunk_rng

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
        stop, _ = _deadline_stop(left * (0.6 if k < len(explainers) - 1 else 1.0))
        A = _explain(ctx, ds.X[eidx0], ds.X[bidx], ctx.random_state, nsamples, stop, explainer)
        done = ~np.isnan(A).any(axis=1)
        eidx = eidx0[done]
        if not done.all():
            out.status = "cut short"
            out.notes.append(f"{label} explained {int(done.sum())} of {eidx0.size} rows before its time ran out.")
            A = A[done]
        out.result["attributions"][explainer], out.result["rows"][explainer] = A, eidx
        used[explainer] = {"nsamples": int(nsamples), "rows": int(eidx.size)}
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
        "The SHAP and LIME shares are informative only for a consistent model.")
    return out


# ------------------------------------------------------------------------ 5. robustness (certify)
def _certifiable(model):
    """The object certify reads: a LightGBM text model loaded by the CLI is certified through its
    own ``lightgbm.Booster`` (whose raw score >= 0 is exactly the wrapper's probability >= 0.5)."""
    if type(model).__name__ == "LightGBMTextModel" and hasattr(model, "booster_"):
        return model.booster_
    return model


def tree_ensemble_kind(model):
    """``(True, family)`` for a model :func:`fairlens.certify.certify` certifies directly (asked of certify's
    own reader registry, :func:`fairlens.certify.can_certify`), else ``(False, reason)``."""
    from ..certify import can_certify

    model = _certifiable(model)
    ok, why = can_certify(model)
    if ok:
        return True, type(model).__name__
    if type(model).__name__ == "Pipeline" and hasattr(model, "steps"):
        last = model.steps[-1][1]
        if can_certify(last)[0]:
            return False, (f"the model is a Pipeline whose final step is a {type(last).__name__}: the certificate "
                           "is about the trees' own inputs, which the preceding steps transform; certify the final "
                           "estimator on the transformed table with fairlens.certify.certify")
    generic = why.startswith("model must be a fitted tree ensemble")
    return False, (f"certification against b-feature attacks applies to tree ensembles (scikit-learn forests and "
                   f"gradient boosting, XGBoost, LightGBM, CatBoost, ONNX tree ensembles); the model is a "
                   f"{type(model).__name__}" + ("" if generic else f" that certify cannot read: {why}"))


def _certify(ctx, X, y, budget, time_limit):
    """ADAPTER: :func:`fairlens.certify.certify` with the cascade (exact unless cut by the time limit)."""
    from ..certify import certify

    return certify(_certifiable(ctx.user_model), X, y, budget=budget, time_limit=time_limit, n_jobs=ctx.n_jobs)


def check_robustness(ctx, seconds):
    """Robustness: accuracy under attackers changing ``b`` features (certified, anytime interval)."""
    opts = ctx.options
    out = CheckOutcome("robustness", "Robustness to b-feature attacks", random_state=ctx.random_state)
    ok, why = tree_ensemble_kind(ctx.user_model)
    if not ok:
        out.status = "not applicable"
        out.verdict = f"Not applicable: {why}."
        f = _finding("robustness", "accuracy_under_attack", None, None, None, None, out.verdict)
        f["verdict"] = "not applicable"
        out.findings.append(f)
        out.random_state = None
        return out
    ds = ctx.dataset
    from .._parallel import chunk_rng

    idx = np.sort(chunk_rng(ctx.random_state, 0, 29).permutation(ds.n_samples)[: opts["n_certify"]])
    names = getattr(ctx.user_model, "feature_names_in_", None)
    cols = list(ds.feature_names) if names is None else [str(c) for c in names]
    if ctx.input == "readable frame":
        X = ds.frame.iloc[idx][cols].reset_index(drop=True)
        if not all(pd.api.types.is_numeric_dtype(X[c]) for c in X.columns):
            out.status = "not applicable"
            out.verdict = ("Not applicable: the ensemble takes non-numeric columns; certification works on "
                           "numeric inputs.")
            f = _finding("robustness", "accuracy_under_attack", None, None, None, None, out.verdict)
            f["verdict"] = "not applicable"
            out.findings.append(f)
            return out
    elif names is not None:
        X = pd.DataFrame(ds.X[idx], columns=list(ds.feature_names))[cols]
    else:
        X = ds.X[idx]
    classes = list(np.asarray(getattr(ctx.user_model, "classes_", [0, 1])).tolist())
    other = [c for c in classes if c != ctx.favourable_class]
    y = np.where(ds.y[idx] == 1, ctx.favourable_class, other[0] if other else 0)
    y = np.asarray(y, dtype=np.asarray(classes).dtype) if classes else y
    budgets = [b for b in opts["certify_budgets"] if b <= ds.n_features]
    conf = opts["confidence"]
    t0 = time.perf_counter()
    results = {}
    rows = []
    n_rows = len(idx)
    for i, b in enumerate(budgets):
        left = max(0.0, t0 + seconds - time.perf_counter())
        res = _certify(ctx, X, y, b, left / (len(budgets) - i))
        results[b] = res
        lo, hi = res.accuracy_interval if res.accuracy_interval is not None else (res.accuracy, res.accuracy)
        unknown = int(res.stage_counts.get("unknown", 0)) if isinstance(res.stage_counts, dict) else 0
        if i == 0:
            k_clean = int(round(res.accuracy_clean * n_rows))
            clo, chi = _wilson_limits(k_clean, n_rows, conf)
            out.findings.append(_finding(
                "robustness", "clean_accuracy", None, res.accuracy_clean, clo, chi,
                f"On {n_rows:,} rows of the data the model's accuracy is {_pct(res.accuracy_clean)} without "
                f"attack ({_ci(clo, chi, conf)}, Wilson)", interval=f"{100 * conf:.0f}% Wilson interval",
                test=_wilson_test(k_clean, n_rows)))
        cut = unknown > 0
        k_lo, k_hi = int(round(lo * n_rows)), int(round(hi * n_rows))
        plo, _ = _wilson_limits(k_lo, n_rows, conf)
        _, phi = _wilson_limits(k_hi, n_rows, conf)
        blank = bool(getattr(res, "params", {}).get("nan_attack", False))
        sentence = (f"An attacker who may change any {b} feature(s) of a row"
                    + (" (to any value, or blank them: the model accepts missing values)" if blank else "")
                    + " brings the accuracy on these rows down to "
                    + (f"{_pct(lo)} (certified exactly)" if not cut else
                       f"somewhere between {_pct(lo)} and {_pct(hi)}: certified bounds, {unknown} of {n_rows} rows "
                       "were unsettled when the time ran out")
                    + f"; for the population the rows come from, {_ci(plo, phi, conf)} (Wilson limits"
                    + (" around the bounds)" if cut else ")"))
        out.findings.append(_finding("robustness", "accuracy_under_attack", f"b={b}", None if cut else lo, plo, phi,
                                     sentence, interval=(f"{100 * conf:.0f}% Wilson limits around the certified "
                                                         "bounds" if cut else f"{100 * conf:.0f}% Wilson interval"),
                                     test=_bounds_test(k_lo, k_hi, n_rows)))
        bounds = {"text": f"{_pct(lo)} to {_pct(hi)} (bounds)", "highlight": False} if cut else \
            _cell(lo, plo, phi, "rate")
        rows.append([b, _cell(res.accuracy_clean, unit="rate"), bounds, unknown, _float(res.elapsed)])
        if cut:
            out.status = "cut short"
    out.result = results
    out.tables.append({"title": "Accuracy under attack", "columns": ["Features the attacker changes (b)",
                                                                     "Accuracy without attack",
                                                                     "Accuracy under attack", "Rows unsettled",
                                                                     "Seconds"],
                       "rows": rows, "units": [None, "rate", "rate", "count", "seconds"],
                       "note": f"Certified on these {n_rows:,} rows: an exact accuracy when every row was settled "
                               f"(shown with its {100 * conf:.0f}% Wilson interval for the population), otherwise "
                               "the certified lower and upper bounds (not an interval: every value between them is "
                               "possible)."
                               + ("" if ctx.threshold == 0.5 else
                                  f" The certificate is about the model's own predict (probability 0.5), not the "
                                  f"audit's threshold {ctx.threshold:g}.")})
    if out.status == "cut short":
        out.notes.append("The certification was cut short by the time budget; the intervals bracket the exact "
                         "accuracy under attack.")
    first = next(iter(results.values())) if results else None
    out.params = {"n_certify": int(len(idx)), "budgets": budgets, "method": "cascade",
                  "vote": getattr(first, "vote", None),
                  "missing_values_attack": bool(getattr(first, "params", {}).get("nan_attack", False))}
    out.random_state = ctx.random_state
    out.verdict = out.findings[-1]["sentence"] if len(out.findings) > 1 else "No budget was certified."
    out.paragraphs.append(
        "For tree ensembles, fairlens certifies the model's own prediction against an attacker who may change "
        "up to b features of a row to any values -- including a missing value (NaN) when the model's own "
        "predict accepts one, since trees route it by each node's default direction -- (FLB -> ELB -> brute "
        "force cascade, exact unless the time runs out; then an interval).")
    return out


#: The checks, in the order they run, with their share of the time budget.
CHECKS = {
    "group_fairness": (check_group_fairness, 0.10),
    "individual": (check_individual, 0.25),
    "subgroup": (check_subgroup, 0.30),
    "explanations": (check_explanations, 0.20),
    "robustness": (check_robustness, 0.15),
}
