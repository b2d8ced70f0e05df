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


def test_german_credit_identical_masks_are_one_finding():
    """Issue 36: on German credit (the tutorial's split and rule setup) ``age>=20`` and
    ``20<=age<90`` select the same 749 of 750 rows; they are one finding (the others its
    aliases), and its rest -- one 19-year-old applicant -- is counted and flagged."""
    from fairlens.datasets import load_dataset

    ds = load_dataset("german_credit", download=False)      # bundled: runs without the mirror
    tr, _ = ds.split(test_size=0.25, random_state=0)
    model = LogisticRegression(max_iter=2000).fit(tr.X, tr.y)
    kw = paper_kwargs(ds)
    sens = kw.pop("protected")
    rep = TestSGD(model, tr, protected=sens, theta=0.05, sample_thr=300, random_state=0, **kw).run()
    r = rep.result_for("age>=20")
    assert str(r.rule_set) == "age>=20" and {"20<=age<90", "20<=age<80"} <= set(r.aliases)
    assert rep.result_for("20<=age<90") is r
    age = tr.X[:, tr.index_of("age")]
    assert r.n_out == int((age < 20).sum()) == 1 and r.n_in == tr.n_samples - 1
    assert r.small_side == "rest" and rep.params["min_side_rows"] == 38   # ceil(5% of 750)
    masks = [x.rule_set.mask(tr.X).tobytes() for x in rep.results]
    assert len(set(masks)) == len(masks)                     # no group listed twice
    listed = {str(x.rule_set): x for x in rep.results}
    names = set(listed) | {a for x in rep.results for a in x.aliases}
    assert names == {str(rs) for rs in rep.frequent.rule_sets}   # nothing lost
    for x in rep.results:
        for a in x.aliases:
            rs = next(q for q in rep.frequent.rule_sets if str(q) == a)
            assert rs.mask(tr.X).tobytes() == x.rule_set.mask(tr.X).tobytes()
    df = rep.to_frame()
    assert df.loc[df.rule_set == "age>=20", "n_out"].iloc[0] == 1
