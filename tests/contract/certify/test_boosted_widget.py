"""CoverVisualizer on boosted models: per-feature bound bars, the witness, per-tree contributions."""
import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
pytest.importorskip("ipywidgets")

from fairlens.certify import certify, instance_covers  # noqa: E402
from fairlens.certify.plots import plot_flb, plot_tree_contributions  # noqa: E402
from tests.contract.certify.test_boosted import _fit  # noqa: E402


@pytest.mark.parametrize("kind", ["lightgbm", "xgboost"])
def test_cover_visualizer_on_a_boosted_model(kind):
    from fairlens.certify import CoverVisualizer

    model, X, y = _fit(kind, 3, n_trees=5, depth=2)
    X, y = X[:15], y[:15]
    w = CoverVisualizer(model, X, y, budget=1)
    w.wait(600)
    assert w.last_error is None
    ref = certify(model, X, y, budget=1)
    np.testing.assert_array_equal(w.result.status, ref.status)
    # step to an attackable instance: the text names the witness, the detail view draws it
    att = np.flatnonzero(ref.status == "attackable")
    assert att.size
    w.controls["status"].value = "attackable"
    w.wait(600)
    snap = w.snapshot()
    assert snap["detail"]["params"]["witness"] is True
    assert "witness" in snap["text"]["html"] and "margin s_y - s_c" in snap["text"]["html"]
    assert snap["matrix"]["png"][:4] == b"\x89PNG"
    i = snap["text"]["params"]["instance"]
    assert model.predict(w.result.witnesses[i].reshape(1, -1))[0] != y[i]
    with pytest.raises(ValueError, match="vote"):
        CoverVisualizer(model, X, y, vote="soft")


def test_contribution_and_flb_plots():
    import matplotlib.pyplot as plt

    model, X, y = _fit("gb", 2, n_trees=6, depth=2)
    ic = instance_covers(model, X[0], y[0], budget=2)
    fig, axes = plt.subplots(1, 2)
    plot_tree_contributions(ic, ax=axes[0])
    plot_flb(ic, ax=axes[1])
    c = next(iter(ic.delta))
    assert len(axes[0].patches) >= 2 * 6  # a bar and a swing per tree
    assert "margin swing" in axes[1].get_ylabel()
    assert f"{ic.delta[c]:.4g}" in axes[0].get_title()
    plt.close(fig)
