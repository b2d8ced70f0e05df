"""Shared test fixtures.

The loaders are tested against the project's data mirror (``../shared/data`` beside the
repository, or ``$FAIRLENS_DATA_HOME``). Tests that need it use the ``require_data``
fixture and are skipped with a clear reason when it is absent. Nothing here touches the
network: downloads are disabled for the whole session.
"""
from __future__ import annotations

import os
import urllib.request
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

_REPO = Path(__file__).resolve().parents[1]
_CANDIDATES = [os.environ.get("FAIRLENS_DATA_HOME"), _REPO.parent / "shared" / "data",
               Path("/work/shared/data")]
MIRROR = next((Path(p) for p in _CANDIDATES if p and (Path(p) / "adult").is_dir()), None)
if MIRROR is not None:
    os.environ["FAIRLENS_DATA_HOME"] = str(MIRROR)


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
        pytest.skip("dataset mirror not found: set FAIRLENS_DATA_HOME to a copy of shared/data")
    return MIRROR


@pytest.fixture
def require_data(data_home):
    """Use in tests that read mirrored datasets through the loaders."""
    return data_home
