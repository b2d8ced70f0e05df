"""Layout of the certification engine (issue 21 item 2): a reader registry keyed on the model
type, and no import cycle between the certify modules (lazy imports inside functions count)."""
import ast

import numpy as np
import pytest

from tests._support import REPO

PKG = REPO / "fairlens" / "certify"


def _imports(path):
    """Certify modules imported anywhere in ``path`` (relative ``from . import`` / ``from ._x import``)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.add(node.module)
            else:
                out.update(a.name for a in node.names)
    return out


def test_no_import_cycle_between_certify_modules():
    mods = {p.stem: _imports(p) for p in PKG.glob("*.py") if p.stem not in ("__init__", "_widget")}
    graph = {m: {d for d in deps if d in mods} for m, deps in mods.items()}

    def reach(start):
        seen, todo = set(), list(graph[start])
        while todo:
            m = todo.pop()
            if m not in seen:
                seen.add(m)
                todo.extend(graph[m])
        return seen

    cycles = sorted(m for m in graph if m in reach(m))
    assert cycles == [], f"import cycles through {cycles}"
    assert "_certify" not in graph["_ensemble"] and "_ensemble" not in graph["_fpf"]
    assert "_certify" not in graph["_predictors"]  # the predictor sits below the one driver


def _code_mentions(path, word):
    """Whether the code of ``path`` (identifiers and strings, docstrings left out) mentions ``word``."""
    tree = ast.parse(path.read_text())
    docs = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)) and n.body and \
                isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant):
            docs.add(id(n.body[0].value))
    for n in ast.walk(tree):
        text = None
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
            text = n.value
        elif isinstance(n, ast.Name):
            text = n.id
        elif isinstance(n, ast.Attribute):
            text = n.attr
        elif isinstance(n, ast.alias):
            text = n.name
        if text is not None and word in text.lower():
            return True
    return False


def test_can_certify_asks_the_readers():
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from fairlens.certify import can_certify
    from tests.contract.certify.test_boosted import _data

    X, y = _data(0)
    rf = RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    assert can_certify(rf)[0] is True
    ok, why = can_certify(LogisticRegression().fit(X, y))
    assert not ok and "model" in why
    ok, why = can_certify(make_pipeline(StandardScaler(), RandomForestClassifier(n_estimators=2)).fit(X, y))
    assert not ok and "Pipeline" in why and "pipe[-1]" in why


def test_flat_groups_are_the_bottom_layer():
    assert _imports(PKG / "_flat.py") == set()  # imports nothing from fairlens.certify


ENTRY_KERNELS = {
    "_walk": ("leaf_classes", "leaf_values", "instance_sets"),
    "_votes": ("soft_proba", "raw_scores", "row_quantities", "prepare_soft", "prepare_hard"),
    "_bounds": ("flb_search", "elb_search"),
    "_search": ("brute_search",),
}


@pytest.mark.parametrize("module", sorted(ENTRY_KERNELS))
def test_kernels_take_the_one_flat_ensemble(module):
    """The kernels the drivers call take the one FlatEnsemble first (and the vote rule second where they
    decide), at most 10 parameters; none takes the node arrays one by one."""
    funcs = {n.name: [a.arg for a in n.args.args] for n in ast.parse((PKG / f"{module}.py").read_text()).body
             if isinstance(n, ast.FunctionDef)}
    for name in ENTRY_KERNELS[module]:
        args = funcs[name]
        assert args[0] == "ens", (name, args)
        assert len(args) <= 10, (name, args)
        if module in ("_bounds", "_search"):
            assert args[1] == "vote", (name, args)
    for name, args in funcs.items():  # goes_left is the one split rule: (value, threshold, missing_left, node)
        node_arrays = {"feature", "threshold", "left", "right", "roots"}
        if name == "goes_left":
            node_arrays.discard("threshold")
        assert not node_arrays & set(args), (name, args)


def test_shapes_are_checked_before_the_forest_kernels():
    import dataclasses

    from sklearn.ensemble import RandomForestClassifier

    from fairlens.certify import certify, flatten_forest
    from tests.contract.certify.test_boosted import _data

    X, y = _data(0)
    ff = flatten_forest(RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y))
    for name, bad in (("left", ff.left.astype(np.int32)), ("missing_left", ff.missing_left[:-1]),
                      ("rank", ff.rank[:-1])):
        broken = dataclasses.replace(ff)
        setattr(broken, name, bad)
        # the soft vote certifies the altered ensemble itself; vote="hard" a copy, in which a dtype is
        # converted (the same values) and a shape refused
        for vote in ("soft", "hard") if name != "left" else ("soft",):
            with pytest.raises(ValueError, match=name):
                certify(broken, X[:5], y[:5], vote=vote)


def test_the_two_old_representations_are_gone_from_the_public_api():
    """``FlatForest``, ``BoostedModel`` and ``flatten_boosted`` were public; they are merged into
    ``TreeEnsemble``/``read_model``, and asking for an old name says what replaces it."""
    from sklearn.ensemble import RandomForestClassifier

    import fairlens.certify as fc

    for old, new in (("FlatForest", "TreeEnsemble"), ("BoostedModel", "TreeEnsemble"),
                     ("flatten_boosted", "read_model")):
        assert old not in fc.__all__
        with pytest.raises(AttributeError, match=f"{old} was removed.*{new}"):
            getattr(fc, old)
        assert new in fc.__all__
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        fc.no_such_name  # noqa: B018
    X = np.random.default_rng(0).normal(size=(40, 3))
    rf = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, X[:, 0] > 0)
    assert isinstance(fc.flatten_forest(rf), fc.TreeEnsemble) and isinstance(fc.read_model(rf), fc.TreeEnsemble)
    np.testing.assert_array_equal(fc.read_model(rf).predict(X), rf.predict(X))


def test_a_library_is_one_reader_file_and_one_registration_line():
    """Every library is read by one module in ``_readers`` plus its line in ``READERS``: no other certify
    module's code names it (documentation may; ``_reference`` is the independent oracle, which reads the
    models by their own public dumps on purpose; ``_warmup``, the Binder warm-up, fits a model of a family
    to compile its kernels and reads nothing)."""
    readers = {"xgboost": "_xgboost.py", "lightgbm": "_lightgbm.py", "catboost": "_catboost.py", "onnx": "_onnx.py",
               "gradientboosting": "_sklearn_boosting.py", "extratrees": "_sklearn.py"}
    oracle = {"xgboost", "lightgbm"}
    for lib, module in readers.items():
        hits = {str(p.relative_to(PKG)) for p in PKG.rglob("*.py") if _code_mentions(p, lib)}
        allowed = ({"_readers/__init__.py", f"_readers/{module}", "_warmup.py"}
                   | ({"_reference.py"} if lib in oracle else set()))
        assert f"_readers/{module}" in hits and hits <= allowed, (lib, sorted(hits))
    init = (PKG / "_readers" / "__init__.py").read_text()
    for module in set(readers.values()) | {"_fpf.py"}:
        assert init.count(f"{module[:-3]}.READER") == 1, module


def test_chunk_size_and_prune_change_nothing_for_boosted_models():
    """``chunk_size`` (rows per bounded call) and ``prune`` (a documented no-op: the boosted search
    always prunes) are validated for every model and never change a boosted answer."""
    from fairlens.certify import certify
    from tests.contract.certify.test_boosted import _fit

    model, X, y = _fit("gb", 2)
    ref = certify(model, X, y, budget=2)
    for kw in ({"chunk_size": 1}, {"chunk_size": 3}, {"prune": False}):
        res = certify(model, X, y, budget=2, **kw)
        np.testing.assert_array_equal(res.status, ref.status)
        assert res.witnesses.keys() == ref.witnesses.keys() and res.n_evaluations == ref.n_evaluations
        np.testing.assert_array_equal(res.delta, ref.delta)
    for bad in ({"prune": "banana"}, {"chunk_size": 0}):
        with pytest.raises((TypeError, ValueError), match=next(iter(bad))):
            certify(model, X, y, budget=1, **bad)
