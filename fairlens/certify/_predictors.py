"""The one predictor of the certification driver (:mod:`fairlens.certify._certify`), for every model.

Every reader produces one :class:`~fairlens.certify._ensemble.TreeEnsemble`; the driver asks
:class:`Predictor` for the rows (``inputs``/``group``), builds one predictor per group of rows and runs
the cascade of the paper's section 4 (FLB 4.3 -> ELB 4.4 -> brute force 4.1) on it in fixed row
blocks, through these methods:

* ``predict_index(sl)`` -- the certified predictor's class index of the rows ``sl`` (clean vote);
* ``flb(rows)`` -> ``(attackable, flb_sum, delta)`` -- the fast lower bound (section 4.3);
* ``elb(rows)`` -> ``(attackable, cover_f, cover_s, delta)`` -- the exhaustive lower bound (4.4);
* ``new_state()`` / ``brute(rows, state, work)`` -> ``(n_done, attackable, wit_f, wit_v, n_eval,
  state)`` -- the exhaustive search (4.1), exactly resumable: it stops after about ``work`` units
  and ``state`` says where to continue (the anytime scheduler, :mod:`._schedule`, relies on it).
  Every witness it returns is *confirmed*: an exact ensemble's replay is its model's ``predict``
  (confirmed trivially); otherwise a candidate inside the float32 ambiguity zone is confirmed by the
  library's own ``predict`` (a rejected one resumes the search right after it).
* ``covers(ens, x, y, budget)`` (class method) -- :func:`~fairlens.certify.instance_covers`.

The decision rules differ only by the rule object handed to the kernels (``ens.vote_rule``, see
:mod:`fairlens.certify._votes`); the library calls only by the ensemble's
:class:`~fairlens.certify._ensemble.Library`. ``prune`` (the literal enumeration when False) applies
to the rules with a literal enumeration (``rule.literal``); the additive search always prunes (its
``prune=False`` is a documented no-op: the answer is the same either way).
"""
from __future__ import annotations

import copy
import threading

import numpy as np

from . import _bounds, _search, _walk
from ._common import call_kernel, check_kernel_inputs
from ._inputs import one_instance as _one_instance
from ._results import InstanceCovers
from ._votes import decide_scores, raw_scores

__all__ = ["Predictor", "SOFT_TOL"]

#: Relative tolerance of the soft-vote bounds: a row is certified by FLB/ELB only when
#: the margin exceeds the largest possible gain by more than ``SOFT_TOL * n_trees``
#: (floating-point sums of probabilities err by ~1e-16 * n_trees); attacks are always
#: confirmed by replaying scikit-learn's ``predict`` exactly.
SOFT_TOL = 1e-9

#: The libraries' own ``predict`` is called by one thread at a time (the anytime scheduler runs
#: the searches on threads; the kernels release the GIL, the confirmation takes this lock).
_LIBRARY_LOCK = threading.Lock()


class Predictor:
    """The certified predictor of a :class:`~fairlens.certify._ensemble.TreeEnsemble` on a group of rows.

    An *exact* ensemble (``ens.exact``: its replay is its model's ``predict``, scikit-learn forests and
    the FPF) is predicted by the kernels of its rule. Otherwise the clean prediction is the library's
    ``predict``; on creation the replay is checked against the library's raw scores on every row, its
    worst error widening the ambiguity zone (``tol``) and the bounds' tolerance (``tol_b``), and a
    brute-force candidate inside the zone is confirmed by the library's ``predict``.

    Two attributes tune how the driver cuts the exhaustive search (never its answer, its witnesses or
    its evaluation counts): ``brute_block``, the rows of one brute-force block (a task of ``n_jobs``;
    ``None``: the driver's default), and ``start_work``, the work of a block's first bounded call
    (``None``: the driver's default; later calls are adapted to about 0.1 s each). A search that ends
    with a call of the library's ``predict`` (the confirmation) runs in blocks of 32 rows and long
    calls.

    Parameters
    ----------
    ens : TreeEnsemble
        The ensemble (NaN-coded for rows certified with NaN).
    X64, Xr : ndarray of float64, shape (n, n_features)
        The rows, and as the library reads them (:meth:`TreeEnsemble.round_X`).
    yi : ndarray of int64, shape (n,)
        Their labels as class indices.
    budget : int
        The attacker's budget.
    prune : bool
        Prune the exhaustive search (always, for a rule without a literal enumeration).
    """

    def __init__(self, ens, X64, Xr, yi, budget, prune):
        self.flat, self.X64, self.Xr, self.yi = ens, X64, Xr, yi
        self.budget = int(budget)
        rule = ens.vote_rule
        self.vote = ens.vote
        self.prune = bool(prune) or not rule.literal
        self.score_dtype = np.int64 if rule.integer else np.float64
        ens.check_arrays()
        self.confirm = not ens.exact
        if not self.confirm:
            self.tol = SOFT_TOL * ens.n_trees
            self.ens = ens.flat(self.tol, self.tol)
            self.pred = None
            self.brute_block = self.start_work = None
            return
        self.brute_block, self.start_work = 32, 100_000
        n = X64.shape[0]
        self.pred = ens.library_predict_index(X64)
        # the replay must agree with the library's raw scores; its worst error widens the ambiguous zone

        rep = call_kernel(raw_scores, ens.flat(), Xr)
        lib = ens.library_scores(X64)
        if lib.shape != rep.shape:
            raise RuntimeError(f"internal: library scores have shape {lib.shape}, replay {rep.shape}.")
        err = float(np.max(np.abs((lib - lib[:, :1]) - (rep - rep[:, :1])))) if n else 0.0
        self.tol = max(ens.tol, 8.0 * err)
        self.tol_b = self.tol + ens.acc_err + 2.0 * err
        for i in np.flatnonzero(self.pred == yi):
            if decide_scores(rep[i], int(yi[i]), self.tol) == 1:
                raise RuntimeError(f"internal: the replay of the {ens.source} disagrees with its predict on row "
                                   f"{int(i)}.")
        self.ens = ens.flat(self.tol, self.tol_b)

    # --- rows ----------------------------------------------------------------------------------
    @classmethod
    def inputs(cls, ens, X, y, p):
        """``(X64, nan, nan_attack, context)`` of the rows (checked; no kernel yet)."""
        rule = ens.vote_rule
        if rule.max_classes is not None and ens.n_classes > rule.max_classes:
            raise ValueError(f"vote={ens.vote!r} supports at most {rule.max_classes} classes; the forest has "
                             f"{ens.n_classes}.")
        on = p.get("missing_on", False)
        if ens.missing_value == ens.missing_value:  # a finite input the library reads as NaN (XGBoost missing=v)
            on = True
        X64, Xr = ens.check_X(X, allow_nan=p.get("nan_rows", False) or on)
        n = X64.shape[0]
        if n == 0:
            raise ValueError("X has no rows; pass at least one instance to certify.")
        yi = ens.encode_y(y, n_rows=n)
        return X64, np.isnan(X64), on, (X64, Xr, yi, np.asarray(y))

    @classmethod
    def group(cls, ens, ctx, rows, offer, code=None):
        """``(ens, X64, Xr, yi, y)`` of a group of rows (``rows`` None: all rows, the ensemble itself);
        ``code(offer)`` codes ``ens`` for NaN (default ``ens.nan_coded``)."""
        X64, Xr, yi, y = ctx
        if rows is None:
            return ens, X64, Xr, yi, y
        code = ens.nan_coded if code is None else code
        if ens.nan_code:
            coded = ens
        elif ens.missing_value == ens.missing_value:  # NaN reaches every feature's nodes
            coded = code()
        elif offer is not None and not offer.any():  # finite rows, finite attacker: the ensemble itself
            return ens, X64[rows], np.ascontiguousarray(Xr[rows]), yi[rows], y[rows]
        else:
            coded = code(offer)
        X64g = X64[rows]
        return coded, X64g, coded.round_X(X64g), yi[rows], y[rows]

    def local(self):
        """This predictor with writeable arrays.

        joblib's loky backend memory-maps arrays above 1 MB *read-only*; numba types read-only
        arrays differently, so every worker process would compile (slowly) a second version of
        every kernel. One copy per payload and process (milliseconds) avoids that.
        """
        arrays = {k: v for k, v in self.ens._asdict().items() if isinstance(v, np.ndarray)}
        if all(a.flags.writeable for a in arrays.values()) and self.Xr.flags.writeable and self.yi.flags.writeable:
            return self
        P = copy.copy(self)
        P.ens = self.ens._replace(**{k: np.array(v) for k, v in arrays.items() if not v.flags.writeable})
        P.Xr, P.yi = np.array(self.Xr), np.array(self.yi)
        return P

    # --- what the driver reports -----------------------------------------------------------------
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

    # --- stages (paper, sections 4.1, 4.3, 4.4, 4.6), written once for every decision rule --------
    def _run(self, rows):
        check_kernel_inputs(self.ens, self.Xr, self.yi, rows, self.budget)
        return self.ens, self.flat.vote_rule

    def predict_index(self, sl):
        """Class index of the certified predictor on the rows ``sl`` (a slice)."""
        if self.pred is not None:
            return self.pred[sl]
        return call_kernel(self.flat.vote_rule.replay, self.ens, self.Xr[sl])

    def flb(self, rows):
        """``(attackable, flb_sum, delta)`` of the rows ``rows``: :func:`~fairlens.certify._bounds.flb_search`
        (``delta`` the margin of the class closest to reachable: a tree count for the hard vote, a
        real number otherwise)."""
        ens, vote = self._run(rows)
        _, att, fsum, dlt, _ = call_kernel(_bounds.flb_search, ens, vote, self.Xr, self.yi, rows, self.budget)
        return att, fsum, dlt

    def elb(self, rows):
        """``(attackable, cover_f, cover_s, delta)`` of the rows ``rows``:
        :func:`~fairlens.certify._bounds.elb_search`."""
        ens, vote = self._run(rows)
        _, att, cf, cs, _, _, dlt = call_kernel(_bounds.elb_search, ens, vote, self.Xr, self.yi, rows, self.budget)
        return att, cf, cs, dlt

    def new_state(self, budget=None):
        """A fresh state of the exactly resumable exhaustive search (``5 + 2 * budget`` int64;
        ``budget=None``: the certified budget)."""
        return np.zeros(5 + 2 * (self.budget if budget is None else int(budget)), np.int64)

    def witness(self, i, wf, wv):
        """``(x', features, values)``: row ``i`` with the attacked features set."""
        feats = [int(f) for f in wf if f >= 0]
        vals = [float(v) for f, v in zip(wf, wv) if f >= 0]
        xw = self.X64[i].copy()
        xw[feats] = vals
        return xw, feats, vals

    def brute(self, rows, state, work, budget=None):
        """Exact search (section 4.1) of ``rows`` from ``state`` (modified in place; the format of
        :func:`~fairlens.certify._search.brute_search`) for attacks on at most ``budget`` features
        (``None``: the certified budget; a smaller one is a search of its own, with its own state).
        Without an exact replay the candidates of the finished rows are confirmed by the library's
        ``predict`` in one call (a rejected ambiguous one leaves its row unfinished, its search
        resuming right after it)."""
        ens, vote = self._run(rows)
        budget = self.budget if budget is None else int(budget)
        if not 1 <= budget <= self.budget:
            raise ValueError(f"internal: brute-force budget {budget} must be in [1, {self.budget}].")
        if state.shape != (5 + 2 * budget,) or state.dtype != np.int64:
            raise ValueError("internal: brute-force state must be an int64 array of length 5 + 2 * budget.")
        _, outcome, wf, wv, ne, n_done = call_kernel(_search.brute_search, ens, vote, self.Xr, self.yi, rows,
                                               budget, self.prune, state, int(work))
        n_done = int(n_done)
        att = outcome[:n_done] > 0
        cand = np.flatnonzero(att) if self.confirm else ()
        if len(cand):
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
    def covers(cls, ens, x, y, budget):
        """:func:`~fairlens.certify.instance_covers` for a read ensemble (arguments validated)."""
        X64, Xr, yi = _one_instance(ens, x, y)
        xr = Xr[0]
        d = ens.n_features
        flat = ens.flat()
        ptr, trees = _walk.instance_sets(flat, xr, d)
        mem = np.zeros((ens.n_trees, d), dtype=np.int8)
        for k in range(2 * d):
            f, s = divmod(k, 2)
            mem[trees[ptr[k]:ptr[k + 1]], f] |= (1 << s)
        rule = ens.vote_rule
        q = rule.covers(flat, xr, yi, budget, mem)
        correct = q["ok"] if ens.exact else bool(ens.library_predict_index(X64)[0] == yi)
        flb = {}
        for c in q["weights"]:
            mx = np.maximum(q["plus"][c], q["minus"][c])
            top = np.argsort(-mx, kind="mergesort")[:budget]
            total = mx[top].sum()
            flb[c] = (int(total) if rule.integer else float(total), [int(f) for f in top])
        cov = InstanceCovers(membership=mem, votes=q["votes"], y=yi, wrong=q["wrong"], correct=bool(correct),
                             delta=q["delta"], plus_sizes=q["plus"], minus_sizes=q["minus"], budget=budget, flb=flb,
                             vote=ens.vote, weights=q["weights"])
        for k, v in q["extra"].items():
            setattr(cov, k, v)
        return cov
