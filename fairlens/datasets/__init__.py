"""Dataset loaders returning :class:`Dataset` objects (readable frame + encoded X, y).

Files are resolved from ``data_home`` / ``$FAIRLENS_DATA_HOME``, then from the copies
bundled with fairlens, then from a download cache (downloading when allowed); every file
is checked against its sha256. Every dataset whose licence allows it is bundled (all but the
LSAC law-school data). A ``data_home`` that does not exist is an error; every download
failure is a :class:`DatasetNotFoundError` or :class:`DatasetIntegrityError` naming the URL.
See ``fairlens/datasets/data/SOURCES.md``.
"""
from ._base import Dataset
from ._fetch import DatasetIntegrityError, DatasetNotFoundError, get_cache_dir
from ._loaders import (
    CRIME_SENSITIVE,
    from_frame,
    german_numeric_table,
    list_datasets,
    load_admission,
    load_adult,
    load_bank_marketing,
    load_breast_cancer,
    load_compas,
    load_crime,
    load_dataset,
    load_diabetes_risk,
    load_german_credit,
    load_heart_disease,
    load_law_school,
    load_pima_diabetes,
    load_student_performance,
    load_wine,
)

__all__ = [
    "Dataset",
    "DatasetIntegrityError",
    "DatasetNotFoundError",
    "CRIME_SENSITIVE",
    "from_frame",
    "get_cache_dir",
    "german_numeric_table",
    "list_datasets",
    "load_admission",
    "load_adult",
    "load_bank_marketing",
    "load_breast_cancer",
    "load_compas",
    "load_crime",
    "load_dataset",
    "load_diabetes_risk",
    "load_heart_disease",
    "load_pima_diabetes",
    "load_student_performance",
    "load_german_credit",
    "load_law_school",
    "load_wine",
]
