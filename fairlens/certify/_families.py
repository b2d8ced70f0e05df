"""Which boosted library a model comes from, told by its type alone (a bottom layer: imports
nothing from :mod:`fairlens.certify`, never imports xgboost or lightgbm).

Used by the boosted reader (:mod:`._boosted`, as ``_family``) and by the missing-value routing
(:mod:`._missing`), which must not import each other.
"""
from __future__ import annotations

__all__ = ["boosted_family"]


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
    >>> from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    >>> boosted_family(GradientBoostingClassifier()), boosted_family(RandomForestClassifier())
    ('sklearn_gb', None)
    """
    mod = type(model).__module__.split(".")[0]
    names = {c.__name__ for c in type(model).__mro__}
    if mod == "xgboost":
        if "Booster" in names:
            return "xgboost_booster"
        if "XGBClassifier" in names or "XGBRFClassifier" in names:
            return "xgboost"
        if "XGBModel" in names:
            return "xgboost_other"
    if mod == "lightgbm":
        if "Booster" in names:
            return "lightgbm_booster"
        if "LGBMClassifier" in names:
            return "lightgbm"
        if "LGBMModel" in names:
            return "lightgbm_other"
    if mod == "sklearn":
        if "GradientBoostingClassifier" in names:
            return "sklearn_gb"
        if "HistGradientBoostingClassifier" in names:
            return "sklearn_hgb"
        if "GradientBoostingRegressor" in names or "HistGradientBoostingRegressor" in names:
            return "sklearn_other"
    return None
