"""One progress callback shape for every public ``progress=`` parameter (issue #34 item 4).

Every public callable (the discovery of ``test_public_keywords.py``, classes' public methods
included) whose signature has a ``progress`` parameter is listed here: each one that takes a
callable is run cheaply with a recording callable, and every call must be
``progress(stage: str, done: int, total: int)`` with ``0 <= done <= total``; a callable of the
old two-argument shape must be refused with a ``TypeError`` naming ``progress``, the shape
``progress(stage, done, total)`` and the fix, before any work (the model is never called).
The functions that take only a bool (a tqdm bar or nothing) are listed apart.
"""

from __future__ import annotations

import importlib.util
import inspect
import numbers

import numpy as np
import pytest

from tests.contract.test_public_keywords import CALLABLES

#: public ``progress=`` parameters that take only a bool (show a bar or not)
BOOL_ONLY = {"fairlens.tour.run_tour"}


def _with_progress():
    out = {}
    for name, obj in CALLABLES:
        targets = [(name, obj)]
        if inspect.isclass(obj):
            targets = [(name, obj.__init__)] + [(f"{name}.{m}", v) for m, v in vars(obj).items()
                                                if not m.startswith("_") and callable(v)]
            # methods a class inherits (e.g. MAFT's run) count too
            targets += [(f"{name}.run", obj.run)] if callable(getattr(obj, "run", None)) else []
        for n, o in targets:
            try:
                sig = inspect.signature(o)
            except (TypeError, ValueError):
                continue
            if "progress" in sig.parameters:
                out[n] = o
    return out


WITH_PROGRESS = _with_progress()


#: every counted model of the current test (to check that a refused call did no work)
CREATED = []


class Counted:
    """A model with ``predict_proba`` that counts the calls it gets."""

    def __init__(self, model):
        self.model, self.calls = model, 0
        CREATED.append(self)

    def predict_proba(self, X):
        self.calls += 1
        return self.model.predict_proba(X)


class CountedFn:
    """A callable model (a score per row) that counts the calls it gets."""

    def __init__(self, fn):
        self.fn, self.calls = fn, 0
        CREATED.append(self)

    def __call__(self, X):
        self.calls += 1
        return self.fn(X)


# ------------------------------------------------------------------------------------ runners
# each takes the progress value and returns the model-call counter (or None when not countable)


def _testsgd_inputs():
    from tests._support.testsgd_fixtures import PlantedModel, make_toy

    return Counted(PlantedModel()), make_toy(n=600, seed=3), ["gender", "race", "age"]


def run_testsgd(progress):
    from fairlens.testsgd import TestSGD

    model, toy, sens = _testsgd_inputs()
    ts = TestSGD(model, toy, protected=sens, theta=0.1, sample_thr=60, max_samples=600, random_state=0,
                 strategy="sample")
    model.calls = 0
    ts.run(progress=progress)


def run_score_rule_sets(progress):
    from fairlens.testsgd import frequent_rule_sets, score_rule_sets

    model, toy, sens = _testsgd_inputs()
    rs = frequent_rule_sets(toy, sens, 0.1).rule_sets[:4]
    score_rule_sets(model, toy, rs, protected=sens, sample_thr=60, max_samples=600, random_state=0,
                    progress=progress)


def run_mitigate(progress):
    from fairlens.testsgd import frequent_rule_sets, mitigate

    model, toy, sens = _testsgd_inputs()
    rs = frequent_rule_sets(toy, sens, 0.1).rule_sets[0]
    model.calls = 0
    mitigate(model, toy, toy, rs, sens, amounts=[10, 20], fit=lambda X, y: model, sample_thr=60,
             max_samples=600, random_state=0, progress=progress)


def run_fairfictplay(progress):
    from fairlens.testsgd import FairFictPlay

    model, toy, sens = _testsgd_inputs()
    auditor = FairFictPlay(model, toy, protected=sens)
    model.calls = 0
    auditor.run(progress=progress)


def _maft(cls, **kw):
    def run(progress):
        import fairlens.maft as maft
        from tests._support.maft_toy import SmoothModel, make_toy

        toy, smooth = make_toy(), SmoothModel()
        model = CountedFn(smooth)
        extra = {"gradient": smooth.grad} if cls in ("ADF", "EIDIG") else {}
        s = getattr(maft, cls)(model, toy, protected=["sex"], random_state=0, **extra, **kw)
        model.calls = 0
        s.run(progress=progress)
    return run


def _forest():
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    return RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y), X[:20], y[:20]


def run_certify(progress):
    from fairlens.certify import certify

    forest, X, y = _forest()
    certify(forest, X, y, budget=1, progress=progress)


def run_accuracy_under_attack(progress):
    from fairlens.certify import accuracy_under_attack

    forest, X, y = _forest()
    accuracy_under_attack(forest, X, y, budgets=[1, 2], progress=progress)


def run_audit(progress):
    from sklearn.linear_model import LogisticRegression

    import fairlens
    from fairlens.datasets import load_german_credit

    german = load_german_credit()
    model = Counted(LogisticRegression(max_iter=300).fit(german.X, german.y))
    model.classes_ = np.array([0, 1])
    model.calls = 0
    fairlens.audit(model, german, protected=["sex"], checks=["group_fairness"], time_limit=None,
                   progress=progress)


def _shuffle_inputs():
    X = np.random.default_rng(0).random((6, 3))
    X[:, 2] = X[:, 2] > 0.5  # column 2: protected
    return CountedFn(lambda A: (A[:, 0] + A[:, 1]) / 2), X


def run_explain(progress):
    from fairlens.shuffle import explain

    model, X = _shuffle_inputs()
    explain(model, X, "kernel", background=X, nsamples=20, protected=2, progress=progress)


def run_attributions(progress):
    from fairlens.shuffle import attributions

    model, X = _shuffle_inputs()
    attributions(model, X, ("linear", "kernel"), background=X, nsamples=20, protected=2,
                 progress=progress)


RUNNERS = {
    "fairlens.shuffle.explain": run_explain,
    "fairlens.shuffle.attributions": run_attributions,
    "fairlens.audit.audit": run_audit,
    "fairlens.certify.certify": run_certify,
    "fairlens.certify.accuracy_under_attack": run_accuracy_under_attack,
    "fairlens.maft.MAFT.run": _maft("MAFT", n_seeds=6, n_local=4),
    "fairlens.maft.ADF.run": _maft("ADF", n_seeds=6, n_local=4),
    "fairlens.maft.EIDIG.run": _maft("EIDIG", n_seeds=6, n_local=4),
    "fairlens.maft.AEQUITAS.run": _maft("AEQUITAS", n_seeds=6, n_local=4),
    "fairlens.maft.SG.run": _maft("SG", n_seeds=2, n_local=2, n_samples=100),
    "fairlens.testsgd.TestSGD.run": run_testsgd,
    "fairlens.testsgd.score_rule_sets": run_score_rule_sets,
    "fairlens.testsgd.mitigate": run_mitigate,
    "fairlens.testsgd.FairFictPlay.run": run_fairfictplay,
}

#: runs that report nothing (their progress is validated, but there is nothing to count)
SILENT = {"fairlens.testsgd.FairFictPlay.run"}


def _needs(name):
    if name.endswith("SG.run") and importlib.util.find_spec("z3") is None:
        pytest.skip("SG needs z3")


def test_every_progress_parameter_is_covered():
    """A new public ``progress=`` must be added here (run with a recording callable, or bool-only)."""
    assert set(WITH_PROGRESS) == set(RUNNERS) | BOOL_ONLY


@pytest.mark.parametrize("name", sorted(RUNNERS))
def test_progress_calls_have_the_one_shape(name):
    _needs(name)
    calls = []

    def record(*args):
        calls.append(args)

    RUNNERS[name](record)
    if name not in SILENT:
        assert calls, f"{name} never called progress"
    for args in calls:
        assert len(args) == 3, (name, args)
        stage, done, total = args
        assert isinstance(stage, str) and stage, (name, args)
        assert isinstance(done, numbers.Integral) and isinstance(total, numbers.Integral), (name, args)
        assert 0 <= done <= total, (name, args)


@pytest.mark.parametrize("name", sorted(RUNNERS))
def test_two_argument_progress_is_refused_before_any_work(name):
    _needs(name)
    calls = []
    CREATED.clear()
    with pytest.raises(TypeError, match=r"progress.*progress\(stage, done, total\).*"
                                        r"def progress\(stage, done, total\)"):
        RUNNERS[name](lambda done, total: calls.append((done, total)))
    assert calls == []
    assert all(m.calls == 0 for m in CREATED), [(type(m.fn if hasattr(m, "fn") else m.model), m.calls)
                                                for m in CREATED]


@pytest.mark.parametrize("name", sorted(BOOL_ONLY))
def test_bool_only_progress_parameters_say_so(name):
    doc = inspect.getdoc(WITH_PROGRESS[name]) or ""
    assert "progress : bool" in doc, name
