"""Shuffling attacks on Shapley-value explanations (Yuan & Dasgupta).

Core (headless): :class:`ShuffledModel` (Algorithm 1 wrapper with the
Dominance, Mixing and Swapping attacks, relaxations, hybrids and conjunction
groups), :func:`shuffle_scores`, :func:`attributions` (LIME / SHAP /
KernelSHAP / linear SHAP detection), :func:`fairness_before_after` and the
auditor-side :func:`batch_consistency` detector.

The widget :class:`ShuffleAttackExplorer` is imported lazily so that
importing the core does not import ipywidgets.
"""
from __future__ import annotations

from ._consistency import BatchConsistencyResult, batch_consistency
from ._detect import (
    attributions,
    exact_shapley_values,
    explain,
    fairness_before_after,
    linear_shap_values,
)
from ._shuffled import ATTACKS, ShuffleBatch, ShuffledModel, parse_attack, shuffle_scores

__all__ = [
    "ATTACKS",
    "ShuffleBatch",
    "ShuffledModel",
    "parse_attack",
    "shuffle_scores",
    "attributions",
    "explain",
    "exact_shapley_values",
    "linear_shap_values",
    "fairness_before_after",
    "BatchConsistencyResult",
    "batch_consistency",
    "ShuffleAttackExplorer",
]


def __getattr__(name):
    if name == "ShuffleAttackExplorer":
        # deferred: import time (ipywidgets loads on first use of the widget)
        from ._widget import ShuffleAttackExplorer

        return ShuffleAttackExplorer
    raise AttributeError(f"module 'fairlens.shuffle' has no attribute {name!r}")
