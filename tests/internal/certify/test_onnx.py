"""The tests of ``tests/contract/certify/test_onnx.py`` that pin internals
(its docstring describes both halves)."""
import itertools

import numpy as np
import pytest

from fairlens.certify import certify
from fairlens.certify._reference import reference_candidates
from tests.contract.certify.test_onnx import _convert, _run

pytest.importorskip("skl2onnx")

ROBUST = ("certified_flb", "certified_elb", "robust_brute")


def _oracle(model, onx, X, y, budget, missing):
    cands = reference_candidates(model, missing=missing)
    used = sorted(cands)
    pred = _run(onx, X)
    out = []
    for i in range(X.shape[0]):
        if pred[i] != y[i]:
            out.append(None)
            continue
        rows = []
        for F in itertools.combinations(used, min(budget, len(used))):
            for combo in itertools.product(*[cands[f] for f in F]):
                xp = X[i].copy()
                xp[list(F)] = combo
                rows.append(xp)
        out.append(bool(np.all(_run(onx, np.asarray(rows)) == y[i])))
    return out


@pytest.mark.parametrize("kind", ["rf", "gb", "lgb"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("budget", [1, 2])
def test_exact_against_onnxruntime(kind, n_classes, budget):
    model, onx, X, y = _convert(kind, n_classes)
    X, y = X[:12], y[:12]
    for missing in ("auto", False):
        ref = _oracle(model, onx, X, y, budget, missing == "auto")
        for method in ("cascade", "brute"):
            res = certify(onx, X, y, budget=budget, method=method, missing=missing)
            assert res.params["nan_attack"] == (missing == "auto")
            for i, r in enumerate(ref):
                if r is None:
                    assert res.status[i] == "misclassified", (i, res.status[i])
                else:
                    assert (res.status[i] in ROBUST) == r, (i, res.status[i], r, missing)
            if res.witnesses:
                att = sorted(res.witnesses)
                W = np.vstack([res.witnesses[i] for i in att])
                assert np.all(_run(onx, W) != y[att])  # every witness flips onnxruntime's label
                for w, i in zip(W, att):
                    changed = np.flatnonzero(~((w == X[i]) | (np.isnan(w) & np.isnan(X[i]))))
                    assert 1 <= changed.size <= budget
