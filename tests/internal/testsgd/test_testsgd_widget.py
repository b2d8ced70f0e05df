"""RuleSetBrowser driven headless through .controls, wait() and snapshot()."""

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from tests.contract.testsgd.test_testsgd_widget import browser  # noqa: F401 (fixtures)


@pytest.fixture(scope="module")
def parts(request):
    toy = request.getfixturevalue("toy") if "toy" in request.fixturenames else None
    return toy


def test_equivalent_rule_sets_are_merged(browser, toy):
    from fairlens.testsgd._rules import as_table

    X = as_table(toy).X
    masks = [browser.report.result_for(n).rule_set.mask(X) for n in browser.frame["rule_set"]]
    keys = {np.packbits(m).tobytes() for m in masks}
    assert len(keys) == len(masks)  # no two listed rule sets select the same rows
