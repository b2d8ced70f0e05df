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
    w = ShuffleAttackExplorer(f, X, protected="research", favoured=1, y=y,
                              feature_names=NAMES, n_explain=3, nsamples=60, **kw)
    w.wait(300)
    return w


def set_and_wait(w, **values):
    for k, v in values.items():
        w.controls[k].value = v
    w.wait(300)
    return w.result


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
    assert w.controls["stop"].disabled  # only while something runs
    r = w.result
    assert r["params"]["attack"] == "swapping"
    assert set(r["attributions"]["explainer"]) == {"linear"}
    assert r["fairness"] is not None and "before" in r["fairness"].columns
    assert w.last_error is None
    snap = w.snapshot()
    assert set(snap) == {"scores", "attributions", "fairness"}
    for v in snap.values():
        assert v["png"][:4] == b"\x89PNG" and v["params"]["attack"] == "swapping"
    # every control has a full label and a tooltip
    for k, c in w.controls.items():
        assert c.tooltip, k


def test_controls_that_do_not_apply_are_disabled(data):
    w = make(data)
    c = w.controls
    assert c["p"].disabled and c["mixing_rule"].disabled and not c["quantile"].disabled
    assert c["region"].disabled
    c["attack"].value = "mixing"
    assert not c["p"].disabled and c["quantile"].disabled
    c["bottom_attack"].value = "swapping"
    assert not c["region"].disabled and not c["quantile"].disabled
    w.wait(300)


def test_fast_changes_end_on_the_final_state(data):
    w = make(data)
    c = w.controls
    for a in ["dominance", "mixing", "swapping", "dominance", "mixing"]:
        c["attack"].value = a
    for p in (0.1, 0.3, 0.55):
        c["p"].value = p
    c["threshold"].value = 0.4
    w.wait(300)
    want = w.params()
    assert want["attack"] == "mixing" and want["p"] == 0.55
    for name, v in w.snapshot().items():
        got = {k: v["params"][k] for k in want}
        assert got == want, name
        assert v["params"]["threshold"] == 0.4
    assert w.result["params"] == want


def test_sliders_drive_the_core(data):
    X, y = data
    w = make(data)
    b = set_and_wait(w, attack="dominance")["batch"]
    assert b.scores_after[b.favoured].min() > b.scores_after[~b.favoured].max()
    r = set_and_wait(w, attack="mixing", p=1.0)
    np.testing.assert_array_equal(r["batch"].scores_after, b.scores_after)
    r = set_and_wait(w, p=0.6)
    expected = ShuffledModel(f, protected=3, favoured=1, attack="mixing", p=0.6, random_state=0)(X)
    np.testing.assert_array_equal(r["batch"].scores_after, expected)
    # linear SHAP view equals Eq. 15 on the explained rows
    lin = r["attributions"].set_index("feature").loc["research", "mean_abs"]
    twin = ShuffledModel(f, protected=3, favoured=1, attack="mixing", p=0.6, random_state=0)
    assert lin == pytest.approx(np.abs(twin(X[:3]) - f(X[:3])).mean())
    # hybrid + region
    assert set_and_wait(w, bottom_attack="none")["params"]["attack"] == "mixing+none"
    assert set_and_wait(w, region=0.5)["params"]["region"] == 0.5
    # fairness follows the threshold slider
    r = set_and_wait(w, attack="dominance", bottom_attack="(no hybrid)", region=1.0, threshold=0.6)
    fair = r["fairness"].set_index("metric")
    pred = (ShuffledModel(f, protected=3, favoured=1)(X) >= 0.6)
    rates = [pred[X[:, 3] == g].mean() for g in (0, 1)]
    assert fair.loc["demographic_parity_difference", "after"] == pytest.approx(abs(rates[1] - rates[0]))
    assert r["update_ms"] > 0


def test_finished_shap_run_shows_up(data):
    w = make(data)
    w.controls["attack"].value = "dominance"
    w.controls["run_shap"].click()
    w.wait(600)
    assert w.last_error is None
    p = w.snapshot()["attributions"]["params"]
    assert p["attack"] == "dominance" and p["explainers"] == ["linear", "shap"]
    assert "shap" in w.status_html.value
    assert w.controls["stop"].disabled and not w.controls["run_shap"].disabled


def test_run_lime_is_cached_per_parameter(data):
    w = make(data)
    w.controls["attack"].value = "dominance"
    w.controls["run_lime"].click()
    w.wait(600)
    assert w.last_error is None
    att = w.result["attributions"]
    assert set(att["explainer"]) == {"linear", "lime"}
    n_cache = len(w.cache)
    w.controls["run_lime"].click()  # same parameters: served from cache
    w.wait(300)
    assert len(w.cache) == n_cache and "cached" in w.status_html.value
    assert set(set_and_wait(w, attack="swapping")["attributions"]["explainer"]) == {"linear"}
    assert set(set_and_wait(w, attack="dominance")["attributions"]["explainer"]) == {"linear", "lime"}
    assert w.progress.value == 1.0


def test_stop_interrupts_and_keeps_what_was_found(data):
    import threading

    X, y = data
    from fairlens.shuffle import ShuffleAttackExplorer

    gate = threading.Event()
    slow_now = [False]

    def slow(A):
        if slow_now[0]:
            time.sleep(0.1)
        return f(A)

    w = ShuffleAttackExplorer(slow, X, protected=3, favoured=1, feature_names=NAMES, n_explain=20,
                              nsamples=30)
    w.wait(300)
    slow_now[0] = True
    w.progress.observe(lambda ch: gate.set() if ch["new"] > 0 else None, names="value")
    w.controls["run_lime"].click()
    assert not w.controls["stop"].disabled
    assert gate.wait(300)
    w.controls["stop"].click()
    assert "stopping" in w.status_html.value
    w.wait(300)
    assert "stopped" in w.status_html.value
    assert not any(e == "lime" for (_, e) in w.cache)
    shown = w.snapshot()["attributions"]["params"]["explainers"]
    assert any(e.startswith("lime (stopped") for e in shown)
    assert w.controls["stop"].disabled


def test_errors_are_shown_not_swallowed(data):
    X, y = data
    from fairlens.shuffle import ShuffleAttackExplorer

    def picky(A):
        if len(A) != len(X):
            raise RuntimeError("scorer only accepts the full batch")
        return f(A)

    w = ShuffleAttackExplorer(picky, X, protected=3, favoured=1, feature_names=NAMES,
                              n_explain=2, nsamples=20)
    w.wait(300)
    w.controls["run_lime"].click()
    w.wait(300)
    assert w.last_error is not None and "full batch" in w.last_error
    assert "full batch" in w.error_html.value
    # errors replace each other, they do not pile up
    w.controls["run_lime"].click()
    w.wait(300)
    assert w.error_html.value.count("full batch") == 1


def test_wait_timeout_names_pending(data):
    X, y = data
    from fairlens.shuffle import ShuffleAttackExplorer

    def slow(A):
        time.sleep(0.2)
        return f(A)

    w = ShuffleAttackExplorer(slow, X, protected=3, favoured=1, feature_names=NAMES, n_explain=5,
                              nsamples=30)
    w.wait(300)
    w.controls["run_lime"].click()
    with pytest.raises(TimeoutError, match="lime"):
        w.wait(0.01)
    w.stop()
    w.wait(300)


def test_synchronous_mode(data):
    w = make(data, background=False)
    w.controls["attack"].value = "dominance"
    assert w.snapshot()["scores"]["params"]["attack"] == "dominance"  # no wait needed


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
    # callables receive the encoded ndarray (fairlens.models protocol), not the frame
    base = ShuffledModel(lambda A: np.asarray(A, dtype=float)[:, :3].mean(1), protected="research", favoured=1)
    w = ShuffleAttackExplorer(base, df, y=y, n_explain=3, nsamples=40)
    w.wait(300)
    assert w.feature_names == NAMES and w.last_error is None
    b = set_and_wait(w, attack="dominance")["batch"]
    assert b.scores_after[b.favoured].min() > b.scores_after[~b.favoured].max()
    w.controls["run_lime"].click()
    w.wait(600)
    assert w.last_error is None
    lime = w.result["attributions"].query("explainer == 'lime'").set_index("feature")
    assert lime["mean_abs"].idxmax() == "research"  # Dominance makes Research dominate LIME


def test_fairness_plot_separates_ratios_and_shows_nan():
    import pandas as pd
    from matplotlib.figure import Figure

    from fairlens.shuffle import plots

    df = pd.DataFrame({"metric": ["demographic_parity_difference", "equal_opportunity_difference",
                                  "disparate_impact_ratio"],
                       "before": [0.1, np.nan, 0.8], "after": [0.3, 0.2, np.nan]})
    fig = Figure()
    ax = fig.subplots()
    plots.plot_fairness(df, ax=ax)
    axes = fig.axes
    assert len(axes) == 2  # differences and the ratio on separate axes
    assert len(axes[0].patches) == 4 and len(axes[1].patches) == 2
    assert [t.get_text() for t in axes[1].get_xticklabels()] == ["disparate impact ratio"]
    # every NaN is written where its bar would be, not dropped silently
    nan_labels = [t for a in axes for t in a.texts if t.get_text() == "NaN"]
    assert len(nan_labels) == int(df[["before", "after"]].isna().sum().sum()) == 2


def test_update_draw_false_computes_the_numbers_without_drawing(data):
    """update(draw=...) does what it says: draw=False recomputes the result (the same numbers as a
    redraw and as the core) and leaves the figures alone; draw=True redraws them."""
    X, y = data
    w = make(data)
    w.update()
    before = w.snapshot()
    png = w.snapshot()["scores"]["png"]
    for k in ("attack", "p"):
        w.controls[k].unobserve_all()  # a script driving the core alone: no automatic redraw
    w.controls["attack"].value = "mixing"
    w.controls["p"].value = 0.6
    r = w.update(draw=False)
    assert r["params"]["attack"] == "mixing" and r["params"]["p"] == 0.6 and r["update_ms"] > 0
    np.testing.assert_array_equal(r["batch"].scores_after,
                                  ShuffledModel(f, protected=3, favoured=1, attack="mixing", p=0.6, random_state=0)(X))
    assert w.snapshot()["scores"]["params"] == before["scores"]["params"]  # not redrawn
    assert w.snapshot()["scores"]["png"] == png
    r2 = w.update(draw=True)
    assert w.snapshot()["scores"]["params"]["attack"] == "mixing"  # redrawn now
    np.testing.assert_array_equal(r2["batch"].scores_after, r["batch"].scores_after)
    pd_testing = pytest.importorskip("pandas").testing
    pd_testing.assert_frame_equal(r2["fairness"], r["fairness"])
    with pytest.raises(TypeError, match="draw"):
        w.update(draw="no")


def test_run_explainer_block_waits_and_arguments_are_checked(data):
    w = make(data)
    w.controls["attack"].value = "dominance"
    w.wait(300)
    w.run_explainer("kernel", block=True)  # background widget: done when this returns
    assert not w.running and w.last_error is None
    assert any(name == "kernel" for _, name in w.cache)
    assert "kernel" in w.snapshot()["attributions"]["params"]["explainers"]
    with pytest.raises(ValueError, match="name must be one of 'shap', 'lime', 'kernel'; got 'limee'"):
        w.run_explainer("limee")
    with pytest.raises(TypeError, match="block"):
        w.run_explainer("shap", block=None)
