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
            "from fairlens.certify import _kernels as K; "
            "assert all(len(getattr(getattr(K, n), 'signatures', [])) == 0 for n in K.__all__), 'compiled at import'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=sys.path[0] if sys.path[0] else None)


def test_widget_state_follows_controls(setup):
    from fairlens.certify import CoverVisualizer

    rf, X, y, names = setup
    w = CoverVisualizer(rf, X, y, budget=1, feature_names=names)
    assert set(w.controls) >= {"index", "prev", "next", "status", "budget", "summary", "stop"}
    assert w.last_error is None
    ref1 = certify(rf, X, y, budget=1)
    np.testing.assert_array_equal(w.result.status, ref1.status)
    # navigator
    w.controls["next"].click()
    assert w.index == 1
    w.controls["prev"].click()
    assert w.index == 0
    # budget slider recomputes and caches
    w.controls["budget"].value = 2
    ref2 = certify(rf, X, y, budget=2)
    np.testing.assert_array_equal(w.result.status, ref2.status)
    assert w.instance.budget == 2
    assert set(w._cache) == {1, 2}
    # filter by status: the navigator stays inside the filter
    for status in ("attackable", "certified_elb", "robust_brute"):
        if (ref2.status == status).sum() < 2:
            continue
        w.controls["status"].value = status
        assert w.result.status[w.index] == status
        w.controls["next"].click()
        assert w.result.status[w.index] == status
    # the instance shown is the one selected, and its covers are those of the core
    w.controls["status"].value = "attackable"
    i = w.index
    ic = instance_covers(rf, X[i], y[i], budget=2)
    np.testing.assert_array_equal(w.instance.membership, ic.membership)
    assert "witness" in w.info.value and i in w.result.witnesses
    w.controls["status"].value = "certified_elb"
    assert "ELB" in w.info.value or w.result.status[w.index] == "certified_elb"


def test_widget_summary_and_errors(setup):
    from fairlens.certify import CoverVisualizer

    rf, X, y, names = setup
    w = CoverVisualizer(rf, X, y, budget=1, max_budget=3)
    w.controls["summary"].click()
    assert w.last_error is None
    ref = accuracy_under_attack(rf, X, y, budgets=(1, 2, 3))
    np.testing.assert_allclose(w.summary_frame["accuracy_exact"], ref["accuracy_exact"])
    np.testing.assert_allclose(w.summary_frame["accuracy_flb"], ref["accuracy_flb"])
    assert w.progress.value == 3
    # an impossible filter shows an error in the widget instead of raising
    w.controls["budget"].value = 1
    if (w.result.status == "not_certified").sum() == 0:
        w.controls["status"].value = "not_certified"
        assert w.last_error is not None and "no instance" in w.last_error
        assert len(w.error.outputs) > 0
    with pytest.raises(ValueError, match="budget"):
        CoverVisualizer(rf, X, y, budget=5, max_budget=3)
    with pytest.raises(ValueError, match="columns"):
        CoverVisualizer(rf, X[:, :3], y)


def test_widget_multiclass_and_fpf():
    from sklearn.datasets import load_wine
    from sklearn.ensemble import RandomForestClassifier

    from fairlens.certify import CoverVisualizer, FeaturePartitionedForest

    X, y = load_wine(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=9, max_depth=3, random_state=0).fit(X[::2], y[::2])
    w = CoverVisualizer(rf, X[1::2], y[1::2], budget=1, max_budget=2)
    for _ in range(5):
        w.controls["next"].click()
        assert w.last_error is None
    w.controls["budget"].value = 2
    assert w.last_error is None
    np.testing.assert_array_equal(w.result.status, certify(rf, X[1::2], y[1::2], budget=2).status)
    fpf = FeaturePartitionedForest(budget=1, rounds=3, random_state=0).fit(X[::2], (y[::2] == 0).astype(int))
    w2 = CoverVisualizer(fpf, X[1::2], (y[1::2] == 0).astype(int), budget=1)
    w2.controls["status"].value = "certified_flb"
    assert w2.last_error is None and w2.result.status[w2.index] == "certified_flb"
    assert "FLB certifies" in w2.info.value
