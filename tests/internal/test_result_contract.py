"""One test over every ``Result`` and ``Analysis`` subclass of the package (issue #34 item 4).

The subclasses are *discovered* (every module imported, ``__subclasses__`` walked); each needs an
example below, so a new result type without one fails here by name. Each example is checked for
the shared surface: ``summary()`` is a one-row DataFrame, ``to_dict()`` is strict JSON (no NaN)
naming the type, ``_repr_html_()`` is a string, ``plot()`` draws (returns axes or a figure),
``elapsed`` is finite and ``stopped`` a bool. Every public ``Analysis`` runs to a ``Result`` and
reports its declared parameters.
"""
import importlib
import json
import math
import pkgutil
from types import SimpleNamespace

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import fairlens  # noqa: E402
from fairlens._base import Analysis, Result  # noqa: E402


def _all_subclasses(base):
    for mod in pkgutil.walk_packages(fairlens.__path__, "fairlens."):
        if mod.name.split(".")[-1] in ("__main__",):
            continue
        importlib.import_module(mod.name)
    out, todo = {}, [base]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if not sub.__name__.startswith("_") and sub.__module__.startswith("fairlens."):
                out[sub.__name__] = sub
    return out


@pytest.fixture(scope="module")
def world():
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from fairlens.datasets import load_admission, load_german_credit
    from fairlens.models import train_mlp

    data = load_german_credit().subset(np.arange(400))
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(data.X, data.y)
    rf = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0).fit(data.X, data.y)
    adm = load_admission(version="1")
    Xa = adm.X[:, [adm.index_of(c) for c in ("GRE Score", "TOEFL Score", "University Rating", "Research")]]
    Xa = (Xa - Xa.min(0)) / np.ptp(Xa, axis=0)
    mlp = train_mlp(data, random_state=0)   # the white-box searches need d score / d x
    return SimpleNamespace(data=data, model=model, mlp=mlp, rf=rf, Xa=Xa, cache={})


def _score(A):
    return np.asarray(A, dtype=float)[:, :3] @ np.full(3, 1 / 3)


def _testsgd(w):
    from fairlens.testsgd import TestSGD

    if "testsgd" not in w.cache:
        w.cache["testsgd"] = TestSGD(w.model, w.data, protected=["sex", "age"], sample_thr=60, max_samples=600,
                                     top_k=3, random_state=0).run()
    return w.cache["testsgd"]


def _maft(w):
    from fairlens.maft import MAFT

    if "maft" not in w.cache:
        w.cache["maft"] = MAFT(w.mlp, w.data, protected=["sex"], n_seeds=50, n_local=50, random_state=0).run()
    return w.cache["maft"]


def _group(w):
    from fairlens.metrics import group_metrics

    sex = w.data.decode(w.data.X, columns=["sex"])["sex"].to_numpy()
    return group_metrics(w.data.y, w.model.predict(w.data.X), protected={"sex": sex})


def _mitigation(w):
    from fairlens.testsgd import mitigate

    return mitigate(w.model, w.data, w.data, _testsgd(w)[0].rule_set, ["sex", "age"], amounts=[10],
                    fit=lambda X, y: w.model, sample_thr=60, max_samples=600, random_state=0)


def _rule_set_scores(w):
    from fairlens.testsgd import frequent_rule_sets, score_rule_sets

    sets = frequent_rule_sets(w.data, ["sex", "age"], 0.1).rule_sets[:3]
    return score_rule_sets(w.model, w.data, sets, protected=["sex", "age"], sample_thr=60, max_samples=600,
                           random_state=0)


EXAMPLES = {
    "GroupMetricsResult": _group,
    "FairnessTestResult": _maft,
    "RetrainResult": lambda w: __import__("fairlens.maft", fromlist=["x"]).retrain_with_instances(
        w.mlp, w.data, _maft(w), protected=["sex"], n_samples=200, random_state=0),
    "GradientComparison": lambda w: __import__("fairlens.maft", fromlist=["x"]).compare_gradients(
        w.mlp, w.data, w.data.X[:5], protected=["sex"]),
    "AuditReport": lambda w: fairlens.audit(w.model, w.data, protected=["sex"], checks=["group_fairness"],
                                            time_limit=None, progress=False),
    "ShuffleBatch": lambda w: __import__("fairlens.shuffle", fromlist=["x"]).ShuffledModel(
        _score, protected=3, favoured=1, attack="swapping", random_state=0).attack_batch(w.Xa),
    "BatchConsistencyResult": lambda w: __import__("fairlens.shuffle", fromlist=["x"]).batch_consistency(
        __import__("fairlens.shuffle", fromlist=["x"]).ShuffledModel(_score, protected=3, favoured=1,
                                                                      attack="dominance", random_state=0),
        w.Xa, random_state=0),
    "CertificationResult": lambda w: __import__("fairlens.certify", fromlist=["x"]).certify(
        w.rf, w.data.X[:20], w.data.y[:20], budget=1),
    "InstanceCovers": lambda w: __import__("fairlens.certify", fromlist=["x"]).instance_covers(
        w.rf, w.data.X[0], w.data.y[0], budget=1),
    "ThemisResult": lambda w: __import__("fairlens.testsgd", fromlist=["x"]).themis_group_discrimination(
        w.model, w.data, ["sex"], n_samples=50, random_state=0),
    "TestSGDReport": _testsgd,
    "ScoreResult": lambda w: _testsgd(w)[0],
    "RuleSetScores": _rule_set_scores,
    "SubgroupAudit": lambda w: __import__("fairlens.testsgd", fromlist=["x"]).FairFictPlay(
        w.model, w.data, protected=["sex", "age"]).run(),
    "MitigationResult": _mitigation,
}

#: every public Analysis, with the smallest configuration that runs
ANALYSES = {
    "MAFT": dict(protected=["sex"], n_seeds=5, n_local=5, random_state=0),
    "EIDIG": dict(protected=["sex"], n_seeds=5, n_local=5, random_state=0),
    "ADF": dict(protected=["sex"], n_seeds=5, n_local=5, random_state=0),
    "AEQUITAS": dict(protected=["sex"], n_seeds=5, n_local=5, random_state=0),
    "SG": dict(protected=["sex"], n_seeds=2, n_local=2, max_iter=2, n_samples=100, random_state=0),
    "TestSGD": dict(protected=["sex"], sample_thr=60, max_samples=600, top_k=2, random_state=0),
    "FairFictPlay": dict(protected=["sex", "age"]),
}


def test_every_result_and_analysis_type_has_an_example():
    results, analyses = _all_subclasses(Result), _all_subclasses(Analysis)
    assert set(results) == set(EXAMPLES), ("add an example to EXAMPLES for", set(results) ^ set(EXAMPLES))
    assert set(analyses) == set(ANALYSES), ("add a configuration to ANALYSES for", set(analyses) ^ set(ANALYSES))


def _check(res, name):
    assert type(res).__name__ == name and isinstance(res, Result)
    s = res.summary()
    assert isinstance(s, pd.DataFrame) and len(s) == 1, (name, s)
    d = res.to_dict()
    json.dumps(d, allow_nan=False)
    # the type is named: Result's own document, or the versioned report document of the audit
    assert d.get("type") == name or str(d.get("schema", "")).startswith("fairlens.report/"), (name, list(d)[:5])
    assert isinstance(res._repr_html_(), str) and res._repr_html_()
    # wall seconds, or NaN for a part not timed on its own (a rule set scored inside a batch)
    assert isinstance(res.stopped, bool) and isinstance(res.elapsed, float)
    assert math.isnan(res.elapsed) or res.elapsed >= 0
    assert isinstance(res.params, dict)
    drawn = res.plot()
    fig = getattr(drawn, "figure", None) or getattr(np.ravel(drawn)[0], "figure", None) or drawn
    assert isinstance(fig, matplotlib.figure.Figure), (name, type(drawn))
    plt.close("all")


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_result_shares_the_surface(name, world):
    _check(EXAMPLES[name](world), name)


@pytest.mark.parametrize("name", sorted(ANALYSES))
def test_every_analysis_runs_to_a_result_and_reports_its_parameters(name, world):
    if name == "SG":
        pytest.importorskip("z3")
        pytest.importorskip("lime")
    cls = _all_subclasses(Analysis)[name]
    a = cls(world.mlp, world.data, **ANALYSES[name])
    params = a.get_params()
    assert set(params) <= set(cls._parameter_constraints) and params
    for k, v in ANALYSES[name].items():
        assert params.get(k) == v or k not in cls._parameter_constraints, (k, params.get(k), v)
    res = a.run()
    assert isinstance(res, Result)
    json.dumps(res.to_dict(), allow_nan=False)


@pytest.mark.parametrize("name,change", [("TestSGD", {"theta": 0.2, "random_state": 3}),
                                         ("FairFictPlay", {"metric": "FP"}),
                                         ("MAFT", {"n_seeds": 7, "random_state": 1})])
def test_set_params_is_a_new_object_with_those_parameters(name, change, world):
    cls = _all_subclasses(Analysis)[name]
    a = cls(world.mlp, world.data, **ANALYSES[name])
    assert a.set_params(**change) is a
    for k, v in change.items():
        assert a.get_params()[k] == v
    fresh = cls(world.mlp, world.data, **{**ANALYSES[name], **change})
    pd.testing.assert_frame_equal(a.run().to_frame(), fresh.run().to_frame())
    before = a.get_params()
    with pytest.raises(TypeError, match="no_such_parameter"):
        a.set_params(no_such_parameter=1)
    with pytest.raises(TypeError, match="data"):
        a.set_params(data=world.data)
    bad = __import__("fairlens._base", fromlist=["x"]).make_invalid(
        {k: v for k, v in cls._parameter_constraints.items() if k not in cls._fixed_params})
    k, v = bad[0]
    with pytest.raises((TypeError, ValueError), match=k):
        a.set_params(**{k: v})
    assert a.get_params().keys() == before.keys()
    assert all(a.get_params()[k] is before[k] or a.get_params()[k] == before[k] for k in before)  # unchanged
