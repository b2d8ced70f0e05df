"""What every fairlens widget shares (issue 21 item 3, issue 22 items 2-3, issue 23 item 2):
an ipywidgets VBox subclass in ``<slice>/_widget.py`` on ``fairlens._widgets``, the ``background``
thread switch, natural-size figures without overlapping or small text, a projector switch,
export (PNG, CSV/JSON, a code cell that reproduces the numbers headless), a static rendering
for places without a widget frontend, and Stop that frees the widget even if a step hangs."""
import base64
import io
import json
import threading

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")



# ---------------------------------------------------------------- tiny widgets, one per slice
def _shuffle(**kw):
    from fairlens.shuffle import ShuffleAttackExplorer

    rng = np.random.default_rng(0)
    X = rng.random((60, 3))
    X[:, 2] = X[:, 2] > 0.5
    y = (X[:, 0] + 0.1 * rng.standard_normal(60) > 0.5).astype(int)

    def scorer(A):
        return np.asarray(A, dtype=float)[:, :2].mean(axis=1)

    w = ShuffleAttackExplorer(scorer, X, protected=2, favoured=1, y=y, feature_names=["a", "b", "group"],
                              n_explain=5, **kw)
    return w, {"scorer": scorer, "X": X, "y": y}


def _maft(**kw):
    from fairlens.maft import MAFTSession
    from tests._support.maft_toy import SmoothModel, make_toy

    data, model = make_toy(), SmoothModel()
    return MAFTSession(model, data, n_seeds=10, n_local=5, **kw), {"model": model, "data": data}


_SGD = {}


def _testsgd(**kw):
    from types import SimpleNamespace

    from sklearn.linear_model import LogisticRegression

    from fairlens.testsgd import RuleSetBrowser, TestSGD
    from tests._support.testsgd_fixtures import make_toy

    if "report" not in _SGD:
        toy = make_toy()
        model = LogisticRegression(max_iter=500).fit(toy.X, toy.y)
        _SGD["report"] = TestSGD(model, toy, protected=["gender", "race", "age"], theta=0.1, sample_thr=200,
                                 random_state=0).run()
        idx = np.random.default_rng(0).permutation(toy.X.shape[0])
        _SGD["test"] = SimpleNamespace(**{**vars(toy), "X": toy.X[idx[:500]], "y": toy.y[idx[:500]]})
    w = RuleSetBrowser(_SGD["report"], test=_SGD["test"], mitigation_amounts=[50], **kw)
    return w, {"report": _SGD["report"]}


def _certify(**kw):
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier

    from fairlens.certify import CoverVisualizer

    bc = load_breast_cancer()
    X, y = bc.data, bc.target
    rf = RandomForestClassifier(n_estimators=8, max_depth=3, random_state=0).fit(X[:400], y[:400])
    # the long real feature names ("worst concave points"...): labels must still fit
    return (CoverVisualizer(rf, X[400:440], y[400:440], max_budget=2, feature_names=list(bc.feature_names), **kw),
            {"model": rf, "X": X[400:440], "y": y[400:440]})


BUILDERS = {"shuffle": _shuffle, "maft": _maft, "testsgd": _testsgd, "certify": _certify}


@pytest.fixture(params=list(BUILDERS))
def made(request):
    w, env = BUILDERS[request.param](background=False)
    w.wait(300)
    return request.param, w, env


def _png_size(png):
    from PIL import Image

    return Image.open(io.BytesIO(png)).size


@pytest.mark.parametrize("name", list(BUILDERS))
def test_use_threads_the_old_name_of_background_is_a_type_error_naming_it(name):
    with pytest.raises(TypeError, match=r": use_threads= was renamed background=; pass background="):
        BUILDERS[name](use_threads=False)
    with pytest.raises(TypeError, match="use_threads= was renamed background="):
        BUILDERS[name](background=False, use_threads=False)
    with pytest.raises(TypeError, match="fairlens_unknown_kw"):
        BUILDERS[name](fairlens_unknown_kw=1)


def test_shuffle_background_data_under_its_old_spelling_is_a_type_error_naming_background_data():
    from fairlens.shuffle import ShuffleAttackExplorer

    X = np.random.default_rng(1).random((30, 3))
    X[:, 2] = X[:, 2] > 0.5
    with pytest.raises(TypeError, match=r"background= is the thread switch.*background_data="):
        ShuffleAttackExplorer(lambda A: A[:, 0], X, protected=2, favoured=1, background=X[:10])
    w = ShuffleAttackExplorer(lambda A: A[:, 0], X, protected=2, favoured=1, background_data=X[:10])
    w.wait(60)
    assert w.background is True and w.background_data.shape == (10, 3)


# ---------------------------------------------------------------- lecture hall
def test_figures_are_shown_at_natural_size_at_2x_density(made):
    _, w, _ = made
    shown = 0
    for name, img in w.images.items():
        if not img.value:
            continue
        pw, ph = _png_size(img.value)
        assert img.layout.width == f"{pw / 2:g}px" and img.layout.height == f"{ph / 2:g}px", name
        assert pw / 2 <= 800, f"{name}: {pw / 2} CSS px is wider than the notebook column at 1280x720"
        shown += 1
    assert shown >= 1


# ---------------------------------------------------------------- export
def _run_code(code, env):
    ns = dict(env)
    exec(compile(code, "<export>", "exec"), ns)  # noqa: S102 - the exported cell itself
    return ns


def test_export_gives_png_numbers_and_code_that_reproduces_them(made, tmp_path):
    name, w, env = made
    if name == "maft":
        w.start()
        w.wait(300)
    out = w.export(tmp_path / "ex")
    assert out["png"][:8] == b"\x89PNG\r\n\x1a\n"
    frame = pd.read_csv(io.StringIO(out["csv"]))
    assert len(frame) == len(out["frame"]) > 0
    payload = json.loads(out["json"])
    assert payload["widget"] == type(w).__name__ and len(payload["numbers"]) == len(frame)
    assert set(out["files"]) == {"png", "csv", "json", "py"}
    ns = _run_code(out["code"], env)
    if name == "shuffle":
        assert ns["batch"].n_events == w.result["batch"].n_events
        np.testing.assert_allclose(np.abs(ns["exact"]).mean(axis=0),
                                   out["frame"].query("view == 'attributions' and explainer == 'linear'")
                                   ["mean_abs"].to_numpy(), rtol=1e-9)
    elif name == "maft":
        assert ns["results"]["MAFT"].n_instances == w.results["MAFT"].n_instances == \
            int(frame.loc[frame.method == "MAFT", "n_instances"].iloc[0])
    elif name == "testsgd":
        assert list(ns["frame"].head(w.max_rows)["rule_set"]) == list(frame["rule_set"])
    else:
        np.testing.assert_array_equal(np.asarray(ns["res"].status).astype(str),
                                      frame.loc[frame.view == "instances", "status"].to_numpy())


def test_export_button_offers_download_links(made):
    _, w, _ = made
    w.controls["export"].click()
    h = w.export_html.value
    assert "download=" in h and "data:image/png;base64," in h and "data:text/csv;base64," in h
    assert "<pre" in h


# ---------------------------------------------------------------- without a frontend
def test_static_rendering_next_to_the_widget_view(made):
    _, w, _ = made
    bundle = w._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    png = base64.b64decode(bundle["image/png"])
    assert png[:4] == b"\x89PNG"
    assert "<img" in bundle["text/html"] and "static snapshot" in bundle["text/html"]


# ---------------------------------------------------------------- Stop
def test_stop_frees_the_widget_even_if_the_step_under_way_hangs():
    w, _ = _shuffle(background=True)
    w.wait(120)
    release, wrote = threading.Event(), []

    def job(stop):
        release.wait(60)  # a step that ignores Stop (a model call, a SHAP row...)
        with w._committing(stop) as keep:
            if keep:
                wrote.append(1)

    import time

    w._start_job("slow step", job)
    assert w.running
    w.stop()
    deadline = time.monotonic() + 30
    while w.running and time.monotonic() < deadline:  # idle once detached (STOP_GRACE_S), step still hangs
        time.sleep(0.02)
    assert not w.running and "stopped" in w._status_text and not release.is_set()
    assert not w.controls["run_shap"].disabled and w.controls["stop"].disabled
    w._start_job("next", lambda stop: None)  # the widget accepts new work at once
    release.set()
    w.wait(30)  # wait() also waits for the detached thread
    assert wrote == []  # a newer job started: what the detached step would have written is discarded


def test_a_detached_job_still_delivers_when_nothing_newer_started():
    w, _ = _shuffle(background=True)
    w.wait(120)
    release, wrote = threading.Event(), []

    def job(stop):
        release.wait(60)
        with w._committing(stop) as keep:
            if keep:
                wrote.append(1)

    w._start_job("slow step", job)
    w.stop()
    import time

    deadline = time.monotonic() + 30
    while w.running and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not w.running
    release.set()
    w.wait(30)
    assert wrote == [1]  # Stop keeps what was found, even if it arrives late
