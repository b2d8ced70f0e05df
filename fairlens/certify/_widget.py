"""CoverVisualizer: an ipywidgets view over :mod:`fairlens.certify`.

A thin view: every number it shows comes from :func:`certify`,
:func:`instance_covers` and :func:`accuracy_under_attack`.

Drawing: the text, the cover matrix and the FLB/witness panel of one instance
are computed together by one latest-wins render worker, rendered to PNG with
Agg (pyplot-free ``Figure``) and swapped in together through
``ipywidgets.Image``/``HTML`` values (thread-safe: they only send comm
messages), so the screen never mixes two instances and no panel stays blank
(see :mod:`fairlens._widgets`).
"""
from __future__ import annotations

import html

import ipywidgets as W
import numpy as np

from .._base import strict_keywords
from .._widgets import COMPILING, FairlensWidget, draw_png, kernels_cold, labelled, message_png, resolve_background
from . import _bounds
from ._certify import STATUSES, certify, instance_covers
from ._readers import read_model
from .plots import plot_accuracy_vs_budget, plot_cover_matrix, plot_flb, plot_tree_contributions, plot_witness

__all__ = ["CoverVisualizer"]


def _plain(value):
    """A label as people write it (``1``, ``'yes'``), not as numpy reprs it (``np.int64(1)``)."""
    return repr(value.item() if hasattr(value, "item") else value)


_SUM_FIG = (3.8, 3.6)
_MAT_FIG = (4.6, 3.6)
_DET_FIG = (4.0, 3.6)
_SUMMARY_CHUNK = 8  # rows per certify call in the summary (how soon Stop is seen)


class _Stopped(Exception):
    """Raised from certify's progress callback when Stop was pressed."""


class CoverVisualizer(FairlensWidget):
    """Explore, instance by instance, why a forest is (not) robust to b-feature attacks.

    Shows, for the selected instance, the trees x features matrix of its
    ``S_f^+`` / ``S_f^-`` memberships (wrong trees greyed), delta, the FLB
    sum against delta, the ELB cover found (outlined, covered trees marked)
    and the brute-force verdict with the witness x' feature by feature.
    The budget slider recomputes the cascade (cached per budget); the summary
    button plots accuracy under attack against b for FLB, ELB and exact.
    The widget shows the paper's finite covers ``S_f^+``/``S_f^-``, so it certifies the finite
    threat model (``certify(..., missing=False)``: the attacker writes finite values only).

    Parameters
    ----------
    model : fitted forest or boosted ensemble
        The model to certify (every model :func:`fairlens.certify.certify` takes: scikit-learn
        forests, a FeaturePartitionedForest, gradient boosting, XGBoost, LightGBM). ``forest=``
        (its old name) is a ``TypeError`` naming ``model=``.
    X : array-like or DataFrame of shape (n, d)
        The instances to certify (a DataFrame is aligned with the model by column name).
    y : array-like of shape (n,)
        Their true labels.
    budget : int, default 1
        Initial attacker budget b (features the attacker may change), in ``[1, max_budget]``.
    max_budget : int, default 3
        Largest b offered by the slider and the summary (capped at the number of features).
    feature_names : list of str, optional
        Names shown for the features (default: the model's, else ``x0, x1, ...``).
    background : bool, default True
        Compute and draw in background threads; ``False``: synchronously.
    vote : {None, "soft", "hard"}
        Which vote to certify (see :func:`fairlens.certify.certify`); default: what the
        model's own ``predict`` does (soft vote for scikit-learn forests, hard for an FPF).

    Attributes
    ----------
    controls : dict of the named controls (``index``, ``prev``, ``next``,
        ``status``, ``budget``, ``summary``, ``stop``, ``projector``, ``export``).
    result : the :class:`CertificationResult` of the budget shown.
    instance : the :class:`InstanceCovers` of the instance shown.
    summary_frame : DataFrame of the last summary (None before).
    last_error : text of the last error shown (None if none).

    Raises
    ------
    ValueError, TypeError
        For mismatched ``X``/``y``, a budget out of range, ``vote`` on a boosted model,
        a bad ``background``.

    Notes
    -----
    An ``ipywidgets.VBox``: it can be placed in any box (``HBox([viz])``).
    Test protocol: :meth:`wait`, :meth:`snapshot` (views ``text``,
    ``matrix``, ``detail``, ``summary``). :meth:`export` returns the figures, the
    numbers and a code cell reproducing the current settings.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from fairlens.certify import CoverVisualizer
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    >>> viz = CoverVisualizer(rf, X[:20], y[:20], background=False)
    >>> viz.result.accuracy_clean  # doctest: +SKIP
    """

    _export_name = "certify-covers"

    @strict_keywords(renamed={"forest": "model", "use_threads": "background"})
    def __init__(self, model, X, y, budget=1, max_budget=3, feature_names=None, background=None, vote=None):
        forest = model
        threads = resolve_background(background, "CoverVisualizer")
        self._model = forest
        self._vote = vote

        # the reader registered for the model's type (forests: what the model's predict does;
        # boosted models: summed raw scores, where vote does not apply and is refused by name)
        self.forest = read_model(forest, vote=vote)
        self.X, _ = self.forest.check_X(X)  # a DataFrame is aligned by column name
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
        self._covers = {}
        self.result = None
        self.instance = None
        self.summary_frame = None
        n = self.X.shape[0]
        self.controls = {
            "index": labelled(W.BoundedIntText(value=0, min=0, max=n - 1, description="instance",
                                               layout=W.Layout(width="170px")),
                              f"Row of X to inspect (0-{n - 1})"),
            "prev": labelled(W.Button(description="<", layout=W.Layout(width="40px")),
                             "Previous instance matching the filter"),
            "next": labelled(W.Button(description=">", layout=W.Layout(width="40px")),
                             "Next instance matching the filter"),
            "status": labelled(W.Dropdown(options=["all", *STATUSES], value="all", description="show only",
                                          layout=W.Layout(width="260px")),
                               "Only step through instances with this verdict at the current budget"),
            "budget": labelled(W.IntSlider(value=int(budget), min=1, max=max_budget, description="budget b",
                                           continuous_update=False, layout=W.Layout(width="300px")),
                               "Number of features the attacker may change"),
            "summary": labelled(W.Button(description="accuracy vs b", button_style="info", icon="line-chart"),
                                f"Accuracy under attack for b = 1..{max_budget} (FLB, ELB, exact)"),
            "stop": labelled(W.Button(description="Stop", icon="stop", disabled=True),
                             "Stop the summary after the current budget (keeps the budgets done)"),
        }
        self.progress = labelled(W.IntProgress(value=0, min=0, max=max_budget, description="summary"),
                                 "Budgets done")
        self._init_protocol(["text", "matrix", "detail", "summary"], background=threads,
                            images=["matrix", "detail", "summary"])
        self.controls.update(self._common)
        self.info = W.HTML(layout=W.Layout(min_height="5em"))
        self.htmls = {"text": self.info}
        self.error = self.error_html
        c = self.controls
        c["index"].observe(lambda _: self.request_render(), names="value")
        c["budget"].observe(lambda _: self.request_render(), names="value")
        c["status"].observe(lambda _: self.request_render(), names="value")
        c["prev"].on_click(lambda _: self._step(-1))
        c["next"].on_click(lambda _: self._step(+1))
        c["summary"].on_click(lambda _: self.compute_summary())
        c["stop"].on_click(lambda _: self.stop())
        self._show_png("summary", message_png("press 'accuracy vs b' for the summary", _SUM_FIG))
        super().__init__([
            self._style_html,
            W.HBox([c["prev"], c["index"], c["next"], c["status"], c["budget"], c["summary"], c["stop"],
                    self.progress, self._toolbar()], layout=W.Layout(flex_flow="row wrap", align_items="center")),
            self.status_html,
            self.error_html,
            self.info,
            # natural-size figures, wrapping onto the next line when the column is narrow
            W.HBox([self.images["matrix"], self.images["detail"], self.images["summary"]],
                   layout=W.Layout(flex_flow="row wrap", align_items="flex-start")),
            self.export_html,
        ])
        self.add_class("fl-widget")
        self.request_render()

    @property
    def widget(self):
        """The widget itself (it used to be a wrapper around a box; kept for old notebooks)."""
        return self

    # -- state -----------------------------------------------------------
    @property
    def budget(self):
        return int(self.controls["budget"].value)

    @property
    def index(self):
        return int(self.controls["index"].value)

    def matching(self, result=None, status=None):
        """Rows matching the status filter.

        Parameters
        ----------
        result : CertificationResult, optional
            The certification to filter (default: the one shown, ``result``).
        status : str, optional
            A status such as ``"attackable"`` or ``"certified_flb"`` (the options of the
            ``status`` control), or ``"all"``; default: the control's current value.

        Returns
        -------
        ndarray of int
            Indices of the rows of ``X`` whose status is ``status`` (all rows for ``"all"``
            or before any result).

        Examples
        --------
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> from fairlens.certify import CoverVisualizer
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
        >>> viz = CoverVisualizer(rf, X[:20], y[:20], background=False)
        >>> rows = viz.matching(status="attackable")
        >>> bool((viz.result.status[rows] == "attackable").all())
        True
        >>> len(viz.matching(status="all"))
        20
        """
        want = self.controls["status"].value if status is None else status
        result = self.result if result is None else result
        if want == "all" or result is None:
            return np.arange(self.X.shape[0])
        return np.flatnonzero(result.status == want)

    def _result_for(self, b):
        if b not in self._cache:
            self._cache[b] = certify(self.forest, self.X, self.y, budget=b, method="cascade", missing=False)
        return self._cache[b]

    def _step(self, direction):
        rows = self.matching()
        if rows.size == 0:
            self._set_status("no instance matches the filter; pick another filter or budget.")
            return
        i = self.index
        nxt = rows[rows > i] if direction > 0 else rows[rows < i][::-1]
        self.controls["index"].value = int(nxt[0] if nxt.size else (rows[0] if direction > 0 else rows[-1]))

    def _state(self):
        return dict(index=self.index, budget=self.budget, status=self.controls["status"].value,
                    summary=None if self.summary_frame is None else id(self.summary_frame))

    def _busy_text(self, state):

        return f"computing b = {state['budget']}..." + (f" {COMPILING}" if kernels_cold(_bounds) else "")

    # -- rendering -------------------------------------------------------
    def _compute_views(self, state):

        b, want = state["budget"], state["status"]
        res = self._result_for(b)
        rows = self.matching(res, want)
        base = dict(budget=b, status_filter=want)
        summary = self.summary_frame
        if summary is not None:
            def draw_summary(fig, ax):
                plot_accuracy_vs_budget(summary, ax=ax)
                ax.set_xlabel("budget b (features changed)")  # one line: the legend sits below it

            png_sum = draw_png(draw_summary, _SUM_FIG)
            sum_params = dict(budgets=[int(v) for v in summary["budget"]])
        else:
            png_sum = self._views["summary"]["png"]
            sum_params = dict(budgets=[])
        views = {"summary": {"params": sum_params, "png": png_sum}}
        if rows.size == 0:
            msg = (f"No instance has status {want!r} at b = {b}; pick another filter or budget.")
            self._extra = (res, None, None)
            views.update({
                "text": {"params": dict(base, instance=None), "html": f"<i>{html.escape(msg)}</i>"},
                "matrix": {"params": dict(base, instance=None), "png": message_png(msg, _MAT_FIG)},
                "detail": {"params": dict(base, instance=None), "png": message_png(msg, _DET_FIG)},
            })
            return views
        i = state["index"] if state["index"] in rows else int(rows[0])
        key = (i, b)
        if key not in self._covers:
            self._covers[key] = instance_covers(self.forest, self.X[i], self.y[i], budget=b)
        ic = self._covers[key]
        status = res.status[i]
        cover = res.covers.get(i)
        target = None
        lines = [f"<b>instance {i}</b>: label {_plain(self.y[i])}, status <b>{status}</b> at b = {b}; "
                 + (f"{len(ic.votes)} boosted trees (summed raw scores)." if self.forest.vote == "additive" else
                    f"{int(ic.wrong.sum())} of {len(ic.votes)} trees wrong before the attack.")]
        if ic.correct:
            # the class closest to being reachable (largest FLB sum - delta), as in _bounds.flb_search
            target = max(ic.delta, key=lambda c: ic.flb[c][0] - ic.delta[c])
            verdict = "FLB certifies" if ic.flb[target][0] < ic.delta[target] else "FLB cannot certify"
            cls = _plain(self.forest.classes_[target])
            if self.forest.vote == "additive":
                lines.append(f"margin s_y - s_c = {ic.delta[target]:.4g} (summed raw scores, class {cls}); "
                             f"FLB sum of the b largest margin swings = {ic.flb[target][0]:.4g}: {verdict}.")
            elif self.forest.vote == "soft":
                lines.append(f"margin delta = {ic.delta[target]:.4g} (summed over the {len(ic.votes)} trees: "
                             f"P(label) - P(class {cls})); FLB sum of the b largest probability swings = "
                             f"{ic.flb[target][0]:.4g}: {verdict}.")
            else:
                lines.append(f"delta = {ic.delta[target]} trees to change (target class {cls}); "
                             f"FLB sum = {ic.flb[target][0]}: {verdict}.")
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
        elif status == "unknown":
            lines.append("not settled: the time limit stopped the search before this instance was decided.")
        lines.append(f"<span style='color:#555'>certified vote: {html.escape(res.vote)}</span>")
        if self.forest.vote == "additive":  # boosted: per-tree margin contributions replace the matrix

            png_m = draw_png(lambda fig, ax: plot_tree_contributions(ic, ax=ax, target=target), _MAT_FIG)
        else:
            png_m = draw_png(lambda fig, ax: plot_cover_matrix(ic, ax=ax, cover=cover,
                                                               feature_names=self.feature_names), _MAT_FIG)
        has_w = i in res.witnesses

        def detail(fig, axes):
            axes = np.atleast_1d(axes)
            if ic.correct:
                plot_flb(ic, ax=axes[0], target=target, feature_names=self.feature_names)
            else:
                axes[0].text(0.5, 0.5, "misclassified before any attack", ha="center", va="center",
                             transform=axes[0].transAxes)
                axes[0].set_axis_off()
            if has_w:
                plot_witness(self.X[i], res.witnesses[i], self.feature_names, ax=axes[1])

        png_d = draw_png(detail, (_DET_FIG[0], _DET_FIG[1] * (1.6 if has_w else 1)), nrows=2 if has_w else 1)
        self._extra = (res, ic, i)
        p = dict(base, instance=i, verdict=str(status))
        views.update({"text": {"params": dict(p), "html": "<br>".join(lines)},
                      "matrix": {"params": dict(p, cover=[list(map(str, c)) for c in (cover or [])]), "png": png_m},
                      "detail": {"params": dict(p, witness=has_w), "png": png_d}})
        return views

    def _view_key(self, state):
        return tuple(sorted(state.items()))

    def _on_published(self, state, views):
        res, ic, i = self._extra
        self.result, self.instance = res, ic
        if not self.running:
            n = int(self.matching(res, state["status"]).size)
            self._status_text = (f"b = {state['budget']}: {n} of {self.X.shape[0]} instances match "
                                 f"'{state['status']}'")
        if i is not None and i != self.index:
            self.controls["index"].value = i  # follow the filter (redraws the same, cached state)

    def render(self):
        """Redraw for the current controls and wait (scripts).

        Examples
        --------
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> from fairlens.certify import CoverVisualizer
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
        >>> viz = CoverVisualizer(rf, X[:20], y[:20], background=False)
        >>> viz.controls["budget"].value = 2
        >>> viz.render()
        >>> viz.budget
        2
        """
        self.request_render()
        self.wait()

    # -- summary ---------------------------------------------------------
    def _set_running(self, running):
        self.controls["summary"].disabled = running
        self.controls["stop"].disabled = not running
        self.controls["stop"].button_style = "warning" if running else ""  # looks enabled only when it is

    def compute_summary(self, block=False):
        """Accuracy under attack for b = 1..max_budget (FLB, ELB, exact), in the background.

        Stop takes effect between chunks of ``_SUMMARY_CHUNK`` rows of the budget being
        certified, and keeps the budgets already done.

        Parameters
        ----------
        block : bool, default False
            Wait until the summary is done before returning (with ``background=False`` the
            summary is always computed before this returns).

        Returns
        -------
        DataFrame or None
            ``summary_frame``: one row per budget b = 1..max_budget (the certification
            summary: accuracy under attack by FLB, ELB and exact search). While a background
            summary is still running it is the previous summary (``None`` before the first).

        Examples
        --------
        >>> from sklearn.datasets import load_breast_cancer
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> from fairlens.certify import CoverVisualizer
        >>> X, y = load_breast_cancer(return_X_y=True)
        >>> rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
        >>> viz = CoverVisualizer(rf, X[:20], y[:20], max_budget=2, background=False)
        >>> viz.compute_summary(block=True)["budget"].tolist()
        [1, 2]
        """
        import pandas as pd


        self.progress.value = 0
        cold = kernels_cold(_bounds)
        self._set_status("computing accuracy vs b..." + (f" {COMPILING}" if cold else ""), busy=True)

        def job(stop):
            def check(stage, done, total):  # called between row chunks of certify
                if stop.is_set() or stop.detached:
                    raise _Stopped

            frames = []
            for b in range(1, self.controls["budget"].max + 1):
                if stop.is_set():
                    break
                if b not in self._cache:
                    try:  # small chunks: Stop takes effect within a few rows, not a whole budget
                        self._cache[b] = certify(self.forest, self.X, self.y, budget=b, method="cascade",
                                                 progress=check, chunk_size=_SUMMARY_CHUNK, missing=False)
                    except _Stopped:
                        break
                frames.append(self._cache[b].summary())
                self.progress.value = b
            with self._committing(stop) as keep:
                if not keep:
                    return
                if frames:
                    self.summary_frame = pd.concat(frames, ignore_index=True)
                self._status_text = (("stopped: " if stop.is_set() else "summary: ")
                                     + f"{len(frames)} of {self.controls['budget'].max} budgets done")

        self._start_job("summary", job)
        if block:
            self.wait()
        return self.summary_frame

    def _stopped_text(self, name):
        n = 0 if self.summary_frame is None else len(self.summary_frame)
        return f"stopped: summary interrupted; {n} budget(s) shown from before, the budget under way discarded"

    # -- export ----------------------------------------------------------
    def _export_frame(self):
        """Per instance at the budget shown: label, verdict, and whether a witness exists;
        plus the accuracy-vs-b summary rows if computed (column ``view``)."""
        import pandas as pd

        res = self.result
        frames = []
        if res is not None:
            frames.append(pd.DataFrame({"view": "instances", "instance": np.arange(self.X.shape[0]),
                                        "label": [_plain(v).strip("'") for v in self.y],
                                        "status": np.asarray(res.status).astype(str),
                                        "witness": [i in res.witnesses for i in range(self.X.shape[0])],
                                        "budget": self.budget}))
        if self.summary_frame is not None:
            frames.append(self.summary_frame.assign(view="accuracy_vs_budget"))
        return pd.concat(frames, ignore_index=True, sort=False) if frames else pd.DataFrame({"view": []})

    def _export_code(self):
        vote = "" if self._vote is None else f", vote={self._vote!r}"
        lines = ["# Recomputes what CoverVisualizer shows for these settings, without the widget.",
                 "# model, X, y are the objects you passed to the widget.",
                 "from fairlens.certify import certify, instance_covers", "",
                 f"res = certify(model, X, y, budget={self.budget}, method='cascade'{vote}, missing=False)",
                 "print(res.summary())",
                 f"print('instance {self.index}:', res.status[{self.index}])"]
        if self.summary_frame is not None:
            lines += ["import pandas as pd",
                      "summary = pd.concat([certify(model, X, y, budget=b, method='cascade'"
                      f"{vote}, missing=False).summary() for b in range(1, {self.controls['budget'].max} + 1)])",
                      "print(summary)"]
        return "\n".join(lines) + "\n"
