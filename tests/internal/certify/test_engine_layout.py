"""Layout of the certification engine (issue 21 item 2): a reader registry keyed on the model
type, and no import cycle between the certify modules (lazy imports inside functions count)."""
import ast

import numpy as np
import pytest

from fairlens.certify import TreeEnsemble
from fairlens.certify._readers import READERS, Reader, read_model
from tests.contract.certify.test_engine_layout import PKG


def test_readers_are_keyed_on_the_model_type():
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

    from tests.contract.certify.test_boosted import _data

    X, y = _data(0)
    rf = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    gb = GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    assert all(isinstance(r, Reader) for r in READERS)
    ff, bm = read_model(rf), read_model(gb)
    assert type(ff) is TreeEnsemble and type(bm) is TreeEnsemble  # one representation
    assert (ff.vote, bm.vote) == ("soft", "additive")
    assert read_model(ff) is ff and read_model(bm) is bm

    class MyForest(RandomForestClassifier):  # a subclass is read by its parent's reader
        pass

    assert read_model(MyForest(n_estimators=2, random_state=0).fit(X, y)).vote == "soft"

    class XGBClassifier:  # a class *named* like a supported one is not read: the type decides
        classes_ = np.array([0, 1])

    XGBClassifier.__module__ = "xgboost.sklearn"
    with pytest.raises(TypeError, match="model must be"):
        read_model(XGBClassifier())
    with pytest.raises(ValueError, match="vote and tie_class"):
        read_model(gb, vote="soft")
    with pytest.raises(TypeError, match="regress"):
        from sklearn.ensemble import RandomForestRegressor

        read_model(RandomForestRegressor(n_estimators=2).fit(X, y))


def test_shapes_are_checked_before_the_boosted_kernels():
    import dataclasses

    import numpy as np
    from sklearn.ensemble import GradientBoostingClassifier

    from fairlens.certify import certify
    from tests.contract.certify.test_boosted import _data

    X, y = _data(0)
    bm = read_model(GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y))
    broken = dataclasses.replace(bm)
    broken.group = bm.group[:-1].copy()  # one tree short: a kernel would read past the end
    with pytest.raises(ValueError, match="group"):
        certify(broken, X[:5], y[:5])
    broken = dataclasses.replace(bm)
    broken.left = bm.left.astype(np.int32)
    with pytest.raises(ValueError, match="left"):
        certify(broken, X[:5], y[:5])


def _stump(missing_left, value, leaf_class=None):
    from fairlens.certify._flat import FlatEnsemble

    lc = np.zeros(3, np.int64) if leaf_class is None else leaf_class
    K = 2
    return FlatEnsemble(feature=np.array([0, -1, -1]), threshold=np.array([0.5, 0.0, 0.0]), left=np.array([1, -1, -1]),
                        right=np.array([2, -1, -1]), missing_left=np.array([missing_left, False, False]),
                        roots=np.array([0]), leaf_class=lc, value=value, group=np.array([1]), base=np.zeros(K),
                        rank=np.arange(K), tmax=np.zeros((0, 0, 0)), vmin=np.zeros(1), vmax=np.zeros(1), f32=False,
                        tol=0.0, tol_b=0.0, values_ptr=np.zeros(2, np.int64), values=np.zeros(0))


@pytest.mark.parametrize("missing_left", [True, False])
def test_the_one_tree_walk_routes_nan_by_missing_left(missing_left):
    """NaN follows each node's ``missing_left`` in the one tree walk (``_walk.leaf``) of every kernel; finite
    values compare ``x <= threshold`` as before."""
    from fairlens.certify import _votes, _walk

    X = np.array([[np.nan], [0.5], [0.6]])
    nan_leaf = 1 if missing_left else 2
    hard = _stump(missing_left, np.zeros((3, 2)), leaf_class=np.array([0, 0, 1]))
    assert _walk.leaf_classes(hard, X)[:, 0].tolist() == [0 if missing_left else 1, 0, 1]
    soft = _stump(missing_left, np.array([[0.0, 0.0], [0.9, 0.1], [0.2, 0.8]]))
    assert _votes.soft_proba(soft, X)[0].tolist() == soft.value[nan_leaf].tolist()
    boost = _stump(missing_left, np.array([[0.0], [-1.5], [2.5]]))
    assert _walk.leaf_values(boost, X)[:, 0].tolist() == [boost.value[nan_leaf, 0], -1.5, 2.5]
    assert _votes.raw_scores(boost, X)[:, 1].tolist() == [boost.value[nan_leaf, 0], -1.5, 2.5]
    ptr, trees = _walk.instance_sets(hard, X[0], 1)  # the instance's path: S_0^+ (left) or S_0^- (right)
    assert (ptr[1] - ptr[0], ptr[2] - ptr[1]) == ((1, 0) if missing_left else (0, 1))


def test_readers_record_missing_directions_in_node_order():
    from sklearn.ensemble import RandomForestClassifier

    from fairlens.certify import flatten_forest
    from tests.contract.certify.test_boosted import _data, _fit

    X, y = _data(0)
    rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    ff = flatten_forest(rf)
    want = np.concatenate([np.asarray(getattr(t.tree_, "missing_go_to_left", np.zeros(t.tree_.node_count)),
                                      dtype=bool) for t in rf.estimators_])
    assert ff.missing_left.dtype == np.bool_ and np.array_equal(ff.missing_left, want)
    assert ff.flat().missing_left is ff.missing_left
    model = _fit("gb", 2)[0]
    bm = read_model(model)
    assert bm.flat().missing_left is bm.missing_left


def test_one_driver_one_predictor_one_representation():
    """One certification driver, one predictor, one representation: no per-family drivers, predictors,
    representations or ``encode_y``; the predictor does not branch on the decision rule (the rules differ
    only by the rule object handed to the kernels, and by its ``replay``/``covers``/``integer``/``literal``)."""
    import fairlens.certify._certify as C
    from fairlens.certify._predictors import Predictor

    for gone in ("_flatten", "_boosted", "_missing", "_families", "_readers/_forests", "_readers/_boosted_libs"):
        assert not (PKG / f"{gone}.py").exists(), gone
    for gone in ("_certify_forest", "_run_forest", "_run_boosted", "_engine", "_boosted_covers"):
        assert not hasattr(C, gone), gone
    classes, encoders = [], []
    for path in PKG.rglob("*.py"):
        for n in ast.walk(ast.parse(path.read_text())):
            if isinstance(n, ast.ClassDef):
                classes.append((path.name, n.name))
            if isinstance(n, ast.FunctionDef) and n.name == "encode_y":
                encoders.append(path.name)
    assert encoders == ["_ensemble.py"]
    assert [c for f, c in classes if f == "_predictors.py"] == ["Predictor"]
    assert [c for f, c in classes if f == "_ensemble.py"] == ["Library", "TreeEnsemble"]
    src = (PKG / "_predictors.py").read_text()
    for mod in ("_certify", "_predictors", "_widget"):
        assert "is_boosted" not in (PKG / f"{mod}.py").read_text()
    consts = {n.value for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert not consts & {"soft", "hard", "additive"}  # no branch on the rule's name
    for proto in ("predict_index", "flb", "elb", "new_state", "brute", "covers", "inputs", "group", "witness"):
        assert callable(getattr(Predictor, proto))


def test_bounds_are_written_once_for_every_decision_rule():
    """FLB (section 4.3) and ELB (4.4) are one skeleton each (in ``_bounds``); the decision rule is an
    argument, a VoteRule whose steps are njit functions, not a branch on the model family."""
    from fairlens.certify._bounds import elb_search, flb_search
    from fairlens.certify._votes import ADDITIVE, HARD, RULES, SOFT, STEPS, VoteRule

    assert set(RULES) == {"hard", "soft", "additive"}
    for rule in (HARD, SOFT, ADDITIVE):
        assert isinstance(rule, VoteRule)
        for step in STEPS:
            assert callable(getattr(rule, step)), (rule, step)
    # the predictors call the one skeleton of each bound once, from their shared base; nothing else does
    src = (PKG / "_predictors.py").read_text()
    assert src.count("call_kernel(_bounds.flb_search") == 1
    assert src.count("call_kernel(_bounds.elb_search") == 1
    base = ast.get_source_segment(src, next(n for n in ast.parse(src).body
                                             if isinstance(n, ast.ClassDef) and n.name == "Predictor"))
    assert "_bounds.flb_search" in base and "_bounds.elb_search" in base
    for path in PKG.glob("*.py"):  # no other module calls or imports them (comments and docs may name them)
        if path.name not in ("_predictors.py", "_bounds.py"):
            names = {getattr(n, "attr", getattr(n, "id", None)) for n in ast.walk(ast.parse(path.read_text()))}
            names |= {a.name for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.ImportFrom)
                      for a in n.names}
            assert not names & {"flb_search", "elb_search"}, path.name
    assert callable(flb_search) and callable(elb_search)


def test_the_exhaustive_search_is_written_once():
    """The exhaustive search (section 4.1) is one skeleton for every decision rule: both predictors call
    it; every kernel and step takes at most ~11 parameters; no kernel module generates code (``exec``) or
    filters numba's warnings."""
    import fairlens.certify._search as S

    src = (PKG / "_predictors.py").read_text()
    assert src.count("call_kernel(_search.brute_search") == 1
    for mod in ("_walk", "_votes", "_bounds", "_search"):
        text = (PKG / f"{mod}.py").read_text()
        assert "exec(" not in text and "filterwarnings" not in text and "overload" not in text, mod
        for n in ast.parse(text).body:
            if isinstance(n, ast.FunctionDef) and any("njit" in ast.unparse(d) for d in n.decorator_list):
                assert len(n.args.args) <= 11, (mod, n.name, len(n.args.args))
    pyproject = (PKG.parents[1] / "pyproject.toml").read_text()
    assert "NumbaIRAssumptionWarning" not in pyproject
    assert callable(S.brute_search)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_rejected_ambiguous_candidates_resume_right_after_themselves(monkeypatch, n_classes):
    """Additive scores: a candidate inside the ambiguity zone goes to the library's ``predict``; a
    rejected one resumes the one search right after itself (its exact state). Widening the zone so
    that the library decides most candidates changes no status and no witness (the first candidate
    in search order that flips ``predict`` is the same), and the cuts change no evaluation count."""
    import dataclasses

    from fairlens.certify import _search, certify
    from tests._support.certify_helpers import check_smallest_first
    from tests.contract.certify.test_boosted import _fit

    model, X, y = _fit("gb", n_classes, n_trees=6)
    bm = read_model(model)
    ref = certify(bm, X, y, budget=2, method="brute")
    wide = dataclasses.replace(bm, tol=0.5)
    starts, ends = [], []
    real = _search.brute_search

    def spy(*args):
        starts.append(int(args[7][0]))  # phase of the state the call resumes from
        out = real(*args)
        n_done = int(out[5])
        ends.append(int(out[1][n_done - 1]) if n_done else -1)  # outcome of the last row it finished
        return out

    monkeypatch.setattr(_search, "brute_search", spy)
    res = certify(wide, X, y, budget=2, method="brute")
    # some calls ended on an ambiguous candidate that the library rejected: the next call resumed
    # inside that candidate's value search
    assert any(e == 2 and s == 2 for e, s in zip(ends, starts[1:]))
    np.testing.assert_array_equal(res.status, ref.status)
    assert res.witnesses.keys() == ref.witnesses.keys()
    for i in ref.witnesses:
        np.testing.assert_array_equal(res.witnesses[i], ref.witnesses[i])
    again = certify(wide, X, y, budget=2, method="brute", chunk_size=1)
    np.testing.assert_array_equal(again.status, res.status)
    assert again.n_evaluations == res.n_evaluations
    # under a limit the smaller budget is searched first (its own candidates, confirmed the same way)
    limited = certify(wide, X, y, budget=2, method="brute", time_limit=1e6)
    np.testing.assert_array_equal(limited.status, res.status)
    check_smallest_first(limited, res, exact_order=False)
    for i, xw in limited.witnesses.items():
        assert model.predict(xw[None, :])[0] != y[i]
