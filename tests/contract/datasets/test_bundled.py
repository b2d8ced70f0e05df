"""The bundled copies: offline loading, provenance, equality with the mirror, size budget."""
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from fairlens import datasets as D

DATA = resources.files("fairlens.datasets") / "data"
BUDGET_BYTES = 4_500_000  # keeps the wheel under 5 MB

# loaders of the newly bundled datasets (issue 12): rows and features expected offline
OFFLINE = [
    ("bank_marketing", {}, 45211, 16),
    ("bank_marketing", {"encoding": "benchmark"}, 45211, 16),
    ("crime", {}, 1994, 122),
    ("admission", {}, 500, 7),
    ("diabetes_risk", {}, 520, 16),
    # the MAFT benchmarks' small tables (issue 23)
    ("pima_diabetes", {}, 768, 8),
    ("heart_disease", {}, 297, 13),
    ("student_performance", {}, 1044, 32),
]


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """No data home, an empty cache, and any network call is a test failure."""
    import urllib.request

    monkeypatch.delenv("FAIRLENS_DATA_HOME", raising=False)
    monkeypatch.setenv("FAIRLENS_CACHE_DIR", str(tmp_path / "empty-cache"))

    def no_network(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args}")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)


@pytest.mark.parametrize("name,kwargs,rows,features", OFFLINE)
def test_newly_bundled_loaders_work_offline(name, kwargs, rows, features, offline, tmp_path):
    ds = D.load_dataset(name, **kwargs)
    assert ds.X.shape == (rows, features)
    assert set(np.unique(ds.y)) == {0, 1}
    np.testing.assert_array_equal(ds.encode(ds.frame), ds.X)
    assert not (tmp_path / "empty-cache").exists()  # nothing downloaded or cached


def test_bundled_size_stays_within_budget():
    total = sum(p.stat().st_size for p in Path(str(DATA)).iterdir())
    assert total < BUDGET_BYTES, f"bundled data is {total / 1e6:.2f} MB"


@pytest.mark.parametrize("name,kwargs,rows,features", OFFLINE)
def test_bundled_loader_equals_mirror_loader(name, kwargs, rows, features, require_data,
                                             monkeypatch):
    from_mirror = D.load_dataset(name, data_home=require_data, **kwargs)
    monkeypatch.delenv("FAIRLENS_DATA_HOME", raising=False)
    bundled = D.load_dataset(name, **kwargs)
    np.testing.assert_array_equal(bundled.X, from_mirror.X)
    np.testing.assert_array_equal(bundled.y, from_mirror.y)
