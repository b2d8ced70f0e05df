"""Shared fixtures-as-functions for the certify tests (small, seeded forests)."""
import numpy as np
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier


def toy_data(seed, n=120, d=5, n_classes=2):
    """Random data with a learnable signal; values rounded to 2 decimals so that
    thresholds are float64 midpoints that are not float32 numbers."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(0, 1, size=(n, d)), 2)
    score = X[:, 0] + X[:, 1] - X[:, 2] + 0.3 * rng.normal(size=n)
    if n_classes == 2:
        y = (score > 0.5).astype(int)
    else:
        y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y


def toy_forest(seed, n_trees=5, depth=3, kind="rf", n_classes=2, d=5):
    X, y = toy_data(seed, d=d, n_classes=n_classes)
    cls = RandomForestClassifier if kind == "rf" else ExtraTreesClassifier
    model = cls(n_estimators=n_trees, max_depth=depth, random_state=seed).fit(X[:80], y[:80])
    return model, X[80:], y[80:]


def bc_forest(seed, n_features=8, n_test=60):
    """A shallow random forest (max_features=1) on a random subset of breast
    cancer features: small enough for the literal references, varied enough
    that FLB, ELB and brute force each settle some instances."""
    from sklearn.datasets import load_breast_cancer

    Xb, yb = load_breast_cancer(return_X_y=True)
    rng = np.random.default_rng(seed)
    feats = rng.choice(Xb.shape[1], n_features, replace=False)
    idx = rng.permutation(len(yb))
    X, y = Xb[idx][:, feats], yb[idx]
    n_trees = int(rng.choice([9, 11, 15, 21]))
    depth = int(rng.integers(2, 4))
    model = RandomForestClassifier(n_estimators=n_trees, max_depth=depth, max_features=1,
                                   random_state=seed).fit(X[:300], y[:300])
    return model, X[300:300 + n_test], y[300:300 + n_test]


def bc_full_forest(seed, n_trees=21, depth=3, kind="rf"):
    """Shallow max_features=1 forest on all 30 breast cancer features: FLB, ELB
    and brute force each settle a good share of the 169 test rows at b = 2, 3."""
    from sklearn.datasets import load_breast_cancer

    Xb, yb = load_breast_cancer(return_X_y=True)
    idx = np.random.default_rng(0).permutation(len(yb))
    X, y = Xb[idx], yb[idx]
    cls = RandomForestClassifier if kind == "rf" else ExtraTreesClassifier
    model = cls(n_estimators=n_trees, max_depth=depth, max_features=1, random_state=seed).fit(X[:400], y[:400])
    return model, X[400:], y[400:]


# ---------------------------------------------------------------------------------------------
# missing values: an independent reading of LightGBM's dump and a plain walk of a read ensemble
# ---------------------------------------------------------------------------------------------
#: LightGBM's ``MissingType`` codes (as in its C++ ``decision_type`` bits): index = code.
LGB_MISSING_TYPES = ("None", "Zero", "NaN")


def lgb_nodes(model):
    """LightGBM trees as per-node arrays read from the raw dump, independently of the reader (pre-order:
    node, left subtree, right subtree; trees in ``tree_info`` order): ``feature``, ``threshold`` (as
    dumped), ``left``, ``right``, ``value``, ``default_left``, ``missing_type`` (codes of
    :data:`LGB_MISSING_TYPES`, -1 on leaves) and ``roots``."""
    booster = model.booster_ if hasattr(model, "booster_") else model
    dump = booster.dump_model()
    F, T, L, R, V, D, M, roots = [], [], [], [], [], [], [], []

    def add(node):
        i = len(F)
        F.append(-1)
        T.append(0.0)
        L.append(-1)
        R.append(-1)
        V.append(0.0)
        D.append(False)
        M.append(-1)
        if "leaf_value" in node or "split_feature" not in node:
            V[i] = float(node.get("leaf_value", 0.0))
            return i
        F[i] = int(node["split_feature"])
        T[i] = float(node["threshold"])
        D[i] = bool(node.get("default_left", True))
        M[i] = LGB_MISSING_TYPES.index(node.get("missing_type", "None"))
        a = add(node["left_child"])
        b = add(node["right_child"])
        L[i], R[i] = a, b
        return i

    for ti in dump["tree_info"]:
        roots.append(len(F))
        add(ti["tree_structure"])
    return {"feature": np.asarray(F, dtype=np.int64), "threshold": np.asarray(T, dtype=np.float64),
            "left": np.asarray(L, dtype=np.int64), "right": np.asarray(R, dtype=np.int64),
            "value": np.asarray(V, dtype=np.float64), "default_left": np.asarray(D, dtype=bool),
            "missing_type": np.asarray(M, dtype=np.int8), "roots": np.asarray(roots, dtype=np.int64)}


def route_leaves(ens, Xr, missing_left=None):
    """Leaf reached in every tree of the read ensemble ``ens`` (pure NumPy, no kernel): NaN goes to
    ``left if missing_left[node] else right`` (default: the reader's recorded ``ens.missing_left``),
    any other value left iff ``x <= threshold``. ``Xr``: the rows as the library reads them
    (``ens.round_X``), NaN kept. Returns (n_samples, n_trees) node indices."""
    ml = ens.missing_left if missing_left is None else missing_left
    Xr = np.asarray(Xr, dtype=np.float64)
    out = np.empty((Xr.shape[0], ens.n_trees), dtype=np.int64)
    for i in range(Xr.shape[0]):
        for t, r in enumerate(ens.roots):
            node = int(r)
            while ens.feature[node] >= 0:
                v = Xr[i, ens.feature[node]]
                if v != v:
                    node = int(ens.left[node] if ml[node] else ens.right[node])
                else:
                    node = int(ens.left[node] if v <= ens.threshold[node] else ens.right[node])
            out[i, t] = node
    return out


def check_smallest_first(res, ref, exact_order=True):
    """A time-limited ``res`` against the unlimited ``ref`` (same model, rows, budget): every settled
    row has ``ref``'s verdict, and its witness, the first attack on the fewest features, changes no
    more features than ``ref``'s. ``exact_order`` (forests, whose search order does not depend on the
    budget): a witness of the same size as ``ref``'s is ``ref``'s witness."""
    settled = res.status != "unknown"
    np.testing.assert_array_equal(res.status[settled], ref.status[settled])
    assert res.witnesses.keys() <= ref.witnesses.keys()
    for i in res.witnesses:
        mine, theirs = len(res.witness_changes[i][0]), len(ref.witness_changes[i][0])
        assert 1 <= mine <= theirs
        if exact_order and mine == theirs:
            np.testing.assert_array_equal(res.witnesses[i], ref.witnesses[i])
