"""Detection by explainers (tiny sizes: SHAP/LIME are slow) and fairness before/after."""
import warnings

import numpy as np
import pandas as pd
import pytest

from fairlens.shuffle import ShuffledModel, attributions, explain

NAMES = ["gre", "toefl", "rating", "research"]


def f(A):
    A = np.asarray(A, dtype=float)
    return A[:, :3].mean(axis=1)  # equal-weighted sum, ignores research


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 40
    X = np.column_stack([rng.random(n), rng.random(n), rng.random(n), rng.integers(0, 2, n)])
    return X


def _run(attack, X, explainers, **kw):
    model = ShuffledModel(f, protected="research", favoured=1, attack=attack, random_state=0, feature_names=NAMES, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return attributions(model, X[:4], explainers=explainers, background=X[:30],
                            nsamples=120, random_state=0)


@pytest.fixture(scope="module")
def honest(data):
    return _run("none", data, ("linear", "shap", "kernel", "lime"))


@pytest.fixture(scope="module")
def dominance(data):
    return _run("dominance", data, ("linear", "shap", "kernel", "lime"))


def _get(df, explainer, feature, col="mean_abs"):
    return float(df[(df.explainer == explainer) & (df.feature == feature)][col].iloc[0])


def test_tidy_table_structure(honest):
    assert list(honest.columns) == ["explainer", "feature", "protected", "mean_abs", "mean",
                                    "top1", "top2", "top3", "n_instances"]
    assert len(honest) == 4 * 4
    assert honest.loc[honest.feature == "research", "protected"].all()
    assert not honest.loc[honest.feature != "research", "protected"].any()
    # each instance has exactly one top-1 feature per explainer
    np.testing.assert_allclose(honest.groupby("explainer")["top1"].sum(), 1.0)
    assert (honest.n_instances == 4).all()


def test_honest_model_gets_no_protected_attribution(honest):
    for e in ("linear", "shap", "kernel"):
        assert _get(honest, e, "research") < 1e-8, e
    # LIME is a noisy regression (120 samples): only sampling noise on research
    largest_scoring = max(_get(honest, "lime", c) for c in NAMES[:3])
    assert _get(honest, "lime", "research") < 0.5 * largest_scoring
    assert _get(honest, "lime", "research", "top1") == 0.0
    # honest SHAP equals the exact linear attribution beta_j (x_j - E x_j) of the scoring features
    for c in NAMES[:3]:
        assert _get(honest, "shap", c) == pytest.approx(_get(honest, "linear", c), rel=1e-6)


def test_dominance_is_detected_by_shap_and_lime(honest, dominance):
    assert _get(dominance, "shap", "research") > 0.01
    assert _get(dominance, "kernel", "research") > 0.01
    assert _get(dominance, "lime", "research") > 5 * _get(honest, "lime", "research")


def test_linear_protected_equals_eq15_on_explained_batch(data):
    model = ShuffledModel(f, protected=3, favoured=1, attack="swapping", quantile=0.5)
    df, values = attributions(model, data[:10], explainers="linear", background=data,
                              return_values=True)
    expected = np.abs(model(data[:10]) - f(data[:10])).mean()
    assert _get(df, "linear", "x3") == pytest.approx(expected, abs=1e-12)
    assert values["linear"].shape == (10, 4)


def test_dataframe_input_and_callback_stop(data):
    df = pd.DataFrame(data, columns=NAMES)
    # the model protocol: the callable receives the batch as an array aligned to the
    # DataFrame's columns; protected names resolve against those columns
    model = ShuffledModel(lambda A: np.asarray(A)[:, :3].mean(1), protected="research", favoured=1, random_state=0)
    seen = []
    phi = explain(model, df.iloc[:3], "lime", df, nsamples=50,
                  callback=lambda i, n: seen.append(i) or i < 2)
    assert seen == [1, 2]
    assert np.isfinite(phi[:2]).all() and np.isnan(phi[2]).all()


def test_bad_explainer_and_protected(data):
    model = ShuffledModel(f, protected=3, favoured=1)
    with pytest.raises(ValueError, match="unknown explainer"):
        attributions(model, data[:2], explainers=("lime", "gradcam"))
    with pytest.raises(ValueError, match="not found"):
        attributions(f, data[:2], explainers="linear", protected="sex")
    with pytest.raises(ValueError, match="feature_names"):
        attributions(model, data[:2], explainers="linear", feature_names=["a"])


def test_fairness_before_after(data):
    pytest.importorskip("fairlens.metrics", reason="fairlens.metrics (foundation) not merged yet")
    from fairlens.metrics import demographic_parity_difference
    from fairlens.shuffle import fairness_before_after

    rng = np.random.default_rng(1)
    X = np.column_stack([rng.random(200), rng.random(200), rng.random(200),
                         rng.integers(0, 2, 200)])
    y = (f(X) + 0.1 * rng.normal(size=200) > 0.5).astype(int)
    model = ShuffledModel(f, protected=3, favoured=1, attack="dominance")
    out = fairness_before_after(model, X, y, threshold=0.5)
    assert list(out["metric"]) == ["demographic_parity_difference", "equal_opportunity_difference",
                                   "equalized_odds_difference", "disparate_impact_ratio",
                                   "theil_index"]
    groups = np.where(X[:, 3] == 1, "favoured", "other")
    before = demographic_parity_difference(y, (f(X) >= 0.5).astype(int), protected=groups)
    after_pred = (model(X) >= 0.5).astype(int)
    after = demographic_parity_difference(y, after_pred, protected=groups)
    row = out.set_index("metric").loc["demographic_parity_difference"]
    assert row["before"] == pytest.approx(before)
    assert row["after"] == pytest.approx(after)
    # hand check of the selection-rate gap after Dominance
    rates = [after_pred[X[:, 3] == g].mean() for g in (0, 1)]
    assert row["after"] == pytest.approx(abs(rates[1] - rates[0]))
    assert row["after"] > row["before"] + 0.2  # the attack makes the decisions less fair
    assert out.set_index("metric").loc["disparate_impact_ratio", "after"] < \
        out.set_index("metric").loc["disparate_impact_ratio", "before"]
    with pytest.raises(ValueError, match="rows"):
        fairness_before_after(model, X, y[:10])
