"""IPython start-up file for the notebook kernels of the test run (``pytest --nbmake``): every
matplotlib figure a notebook shows inline is checked for text that is too small *as displayed*.

The root ``conftest.py`` installs this file in a throw-away ``IPYTHONDIR`` for each notebook
kernel. A figure with too small text raises :class:`FigureTextTooSmall` from the PNG formatter;
IPython shows it as the cell's error output, and nbmake fails the notebook on it (the message
names the figure, its width and its smallest texts).

What "as displayed" means: IPython's inline backend saves a figure with ``bbox_inches="tight"``
at ``figure.dpi``; JupyterLab shows that PNG at one image pixel per CSS pixel, scaled down to
fit when it is wider than the output column (``COLUMN_PX``: 840 CSS px in a 1280x720 window
with the file browser open, the projector setting of the widgets). A text of ``s`` points is
then ``s * dpi / 72 * min(1, COLUMN_PX / width_px)`` CSS pixels tall; it must be at least
``MIN_PX`` = 16 CSS px, i.e. 12 pt (CSS: 1 pt = 4/3 px), the course kit's floor for a figure
read from the back of a lecture hall.

Widgets draw their figures themselves (``fairlens._widgets.figure_png``), not through this
path; their own layout check runs in ``tests/widgets``.
"""
import functools
import os

MARK = "FAIRLENS-FIGURE-CHECK"
COLUMN_PX = 840
MIN_PX = 16.0


class FigureTextTooSmall(AssertionError):
    """A figure's text is under 12 pt as displayed in a notebook."""


def _problems(fig):
    from fairlens._widgets import drawn_texts  # the widgets' own measure of what is drawn

    renderer, drawn = drawn_texts(fig)
    width_px = fig.get_tightbbox(renderer).width * fig.dpi  # inches of the tight box, at figure.dpi
    scale = min(1.0, COLUMN_PX / max(width_px, 1.0))
    small = sorted({(round(t.get_fontsize() * fig.dpi / 72 * scale, 1), t.get_text().strip()[:30])
                    for t in drawn if t.get_fontsize() * fig.dpi / 72 * scale < MIN_PX - 0.05})
    if not small:
        return None
    title = next((a.get_title() for a in fig.axes if a.get_title()), "") or (
        fig._suptitle.get_text() if fig._suptitle else "untitled")
    shown = ", ".join(f"{txt!r} {px} px" for px, txt in small[:6])
    return (f"{MARK}: figure {title[:50]!r} is {width_px:.0f} px wide (shown at {scale:.2f} of that in an "
            f"{COLUMN_PX} px column); {len(small)} distinct texts are under {MIN_PX:.0f} CSS px (12 pt) as displayed, "
            f"e.g. {shown}. Make the figure narrower (figsize width <= {COLUMN_PX / fig.dpi:.1f} in) or its "
            "fonts larger.")


def _install():
    from IPython import get_ipython
    from IPython.core import pylabtools
    from matplotlib.figure import Figure

    if getattr(pylabtools.print_figure, "_fairlens_checked", False):
        return
    original = pylabtools.print_figure

    def print_figure(fig, fmt="png", *args, **kwargs):
        msg = _problems(fig)
        if msg:
            raise FigureTextTooSmall(msg)
        return original(fig, fmt, *args, **kwargs)

    print_figure._fairlens_checked = True
    pylabtools.print_figure = print_figure   # what select_figure_formats binds from now on
    ip = get_ipython()
    if ip is not None:  # a formatter already bound before this file ran: bind it again
        for mime in ("image/png", "image/jpeg"):
            formatter = ip.display_formatter.formatters.get(mime)
            bound = formatter.lookup_by_type(Figure) if formatter is not None and Figure in \
                formatter.type_printers else None
            if bound is not None and getattr(bound, "func", None) is original:
                formatter.for_type(Figure, functools.partial(print_figure, *bound.args, **bound.keywords))


if os.environ.get("FAIRLENS_FIGURE_CHECK", "1") != "0":
    _install()
