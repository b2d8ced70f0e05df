"""Issue 22 regressions for TestSGD's slice: each reproducer gave a silently wrong answer or a
crash deep inside; now the right answer or a ValueError naming the argument."""
import numpy as np
import pytest

from fairlens.testsgd import FairFictPlay, audit_subgroups, single_rules
from fairlens.testsgd._fairfictplay import _encode_protected
from fairlens.testsgd._rules import as_table
from tests._support.testsgd_fixtures import make_toy
from tests.contract.testsgd.test_hostile_inputs import german_readable  # noqa: F401 (fixtures)


@pytest.mark.parametrize("metric", ["FP", "FN"])
def test_fairfictplay_label_spelling_of_the_favourable_class(german_readable, metric):
    """FairFictPlay(..., metric="FP", favourable="good") compared the 0/1 y with "good",
    so every row counted as negative (gamma 0.0305, baseline 0.772 instead of 0.0113, 0.48).
    Both spellings must give the answer computed by hand."""
    ds, pipe = german_readable
    assert set(pipe.classes_) == {"good", "bad"}
    col = list(pipe.classes_).index("good")
    d = (pipe.predict_proba(ds.frame[ds.feature_names])[:, col] >= 0.5).astype(float)
    truth = (ds.frame[ds.target].to_numpy() == "good").astype(int)
    np.testing.assert_array_equal(truth, ds.y)  # fairlens y: 1 = favourable ("good")
    Xp, _ = _encode_protected(as_table(ds), ["sex", "age"])
    expected = audit_subgroups(d, Xp, y=truth, metric=metric)
    for fav in ("good", 1):
        got = FairFictPlay(pipe, ds, protected=["sex", "age"], metric=metric, favourable=fav).audit()
        assert got.gamma == pytest.approx(expected["gamma"], abs=1e-12), fav
        assert got.baseline == pytest.approx(expected["baseline"], abs=1e-12), fav
        np.testing.assert_array_equal(got.members, expected["members"])
    # the baseline of the FP audit is the false-positive rate: about half of the "bad" rows
    assert 0.3 < expected["baseline"] < 0.65 if metric == "FP" else True


def test_single_rules_takes_a_dataset_directly():
    """Tutorial 03 imported the private ``testsgd._rules.as_table`` to call ``single_rules``."""
    toy = make_toy(n=200)
    a = single_rules(toy, "race")
    b = single_rules(as_table(toy), "race")
    assert [str(r) for r in a] == [str(r) for r in b] and len(a) == 14
