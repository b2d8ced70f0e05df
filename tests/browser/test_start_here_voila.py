"""``tutorials/00_start_here.ipynb`` as a Voila app (issue 23 item 2), driven by Chromium.

Voila runs the notebook (reduced mode) and shows only its outputs: all four widgets must render
live (their status line and their figures at natural size) and react to a control. Skips like
the JupyterLab tests when Chromium, playwright or voila is missing (FAIRLENS_REQUIRE_BROWSER=1
turns a missing piece into a failure).
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = REPO / "test-artifacts" / "browser"
pytestmark = pytest.mark.browser
_REQUIRED = os.environ.get("FAIRLENS_REQUIRE_BROWSER") == "1"


def _missing(reason):
    if _REQUIRED:
        raise RuntimeError(f"browser tests required but {reason}")
    pytest.skip(reason, allow_module_level=True)


try:
    from playwright import sync_api
except ImportError:
    _missing("playwright is not installed")
try:
    import voila  # noqa: F401
except ImportError:
    _missing("voila is not installed (pip install voila)")
if not os.path.exists(CHROMIUM):
    _missing("Chromium not found: apt-get install chromium")


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    # overrides tests/conftest.py: the test talks to its own loopback server
    yield


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_start_here_runs_as_a_voila_app(tmp_path):
    port = _free_port()
    env = {**os.environ, "FAIRLENS_REDUCED": "1", "JUPYTER_CONFIG_DIR": str(tmp_path / ".jupyter"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / ".runtime"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    env.pop("FAIRLENS_DATA_HOME", None)  # bundled data only
    log = open(tmp_path / "voila.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "voila", str(REPO / "tutorials" / "00_start_here.ipynb"),
                             "--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1",
                             "--show_tracebacks=True", "--VoilaConfiguration.http_keep_alive_timeout=600"],
                            cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.time() + 120
        while True:
            try:
                urllib.request.urlopen(base + "voila/static/", timeout=2)
            except urllib.error.HTTPError:
                break  # the server answers
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    pytest.fail("voila did not start:\n" + (tmp_path / "voila.log").read_text()[-3000:])
                time.sleep(0.5)
            else:
                break
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                         args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 720}, device_scale_factor=2)
                page.goto(base, timeout=1_800_000, wait_until="domcontentloaded")
                # voila streams the executed cells: wait for the four widgets' status lines
                page.wait_for_function("document.querySelectorAll('.fl-widget .fl-state').length >= 4",
                                       timeout=1_800_000, polling=1000)
                assert "Traceback" not in page.inner_text("body")
                page.wait_for_function(
                    "[...document.querySelectorAll('.fl-widget .fl-state')].every(s => s.dataset.busy === '0')",
                    timeout=600_000, polling=500)
                widgets = page.locator(".fl-widget")
                assert widgets.count() == 4
                imgs = page.evaluate("""() => [...document.querySelectorAll('.fl-widget img')]
                    .filter(i => i.naturalWidth > 0 && i.offsetParent !== null)  // shown (not a hidden tab)
                    .map(i => [i.getBoundingClientRect().width, i.naturalWidth / devicePixelRatio])""")
                assert len(imgs) >= 6 and all(abs(w - n) <= 1 for w, n in imgs), imgs
                # live: a control of the first widget (the shuffle explorer) redraws its views
                first = widgets.nth(0)
                g = int(first.locator(".fl-state").first.get_attribute("data-generation"))
                first.locator("select").first.select_option("mixing")
                page.wait_for_function(
                    "([el, g]) => { const s = el.querySelector('.fl-state'); return +s.dataset.generation > g"
                    " && s.dataset.busy === '0'; }", arg=[first.element_handle(), g], timeout=300_000)
                assert '"attack": "mixing"' in first.locator(".fl-state").first.get_attribute("data-params")
                first.scroll_into_view_if_needed()
                page.screenshot(path=str(ARTIFACTS / "voila-start-here.png"))
            finally:
                browser.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
