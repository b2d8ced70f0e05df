"""Bad input and unavailable data produce specific, readable errors."""
import gzip
import shutil

import pytest

from fairlens import datasets as D
from fairlens.datasets import _fetch


def test_unknown_dataset_name():
    with pytest.raises(ValueError, match="unknown dataset 'adultt'.*choose one of"):
        D.load_dataset("adultt")


def test_unknown_encoding_and_options():
    with pytest.raises(ValueError, match="encoding must be one of"):
        D.load_adult(encoding="onehot")
    with pytest.raises(ValueError, match="subset must be one of"):
        D.load_adult(subset="validation")
    with pytest.raises(ValueError, match="version must be"):
        D.load_admission(version="2")
    with pytest.raises(ValueError, match="target must be"):
        D.load_compas(target="decile")


def test_unknown_feature(require_data):
    ds = D.load_german_credit()
    with pytest.raises(ValueError, match="unknown feature 'gender'.*choose one of"):
        ds.index_of("gender")


def test_corrupt_file_in_data_home(tmp_path, require_data):
    folder = tmp_path / "diabetes_early_stage"
    folder.mkdir()
    data = (require_data / "diabetes_early_stage" / "diabetes_data_upload.csv").read_bytes()
    (folder / "diabetes_data_upload.csv").write_bytes(data[: len(data) // 2])  # truncated
    with pytest.raises(D.DatasetIntegrityError, match="sha256.*corrupt, truncated"):
        D.load_diabetes_risk(data_home=tmp_path)


def test_missing_file_offline_names_dataset_url_and_env(tmp_path, monkeypatch):
    monkeypatch.delenv("FAIRLENS_DATA_HOME", raising=False)
    with pytest.raises(D.DatasetNotFoundError) as err:
        D.load_law_school(data_home=tmp_path)
    msg = str(err.value)
    assert "law_school/lawschool.csv" in msg
    assert "https://" in msg and "FAIRLENS_DATA_HOME" in msg


def test_download_false_says_how_to_fix(tmp_path, monkeypatch):
    monkeypatch.delenv("FAIRLENS_DATA_HOME", raising=False)
    with pytest.raises(D.DatasetNotFoundError, match="download=False"):
        D.load_crime(data_home=tmp_path, download=False)


def test_data_home_not_a_folder(tmp_path):
    with pytest.raises(ValueError, match="is not a folder"):
        D.load_crime(data_home=tmp_path / "nope")


def test_download_verifies_and_caches(tmp_path, monkeypatch, require_data):
    """The download path, fed a local file:// URL: verified, cached, then read from cache."""
    import urllib.request as ur
    from dataclasses import replace

    src = require_data / "law_school" / "lawschool.csv"
    spec = replace(_fetch.FILES["lawschool.csv"], url=src.as_uri())
    monkeypatch.setitem(_fetch.FILES, "lawschool.csv", spec)
    monkeypatch.setattr(ur, "urlopen", lambda url, timeout: open(url[len("file://"):], "rb"))
    monkeypatch.delenv("FAIRLENS_DATA_HOME")
    cache = tmp_path / "cache"
    monkeypatch.setenv("FAIRLENS_CACHE_DIR", str(cache))
    assert D.load_law_school().n_samples == 1823
    assert (cache / "law_school" / "lawschool.csv").read_bytes() == src.read_bytes()
    # a corrupt download is refused and not cached
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"cluster,lsat\n1,2\n")
    monkeypatch.setitem(_fetch.FILES, "communities.csv",
                        replace(_fetch.FILES["communities.csv"], url=bad.as_uri()))
    with pytest.raises(D.DatasetIntegrityError, match="download from"):
        D.load_crime()
    assert not (cache / "crime" / "communities.csv").exists()


def test_corrupt_bundled_copy_is_refused(tmp_path, monkeypatch):
    """A tampered bundled file fails its sha256 check (it is never parsed)."""
    from importlib import resources

    pkg = tmp_path / "pkg"
    shutil.copytree(resources.files("fairlens.datasets") / "data", pkg / "data")
    with gzip.open(pkg / "data" / "german.data.gz", "wb") as fh:
        fh.write(b"A11 6 A34\n")
    monkeypatch.setattr(_fetch.resources, "files", lambda _pkg: pkg)
    monkeypatch.delenv("FAIRLENS_DATA_HOME", raising=False)
    with pytest.raises(D.DatasetIntegrityError, match="bundled copy german.data.gz"):
        D.load_german_credit()


def test_encode_rejects_unknown_category(require_data):
    ds = D.load_compas()
    frame = ds.frame.head(3).copy()
    frame.loc[0, "race"] = "Martian"
    with pytest.raises(ValueError, match="column 'race' has values \\['Martian'\\]"):
        ds.encode(frame)


# ------------------------------------------------------------------------- from_frame
def _people():
    import pandas as pd

    return pd.DataFrame({
        "age": [25, 40, 33, 51, 62, 19],
        "sex": ["f", "m", "m", "f", "m", "f"],
        "income": [1.5, 2.0, 3.1, 2.2, 4.0, 0.9],
        "outcome": ["yes", "no", "yes", "yes", "no", "no"],
    })


def test_from_frame_roundtrip():
    import numpy as np

    ds = D.from_frame(_people(), "outcome", protected=["sex"], favourable="yes")
    assert ds.feature_types == ["integer", "categorical", "continuous"]
    assert ds.categories["sex"] == {0: "f", 1: "m"}
    np.testing.assert_array_equal(ds.y, [1, 0, 1, 1, 0, 0])
    np.testing.assert_array_equal(ds.encode(ds.frame), ds.X)
    assert ds.protected_indices == [1]


def test_from_frame_errors():
    df = _people()
    with pytest.raises(ValueError, match="pass favourable="):
        D.from_frame(df, "outcome", protected=["sex"])
    with pytest.raises(ValueError, match="favourable='maybe' does not occur"):
        D.from_frame(df, "outcome", protected=["sex"], favourable="maybe")
    with pytest.raises(ValueError, match=r"columns \['gender'\] are not in the frame"):
        D.from_frame(df, "outcome", protected=["gender"], favourable="yes")
    df.loc[2, "income"] = None
    with pytest.raises(ValueError, match=r"columns \['income'\] have missing values"):
        D.from_frame(df, "outcome", protected=["sex"], favourable="yes")
