"""Every public callable refuses an unknown keyword, naming it (issue #34 item 4).

Each callable listed in the ``__all__`` of a public module is called with only
``fairlens_unknown_kw=1``: before any other argument is looked at, the call must raise a
``TypeError`` whose message names ``fairlens_unknown_kw`` (Python's own "got an unexpected
keyword argument" counts).  A ``**kwargs`` catch-all that swallows the keyword, or one that
is checked only after the work started, fails here.
"""

from __future__ import annotations

import importlib
import inspect
import warnings

import pytest

MODULES = (
    "fairlens",
    "fairlens.shuffle",
    "fairlens.shuffle.plots",
    "fairlens.maft",
    "fairlens.maft.plots",
    "fairlens.testsgd",
    "fairlens.testsgd.plots",
    "fairlens.testsgd.paper",
    "fairlens.certify",
    "fairlens.certify.plots",
    "fairlens.datasets",
    "fairlens.models",
    "fairlens.metrics",
    "fairlens.audit",
    "fairlens.report",
    "fairlens.tour",
)

UNKNOWN = "fairlens_unknown_kw"


def _public_callables():
    seen = {}
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.ismodule(obj) or not callable(obj):
                continue
            if inspect.isclass(obj) and issubclass(obj, BaseException):
                continue
            seen.setdefault(id(obj), (f"{module_name}.{name}", obj))
    return sorted(seen.values(), key=lambda item: item[0])


CALLABLES = _public_callables()


def test_discovery_finds_the_public_entry_points():
    names = {name for name, _ in CALLABLES}
    for expected in ("fairlens.maft.MAFT", "fairlens.testsgd.TestSGD", "fairlens.certify.certify",
                     "fairlens.datasets.load_dataset", "fairlens.models.as_scorer",
                     "fairlens.metrics.group_metrics", "fairlens.audit.audit",
                     "fairlens.shuffle.ShuffledModel"):
        assert expected in names
    assert len(CALLABLES) > 100


@pytest.mark.parametrize("name, obj", CALLABLES, ids=[name for name, _ in CALLABLES])
def test_unknown_keyword_is_a_type_error_naming_it(name, obj):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a deprecation shim that warns first fails too
        with pytest.raises(TypeError, match=UNKNOWN):
            obj(**{UNKNOWN: 1})


@pytest.mark.parametrize("name, obj", CALLABLES, ids=[name for name, _ in CALLABLES])
def test_signature_has_no_undocumented_catch_all(name, obj):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):  # builtins without a signature
        return
    var = [p.name for p in sig.parameters.values()
           if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    assert var == [] or set(var) <= ALLOWED_VAR.get(name, set()), (name, var)


#: Real, documented pass-throughs (the unknown-keyword test above still holds for them).
ALLOWED_VAR = {
    "fairlens.models.train_mlp": {"mlp_params"},      # forwarded to MLPClassifier, checked against it
    "fairlens.datasets.load_dataset": {"kwargs"},     # forwarded to the loader, checked against them
}


@pytest.mark.parametrize("name", ["MAFT", "EIDIG", "ADF", "AEQUITAS", "SG"])
def test_search_run_refuses_unknown_and_moved_keywords(name):
    import fairlens.maft as maft

    cls = getattr(maft, name)
    obj = cls.__new__(cls)  # run() refuses the keyword before it looks at the object
    assert "**" not in str(inspect.signature(cls.run))
    with pytest.raises(TypeError, match=UNKNOWN):
        obj.run(**{UNKNOWN: 1})
    with pytest.raises(TypeError, match=rf"{name}\.run: n_seeds= moved to the constructor.*{name}\(model, data"):
        obj.run(n_seeds=10)
    with pytest.raises(TypeError, match=r"n_seeds=, n_local= moved to the constructor"):
        obj.run(10, 10)
    with pytest.raises(TypeError, match=r"run\(\) takes keyword arguments only: stop="):
        obj.run(lambda: False)


def test_forwarded_keywords_are_checked_against_their_target():
    from fairlens.datasets import load_dataset
    from fairlens.models import train_mlp

    with pytest.raises(TypeError, match="alpah.*MLPClassifier"):
        train_mlp(object(), alpah=1.0)  # refused before data is looked at
    with pytest.raises(TypeError, match="dataset= was renamed data="):
        train_mlp(dataset=object())
    with pytest.raises(TypeError, match="load_wine.*encoding="):
        load_dataset("wine", encoding="raw")  # a keyword of other loaders, not of this one
