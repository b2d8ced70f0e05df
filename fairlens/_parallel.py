"""Parallel execution the scikit-learn way: ``n_jobs`` over joblib, identical results.

Every heavy loop of fairlens (MAFT seed blocks, TestSGD rule-set blocks, certification row
blocks, explainer instance blocks, discrimination-rate sample blocks) is written as

1. a list of **fixed chunks** whose boundaries depend only on the problem (never on
   ``n_jobs``), and
2. a pure function ``func(payload, chunk)`` that processes one chunk, drawing its random
   numbers from :func:`chunk_rng` (a counter-based stream keyed by the run's seed and the
   chunk's index),

and handed to :func:`run_chunks`.  Because neither the chunking nor the random streams depend
on how the chunks are distributed, the answer is the same at every ``n_jobs`` and on every
joblib backend -- ``loky`` on one machine, or dask.distributed through
``with joblib.parallel_config(backend="dask"):``.

What one task carries: the contiguous chunks are cut into **one share per worker**
(:data:`TASKS_PER_WORKER` = 1: fewer, larger tasks -- per-task cost, i.e. pickling the payload,
the result and the joblib round trip, is paid once per worker, not once per chunk); each task
carries the chunk descriptions (a few integers or row indices) and a reference to the
:class:`Payload` (model, dataset, arrays).  On the dask backend joblib scatters the payload to
the workers once per call (it is a weak-referenceable object that reports its pickled size), so
the model is not sent with every task; on loky, numpy arrays above 1 MB are memory-mapped and
the rest is pickled once per task (so once per worker).

BLAS: while the workers run, the BLAS thread pools are limited to one thread in every worker
AND in this process (:func:`blas_limit`), so two workers on two cores never run four BLAS
threads (oversubscription costs CPU without saving wall time).

**When parallel does not pay** (the one rule, :func:`plan_workers`): a caller that can estimate
its work (model rows, or any unit with :data:`MIN_WORK_PER_WORKER` calibrated to it) passes
``work=``; if the work per worker would be below ``min_work`` (default
:data:`MIN_WORK_PER_WORKER` model rows), the chunks run in this process, in order, as with
``n_jobs=1`` -- starting the tasks and shipping the payload would cost more than the split
saves.  A caller that cannot estimate its work (a certification row costs milliseconds or
seconds) may pass ``probe_seconds=`` instead: the chunks run here, in order, until they are done
or the probe runs out, and only the rest goes to the workers.  ``info=`` (a dict) receives
``n_jobs_used`` and a one-line ``note`` saying what ran where, for the result's ``params``;
:class:`record_plans` collects the same for every call inside a block (``benchmarks/scale.py``).

On dask, start the cluster with :data:`DASK_RECOMMENDED_CONFIG`
(``with dask.config.set(DASK_RECOMMENDED_CONFIG): cluster = LocalCluster(...)``, or the same keys
in the workers' configuration): dask's default ``MALLOC_TRIM_THRESHOLD_`` in the workers makes
glibc map and unmap every array above 128 kB at every step (it doubled the workers' CPU of a MAFT
run), and its 20 ms event-loop health checks, 10 ms profiler and monitors cost an idle 2-worker
cluster about 0.09 CPU seconds per second (0.01 with the settings; ``benchmarks/README.md``).

With ``n_jobs`` resolving to one worker nothing is pickled: the chunks run in this process,
in order, with the same random streams.

**This process can work a share** (``run_chunks(share_here=True)``, used by the MAFT searches):
``n_jobs`` processes compute, this one among them, instead of ``n_jobs`` workers while this
process waits.  The first share then has no round trip (no payload to ship, no result to
transfer) and is merged while the workers still run; on a 1.4 s MAFT run it took the speed-up
at ``n_jobs=2`` on loky from 1.5-1.6x to 1.6-1.8x (``benchmarks/README.md``, round five).  On
dask only with a ``LocalCluster`` (a remote cluster's workers get every share: this process may be
a laptop).

**One worker per task sent.**  The pool gets as many worker processes as tasks are sent: with
``n_jobs=2`` and this process working one share, ONE loky worker runs the other (joblib runs
``n_jobs=1`` in the calling process, so that one task goes to joblib's own reusable loky executor
sized to one worker, configured as ``joblib.Parallel(n_jobs=2)`` configures it).  A second worker
would be started for nothing, and the task landing on it paid its start-up and imports again
(a TensorFlow model: its import) -- in two of four calls of a census MAFT run.

**A task that runs no user code is forked** (``run_chunks(fork_safe=True)``, Linux, joblib's
default loky backend, one task sent): instead of a fresh loky worker, which imports numpy, numba
and fairlens and loads the numba kernels from their cache (1-2.5 CPU seconds, as much as half of
a first MAFT call), the task runs in a child forked from this process at the moment it is sent: it
inherits the imports, the loaded kernels and the payload (nothing is pickled but its result), and
exits when it has sent the result back through a pipe (:class:`_ForkTask`).  A caller passes
``fork_safe=True`` only when ``func`` and the payload execute nothing but NumPy, numba kernels and
fairlens code on arrays (the MAFT searches when the model is replayed from its arrays,
:class:`fairlens.maft._utils.MLPReplay`): forking a process is unsafe when the child uses a
library whose threads or locks do not survive a fork (OpenMP runtimes, TensorFlow, a lock held by
another thread), and a user's model may be such a library -- it always goes to a loky worker.  The
one lock the child can need, numba's compiler lock (a kernel loaded from the cache for the first
time), is held across the fork so that no other thread owns it in the child.  On macOS, on
Windows, and on any other joblib backend the task goes to the backend as before.
"""
from __future__ import annotations

import pickle

import numpy as np

from ._validation import MAX_N_JOBS, check_n_jobs, resolve_random_state  # noqa: F401 (re-exported)
from .models import Scorer

__all__ = ["check_n_jobs", "effective_n_jobs", "fixed_chunks", "chunk_rng", "Payload",
           "run_chunks", "plan_workers", "blas_limit", "thread_limit", "record_plans", "MIN_WORK_PER_WORKER",
           "DASK_RECOMMENDED_CONFIG"]

#: How many tasks per worker the chunks are grouped into: one share per worker (per-task cost --
#: pickling, the joblib round trip, the BLAS limit -- is paid once per worker; measured in
#: ``benchmarks/scale.py``, 4 tasks per worker cost 2-4x the CPU of ``n_jobs=1`` on MAFT).
TASKS_PER_WORKER = 1

#: Below this much estimated work per worker (in model rows: rows the model is called on) a
#: call runs in this process even when ``n_jobs`` asks for workers (see :func:`plan_workers`).
#: Calibrated on the census MLP of ``benchmarks/scale.py``: a worker's fixed cost (task round
#: trip, payload unpickling, BLAS limit; 50-300 ms warm) is below 5% of the time the model
#: takes on 500,000 rows (about 4-10 s at 2-5 us per row).
MIN_WORK_PER_WORKER = 500_000

#: dask settings recommended for a cluster that runs fairlens (``dask.config.set(...)`` around
#: ``LocalCluster(...)``, or the same keys in the workers' dask configuration).  An idle 2-worker
#: ``LocalCluster`` with dask's defaults burns about 0.09 CPU seconds per second (the event-loop
#: health check every 20 ms in the scheduler, the nannies and the workers; the workers' statistical
#: profiler every 10 ms; the system and memory monitors); with these settings about 0.01
#: (``benchmarks/README.md``).  None of them changes what a task computes: they turn off the
#: profiler (the dashboard's profile page stays empty), check the event loop's health every second
#: instead of every 20 ms, sample the system monitor every 5 s and the memory limits every second,
#: and leave glibc's adaptive mmap threshold alone (dask's default ``MALLOC_TRIM_THRESHOLD_``
#: made every array above 128 kB be mapped and unmapped again: about 2x the workers' CPU in MAFT).
DASK_RECOMMENDED_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
}

def effective_n_jobs(n_jobs):
    """Number of workers ``n_jobs`` resolves to under the active joblib configuration.

    Parameters
    ----------
    n_jobs : int or None
        As accepted by :func:`check_n_jobs`.

    Returns
    -------
    int
        At least 1.

    Examples
    --------
    >>> from fairlens._parallel import effective_n_jobs
    >>> effective_n_jobs(1)
    1
    """
    import joblib

    return max(1, int(joblib.effective_n_jobs(n_jobs)))


def fixed_chunks(n, chunk_size):
    """``[(start, stop), ...]`` covering ``range(n)`` in blocks of ``chunk_size``.

    The blocks depend only on ``n`` and ``chunk_size``: pass a constant ``chunk_size`` (not one
    derived from ``n_jobs``) so that the random stream of each block, and hence the result, is
    the same at every ``n_jobs``.

    Parameters
    ----------
    n : int
        Number of items.
    chunk_size : int
        Items per block (the last block may be shorter), at least 1.

    Returns
    -------
    list of (int, int)

    Raises
    ------
    ValueError
        If ``chunk_size < 1``.

    Examples
    --------
    >>> from fairlens._parallel import fixed_chunks
    >>> fixed_chunks(5, 2)
    [(0, 2), (2, 4), (4, 5)]
    """
    n = int(n)
    chunk_size = int(chunk_size)
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1; got {chunk_size}.")
    return [(s, min(s + chunk_size, n)) for s in range(0, n, chunk_size)]


def chunk_rng(seed, chunk_index, *stream):
    """The counter-based random stream of one chunk.

    Independent of which worker runs the chunk and of what ran before it on that worker.

    Parameters
    ----------
    seed : int
        The run's seed (:func:`fairlens._base.resolve_random_state`).
    chunk_index : int
        The chunk's key (its index or first row).
    *stream : int
        Separates independent uses within a chunk (e.g. ``0`` for sampling and ``1`` for a
        local search).

    Returns
    -------
    numpy.random.Generator
        ``Generator(Philox(SeedSequence([seed, chunk_index, *stream])))``.

    Examples
    --------
    >>> from fairlens._parallel import chunk_rng
    >>> bool(chunk_rng(0, 3).random() == chunk_rng(0, 3).random())
    True
    """
    ss = np.random.SeedSequence([int(seed) & (2**64 - 1), int(chunk_index), *map(int, stream)])
    return np.random.Generator(np.random.Philox(ss))


_LOCAL_ONLY = ("_nbytes", "_shipped", "_here")  # Payload attributes that are never pickled


class Payload:
    """The large, read-only arguments of a parallel call (model, dataset, arrays), shipped once.

    The object is weak-referenceable and its ``sys.getsizeof`` is its pickled size, so
    joblib's dask backend scatters it to the workers once per call instead of embedding it in
    every task.

    Parameters
    ----------
    **objects
        Become the attributes.

    Notes
    -----
    An attribute ``_here`` (set after construction) stays in this process: it is never
    pickled, so only a task run in this process sees it (``run_chunks(share_here=True)``'s
    share; the MAFT searches hand that share the run's own row sets through it).

    Examples
    --------
    >>> from fairlens._parallel import Payload
    >>> Payload(seed=3, rows=[1, 2]).seed
    3
    """

    def __init__(self, **objects):
        import uuid

        self.__dict__.update(objects)
        self._nbytes = None
        self._shipped = None
        self._token = uuid.uuid4().hex

    def __dask_tokenize__(self):
        # dask names a scattered object by its token; by default it hashes the content, so two
        # calls with equal payloads (a warm-up and the timed run, or the same analysis run twice)
        # shared ONE key on the cluster, and when the first call's futures were released the
        # second call's tasks failed with "lost dependencies" (or waited for the data to be sent
        # again).  One token per Payload object: no sharing, and no pickling just to hash it.
        return ("fairlens.Payload", self.__dict__.get("_token") or id(self))

    def nbytes(self):
        """Pickled size in bytes (computed once; 0 when unpicklable).

        Returns
        -------
        int

        Examples
        --------
        >>> from fairlens._parallel import Payload
        >>> Payload(a=1).nbytes() > 0
        True
        """
        if self._nbytes is None:
            try:
                self._nbytes = len(pickle.dumps(self.__getstate__(), protocol=pickle.HIGHEST_PROTOCOL))
            except Exception:  # unpicklable: only the sequential path can use it anyway
                self._nbytes = 0
        return self._nbytes

    def __sizeof__(self):
        return object.__sizeof__(self) + self.nbytes()

    def __getstate__(self):
        # what the workers receive: every model adapter (a Scorer, at the top level or one
        # attribute down, e.g. a MAFT search's scorer) without its dataset's
        # rows (``Scorer._for_workers``); computed once per payload, read-only afterwards
        names = [k for k in self.__dict__ if k not in _LOCAL_ONLY]
        if self._shipped is None or list(self._shipped) != names:
            self._shipped = {k: _for_workers(v) for k, v in self.__dict__.items() if k not in _LOCAL_ONLY}
        state = dict(self._shipped)
        state["_nbytes"] = None
        state["_shipped"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)


def _for_workers(obj, depth=1):
    """``obj`` as the workers need it: a :class:`fairlens.models.Scorer` without its dataset's
    rows; a fairlens object holding one (``depth`` attributes down) as a shallow copy holding
    the slim scorer; anything else as it is."""
    if isinstance(obj, Scorer):
        return obj._for_workers()
    if depth <= 0 or not type(obj).__module__.startswith("fairlens.") or not hasattr(obj, "__dict__"):
        return obj
    slim = {}
    for k, v in vars(obj).items():
        w = _for_workers(v, depth - 1)
        if w is not v:
            slim[k] = w
    if not slim:
        return obj
    import copy

    c = copy.copy(obj)
    c.__dict__.update(slim)
    return c


_CONTROLLER = {"controller": None, "modules": -1}  # this process's threadpoolctl controller


def _thread_controller():
    """This process's ``threadpoolctl.ThreadpoolController``, made once and again only when
    modules were imported since (an extension module may have loaded a BLAS or OpenMP
    library), or None without threadpoolctl.

    A fresh ``threadpool_limits(...)`` scans every library loaded in the process to find the
    thread pools: 2-10 ms a call here (numba, scipy, scikit-learn and numpy loaded), paid by
    every parallel task and every run at its start; the cached controller only sets the limits
    (about 0.03 ms).  A library loaded without an import (``ctypes``) is found at the next
    import; missing it would only let that library use its default threads (speed, never an
    answer)."""
    import sys

    n = len(sys.modules)
    c = _CONTROLLER
    if c["modules"] != n:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
            return None
        c["controller"], c["modules"] = ThreadpoolController(), len(sys.modules)
    return c["controller"]


def thread_limit(threads=1, user_api="blas"):
    """Context manager limiting this process's thread pools of ``user_api`` to ``threads``.

    Parameters
    ----------
    threads : int or None, default 1
        ``None`` leaves the pools alone (a null context).
    user_api : {"blas", "openmp"} or None, default "blas"
        Which pools (threadpoolctl's names); None limits every pool.

    Returns
    -------
    contextlib.AbstractContextManager
        Restores the previous limits on exit.

    Examples
    --------
    >>> from fairlens._parallel import thread_limit
    >>> with thread_limit(1, user_api=None):
    ...     pass
    """
    import contextlib

    if threads is None:
        return contextlib.nullcontext()
    controller = _thread_controller()
    if controller is None:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return contextlib.nullcontext()
    return controller.limit(limits=int(threads), user_api=user_api)


def blas_limit(threads=1):
    """Context manager limiting the BLAS thread pools of this process to ``threads``.

    Parameters
    ----------
    threads : int or None, default 1
        ``None`` leaves the pools alone (a null context).

    Returns
    -------
    contextlib.AbstractContextManager

    Examples
    --------
    >>> from fairlens._parallel import blas_limit
    >>> with blas_limit(1):
    ...     pass
    """
    return thread_limit(threads, user_api="blas")


def plan_workers(n_jobs, n_chunks, work=None, min_work=None):
    """How many workers a call uses, and why: the one fall-back rule of fairlens.

    Parameters
    ----------
    n_jobs : int or None
        As accepted by :func:`check_n_jobs`, resolved under the active joblib configuration.
    n_chunks : int
        Number of fixed chunks (never more workers than chunks).
    work : float or None
        Estimated work of the whole call in model rows (or the unit of ``min_work``); None
        means unknown (no fall-back on size).
    min_work : float or None
        Least work per worker that pays for a worker; default :data:`MIN_WORK_PER_WORKER`.

    Returns
    -------
    (int, str)
        The number of workers (1 = in this process) and a one-line note for the result.

    Examples
    --------
    >>> from fairlens._parallel import plan_workers
    >>> plan_workers(2, 10, work=1000)[0]
    1
    >>> plan_workers(1, 10)
    (1, 'sequential (n_jobs=1)')
    """
    n_jobs = check_n_jobs(n_jobs)
    asked = effective_n_jobs(n_jobs)
    if asked <= 1:
        return 1, "sequential (n_jobs=1)"
    workers = min(asked, max(1, int(n_chunks)))
    if workers <= 1:
        return 1, f"sequential: one chunk of work (n_jobs asked {asked} workers)"
    min_work = MIN_WORK_PER_WORKER if min_work is None else float(min_work)
    if work is not None and float(work) / workers < min_work:
        return 1, (f"sequential fall-back: about {float(work):,.0f} model rows = {float(work) / workers:,.0f} per "
                   f"worker for {workers} workers, below MIN_WORK_PER_WORKER={min_work:,.0f} (too small to gain)")
    return workers, f"parallel on {workers} workers (one share each)"


_RECORDERS = []  # the lists of the active record_plans() blocks


class record_plans:
    """Context manager collecting what every :func:`run_chunks` call inside it did.

    On entry it returns a list; each :func:`run_chunks` call made inside the block (by any
    fairlens analysis) appends ``{"n_jobs_used": int, "note": str, "n_chunks": int}``: how many
    workers ran its chunks (1 = this process) and why.  Used by ``benchmarks/scale.py`` to report
    where each workload ran; it changes nothing in the calls.

    Examples
    --------
    >>> from fairlens._parallel import Payload, fixed_chunks, record_plans, run_chunks
    >>> def total(payload, chunk):
    ...     return sum(payload.values[chunk[0]:chunk[1]])
    >>> with record_plans() as plans:
    ...     _ = run_chunks(total, Payload(values=list(range(10))), fixed_chunks(10, 4), n_jobs=1)
    >>> plans
    [{'n_jobs_used': 1, 'note': 'sequential (n_jobs=1)', 'n_chunks': 3}]
    """

    def __enter__(self):
        self.plans = []
        _RECORDERS.append(self.plans)
        return self.plans

    def __exit__(self, *exc):
        _RECORDERS.remove(self.plans)
        return False


def _record(workers, note, n_chunks):
    for plans in list(_RECORDERS):
        plans.append({"n_jobs_used": int(workers), "note": note, "n_chunks": int(n_chunks)})


def _dask_broadcast(payload):
    """On joblib's dask backend: a configuration that sends ``payload`` to every worker before
    the tasks start (``scatter=[payload]``, broadcast).  Left to itself joblib scatters a large
    argument to ONE worker and relies on work stealing: the scheduler then queues every task on
    that worker (data locality) and the second worker's share started 0.85 s late in a 2.5 s
    MAFT call (``benchmarks/README.md``).  Elsewhere a null context."""
    import contextlib

    try:
        from joblib.parallel import get_active_backend

        backend = get_active_backend()[0]
    except Exception:  # pragma: no cover - joblib internals moved: keep joblib's default
        return contextlib.nullcontext()
    client = getattr(backend, "client", None)
    if type(backend).__name__ != "DaskDistributedBackend" or client is None:
        return contextlib.nullcontext()
    import uuid

    import joblib

    # a fresh key for every call: one payload used by two calls in a row (certification's bound
    # and brute-force passes) shared one key, and when the first call released it while the second
    # scattered it again, the second call's tasks were cancelled ("lost dependencies": seen once in
    # five boosted certifications on a LocalCluster)
    if isinstance(payload, Payload):
        payload.__dict__["_token"] = uuid.uuid4().hex

    return joblib.parallel_config(backend="dask", client=client, scatter=[payload],
                                  wait_for_workers_timeout=getattr(backend, "wait_for_workers_timeout", 10),
                                  **dict(getattr(backend, "submit_kwargs", {}) or {}))


def _can_share_here():
    """Whether this process may work a share itself: always on a local joblib backend; on dask
    only when the client's cluster is a ``LocalCluster`` (its workers share this machine; a
    remote cluster's workers should get all the work, this process may be a laptop)."""
    try:
        from joblib.parallel import get_active_backend

        backend = get_active_backend()[0]
    except Exception:  # pragma: no cover - joblib internals moved: be conservative
        return False
    if type(backend).__name__ != "DaskDistributedBackend":
        return True
    cluster = getattr(getattr(backend, "client", None), "cluster", None)
    return type(cluster).__name__ == "LocalCluster"


def _run_group(func, payload, chunks):
    with blas_limit(1):
        return [func(payload, c) for c in chunks]


def _one_worker_pool():
    """joblib's reusable loky executor with ONE worker process, for the one task a call sends
    while this process works the other share; None when the active joblib backend is not loky
    (or joblib's internals moved: the caller then uses ``joblib.Parallel`` as before).

    ``joblib.Parallel(n_jobs=1)`` runs in this process, so the executor is asked for directly
    (:func:`joblib.executor.get_memmapping_executor`, what joblib's loky backend uses), with the
    arguments ``joblib.Parallel(n_jobs=2)`` would give it under the active ``parallel_config``
    (its memmapping options, idle timeout and the thread-limit environment of two processes):
    a later ``joblib.Parallel`` call then reuses the executor, adding a worker, instead of
    replacing it, and the next MAFT phase finds the same warm worker."""
    try:
        import joblib
        from joblib._parallel_backends import LokyBackend
        from joblib.executor import get_memmapping_executor

        par = joblib.Parallel(n_jobs=2)  # reads the active configuration; starts nothing
        backend = par._backend
        # joblib's own loky backend, resolved by class (a subclass may manage its executor differently)
        if type(backend) is not LokyBackend or backend.effective_n_jobs(2) != 2:
            return None
        kwargs = {**getattr(backend, "backend_kwargs", {}), **par._backend_kwargs}
        kwargs.pop("prefer", None)
        kwargs.pop("require", None)
        timeout = kwargs.pop("idle_worker_timeout", None) or 300
        return get_memmapping_executor(1, timeout=timeout, env=backend._prepare_worker_env(n_jobs=2), **kwargs)
    except Exception:  # pragma: no cover - joblib's internals moved: joblib.Parallel as before
        return None


def _compiler_lock():
    """numba's global compiler lock (a ``threading.RLock``), or None when numba's internals moved."""
    try:
        from numba.core.compiler_lock import global_compiler_lock
    except ImportError:  # pragma: no cover - numba is a dependency
        return None
    lock = getattr(global_compiler_lock, "_lock", None)
    return lock if hasattr(lock, "acquire") and hasattr(lock, "release") else None


def _can_fork():
    """Whether a fork-safe task may run in a forked child here: Linux (macOS system libraries do
    not survive a fork), and joblib's loky backend active (its default: a user who configured
    another backend -- threads, dask, multiprocessing -- gets it)."""
    import os
    import sys

    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    try:
        from joblib._parallel_backends import LokyBackend
        from joblib.parallel import get_active_backend

        return isinstance(get_active_backend()[0], LokyBackend)
    except Exception:  # pragma: no cover - joblib's internals moved: use the backend
        return False


class _ForkTask:
    """The one task of a fork-safe call (``run_chunks(fork_safe=True)``), run in a child forked
    from this process when it is made: the child inherits ``func``, the payload, the imports and
    the loaded numba kernels, runs ``_run_group(func, payload, chunks)`` with the BLAS limit of one
    thread, writes the pickled result (or the exception) into a pipe and exits
    (``os._exit``: none of this process's exit handlers or buffers run twice).  Iterated as
    :class:`_OneTask`: it yields the result (the exception raised in the child is raised here, its
    traceback attached as a note); a child that dies without an answer (killed, out of memory)
    raises ``RuntimeError`` saying so.  Closed before the result is read (a stop, an interrupt),
    the child is killed and reaped."""

    def __init__(self, func, payload, chunks):
        import gc
        import os
        import warnings

        read, write = os.pipe()
        shm = _answer_file()
        lock = _compiler_lock()
        collecting = gc.isenabled()
        # no garbage collection in the child: a cycle that was already garbage here would run its
        # finalizers there too (closing a connection this process still uses); disabled across
        # the fork so that not even the child's first allocations collect
        gc.disable()
        try:
            with warnings.catch_warnings():
                # Python >= 3.12 warns about every fork of a process with threads (a Jupyter kernel
                # always has some); the child never takes a lock those threads may hold but numba's
                # compiler lock, which this thread holds across the fork (see the module docstring)
                warnings.filterwarnings("ignore", message=r".*fork\(\) may lead to deadlocks",
                                        category=DeprecationWarning)
                if lock is not None:
                    lock.acquire()
                try:
                    pid = os.fork()
                finally:
                    if lock is not None:
                        lock.release()  # in both processes: the child's one thread owned it
        except BaseException:
            for fd in (read, write, shm):
                if fd is not None:
                    os.close(fd)
            if collecting:
                gc.enable()
            raise
        if pid == 0:  # pragma: no cover - the child (coverage is not collected there)
            _fork_child(read, write, shm, func, payload, chunks)
        if collecting:
            gc.enable()
        os.close(write)
        self._pid, self._read, self._shm, self._status = pid, read, shm, None

    def _reap(self, kill):
        import os
        import signal

        if self._shm is not None:
            os.close(self._shm)
            self._shm = None
        if self._status is None:
            if kill:
                try:
                    os.kill(self._pid, signal.SIGKILL)
                except ProcessLookupError:  # pragma: no cover - already gone
                    pass
            self._status = os.waitpid(self._pid, 0)[1]
        if self._read is not None:
            os.close(self._read)
            self._read = None
        return self._status

    def __iter__(self):
        import os

        parts = []
        while True:
            part = os.read(self._read, 1 << 20)
            if not part:
                break
            parts.append(part)
        # the child closes the pipe once its answer is written, before it exits: the answer is
        # read here while the child's memory is torn down, and the child is reaped after the
        # caller has merged the answer (the generator resumes), not before
        os.close(self._read)
        self._read = None
        data = b"".join(parts)
        try:
            ok, value, text, spans = pickle.loads(data)
        except Exception:
            status = self._reap(kill=False)
            how = (f"killed by signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
                   else f"exit status {os.WEXITSTATUS(status)}")
            raise RuntimeError(f"run_chunks: the process forked to work a share ended ({how}) without returning "
                               f"it ({len(data)} bytes received); if it ran out of memory, use fewer rows or "
                               f"n_jobs=1") from None
        if spans is not None:
            try:
                value = _load_answer(self._shm, value, spans)
            except Exception as exc:  # out of memory or address space here: say so, not that the child died
                self._reap(kill=False)
                raise RuntimeError(f"run_chunks: the answer of the process forked to work a share could not be "
                                   f"loaded here ({exc}); use fewer rows or n_jobs=1") from exc
        if self._shm is not None:
            os.close(self._shm)  # the mapping, if any, holds the answer's pages
            self._shm = None
        if not ok:
            self._reap(kill=False)
            if hasattr(value, "add_note"):
                value.add_note(f"raised in the process forked to work a share:\n{text}")
            raise value
        yield value
        self._reap(kill=False)

    def close(self):
        self._reap(kill=True)


def _answer_file():
    """A file in memory (``memfd_create``) for a forked child's answer, or None where there is none."""
    import os

    if not hasattr(os, "memfd_create"):  # pragma: no cover - Linux has it
        return None
    try:
        return os.memfd_create("fairlens-share", os.MFD_CLOEXEC)
    except OSError:  # pragma: no cover - a kernel or sandbox without it: the answer goes through the pipe
        return None


#: Offsets of the arrays a forked child writes into its answer file are multiples of this (the
#: arrays loaded from it are aligned like NumPy's own, so that no kernel sees an unaligned array).
ANSWER_ALIGN = 64


def _dump_answer(answer, shm):  # pragma: no cover - runs in the forked child
    """The bytes a forked child sends through its pipe: ``(ok, value, text, spans)``.  A result
    (``ok``) whose arrays pickle out of band (protocol 5) is written into the file ``shm`` -- the
    arrays' bytes at the offsets ``spans`` (``[(offset, length), ...]``) and ``value`` the pickle
    that refers to them -- so that neither process copies them through the pipe; otherwise
    ``value`` is the answer itself and ``spans`` None."""
    import os

    ok, value, text = answer
    if ok and shm is not None:
        try:
            bufs = []
            head = pickle.dumps(value, protocol=5, buffer_callback=bufs.append)
            spans, end = [], 0
            for buf in bufs:
                raw = buf.raw()
                off = -(-end // ANSWER_ALIGN) * ANSWER_ALIGN
                n = raw.nbytes
                done = 0
                while done < n:
                    done += os.pwrite(shm, raw[done:], off + done)
                spans.append((off, n))
                end = off + n
            return pickle.dumps((True, head, "", spans), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            pass  # in band, through the pipe
    return pickle.dumps((ok, value, text, None), protocol=pickle.HIGHEST_PROTOCOL)


def _load_answer(shm, head, spans):
    """The value a forked child wrote into its answer file ``shm`` (:func:`_dump_answer`): its
    arrays are loaded in place, from a private (copy-on-write) mapping of the file."""
    import mmap

    views = [bytearray() for _ in spans]  # an empty array's buffer is written nowhere (it may lie past the file's end)
    size = max((off + n for off, n in spans if n), default=0)
    if size:
        # private: the arrays are writable, and a write copies the page instead of changing the file;
        # populated: the pages are mapped in one call instead of one fault each
        flags = mmap.MAP_PRIVATE | getattr(mmap, "MAP_POPULATE", 0)
        mem = memoryview(mmap.mmap(shm, size, flags=flags, prot=mmap.PROT_READ | mmap.PROT_WRITE))
        views = [mem[off:off + n] if n else views[i] for i, (off, n) in enumerate(spans)]
    return pickle.loads(head, buffers=views)


def _fork_child(read, write, shm, func, payload, chunks):  # pragma: no cover - runs in the forked child
    """The forked child of :class:`_ForkTask`: work the share, send the answer, close the pipe, exit."""
    import os
    import traceback

    code = 0
    try:
        os.close(read)
        try:
            answer = (True, _run_group(func, payload, chunks), "")
        except BaseException as exc:
            answer = (False, exc, traceback.format_exc())
        try:
            data = _dump_answer(answer, shm)
        except Exception:  # an exception that does not pickle: its text
            data = pickle.dumps((False, RuntimeError(answer[2] or repr(answer[1])), answer[2], None),
                                protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(data)
        while view:
            view = view[os.write(write, view):]
        os.close(write)  # the answer is complete: the parent reads it while this process exits
    except BaseException:
        code = 1
    finally:
        os._exit(code)


class _OneTask:
    """The one task a call sends to ``pool``'s worker, submitted at once (before this process
    works its own share, so that both shares run at the same time), iterated as
    ``joblib.Parallel``'s generator yields results (one group).  Closed before the task is done
    (a stop), the worker is killed as joblib kills its loky workers when a call is abandoned: the
    next call starts a fresh one instead of queueing behind the abandoned share."""

    def __init__(self, pool, func, payload, chunks):
        self._pool = pool
        self._fut = pool.submit(_run_group, func, payload, chunks)

    def __iter__(self):
        yield self._fut.result()

    def close(self):
        if not self._fut.done() and not self._fut.cancel():
            self._pool.terminate(kill_workers=True)


def _backend_streams():
    """Whether the active joblib backend hands results back as they finish
    (``return_as="generator"``); joblib's ``multiprocessing`` backend does not."""
    from joblib.parallel import get_active_backend

    return bool(getattr(get_active_backend()[0], "supports_return_generator", True))


def run_chunks(func, payload, chunks, *, n_jobs=None, stop=None, progress=None, work=None, min_work=None,
               info=None, tasks_per_worker=None, probe_seconds=None, on_result=None, share_here=False,
               fork_safe=False):
    """``[func(payload, c) for c in chunks]``, run through joblib when ``n_jobs`` allows.

    Parameters
    ----------
    func : callable
        ``func(payload, chunk) -> result``; a module-level function (it is pickled for the
        workers) that must not mutate ``payload``.
    payload : Payload
        Shared read-only arguments, shipped once per worker on dask.
    chunks : sequence
        Chunk descriptions, in the order the results are returned.
    n_jobs : int or None
        Validated with :func:`check_n_jobs`; resolved under the active
        ``joblib.parallel_config``.
    stop : callable or None
        Zero-argument callable (see ``_validation.check_stop``); checked between chunks (or
        between finished tasks when parallel).  When it returns True the remaining chunks are
        not run and the results so far are returned (fewer than ``len(chunks)``, always a
        prefix, in chunk order).
    progress : callable or None
        ``progress(done, total)`` after each chunk (sequential) or each task (parallel).
    work : float or None
        Estimated work of the call in model rows; when the work per worker is below
        ``min_work`` the chunks run in this process (see :func:`plan_workers`).
    min_work : float or None
        Default :data:`MIN_WORK_PER_WORKER`.
    info : dict or None
        Receives ``n_jobs_used`` (processes that compute: workers, and this process when it works
        a share), ``note`` (what ran where), ``share_here`` (whether this process works the first
        share) and, when tasks are sent, ``worker_processes`` (the worker processes the call uses:
        one per task sent on loky).
    tasks_per_worker : int or None
        Tasks per worker the chunks are grouped into (default :data:`TASKS_PER_WORKER` = 1);
        more tasks balance chunks of very unequal cost (e.g. hard rows of a certification)
        at the price of one more round trip per task.
    probe_seconds : float or None
        For callers that cannot estimate their work (``work=None``), the time-based fall-back:
        when workers would be used, the chunks first run in this process, in order, until all
        are done or ``probe_seconds`` have passed; only the chunks left then go to the workers
        (one share each).  A call that finishes within the probe never starts a task
        (``n_jobs_used`` 1, and the note says so); a larger one pays at most ``probe_seconds``
        plus one chunk before the workers start.  A chunk started before the probe ends
        finishes in this process, so keep chunks short.  Only where the chunks run depends on
        it, never the answer.  None or 0: no probe.
    on_result : callable or None
        ``on_result(index, result)``, called in this process with each chunk's result as soon
        as it is available, in chunk order (before ``progress``): a caller can merge a finished
        share while the other workers still run, instead of after the last one.

    share_here : bool, default False
        With workers: this process works the first share itself while the workers run the
        others, so that ``n_jobs`` processes compute, this one among them (instead of ``n_jobs``
        workers while this process waits).  It saves that share's round trip (payload, result
        transfer) and lets this process merge it (``on_result``) while the others still run.
        On dask only when the cluster is a ``LocalCluster`` (this machine's cores); a remote
        cluster gets every share.  The shares and the answer are the same; only where the first
        share runs changes, and ``info["note"]`` says so.  ``stop`` is checked between this
        process's chunks as between finished tasks, and once more when this process's share is
        done, before waiting for the workers (whose tasks are then abandoned).
    fork_safe : bool, default False
        ``func`` and ``payload`` execute nothing but NumPy, numba kernels and fairlens code on
        arrays (no user model, no library with its own threads): on Linux, with joblib's loky
        backend and one task sent, that task runs in a child forked from this process instead of a
        loky worker (no start-up, nothing pickled but the result; see the module docstring).  The
        answer is the same; ``info["forked"]`` says whether it happened.

    Returns
    -------
    list
        The results of a prefix of ``chunks`` (all of them unless stopped), in chunk order.

    Raises
    ------
    TypeError, ValueError
        If ``n_jobs`` is invalid (see :func:`check_n_jobs`).

    Examples
    --------
    >>> from fairlens._parallel import Payload, fixed_chunks, run_chunks
    >>> def total(payload, chunk):
    ...     return sum(payload.values[chunk[0]:chunk[1]])
    >>> run_chunks(total, Payload(values=list(range(10))), fixed_chunks(10, 4), n_jobs=1)
    [6, 22, 17]
    """
    n_jobs = check_n_jobs(n_jobs)
    chunks = list(chunks)
    total = len(chunks)
    workers, note = plan_workers(n_jobs, total, work, min_work)
    out = []
    start = 0
    if workers > 1 and probe_seconds is not None and float(probe_seconds) > 0:
        import time

        t0 = time.perf_counter()
        stopped = False
        while start < total and time.perf_counter() - t0 < float(probe_seconds):
            if stop is not None and stop():
                stopped = True
                break
            out.append(func(payload, chunks[start]))
            if on_result is not None:
                on_result(start, out[-1])
            start += 1
            if progress is not None:
                progress(start, total)
        left = total - start
        if stopped or left <= 1:
            workers = 1
            note = (f"sequential fall-back: {start} of {total} chunks done in this process within "
                    f"probe_seconds={float(probe_seconds):g} ({time.perf_counter() - t0:.2f} s; too small to gain"
                    + (", the last chunk also here)" if left == 1 else ")"))
        else:
            workers = min(workers, left)
            note = (f"parallel on {workers} workers (one share each) after {start} of {total} chunks in "
                    f"this process (probe_seconds={float(probe_seconds):g})")
        if stopped:
            if info is not None:
                info["n_jobs_used"], info["note"] = workers, note
            if _RECORDERS:
                _record(workers, note, total)
            return out
    # results as they finish (joblib's ``return_as="generator"``) are what lets this process work a
    # share while the workers run; joblib's "multiprocessing" backend returns them only at the end
    streams = workers > 1 and _backend_streams()
    here_too = bool(share_here) and streams and total - start > 1 and _can_share_here()
    if here_too:
        note = note.replace(f"{workers} workers (one share each)",
                            f"{workers} processes (one share each; this process works the first)")
    per = TASKS_PER_WORKER if tasks_per_worker is None else max(1, int(tasks_per_worker))
    # one task sent and nothing but arrays and fairlens code in it: a child forked from this process
    forked = (bool(fork_safe) and workers > 1 and min(total - start, per * workers) - here_too == 1
              and _can_fork())
    if forked:
        note += "; the share sent runs in a process forked from this one"
    if info is not None:
        info["n_jobs_used"] = workers
        info["note"] = note
        info["share_here"] = here_too
        info["forked"] = forked
    if _RECORDERS:
        _record(workers, note, total)
    if workers <= 1:
        for i in range(start, total):
            if stop is not None and stop():
                break
            out.append(func(payload, chunks[i]))
            if on_result is not None:
                on_result(i, out[-1])
            if progress is not None:
                progress(i + 1, total)
        return out

    import joblib

    rest = chunks[start:]
    n_tasks = min(len(rest), per * workers)
    bounds = np.linspace(0, len(rest), n_tasks + 1).round().astype(int)
    groups = [rest[a:b] for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    done = start
    here = groups[0] if here_too else None
    sent = groups[1:] if here_too else groups
    # one worker process per task sent (worker start-up is the cost; an idle worker goes cold); this
    # process waits (or works its share) and merges with one BLAS thread while the workers run
    n_workers = min(workers, len(sent))
    pool = _one_worker_pool() if n_workers == 1 and not forked else None
    if n_workers == 1 and pool is None and not forked:
        # not on loky (threads, dask: no process to start, and joblib would run n_jobs=1 here)
        n_workers = min(workers, len(groups))
    if info is not None:
        info["worker_processes"] = 1 if pool is not None or forked else n_workers
    limit = blas_limit(1)
    limit.__enter__()
    # one task sent (this process works the other share): joblib's own scatter sends the payload
    # to the one worker that runs it, without blocking this process (1.6-3 ms here against 9-14 ms
    # for the broadcast, which waits until every worker holds it; benchmarks/README.md)
    import contextlib

    gen = None
    if forked:
        try:
            gen = _ForkTask(func, payload, sent[0])
        except OSError as exc:  # no fork now (out of processes or memory): a loky worker instead
            pool = _one_worker_pool()
            if info is not None:
                info["forked"] = False
                info["note"] = note.replace("; the share sent runs in a process forked from this one",
                                            f"; the share sent runs in a loky worker (fork failed: {exc})")
    if gen is None and pool is not None:
        gen = _OneTask(pool, func, payload, sent[0])
    elif gen is None:
        with _dask_broadcast(payload) if len(sent) > 1 else contextlib.nullcontext():
            gen = joblib.Parallel(n_jobs=n_workers, return_as="generator" if streams else "list")(
                joblib.delayed(_run_group)(func, payload, g) for g in sent
            )
    try:
        if here is not None:
            for c in here:
                if stop is not None and stop():
                    return out
                out.append(func(payload, c))
                if on_result is not None:
                    on_result(done, out[-1])
                done += 1
                if progress is not None:
                    progress(done, total)
            if stop is not None and stop():
                # stopped while this process worked its share (a ``func`` may stop within a chunk
                # when it is told the same stop): return now instead of waiting for the workers
                return out
        for res in gen:
            if on_result is not None:
                for k, r in enumerate(res):
                    on_result(done + k, r)
            out.extend(res)
            done += len(res)
            if progress is not None:
                progress(done, total)
            if stop is not None and stop():
                break
    finally:
        close = getattr(gen, "close", None)
        if close is not None:
            import warnings

            with warnings.catch_warnings():
                # a stop abandons the tasks still running on purpose: joblib's advice to "adjust the
                # input task iterator" is not for the user of a stopped analysis
                warnings.filterwarnings("ignore", message=r".*tasks which were still being processed",
                                        category=UserWarning)
                close()
        limit.__exit__(None, None, None)
    return out
