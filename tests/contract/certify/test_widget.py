"""Headless tests of CoverVisualizer: set .value, click, assert on state."""
import sys

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
pytest.importorskip("ipywidgets")

from fairlens.certify import accuracy_under_attack, certify, instance_covers  # noqa: E402


@pytest.fixture(scope="module")
def setup():
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier

    data = load_breast_cancer()
    X, y = data.data, data.target
    idx = np.random.default_rng(0).permutation(len(y))
    X, y = X[idx], y[idx]
    rf = RandomForestClassifier(n_estimators=21, max_depth=3, max_features=1, random_state=0).fit(X[:400], y[:400])
    return rf, X[400:480], y[400:480], list(data.feature_names)


def test_core_import_does_not_import_widgets():
    import subprocess

    code = ("import sys, fairlens.certify as c; assert 'ipywidgets' not in sys.modules; "
            "from fairlens.certify import _bounds, _search, _votes, _walk; "
            "assert all(len(getattr(getattr(K, n), 'signatures', [])) == 0 for K in (_bounds, _search, _votes, _walk) "
            "for n in K.__all__), 'compiled at import'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=sys.path[0] if sys.path[0] else None)


def _w(*a, **k):
    from fairlens.certify import CoverVisualizer

    w = CoverVisualizer(*a, **k)
    w.wait(600)
    return w


def _set(w, **values):
    for k, v in values.items():
        w.controls[k].value = v
    w.wait(600)


def _click(w, name):
    w.controls[name].click()
    w.wait(600)


def test_widget_state_follows_controls(setup):
    rf, X, y, names = setup
    w = _w(rf, X, y, budget=1, feature_names=names)
    assert set(w.controls) >= {"index", "prev", "next", "status", "budget", "summary", "stop"}
    assert w.last_error is None and w.controls["stop"].disabled
    ref1 = certify(rf, X, y, budget=1)
    np.testing.assert_array_equal(w.result.status, ref1.status)
    # navigator
    _click(w, "next")
    assert w.index == 1
    _click(w, "prev")
    assert w.index == 0
    # budget slider recomputes and caches
    _set(w, budget=2)
    ref2 = certify(rf, X, y, budget=2)
    np.testing.assert_array_equal(w.result.status, ref2.status)
    assert w.instance.budget == 2
    assert set(w._cache) == {1, 2}
    # filter by status: the navigator stays inside the filter
    for status in ("attackable", "certified_elb", "robust_brute"):
        if (ref2.status == status).sum() < 2:
            continue
        _set(w, status=status)
        assert w.result.status[w.index] == status
        _click(w, "next")
        assert w.result.status[w.index] == status
    # the instance shown is the one selected, and its covers are those of the core
    _set(w, status="attackable")
    i = w.index
    ic = instance_covers(rf, X[i], y[i], budget=2)
    np.testing.assert_array_equal(w.instance.membership, ic.membership)
    assert "witness" in w.info.value and i in w.result.witnesses
    assert w.snapshot()["detail"]["params"]["witness"] is True


def test_text_and_figures_always_show_one_instance(setup):
    rf, X, y, names = setup
    w = _w(rf, X, y, budget=1, feature_names=names)
    for i in (45, 4, 17, 3, 60, 4):  # quick succession, as a student clicking around
        w.controls["index"].value = i
    w.controls["budget"].value = 2
    w.wait(600)
    snap = w.snapshot()
    for view in ("text", "matrix", "detail"):
        assert snap[view]["params"]["instance"] == 4 and snap[view]["params"]["budget"] == 2, view
    assert "<b>instance 4</b>" in snap["text"]["html"] and "<b>instance 4</b>" in w.info.value
    for view in ("matrix", "detail"):
        assert snap[view]["png"][:4] == b"\x89PNG"
        assert w.images[view].value == snap[view]["png"]  # what the page shows is the snapshot
    assert snap["text"]["params"]["verdict"] == certify(rf, X, y, budget=2).status[4]


def test_widget_summary_and_empty_filter(setup):
    from fairlens.certify import CoverVisualizer

    rf, X, y, names = setup
    w = _w(rf, X, y, budget=1, max_budget=3)
    _click(w, "summary")
    assert w.last_error is None
    ref = accuracy_under_attack(rf, X, y, budgets=(1, 2, 3))
    np.testing.assert_allclose(w.summary_frame["accuracy_exact"], ref["accuracy_exact"])
    np.testing.assert_allclose(w.summary_frame["accuracy_flb"], ref["accuracy_flb"])
    assert w.progress.value == 3
    assert w.snapshot()["summary"]["params"]["budgets"] == [1, 2, 3]
    # a filter no instance matches shows a message, not a traceback
    empty = [s for s in ("not_certified", "misclassified", "attackable", "certified_elb", "robust_brute",
                         "certified_flb") if (w.result.status == s).sum() == 0]
    if empty:
        _set(w, status=empty[0])
        snap = w.snapshot()
        assert w.last_error is None and "Traceback" not in w.error_html.value
        assert "No instance has status" in snap["text"]["html"]
        assert snap["matrix"]["params"]["instance"] is None and snap["matrix"]["png"][:4] == b"\x89PNG"
    with pytest.raises(ValueError, match="budget"):
        CoverVisualizer(rf, X, y, budget=5, max_budget=3)
    with pytest.raises(ValueError, match="columns"):
        CoverVisualizer(rf, X[:, :3], y)


def test_widget_multiclass_and_fpf():
    from sklearn.datasets import load_wine
    from sklearn.ensemble import RandomForestClassifier

    from fairlens.certify import FeaturePartitionedForest

    X, y = load_wine(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=9, max_depth=3, random_state=0).fit(X[::2], y[::2])
    w = _w(rf, X[1::2], y[1::2], budget=1, max_budget=2)
    for _ in range(5):
        _click(w, "next")
        assert w.last_error is None
    _set(w, budget=2)
    assert w.last_error is None
    np.testing.assert_array_equal(w.result.status, certify(rf, X[1::2], y[1::2], budget=2).status)
    fpf = FeaturePartitionedForest(budget=1, rounds=3, random_state=0).fit(X[::2], (y[::2] == 0).astype(int))
    w2 = _w(fpf, X[1::2], (y[1::2] == 0).astype(int), budget=1)
    _set(w2, status="certified_flb")
    assert w2.last_error is None and w2.result.status[w2.index] == "certified_flb"
    assert "FLB certifies" in w2.info.value


def test_dataframe_is_aligned_and_soft_vote_text():
    """A reordered DataFrame shows the same instances; the text speaks of a margin under the
    soft vote of a scikit-learn forest (what its predict does), of trees under the hard vote."""
    import pandas as pd
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier

    from fairlens.certify import CoverVisualizer

    data = load_breast_cancer(as_frame=True)
    X, y = data.data.iloc[:80], data.target.iloc[:80].to_numpy()
    rf = RandomForestClassifier(n_estimators=8, max_depth=3, random_state=0).fit(X, y)
    rev = X[X.columns[::-1]]
    a = CoverVisualizer(rf, X, y, background=False)
    b = CoverVisualizer(rf, rev, y, background=False)
    np.testing.assert_array_equal(a.X, b.X)
    assert a.result.vote == "soft"
    assert a.last_error is None
    hard = CoverVisualizer(rf, pd.DataFrame(X), y, background=False, vote="hard")
    assert hard.result.vote == "hard"
    soft_text, hard_text = a.snapshot()["text"]["html"], hard.snapshot()["text"]["html"]
    assert "certified vote: soft" in soft_text and "certified vote: hard" in hard_text
    if a.instance.correct:
        assert "margin delta" in soft_text and "trees to change" in hard_text
