"""The tests of ``tests/contract/models/test_protocol.py`` that pin internals
(its docstring describes both halves)."""
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LogisticRegression

from fairlens import _validation as V
from fairlens.models import as_scorer
from tests.contract.models.test_protocol import german, readable_pipe  # noqa: F401 (fixtures)


def test_payload_ships_the_scorer_without_the_rows_and_scores_the_same(german, readable_pipe):
    """A parallel payload carries every scorer (top level, or one attribute down as in a MAFT
    search or a ShuffledModel) without its dataset's rows, and the shipped scorer gives the
    same scores bit for bit -- also a readable-frame pipeline, which decodes every row through
    the dataset's category tables and column dtypes; readable DataFrame input still works."""
    import pickle

    from fairlens._parallel import Payload
    from fairlens.maft import MAFT

    rows = german.X[::37]
    for model in (readable_pipe, LogisticRegression(max_iter=2000).fit(german.X, german.y)):
        s = as_scorer(model, german)
        h = MAFT(s, german, protected=["sex"], n_seeds=5, n_local=5, random_state=0)
        p = Payload(scorer=s, holder=h._spec(None).for_workers(), rows=rows)  # as the MAFT engine ships it
        q = pickle.loads(pickle.dumps(p))
        for shipped in (q.scorer, q.holder.scorer):
            assert shipped.data.n_samples == 0 and shipped.data.feature_names == german.feature_names
            assert shipped.input_kind == s.input_kind
            np.testing.assert_array_equal(shipped(rows), s(rows))
            np.testing.assert_array_equal(shipped(german.frame[german.feature_names].iloc[:9]), s(german.X[:9]))
        assert q.holder.method == "MAFT" and q.holder.problem.pool.shape[0] == 0  # the spec, without the pool
        assert h.scorer.data is german and s.data is german and h.problem.pool.shape[0] > 0  # the caller's untouched
        np.testing.assert_array_equal(q.rows, rows)
        assert p.nbytes() < len(pickle.dumps(german)) / 4


@settings(max_examples=60, deadline=None)
@given(value=st.one_of(st.none(), st.booleans(), st.integers(-5, 2**33), st.floats(allow_nan=True),
                       st.text(max_size=3), st.just(np.random.RandomState(0))))
def test_check_random_state_semantics(value):
    try:
        rs = V.check_random_state(value)
    except (TypeError, ValueError) as exc:
        assert "random_state" in str(exc)
        assert value is not None and not isinstance(value, np.random.RandomState)
        return
    assert isinstance(rs, np.random.RandomState)
    if isinstance(value, int) and not isinstance(value, bool):
        assert rs.randint(1 << 30) == np.random.RandomState(value).randint(1 << 30)


@settings(max_examples=60, deadline=None)
@given(value=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 3),
                       st.booleans(), st.text(max_size=2)))
def test_check_probability(value):
    try:
        p = V.check_probability("threshold", value)
    except (TypeError, ValueError) as exc:
        assert "threshold" in str(exc) and "got" in str(exc)
        return
    assert 0.0 <= p <= 1.0 and not isinstance(value, (bool, str))


def test_check_stop_conventions():
    ev = threading.Event()
    f = V.check_stop(ev)
    assert not f()
    ev.set()
    assert f()
    assert V.check_stop(lambda: True)()
    assert not V.check_stop(None)()
    with pytest.raises(TypeError, match="stop must be None, a threading.Event or a callable"):
        V.check_stop(3)


def test_check_memory_and_lists():
    with pytest.raises(ValueError, match=r"protected combinations would need about 8.0 GiB"):
        V.check_memory(8 * 1024**3, "protected combinations", "discretise the attribute.")
    assert V.check_memory(1024, "x", "y") == 1024
    with pytest.raises(TypeError, match=r"terms must be a list of strings, not a single string"):
        V.check_str_list("terms", "a gay man")
    with pytest.raises(TypeError, match="n_samples must be an integer >= 1; got 2.5"):
        V.check_int("n_samples", 2.5, min=1)
    with pytest.raises(ValueError, match=r"budget must be an integer in \[1, 4\]; got 5"):
        V.check_int("budget", 5, min=1, max=4)
