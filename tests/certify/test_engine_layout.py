"""Layout of the certification engine (issue 21 item 2): a reader registry keyed on the model
type, and no import cycle between the certify modules (lazy imports inside functions count)."""
import ast
import pathlib

import pytest

from fairlens.certify import BoostedModel, FlatForest
from fairlens.certify._readers import READERS, read_model

PKG = pathlib.Path(__file__).resolve().parents[2] / "fairlens" / "certify"


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
    assert "_certify" not in graph["_boosted"] and "_flatten" not in graph["_fpf"]


def test_readers_are_keyed_on_the_model_type():
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

    from .test_boosted import _data

    X, y = _data(0)
    rf = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    gb = GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    assert ("sklearn", "RandomForestClassifier") in READERS and ("xgboost", "XGBClassifier") in READERS
    ff, bm = read_model(rf), read_model(gb)
    assert isinstance(ff, FlatForest) and isinstance(bm, BoostedModel)
    assert read_model(ff) is ff and read_model(bm) is bm

    class MyForest(RandomForestClassifier):  # a subclass is read by its parent's reader
        pass

    assert isinstance(read_model(MyForest(n_estimators=2, random_state=0).fit(X, y)), FlatForest)
    with pytest.raises(ValueError, match="vote and tie_class"):
        read_model(gb, vote="soft")
    with pytest.raises(TypeError, match="regress"):
        from sklearn.ensemble import RandomForestRegressor

        read_model(RandomForestRegressor(n_estimators=2).fit(X, y))


def test_shapes_are_checked_before_the_boosted_kernels():
    import dataclasses

    import numpy as np
    from sklearn.ensemble import GradientBoostingClassifier

    from fairlens.certify import certify, flatten_boosted

    from .test_boosted import _data

    X, y = _data(0)
    bm = flatten_boosted(GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y))
    broken = dataclasses.replace(bm)
    broken.group = bm.group[:-1].copy()  # one tree short: a kernel would read past the end
    with pytest.raises(ValueError, match="group"):
        certify(broken, X[:5], y[:5])
    broken = dataclasses.replace(bm)
    broken.left = bm.left.astype(np.int32)
    with pytest.raises(ValueError, match="left"):
        certify(broken, X[:5], y[:5])
