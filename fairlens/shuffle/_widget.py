"""ShuffleAttackExplorer: an ipywidgets view over :mod:`fairlens.shuffle`.

A thin view: every number it shows comes from the headless core
(:class:`ShuffledModel`, :func:`linear_shap_values`, :func:`explain`,
:func:`fairness_before_after`).
"""
from __future__ import annotations

import threading
import time

import ipywidgets as W
import numpy as np
import pandas as pd

from ._detect import _summarise, explain, fairness_before_after, linear_shap_values
from ._shuffled import ShuffledModel
from . import plots

__all__ = ["ShuffleAttackExplorer"]

_NO_HYBRID = "(no hybrid)"


class ShuffleAttackExplorer(W.VBox):
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
    n_explain : int, default 20
        Number of instances explained by SHAP / LIME (the first rows of X).
    nsamples : int, optional
        Model evaluations per instance for SHAP (permutation) / LIME.
    threshold : float, default 0.5
        Decision threshold of the fairness view.
    higher_is_better : bool, default True
    random_state : int, default 0
    use_threads : bool, default True
        Run SHAP/LIME in a background thread so the Stop button works; tests
        use ``False`` (or call :meth:`wait`).

    Attributes
    ----------
    controls : dict
        Named controls: ``attack``, ``bottom_attack``, ``p``, ``quantile``,
        ``region``, ``mixing_rule``, ``threshold``, ``run_shap``,
        ``run_lime``, ``stop``.
    result : dict
        Current state: ``params``, ``model``, ``batch`` (ShuffleBatch on X),
        ``attributions`` (tidy DataFrame: linear plus any cached SHAP/LIME for
        these parameters), ``fairness`` (DataFrame or None), ``update_ms``.
    cache : dict
        ``(params, explainer) -> tidy DataFrame`` of finished explanations.
    last_error : str or None
        Message of the last error (also shown in the widget).
    """

    def __init__(self, scorer, X, protected=None, favoured=None, *, y=None, feature_names=None,
                 n_explain=20, nsamples=None, threshold=0.5, higher_is_better=True,
                 random_state=0, use_threads=True, background=None):
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
        self.X = X
        self.background = X if background is None else background
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
        self.use_threads = use_threads
        self.cache = {}
        self.result = {}
        self.last_error = None
        self._stop = threading.Event()
        self._thread = None
        # validate once, with a clear error
        self._make_model(dict(attack="dominance", p=0.8, quantile=0.0, region=1.0,
                              mixing_rule="coin")).validate(X)

        c = {}
        c["attack"] = W.Dropdown(options=["dominance", "mixing", "swapping", "none"],
                                 value="swapping", description="attack")
        c["bottom_attack"] = W.Dropdown(options=[_NO_HYBRID, "dominance", "mixing", "swapping", "none"],
                                        value=_NO_HYBRID, description="bottom half")
        c["p"] = W.FloatSlider(value=0.8, min=0.0, max=1.0, step=0.05, description="mixing p",
                               continuous_update=False)
        c["quantile"] = W.FloatSlider(value=0.0, min=0.0, max=1.0, step=0.05, description="swap quantile",
                                      continuous_update=False)
        c["region"] = W.FloatSlider(value=1.0, min=0.05, max=1.0, step=0.05, description="top region",
                                    continuous_update=False)
        c["mixing_rule"] = W.Dropdown(options=["coin", "alg3"], value="coin", description="mixing rule")
        c["threshold"] = W.FloatSlider(value=float(threshold), min=0.0, max=1.0, step=0.01,
                                       description="threshold", continuous_update=False)
        c["run_shap"] = W.Button(description="Run SHAP", icon="play")
        c["run_lime"] = W.Button(description="Run LIME", icon="play")
        c["stop"] = W.Button(description="Stop", icon="stop", button_style="warning")
        self.controls = c
        self.progress = W.FloatProgress(value=0.0, min=0.0, max=1.0, description="explain")
        self.status = W.HTML()
        self.out_scores = W.Output()
        self.out_attr = W.Output()
        self.out_fair = W.Output()
        self.out_msg = W.Output()

        for name in ("attack", "bottom_attack", "p", "quantile", "region", "mixing_rule", "threshold"):
            c[name].observe(self._on_change, names="value")
        c["run_shap"].on_click(lambda _: self._guard(self.run_explainer, "shap"))
        c["run_lime"].on_click(lambda _: self._guard(self.run_explainer, "lime"))
        c["stop"].on_click(lambda _: self.stop())

        sliders = W.VBox([c["attack"], c["bottom_attack"], c["p"], c["quantile"], c["region"],
                          c["mixing_rule"], c["threshold"]])
        buttons = W.HBox([c["run_shap"], c["run_lime"], c["stop"], self.progress])
        views = W.HBox([self.out_scores, self.out_attr, self.out_fair])
        super().__init__([W.HBox([sliders]), buttons, self.status, views, self.out_msg])
        self._guard(self.update)

    # ---------------------------------------------------------------- state
    def params(self):
        """Current attack parameters (hashable tuple order in :meth:`_key`)."""
        c = self.controls
        attack = c["attack"].value
        if c["bottom_attack"].value != _NO_HYBRID:
            attack = f"{attack}+{c['bottom_attack'].value}"
        return dict(attack=attack, p=float(c["p"].value), quantile=float(c["quantile"].value),
                    region=float(c["region"].value), mixing_rule=c["mixing_rule"].value)

    @staticmethod
    def _key(params):
        return tuple(sorted(params.items()))

    def _make_model(self, params):
        return ShuffledModel(self.scorer, self.protected, self.favoured,
                             higher_is_better=self.higher_is_better,
                             random_state=self.random_state, feature_names=self.feature_names,
                             **params)

    def _guard(self, fn, *args):
        try:
            self.last_error = None
            return fn(*args)
        except Exception as exc:  # shown in the widget, never swallowed
            self.last_error = f"{type(exc).__name__}: {exc}"
            self.out_msg.append_stdout(f"Error: {self.last_error}\n")
            self.status.value = f"<b style='color:#c0392b'>Error:</b> {self.last_error}"
            return None

    def _on_change(self, change):
        if change.get("owner") is self.controls["threshold"] and self.result:
            self._guard(self.update_fairness)
        else:
            self._guard(self.update)

    def update_fairness(self, draw=True):
        """Recompute only the fairness view (threshold moves do not change the attack)."""
        if self.y is None:
            return None
        t0 = time.perf_counter()
        self.result["fairness"] = fairness_before_after(
            self._make_model(self.result["params"]), self.X, self.y,
            threshold=float(self.controls["threshold"].value))
        self.result["update_ms"] = 1e3 * (time.perf_counter() - t0)
        if draw:
            self.draw(views=("fairness",))
        return self.result

    def update(self, draw=True):
        """Recompute the attack, linear SHAP and fairness for the current parameters."""
        t0 = time.perf_counter()
        params = self.params()
        model = self._make_model(params)
        batch = model.attack_batch(self.X)
        key = self._key(params)
        if (key, "linear") not in self.cache:
            Xe = self._explained()
            phi = linear_shap_values(self._make_model(params), Xe, self.background,
                                     feature_names=self.feature_names)
            prot = [self.feature_names.index(q) if isinstance(q, str) else int(q)
                    for q in model._protected]
            self.cache[(key, "linear")] = pd.DataFrame.from_records(
                _summarise("linear", phi, self.feature_names, prot))
        fair = None
        if self.y is not None:
            fair = fairness_before_after(self._make_model(params), self.X, self.y,
                                         threshold=float(self.controls["threshold"].value))
        self.result = dict(params=params, model=model, batch=batch,
                           attributions=self._current_attributions(key), fairness=fair)
        self.result["update_ms"] = 1e3 * (time.perf_counter() - t0)
        self.status.value = (f"{params['attack']}: {batch.n_events} unfair moves; favoured mean "
                             f"{batch.scores_before[batch.favoured].mean():.3f} &rarr; "
                             f"{batch.scores_after[batch.favoured].mean():.3f}")
        if draw:
            self.draw()
        return self.result

    def _explained(self):
        X = self.X
        k = min(self.n_explain, len(X))
        return X.iloc[:k] if isinstance(X, pd.DataFrame) else np.asarray(X)[:k]

    def _current_attributions(self, key):
        frames = [df for (k, _), df in self.cache.items() if k == key]
        return pd.concat(frames, ignore_index=True) if frames else None

    def draw(self, views=("scores", "attributions", "fairness")):
        """Redraw the views (``scores``, ``attributions``, ``fairness``) from :attr:`result`."""
        import matplotlib.pyplot as plt
        from IPython.display import display

        def show(fig):
            display(fig)
            plt.close(fig)

        r = self.result
        if "scores" in views:
            self.out_scores.clear_output(wait=True)
            with self.out_scores:
                fig, ax = plt.subplots(figsize=(4, 3.5), dpi=80)
                plots.plot_score_change(r["batch"], ax=ax, title="f → f' per instance")
                show(fig)
        if "attributions" in views:
            self.out_attr.clear_output(wait=True)
            with self.out_attr:
                fig, ax = plt.subplots(figsize=(5, 3.5), dpi=80)
                plots.plot_attributions(r["attributions"], ax=ax)
                show(fig)
        if "fairness" in views:
            self.out_fair.clear_output(wait=True)
            with self.out_fair:
                if r["fairness"] is not None:
                    fig, ax = plt.subplots(figsize=(4.5, 3.5), dpi=80)
                    plots.plot_fairness(r["fairness"], ax=ax)
                    show(fig)
                else:
                    print("pass y=... to see fairness before/after")

    # ---------------------------------------------------------------- explainers
    def run_explainer(self, name, block=None):
        """Explain the first ``n_explain`` rows with ``"shap"``/``"lime"``/``"kernel"``.

        Cached per parameter value; progress shown; :meth:`stop` interrupts.
        """
        params = self.params()
        key = self._key(params)
        if (key, name) in self.cache:
            res = self.update()
            self.status.value += f" &mdash; {name}: cached"
            return res
        if self._thread is not None and self._thread.is_alive():
            raise RuntimeError("an explanation is already running; press Stop or wait.")
        self._stop.clear()
        self.progress.value = 0.0
        block = (not self.use_threads) if block is None else block

        def job():
            def cb(i, n):
                self.progress.value = i / n
                return not self._stop.is_set()

            model = self._make_model(params)
            phi = explain(model, self._explained(), name, self.background, nsamples=self.nsamples,
                          random_state=self.random_state, feature_names=self.feature_names,
                          callback=cb)
            if self._stop.is_set():
                self.status.value = f"{name}: stopped (not cached)"
                return
            prot = [self.feature_names.index(q) if isinstance(q, str) else int(q)
                    for q in model._protected]
            self.cache[(key, name)] = pd.DataFrame.from_records(
                _summarise(name, phi, self.feature_names, prot))
            if self.params() == params:
                self.update()

        if block:
            return job()
        self._thread = threading.Thread(target=lambda: self._guard(job), daemon=True)
        self._thread.start()
        return None

    def stop(self):
        """Ask a running explanation to stop after the current instance."""
        self._stop.set()

    def wait(self, timeout=None):
        """Wait for a background explanation to finish (for scripts and tests)."""
        if self._thread is not None:
            self._thread.join(timeout)
