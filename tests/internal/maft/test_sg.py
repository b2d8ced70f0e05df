"""SG (Symbolic Generation, Aggarwal et al. 2019): local decision-tree paths solved with Z3."""

import numpy as np
import pytest

pytest.importorskip("z3")

from fairlens.maft import SG  # noqa: E402
from tests.contract.maft.test_sg import EDU, HOURS, region_model


def test_solver_respects_domain_and_thresholds(toy):
    import z3

    from fairlens.maft._sg import _Solver

    s = SG(region_model, toy, protected=["sex"], n_samples=200)
    solver = _Solver(z3, s._ilo, s._ihi)
    t = toy.X[0].copy()
    out = solver.solve([(EDU, False, 6.5), (HOURS, True, 2.5)], [EDU, HOURS], t)
    assert out[EDU] >= 7 and out[EDU] <= 9 and 0 <= out[HOURS] <= 2
    np.testing.assert_array_equal(np.delete(out, [EDU, HOURS]), np.delete(t, [EDU, HOURS]))
    assert solver.solve([(EDU, False, 9.5)], [EDU], t) is None  # edu <= 9 in the domain: unsat
