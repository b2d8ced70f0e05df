"""Sphinx extension: the built site must work offline.

After an HTML build, every page and style sheet of the output is scanned for resources a
browser would fetch from another host when the page is read: ``<script src>``, ``<link
rel="stylesheet|preload|icon" href>``, ``<img|iframe|source|embed src>``, ``<object data>``, CSS
``url(...)`` and ``@import``. Each one is a warning (so ``sphinx -W`` fails). Plain hyperlinks
(``<a href="https://...">``) are fine: the reader chooses to follow them.
"""
from __future__ import annotations

import re
from pathlib import Path

_REMOTE_IN_TAG = re.compile(
    r"<(script|link|img|iframe|source|embed|object)\b[^>]*?\b(src|href|data)\s*=\s*[\"']?"
    r"((?:https?:)?//[^\"'\s>]+)", re.IGNORECASE)
_LOADING_LINK = re.compile(r"\brel\s*=\s*[\"']?[^\"'>]*\b(stylesheet|preload|modulepreload|icon|manifest)\b",
                           re.IGNORECASE)
_REMOTE_IN_CSS = re.compile(r"(?:url\(\s*[\"']?|@import\s+(?:url\(\s*)?[\"']?)((?:https?:)?//[^\"')\s;]+)",
                            re.IGNORECASE)


def remote_resources(outdir):
    """Resources that the pages under ``outdir`` would load from another host.

    Parameters
    ----------
    outdir : str or Path
        The HTML output folder.

    Returns
    -------
    list of (str, str)
        ``(file relative to outdir, url)``, in file order.
    """
    out = Path(outdir)
    found = []
    for path in sorted(out.rglob("*.html")):
        for m in _REMOTE_IN_TAG.finditer(path.read_text(encoding="utf-8", errors="replace")):
            if m.group(1).lower() == "link" and not _LOADING_LINK.search(m.group(0)):
                continue  # <link rel="canonical|next|prev|search" href=...> loads nothing
            found.append((path.relative_to(out).as_posix(), m.group(3)))
    for path in sorted(out.rglob("*.css")):
        for m in _REMOTE_IN_CSS.finditer(path.read_text(encoding="utf-8", errors="replace")):
            found.append((path.relative_to(out).as_posix(), m.group(1)))
    return found


def check_offline(app, exc):
    """``build-finished`` handler: one warning per remote resource (at most 20 listed)."""
    if exc is not None or app.builder.format != "html":
        return
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    remote = remote_resources(app.outdir)
    for page, url in remote[:20]:
        logger.warning(f"{page} loads {url} from another host; the site must work offline "
                       "(serve the file from _static/ instead)")
    if len(remote) > 20:
        logger.warning(f"... and {len(remote) - 20} more remote resources")


def setup(app):
    app.connect("build-finished", check_offline, priority=900)  # after the other extensions copy files
    return {"parallel_read_safe": True, "parallel_write_safe": True}
