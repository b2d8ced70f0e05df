"""Which boosted library a model comes from, decided by what its type is (``isinstance`` against the
library's own classes), never by a class name (a bottom layer: imports nothing from
:mod:`fairlens.certify`).

An optional library (xgboost, lightgbm) is never imported to recognise a model: an object of one of
its classes exists only if the library was imported already, so its classes are looked up in
``sys.modules``. Used by the boosted reader (:mod:`._boosted`) and the missing-value routing
(:mod:`._missing`), which must not import each other.
"""
from __future__ import annotations

import sys

__all__ = ["boosted_family", "loaded_classes"]


def loaded_classes(module, *names):
    """The classes ``names`` of ``module`` if that module is imported already, else ``()``.

    Parameters
    ----------
    module : str
        A module name (``"xgboost"``).
    *names : str
        Attribute names of classes in it.

    Returns
    -------
    tuple of type

    Examples
    --------
    >>> from fairlens.certify._families import loaded_classes
    >>> [c.__name__ for c in loaded_classes("collections", "OrderedDict")]
    ['OrderedDict']
    >>> loaded_classes("a_module_nobody_imported", "X")
    ()
    """
    mod = sys.modules.get(module)
    if mod is None:
        return ()
    return tuple(c for c in (getattr(mod, n, None) for n in names) if isinstance(c, type))


def boosted_family(model):
    """The boosted family of ``model``: ``"xgboost"``, ``"xgboost_booster"``, ``"lightgbm"``,
    ``"lightgbm_booster"``, ``"sklearn_gb"``, ``"sklearn_hgb"``, a refused relative
    (``"xgboost_other"``, ``"lightgbm_other"``, ``"sklearn_other"``: regressors and other
    objectives) or None.

    Parameters
    ----------
    model : object

    Returns
    -------
    str or None

    Examples
    --------
    >>> from fairlens.certify._families import boosted_family
    >>> from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    >>> boosted_family(GradientBoostingClassifier()), boosted_family(RandomForestClassifier())
    ('sklearn_gb', None)
    """
    from sklearn.ensemble import (
        GradientBoostingClassifier,
        GradientBoostingRegressor,
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
    )

    checks = (
        (loaded_classes("xgboost", "Booster"), "xgboost_booster"),
        (loaded_classes("xgboost", "XGBClassifier", "XGBRFClassifier"), "xgboost"),
        (loaded_classes("xgboost", "XGBModel"), "xgboost_other"),
        (loaded_classes("lightgbm", "Booster"), "lightgbm_booster"),
        (loaded_classes("lightgbm", "LGBMClassifier"), "lightgbm"),
        (loaded_classes("lightgbm", "LGBMModel"), "lightgbm_other"),
        ((GradientBoostingClassifier,), "sklearn_gb"),
        ((HistGradientBoostingClassifier,), "sklearn_hgb"),
        ((GradientBoostingRegressor, HistGradientBoostingRegressor), "sklearn_other"),
    )
    for classes, family in checks:
        if classes and isinstance(model, classes):
            return family
    return None
