"""The checks of :func:`fairlens.audit`: the audit's own group check, then the check each slice registers.

The list is read from the slice registry (:mod:`fairlens._registry`) every time it is asked for, so a slice
registered at run time is audited like the built-in ones.  Each check is ``(function, share)``: the adapter
``check(ctx, seconds) -> CheckOutcome`` (see :mod:`fairlens.audit._core`) and its share of the time budget.
"""
from __future__ import annotations

from collections.abc import Mapping

from .._registry import AuditCheck, audit_checks, resolve

__all__ = ["GROUP_CHECK", "CHECKS", "check_specs"]

#: The audit's own check: group measures with intervals (no slice behind it).
GROUP_CHECK = AuditCheck(
    "group_fairness", "Group fairness", "fairlens.audit._group:check", share=0.10,
    measures=("demographic_parity_difference", "demographic_parity_ratio", "equal_opportunity_difference",
              "equalized_odds_difference", "statistical_parity_difference", "disparate_impact",
              "average_odds_difference", "true_positive_rate_difference"), order=0)


def check_specs():
    """Every check the audit runs, in order: ``{id: AuditCheck}`` (the group check, then the slices')."""
    out = {GROUP_CHECK.id: GROUP_CHECK}
    for _, spec in audit_checks():
        out[spec.id] = spec
    return out


class _Checks(Mapping):
    """``{check id: (adapter function, share of the time budget)}``, read from the registry on each access."""

    def __getitem__(self, key):
        spec = check_specs()[key]
        return resolve(spec.function), spec.share

    def __iter__(self):
        return iter(check_specs())

    def __len__(self):
        return len(check_specs())

    def __repr__(self):
        return "CHECKS(" + ", ".join(f"{k}: {v.share:g}" for k, v in check_specs().items()) + ")"


#: The checks, in the order they run, with their share of the time budget: ``{id: (function, share)}``.
CHECKS = _Checks()
