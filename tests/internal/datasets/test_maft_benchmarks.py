"""The tests of ``tests/contract/datasets/test_maft_benchmarks.py`` that pin internals
(its docstring describes both halves)."""
import csv
import gzip
import hashlib
import io
from importlib import resources

import numpy as np
import pytest

from fairlens import datasets as D
from fairlens.datasets import _fetch
from tests.contract.datasets.test_maft_benchmarks import CASES, IDS


def _raw_rows(key):
    spec = _fetch.FILES[key]
    data = gzip.decompress(
        (resources.files("fairlens.datasets") / "data" / spec.bundled).read_bytes())
    rows = list(csv.reader(io.StringIO(data.decode())))
    return rows[0], np.array([[int(v) for v in r] for r in rows[1:]])


@pytest.fixture
def offline(monkeypatch, tmp_path):
    monkeypatch.delenv("FAIRLENS_DATA_HOME", raising=False)
    monkeypatch.setenv("FAIRLENS_CACHE_DIR", str(tmp_path / "empty-cache"))
    return tmp_path / "empty-cache"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_shape_label_and_protected_offline(case, offline):
    name, loader, key, rows, features, protected, positives, _ = case
    ds = loader()
    assert ds.name == name and ds.encoding == "benchmark"
    assert ds.X.shape == (rows, features) and ds.y.shape == (rows,)
    assert int(ds.y.sum()) == positives
    assert ds.protected == list(protected)
    assert ds.protected_indices == list(protected.values())
    header, table = _raw_rows(key)
    np.testing.assert_array_equal(ds.X, table[:, :-1].astype(float))
    np.testing.assert_array_equal(ds.y, table[:, -1])
    np.testing.assert_array_equal(ds.encode(ds.frame), ds.X)
    assert not offline.exists()  # read from the bundle: nothing downloaded or cached
    assert "CC BY 4.0" in ds.citation and "MAFT" in ds.citation


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_bounds_are_the_authors_feature_domains(case):
    name, loader, key, *_, info_name = case
    ds = loader()
    _, table = _raw_rows(key)
    X = table[:, :-1]
    np.testing.assert_array_equal(ds.bounds, np.column_stack([X.min(0), X.max(0)]))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_bundle_hash_and_mirror_agree(case, require_data, monkeypatch):
    name, loader, key, *_ = case
    spec = _fetch.FILES[key]
    mirrored = (require_data / spec.folder / spec.filename).read_bytes()
    assert hashlib.sha256(mirrored).hexdigest() == spec.sha256[0]
    from_mirror = loader(data_home=require_data)
    monkeypatch.delenv("FAIRLENS_DATA_HOME", raising=False)
    bundled = loader()
    np.testing.assert_array_equal(bundled.X, from_mirror.X)
    np.testing.assert_array_equal(bundled.y, from_mirror.y)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_data_home_is_honoured_and_hash_checked(case, tmp_path, monkeypatch):
    name, loader, key, *_ = case
    spec = _fetch.FILES[key]
    folder = tmp_path / spec.folder
    folder.mkdir()
    header, table = _raw_rows(key)
    # a copy with one changed value: data_home wins over the bundle, and the hash catches it
    table = table.copy()
    table[0, 0] += 1
    text = ",".join(header) + "\n" + "\n".join(",".join(map(str, r)) for r in table) + "\n"
    (folder / spec.filename).write_text(text)
    with pytest.raises(D.DatasetIntegrityError, match=spec.filename):
        loader(data_home=tmp_path)
    monkeypatch.setenv("FAIRLENS_DATA_HOME", str(tmp_path))
    with pytest.raises(D.DatasetIntegrityError, match="sha256"):
        loader()
