"""Detection by explainers (tiny sizes: SHAP/LIME are slow) and fairness before/after."""

import numpy as np
import pandas as pd
import pytest


def test_rank_semantics_hand_example():
    from fairlens.shuffle._detect import _summarise

    phi = np.array([[0.5, 0.0, 0.0, -0.2],
                    [0.3, -0.3, 0.0, 0.0]])
    df = pd.DataFrame(_summarise("x", phi, ["a", "b", "c", "d"], [1])).set_index("feature")
    assert df.loc["a", "top1"] == 1.0            # 1st in row 0, tied 1st in row 1
    assert df.loc["b", "top1"] == 0.5 and df.loc["b", "top2"] == 0.0  # zero in row 0: unranked
    assert df.loc["d", "top2"] == 0.5 and df.loc["d", "top1"] == 0.0
    assert (df.loc["c", ["top1", "top2", "top3"]] == 0).all()      # never attributed, never ranked
    assert df.loc["d", "mean_abs"] == pytest.approx(0.1) and df.loc["d", "mean"] == pytest.approx(-0.1)
    assert df.loc["b", "protected"] and not df.loc["a", "protected"]
