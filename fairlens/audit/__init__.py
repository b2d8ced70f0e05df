"""Audit your own model: :func:`fairlens.audit` runs every check that applies and returns one report.

``fairlens.audit`` is both this package and a function::

    import fairlens
    report = fairlens.audit(model, frame, target="income", protected=["sex", "race"], favourable=">50K")
    from fairlens.audit import AuditReport

The checks (:data:`CHECKS`: the audit's own group check, then one adapter per registered slice,
:mod:`fairlens._registry`): group fairness with
score intervals (:func:`fairlens.metrics.group_metrics`), individual discrimination (MAFT),
subgroup discrimination (TestSGD), explanations and output shuffling (SHAP, batch consistency) and
robustness of tree ensembles (certification).  The report document and its HTML rendering are
described in :mod:`fairlens.report._schema` and :mod:`fairlens.report._render` (the report shared with
``fairlens tour``).
"""
from __future__ import annotations

import sys
import types

from ._audit import AUDIT_DEFAULTS, FINDING_COLUMNS, KNOWN_MEASURES, AuditReport, audit
from ._checks import CHECKS
from ._core import CheckOutcome
from ._gate import BURDENS, DEFAULT_THRESHOLDS, Condition, parse_fail_on

__all__ = ["audit", "AuditReport", "CheckOutcome", "CHECKS", "DEFAULT_THRESHOLDS", "AUDIT_DEFAULTS",
           "KNOWN_MEASURES", "FINDING_COLUMNS", "BURDENS", "Condition", "parse_fail_on"]


class _CallableModule(types.ModuleType):
    """``fairlens.audit`` is a package you can call: ``fairlens.audit(...)`` is :func:`audit`."""

    def __call__(self, *args, **kwargs):
        return audit(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
