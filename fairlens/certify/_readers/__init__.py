"""One reader per supported library, registered here (the only place that decides how a model is read).

A reader turns a fitted model into the one representation the certification engine works on, a
:class:`~fairlens.certify._ensemble.TreeEnsemble`: its trees, thresholds and split rule, where a
missing value goes at every node, the base scores, the class encoding and a
:class:`~fairlens.certify._ensemble.Library` saying how the library's own ``predict`` is called.
Each reader is a :class:`Reader`: a name, ``claims(model)`` -- whether the model *is* one of the
library's own classes (``isinstance``; an optional library is looked up in ``sys.modules`` by
:func:`loaded_classes`, never imported to recognise a model) -- and ``read(model)``, which returns
the ensemble under the model's own decision rule. :func:`read_model` asks the readers in the order
of :data:`READERS` and applies ``vote``/``tie_class``; ``certify``, ``instance_covers``,
``accuracy_under_attack`` and the widget call it and never branch on the model type;
:func:`can_certify` says, for any object, whether certify can read it and why not.

Adding a library is one module in this package (its reader) and one line in :data:`READERS`.
"""
from __future__ import annotations

import copy
import hashlib
import sys
import threading
from collections import OrderedDict
from typing import Callable, NamedTuple

import numpy as np

from ..._base import Options, validated
from ..._validation import check_choice
from .._ensemble import VOTES, TreeEnsemble

__all__ = ["Reader", "READERS", "read_model", "flatten_forest", "can_certify", "loaded_classes"]


class Reader(NamedTuple):
    """A registered reader.

    Parameters
    ----------
    name : str
        The library or family, for messages (``"XGBoost"``).
    claims : callable
        ``claims(model) -> bool``: whether ``model`` is one of the library's own classes.
    read : callable
        ``read(model) -> TreeEnsemble`` under the model's own decision rule (raises
        ``TypeError``/``ValueError`` naming ``model`` and what is unsupported).
    fingerprint : callable or None
        ``fingerprint(model) -> bytes``: the model's *content*, everything ``read`` reads (its
        serialised trees and parameters, its classes, its missing value...), much cheaper than
        ``read``. When given, :func:`read_model` reads a model once per content and reuses the
        reading for the same content (a model refitted in place has another content, so it is read
        again): one certify call per instance does not pay the reading per call.
    """

    name: str
    claims: Callable
    read: Callable
    fingerprint: Callable | None = None


def loaded_classes(module, *names):
    """The classes ``names`` of ``module`` if that module is imported already, else ``()``.

    An object of an optional library's class exists only if the library was imported, so a reader
    recognises its models without importing the library.

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
    >>> from fairlens.certify._readers import loaded_classes
    >>> [c.__name__ for c in loaded_classes("collections", "OrderedDict")]
    ['OrderedDict']
    >>> loaded_classes("a_module_nobody_imported", "X")
    ()
    """
    mod = sys.modules.get(module)
    if mod is None:
        return ()
    return tuple(c for c in (getattr(mod, n, None) for n in names) if isinstance(c, type))


def _a(name):
    """``name`` with its indefinite article (``"an XGBRegressor"``)."""
    return ("an " if name[:1] in "AEIOU" or name.startswith(("LGBM", "XGB", "ONNX")) else "a ") + name


def not_a_classifier(model, classifier):
    """The refusal of a regressor (or ranker) of a supported library, naming ``model``, what was given
    and the classifier to fit instead (a reader raises it)."""
    name = type(model).__name__
    return TypeError(f"model must be a fitted tree ensemble classifier certify can read ({_supported()}); got "
                     f"{_a(name)}, which is not a classifier (its predict returns numbers, not classes): certify "
                     f"certifies a predicted class. Pass {_a(classifier)} fitted on the same features.")


#: An ensemble read already (or made by hand) is its own reading.
ENSEMBLE = Reader("TreeEnsemble", lambda model: isinstance(model, TreeEnsemble), lambda model: model)

from . import _catboost, _fpf, _lightgbm, _onnx, _sklearn, _sklearn_boosting, _xgboost  # noqa: E402

#: The readers, asked in this order (one line per library).
READERS = (
    ENSEMBLE,                   # a TreeEnsemble given directly
    _sklearn.READER,            # scikit-learn trees and forests (soft or hard vote)
    _fpf.READER,                # FeaturePartitionedForest (hard vote)
    _xgboost.READER,            # XGBoost
    _lightgbm.READER,           # LightGBM
    _sklearn_boosting.READER,   # scikit-learn GradientBoosting, HistGradientBoosting
    _catboost.READER,           # CatBoost (numeric features)
    _onnx.READER,               # ONNX TreeEnsembleClassifier (skl2onnx, onnxmltools)
)


def _supported():
    return ", ".join(r.name for r in READERS[1:])


def _refusal(model):
    """The refusal of a model no reader claims: names ``model``, says what was given and what is
    accepted, and how to certify a Pipeline ending in a supported model (or a fitted search)."""
    name = type(model).__name__
    head = f"model must be a fitted tree ensemble classifier certify can read ({_supported()}); got {_a(name)}"
    steps = getattr(model, "steps", None)
    if isinstance(steps, list) and steps and hasattr(model, "named_steps"):
        last = steps[-1][1]
        names = [str(s[0]) for s in steps]
        if any(r.claims(last) for r in READERS):
            return TypeError(
                f"{head} with the steps {names}. Its final step is {_a(type(last).__name__)}, which certify reads, "
                "but the certificate is about the rows the trees see: certify the final step on the rows the "
                "steps before it produce, certify(pipe[-1], pipe[:-1].transform(X), y) (likewise instance_covers "
                "and accuracy_under_attack); its witnesses are then rows of that transformed space, not rows of X.")
        return TypeError(f"{head} with the steps {names}, whose final step is {_a(type(last).__name__)}, not a tree "
                         "ensemble certify reads.")
    best = getattr(model, "best_estimator_", None)
    if best is not None and any(r.claims(best) for r in READERS):
        return TypeError(f"{head}, a fitted search whose predict is its best_estimator_'s: certify "
                         f"model.best_estimator_ ({_a(type(best).__name__)}).")
    if hasattr(model, "predict") and not hasattr(model, "predict_proba") and not hasattr(model, "classes_"):
        return TypeError(f"{head}, a regressor: certify certifies a predicted class; fit a classifier (e.g. a "
                         "RandomForestClassifier) on the same features.")
    if hasattr(model, "calibrated_classifiers_") or hasattr(model, "estimators_") or hasattr(model, "estimator"):
        return TypeError(f"{head}, a wrapper whose predict is not the vote or summed scores of one tree ensemble "
                         "certify reads (a certificate of the model inside would not be about it). Certify the "
                         "tree ensemble itself.")
    return TypeError(f"{head}.")


@validated({
    "model": "no_validation", "tie_class": "no_validation", "vote": [Options(*VOTES), None],
})
def read_model(model, *, vote=None, tie_class=None):
    """The :class:`~fairlens.certify.TreeEnsemble` of ``model``, read by the first reader of :data:`READERS`
    claiming it.

    Parameters
    ----------
    model : fitted tree ensemble
        Any model :func:`~fairlens.certify.certify` supports, or a TreeEnsemble.
    vote : {"soft", "hard"} or None
        Voting forests only: the vote to certify (None: what the model's ``predict`` does).
    tie_class : label or None
        Voting forests only: the class winning ties of the hard vote (None: the model's own rule --
        the first class in ``classes_``, or a FeaturePartitionedForest's training majority class).

    Returns
    -------
    TreeEnsemble

    Raises
    ------
    TypeError
        For a model no reader claims (naming ``model`` and what is supported).
    ValueError
        For ``vote``/``tie_class`` given to a boosted model, or an unsupported model content.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from fairlens.certify import read_model
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
    >>> ens = read_model(rf)
    >>> ens.n_trees, ens.vote, ens.source
    (10, 'soft', 'RandomForestClassifier')
    >>> read_model(rf, vote="hard").vote
    'hard'
    """
    return read_with_coder(model, vote=vote, tie_class=tie_class)[0]


def read_with_coder(model, *, vote=None, tie_class=None):
    """:func:`read_model`, and ``code(offer=None)``: :meth:`TreeEnsemble.nan_coded` of that reading.

    For a reader with a ``fingerprint`` (a model read once per content, see :class:`Reader`), the
    coding is computed once per content, vote, tie class and offer, and ``code`` hands out a private
    copy bound to ``model``: the default threat model (``missing="auto"``) pays the NaN coding once
    per model, not in every call. Only the reading made here is coded (``code`` is for the caller
    that just read it, before anything could change it in place); otherwise ``code`` is
    ``ens.nan_coded``.
    """
    for reader in READERS:
        if reader.claims(model):
            try:
                ens, key = _read_once(reader, model)
            except Exception as exc:
                if type(exc).__name__ == "NotFittedError" and not str(exc).startswith("model"):
                    # scikit-learn's own message, with the argument it is about
                    raise type(exc)(f"model: {exc}") from None
                raise
            ens = ens.with_vote(vote, tie_class=tie_class)
            if key is None:
                return ens, ens.nan_coded
            return ens, _cached_coder(ens, (key, ens.vote, repr(ens.tie_class)), model)
    raise _refusal(model)



#: readings kept by content (most recent last), at most ``_READ_CACHE_SIZE``
_READ_CACHE: OrderedDict = OrderedDict()
_READ_CACHE_SIZE = 8
_READ_CACHE_LOCK = threading.Lock()


#: NaN codings of fingerprinted readings (:func:`read_with_coder`), most recent last
_CODED_CACHE: OrderedDict = OrderedDict()


def _cached(cache, key, make, model):
    """A private copy (nothing a caller changes reaches the cache) of ``make()``, bound to ``model``:
    ``make()`` runs once per ``key``; ``cache`` keeps the last ``_READ_CACHE_SIZE``."""
    with _READ_CACHE_LOCK:
        hit = cache.get(key)
        if hit is not None:
            cache.move_to_end(key)
    if hit is None:
        hit = make()
        with _READ_CACHE_LOCK:
            cache[key] = hit
            while len(cache) > _READ_CACHE_SIZE:
                cache.popitem(last=False)
    return copy.deepcopy(hit, memo={id(hit.model): model})


def _cached_coder(ens, key, model):
    """``ens.nan_coded`` computed once per ``key`` and ``offer``, handed out as private copies."""

    def code(offer=None):
        k = key + (None if offer is None else np.asarray(offer, bool).tobytes(),)
        return _cached(_CODED_CACHE, k, lambda: ens.nan_coded(offer), model)

    return code


def _read_once(reader, model):
    """``(reading, key)``: ``reader.read(model)``, or a copy of the reading of a model with the same
    content (see :class:`Reader`'s ``fingerprint``) bound to this ``model`` object (its ``predict``
    is the one the witnesses are checked against); ``key`` names the content (None without a
    fingerprint)."""
    if reader.fingerprint is None:
        return reader.read(model), None
    key = (reader.name, type(model).__module__, type(model).__qualname__,
           hashlib.blake2b(reader.fingerprint(model), digest_size=32).digest())
    return _cached(_READ_CACHE, key, lambda: reader.read(model), model), key


@validated({
    "model": "no_validation", "tie_class": "no_validation", "feature_names": "no_validation",
    "vote": [Options(*VOTES), None],
})
def flatten_forest(model, tie_class=None, feature_names=None, vote=None):
    """The :class:`~fairlens.certify.TreeEnsemble` of a *voting* forest: :func:`read_model` restricted to
    scikit-learn trees and forests and the FeaturePartitionedForest (kept for notebooks that flatten a
    forest to look at its trees).

    Parameters
    ----------
    model : fitted classifier
        A DecisionTreeClassifier, RandomForestClassifier, ExtraTreesClassifier,
        FeaturePartitionedForest or a voting TreeEnsemble.
    tie_class : label, optional
        As in :func:`read_model`.
    feature_names : list of str, optional
        Names for display (default: the model's ``feature_names_in_``).
    vote : {"soft", "hard"}, optional
        As in :func:`read_model`.

    Returns
    -------
    TreeEnsemble

    Raises
    ------
    TypeError
        For a model that is not a voting forest (boosted models are read by :func:`read_model`).
    ValueError
        For an invalid ``vote`` or ``tie_class``, or ``feature_names`` of the wrong length.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from fairlens.certify import flatten_forest
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
    >>> ff = flatten_forest(rf, vote="hard")
    >>> majority = (ff.predict_trees(X).mean(axis=1) > 0.5).astype(int)    # ties to the first class
    >>> ff.n_trees, ff.vote, bool((ff.predict(X) == ff.classes_[majority]).all())
    (10, 'hard', True)
    """
    if vote is not None:
        from .._ensemble import VOTES  # deferred: circle: certify._ensemble imports this module

        check_choice("vote", vote, VOTES)
    ens = read_model(model, vote=vote, tie_class=tie_class)
    if ens.vote == "additive":
        raise TypeError(f"model must be a fitted DecisionTreeClassifier, RandomForestClassifier, ExtraTreesClassifier "
                        f"or FeaturePartitionedForest for flatten_forest; got a {type(model).__name__}, whose "
                        "prediction sums raw scores: read_model(model) reads it.")
    if feature_names is not None:
        names = [str(c) for c in feature_names]
        if len(names) != ens.n_features:
            raise ValueError(f"feature_names has {len(names)} names but the model has {ens.n_features} features.")
        from dataclasses import replace

        ens = replace(ens, feature_names=names)
    return ens

@validated({
    "model": "no_validation",
})
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
    (True, 'scikit-learn trees and forests')
    >>> ok, why = can_certify(LogisticRegression())
    >>> ok, why.startswith("model must be a fitted tree ensemble")
    (False, True)
    """
    for reader in READERS:
        if reader.claims(model):
            try:
                reader.read(model)
            except (TypeError, ValueError) as exc:
                return False, str(exc)
            return True, reader.name
    return False, str(_refusal(model))
