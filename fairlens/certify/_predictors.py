"""The predictor protocol of the one certification driver (:mod:`fairlens.certify._certify`).

Every flat representation a reader produces (:mod:`fairlens.certify._readers`) has a predictor
class here, looked up along the flat type's MRO in :data:`PREDICTORS`. The driver knows nothing
else about the model: it asks the predictor class for the rows (``inputs``/``group``), builds one
predictor per group of rows and runs the cascade of the paper's section 4 (FLB 4.3 -> ELB 4.4 ->
brute force 4.1) on it in fixed row blocks, through these methods:

* ``predict_index(sl)`` -- the certified predictor's class index of the rows ``sl`` (clean vote);
* ``flb(rows)`` -> ``(attackable, flb_sum, delta)`` -- the fast lower bound (section 4.3);
* ``elb(rows)`` -> ``(attackable, cover_f, cover_s, delta)`` -- the exhaustive lower bound (4.4);
* ``new_state()`` / ``brute(rows, state, work)`` -> ``(n_done, attackable, wit_f, wit_v, n_eval,
  state)`` -- the exhaustive search (4.1), exactly resumable: it stops after about ``work`` units
  and ``state`` says where to continue (the anytime scheduler, :mod:`._schedule`, relies on it).
  Every witness it returns is *confirmed*: a forest's replay is exact (confirmed trivially); a
  boosted model's candidate inside the float32 ambiguity zone is confirmed by the library's own
  ``predict`` (a rejected one resumes the search right after it).
* ``covers(flat, x, y, budget)`` (class method) -- :func:`~fairlens.certify.instance_covers`.

``prune`` (the literal enumeration when False) applies to the forest kernels; the boosted search
always prunes (its ``prune=False`` is a documented no-op: the answer is the same either way).
"""
from __future__ import annotations

import threading
from dataclasses import replace

import numpy as np

from . import _bounds, _search, _votes, _walk
from ._boosted import BoostedModel, NanCodedBoosted, boosted_instance_covers
from ._common import _call, _check_kernel_inputs
from ._flatten import FlatForest
from ._inputs import check_X
from ._inputs import one_instance as _one_instance
from ._results import InstanceCovers

__all__ = ["PREDICTORS", "predictor_for", "ForestPredictor", "BoostedPredictor", "SOFT_TOL"]

#: Relative tolerance of the soft-vote bounds: a row is certified by FLB/ELB only when
#: the margin exceeds the largest possible gain by more than ``SOFT_TOL * n_trees``
#: (floating-point sums of probabilities err by ~1e-16 * n_trees); attacks are always
#: confirmed by replaying scikit-learn's ``predict`` exactly.
SOFT_TOL = 1e-9

#: The libraries' own ``predict`` is called by one thread at a time (the anytime scheduler runs
#: the searches on threads; the kernels release the GIL, the confirmation takes this lock).
_LIBRARY_LOCK = threading.Lock()


class _Predictor:
    """Shared parts of the protocol: the flat ensemble, the checks (once per payload: the
    ensemble is immutable and :func:`_check_kernel_inputs` remembers the last ones it checked).

    Two class attributes tune how the driver cuts the exhaustive search (never its answer, its
    witnesses or its evaluation counts, which do not depend on them): ``brute_block``, the rows
    of one brute-force block (a task of ``n_jobs``; ``None``: the driver's default), and
    ``start_work``, the work of a block's first bounded call (``None``: the driver's default;
    later calls are adapted to about 0.1 s each).
    """

    brute_block = None
    start_work = None

    def __init__(self, flat, X64, Xr, yi, budget, prune):
        self.flat, self.X64, self.Xr, self.yi = flat, X64, Xr, yi
        self.budget, self.prune = int(budget), bool(prune)

    # the predictor of a worker process (see ForestPredictor.local)
    def local(self):
        return self

    def _run(self, rows):
        _check_kernel_inputs(self.ens, self.Xr, self.yi, rows, self.budget)
        return self.ens, self.flat.vote_rule

    @property
    def source(self):
        return self.flat.source

    @property
    def feature_names(self):
        return self.flat.feature_names

    @property
    def n_trees(self):
        return self.flat.n_trees

    @property
    def n_classes(self):
        return self.flat.n_classes

    # --- the bounds, written once for every decision rule (paper, sections 4.3, 4.4, 4.6) ----------
    def flb(self, rows):
        """``(attackable, flb_sum, delta)`` of the rows ``rows``: :func:`~fairlens.certify._bounds.flb_search`
        (``delta`` the margin of the class closest to reachable: a tree count for the hard vote, a
        real number otherwise)."""
        ens, vote = self._run(rows)
        _, att, fsum, dlt, _ = _call(_bounds.flb_search, ens, vote, self.Xr, self.yi, rows, self.budget)
        return att, fsum, dlt

    def elb(self, rows):
        """``(attackable, cover_f, cover_s, delta)`` of the rows ``rows``:
        :func:`~fairlens.certify._bounds.elb_search`."""
        ens, vote = self._run(rows)
        _, att, cf, cs, _, _, dlt = _call(_bounds.elb_search, ens, vote, self.Xr, self.yi, rows, self.budget)
        return att, cf, cs, dlt

    def new_state(self):
        """A fresh state of the exactly resumable exhaustive search (``3 + 2 * budget`` int64)."""
        return np.zeros(3 + 2 * self.budget, np.int64)

    def witness(self, i, wf, wv):
        """``(x', features, values)``: row ``i`` with the attacked features set."""
        feats = [int(f) for f in wf if f >= 0]
        vals = [float(v) for f, v in zip(wf, wv) if f >= 0]
        xw = self.X64[i].copy()
        xw[feats] = vals
        return xw, feats, vals


class ForestPredictor(_Predictor):
    """A voting forest (:class:`~fairlens.certify.FlatForest`, soft or hard vote): the clean vote is
    a kernel of :mod:`fairlens.certify._votes`, the bounds and the exhaustive search the ones of
    :mod:`fairlens.certify._search`; witnesses are exact replays."""

    _FLAT_ARRAYS = ("feature", "threshold", "left", "right", "leaf_class", "roots", "rank", "values_ptr", "values",
                    "leaf_proba", "tmax", "missing_left")

    def __init__(self, ff, X64, Xr, yi, budget, prune):
        super().__init__(ff, X64, Xr, yi, budget, prune)
        self.soft = ff.vote == "soft"
        self.vote = ff.vote
        self.score_dtype = np.float64 if self.soft else np.int64
        self.tol = SOFT_TOL * ff.n_trees
        self.ens = ff.flat(self.tol)

    # --- rows ----------------------------------------------------------------------------------
    @classmethod
    def inputs(cls, ff, X, y, p):
        """``(X64, nan, nan_attack, context)`` of the rows (checked; no kernel yet)."""
        if ff.vote == "hard" and ff.n_classes > 62:
            raise ValueError(f"vote='hard' supports at most 62 classes; the forest has {ff.n_classes}.")
        X64, Xr = check_X(X, ff.n_features, feature_names=ff.feature_names_in, allow_nan=p.get("nan_rows", False))
        n = X64.shape[0]
        if n == 0:
            raise ValueError("X has no rows; pass at least one instance to certify.")
        yi = ff.encode_y(y, n_rows=n)
        return X64, np.isnan(X64), p.get("missing_on", False), (X64, Xr, yi, np.asarray(y))

    @classmethod
    def group(cls, ff, ctx, rows, offer):
        """``(flat, X64, Xr, yi, y)`` of a group of rows (``rows`` None: all rows, finite model)."""
        X64, Xr, yi, y = ctx
        if rows is None:
            return ff, X64, Xr, yi, y
        if offer is not None and not offer.any():  # finite rows, finite attacker: the forest itself
            return ff, X64[rows], np.ascontiguousarray(Xr[rows]), yi[rows], y[rows]
        from ._nancode import encode_rows

        return ff.nan_coded(offer), X64[rows], np.ascontiguousarray(encode_rows(Xr)[rows]), yi[rows], y[rows]

    def local(self):
        """This predictor with writeable arrays.

        joblib's loky backend memory-maps arrays above 1 MB *read-only*; numba types read-only
        arrays differently, so every worker process would compile (slowly) a second version of
        every kernel. One copy per payload and process (milliseconds) avoids that.
        """
        ff = self.flat
        arrays = [getattr(ff, k) for k in self._FLAT_ARRAYS] + [self.Xr, self.yi]
        if all(a.flags.writeable for a in arrays):
            return self
        ff = replace(ff, **{k: np.array(getattr(ff, k)) for k in self._FLAT_ARRAYS})
        return ForestPredictor(ff, self.X64, np.array(self.Xr), np.array(self.yi), self.budget, self.prune)

    # --- stages --------------------------------------------------------------------------------
    def predict_index(self, sl):
        ens = self.ens
        if self.soft:
            return np.argmax(_call(_votes.soft_proba, ens, self.Xr[sl]), axis=1)
        ff = self.flat
        return _call(_votes.hard_vote, _call(_walk.leaf_classes, ens, self.Xr[sl]), ff.n_classes, ff.rank)

    def brute(self, rows, state, work):
        """Exact search (section 4.1) of ``rows`` from ``state`` (modified in place)."""
        ens, vote = self._run(rows)
        if state.shape != (3 + 2 * self.budget,) or state.dtype != np.int64:
            raise ValueError("internal: brute-force state must be an int64 array of length 3 + 2 * budget.")
        _, outcome, wf, wv, ne, n_done = _call(_search.brute_search, ens, vote, self.Xr, self.yi, rows,
                                               self.budget, self.prune, state, int(work))
        n_done = int(n_done)
        return n_done, outcome[:n_done] > 0, wf[:n_done], wv[:n_done], int(ne.sum()), state

    # --- one instance --------------------------------------------------------------------------
    @classmethod
    def covers(cls, ff, x, y, budget):
        """:func:`instance_covers` for a :class:`FlatForest` (arguments validated)."""
        _, Xr, yi = _one_instance(ff, x, y)
        xr = Xr[0]
        d = ff.n_features
        ens = ff.flat()
        votes, counts, ok, dlt = _votes.prepare_hard(ens, ff.n_classes, ff.rank, xr, yi)
        ptr, trees = _walk.instance_sets(ens, xr, d)
        mem = np.zeros((ff.n_trees, d), dtype=np.int8)
        for k in range(2 * d):
            f, s = divmod(k, 2)
            mem[trees[ptr[k]:ptr[k + 1]], f] |= (1 << s)
        plus, minus, flb, delta, weights = {}, {}, {}, {}, {}
        if ff.vote == "soft":
            K = ff.n_classes
            leaves = np.empty(ff.n_trees, np.int64)
            acc = np.empty(K)
            dmat = np.empty((ff.n_trees, K))
            w = np.empty((ff.n_trees, K))
            margin = np.empty(K)
            ok = _votes.prepare_soft(ens, xr, yi, leaves, acc, dmat, w, margin)
        for c in range(ff.n_classes):
            if c == yi:
                continue
            if ff.vote == "soft":
                wc = w[:, c]
                delta[c] = float(margin[c])
            else:
                wc = (votes != c).astype(np.float64)
                delta[c] = int(dlt[c])
            p = ((mem & 1).astype(bool) * wc[:, None]).sum(axis=0)
            m = ((mem & 2).astype(bool) * wc[:, None]).sum(axis=0)
            if ff.vote == "hard":
                p, m = p.astype(np.int64), m.astype(np.int64)
            plus[c], minus[c], weights[c] = p, m, wc
            mx = np.maximum(p, m)
            top = np.argsort(-mx, kind="mergesort")[:budget]
            total = mx[top].sum()
            flb[c] = (int(total) if ff.vote == "hard" else float(total), [int(f) for f in top])
        return InstanceCovers(membership=mem, votes=votes, y=yi, wrong=votes != yi, correct=bool(ok), delta=delta,
                              plus_sizes=plus, minus_sizes=minus, budget=budget, flb=flb, vote=ff.vote,
                              weights=weights)


class BoostedPredictor(_Predictor):
    """A boosted model (:class:`~fairlens.certify.BoostedModel`: argmax of the summed raw scores):
    the searches of :mod:`fairlens.certify._search` (the steps of :data:`fairlens.certify._votes.ADDITIVE`);
    the clean vote is the library's own ``predict``, and a brute-force candidate inside the float32
    ambiguity zone is confirmed by it.

    On creation the replay is checked against the library's raw scores on every row; its worst
    error widens the ambiguity zone (``tol``) and the bounds' tolerance (``tol_b``).
    """

    vote = "additive"
    score_dtype = np.float64
    # a brute-force call ends with one call of the library's predict (the confirmation), which
    # costs far more than a small search: blocks of 32 rows, long calls, few confirmations
    brute_block = 32
    start_work = 100_000

    def __init__(self, bm, X64, Xr, yi, budget, prune):
        super().__init__(bm, X64, Xr, yi, budget, prune)
        n = X64.shape[0]
        self.pred = bm.library_predict_index(X64)
        # the replay must agree with the library's raw scores; its worst error widens the ambiguous zone
        rep = _call(_votes.raw_scores, bm.flat(), Xr)
        lib = bm.library_scores(X64)
        if lib.shape != rep.shape:
            raise RuntimeError(f"internal: library scores have shape {lib.shape}, replay {rep.shape}.")
        err = float(np.max(np.abs((lib - lib[:, :1]) - (rep - rep[:, :1])))) if n else 0.0
        self.tol = max(bm.tol, 8.0 * err)
        self.tol_b = self.tol + bm.acc_err + 2.0 * err
        for i in np.flatnonzero(self.pred == yi):
            if _votes.decide_scores(rep[i], int(yi[i]), self.tol) == 1:
                raise RuntimeError(f"internal: the replay of the {bm.source} disagrees with its predict on row "
                                   f"{int(i)}.")
        self.ens = bm.flat(self.tol, self.tol_b)

    # --- rows ----------------------------------------------------------------------------------
    @classmethod
    def inputs(cls, bm, X, y, p):
        """``(X64, nan, nan_attack, context)`` of the rows (checked; no kernel yet)."""
        on = p.get("missing_on", False)
        if bm.missing_value == bm.missing_value:  # XGBoost missing=v: v is a finite input predict reads as NaN
            on = True
        X64, _ = bm.check_X(X, allow_nan=p.get("nan_rows", False) or on)
        if X64.shape[0] == 0:
            raise ValueError("X has no rows; pass at least one instance to certify.")
        yv = np.asarray(y)
        if yv.shape[:1] != (X64.shape[0],):
            bm.encode_y(y, n_rows=X64.shape[0])  # the clear error
        return X64, np.isnan(X64), on, (X, X64, y)

    @classmethod
    def group(cls, bm, ctx, rows, offer):
        """``(flat, X64, Xr, yi, y)`` of a group of rows (``rows`` None: all rows, finite model)."""
        X, X64, y = ctx
        if rows is None:
            bmc, Xg, yg = bm, X, y
        else:
            if isinstance(bm, NanCodedBoosted) or bm.missing_value == bm.missing_value:
                bmc = bm if isinstance(bm, NanCodedBoosted) else bm.nan_coded()
            elif offer is not None and not offer.any():  # finite rows, finite attacker: the model itself
                bmc = bm
            else:
                bmc = bm.nan_coded(offer)
            Xg, yg = X64[rows], np.asarray(y)[rows]
            if bm.feature_names_in is not None:
                import pandas as pd

                Xg = pd.DataFrame(Xg, columns=list(bm.feature_names_in))
        bmc.check_arrays()
        X64g, Xr = bmc.check_X(Xg)
        if X64g.shape[0] == 0:
            raise ValueError("X has no rows; pass at least one instance to certify.")
        yi = bmc.encode_y(yg, n_rows=X64g.shape[0])
        return bmc, X64g, Xr, yi, np.asarray(yg)

    # --- stages --------------------------------------------------------------------------------
    def predict_index(self, sl):
        return self.pred[sl]

    def brute(self, rows, state, work):
        """Exact search (section 4.1) of ``rows`` from ``state`` (modified in place; the format of
        :func:`~fairlens.certify._search.brute_search`); candidates of the finished rows are confirmed
        by the library's ``predict`` in one call (a rejected ambiguous one leaves its row unfinished,
        its search resuming right after it)."""
        ens, vote = self._run(rows)
        if state.shape != (3 + 2 * self.budget,) or state.dtype != np.int64:
            raise ValueError("internal: brute-force state must be an int64 array of length 3 + 2 * budget.")
        # the boosted search always prunes (prune=False would give the same answer, slower)
        _, outcome, wf, wv, ne, n_done = _call(_search.brute_search, ens, vote, self.Xr, self.yi, rows,
                                               self.budget, True, state, int(work))
        n_done = int(n_done)
        att = outcome[:n_done] > 0
        cand = np.flatnonzero(att)
        if cand.size:
            xs = np.vstack([self.witness(int(rows[k]), wf[k], wv[k])[0] for k in cand])
            with _LIBRARY_LOCK:
                lib = self.flat.library_predict_index(xs)
            for j, k in enumerate(cand):
                if lib[j] != self.yi[rows[k]]:
                    if outcome[k] == 2:  # ambiguous and confirmed: the row is done, no state to resume
                        state[0] = 0
                    continue
                if outcome[k] == 1:
                    raise RuntimeError(
                        f"internal: the replay of the {self.flat.source} found an attack on row {int(rows[k])} that "
                        "the library's own predict does not confirm; please report this model.")
                # ambiguous and rejected (always the last done row): its search resumes right after it
                n_done -= 1
        return n_done, att[:n_done], wf[:n_done], wv[:n_done], int(ne.sum()), state

    # --- one instance --------------------------------------------------------------------------
    @classmethod
    def covers(cls, bm, x, y, budget):
        return boosted_instance_covers(bm, x, y, budget=budget)


#: The predictor class of every flat representation, looked up along the flat type's MRO.
PREDICTORS = {FlatForest: ForestPredictor, BoostedModel: BoostedPredictor}


def predictor_for(flat):
    """The predictor class of a flat representation (:data:`PREDICTORS`, along its MRO).

    Parameters
    ----------
    flat : FlatForest or BoostedModel
        What :func:`fairlens.certify._readers.read_model` returned.

    Returns
    -------
    type
        :class:`ForestPredictor` or :class:`BoostedPredictor`.

    Raises
    ------
    TypeError
        For a type without a predictor (internal: every reader returns one that has).

    Examples
    --------
    >>> from fairlens.certify import FlatForest
    >>> from fairlens.certify._predictors import predictor_for
    >>> predictor_for.__name__
    'predictor_for'
    """
    for cls in type(flat).__mro__:
        if cls in PREDICTORS:
            return PREDICTORS[cls]
    raise TypeError(f"internal: no predictor for {type(flat).__name__}.")  # pragma: no cover
