"""One reader per supported model type, in a registry keyed on the model's type.

A reader turns a fitted model into the flat arrays the certification engine works on: a
:class:`~fairlens.certify.FlatForest` (scikit-learn forests and trees with the soft or hard
vote, FeaturePartitionedForest) or a :class:`~fairlens.certify.BoostedModel` (XGBoost,
LightGBM, scikit-learn GradientBoosting and HistGradientBoosting). The registry is keyed on
``(top-level package, class name)`` and looked up along the model's MRO, so that optional
libraries (xgboost, lightgbm) are never imported to recognise their models; a subclass of a
supported model is read by its parent's reader.

:func:`read_model` is the only place that decides how a model is read: ``certify``,
``instance_covers`` and ``accuracy_under_attack`` call it and never branch on the model type.
"""
from __future__ import annotations

__all__ = ["register_reader", "read_model", "READERS"]

#: ``{(top-level package, class name): reader(model, vote, tie_class) -> flat model}``
READERS = {}


def register_reader(*keys):
    """Register the decorated ``reader(model, *, vote, tie_class)`` for the model types ``keys``.

    Parameters
    ----------
    *keys : tuple of (str, str)
        ``(top-level package, class name)`` of each type the reader handles, e.g.
        ``("xgboost", "XGBClassifier")``.

    Returns
    -------
    callable
        The decorator (returns the reader unchanged).
    """
    def deco(reader):
        for key in keys:
            READERS[key] = reader
        return reader

    return deco


def _key(cls):
    return (cls.__module__.split(".")[0], cls.__name__)


def _no_vote(model, vote, tie_class):
    if vote is not None or tie_class is not None:
        raise ValueError("vote and tie_class do not apply to a boosted model: its predict is the argmax of "
                         "the summed raw scores; leave them unset.")


@register_reader(("sklearn", "RandomForestClassifier"), ("sklearn", "ExtraTreesClassifier"),
                 ("sklearn", "DecisionTreeClassifier"), ("fairlens", "FeaturePartitionedForest"),
                 ("fairlens", "FlatForest"))
def _read_forest(model, *, vote=None, tie_class=None):
    """A voting forest (soft or hard vote): :func:`~fairlens.certify.flatten_forest`."""
    from ._flatten import flatten_forest

    return flatten_forest(model, tie_class=tie_class, vote=vote)


@register_reader(("xgboost", "XGBClassifier"), ("xgboost", "XGBRFClassifier"), ("xgboost", "Booster"),
                 ("xgboost", "XGBModel"), ("lightgbm", "LGBMClassifier"), ("lightgbm", "Booster"),
                 ("lightgbm", "LGBMModel"), ("sklearn", "GradientBoostingClassifier"),
                 ("sklearn", "HistGradientBoostingClassifier"), ("sklearn", "GradientBoostingRegressor"),
                 ("sklearn", "HistGradientBoostingRegressor"), ("fairlens", "BoostedModel"))
def _read_boosted(model, *, vote=None, tie_class=None):
    """A boosted model (summed raw scores): :func:`~fairlens.certify.flatten_boosted` (regressors
    and unsupported objectives are refused there, by name)."""
    from ._boosted import flatten_boosted

    _no_vote(model, vote, tie_class)
    return flatten_boosted(model)


def read_model(model, *, vote=None, tie_class=None):
    """The flat representation of ``model``, read by the reader registered for its type.

    Parameters
    ----------
    model : fitted tree ensemble
        Any model :func:`~fairlens.certify.certify` supports, or an already flat model.
    vote : {"soft", "hard"} or None
        Forests only: the vote to certify (None: what the model's ``predict`` does).
    tie_class : label or None
        Forests only: the class winning ties of the hard vote.

    Returns
    -------
    FlatForest or BoostedModel

    Raises
    ------
    TypeError
        For a model type no reader handles (the forest reader's message lists what is supported).
    ValueError
        For ``vote``/``tie_class`` given to a boosted model, or an unsupported model content.
    """
    for cls in type(model).__mro__:
        reader = READERS.get(_key(cls))
        if reader is not None:
            return reader(model, vote=vote, tie_class=tie_class)
    return _read_forest(model, vote=vote, tie_class=tie_class)  # refuses with the list of supported models
