"""``fairlens.audit(model, data, ...)``: every check that applies, one report."""
from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import math
import numbers
import os
import re
import time
import warnings

import numpy as np
import pandas as pd

from .._base import (
    Interval,
    Options,
    Result,
    check_progress,
    resolve_random_state,
    strict_keywords,
    to_jsonable,
    validate_params,
    validated,
)
from .._registry import resolve
from .._version import __version__
from ..datasets import Dataset
from ..datasets._loaders import from_frame
from ..models import as_scorer
from ..report._render import format_number, render_html
from ..report._schema import environment_info
from ._checks import check_specs
from ._core import CheckOutcome, Context, _val
from ._gate import (
    BURDENS,
    DEFAULT_THRESHOLDS,
    MEASURES,
    all_measures,
    decide,
    detectable,
    gate_outcome,
    parse_fail_on,
    parse_threshold,
    rule_sentence,
)

__all__ = ["audit", "AuditReport", "AUDIT_DEFAULTS", "KNOWN_MEASURES", "parse_fail_on", "BURDENS"]

#: Default budgets and options of the checks (override any of them with ``options={...}``).
AUDIT_DEFAULTS = {
    "confidence": 0.95,        # level of every interval; verdicts: every fail and pass wrong w.p. <= 1 - confidence
    "min_group_size": 30,      # a rate is compared only with this many rows in its denominator (one rule)
    "max_groups": 10,          # a column with more values: numeric -> quartile bins; text -> 9 largest + "other"
    "n_rate": 10000,           # rows sampled for the individual discrimination rate (MAFT paper: 10,000)
    "maft_seeds": 1000,        # MAFT global seeds (the paper: 1000)
    "maft_local": 1000,        # MAFT local iterations (the paper: 1000)
    "n_examples": 5,           # discriminatory pairs shown
    "subgroup_top_k": 20,      # TestSGD rule sets re-estimated on fresh samples
    "n_subgroups": 5,          # rule sets listed
    "min_side": 0.05,          # smallest share of rows on either side of a listed rule set
    "n_consistency": 500,      # rows of the batch-consistency check
    "n_explain": 40,           # rows explained by SHAP
    "n_background": 50,        # SHAP background rows
    # attribution methods, SHAP first, LIME in the time left.  "shap" is exact: Kernel SHAP over every
    # coalition for at most 10 features, else shap's permutation explainer (whose first call in a
    # process compiles for 10-40 s); "kernel" is sampled KernelSHAP with shap_nsamples coalitions,
    # without shap's l1 feature selection (which would zero all but 10 attributions per row)
    "explainers": ("shap", "lime"),
    "shap_nsamples": None,     # SHAP evaluations per row (default 4 d + 2: two permutations)
    "lime_nsamples": 1000,     # LIME perturbations per row
    "n_certify": 300,          # rows certified
    "certify_budgets": (1, 2),  # features the attacker may change
}

_EXPLAINERS = ("shap", "kernel", "lime")

#: Constraints of every option, checked before any analysis runs.
OPTION_CONSTRAINTS = {
    "confidence": [Interval(numbers.Real, 0.5, 1, closed="neither")],
    "min_group_size": [Interval(numbers.Integral, 1, None)],
    "max_groups": [Interval(numbers.Integral, 2, 1000)],
    "n_rate": [Interval(numbers.Integral, 1, 10**7)],
    "maft_seeds": [Interval(numbers.Integral, 1, 10**6)],
    "maft_local": [Interval(numbers.Integral, 0, 10**6)],
    "n_examples": [Interval(numbers.Integral, 0, 1000)],
    "subgroup_top_k": [Interval(numbers.Integral, 1, 10**4)],
    "n_subgroups": [Interval(numbers.Integral, 0, 1000)],
    "min_side": [Interval(numbers.Real, 0, 0.5, closed="left")],
    "n_consistency": [Interval(numbers.Integral, 2, 10**6)],
    "n_explain": [Interval(numbers.Integral, 1, 10**5)],
    "n_background": [Interval(numbers.Integral, 1, 10**5)],
    "shap_nsamples": [Interval(numbers.Integral, 2, 10**6), None],
    "lime_nsamples": [Interval(numbers.Integral, 10, 10**7)],
    "n_certify": [Interval(numbers.Integral, 1, 10**6)],
}

KNOWN_MEASURES = tuple(MEASURES)

#: The columns of :attr:`AuditReport.findings` (and of the report document's findings).
FINDING_COLUMNS = ("check", "measure", "label", "group", "value", "ci_low", "ci_high", "interval", "condition",
                   "threshold", "verdict", "p_fail", "p_pass", "detectable", "decided_by", "sentence", "unit")

_AUDIT_CONSTRAINTS = {
    "time_limit": [Interval(numbers.Real, 0, None, closed="neither"), None],
    "threshold": [Interval(numbers.Real, 0, 1, closed="neither")],
    "random_state": ["random_state"],
    "n_jobs": ["n_jobs"],
    "progress": ["progress"],
    "burden": [Options(*BURDENS)],
}


def _check_options(options):
    """The options merged into :data:`AUDIT_DEFAULTS`, every one validated (before anything runs)."""
    opts = dict(AUDIT_DEFAULTS)
    if options is None:
        return opts
    if not isinstance(options, dict):
        raise TypeError(f"options must be a dict; got {options!r}.")
    if "n_boot" in options:
        raise ValueError("options: 'n_boot' was removed: the group measures have closed-form score intervals "
                         "now (no bootstrap); drop the option.")
    bad = [k for k in options if k not in AUDIT_DEFAULTS]
    if bad:
        raise ValueError(f"options: unknown option(s) {bad}; known: {list(AUDIT_DEFAULTS)}.")
    opts.update(options)
    validate_params({k: opts[k] for k in OPTION_CONSTRAINTS}, OPTION_CONSTRAINTS, caller="audit(options=...)")
    ex = opts["explainers"]
    if isinstance(ex, str):
        ex = (ex,)
    if not isinstance(ex, (list, tuple)) or not ex or any(e not in _EXPLAINERS for e in ex):
        raise ValueError(f"options['explainers'] must be a non-empty list of {list(_EXPLAINERS)}; got "
                         f"{options.get('explainers')!r}.")
    opts["explainers"] = tuple(ex)
    b = opts["certify_budgets"]
    if isinstance(b, numbers.Integral) and not isinstance(b, bool):
        b = (b,)
    if (not isinstance(b, (list, tuple)) or not b
            or any(isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1 for v in b)):
        raise ValueError(f"options['certify_budgets'] must be a non-empty list of ints >= 1 (features the attacker "
                         f"may change); got {options.get('certify_budgets')!r}.")
    opts["certify_budgets"] = tuple(int(v) for v in b)
    return opts


def _shown(measure, v):
    """``v`` of ``measure`` as the report shows it (a rate in %, a difference of rates in percentage
    points), or ``None`` when the report shows the plain number (ratios, counts)."""

    unit = all_measures().get(measure, (None, None))[1]
    return _val(v, unit) if unit in ("rate", "difference") else None


def _condition_text(cond):
    """A condition as written (document units: proportions), glossed in the report's unit:
    ``demographic_parity_difference>0.1`` -> ``demographic_parity_difference>0.1 (> 10.0 pp)``."""
    shown = _shown(cond.measure, cond.value)
    return cond.text if shown is None else f"{cond.text} ({cond.op} {shown})"


def _reason(f):
    """One finding in a gate's reasons: ``measure (group): verdict: value (interval)``; the finding's
    sentence says the rest."""

    unit = f.get("unit")
    value = format_number(f["value"], unit)
    lim = ""
    if f.get("ci_low") is not None and f.get("ci_high") is not None:
        lim = (f" ({f.get('interval') or 'interval'}: {format_number(f['ci_low'], unit)} to "
               f"{format_number(f['ci_high'], unit)})")
    kind = all_measures().get(f["measure"], (None,) * 6)[5]
    tail = (" [exact]" if kind == "exact" else
            " [point estimate]" if f.get("p_fail") is None and f["verdict"] in ("pass", "fail") else "")
    group = "" if f["group"] is None else f" ({f['group']})"
    return f"{f['measure']}{group}: {f['verdict']}: {value}{lim} against {f['condition']}{tail}"


def _p(v):
    """``p = 0.012`` / ``p < 0.001`` (a p-value as a sentence shows it)."""
    if v is None:
        return "p n/a"
    return "p < 0.001" if v < 0.001 else f"p = {v:.3f}"


def _verdict_clause(f, d, cond, burden):
    """How one finding was decided, in words (appended to its sentence)."""
    words = _condition_text(cond)
    v = d["verdict"]
    if v == "not computed":
        return f" Not computed, so {cond.text} cannot be checked."
    if d["rule"] == "exact":
        return (f" Condition {words}: {'holds' if v == 'fail' else 'does not hold'} (an exact count, not an "
                f"estimate): {v}.")
    if d["rule"] == "estimate":
        return (f" Condition {words}: the point estimate {'meets' if v == 'fail' else 'does not meet'} it (point "
                f"estimate, as asked; no error rate): {v}.")
    if v == "fail":
        why = f"the data show {words} holds (adjusted {_p(d['p_hold'])})"
    elif v == "pass":
        why = f"the data show {words} does not hold (adjusted {_p(d['p_not'])})"
    else:
        why = (f"the data cannot tell whether {words} holds (adjusted {_p(d['p_hold'])} that it holds, "
               f"{_p(d['p_not'])} that it does not)")
    det = f["detectable"]
    tail = ""
    if det is not None and v != "fail":
        shown = _shown(cond.measure, det)
        tail = (f" The smallest departure this data would detect with 80% power is {shown if shown else f'{det:.3g}'}"
                ".")
    return f" {why[0].upper()}{why[1:]}: {v}.{tail}"


def _judge(outcomes, conditions, thresholds, burden, confidence):
    """Decide the verdict of every finding (two families: the gate's and the report's thresholds) and
    return the gate's outcome (``passed``, counts, missing conditions, rule)."""
    gated = {c.measure: c for c in conditions}
    gate_entries, gate_refs, rep_entries, rep_refs = [], [], [], []
    for o in outcomes:
        for f in o.findings:
            if f["verdict"] == "not applicable":
                continue
            cond = gated.get(f["measure"]) or thresholds.get(f["measure"])
            if cond is None:
                continue
            how = all_measures().get(f["measure"], (None,) * 6)[5]
            entry = {"value": f["value"], "cond": cond, "how": how, "test": f.get("_test")}
            if f["measure"] in gated:
                gate_entries.append(entry)
                gate_refs.append(f)
            else:
                rep_entries.append(entry)
                rep_refs.append(f)
    for entries, refs, who in ((gate_entries, gate_refs, "gate"), (rep_entries, rep_refs, "thresholds")):
        m = sum(1 for e in entries if e["how"] == "test")
        decisions = decide(entries, burden=burden if who == "gate" else ("estimate" if burden == "estimate"
                                                                         else "violation"),
                           confidence=confidence)
        for e, f, d in zip(entries, refs, decisions):
            cond = e["cond"]
            se = f.get("_se")
            f.update(verdict=d["verdict"], condition=cond.text, threshold=cond.value, p_fail=d["p_hold"],
                     p_pass=d["p_not"], decided_by=who)
            if d["rule"] == "holm" and se is not None:
                f["detectable"] = detectable(cond, se[0], se[1], m, confidence)
            base = f.setdefault("_base", f["sentence"])
            f["sentence"] = base.rstrip(". ") + "." + _verdict_clause(f, d, cond, burden)
    verdicts = [f["verdict"] for f in gate_refs]
    passed, counts = gate_outcome(verdicts, burden) if conditions else (None, {})
    computed = {c.measure: 0 for c in conditions}
    for f in gate_refs:
        computed[f["measure"]] += f["verdict"] != "not computed"
    missing = [c.text for c in conditions if computed[c.measure] == 0]
    if conditions and missing:
        passed = None
    for o in outcomes:
        o.verdict = _section_verdict(o)
    m_gate = sum(1 for e in gate_entries if e["how"] == "test")
    m_rep = sum(1 for e in rep_entries if e["how"] == "test")
    return {"passed": passed, "counts": counts, "missing": missing, "m": m_gate,
            "rule": rule_sentence(burden, confidence, m_gate, "gated findings") if conditions else None,
            "report_rule": rule_sentence("estimate" if burden == "estimate" else "violation", confidence, m_rep,
                                         "findings with a default threshold")}


def _section_verdict(o):
    """One sentence concluding a section, from its decided findings."""
    if o.status in ("not applicable", "failed") or (o.id == "subgroup" and o.verdict.startswith("Not computed")):
        return o.verdict
    fs = [f for f in o.findings if f["verdict"] in ("fail", "pass", "inconclusive", "not computed")]
    if not fs:
        return o.findings[-1]["sentence"] if o.findings else o.verdict
    n_fail = sum(f["verdict"] == "fail" for f in fs)
    n_inc = sum(f["verdict"] == "inconclusive" for f in fs)
    n_nc = sum(f["verdict"] == "not computed" for f in fs)
    if len(fs) == 1:
        return ("Cut short by the time budget (see the notes). " if o.status == "cut short" else "") + fs[0]["sentence"]
    parts = [f"{n_fail} of {len(fs)} findings fail", f"{n_inc} inconclusive", f"{len(fs) - n_fail - n_inc - n_nc} pass"]
    if n_nc:
        parts.append(f"{n_nc} not computed")
    head = ", ".join(parts) + "."
    if o.status == "cut short":
        head = "Cut short by the time budget (see the notes): " + head
    if n_fail:
        worst = min((f for f in fs if f["verdict"] == "fail"),
                    key=lambda f: f["p_fail"] if f["p_fail"] is not None else 0.0)
        return head + " For example: " + worst["sentence"]
    return head


@dataclasses.dataclass
class AuditReport(Result):
    """The outcome of :func:`fairlens.audit`: findings, one section per check, and the report document.

    Parameters
    ----------
    outcomes : list of CheckOutcome
        One per check that ran, in order (``.result`` holds the slice's own Result for drill-down:
        ``GroupMetricsResult``, MAFT's ``FairnessTestResult``, ``TestSGDReport``, the batch-consistency
        result and attributions, ``{b: CertificationResult}``).
    dataset : fairlens.datasets.Dataset
        The audited table as a Dataset (widgets take it).
    model : object
        The audited model, as given.
    scorer : fairlens.models.Scorer
        The model adapted to the Dataset's encoded rows (what every check called).
    info : dict
        The ``title``, ``data``, ``model`` and ``parameters`` blocks of the report document.
    fail_on : list of str
        The gate given to :func:`fairlens.audit`, one condition per item as normalised by
        :func:`parse_fail_on` (used by :meth:`gate`, :meth:`passed` and :meth:`to_dict`).
    created : str
        When the audit started, ISO 8601 in UTC (e.g. ``"2025-01-31T12:00:00+00:00"``).
    params : dict
        The audit's parameters (``info["parameters"]``: seed, checks, thresholds, budgets).
    random_state : int or None
        The integer seed every check used.
    elapsed : float
        Seconds the whole audit took.
    stopped : bool
        True when some check was cut short by the time budget.
    burden : str
        The gate's burden of proof (:data:`fairlens.audit.BURDENS`).
    confidence : float
        Level of every interval; every fail and pass of a family of verdicts is wrong with
        probability at most ``1 - confidence`` in total.
    thresholds : dict
        ``{measure: Condition}``: what each measure's verdict is judged against outside the gate.
    judgement : dict
        How the verdicts were decided: the gate's outcome (``passed``: True, False or None when a
        condition could not be checked), its counts, conditions that matched no finding, and the
        rules of the two families (``rule``, ``report_rule``).

    See Also
    --------
    fairlens.audit.audit : Builds this report.
    CheckOutcome : One section of the report.

    Examples
    --------
    >>> import numpy as np
    >>> import fairlens
    >>> from fairlens.datasets import load_german_credit
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> german = load_german_credit().subset(np.arange(400))
    >>> model = make_pipeline(StandardScaler(), LogisticRegression()).fit(german.X, german.y)
    >>> report = fairlens.audit(model, german, protected=["sex"], checks=["group_fairness"],
    ...                         time_limit=None, progress=False)
    >>> [o.id for o in report.outcomes], report.random_state, report.stopped
    (['group_fairness'], 0, False)
    >>> report.findings.shape  # 8 measures of sex; one column per field of FINDING_COLUMNS
    (8, 17)
    >>> report.passed()
    True
    """

    outcomes: list
    dataset: object = dataclasses.field(repr=False, default=None)
    model: object = dataclasses.field(repr=False, default=None)
    scorer: object = dataclasses.field(repr=False, default=None)
    info: dict = dataclasses.field(default_factory=dict)
    fail_on: list = dataclasses.field(default_factory=list)
    created: str = ""
    params: dict = dataclasses.field(default_factory=dict)
    random_state: int | None = None
    elapsed: float = float("nan")
    stopped: bool = False
    burden: str = "violation"
    confidence: float = 0.95
    thresholds: dict = dataclasses.field(default_factory=dict, repr=False)
    judgement: dict = dataclasses.field(default_factory=dict, repr=False)
    title = "fairlens audit"

    # ---------------------------------------------------------------- tables
    @property
    def findings(self):
        """One row per finding (:data:`FINDING_COLUMNS`): the estimate, its interval, the condition it was
        judged against, its verdict and how it was decided."""
        rows = [{k: v for k, v in f.items() if not k.startswith("_")} for o in self.outcomes for f in o.findings]
        return pd.DataFrame(rows, columns=list(FINDING_COLUMNS))

    @property
    def results(self):
        """``{check id: the slice's Result}`` for drill-down."""
        return {o.id: o.result for o in self.outcomes}

    def section(self, check):
        """The :class:`CheckOutcome` of one check.

        Parameters
        ----------
        check : str
            A check id: ``"group_fairness"``, ``"individual"``, ``"subgroup"``, ``"explanations"``
            or ``"robustness"``.

        Returns
        -------
        CheckOutcome
            The section of that check (its findings, tables, figures and ``result``).

        Raises
        ------
        KeyError
            If the check did not run in this audit (the message lists those that did).

        Examples
        --------
        >>> import numpy as np
        >>> import fairlens
        >>> from fairlens.datasets import load_german_credit
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn.pipeline import make_pipeline
        >>> from sklearn.preprocessing import StandardScaler
        >>> german = load_german_credit().subset(np.arange(400))
        >>> model = make_pipeline(StandardScaler(), LogisticRegression()).fit(german.X, german.y)
        >>> report = fairlens.audit(model, german, protected=["sex"], checks=["group_fairness"],
        ...                         time_limit=None, progress=False)
        >>> sec = report.section("group_fairness")
        >>> sec.status, sec.title, len(sec.findings)
        ('complete', 'Group fairness', 8)
        >>> type(sec.result).__name__
        'GroupMetricsResult'
        """
        for o in self.outcomes:
            if o.id == check:
                return o
        raise KeyError(f"check {check!r} did not run; checks: {[o.id for o in self.outcomes]}")

    def summary(self):
        """One row: checks run, findings that fail / are inconclusive, checks cut short, gate, time.

        Returns
        -------
        DataFrame
            One row with ``checks`` (checks run), ``findings``, ``failed``, ``inconclusive``,
            ``not_computed`` (findings with that verdict), ``cut_short`` (checks cut short by the time
            budget), ``passed`` (:meth:`passed` with the report's own gate), ``burden``, ``elapsed`` and
            ``random_state``.

        Examples
        --------
        >>> import numpy as np
        >>> import fairlens
        >>> from fairlens.datasets import load_german_credit
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn.pipeline import make_pipeline
        >>> from sklearn.preprocessing import StandardScaler
        >>> german = load_german_credit().subset(np.arange(400))
        >>> model = make_pipeline(StandardScaler(), LogisticRegression()).fit(german.X, german.y)
        >>> report = fairlens.audit(model, german, protected=["sex"], checks=["group_fairness"],
        ...                         time_limit=None, progress=False)
        >>> report.summary()[["checks", "findings", "failed", "cut_short", "passed"]]
           checks  findings  failed  cut_short  passed
        0       1         8       0          0    True
        """
        f = self.findings
        return pd.DataFrame([{
            "checks": len(self.outcomes), "findings": len(f), "failed": int((f["verdict"] == "fail").sum()),
            "inconclusive": int((f["verdict"] == "inconclusive").sum()),
            "not_computed": int((f["verdict"] == "not computed").sum()),
            "cut_short": int(sum(o.status == "cut short" for o in self.outcomes)),
            "passed": self.passed(), "burden": self.burden, "elapsed": self.elapsed,
            "random_state": self.random_state}])

    def to_frame(self):
        """The findings table (:attr:`findings`).

        Returns
        -------
        DataFrame
            One row per finding, the columns of :data:`FINDING_COLUMNS`: ``check``, ``measure``,
            ``label``, ``group``, ``value``, ``ci_low``, ``ci_high``, ``interval`` (what the two limits
            are), ``condition``, ``threshold``, ``verdict`` (``"pass"``, ``"fail"``, ``"inconclusive"``,
            ``"not computed"``, ``"info"`` or ``"not applicable"``), ``p_fail``/``p_pass`` (Holm-adjusted),
            ``detectable``, ``decided_by``, ``sentence`` and ``unit``.  As in the report document, ``value``,
            ``ci_low``, ``ci_high`` and ``threshold`` are raw numbers: a rate or a difference of rates
            is a proportion (0.05), and ``unit`` says how the report and the sentences show it
            (``"rate"``: 5.0%, ``"difference"``: 5.0 percentage points, ``"ratio"``: 0.05); see
            *Units* in :mod:`fairlens.report._schema`.

        Examples
        --------
        >>> import numpy as np
        >>> import fairlens
        >>> from fairlens.datasets import load_german_credit
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn.pipeline import make_pipeline
        >>> from sklearn.preprocessing import StandardScaler
        >>> german = load_german_credit().subset(np.arange(400))
        >>> model = make_pipeline(StandardScaler(), LogisticRegression()).fit(german.X, german.y)
        >>> report = fairlens.audit(model, german, protected=["sex"], checks=["group_fairness"],
        ...                         time_limit=None, progress=False)
        >>> frame = report.to_frame()
        >>> list(frame.columns)  # doctest: +NORMALIZE_WHITESPACE
        ['check', 'measure', 'label', 'group', 'value', 'ci_low', 'ci_high', 'interval', 'condition',
         'threshold', 'verdict', 'p_fail', 'p_pass', 'detectable', 'decided_by', 'sentence', 'unit']
        >>> frame["measure"].iloc[0], frame["group"].iloc[0], round(float(frame["value"].iloc[0]), 2)
        ('demographic_parity_difference', 'sex', 0.04)
        """
        return self.findings

    def plot(self, ax=None):
        """The group check's selection-rate figure (first protected attribute).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).

        Returns
        -------
        matplotlib Axes
            The axes of :meth:`fairlens.metrics.GroupMetricsResult.plot`.

        Raises
        ------
        NotImplementedError
            If the audit has no group fairness result (the check did not run or failed).

        Examples
        --------
        >>> import numpy as np
        >>> import fairlens
        >>> from fairlens.datasets import load_german_credit
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn.pipeline import make_pipeline
        >>> from sklearn.preprocessing import StandardScaler
        >>> german = load_german_credit().subset(np.arange(400))
        >>> model = make_pipeline(StandardScaler(), LogisticRegression()).fit(german.X, german.y)
        >>> report = fairlens.audit(model, german, protected=["sex"], checks=["group_fairness"],
        ...                         time_limit=None, progress=False)
        >>> report.plot().get_title()
        'Selection rate by sex'
        >>> import matplotlib.pyplot as plt
        >>> plt.close("all")
        """
        for o in self.outcomes:
            if o.id == "group_fairness" and o.result is not None:
                return o.result.plot(ax=ax)
        raise NotImplementedError("this audit has no group fairness result to plot")

    # ---------------------------------------------------------------- the gate
    def _judged(self, fail_on, burden):
        """``(outcomes, judgement)`` for a gate other than the audit's own (the report is not changed)."""
        import copy

        if fail_on is None and burden is None:
            return self.outcomes, self.judgement
        conds = parse_fail_on(fail_on) if fail_on is not None else parse_fail_on(self.fail_on or None)
        burden = self.burden if burden is None else burden
        if burden not in BURDENS:
            raise ValueError(f"burden must be one of {list(BURDENS)}; got {burden!r}.")
        outcomes = []
        for o in self.outcomes:
            o2 = copy.copy(o)
            o2.findings = []
            for f in o.findings:
                f2 = dict(f)
                if "_base" in f2:
                    f2["sentence"] = f2["_base"]
                f2.update(verdict="info" if f2["verdict"] != "not applicable" else "not applicable",
                          condition=None, threshold=None, p_fail=None, p_pass=None, detectable=None,
                          decided_by=None)
                o2.findings.append(f2)
            outcomes.append(o2)
        return outcomes, _judge(outcomes, conds, self.thresholds, burden, self.confidence)

    def gate(self, fail_on=None, burden=None):
        """Whether the audit passes a gate, and why not.

        The gate's conditions are judged together, over every finding they match (any attribute,
        intersection, group or rule set), with Holm's procedure (see :mod:`fairlens.audit._gate`):
        under the burden ``"violation"`` the gate fails when the data show some condition holds; under
        ``"compliance"`` it fails unless the data show that none holds; ``"estimate"`` compares point
        estimates.  A condition whose measure was not computed (check not run, cut short before it, not
        applicable) cannot be checked: the gate then neither passes nor fails.  Without a gate, the
        audit fails when some finding fails its default threshold or some check failed to run.

        Parameters
        ----------
        fail_on : str or list of str, optional
            Conditions as for :func:`parse_fail_on`, e.g. ``"demographic_parity_difference>0.1"``.
            Default: the gate given to :func:`audit`.
        burden : {"violation", "compliance", "estimate"}, optional
            Default: the one given to :func:`audit`.

        Returns
        -------
        passed : bool or None
            True or False; None when some condition could not be checked.
        reasons : list of str
            One sentence per finding that fails (or is inconclusive, under "compliance"), per condition
            that matched no finding, and per check that failed to run.

        Raises
        ------
        TypeError, ValueError
            For an unreadable condition, an unknown measure or burden (see :func:`parse_fail_on`).

        Examples
        --------
        >>> import numpy as np
        >>> import fairlens
        >>> from fairlens.datasets import load_german_credit
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn.pipeline import make_pipeline
        >>> from sklearn.preprocessing import StandardScaler
        >>> german = load_german_credit().subset(np.arange(400))
        >>> model = make_pipeline(StandardScaler(), LogisticRegression()).fit(german.X, german.y)
        >>> report = fairlens.audit(model, german, protected=["sex"], checks=["group_fairness"],
        ...                         time_limit=None, progress=False)
        >>> report.gate()
        (True, [])
        >>> report.gate("demographic_parity_difference>0.01", burden="estimate")[0]  # a 4 pp point estimate
        False
        >>> report.gate("demographic_parity_difference>0.01")[0]  # but the data do not show it is above 1 pp
        True
        >>> passed, reasons = report.gate("individual_discrimination_rate>0.05")  # MAFT did not run
        >>> passed, reasons[0].split(":")[0]
        (None, 'individual_discrimination_rate>0.05')
        """
        outcomes, judgement = self._judged(fail_on, burden)
        given = fail_on is not None or bool(self.fail_on)
        burden = self.burden if burden is None else burden
        findings = [f for o in outcomes for f in o.findings]
        if not given:
            bad = [f for f in findings if f["verdict"] == "fail"]
            reasons = [_reason(f) for f in bad]
            reasons += [f"check {o.id} failed to run" for o in outcomes if o.status == "failed"]
            return not reasons, reasons
        gated = [f for f in findings if f.get("decided_by") == "gate"]
        show = ("fail", "inconclusive") if burden == "compliance" else ("fail",)
        reasons = [_reason(f) for f in gated if f["verdict"] in show]
        reasons += [f"{m}: {m.split('>')[0].split('<')[0].replace('abs(', '').rstrip(')')} was not computed in this "
                    "audit, so the condition cannot be checked" for m in judgement.get("missing", [])]
        return judgement.get("passed"), reasons

    def passed(self, fail_on=None, burden=None):
        """Whether the audit passes the gate ``fail_on`` (see :meth:`gate`); a gate that cannot be
        checked does not pass.

        Parameters
        ----------
        fail_on : str or list of str, optional
            ``"demographic_parity_difference>0.1,individual_discrimination_rate>0.05"``; measures are
            those of :data:`KNOWN_MEASURES`. Default: the gate given to :func:`audit`, else "no finding
            fails its default threshold".
        burden : {"violation", "compliance", "estimate"}, optional
            Default: the one given to :func:`audit`.

        Returns
        -------
        bool

        Raises
        ------
        ValueError
            For an unreadable condition or an unknown measure (listing the known ones).

        Examples
        --------
        >>> import numpy as np
        >>> import fairlens
        >>> from fairlens.datasets import load_german_credit
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn.pipeline import make_pipeline
        >>> from sklearn.preprocessing import StandardScaler
        >>> german = load_german_credit().subset(np.arange(400))
        >>> model = make_pipeline(StandardScaler(), LogisticRegression()).fit(german.X, german.y)
        >>> report = fairlens.audit(model, german, protected=["sex"], checks=["group_fairness"],
        ...                         time_limit=None, progress=False)
        >>> report.passed()  # no gate given: no finding shown beyond its default threshold
        True
        >>> report.passed("demographic_parity_difference>0.01", burden="compliance")  # compliance not shown
        False
        """
        return bool(self.gate(fail_on, burden)[0])

    # ---------------------------------------------------------------- the document
    def to_dict(self, fail_on=None, burden=None):
        """The report document (``fairlens.report/2``, see :mod:`fairlens.report._schema`).

        Parameters
        ----------
        fail_on : str or list of str, optional
            A gate as for :meth:`gate`; default: the one given to :func:`audit`.  With no gate at
            all, ``verdict.passed`` is ``None`` and the verdict sentence counts the findings that
            fail, pass and are inconclusive.
        burden : {"violation", "compliance", "estimate"}, optional
            Default: the one given to :func:`audit`.

        Returns
        -------
        dict
            JSON-safe: ``schema``, ``kind``, ``title``, ``created``, ``environment``, ``data``,
            ``model``, ``parameters``, ``verdict`` (``passed``, ``status``, ``fail_on``, ``burden``,
            ``rule``, ``sentence``), ``findings`` (records; non-finite numbers become ``None``),
            ``sections`` (one :meth:`CheckOutcome.section` per check) and ``limitations``.

        Raises
        ------
        TypeError, ValueError
            For an unreadable ``fail_on`` (see :func:`parse_fail_on`).

        Examples
        --------
        >>> import numpy as np
        >>> import fairlens
        >>> from fairlens.datasets import load_german_credit
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn.pipeline import make_pipeline
        >>> from sklearn.preprocessing import StandardScaler
        >>> german = load_german_credit().subset(np.arange(400))
        >>> model = make_pipeline(StandardScaler(), LogisticRegression()).fit(german.X, german.y)
        >>> report = fairlens.audit(model, german, protected=["sex"], checks=["group_fairness"],
        ...                         time_limit=None, progress=False)
        >>> doc = report.to_dict()
        >>> doc["schema"], doc["kind"], doc["verdict"]["passed"], doc["verdict"]["status"]
        ('fairlens.report/2', 'audit', None, 'no gate')
        >>> report.to_dict("demographic_parity_difference>0.1")["verdict"]["status"]
        'passed'
        """

        outcomes, judgement = self._judged(fail_on, burden)
        burden = self.burden if burden is None else burden
        conds = parse_fail_on(fail_on) if fail_on is not None else parse_fail_on(self.fail_on or None)
        given = bool(conds)
        ok, reasons = self.gate(fail_on, burden)
        rows = [{k: v for k, v in f.items() if not k.startswith("_")} for o in outcomes for f in o.findings]
        n = {k: sum(r["verdict"] == k for r in rows) for k in ("fail", "pass", "inconclusive", "not computed")}
        counts = (f"{n['fail']} fail, {n['inconclusive']} inconclusive, {n['pass']} pass"
                  + (f", {n['not computed']} not computed" if n["not computed"] else ""))
        if given:
            glossed = ", ".join(_condition_text(c) for c in conds)
            status = {True: "passed", False: "failed", None: "not computed"}[ok]
            burden_words = {"violation": "fails only on evidence of a violation",
                            "compliance": "passes only on evidence of compliance",
                            "estimate": "compares point estimates"}[burden]
            if ok is None:
                sentence = (f"The gate {glossed} could not be checked: "
                            + "; ".join(r.rstrip(". ") for r in reasons[:3]) + ".")
            elif ok:
                sentence = f"The audit passes the gate {glossed} (the gate {burden_words})."
            else:
                sentence = (f"The audit fails the gate {glossed} (the gate {burden_words}): "
                            + "; ".join(r.rstrip(". ") for r in reasons[:3]) + ("; ..." if len(reasons) > 3 else "")
                            + ".")
            rule = judgement.get("rule")
        else:
            status = "no gate"
            sentence = f"Findings against their default thresholds: {counts}, over {len(outcomes)} checks."
            rule = judgement.get("report_rule")
        doc = {
            "schema": "fairlens.report/2", "kind": "audit",
            "title": self.info.get("title") or "Fairness audit",
            "created": self.created,
            "environment": _environment(__version__),
            "data": self.info["data"], "model": self.info["model"], "parameters": self.info["parameters"],
            "verdict": {"passed": (None if ok is None else bool(ok)) if given else None, "status": status,
                        "fail_on": [c.text for c in conds], "burden": burden, "rule": rule,
                        "report_rule": judgement.get("report_rule"), "sentence": sentence},
            "findings": [{k: (None if (isinstance(v, float) and not math.isfinite(v)) else v)
                          for k, v in r.items() if not (k == "unit" and v is None)}
                         for r in to_jsonable(rows, max_items=10**7)],
            "sections": [o.section() for o in outcomes],
            "limitations": _limitations(self),
        }
        return to_jsonable(doc, max_items=10**7)

    def to_json(self, path, fail_on=None):
        """Write the report document (:meth:`to_dict`) as JSON to ``path``.

        Parameters
        ----------
        path : str or path-like
            The file to write (UTF-8, overwritten).
        fail_on : str or list of str, optional
            A gate as for :meth:`to_dict`.

        Returns
        -------
        str or path-like
            ``path``, as given.

        Raises
        ------
        TypeError, ValueError
            For an unreadable ``fail_on`` (see :func:`parse_fail_on`).

        Examples
        --------
        >>> import numpy as np
        >>> import fairlens
        >>> from fairlens.datasets import load_german_credit
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn.pipeline import make_pipeline
        >>> from sklearn.preprocessing import StandardScaler
        >>> german = load_german_credit().subset(np.arange(400))
        >>> model = make_pipeline(StandardScaler(), LogisticRegression()).fit(german.X, german.y)
        >>> report = fairlens.audit(model, german, protected=["sex"], checks=["group_fairness"],
        ...                         time_limit=None, progress=False)
        >>> import json, os, tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     path = report.to_json(os.path.join(tmp, "audit.json"))
        ...     with open(path, encoding="utf-8") as fh:
        ...         doc = json.load(fh)
        >>> doc["schema"], len(doc["findings"])
        ('fairlens.report/2', 8)
        """
        import json

        doc = self.to_dict(fail_on)
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1, allow_nan=False)
        return path

    def to_html(self, path=None, fail_on=None):
        """Self-contained HTML of the report (the one renderer); written to ``path`` if given.

        Parameters
        ----------
        path : str or path-like, optional
            A file to write the HTML to (UTF-8, overwritten); default: only return it.
        fail_on : str or list of str, optional
            A gate as for :meth:`to_dict`.

        Returns
        -------
        str
            The HTML (also when written).

        Raises
        ------
        TypeError, ValueError
            For an unreadable ``fail_on`` (see :func:`parse_fail_on`).

        Examples
        --------
        >>> import numpy as np
        >>> import fairlens
        >>> from fairlens.datasets import load_german_credit
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn.pipeline import make_pipeline
        >>> from sklearn.preprocessing import StandardScaler
        >>> german = load_german_credit().subset(np.arange(400))
        >>> model = make_pipeline(StandardScaler(), LogisticRegression()).fit(german.X, german.y)
        >>> report = fairlens.audit(model, german, protected=["sex"], checks=["group_fairness"],
        ...                         time_limit=None, progress=False)
        >>> html = report.to_html()
        >>> html.startswith("<!DOCTYPE html>")
        True
        >>> import os, tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     _ = report.to_html(os.path.join(tmp, "audit.html"))
        ...     os.path.getsize(os.path.join(tmp, "audit.html")) > 0
        True
        """

        html = render_html(self.to_dict(fail_on))
        if path is not None:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(html)
        return html

    def _repr_html_(self):
        try:
            return self.to_html()
        except ImportError:  # renderer not available: the base table
            return super()._repr_html_()


def _environment(version):
    try:

        return environment_info()
    except ImportError:  # pragma: no cover - the schema module ships with the renderer
        import platform
        from importlib import metadata

        libs = {}
        for n in ("numpy", "pandas", "scikit-learn", "scipy", "numba", "shap", "lime"):
            try:
                libs[n] = metadata.version(n)
            except metadata.PackageNotFoundError:
                pass
        return {"fairlens": version, "python": platform.python_version(),
                "platform": f"{platform.system()} {platform.machine()}", "libraries": libs}


def _limitations(report):
    out = [
        "Group measures compare the model's predictions on the rows given; they say nothing about rows or "
        "populations the table does not represent, and the intervals cover sampling noise only.",
        "Individual discrimination changes only the protected attributes; attributes correlated with them "
        "(proxies) are held fixed, so discrimination through proxies is not counted there (the group and "
        "subgroup checks see it).",
        "Subgroup gaps are estimated by sampling around real rows (TestSGD); only groups described by the "
        "protected attributes with enough support are searched.",
        "Attributions are computed on a small sample of rows; a model whose scores depend on the batch "
        "makes them meaningless.",
        "A passing audit is not a proof of fairness: it reports the measures above at the stated budgets.",
    ]
    for o in report.outcomes:
        if o.status == "cut short":
            out.append(f"The {o.title.lower()} check was cut short by the time budget (see its notes).")
        if o.status == "not applicable":
            out.append(f"{o.title}: {o.verdict}")
        if o.status == "failed":
            out.append(f"{o.title} failed to run: {o.error}")
    return out


# ------------------------------------------------------------------------------ inputs
def _as_dataset(model, data, target, protected, favourable, max_groups=AUDIT_DEFAULTS["max_groups"]):
    """``(Dataset, data block, protected list)`` from a DataFrame or a Dataset."""

    if isinstance(protected, str):
        protected = [protected]
    if isinstance(data, Dataset):
        if target is not None and target != data.target:
            raise ValueError(f"target={target!r} but the Dataset's target is {data.target!r}; leave target unset "
                             "for a Dataset.")
        if protected is None:
            protected = list(data.protected)
        if favourable is not None:
            fav_rows = data.frame[data.target][data.y == 1]
            if not (fav_rows == favourable).any():
                raise ValueError(f"favourable={favourable!r} is not the favourable outcome of this Dataset "
                                 f"({data.label_names.get(1)!r}); leave favourable unset for a Dataset.")
        missing = [p for p in protected if p not in data.feature_names]
        if missing:
            raise ValueError(f"protected columns {missing} are not features of the Dataset; features: "
                             f"{list(data.feature_names)}.")
        return data, list(protected)
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame or a fairlens Dataset; got {type(data).__name__}.")
    cols = [str(c) for c in data.columns]
    dup = sorted({c for c in cols if cols.count(c) > 1})
    if dup:
        raise ValueError(f"data has duplicated column names {dup}: a column must be named once (rename or drop the "
                         "copies first).")
    if target is None:
        raise ValueError("target is required with a DataFrame: the name of the label column.")
    if not isinstance(target, str):
        raise TypeError(f"target must be a column name (str); got {target!r}.")
    if target not in data.columns:
        raise ValueError(f"target {target!r} is not a column of data; columns: {list(map(str, data.columns))}.")
    if protected is None or (isinstance(protected, (list, tuple)) and not protected):
        raise ValueError("protected is required: the protected column(s), e.g. protected=['sex', 'race'].")
    if not isinstance(protected, (list, tuple)) or not all(isinstance(p, str) for p in protected):
        raise TypeError(f"protected must be a column name or a list of column names; got {protected!r}.")
    missing = [p for p in protected if p not in data.columns]
    if missing:
        raise ValueError(f"protected columns {missing} are not columns of data; columns: "
                         f"{list(map(str, data.columns))}.")
    if target in protected:
        raise ValueError(f"target {target!r} cannot also be protected.")
    labels = data[target]
    if labels.isna().any():
        raise ValueError(f"target {target!r} has missing values; fill or drop those rows first.")
    values = list(pd.unique(labels))
    if len(values) != 2:
        raise ValueError(f"target {target!r} must be binary (two outcomes); it has {len(values)} value(s): "
                         f"{values[:6]}.")
    if favourable is None:
        raise ValueError(f"favourable is required: the value of {target!r} that is the favourable outcome, one of "
                         f"{values}.")
    if not (labels == favourable).any():
        raise ValueError(f"favourable={favourable!r} does not occur in {target!r}; its values are {values} (mind "
                         "the type: 1 vs '1').")
    features = [c for c in data.columns if c != target]
    names = getattr(model, "feature_names_in_", None)
    if names is not None:  # align to the model's own column order: same findings whatever the frame's order
        names = [str(c) for c in names]
        have = set(map(str, features))
        if set(names) <= have:
            # columns the model does not read are left out, except protected ones (a model that does not
            # read a protected column is still audited for it: "fairness through unawareness")
            features = names + [p for p in protected if p not in names]
    # a protected column with few values (a 0/1 sex column too) is a set of groups everywhere -- also in
    # the subgroup search, which would otherwise cut it at thresholds such as "sex < 0.5"
    categorical = [c for c in features if not pd.api.types.is_numeric_dtype(data[c]) or
                   pd.api.types.is_bool_dtype(data[c]) or
                   (c in protected and data[c].nunique() <= max_groups)]
    holes = [c for c in features if data[c].isna().any()]
    if holes:
        n_rows = int(data[holes].isna().any(axis=1).sum())
        raise ValueError(
            f"data has missing values in {holes} ({n_rows:,} rows). The audit's searches (MAFT, TestSGD, "
            "certification) build new rows from each column's observed values and cannot represent a missing one, "
            "so a table with holes is refused even when the model accepts them. Audit the complete rows "
            "(data.dropna(); the report then describes the model on those rows only) or fill the holes the way "
            "your deployment does.")
    ds = from_frame(data, target, protected=list(protected), favourable=favourable, features=features,
                    categorical=categorical, name="data")
    return ds, list(protected)


class _UnawareModel:
    """The user's model, fed only the columns it reads: the audit adds the protected columns the model
    does not read (to audit it for them), and this adapter drops them again before every call."""

    def __init__(self, model, features):
        self.model = model
        self.columns = [str(c) for c in model.feature_names_in_]
        self.feature_names_in_ = np.asarray(features, dtype=object)
        self.n_features_in_ = len(features)
        self.classes_ = model.classes_

    def predict_proba(self, X):
        return self.model.predict_proba(X[self.columns])

    def __repr__(self):
        return f"{type(self.model).__name__} (reads {len(self.columns)} of the {self.n_features_in_} columns)"


def _model_source(model_source):
    """``(file name, sha256)`` of ``model_source`` (checked before anything runs)."""
    source = sha = None
    if isinstance(model_source, dict):
        source, sha = model_source.get("name") or model_source.get("source"), model_source.get("sha256")
        if source is not None:
            source = os.path.basename(str(source))
    elif model_source is not None:
        p = os.fspath(model_source)
        if os.path.isfile(p):
            h = hashlib.sha256()
            with open(p, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
            source, sha = os.path.basename(p), h.hexdigest()
        elif re.fullmatch(r"[0-9a-fA-F]{64}", p):
            sha = p.lower()
        else:
            raise ValueError(f"model_source must be the model's file path, its sha256 or a dict "
                             f"{{'name': ..., 'sha256': ...}}; {p!r} is neither an existing file nor a sha256.")
    return source, sha


def _model_block(model, scorer, source_info):
    params = {}
    if hasattr(model, "get_params"):
        try:
            raw = model.get_params(deep=False)
            params = {str(k): (v if isinstance(v, (int, float, str, bool, type(None))) else repr(v)[:200])
                      for k, v in raw.items()}
        except Exception:  # noqa: BLE001 - identity is best effort
            params = {}
    source, sha = source_info
    kind = {"readable": "readable frame", "encoded_frame": "encoded array", "encoded": "encoded array",
            "callable": "callable"}.get(getattr(scorer, "input_kind", None), None)
    return {"class": type(model).__name__, "module": type(model).__module__, "params": params,
            "source": source, "sha256": sha, "input": kind}


def _favourable_class(model, data, favourable, dataset):
    """The model class whose probability is the favourable score."""
    classes = getattr(model, "classes_", None)
    if classes is None:
        return 1
    classes = list(np.asarray(classes).tolist())
    if len(classes) != 2:
        raise ValueError(f"model: a classifier with {len(classes)} classes {classes[:10]}; the audit needs a binary "
                         "classifier (one favourable and one unfavourable outcome). Fit the model on the binary "
                         "target, or wrap it as a callable returning the favourable outcome's probability.")
    if favourable is not None and favourable in classes:
        return favourable
    if set(classes) == {0, 1}:
        return 1
    fav = dataset.label_names.get(1)
    if favourable is None:
        vals = pd.unique(dataset.frame[dataset.target][dataset.y == 1])
        if len(vals) == 1 and vals[0] in classes:
            return vals[0]
    raise ValueError(f"model: its classes {classes} include neither favourable={favourable!r} nor 0/1; pass "
                     f"the model fitted on this target ({fav!r} is the favourable outcome).")


@strict_keywords(renamed={"time_budget": "time_limit"})
@validated({
    "model": "no_validation", "data": "no_validation", "target": "no_validation", "protected": "no_validation",
    "favourable": "no_validation", "checks": "no_validation",
    "time_limit": _AUDIT_CONSTRAINTS["time_limit"],
    "n_jobs": ["n_jobs"], "random_state": ["random_state"], "progress": ["progress"],
    "threshold": [Interval(numbers.Real, 0, 1, closed="neither")], "thresholds": [dict, None],
    "fail_on": "no_validation", "burden": [Options(*BURDENS)], "privileged": [dict, None],
    "options": [dict, None], "model_source": "no_validation", "data_source": "no_validation",
    "title": [str, None],
})
def audit(model, data, *, target=None, protected=None, favourable=None, checks=None, time_limit=60.0,
          n_jobs=None, random_state=0, progress=True, threshold=0.5, thresholds=None, fail_on=None,
          burden="violation", privileged=None, options=None, model_source=None, data_source=None, title=None):
    """Audit ``model`` on ``data``: every check that applies, one :class:`AuditReport`.

    Parameters
    ----------
    model : estimator, pipeline or callable
        Anything :func:`fairlens.models.as_scorer` accepts: a fitted binary classifier or pipeline
        with ``predict_proba`` fitted on the readable table, on its encoded columns, or a callable
        mapping encoded rows to favourable-class probabilities (also a
        :class:`fairlens.shuffle.ShuffledModel`).
    data : DataFrame or fairlens.datasets.Dataset
        The table to audit on: features, protected columns and the target.  A DataFrame is wrapped
        with :func:`fairlens.datasets.from_frame`; its columns are aligned to the model's
        ``feature_names_in_`` when it has them (so the column order does not matter).
    target : str
        The label column (required with a DataFrame; must have exactly two values).
    protected : str or list of str
        The protected columns (default for a Dataset: ``data.protected``).
    favourable : label
        The value of ``target`` that is the favourable outcome (required with a DataFrame).
    checks : list of str, optional
        Subset of the check ids of :data:`CHECKS` (default: all, in that order): ``"group_fairness"``
        (the audit's own) and the check each registered slice adds (:mod:`fairlens._registry`; the
        built-in ones: ``"individual"``, ``"subgroup"``, ``"explanations"``, ``"robustness"``).
    time_limit : float > 0 or None, default 60
        Seconds of wall time shared by the checks (the one name of a time limit in fairlens, as in
        :func:`fairlens.certify.certify`; ``time_budget=`` before, now refused with a ``TypeError``
        naming ``time_limit``): each gets its registered share (``CHECKS[id][1]``: group 10%,
        individual 25%, subgroup 30%, explanations 20%, robustness 15%) of the time left when it
        starts, so time a check does not use passes to the next; a check that does not apply to the
        model takes no share.  A check that reaches its share stops and says so ("cut short"); its
        intervals still hold for what it measured.  ``None``: no limit (each check runs its full budget
        of :data:`AUDIT_DEFAULTS`).
    n_jobs : int or None
        Workers for the checks' parallel loops (scikit-learn's convention); the findings are the
        same at every ``n_jobs`` for the same ``random_state`` (unless a check is cut short).
    random_state : int, Generator, RandomState or None, default 0
        Seeds every random step; the integer used is recorded in the report.
    progress : bool or callable, default True
        A ``tqdm.auto`` bar over the checks (a widget in JupyterLab, text in a terminal); a callable
        is called as ``progress(stage, done, total)`` after each check (``stage="checks"``,
        ``done`` the checks finished of ``total``); ``False``/``None`` for silence.  A callable
        that cannot take three positional arguments is refused with a ``TypeError`` before any
        work.
    threshold : float in (0, 1), default 0.5
        A row is predicted favourable when its favourable-class probability is at least this.
    thresholds : dict, optional
        Override default thresholds (:data:`fairlens.audit._gate.DEFAULT_THRESHOLDS`): ``{measure: value}``
        keeps the measure's operator, ``{measure: "<0.9"}`` or ``{measure: "abs>0.05"}`` sets it.
        Defaults: demographic parity difference, equal opportunity and equalized odds differences
        > 0.1; |statistical parity|, |average odds| and |true positive rate| differences > 0.1;
        disparate impact and demographic parity ratio < 0.8 (the four-fifths rule); individual
        discrimination rate > 0.05; a subgroup gap (fresh estimate) > 0.1; a batch-dependent model.
        Each finding is then "fail" when the data show it is beyond its threshold, "pass" when they
        show it is within, and "inconclusive" otherwise (Holm over all these findings: every fail and
        pass among them is wrong with probability at most ``1 - confidence`` in total).
    fail_on : str or list of str, optional
        A gate, e.g. ``"demographic_parity_difference>0.1,abs(statistical_parity_difference)>0.1"``:
        conditions judged together over every finding they match (see :func:`parse_fail_on` and
        :meth:`AuditReport.gate`).  A measure named here is judged against the gate's condition instead
        of its default threshold.
    burden : {"violation", "compliance", "estimate"}, default "violation"
        The gate's burden of proof, named in the report: ``"violation"`` fails the gate only where the
        data show a condition holds (a model within every threshold fails with probability at most
        ``(1 - confidence) / 2``); ``"compliance"`` passes it only where the data show no condition
        holds (a model beyond a threshold passes with probability at most ``(1 - confidence) / 2``);
        ``"estimate"`` compares point estimates (no error control, only when asked for by name).
    privileged : dict, optional
        ``{attribute: group}``: the reference group of the signed measures of that attribute (AIF360's
        convention: everyone else against it).  Default: every group against everyone else.
    options : dict, optional
        Override budgets of :data:`AUDIT_DEFAULTS` (e.g. ``{"confidence": 0.99, "maft_seeds": 1000}``);
        every value is checked before any analysis runs.
    model_source : str, path or dict, optional
        Where the model came from: its file (hashed with sha256; only the file name is reported),
        its sha256, or ``{"name": ..., "sha256": ...}`` (the CLI passes this).
    data_source : str, path or dict, optional
        The file the table was read from (its bytes are hashed; only the file name is reported) or
        ``{"name": ..., "sha256": ...}``.  Default: the sha256 of the table's CSV serialisation.
    title : str, optional
        Title of the report.

    Returns
    -------
    AuditReport

    Raises
    ------
    TypeError, ValueError
        Naming the argument: an absent target or protected column, a target that is not binary, a
        favourable value that does not occur, ``time_limit <= 0``, an unknown check, measure or
        option, a model that cannot be called on the table's rows.

    Examples
    --------
    >>> import fairlens
    >>> report = fairlens.audit(model, frame, target="income", protected=["sex", "race"],
    ...                         favourable=">50K", time_limit=30)  # doctest: +SKIP
    >>> report.findings[["check", "measure", "value", "verdict"]]  # doctest: +SKIP
    >>> report.passed("demographic_parity_difference>0.1")  # doctest: +SKIP
    >>> report.to_html("audit.html")  # doctest: +SKIP
    """

    validate_params(dict(time_limit=time_limit, threshold=threshold, random_state=random_state,
                         n_jobs=n_jobs, progress=progress, burden=burden), _AUDIT_CONSTRAINTS, caller="audit")
    report_fn = None if progress is True else check_progress(progress)  # before any work
    specs = check_specs()   # the group check and every registered slice's check, in order
    if checks is None:
        checks = list(specs)
    elif isinstance(checks, str):
        checks = [checks]
    if not isinstance(checks, (list, tuple)) or not checks:
        raise TypeError(f"checks must be a non-empty list of check names from {list(specs)}; got {checks!r}.")
    unknown = [c for c in checks if c not in specs]
    if unknown:
        raise ValueError(f"checks: unknown check(s) {unknown}; choose from {list(specs)}.")
    checks = [c for c in specs if c in checks]
    opts = _check_options(options)
    thr = dict(DEFAULT_THRESHOLDS)
    if thresholds is not None:
        if not isinstance(thresholds, dict):
            raise TypeError(f"thresholds must be a dict {{measure: value}}; got {thresholds!r}.")
        for k, v in thresholds.items():
            thr[k] = parse_threshold(k, v)
    if privileged is not None and not isinstance(privileged, dict):
        raise TypeError(f"privileged must be None or a dict {{attribute: group}}; got {privileged!r}.")
    conditions = parse_fail_on(fail_on)
    gate = [c.text for c in conditions]
    seed = resolve_random_state(random_state)
    t_start = time.perf_counter()
    created = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()

    source_info = _model_source(model_source)
    dataset, protected = _as_dataset(model, data, target, protected, favourable, opts["max_groups"])
    priv = _check_privileged(privileged, protected, dataset)
    fav_class = _favourable_class(model, data, favourable, dataset)
    user_model = model
    names = getattr(model, "feature_names_in_", None)
    if (names is not None and hasattr(model, "predict_proba")
            and set(map(str, names)) < set(dataset.feature_names)):
        model = _UnawareModel(model, list(dataset.feature_names))
    scorer = as_scorer(model, dataset, favourable=fav_class)
    score = np.asarray(scorer(dataset.X), dtype=np.float64)
    pred = (score >= threshold).astype(np.int64)
    model_block = _model_block(user_model, scorer, source_info)
    unread = [p for p in protected if names is not None and p not in set(map(str, names))]
    if unread:
        model_block["note"] = f"the model does not read the protected column(s) {unread}"
    ctx = Context(model=model, user_model=user_model, dataset=dataset, scorer=scorer, favourable_class=fav_class,
                  protected=protected,
                  y=np.asarray(dataset.y, dtype=np.int64), score=score, pred=pred, threshold=float(threshold),
                  random_state=seed, n_jobs=n_jobs, options=opts, input=model_block["input"],
                  privileged=priv,
                  deadline=math.inf if time_limit is None else t_start + float(time_limit))

    frame = data if isinstance(data, pd.DataFrame) else dataset.frame
    d_src, d_sha = None, None
    if isinstance(data_source, dict):
        d_src, d_sha = data_source.get("name"), data_source.get("sha256")
    elif data_source is not None:
        path = os.fspath(data_source)
        d_src = os.path.basename(path)
        if os.path.isfile(path):  # the file the table was read from: hash its bytes
            h = hashlib.sha256()
            with open(path, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
            d_sha = h.hexdigest()
    if d_sha is None:
        d_sha = hashlib.sha256(frame.to_csv(index=False).encode("utf-8")).hexdigest()
    info = {
        "title": title,
        "data": {"name": d_src or getattr(dataset, "name", "data"), "source": d_src,
                 "n_rows": int(len(frame)), "n_columns": int(frame.shape[1]), "sha256": d_sha,
                 "target": dataset.target if target is None else target,
                 "favourable": to_jsonable(favourable if favourable is not None else dataset.label_names.get(1)),
                 "protected": list(protected)},
        "model": model_block,
        "parameters": to_jsonable({"random_state": seed, "n_jobs": n_jobs, "time_limit": time_limit,
                                   "checks": list(checks), "threshold": float(threshold),
                                   "thresholds": {k: c.text for k, c in thr.items()},
                                   "fail_on": gate, "burden": burden, "privileged": privileged, **opts}),
    }


    bar = None
    if progress is True:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(checks), desc="fairlens audit", unit="check")
    outcomes = []
    shares = {}
    for c in checks:   # a check that does not apply takes no share of the budget
        applies = specs[c].applies
        shares[c] = specs[c].share if applies is None or resolve(applies)(model)[0] else 0.0
    for i, cid in enumerate(checks):
        func = resolve(specs[cid].function)
        if bar is not None:
            bar.set_description(f"fairlens audit: {cid.replace('_', ' ')}")
        if time_limit is None:
            seconds = float("inf")
        else:
            left = max(0.0, time_limit - (time.perf_counter() - t_start))
            rest = sum(shares[c] for c in checks[i:])
            seconds = left * shares[cid] / rest if rest > 0 else left
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                out = func(ctx, seconds if math.isfinite(seconds) else 1e9)
        except Exception as exc:  # noqa: BLE001 - one failing check must not lose the others
            out = CheckOutcome(cid, specs[cid].title, status="failed",
                               verdict=f"The check failed: {type(exc).__name__}: {exc}",
                               error=f"{type(exc).__name__}: {exc}")
        out.elapsed = time.perf_counter() - t0
        out.params.setdefault("time_share", None if not math.isfinite(seconds) else round(seconds, 3))
        outcomes.append(out)
        if bar is not None:
            bar.update(1)
        elif report_fn is not None:
            report_fn("checks", i + 1, len(checks))
    if bar is not None:
        bar.set_description("fairlens audit")
        bar.close()
    judgement = _judge(outcomes, conditions, thr, burden, opts["confidence"])
    return AuditReport(outcomes=outcomes, dataset=dataset, model=user_model, scorer=scorer, info=info, fail_on=gate,
                       created=created, params=info["parameters"], random_state=seed,
                       elapsed=time.perf_counter() - t_start, stopped=any(o.status == "cut short" for o in outcomes),
                       burden=burden, confidence=float(opts["confidence"]), thresholds=thr, judgement=judgement)


def _check_privileged(privileged, protected, dataset):
    """``{attribute: group label}`` for the group check (labels as the group check writes them)."""
    if not privileged:
        return None
    out = {}
    for k, v in privileged.items():
        if k not in protected:
            raise ValueError(f"privileged names {k!r}, which is not a protected column {list(protected)}.")
        col = dataset.frame[k]
        if not (col.astype(str) == str(v)).any():
            raise ValueError(f"privileged[{k!r}]={v!r} does not occur in column {k!r}; its values: "
                             f"{sorted(map(str, pd.unique(col)))[:20]}.")
        out[str(k)] = str(v)
    return out
