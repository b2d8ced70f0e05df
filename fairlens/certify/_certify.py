"""Accuracy of a tree ensemble under attackers changing ``b`` features.

Implements section 4 of the paper: brute force (4.1), the partial set cover
view with ``S_f^+``/``S_f^-`` (4.2, Proposition 2), the fast lower bound FLB
(4.3), the exhaustive lower bound ELB (4.4), the cascade FLB -> ELB -> brute
force (4.5) and the multi-class extension (4.6).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import _kernels
from ._flatten import FlatForest, check_X, flatten_forest

__all__ = [
    "certify",
    "accuracy_under_attack",
    "CertificationResult",
    "instance_covers",
    "InstanceCovers",
    "STATUSES",
    "METHODS",
]

METHODS = ("cascade", "flb", "elb", "brute")

#: Per-instance verdicts, in the order used for counts and plots.
STATUSES = (
    "misclassified",   # wrong before any attack
    "certified_flb",   # robust: FLB sum < delta (section 4.3)
    "certified_elb",   # robust: no cover of <= b sets reaches delta (section 4.4)
    "robust_brute",    # robust: brute force found no attack (section 4.1)
    "attackable",      # brute force found a witness x'
    "not_certified",   # flb/elb methods only: the bound could not prove robustness
)


def _check_budget(budget, n_features):
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)):
        raise TypeError(f"budget must be an integer number of features; got {budget!r}.")
    if budget <= 0:
        raise ValueError(f"budget must be >= 1 (the number of features the attacker changes); got {budget}.")
    if budget > n_features:
        raise ValueError(f"budget={budget} is larger than the number of features ({n_features}); use budget <= {n_features}.")
    return int(budget)


@dataclass
class CertificationResult:
    """Outcome of :func:`certify`.

    Attributes
    ----------
    method, budget : what was run.
    accuracy : certified accuracy under attack of ``method`` (ACC_FLB,
        ACC_ELB or the exact ACC_{A_b} for ``"brute"`` and ``"cascade"``).
    accuracy_clean : majority-vote accuracy without attack.
    accuracy_flb, accuracy_elb, accuracy_exact : the three accuracies of
        section 4 when the method computed them (the cascade gives all three,
        since ELB certifies everything FLB certifies), else ``None``.
    status : (n,) array of verdicts from :data:`STATUSES`.
    witnesses : dict row -> x' (float64 row that the forest misclassifies).
    witness_changes : dict row -> (attacked features, their new values).
    covers : dict row -> list of (feature, "+"/"-") of the ELB cover found.
    delta, flb_sum : (n,) int arrays (``-1`` for misclassified rows).
    stage_counts : instances settled by each stage.
    timings : seconds per stage; ``elapsed`` their total.
    n_evaluations : forest evaluations done by brute force.
    """

    method: str
    budget: int
    accuracy: float
    accuracy_clean: float
    status: np.ndarray
    witnesses: dict
    covers: dict
    delta: np.ndarray
    flb_sum: np.ndarray
    stage_counts: dict
    timings: dict
    elapsed: float
    n_evaluations: int = 0
    accuracy_flb: float | None = None
    accuracy_elb: float | None = None
    accuracy_exact: float | None = None
    y: np.ndarray | None = field(default=None, repr=False)
    feature_names: list | None = field(default=None, repr=False)
    witness_changes: dict = field(default_factory=dict, repr=False)

    @property
    def n_instances(self):
        return int(self.status.shape[0])

    @property
    def n_brute(self):
        """Number of instances that reached the brute-force stage."""
        return int(np.isin(self.status, ("robust_brute", "attackable")).sum())

    def summary(self):
        """One-row DataFrame: accuracies, stage counts and timings."""
        row = {"method": self.method, "budget": self.budget, "n": self.n_instances,
               "accuracy": self.accuracy, "accuracy_clean": self.accuracy_clean,
               "accuracy_flb": self.accuracy_flb, "accuracy_elb": self.accuracy_elb,
               "accuracy_exact": self.accuracy_exact}
        row.update({f"n_{k}": v for k, v in self.stage_counts.items()})
        row.update({f"time_{k}": v for k, v in self.timings.items()})
        row["elapsed"] = self.elapsed
        return pd.DataFrame([row])

    def to_frame(self):
        """Per-instance table: status, delta, FLB sum, cover and witness."""
        names = self.feature_names
        def fname(f):
            return names[f] if names is not None else f"x{f}"
        cover_txt = [""] * self.n_instances
        for i, cov in self.covers.items():
            cover_txt[i] = ", ".join(f"S{s}[{fname(f)}]" for f, s in cov)
        wit_txt = [""] * self.n_instances
        for i, (feats, vals) in self.witness_changes.items():
            wit_txt[i] = ", ".join(f"{fname(f)}->{v:.6g}" for f, v in zip(feats, vals))
        df = pd.DataFrame({"status": self.status, "delta": self.delta, "flb_sum": self.flb_sum,
                           "cover": cover_txt, "witness": wit_txt})
        if self.y is not None:
            df.insert(0, "y", self.y)
        df.index.name = "row"
        return df

    def plot(self, ax=None):
        """Bar chart of the verdicts (see :mod:`fairlens.certify.plots`)."""
        from .plots import plot_status_counts

        return plot_status_counts(self, ax=ax)


def _run(kernel, *args):
    t0 = time.perf_counter()
    out = kernel(*args)
    return out, time.perf_counter() - t0


def certify(forest, X, y, budget=1, method="cascade", prune=True, tie_class=None, progress=False,
            chunk_size=256):
    """Accuracy of ``forest``'s majority vote under attackers changing ``budget`` features.

    Parameters
    ----------
    forest : fitted DecisionTreeClassifier, RandomForestClassifier,
        ExtraTreesClassifier, FeaturePartitionedForest, or a FlatForest.
        Certification is of the **majority vote of the trees' hard
        predictions** (the paper's model), not of scikit-learn's probability
        average; see :meth:`FlatForest.predict`.
    X : (n, d) array of test instances; y : (n,) labels.
    budget : int
        ``b``, the number of features the attacker may change (any values).
    method : {"cascade", "flb", "elb", "brute"}
        ``"flb"`` (section 4.3) and ``"elb"`` (4.4) give lower bounds of the
        accuracy under attack; ``"brute"`` (4.1) and ``"cascade"`` (4.5,
        FLB -> ELB -> brute force on what is left) give the exact accuracy.
        For more than two classes every method applies the per-class check of
        section 4.6.
    prune : bool, default=True
        Brute force skips sign patterns that Proposition 2 rules out and
        searches the relevant values by branch and bound; ``False`` is the
        literal enumeration of every value combination (same answer, much
        slower; kept as a baseline).
    tie_class : label, optional
        Class winning vote ties (see :func:`flatten_forest`).
    progress : bool
        Show a tqdm bar over chunks of the brute-force stage.

    Returns
    -------
    CertificationResult
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}; got {method!r}.")
    ff = flatten_forest(forest, tie_class=tie_class)
    if ff.n_classes > 62:
        raise ValueError(f"at most 62 classes are supported; the forest has {ff.n_classes}.")
    budget = _check_budget(budget, ff.n_features)
    X64, Xr = check_X(X, ff.n_features)
    yi = ff.encode_y(y)
    if yi.shape[0] != X64.shape[0]:
        raise ValueError(f"X has {X64.shape[0]} rows but y has {yi.shape[0]} labels; they must match.")
    n = X64.shape[0]
    if n == 0:
        raise ValueError("X has no rows; pass at least one instance to certify.")
    base = (*ff.arrays(), ff.n_classes, ff.rank)
    status = np.full(n, "", dtype=object)
    delta = np.full(n, -1, dtype=np.int64)
    flb_sum = np.full(n, -1, dtype=np.int64)
    witnesses, covers, changes = {}, {}, {}
    timings = {}
    n_eval = 0
    rows_all = np.arange(n, dtype=np.int64)

    # stage 0: clean vote
    t0 = time.perf_counter()
    pred = _kernels.vote(_kernels.predict_trees(*ff.arrays(), Xr), ff.n_classes, ff.rank)
    correct = pred == yi
    status[~correct] = "misclassified"
    timings["vote"] = time.perf_counter() - t0
    todo = rows_all[correct]

    if method in ("flb", "cascade"):
        (ok, att, fsum, dlt, _), timings["flb"] = _run(_kernels.flb_kernel, *base, Xr, yi, todo, budget)
        flb_sum[todo] = fsum
        delta[todo] = dlt
        status[todo[~att]] = "certified_flb"
        if method == "flb":
            status[todo[att]] = "not_certified"
        todo = todo[att]

    if method in ("elb", "cascade"):
        (ok, att, cf, cs, tgt, cov, dlt), timings["elb"] = _run(_kernels.elb_kernel, *base, Xr, yi, todo, budget)
        if method == "elb":
            delta[todo] = dlt
        status[todo[~att]] = "certified_elb"
        for k in np.flatnonzero(att):
            covers[int(todo[k])] = [(int(f), "+" if s == 0 else "-") for f, s in zip(cf[k], cs[k]) if f >= 0]
        if method == "elb":
            status[todo[att]] = "not_certified"
        todo = todo[att]

    if method in ("brute", "cascade"):
        t0 = time.perf_counter()
        chunks = [todo[s:s + chunk_size] for s in range(0, todo.shape[0], chunk_size)] or []
        it = chunks
        if progress and chunks:
            from tqdm.auto import tqdm

            it = tqdm(chunks, desc=f"brute force b={budget}")
        for rows in it:
            ok, att, wf, wv, ne = _kernels.brute_kernel(*base, ff.values_ptr, ff.values, Xr, yi, rows,
                                                        budget, bool(prune))
            n_eval += int(ne.sum())
            status[rows[~att]] = "robust_brute"
            status[rows[att]] = "attackable"
            for k in np.flatnonzero(att):
                i = int(rows[k])
                feats = [int(f) for f in wf[k] if f >= 0]
                vals = [float(v) for f, v in zip(wf[k], wv[k]) if f >= 0]
                xw = X64[i].copy()
                xw[feats] = vals
                witnesses[i] = xw
                changes[i] = (feats, vals)
        timings["brute"] = time.perf_counter() - t0
        if method == "brute":
            # delta for reporting (binary: the paper's ceil(|T|/2) - |C_bar|)
            _, _, _, dlt, _ = _kernels.flb_kernel(*base, Xr, yi, rows_all[correct], budget)
            delta[correct] = dlt

    counts = {s: int(np.sum(status == s)) for s in STATUSES}
    acc_clean = float(np.mean(correct))

    def acc(stats):
        return float(np.isin(status, stats).sum() / n)

    a_flb = a_elb = a_exact = None
    if method == "flb":
        a_flb = acc(("certified_flb",))
    if method == "elb":
        a_elb = acc(("certified_elb",))
    if method == "cascade":
        a_flb = acc(("certified_flb",))
        a_elb = acc(("certified_flb", "certified_elb"))
    if method in ("brute", "cascade"):
        a_exact = acc(("certified_flb", "certified_elb", "robust_brute"))
    accuracy = {"flb": a_flb, "elb": a_elb, "brute": a_exact, "cascade": a_exact}[method]
    res = CertificationResult(
        method=method, budget=budget, accuracy=accuracy, accuracy_clean=acc_clean,
        status=status.astype(str), witnesses=witnesses, covers=covers, delta=delta, flb_sum=flb_sum,
        stage_counts=counts, timings=timings, elapsed=float(sum(timings.values())), n_evaluations=n_eval,
        accuracy_flb=a_flb, accuracy_elb=a_elb, accuracy_exact=a_exact, y=np.asarray(y),
        feature_names=ff.feature_names, witness_changes=changes,
    )
    return res


def accuracy_under_attack(forest, X, y, budgets=(1, 2, 3), method="cascade", **kw):
    """Table of accuracies (clean, FLB, ELB, exact), stage counts and times per budget.

    Runs :func:`certify` once per budget (the cascade gives all three
    accuracies of section 4 in one pass) and stacks the summaries.
    """
    ff = flatten_forest(forest, tie_class=kw.pop("tie_class", None))
    frames = [certify(ff, X, y, budget=int(b), method=method, **kw).summary() for b in budgets]
    return pd.concat(frames, ignore_index=True)


@dataclass
class InstanceCovers:
    """The partial set cover problem of one instance (section 4.2 / 4.6).

    Attributes
    ----------
    membership : (n_trees, n_features) int8; bit 1 = tree in ``S_f^+`` (path
        tests ``f`` true, attacker must increase), bit 2 = in ``S_f^-``.
    votes : (n_trees,) class index voted by each tree; ``y`` the true index.
    wrong : (n_trees,) bool, trees not voting ``y``.
    correct : whether the vote classifies the instance correctly.
    delta : dict target class index -> trees to change (``delta_c``).
    plus_sizes, minus_sizes : dict c -> (n_features,) ``|S_f^± ∩ U_c|`` with
        ``U_c`` the trees not voting ``c`` (binary: the correct trees).
    flb : dict c -> (sum of the b largest ``max(|S_f^+|, |S_f^-|)``, features used).
    """

    membership: np.ndarray
    votes: np.ndarray
    y: int
    wrong: np.ndarray
    correct: bool
    delta: dict
    plus_sizes: dict
    minus_sizes: dict
    budget: int
    flb: dict

    def to_frame(self, feature_names=None):
        """Trees x features table with '+', '-', '+-' or ''."""
        sym = np.array(["", "+", "-", "+-"])
        cols = feature_names or [f"x{f}" for f in range(self.membership.shape[1])]
        df = pd.DataFrame(sym[self.membership], columns=cols)
        df.insert(0, "vote", self.votes)
        df.index.name = "tree"
        return df

    def plot(self, ax=None, cover=None, feature_names=None):
        from .plots import plot_cover_matrix

        return plot_cover_matrix(self, ax=ax, cover=cover, feature_names=feature_names)


def instance_covers(forest, x, y, budget=1, tie_class=None):
    """Build ``S_f^+``/``S_f^-``, delta and the FLB sum for one instance."""
    ff = flatten_forest(forest, tie_class=tie_class)
    budget = _check_budget(budget, ff.n_features)
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"x must be one instance, a 1-D array of {ff.n_features} values; got shape {x.shape}.")
    _, Xr = check_X(x.reshape(1, -1), ff.n_features, name="x")
    yi = int(ff.encode_y(np.atleast_1d(y))[0])
    xr = Xr[0]
    votes, counts, ok, dlt = _kernels._prepare(*ff.arrays(), ff.n_classes, ff.rank, xr, yi)
    d = ff.n_features
    ptr, trees = _kernels.instance_sets(ff.feature, ff.threshold, ff.left, ff.right, ff.roots, xr, d)
    mem = np.zeros((ff.n_trees, d), dtype=np.int8)
    for k in range(2 * d):
        f, s = divmod(k, 2)
        mem[trees[ptr[k]:ptr[k + 1]], f] |= (1 << s)
    plus, minus, flb, delta = {}, {}, {}, {}
    for c in range(ff.n_classes):
        if c == yi:
            continue
        inU = votes != c
        p = ((mem & 1).astype(bool) & inU[:, None]).sum(axis=0)
        m = ((mem & 2).astype(bool) & inU[:, None]).sum(axis=0)
        plus[c], minus[c] = p, m
        mx = np.maximum(p, m)
        top = np.argsort(-mx, kind="mergesort")[:budget]
        flb[c] = (int(mx[top].sum()), [int(f) for f in top])
        delta[c] = int(dlt[c])
    return InstanceCovers(membership=mem, votes=votes, y=yi, wrong=votes != yi, correct=bool(ok), delta=delta,
                          plus_sizes=plus, minus_sizes=minus, budget=budget, flb=flb)
