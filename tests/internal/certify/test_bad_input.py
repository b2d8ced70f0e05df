import numpy as np
import pytest

# --- issue 11: every public parameter validated at the boundary ------------------------
from fairlens.certify import (
    certify,
)
from tests.contract.certify.test_bad_input import data  # noqa: F401 (fixtures)


def test_memory_estimates_refuse_before_allocating(data, monkeypatch):
    import fairlens._validation as V

    rf, X, y = data
    monkeypatch.setattr(V, "MEMORY_LIMIT_BYTES", 1000)
    with pytest.raises(ValueError, match="memory.*smaller forest"):
        certify(rf, X, y)


@pytest.mark.parametrize("vote", ["soft", "hard"])
@pytest.mark.parametrize("prune", [True, False])
def test_bounded_work_resumes_to_the_same_answer(data, monkeypatch, vote, prune):
    import fairlens.certify._certify as C

    rf, X, y = data
    ref = certify(rf, X, y, budget=2, method="brute", vote=vote, prune=prune)
    monkeypatch.setattr(C, "_MAX_WORK", 1)  # return after every depth-0 feature of every row
    seen = []
    res = certify(rf, X, y, budget=2, method="brute", vote=vote, prune=prune,
                  progress=lambda s, d, t: seen.append((s, d)))
    np.testing.assert_array_equal(res.status, ref.status)
    assert res.witnesses.keys() == ref.witnesses.keys()
    for i in res.witnesses:
        np.testing.assert_array_equal(res.witnesses[i], ref.witnesses[i])
    assert res.n_evaluations == ref.n_evaluations
    brute_calls = [d for s, d in seen if s == "brute"]
    assert len(brute_calls) > len(set(brute_calls))  # some bounded calls finished no row (resumed)
