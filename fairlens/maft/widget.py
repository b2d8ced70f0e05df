"""``MAFTSession``: run and watch the fairness-testing searches in Jupyter.

A thin view over :mod:`fairlens.maft`: every number it shows comes from the
same ``MAFT/EIDIG/ADF/AEQUITAS(...).run(...)`` calls a script would make.  The
search runs in a background thread (progress bars and the live plot update from
the engine's per-step callback); *Stop* sets the engine's stop event and keeps
what was found.
"""
from __future__ import annotations

import threading
import time
import traceback

import ipywidgets as W
import numpy as np

from . import plots
from ._search import ADF, AEQUITAS, EIDIG, MAFT

__all__ = ["MAFTSession"]

_METHODS = {"MAFT": MAFT, "EIDIG": EIDIG, "ADF": ADF, "AEQUITAS": AEQUITAS}


def _figure(figsize=(5, 3.3)):
    # pyplot-free figures: safe to build in the background thread
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    return fig, fig.subplots()


def _fig_to_output(out, fig):
    # build the display message ourselves: works headless and from a thread
    import base64
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, bbox_inches="tight")
    png = base64.b64encode(buf.getvalue()).decode("ascii")
    out.outputs = (
        {"output_type": "display_data", "data": {"image/png": png, "text/plain": "<Figure>"}, "metadata": {}},
    )


def _frame_to_output(out, frame):
    out.outputs = (
        {
            "output_type": "display_data",
            "data": {"text/html": frame.to_html(), "text/plain": frame.to_string()},
            "metadata": {},
        },
    )


class MAFTSession(W.VBox):
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
        compared on one timeline.
    n_seeds, n_local, h, max_iter, random_state
        Initial control values.

    Attributes
    ----------
    controls : dict
        Named controls: ``methods``, ``h``, ``n_seeds``, ``n_local``,
        ``max_iter``, ``random_state``, ``start``, ``stop``,
        ``progress_global``, ``progress_local``, ``status``.
    results : dict
        method -> :class:`FairnessTestResult` of the last session.
    result : FairnessTestResult or None
        Result of the last method run.
    error : str or None
        Last error message (also shown in the widget).
    """

    def __init__(
        self,
        model,
        dataset,
        protected=None,
        *,
        methods=("MAFT",),
        n_seeds=100,
        n_local=100,
        h=1.0,
        max_iter=10,
        random_state=0,
        live_plot_interval=1.0,
    ):
        self.model = model
        self.dataset = dataset
        self.protected = protected
        self.results = {}
        self.result = None
        self.error = None
        self.live = {}
        self._cache = {}
        self._searches = {}
        self._thread = None
        self._stop = threading.Event()
        self._live_interval = float(live_plot_interval)
        self._last_draw = 0.0
        c = {
            "methods": W.SelectMultiple(options=list(_METHODS), value=tuple(methods), description="methods", rows=4),
            "h": W.FloatLogSlider(value=h, base=10, min=-10, max=1, step=1, description="h", continuous_update=False),
            "n_seeds": W.BoundedIntText(value=n_seeds, min=1, max=100000, description="seeds"),
            "n_local": W.BoundedIntText(value=n_local, min=0, max=100000, description="local iters"),
            "max_iter": W.IntSlider(value=max_iter, min=1, max=50, description="max_iter", continuous_update=False),
            "random_state": W.IntText(value=random_state, description="random_state"),
            "start": W.Button(description="Start", button_style="success", icon="play"),
            "stop": W.Button(description="Stop", button_style="danger", icon="stop", disabled=True),
            "progress_global": W.IntProgress(value=0, min=0, max=1, description="global"),
            "progress_local": W.IntProgress(value=0, min=0, max=1, description="local"),
            "status": W.HTML(value="ready"),
        }
        self.controls = c
        self.out_timeline = W.Output()
        self.out_projection = W.Output()
        self.out_table = W.Output()
        self.out_error = W.Output()
        c["start"].on_click(lambda _: self.start())
        c["stop"].on_click(lambda _: self.stop())
        params = W.VBox([c["methods"], c["h"], c["n_seeds"], c["n_local"], c["max_iter"], c["random_state"]])
        run = W.VBox([W.HBox([c["start"], c["stop"]]), c["progress_global"], c["progress_local"], c["status"]])
        views = W.HBox([self.out_timeline, self.out_projection])
        super().__init__([W.HBox([params, run]), views, self.out_table, self.out_error])

    # ------------------------------------------------------------------ state
    @property
    def running(self):
        return self._thread is not None and self._thread.is_alive()

    def _key(self, method):
        c = self.controls
        h = c["h"].value if method == "MAFT" else None
        return (method, h, c["n_seeds"].value, c["n_local"].value, c["max_iter"].value, c["random_state"].value)

    def _search(self, method):
        c = self.controls
        key = (method, c["h"].value if method == "MAFT" else None, c["max_iter"].value)
        if key not in self._searches:
            kw = {"max_iter": c["max_iter"].value}
            if method == "MAFT":
                kw["h"] = c["h"].value
            self._searches[key] = _METHODS[method](self.model, self.dataset, self.protected, **kw)
        return self._searches[key]

    # ------------------------------------------------------------------ actions
    def start(self):
        """Start the selected methods in a background thread (no-op if running)."""
        if self.running:
            return
        methods = list(self.controls["methods"].value)
        if not methods:
            self._show_error("select at least one method")
            return
        self.error = None
        self.out_error.outputs = ()
        self._stop.clear()
        self.results = {}
        self.live = {}
        self.controls["start"].disabled = True
        self.controls["stop"].disabled = False
        self._thread = threading.Thread(target=self._work, args=(methods,), daemon=True)
        self._thread.start()

    def stop(self):
        """Ask the running search to stop; what was found is kept."""
        self._stop.set()

    def wait(self, timeout=None):
        """Block until the background run finishes (for scripts and tests)."""
        if self._thread is not None:
            self._thread.join(timeout)
        return not self.running

    # ------------------------------------------------------------------ worker
    def _work(self, methods):
        c = self.controls
        try:
            from ._search import warmup

            c["status"].value = "preparing (numba kernels)..."
            warmup()
            for m in methods:
                key = self._key(m)
                if key in self._cache and not self._cache[key].stopped:
                    res = self._cache[key]
                else:
                    search = self._search(m)
                    self.live[m] = [(0.0, 0)]
                    c["status"].value = f"running <b>{m}</b>..."
                    res = search.run(
                        n_seeds=c["n_seeds"].value,
                        n_local=c["n_local"].value,
                        random_state=c["random_state"].value,
                        callback=lambda st, m=m: self._on_step(m, st),
                        stop=self._stop,
                    )
                    if not res.stopped:
                        self._cache[key] = res
                self.results[m] = res
                self.result = res
                self._render()
                if self._stop.is_set():
                    break
            done = ", ".join(f"{k}: {v.n_instances} ({v.instances_per_second:.0f}/s)" for k, v in self.results.items())
            c["status"].value = ("stopped - " if self._stop.is_set() else "done - ") + done
        except Exception as exc:  # shown in the widget, never swallowed
            self._show_error(f"{type(exc).__name__}: {exc}", traceback.format_exc())
        finally:
            c["start"].disabled = False
            c["stop"].disabled = True

    def _on_step(self, method, st):
        c = self.controls
        bar = c["progress_global"] if st["phase"] == "global" else c["progress_local"]
        bar.max = max(1, int(st["total"]))
        bar.value = min(int(st["step"]), bar.max)
        if st["phase"] == "global":
            c["progress_local"].value = 0
        self.live.setdefault(method, []).append((st["elapsed"], st["n_total"]))
        c["status"].value = f"<b>{method}</b> {st['phase']} {st['step']}/{st['total']}: {st['n_total']} instances"
        now = time.perf_counter()
        if now - self._last_draw > self._live_interval:
            self._last_draw = now
            self._draw_timeline()

    def _show_error(self, msg, tb=None):
        self.error = msg
        self.controls["status"].value = f"<span style='color:red'>error: {msg}</span>"
        self.out_error.outputs = (
            {"output_type": "stream", "name": "stderr", "text": msg + "\n" + (tb or "")},
        )

    # ------------------------------------------------------------------ views
    def _draw_timeline(self):
        fig, ax = _figure()
        series = {k: v.timeline for k, v in self.results.items()}
        for k, v in self.live.items():
            if k not in series and len(v) > 1:
                series[k] = np.asarray(v, dtype=float)
        plots.plot_timeline(series, ax=ax)
        fig.tight_layout()
        _fig_to_output(self.out_timeline, fig)

    def _render(self):
        self._draw_timeline()
        res = self.result
        if res is None:
            return
        fig, ax = _figure()
        plots.plot_projection(res.seeds, res.instances, ax=ax, pool=getattr(self.dataset, "X", None))
        ax.set_title(f"{res.method}: seeds and instances (PCA)")
        fig.tight_layout()
        _fig_to_output(self.out_projection, fig)
        _frame_to_output(self.out_table, res.to_frame(max_rows=10))
