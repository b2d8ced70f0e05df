"""SG: Symbolic Generation (Aggarwal et al., ESEC/FSE 2019), the black-box baseline of MAFT.

Aniya Aggarwal, Pranay Lohia, Seema Nagar, Kuntal Dey, Diptikalyan Saha. *Black box fairness
testing of machine learning models.* ESEC/FSE 2019, doi:10.1145/3338906.3338937.

SG combines a *local explanation* of the model with *symbolic execution*:

1. An input ``t`` is taken from a priority queue (seeds first; then, by rank, the inputs the
   two searches below generate) and checked for individual discrimination (Definition 2.1,
   the check of every fairlens searcher: all other combinations of the protected values).
2. The model is explained around ``t`` by a decision tree: LIME's tabular perturbations of
   ``t`` (each attribute drawn independently from its empirical distribution in the data, the
   first sample being ``t`` itself -- LIME's sampling for categorical attributes, which all
   attributes of the benchmark encodings are) are labelled by the model and a
   ``DecisionTreeClassifier`` is fitted to them.  The decision path of ``t`` is the *path
   constraint*: ``[(feature, "<=" or ">", threshold, confidence), ...]``, the confidence of a
   branch being the share of the node's samples that took it.  This is how the authors'
   comparison code (ADF's re-implementation of SG, which the MAFT authors re-implemented
   again) builds the "local decision tree explanation"; we use our own sampler instead of
   LIME's private one (same distribution) and sklearn's tree.
3. **Local search** (only if ``t`` is discriminatory): every constraint on a non-protected
   attribute is negated in turn and solved together with the other constraints on the same
   attribute and the attribute's domain; the solution changes that one attribute of ``t``.
   Rank ``1 + mean confidence`` (explored first).
4. **Global search**: walking the path from the root, the prefix up to each non-protected
   constraint with confidence >= ``T1 = 0.3`` is kept and that constraint negated; the
   solution sets every constrained attribute.  Rank ``10 - mean confidence``.
5. Constraints are solved with the Z3 SMT solver over the integer domain of each attribute
   (the dataset's bounds); a path constraint already solved is not solved again.

Constraints on protected attributes are never negated (changing a protected value is what
the discrimination check already does).  Each solution is checked for discrimination as soon
as it is generated, all solutions of one input in one batched model call.

Budget (the MAFT authors ran SG "with the same maximum search iterations" as the gradient
searchers): at most ``n_seeds * max_iter`` inputs of global rank (seeds and global-search
solutions) and ``n_local`` inputs of local rank per unique discriminatory instance found in
the global rank -- the same tries as the two-phase searchers -- or until the queue is empty.
An input is explained once (an input generated again is not re-queued).
"""
from __future__ import annotations

import heapq
import numbers
import time

import numpy as np

from fairlens._base import Interval
from fairlens._parallel import blas_limit as _blas_limit

from ._result import FairnessTestResult
from ._searchers import (
    _COMMON_CONSTRAINTS,
    _document,
    _run_keywords,
    _searcher_keywords,
    _TwoPhaseSearch,
)
from ._state import counterpart
from ._utils import CountingScorer, RowSet

__all__ = ["SG"]

_RANK_SEED, _RANK_LOCAL, _RANK_GLOBAL = 5.0, 1.0, 10.0


def _require_z3():
    try:
        import z3
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(
            "SG solves path constraints with the Z3 SMT solver: install it with "
            "`pip install z3-solver` (or `pip install 'fairlens-lab[baselines]'`)."
        ) from None
    return z3


class _Solver:
    """One run's Z3 solver over one ``Int`` per attribute, bounded by the integer domain
    ``[ilo, ihi]`` (``push``/``pop`` around each query)."""

    def __init__(self, z3, ilo, ihi):
        self.z3, self.ilo, self.ihi = z3, ilo, ihi
        self.solver = z3.Solver()
        self.vars = [z3.Int(f"x{j}") for j in range(len(ilo))]

    def solve(self, constraints, features, t):
        """A solution of ``constraints`` (a list of ``(f, is_le, thr)``) over the integer
        domains, written into a copy of ``t`` for ``features``; None if unsat."""
        z3, s, var = self.z3, self.solver, self.vars
        s.push()
        try:
            for f in sorted({f for f, _, _ in constraints}):
                s.add(var[f] >= int(self.ilo[f]), var[f] <= int(self.ihi[f]))
            for f, is_le, thr in constraints:
                bound = int(np.floor(thr))  # integer x: x <= thr  <=>  x <= floor(thr)
                s.add(var[f] <= bound if is_le else var[f] >= bound + 1)
            if s.check() != z3.sat:
                return None
            m = s.model()
            out = t.copy()
            for f in features:
                v = m[var[f]]
                if v is not None:
                    out[f] = float(v.as_long())
            return out
        finally:
            s.pop()


#: SG's own parameters and the shared ones whose meaning differs for SG (the rest are
#: documented once in :data:`fairlens.maft._searchers._PARAMETER_DOCS`).
_SG_DOCS = {
    "n_local": """n_local : int, default={default}
    Local-rank inputs allowed per unique global-rank discriminatory instance.""",
    "max_iter": """max_iter : int, default={default}
    Sets the global budget ``n_seeds * max_iter`` (explained inputs of global rank).""",
    "track_explored": """track_explored : bool, default={default}
    Count the unique explained inputs (``n_explored``, for ``success_rate``).""",
    "n_samples": """n_samples : int, default={default}
    LIME perturbations per explanation (the authors' code uses 5000).""",
    "max_depth": """max_depth : int or None, default={default}
    Depth of the explanation tree (None: grown fully, as in the authors' code).""",
    "confidence_threshold": """confidence_threshold : float in [0, 1], default={default}
    ``T1``: the global search stops walking a path at a branch of lower confidence.""",
}


@_document(own=_SG_DOCS)
class SG(_TwoPhaseSearch):
    """Symbolic Generation (Aggarwal et al., ESEC/FSE 2019): local decision-tree explanations
    and Z3-solved path constraints (see the module docstring for the algorithm).

    {parameters}

    Raises
    ------
    ImportError
        Without ``z3-solver``.
    TypeError, ValueError
        As :class:`MAFT`.

    Notes
    -----
    Requires ``z3-solver`` (extra ``fairlens-lab[baselines]``:
    ``pip install "fairlens-lab[baselines]"``), imported when an SG is built.
    The search is sequential (a priority queue); ``run`` refuses ``n_jobs`` other than 1.

    Examples
    --------
    >>> from fairlens.maft import SG
    >>> from fairlens.datasets import load_dataset
    >>> from sklearn.linear_model import LogisticRegression
    >>> census = load_dataset("census", encoding="benchmark")
    >>> model = LogisticRegression(max_iter=500).fit(census.X[:2000], census.y[:2000])
    >>> SG(model, census, protected=["sex"], n_seeds=3, n_local=3, n_samples=200).run().method  # doctest: +SKIP
    'SG'
    """

    method = "SG"

    _parameter_constraints = {
        **{k: v for k, v in _COMMON_CONSTRAINTS.items()
           if k not in ("global_step", "local_step", "decay", "update_interval", "epsilon", "engine")},
        "n_samples": [Interval(numbers.Integral, 2, None)],
        "max_depth": [None, Interval(numbers.Integral, 1, None)],
        "confidence_threshold": [Interval(numbers.Real, 0, 1)],
    }

    @_searcher_keywords
    def __init__(self, model, data, *, protected=None, n_seeds=1000, n_local=1000, random_state=0, seeds=None,
                 pool=None, favourable=1, max_iter=10, n_clusters=4, track_explored=True, blas_threads=1,
                 n_samples=5000, max_depth=None, confidence_threshold=0.3):
        _require_z3()
        self.n_samples, self.max_depth, self.confidence_threshold = n_samples, max_depth, confidence_threshold
        super().__init__(model, data, protected=protected, n_seeds=n_seeds, n_local=n_local,
                         random_state=random_state, seeds=seeds, pool=pool, favourable=favourable,
                         max_iter=max_iter, n_clusters=n_clusters, track_explored=track_explored,
                         blas_threads=blas_threads)
        pool = self.problem.pool
        # LIME's categorical sampling: each attribute's values with their frequencies in the data
        self._values, self._freqs = [], []
        for j in range(self.problem.d):
            v, c = np.unique(pool[:, j], return_counts=True)
            self._values.append(v)
            self._freqs.append(np.cumsum(c) / c.sum())
        lo, hi = self.problem.lo, self.problem.hi
        self._ilo = np.ceil(lo).astype(np.int64)
        self._ihi = np.floor(hi).astype(np.int64)

    def _result_params(self):
        p = super()._result_params()
        for k in ("global_step", "local_step", "decay", "update_interval", "epsilon"):
            p.pop(k, None)
        p.update(n_samples=self.n_samples, max_depth=self.max_depth, confidence_threshold=self.confidence_threshold)
        return p

    def _source_factory(self):
        return None

    # ------------------------------------------------------------------ steps
    def _perturb(self, t, rng):
        """LIME tabular sampling around ``t`` (categorical attributes): ``n_samples`` rows,
        each attribute drawn from its empirical distribution; row 0 is ``t``."""
        n, d = self.n_samples, self.problem.d
        Z = np.empty((n, d))
        u = rng.random((n, d))
        for j in range(d):
            Z[:, j] = self._values[j][np.minimum(np.searchsorted(self._freqs[j], u[:, j], side="right"),
                                                 self._values[j].size - 1)]
        Z[0] = t
        return Z

    def _path(self, t, scorer, rng):
        """Path constraint of ``t`` in a decision tree fitted to the model's labels of LIME
        perturbations: ``[(feature, is_le, threshold, confidence), ...]`` from the root."""
        from sklearn.tree import DecisionTreeClassifier

        Z = self._perturb(t, rng)
        y = (scorer(Z) > 0.5).astype(np.int64)
        if y.min() == y.max():
            return []  # the model is constant around t: a single leaf, no constraint
        tree = DecisionTreeClassifier(max_depth=self.max_depth, random_state=int(rng.integers(2**31 - 1)))
        tree.fit(Z, y)
        tr = tree.tree_
        nodes = tree.decision_path(t[None, :]).indices
        path = []
        for k, node in enumerate(nodes[:-1]):
            f = int(tr.feature[node])
            left, right = tr.children_left[node], tr.children_right[node]
            nl, nr = tr.n_node_samples[left], tr.n_node_samples[right]
            conf_left = nl / (nl + nr)
            is_le = nodes[k + 1] == left
            path.append((f, bool(is_le), float(tr.threshold[node]), float(conf_left if is_le else 1.0 - conf_left)))
        return path

    def _check(self, X, scorer):
        """Definition 2.1 for the rows ``X`` in one model call: (discriminatory, S, scores)."""
        pb = self.problem
        S = pb.similar(X)
        sc = scorer(S.reshape(-1, pb.d)).reshape(-1, pb.C)
        return np.any((sc[:, 1:] > 0.5) != (sc[:, :1] > 0.5), axis=1), S, sc

    # ------------------------------------------------------------------ run
    @_run_keywords
    def run(self, *, stop=None, progress=None, n_jobs=None, callback=None):
        """Run SG.

        Parameters
        ----------
        stop : threading.Event or callable, optional
            Checked after every explained input; the run returns what it found.
        progress : bool or callable, optional
            ``True`` shows a ``tqdm`` bar; a callable is called as ``progress(stage, done, total)``
            after every explained input (``stage`` ``"global"`` or ``"local"``: inputs of the
            current rank's budget).  A callable that cannot take three positional arguments is
            refused with a ``TypeError`` before the run starts.
        n_jobs : None or 1
            The search is sequential (a priority queue): any other value is refused.
        callback : callable, optional
            Called after every explained input with a dict (``phase`` = ``"global"`` or
            ``"local"`` -- the rank of the input --, ``step``, ``total``, ``n_global``,
            ``n_total``, ``elapsed``).

        Returns
        -------
        FairnessTestResult
            ``tries_global`` / ``tries_local``: explained inputs of global / local rank;
            ``n_explored``: unique inputs explained.

        Raises
        ------
        TypeError, ValueError
            For refused arguments (named); ``run(n_seeds, n_local, random_state=...,
            seeds=...)`` of earlier releases is a ``TypeError`` saying these go to ``SG(...)``.

        Examples
        --------
        >>> from fairlens.maft import SG
        >>> from fairlens.datasets import load_dataset
        >>> from sklearn.linear_model import LogisticRegression
        >>> census = load_dataset("census", encoding="benchmark")
        >>> model = LogisticRegression(max_iter=500).fit(census.X[:2000], census.y[:2000])
        >>> sg = SG(model, census, protected=["sex"], n_seeds=1, n_local=1, n_samples=50, random_state=0)
        >>> res = sg.run()
        >>> res.method, res.n_global + res.n_local == len(res.instances)
        ('SG', True)
        """
        if callback is not None and not callable(callback):
            raise TypeError(f"callback must be None or a callable taking a dict, got {type(callback).__name__}.")
        stop, report, n_jobs, random_state, _ = self._start(stop, progress, n_jobs, desc="SG")
        if n_jobs not in (None, 1):
            raise ValueError(f"SG.run: n_jobs must be None or 1 (the search is a sequential priority queue); "
                             f"got {n_jobs}.")
        n_local, track_explored, blas_threads = self.n_local, self.track_explored, self.blas_threads
        solver = _Solver(_require_z3(), self._ilo, self._ihi)  # this run's (nothing is kept on self)
        pb = self.problem
        seeds = self.draw_seeds(self.n_seeds, random_state) if self.seeds is None else self._check_seeds(self.seeds)
        pb.check_similar_memory(max(seeds.shape[0], 2 * pb.d), "SG.run", 1, "seeds")
        rng = np.random.default_rng(np.random.SeedSequence([random_state, 0x5C]))
        d = pb.d
        free = set(np.flatnonzero(pb.free).tolist())
        scorer = CountingScorer(self.scorer)
        found = RowSet(d)
        queued = RowSet(d)
        parts = {"global": [], "local": []}
        checked = {}
        heap = []
        counter = [0]
        budget_g = seeds.shape[0] * self.max_iter
        budget_l = 0
        tries = {"global": 0, "local": 0}
        visited = set()
        n_explored = 0
        with _blas_limit(blas_threads):
            t0 = time.perf_counter()
            timeline = [(0.0, 0)]
            stopped = False

            def push(rows, ranks):
                rows = np.asarray(rows, dtype=np.float64).reshape(-1, d)
                ranks = np.broadcast_to(np.asarray(ranks, dtype=np.float64), (rows.shape[0],))
                if rows.shape[0] == 0:
                    return
                new = queued.add(rows)  # an input is queued (and explained) once
                rows, ranks = rows[new], ranks[new]
                if rows.shape[0] == 0:
                    return
                disc, S, sc = self._check(rows, scorer)  # every solution checked at once
                for i, r in enumerate(rows):
                    checked[r.tobytes()] = (bool(disc[i]), S[i], sc[i])
                    heapq.heappush(heap, (float(ranks[i]), counter[0], r))
                    counter[0] += 1

            push(seeds, _RANK_SEED)
            while heap:
                rank, _, t = heapq.heappop(heap)
                phase = "global" if rank > 2 else "local"
                if phase == "global" and tries["global"] >= budget_g:
                    continue
                if phase == "local" and tries["local"] >= budget_l:
                    continue
                tries[phase] += 1
                n_explored += 1
                disc, S, sc = checked.pop(t.tobytes())
                if disc:
                    new = found.add(t[None, :])
                    if new[0]:
                        cpx, cps = counterpart(S[None], sc[None])
                        parts[phase].append((t.copy(), cpx[0], sc[0], cps[0]))
                        if phase == "global":
                            budget_l += n_local
                path = self._path(t, scorer, rng)
                sols, ranks = [], []
                if disc:  # local search: negate one non-protected constraint, same attribute only
                    for i, (f, is_le, thr, conf) in enumerate(path):
                        if f not in free:
                            continue
                        neg = list(path)
                        neg[i] = (f, not is_le, thr, 1.0 - conf)
                        key = tuple(neg)
                        if key in visited:
                            continue
                        visited.add(key)
                        sol = solver.solve([(g, le, th) for g, le, th, _ in neg if g == f], [f], t)
                        if sol is not None:
                            sols.append(sol)
                            ranks.append(_RANK_LOCAL + np.mean([c for *_, c in neg]))
                prefix = []  # global search: keep the prefix, negate the next constraint
                for f, is_le, thr, conf in path:
                    if f not in free:
                        continue
                    if conf < self.confidence_threshold:
                        break
                    neg = prefix + [(f, not is_le, thr, 1.0 - conf)]
                    key = tuple(neg)
                    if key not in visited:
                        visited.add(key)
                        sol = solver.solve([(g, le, th) for g, le, th, _ in neg], sorted({g for g, *_ in neg}),
                                            t)
                        if sol is not None:
                            sols.append(sol)
                            ranks.append(_RANK_GLOBAL - np.mean([c for *_, c in neg]))
                    prefix = prefix + [(f, is_le, thr, conf)]
                push(sols, ranks)
                el = time.perf_counter() - t0
                timeline.append((el, len(found)))
                if report is not None:
                    report(phase, tries[phase], budget_g if phase == "global" else budget_l)
                if callback is not None:
                    callback({"phase": phase, "step": tries[phase],
                              "total": budget_g if phase == "global" else budget_l,
                              "n_global": len(parts["global"]),
                              "n_total": len(found), "elapsed": el})
                if stop():
                    stopped = True
                    break
                if tries["global"] >= budget_g and tries["local"] >= budget_l:
                    break
            elapsed = time.perf_counter() - t0
        allp = parts["global"] + parts["local"]
        X = np.array([p[0] for p in allp]).reshape(-1, d)
        params = self._result_params()
        params.update({"engine": "sg", "n_seeds": int(seeds.shape[0]), "n_local": n_local,
                       "random_state": random_state})
        return FairnessTestResult(
            method=self.method,
            instances=X,
            counterparts=np.array([p[1] for p in allp]).reshape(-1, d),
            instance_scores=np.array([p[2] for p in allp], dtype=np.float64),
            counterpart_scores=np.array([p[3] for p in allp], dtype=np.float64),
            phase=np.array(["global"] * len(parts["global"]) + ["local"] * len(parts["local"]), dtype=str),
            n_global=len(parts["global"]),
            n_local=len(parts["local"]),
            elapsed=elapsed,
            queries=int(scorer.rows),
            model_calls=int(scorer.calls),
            tries_global=tries["global"],
            tries_local=tries["local"],
            n_explored=n_explored if track_explored else 0,
            seeds=seeds,
            timeline=np.asarray(timeline, dtype=np.float64),
            stopped=stopped,
            params=params,
            random_state=random_state,
            feature_names=pb.feature_names,
            dataset=self.data,
        )
