"""Result object of the fairness-testing searches."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fairlens._base import Result

from .._validation import check_bool, check_int
from .plots import plot_timeline

__all__ = ["FairnessTestResult"]


@dataclass
class FairnessTestResult(Result):
    """Unique individual discriminatory instances found by one search run.

    Parameters
    ----------
    method : str
        ``"MAFT"``, ``"EIDIG"``, ``"ADF"``, ``"AEQUITAS"`` or ``"SG"``.
    instances : ndarray (n, d)
        Unique discriminatory instances (Definition 2.1), global-phase ones
        first (in seed order), then the local-phase ones not already found
        globally, in the order Algorithm 4 finds them (walker after walker, then
        iteration).  Duplicates are counted once.
    counterparts : ndarray (n, d)
        For each instance, the similar instance (differing only in protected
        attributes) with a different label whose score differs most.
    instance_scores, counterpart_scores : ndarray (n,)
        Favourable-class probabilities of both.
    phase : ndarray of str (n,)
        ``"global"`` or ``"local"``.
    n_global, n_local : int
        Unique instances of each phase (``n_local`` excludes instances already
        found in the global phase), ``n_global + n_local == len(instances)``.
        ``n_global`` is also the number of local walkers (one per unique global
        instance of the whole run, as in the paper; ``params["n_walkers"]``).
    elapsed : float
        Wall time of the search in seconds (seed selection excluded).
    queries : int
        Rows scored by the model (forward passes; white-box gradients of
        EIDIG/ADF count one row per gradient).
    model_calls : int
        Number of model invocations (depends on ``n_jobs``: each worker calls the
        model once per step for its own share of the walkers).
    tries_global, tries_local : int
        Search iterations of each phase (the papers' ``try_times``).
    n_explored : int
        Unique instances generated during the search (the papers' ``gen``).
    seeds : ndarray
        Seeds of the global phase.
    timeline : ndarray (k, 2)
        ``(elapsed seconds, cumulative unique instances)`` samples.
    stopped : bool
        True if the run was stopped before its budget was used.
    params : dict
        Parameters of the run.
    random_state : int
        The seed the run actually used (pass it back as ``random_state`` to repeat it).
    feature_names : list of str
        Names of the ``d`` features.
    dataset : Dataset
        The dataset the search ran on (to decode rows in :meth:`to_frame`).

    Examples
    --------
    >>> from fairlens.maft import MAFT
    >>> from fairlens.datasets import load_dataset
    >>> from sklearn.linear_model import LogisticRegression
    >>> census = load_dataset("census", encoding="benchmark")
    >>> model = LogisticRegression(max_iter=500).fit(census.X[:2000], census.y[:2000])
    >>> res = MAFT(model, census, protected=["sex"], n_seeds=20, n_local=20).run()
    >>> res.random_state, len(res.summary())
    (0, 1)
    """

    title = "Individual discrimination search"

    method: str
    instances: np.ndarray
    counterparts: np.ndarray
    instance_scores: np.ndarray
    counterpart_scores: np.ndarray
    phase: np.ndarray
    n_global: int
    n_local: int
    elapsed: float  # (the base Result's class attribute gives every later field a default)
    queries: int = 0
    model_calls: int = 0
    tries_global: int = 0
    tries_local: int = 0
    n_explored: int = 0
    seeds: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))
    timeline: np.ndarray = field(default_factory=lambda: np.zeros((1, 2)))
    stopped: bool = False
    params: dict = field(default_factory=dict)
    random_state: object = None
    feature_names: list = field(default_factory=list)
    dataset: object = field(default=None, repr=False)

    @property
    def n_instances(self):
        """Number of unique discriminatory instances."""
        return int(self.instances.shape[0])

    @property
    def instances_per_second(self):
        """Unique instances per second of wall time."""
        return self.n_instances / self.elapsed if self.elapsed > 0 else float("nan")

    @property
    def success_rate(self):
        """Unique discriminatory instances / unique generated instances."""
        return self.n_instances / self.n_explored if self.n_explored else float("nan")

    def summary(self):
        """One-row :class:`pandas.DataFrame` of the run's figures.

        Returns
        -------
        pandas.DataFrame
            Columns ``method``, ``instances``, ``global``, ``local``, ``seconds``,
            ``per_second``, ``success_rate``, ``queries``, ``tries``, ``explored``,
            ``stopped``.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.maft import FairnessTestResult
        >>> res = FairnessTestResult(
        ...     method="MAFT", instances=np.array([[30.0, 0.0]]),
        ...     counterparts=np.array([[30.0, 1.0]]), instance_scores=np.array([0.7]),
        ...     counterpart_scores=np.array([0.4]), phase=np.array(["global"]),
        ...     n_global=1, n_local=0, elapsed=0.5, n_explored=4, feature_names=["age", "sex"])
        >>> res.summary()[["method", "instances", "success_rate"]]
          method  instances  success_rate
        0   MAFT          1          0.25
        """
        return pd.DataFrame(
            [
                {
                    "method": self.method,
                    "instances": self.n_instances,
                    "global": self.n_global,
                    "local": self.n_local,
                    "seconds": self.elapsed,
                    "per_second": self.instances_per_second,
                    "success_rate": self.success_rate,
                    "queries": self.queries,
                    "tries": self.tries_global + self.tries_local,
                    "explored": self.n_explored,
                    "stopped": self.stopped,
                }
            ]
        )

    def to_frame(self, readable=True, max_rows=None):
        """Pairs ``(x, x')`` with both predictions, one row per instance.

        Columns are a two-level index: ``("x", feature)``, ``("x'", feature)``
        and ``("", "p(x)")``, ``("", "p(x')")``, ``("", "phase")``.  With
        ``readable=True`` and a dataset that has ``decode``, categorical codes
        are shown as their labels.

        Parameters
        ----------
        readable : bool, default=True
            Decode categorical codes into their labels (when the dataset can).
        max_rows : int or None, default=None
            Only the first ``max_rows`` instances.

        Returns
        -------
        pandas.DataFrame
            One row per instance (the first ``max_rows``), columns as above.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.maft import FairnessTestResult
        >>> res = FairnessTestResult(
        ...     method="MAFT", instances=np.array([[30.0, 0.0]]),
        ...     counterparts=np.array([[30.0, 1.0]]), instance_scores=np.array([0.7]),
        ...     counterpart_scores=np.array([0.4]), phase=np.array(["global"]),
        ...     n_global=1, n_local=0, elapsed=0.5, n_explored=4, feature_names=["age", "sex"])
        >>> df = res.to_frame()
        >>> df[("x", "sex")].tolist(), df[("x'", "sex")].tolist(), df[("", "phase")].tolist()
        ([0.0], [1.0], ['global'])
        """

        readable = check_bool("readable", readable)
        max_rows = check_int("max_rows", max_rows, min=0, allow_none=True)
        n = self.n_instances if max_rows is None else min(self.n_instances, max_rows)
        X1 = self.instances[:n]
        X2 = self.counterparts[:n]
        names = list(self.feature_names) or [f"x{j}" for j in range(self.instances.shape[1])]
        dec = getattr(self.dataset, "decode", None) if readable else None
        if dec is not None and n:
            F1 = dec(X1).reset_index(drop=True)
            F2 = dec(X2).reset_index(drop=True)
            F1 = F1[[c for c in names if c in F1.columns]]
            F2 = F2[[c for c in names if c in F2.columns]]
        else:
            F1 = pd.DataFrame(X1, columns=names)
            F2 = pd.DataFrame(X2, columns=names)
        F1.columns = pd.MultiIndex.from_product([["x"], F1.columns])
        F2.columns = pd.MultiIndex.from_product([["x'"], F2.columns])
        extra = pd.DataFrame(
            {
                ("", "p(x)"): self.instance_scores[:n],
                ("", "p(x')"): self.counterpart_scores[:n],
                ("", "phase"): self.phase[:n],
            }
        )
        return pd.concat([F1, F2, extra], axis=1)

    def to_dict(self):
        """JSON-safe summary (the contract's ``Result.to_dict``), plus the method.

        Returns
        -------
        dict
            ``type``, ``title``, ``summary`` (the :meth:`summary` row as a dict),
            ``params``, ``random_state``, ``elapsed``, ``stopped`` and ``method``.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.maft import FairnessTestResult
        >>> res = FairnessTestResult(
        ...     method="MAFT", instances=np.array([[30.0, 0.0]]),
        ...     counterparts=np.array([[30.0, 1.0]]), instance_scores=np.array([0.7]),
        ...     counterpart_scores=np.array([0.4]), phase=np.array(["global"]),
        ...     n_global=1, n_local=0, elapsed=0.5, n_explored=4, feature_names=["age", "sex"])
        >>> d = res.to_dict()
        >>> d["method"], d["summary"]["instances"]
        ('MAFT', 1)
        """
        out = super().to_dict()
        out["method"] = self.method
        return out

    def plot(self, ax=None, **kw):
        """Cumulative unique instances over wall time.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Drawn on a new figure if None.
        **kw
            Passed to :func:`fairlens.maft.plots.plot_timeline`.

        Returns
        -------
        matplotlib Axes
            The axes drawn on.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.maft import FairnessTestResult
        >>> res = FairnessTestResult(
        ...     method="MAFT", instances=np.array([[30.0, 0.0]]),
        ...     counterparts=np.array([[30.0, 1.0]]), instance_scores=np.array([0.7]),
        ...     counterpart_scores=np.array([0.4]), phase=np.array(["global"]),
        ...     n_global=1, n_local=0, elapsed=0.5, n_explored=4, feature_names=["age", "sex"])
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> ax = res.plot()
        >>> type(ax).__name__
        'Axes'
        """

        return plot_timeline({self.method: self}, ax=ax, **kw)
