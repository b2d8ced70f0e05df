"""Plots draw the numbers of the result objects."""
import matplotlib
import numpy as np
import pandas as pd

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from fairlens.testsgd import TestSGD, themis_group_discrimination  # noqa: E402
from fairlens.testsgd.plots import plot_theta_effect  # noqa: E402


def test_report_and_result_plots(toy, planted):
    rep = TestSGD(planted, toy, protected=["gender", "race", "age"], theta=0.1, sample_thr=100, random_state=0).run()
    ax = rep.plot(k=4)
    widths = sorted(p.get_width() for p in ax.patches)
    expect = sorted([r.rate_in for r in rep.results[:4]] + [r.rate_out for r in rep.results[:4]])
    np.testing.assert_allclose(widths, expect)
    r = rep.results[0]
    ax = r.plot()
    np.testing.assert_allclose([p.get_height() for p in ax.patches], [r.rate_in, r.rate_out])
    assert r.margin_in + r.margin_out == pytest_approx(r.margin)
    plt.close("all")


def pytest_approx(v):
    import pytest
    return pytest.approx(v, rel=1e-9)


def test_themis_and_theta_plots(toy, planted):
    t = themis_group_discrimination(planted, toy, ["gender", "race"], n_samples=100, random_state=0)
    ax = t.plot(k=4)
    assert len(ax.patches) == len(t.rates)  # 8 subgroups <= 2k shown in full
    ax = plot_theta_effect(pd.DataFrame({"theta": [0.01, 0.05, 0.1], "n_rule_sets": [30, 20, 10],
                                         "top_score": [0.5, 0.4, 0.3]}))
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), [30, 20, 10])
    plt.close("all")


def test_support_plot(toy):
    from fairlens.testsgd import frequent_rule_sets

    fr = frequent_rule_sets(toy, ["gender", "race"], 0.05)
    ax = fr.plot()
    sizes = sorted({len(r) for r in fr.rule_sets})
    assert len(ax.get_xticklabels()) == len(sizes)
    assert ax.lines[-1].get_ydata()[0] == 0.05
    plt.close("all")
