"""Property-based boundary tests of fairlens.maft (hypothesis).

Each public entry point gets bad and awkward inputs (NaN/inf, strings, bools, wrong
shapes and dtypes, reordered/missing/extra DataFrame columns, empty and single-row
frames, out-of-range parameters) and must give the correct result or a
``ValueError``/``TypeError`` whose message names the argument.  The models are cheap
closed-form callables, built once.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

from fairlens.maft import (  # noqa: E402
    AEQUITAS,
    MAFT,
    cosine_similarity,
    discrimination_rate,
    discriminatory_mask,
    retrain_with_instances,
    select_seeds,
    zero_order_gradient,
)
from tests._support.maft_oracle import is_discriminatory  # noqa: E402
from tests._support.maft_toy import SmoothModel, make_toy  # noqa: E402

TOY = make_toy(n=120)
MODEL = SmoothModel()
SEARCH = MAFT(MODEL, TOY, protected=["sex"])
RESULT = SEARCH.set_params(n_seeds=10, n_local=5, random_state=0).run()
FAST = settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))

junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4),
    st.lists(st.integers(0, 3), max_size=2),
)


def _names_arg(exc, *names):
    msg = str(exc)
    assert any(n in msg for n in names), f"message does not name {names}: {msg}"


def _valid_int(v, lo, hi=None):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= lo and (hi is None or v <= hi)


def _valid_real(v, lo=None, hi=None, lo_open=False, hi_open=False):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return False
    if lo is not None and (v <= lo if lo_open else v < lo):
        return False
    if hi is not None and (v >= hi if hi_open else v > hi):
        return False
    return True


# ----------------------------------------------------------------------------- constructors
PARAMS = {
    "h": lambda v: _valid_real(v, 0, lo_open=True),
    "max_iter": lambda v: _valid_int(v, 1),
    "global_step": lambda v: _valid_real(v, 0, lo_open=True),
    "local_step": lambda v: _valid_real(v, 0, lo_open=True),
    "decay": lambda v: _valid_real(v, 0, 1, hi_open=True),
    "update_interval": lambda v: _valid_int(v, 1),
    "n_clusters": lambda v: _valid_int(v, 1),
    "epsilon": lambda v: _valid_real(v, 0, lo_open=True),
    "vectored": lambda v: isinstance(v, bool),
}


@FAST
@given(name=st.sampled_from(sorted(PARAMS)), value=junk)
def test_constructor_parameters(name, value):
    try:
        s = MAFT(MODEL, TOY, protected=["sex"], **{name: value})
    except (TypeError, ValueError) as exc:
        assert not PARAMS[name](value), f"{name}={value!r} refused: {exc}"
        _names_arg(exc, name)
    else:
        assert PARAMS[name](value), f"{name}={value!r} accepted"
        assert s.get_params()[name] == value


@FAST
@given(value=st.one_of(junk, st.lists(st.sampled_from(["sex", "race", "age", "nope", 1, 7, True]), max_size=3)))
def test_protected(value):
    try:
        s = MAFT(MODEL, TOY, protected=value)
    except (TypeError, ValueError) as exc:
        _names_arg(exc, "protected")
    else:
        if value is None:
            assert s.protected == TOY.protected
        else:
            listed = [value] if isinstance(value, (str, int)) else list(value)
            assert s.protected == [TOY.feature_names[v] if isinstance(v, int) else v for v in listed]


# ----------------------------------------------------------------------------- run
RUN = {
    "n_seeds": lambda v: _valid_int(v, 1),
    "n_local": lambda v: _valid_int(v, 0),
    "random_state": lambda v: v is None or _valid_int(v, 0, 2**32 - 1),
    "engine": lambda v: v in ("lockstep", "reference"),
    "blas_threads": lambda v: v is None or _valid_int(v, 1),
    "track_explored": lambda v: isinstance(v, bool),
    "stop": lambda v: v is None,
    "callback": lambda v: v is None,
}


@FAST
@given(name=st.sampled_from(sorted(RUN)), value=st.one_of(junk, st.sampled_from(["lockstep", "reference"])))
def test_run_parameters(name, value):
    kw, how = {"n_seeds": 4, "n_local": 2}, {}
    (how if name in ("stop", "callback") else kw)[name] = value
    try:
        res = MAFT(MODEL, TOY, protected=["sex"], **kw).run(**how)
    except (TypeError, ValueError) as exc:
        assert not RUN[name](value), f"{name}={value!r} refused: {exc}"
        _names_arg(exc, name)
    else:
        assert RUN[name](value), f"{name}={value!r} accepted"
        assert res.n_instances >= 0


# ----------------------------------------------------------------------------- row inputs
def _frames():
    names = TOY.feature_names
    return st.sampled_from(
        [
            ("reordered", lambda X: pd.DataFrame(X, columns=names)[names[::-1]]),
            ("missing", lambda X: pd.DataFrame(X, columns=names).drop(columns=["edu"])),
            ("extra", lambda X: pd.DataFrame(X, columns=names).assign(bonus=1.0)),
            ("strings", lambda X: pd.DataFrame(X, columns=names).astype(str)),
            ("array", lambda X: X),
            ("transposed", lambda X: X.T),
            ("1d", lambda X: X[0]),
            ("nan", lambda X: np.where(np.arange(X.size).reshape(X.shape) == 0, np.nan, X)),
            ("inf", lambda X: np.where(np.arange(X.size).reshape(X.shape) == 1, np.inf, X)),
            ("empty", lambda X: X[:0]),
            ("list", lambda X: X.tolist()),
            ("text", lambda X: "rows"),
        ]
    )


def _rows(n):
    return st.integers(0, TOY.X.shape[0] - n).map(lambda i: TOY.X[i : i + n].copy())


@FAST
@given(kind=_frames(), X=st.integers(1, 4).flatmap(_rows))
def test_discriminatory_mask_inputs(kind, X):
    label, make = kind
    arg = make(X)
    expect = np.array([is_discriminatory(MODEL, x, [1], TOY.bounds) for x in X])
    try:
        m = discriminatory_mask(MODEL, TOY, arg, protected=["sex"])
    except (TypeError, ValueError) as exc:
        assert label not in ("reordered", "array", "list", "empty"), f"{label} refused: {exc}"
        _names_arg(exc, "X")
    else:
        assert label in ("reordered", "array", "list", "empty", "1d", "strings", "transposed") or False
        if label == "empty":
            assert m.shape == (0,)
        elif label in ("reordered", "array", "list", "strings"):
            np.testing.assert_array_equal(m, expect)
        else:  # pragma: no cover - must not be accepted
            raise AssertionError(f"{label} accepted")


@FAST
@given(kind=_frames(), X=st.integers(1, 3).flatmap(_rows), h=st.sampled_from([1.0, 0.5, 0.0, -1.0, np.nan, "1"]))
def test_zero_order_gradient_inputs(kind, X, h):
    label, make = kind
    try:
        G = zero_order_gradient(MODEL, make(X), h=h, data=TOY)
    except (TypeError, ValueError) as exc:
        _names_arg(exc, "X", "h")
        assert not (label in ("reordered", "array", "list") and h in (1.0, 0.5)), f"{label}, h={h!r}: {exc}"
    else:
        assert h in (1.0, 0.5)
        assert label in ("array", "list", "1d", "reordered", "strings", "transposed")
        if label in ("array", "list", "reordered"):
            # by hand: (f(x + h e_i) - f(x)) / h, negated where f(x) <= 0.5
            ref = np.array([[(MODEL(x[None] + h * np.eye(6)[i][None])[0] - MODEL(x[None])[0]) / h
                             for i in range(6)] for x in X])
            ref[MODEL(X) <= 0.5] *= -1
            np.testing.assert_allclose(G, ref, rtol=1e-9, atol=1e-12)


@FAST
@given(
    A=hnp.arrays(np.float64, st.tuples(st.integers(0, 3), st.integers(1, 4)),
                 elements=st.floats(-10, 10) | st.just(np.nan)),
    transpose=st.booleans(),
)
def test_cosine_similarity(A, transpose):
    B = A.T if transpose else A[::-1].copy()
    try:
        c = cosine_similarity(A, B)
    except (TypeError, ValueError) as exc:
        _names_arg(exc, "A", "B")
        assert (not np.all(np.isfinite(A))) or A.shape != B.shape
    else:
        assert c.shape == (A.shape[0],)
        fin = np.isfinite(c)
        assert np.all(np.abs(c[fin]) <= 1 + 1e-12)


# ----------------------------------------------------------------------------- rates and seeds
RATE = {
    "n_samples": lambda v: _valid_int(v, 1, 10**7),
    "confidence": lambda v: _valid_real(v, 0, 1, lo_open=True, hi_open=True),
    "sample": lambda v: v in ("domain", "data"),
    "random_state": lambda v: v is None or _valid_int(v, 0, 2**32 - 1),
}


@FAST
@given(name=st.sampled_from(sorted(RATE)),
       value=st.one_of(junk, st.sampled_from(["domain", "data", 0.5, 10**9, 1.5, 0.0, 1.0])))
def test_discrimination_rate_parameters(name, value):
    kw = {"n_samples": 30, name: value}
    try:
        r = discrimination_rate(MODEL, TOY, ["sex"], **kw)
    except (TypeError, ValueError) as exc:
        assert not RATE[name](value), f"{name}={value!r} refused: {exc}"
        _names_arg(exc, name)
    else:
        assert RATE[name](value), f"{name}={value!r} accepted"
        assert 0 <= r["low"] <= r["rate"] <= r["high"] <= 1


@FAST
@given(
    pool=hnp.arrays(np.float64, st.tuples(st.integers(0, 6), st.integers(0, 3)),
                    elements=st.floats(-5, 5) | st.sampled_from([np.nan, np.inf])),
    n_seeds=st.one_of(st.integers(-1, 8), st.floats(0, 3), st.text(max_size=2)),
)
def test_select_seeds(pool, n_seeds):
    try:
        out = select_seeds(pool, n_seeds, n_clusters=2, random_state=0)
    except (TypeError, ValueError) as exc:
        _names_arg(exc, "pool", "n_seeds")
    else:
        assert _valid_int(n_seeds, 1) and pool.size and np.all(np.isfinite(pool))
        assert out.shape == (min(n_seeds, pool.shape[0]), pool.shape[1])
        rows = {tuple(r) for r in pool}
        assert all(tuple(r) in rows for r in out)


RETRAIN = {
    "fraction": [0.0, -0.1, 1.5, np.nan, "a"],
    "test_size": [0.0, 1.0, 2, np.inf, None],
    "labelling": ["vote", "", None, 1],
    "n_samples": [0, 10**9, 2.5, "x"],
    "random_state": [-1, "abc", 1.5, 2**40],
    "add_similar": ["yes", None, 1],
}


@FAST
@given(name=st.sampled_from(sorted(RETRAIN)), data=st.data())
def test_retrain_parameters_refused(name, data):
    value = data.draw(st.sampled_from(RETRAIN[name]))
    with pytest.raises((TypeError, ValueError)) as err:
        retrain_with_instances(MODEL, TOY, RESULT, ["sex"], **{name: value})
    _names_arg(err.value, name)


@FAST
@given(max_rows=st.one_of(st.integers(-3, 50), st.floats(allow_nan=True), st.text(max_size=2), st.none()))
def test_result_to_frame(max_rows):
    try:
        fr = RESULT.to_frame(max_rows=max_rows)
    except (TypeError, ValueError) as exc:
        _names_arg(exc, "max_rows")
        assert not (max_rows is None or _valid_int(max_rows, 0))
    else:
        assert len(fr) == (RESULT.n_instances if max_rows is None else min(max_rows, RESULT.n_instances))


@FAST
@given(kind=_frames(), X=st.integers(1, 4).flatmap(_rows))
def test_run_with_explicit_seeds(kind, X):
    label, make = kind
    try:
        res = AEQUITAS(MODEL, TOY, protected=["sex"], n_local=2, seeds=make(X), random_state=0).run()
    except (TypeError, ValueError) as exc:
        _names_arg(exc, "seeds")
        assert label not in ("reordered", "array", "list")
    else:
        assert label in ("reordered", "array", "list", "strings", "1d", "transposed")
        assert label not in ("1d", "transposed") or False
        ref = AEQUITAS(MODEL, TOY, protected=["sex"], n_local=2, seeds=X, random_state=0).run()
        np.testing.assert_array_equal(res.instances, ref.instances)
