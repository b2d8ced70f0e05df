"""Widgets outside a live JupyterLab (issue 23 item 2): executed by nbconvert, a widget's output
carries a static rendering of its current state (image/png and text/html) next to the widget
view, so nbviewer, the docs and GitHub show the figures instead of nothing."""
import base64
import os
import subprocess
import sys

import pytest

from tests._support import REPO

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbconvert")
pytest.importorskip("ipywidgets")


CELL = """\
import numpy as np
from fairlens.shuffle import ShuffleAttackExplorer
rng = np.random.default_rng(0)
X = rng.random((60, 3)); X[:, 2] = X[:, 2] > 0.5
y = (X[:, 0] > 0.5).astype(int)
ShuffleAttackExplorer(lambda A: np.asarray(A, float)[:, :2].mean(1), X, protected=2, favoured=1, y=y,
                      feature_names=["a", "b", "group"])
"""


def test_nbconvert_execute_output_of_a_widget_contains_its_image(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(CELL)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src = tmp_path / "w.ipynb"
    nbformat.write(nb, str(src))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
           "MPLBACKEND": "Agg"}
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                    "--ExecutePreprocessor.timeout=600", "--output", "out.ipynb", str(src)],
                   cwd=tmp_path, env=env, check=True, capture_output=True, text=True)
    out = nbformat.read(str(tmp_path / "out.ipynb"), as_version=4)
    outputs = out.cells[0].outputs
    data = next(o["data"] for o in outputs if o.get("output_type") == "execute_result")
    assert "application/vnd.jupyter.widget-view+json" in data  # the live widget where a frontend is
    png = base64.b64decode(data["image/png"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000  # a real figure, not a placeholder
    html = data["text/html"]
    assert html.count("<img") == 3 and "swapping" in html  # the three views and the state shown
    # and nbconvert's HTML export of that notebook shows the figure
    r = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--stdout",
                        str(tmp_path / "out.ipynb")], cwd=tmp_path, env=env, check=True, capture_output=True,
                       text=True)
    assert "data:image/png;base64," in r.stdout
