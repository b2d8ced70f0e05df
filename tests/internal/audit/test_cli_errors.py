"""`fairlens audit`: every bad input is one line on stderr and exit code 2, before any analysis.

Each case below is refused before the audit engine is called: ``no_audit`` makes any call of
``fairlens.audit.audit`` a test failure.
"""
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
