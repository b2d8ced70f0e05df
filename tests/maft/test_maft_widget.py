import numpy as np
import pytest

pytest.importorskip("ipywidgets")

from ._maft_oracle import check_result  # noqa: E402
from fairlens.maft import MAFT, MAFTSession  # noqa: E402


def test_controls_and_headless_run(toy, smooth):
    s = MAFTSession(smooth, toy, n_seeds=20, n_local=20)
    for name in ("methods", "h", "n_seeds", "n_local", "max_iter", "random_state", "start", "stop",
                 "progress_global", "progress_local", "status"):
        assert name in s.controls
    s.controls["methods"].value = ("MAFT", "AEQUITAS")
    s.controls["h"].value = 1.0
    s.controls["random_state"].value = 3
    s.controls["start"].click()
    assert s.wait(60)
    assert s.error is None, s.error
    assert set(s.results) == {"MAFT", "AEQUITAS"}
    res = s.results["MAFT"]
    direct = MAFT(smooth, toy, h=1.0).run(n_seeds=20, n_local=20, random_state=3)
    np.testing.assert_array_equal(res.instances, direct.instances)  # same numbers as the core
    check_result(smooth, res, [1, 2], toy.bounds)
    assert s.controls["progress_local"].value == s.controls["progress_local"].max
    assert "done" in s.controls["status"].value
    assert len(s.out_table.outputs) == 1 and len(s.out_timeline.outputs) == 1
    assert not s.controls["start"].disabled and s.controls["stop"].disabled
    # cached per parameter value: a second start returns the very same object
    s.controls["start"].click()
    assert s.wait(60)
    assert s.results["MAFT"] is res


def test_stop_keeps_found(toy, smooth):
    s = MAFTSession(smooth, toy, n_seeds=40, n_local=100000, live_plot_interval=0.05)
    s.controls["start"].click()
    import time

    t0 = time.time()
    while s.controls["progress_local"].value < 5 and time.time() - t0 < 60:
        time.sleep(0.01)
    s.controls["stop"].click()
    assert s.wait(60)
    res = s.result
    assert res.stopped and res.n_instances >= res.n_global > 0
    assert res.tries_local < 100000 * res.n_global
    assert "stopped" in s.controls["status"].value
    check_result(smooth, res, [1, 2], toy.bounds)


def test_error_is_shown(toy, smooth):
    s = MAFTSession(smooth, toy, methods=("EIDIG",), n_seeds=5, n_local=5)
    s.controls["start"].click()
    assert s.wait(60)
    assert s.error is not None and "MLPClassifier" in s.error
    assert "error" in s.controls["status"].value
    assert len(s.out_error.outputs) == 1
