"""Headless tests of ShuffleAttackExplorer: set control values, click, read state."""
import time

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
import matplotlib

matplotlib.use("Agg")

from fairlens.shuffle import ShuffledModel  # noqa: E402

NAMES = ["gre", "toefl", "rating", "research"]


def f(A):
    return np.asarray(A, dtype=float)[:, :3].mean(axis=1)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    n = 80
    X = np.column_stack([rng.random(n), rng.random(n), rng.random(n), rng.integers(0, 2, n)])
    y = (f(X) > 0.5).astype(int)
    return X, y


def make(data, **kw):
    from fairlens.shuffle import ShuffleAttackExplorer

    X, y = data
    kw.setdefault("use_threads", False)
    return ShuffleAttackExplorer(f, X, protected="research", favoured=1, y=y,
                                 feature_names=NAMES, n_explain=3, nsamples=60, **kw)


def test_lazy_import_does_not_pull_widgets():
    import subprocess
    import sys

    code = "import fairlens.shuffle, sys; print('ipywidgets' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_controls_and_initial_state(data):
    w = make(data)
    assert {"attack", "bottom_attack", "p", "quantile", "region", "mixing_rule", "threshold",
            "run_shap", "run_lime", "stop"} <= set(w.controls)
    assert w.controls["p"].continuous_update is False
    r = w.result
    assert r["params"]["attack"] == "swapping"
    assert set(r["attributions"]["explainer"]) == {"linear"}
    assert r["fairness"] is not None and "before" in r["fairness"].columns
    assert w.last_error is None


def test_sliders_drive_the_core(data):
    X, y = data
    w = make(data)
    w.controls["attack"].value = "dominance"
    b = w.result["batch"]
    assert b.scores_after[b.favoured].min() > b.scores_after[~b.favoured].max()
    w.controls["attack"].value = "mixing"
    w.controls["p"].value = 1.0
    np.testing.assert_array_equal(w.result["batch"].scores_after, b.scores_after)
    w.controls["p"].value = 0.6
    expected = ShuffledModel(f, 3, 1, attack="mixing", p=0.6, random_state=0)(X)
    np.testing.assert_array_equal(w.result["batch"].scores_after, expected)
    # linear SHAP view equals Eq. 15 on the explained rows
    lin = w.result["attributions"].set_index("feature").loc["research", "mean_abs"]
    twin = ShuffledModel(f, 3, 1, attack="mixing", p=0.6, random_state=0)
    assert lin == pytest.approx(np.abs(twin(X[:3]) - f(X[:3])).mean())
    # hybrid + region
    w.controls["bottom_attack"].value = "none"
    assert w.result["params"]["attack"] == "mixing+none"
    w.controls["region"].value = 0.5
    assert w.result["params"]["region"] == 0.5
    # fairness follows the threshold slider
    w.controls["attack"].value = "dominance"
    w.controls["bottom_attack"].value = "(no hybrid)"
    w.controls["region"].value = 1.0
    w.controls["threshold"].value = 0.6
    fair = w.result["fairness"].set_index("metric")
    pred = (ShuffledModel(f, 3, 1)(X) >= 0.6)
    rates = [pred[X[:, 3] == g].mean() for g in (0, 1)]
    assert fair.loc["demographic_parity_difference", "after"] == pytest.approx(abs(rates[1] - rates[0]))
    assert w.result["update_ms"] > 0


def test_run_lime_is_cached_per_parameter(data):
    w = make(data)
    w.controls["attack"].value = "dominance"
    w.controls["run_lime"].click()
    assert w.last_error is None
    att = w.result["attributions"]
    assert set(att["explainer"]) == {"linear", "lime"}
    n_cache = len(w.cache)
    w.controls["run_lime"].click()  # same parameters: served from cache
    assert len(w.cache) == n_cache and "cached" in w.status.value
    w.controls["attack"].value = "swapping"  # other parameters: no LIME yet
    assert set(w.result["attributions"]["explainer"]) == {"linear"}
    w.controls["attack"].value = "dominance"  # back: cached LIME reappears
    assert set(w.result["attributions"]["explainer"]) == {"linear", "lime"}
    assert w.progress.value == 1.0


def test_stop_interrupts_background_run(data):
    X, y = data
    from fairlens.shuffle import ShuffleAttackExplorer

    def slow(A):
        time.sleep(0.3)
        return f(A)

    w = ShuffleAttackExplorer(slow, X, protected=3, favoured=1, feature_names=NAMES, n_explain=4,
                              nsamples=30, use_threads=True)
    w.controls["run_lime"].click()
    w.controls["stop"].click()
    w.wait(30)
    assert "stopped" in w.status.value
    assert not any(e == "lime" for (_, e) in w.cache)


def test_errors_are_shown_not_swallowed(data):
    X, y = data
    from fairlens.shuffle import ShuffleAttackExplorer

    def picky(A):
        if len(A) != len(X):
            raise RuntimeError("scorer only accepts the full batch")
        return f(A)

    w = ShuffleAttackExplorer(picky, X, protected=3, favoured=1, feature_names=NAMES,
                              n_explain=2, nsamples=20, use_threads=False)
    w.controls["run_lime"].click()
    assert w.last_error is not None and "full batch" in w.last_error
    assert "full batch" in w.status.value
    assert any("full batch" in o.get("text", "") for o in w.out_msg.outputs)


def test_bad_construction(data):
    X, y = data
    from fairlens.shuffle import ShuffleAttackExplorer

    with pytest.raises(ValueError, match="feature_names|not"):
        ShuffleAttackExplorer(f, X, protected="sex", favoured=1, feature_names=NAMES)
    with pytest.raises(ValueError, match="do not occur"):
        ShuffleAttackExplorer(f, X, protected=3, favoured=5)
    with pytest.raises(ValueError, match="rows"):
        ShuffleAttackExplorer(f, X, protected=3, favoured=1, y=y[:5])


def test_dataframe_input_and_shuffled_model_argument(data):
    import pandas as pd
    from fairlens.shuffle import ShuffleAttackExplorer

    X, y = data
    df = pd.DataFrame(X, columns=NAMES)
    base = ShuffledModel(lambda A: np.asarray(A)[:, :3].mean(1), "research", 1)  # callables get arrays
    w = ShuffleAttackExplorer(base, df, y=y, n_explain=3, nsamples=40, use_threads=False)
    assert w.feature_names == NAMES and w.last_error is None
    w.controls["attack"].value = "dominance"
    b = w.result["batch"]
    assert b.scores_after[b.favoured].min() > b.scores_after[~b.favoured].max()
    w.controls["run_lime"].click()
    assert w.last_error is None
    lime = w.result["attributions"].query("explainer == 'lime'").set_index("feature")
    assert lime["mean_abs"].idxmax() == "research"  # Dominance makes Research dominate LIME
