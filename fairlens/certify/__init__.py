"""Certifying tree ensembles against attackers that change ``b`` features.

Implements section 4 of the paper on certifying tree ensembles against
L0-bounded attacks (Feature Partitioned Forests; FLB, ELB, cascade): Feature Partitioned
Forests, brute force with witnesses, the ``S_f^+``/``S_f^-`` partial set cover
view, the FLB and ELB lower bounds, the cascade and the multi-class extension.

What is certified is the model's own ``predict``: for scikit-learn forests
the soft vote (mean of the trees' leaf probabilities, ``vote="soft"``, the
default), for a Feature Partitioned Forest the majority of hard votes, for
boosted trees (XGBoost, LightGBM, scikit-learn gradient boosting, CatBoost,
ONNX tree ensembles) the argmax of the summed raw scores; the paper's hard
majority vote of any forest is available as ``vote="hard"``. Every model is
read by its library's reader into one :class:`TreeEnsemble`
(:func:`read_model`; :func:`can_certify` says whether a model can be read).

Example
-------
>>> from sklearn.datasets import load_breast_cancer
>>> from fairlens.certify import FeaturePartitionedForest, certify
>>> X, y = load_breast_cancer(return_X_y=True)
>>> fpf = FeaturePartitionedForest(budget=1, rounds=10, random_state=0).fit(X[:455], y[:455])
>>> res = certify(fpf, X[455:], y[455:], budget=1)          # cascade FLB -> ELB -> brute force
>>> res.accuracy_flb <= res.accuracy_elb <= res.accuracy_exact
True

Importing this package compiles nothing; the numba kernels (``_bounds``,
``_search``, ``_votes``, ``_walk``) compile on first call. The widget :class:`CoverVisualizer` is imported lazily
so that the core does not import ipywidgets.
"""
from ._certify import (
    METHODS,
    STATUSES,
    CertificationResult,
    InstanceCovers,
    accuracy_under_attack,
    certify,
    instance_covers,
)
from ._ensemble import VOTES, TreeEnsemble, relevant_values
from ._fpf import FeaturePartitionedForest
from ._readers import can_certify, flatten_forest, read_model
from ._reference import reference_brute

__all__ = [
    "FeaturePartitionedForest",
    "certify",
    "can_certify",
    "read_model",
    "reference_brute",
    "accuracy_under_attack",
    "CertificationResult",
    "instance_covers",
    "InstanceCovers",
    "TreeEnsemble",
    "flatten_forest",
    "relevant_values",
    "METHODS",
    "STATUSES",
    "VOTES",
    "CoverVisualizer",
]


#: Public names of the two model representations merged into :class:`TreeEnsemble` (issue 34),
#: each with what replaces it; asking for one raises an AttributeError that says so.
_REMOVED = {
    "FlatForest": "TreeEnsemble (flatten_forest(model) and read_model(model) return one)",
    "BoostedModel": "TreeEnsemble (read_model(model) returns one)",
    "flatten_boosted": "read_model(model), which reads every supported library",
}


def __getattr__(name):
    if name == "CoverVisualizer":
        from ._widget import CoverVisualizer  # deferred: import time (ipywidgets loads on first use of the widget)

        return CoverVisualizer
    if name in _REMOVED:
        raise AttributeError(f"fairlens.certify.{name} was removed: every model is now read into one additive "
                             f"tree ensemble; use fairlens.certify.{_REMOVED[name]}.")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
