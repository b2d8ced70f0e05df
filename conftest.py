"""Repository-wide pytest settings for the notebook runs (``pytest --nbmake``).

Loaded for every pytest run inside the repository (``tests``, ``tutorials``, ``notebooks``),
so the README's one test command and any subset of it behave the same way.

* **Generous limits on a loaded machine.** nbmake starts one Jupyter kernel per notebook
  through nbclient, whose ``startup_timeout`` is 60 s; on a busy 2-core machine (or Binder) a
  kernel that imports numpy/pandas/numba can take longer, and nbclient then fails with
  "NBMAKE INTERNAL ERROR ... assert self.km is not None". Kernels get
  ``FAIRLENS_KERNEL_STARTUP_TIMEOUT`` seconds (default 600) to start, and each cell
  ``FAIRLENS_CELL_TIMEOUT`` seconds (default 900) unless ``--nbmake-timeout`` is given.
* **Notebook kernels are offline too.** The unit tests refuse the network in-process
  (``tests/conftest.py``); a notebook kernel is a separate process, so it gets a proxy
  that refuses every connection (``http(s)_proxy`` pointing at a closed local port, with
  loopback exempt) and an empty, temporary download cache. A loader that tried to download
  would fail at once with ``DatasetNotFoundError`` instead of reaching the network.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile

_STARTUP = int(os.environ.get("FAIRLENS_KERNEL_STARTUP_TIMEOUT", "600"))
_CELL = int(os.environ.get("FAIRLENS_CELL_TIMEOUT", "900"))
_NBMAKE_DEFAULT_CELL_TIMEOUT = 300          # nbmake's own default for --nbmake-timeout
_OFFLINE_PROXY = "http://127.0.0.1:9"       # discard port: nothing listens, connections fail fast


@contextlib.contextmanager
def _offline_kernel_env():
    """Environment inherited by a notebook kernel: no network, throw-away download cache."""
    cache = tempfile.mkdtemp(prefix="fairlens-nb-cache-")
    keys = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "no_proxy", "NO_PROXY",
            "FAIRLENS_CACHE_DIR")
    saved = {k: os.environ.get(k) for k in keys}
    os.environ.update({
        "http_proxy": _OFFLINE_PROXY, "https_proxy": _OFFLINE_PROXY,
        "HTTP_PROXY": _OFFLINE_PROXY, "HTTPS_PROXY": _OFFLINE_PROXY,
        "no_proxy": "localhost,127.0.0.1,::1", "NO_PROXY": "localhost,127.0.0.1,::1",
        "FAIRLENS_CACHE_DIR": cache,
    })
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(cache, ignore_errors=True)


def _patch_nbmake() -> None:
    try:
        from nbclient.client import NotebookClient
        from traitlets import Integer
        import nbmake.nb_run as nb_run
    except ImportError:  # nbmake is a dev extra; without it there are no notebook items
        return
    if getattr(nb_run, "_fairlens_patched", False):
        return

    class PatientNotebookClient(NotebookClient):
        startup_timeout = Integer(_STARTUP).tag(config=True)

    nb_run.NotebookClient = PatientNotebookClient
    execute = nb_run.NotebookRun.execute

    def offline_execute(self, *args, **kwargs):
        with _offline_kernel_env():
            return execute(self, *args, **kwargs)

    nb_run.NotebookRun.execute = offline_execute
    nb_run._fairlens_patched = True


def pytest_configure(config):
    _patch_nbmake()
    opt = config.option
    if getattr(opt, "nbmake", False) and getattr(opt, "nbmake_timeout", None) == _NBMAKE_DEFAULT_CELL_TIMEOUT:
        opt.nbmake_timeout = _CELL
