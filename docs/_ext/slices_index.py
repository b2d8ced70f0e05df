"""The documentation's list of papers, read from the slice registry (``fairlens._registry``).

``docs/conf.py`` writes ``papers/index.md`` with :func:`papers_index` at every build, so a slice that
registers itself (with a ``docs_page``) appears in the site's navigation without editing the index.
"""
from __future__ import annotations


def papers_index(slices) -> str:
    """The ``papers/index.md`` page: one entry per slice with a documentation page, in registry order."""
    lines = ["# The papers", "",
             "One page per paper: what it shows, how fairlens implements it, and the choices made where the",
             "paper is ambiguous.", ""]
    for s in slices:
        if s.docs_page:
            lines.append(f"- **{s.title}** ({s.paper}): {{doc}}`/{s.docs_page}`.")
    lines += ["", "```{toctree}", ":hidden:", ":maxdepth: 1", ""]
    lines += [f"/{s.docs_page}" for s in slices if s.docs_page]
    lines += ["```", ""]
    return "\n".join(lines)


def write_papers_index(docs_dir, slices) -> bool:
    """Write ``papers/index.md`` under ``docs_dir`` when its text changed; returns whether it did."""
    from pathlib import Path

    page = Path(docs_dir) / "papers" / "index.md"
    text = papers_index(slices)
    if page.exists() and page.read_text(encoding="utf-8") == text:
        return False
    page.write_text(text, encoding="utf-8")
    return True
