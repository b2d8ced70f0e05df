"""The bundled copies: offline loading, provenance, equality with the mirror, size budget."""
import fnmatch
import gzip
import hashlib
import sys

import pytest

from fairlens import datasets as D
from fairlens.datasets import _fetch
from tests._support import REPO
from tests.contract.datasets.test_bundled import DATA, offline  # noqa: F401 (fixtures)

BUNDLED = {key: spec for key, spec in _fetch.FILES.items() if spec.bundled}


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

        pyproject = REPO / "pyproject.toml"
        if pyproject.is_file():
            globs = tomllib.loads(pyproject.read_text())["tool"]["setuptools"][
                "package-data"]["fairlens.datasets"]
            for name in [*files, "SOURCES.md"]:
                assert any(fnmatch.fnmatch(f"data/{name}", g) for g in globs), name


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
