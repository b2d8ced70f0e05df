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
    a zero-argument callable.
zero_order_gradient
    Algorithms 1 (``vectored=False``) and 2 (``vectored=True``).
FairnessTestResult
    Result object (``instances``, ``counterparts``, ``n_global``, ``n_local``,
    ``elapsed``, ``queries``, ``to_frame()``, ``plot()``).
discriminatory_mask, discrimination_rate, retrain_with_instances, RetrainResult
    Discrimination checks and the retraining experiment (``RetrainResult`` was
    ``MitigationResult``; the old name still works for one release, with a FutureWarning).
compare_gradients, cosine_similarity
    RQ3: estimated vs true gradients, directions and probabilities.
MAFTSession
    The ipywidgets front end (imported lazily).
"""
from ._analysis import GradientComparison, compare_gradients, cosine_similarity
from ._gradients import zero_order_gradient
from ._mitigation import MAX_SAMPLES, RetrainResult, discrimination_rate, discriminatory_mask, retrain_with_instances
from ._problem import select_seeds
from ._result import FairnessTestResult
from ._searchers import ADF, AEQUITAS, EIDIG, MAFT
from ._sg import SG

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
    if name == "MAFTSession":
        from ._widget import MAFTSession

        return MAFTSession
    if name == "MitigationResult":
        from . import _mitigation

        return _mitigation.__getattr__(name)
    raise AttributeError(f"module 'fairlens.maft' has no attribute {name!r}")
