"""Shared machinery of the four fairlens widgets (not public API).

How the widgets draw, and why
-----------------------------
Every figure is a :class:`matplotlib.figure.Figure` created directly (never
through ``pyplot``), rendered to PNG bytes with the Agg canvas and shown by
setting ``ipywidgets.Image.value``; text views are ``ipywidgets.HTML.value``.
Setting a widget trait only sends a comm message, which ipykernel allows from
any thread, so a result computed in a background thread always reaches the
page (``Output``'s context manager does not capture output of other threads,
which is why the old widgets sometimes never showed a finished SHAP run).
The same bytes are what :meth:`WidgetProtocol.snapshot` returns, so headless
tests see exactly what the browser sees.

Consistency: each control change bumps a *generation* counter and hands the
current control values to one render worker (latest request wins). The worker
computes **all** views of that state, then swaps them in together, and only if
no newer generation was requested meanwhile; older results are dropped. Long
actions (SHAP, LIME, MAFT, re-estimation, mitigation, summaries) run as *jobs*
in their own thread with a stop event; when a job ends it requests a redraw,
so its result always shows up. ``wait()`` returns when no job and no redraw is
pending; ``snapshot()`` reports what each view shows and its last PNG.
"""
from __future__ import annotations

import html
import io
import json
import threading
import time

import ipywidgets as W

__all__ = ["WidgetProtocol", "new_figure", "figure_png", "message_png", "kernels_cold", "LECTURE_RC",
           "labelled", "COMPILING"]

COMPILING = "compiling kernels (first run only)"

# legible when projected: >= 100 dpi, larger fonts
LECTURE_RC = {
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "legend.fontsize": 10,
    "figure.dpi": 100,
    "savefig.dpi": 100,
}
# rcParams are process-global: render one figure at a time
_MPL_LOCK = threading.RLock()


def new_figure(figsize=(5, 3.6), dpi=100, nrows=1, ncols=1, **kw):
    """A pyplot-free Figure (safe to build in a thread) and its axes."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, dpi=max(100, dpi))
    axes = fig.subplots(nrows, ncols, **kw)
    return fig, axes


def figure_png(fig):
    """PNG bytes of a Figure through the Agg canvas (thread-safe, deterministic)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi, metadata={"Software": None})
    return buf.getvalue()


def draw_png(fn, figsize=(5, 3.6), nrows=1, ncols=1, **kw):
    """Call ``fn(fig, axes)`` on a fresh lecture-styled figure and return its PNG."""
    import matplotlib

    with _MPL_LOCK, matplotlib.rc_context(LECTURE_RC):
        fig, axes = new_figure(figsize, nrows=nrows, ncols=ncols, **kw)
        fn(fig, axes)
        try:
            fig.tight_layout()
        except Exception:  # layout is cosmetic
            pass
        return figure_png(fig)


def message_png(text, figsize=(5, 3.6)):
    """A figure that says ``text`` (empty states are never a blank image)."""
    import textwrap

    def fn(fig, ax):
        ax.set_axis_off()
        ax.text(0.5, 0.5, "\n".join(textwrap.wrap(text, 40)), ha="center", va="center", fontsize=13,
                color="0.3", transform=ax.transAxes)

    return draw_png(fn, figsize)


def kernels_cold(module, names=None):
    """True if some numba kernel of ``module`` has no compiled signature yet."""
    for n in names or getattr(module, "__all__", ()):
        k = getattr(module, n, None)
        sig = getattr(k, "signatures", None)
        if sig is not None and len(sig) == 0:
            return True
    return False


def labelled(widget, tooltip):
    """Full labels (no truncation) and a one-line tooltip on a control."""
    if hasattr(widget, "style") and "description_width" in getattr(widget.style, "keys", []):
        widget.style.description_width = "initial"
    widget.tooltip = tooltip
    return widget


class WidgetProtocol:
    """Mixin: generations, one latest-wins render worker, jobs with stop, wait/snapshot.

    Subclasses call :meth:`_init_protocol`, define :meth:`_state` (the control
    values, read on the calling thread) and :meth:`_compute_views` (``state ->
    {view: {"params": dict, "png": bytes or None, "html": str or None}}``,
    run on the worker), and optionally :meth:`_on_published`,
    :meth:`_set_running` and :meth:`_busy_text`.
    """

    # ------------------------------------------------------------ set-up
    def _init_protocol(self, views, use_threads=True, images=None):
        self.use_threads = bool(use_threads)
        self._cond = threading.Condition(threading.RLock())
        self._gen = 0
        self._published_gen = 0
        self._render_req = None
        self._worker = None
        self._jobs = {}
        self._stop_event = threading.Event()
        self._views = {v: {"params": None, "png": None, "html": None, "generation": 0} for v in views}
        self.images = {v: W.Image(format="png", layout=W.Layout(max_width="100%", height="auto"))
                       for v in (images if images is not None else views)}
        self.status_html = W.HTML(layout=W.Layout(min_height="1.6em"))
        self.error_html = W.HTML()
        self._status_text = "ready"
        self._busy_msg = None
        self._job_ended = False
        self._view_cache = {}
        self._extra = None
        self.last_error = None
        self._paint_status(busy=False)

    # ------------------------------------------------------------ hooks
    def _state(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _compute_views(self, state):  # pragma: no cover - abstract
        raise NotImplementedError

    def _on_published(self, state, views):
        pass

    def _view_key(self, state):
        """Hashable key of the rendered views of ``state`` (None: never reuse)."""
        return None

    def _set_running(self, running):
        pass

    def _busy_text(self, state):
        return "updating..."

    # ------------------------------------------------------------ status
    def _paint_status(self, busy=None, text=None):
        if text is not None:
            self._status_text = text
        if busy is None:
            busy = self._busy()
        shown = self._status_text
        if busy and self._busy_msg and not self._jobs:
            shown = self._busy_msg
        main = next(iter(self._views), None)
        params = self._views[main]["params"] if main else None
        self.status_html.value = (
            f"<div class='fl-state' data-generation='{self._published_gen}' data-requested='{self._gen}' "
            f"data-busy='{int(bool(busy))}' data-params='{html.escape(json.dumps(params, default=str))}'>"
            + ("<i class='fa fa-spinner fa-spin'></i> " if busy else "") + shown + "</div>")

    def _set_status(self, text, busy=None):
        self._paint_status(busy=busy, text=text)

    def _show_error(self, exc, where=""):
        msg = exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}"
        self.last_error = msg
        self.error_html.value = (f"<div class='fl-error' style='color:#b00020'><b>Error{where}:</b> "
                                 f"{html.escape(msg)}</div>")

    def _clear_error(self, render_only=False):
        if render_only and getattr(self, "_job_error", False):
            return  # an error of a long action stays until the next action
        self._job_error = False
        self.last_error = None
        self.error_html.value = ""

    def _busy(self):
        with self._cond:
            return bool(self._jobs) or self._render_req is not None or self._published_gen < self._gen

    # ------------------------------------------------------------ rendering
    def request_render(self):
        """Redraw every view for the current control values (newest request wins)."""
        state = self._state()
        with self._cond:
            self._gen += 1
            gen = self._gen
            self._render_req = (gen, state)
            if self.use_threads and self._worker is None:
                self._worker = threading.Thread(target=self._render_loop, daemon=True,
                                                name=f"{type(self).__name__}-render")
                self._worker.start()
            self._cond.notify_all()
        if not self.use_threads:
            self._render_loop()
        else:
            t = threading.Timer(0.15, self._maybe_busy, args=(gen, state))
            t.daemon = True
            t.start()
        return gen

    def _maybe_busy(self, gen, state):
        with self._cond:
            late = self._published_gen < gen and self._gen == gen
        if late:
            try:
                self._busy_msg = self._busy_text(state)
                self._paint_status(busy=True)
            except Exception:
                pass

    def _render_loop(self):
        while True:
            with self._cond:
                if self._render_req is None:
                    self._worker = None
                    self._cond.notify_all()
                    return
                gen, state = self._render_req
                self._render_req = None
            try:
                key = self._view_key(state)
                hit = self._view_cache.get(key) if key is not None else None
                if hit is not None:  # a state shown before: only the swap (well under 0.5 s)
                    views, self._extra = hit
                else:
                    views = self._compute_views(state)
                    if key is not None:
                        if len(self._view_cache) >= 64:
                            self._view_cache.pop(next(iter(self._view_cache)))
                        self._view_cache[key] = (views, self._extra)
                error = None
            except Exception as exc:  # shown in the widget, never swallowed
                views, error = None, exc
            with self._cond:
                if gen != self._gen:
                    continue  # stale: a newer state was requested meanwhile
                if error is not None:
                    self._published_gen = gen
                    self._show_error(error)
                    self._paint_status(busy=bool(self._jobs), text="error (see above)")
                    continue
                self._publish(gen, state, views)

    def _publish(self, gen, state, views):
        # all views of one state swap in together
        for name, v in views.items():
            slot = self._views.setdefault(name, {"params": None, "png": None, "html": None, "generation": 0})
            slot.update(params=v.get("params"), png=v.get("png"), html=v.get("html"), generation=gen)
        for name, v in views.items():
            if v.get("png") is not None and name in self.images:
                self.images[name].value = v["png"]
            if v.get("html") is not None and name in getattr(self, "htmls", {}):
                self.htmls[name].value = v["html"]
        self._published_gen = gen
        self._busy_msg = None
        self._clear_error(render_only=True)
        keep = self._status_text
        self._on_published(state, views)
        if self._job_ended:
            self._status_text = keep
            self._job_ended = False
        self._paint_status(busy=bool(self._jobs) or self._render_req is not None)

    # ------------------------------------------------------------ jobs
    def _start_job(self, name, fn, *, after=None):
        """Run ``fn(stop_event)`` as a long action; redraw when it ends."""
        with self._cond:
            if self._jobs:
                raise RuntimeError(f"{', '.join(self._jobs)} is already running; press Stop or wait.")
            self._jobs[name] = time.perf_counter()
            self._stop_event.clear()
        self._clear_error()
        self._set_running(True)

        def run():
            try:
                fn(self._stop_event)
            except Exception as exc:  # shown in the widget
                self._show_error(exc, f" in {name}")
                self._job_error = True
                self._status_text = f"error in {name} (see above)"
            finally:
                try:
                    if after is not None:
                        after()
                except Exception as exc:
                    self._show_error(exc)
                self._job_ended = True  # the next publish keeps the job's status line
                self._set_running(False)
                try:
                    self.request_render()  # before the job leaves: wait() never returns in between
                finally:
                    with self._cond:
                        self._jobs.pop(name, None)
                        self._cond.notify_all()
                    self._paint_status()

        if self.use_threads:
            threading.Thread(target=run, daemon=True, name=f"{type(self).__name__}-{name}").start()
        else:
            run()

    @property
    def running(self):
        """True while a long action runs."""
        with self._cond:
            return bool(self._jobs)

    def stop(self):
        """Stop the running long action (it keeps what it found)."""
        with self._cond:
            if not self._jobs:
                return
        self._stop_event.set()
        self._set_status("stopping...", busy=True)

    # ------------------------------------------------------------ test protocol
    def wait(self, timeout=None):
        """Return when every background job and redraw is done.

        Raises
        ------
        TimeoutError
            With what was still pending, if ``timeout`` seconds pass first.
        """
        deadline = None if timeout is None else time.monotonic() + float(timeout)
        with self._cond:
            while self._jobs or self._render_req is not None or self._worker is not None:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    pending = list(self._jobs)
                    if self._render_req is not None or self._worker is not None:
                        pending.append(f"redraw (generation {self._gen}, shown {self._published_gen})")
                    raise TimeoutError(f"{type(self).__name__}.wait: still pending after {timeout} s: "
                                       + ", ".join(pending))
                self._cond.wait(0.05 if left is None else min(0.05, left))
        return True

    def snapshot(self):
        """``{view: {"params": what it shows, "png": its last figure or None}}``."""
        with self._cond:
            return {k: {"params": None if v["params"] is None else dict(v["params"]), "png": v["png"],
                        **({"html": v["html"]} if v["html"] is not None else {})}
                    for k, v in self._views.items()}
