"""Issue 34 item 2: MAFT's engine in rooms of its own -- what the split must keep true."""
import inspect

import pytest

from fairlens.maft import ADF, AEQUITAS, EIDIG, MAFT, SG
from tests.contract.maft.test_maft_engine_rooms import MAFT_DIR, _snapshot


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_run_writes_nothing_onto_the_searcher(toy, smooth, monkeypatch, n_jobs):
    """The search object holds no per-run state: a run (sequential, or in shares on workers)
    leaves its attributes as they were -- same names, same objects, same values."""
    import fairlens.maft._plan as plan_mod

    monkeypatch.setattr(plan_mod, "MIN_PARALLEL_ROWS", 0)
    monkeypatch.setattr(plan_mod, "MIN_PARALLEL_GAIN", 0)
    s = MAFT(smooth, toy, n_seeds=40, n_local=6, random_state=1)
    s.draw_seeds()  # the seed memo lives in the problem, filled before the snapshot
    before = _snapshot(s)
    res = s.run(n_jobs=n_jobs)
    assert res.n_instances > 0
    assert _snapshot(s) == before
    if n_jobs == 2:
        assert "on 2 processes" in res.params["parallel"]


def test_every_search_parameter_is_documented_once():
    """The Parameters sections are written from one registry: each entry's text appears once in
    the package's source, every class documents exactly its signature, with its own defaults."""
    from fairlens.maft._searchers import _PARAMETER_DOCS

    source = "".join(p.read_text() for p in MAFT_DIR.glob("*.py"))
    for key, entry in _PARAMETER_DOCS.items():
        first_line = entry.splitlines()[1].strip()
        assert source.count(first_line) == 1, (key, first_line)
    for cls in (MAFT, EIDIG, ADF, AEQUITAS, SG):
        doc = cls.__doc__
        names = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
        for name in names:
            assert (f"\n    {name} :" in doc or f"\n    {name}, " in doc or f", {name} :" in doc
                    or f"\n    **{name}" in doc), (cls, name)
        assert "{parameters}" not in doc and "{default}" not in doc
    assert "decay : float in [0, 1), default=0.0" in ADF.__doc__  # ADF's own defaults (were copied as 0.5)
    assert "update_interval : int, default=1\n" in ADF.__doc__
    assert "decay : float in [0, 1), default=0.5" in MAFT.__doc__
    assert "epsilon : float > 0, default=1e-6" in EIDIG.__doc__
    assert 'engine : {"lockstep", "reference"}, default="lockstep"' in AEQUITAS.__doc__
