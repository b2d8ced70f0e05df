"""MAFTSession driven headless through .controls, wait() and snapshot()."""
import threading

import numpy as np
import pytest

pytest.importorskip("ipywidgets")

from fairlens.maft import MAFT, MAFTSession  # noqa: E402
from tests._support.maft_oracle import check_result  # noqa: E402


def test_controls_and_headless_run(toy, smooth):
    s = MAFTSession(smooth, toy, n_seeds=20, n_local=20)
    for name in ("methods", "h", "n_seeds", "n_local", "max_iter", "random_state", "start", "stop",
                 "progress_global", "progress_local", "status"):
        assert name in s.controls
    assert s.controls["stop"].disabled  # enabled only while something runs
    s.controls["methods"].value = ("MAFT", "AEQUITAS")
    s.controls["h"].value = 1.0
    s.controls["random_state"].value = 3
    s.controls["start"].click()
    s.wait(300)
    assert s.error is None, s.error
    assert set(s.results) == {"MAFT", "AEQUITAS"}
    res = s.results["MAFT"]
    direct = MAFT(smooth, toy, h=1.0, n_seeds=20, n_local=20, random_state=3).run()
    np.testing.assert_array_equal(res.instances, direct.instances)  # same numbers as the core
    check_result(smooth, res, [1, 2], toy.bounds)
    assert "done" in s.controls["status"].value
    assert not s.controls["start"].disabled and s.controls["stop"].disabled
    snap = s.snapshot()
    # one tab per method: both methods shown, for this run's parameters
    for m in ("MAFT", "AEQUITAS"):
        p = snap[f"projection:{m}"]["params"]
        assert p["shown"] and p["random_state"] == 3 and p["n_instances"] == s.results[m].n_instances
        assert snap[f"projection:{m}"]["png"][:4] == b"\x89PNG"
        assert "fl-changed" in snap[f"pairs:{m}"]["html"] or s.results[m].n_instances == 0
    assert snap["timeline"]["params"]["methods_shown"] == ["AEQUITAS", "MAFT"]
    assert not snap["projection:ADF"]["params"]["shown"]
    # a new run clears the previous run's projection and table
    s.controls["methods"].value = ("AEQUITAS",)
    s.controls["start"].click()
    s.wait(300)
    snap = s.snapshot()
    assert not snap["projection:MAFT"]["params"]["shown"]
    assert snap["projection:AEQUITAS"]["params"]["run"] == 2
    # cached per parameter value: a third start returns the very same object
    s.controls["methods"].value = ("MAFT",)
    s.controls["start"].click()
    s.wait(300)
    assert s.results["MAFT"] is res


def test_pairs_view_highlights_the_changed_attribute(toy, smooth):
    s = MAFTSession(smooth, toy, n_seeds=20, n_local=5)
    s.controls["start"].click()
    s.wait(300)
    res = s.results["MAFT"]
    html = s.snapshot()["pairs:MAFT"]["html"]
    assert res.n_instances > 0
    # every highlighted cell is a feature where x and x' differ: count them independently
    fr = res.to_frame(max_rows=6)
    feats = [c for (g, c) in fr.columns if g == "x"]
    n_diff = sum(str(fr[("x", f)].iloc[k]) != str(fr[("x'", f)].iloc[k]) for k in range(len(fr)) for f in feats)
    assert html.count("class='fl-changed'") == n_diff > 0


def test_stop_keeps_found(toy, smooth):
    s = MAFTSession(smooth, toy, n_seeds=40, n_local=100000, live_plot_interval=0.05)
    started = threading.Event()
    orig = s._on_step

    def spy(m, st, stop):
        if st["phase"] == "local" and st["step"] >= 5:
            started.set()
        orig(m, st, stop)

    s._on_step = spy
    s.controls["start"].click()
    assert started.wait(300)
    assert not s.controls["stop"].disabled
    s.controls["stop"].click()
    # at once a stop state: "stopping", or already "stopped" when the run saw the stop between
    # the click and this line (it checks after every step)
    assert any(w in s.controls["status"].value for w in ("stopping", "stopped"))
    s.wait(300)
    res = s.result
    assert res.stopped and res.n_instances >= res.n_global > 0
    assert res.tries_local < 100000 * res.n_global
    assert "stopped" in s.controls["status"].value
    assert s.snapshot()["projection:MAFT"]["params"]["stopped"] is True
    assert s.controls["stop"].disabled
    check_result(smooth, res, [1, 2], toy.bounds)


def test_error_is_shown(toy, smooth):
    s = MAFTSession(smooth, toy, methods=("EIDIG",), n_seeds=5, n_local=5)
    s.controls["start"].click()
    s.wait(300)
    assert s.error is not None and "MLPClassifier" in s.error
    assert "MLPClassifier" in s.error_html.value


def test_h_disabled_without_maft(toy, smooth):
    s = MAFTSession(smooth, toy, methods=("AEQUITAS",), n_seeds=5, n_local=5)
    assert s.controls["h"].disabled
    s.controls["methods"].value = ("MAFT", "AEQUITAS")
    assert not s.controls["h"].disabled
    assert "zero-order" in s.controls["h"].tooltip


def test_wait_timeout_names_what_is_pending(toy, smooth):
    s = MAFTSession(smooth, toy, n_seeds=40, n_local=100000)
    s.controls["start"].click()
    with pytest.raises(TimeoutError, match="search"):
        s.wait(0.01)
    s.stop()
    s.wait(300)
