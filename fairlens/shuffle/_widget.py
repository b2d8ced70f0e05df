"""ShuffleAttackExplorer: an ipywidgets view over :mod:`fairlens.shuffle`.

A thin view: every number it shows comes from the headless core
(:class:`ShuffledModel`, :func:`linear_shap_values`, :func:`explain`,
:func:`fairness_before_after`).

Drawing: figures are rendered to PNG with Agg (pyplot-free ``Figure``) and
swapped into ``ipywidgets.Image`` views by one latest-wins render worker;
setting a widget value only sends a comm message, which is safe from any
thread, so a finished SHAP/LIME run always shows up, and the three views of
one state are swapped in together (see :mod:`fairlens._widgets`).
"""
from __future__ import annotations

import ipywidgets as W
import numpy as np
import pandas as pd

from .._base import strict_keywords
from .._widgets import COMPILING, FairlensWidget, draw_png, kernels_cold, labelled, message_png, resolve_background
from . import _kernels, plots
from ._detect import _summarise, explain, fairness_before_after, linear_shap_values
from ._shuffled import ShuffledModel, parse_attack

__all__ = ["ShuffleAttackExplorer"]

_NO_HYBRID = "(no hybrid)"
_EXPLAINERS = ("shap", "lime", "kernel")  # what run_explainer (and the Run buttons) can run


def _explainer_label(name):
    """How an explainer is named on screen: exact values and estimates told apart."""
    base, _, rest = str(name).partition(" ")
    label = {"linear": "exact (linear)", "shap": "SHAP estimate", "kernel": "KernelSHAP estimate",
             "lime": "LIME estimate"}.get(base, base)
    return label + (" " + rest if rest else "")
_PARAMS = ("attack", "bottom_attack", "p", "quantile", "region", "mixing_rule", "swapping_rule",
           "threshold")


class ShuffleAttackExplorer(FairlensWidget):
    """Explore shuffling attacks on one dataset: Figures 1-2 and fairness, live.

    Parameters
    ----------
    scorer : callable, classifier or ShuffledModel
        The honest scorer ``f`` (or a ShuffledModel whose scorer, protected
        feature(s) and favoured group are reused).
    X : array or DataFrame (n, d)
        The batch the attacked model is applied to (Figure 1) and from which
        instances are explained.
    protected, favoured
        As in :class:`ShuffledModel` (not needed when ``scorer`` is one).
    y : array-like of 0/1, optional
        Ground truth for the fairness metrics (1 = favourable).
    feature_names : list of str, optional
        Names shown for the features (default: the columns of a DataFrame ``X``, else
        ``x0, x1, ...``).
    n_explain : int, default 20
        Number of instances explained by SHAP / LIME (the first rows of X).
    nsamples : int, optional
        Model evaluations per instance for SHAP (permutation) / LIME.
    threshold : float, default 0.5
        Decision threshold of the fairness view.
    higher_is_better : bool, default True
        Whether a higher score is the favourable outcome (taken from ``scorer`` when it is
        a ShuffledModel).
    random_state : int, default 0
        Seeds the attack's shuffles and the explainers (same seed, same views).
    background : bool, default True
        Redraw and explain in background threads (Stop works, the kernel stays
        responsive); ``False`` does everything synchronously.
    background_data : array or DataFrame, optional
        Background data of the explainers (default ``X``).

    Attributes
    ----------
    controls : dict
        Named controls: ``attack``, ``bottom_attack``, ``p``, ``quantile``,
        ``region``, ``mixing_rule`` (default ``"alg3"``, Algorithm 3 as printed),
        ``swapping_rule`` (default ``"alg4"``; ``"once"`` = Algorithm 4 without
        line 4), ``threshold``, ``run_shap``,
        ``run_lime``, ``stop``, ``projector``, ``export``.
    result : dict
        State shown: ``params``, ``model``, ``batch`` (ShuffleBatch on X),
        ``attributions`` (tidy DataFrame: linear plus any cached SHAP/LIME for
        these parameters), ``fairness`` (DataFrame or None), ``update_ms``.
    cache : dict
        ``(params, explainer) -> tidy DataFrame`` of finished explanations.
    partial : dict
        ``(params, explainer) -> tidy DataFrame`` of stopped explanations
        (what was found before Stop; shown, not cached as final).
    last_error : str or None
        Message of the last error (also shown in the widget).

    Raises
    ------
    ValueError, TypeError
        For a bad scorer, data or attack parameter (named in the message).

    Notes
    -----
    Test protocol: :meth:`wait` and :meth:`snapshot` (views ``scores``,
    ``attributions``, ``fairness``). :meth:`export` returns the figures, the numbers
    and a code cell reproducing the current settings.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.shuffle import ShuffleAttackExplorer
    >>> X = np.random.default_rng(0).random((50, 3)); X[:, 2] = X[:, 2] > 0.5
    >>> w = ShuffleAttackExplorer(lambda A: A[:, :2].mean(1), X, protected=2, favoured=1,
    ...                           background=False)
    >>> sorted(w.snapshot())
    ['attributions', 'fairness', 'scores']
    """

    _export_name = "shuffle-attack"

    @strict_keywords(renamed={"use_threads": "background"})
    def __init__(self, scorer, X, protected=None, favoured=None, *, y=None, feature_names=None,
                 n_explain=20, nsamples=None, threshold=0.5, higher_is_better=True,
                 random_state=0, background=None, background_data=None):
        if isinstance(scorer, ShuffledModel):
            base = scorer
            protected = base.protected if protected is None else protected
            favoured = base.favoured if favoured is None else favoured
            higher_is_better = base.higher_is_better
            feature_names = feature_names or base.feature_names
            scorer = base.scorer
        if protected is None or favoured is None:
            raise ValueError("protected and favoured are required (or pass a ShuffledModel).")
        if isinstance(X, pd.DataFrame):
            feature_names = feature_names or list(map(str, X.columns))
        if background is not None and not isinstance(background, (bool, np.bool_, int)):
            # the old meaning of background= (the explainers' background data)
            raise TypeError("ShuffleAttackExplorer: background= is the thread switch (True/False); got "
                            f"{type(background).__name__}. Pass the explainers' data as background_data=.")
        threads = resolve_background(background, "ShuffleAttackExplorer")
        self.X = X
        self.background_data = X if background_data is None else background_data
        self.y = None if y is None else np.asarray(y)
        if self.y is not None and len(self.y) != len(X):
            raise ValueError(f"y has {len(self.y)} rows but X has {len(X)}.")
        self.feature_names = list(feature_names) if feature_names is not None else [
            f"x{j}" for j in range(np.asarray(X).shape[1])]
        self.scorer = scorer
        self.protected = protected
        self.favoured = favoured
        self.higher_is_better = higher_is_better
        self.random_state = random_state
        self.n_explain = int(n_explain)
        self.nsamples = nsamples
        self.cache = {}
        self.partial = {}
        self._batches = {}
        self._fairness = {}
        self._note = None
        self.result = {}
        # validate once, with a clear error
        self._make_model(dict(attack="dominance", p=0.8, quantile=0.0, region=1.0,
                              mixing_rule="alg3", swapping_rule="alg4")).validate(X)

        wide = W.Layout(width="330px")
        c = {}
        c["attack"] = labelled(W.Dropdown(options=["dominance", "mixing", "swapping", "none"], value="swapping",
                                          description="attack", layout=wide),
                               "Attack applied to the model's outputs (top half when a hybrid is chosen)")
        c["bottom_attack"] = labelled(W.Dropdown(options=[_NO_HYBRID, "dominance", "mixing", "swapping", "none"],
                                                 value=_NO_HYBRID, description="bottom half (hybrid)",
                                                 layout=wide),
                                      "Second attack for the bottom of the score range (hybrid attack)")
        c["p"] = labelled(W.FloatSlider(value=0.8, min=0.0, max=1.0, step=0.05, description="mixing p",
                                        continuous_update=False, layout=wide),
                          "Mixing: probability of taking the favoured group's score (only for mixing)")
        c["quantile"] = labelled(W.FloatSlider(value=0.0, min=0.0, max=1.0, step=0.05,
                                               description="swap quantile", continuous_update=False,
                                               layout=wide),
                                 "Swapping: only swap scores above this quantile (only for swapping)")
        c["region"] = labelled(W.FloatSlider(value=1.0, min=0.05, max=1.0, step=0.05,
                                             description="top region (hybrid)", continuous_update=False,
                                             layout=wide),
                               "Hybrid: share of the score range handled by the top attack")
        c["mixing_rule"] = labelled(W.Dropdown(options=[("Alg. 3 as printed", "alg3"),
                                                        ("coin (tail: other group)", "coin")],
                                               value="alg3", description="mixing rule", layout=wide),
                                    "Mixing: on a tail, Algorithm 3 gives the score to the higher original "
                                    "score; 'coin' gives it to the other group (unbiased at p = 0.5)")
        c["swapping_rule"] = labelled(W.Dropdown(options=[("Alg. 4 as printed", "alg4"),
                                                          ("Alg. 4 without line 4 (each pair once)", "once")],
                                                 value="alg4", description="swapping rule", layout=wide),
                                      "Swapping: Algorithm 4 as printed (repeated swaps), or without its "
                                      "line 4 so that each pair is swapped at most once (no quantile)")
        c["threshold"] = labelled(W.FloatSlider(value=float(threshold), min=0.0, max=1.0, step=0.01,
                                                description="decision threshold", continuous_update=False,
                                                layout=wide),
                                  "Score at or above which a row is predicted favourable (fairness view)")
        c["run_shap"] = labelled(W.Button(description="Run SHAP", icon="play"),
                                 f"Explain the first {self.n_explain} rows with SHAP (cached per setting)")
        c["run_lime"] = labelled(W.Button(description="Run LIME", icon="play"),
                                 f"Explain the first {self.n_explain} rows with LIME (cached per setting)")
        c["stop"] = labelled(W.Button(description="Stop", icon="stop", disabled=True),
                             "Stop the running explanation (keeps the rows explained so far)")
        self.progress = labelled(W.FloatProgress(value=0.0, min=0.0, max=1.0, description="explain"),
                                 "Share of the rows explained")
        self._init_protocol(["scores", "attributions", "fairness"], background=threads)
        c.update(self._common)
        self.controls = c
        for name in _PARAMS:
            c[name].observe(self._on_change, names="value")
        c["run_shap"].on_click(lambda _: self._guard(self.run_explainer, "shap"))
        c["run_lime"].on_click(lambda _: self._guard(self.run_explainer, "lime"))
        c["stop"].on_click(lambda _: self.stop())
        grid = W.GridBox([c["attack"], c["bottom_attack"], c["region"], c["mixing_rule"], c["p"],
                          c["swapping_rule"], c["quantile"], c["threshold"]],
                         layout=W.Layout(grid_template_columns="repeat(auto-fill, minmax(330px, 1fr))"))
        buttons = W.HBox([c["run_shap"], c["run_lime"], c["stop"], self.progress, self._toolbar()],
                         layout=W.Layout(flex_flow="row wrap"))
        # each figure at its natural size; they wrap onto the next line when the column is narrow
        views = W.HBox([self.images["scores"], self.images["attributions"], self.images["fairness"]],
                       layout=W.Layout(flex_flow="row wrap", grid_gap="4px"))
        self.caption = W.HTML(
            "<div class='fl-small' style='color:#444'><b>exact (linear)</b>: the exact Shapley value of the "
            "attacked model for a linear scorer (Eq. 10-15). <b>SHAP estimate</b> and <b>LIME</b> are "
            "<i>estimates</i> computed from samples of the model: a small bar next to an exact 0 is "
            "estimation noise, not evidence that the model uses the feature.</div>")
        super().__init__([self._style_html, grid, buttons, self.status_html, self.error_html, views, self.caption,
                          self.export_html])
        self.add_class("fl-widget")
        self._sync_enabled()
        if self.background:
            self.request_render()
        else:
            self._guard(self.request_render)

    # ---------------------------------------------------------------- state
    def params(self):
        """Current attack parameters.

        Returns
        -------
        dict
            ``attack`` (with the bottom attack of a hybrid as ``"top+bottom"``), ``p``,
            ``quantile`` (0 for the ``"once"`` swapping rule), ``region``, ``mixing_rule``
            and ``swapping_rule``, read from the controls.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.shuffle import ShuffleAttackExplorer
        >>> X = np.random.default_rng(0).random((50, 3)); X[:, 2] = X[:, 2] > 0.5
        >>> w = ShuffleAttackExplorer(lambda A: A[:, :2].mean(1), X, protected=2, favoured=1,
        ...                           n_explain=5, background=False)
        >>> sorted(w.params())
        ['attack', 'mixing_rule', 'p', 'quantile', 'region', 'swapping_rule']
        """
        c = self.controls
        attack = c["attack"].value
        if c["bottom_attack"].value != _NO_HYBRID:
            attack = f"{attack}+{c['bottom_attack'].value}"
        once = c["swapping_rule"].value == "once"
        return dict(attack=attack, p=float(c["p"].value),
                    quantile=0.0 if once else float(c["quantile"].value),
                    region=float(c["region"].value), mixing_rule=c["mixing_rule"].value,
                    swapping_rule=c["swapping_rule"].value)

    @staticmethod
    def _key(params):
        return tuple(sorted(params.items()))

    def _model_kwargs(self, params):
        """Keywords of the one ShuffledModel call (also printed by :meth:`export`)."""
        return dict(protected=self.protected, favoured=self.favoured, higher_is_better=self.higher_is_better,
                    random_state=self.random_state, feature_names=self.feature_names, **params)

    def _make_model(self, params):
        return ShuffledModel(self.scorer, **self._model_kwargs(params))

    def _guard(self, fn, *args):
        try:
            return fn(*args)
        except Exception as exc:  # shown in the widget, never swallowed
            self._show_error(exc)
            self._set_status(f"error: {self.last_error}", busy=False)
            return None

    def _sync_enabled(self):
        """Disable the controls that do nothing for the chosen attack."""
        c = self.controls
        attacks = {c["attack"].value, c["bottom_attack"].value}
        c["p"].disabled = "mixing" not in attacks
        c["mixing_rule"].disabled = "mixing" not in attacks
        c["swapping_rule"].disabled = "swapping" not in attacks
        c["quantile"].disabled = "swapping" not in attacks or c["swapping_rule"].value == "once"
        c["region"].disabled = c["bottom_attack"].value == _NO_HYBRID
        c["threshold"].disabled = self.y is None

    def _on_change(self, change):
        self._sync_enabled()
        self.request_render()

    def _state(self):
        return dict(params=self.params(), threshold=float(self.controls["threshold"].value))

    @staticmethod
    def _kernel_names(params):
        """The numba kernels an attack with these parameters calls (the widget sets no max_count)."""
        names = set()

        for a in parse_attack(params["attack"]):
            if a in ("dominance", "mixing"):
                names.add("mixing_order")
            elif a == "swapping":
                names.add("swapping_order_once" if params.get("swapping_rule") == "once"
                          else "swapping_order_fast")
        return sorted(names)

    def _busy_text(self, state):

        names = self._kernel_names(state["params"])
        cold = bool(names) and kernels_cold(_kernels, names)
        return f"updating {state['params']['attack']}..." + (f" {COMPILING}" if cold else "")

    def _explained(self):
        X = self.X
        k = min(self.n_explain, len(X))
        return X.iloc[:k] if isinstance(X, pd.DataFrame) else np.asarray(X)[:k]

    def _prot_idx(self, model):
        return [self.feature_names.index(q) if isinstance(q, str) else int(q) for q in model._protected]

    def _current_attributions(self, key):
        frames = [df for (k, _), df in self.cache.items() if k == key]
        frames += [df for (k, e), df in self.partial.items() if k == key and (k, e) not in self.cache]
        return pd.concat(frames, ignore_index=True) if frames else None

    def _compute_numbers(self, state):
        """What the views show, without drawing: ``(params, threshold, model, batch, attributions,
        fairness)`` (the attack on X, the exact linear attributions, fairness before/after)."""
        params, thr = state["params"], state["threshold"]
        key = self._key(params)
        model = self._make_model(params)
        if key not in self._batches:
            self._batches[key] = model.attack_batch(self.X)
        batch = self._batches[key]
        if (key, "linear") not in self.cache:
            phi = linear_shap_values(model, self._explained(), self.background_data,
                                     feature_names=self.feature_names)
            self.cache[(key, "linear")] = pd.DataFrame.from_records(
                _summarise("linear", phi, self.feature_names, self._prot_idx(model)))
        att = self._current_attributions(key)
        fair = None
        if self.y is not None:
            fkey = (key, thr)
            if fkey not in self._fairness:
                self._fairness[fkey] = fairness_before_after(model, self.X, self.y, threshold=thr)
            fair = self._fairness[fkey]
        return params, thr, model, batch, att, fair

    def _compute_views(self, state):
        import time

        t0 = time.perf_counter()
        params, thr, model, batch, att, fair = self._compute_numbers(state)
        explainers = sorted(set(att["explainer"])) if att is not None else []  # order-free: runs finish in any order
        png_s = draw_png(lambda fig, ax: plots.plot_score_change(
            batch, ax=ax, title=f"{params['attack']}: f → f' per instance",
            threshold=thr if self.y is not None else None), (4.0, 3.6))
        shown = att.assign(explainer=att["explainer"].map(_explainer_label)) if att is not None else att
        png_a = draw_png(lambda fig, ax: plots.plot_attributions(
            shown, ax=ax, title="attribution per feature (* protected)"), (4.2, 3.6))
        png_f = (draw_png(lambda fig, ax: plots.plot_fairness(fair, ax=ax), (5.0, 3.6)) if fair is not None
                 else message_png("pass y=... to see fairness before / after", (5.0, 3.6)))
        self._extra = dict(params=params, model=model, batch=batch, attributions=att, fairness=fair,
                                    update_ms=1e3 * (time.perf_counter() - t0))
        base = dict(params, threshold=thr)
        return {"scores": {"params": dict(base), "png": png_s},
                "attributions": {"params": dict(base, explainers=explainers), "png": png_a},
                "fairness": {"params": dict(base), "png": png_f}}

    def _view_key(self, state):
        key = self._key(state["params"])
        have = tuple(sorted(str(e) for (k, e) in list(self.cache) + list(self.partial) if k == key and e != "linear"))
        partial = tuple(id(v) for (k, e), v in list(self.partial.items()) if k == key)
        return (key, state["threshold"], have, partial)

    def _on_published(self, state, views):
        self.result = self._extra
        b = self.result["batch"]
        if self.running:
            return
        fav = b.scores_before[b.favoured]
        txt = (f"{state['params']['attack']}: {b.n_events} unfair moves; favoured mean "
               f"{fav.mean():.3f} &rarr; {b.scores_after[b.favoured].mean():.3f}" if fav.size else
               f"{state['params']['attack']}: {b.n_events} unfair moves")
        expl = views["attributions"]["params"]["explainers"]
        self._status_text = txt + f" &mdash; shown: {', '.join(expl)}"
        if self._note:
            self._status_text += f" ({self._note})"
            self._note = None

    def update(self, draw=True):
        """Recompute every view for the current controls and wait for it (scripts).

        Parameters
        ----------
        draw : bool, default True
            ``True``: recompute and redraw the three views (as moving a control does) and
            wait until they are shown.  ``False``: only recompute the numbers (the attack on
            ``X``, the exact linear attributions, fairness before/after) on the calling
            thread, without drawing; ``result`` is updated, the figures keep showing the last
            drawn state until the next redraw (e.g. to time or script the core alone).

        Returns
        -------
        dict
            ``result``, the state computed (``params``, ``model``, ``batch``,
            ``attributions``, ``fairness``, ``update_ms``).

        Raises
        ------
        TypeError
            If ``draw`` is not a bool.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.shuffle import ShuffleAttackExplorer
        >>> X = np.random.default_rng(0).random((50, 3)); X[:, 2] = X[:, 2] > 0.5
        >>> w = ShuffleAttackExplorer(lambda A: A[:, :2].mean(1), X, protected=2, favoured=1,
        ...                           n_explain=5, background=False)
        >>> w.controls["p"].value = 0.5
        >>> w.update()["params"]["p"]
        0.5
        >>> w.controls["p"].unobserve_all()  # a script driving the core alone
        >>> w.controls["p"].value = 0.25
        >>> w.update(draw=False)["params"]["p"], w.snapshot()["scores"]["params"]["p"]
        (0.25, 0.5)
        """
        if not isinstance(draw, (bool, np.bool_)):
            raise TypeError(f"update(draw=...) takes True (recompute and redraw the views) or False "
                            f"(recompute the numbers only); got {draw!r}.")
        if draw:
            self.request_render()
            self.wait()
            return self.result
        import time

        self.wait()  # a redraw under way would overwrite result afterwards
        t0 = time.perf_counter()
        params, thr, model, batch, att, fair = self._compute_numbers(self._state())
        self.result = dict(params=params, model=model, batch=batch, attributions=att, fairness=fair,
                           update_ms=1e3 * (time.perf_counter() - t0))
        return self.result

    # ---------------------------------------------------------------- explainers
    def _set_running(self, running):
        c = self.controls
        c["run_shap"].disabled = running
        c["run_lime"].disabled = running
        c["stop"].disabled = not running
        c["stop"].button_style = "warning" if running else ""  # looks enabled only when it is

    def run_explainer(self, name, block=False):
        """Explain the first ``n_explain`` rows with ``"shap"``/``"lime"``/``"kernel"``.

        Cached per parameter value; runs in the background (``wait()`` joins);
        :meth:`stop` interrupts and keeps the rows explained so far.

        Parameters
        ----------
        name : {"shap", "lime", "kernel"}
            The explainer (as in :func:`fairlens.shuffle.explain`): ``shap.Explainer``
            (exact for up to 10 features, else permutation), LIME, or Kernel SHAP.
        block : bool, default False
            Wait until the explainer is done (and its view drawn) before returning.  With
            ``False`` it runs in a background thread when the widget was made with
            ``background=True`` (join it with :meth:`wait`); with ``background=False`` it is
            always done before this returns.

        Returns
        -------
        None
            The attributions appear in ``cache`` (and in the attributions view).

        Raises
        ------
        ValueError
            If ``name`` is not one of the explainers.
        TypeError
            If ``block`` is not a bool.
        RuntimeError
            If another explainer is still running (press Stop or :meth:`wait`).

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.shuffle import ShuffleAttackExplorer
        >>> X = np.random.default_rng(0).random((50, 3)); X[:, 2] = X[:, 2] > 0.5
        >>> w = ShuffleAttackExplorer(lambda A: A[:, :2].mean(1), X, protected=2, favoured=1,
        ...                           n_explain=5, background=False)
        >>> w.run_explainer("kernel")
        >>> w.wait()
        True
        >>> "kernel" in {name for _, name in w.cache}
        True
        """
        if name not in _EXPLAINERS:
            raise ValueError(f"run_explainer: name must be one of {', '.join(map(repr, _EXPLAINERS))}; "
                             f"got {name!r}.")
        if not isinstance(block, (bool, np.bool_)):
            raise TypeError(f"run_explainer(block=...) takes True (wait until done) or False; got {block!r}.")
        self._run_explainer(name)
        if block:
            self.wait()
        return None

    def _run_explainer(self, name):
        params = self.params()
        key = self._key(params)
        if (key, name) in self.cache:
            self._note = f"{name}: cached"
            self.request_render()
            return None

        self.progress.value = 0.0
        names = self._kernel_names(params)
        cold = bool(names) and kernels_cold(_kernels, names)
        self._set_status(f"running {name} on {self.n_explain} rows..." + (f" {COMPILING}" if cold else ""),
                         busy=True)

        def job(stop):
            n_done = [0]

            def cb(i, n):
                if stop.detached:
                    return False
                self.progress.value = i / n
                n_done[0] = i
                return not stop.is_set()

            model = self._make_model(params)
            Xe = self._explained()
            phi = explain(model, Xe, name, self.background_data, nsamples=self.nsamples,
                          random_state=self.random_state, feature_names=self.feature_names, callback=cb)
            df = pd.DataFrame.from_records(_summarise(name, phi, self.feature_names, self._prot_idx(model)))
            with self._committing(stop) as keep:
                if not keep:
                    return  # Stop detached this run: the widget has moved on
                if stop.is_set():
                    k = int((~np.isnan(phi).any(axis=1)).sum())
                    df["explainer"] = f"{name} (stopped: {k}/{len(Xe)})"
                    self.partial[(key, name)] = df
                    self._status_text = f"{name}: stopped after {k} of {len(Xe)} rows (kept, not cached)"
                else:
                    self.cache[(key, name)] = df
                    self.partial.pop((key, name), None)
                    self._status_text = f"{name}: done"

        self._start_job(name, job)
        return None

    def _stopped_text(self, name):
        return (f"{name}: stopped (the rows explained so far are shown when the row under way ends; "
                "nothing cached)")

    # ---------------------------------------------------------------- export
    def _export_frame(self):
        """The numbers shown: attributions per explainer and feature, fairness before/after,
        and the score change, in one tidy table (column ``view``)."""
        r = self.result or {}
        frames = []
        att = r.get("attributions")
        if att is not None:
            frames.append(att.assign(view="attributions", explainer_shown=att["explainer"].map(_explainer_label)))
        fair = r.get("fairness")
        if fair is not None:
            frames.append(fair.reset_index().assign(view="fairness"))
        b = r.get("batch")
        if b is not None:
            fav = np.asarray(b.favoured, dtype=bool)
            rows = {"view": "scores", "n_events": int(b.n_events),
                    "mean_score_before": float(np.mean(b.scores_before)),
                    "mean_score_after": float(np.mean(b.scores_after))}
            if fav.any():
                rows.update(favoured_mean_before=float(b.scores_before[fav].mean()),
                            favoured_mean_after=float(b.scores_after[fav].mean()))
            frames.append(pd.DataFrame([rows]))
        out = pd.concat(frames, ignore_index=True, sort=False) if frames else pd.DataFrame()
        cols = ["view"] + [c for c in out.columns if c != "view"]
        return out[cols] if len(out) else out

    def _export_code(self):
        st = self._state()
        kw = self._model_kwargs(st["params"])
        args = ",\n    ".join(f"{k}={v!r}" for k, v in kw.items())
        have = sorted({str(e).split(" ")[0] for (k, e) in self.cache if k == self._key(st["params"])} - {"linear"})
        lines = [
            "# Recomputes what ShuffleAttackExplorer shows for these settings, without the widget.",
            "# scorer, X (and y) are the objects you passed to the widget.",
            "import numpy as np",
            "from fairlens.shuffle import ShuffledModel, explain, fairness_before_after, linear_shap_values",
            "",
            f"model = ShuffledModel(\n    scorer,\n    {args},\n)",
            "batch = model.attack_batch(X)                      # left view: f -> f' per instance",
            "print('unfair moves:', batch.n_events)",
            f"X_explained = X[:{min(self.n_explain, len(self.X))}]",
            "exact = linear_shap_values(model, X_explained, X, "
            f"feature_names={self.feature_names!r})  # exact (linear)",
            "print('mean |exact attribution|:', np.abs(exact).mean(axis=0).round(4))",
        ]
        for e in have:
            lines.append(f"{e}_values = explain(model, X_explained, {e!r}, X, nsamples={self.nsamples!r}, "
                         f"random_state={self.random_state!r}, feature_names={self.feature_names!r})  # an estimate")
        if self.y is not None:
            lines.append(f"print(fairness_before_after(model, X, y, threshold={st['threshold']!r}))  # right view")
        return "\n".join(lines) + "\n"
