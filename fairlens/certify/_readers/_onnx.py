"""Reader of ONNX ``TreeEnsembleClassifier`` models (``ai.onnx.ml``), certified against onnxruntime.

The model is an ``onnx.ModelProto`` (as skl2onnx writes it for scikit-learn forests and gradient
boosting, and onnxmltools for XGBoost/LightGBM) with one float input and one
``TreeEnsembleClassifier`` node whose *label* output is a graph output; what is certified is that
label as ``onnxruntime.InferenceSession.run`` computes it. onnxruntime decides the label from the
summed leaf weights before any ``post_transform`` (which only rewrites the score output), so the
model is an additive ensemble read like every boosted one:

* every node compares the float32 input with a float32 value: ``BRANCH_LEQ`` (``x <= v`` true),
  ``BRANCH_LT`` (``x < v``: ``x <= v^-``, the float32 below), ``BRANCH_GTE``/``BRANCH_GT`` (the
  negations: the false branch is the engine's left child); ``BRANCH_EQ``/``BRANCH_NEQ`` are refused.
  NaN goes to the true branch where ``nodes_missing_value_tracks_true`` is set, else to the false
  branch (every comparison with NaN is false);
* a leaf adds its ``class_weights`` to the scores of its ``class_ids``: a tree is written as one
  scalar tree per class it weighs (same splits), summed in float32 in tree order;
* more than two classes: ``argmax`` of ``base_values + sums`` (first class on ties);
* two labels with the weights of one class (``class_ids`` all 0, as the converters write them):
  the positive label iff ``sum + base_values[0] > 0.5`` when no weight is negative, else ``> 0``
  (onnxruntime's binary rule); the threshold is the engine's base score of the negative class.

onnxruntime may add the trees in another order (threads), so the ambiguity zone of the replay is at
least the worst-case float32 error of any summation order; a candidate inside it is decided by
onnxruntime itself. Refused (``ValueError`` naming ``model``): regressors (``TreeEnsembleRegressor``)
and any graph whose label is not the classifier's own output, double-precision ensembles
(``*_as_tensor``), ``BRANCH_EQ``/``BRANCH_NEQ``, and label rules onnxruntime leaves unspecified.
"""
from __future__ import annotations

import numpy as np

from .._ensemble import Library, assemble
from . import Reader, loaded_classes

_MODES = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "LEAF"}


def _claims(model):
    classes = loaded_classes("onnx", "ModelProto")
    return bool(classes) and isinstance(model, classes)


class OnnxLibrary(Library):
    """onnxruntime's own label (the model as given) and raw sums (the classifier node alone, without
    ``post_transform``); the sessions are made once per model and process."""

    def __init__(self, input_name, label_name, node_label, threshold, binary):
        self.input_name, self.label_name, self.node_label = input_name, label_name, node_label
        self.threshold, self.binary = float(threshold), bool(binary)
        self._sessions = {}

    def __getstate__(self):  # sessions are not pickled (a worker makes its own)
        state = dict(self.__dict__)
        state["_sessions"] = {}
        return state

    def _session(self, key, proto):
        sess = self._sessions.get(key)
        if sess is None:
            import onnxruntime as ort

            opts = ort.SessionOptions()
            opts.intra_op_num_threads = 1
            sess = self._sessions[key] = ort.InferenceSession(proto.SerializeToString(), opts,
                                                              providers=["CPUExecutionProvider"])
        return sess

    def predict(self, model, X64):
        sess = self._session("model", model)
        return np.asarray(sess.run([self.label_name], {self.input_name: np.asarray(X64, np.float32)})[0])

    def raw_scores(self, model, X64):
        sess = self._session("raw", _raw_model(model, self.node_label))
        z = np.asarray(sess.run(None, {self.input_name: np.asarray(X64, np.float32)})[1], dtype=np.float64)
        if self.binary:  # onnxruntime writes [1 - S, S] or [-S, S]: S is the positive score
            return np.column_stack([np.full(z.shape[0], self.threshold), z[:, -1]])
        return z

    def accepts_nan(self, model):
        return True


def _node(model, label_name=None):
    nodes = [n for n in model.graph.node if n.op_type in ("TreeEnsembleClassifier", "TreeEnsembleRegressor",
                                                          "TreeEnsemble")]
    if label_name is not None:
        return next(n for n in nodes if n.output[0] == label_name)
    return nodes


def _raw_model(model, label_name):
    """The classifier node alone with ``post_transform="NONE"``: its second output is the raw sums."""
    import onnx
    from onnx import helper

    node = onnx.NodeProto()
    node.CopyFrom(_node(model, label_name))
    for a in node.attribute:
        if a.name == "post_transform":
            a.s = b"NONE"
    strings = any(a.name == "classlabels_strings" and len(a.strings) for a in node.attribute)
    ltype = onnx.TensorProto.STRING if strings else onnx.TensorProto.INT64
    outs = [helper.make_tensor_value_info(node.output[0], ltype, [None]),
            helper.make_tensor_value_info(node.output[1], onnx.TensorProto.FLOAT, [None, None])]
    graph = helper.make_graph([node], "raw_scores", [model.graph.input[0]], outs)
    return helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version)


def _label_output(model, node):
    """The graph output the classifier's label reaches through Identity/Cast nodes (which keep the labels:
    a Cast to int64 or string), or a ValueError naming ``model``."""
    outputs = {o.name for o in model.graph.output}
    name = node.output[0]
    while name not in outputs:
        users = [n for n in model.graph.node if name in n.input]
        keeps = len(users) == 1 and (users[0].op_type == "Identity" or (
            users[0].op_type == "Cast" and any(a.name == "to" and a.i in (7, 8) for a in users[0].attribute)))
        if not keeps:
            raise ValueError("model: the TreeEnsembleClassifier's label is not a graph output (other nodes transform "
                             "it); such graphs are not certified.")
        name = users[0].output[0]
    return name


def _attrs(node):
    from onnx import helper

    out = {}
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode()
        elif isinstance(v, list) and v and isinstance(v[0], bytes):
            v = [s.decode() for s in v]
        out[a.name] = v
    return out


def _read(model):
    nodes = _node(model)
    if nodes and not any(n.op_type == "TreeEnsembleClassifier" for n in nodes):
        raise TypeError("model is an ONNX tree ensemble regressor: certify decides a class; pass a model whose label "
                        "comes from a TreeEnsembleClassifier.")
    clf = [n for n in nodes if n.op_type == "TreeEnsembleClassifier"]
    if len(nodes) != 1 or len(clf) != 1 or len(model.graph.input) != 1:
        raise ValueError("model must be an ONNX graph with one input and one TreeEnsembleClassifier (found "
                         f"{len(nodes)} tree ensemble node(s), {len(model.graph.input)} input(s)); other graphs are "
                         "not certified.")
    label = _label_output(model, clf[0])
    node = clf[0]
    inp = model.graph.input[0]
    if node.input[0] != inp.name:
        raise ValueError("model: the TreeEnsembleClassifier must read the graph input directly (a transform "
                         "before it is not certified); certify the ensemble on the transformed rows.")
    if inp.type.tensor_type.elem_type != 1:  # onnx.TensorProto.FLOAT
        raise ValueError("model: only float (float32) inputs are certified.")
    a = _attrs(node)
    unsupported = [k for k in ("nodes_values_as_tensor", "class_weights_as_tensor", "base_values_as_tensor") if k in a]
    if unsupported:
        raise ValueError(f"model: double-precision tree ensembles ({unsupported[0]}) are not certified.")
    modes = list(a["nodes_modes"])
    bad = sorted(set(modes) - _MODES)
    if bad:
        raise ValueError(f"model: node mode {bad[0]} is not certified (only BRANCH_LEQ/LT/GTE/GT splits).")
    labels = a.get("classlabels_int64s") or a.get("classlabels_strings")
    classes = np.asarray(labels)
    K = len(classes)
    tids, nids = np.asarray(a["nodes_treeids"]), np.asarray(a["nodes_nodeids"])
    feats, vals = np.asarray(a["nodes_featureids"]), np.asarray(a["nodes_values"], dtype=np.float32)
    true_ids, false_ids = np.asarray(a["nodes_truenodeids"]), np.asarray(a["nodes_falsenodeids"])
    tracks = np.asarray(a.get("nodes_missing_value_tracks_true", [0] * len(modes)), dtype=bool)
    if tracks.size == 0:
        tracks = np.zeros(len(modes), bool)
    c_tree, c_node = np.asarray(a["class_treeids"]), np.asarray(a["class_nodeids"])
    c_id, c_w = np.asarray(a["class_ids"]), np.asarray(a["class_weights"], dtype=np.float32)
    base_values = np.asarray(a.get("base_values", []), dtype=np.float32)
    weighed = sorted(set(int(c) for c in c_id))
    binary = K == 2 and len(weighed) == 1
    if K == 2 and not binary:
        raise ValueError("model: a two-class ensemble weighing both classes is not certified (onnxruntime's rule "
                         "for it is unspecified); convert it with one score column.")
    if binary and weighed != [0]:
        raise ValueError("model: a two-class ensemble weighing only class 1 is not certified.")
    all_pos = not bool(np.any(c_w < 0))
    threshold = 0.5 if all_pos else 0.0
    n_features = int(feats.max()) + 1 if feats.size else 0
    dims = inp.type.tensor_type.shape.dim
    if len(dims) == 2 and dims[1].HasField("dim_value"):
        n_features = max(n_features, int(dims[1].dim_value))
    lookup = {(int(t), int(n)): i for i, (t, n) in enumerate(zip(tids, nids))}
    weights = {}
    for t, n, c, w in zip(c_tree, c_node, c_id, c_w):
        weights.setdefault((int(t), int(n)), {})
        weights[(int(t), int(n))][int(c)] = weights[(int(t), int(n))].get(int(c), np.float32(0)) + w
    if K > 2 and base_values.size == 0:
        # a class must get a score on every row (onnxruntime leaves a class without one out of its argmax):
        # some tree must weigh it at every leaf
        for c in range(K):
            if not any(all(c in weights.get((t, int(n)), {}) for n in nids[(tids == t) & (np.asarray(modes) == "LEAF")])
                       for t in sorted(set(int(x) for x in tids))):
                raise ValueError(f"model: class {classes[c]!r} is not weighed at every leaf of some tree and there "
                                 "are no base_values (onnxruntime may leave it out of its argmax); not certified.")
    trees, groups = [], []
    for t in sorted(set(int(x) for x in tids)):
        for c in (weighed if K > 2 else [0]):
            trees.append(_tree(t, c, lookup, modes, feats, vals, true_ids, false_ids, tracks, weights))
            groups.append(1 if binary else c)
    if not trees:
        raise ValueError("model: the tree ensemble has no trees.")
    Kb = 2 if binary else K
    base = np.zeros(Kb)
    if binary:
        base[0] = threshold
        base[1] = float(base_values[0]) if base_values.size else 0.0
    elif base_values.size:
        base[:] = base_values.astype(np.float64)
    ens = assemble(trees, classes=classes, n_features=n_features, vote="additive", groups=groups, base=base,
                   f32=True, f32_input=True, eps=2.0**-24, source="ONNX TreeEnsembleClassifier", model=model,
                   library=OnnxLibrary(inp.name, label, node.output[0], threshold, binary))
    ens.tol = max(ens.tol, 4.0 * ens.acc_err)  # onnxruntime may add the trees in any order
    return ens


def _tree(t, c, lookup, modes, feats, vals, true_ids, false_ids, tracks, weights):
    """Tree ``t`` (its weights of class ``c``) as plain node arrays, pre-order from node id 0."""
    feat, thr, L, R, val, ML = [], [], [], [], [], []

    def add(nid):
        i = len(feat)
        feat.append(-1)
        thr.append(0.0)
        L.append(-1)
        R.append(-1)
        val.append(0.0)
        ML.append(False)
        k = lookup[(t, nid)]
        mode = modes[k]
        if mode == "LEAF":
            val[i] = float(weights.get((t, nid), {}).get(c, 0.0))
            return i
        v = np.float32(vals[k])
        feat[i] = int(feats[k])
        if mode in ("BRANCH_LT", "BRANCH_GTE"):  # x < v  <=>  x <= the float32 below v
            v = np.nextafter(v, np.float32(-np.inf))
        thr[i] = float(v)
        true_first = mode in ("BRANCH_LEQ", "BRANCH_LT")  # the true branch is the engine's left child
        ML[i] = bool(tracks[k]) == true_first
        a = add(int(true_ids[k]) if true_first else int(false_ids[k]))
        b = add(int(false_ids[k]) if true_first else int(true_ids[k]))
        L[i], R[i] = a, b
        return i

    add(min(n for (tt, n) in lookup if tt == t))  # the root: the tree's first node id
    return (np.asarray(feat, np.int64), np.asarray(thr, np.float64), np.asarray(L, np.int64), np.asarray(R, np.int64),
            np.asarray(val, np.float64), np.asarray(ML, bool))


READER = Reader("ONNX TreeEnsembleClassifier", _claims, _read)
