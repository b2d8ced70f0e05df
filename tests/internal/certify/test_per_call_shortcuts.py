"""Shortcuts that save certify's fixed per-call cost never change an answer or an error."""
import numpy as np

from fairlens.certify import certify
from tests.contract.certify.test_per_call_shortcuts import data  # noqa: F401 (fixtures)


def test_the_finite_attacker_on_finite_rows_does_not_ask_the_model_about_nan(data, monkeypatch):
    """missing=False with an X free of NaN: the model's predict is not probed with a NaN row (it is
    not needed); the result is the one certify gives when it probes."""
    from fairlens.certify._readers import _sklearn

    rf, X, y = data
    want = certify(rf, X, y, budget=1, missing=False)
    calls = []
    real = _sklearn.probe_nan
    monkeypatch.setattr(_sklearn, "probe_nan", lambda m: calls.append(m) or real(m))
    got = certify(rf, X, y, budget=1, missing=False)
    assert calls == []
    assert got.status.tolist() == want.status.tolist()
    assert got.params["nan_attack"] is False
    # rows with NaN, or the default threat model: the model is asked, as before
    Xn = X.copy()
    Xn[0, 0] = np.nan
    certify(rf, Xn, y, budget=1, missing=False)
    assert len(calls) == 1
    certify(rf, X, y, budget=1)
    assert len(calls) == 2
