"""Reader of XGBoost classifiers: ``xgboost.XGBClassifier``/``XGBRFClassifier`` and ``xgboost.Booster``
(objectives ``binary:logistic``, ``multi:softprob``, ``multi:softmax``; ``booster="gbtree"``).

* Trees: the JSON dump (``save_raw(raw_format="json")``), only the trees ``predict`` uses
  (``best_iteration`` of an early-stopped model). XGBoost compares ``float32(x) < split`` with
  float32 splits: written as ``x <= s^-`` (``s^-`` the float32 just below ``s``) on float32-rounded
  inputs.
* Raw score: the leaf values summed in float32 in tree order, bit for bit, on top of a base margin
  that is recovered exactly (:func:`_base`): the float32 with which the replay matches
  ``predict(output_margin=True)`` on probe rows.
* Missing values: ``default_left`` of every node, for NaN *and* for every value equal to the
  ``missing`` parameter of an ``XGBClassifier`` (``missing_value``, compared in float32; a Booster
  gets it from the DMatrix the caller builds: NaN assumed). ``predict`` accepts NaN.
* Refused: regressors and rankers (``TypeError``), other objectives, ``dart``/``gblinear``,
  multi-target models, categorical splits (``ValueError`` naming the feature).
"""
from __future__ import annotations

import json

import numpy as np

from .. import _walk
from .._ensemble import Library, assemble
from . import Reader, loaded_classes, not_a_classifier

_OBJECTIVES = ("binary:logistic", "multi:softprob", "multi:softmax")


def _claims(model):
    classes = loaded_classes("xgboost", "Booster", "XGBModel")
    return bool(classes) and isinstance(model, classes)


def _is_booster(model):
    return isinstance(model, loaded_classes("xgboost", "Booster"))


class XGBoostLibrary(Library):
    """XGBoost's own ``predict`` (labels) and ``output_margin`` raw scores, for the sklearn API and a Booster."""

    def __init__(self, booster, objective):
        self.booster, self.objective = bool(booster), objective

    def _dmatrix(self, model, X64):
        import xgboost as xgb

        return xgb.DMatrix(X64, feature_names=model.feature_names)

    def predict(self, model, X64):
        if not self.booster:
            from ._sklearn import with_names  # deferred: circle: certify._readers._sklearn imports this module

            return np.asarray(model.predict(with_names(model, X64)))
        p = np.asarray(model.predict(self._dmatrix(model, X64)))
        if p.ndim == 1:
            if self.objective == "multi:softmax":
                return p.astype(np.int64)
            return (p > 0.5).astype(np.int64)
        return np.argmax(p, axis=1).astype(np.int64)

    def raw_scores(self, model, X64):
        if self.booster:
            return model.predict(self._dmatrix(model, X64), output_margin=True)
        from ._sklearn import with_names  # deferred: circle: certify._readers._sklearn imports this module

        return model.predict(with_names(model, X64), output_margin=True)


def _has_best(model):
    try:
        return getattr(model, "best_iteration", None) is not None
    except AttributeError:
        return False


def _read(model):
    booster_only = _is_booster(model)
    if not booster_only and not isinstance(model, loaded_classes("xgboost", "XGBClassifier", "XGBRFClassifier")):
        raise not_a_classifier(model, "XGBClassifier")
    if not booster_only:
        try:
            model.get_booster()
        except Exception as exc:  # xgboost raises NotFittedError (a ValueError) or AttributeError
            raise ValueError(f"model (an XGBClassifier) is not fitted; call fit first ({exc}).") from None
    booster = model if booster_only else model.get_booster()
    js = json.loads(bytes(booster.save_raw(raw_format="json")))
    learner = js["learner"]
    objective = learner["objective"]["name"]
    if objective not in _OBJECTIVES:
        raise ValueError(f"XGBoost objective {objective!r} is not supported; certify a classifier trained with "
                         "'binary:logistic', 'multi:softprob' or 'multi:softmax'.")
    gb = learner["gradient_booster"]
    if gb["name"] != "gbtree":
        raise ValueError(f"XGBoost booster {gb['name']!r} is not supported; use booster='gbtree' "
                         "(dart drops trees at random, gblinear has no trees).")
    mp = learner["learner_model_param"]
    if int(mp.get("num_target", "1")) != 1:
        raise ValueError("multi-target XGBoost models are not supported; fit one model per target.")
    num_class = int(mp.get("num_class", "0"))
    n_features = int(mp["num_feature"])
    tmodel = gb["model"]
    trees_js = tmodel["trees"]
    info = [int(g) for g in tmodel["tree_info"]]
    n_use = len(trees_js)
    if not booster_only:
        best = getattr(model, "best_iteration", None) if _has_best(model) else None
        if best is not None:
            indptr = tmodel.get("iteration_indptr")
            if indptr is not None:
                n_use = int(indptr[int(best) + 1])
    names = booster.feature_names or [f"f{j}" for j in range(n_features)]
    trees = []
    for t in trees_js[:n_use]:
        L = np.asarray(t["left_children"], dtype=np.int64)
        R = np.asarray(t["right_children"], dtype=np.int64)
        F = np.asarray(t["split_indices"], dtype=np.int64)
        C = np.asarray(t["split_conditions"], dtype=np.float32)
        D = np.asarray(t["default_left"], dtype=bool)
        S = np.asarray(t.get("split_type", [0] * L.size), dtype=np.int64)
        leaf = L < 0
        if np.any(S[~leaf] != 0):
            f = int(F[~leaf][S[~leaf] != 0][0])
            raise ValueError(f"feature {names[f]!r} (index {f}) has categorical splits in this XGBoost model; "
                             "categorical splits are not supported -- one-hot encode it instead.")
        feat = np.where(leaf, -1, F)
        # x < s  (float32)  <=>  x <= the float32 just below s
        thr = np.where(leaf, 0.0, np.nextafter(C, np.float32(-np.inf)).astype(np.float64))
        val = np.where(leaf, C.astype(np.float64), 0.0)
        trees.append((feat, thr, np.where(leaf, -1, L), np.where(leaf, -1, R), val, D))
    if num_class <= 1:
        classes = np.array([0, 1]) if booster_only else np.asarray(model.classes_)
        groups = [1] * n_use
        K = 2
    else:
        classes = np.arange(num_class) if booster_only else np.asarray(model.classes_)
        groups = info[:n_use]
        K = num_class
    if len(classes) != K:
        raise ValueError(f"the XGBoost model has {K} outputs but {len(classes)} classes.")
    ens = assemble(trees, classes=classes, n_features=n_features, vote="additive", groups=groups, base=np.zeros(K),
                   f32=True, f32_input=True, eps=2.0**-24, source=type(model).__name__, model=model,
                   library=XGBoostLibrary(booster_only, objective),
                   feature_names_in=getattr(model, "feature_names_in_", None))
    ens.base = _base(ens, booster, info, K, objective)  # probed through a DMatrix whose missing value is NaN
    # XGBClassifier(missing=v): predict reads every v as missing (round_X reads it as NaN)
    mv = np.nan if booster_only else getattr(model, "missing", np.nan)
    ens.missing_value = float("nan") if mv is None else float(mv)
    return ens


def _base(ens, booster, info, K, objective):
    """Base margin per class: the float32 with which the float32 replay of all trees matches
    ``predict(output_margin=True)`` bit for bit on probe rows drawn from the relevant values
    (candidates: the configured ``base_score`` through the objective's link, and a scan of
    float32 neighbours of the value implied by the first round)."""
    import xgboost as xgb

    rng = np.random.default_rng(0)
    n_probe = 64
    X = np.zeros((n_probe, ens.n_features))
    for f in range(ens.n_features):
        v = ens.values[ens.values_ptr[f]:ens.values_ptr[f + 1]]
        X[:, f] = rng.choice(v, n_probe) if v.size else 0.0
    dm = xgb.DMatrix(X, feature_names=booster.feature_names)
    full = np.asarray(booster.predict(dm, output_margin=True), dtype=np.float32).reshape(n_probe, -1)
    m01 = np.asarray(booster.predict(dm, output_margin=True, iteration_range=(0, 1)),
                     dtype=np.float32).reshape(n_probe, -1)
    cfg = json.loads(booster.save_config())["learner"]
    try:
        bs = [float(v) for v in cfg["learner_model_param"]["base_score"].strip("[]").split(",")]
    except (KeyError, ValueError):  # pragma: no cover - other formats
        bs = []
    indptr = None
    try:
        indptr = json.loads(bytes(booster.save_raw(raw_format="json")))["learner"]["gradient_booster"]["model"].get(
            "iteration_indptr")
    except Exception:  # pragma: no cover - older formats
        indptr = None
    n0 = int(indptr[1]) if indptr is not None and len(indptr) > 1 else 1
    Xr = ens.round_X(X)
    leaves = _walk.leaf_values(ens.flat(), Xr).astype(np.float32)
    base = np.zeros(K)
    for gcol in range(full.shape[1]):
        g = 1 if K == 2 else gcol
        ts = np.flatnonzero(ens.group == g)
        cands = []
        if len(bs) == full.shape[1] or len(bs) == 1:
            p = bs[gcol] if len(bs) == full.shape[1] else bs[0]
            if objective == "binary:logistic" and 0.0 < p < 1.0:
                cands += [np.float32(np.log(p / (1.0 - p))), np.float32(-np.log(1.0 / np.float32(p) - 1.0)),
                          -np.log(np.float32(1.0) / np.float32(p) - np.float32(1.0))]
            else:
                cands.append(np.float32(p))
        t0 = [t for t in ts if t < n0]
        guess = np.float32(float(m01[0, gcol]) - float(leaves[0, t0].astype(np.float64).sum()))
        c = guess
        for _ in range(48):
            c = np.nextafter(c, np.float32(-np.inf))
        for _ in range(97):
            cands.append(c)
            c = np.nextafter(c, np.float32(np.inf))
        best, best_hits = cands[0], -1
        cand_arr = np.asarray(cands, dtype=np.float32)
        accs = np.repeat(cand_arr[:, None], n_probe, axis=1)  # all candidates at once
        for t in ts:
            accs = (accs + leaves[None, :, t]).astype(np.float32)
        for cand, acc in zip(cand_arr, accs):
            hits = int(np.sum(acc == full[:, gcol]))
            if hits > best_hits:
                best, best_hits = cand, hits
            if hits == n_probe:
                break
        base[g] = float(best)
    return base


def _fingerprint(model):
    """Everything :func:`_read` reads: the booster's serialised model (trees, objective, base score,
    feature names) and the classifier's classes, missing value and best iteration."""
    booster_only = _is_booster(model)
    try:
        booster = model if booster_only else model.get_booster()
    except Exception:  # not fitted: no content; _read says so
        return repr(("unfitted", id(model))).encode()
    extra = () if booster_only else (
        np.asarray(getattr(model, "classes_", [])).tolist(), repr(getattr(model, "missing", None)),
        getattr(model, "best_iteration", None) if _has_best(model) else None,
        None if getattr(model, "feature_names_in_", None) is None else list(model.feature_names_in_))
    return bytes(booster.save_raw(raw_format="ubj")) + repr(extra).encode()


READER = Reader("XGBoost", _claims, _read, _fingerprint)
