"""``MAFTSession``: run and watch the fairness-testing searches in Jupyter.

A thin view over :mod:`fairlens.maft`: every number it shows comes from the
same ``MAFT/EIDIG/ADF/AEQUITAS(...).run(...)`` calls a script would make.  The
search runs as a background job (progress bars and the live timeline update
from the engine's per-step callback); *Stop* sets the engine's stop event and
keeps what was found.

Drawing: figures are rendered to PNG with Agg (pyplot-free ``Figure``) and set
as ``ipywidgets.Image`` values by one latest-wins render worker; setting a
widget value only sends a comm message, which is safe from any thread, so a
finished run always shows up (see :mod:`fairlens._widgets`). One tab per
method shows its projection and a compact x / x' table.
"""
from __future__ import annotations

import html
import time

import ipywidgets as W
import numpy as np

from .._base import strict_keywords
from .._widgets import COMPILING, FairlensWidget, draw_png, kernels_cold, labelled, message_png, resolve_background
from . import _kernels, plots
from ._search import warmup
from ._searchers import ADF, AEQUITAS, EIDIG, MAFT

__all__ = ["MAFTSession"]

_METHODS = {"MAFT": MAFT, "EIDIG": EIDIG, "ADF": ADF, "AEQUITAS": AEQUITAS}
# The largest budgets the controls offer: the papers' 1,000 x 1,000 fit, and so does every
# combination of the controls' maxima within the searches' memory limit on the census data
# (2,000 seeds x (50 + 1,000) steps; a larger request is refused by the search, and the
# widget keeps its last result). tests/contract/widgets sweeps each control's min and max.
_MAX_SEEDS = 2000
_MAX_LOCAL = 1000
_FIG = (4.0, 3.4)  # inches of 100 CSS px: timeline and projection side by side in a 1280 px window


def _run_search(cls, model, data, protected, config, budget, step, stop):
    """``cls(model, data, ...).run(...)`` through the public API, with the live step callback:
    configuration and budgets (``n_seeds``, ``n_local``, ``random_state``) go to ``__init__``."""
    search = cls(model, data, protected=protected, **config, **budget)
    return search.run(stop=stop, callback=step)


def _pairs_html(res, max_rows=6):
    """Compact x / x' view: one column per pair, one row per attribute; the changed
    attribute(s) highlighted as ``x -> x'`` (a few hundred pixels wide whatever the data)."""
    if res.n_instances == 0:
        return "<i>no discriminatory instance found</i>"
    fr = res.to_frame(max_rows=max_rows)
    feats = [c for (g, c) in fr.columns if g == "x"]

    def fmt(v):
        return f"{v:.3g}" if isinstance(v, (float, np.floating)) else str(v)

    td = "style='padding:1px 6px;border-bottom:1px solid #eee'"
    head = "".join(f"<th {td}>pair {k + 1}</th>" for k in range(len(fr)))
    rows = []
    for f in feats:
        cells = []
        for k in range(len(fr)):
            fa, fb = fmt(fr[("x", f)].iloc[k]), fmt(fr[("x'", f)].iloc[k])
            if fa != fb:
                cells.append(f"<td class='fl-changed' style='background:#ffe08a;font-weight:bold;padding:1px 6px'>"
                             f"{html.escape(fa)} &rarr; {html.escape(fb)}</td>")
            else:
                cells.append(f"<td {td}>{html.escape(fa)}</td>")
        rows.append(f"<tr><th {td} style='text-align:left'>{html.escape(str(f))}</th>{''.join(cells)}</tr>")
    px, pxx = fr[("", "p(x)")].to_numpy(), fr[("", "p(x')")].to_numpy()
    probs = "".join(f"<td {td}>{px[k]:.2f} / {pxx[k]:.2f}</td>" for k in range(len(fr)))
    rows.append(f"<tr><th {td} style='text-align:left'>p(x) / p(x')</th>{probs}</tr>")
    return ("<div class='fl-small' style='overflow:auto;max-width:100%;max-height:380px'>"
            f"<b>first {len(fr)} of {res.n_instances} pairs</b>: highlighted cells are the protected "
            "attribute(s) changed from x to x'; every other attribute is equal"
            f"<table class='fl-pairs' style='border-collapse:collapse'><tr><th></th>{head}</tr>"
            + "".join(rows) + "</table></div>")


class MAFTSession(FairlensWidget):
    """Interactive MAFT session.

    Parameters
    ----------
    model : estimator or callable
        The model under test (EIDIG/ADF additionally need an sklearn MLPClassifier).
    dataset : fairlens Dataset
        Benchmark-encoded dataset (seed pool, bounds, readable decoding).
    protected : list of str, optional
        Protected attributes (default ``dataset.protected``).
    methods : tuple of str, default ("MAFT",)
        Initially selected methods; several are run one after the other and
        compared on one timeline, each with its own tab.
    n_seeds, n_local, h, max_iter, random_state
        Initial control values.
    live_plot_interval : float
        Seconds between live timeline redraws.
    background : bool, default True
        Run the searches and redraws in background threads (Stop works);
        ``False`` runs synchronously.

    Attributes
    ----------
    controls : dict
        Named controls: ``methods``, ``h``, ``n_seeds``, ``n_local``,
        ``max_iter``, ``random_state``, ``start``, ``stop``,
        ``progress_global``, ``progress_local``, ``status``, ``projector``, ``export``.
    results : dict
        method -> :class:`FairnessTestResult` of the last session.
    result : FairnessTestResult or None
        Result of the last method run.
    error : str or None
        Last error message (also shown in the widget).

    Raises
    ------
    TypeError
        For a bad ``background`` (``use_threads=``, its old name, names ``background=``).

    Notes
    -----
    Test protocol: :meth:`wait`, :meth:`snapshot` (views ``timeline``,
    ``projection:<method>``, ``pairs:<method>``). :meth:`export` returns the figures,
    the numbers and a code cell reproducing the current settings.

    Examples
    --------
    >>> from fairlens.maft import MAFTSession            # doctest: +SKIP
    >>> s = MAFTSession(model, census, protected=["sex"], n_seeds=20, n_local=20)  # doctest: +SKIP
    >>> s.start(); s.wait(); s.results["MAFT"].n_instances  # doctest: +SKIP
    """

    _export_name = "maft-session"

    @strict_keywords(renamed={"use_threads": "background"})
    def __init__(self, model, dataset, protected=None, *, methods=("MAFT",), n_seeds=100, n_local=100,
                 h=1.0, max_iter=10, random_state=0, live_plot_interval=1.0, background=None):
        threads = resolve_background(background, "MAFTSession")
        self.model = model
        self.dataset = dataset
        self.protected = protected
        self.results = {}
        self.result = None
        self.live = {}
        self._cache = {}
        self._searches = {}
        self._proj = {}
        self._run_id = 0
        self._searching = False
        self._run_params = {}
        self._live_interval = float(live_plot_interval)
        self._last_draw = 0.0
        wide = W.Layout(width="300px")
        c = {
            "methods": labelled(W.SelectMultiple(options=list(_METHODS), value=tuple(methods),
                                                 description="methods", rows=4, layout=W.Layout(width="220px")),
                                "Searches to run one after the other (ctrl-click for several)"),
            "h": labelled(W.FloatLogSlider(value=h, base=10, min=-10, max=1, step=1,
                                           description="h (MAFT step)", continuous_update=False, layout=wide),
                          "MAFT only: finite-difference step of the zero-order gradient estimate"),
            "n_seeds": labelled(W.BoundedIntText(value=n_seeds, min=1, max=_MAX_SEEDS, description="seeds",
                                                 layout=wide), "Seeds of the global phase"),
            "n_local": labelled(W.BoundedIntText(value=n_local, min=0, max=_MAX_LOCAL,
                                                 description="local iterations", layout=wide),
                                "Local-phase perturbations per global instance"),
            "max_iter": labelled(W.IntSlider(value=max_iter, min=1, max=50, description="max_iter",
                                             continuous_update=False, layout=wide),
                                 "Global-phase iterations per seed"),
            "random_state": labelled(W.BoundedIntText(value=random_state, min=0, max=2**32 - 1,
                                                    description="random_state",
                                                    layout=wide),
                                     "Seed of the search (same seed, same result)"),
            "start": labelled(W.Button(description="Start", button_style="success", icon="play"),
                              "Run the selected searches (clears the previous run's views)"),
            "stop": labelled(W.Button(description="Stop", icon="stop", disabled=True),
                             "Stop the running search; what was found is kept"),
            "progress_global": labelled(W.IntProgress(value=0, min=0, max=1, description="global"),
                                        "Global phase: seeds done"),
            "progress_local": labelled(W.IntProgress(value=0, min=0, max=1, description="local"),
                                       "Local phase: iterations done"),
        }
        views = ["timeline"] + [f"{k}:{m}" for m in _METHODS for k in ("projection", "pairs")]
        self._init_protocol(views, background=threads,
                            images=["timeline"] + [f"projection:{m}" for m in _METHODS])
        c["status"] = self.status_html
        c.update(self._common)
        self.controls = c
        self.htmls = {f"pairs:{m}": W.HTML() for m in _METHODS}
        self.out_error = self.error_html
        c["start"].on_click(lambda _: self.start())
        c["stop"].on_click(lambda _: self.stop())
        c["methods"].observe(lambda _: self._sync_enabled(), names="value")
        # the timeline and the selected method's projection side by side (natural size), the
        # selected method's pairs table below them at the full width of the column
        self.tabs = W.Tab(children=[self.images[f"projection:{m}"] for m in _METHODS],
                          layout=W.Layout(flex="0 1 auto", min_width="0"))
        for k, m in enumerate(_METHODS):
            self.tabs.set_title(k, m)
        for m in _METHODS:
            self.htmls[f"pairs:{m}"].layout = W.Layout(max_width="100%")
        self.pairs = W.Stack(children=[self.htmls[f"pairs:{m}"] for m in _METHODS], selected_index=0)
        W.link((self.tabs, "selected_index"), (self.pairs, "selected_index"))
        params = W.HBox([c["methods"], W.VBox([c["h"], c["n_seeds"], c["n_local"]]),
                         W.VBox([c["max_iter"], c["random_state"], W.HBox([c["start"], c["stop"]])]),
                         W.VBox([c["progress_global"], c["progress_local"], self._toolbar()])],
                        layout=W.Layout(flex_flow="row wrap"))
        super().__init__([self._style_html, params, self.status_html, self.error_html,
                          W.HBox([self.images["timeline"], self.tabs],
                                 layout=W.Layout(flex_flow="row wrap", align_items="flex-start")),
                          self.pairs, self.export_html])
        self.add_class("fl-widget")
        self._sync_enabled()
        self.request_render()

    # ------------------------------------------------------------------ state
    @property
    def error(self):
        return self.last_error

    def _sync_enabled(self):
        self.controls["h"].disabled = "MAFT" not in self.controls["methods"].value or self._searching

    def _key(self, method):
        p = self._run_params
        h = p["h"] if method == "MAFT" else None
        return (method, h, p["n_seeds"], p["n_local"], p["max_iter"], p["random_state"])

    def _config(self, method):
        p = self._run_params
        kw = {"max_iter": p["max_iter"]}
        if method == "MAFT":
            kw["h"] = p["h"]
        budget = {"n_seeds": p["n_seeds"], "n_local": p["n_local"], "random_state": p["random_state"]}
        return kw, budget

    def _state(self):
        return dict(run=self._run_id, params=dict(self._run_params), tick=time.perf_counter())

    # ------------------------------------------------------------------ actions
    def _set_running(self, running):
        c = self.controls
        for k in ("start", "methods", "n_seeds", "n_local", "max_iter", "random_state"):
            c[k].disabled = running
        c["stop"].disabled = not running
        c["stop"].button_style = "danger" if running else ""  # looks enabled only when it is
        c["h"].disabled = running or "MAFT" not in c["methods"].value

    def start(self):
        """Start the selected methods in the background (no-op if running).

        The methods selected in the ``methods`` control run one after the other with the
        current control values; :meth:`wait` joins them, ``results`` holds one
        :class:`FairnessTestResult` per method.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.maft import MAFTSession
        >>> data = load_german_credit()
        >>> k, a = data.index_of("duration"), data.index_of("age")
        >>> def model(X):  # probability of the favourable outcome
        ...     return 1 / (1 + np.exp(-(0.1 * (24 - X[:, k]) + 0.05 * X[:, a])))
        >>> s = MAFTSession(model, data, protected=["age"], n_seeds=10, n_local=10,
        ...                 background=False)
        >>> s.start()
        >>> s.wait()
        True
        >>> sorted(s.results), s.error
        (['MAFT'], None)
        >>> s.results["MAFT"].n_instances > 0  # discriminatory instances found
        True
        """
        if self.running:
            return
        c = self.controls
        methods = list(c["methods"].value)
        if not methods:
            self._show_error("select at least one method")
            return
        self._clear_error()
        # what the views show now: restored if the new run fails (an error keeps the last result)
        self._previous = (self._run_id, dict(self._run_params), dict(self.results), self.result)
        self._run_id += 1
        self._run_params = dict(methods=methods, h=float(c["h"].value), n_seeds=int(c["n_seeds"].value),
                                n_local=int(c["n_local"].value), max_iter=int(c["max_iter"].value),
                                random_state=int(c["random_state"].value))
        self.results = {}
        self.live = {}
        self.result = None

        cold = kernels_cold(_kernels)
        self._set_status("preparing..." + (f" {COMPILING}" if cold else ""), busy=True)
        self._start_job("search", self._work)

    def _work(self, stop):

        self._searching = True
        try:
            self._search_all(stop, warmup)
        except Exception:
            # the run was refused or failed: the views go back to the last result (the error
            # itself is shown by the job machinery, under the status line)
            with self._committing(stop) as keep:
                if keep and not self.results and getattr(self, "_previous", None) is not None:
                    self._run_id, self._run_params, self.results, self.result = self._previous
                    self.live = {}
            raise
        finally:
            self._searching = False

    def _search_all(self, stop, warmup):
        warmup()
        p = self._run_params
        for m in p["methods"]:
            if stop.is_set():
                break
            key = self._key(m)
            if key in self._cache:
                res = self._cache[key]
            else:
                self.live[m] = [(0.0, 0)]
                self._set_status(f"running <b>{m}</b>...", busy=True)
                config, budget = self._config(m)
                res = _run_search(_METHODS[m], self.model, self.dataset, self.protected, config, budget,
                                  lambda st, m=m: self._on_step(m, st, stop), stop)
                if not res.stopped:
                    self._cache[key] = res
            with self._committing(stop) as keep:
                if not keep:
                    return
                self.results[m] = res
                self.result = res
            self.request_render()
        with self._committing(stop) as keep:
            if keep:
                done = ", ".join(f"{k}: {v.n_instances} ({v.instances_per_second:.0f}/s)"
                                 for k, v in self.results.items())
                self._status_text = ("stopped - " if stop.is_set() else "done - ") + (done or "nothing run")

    def _on_step(self, method, st, stop):
        if stop.detached:
            return
        c = self.controls
        # "blocks": the search runs its seed blocks on several workers (n_jobs from a
        # joblib.parallel_config context); counts are known only at the end
        bar = c["progress_global"] if st["phase"] in ("global", "blocks") else c["progress_local"]
        bar.max = max(1, int(st["total"]))
        bar.value = min(int(st["step"]), bar.max)
        if st["phase"] != "local":
            c["progress_local"].value = 0
        if st["n_total"] is None:
            self._set_status(f"<b>{method}</b> seed blocks {st['step']}/{st['total']} done", busy=True)
            return
        self.live.setdefault(method, []).append((st["elapsed"], st["n_total"]))
        if stop.is_set():
            self._set_status("stopping...", busy=True)
        else:
            self._set_status(f"<b>{method}</b> {st['phase']} {st['step']}/{st['total']}: "
                             f"{st['n_total']} instances", busy=True)
        now = time.perf_counter()
        if now - self._last_draw > self._live_interval:
            self._last_draw = now
            self.request_render()

    # ------------------------------------------------------------------ views
    def _compute_views(self, state):
        run, p = state["run"], state["params"]
        results = dict(self.results)
        series = {k: v.timeline for k, v in results.items()}
        for k, v in list(self.live.items()):
            if k not in series and len(v) > 1:
                series[k] = np.asarray(v, dtype=float)
        if series:
            png_t = draw_png(lambda fig, ax: plots.plot_timeline(series, ax=ax), _FIG)
        else:
            png_t = message_png("press Start to run the selected searches", _FIG)
        views = {"timeline": {"params": dict(p, run=run, methods_shown=sorted(series)), "png": png_t}}
        for m in _METHODS:
            res = results.get(m)
            vp = dict(p, run=run, method=m)
            if res is None:
                running = run and m in p.get("methods", ()) and self._searching
                msg = f"{m}: running..." if running else f"{m}: not run in this session"
                views[f"projection:{m}"] = {"params": dict(vp, shown=False), "png": message_png(msg, _FIG)}
                views[f"pairs:{m}"] = {"params": dict(vp, shown=False), "html": f"<i>{html.escape(msg)}</i>"}
                continue
            vp.update(shown=True, n_instances=int(res.n_instances), stopped=bool(res.stopped),
                      model_input=res.params["model_input"])
            pk = (run, m, id(res))
            if pk not in self._proj:
                def draw(fig, ax, res=res):
                    plots.plot_projection(res.seeds, res.instances, ax=ax, pool=getattr(self.dataset, "X", None))
                    ax.set_title(f"{res.method}: seeds and instances (PCA)")
                self._proj[pk] = draw_png(draw, _FIG)
            views[f"projection:{m}"] = {"params": dict(vp), "png": self._proj[pk]}
            views[f"pairs:{m}"] = {"params": dict(vp), "html": _pairs_html(res)}
        return views

    def _on_published(self, state, views):
        for k, m in enumerate(_METHODS):
            r = self.results.get(m)
            self.tabs.set_title(k, m if r is None else f"{m} ({r.n_instances})")
        if self.result is not None:
            self.tabs.selected_index = list(_METHODS).index(self.result.method) \
                if self.result.method in _METHODS else self.tabs.selected_index

    def _stopped_text(self, name):
        done = ", ".join(f"{k}: {v.n_instances}" for k, v in self.results.items())
        return "stopped - " + (done + "; what the search under way found is added when it ends" if done else
                               "nothing found yet; what the search under way found is shown when it ends")

    # ------------------------------------------------------------------ export
    def _export_frame(self):
        """One row per method run in this session (its summary)."""
        import pandas as pd

        rows = []
        for m, r in self.results.items():
            s = r.summary()
            s = s if isinstance(s, pd.DataFrame) else pd.DataFrame([s])
            rows.append(s.assign(method=m, n_instances=int(r.n_instances)).reset_index(drop=True))
        if not rows:
            return pd.DataFrame({"method": []})
        out = pd.concat(rows, ignore_index=True, sort=False)
        return out[["method"] + [c for c in out.columns if c != "method"]]

    def _export_code(self):
        c = self.controls
        p = self._run_params or dict(methods=list(c["methods"].value), h=float(c["h"].value),
                                     n_seeds=int(c["n_seeds"].value), n_local=int(c["n_local"].value),
                                     max_iter=int(c["max_iter"].value), random_state=int(c["random_state"].value))
        saved, self._run_params = self._run_params, p
        try:
            lines = ["# Recomputes what MAFTSession shows for these settings, without the widget.",
                     "# model and data are the objects you passed to the widget.",
                     f"from fairlens.maft import {', '.join(p['methods'])}", "", "results = {}"]
            for m in p["methods"]:
                config, budget = self._config(m)
                ia = "".join(f", {k}={v!r}" for k, v in {**config, **budget}.items())
                lines.append(f"results[{m!r}] = {m}(model, data, protected={self.protected!r}{ia}).run()")
            lines.append("for name, res in results.items():")
            lines.append("    print(name, res.n_instances, 'discriminatory instances')")
        finally:
            self._run_params = saved
        return "\n".join(lines) + "\n"
