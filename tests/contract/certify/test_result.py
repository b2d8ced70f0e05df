import matplotlib
import numpy as np
import pandas as pd

matplotlib.use("Agg")

from fairlens.certify import accuracy_under_attack, certify, flatten_forest  # noqa: E402
from tests._support.certify_helpers import bc_full_forest  # noqa: E402


def test_result_frames_and_plot():
    model, X, y = bc_full_forest(0, n_trees=21, depth=3)
    res = certify(model, X, y, budget=2)
    df = res.to_frame()
    assert len(df) == len(y) and list(df["status"]) == list(res.status)
    att = df["status"] == "attackable"
    assert att.any() and (df.loc[att, "witness"].str.len() > 0).all()
    assert (df.loc[~att, "witness"] == "").all()
    elb_rows = [i for i in res.covers]
    assert elb_rows and all(df.loc[i, "cover"].startswith("S") for i in elb_rows)
    s = res.summary()
    assert s.loc[0, "accuracy_exact"] == res.accuracy
    assert s.loc[0, "n_attackable"] == att.sum()
    ax = res.plot()
    assert ax.get_title().startswith("cascade")
    # counts add up, and accuracy is the share of robust instances
    assert sum(res.stage_counts.values()) == len(y)
    robust = np.isin(res.status, ["certified_flb", "certified_elb", "robust_brute"])
    assert res.accuracy == robust.mean()


def test_progress_chunks_and_dataframe_input_give_same_result():
    model, X, y = bc_full_forest(1, n_trees=15, depth=3)
    # missing=False: the forest's TreeEnsemble below keeps no model to ask whether predict takes NaN, so its
    # "auto" is the finite threat model; compare like with like (#24 item 4)
    a = certify(model, X, y, budget=2, missing=False)
    b = certify(model, pd.DataFrame(X), pd.Series(y), budget=2, progress=True, chunk_size=7, missing=False)
    np.testing.assert_array_equal(a.status, b.status)
    assert a.witnesses.keys() == b.witnesses.keys()
    ff = flatten_forest(model)
    c = certify(ff, X, y, budget=2)
    np.testing.assert_array_equal(a.status, c.status)


def test_accuracy_under_attack_is_monotone_in_budget():
    model, X, y = bc_full_forest(2, n_trees=21, depth=3)
    t = accuracy_under_attack(model, X, y, budgets=(1, 2, 3))
    assert list(t["budget"]) == [1, 2, 3]
    for col in ("accuracy_flb", "accuracy_elb", "accuracy_exact"):
        assert np.all(np.diff(t[col]) <= 0)  # a stronger attacker never helps the defender
    assert np.all(t["accuracy_exact"] <= t["accuracy_clean"])
