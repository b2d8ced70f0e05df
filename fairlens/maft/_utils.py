"""Small helpers of :mod:`fairlens.maft`: counted scorer, counter-based random
numbers, exact row de-duplication, Wilson intervals."""
from __future__ import annotations

import mmap

import numpy as np

from .._validation import check_probability
from ..models import Scorer, as_scorer
from . import _kcall

__all__ = ["CountingScorer", "stream_uniform", "RowSet", "KeySet", "RowCodec", "wilson_interval", "resolve_scorer"]

_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)
_GOLD = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)

#: Rows per model call (and per block of the chunked loops): bounds the memory of every
#: batch the slice builds (``rows x d`` float64) independently of the problem size.
BLOCK_ROWS = 262144


def _splitmix(z):
    z = z + _GOLD
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def stream_uniform(key, walkers, iteration, slot):
    """Counter-based uniform numbers in [0, 1).

    ``u = F(key, walker, iteration, slot)`` with a SplitMix64 mix, so that the
    random number a walker uses at a given iteration does not depend on how
    many other walkers run beside it.  This is what lets the lockstep engine and
    the one-seed-at-a-time reference consume *identical* randomness.

    Parameters
    ----------
    key : int or array of int
        Stream key derived from ``random_state`` (one per walker when an array: the
        search gives each seed block its own key, see ``_search``).
    walkers : array of int
        Walker ids.
    iteration : int
        Iteration number.
    slot : int
        Which random draw of that iteration (pair choice, attribute, direction...).
    """
    w = np.asarray(walkers, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = np.array(np.broadcast_to(np.asarray(key, dtype=np.uint64), w.shape), dtype=np.uint64)
        z = _splitmix(z ^ (w * np.uint64(0xD1B54A32D192ED03)))
        z = _splitmix(z ^ np.uint64((int(iteration) * 0x8CB92BA72F3D8DD7 + int(slot)) & 0xFFFFFFFFFFFFFFFF))
    return (z >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)


def stream_counter(iteration, slot):
    """The per-(iteration, slot) constant of :func:`stream_uniform` as a ``numpy.uint64`` (what
    the kernel :func:`fairlens.maft._kernels.stream_fill` takes)."""
    return np.uint64((int(iteration) * 0x8CB92BA72F3D8DD7 + int(slot)) & 0xFFFFFFFFFFFFFFFF)


def _row_hashes(rows):
    bits = np.ascontiguousarray(rows, dtype=np.float64).view(np.uint64)
    with np.errstate(over="ignore"):
        h = np.full(rows.shape[0], np.uint64(0xCBF29CE484222325), dtype=np.uint64)
        for j in range(rows.shape[1]):
            h = (h ^ bits[:, j]) * np.uint64(0x100000001B3)
            h = h ^ (h >> np.uint64(29))
    return h.view(np.int64)


class RowSet:
    """Exact set of ``float64`` rows (open addressing, numba insertion kernel).

    ``add(rows)`` returns a boolean mask of the rows that were new; rows keep
    their insertion order in ``rows``.
    """

    def __init__(self, d, capacity=1024):
        self.d = int(d)
        cap = max(16, int(capacity))
        self._store = np.empty((cap, self.d), dtype=np.float64)
        size = 1
        while size < 2 * cap:
            size *= 2
        self._table = np.full(size, -1, dtype=np.int64)
        self.n = 0

    def __len__(self):
        return self.n

    @property
    def rows(self):
        return self._store[: self.n]

    def _grow(self, need):
        cap = self._store.shape[0]
        while cap < need:
            cap *= 2
        store = np.empty((cap, self.d), dtype=np.float64)
        store[: self.n] = self._store[: self.n]
        self._store = store
        size = self._table.shape[0]
        while size < 2 * cap:
            size *= 2
        old = self._store[: self.n].copy()
        self._table = np.full(size, -1, dtype=np.int64)
        n = self.n
        self.n = 0
        if n:
            is_new = np.empty(n, dtype=np.bool_)
            self.n = int(_kcall.table_insert(self._table, self._store, 0, old, _row_hashes(old), is_new))

    def add(self, rows):
        rows = np.asarray(rows, dtype=np.float64)
        if rows.ndim == 1 and rows.size == 0:
            rows = rows.reshape(0, self.d)
        if rows.ndim != 2 or rows.shape[1] != self.d:
            raise ValueError(f"RowSet.add: rows must have shape (m, {self.d}), got {rows.shape}")
        rows = np.ascontiguousarray(rows) + 0.0
        m = rows.shape[0]
        if self.n + m > self._store.shape[0]:
            self._grow(self.n + m)
        is_new = np.empty(m, dtype=np.bool_)
        self.n = int(_kcall.table_insert(self._table, self._store, self.n, rows, _row_hashes(rows), is_new))
        return is_new


#: Slot tables of at least this many bytes are mapped fresh from the kernel (:func:`fresh_zeros`).
#: Also the huge page size the mapping is aligned to (2 MiB on x86-64 and most arm64 kernels).
FRESH_BYTES = 1 << 21


def _numpy_huge_pages():
    """Whether NumPy advises huge pages for its large arrays here (its own check of the kernel,
    and ``NUMPY_MADVISE_HUGEPAGE=0`` turns it off)."""
    import importlib

    for name in ("numpy._core.multiarray", "numpy.core.multiarray"):  # NumPy 2, NumPy 1
        try:
            get = getattr(importlib.import_module(name), "_get_madvise_hugepage", None)
        except ImportError:
            continue
        if get is not None:
            return bool(get())
    return False


def fresh_zeros(shape):
    """``np.zeros(shape, dtype=np.int64)`` for a hash set's slot table.  Where NumPy advises huge
    pages for its own large arrays (Linux; ``NUMPY_MADVISE_HUGEPAGE``), a table of at least
    :data:`FRESH_BYTES` is a private anonymous mapping of fresh pages, aligned to and advised for
    transparent huge pages (``MADV_HUGEPAGE``), as NumPy does; else the ordinary allocation.

    Why: a slot table is touched at random, sparsely at first.  From ``malloc`` a 16 MiB table
    reuses heap pages that ``calloc`` must clear, and after a fork (a parallel share,
    ``run_chunks(fork_safe=True)``) each of those pages is copied on its first write: 4,096 page
    faults, 40-110 ms when a share starts on a 2-vCPU Firecracker guest, against 1-10 ms for the
    fresh mapping (``benchmarks/maft_tables.py``; ``benchmarks/README.md``, round thirteen).  The
    values are the same zeros either way, and the mapping is private: a fork copies it like any
    other memory.  A mapping the system refuses falls back to ``np.zeros`` (whose ``MemoryError``
    then says that memory ran out)."""
    shape = tuple(int(n) for n in np.atleast_1d(shape))
    nbytes = 8 * int(np.prod(shape))
    huge = getattr(mmap, "MADV_HUGEPAGE", None)
    flags = getattr(mmap, "MAP_PRIVATE", None), getattr(mmap, "MAP_ANONYMOUS", None)
    if nbytes < FRESH_BYTES or huge is None or None in flags or not _numpy_huge_pages():
        return np.zeros(shape, dtype=np.int64)
    try:
        buf = mmap.mmap(-1, nbytes + FRESH_BYTES, flags=flags[0] | flags[1])
    except OSError:  # refused (address space, map count): the ordinary allocation
        return np.zeros(shape, dtype=np.int64)
    offset = -np.frombuffer(buf, dtype=np.uint8, count=1).ctypes.data % FRESH_BYTES
    try:
        buf.madvise(huge, offset, nbytes)
    except OSError:  # pragma: no cover - the kernel refuses the advice: ordinary pages
        pass
    return np.frombuffer(buf, dtype=np.int64, count=nbytes // 8, offset=offset).reshape(shape)


class KeySet:
    """Exact set of integer keys ``(m, k)`` int64 (numba open addressing), insert-or-find.

    ``index(keys)`` returns ``(position, is_new)``: where each key sits in :attr:`keys`
    (insertion order) and whether this call inserted it (its first occurrence).  With one
    int64 per row (:class:`RowCodec` on an integer grid) this is the cheap row set of the
    search engines.

    ``positions=False`` (one non-negative int64 key per row only) makes a membership-only set:
    :meth:`insert` adds keys, :attr:`keys` and ``len`` tell which and how many, and the slot
    table holds 8 bytes a slot instead of 16 (``key_add1``): the explored rows of a search,
    whose positions nobody asks for, keep half the table in the caches.
    """

    def __init__(self, k=1, capacity=1024, positions=True):
        self.k = int(k)
        self.positions = bool(positions) or self.k != 1
        cap = max(16, int(capacity))
        self._store = np.empty((cap, self.k), dtype=np.int64)
        self._table = self._new_table(_pow2(2 * cap))
        self.n = 0

    def _new_table(self, size):
        # one int64 key: the key sits beside 1 + its position in the slot (one cache miss per
        # look-up; 0 = empty, so the table is fresh zeroed pages, no fill pass), or alone as
        # key + 1 in a membership-only set; wider keys: the slot holds the position (-1 = empty),
        # the key stays in the store
        if self.k == 1:
            return fresh_zeros((size, 2) if self.positions else size)
        return np.full(size, -1, dtype=np.int64)

    def _insert(self, n_store, keys, pos, new):
        # the kernel's preconditions hold by construction (the checked wrappers of _kcall test
        # them at every call, 2,000 calls a run): this set allocates its table (a power of two,
        # at least twice the store), its store ((cap, k) int64, grown before an insert that
        # would not fit, so the load stays <= 1/2) and the outputs pos/new ((m,) int64/bool);
        # index() checks the keys' dtype, shape and C order
        if not self.positions:  # key_add1 checks the keys' range itself (-1: nothing inserted)
            return int(_kcall.raw.key_add1(self._table, self._store, int(n_store), keys))
        kernel = _kcall.raw.key_insert1 if self.k == 1 else _kcall.raw.key_insert
        return int(kernel(self._table, self._store, int(n_store), keys, pos, new))

    def __len__(self):
        return self.n

    @property
    def keys(self):
        """The distinct keys in insertion order, ``(n, k)``."""
        return self._store[: self.n]

    def _grow(self, need):
        cap = self._store.shape[0]
        while cap < need:
            cap *= 2
        store = np.empty((cap, self.k), dtype=np.int64)
        store[: self.n] = self._store[: self.n]
        self._store = store
        self._table = self._new_table(_pow2(2 * cap))
        n, self.n = self.n, 0
        if n:
            old = np.ascontiguousarray(store[:n])
            if self.positions:
                self.n = self._insert(0, old, np.empty(n, np.int64), np.empty(n, np.bool_))
            else:
                self.n = self._insert(0, old, None, None)

    def insert(self, keys):
        """Insert ``keys`` (``(m, k)`` int64); returns nothing (any set; the membership-only
        set's one way in)."""
        if self.positions:
            self.index(keys)
            return
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        if keys.ndim != 2 or keys.shape[1] != 1:
            raise ValueError(f"KeySet.insert: keys must have shape (m, 1), got {keys.shape}")
        m = keys.shape[0]
        if m == 0:
            return
        if self.n + m > self._store.shape[0]:
            self._grow(self.n + m)
        n = self._insert(self.n, keys, None, None)  # the kernel checks the keys' range first
        if n < 0:
            raise ValueError("KeySet.insert: a membership-only set holds keys in [0, 2**63 - 1)")
        self.n = n

    def index(self, keys):
        """Insert ``keys`` (``(m, k)`` int64); returns ``(position, is_new)``."""
        if not self.positions:
            raise TypeError("KeySet.index: this set was made with positions=False (membership only); "
                            "use insert(), or make it with positions=True")
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        if keys.ndim != 2 or keys.shape[1] != self.k:
            raise ValueError(f"KeySet.index: keys must have shape (m, {self.k}), got {keys.shape}")
        m = keys.shape[0]
        if self.n + m > self._store.shape[0]:
            self._grow(self.n + m)
        pos = np.empty(m, dtype=np.int64)
        new = np.empty(m, dtype=np.bool_)
        self.n = self._insert(self.n, keys, pos, new)
        return pos, new

    def add(self, keys):
        """Insert ``keys``; returns the mask of keys that were new."""
        return self.index(keys)[1]

    def reserve(self, m):
        """Room for ``m`` more keys (store and table, load <= 1/2) without growing."""
        if self.n + int(m) > self._store.shape[0]:
            self._grow(self.n + int(m))


def _pow2(n):
    size = 16
    while size < n:
        size *= 2
    return size


class RowCodec:
    """Rows of the search space <-> exact int64 keys.

    On an integer grid (integer bounds, integer rows, integer steps) whose size fits in 62
    bits, a row is packed into ONE int64 (mixed radix over ``lo..hi``): the engines'
    explored and found sets then hash one integer per row, and a task returns 8 bytes per row.
    Otherwise the key is the row's ``d`` float64 bit patterns (``-0.0`` normalised), as exact.
    """

    def __init__(self, lo, hi, grid):
        self.lo = np.ascontiguousarray(np.asarray(lo, dtype=np.float64).reshape(-1))
        self.d = self.lo.size
        span = np.asarray(hi, dtype=np.float64) - self.lo + 1.0
        self.packed = bool(grid) and float(np.prod(span)) < 2.0**62
        if self.packed:
            self.span = span.astype(np.int64)
            mult = np.ones(self.d, dtype=np.int64)
            for j in range(self.d - 2, -1, -1):
                mult[j] = mult[j + 1] * self.span[j + 1]
            self.mult = mult
            _kcall.check_phase("pack_rows", {"lo": (self.lo, np.dtype(np.float64), (self.d,)),
                                             "mult": (self.mult, np.dtype(np.int64), (self.d,))})
        self.k = 1 if self.packed else self.d

    def keys(self, X):
        """``(n, k)`` int64 keys of the rows ``X``."""
        X = np.asarray(X, dtype=np.float64)
        if self.packed:
            X = np.ascontiguousarray(X.reshape(-1, self.d))
            out = np.empty((X.shape[0], 1), dtype=np.int64)
            # X: (n, d) float64, C order (just made so); lo (d,) float64 and mult (d,) int64 are
            # this codec's own (checked in __init__); out allocated here: the kernel's
            # preconditions hold by construction, so it is called unchecked (2,000 calls a run)
            _kcall.raw.pack_rows(X, self.lo, self.mult, out)  # = ((X - lo).astype(int64) @ mult)
            return out
        return np.ascontiguousarray(X + 0.0).view(np.int64).reshape(-1, self.d)

    def rows(self, K):
        """The rows of the keys ``K`` (the inverse of :meth:`keys`)."""
        K = np.asarray(K, dtype=np.int64)
        if not self.packed:
            return np.ascontiguousarray(K).view(np.float64).reshape(-1, self.d)
        k = np.ascontiguousarray(K.reshape(-1))
        out = np.empty((k.size, self.d), dtype=np.float64)
        _kcall.unpack_rows(k, self.lo, self.span, out)  # lo[j] + (k % span[j]), k //= span[j], last column first
        return out

    def pairs(self, K, cpv, prot_idx, out, cp_out):
        """Write the rows of the keys ``K`` into ``out`` and their counterparts (the same rows with
        the columns ``prot_idx`` set to ``cpv``, ``(n, P)``) into ``cp_out``, in one pass."""
        K = np.asarray(K, dtype=np.int64)
        cpv = np.ascontiguousarray(cpv, dtype=np.float64)
        if not self.packed:
            out[:] = np.ascontiguousarray(K).view(np.float64).reshape(-1, self.d)
            cp_out[:] = out
            cp_out[:, prot_idx] = cpv
            return
        _kcall.unpack_pairs(np.ascontiguousarray(K.reshape(-1)), cpv, self.lo, self.span, prot_idx, out, cp_out)


_ACTIVATIONS = {}  # name -> in-place function, filled on first use in each process


def _activation(name):
    """scikit-learn's in-place activation ``name`` (``sklearn.neural_network._base.ACTIVATIONS``:
    the same ufuncs, so the same bits), without importing scikit-learn."""
    fn = _ACTIVATIONS.get(name)
    if fn is None:
        if name == "relu":
            def fn(a):
                np.maximum(a, 0, out=a)
        elif name == "logistic":
            from scipy.special import expit  # import time: only where a logistic layer is replayed

            def fn(a):
                expit(a, out=a)
        elif name == "tanh":
            def fn(a):
                np.tanh(a, out=a)
        elif name == "identity":
            def fn(a):
                return None
        else:
            raise ValueError(f"MLPReplay: activation {name!r} is not replayed")
        _ACTIVATIONS[name] = fn
    return fn


class MLPReplay:
    """An exact replay of ``predict_proba`` of a fitted scikit-learn ``MLPClassifier`` (alone or
    after ``StandardScaler`` steps of a ``Pipeline``) fitted on encoded arrays, without the
    per-call input validation of scikit-learn.

    The searches call small models thousands of times on a few hundred rows; scikit-learn's
    validation (``check_array``, feature-name and fitted checks) costs about 0.5 ms per call,
    as much as the forward pass of the census MLP itself, and a parallel run pays it once per
    worker and step.  The replay performs the same floating-point operations in the same order
    (``X - mean_``, ``/ scale_``, ``X @ coefs_[i] + intercepts_[i]``, the activations of
    ``sklearn.neural_network._base``, written out with the same NumPy and SciPy ufuncs), and
    :func:`mlp_replay` only uses it after checking that it reproduces the scorer's answers bit
    for bit.  It holds arrays only: a worker that scores through it never imports scikit-learn
    (about 2.3 CPU seconds of a fresh loky worker's first task; the searches ship no model when
    they have a replay, :meth:`fairlens.maft._state.SearchSpec.for_workers`).

    Parameters
    ----------
    scalers : list of (mean or None, scale or None)
    coefs, intercepts : list of ndarray
    activation, out_activation : str
    column : int
        The favourable class's column of ``predict_proba`` (0 or 1).
    """

    def __init__(self, scalers, coefs, intercepts, activation, out_activation, column):
        self.scalers = scalers
        self.coefs = coefs
        self.intercepts = intercepts
        self.activation = activation
        self.out_activation = out_activation
        self.column = int(column)

    def __call__(self, X):
        X = np.array(X, dtype=np.float64, order="C", copy=True)
        for mean, scale in self.scalers:
            if mean is not None:
                X -= mean
            if scale is not None:
                X /= scale
        a = X
        last = len(self.coefs) - 1
        hidden = _activation(self.activation)
        for i, (W, b) in enumerate(zip(self.coefs, self.intercepts)):
            a = a @ W
            a += b
            if i != last:
                hidden(a)
        _activation(self.out_activation)(a)
        p = a.ravel()
        return p if self.column == 1 else 1 - p


def mlp_replay(scorer, probe):
    """An :class:`MLPReplay` of ``scorer``'s model, or None.

    None unless the scorer (:func:`fairlens.models.as_scorer`) calls ``predict_proba`` of a
    binary ``MLPClassifier`` (or a ``Pipeline`` of ``StandardScaler`` steps and one) on encoded
    arrays, AND the replay returns exactly (bit for bit) the scorer's scores on the rows of
    ``probe`` in three batch sizes -- otherwise the model is called as usual.

    Parameters
    ----------
    scorer : fairlens.models.Scorer
    probe : ndarray (n, d)
        Encoded rows the search will score (e.g. its seeds).

    Returns
    -------
    MLPReplay or None
    """
    try:
        from sklearn.neural_network import MLPClassifier
        from sklearn.pipeline import Pipeline
        from sklearn.preprocessing import StandardScaler
    except ImportError:  # pragma: no cover
        return None
    if (getattr(scorer, "input_kind", None) != "encoded" or getattr(scorer, "_kind", None) != "proba"
            or getattr(scorer, "output", None) != "auto"):
        return None
    model = scorer.model
    steps = [s for _, s in model.steps] if isinstance(model, Pipeline) else [model]
    mlp = steps[-1]
    if type(mlp) is not MLPClassifier or len(getattr(mlp, "classes_", ())) != 2 or mlp.n_outputs_ != 1:
        return None
    scalers = []
    for st in steps[:-1]:
        if st == "passthrough" or st is None:
            continue
        if type(st) is not StandardScaler:
            return None
        scalers.append((st.mean_ if st.with_mean else None, st.scale_ if st.with_std else None))
    try:
        rep = MLPReplay(scalers, list(mlp.coefs_), list(mlp.intercepts_), mlp.activation, mlp.out_activation_,
                        scorer._column_index())
        P = np.ascontiguousarray(np.asarray(probe, dtype=np.float64))
        if P.ndim != 2 or P.shape[0] == 0:
            return None
        for part in (P, P[:1], P[: max(1, P.shape[0] // 3)]):
            if not np.array_equal(rep(part), np.asarray(scorer(part), dtype=np.float64)):
                return None
    except Exception:  # anything unexpected: call the model as usual
        return None
    return rep


class CountingScorer:
    """Wrap a scorer ``f(X) -> (n,)`` and count the rows and calls it sees.

    Large inputs are scored in chunks of ``max_rows`` rows.  ``fast`` (an :class:`MLPReplay`
    checked by :func:`mlp_replay`) replaces the scorer's call when given.
    """

    def __init__(self, scorer, max_rows=BLOCK_ROWS, fast=None):
        self.scorer = scorer if fast is None else fast
        self.max_rows = int(max_rows)
        self.rows = 0
        self.calls = 0

    def __call__(self, X):
        X = np.asarray(X, dtype=np.float64)
        n = X.shape[0]
        self.rows += n
        if n <= self.max_rows:
            self.calls += 1
            return np.ascontiguousarray(np.asarray(self.scorer(X), dtype=np.float64).reshape(n))
        out = np.empty(n, dtype=np.float64)
        for s in range(0, n, self.max_rows):
            self.calls += 1
            out[s : s + self.max_rows] = np.asarray(self.scorer(X[s : s + self.max_rows]), dtype=np.float64).ravel()
        return out


def resolve_scorer(model, dataset=None, favourable_class=1, name="favourable"):
    """Adapt ``model`` once with :func:`fairlens.models.as_scorer` (the one model protocol).

    With a dataset, a pipeline fitted on the readable frame, a model fitted on an
    encoded DataFrame (any column order) and an array model are all called in the
    form they were fitted on; rows are always passed in the dataset's encoded space.
    """

    classes = getattr(model, "classes_", None)
    if not isinstance(model, Scorer) and classes is not None and favourable_class != 1:
        # an explicit favourable_class must be one of the model's classes (as_scorer would
        # otherwise fall back to the dataset's favourable label)
        listed = list(np.asarray(classes).tolist())
        if favourable_class not in listed:
            raise ValueError(
                f"{name}={favourable_class!r} is not one of the model's classes {listed}; pass "
                f"{name}=<the class that is the favourable outcome>."
            )
    return as_scorer(model, dataset, favourable=favourable_class)



def wilson_interval(k, n, confidence=0.95):
    """Wilson score interval for a binomial proportion ``k / n``."""
    from scipy.stats import norm


    confidence = check_probability("confidence", confidence, include_0=False, include_1=False)
    if n <= 0:
        return (float("nan"), float("nan"))
    z = float(norm.ppf(0.5 + confidence / 2.0))
    p = k / n
    den = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    # the interval contains p (rounding can put centre - half a hair above 0 when k = 0)
    return (float(min(p, max(0.0, centre - half))), float(max(p, min(1.0, centre + half))))
