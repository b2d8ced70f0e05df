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


def test_dask_recommended_config_is_public_and_cheap():
    import subprocess
    import sys

    code = ("import sys, fairlens; c = fairlens.DASK_RECOMMENDED_CONFIG; "
            "from fairlens._parallel import DASK_RECOMMENDED_CONFIG as p; "
            "assert c == p and c is not p; assert 'dask' not in sys.modules and 'numba' not in sys.modules; "
            "assert 'DASK_RECOMMENDED_CONFIG' in dir(fairlens)")
    subprocess.run([sys.executable, "-c", code], check=True)
