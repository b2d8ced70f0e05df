"""Bad input and unavailable data produce specific, readable errors."""

import pytest

from fairlens import datasets as D


def test_unknown_dataset_name():
    with pytest.raises(ValueError, match="unknown dataset 'adultt'.*choose one of"):
        D.load_dataset("adultt")


def test_unknown_encoding_and_options():
    with pytest.raises(ValueError, match="encoding must be one of 'raw', 'benchmark'"):
        D.load_adult(encoding="onehot")
    with pytest.raises(ValueError, match="subset must be one of 'train', 'test', 'all'"):
        D.load_adult(subset="validation")
    with pytest.raises(ValueError, match="version must be"):
        D.load_admission(version="2")
    with pytest.raises(ValueError, match="target must be one of 'two_year_recid', 'score'"):
        D.load_compas(target="decile")
    for loader in (D.load_german_credit, D.load_bank_marketing):
        with pytest.raises(ValueError, match="encoding must be one of"):
            loader(encoding="Benchmark")


@pytest.mark.parametrize("call,error,pattern", [
    (lambda: D.load_admission(threshold=1.5), ValueError, "threshold must be"),
    (lambda: D.load_admission(threshold=0.0), ValueError, "threshold must be"),
    (lambda: D.load_admission(threshold=float("nan")), ValueError, "threshold must be"),
    (lambda: D.load_admission(threshold="0.7"), TypeError, "threshold must be"),
    (lambda: D.load_admission(version=True), ValueError, "version must be"),
    (lambda: D.load_wine(positive_class=3), ValueError, "positive_class must be"),
    (lambda: D.load_wine(positive_class="0"), TypeError, "positive_class must be"),
    (lambda: D.load_wine(positive_class=1.0), TypeError, "positive_class must be"),
    (lambda: D.load_adult(download="no"), TypeError, "download must be True or False"),
    (lambda: D.load_diabetes_risk(download=None), TypeError, "download must be"),
    (lambda: D.load_dataset(3), TypeError, "name must be"),
])
def test_loader_parameters_are_validated(call, error, pattern):
    with pytest.raises(error, match=pattern):
        call()


@pytest.mark.parametrize("loader", [D.load_breast_cancer, D.load_wine, D.load_adult,
                                    D.load_crime, D.load_admission])
def test_unknown_keywords_are_rejected(loader):
    """load_breast_cancer/load_wine used to swallow them (**_ignored)."""
    with pytest.raises(TypeError, match="encodng"):
        loader(encodng="benchmark")


def test_unknown_keyword_through_load_dataset():
    with pytest.raises(TypeError, match="random_state"):
        D.load_dataset("breast_cancer", random_state=0)
    with pytest.raises(TypeError, match="encoding"):
        D.load_dataset("wine", encoding="benchmark")


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
    with pytest.raises(D.DatasetNotFoundError, match="download=False") as err:
        D.load_law_school(data_home=tmp_path, download=False)
    assert "no licence that allows redistribution" in str(err.value)


def test_data_home_not_a_folder(tmp_path):
    missing = tmp_path / "nope"
    with pytest.raises(ValueError, match="does not exist") as err:
        D.load_crime(data_home=missing)
    assert str(missing) in str(err.value) and "data_home=" in str(err.value)
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    with pytest.raises(ValueError, match="is not a folder"):
        D.load_admission(data_home=a_file)
    with pytest.raises(TypeError, match="data_home must be a path"):
        D.load_adult(data_home=3)


@pytest.mark.parametrize("loader", [D.load_adult, D.load_law_school, D.load_bank_marketing])
def test_env_data_home_that_does_not_exist_is_an_error(loader, tmp_path, monkeypatch):
    """No silent fall-through to the bundled copy or to a download (issue 11)."""
    calls = []
    import urllib.request as ur

    monkeypatch.setattr(ur, "urlopen", lambda *a, **k: calls.append(a))
    missing = tmp_path / "no" / "such" / "dir"
    monkeypatch.setenv("FAIRLENS_DATA_HOME", str(missing))
    with pytest.raises(ValueError, match="FAIRLENS_DATA_HOME=") as err:
        loader()
    assert str(missing) in str(err.value) and "does not exist" in str(err.value)
    assert calls == []


def test_empty_env_data_home_is_unset(monkeypatch):
    monkeypatch.setenv("FAIRLENS_DATA_HOME", "")
    assert D.load_german_credit().n_samples == 1000  # bundled


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
