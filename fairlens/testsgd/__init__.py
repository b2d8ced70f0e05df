"""TestSGD: interpretable testing of neural networks against subtle group discrimination.

Zhang, Sun, Wang, Sun (2022). Rule sets over the sensitive features
(section 4.1, Algorithm 1) partition the input space; the group fairness score
of each frequent rule set is estimated with an error bound (Algorithm 2,
Theorem 4.2) by sampling around seeds of the data (section 4.3). The top of the ranking is
re-estimated on fresh samples (honest rankings). :class:`FairFictPlay` is the subgroup auditor of
Kearns et al. (2018), the baseline of the paper's Table 8.

The widget :class:`RuleSetBrowser` is imported lazily (ipywidgets is only
imported when it is first accessed).
"""
from __future__ import annotations

from ._fairfictplay import FairFictPlay, SubgroupAudit, audit_subgroups
from ._mitigate import MitigationResult, generate_group_samples, mitigate
from ._rules import (
    FrequentRuleSets,
    Rule,
    RuleSet,
    frequent_rule_sets,
    frequent_rule_sets_bruteforce,
    round_edges,
    single_rules,
)
from ._score import (
    RuleSetScores,
    Sampler,
    ScoreResult,
    group_fairness_score,
    group_fairness_score_reference,
    score_rule_sets,
    z_value,
)
from ._testsgd import TestSGD, TestSGDReport, simultaneous_confidence
from ._text import (
    IDENTITY_TERMS,
    TermRule,
    TextRuleSet,
    TextSampler,
    test_text_model,
    text_frequent_rule_sets,
    text_group_fairness_score,
    text_group_fairness_score_reference,
)
from ._themis import ThemisResult, themis_group_discrimination

__all__ = [
    "Rule",
    "RuleSet",
    "FrequentRuleSets",
    "single_rules",
    "frequent_rule_sets",
    "frequent_rule_sets_bruteforce",
    "round_edges",
    "Sampler",
    "ScoreResult",
    "z_value",
    "group_fairness_score",
    "group_fairness_score_reference",
    "score_rule_sets",
    "RuleSetScores",
    "TestSGD",
    "TestSGDReport",
    "simultaneous_confidence",
    "FairFictPlay",
    "SubgroupAudit",
    "audit_subgroups",
    "ThemisResult",
    "themis_group_discrimination",
    "MitigationResult",
    "generate_group_samples",
    "mitigate",
    "IDENTITY_TERMS",
    "TermRule",
    "TextRuleSet",
    "TextSampler",
    "text_frequent_rule_sets",
    "text_group_fairness_score",
    "text_group_fairness_score_reference",
    "test_text_model",
    "RuleSetBrowser",
]


def __getattr__(name):
    if name == "RuleSetBrowser":
        from ._widget import RuleSetBrowser  # deferred: import time (ipywidgets loads on first use of the widget)
        return RuleSetBrowser
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
