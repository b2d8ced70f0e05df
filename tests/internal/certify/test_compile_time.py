"""numba's first compilation cannot be interrupted by ``time_limit``: the result says how long the
call spent compiling (issue 37, item 2: "compile time is either counted or stated in the result")."""
import time

import numpy as np
import pytest

from fairlens.certify._common import compile_seconds
from tests.contract.certify.test_compile_time import JIT


@pytest.mark.skipif(not JIT, reason="NUMBA_DISABLE_JIT: nothing compiles")
def test_compile_seconds_counts_outermost_compilations_once():
    import numba

    @numba.njit
    def inner(x):
        return x * 2.0 + 1.0

    @numba.njit
    def outer(a):
        s = 0.0
        for v in a:
            s += inner(v)
        return s

    spent = [0.0]
    t0 = time.perf_counter()
    with compile_seconds(spent):
        assert outer(np.arange(3.0)) == 9.0   # compiles outer, and inner inside it
    wall = time.perf_counter() - t0
    assert 0.0 < spent[0] <= wall             # nested compilations are not counted twice
    again = [0.0]
    with compile_seconds(again):
        outer(np.arange(3.0))                 # compiled: nothing to count
    assert again == [0.0]
