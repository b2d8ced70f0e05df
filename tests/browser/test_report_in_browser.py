"""The HTML report in a real browser: layout at 1280x720 and in A4 print, and no script runs.

Drives Debian's Chromium (``apt-get install chromium``) through the ``playwright`` package, as
``test_widgets_in_browser.py`` does; skips with the reason when either is missing (fails when
``FAIRLENS_REQUIRE_BROWSER=1``).  Screenshots and the PDF (with its pages as PNG when
``pdftoppm`` is installed) go to ``test-artifacts/browser/``.

What is checked programmatically, on a real tour report (shuffle and certify sections, real
figures and tables) and on a synthetic audit document with long cells:
- no text element overflows its box (``scrollWidth <= clientWidth``) and nothing is wider than
  the page, on screen (1280x720) and in print (A4 width, print styles);
- the blocks of each section (headings, paragraphs, tables, figures, captions) do not overlap;
- figures are shown at >= 2/3 of their natural width (so their >= 18 px text stays >= 12 px);
- a document whose column is ``<img src=x onerror=alert(1)>`` and whose category value is
  ``<script>window.__pwned=1</script>`` shows both as text: no dialog opens, nothing runs.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests._support.audit_docs import EVIL_COLUMN, EVIL_VALUE, make_doc, make_evil_doc, png_base64

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "browser"

pytestmark = pytest.mark.browser
_REQUIRED = os.environ.get("FAIRLENS_REQUIRE_BROWSER") == "1"


def _missing(reason):
    if _REQUIRED:
        raise RuntimeError(f"browser tests required but {reason}")
    pytest.skip(reason, allow_module_level=True)


try:
    from playwright import sync_api
except ImportError:
    _missing("playwright is not installed (pip install playwright; the browser comes from apt)")
if not os.path.exists(CHROMIUM):
    _missing("Chromium not found: apt-get install chromium")


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--headless", "--disable-gpu", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"],
        )
        yield b
        b.close()


@pytest.fixture(scope="module")
def tour_html(tmp_path_factory):
    """A real tour report: two sections with their figures and tables."""
    from fairlens import tour

    out = tmp_path_factory.mktemp("report") / "tour.html"
    report = tour.run_tour(quick=True, out=out, progress=False, only=["shuffle", "certify"])
    assert report.ok, [s.error for s in report.sections]
    return out


@pytest.fixture(scope="module")
def audit_html(tmp_path_factory):
    """A synthetic audit document with long cells, many rows and a figure."""
    from fairlens.report import render_html

    doc = make_doc()
    sec = doc["sections"][0]
    sec["figures"] = [{"title": "Selection rate per group, with 95% intervals",
                       "alt": "bars", "png_base64": png_base64(11, 4.5), "width_px": 1100}]
    long_group = ", ".join(f"native-country=Country-number-{i}" for i in range(12))
    sec["tables"][0]["rows"] += [[long_group, 3, {"value": 0.123456, "ci_low": 0.0001,
                                                  "ci_high": 0.9}, "x" * 120]] * 30
    doc["findings"] = doc["findings"] * 15
    doc["model"]["params"] = {f"param_{i}": "y" * 90 for i in range(8)}
    path = tmp_path_factory.mktemp("report") / "audit.html"
    path.write_text(render_html(doc), encoding="utf-8")
    return path


_LAYOUT_JS = r"""
() => {
  const problems = [];
  const sel = "th, td, h1, h2, h3, p, figcaption, caption, dt, dd, li, .banner, .v";
  const doc = document.documentElement;
  if (doc.scrollWidth > doc.clientWidth + 1)
    problems.push(`page is ${doc.scrollWidth}px wide in a ${doc.clientWidth}px window`);
  for (const el of document.querySelectorAll(sel)) {
    if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).display !== "inline")
      problems.push(`${el.tagName} overflows (${el.scrollWidth} > ${el.clientWidth}): ` +
                    el.textContent.slice(0, 60));
    const fs = parseFloat(getComputedStyle(el).fontSize);
    if (fs < 12) problems.push(`${el.tagName} text is ${fs}px: ` + el.textContent.slice(0, 40));
  }
  for (const box of document.querySelectorAll(".table-wrap")) {
    if (box.scrollWidth > box.clientWidth + 1)
      problems.push(`a table is cut (${box.scrollWidth} > ${box.clientWidth}): ` +
                    box.textContent.slice(0, 60));
  }
  for (const sec of document.querySelectorAll("section, header")) {
    const kids = [...sec.children].filter(k => getComputedStyle(k).display !== "none");
    for (let i = 1; i < kids.length; i++) {
      const a = kids[i - 1].getBoundingClientRect(), b = kids[i].getBoundingClientRect();
      if (a.height && b.height && a.bottom > b.top + 0.5)
        problems.push(`${kids[i - 1].tagName} overlaps ${kids[i].tagName} by ` +
                      `${(a.bottom - b.top).toFixed(1)}px: ` + kids[i].textContent.slice(0, 40));
    }
  }
  for (const row of document.querySelectorAll("tr")) {
    const cells = [...row.children].map(c => c.getBoundingClientRect());
    for (let i = 1; i < cells.length; i++)
      if (cells[i - 1].right > cells[i].left + 1.5)
        problems.push("table cells overlap: " + row.textContent.slice(0, 60));
  }
  const figs = [...document.querySelectorAll("figure img")].map(
    img => ({natural: img.naturalWidth, shown: img.getBoundingClientRect().width}));
  return {problems, figs};
}
"""


def _check_layout(page, what, *, min_fig_scale):
    out = page.evaluate(_LAYOUT_JS)
    assert out["problems"] == [], f"{what}: " + "\n".join(out["problems"][:20])
    for f in out["figs"]:
        assert f["natural"] >= 1000, f
        # figures have >= 13 pt text at 100 dpi (18 px): shown at this scale it stays >= 12 px
        assert f["shown"] >= min_fig_scale * f["natural"], (what, f)
    return out


def _screen_and_print(browser, path, stem):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    page.screenshot(path=str(ARTIFACTS / f"report_{stem}_1280x720.png"))
    page.screenshot(path=str(ARTIFACTS / f"report_{stem}_full.png"), full_page=True)
    screen = _check_layout(page, f"{stem} at 1280x720", min_fig_scale=2 / 3)
    # print: the A4 page width at 96 dpi minus the 12 mm margins, with the print styles
    page.emulate_media(media="print")
    page.set_viewport_size({"width": 703, "height": 1000})
    _check_layout(page, f"{stem} in print (A4)", min_fig_scale=0.6)
    pdf = ARTIFACTS / f"report_{stem}_A4.pdf"
    page.pdf(path=str(pdf), format="A4", print_background=True)
    assert pdf.stat().st_size > 10_000
    if shutil.which("pdftoppm"):
        subprocess.run(["pdftoppm", "-png", "-r", "60", str(pdf),
                        str(ARTIFACTS / f"report_{stem}_A4_page")], check=True, timeout=120)
    page.close()
    assert dialogs == []
    assert all(u.startswith(("file:", "data:")) for u in requests), requests  # offline
    return screen


def test_tour_report_layout_screen_and_print(browser, tour_html):
    out = _screen_and_print(browser, tour_html, "tour")
    assert len(out["figs"]) == 2


def test_audit_report_layout_screen_and_print(browser, audit_html):
    out = _screen_and_print(browser, audit_html, "audit")
    assert len(out["figs"]) == 1


def test_real_audit_report_layout(browser, tmp_path):
    """A small real audit (group fairness and MAFT pairs: the widest tables) lays out too."""
    audit_mod = pytest.importorskip("fairlens.audit")
    if not hasattr(audit_mod, "audit"):
        pytest.skip("the audit engine is not in this tree")
    from tests._support.audit_cli import make_model, make_table

    frame = make_table()
    report = audit_mod.audit(make_model(frame), frame, target="approved", protected=["sex"],
                             favourable="yes", checks=["group_fairness", "individual"],
                             time_limit=20, random_state=0, progress=False)
    path = tmp_path / "audit_real.html"
    report.to_html(path)
    _screen_and_print(browser, path, "audit_real")


def test_user_strings_run_nothing(browser, tmp_path):
    from fairlens.report import render_html

    path = tmp_path / "evil.html"
    path.write_text(render_html(make_evil_doc()), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    page.wait_for_timeout(500)  # an onerror handler would have fired by now
    for el in page.query_selector_all("td, th, p, li, dd, dt, h1, figcaption, mark"):
        el.hover()  # onmouseover handlers, had any been injected
    page.wait_for_timeout(200)
    assert dialogs == []
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.evaluate("document.scripts.length") == 0
    assert page.evaluate("document.querySelectorAll('img').length") == 1  # the figure only
    assert page.evaluate("[...document.querySelectorAll('*')].filter(e => [...e.attributes]"
                         ".some(a => a.name.startsWith('on'))).length") == 0
    text = page.evaluate("document.body.innerText")
    assert EVIL_COLUMN in text and EVIL_VALUE in text  # shown, as text
    page.screenshot(path=str(ARTIFACTS / "report_escaped_strings.png"), full_page=True)
    page.close()
