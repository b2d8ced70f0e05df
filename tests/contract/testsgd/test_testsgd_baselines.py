"""THEMIS baseline and rule-set-guided mitigation."""

import numpy as np
import pytest

from fairlens.testsgd import themis_group_discrimination

SENS = ["gender", "race", "age"]


class OnlySensitive:
    def predict_proba(self, X):
        p = ((X[:, 0] == 1) & (X[:, 2] >= 40)).astype(float)
        return np.column_stack([1 - p, p])


class OnlyEducation:
    def predict_proba(self, X):
        p = (X[:, 3] >= 8).astype(float)
        return np.column_stack([1 - p, p])


def test_themis_finds_extreme_subgroups(toy):
    r = themis_group_discrimination(OnlySensitive(), toy, SENS, n_samples=200, random_state=0)
    assert r.score == 1.0
    assert r.max_group.startswith("gender=male") and ("age>=" in r.max_group or "<=age<" in r.max_group)
    top = r.to_frame()
    assert set(top.loc[top.rate == 1.0, "subgroup"].str.startswith("gender=male")) == {True}
    # 2 genders x 4 races x 10 age bins overlapping the domain [10, 110]
    assert r.n_subgroups == 2 * 4 * 10 == len(r.rates)


def test_themis_uniform_domain_sampling(toy):
    # education is uniform on {0..9}: P(edu >= 8) = 0.2 in every subgroup
    r = themis_group_discrimination(OnlyEducation(), toy, SENS, n_samples=2000, random_state=1)
    assert np.all(np.abs(r.rates["rate"] - 0.2) < 4 * np.sqrt(0.2 * 0.8 / 2000))
    assert r.score < 0.08


def test_themis_limits(toy):
    with pytest.raises(ValueError, match="max_subgroups"):
        themis_group_discrimination(OnlySensitive(), toy, SENS, max_subgroups=10)
    a = themis_group_discrimination(OnlySensitive(), toy, ["gender"], n_samples=50, random_state=3)
    b = themis_group_discrimination(OnlySensitive(), toy, ["gender"], n_samples=50, random_state=3)
    assert a.rates.equals(b.rates)
