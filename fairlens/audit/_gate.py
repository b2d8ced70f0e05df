"""Conditions, thresholds and verdicts of the audit: every verdict states its rule and its error rate.

A *condition* is ``measure op value`` (``op`` one of ``>``, ``>=``, ``<``, ``<=``), optionally on the
magnitude of a signed measure: ``abs(statistical_parity_difference)>0.1``.  It describes what is
NOT acceptable; a finding *fails* when the condition holds for it.

Each finding of the audit carries a *test*: two one-sided p-values, ``p_hold`` (small when the data
show the condition holds) and ``p_not`` (small when they show it does not), obtained by inverting the
same score/MOVER intervals the report prints (:mod:`fairlens._stats`).  The findings judged together
form a *family*; the verdicts of a family are decided by Holm's (1979) step-down procedure, separately
for the two kinds of claim, each at half the error budget ``alpha = 1 - confidence``:

* ``"fail"``: Holm-adjusted ``p_hold <= alpha / 2`` -- the data show the condition holds;
* ``"pass"``: Holm-adjusted ``p_not <= alpha / 2`` -- the data show it does not;
* ``"inconclusive"``: neither (the interval reaches both sides of the threshold).

So every ``fail`` and every ``pass`` of a family is wrong with probability at most ``alpha`` in total
(family-wise, whatever the number of findings); a single finding fails exactly when its two-sided
``confidence`` interval lies beyond the threshold, and passes when it lies within.

The *gate* (``fail_on``) is one family: every finding its conditions match (any attribute,
intersection, group or rule set).  Its *burden of proof* decides what an inconclusive finding means:

* ``"violation"`` (default): the gate fails when some finding fails -- a model within every threshold
  fails the gate with probability at most ``alpha / 2``;
* ``"compliance"``: the gate fails unless every finding passes -- a model beyond some threshold passes
  the gate with probability at most ``alpha / 2``;
* ``"estimate"``: the point estimate is compared with the threshold (no error control; asked for by
  name only).

Deterministic findings (a batch-dependent score seen on a row, a count of instances found) are not
estimates: their verdict is exact and they take no part in the Holm families.
"""
from __future__ import annotations

import math
import re
from typing import NamedTuple

import numpy as np

from .. import _stats
from .._base import validated
from .._registry import audit_checks

__all__ = ["Condition", "BURDENS", "MEASURES", "all_measures", "DEFAULT_THRESHOLDS", "parse_fail_on", "parse_threshold",
           "decide", "VerdictRule"]

#: The burdens of proof of the gate and what each means.
BURDENS = {
    "violation": "evidence of violation: the gate fails only where the data show a condition holds",
    "compliance": "evidence of compliance: the gate passes only where the data show no condition holds",
    "estimate": "point estimate: the estimate is compared with the threshold, with no error control",
}

#: ``measure -> (readable label, unit, lowest value, highest value, signed, how it is judged)``;
#: ``how``: ``"test"`` (a sampling estimate with p-values), ``"exact"`` (deterministic), ``"none"``
#: (not an estimate of the model's behaviour: shown only).
MEASURES = {
    "demographic_parity_difference": ("Demographic parity difference", "difference", 0.0, 1.0, False, "test"),
    "demographic_parity_ratio": ("Demographic parity ratio", "ratio", 0.0, 1.0, False, "test"),
    "equal_opportunity_difference": ("Equal opportunity difference", "difference", 0.0, 1.0, False, "test"),
    "equalized_odds_difference": ("Equalized odds difference", "difference", 0.0, 1.0, False, "test"),
    "statistical_parity_difference": ("Statistical parity difference", "difference", -1.0, 1.0, True, "test"),
    "disparate_impact": ("Disparate impact", "ratio", 0.0, math.inf, False, "test"),
    "average_odds_difference": ("Average odds difference", "difference", -1.0, 1.0, True, "test"),
    "true_positive_rate_difference": ("True positive rate difference", "difference", -1.0, 1.0, True, "test"),
    "individual_discrimination_rate": ("Individual discrimination rate", "rate", 0.0, 1.0, False, "test"),
    "individual_instances_found": ("Discriminatory instances found by MAFT", "count", 0.0, math.inf, False,
                                   "exact"),
    "subgroup_score": ("Subgroup gap (fresh estimate)", "difference", 0.0, 1.0, False, "test"),
    "protected_attribution_share": ("Share of attribution on protected features", "rate", 0.0, 1.0, False,
                                    "test"),
    "batch_inconsistency": ("Rows whose score depends on the batch", "rate", 0.0, 1.0, False, "exact"),
    "clean_accuracy": ("Accuracy without attack", "rate", 0.0, 1.0, False, "test"),
    "accuracy_under_attack": ("Accuracy under attack", "rate", 0.0, 1.0, False, "test"),
}


def all_measures():
    """:data:`MEASURES` and the measures the registered slices' checks declare
    (:class:`fairlens._registry.AuditCheck` ``measures`` entries written as
    ``(name, label, unit, lowest, highest, signed, how)``), by name."""

    out = dict(MEASURES)
    for _, spec in audit_checks():
        for m in spec.measures:
            if not isinstance(m, str):
                out.setdefault(m[0], tuple(m[1:]))
    return out


class Condition(NamedTuple):
    """One condition ``measure op value``: what is NOT acceptable for a measure.

    Parameters
    ----------
    measure : str
        A measure of :data:`MEASURES`.
    op : {">", ">=", "<", "<="}
        The comparison.
    value : float
        The threshold, in document units (a proportion: 0.1 = 10 percentage points).
    text : str
        The condition as normalised by :func:`parse_fail_on`.
    absolute : bool, default False
        Compare ``|measure|`` (signed measures only).

    Examples
    --------
    >>> from fairlens.audit import Condition
    >>> c = Condition("statistical_parity_difference", ">", 0.1, "abs(statistical_parity_difference)>0.1", True)
    >>> c.holds(-0.15), c.holds(0.05), c.upward
    (True, False, True)
    """

    measure: str
    op: str
    value: float
    text: str
    absolute: bool = False

    def holds(self, v):
        """Whether the point value ``v`` satisfies the condition.

        Parameters
        ----------
        v : float or None
            A value of the measure (None or NaN: not computed).

        Returns
        -------
        bool
            False for a value that was not computed.

        Examples
        --------
        >>> from fairlens.audit import parse_fail_on
        >>> c = parse_fail_on("disparate_impact<0.8")[0]
        >>> c.holds(0.75), c.holds(0.9), c.holds(None)
        (True, False, False)
        """
        if v is None or not np.isfinite(v):
            return False
        v = abs(v) if self.absolute else v
        return {">": v > self.value, ">=": v >= self.value, "<": v < self.value, "<=": v <= self.value}[self.op]

    @property
    def upward(self):
        """True for ``>``/``>=`` (large values are unacceptable)."""
        return self.op in (">", ">=")


#: The default thresholds: what each measure's verdict is judged against when no gate names it.
DEFAULT_THRESHOLDS = {
    "demographic_parity_difference": Condition("demographic_parity_difference", ">", 0.1,
                                               "demographic_parity_difference>0.1"),
    "demographic_parity_ratio": Condition("demographic_parity_ratio", "<", 0.8, "demographic_parity_ratio<0.8"),
    "equal_opportunity_difference": Condition("equal_opportunity_difference", ">", 0.1,
                                              "equal_opportunity_difference>0.1"),
    "equalized_odds_difference": Condition("equalized_odds_difference", ">", 0.1, "equalized_odds_difference>0.1"),
    "statistical_parity_difference": Condition("statistical_parity_difference", ">", 0.1,
                                               "abs(statistical_parity_difference)>0.1", True),
    "disparate_impact": Condition("disparate_impact", "<", 0.8, "disparate_impact<0.8"),
    "average_odds_difference": Condition("average_odds_difference", ">", 0.1, "abs(average_odds_difference)>0.1",
                                         True),
    "true_positive_rate_difference": Condition("true_positive_rate_difference", ">", 0.1,
                                               "abs(true_positive_rate_difference)>0.1", True),
    "individual_discrimination_rate": Condition("individual_discrimination_rate", ">", 0.05,
                                                "individual_discrimination_rate>0.05"),
    "subgroup_score": Condition("subgroup_score", ">", 0.1, "subgroup_score>0.1"),
    "batch_inconsistency": Condition("batch_inconsistency", ">", 0.0, "batch_inconsistency>0"),
}

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_COND = re.compile(r"^\s*(?:(abs)\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)|([A-Za-z_][A-Za-z0-9_]*))\s*"
                   r"(>=|<=|>|<)\s*(" + _NUMBER + r"|[-+]?(?:inf|infinity|nan))\s*$", re.IGNORECASE)


def _check_condition(cond, where):
    """Refuse a condition that cannot be judged: a non-finite value, ``abs`` of a measure that is
    never negative, or a condition that can never hold (or always holds) over the measure's range."""
    name, op, c = cond.measure, cond.op, cond.value
    if not math.isfinite(c):
        raise ValueError(f"{where}: {cond.text!r} compares with a non-finite value ({c}); give a finite "
                         "threshold, e.g. 'demographic_parity_difference>0.1'.")
    label, unit, lo, hi, signed, how = all_measures()[name]
    if cond.absolute and not signed:
        raise ValueError(f"{where}: {cond.text!r}: {name} is never negative, so abs() changes nothing; write "
                         f"{name}{op}{c:g}.")
    if cond.absolute:
        lo, hi = 0.0, max(abs(lo), abs(hi))
    never = (op == ">" and c >= hi) or (op == ">=" and c > hi) or (op == "<" and c <= lo) or (op == "<=" and c < lo)
    always = (op == ">" and c < lo) or (op == ">=" and c <= lo) or (op == "<" and c > hi) or (op == "<=" and c >= hi)
    span = f"[{lo:g}, {hi:g}]"
    if never:
        raise ValueError(f"{where}: {cond.text!r} can never hold: {'|' + name + '|' if cond.absolute else name} "
                         f"lies in {span} (as a proportion: 0.1 = 10%); give a threshold inside that range.")
    if always:
        raise ValueError(f"{where}: {cond.text!r} always holds ({name} lies in {span}), so it would fail "
                         "every model; give a threshold inside that range.")
    if how == "none":
        raise ValueError(f"{where}: {name} has no verdict; choose one of {list(DEFAULT_THRESHOLDS)}.")


def _parse_one(text, where):
    m = _COND.match(text)
    if not m:
        raise ValueError(f"{where}: cannot read the condition {text.strip()!r}; write measure>value, "
                         "measure<value, measure>=value or measure<=value, e.g. "
                         "'demographic_parity_difference>0.1', or abs(measure)>value for the size of a signed "
                         "measure, e.g. 'abs(statistical_parity_difference)>0.1'.")
    absolute = m.group(1) is not None
    name = m.group(2) or m.group(3)
    op, raw = m.group(4), m.group(5)
    known = all_measures()
    if name not in known:
        raise ValueError(f"{where}: unknown measure {name!r}; known measures: {', '.join(known)}.")
    value = float(raw)
    norm = f"abs({name}){op}{raw}" if absolute else f"{name}{op}{raw}"
    cond = Condition(name, op, value, norm, absolute)
    _check_condition(cond, where)
    return cond


@validated({
    "fail_on": [str, list, tuple, None],
})
def parse_fail_on(fail_on):
    """Parse a gate: conditions ``measure>value`` separated by commas, in one string or a list.

    Parameters
    ----------
    fail_on : str, list of str or None
        Conditions ``measure<op>value`` (``op``: ``>``, ``<``, ``>=``, ``<=``) or ``abs(measure)<op>value``
        (the size of a signed measure), separated by commas in one string or across the strings of
        a list (repeated ``--fail-on`` flags are such a list: they combine).  ``measure`` is one of
        :data:`MEASURES`; values are proportions (0.1 = 10 percentage points).  ``None``: no gate.

    Returns
    -------
    list of Condition
        One per condition, in order (``measure``, ``op``, ``value``, ``text`` normalised without spaces,
        ``absolute``).

    Raises
    ------
    TypeError
        For a ``fail_on`` (or an item of the list) that is not a string.
    ValueError
        For an empty or unreadable condition, an unknown measure, a non-finite value (``1e999``,
        ``inf``, ``nan``), ``abs()`` of a measure that is never negative, a condition that can never
        hold or always holds over the measure's range, or two conditions on the same measure.

    Examples
    --------
    >>> from fairlens.audit import parse_fail_on
    >>> [c.text for c in parse_fail_on("demographic_parity_difference > 0.1, abs(statistical_parity_difference)>.05")]
    ['demographic_parity_difference>0.1', 'abs(statistical_parity_difference)>.05']
    >>> parse_fail_on(["disparate_impact<0.8"])[0]
    Condition(measure='disparate_impact', op='<', value=0.8, text='disparate_impact<0.8', absolute=False)
    >>> parse_fail_on("demographic_parity_difference>1")
    Traceback (most recent call last):
    ...
    ValueError: fail_on: 'demographic_parity_difference>1' can never hold: ...
    """
    if fail_on is None:
        return []
    where = "fail_on"
    if isinstance(fail_on, str):
        parts = fail_on.split(",")
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
        out.append(_parse_one(p, where))
    seen = {}
    for c in out:
        if c.measure in seen:
            raise ValueError(f"fail_on names {c.measure} twice ({seen[c.measure]!r} and {c.text!r}); keep one "
                             "condition per measure.")
        seen[c.measure] = c.text
    return out


def parse_threshold(measure, value):
    """A ``thresholds={measure: value}`` entry as a :class:`Condition`.

    ``value`` is a number (the default operator of the measure is kept) or a condition string for
    that measure (``"<0.9"``, ``"abs>0.05"`` or a full ``"abs(measure)>0.05"``).

    Parameters
    ----------
    measure : str
        A measure with a default threshold (:data:`DEFAULT_THRESHOLDS`).
    value : float or str
        The threshold, or the condition.

    Returns
    -------
    Condition

    Raises
    ------
    TypeError, ValueError
        For an unknown measure, a non-finite or non-numeric value, or a condition that can never
        hold (the message names the measure and the fix).
    """
    where = f"thresholds[{measure!r}]"
    if measure not in DEFAULT_THRESHOLDS:
        raise ValueError(f"thresholds: unknown measure {measure!r}; measures with a threshold: "
                         f"{', '.join(DEFAULT_THRESHOLDS)}.")
    base = DEFAULT_THRESHOLDS[measure]
    if isinstance(value, str):
        text = value.strip()
        if text.lower().startswith("abs") and not text.lower().startswith("abs("):
            text = f"abs({measure}){text[3:].strip()}"
        elif not text.startswith(("abs(", measure)):
            text = measure + text
        cond = _parse_one(text, where)
        if cond.measure != measure:
            raise ValueError(f"{where}: the condition {value!r} is about {cond.measure}; give one about {measure}.")
        return cond
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{where} must be a number or a condition string such as '<0.9'; got {value!r}.")
    v = float(value)
    raw = f"{v:g}"
    text = f"abs({measure}){base.op}{raw}" if base.absolute else f"{measure}{base.op}{raw}"
    cond = Condition(measure, base.op, v, text, base.absolute)
    _check_condition(cond, where)
    return cond


class VerdictRule(NamedTuple):
    """How a family was decided: burden, level, number of findings and the sentence saying so."""

    burden: str
    confidence: float
    m: int
    sentence: str


def rule_sentence(burden, confidence, m, what="findings"):
    """The sentence stating a family's rule and error rate."""
    a = 1.0 - confidence
    if burden == "estimate":
        return (f"Point estimates compared with the thresholds ({m} {what}), as asked for by name: no error "
                "rate is controlled; an estimate near its threshold can land on either side by chance.")
    return (f"{m} {what} judged together: a finding fails when the data show its condition holds and passes "
            f"when they show it does not (Holm's step-down procedure at {100 * a / 2:g}% for each kind of claim), "
            f"otherwise it is inconclusive; every fail and pass among them is wrong with probability at most "
            f"{100 * a:g}% in total.")


def decide(entries, *, burden, confidence):
    """Verdicts of one family.

    Parameters
    ----------
    entries : list of dict
        One per finding: ``value`` (float or None), ``cond`` (:class:`Condition`), ``how``
        (``"test"`` or ``"exact"``) and ``test`` (a callable ``test(cond) -> (p_hold, p_not)`` for
        ``"test"``).
    burden : {"violation", "compliance", "estimate"}
        ``"estimate"`` compares the point values; the other two decide with Holm (their difference is
        in the gate, :func:`gate_outcome`).
    confidence : float
        ``1 - alpha``.

    Returns
    -------
    list of dict
        One per entry: ``verdict`` (``"pass"``, ``"fail"``, ``"inconclusive"`` or ``"not computed"``),
        ``p_hold``, ``p_not`` (Holm-adjusted, or None), ``rule`` (``"holm"``, ``"exact"``,
        ``"estimate"``).
    """
    alpha = 1.0 - float(confidence)
    out = [None] * len(entries)
    tested = []
    for i, e in enumerate(entries):
        v = e.get("value")
        missing = v is None or (isinstance(v, float) and not math.isfinite(v))
        testable = e["how"] == "test" and e.get("test") is not None and burden != "estimate"
        if missing and not testable:   # (a bracket without a point value, e.g. certified bounds, is testable)
            out[i] = {"verdict": "not computed", "p_hold": None, "p_not": None, "rule": None}
        elif burden == "estimate" or e["how"] != "test" or e.get("test") is None:
            out[i] = {"verdict": "fail" if e["cond"].holds(v) else "pass", "p_hold": None, "p_not": None,
                      "rule": "estimate" if burden == "estimate" and e["how"] == "test" else "exact"}
        else:
            tested.append(i)
    if tested:
        ph, pn = [], []
        for i in tested:
            a, b = entries[i]["test"](entries[i]["cond"])
            ph.append(a)
            pn.append(b)
        ph = np.asarray(ph, dtype=float)
        pn = np.asarray(pn, dtype=float)
        ah, an = _stats.holm(ph), _stats.holm(pn)
        for k, i in enumerate(tested):
            if np.isnan(ph[k]) and np.isnan(pn[k]):
                out[i] = {"verdict": "not computed", "p_hold": None, "p_not": None, "rule": None}
                continue
            v = "fail" if ah[k] <= alpha / 2 else ("pass" if an[k] <= alpha / 2 else "inconclusive")
            out[i] = {"verdict": v, "p_hold": float(ah[k]), "p_not": float(an[k]), "rule": "holm"}
    return out


def gate_outcome(verdicts, burden):
    """``(passed, counts)`` of a gate from the verdicts of the findings its conditions matched.

    Under "violation" (and "estimate") the gate fails when some finding fails; a finding that is
    inconclusive or not computed (e.g. an intersection whose groups are all too small to compare) is
    no evidence of a violation.  Under "compliance" the gate passes only when every finding passes:
    inconclusive and not computed findings are no evidence of compliance.  (A condition that matched
    no finding at all makes the gate "not checked"; :func:`fairlens.audit._audit._judge` decides that.)
    """
    counts = {k: sum(v == k for v in verdicts) for k in ("fail", "pass", "inconclusive", "not computed")}
    if burden == "compliance":
        passed = counts["pass"] == len(verdicts)
    else:
        passed = counts["fail"] == 0
    return passed, counts


def detectable(cond, se, F, m, confidence, power=0.8):
    """The smallest departure the gate detects with probability ``power`` at this sample size.

    Under the burden "violation", the true value beyond the threshold at which the Holm family
    (its first step: level ``alpha / (2 m)``, the comparison's share ``1 / F`` of it) rejects with
    probability ``power``, by the normal approximation at the observed rates; for a ratio ``se`` is
    the standard error of the log ratio.  Returns None when ``se`` is undefined.
    """
    if se is None or not math.isfinite(se) or se <= 0:
        return None
    alpha = 1.0 - confidence
    z = float(_stats.z_of(1.0 - alpha / (2.0 * max(1, m) * max(1, F)))) + float(_stats.z_of(power))
    unit = all_measures()[cond.measure][1]
    if unit == "ratio":
        return cond.value * (math.exp(z * se) if cond.upward else math.exp(-z * se))
    return cond.value + z * se if cond.upward else cond.value - z * se
