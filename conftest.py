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
* **Figures readable from the back of the room.** Each kernel gets a throw-away ``IPYTHONDIR``
  whose start-up file (``tests/_kernel_figure_check.py``) checks every figure shown inline:
  a text under 12 pt as displayed in an 840 px notebook column fails the notebook with a
  message naming the figure and the texts (``FAIRLENS_FIGURE_CHECK=0`` turns it off).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile

_STARTUP = int(os.environ.get("FAIRLENS_KERNEL_STARTUP_TIMEOUT", "600"))
_CELL = int(os.environ.get("FAIRLENS_CELL_TIMEOUT", "900"))
_NBMAKE_DEFAULT_CELL_TIMEOUT = 300          # nbmake's own default for --nbmake-timeout
_SLICE = 2.0                                # seconds per poll of a kernel channel (see PatientNotebookClient)
_OFFLINE_PROXY = "http://127.0.0.1:9"       # discard port: nothing listens, connections fail fast


@contextlib.contextmanager
def _offline_kernel_env():
    """Environment inherited by a notebook kernel: no network, throw-away download cache."""
    cache = tempfile.mkdtemp(prefix="fairlens-nb-cache-")
    ipython_dir = tempfile.mkdtemp(prefix="fairlens-nb-ipython-")
    startup = os.path.join(ipython_dir, "profile_default", "startup")
    os.makedirs(startup)
    shutil.copy(os.path.join(os.path.dirname(os.path.abspath(__file__)), "tests", "_kernel_figure_check.py"),
                os.path.join(startup, "00-fairlens-figure-check.py"))
    keys = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "no_proxy", "NO_PROXY",
            "FAIRLENS_CACHE_DIR", "IPYTHONDIR")
    saved = {k: os.environ.get(k) for k in keys}
    os.environ.update({
        "http_proxy": _OFFLINE_PROXY, "https_proxy": _OFFLINE_PROXY,
        "HTTP_PROXY": _OFFLINE_PROXY, "HTTPS_PROXY": _OFFLINE_PROXY,
        "no_proxy": "localhost,127.0.0.1,::1", "NO_PROXY": "localhost,127.0.0.1,::1",
        "FAIRLENS_CACHE_DIR": cache, "IPYTHONDIR": ipython_dir,
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
        shutil.rmtree(ipython_dir, ignore_errors=True)


def _patch_nbmake() -> None:
    try:
        import asyncio
        from queue import Empty
        from time import monotonic

        import nbmake.nb_run as nb_run
        from nbclient.client import NotebookClient, timestamp
        from nbclient.exceptions import CellExecutionComplete, CellTimeoutError
        from nbclient.util import ensure_async
        from traitlets import Integer
    except ImportError:  # nbmake is a dev extra; without it there are no notebook items
        return
    if getattr(nb_run, "_fairlens_patched", False):
        return

    class PatientNotebookClient(NotebookClient):
        """nbclient with a long kernel start-up limit and polling that cannot miss a message.

        nbclient waits for a cell's reply with one ``get_msg(timeout=<cell timeout>)`` on the
        shell channel (and ``timeout=None`` on IOPub). With widgets in the notebook, that wait
        sometimes never wakes although the reply has arrived (jupyter/nbclient#312): the kernel
        sits idle until the cell times out. Here both channels are polled in short slices, and
        every new poll sees a message that is already there.
        """

        startup_timeout = Integer(_STARTUP).tag(config=True)

        async def _async_poll_for_reply(self, msg_id, cell, timeout, task_poll_output_msg,
                                        task_poll_kernel_alive):
            deadline = None if timeout is None else monotonic() + timeout
            timeout_reply = None
            while True:
                if timeout_reply is not None:
                    msg = timeout_reply
                    msg["parent_header"] = {"msg_id": msg_id}
                else:
                    left = _SLICE if deadline is None else max(0.0, min(_SLICE, deadline - monotonic()))
                    try:
                        msg = await ensure_async(self.kc.shell_channel.get_msg(timeout=left))
                    except Empty:
                        if deadline is None or monotonic() < deadline:
                            continue
                        task_poll_kernel_alive.cancel()
                        await self._async_check_alive()
                        timeout_reply = await self._async_handle_timeout(timeout, cell)
                        continue
                if msg["parent_header"].get("msg_id") != msg_id:
                    continue
                if self.record_timing:
                    cell["metadata"]["execution"]["shell.execute_reply"] = timestamp(msg)
                try:
                    await asyncio.wait_for(task_poll_output_msg, self.iopub_timeout)
                except (asyncio.TimeoutError, Empty):
                    if self.raise_on_iopub_timeout:
                        task_poll_kernel_alive.cancel()
                        raise CellTimeoutError.error_from_timeout_and_cell(
                            "Timeout waiting for IOPub output", self.iopub_timeout, cell) from None
                    self.log.warning("Timeout waiting for IOPub output")
                task_poll_kernel_alive.cancel()
                return msg

        async def _async_poll_output_msg(self, parent_msg_id, cell, cell_index):
            while True:
                try:
                    msg = await ensure_async(self.kc.iopub_channel.get_msg(timeout=_SLICE))
                except Empty:
                    continue
                if msg["parent_header"].get("msg_id") == parent_msg_id:
                    try:
                        self.process_message(msg, cell, cell_index)
                    except CellExecutionComplete:
                        return

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
