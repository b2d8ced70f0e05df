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

from ._base import to_jsonable

__all__ = ["FairlensWidget", "WidgetProtocol", "new_figure", "figure_png", "message_png", "kernels_cold",
           "LECTURE_RC", "labelled", "COMPILING", "resolve_background", "png_size", "compose_png", "layout_problems",
           "drawn_texts"]

COMPILING = "compiling kernels (first run only)"

# Figures are drawn for the space they are shown in: ``figsize`` inches become
# ``PX_PER_INCH`` CSS pixels each, rendered at ``PIXEL_DENSITY`` image pixels per CSS pixel
# (sharp on a 2x screen or projector) and displayed at exactly that size (never stretched:
# the Image gets an explicit width and height in CSS pixels, see ``_show_png``).
PX_PER_INCH = 100
PIXEL_DENSITY = 2
MIN_TEXT_PX = 12  # smallest text on screen, in CSS pixels
# legible when projected: every font >= 12 CSS px (9 pt at 100 px per inch)
LECTURE_RC = {
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "legend.fontsize": 10,
    "figure.dpi": PX_PER_INCH,
    "savefig.dpi": PX_PER_INCH * PIXEL_DENSITY,
}
# projector mode: fonts x PROJECTOR_FONT, figures x PROJECTOR_SIZE (but never wider than
# COLUMN_PX: JupyterLab's output column is 848 CSS px in a 1280x720 window with the file browser open)
COLUMN_PX = 840
PROJECTOR_FONT = 1.4
PROJECTOR_SIZE = 1.25
# rcParams are process-global: render one figure at a time
_MPL_LOCK = threading.RLock()
# per render thread: the projector switch of the widget being drawn
_STYLE = threading.local()
# tests set CHECK_LAYOUT = True: every drawn figure is checked (overlapping or clipped text,
# text smaller than MIN_TEXT_PX) and its problems appended to LAYOUT_LOG as (title, [problems])
CHECK_LAYOUT = False
LAYOUT_LOG = []


def resolve_background(background, owner):
    """The widgets' thread switch ``background`` (``use_threads=`` of earlier releases is refused
    by the widgets' ``__init__``, naming ``background=``).

    Parameters
    ----------
    background : bool or None
        None (not given): True.
    owner : str
        Class name for the messages.

    Returns
    -------
    bool

    Raises
    ------
    TypeError
        If the value is not a bool.
    """
    if background is None:
        return True
    if not isinstance(background, (bool, int)) or isinstance(background, float):
        raise TypeError(f"{owner}: background must be True or False (run in background threads); "
                        f"got {background!r}.")
    return bool(background)


def _scale():
    return 1.0 if not getattr(_STYLE, "projector", False) else PROJECTOR_FONT


def new_figure(figsize=(5, 3.6), dpi=PX_PER_INCH, nrows=1, ncols=1, **kw):
    """A pyplot-free Figure (safe to build in a thread) and its axes."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, dpi=dpi)
    axes = fig.subplots(nrows, ncols, **kw)
    return fig, axes


def figure_png(fig, density=PIXEL_DENSITY):
    """PNG bytes of a Figure through the Agg canvas (thread-safe, deterministic), at ``density``
    image pixels per CSS pixel (``fig.dpi`` CSS pixels per inch)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi * density, metadata={"Software": None})
    return buf.getvalue()


def png_size(png):
    """``(width, height)`` in pixels of PNG bytes (read from the IHDR chunk)."""
    if not png or png[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def _text_box(t, renderer):
    """The rotated rectangle a drawn text covers: 4 corners in display pixels."""
    import math

    bb = t.get_window_extent(renderer)
    angle = math.radians(t.get_rotation() % 180)
    if abs(math.sin(angle)) < 1e-6 or "\n" in t.get_text():
        return [(bb.x0, bb.y0), (bb.x1, bb.y0), (bb.x1, bb.y1), (bb.x0, bb.y1)]
    # unrotated size from the text itself; the rectangle is centred on its axis-aligned box
    w, h = renderer.get_text_width_height_descent(t.get_text(), t._fontproperties, ismath="TeX" if t.get_usetex()
                                                  else t._preprocess_math(t.get_text())[1])[:2]
    cx, cy = (bb.x0 + bb.x1) / 2, (bb.y0 + bb.y1) / 2
    c, s_ = math.cos(angle), math.sin(angle)
    pts = []
    for dx, dy in ((-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)):
        pts.append((cx + dx * c - dy * s_, cy + dx * s_ + dy * c))
    return pts


def _overlap_depth(p, q):
    """Penetration depth of two convex polygons (separating axes); <= 0: apart."""
    depth = float("inf")
    for poly in (p, q):
        for i in range(len(poly)):
            x0, y0 = poly[i]
            x1, y1 = poly[(i + 1) % len(poly)]
            nx, ny = y0 - y1, x1 - x0
            norm = (nx * nx + ny * ny) ** 0.5 or 1.0
            nx, ny = nx / norm, ny / norm
            a = [x * nx + y * ny for x, y in p]
            b = [x * nx + y * ny for x, y in q]
            depth = min(depth, min(max(a), max(b)) - max(min(a), min(b)))
            if depth <= 0:
                return depth
    return depth


def drawn_texts(fig):
    """Draw ``fig`` on an Agg canvas and return ``(renderer, texts)``: the visible, non-empty
    :class:`~matplotlib.text.Text` artists in the order they were drawn.

    Parameters
    ----------
    fig : matplotlib.figure.Figure

    Returns
    -------
    renderer : matplotlib.backends.backend_agg.RendererAgg
    texts : list of matplotlib.text.Text

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from fairlens._widgets import drawn_texts
    >>> fig = Figure(); _ = fig.subplots().set_title("t")
    >>> [t.get_text() for t in drawn_texts(fig)[1] if t.get_text() == "t"]
    ['t']
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    renderer = fig.canvas.get_renderer()
    drawn = []
    orig = Text.draw

    def spy(self, r):
        orig(self, r)
        if self.get_visible() and self.get_text().strip():
            drawn.append(self)

    Text.draw = spy
    try:
        fig.draw(renderer)
    finally:
        Text.draw = orig
    return renderer, drawn


def layout_problems(fig):
    """Texts of a drawn ``fig`` that overlap each other, stick out of the figure, or are
    smaller than ``MIN_TEXT_PX`` CSS pixels on screen (empty list: the figure reads well).

    Parameters
    ----------
    fig : matplotlib.figure.Figure

    Returns
    -------
    list of str
        One sentence per problem.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from fairlens._widgets import layout_problems
    >>> fig = Figure(figsize=(3, 2)); ax = fig.subplots(); _ = ax.set_title("t", fontsize=4)
    >>> fig.tight_layout()
    >>> layout_problems(fig)
    ["text 't' is 5.6 px (< 12)"]
    """

    renderer, drawn = drawn_texts(fig)
    problems = []
    W_, H_ = fig.bbox.width, fig.bbox.height
    seen = []
    for t in drawn:
        label = t.get_text().strip()[:40]
        size = t.get_fontsize() * PX_PER_INCH / 72.0
        if size < MIN_TEXT_PX - 0.05:
            problems.append(f"text {label!r} is {size:.1f} px (< {MIN_TEXT_PX})")
        try:
            b = t.get_window_extent(renderer)
            box = _text_box(t, renderer)
        except Exception:
            continue
        tol = 2 * fig.dpi / PX_PER_INCH  # a glyph box's empty descent may touch the edge
        if b.x0 < -tol or b.y0 < -tol or b.x1 > W_ + tol or b.y1 > H_ + tol:
            problems.append(f"text {label!r} is cut at the figure's edge")
        for t2, box2 in seen:
            if _overlap_depth(box, box2) > 1.5 * fig.dpi / PX_PER_INCH:
                problems.append(f"text {label!r} overlaps {t2.get_text().strip()[:40]!r}")
        seen.append((t, box))
    return problems


def _legible(fig):
    """Raise every text of ``fig`` to at least MIN_TEXT_PX (plots made for print use 7-9 pt)."""
    from matplotlib.text import Text

    floor = MIN_TEXT_PX * 72.0 / PX_PER_INCH * _scale()
    for t in fig.findobj(Text):
        if t.get_fontsize() < floor:
            t.set_fontsize(floor)


def _fit_labels(fig):
    """Wrap axis labels and titles that are longer than the side of the axes they belong to
    (a y-label taller than the axes is cut at the figure's edge); True if one was wrapped."""
    import textwrap

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    changed = False
    for ax in fig.axes:
        box = ax.get_window_extent(renderer)
        cx = (box.x0 + box.x1) / 2  # a title is centred on its axes: room on both sides of it
        for text, room in ((ax.yaxis.label, box.height), (ax.xaxis.label, box.width),
                           (ax.title, 2 * min(cx, fig.bbox.width - cx) - 8)):
            s = text.get_text()
            if not s or "\n" in s:
                continue
            bb = text.get_window_extent(renderer)
            length = bb.height if text is ax.yaxis.label else bb.width
            if length > room > 0:
                width = max(8, int(len(s) * room / length * 0.95))
                text.set_text("\n".join(textwrap.wrap(s, width)))
                changed = True
    return changed


def _thin_ticks(fig):
    """Where tick labels of an axis would overlap, keep every k-th (the smallest k that fits)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            labels = [t for t in axis.get_ticklabels() if t.get_visible() and t.get_text().strip()]
            if len(labels) < 3:
                continue
            boxes = [_text_box(t, renderer) for t in labels]
            for k in range(1, len(labels)):
                keep = boxes[::k]
                if all(_overlap_depth(keep[i], keep[i + 1]) <= 0 for i in range(len(keep) - 1)):
                    break
            if k > 1:
                for i, t in enumerate(labels):
                    t.set_visible(i % k == 0)


def draw_png(fn, figsize=(5, 3.6), nrows=1, ncols=1, **kw):
    """Call ``fn(fig, axes)`` on a fresh lecture-styled figure and return its PNG.

    ``figsize`` is in inches of ``PX_PER_INCH`` CSS pixels; in projector mode (set per
    render thread by the widget being drawn) fonts and the figure grow.
    """
    import matplotlib

    s = _scale()
    rc = {k: (v * s if k.endswith("size") else v) for k, v in LECTURE_RC.items()}
    grow = 1.0 if s == 1.0 else min(PROJECTOR_SIZE, max(1.0, COLUMN_PX / (PX_PER_INCH * figsize[0])))
    figsize = (figsize[0] * grow, figsize[1] * grow)
    with _MPL_LOCK, matplotlib.rc_context(rc):
        fig, axes = new_figure(figsize, nrows=nrows, ncols=ncols, **kw)
        fn(fig, axes)
        _legible(fig)
        try:
            fig.tight_layout()
            for _ in range(3):  # wrapping one label can move the axes and crowd another
                if not _fit_labels(fig):
                    break
                fig.tight_layout()
            _thin_ticks(fig)
        except Exception:  # layout is cosmetic
            pass
        png = figure_png(fig)
        if CHECK_LAYOUT:
            titles = [a.get_title() for a in fig.axes if a.get_title()]
            LAYOUT_LOG.append((" / ".join(titles) or "figure", layout_problems(fig)))
        return png


def compose_png(pngs, gap=8):
    """Stack PNG images top to bottom, each at its own size, on white (the export's image)."""
    from PIL import Image

    ims = [Image.open(io.BytesIO(p)).convert("RGB") for p in pngs if p]
    if not ims:
        return None
    w = max(i.width for i in ims)
    h = sum(i.height for i in ims) + gap * (len(ims) - 1)
    out = Image.new("RGB", (w, h), "white")
    y = 0
    for i in ims:
        out.paste(i, (0, y))
        y += i.height + gap
    buf = io.BytesIO()
    out.save(buf, format="PNG")
    return buf.getvalue()


def message_png(text, figsize=(5, 3.6)):
    """A figure that says ``text`` (empty states are never a blank image)."""
    import textwrap

    size = 13 * _scale()
    # characters per line that fit the figure's width (a glyph is about 0.55 em wide)
    grow = 1.0 if _scale() == 1.0 else min(PROJECTOR_SIZE, max(1.0, COLUMN_PX / (PX_PER_INCH * figsize[0])))
    per_line = max(12, int(0.85 * figsize[0] * grow * 72 / (0.55 * size)))

    def fn(fig, ax):
        ax.set_axis_off()
        ax.text(0.5, 0.5, "\n".join(textwrap.wrap(text, per_line)), ha="center", va="center", fontsize=size,
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


# the status line of a failed redraw or action: the message itself is the red line just below it
# (every widget puts error_html right after status_html)
_ERROR_STATUS = ("<b style='color:#b00020'>error{where}</b>: the message is just below; "
                 "the views keep the last result")

STOP_GRACE_S = 0.5  # Stop: a job still running after this is detached (the widget is idle within 1 s)

_CSS = """<style>
.fl-widget .fl-small, .fl-widget pre {font-size: 13px}
/* whole labels everywhere: buttons and tab titles grow with their text instead of cutting it */
.fl-widget .jupyter-button, .fl-widget .widget-button, .fl-widget .widget-toggle-button
{min-width: max-content !important; overflow: visible !important}
.fl-widget .lm-TabBar-tab, .fl-widget .p-TabBar-tab
{min-width: max-content !important; max-width: none !important; flex: 0 0 auto !important}
.fl-widget .lm-TabBar-tabLabel, .fl-widget .p-TabBar-tabLabel {overflow: visible !important}
/* drop-downs as wide as their longest option; slider tracks never below 200 px (a row of
   controls wraps instead of squeezing them) */
.fl-widget .widget-dropdown {width: auto !important; max-width: 100%}
.fl-widget .widget-dropdown > select {width: auto !important; min-width: max-content !important}
.fl-widget .widget-hslider {width: auto !important; max-width: 100%; flex-wrap: wrap}
.fl-widget .widget-hslider .slider-container {min-width: 200px !important; flex: 1 0 200px !important}
/* projector (1280x720 lecture hall): every text >= 16 px, controls sized by their text,
   slider tracks >= 220 px, lists as wide as the column */
.fl-projector * {font-size: max(16px, 1em)}
.fl-projector .widget-html-content, .fl-projector .widget-label, .fl-projector .widget-readout,
.fl-projector button, .fl-projector input, .fl-projector select, .fl-projector option,
.fl-projector textarea, .fl-projector label, .fl-projector .p-TabBar-tabLabel,
.fl-projector .lm-TabBar-tabLabel, .fl-projector .fl-small, .fl-projector pre, .fl-projector td,
.fl-projector th {font-size: 18px !important; line-height: 1.35 !important}
.fl-projector .jupyter-button, .fl-projector .widget-button, .fl-projector .widget-toggle-button
{width: auto !important; height: auto !important; padding: 2px 10px !important}
.fl-projector .widget-inline-hbox .widget-label
{width: auto !important; max-width: none !important; min-width: max-content !important}
.fl-projector .widget-inline-hbox {width: auto !important; max-width: 100%; height: auto !important}
.fl-projector .widget-hslider {width: auto !important; flex: 1 1 auto; flex-wrap: wrap}
.fl-projector .widget-hslider .slider-container {min-width: 220px !important; flex: 1 0 220px !important}
.fl-projector .widget-readout {min-width: max-content !important; overflow: visible !important}
.fl-projector .widget-text > input {width: auto !important; min-width: max-content !important}
.fl-projector .widget-dropdown {flex-wrap: wrap}
.fl-projector .fl-list {width: calc(100% - 8px) !important; flex-wrap: wrap; box-sizing: border-box}
.fl-projector .fl-list > select {width: 100% !important; min-width: 0 !important; box-sizing: border-box}
.fl-projector .fl-list > select, .fl-projector .fl-list option {font-size: 16px !important}
.fl-projector .widget-progress {width: auto !important}
</style>"""


class _JobStop(threading.Event):
    """The stop event of one job, and whether it ended or was detached."""

    def __init__(self):
        super().__init__()
        self.finished = False
        self.detached = False


class _Commit:
    def __init__(self, widget, stop):
        self.widget, self.stop, self.lock = widget, stop, widget._cond

    def __enter__(self):
        self.lock.acquire()
        w = self.widget
        return not self.stop.detached or (not w._jobs and w._latest_stop is self.stop)

    def __exit__(self, *exc):
        self.lock.release()
        return False


class WidgetProtocol:
    """Mixin: generations, one latest-wins render worker, jobs with stop, wait/snapshot.

    Subclasses call :meth:`_init_protocol`, define :meth:`_state` (the control
    values, read on the calling thread) and :meth:`_compute_views` (``state ->
    {view: {"params": dict, "png": bytes or None, "html": str or None}}``,
    run on the worker), and optionally :meth:`_on_published`,
    :meth:`_set_running` and :meth:`_busy_text`.
    """

    # ------------------------------------------------------------ set-up
    def _init_protocol(self, views, background=True, images=None):
        self.background = bool(background)
        self._cond = threading.Condition(threading.RLock())
        self._gen = 0
        self._published_gen = 0
        self._render_req = None
        self._worker = None
        self._jobs = {}
        self._stop_event = threading.Event()
        self._views = {v: {"params": None, "png": None, "html": None, "generation": 0} for v in views}
        # natural size: explicit CSS width and height (set per PNG in _show_png), never
        # stretched or squashed by the flex box around it
        self.images = {v: W.Image(format="png", layout=W.Layout(flex="0 0 auto", align_self="flex-start"))
                       for v in (images if images is not None else views)}
        self.status_html = W.HTML(layout=W.Layout(min_height="1.6em"))
        self.error_html = W.HTML()
        self._status_text = "ready"
        self._busy_msg = None
        self._job_ended = False
        self._view_cache = {}
        self._extra = None
        self.last_error = None
        self._job_stop = None
        self._latest_stop = None  # the stop event of the most recent job
        self._detached = set()  # stop events of detached jobs whose thread still runs
        self._common = {
            "projector": labelled(W.ToggleButton(value=False, description="projector", icon="television",
                                                 layout=W.Layout(width="auto")),
                                  "Larger fonts and figures, for a lecture hall"),
            "export": labelled(W.Button(description="export", icon="download", layout=W.Layout(width="auto")),
                               "The current view as PNG, its numbers as CSV/JSON and a code cell that "
                               "reproduces these settings without the widget"),
        }
        self.export_html = W.HTML()
        self._style_html = W.HTML(_CSS)
        self._common["projector"].observe(self._on_projector, names="value")
        self._common["export"].on_click(lambda _: self._guarded_export())
        self._paint_status(busy=False)

    def _toolbar(self):
        """The controls every widget has (projector, export)."""
        return W.HBox([self._common["projector"], self._common["export"]],
                      layout=W.Layout(flex_flow="row wrap", align_items="center"))

    def _on_projector(self, change):
        if change["new"]:
            self.add_class("fl-projector")
        else:
            self.remove_class("fl-projector")
        self.request_render()

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
        state = dict(self._state(), projector=bool(self._common["projector"].value))
        with self._cond:
            self._gen += 1
            gen = self._gen
            self._render_req = (gen, state)
            if self.background and self._worker is None:
                self._worker = threading.Thread(target=self._render_loop, daemon=True,
                                                name=f"{type(self).__name__}-render")
                self._worker.start()
            self._cond.notify_all()
        if not self.background:
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
            _STYLE.projector = bool(state.get("projector"))
            try:
                key = self._view_key(state)
                if key is not None:
                    key = (key, _STYLE.projector)
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
            finally:
                _STYLE.projector = False
            with self._cond:
                if gen != self._gen:
                    continue  # stale: a newer state was requested meanwhile
                if error is not None:
                    self._published_gen = gen
                    self._show_error(error)
                    self._paint_status(busy=bool(self._jobs), text=_ERROR_STATUS.format(where=""))
                    continue
                self._publish(gen, state, views)

    def _publish(self, gen, state, views):
        # all views of one state swap in together
        for name, v in views.items():
            slot = self._views.setdefault(name, {"params": None, "png": None, "html": None, "generation": 0})
            slot.update(params=v.get("params"), png=v.get("png"), html=v.get("html"), generation=gen)
        for name, v in views.items():
            if v.get("png") is not None and name in self.images:
                self._show_png(name, v["png"])
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

    def _show_png(self, name, png):
        """Show ``png`` in image ``name`` at natural size: one CSS pixel per PIXEL_DENSITY pixels."""
        img = self.images[name]
        img.value = png
        size = png_size(png)
        if size is not None:
            img.layout.width = f"{size[0] / PIXEL_DENSITY:g}px"
            img.layout.height = f"{size[1] / PIXEL_DENSITY:g}px"
            img.layout.min_width = img.layout.width  # never shrunk by the box around it

    # ------------------------------------------------------------ jobs
    def _start_job(self, name, fn, *, after=None):
        """Run ``fn(stop)`` as a long action; redraw when it ends.

        ``stop`` is a :class:`threading.Event` set by :meth:`stop`. A job that has not
        ended ``STOP_GRACE_S`` after Stop is *detached*: the widget is idle again at once
        (status "stopped"), the thread finishes its current step unseen and whatever it
        would still write is discarded (jobs write their results inside
        ``with self._committing(stop) as keep: if keep: ...``).
        """
        stop = _JobStop()
        with self._cond:
            if self._jobs:
                raise RuntimeError(f"{', '.join(self._jobs)} is already running; press Stop or wait.")
            self._jobs[name] = time.perf_counter()
            self._stop_event = stop
            self._job_stop = (name, stop, after)
            self._latest_stop = stop
        self._clear_error()
        self._set_running(True)

        def run():
            try:
                fn(stop)
            except Exception as exc:  # shown in the widget
                with self._cond:
                    if not stop.detached:
                        self._show_error(exc, f" in {name}")
                        self._job_error = True
                        self._status_text = _ERROR_STATUS.format(where=f" in {name}")
            finally:
                with self._cond:
                    if stop.detached:
                        # the widget went idle at Stop; what this run committed late (only if no
                        # newer job started, see _committing) is drawn now
                        self._detached.discard(stop)
                        late = not self._jobs and self._latest_stop is stop
                        self._cond.notify_all()
                    else:
                        stop.finished = True
                if stop.detached:
                    if late:
                        self.request_render()
                else:
                    self._end_job(name, after)

        if self.background:
            threading.Thread(target=run, daemon=True, name=f"{type(self).__name__}-{name}").start()
        else:
            run()

    def _end_job(self, name, after):
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
                self._job_stop = None
                self._cond.notify_all()
            self._paint_status()

    def _committing(self, stop):
        """``with self._committing(stop) as keep:`` -- ``keep`` is False if the job was detached by
        Stop and a newer job has started since (a detached job still delivers what it found when
        the widget is idle)."""
        return _Commit(self, stop)

    def _stopped_text(self, name):
        """Status after a job was detached by Stop (widgets say what was kept)."""
        return f"stopped: {name} interrupted (what its unfinished step finds is shown when it ends)"

    @property
    def running(self):
        """True while a long action runs."""
        with self._cond:
            return bool(self._jobs)

    def stop(self):
        """Stop the running long action (it keeps what it found); the widget is idle within
        ``STOP_GRACE_S`` seconds even if the step under way takes longer."""
        with self._cond:
            if not self._jobs or self._job_stop is None:
                return
            name, stop, after = self._job_stop
        stop.set()
        self._set_status("stopping...", busy=True)

        def detach():
            with self._cond:
                if stop.finished or stop.detached:
                    return
                stop.detached = True
                self._detached.add(stop)
                self._status_text = self._stopped_text(name)
            self._end_job(name, after)

        if self.background:
            t = threading.Timer(STOP_GRACE_S, detach)
            t.daemon = True
            t.start()

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
            while self._jobs or self._render_req is not None or self._worker is not None or self._detached:
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


REPR_WAIT_S = 60.0  # display without a frontend: how long to wait for the first drawing


class FairlensWidget(W.VBox, WidgetProtocol):
    """Base of the four fairlens widgets: an ``ipywidgets.VBox`` with the render/job protocol
    of :class:`WidgetProtocol`, a projector switch, export, and a static rendering for places
    without a widget frontend (nbconvert, the docs, nbviewer, a terminal).

    Subclasses build their children, call ``super().__init__(children)`` and implement
    :meth:`_export_frame` (the numbers shown, one tidy DataFrame) and :meth:`_export_code`
    (Python that recomputes them headless for the current settings).
    """

    _export_name = "fairlens-widget"

    # ------------------------------------------------------------ export
    def _export_frame(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _export_code(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _export_settings(self):
        """The control values the current views show (JSON-safe)."""
        st = self._state()
        return {k: v for k, v in st.items() if k not in ("tick", "summary", "mitigation", "run")}

    def _wait_views(self, timeout=REPR_WAIT_S):
        """Wait for pending redraws (not for long actions); False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._render_req is not None or self._worker is not None or self._published_gen < self._gen:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(0.05, left))
        return True

    def current_png(self):
        """PNG of every figure the widget shows now, stacked top to bottom.

        Returns
        -------
        bytes or None
            None if the widget shows no figure.

        Examples
        --------
        >>> png = widget.current_png()                 # doctest: +SKIP
        """
        self._wait_views()
        with self._cond:
            pngs = [v["png"] for k, v in self._views.items() if v["png"] is not None and k in self.images]
        return compose_png(pngs)

    def export(self, path=None):
        """What the widget shows, for homework and reports.

        Parameters
        ----------
        path : str or path-like, optional
            If given, the files ``<path>.png``, ``<path>.csv``, ``<path>.json`` and
            ``<path>.py`` are written.

        Returns
        -------
        dict
            ``png`` (bytes: the current figures), ``csv`` and ``json`` (str: the numbers
            shown and the settings), ``code`` (str: a code cell that recomputes the numbers
            without the widget for the current control settings), ``frame`` (the
            DataFrame behind the CSV); with ``path``, also ``files`` (the paths written).

        Examples
        --------
        >>> out = widget.export()                      # doctest: +SKIP
        >>> print(out["code"])                         # doctest: +SKIP
        """

        self._wait_views()
        frame = self._export_frame()
        with self._cond:
            views = {k: v["params"] for k, v in self._views.items()}
        payload = {"widget": type(self).__name__, "settings": self._export_settings(), "views": views,
                   "numbers": frame.to_dict(orient="records")}
        out = {"png": self.current_png(), "csv": frame.to_csv(index=False),
               "json": json.dumps(to_jsonable(payload), indent=1, allow_nan=False),
               "code": self._export_code(), "frame": frame}
        if path is not None:
            import pathlib

            base = pathlib.Path(path)
            files = {}
            for ext, key, mode in (("png", "png", "wb"), ("csv", "csv", "w"), ("json", "json", "w"),
                                   ("py", "code", "w")):
                if out[key] is None:
                    continue
                f = base.with_name(base.name + "." + ext)
                with open(f, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as fh:
                    fh.write(out[key])
                files[ext] = str(f)
            out["files"] = files
        return out

    def _guarded_export(self):
        import base64

        try:
            out = self.export()
        except Exception as exc:  # shown, never swallowed
            self._show_error(exc, " in export")
            return
        name = self._export_name

        def link(data, mime, ext, label):
            b = base64.b64encode(data if isinstance(data, bytes) else data.encode()).decode()
            return f"<a download='{name}.{ext}' href='data:{mime};base64,{b}'>{label}</a>"

        parts = [link(out["png"], "image/png", "png", "figure (PNG)")] if out["png"] else []
        parts += [link(out["csv"], "text/csv", "csv", "numbers (CSV)"),
                  link(out["json"], "application/json", "json", "numbers + settings (JSON)"),
                  link(out["code"], "text/x-python", "py", "code (.py)")]
        self.export_html.value = (
            "<div class='fl-export'><b>export</b>: " + " &middot; ".join(parts)
            + "<br>code cell that recomputes these numbers without the widget:"
            + "<pre style='white-space:pre-wrap;border:1px solid #ddd;padding:4px'>"
            + html.escape(out["code"]) + "</pre></div>")

    # ------------------------------------------------------------ without a frontend
    def static_html(self):
        """HTML of the current state: status line, text views and figures (embedded PNGs at
        natural size) -- what nbconvert, the docs and nbviewer show instead of the live widget.

        Returns
        -------
        str

        Examples
        --------
        >>> from IPython.display import HTML           # doctest: +SKIP
        >>> HTML(widget.static_html())                 # doctest: +SKIP
        """
        import base64

        self._wait_views()
        with self._cond:
            items = list(self._views.items())
        parts = [f"<div class='fl-static' data-widget='{type(self).__name__}'>",
                 f"<div><b>{type(self).__name__}</b> (static snapshot; run the notebook for the live "
                 "widget)</div>", f"<div>{self._status_text}</div>"]
        for _k, v in items:
            if v.get("html"):
                parts.append(f"<div>{v['html']}</div>")
        imgs = []
        for k, v in items:
            if v.get("png") is not None and k in self.images:
                w, h = png_size(v["png"]) or (0, 0)
                b = base64.b64encode(v["png"]).decode()
                imgs.append(f"<img alt='{html.escape(k)}' width='{w // PIXEL_DENSITY}' "
                            f"height='{h // PIXEL_DENSITY}' src='data:image/png;base64,{b}'>")
        parts.append("<div style='display:flex;flex-wrap:wrap;gap:6px'>" + "".join(imgs) + "</div></div>")
        return "".join(parts)

    def _repr_mimebundle_(self, **kwargs):
        import base64

        data = super()._repr_mimebundle_(**kwargs) or {}
        try:
            data["text/html"] = self.static_html()
            png = self.current_png()
            if png is not None:
                data["image/png"] = base64.b64encode(png).decode()
        except Exception:  # the live widget must show even if the snapshot cannot be made
            pass
        return data
