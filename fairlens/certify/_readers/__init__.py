"""One reader per supported library, registered here (the only place that decides how a model is read).

A reader turns a fitted model into the flat arrays the certification engine works on. Each is a
:class:`Reader`: a name, ``claims(model)`` -- whether the model *is* one of the library's own
classes (``isinstance``; an optional library is looked up in ``sys.modules``, never imported to
recognise a model) -- and ``read(model, vote=..., tie_class=...)``. :func:`read_model` asks the
readers in the order of :data:`READERS`; ``certify``, ``instance_covers``, ``accuracy_under_attack``
and the widget call it and never branch on the model type; :func:`can_certify` says, for any
object, whether certify can read it and why not.

Adding a library is one module in this package (its reader) and one line in :data:`READERS`.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

__all__ = ["Reader", "READERS", "read_model", "can_certify"]


class Reader(NamedTuple):
    """A registered reader.

    Parameters
    ----------
    name : str
        The library or family, for messages (``"XGBoost"``).
    claims : callable
        ``claims(model) -> bool``: whether ``model`` is one of the library's own classes.
    read : callable
        ``read(model, *, vote, tie_class)``: the flat model (raises ``TypeError``/``ValueError``
        naming ``model`` and what is unsupported).
    """

    name: str
    claims: Callable
    read: Callable


from . import _boosted_libs, _catboost, _forests, _onnx  # noqa: E402  (the readers import Reader from here)

#: The readers, asked in this order (one line per library).
READERS = (
    _forests.READER,        # scikit-learn trees and forests (soft/hard vote), FeaturePartitionedForest
    _boosted_libs.READER,   # XGBoost, LightGBM, scikit-learn (Hist)GradientBoosting
    _catboost.READER,       # CatBoost (numeric features)
    _onnx.READER,           # ONNX TreeEnsembleClassifier (skl2onnx, onnxmltools)
)


def _refusal(model):
    name = type(model).__name__
    steps = getattr(model, "steps", None)
    if isinstance(steps, list) and steps and hasattr(model, "named_steps"):
        last = steps[-1][1]
        hint = ""
        if any(r.claims(last) for r in READERS):
            hint = (f" Its final step is a {type(last).__name__}, which certify reads: certify it on the rows "
                    "the steps before it produce, certify(pipe[-1], pipe[:-1].transform(X), y); a witness is then "
                    "a transformed row.")
        return TypeError(f"model must be a fitted tree ensemble; got a Pipeline.{hint}")
    kind = "a regressor" if hasattr(model, "predict") and not hasattr(model, "predict_proba") else f"a {name}"
    return TypeError(
        f"model must be a fitted tree ensemble classifier certify can read ({', '.join(r.name for r in READERS)}); "
        f"got {kind}. Regressors are not certified (certify decides a class).")


def read_model(model, *, vote=None, tie_class=None):
    """The flat representation of ``model``, read by the first reader of :data:`READERS` claiming it.

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
        For a model no reader claims (naming ``model`` and what is supported).
    ValueError
        For ``vote``/``tie_class`` given to a boosted model, or an unsupported model content.
    """
    for reader in READERS:
        if reader.claims(model):
            return reader.read(model, vote=vote, tie_class=tie_class)
    raise _refusal(model)


def can_certify(model):
    """Whether :func:`~fairlens.certify.certify` can read ``model``, and why not.

    The model is read (as ``certify`` reads it), so the answer is exact: unsupported content
    (categorical splits, an objective certify does not model, a regressor) gives ``False`` with
    the reader's own message.

    Parameters
    ----------
    model : object
        Anything.

    Returns
    -------
    ok : bool
    reason : str
        The reader's name when ``ok``, else why the model cannot be certified.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from fairlens.certify import can_certify
    >>> can_certify(RandomForestClassifier(n_estimators=2).fit([[0.0], [1.0]], [0, 1]))
    (True, 'scikit-learn trees and forests, FeaturePartitionedForest')
    >>> ok, why = can_certify(LogisticRegression())
    >>> ok, why.startswith("model must be a fitted tree ensemble")
    (False, True)
    """
    for reader in READERS:
        if reader.claims(model):
            try:
                reader.read(model, vote=None, tie_class=None)
            except (TypeError, ValueError) as exc:
                return False, str(exc)
            return True, reader.name
    return False, str(_refusal(model))
