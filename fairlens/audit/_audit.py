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

from .._base import Interval, Result, resolve_random_state, to_jsonable, validate_params
from ._checks import CHECKS, DEFAULT_THRESHOLDS, CheckOutcome, Context

__all__ = ["audit", "AuditReport", "AUDIT_DEFAULTS", "KNOWN_MEASURES", "parse_fail_on"]

#: Default budgets and options of the checks (override any of them with ``options={...}``).
AUDIT_DEFAULTS = {
    "confidence": 0.95,        # level of every interval
    "n_boot": 1000,            # bootstrap replicates of the group measures
    "min_group_size": 30,      # smaller groups (or sides of a rule set) are too small to conclude
    "max_groups": 10,          # a numeric protected column with more values is cut into quartile bins
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
    # attribution methods, SHAP first, LIME in the time left.  "shap" is shap's exact/permutation
    # explainer (its first call in a process compiles for ~5-20 s); "kernel" (KernelSHAP) keeps only the
    # 10 largest attributions per row under shap's default l1_reg, which can zero a protected feature
    "explainers": ("shap", "lime"),
    "shap_nsamples": None,     # SHAP evaluations per row (default 4 d + 2: two permutations)
    "lime_nsamples": 1000,     # LIME perturbations per row
    "n_certify": 300,          # rows certified
    "certify_budgets": (1, 2),  # features the attacker may change
}

KNOWN_MEASURES = tuple(DEFAULT_THRESHOLDS)

_FAIL_ON = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(>=|<=|>|<)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$")

_AUDIT_CONSTRAINTS = {
    "time_budget": [Interval(numbers.Real, 0, None, closed="neither"), None],
    "threshold": [Interval(numbers.Real, 0, 1, closed="neither")],
    "random_state": ["random_state"],
    "n_jobs": ["n_jobs"],
    "progress": ["progress"],
}


def parse_fail_on(fail_on):
    """Parse a gate ``"measure>value,measure<value"`` (or a list of such conditions).

    Parameters
    ----------
    fail_on : str, list of str or None
        Conditions ``measure<op>value`` with ``op`` one of ``>``, ``<``, ``>=``, ``<=``, separated
        by commas (in one string or across the strings of a list); spaces around the parts are
        ignored.  ``measure`` must be one of :data:`KNOWN_MEASURES`.  ``None``: no condition.

    Returns
    -------
    list of (measure, operator, value, text)
        One tuple per condition, in order: the measure name, the operator string, the threshold
        as a float and the condition rewritten without spaces.  Empty for ``None``.

    Raises
    ------
    TypeError
        For a ``fail_on`` (or an item of the list) that is not a string.
    ValueError
        For an empty condition, a condition that does not parse or one that names an unknown
        measure (the message lists the known ones).

    Examples
    --------
    >>> from fairlens.audit import parse_fail_on
    >>> parse_fail_on("demographic_parity_difference > 0.1, individual_discrimination_rate>=0.05")
    ... # doctest: +NORMALIZE_WHITESPACE
    [('demographic_parity_difference', '>', 0.1, 'demographic_parity_difference>0.1'),
     ('individual_discrimination_rate', '>=', 0.05, 'individual_discrimination_rate>=0.05')]
    >>> parse_fail_on(["disparate_impact<0.8"])
    [('disparate_impact', '<', 0.8, 'disparate_impact<0.8')]
    >>> parse_fail_on(None)
    []
    >>> parse_fail_on("accuracy>0.9")
    Traceback (most recent call last):
    ...
    ValueError: fail_on: unknown measure 'accuracy'; known measures: ...
    """
    if fail_on is None:
        return []
    if isinstance(fail_on, str):
        parts = [p for p in fail_on.split(",")]
    elif isinstance(fail_on, (list, tuple)):
        parts = []
        for p in fail_on:
            if not isinstance(p, str):
                raise TypeError(f"fail_on must be a string 'measure>value,...' or a list of such strings; got {p!r}.")
            parts.extend(p.split(","))
    else:
        raise TypeError(f"fail_on must be a string 'measure>value,...' or a list of such strings; got {fail_on!r}.")
    out = []
    for p in parts:
        if not p.strip():
            raise ValueError(f"fail_on has an empty condition in {fail_on!r}; write e.g. "
                             "'demographic_parity_difference>0.1,individual_discrimination_rate>0.05'.")
        m = _FAIL_ON.match(p)
        if not m:
            raise ValueError(f"fail_on: cannot read the condition {p.strip()!r}; write measure>value, measure<value, "
                             "measure>=value or measure<=value, e.g. 'demographic_parity_difference>0.1'.")
        name, op, val = m.group(1), m.group(2), float(m.group(3))
        if name not in KNOWN_MEASURES:
            raise ValueError(f"fail_on: unknown measure {name!r}; known measures: {', '.join(KNOWN_MEASURES)}.")
        out.append((name, op, val, f"{name}{op}{m.group(3)}"))
    return out


def _holds(v, op, thr):
    return {">": v > thr, "<": v < thr, ">=": v >= thr, "<=": v <= thr}[op]


def _shown(measure, v):
    """``v`` of ``measure`` as the report shows it (a rate in %, a difference of rates in percentage
    points), or ``None`` when the report shows the plain number (ratios, counts)."""
    from ._checks import DEFAULT_THRESHOLDS, _val

    unit = DEFAULT_THRESHOLDS.get(measure, (None, None, None, None))[3]
    return _val(v, unit) if unit in ("rate", "difference") else None


def _condition_text(name, op, thr, text):
    """A gate condition as written (document units: proportions), glossed in the report's unit:
    ``demographic_parity_difference>0.1`` -> ``demographic_parity_difference>0.1 (> 10.0 pp)``."""
    shown = _shown(name, thr)
    return text if shown is None else f"{text} ({op} {shown})"


def _reason_text(name, group, value, op, thr):
    """Why a finding fails a gate condition, in document units and in the report's unit."""
    g = "" if group is None or pd.isna(group) else f" ({group})"
    shown_v, shown_t = _shown(name, value), _shown(name, thr)
    if shown_v is None:
        return f"{name}{g} = {value:.3g} ({op} {thr:g})"
    return f"{name}{g} = {value:.3g}, i.e. {shown_v} ({op} {thr:g}, i.e. {shown_t})"


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
    ...                         options={"n_boot": 200}, time_budget=None, progress=False)
    >>> [o.id for o in report.outcomes], report.random_state, report.stopped
    (['group_fairness'], 0, False)
    >>> report.findings.shape
    (8, 11)
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
    title = "fairlens audit"

    # ---------------------------------------------------------------- tables
    @property
    def findings(self):
        """One row per finding: ``check, measure, label, group, value, ci_low, ci_high, threshold,
        verdict, sentence`` (and ``unit``)."""
        cols = ["check", "measure", "label", "group", "value", "ci_low", "ci_high", "threshold", "verdict",
                "sentence", "unit"]
        rows = [f for o in self.outcomes for f in o.findings]
        return pd.DataFrame(rows, columns=cols)

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
        ...                         options={"n_boot": 200}, time_budget=None, progress=False)
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
        """One row: checks run, findings failed / inconclusive, checks cut short, time.

        Returns
        -------
        DataFrame
            One row with ``checks`` (checks run), ``findings``, ``failed`` (findings with verdict
            "fail"), ``inconclusive`` (verdict "warn"), ``cut_short`` (checks cut short by the time
            budget), ``passed`` (:meth:`passed` with the report's own gate), ``elapsed`` and
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
        ...                         options={"n_boot": 200}, time_budget=None, progress=False)
        >>> report.summary()[["checks", "findings", "failed", "cut_short", "passed"]]
           checks  findings  failed  cut_short  passed
        0       1         8       0          0    True
        """
        f = self.findings
        return pd.DataFrame([{
            "checks": len(self.outcomes), "findings": len(f), "failed": int((f["verdict"] == "fail").sum()),
            "inconclusive": int((f["verdict"] == "warn").sum()),
            "cut_short": int(sum(o.status == "cut short" for o in self.outcomes)),
            "passed": self.passed(), "elapsed": self.elapsed, "random_state": self.random_state}])

    def to_frame(self):
        """The findings table (:attr:`findings`).

        Returns
        -------
        DataFrame
            One row per finding: ``check``, ``measure``, ``label``, ``group``, ``value``, ``ci_low``,
            ``ci_high``, ``threshold``, ``verdict`` (``"pass"``, ``"warn"``, ``"fail"``, ``"info"`` or
            ``"not applicable"``), ``sentence`` and ``unit``.  As in the report document, ``value``,
            ``ci_low``, ``ci_high`` and ``threshold`` are raw numbers: a rate or a difference of rates
            is a proportion (0.05), and ``unit`` says how the report and the sentences show it
            (``"rate"``: 5.0%, ``"difference"``: 5.0 percentage points, ``"ratio"``: 0.05); see
            *Units* in :mod:`fairlens.audit._schema`.

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
        ...                         options={"n_boot": 200}, time_budget=None, progress=False)
        >>> frame = report.to_frame()
        >>> list(frame.columns)  # doctest: +NORMALIZE_WHITESPACE
        ['check', 'measure', 'label', 'group', 'value', 'ci_low', 'ci_high', 'threshold', 'verdict',
         'sentence', 'unit']
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
        ...                         options={"n_boot": 200}, time_budget=None, progress=False)
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
    def gate(self, fail_on=None):
        """Whether the audit passes a gate, and why not.

        A condition ``measure>value`` fails the gate when ANY finding of that measure (any attribute,
        group or rule set) satisfies it; a condition on a measure that was not computed (check not run,
        not applicable, failed) fails the gate too, since it cannot be verified.  Without a gate, the
        audit fails when some finding has verdict ``"fail"`` or some check failed to run.

        Parameters
        ----------
        fail_on : str or list of str, optional
            Conditions as for :func:`parse_fail_on`, e.g. ``"demographic_parity_difference>0.1"``.
            Default: the gate given to :func:`audit`, else: no finding with verdict "fail".

        Returns
        -------
        passed : bool
            True when no condition is met (no reason).
        reasons : list of str
            One sentence per finding (or uncomputed measure, or failed check) that fails the gate.

        Raises
        ------
        TypeError, ValueError
            For an unreadable condition or an unknown measure (see :func:`parse_fail_on`).

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
        ...                         options={"n_boot": 200}, time_budget=None, progress=False)
        >>> report.gate()
        (True, [])
        >>> ok, reasons = report.gate("demographic_parity_difference>0.01")
        >>> ok, [r.split(" = ")[0] for r in reasons]  # "measure (group) = value, i.e. 4.1 pp (> 0.01, i.e. 1.00 pp)"
        (False, ['demographic_parity_difference (sex)'])
        >>> report.gate("individual_discrimination_rate>0.05")[0]  # MAFT did not run: cannot pass
        False
        """
        conds = parse_fail_on(fail_on) if fail_on is not None else parse_fail_on(self.fail_on or None)
        f = self.findings
        reasons = []
        if not conds:
            bad = f[f["verdict"] == "fail"]
            reasons = [f"{r['measure']}{'' if pd.isna(r['group']) else ' (' + str(r['group']) + ')'}: {r['sentence']}"
                       for _, r in bad.iterrows()]
            failed = [o.id for o in self.outcomes if o.status == "failed"]
            reasons += [f"check {c} failed to run" for c in failed]
            return not reasons, reasons
        for name, op, thr, text in conds:
            rows = f[(f["measure"] == name) & f["value"].notna()]
            if not len(rows):
                reasons.append(f"{text}: {name} was not computed in this audit, so the condition cannot be checked")
                continue
            for _, r in rows.iterrows():
                if _holds(float(r["value"]), op, thr):
                    reasons.append(_reason_text(name, r["group"], float(r["value"]), op, thr))
        return not reasons, reasons

    def passed(self, fail_on=None):
        """Whether the audit passes the gate ``fail_on`` (see :meth:`gate`).

        Parameters
        ----------
        fail_on : str or list of str, optional
            ``"demographic_parity_difference>0.1,individual_discrimination_rate>0.05"``; measures are
            those of ``report.findings["measure"]`` (:data:`KNOWN_MEASURES`). Default: the gate given to
            :func:`audit`, else "no finding fails its default threshold".

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
        ...                         options={"n_boot": 200}, time_budget=None, progress=False)
        >>> report.passed()  # no gate given: no finding beyond its default threshold
        True
        >>> report.passed("demographic_parity_difference>0.01")
        False
        """
        return self.gate(fail_on)[0]

    # ---------------------------------------------------------------- the document
    def to_dict(self, fail_on=None):
        """The report document (``fairlens.report/1``, see :mod:`fairlens.audit._schema`).

        Parameters
        ----------
        fail_on : str or list of str, optional
            A gate as for :meth:`gate`; default: the one given to :func:`audit`.  With no gate at
            all, ``verdict.passed`` is ``None`` and the verdict sentence counts failed and
            inconclusive findings.

        Returns
        -------
        dict
            JSON-safe: ``schema``, ``kind``, ``title``, ``created``, ``environment``, ``data``,
            ``model``, ``parameters``, ``verdict`` (``passed``, ``fail_on``, ``sentence``),
            ``findings`` (records; non-finite numbers become ``None``), ``sections`` (one
            :meth:`CheckOutcome.section` per check) and ``limitations``.

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
        ...                         options={"n_boot": 200}, time_budget=None, progress=False)
        >>> doc = report.to_dict()
        >>> doc["schema"], doc["kind"], doc["verdict"]["passed"]
        ('fairlens.report/1', 'audit', None)
        >>> print(doc["verdict"]["sentence"])  # doctest: +NORMALIZE_WHITESPACE
        0 finding(s) beyond their default thresholds, 4 inconclusive (their interval reaches the
        threshold), over 1 checks.
        >>> report.to_dict("demographic_parity_difference>0.1")["verdict"]["passed"]
        True
        """
        from .._version import __version__

        gate_given = fail_on is not None or bool(self.fail_on)
        ok, reasons = self.gate(fail_on)
        conds = [c[3] for c in parse_fail_on(fail_on if fail_on is not None else (self.fail_on or None))]
        f = self.findings
        n_fail = int((f["verdict"] == "fail").sum())
        n_warn = int((f["verdict"] == "warn").sum())
        if gate_given:
            glossed = [_condition_text(*c) for c in
                       parse_fail_on(fail_on if fail_on is not None else (self.fail_on or None))]
            sentence = ("The audit passes the gate " + ", ".join(glossed) + "." if ok else
                        "The audit fails the gate: " + "; ".join(reasons[:5])
                        + ("; ..." if len(reasons) > 5 else "") + ".")
        else:
            sentence = (f"{n_fail} finding(s) beyond their default thresholds, {n_warn} inconclusive "
                        f"(their interval reaches the threshold), over {len(self.outcomes)} checks.")
        doc = {
            "schema": "fairlens.report/1", "kind": "audit",
            "title": self.info.get("title") or "Fairness audit",
            "created": self.created,
            "environment": _environment(__version__),
            "data": self.info["data"], "model": self.info["model"], "parameters": self.info["parameters"],
            "verdict": {"passed": bool(ok) if gate_given else None, "fail_on": conds, "sentence": sentence},
            "findings": [{k: (None if (isinstance(v, float) and not math.isfinite(v)) else v)
                          for k, v in r.items() if not (k == "unit" and v is None)}
                         for r in to_jsonable(f.to_dict(orient="records"), max_items=10**7)],
            "sections": [o.section() for o in self.outcomes],
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
        ...                         options={"n_boot": 200}, time_budget=None, progress=False)
        >>> import json, os, tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     path = report.to_json(os.path.join(tmp, "audit.json"))
        ...     with open(path, encoding="utf-8") as fh:
        ...         doc = json.load(fh)
        >>> doc["schema"], len(doc["findings"])
        ('fairlens.report/1', 8)
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
        ...                         options={"n_boot": 200}, time_budget=None, progress=False)
        >>> html = report.to_html()
        >>> html.startswith("<!DOCTYPE html>")
        True
        >>> import os, tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     _ = report.to_html(os.path.join(tmp, "audit.html"))
        ...     os.path.getsize(os.path.join(tmp, "audit.html")) > 0
        True
        """
        from ._render import render_html

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
        from ._schema import environment_info

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
def _as_dataset(model, data, target, protected, favourable):
    """``(Dataset, data block, protected list)`` from a DataFrame or a Dataset."""
    from ..datasets import Dataset
    from ..datasets._loaders import from_frame

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
    ds = from_frame(data, target, protected=list(protected), favourable=favourable, features=features,
                    name="data")
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


def _model_block(model, scorer, model_source):
    params = {}
    if hasattr(model, "get_params"):
        try:
            raw = model.get_params(deep=False)
            params = {str(k): (v if isinstance(v, (int, float, str, bool, type(None))) else repr(v)[:200])
                      for k, v in raw.items()}
        except Exception:  # noqa: BLE001 - identity is best effort
            params = {}
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


def audit(model, data, *, target=None, protected=None, favourable=None, checks=None, time_budget=60.0,
          n_jobs=None, random_state=0, progress=True, threshold=0.5, thresholds=None, fail_on=None,
          options=None, model_source=None, data_source=None, title=None):
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
        Subset of ``"group_fairness"``, ``"individual"``, ``"subgroup"``, ``"explanations"``,
        ``"robustness"`` (default: all, in that order).
    time_budget : float > 0 or None, default 60
        Seconds shared by the checks: each gets its share (group 10%, individual 25%, subgroup 30%,
        explanations 20%, robustness 15%) of the time left when it starts, so time a check does not
        use passes to the next.  A check that reaches its share stops and says so ("cut short");
        its intervals still hold for what it measured.  ``None``: no limit (each check runs its full
        budget of :data:`AUDIT_DEFAULTS`).
    n_jobs : int or None
        Workers for the checks' parallel loops (scikit-learn's convention); the findings are the
        same at every ``n_jobs`` for the same ``random_state`` (unless a check is cut short).
    random_state : int, Generator, RandomState or None, default 0
        Seeds every random step; the integer used is recorded in the report.
    progress : bool or callable, default True
        A ``tqdm.auto`` bar over the checks (a widget in JupyterLab, text in a terminal); a callable
        ``progress(done, total)``; ``False``/``None`` for silence.
    threshold : float in (0, 1), default 0.5
        A row is predicted favourable when its favourable-class probability is at least this.
    thresholds : dict, optional
        Override default thresholds: ``{measure: value}`` or ``{measure: (operator, value)}``.
        Defaults: demographic parity difference, equal opportunity and equalized odds differences
        > 0.1 fail; |statistical parity|, |average odds| and |true positive rate| differences > 0.1
        fail; disparate impact and demographic parity ratio < 0.8 fail (the four-fifths rule);
        individual discrimination rate > 0.05 fails; a subgroup gap (fresh estimate) > 0.1 fails; a
        batch-dependent model fails.  An estimate beyond its threshold is "fail"; an estimate within it
        whose interval reaches beyond it is "warn" (the data cannot settle it).
    fail_on : str or list of str, optional
        A gate, e.g. ``"demographic_parity_difference>0.1,individual_discrimination_rate>0.05"``
        (parsed strictly now; see :meth:`AuditReport.passed`).
    options : dict, optional
        Override budgets of :data:`AUDIT_DEFAULTS` (e.g. ``{"n_boot": 2000, "maft_seeds": 1000}``).
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
        favourable value that does not occur, ``time_budget <= 0``, an unknown check, measure or
        option, a model that cannot be called on the table's rows.

    Examples
    --------
    >>> import fairlens
    >>> report = fairlens.audit(model, frame, target="income", protected=["sex", "race"],
    ...                         favourable=">50K", time_budget=30)  # doctest: +SKIP
    >>> report.findings[["check", "measure", "value", "verdict"]]  # doctest: +SKIP
    >>> report.passed("demographic_parity_difference>0.1")  # doctest: +SKIP
    >>> report.to_html("audit.html")  # doctest: +SKIP
    """
    from ..models import as_scorer

    validate_params(dict(time_budget=time_budget, threshold=threshold, random_state=random_state,
                         n_jobs=n_jobs, progress=progress), _AUDIT_CONSTRAINTS, caller="audit")
    if checks is None:
        checks = list(CHECKS)
    elif isinstance(checks, str):
        checks = [checks]
    if not isinstance(checks, (list, tuple)) or not checks:
        raise TypeError(f"checks must be a non-empty list of check names from {list(CHECKS)}; got {checks!r}.")
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        raise ValueError(f"checks: unknown check(s) {unknown}; choose from {list(CHECKS)}.")
    checks = [c for c in CHECKS if c in checks]
    opts = dict(AUDIT_DEFAULTS)
    if options is not None:
        if not isinstance(options, dict):
            raise TypeError(f"options must be a dict; got {options!r}.")
        bad = [k for k in options if k not in AUDIT_DEFAULTS]
        if bad:
            raise ValueError(f"options: unknown option(s) {bad}; known: {list(AUDIT_DEFAULTS)}.")
        opts.update(options)
    thr = {k: v[:2] for k, v in DEFAULT_THRESHOLDS.items()}
    if thresholds is not None:
        if not isinstance(thresholds, dict):
            raise TypeError(f"thresholds must be a dict {{measure: value}}; got {thresholds!r}.")
        for k, v in thresholds.items():
            if k not in thr:
                raise ValueError(f"thresholds: unknown measure {k!r}; known measures: {', '.join(KNOWN_MEASURES)}.")
            if isinstance(v, tuple):
                thr[k] = v
            else:
                op = thr[k][0] or ">"
                thr[k] = (op, float(v))
    gate = [c[3] for c in parse_fail_on(fail_on)]
    seed = resolve_random_state(random_state)
    t_start = time.perf_counter()
    created = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()

    dataset, protected = _as_dataset(model, data, target, protected, favourable)
    fav_class = _favourable_class(model, data, favourable, dataset)
    user_model = model
    names = getattr(model, "feature_names_in_", None)
    if (names is not None and hasattr(model, "predict_proba")
            and set(map(str, names)) < set(dataset.feature_names)):
        model = _UnawareModel(model, list(dataset.feature_names))
    scorer = as_scorer(model, dataset, favourable=fav_class)
    score = np.asarray(scorer(dataset.X), dtype=np.float64)
    pred = (score >= threshold).astype(np.int64)
    model_block = _model_block(user_model, scorer, model_source)
    unread = [p for p in protected if names is not None and p not in set(map(str, names))]
    if unread:
        model_block["note"] = f"the model does not read the protected column(s) {unread}"
    ctx = Context(model=model, user_model=user_model, dataset=dataset, scorer=scorer, favourable_class=fav_class,
                  protected=protected,
                  y=np.asarray(dataset.y, dtype=np.int64), score=score, pred=pred, threshold=float(threshold),
                  random_state=seed, n_jobs=n_jobs, thresholds=thr, options=opts, input=model_block["input"])

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
        "parameters": to_jsonable({"random_state": seed, "n_jobs": n_jobs, "time_budget": time_budget,
                                   "checks": list(checks), "threshold": float(threshold),
                                   "thresholds": {k: list(v) for k, v in thr.items() if v[0] is not None},
                                   **opts}),
    }

    from .._base import check_progress

    bar = None
    report_fn = None
    if progress is True:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(checks), desc="fairlens audit", unit="check")
    else:
        report_fn = check_progress(progress)
    outcomes = []
    shares = {c: CHECKS[c][1] for c in checks}
    if "robustness" in shares:  # a check that does not apply takes no share of the budget
        from ._checks import tree_ensemble_kind

        if not tree_ensemble_kind(model)[0]:
            shares["robustness"] = 0.0
    for i, cid in enumerate(checks):
        func = CHECKS[cid][0]
        if bar is not None:
            bar.set_description(f"fairlens audit: {cid.replace('_', ' ')}")
        if time_budget is None:
            seconds = float("inf")
        else:
            left = max(0.0, time_budget - (time.perf_counter() - t_start))
            rest = sum(shares[c] for c in checks[i:])
            seconds = left * shares[cid] / rest if rest > 0 else left
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                out = func(ctx, seconds if math.isfinite(seconds) else 1e9)
        except Exception as exc:  # noqa: BLE001 - one failing check must not lose the others
            out = CheckOutcome(cid, cid.replace("_", " ").capitalize(), status="failed",
                               verdict=f"The check failed: {type(exc).__name__}: {exc}",
                               error=f"{type(exc).__name__}: {exc}")
        out.elapsed = time.perf_counter() - t0
        out.params.setdefault("time_share", None if not math.isfinite(seconds) else round(seconds, 3))
        outcomes.append(out)
        if bar is not None:
            bar.update(1)
        elif report_fn is not None:
            report_fn(i + 1, len(checks))
    if bar is not None:
        bar.set_description("fairlens audit")
        bar.close()
    return AuditReport(outcomes=outcomes, dataset=dataset, model=user_model, scorer=scorer, info=info, fail_on=gate,
                       created=created,
                       params=info["parameters"], random_state=seed, elapsed=time.perf_counter() - t_start,
                       stopped=any(o.status == "cut short" for o in outcomes))
