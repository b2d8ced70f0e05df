import subprocess
import sys

import fairlens


def test_version():
    assert fairlens.__version__.count(".") == 2


def test_import_is_light():
    """``import fairlens`` must not import numba, scikit-learn, shap or ipywidgets."""
    code = (
        "import sys, fairlens; heavy = ['numba', 'sklearn', 'shap', 'lime', 'ipywidgets', "
        "'matplotlib', 'pandas']; print([m for m in heavy if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_subpackages_load_lazily():
    import importlib

    assert fairlens.datasets is importlib.import_module("fairlens.datasets")
    assert "load_adult" in fairlens.datasets.__all__
