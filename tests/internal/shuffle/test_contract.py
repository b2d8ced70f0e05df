"""The one contract (issue 21) for the shuffle slice: results share the Result surface,
ShuffledModel is keyword-only after the model, old names warn, one random-state policy."""
import json

import numpy as np
import pandas as pd

from fairlens._base import Result
from fairlens.shuffle import ShuffledModel, batch_consistency, shuffle_scores
from tests.contract.shuffle.test_contract import X, _f  # noqa: F401 (fixtures)


def test_results_share_the_result_surface(X):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = ShuffledModel(_f, protected=2, favoured=1, attack="mixing", random_state=3)
    batch = m.attack_batch(X)
    cons = batch_consistency(m, X, random_state=4)
    for res in (batch, cons):
        assert isinstance(res, Result)
        s = res.summary()
        assert isinstance(s, pd.DataFrame) and len(s) == 1
        json.dumps(res.to_dict(), allow_nan=False)
        assert isinstance(res._repr_html_(), str)
        assert res.plot() is not None
        plt.close("all")
    assert batch.random_state == 3 and cons.random_state == 4
    assert cons.summary()["suspicious"].iloc[0] and str(cons) == cons.verdict
    assert cons.verdict.startswith("SUSPICIOUS")


def test_int_seed_gives_the_same_coins_as_before(X):
    """random_state=int seeds numpy.random.default_rng(int), as before the contract."""
    y = _f(X)
    fav = X[:, 2] == 1
    got = shuffle_scores(y, fav, "mixing", p=0.6, random_state=11)
    from fairlens.shuffle._reference import algorithm1, mixing_reference

    coins = np.random.default_rng(11).random(len(y))
    ref = algorithm1(y, fav, mixing_reference, coins=coins, prob=0.6)
    np.testing.assert_array_equal(got, np.asarray(ref, dtype=float))
    # a model advances one generator call after call, like before
    m = ShuffledModel(_f, protected=2, favoured=1, attack="mixing", p=0.6, random_state=11)
    np.testing.assert_array_equal(m(X), got)
    assert m.random_state_ == 11
