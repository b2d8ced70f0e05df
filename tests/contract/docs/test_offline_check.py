"""The documentation site works offline (docs/_ext/offline_check.py, issue 23 item 1).

The docs stage builds the site with ``-W``; the ``offline_check`` extension turns every resource a
page would fetch from another host into a warning. These tests pin what it flags (scripts, style
sheets, fonts, images, CSS imports) and what it leaves alone (hyperlinks, local files,
``<link rel="canonical">``), and that MathJax ships with the site instead of coming from a CDN.
"""
from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

import pytest
from tests._support import REPO

ROOT = REPO
spec = importlib.util.spec_from_file_location("offline_check", ROOT / "docs" / "_ext" / "offline_check.py")
offline_check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(offline_check)


def test_remote_resources_flags_loads_not_links(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "index.html").write_text(
        '<html><head>'
        '<script defer="defer" src="_static/mathjax/tex-chtml.js"></script>'
        '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js"></script>'
        '<link rel="stylesheet" href="//fonts.example.org/css?family=Lato">'
        '<link rel="canonical" href="https://fairlens.example.org/index.html">'
        '<link rel="stylesheet" href="_static/fairlens.css">'
        '</head><body>'
        '<a href="https://github.com/fairlens-lab/fairlens">source</a>'
        '<img alt="local" src="_static/figure.png"><img alt="remote" src=\'http://example.org/x.png\'>'
        '</body></html>')
    (tmp_path / "sub" / "page.html").write_text('<iframe src="https://www.youtube.com/embed/x"></iframe>')
    (tmp_path / "style.css").write_text(
        '@import url("https://fonts.example.org/lato.css");\n'
        '@font-face { src: url(../fonts/local.woff2); }\n'
        '.x { background: url(\'https://example.org/bg.png\'); }\n')
    found = offline_check.remote_resources(tmp_path)
    assert found == [
        ("index.html", "https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js"),
        ("index.html", "//fonts.example.org/css?family=Lato"),
        ("index.html", "http://example.org/x.png"),
        ("sub/page.html", "https://www.youtube.com/embed/x"),
        ("style.css", "https://fonts.example.org/lato.css"),
        ("style.css", "https://example.org/bg.png"),
    ]


def test_remote_resources_empty_for_a_local_site(tmp_path):
    (tmp_path / "index.html").write_text('<script src="_static/doctools.js"></script>'
                                         '<a href="https://numpy.org/doc/stable/">numpy</a>')
    assert offline_check.remote_resources(tmp_path) == []


def test_mathjax_is_served_from_the_site():
    pytest.importorskip("sphinx")
    try:
        ext = importlib.import_module("sphinx-mathjax-offline")
    except ImportError:
        pytest.skip("sphinx-mathjax-offline is not installed (the docs/dev extra)")
    static = Path(ext.__file__).parent / "static" / "mathjax"
    assert (static / "tex-chtml.js").is_file()
    assert any((static / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))

    class Config:
        pass

    class App:
        config = Config()

        def connect(self, event, handler, *args, **kwargs):
            self.event = event

    app = App()
    ext.setup(app)
    assert app.config.mathjax_path == "mathjax/tex-chtml.js"   # relative: _static/mathjax/ of the site
    assert app.event == "build-finished"                       # where it copies the files


@pytest.mark.parametrize("remote", [False, True])
def test_a_build_that_loads_a_remote_script_fails_with_W(tmp_path, remote):
    """End to end on a one-page project: the extension's warning makes ``sphinx -W`` fail."""
    pytest.importorskip("sphinx")
    from sphinx.cmd.build import build_main

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / 'docs' / '_ext')!r})\n"
        "extensions = ['offline_check']\n"
        "html_theme = 'basic'\n")
    script = "https://cdn.example.org/lib.js" if remote else "_static/lib.js"
    (src / "index.rst").write_text(
        "Title\n=====\n\nA `link <https://example.org/>`_ is fine.\n\n"
        f".. raw:: html\n\n   <script src=\"{script}\"></script>\n")
    rc = build_main(["-W", "-q", "-b", "html", str(src), str(tmp_path / "out")])
    assert rc == (1 if remote else 0)
