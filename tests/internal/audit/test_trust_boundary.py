"""The tests of ``tests/contract/audit/test_trust_boundary.py`` that pin internals
(its docstring describes both halves)."""
import subprocess

import numpy as np
import pytest

from fairlens.audit._cli import CliError, load_model, sklearn_class  # noqa: E402
from tests.contract.audit.test_trust_boundary import _forged, skops_io


@pytest.mark.parametrize("name,ok", [
    ("sklearn.linear_model._logistic.LogisticRegression", True),
    ("sklearn.tree._tree.Tree", True),                                # a Cython class
    ("sklearn.pipeline.Pipeline", True),
    ("sklearn.linear_model.LogisticRegression", False),               # a re-export (defined in _logistic)
    ("sklearn.utils._testing.check_output", False),                   # subprocess.check_output
    ("sklearn.datasets._rcv1.remove", False),                         # os.remove
    ("sklearn.ensemble._bagging.partial", False),                     # functools.partial: a class, not sklearn's
    ("sklearn.base.BaseEstimator.get_params", False),                 # a method reached through a class
    ("sklearn.utils._testing.np.ndarray", False),                     # numpy reached through a module attribute
    ("sklearn.nope.Thing", False),
    ("sklearn", False),
    ("os.system", False),
    ("sklearn.utils._testing.__builtins__", False),
])
def test_only_classes_defined_in_scikit_learn_resolve(name, ok):
    cls = sklearn_class(name)
    assert (cls is not None) is ok, name
    if ok:
        assert isinstance(cls, type) and f"{cls.__module__}.{cls.__qualname__}" == name


@pytest.mark.parametrize("module,func", [("sklearn.utils._testing", "check_output"),
                                         ("sklearn.datasets._rcv1", "remove"),
                                         ("sklearn.ensemble._bagging", "partial")])
def test_forged_skops_files_are_refused_and_nothing_runs(tmp_path, module, func):
    path = _forged(tmp_path, "model.skops", module, func)
    untrusted = skops_io.get_untrusted_types(file=path)
    assert f"{module}.{func}" in untrusted
    # the danger is real: skops would hand back the standard-library object under that name
    loaded = skops_io.load(path, trusted=untrusted)
    target = loaded.steps[0][1].func
    assert target in (subprocess.check_output, __import__("os").remove, __import__("functools").partial)
    with pytest.raises(CliError, match=rf"{module}\.{func}.*--trust-types"):
        load_model(path)


def test_an_honest_pipeline_still_loads(tmp_path):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X = np.random.default_rng(1).normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    model = make_pipeline(StandardScaler(), RandomForestClassifier(n_estimators=5, random_state=0)).fit(X, y)
    path = tmp_path / "ok.skops"
    skops_io.dump(model, path)
    loaded = load_model(path)
    assert np.array_equal(loaded.predict(X), model.predict(X))
