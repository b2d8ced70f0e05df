"""The tests of ``tests/contract/audit/test_cli_errors.py`` that pin internals
(its docstring describes both halves)."""
from __future__ import annotations

import pytest


def test_multiclass_and_regression_lightgbm_files_are_refused(tmp_path):
    """Issue #33: a 3-class LightGBM model was reported as "returned shape (1800, 2) for 600 rows"."""
    lgb = pytest.importorskip("lightgbm")
    import numpy as np

    from fairlens.audit._cli import CliError, load_model

    X = np.random.default_rng(0).normal(size=(300, 3))
    y = np.arange(300) % 3
    lgb.LGBMClassifier(n_estimators=5, verbose=-1).fit(X, y).booster_.save_model(str(tmp_path / "m3.txt"))
    lgb.LGBMRegressor(n_estimators=5, verbose=-1).fit(X, y * 1.0).booster_.save_model(str(tmp_path / "r.txt"))
    with pytest.raises(CliError, match="'m3.txt' is a 3-class LightGBM model; the audit needs a binary"):
        load_model(tmp_path / "m3.txt")
    with pytest.raises(CliError, match="objective 'regression'"):
        load_model(tmp_path / "r.txt")
