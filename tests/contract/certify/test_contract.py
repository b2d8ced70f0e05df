"""certify follows the one analysis contract (issue 21) for EVERY supported model type.

The parameters of ``certify``, ``instance_covers`` and ``accuracy_under_attack`` are declared once
(``CERTIFY_CONSTRAINTS``); the invalid values generated from that table are refused by name for
scikit-learn forests (soft and hard vote), trees, FeaturePartitionedForest, GradientBoosting,
HistGradientBoosting, XGBoost and LightGBM alike (before: ``prune="banana"`` and ``chunk_size=0``
were accepted for GradientBoosting and refused for RandomForest). Results are
:class:`fairlens._base.Result` objects.
"""
import inspect

import pytest
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.tree import DecisionTreeClassifier

from fairlens.certify import FeaturePartitionedForest, accuracy_under_attack, certify, instance_covers
from tests.contract.certify.test_boosted import _data

KINDS = ["rf", "rf_hard", "extra_trees", "tree", "fpf", "gb", "hgb", "xgboost", "lightgbm"]


def _model(kind):
    X, y = _data(11, n=150)
    if kind == "xgboost":
        xgb = pytest.importorskip("xgboost")
        m = xgb.XGBClassifier(n_estimators=4, max_depth=2, n_jobs=1, random_state=0)
    elif kind == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        m = lgb.LGBMClassifier(n_estimators=4, num_leaves=4, min_child_samples=5, verbose=-1, n_jobs=1,
                               random_state=0)
    else:
        m = {"rf": RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0),
             "rf_hard": RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0),
             "extra_trees": ExtraTreesClassifier(n_estimators=5, max_depth=3, random_state=0),
             "tree": DecisionTreeClassifier(max_depth=3, random_state=0),
             "fpf": FeaturePartitionedForest(budget=1, rounds=2, random_state=0),
             "gb": GradientBoostingClassifier(n_estimators=4, max_depth=2, random_state=0),
             "hgb": HistGradientBoostingClassifier(max_iter=4, max_depth=2, random_state=0)}[kind]
    m.fit(X[:120], y[:120])
    extra = {"vote": "hard"} if kind == "rf_hard" else {}
    return m, X[120:], y[120:], extra


@pytest.fixture(scope="module", params=KINDS)
def fitted(request):
    return request.param, _model(request.param)


def test_forest_the_old_name_of_model_is_a_type_error_naming_model():
    model, X, y, _ = _model("rf")
    for func, kw in ((certify, dict(X=X, y=y, budget=1)), (instance_covers, dict(x=X[0], y=y[0])),
                     (accuracy_under_attack, dict(X=X, y=y, budgets=(1,)))):
        name = func.__name__
        with pytest.raises(TypeError, match=rf"^{name}: forest= was renamed model=; pass model=\.\.\. instead"):
            func(forest=model, **kw)
        params = inspect.signature(func).parameters
        assert [params[k].default for k in list(params)[:3]] == [inspect.Parameter.empty] * 3  # required
    with pytest.raises(TypeError, match="forest= was renamed model="):
        certify(model, X, y, forest=model)
    with pytest.raises(TypeError, match="missing .*'y'"):
        certify(model, X)
    with pytest.raises(TypeError, match="colour"):
        certify(model, X, y, colour="red")
    with pytest.raises(TypeError):
        certify(model, X, y, 2)  # budget is keyword-only


def test_accuracies_not_computed_are_none_for_every_model_type(fitted):
    """A time limit that settles nothing leaves FLB/ELB/exact accuracies None, not 0.0 (boosted
    models reported accuracy_flb = 0.0 for a cascade cut before FLB); one function computes the
    accuracies for every model type."""
    _, (model, X, y, extra) = fitted
    cut = certify(model, X, y, budget=1, time_limit=0, **extra)
    if cut.stage_counts["unknown"]:
        assert cut.accuracy_flb is None and cut.accuracy_elb is None and cut.accuracy_exact is None
        assert cut.accuracy == cut.accuracy_interval[0]
    full = certify(model, X, y, budget=1, **extra)
    assert full.accuracy_flb <= full.accuracy_elb <= full.accuracy_exact == full.accuracy
