"""CoverVisualizer: an ipywidgets view over :mod:`fairlens.certify`.

A thin view: every number it shows comes from :func:`certify`,
:func:`instance_covers` and :func:`accuracy_under_attack`.
"""
from __future__ import annotations

import html
import traceback

import numpy as np

from ._certify import STATUSES, certify, instance_covers
from ._flatten import check_X, flatten_forest

__all__ = ["CoverVisualizer"]


def _plain(value):
    """A label as people write it (``1``, ``'yes'``), not as numpy reprs it (``np.int64(1)``)."""
    return repr(value.item() if hasattr(value, "item") else value)


class CoverVisualizer:
    """Explore, instance by instance, why a forest is (not) robust to b-feature attacks.

    Shows, for the selected instance, the trees x features matrix of its
    ``S_f^+`` / ``S_f^-`` memberships (wrong trees greyed), delta, the FLB
    sum against delta, the ELB cover found (outlined, covered trees marked)
    and the brute-force verdict with the witness x' feature by feature.
    The budget slider recomputes the cascade (cached per budget); the summary
    button plots accuracy under attack against b for FLB, ELB and exact.

    Parameters
    ----------
    forest : fitted forest (see :func:`fairlens.certify.certify`).
    X, y : instances to certify and their labels.
    budget : int, initial attacker budget b.
    max_budget : int, largest b offered by the slider and the summary.
    feature_names : list of str, optional.

    Attributes
    ----------
    controls : dict of the named controls (``index``, ``prev``, ``next``,
        ``status``, ``budget``, ``summary``, ``stop``).
    result : the :class:`CertificationResult` of the current budget.
    instance : the :class:`InstanceCovers` of the current instance.
    summary_frame : DataFrame of the last summary (None before).
    last_error : text of the last error shown (None if none).
    """

    def __init__(self, forest, X, y, budget=1, max_budget=3, feature_names=None):
        import ipywidgets as W

        self.forest = flatten_forest(forest)
        self.X, _ = check_X(X, self.forest.n_features)
        self.y = np.asarray(y)
        self.forest.encode_y(self.y)
        if self.y.shape[0] != self.X.shape[0]:
            raise ValueError(f"X has {self.X.shape[0]} rows but y has {self.y.shape[0]} labels; they must match.")
        max_budget = int(min(max_budget, self.forest.n_features))
        if not 1 <= int(budget) <= max_budget:
            raise ValueError(f"budget must be between 1 and max_budget={max_budget}; got {budget}.")
        self.feature_names = list(feature_names) if feature_names is not None else (
            self.forest.feature_names or [f"x{f}" for f in range(self.forest.n_features)])
        self._cache = {}
        self._stop = False
        self.result = None
        self.instance = None
        self.summary_frame = None
        self.last_error = None
        n = self.X.shape[0]
        self.controls = {
            "index": W.BoundedIntText(value=0, min=0, max=n - 1, description="instance"),
            "prev": W.Button(description="<", layout=W.Layout(width="40px")),
            "next": W.Button(description=">", layout=W.Layout(width="40px")),
            "status": W.Dropdown(options=["all", *STATUSES], value="all", description="filter"),
            "budget": W.IntSlider(value=int(budget), min=1, max=max_budget, description="budget b",
                                  continuous_update=False),
            "summary": W.Button(description="accuracy vs b", button_style="info"),
            "stop": W.Button(description="stop", button_style="warning"),
        }
        self.progress = W.IntProgress(value=0, min=0, max=max_budget, description="summary")
        self.info = W.HTML()
        self.error = W.Output()
        self.out_matrix = W.Output()
        self.out_detail = W.Output()
        self.out_summary = W.Output()
        c = self.controls
        c["index"].observe(self._guard(self._on_index), names="value")
        c["budget"].observe(self._guard(self._on_budget), names="value")
        c["status"].observe(self._guard(self._on_filter), names="value")
        c["prev"].on_click(self._guard(lambda _: self._step(-1)))
        c["next"].on_click(self._guard(lambda _: self._step(+1)))
        c["summary"].on_click(self._guard(lambda _: self.compute_summary()))
        c["stop"].on_click(lambda _: setattr(self, "_stop", True))
        self.widget = W.VBox([
            W.HBox([c["prev"], c["index"], c["next"], c["status"], c["budget"]]),
            self.info,
            self.error,
            W.HBox([self.out_matrix, self.out_detail]),
            W.HBox([c["summary"], c["stop"], self.progress]),
            self.out_summary,
        ])
        self._guard(lambda: self._on_budget(None))()

    # -- plumbing --------------------------------------------------------
    def _guard(self, fn):
        def wrapped(*a, **k):
            try:
                self.error.clear_output()
                self.last_error = None
                return fn(*a, **k)
            except Exception as exc:  # shown in the widget, never swallowed silently
                self.last_error = f"{type(exc).__name__}: {exc}"
                # append_* works with or without a running kernel (headless tests)
                self.error.append_stdout(self.last_error + "\n")
                self.error.append_stderr(traceback.format_exc())
        return wrapped

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)

    # -- state -----------------------------------------------------------
    @property
    def budget(self):
        return int(self.controls["budget"].value)

    @property
    def index(self):
        return int(self.controls["index"].value)

    def matching(self):
        """Rows matching the status filter."""
        want = self.controls["status"].value
        if want == "all" or self.result is None:
            return np.arange(self.X.shape[0])
        return np.flatnonzero(self.result.status == want)

    def _result_for(self, b):
        if b not in self._cache:
            self._cache[b] = certify(self.forest, self.X, self.y, budget=b, method="cascade")
        return self._cache[b]

    def _on_budget(self, _change):
        self.result = self._result_for(self.budget)
        self._on_filter(None)

    def _on_filter(self, _change):
        rows = self.matching()
        if rows.size == 0:
            raise ValueError(f"no instance has status {self.controls['status'].value!r} at b = {self.budget}; "
                             "pick another filter or budget.")
        if self.index not in rows:
            self.controls["index"].value = int(rows[0])  # triggers _on_index
        else:
            self.render()

    def _on_index(self, _change):
        self.render()

    def _step(self, direction):
        rows = self.matching()
        if rows.size == 0:
            raise ValueError("no instance matches the filter.")
        i = self.index
        nxt = rows[rows > i] if direction > 0 else rows[rows < i][::-1]
        self.controls["index"].value = int(nxt[0] if nxt.size else (rows[0] if direction > 0 else rows[-1]))

    # -- rendering -------------------------------------------------------
    def render(self):
        import matplotlib.pyplot as plt
        from IPython.display import display

        from .plots import plot_cover_matrix, plot_flb, plot_witness

        i, b, res = self.index, self.budget, self.result
        self.instance = ic = instance_covers(self.forest, self.X[i], self.y[i], budget=b)
        status = res.status[i]
        cover = res.covers.get(i)
        target = None
        lines = [f"<b>instance {i}</b>: label {_plain(self.y[i])}, status <b>{status}</b> at b = {b}; "
                 f"{int(ic.wrong.sum())} of {len(ic.votes)} trees wrong before the attack."]
        if ic.correct:
            # the class closest to being reachable (largest FLB sum - delta), as in flb_kernel
            target = max(ic.delta, key=lambda c: ic.flb[c][0] - ic.delta[c])
            verdict = "FLB certifies" if ic.flb[target][0] < ic.delta[target] else "FLB cannot certify"
            lines.append(f"delta = {ic.delta[target]} trees to change (target class "
                         f"{_plain(self.forest.classes_[target])}); FLB sum = {ic.flb[target][0]}: {verdict}.")
        if cover:
            txt = ", ".join(f"S{s}[{html.escape(self.feature_names[f])}]" for f, s in cover)
            lines.append(f"ELB cover found: {txt} (necessary condition only; brute force decides).")
        if i in res.witnesses:
            feats, vals = res.witness_changes[i]
            txt = ", ".join(f"{html.escape(self.feature_names[f])}: {self.X[i, f]:.6g} -> {v:.6g}"
                            for f, v in zip(feats, vals))
            lines.append(f"<span style='color:#d73027'>witness x' flips the vote: {txt}</span>")
        elif status == "robust_brute":
            lines.append("brute force: no attack on at most b features exists.")
        self.info.value = "<br>".join(lines)
        self.out_matrix.clear_output(wait=True)
        with self.out_matrix:
            fig, ax = plt.subplots(figsize=(6.5, 4.5))
            plot_cover_matrix(ic, ax=ax, cover=cover, feature_names=self.feature_names)
            fig.tight_layout()
            display(fig)
            plt.close(fig)
        self.out_detail.clear_output(wait=True)
        with self.out_detail:
            rows = 2 if i in res.witnesses else 1
            fig, axes = plt.subplots(rows, 1, figsize=(4.8, 3 * rows), squeeze=False)
            if ic.correct:
                plot_flb(ic, ax=axes[0, 0], target=target, feature_names=self.feature_names)
            else:
                axes[0, 0].text(0.5, 0.5, "misclassified before any attack", ha="center")
                axes[0, 0].set_axis_off()
            if i in res.witnesses:
                plot_witness(self.X[i], res.witnesses[i], self.feature_names, ax=axes[1, 0])
            fig.tight_layout()
            display(fig)
            plt.close(fig)

    def compute_summary(self):
        """Accuracy under attack for b = 1..max_budget (FLB, ELB, exact); can be stopped between budgets."""
        import matplotlib.pyplot as plt
        import pandas as pd
        from IPython.display import display

        from .plots import plot_accuracy_vs_budget

        self._stop = False
        frames = []
        self.progress.value = 0
        for b in range(1, self.controls["budget"].max + 1):
            if self._stop:
                break
            frames.append(self._result_for(b).summary())
            self.progress.value = b
        self.summary_frame = pd.concat(frames, ignore_index=True) if frames else None
        self.out_summary.clear_output(wait=True)
        if self.summary_frame is not None:
            with self.out_summary:
                fig, ax = plt.subplots(figsize=(5, 3.2))
                plot_accuracy_vs_budget(self.summary_frame, ax=ax)
                fig.tight_layout()
                display(fig)
                plt.close(fig)
        return self.summary_frame

