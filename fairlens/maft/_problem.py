"""The search space of the two-phase searches: the validated problem and the seeds.

:class:`_Problem` is what every searcher (and the mitigation and analysis helpers) knows about
the input domain: the encoded features and their bounds, the protected attributes and the
combinations of their values (the paper's ``similar_x``), the seed pool; it checks and encodes
rows.  :func:`select_seeds` draws the seeds of Algorithm 3 line 4 from the pool.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from fairlens._base import resolve_random_state
from fairlens._validation import MEMORY_LIMIT_BYTES, check_int, check_memory

from .._base import Interval, validated
from .._parallel import thread_limit
from ..models import _as_encoded
from . import _kcall

__all__ = ["select_seeds"]

# ----------------------------------------------------------------------------- validation
#: Similar rows held per walker by the search engines: the global phase keeps the current
#: and the hit similar sets plus one indexed copy, the local phase the current, the
#: global and the new ones plus one indexed copy; each row is d float64 plus a score.
_SIMILAR_COPIES = 4

#: Seed draws a problem remembers (:meth:`_Problem.pool_seeds`; a widget or a benchmark runs the
#: same draw again and again, and k-means costs 15-20 ms on census).
_SEED_MEMO = 8


class _Problem:
    """Validated description of the search space.

    The protected attributes' value combinations are *not* materialised here (their
    number ``C`` grows as a product and can be astronomically large): ``C`` is computed
    exactly, ``combos`` is built on first use after a memory check, and
    :meth:`combos_block` yields any slice of them in the order of
    ``itertools.product`` (last attribute fastest).
    """

    def __init__(self, dataset, protected, data=None):
        for attr in ("X", "bounds", "feature_names"):
            if not hasattr(dataset, attr):
                raise TypeError(
                    "dataset must be a fairlens Dataset (with X, bounds, feature_names), "
                    f"got {type(dataset).__name__}; "
                    "load one with fairlens.datasets.load_dataset(name, encoding='benchmark')."
                )
        self.dataset = dataset
        self.feature_names = [str(c) for c in dataset.feature_names]
        d = len(self.feature_names)
        B = np.asarray(dataset.bounds, dtype=np.float64)
        if B.shape != (d, 2) or not np.all(np.isfinite(B)) or np.any(B[:, 0] > B[:, 1]):
            raise ValueError(
                f"dataset.bounds must be a finite (d, 2) array of [min, max] rows with min <= max, got shape {B.shape}."
            )
        self.lo = np.ascontiguousarray(B[:, 0])
        self.hi = np.ascontiguousarray(B[:, 1])
        if protected is None:
            protected = list(getattr(dataset, "protected", []) or [])
        if isinstance(protected, (str, numbers.Integral)) and not isinstance(protected, bool):
            protected = [protected]
        try:
            protected = list(protected)
        except TypeError:
            raise TypeError(f"protected must be a list of feature names or indices, got {protected!r}.") from None
        if not protected:
            raise ValueError("protected must name at least one protected attribute, e.g. protected=['sex'].")
        idx = []
        for p in protected:
            if isinstance(p, numbers.Integral) and not isinstance(p, (bool, np.bool_)):
                if not 0 <= p < d:
                    raise ValueError(f"protected index {p} is out of range for {d} features.")
                idx.append(int(p))
            elif isinstance(p, str):
                if p not in self.feature_names:
                    raise ValueError(
                        f"protected attribute {p!r} is not a feature of the dataset; available: {self.feature_names}."
                    )
                idx.append(self.feature_names.index(p))
            else:
                raise TypeError(f"protected entries must be feature names or indices, got {p!r}.")
        if len(set(idx)) != len(idx):
            raise ValueError(f"protected lists an attribute twice: {protected}.")
        self.prot_idx = np.asarray(idx, dtype=np.int64)
        self.protected = [self.feature_names[i] for i in idx]
        n_values = []
        for i in idx:
            lo, hi = self.lo[i], self.hi[i]
            if lo != np.floor(lo) or hi != np.floor(hi):
                raise ValueError(
                    f"protected attribute {self.feature_names[i]!r} must be integer-coded with integer bounds "
                    f"(got [{lo}, {hi}]); use the benchmark encoding (encoding='benchmark') or discretise it."
                )
            if hi <= lo:
                raise ValueError(
                    f"protected attribute {self.feature_names[i]!r} takes a single value ({lo}) within its bounds: "
                    "no similar instance exists; choose an attribute with at least two values."
                )
            n_values.append(int(hi - lo) + 1)
        self.n_values = n_values
        self.C = int(math.prod(n_values))  # exact (Python int), nothing allocated
        self._combos = None
        if self.C > 2**53:
            raise ValueError(
                f"protected: the {self.describe_combinations()} cannot be enumerated; " + self.remedy()
            )
        self.free = np.ones(d, dtype=np.bool_)
        self.free[self.prot_idx] = False
        if not self.free.any():
            raise ValueError("every feature is protected: there is nothing to perturb.")
        self.d = d
        if data is None:
            pool = np.asarray(dataset.X, dtype=np.float64)
        else:
            pool = self.encode_rows(data, "data")
        if pool.ndim != 2 or pool.shape[1] != d or pool.shape[0] == 0:
            raise ValueError(f"the seed pool (data=) must be a non-empty (n, {d}) array, got shape {pool.shape}.")
        if not np.all(np.isfinite(pool)):
            raise ValueError("the seed pool (data=) contains NaN or inf; fill or drop those rows.")
        self.pool = np.ascontiguousarray(pool)
        self._seed_memo = {}

    def stripped(self):
        """A copy for the workers: no dataset and an empty seed pool (the domain, the protected
        attributes and their combinations stay)."""
        import copy

        pb = copy.copy(self)
        pb.dataset = None
        pb.pool = self.pool[:0]
        pb._seed_memo = {}
        return pb

    def pool_seeds(self, n_seeds, n_clusters, seed):
        """The seeds :func:`select_seeds` draws from the pool for ``(n_seeds, n_clusters, seed)``,
        checked against the domain (a copy).  k-means runs once per key: the last
        :data:`_SEED_MEMO` draws are kept."""
        key = (int(n_seeds), int(n_clusters), seed)
        if key not in self._seed_memo:
            while len(self._seed_memo) >= _SEED_MEMO:
                self._seed_memo.pop(next(iter(self._seed_memo)))
            self._seed_memo[key] = self.check_rows(select_seeds(self.pool, n_seeds, n_clusters, seed))
        return self._seed_memo[key].copy()

    # ------------------------------------------------------------------ combinations
    def describe_combinations(self):
        parts = [f"{n:,} values of {self.feature_names[i]!r}" for n, i in zip(self.n_values, self.prot_idx)]
        return f"{self.C:,} combinations of the protected values (" + " x ".join(parts) + ")"

    def remedy(self):
        return (
            "discretise a continuous protected attribute into a few groups (e.g. age bands, "
            "or the datasets' encoding='benchmark', whose protected attributes have 2-5 values), "
            "or protect fewer attributes at a time."
        )

    def combos_block(self, start, stop):
        """Combinations ``start .. stop-1`` as a float64 ``(stop - start, P)`` array."""
        k = np.arange(int(start), int(stop), dtype=np.int64)
        out = np.empty((k.size, len(self.n_values)), dtype=np.float64)
        for j in range(len(self.n_values) - 1, -1, -1):
            n = self.n_values[j]
            out[:, j] = self.lo[self.prot_idx[j]] + (k % n)
            k = k // n
        return out

    @property
    def combos(self):
        """Every combination of the protected values (built once, after a memory check)."""
        if self._combos is None:
            check_memory(
                self.C * (len(self.n_values) + self.d) * 8.0,
                f"the {self.describe_combinations()}",
                self.remedy(),
            )
            self._combos = np.ascontiguousarray(self.combos_block(0, self.C))
        return self._combos

    def check_similar_memory(self, n_rows, what, copies=1, fewer="rows"):
        """Refuse (ValueError naming the estimate and the remedy) when ``n_rows`` similar
        sets (``copies`` of them) would exceed the memory limit."""
        per = float(self.C) * (self.d + 1) * 8.0 * copies
        limit = MEMORY_LIMIT_BYTES
        if per * n_rows <= limit:
            return
        fit = int(limit // per)
        more = f", or use at most {fit:,} {fewer}" if fit >= 1 else ""
        check_memory(
            per * n_rows,
            f"{what}: the {self.describe_combinations()} for {n_rows:,} {fewer}",
            self.remedy()[:-1] + more + ".",
        )

    # ------------------------------------------------------------------ rows
    def encode_rows(self, X, what):
        """Rows in the encoded space (the shared check of :mod:`fairlens.models`): a DataFrame
        is aligned by column name, a readable one encoded through the dataset; the error
        names ``what``."""

        ds = self.dataset if hasattr(self.dataset, "encode") else None
        try:
            return _as_encoded(X, self.feature_names, self.d, ds, what)
        except (TypeError, ValueError) as exc:
            if str(exc).startswith(what):
                raise
            raise type(exc)(f"{what}: {exc}") from None

    def check_rows(self, X, what="seeds"):
        X = self.encode_rows(X, what)
        out = (X < self.lo) | (X > self.hi)
        if out.any():
            r, c = np.argwhere(out)[0]
            raise ValueError(
                f"the bounds exclude {int(out.any(axis=1).sum())} of the {what} rows (first: row {r}, feature "
                f"{self.feature_names[c]!r} = {X[r, c]} outside [{self.lo[c]}, {self.hi[c]}]); widen dataset.bounds "
                "or pass data= within the bounds."
            )
        P = X[:, self.prot_idx]
        on_grid = np.all(P == np.round(P), axis=1)
        if not on_grid.all():
            raise ValueError(f"protected attributes of the {what} must take integer values (codes).")
        return X

    def similar(self, X):
        """(W, C, d) rows: each walker then its similar instances."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        W = X.shape[0]
        self.check_similar_memory(W, "similar instances")
        combos = self.combos
        out = np.empty((W, self.C, self.d), dtype=np.float64)
        if W:
            n_off = _kcall.similar_rows(X, self.prot_idx, combos, out)
            if n_off:
                raise ValueError(
                    f"{n_off} rows have protected values outside the protected attributes' domain; "
                    "rows must lie within dataset.bounds."
                )
        return out



@validated({
    "pool": "no_validation", "n_seeds": [Interval(numbers.Integral, 1, None)],
    "n_clusters": [Interval(numbers.Integral, 1, None)], "random_state": ["random_state"],
})
def select_seeds(pool, n_seeds, n_clusters=4, random_state=0):
    """Seeds of Algorithm 3 line 4: k-means clusters sampled round robin.

    Parameters
    ----------
    pool : ndarray (n, d)
        The training data (finite numbers).
    n_seeds : int
        Number of seeds (``global_num``).  If ``n_seeds >= n``, the whole pool
        is returned (what the paper does for small datasets).
    n_clusters : int, default=4
        k-means clusters, sampled round robin (Algorithm 3 line 4).
    random_state : int, RandomState, Generator or None, default=0
        Resolved once by :func:`fairlens._base.resolve_random_state`; the int seeds
        ``numpy.random.default_rng`` (k-means and the round-robin draws).

    Notes
    -----
    k-means runs on one thread (``threadpoolctl``: OpenMP and BLAS): multi-threaded k-means
    sums each centre over per-thread partial sums, so its last bits (and, on a tie, the
    clusters) could depend on the machine's core count; and a thread that waits at a barrier
    for a busy core stalls for a scheduler time slice (measured on two cores: 14-23 ms in 13 of
    15 draws, 55-104 ms in the other two; 15-20 ms in all 30 draws on one thread).

    Returns
    -------
    ndarray (n_seeds, d)
        Rows of ``pool`` (a copy), cluster ``i % k`` giving seed ``i``, each drawn uniformly
        within its cluster (with replacement); the whole pool, shape ``(n, d)``, when
        ``n_seeds >= n``.

    Raises
    ------
    TypeError, ValueError
        A pool that is not a finite non-empty ``(n, d)`` array, refused counts.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.maft import select_seeds
    >>> pool = np.arange(40.0).reshape(20, 2)
    >>> select_seeds(pool, 5, n_clusters=2, random_state=0).shape
    (5, 2)
    """
    from sklearn.cluster import KMeans


    n_seeds = check_int("n_seeds", n_seeds, min=1)
    n_clusters = check_int("n_clusters", n_clusters, min=1)
    rng = np.random.default_rng(resolve_random_state(random_state))
    if hasattr(pool, "columns"):
        pool = pool.to_numpy()
    try:
        pool = np.asarray(pool, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("pool must be a numeric (n, d) array (encoded rows).") from None
    if pool.ndim != 2 or pool.shape[0] == 0 or pool.shape[1] == 0:
        raise ValueError(f"pool must be a non-empty (n, d) array, got shape {pool.shape}.")
    if not np.all(np.isfinite(pool)):
        raise ValueError("pool contains NaN or inf; fill or drop those rows.")
    if n_seeds >= pool.shape[0]:
        return pool.copy()
    k = min(n_clusters, pool.shape[0])
    km = KMeans(n_clusters=k, n_init=1, random_state=int(rng.integers(2**31 - 1)))
    with thread_limit(1, user_api=None):  # the same clusters on every machine, no barrier stalls
        labels = km.fit_predict(pool)
    members = [np.flatnonzero(labels == c) for c in range(k)]
    members = [m for m in members if m.size]
    rows = np.empty(n_seeds, dtype=np.int64)
    for i in range(n_seeds):
        m = members[i % len(members)]
        rows[i] = m[rng.integers(m.size)]
    return pool[rows].copy()


def score_similar(problem, scorer, x):
    """One row ``x`` and its similar instances (the reference engines' check): ``(S, scores)``,
    ``S`` of shape ``(C, d)`` with ``x`` first."""
    S = problem.similar(x[None, :])[0]
    return S, scorer(S)
