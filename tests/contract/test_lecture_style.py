"""The lecture style and the notebooks' figure check (``tests/_kernel_figure_check.py``): a figure
drawn with ``plt.style.use("fairlens.lecture")`` at most 8.4 in wide reads >= 12 pt as displayed;
a wide multi-panel figure does not, and the check says which figure and which texts."""
import importlib.util

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from tests._support import REPO, TESTS

SIZE_KEYS = ("font.size", "axes.titlesize", "axes.labelsize", "xtick.labelsize", "ytick.labelsize",
             "legend.fontsize", "legend.title_fontsize", "figure.titlesize")


@pytest.fixture(scope="module")
def check(tmp_path_factory):
    import os

    os.environ["FAIRLENS_FIGURE_CHECK"] = "0"      # import the functions, do not patch IPython here
    try:
        spec = importlib.util.spec_from_file_location("_kernel_figure_check", TESTS / "_kernel_figure_check.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        os.environ.pop("FAIRLENS_FIGURE_CHECK", None)
    return mod


def test_style_is_installed_and_every_size_is_at_least_12_pt():
    with plt.style.context("fairlens.lecture"):
        from matplotlib import font_manager
        sizes = {k: font_manager.FontProperties(size=plt.rcParams[k]).get_size_in_points() for k in SIZE_KEYS}
        assert min(sizes.values()) >= 12, sizes
        assert plt.rcParams["figure.figsize"][0] <= 8.4


def test_a_narrow_figure_in_the_style_passes(check):
    with plt.style.context("fairlens.lecture"):
        fig, axes = plt.subplots(2, 1, figsize=(8.4, 6), layout="constrained")
        for ax in axes:
            ax.plot([0, 1], [0, 1], label="a line")
            ax.set_title("a title")
            ax.set_xlabel("x")
            ax.legend()
        try:
            assert check._problems(fig) is None
        finally:
            plt.close(fig)


def test_a_wide_multi_panel_figure_fails_and_says_why(check):
    with plt.style.context("fairlens.lecture"):
        fig, axes = plt.subplots(1, 5, figsize=(20, 4))
        axes[0].set_title("five panels")
        try:
            msg = check._problems(fig)
        finally:
            plt.close(fig)
    assert msg is not None and "'five panels'" in msg and "840 px column" in msg and "12 pt" in msg


def test_default_matplotlib_fonts_fail_even_when_narrow(check):
    # 10 pt ticks at 100 dpi are 13.9 CSS px: readable on a laptop, not from the back of a hall
    with plt.style.context("default"):
        fig, ax = plt.subplots(figsize=(6, 4))
        try:
            msg = check._problems(fig)
        finally:
            plt.close(fig)
    assert msg is not None and "13.9 px" in msg


def test_tutorials_use_the_style():
    import nbformat

    for path in sorted((REPO / "tutorials").glob("0[1-4]_*.ipynb")):
        code = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
        assert 'plt.style.use("fairlens.lecture")' in code, path.name
