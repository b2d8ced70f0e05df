"""Bad input and unavailable data produce specific, readable errors."""
import gzip
import shutil

import pytest

from fairlens import datasets as D
from fairlens.datasets import _fetch


# ------------------------------------------------------------------ download failures
class _Response:
    """A stand-in for urlopen's response (no network)."""

    def __init__(self, body=b"", length=None, exc=None):
        self.body, self.exc = body, exc
        self.headers = {} if length is None else {"Content-Length": str(length)}

    def read(self):
        if self.exc is not None:
            raise self.exc
        return self.body

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _serve(monkeypatch, response, key, **changes):
    """Make ``key`` download-only and answer its URL with ``response``."""
    import urllib.request as ur
    from dataclasses import replace

    spec = replace(_fetch.FILES[key], bundled=None, **changes)
    monkeypatch.setitem(_fetch.FILES, key, spec)
    monkeypatch.delenv("FAIRLENS_DATA_HOME", raising=False)

    def opener(url, timeout=None):
        assert url == spec.url
        if isinstance(response, Exception):
            raise response
        return response

    monkeypatch.setattr(ur, "urlopen", opener)
    return spec


def _zip_bytes(name, data):
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(name, data)
    return buf.getvalue()


BANK_HEAD = b'"age";"job"\n58;"management"\n' * 50


@pytest.mark.parametrize("case,error,pattern", [
    ("html", D.DatasetIntegrityError, "returned an HTML page"),
    ("incomplete", D.DatasetIntegrityError, "cut short"),
    ("short-length", D.DatasetIntegrityError, "cut short"),
    ("bad-zip", D.DatasetIntegrityError, "not a readable zip"),
    ("truncated-zip", D.DatasetIntegrityError, "not a readable zip"),
    ("no-member", D.DatasetIntegrityError, "has no member 'bank-full.csv'"),
    ("wrong-bytes", D.DatasetIntegrityError, "sha256"),
    ("unreachable", D.DatasetNotFoundError, "failed"),
    ("http-404", D.DatasetNotFoundError, "HTTP Error 404"),
    ("reset", D.DatasetNotFoundError, "ConnectionResetError"),
])
def test_every_download_failure_is_a_dataset_error_naming_the_url(case, error, pattern,
                                                                  monkeypatch, tmp_path):
    import http.client
    import urllib.error

    monkeypatch.setenv("FAIRLENS_CACHE_DIR", str(tmp_path / "cache"))
    url = "https://example.invalid/bank.zip"
    good_zip = _zip_bytes("bank-full.csv", BANK_HEAD)
    responses = {
        "html": _Response(b"<!DOCTYPE html><html><body>Please log in</body></html>"),
        "incomplete": _Response(exc=http.client.IncompleteRead(b"PK\x03\x04", 1000)),
        "short-length": _Response(good_zip[:40], length=len(good_zip)),
        "bad-zip": _Response(b"PK\x03\x04 this is not really a zip archive" * 10),
        "truncated-zip": _Response(good_zip[: len(good_zip) // 2]),
        "no-member": _Response(_zip_bytes("other.csv", BANK_HEAD)),
        "wrong-bytes": _Response(good_zip),
        "unreachable": urllib.error.URLError("Name or service not known"),
        "http-404": urllib.error.HTTPError(url, 404, "Not Found", {}, None),
        "reset": ConnectionResetError("connection reset by peer"),
    }
    _serve(monkeypatch, responses[case], "bank-full.csv", url=url)
    with pytest.raises(error, match=pattern) as err:
        D.load_bank_marketing()
    assert url in str(err.value)
    assert not (tmp_path / "cache" / "bank" / "bank-full.csv").exists()


def test_download_of_a_plain_file_cut_short(monkeypatch, tmp_path):
    monkeypatch.setenv("FAIRLENS_CACHE_DIR", str(tmp_path / "cache"))
    spec = _serve(monkeypatch, _Response(b"cluster,lsat\n1,2\n", length=106001),
                  "lawschool.csv")
    with pytest.raises(D.DatasetIntegrityError, match="cut short") as err:
        D.load_law_school()
    assert spec.url in str(err.value)


def test_law_school_offline_error_says_it_is_not_bundled(monkeypatch, tmp_path):
    monkeypatch.delenv("FAIRLENS_DATA_HOME", raising=False)
    monkeypatch.setenv("FAIRLENS_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(D.DatasetNotFoundError) as err:
        D.load_law_school()  # the suite's network guard refuses the download
    msg = str(err.value)
    assert "no licence that allows redistribution" in msg
    assert _fetch.FILES["lawschool.csv"].url in msg and "FAIRLENS_DATA_HOME" in msg


def test_download_verifies_and_caches(tmp_path, monkeypatch, require_data):
    """The download path, fed a local file:// URL: verified, cached, then read from cache."""
    import urllib.request as ur
    from dataclasses import replace

    src = require_data / "law_school" / "lawschool.csv"
    spec = replace(_fetch.FILES["lawschool.csv"], url=src.as_uri())
    monkeypatch.setitem(_fetch.FILES, "lawschool.csv", spec)
    real_opener = ur.build_opener()  # urllib's own handlers, used for file:// URLs only

    def file_only(url, timeout=None):
        assert url.startswith("file://"), url
        return real_opener.open(url, timeout=timeout)

    monkeypatch.setattr(ur, "urlopen", file_only)
    monkeypatch.delenv("FAIRLENS_DATA_HOME")
    cache = tmp_path / "cache"
    monkeypatch.setenv("FAIRLENS_CACHE_DIR", str(cache))
    assert D.load_law_school().n_samples == 1823
    assert (cache / "law_school" / "lawschool.csv").read_bytes() == src.read_bytes()
    # a corrupt download is refused and not cached
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"cluster,lsat\n1,2\n")
    monkeypatch.setitem(_fetch.FILES, "communities.csv",
                        replace(_fetch.FILES["communities.csv"], url=bad.as_uri(),
                                bundled=None))
    with pytest.raises(D.DatasetIntegrityError, match="download from") as err:
        D.load_crime()
    assert bad.as_uri() in str(err.value)
    assert not (cache / "crime" / "communities.csv").exists()
    # an HTML page served over file:// and a missing file:// path
    page = tmp_path / "page.html"
    page.write_text("<!doctype html><html><title>Moved</title></html>")
    monkeypatch.setitem(_fetch.FILES, "communities.csv",
                        replace(_fetch.FILES["communities.csv"], url=page.as_uri(),
                                bundled=None))
    with pytest.raises(D.DatasetIntegrityError, match="returned an HTML page"):
        D.load_crime()
    gone = (tmp_path / "gone.csv").as_uri()
    monkeypatch.setitem(_fetch.FILES, "communities.csv",
                        replace(_fetch.FILES["communities.csv"], url=gone, bundled=None))
    with pytest.raises(D.DatasetNotFoundError, match="gone.csv"):
        D.load_crime()


def test_bundled_copy_that_is_not_gzip_is_refused(tmp_path, monkeypatch):
    from importlib import resources

    pkg = tmp_path / "pkg"
    shutil.copytree(resources.files("fairlens.datasets") / "data", pkg / "data")
    (pkg / "data" / "bank-full.csv.gz").write_bytes(b"<html>not gzip</html>")
    monkeypatch.setattr(_fetch.resources, "files", lambda _pkg: pkg)
    monkeypatch.delenv("FAIRLENS_DATA_HOME", raising=False)
    with pytest.raises(D.DatasetIntegrityError, match="bank-full.csv.gz.*not a readable gzip"):
        D.load_bank_marketing()


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
