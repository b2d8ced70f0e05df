"""The MAFT benchmarks' small tables: Pima diabetes, Cleveland heart, student performance.

Cross-checked against sources independent of the loader: the raw CSV read with the standard
``csv`` module, the authors' own per-feature ``feature_info.csv`` (its min/max columns are the
search bounds of their code), the protected column indices of the authors'
``experiment_config.py`` (D-a [7], H-a [0], H-g [1], S-a [2], S-g [1]) and the paper's Table 2
(#Ins, #Fea).
"""
import csv

import numpy as np
import pytest

from fairlens import datasets as D

# name, loader, file key, rows (Table 2 #Ins), features (#Fea), protected -> authors' index,
# positives, feature_info name
CASES = [
    ("pima_diabetes", D.load_pima_diabetes, "maft_diabetes.csv", 768, 8, {"Age": 7}, 268,
     "diabetes"),
    ("heart_disease", D.load_heart_disease, "maft_heart_disease.csv", 297, 13,
     {"age": 0, "sex": 1}, 83, "heart"),
    ("student_performance", D.load_student_performance, "maft_students.csv", 1044, 32,
     {"age": 2, "sex": 1}, 814, "students"),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_bounds_match_feature_info_of_the_mirror(case, require_data):
    name, loader, *_, info_name = case
    path = require_data / "maft_preprocessed" / "feature_info.csv"
    if not path.is_file():
        pytest.skip("feature_info.csv not in the mirror")
    with path.open() as fh:
        rows = [r for r in csv.DictReader(fh) if r["dataset_name"] == info_name]
    rows.sort(key=lambda r: int(r["feature_index"]))
    expected = np.array([[float(r["min_value"]), float(r["max_value"])] for r in rows])
    ds = loader()
    np.testing.assert_array_equal(ds.bounds, expected)
    uniques = [len(np.unique(ds.X[:, j])) for j in range(ds.n_features)]
    assert uniques == [int(r["num_unique_values"]) for r in rows]


@pytest.mark.parametrize("alias,name", [("pima", "pima_diabetes"), ("heart", "heart_disease"),
                                        ("students", "student_performance")])
def test_registry_and_aliases(alias, name):
    assert name in D.list_datasets()
    assert D.load_dataset(alias).name == name
    assert D.load_dataset(name).name == name


def test_bad_arguments_name_the_argument():
    with pytest.raises(TypeError, match="download"):
        D.load_heart_disease(download="yes")
    with pytest.raises(TypeError, match="data_home"):
        D.load_student_performance(data_home=3)
    with pytest.raises(TypeError):
        D.load_pima_diabetes(download=None)
    with pytest.raises(ValueError, match="encoding must be .benchmark."):
        D.load_pima_diabetes(encoding="raw")
    with pytest.raises(TypeError):
        D.load_pima_diabetes(bins=3)
    assert D.load_dataset("heart", encoding="benchmark").n_samples == 297
