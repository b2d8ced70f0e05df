"""Reader of scikit-learn trees and forests (soft or hard vote) and FeaturePartitionedForest."""
from __future__ import annotations

from . import Reader


def _claims(model):
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier

    from .._flatten import FlatForest
    from .._fpf import FeaturePartitionedForest

    return isinstance(model, (RandomForestClassifier, ExtraTreesClassifier, DecisionTreeClassifier,
                              FeaturePartitionedForest, FlatForest))


def _read(model, *, vote=None, tie_class=None):
    from .._flatten import flatten_forest

    return flatten_forest(model, tie_class=tie_class, vote=vote)


READER = Reader("scikit-learn trees and forests, FeaturePartitionedForest", _claims, _read)
