"""ONNX ``TreeEnsembleClassifier`` models (skl2onnx: scikit-learn forests and gradient boosting;
onnxmltools: LightGBM, XGBoost where its converter runs), certified through one reader file.

Oracle, independent of fairlens' reader and kernels: a literal enumeration that calls onnxruntime's
``InferenceSession.run`` on every combination of a dense per-feature grid -- the thresholds of the
*original* model read by ``fairlens.certify._reference.reference_candidates`` (each threshold, the
float64 and float32 numbers either side, values beyond the ends; NaN when the attacker may write it)
-- for every set of ``b`` features. Every witness must flip onnxruntime's label; every row certified
robust must be robust under the enumeration.
"""
import warnings

import numpy as np
import pytest

from fairlens.certify import can_certify, certify

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("skl2onnx")


def _data(n_classes, seed=0, d=4):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(220, d)), 2)
    s = X[:, 0] + X[:, 1] * X[:, 2] - 0.5 * X[:, 3] + 0.3 * rng.normal(size=220)
    y = (s > 0).astype(int) if n_classes == 2 else np.digitize(s, [-0.6, 0.6])
    return X, y


def _convert(kind, n_classes, n_trees=3, depth=2):
    X, y = _data(n_classes)
    if kind in ("rf", "gb"):
        from skl2onnx import convert_sklearn
        from skl2onnx.common.data_types import FloatTensorType
        from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

        m = (RandomForestClassifier(n_trees, max_depth=depth, random_state=0) if kind == "rf" else
             GradientBoostingClassifier(n_estimators=n_trees, max_depth=depth, random_state=0)).fit(X[:180], y[:180])
        onx = convert_sklearn(m, initial_types=[("X", FloatTensorType([None, X.shape[1]]))])
    else:
        lgb = pytest.importorskip("lightgbm")
        onnxmltools = pytest.importorskip("onnxmltools")
        from onnxmltools.convert.common.data_types import FloatTensorType

        m = lgb.LGBMClassifier(n_estimators=n_trees, num_leaves=2 ** depth, learning_rate=0.5, min_child_samples=5,
                               verbose=-1, n_jobs=1).fit(X[:180], y[:180])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            onx = onnxmltools.convert_lightgbm(m, initial_types=[("X", FloatTensorType([None, X.shape[1]]))])
    return m, onx, X[180:], y[180:]


def _run(onx, X):
    sess = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.asarray(sess.run(None, {sess.get_inputs()[0].name: np.asarray(X, np.float32)})[0])


def test_replay_equals_onnxruntime_sums():
    from fairlens.certify import read_model

    for kind in ("rf", "gb", "lgb"):
        for n_classes in (2, 3):
            _, onx, X, _ = _convert(kind, n_classes, n_trees=8, depth=3)
            bm = read_model(onx)
            rep, lib = bm.replay_scores(X), bm.library_scores(X)
            np.testing.assert_allclose(rep - rep[:, :1], lib - lib[:, :1], rtol=0, atol=1e-5)
            np.testing.assert_array_equal(bm.predict(X), _run(onx, X))


def test_refusals_name_the_model():
    from skl2onnx import convert_sklearn
    from skl2onnx.common.data_types import FloatTensorType
    from sklearn.ensemble import RandomForestRegressor

    X, y = _data(2)
    reg = convert_sklearn(RandomForestRegressor(3, max_depth=2, random_state=0).fit(X, y),
                          initial_types=[("X", FloatTensorType([None, 4]))])
    with pytest.raises(TypeError, match="model.*regressor"):
        certify(reg, X, y)
    _, onx, Xt, yt = _convert("rf", 2)
    node = next(n for n in onx.graph.node if n.op_type == "TreeEnsembleClassifier")
    for a in node.attribute:
        if a.name == "nodes_modes":
            modes = [b"BRANCH_EQ" if m == b"BRANCH_LEQ" else m for m in a.strings]
            a.ClearField("strings")
            a.strings.extend(modes)
    with pytest.raises(ValueError, match="model.*BRANCH_EQ"):
        certify(onx, Xt, yt)
    ok, why = can_certify(onx)
    assert not ok and "BRANCH_EQ" in why
    _, good, _, _ = _convert("gb", 3)
    assert can_certify(good) == (True, "ONNX TreeEnsembleClassifier")
