"""The bundled copies: offline loading, provenance, equality with the mirror, size budget."""
import fnmatch
import gzip
import hashlib
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from fairlens import datasets as D
from fairlens.datasets import _fetch

DATA = resources.files("fairlens.datasets") / "data"
BUDGET_BYTES = 4_500_000  # keeps the wheel under 5 MB
BUNDLED = {key: spec for key, spec in _fetch.FILES.items() if spec.bundled}

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


def test_law_school_stays_download_only(offline):
    assert "lawschool.csv" not in BUNDLED
    assert not (DATA / "lawschool.csv.gz").is_file()
    with pytest.raises(D.DatasetNotFoundError, match="no licence that allows redistribution"):
        D.load_law_school(download=False)


@pytest.mark.parametrize("key", sorted(BUNDLED))
def test_bundled_file_is_what_the_record_says(key):
    spec = BUNDLED[key]
    ref = DATA / spec.bundled
    assert ref.is_file(), spec.bundled
    raw = gzip.decompress(ref.read_bytes())
    assert hashlib.sha256(raw).hexdigest() in spec.sha256
    sources = (DATA / "SOURCES.md").read_text()
    assert spec.bundled in sources
    assert hashlib.sha256(raw).hexdigest() in sources


def test_every_bundled_file_is_recorded_and_packaged():
    files = sorted(p.name for p in DATA.iterdir() if p.name.endswith(".gz"))
    assert files == sorted(spec.bundled for spec in BUNDLED.values())
    if sys.version_info >= (3, 11):
        import tomllib

        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        if pyproject.is_file():
            globs = tomllib.loads(pyproject.read_text())["tool"]["setuptools"][
                "package-data"]["fairlens.datasets"]
            for name in [*files, "SOURCES.md"]:
                assert any(fnmatch.fnmatch(f"data/{name}", g) for g in globs), name


def test_bundled_size_stays_within_budget():
    total = sum(p.stat().st_size for p in Path(str(DATA)).iterdir())
    assert total < BUDGET_BYTES, f"bundled data is {total / 1e6:.2f} MB"


@pytest.mark.parametrize("key", sorted(BUNDLED))
def test_bundled_file_equals_the_mirror(key, require_data):
    spec = BUNDLED[key]
    mirrored = require_data / spec.folder / spec.filename
    if not mirrored.is_file():
        pytest.skip(f"{spec.folder}/{spec.filename} not in the mirror")
    bundled = gzip.decompress((DATA / spec.bundled).read_bytes())
    if spec.filename in ("adult.test", "german.data"):
        # documented byte-variants (SOURCES.md): same records
        def records(b):
            return [ln.strip() for ln in b.decode().splitlines()
                    if ln.strip() and not ln.startswith("|")]

        assert records(bundled) == records(mirrored.read_bytes())
    else:
        assert bundled == mirrored.read_bytes()


@pytest.mark.parametrize("name,kwargs,rows,features", OFFLINE)
def test_bundled_loader_equals_mirror_loader(name, kwargs, rows, features, require_data,
                                             monkeypatch):
    from_mirror = D.load_dataset(name, data_home=require_data, **kwargs)
    monkeypatch.delenv("FAIRLENS_DATA_HOME", raising=False)
    bundled = D.load_dataset(name, **kwargs)
    np.testing.assert_array_equal(bundled.X, from_mirror.X)
    np.testing.assert_array_equal(bundled.y, from_mirror.y)
