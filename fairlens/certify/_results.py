"""The results of certification: :class:`CertificationResult` and :class:`InstanceCovers`.

Shared by every model type (forests and boosted models); imports no other certify module
except :mod:`fairlens.certify.plots` (lazily, to draw).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._base import Result
from .plots import plot_cover_matrix, plot_status_counts

__all__ = ["STATUSES", "CertificationResult", "InstanceCovers", "accuracies"]

#: Per-instance verdicts, in the order used for counts and plots.
STATUSES = (
    "misclassified",   # wrong before any attack
    "certified_flb",   # robust: FLB sum < delta (section 4.3)
    "certified_elb",   # robust: no cover of <= b sets reaches delta (section 4.4)
    "robust_brute",    # robust: brute force found no attack (section 4.1)
    "attackable",      # brute force found a witness x'
    "not_certified",   # flb/elb methods only: the bound could not prove robustness
    "unknown",         # not settled before certify's time_limit
)


@dataclass
class CertificationResult(Result):
    """Outcome of :func:`certify` (a :class:`fairlens._base.Result`).

    Built by :func:`certify`; the parameters are its fields.

    Parameters
    ----------
    method : {"cascade", "flb", "elb", "brute"}
        The method that was run.
    budget : int
        The attacker's budget ``b`` (features changed).
    accuracy : float
        Certified accuracy under attack of ``method`` (ACC_FLB,
        ACC_ELB or the exact ACC_{A_b} for ``"brute"`` and ``"cascade"``);
        when a ``time_limit`` left rows ``"unknown"`` and that value is not
        known, the lower end of ``accuracy_interval`` (a sound certified
        accuracy).
    accuracy_clean : float
        Accuracy of the certified predictor without attack.
    status : ndarray of str, shape (n,)
        Verdicts from :data:`STATUSES` (``"unknown"``: not settled before the time limit).
    witnesses : dict
        Row -> x' (float64 row on which the certified predictor,
        e.g. ``forest.predict``, does not return the label). Its entries are in
        the **model's** feature order (``feature_names``), which is also the
        order a DataFrame ``X`` was aligned to by column name -- not necessarily
        the order of ``X``'s columns. :meth:`witness_frame` gives them as a
        DataFrame the model's ``predict`` takes directly.
    covers : dict
        Row -> list of (feature, "+"/"-") of the ELB cover found (feature
        indices into ``feature_names``).
    delta : ndarray of shape (n,)
        Hard vote: int, trees to change (section 4.2, ``-1`` where
        not computed); soft vote: float, the margin
        ``sum_t p_t[y] - p_t[c]`` (``nan`` where not computed).
    flb_sum : ndarray of shape (n,)
        The FLB sum (int count for hard, float total swing for soft).
    stage_counts : dict
        Instances settled by each stage (keys of :data:`STATUSES`).
    timings : dict
        Wall-clock seconds per stage (with ``n_jobs > 1`` the FLB+ELB
        pass runs as one, split between the two in proportion to the
        workers' time in each).
    elapsed : float
        Wall-clock time of the call in seconds.
    n_evaluations : int, default=0
        Forest evaluations done by brute force.
    accuracy_flb, accuracy_elb, accuracy_exact : float or None
        The three accuracies of section 4 when the method computed them (the
        cascade gives all three, since ELB certifies everything FLB certifies),
        else ``None`` (also when a time limit stopped the stage before every row
        was settled).
    y : ndarray of shape (n,), optional
        The true labels.
    feature_names : list of str, optional
        Names of the features in the model's order (used by :meth:`to_frame`
        and :meth:`witness_frame`).
    witness_changes : dict
        Row -> (attacked features, their new values); feature indices into
        ``feature_names``.
    vote : {"soft", "hard", "additive"}, default="hard"
        The predictor that was certified: ``"soft"`` (scikit-learn's ``predict``:
        mean of the trees' leaf probabilities), ``"hard"`` (the paper's majority of
        hard votes) or ``"additive"`` (a boosted model's summed raw scores).
    model : str, default=""
        Short description of the certified model.
    accuracy_interval : tuple of float, optional
        ``(lower, upper)``, bounds on the exact accuracy under
        attack: ``lower`` = rows proven robust (FLB, ELB or brute force) / n,
        ``upper`` = 1 - rows proven wrong (misclassified or attackable) / n;
        ``"unknown"`` (and ``"not_certified"``) rows count as attackable in
        ``lower`` and robust in ``upper``. For the cascade or brute force with
        every row settled, ``lower == upper == accuracy_exact``.
    time_limit : float or None, default=None
        The ``time_limit`` of the call (None: no limit).
    params : dict
        The validated parameters of the call (budget, method, vote,
        prune, tie_class, chunk_size, n_jobs, time_limit).
    stopped : bool, default=False
        True when the time limit left some row ``"unknown"``.
    random_state : None
        Always None (certification is deterministic).

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from fairlens.certify import certify
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X[:400], y[:400])
    >>> res = certify(rf, X[400:], y[400:], budget=1)
    >>> res.vote, res.stage_counts["misclassified"] + res.stage_counts["attackable"]
    ('soft', 22)
    >>> lo, hi = res.accuracy_interval
    >>> lo == hi == res.accuracy_exact == res.accuracy
    True
    """

    title = "Accuracy under attack (certified)"

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
    vote: str = "hard"
    model: str = ""
    accuracy_interval: tuple | None = None
    time_limit: float | None = None
    params: dict = field(default_factory=dict, repr=False)
    stopped: bool = False
    random_state: None = None

    @property
    def n_instances(self):
        return int(self.status.shape[0])

    @property
    def n_brute(self):
        """Number of instances that reached the brute-force stage."""
        return int(np.isin(self.status, ("robust_brute", "attackable")).sum())

    def summary(self):
        """The headline figures.

        Returns
        -------
        pandas.DataFrame
            One row: vote, accuracies (with ``accuracy_lower``/``accuracy_upper``, the
            ``accuracy_interval``), stage counts (``n_unknown``: rows the time limit left
            unsettled), timings and ``threat_model``: what the attacker may write into the
            attacked features, ``"finite values and NaN"`` (``missing`` on) or
            ``"finite values"`` (None for a result not made by ``certify``).

        Examples
        --------
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> from fairlens.certify import certify
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X[:400], y[:400])
        >>> res = certify(rf, X[400:], y[400:], budget=1)
        >>> res.summary()[["method", "budget", "n"]]
            method  budget    n
        0  cascade       1  169
        """
        row = {"method": self.method, "vote": self.vote, "budget": self.budget, "n": self.n_instances,
               "accuracy": self.accuracy, "accuracy_clean": self.accuracy_clean,
               "accuracy_flb": self.accuracy_flb, "accuracy_elb": self.accuracy_elb,
               "accuracy_exact": self.accuracy_exact}
        lo, hi = self.accuracy_interval if self.accuracy_interval is not None else (None, None)
        row.update({"accuracy_lower": lo, "accuracy_upper": hi})
        row.update({f"n_{k}": v for k, v in self.stage_counts.items()})
        row.update({f"time_{k}": v for k, v in self.timings.items()})
        row["elapsed"] = self.elapsed
        row["model"] = self.model
        nan_attack = (self.params or {}).get("nan_attack")
        row["threat_model"] = None if nan_attack is None else \
            ("finite values and NaN" if nan_attack else "finite values")
        return pd.DataFrame([row])

    def to_frame(self):
        """Per-instance table: status, delta, FLB sum, cover and witness (and the vote).

        Returns
        -------
        pandas.DataFrame
            One row per instance; ``frame.attrs["accuracy_interval"]`` holds the result's
            ``accuracy_interval``.

        Examples
        --------
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> from fairlens.certify import certify
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X[:400], y[:400])
        >>> res = certify(rf, X[400:], y[400:], budget=1)
        >>> frame = res.to_frame()
        >>> frame.shape, str(frame["status"].iloc[0])
        ((169, 7), 'certified_flb')
        """
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
        df["vote"] = self.vote
        df.index.name = "row"
        df.attrs["accuracy_interval"] = self.accuracy_interval
        return df

    def witness_frame(self):
        """The witnesses as a DataFrame the model's ``predict`` takes directly.

        Returns
        -------
        pandas.DataFrame
            One row per attackable instance (index: the row of ``X``), one column per feature
            in the model's order (``feature_names``, or ``x0, x1, ...`` when the model has
            no feature names); a feature the attacker blanked holds NaN.

        Examples
        --------
        >>> import numpy as np
        >>> import pandas as pd
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> from fairlens.certify import certify
        >>> rng = np.random.default_rng(0)
        >>> X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
        >>> y = (X["a"] + X["b"] > 0).astype(int).to_numpy()
        >>> rf = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
        >>> res = certify(rf, X[["c", "b", "a"]].iloc[:40], y[:40], budget=1)  # columns aligned by name
        >>> W = res.witness_frame()
        >>> list(W.columns), bool(np.all(rf.predict(W) != y[W.index]))
        (['a', 'b', 'c'], True)
        """
        rows = sorted(self.witnesses)
        n_features = len(self.feature_names) if self.feature_names is not None else (
            len(next(iter(self.witnesses.values()))) if self.witnesses else 0)
        names = list(self.feature_names) if self.feature_names is not None else [f"x{j}" for j in range(n_features)]
        data = np.vstack([np.asarray(self.witnesses[i], dtype=np.float64) for i in rows]) if rows else \
            np.empty((0, len(names)), dtype=np.float64)
        return pd.DataFrame(data, index=pd.Index(rows, name="row"), columns=names)

    def plot(self, ax=None):
        """Bar chart of the verdicts (see :mod:`fairlens.certify.plots`).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (a new figure if None).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.

        Examples
        --------
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> from fairlens.certify import certify
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X[:400], y[:400])
        >>> res = certify(rf, X[400:], y[400:], budget=1)
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> type(res.plot()).__name__
        'Axes'
        """

        return plot_status_counts(self, ax=ax)


@dataclass
class InstanceCovers(Result):
    """The partial set cover problem of one instance (section 4.2 / 4.6), a :class:`fairlens._base.Result`.

    Built by :func:`instance_covers`; the parameters are its fields.

    Parameters
    ----------
    membership : ndarray of int8, shape (n_trees, n_features)
        Bit 1 = tree in ``S_f^+`` (path tests ``f`` true, attacker must
        increase), bit 2 = in ``S_f^-``.
    votes : ndarray of shape (n_trees,)
        Class index voted by each tree (``vote="additive"``: the class whose score
        each tree adds to).
    y : int
        The true class index.
    wrong : ndarray of bool, shape (n_trees,)
        Trees not voting ``y`` (all False for ``vote="additive"``).
    correct : bool
        Whether the certified predictor classifies the instance correctly.
    delta : dict
        Target class index -> hard: trees to change (``delta_c``);
        soft: the margin ``sum_t p_t[y] - p_t[c]``; additive: the raw-score margin.
    plus_sizes, minus_sizes : dict
        c -> (n_features,) hard: ``|S_f^± ∩ U_c|``
        with ``U_c`` the trees not voting ``c`` (binary: the correct trees);
        soft: the total swing ``sum_{t in S_f^±} w[t, c]``; additive: the same with
        each tree's budget-aware margin swing.
    budget : int
        The attacker's budget ``b``.
    flb : dict
        c -> (sum of the b largest ``max(plus, minus)``, features used).
    vote : {"hard", "soft", "additive"}, default="hard"
        The certified predictor (``"additive"``: a boosted model).
    weights : dict
        c -> (n_trees,) soft: each tree's largest swing towards
        ``c``; hard: 1 for trees in ``U_c``, else 0.
    params : dict
        Budget and vote.
    elapsed : float
        Seconds.
    stopped : bool, default=False
        Always False (the call cannot be stopped).
    random_state : None
        Always None (deterministic).

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from fairlens.certify import instance_covers
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X[:400], y[:400])
    >>> ic = instance_covers(rf, X[400], y[400], budget=1)
    >>> ic.membership.shape, ic.correct
    ((5, 30), True)
    >>> ic.flb[1][0] < ic.delta[1]        # the FLB sum stays below delta: certified robust
    True
    """

    title = "Set cover of one instance"

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
    vote: str = "hard"
    weights: dict = field(default_factory=dict, repr=False)
    params: dict = field(default_factory=dict, repr=False)
    elapsed: float = float("nan")
    stopped: bool = False
    random_state: None = None

    def summary(self):
        """One-row DataFrame: vote, budget, label index, clean verdict, the tightest
        margin ``delta`` over the other classes and the largest FLB sum.

        Returns
        -------
        pandas.DataFrame
            Columns ``vote``, ``budget``, ``y``, ``correct``, ``n_trees``, ``n_features``,
            ``min_delta``, ``max_flb_sum`` and ``flb_sum_below_delta`` (True when FLB
            alone certifies the instance).

        Examples
        --------
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> from fairlens.certify import instance_covers
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X[:400], y[:400])
        >>> ic = instance_covers(rf, X[400], y[400], budget=1)
        >>> row = ic.summary().iloc[0]
        >>> int(row["n_trees"]), bool(row["flb_sum_below_delta"])
        (5, True)
        """
        others = sorted(self.delta)
        min_delta = min((self.delta[c] for c in others), default=float("nan"))
        max_flb = max((self.flb[c][0] for c in others), default=float("nan"))
        below = all(self.flb[c][0] < self.delta[c] for c in others)
        return pd.DataFrame([{
            "vote": self.vote, "budget": self.budget, "y": int(self.y), "correct": bool(self.correct),
            "n_trees": int(self.membership.shape[0]), "n_features": int(self.membership.shape[1]),
            "min_delta": min_delta, "max_flb_sum": max_flb, "flb_sum_below_delta": bool(self.correct and below),
        }])

    def to_frame(self, feature_names=None):
        """Trees x features table with '+', '-', '+-' or ''.

        Parameters
        ----------
        feature_names : list of str, optional
            Column names (default ``x0, x1, ...``).

        Returns
        -------
        pandas.DataFrame
            One row per tree (its ``vote`` first), one column per feature.

        Examples
        --------
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> from fairlens.certify import instance_covers
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X[:400], y[:400])
        >>> ic = instance_covers(rf, X[400], y[400], budget=1)
        >>> ic.to_frame().shape              # 5 trees; vote + 30 features
        (5, 31)
        """
        sym = np.array(["", "+", "-", "+-"])
        cols = feature_names or [f"x{f}" for f in range(self.membership.shape[1])]
        df = pd.DataFrame(sym[self.membership], columns=cols)
        df.insert(0, "vote", self.votes)
        df.index.name = "tree"
        return df

    def plot(self, ax=None, cover=None, feature_names=None):
        """Trees x features matrix of ``S_f^+``/``S_f^-`` (see :mod:`fairlens.certify.plots`).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (a new figure if None).
        cover : list of (feature, "+"/"-"), optional
            A cover to highlight.
        feature_names : list of str, optional
            Column labels.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.

        Examples
        --------
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> from fairlens.certify import instance_covers
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X[:400], y[:400])
        >>> ic = instance_covers(rf, X[400], y[400], budget=1)
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> type(ic.plot()).__name__
        'Axes'
        """

        return plot_cover_matrix(self, ax=ax, cover=cover, feature_names=feature_names)


def accuracies(status, method, complete_flb, complete_elb):
    """The accuracies of a certification from its verdicts, for every model type (written once).

    Parameters
    ----------
    status : (n,) array of str
        Verdicts from :data:`STATUSES`.
    method : {"cascade", "flb", "elb", "brute"}
    complete_flb, complete_elb : bool
        Whether the FLB (ELB) stage saw every row it had to (False when a time limit cut it).

    Returns
    -------
    dict
        ``counts`` (per status), ``lower``/``upper`` (the accuracy interval: robust rows / n and
        1 - rows proven wrong / n), ``accuracy_flb``, ``accuracy_elb``, ``accuracy_exact`` (None
        when not computed or not complete) and ``accuracy`` (the method's, else ``lower``).
    """
    n = status.shape[0]
    counts = {s: int(np.sum(status == s)) for s in STATUSES}
    lower = (counts["certified_flb"] + counts["certified_elb"] + counts["robust_brute"]) / n
    upper = (n - counts["misclassified"] - counts["attackable"]) / n
    a_flb = a_elb = a_exact = None
    if method in ("flb", "cascade") and complete_flb:
        a_flb = counts["certified_flb"] / n
    if method == "elb" and complete_elb:
        a_elb = counts["certified_elb"] / n
    if method == "cascade" and complete_elb:
        a_elb = (counts["certified_flb"] + counts["certified_elb"]) / n
    if method in ("brute", "cascade") and counts["unknown"] == 0:
        a_exact = lower
    accuracy = {"flb": a_flb, "elb": a_elb, "brute": a_exact, "cascade": a_exact}[method]
    return {"counts": counts, "lower": float(lower), "upper": float(upper), "accuracy_flb": a_flb,
            "accuracy_elb": a_elb, "accuracy_exact": a_exact,
            "accuracy": float(lower if accuracy is None else accuracy)}
