"""Boosted certification against dtai-veritas (Devos et al., "Versatile Verification of Tree
Ensembles"), an independent verifier of boxes.

For every correctly classified row and every set ``F`` of ``b`` features, a box frees the
features of ``F`` and fixes the others at the row's values; veritas maximises the contrast
``s_c - s_y`` (multi-class: ``AddTree.contrast_classes``) or the binary margin towards the wrong
side. A row is attackable iff some box reaches the wrong class. fairlens must agree row by row.
"""
import itertools

import numpy as np
import pytest

from fairlens.certify import certify
from tests.contract.certify.test_boosted import KINDS, _fit

veritas = pytest.importorskip("veritas")

ROBUST = ("certified_flb", "certified_elb", "robust_brute")


def _optimum(at, box, maximise):
    cfg = veritas.Config(veritas.HeuristicType.MAX_OUTPUT if maximise else veritas.HeuristicType.MIN_OUTPUT)
    cfg.stop_when_optimal = True
    search = cfg.get_search(at, box)
    while search.step_for(10.0, 10_000) != veritas.StopReason.OPTIMAL:
        pass
    return search.get_solution(0).output


def veritas_attackable(model, x, yi, budget, n_classes):
    """Whether some change of ``budget`` features flips the model, according to veritas."""
    at = veritas.get_addtree(model, silent=True)
    d = x.shape[0]
    targets = []
    if n_classes == 2:
        targets.append((at, yi == 0))  # y=0: can the margin rise above 0? y=1: fall below 0?
    else:
        targets += [(at.contrast_classes(c, yi), True) for c in range(n_classes) if c != yi]
    for F in itertools.combinations(range(d), budget):
        box = [veritas.Interval() if f in F else veritas.Interval(float(x[f]), float(np.nextafter(x[f], np.inf)))
               for f in range(d)]
        for tree, maximise in targets:
            val = _optimum(tree, box, maximise)
            if (maximise and val > 0) or (not maximise and val < 0):
                return True
    return False


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "hgb"])  # veritas has no HGB converter
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("budget", [1, 2])
def test_agrees_with_veritas(kind, n_classes, budget):
    model, X, y = _fit(kind, n_classes, n_trees=4, depth=2)
    X = X[:15].astype(np.float32).astype(np.float64)  # float32 numbers: same value for every library
    y = y[:15]
    res = certify(model, X, y, budget=budget)
    pred = model.predict(X)
    classes = list(model.classes_)
    for i in range(X.shape[0]):
        if pred[i] != y[i]:
            assert res.status[i] == "misclassified"
            continue
        att = veritas_attackable(model, X[i], classes.index(y[i]), budget, n_classes)
        assert (res.status[i] == "attackable") == att, (i, res.status[i])
        assert (res.status[i] in ROBUST) == (not att)
