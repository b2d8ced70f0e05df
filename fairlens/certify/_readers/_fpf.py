"""Reader of :class:`~fairlens.certify.FeaturePartitionedForest` (the paper's robust forest).

Its trees are scikit-learn ``DecisionTreeClassifier`` fitted on a group of columns each
(``estimators_features_`` maps a tree's columns to the model's), read as scikit-learn trees
(:mod:`._sklearn`). Its ``predict`` is the majority of the trees' hard votes, ties to the training
majority class (``majority_class_index_``): the hard vote is its only decision rule (``vote="soft"``
is refused). Its ``predict`` refuses NaN.
"""
from __future__ import annotations

import numpy as np

from .._ensemble import Library
from .._fpf import FeaturePartitionedForest
from . import Reader
from ._sklearn import read_trees


def _claims(model):

    return isinstance(model, FeaturePartitionedForest)


class FPFLibrary(Library):
    """The FPF's hard vote is replayed exactly (``exact``); its ``predict`` refuses NaN."""

    exact = True

    def accepts_nan(self, model):
        return False

    def predict(self, model, X64):
        return model.predict(X64)


def _read(model):
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(model, "estimators_")
    return read_trees(model, list(model.estimators_), list(model.estimators_features_), np.asarray(model.classes_),
                      vote="hard", votes=("hard",), tie_class=int(model.majority_class_index_), library=FPFLibrary())


READER = Reader("FeaturePartitionedForest", _claims, _read)
