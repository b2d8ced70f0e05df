"""MAFT: black-box individual fairness testing with zero-order gradients.

Reproduces Wang et al., *MAFT: Efficient Model-Agnostic Fairness Testing for Deep
Neural Networks via Zero-Order Gradient Search* (ICSE 2024), with the white-box
baselines EIDIG and ADF and the black-box baseline AEQUITAS driven by the same
two-phase search engine.

Public names
------------
MAFT, EIDIG, ADF, AEQUITAS, SG
    Searches (SG: Symbolic Generation, Aggarwal et al. 2019, needs ``z3-solver``):
    ``MAFT(model, data, protected=[...], n_seeds=..., n_local=..., random_state=0).run()``.
    ``model`` is anything :func:`fairlens.models.as_scorer` takes (a pipeline fitted
    on the readable frame, an estimator fitted on the encoded ``X`` as array or
    DataFrame, a callable); it is adapted once and the search runs in the encoded
    space (``result.params["model_input"]`` says how the model was called).
    EIDIG and ADF take ``gradient=`` (d score / d x of any differentiable model)
    or differentiate a scikit-learn ``MLPClassifier`` analytically.
    ``run(stop=None, progress=None, n_jobs=None)``: ``stop`` takes a ``threading.Event`` or
    a zero-argument callable, ``progress`` ``True`` or a callable ``progress(stage, done, total)``.
zero_order_gradient
    Algorithms 1 (``vectored=False``) and 2 (``vectored=True``).
FairnessTestResult
    Result object (``instances``, ``counterparts``, ``n_global``, ``n_local``,
    ``elapsed``, ``queries``, ``to_frame()``, ``plot()``).
discriminatory_mask, discrimination_rate, retrain_with_instances, RetrainResult
    Discrimination checks and the retraining experiment (``RetrainResult`` was
    ``MitigationResult``; the old name is an ``AttributeError`` naming the new one).
compare_gradients, cosine_similarity
    RQ3: estimated vs true gradients, directions and probabilities.
MAFTSession
    The ipywidgets front end (imported lazily).
"""
import importlib

#: Where each public name lives.  Imported on first use (PEP 562), so that a parallel worker, which
#: imports the engine's rooms (``fairlens.maft._local`` and the like) and therefore this package,
#: does not import what only this process needs (pandas for the results and the analyses:
#: about 1 s of a fresh worker's first task).
_WHERE = {
    "MAFT": "_searchers", "EIDIG": "_searchers", "ADF": "_searchers", "AEQUITAS": "_searchers", "SG": "_sg",
    "zero_order_gradient": "_gradients", "select_seeds": "_problem", "FairnessTestResult": "_result",
    "discriminatory_mask": "_mitigation", "discrimination_rate": "_mitigation",
    "retrain_with_instances": "_mitigation", "RetrainResult": "_mitigation", "MAX_SAMPLES": "_mitigation",
    "compare_gradients": "_analysis", "cosine_similarity": "_analysis", "GradientComparison": "_analysis",
    "MAFTSession": "_widget",
}

__all__ = [
    "MAFT",
    "EIDIG",
    "ADF",
    "AEQUITAS",
    "SG",
    "zero_order_gradient",
    "select_seeds",
    "FairnessTestResult",
    "discriminatory_mask",
    "discrimination_rate",
    "retrain_with_instances",
    "RetrainResult",
    "MAX_SAMPLES",
    "compare_gradients",
    "cosine_similarity",
    "GradientComparison",
    "MAFTSession",
]


def __getattr__(name):
    if name in _WHERE:
        value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
        if name != "MAFTSession":  # the widget stays lazy: ipywidgets is imported on first use
            globals()[name] = value
        return value
    if name == "MitigationResult":
        raise AttributeError("fairlens.maft.MitigationResult was renamed RetrainResult (testsgd has its own "
                             "MitigationResult); use fairlens.maft.RetrainResult.")
    raise AttributeError(f"module 'fairlens.maft' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
