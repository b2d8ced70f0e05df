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
