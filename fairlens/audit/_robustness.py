"""The robustness check of :func:`fairlens.audit` (the certification slice's)."""
from __future__ import annotations

import time

import numpy as np
import pandas as pd

from .._parallel import chunk_rng
from ._core import (
    CheckOutcome,
    _bounds_test,
    _cell,
    _ci,
    _finding,
    _float,
    _pct,
    _wilson_limits,
    _wilson_test,
)


# ------------------------------------------------------------------------ 5. robustness (certify)
def _certifiable(model):
    """The object certify reads: a LightGBM text model loaded by the CLI is certified through its
    own ``lightgbm.Booster`` (whose raw score >= 0 is exactly the wrapper's probability >= 0.5)."""
    if type(model).__name__ == "LightGBMTextModel" and hasattr(model, "booster_"):
        return model.booster_
    return model


def tree_ensemble_kind(model):
    """``(True, family)`` for a model :func:`fairlens.certify.certify` certifies directly (asked of certify's
    own reader registry, :func:`fairlens.certify.can_certify`), else ``(False, reason)``."""
    from ..certify import can_certify  # deferred: import time: loads numba, sklearn only when used

    model = _certifiable(model)
    ok, why = can_certify(model)
    if ok:
        return True, type(model).__name__
    if type(model).__name__ == "Pipeline" and hasattr(model, "steps"):
        last = model.steps[-1][1]
        if can_certify(last)[0]:
            return False, (f"the model is a Pipeline whose final step is a {type(last).__name__}: the certificate "
                           "is about the trees' own inputs, which the preceding steps transform; certify the final "
                           "estimator on the transformed table with fairlens.certify.certify")
    generic = why.startswith("model must be a fitted tree ensemble") and "regressor" not in why \
        and "not a classifier" not in why
    return False, (f"certification against b-feature attacks applies to tree ensembles (scikit-learn forests and "
                   f"gradient boosting, XGBoost, LightGBM, CatBoost, ONNX tree ensembles); the model is a "
                   f"{type(model).__name__}" + ("" if generic else f" that certify cannot read: {why}"))


def _certify(ctx, X, y, budget, time_limit):
    """ADAPTER: :func:`fairlens.certify.certify` with the cascade (exact unless cut by the time limit)."""
    from ..certify import certify  # deferred: import time: loads numba, sklearn only when used

    return certify(_certifiable(ctx.user_model), X, y, budget=budget, time_limit=time_limit, n_jobs=ctx.n_jobs)


def check(ctx, seconds):
    """Robustness: accuracy under attackers changing ``b`` features (certified, anytime interval)."""
    opts = ctx.options
    out = CheckOutcome("robustness", "Robustness to b-feature attacks", random_state=ctx.random_state)
    ok, why = tree_ensemble_kind(ctx.user_model)
    if not ok:
        out.status = "not applicable"
        out.verdict = f"Not applicable: {why}."
        f = _finding("robustness", "accuracy_under_attack", None, None, None, None, out.verdict)
        f["verdict"] = "not applicable"
        out.findings.append(f)
        out.random_state = None
        return out
    ds = ctx.dataset

    idx = np.sort(chunk_rng(ctx.random_state, 0, 29).permutation(ds.n_samples)[: opts["n_certify"]])
    names = getattr(ctx.user_model, "feature_names_in_", None)
    cols = list(ds.feature_names) if names is None else [str(c) for c in names]
    if ctx.input == "readable frame":
        X = ds.frame.iloc[idx][cols].reset_index(drop=True)
        if not all(pd.api.types.is_numeric_dtype(X[c]) for c in X.columns):
            out.status = "not applicable"
            out.verdict = ("Not applicable: the ensemble takes non-numeric columns; certification works on "
                           "numeric inputs.")
            f = _finding("robustness", "accuracy_under_attack", None, None, None, None, out.verdict)
            f["verdict"] = "not applicable"
            out.findings.append(f)
            return out
    elif names is not None:
        X = pd.DataFrame(ds.X[idx], columns=list(ds.feature_names))[cols]
    else:
        X = ds.X[idx]
    classes = list(np.asarray(getattr(ctx.user_model, "classes_", [0, 1])).tolist())
    other = [c for c in classes if c != ctx.favourable_class]
    y = np.where(ds.y[idx] == 1, ctx.favourable_class, other[0] if other else 0)
    y = np.asarray(y, dtype=np.asarray(classes).dtype) if classes else y
    budgets = [b for b in opts["certify_budgets"] if b <= ds.n_features]
    conf = opts["confidence"]
    t0 = time.perf_counter()
    results = {}
    rows = []
    n_rows = len(idx)
    for i, b in enumerate(budgets):
        left = max(0.0, t0 + seconds - time.perf_counter())
        res = _certify(ctx, X, y, b, left / (len(budgets) - i))
        results[b] = res
        lo, hi = res.accuracy_interval if res.accuracy_interval is not None else (res.accuracy, res.accuracy)
        unknown = int(res.stage_counts.get("unknown", 0)) if isinstance(res.stage_counts, dict) else 0
        if i == 0:
            k_clean = int(round(res.accuracy_clean * n_rows))
            clo, chi = _wilson_limits(k_clean, n_rows, conf)
            out.findings.append(_finding(
                "robustness", "clean_accuracy", None, res.accuracy_clean, clo, chi,
                f"On {n_rows:,} rows of the data the model's accuracy is {_pct(res.accuracy_clean)} without "
                f"attack ({_ci(clo, chi, conf)}, Wilson)", interval=f"{100 * conf:.0f}% Wilson interval",
                test=_wilson_test(k_clean, n_rows)))
        cut = unknown > 0
        k_lo, k_hi = int(round(lo * n_rows)), int(round(hi * n_rows))
        plo, _ = _wilson_limits(k_lo, n_rows, conf)
        _, phi = _wilson_limits(k_hi, n_rows, conf)
        blank = bool(getattr(res, "params", {}).get("nan_attack", False))
        sentence = (f"An attacker who may change any {b} feature(s) of a row"
                    + (" (to any value, or blank them: the model accepts missing values)" if blank else "")
                    + " brings the accuracy on these rows down to "
                    + (f"{_pct(lo)} (certified exactly)" if not cut else
                       f"somewhere between {_pct(lo)} and {_pct(hi)}: certified bounds, {unknown} of {n_rows} rows "
                       "were unsettled when the time ran out")
                    + f"; for the population the rows come from, {_ci(plo, phi, conf)} (Wilson limits"
                    + (" around the bounds)" if cut else ")"))
        out.findings.append(_finding("robustness", "accuracy_under_attack", f"b={b}", None if cut else lo, plo, phi,
                                     sentence, interval=(f"{100 * conf:.0f}% Wilson limits around the certified "
                                                         "bounds" if cut else f"{100 * conf:.0f}% Wilson interval"),
                                     test=_bounds_test(k_lo, k_hi, n_rows)))
        bounds = {"text": f"{_pct(lo)} to {_pct(hi)} (bounds)", "highlight": False} if cut else \
            _cell(lo, plo, phi, "rate")
        rows.append([b, _cell(res.accuracy_clean, unit="rate"), bounds, unknown, _float(res.elapsed)])
        if cut:
            out.status = "cut short"
    out.result = results
    out.tables.append({"title": "Accuracy under attack", "columns": ["Features the attacker changes (b)",
                                                                     "Accuracy without attack",
                                                                     "Accuracy under attack", "Rows unsettled",
                                                                     "Seconds"],
                       "rows": rows, "units": [None, "rate", "rate", "count", "seconds"],
                       "note": f"Certified on these {n_rows:,} rows: an exact accuracy when every row was settled "
                               f"(shown with its {100 * conf:.0f}% Wilson interval for the population), otherwise "
                               "the certified lower and upper bounds (not an interval: every value between them is "
                               "possible)."
                               + ("" if ctx.threshold == 0.5 else
                                  f" The certificate is about the model's own predict (probability 0.5), not the "
                                  f"audit's threshold {ctx.threshold:g}.")})
    if out.status == "cut short":
        out.notes.append("The certification was cut short by the time budget; the intervals bracket the exact "
                         "accuracy under attack.")
    first = next(iter(results.values())) if results else None
    out.params = {"n_certify": int(len(idx)), "budgets": budgets, "method": "cascade",
                  "vote": getattr(first, "vote", None),
                  "missing_values_attack": bool(getattr(first, "params", {}).get("nan_attack", False))}
    out.random_state = ctx.random_state
    out.verdict = out.findings[-1]["sentence"] if len(out.findings) > 1 else "No budget was certified."
    out.paragraphs.append(
        "For tree ensembles, fairlens certifies the model's own prediction against an attacker who may change "
        "up to b features of a row to any values -- including a missing value (NaN) when the model's own "
        "predict accepts one, since trees route it by each node's default direction -- (FLB -> ELB -> brute "
        "force cascade, exact unless the time runs out; then an interval).")
    return out


#: The checks, in the order they run, with their share of the time budget.


def applies(model):
    """``(True, family)`` when the robustness check applies to ``model`` (a tree ensemble certify reads),
    else ``(False, reason)``: what :class:`fairlens._registry.AuditCheck.applies` names."""
    return tree_ensemble_kind(model)
