"""Shared test fixtures.

Some loader tests compare against a local mirror of the canonical dataset files, found only
through ``$FAIRLENS_DATA_HOME`` (laid out as ``<folder>/<file>``, as the loaders expect; CI
points it at its mirror). Tests that need it use the ``require_data`` fixture and are skipped
with a clear reason when it is unset. Nothing here touches the network: downloads are
disabled for the whole session (notebook kernels get the same guard from the repository's
root ``conftest.py``).
"""
from __future__ import annotations

import os
import urllib.request
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

_HOME = os.environ.get("FAIRLENS_DATA_HOME")
MIRROR = Path(_HOME).expanduser().resolve() if _HOME and (Path(_HOME).expanduser() / "adult").is_dir() else None


@pytest.fixture(autouse=True)
def _no_network(monkeypatch, tmp_path_factory):
    """Tests never reach the network, and never write into the user's cache."""

    def refuse(*args, **kwargs):
        raise urllib.error.URLError("network disabled in the fairlens test suite")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    monkeypatch.setenv("FAIRLENS_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.fixture(scope="session")
def data_home():
    """Path of the data mirror, or skip."""
    if MIRROR is None:
        pytest.skip("dataset mirror not found: set FAIRLENS_DATA_HOME to a folder holding "
                    "the canonical dataset files (<folder>/<file>, as the loaders expect)")
    return MIRROR


@pytest.fixture
def require_data(data_home):
    """Use in tests that read mirrored datasets through the loaders."""
    return data_home


# --- NUMBA_DISABLE_JIT=1: the pure-Python twins, at a size pure Python can afford ----------------
# Under NUMBA_DISABLE_JIT=1 every kernel runs as plain Python, 10-1000x slower. The unit tests must
# still pass in that mode (tests/README.md has the command), within 20 minutes. Tests listed here
# are skipped in that mode only, each because a smaller test of the same module exercises the same
# kernels; `jit_scale` lets a test shrink its own sizes, and `@pytest.mark.jit_heavy` skips a test
# in that mode.
JIT_DISABLED = os.environ.get("NUMBA_DISABLE_JIT", "0").strip() not in ("", "0")

PURE_PYTHON_SKIP: dict[str, str] = {
    # the quick tour runs every slice end to end; test_quick_tour_sections_and_html runs the same
    # tour in-process, so the CLI subprocess only repeats it as plain Python
    "tests/contract/tour/test_tour.py::test_cli_quick_tour":
        "same quick tour as test_quick_tour_sections_and_html, in a subprocess",
    # bitset mining vs brute force: the german_credit variant runs the same kernels on a smaller table
    "tests/contract/testsgd/test_testsgd_real.py::test_mining_equals_bruteforce_on_real_data[compas]":
        "the german_credit variant covers the mining kernels",
    "tests/contract/testsgd/test_testsgd_real.py::test_mining_equals_bruteforce_on_real_data[law_school]":
        "the german_credit variant covers the mining kernels",
    # 180 s as plain Python (COMPAS, every rule set scored); the same kernels run on the toy table in
    # test_report_frame_and_top and test_run_matches_reference_per_rule_set
    "tests/contract/testsgd/test_testsgd_real.py::test_compas_report_readable":
        "the report kernels are covered on the toy table by test_testsgd_report.py",
    # three full TestSGD runs; one run's kernels are covered by test_report_frame_and_top and
    # test_run_matches_reference_per_rule_set
    "tests/contract/testsgd/test_testsgd_report.py::test_same_seed_same_report":
        "reproducibility of the same kernels is checked with the JIT; one run is covered by "
        "test_report_frame_and_top",
}


def pytest_collection_modifyitems(config, items):
    if not JIT_DISABLED:
        return
    for item in items:
        reason = PURE_PYTHON_SKIP.get(item.nodeid)
        if reason is None and item.get_closest_marker("jit_heavy") is not None:
            reason = "marked jit_heavy"
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=f"NUMBA_DISABLE_JIT=1: {reason}"))


@pytest.fixture(scope="session")
def jit_scale():
    """Size factor for tests: 1.0 with numba's JIT, 0.2 under NUMBA_DISABLE_JIT=1."""
    return 0.2 if JIT_DISABLED else 1.0


@pytest.fixture(scope="session")
def dask_client():
    """One ``dask.distributed`` LocalCluster (2 worker processes, 1 thread each) for the session.

    Tests that check "same answer on dask" run their call inside
    ``with joblib.parallel_config(backend="dask"):`` while this client is alive.  Skipped when
    the ``dask`` extra is not installed.
    """
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=50)
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()
