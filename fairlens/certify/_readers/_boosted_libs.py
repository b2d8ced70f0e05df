"""Reader of XGBoost, LightGBM and scikit-learn (Hist)GradientBoosting models (summed raw scores)."""
from __future__ import annotations

from . import Reader


def _claims(model):
    from .._boosted import BoostedModel
    from .._families import boosted_family

    return isinstance(model, BoostedModel) or boosted_family(model) is not None


def _read(model, *, vote=None, tie_class=None):
    """Regressors and unsupported objectives are refused by :func:`~fairlens.certify.flatten_boosted`."""
    from .._boosted import flatten_boosted

    if vote is not None or tie_class is not None:
        raise ValueError("vote and tie_class do not apply to a boosted model: its predict is the argmax of "
                         "the summed raw scores; leave them unset.")
    return flatten_boosted(model)


READER = Reader("XGBoost, LightGBM, scikit-learn GradientBoosting/HistGradientBoosting", _claims, _read)
