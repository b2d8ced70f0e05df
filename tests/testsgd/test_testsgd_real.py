"""TestSGD on the mirrored real datasets (skipped without the mirror)."""
import pytest
from sklearn.linear_model import LogisticRegression

from fairlens.testsgd import TestSGD, frequent_rule_sets, frequent_rule_sets_bruteforce
from fairlens.testsgd.paper import AGE_BINS, paper_kwargs


@pytest.mark.parametrize("name", ["german_credit", "law_school", "compas"])
def test_mining_equals_bruteforce_on_real_data(require_data, name):
    from fairlens.datasets import load_dataset

    ds = load_dataset(name)
    kw = paper_kwargs(ds)
    sens = kw.pop("protected")
    fr = frequent_rule_sets(ds, sens, 0.05, **kw)
    bf = frequent_rule_sets_bruteforce(ds, sens, 0.05, **kw)
    assert {str(r): int(c) for r, c in zip(fr.rule_sets, fr.counts)} == bf
    assert len(fr) > 10


def test_crime_threshold_pairs(require_data):
    from fairlens.datasets import load_dataset

    ds = load_dataset("crime")
    sens = ds.protected[:4]
    fr = frequent_rule_sets(ds, sens, 0.05, rule_form="threshold", max_size=2)
    bf = frequent_rule_sets_bruteforce(ds, sens, 0.05, rule_form="threshold", max_size=2)
    assert {str(r): int(c) for r, c in zip(fr.rule_sets, fr.counts)} == bf
    assert all(len(r) <= 2 for r in fr.rule_sets)
    # one-sided rules only: "x<edge" or "x>=edge"
    assert all("<=" not in str(r) for r in fr.rule_sets)
    with pytest.raises(ValueError, match="max_rule_sets"):
        frequent_rule_sets(ds, ds.protected, 0.05, max_rule_sets=10_000)


def test_compas_report_readable(require_data):
    from fairlens.datasets import load_dataset

    ds = load_dataset("compas")
    model = LogisticRegression(max_iter=2000).fit(ds.X, ds.y)
    rep = TestSGD(model, ds, protected=["sex", "age", "race"], bins={"age": AGE_BINS}, sample_thr=300,
                  random_state=0).run()
    df = rep.top(5)
    assert df["rule_set"].str.contains("sex=Male|sex=Female|race|age").all()
    assert any(c in " ".join(df["rule_set"]) for c in ("African-American", "Caucasian", "Hispanic", "Other"))
    assert 0 < rep.accuracy < 1 and rep.n_rule_sets == len(rep.frequent)
    assert (rep.to_frame()["support"].dropna() >= 0.05 - 1e-12).all()
