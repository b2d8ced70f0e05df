"""Identity-term rules (Table 1, Eq. 3) and term-replacement sampling."""
import itertools

import numpy as np
import pytest

from fairlens.testsgd import (
    IDENTITY_TERMS,
    TermRule,
    TextRuleSet,
    TextSampler,
    test_text_model,
    text_frequent_rule_sets,
    text_group_fairness_score,
    text_group_fairness_score_reference,
)

TERMS = {"gender": ["gay", "straight", "trans"], "religion": ["taoist", "catholic", "muslim"],
         "race": ["african american", "african", "white"]}


def corpus(n=400, seed=0):
    rng = np.random.default_rng(seed)
    docs = []
    for _i in range(n):
        parts = ["this comment"]
        for _c, ts in TERMS.items():
            if rng.random() < 0.5:
                parts.append(f"mentions a {ts[rng.integers(len(ts))]} person")
        parts.append(["and is fine", "and is rude", "about transport"][rng.integers(3)])
        docs.append(" ".join(parts))
    return docs


class Biased:
    """Toxic iff the text says both 'gay' and 'taoist', or says 'rude'."""

    def predict_proba(self, docs):
        p = np.array([(("gay" in d.split()) and ("taoist" in d.split())) or ("rude" in d) for d in docs], float)
        return np.column_stack([1 - p, p])


def test_table1_has_48_terms():
    assert sum(len(v) for v in IDENTITY_TERMS.values()) == 48
    assert [len(v) for v in IDENTITY_TERMS.values()] == [14, 17, 9, 8]


def test_support_eq3_against_bruteforce():
    docs = corpus()
    fr = text_frequent_rule_sets(docs, None, 0.2, terms=TERMS)
    import re

    def contains(d, cat):
        return any(re.search(r"\b" + re.escape(t) + r"\b", d) for t in TERMS[cat])

    expect = {}
    cats = list(TERMS)
    for k in range(1, 4):
        for combo in itertools.combinations(cats, k):
            c = sum(all(contains(d, s) for s in combo) for d in docs)
            if c >= 0.2 * len(docs):
                for terms in itertools.product(*[TERMS[s] for s in combo]):
                    expect[", ".join(f'"{t}"' for t in terms)] = c
    assert {str(r): int(c) for r, c in zip(fr.rule_sets, fr.counts)} == expect
    # "transport" does not contain the term "trans"; "african american" is one term
    s = TextSampler(["about transport", "an african american"], TERMS)
    assert not s.has[0].any()
    assert s.has[1].tolist() == [False, False, True]


def test_samples_satisfy_or_violate_rule_set():
    docs = corpus()
    s = TextSampler(docs, TERMS)
    rs = TextRuleSet((TermRule("gender", "gay"), TermRule("religion", "taoist")))
    seeds = s.seeds(rs)
    rng = np.random.default_rng(0)
    for _ in range(200):
        u = rng.random(16)
        d_in = s.sample_in(rs, seeds, u[:8])
        words = d_in.split()
        assert "gay" in words and "taoist" in words
        assert not ({"straight", "trans", "catholic", "muslim"} & set(words))
        d_out = s.sample_out(rs, seeds, u[8:])
        w = d_out.split()
        assert not ("gay" in w and "taoist" in w)
    with pytest.raises(ValueError, match="distinct"):
        TextRuleSet((TermRule("gender", "gay"), TermRule("gender", "trans")))
    with pytest.raises(ValueError, match="unknown"):
        text_frequent_rule_sets(docs, ["nationality"], 0.1, terms=TERMS)


def test_text_reference_equals_batched_and_ranking():
    docs = corpus()
    rs = TextRuleSet((TermRule("gender", "gay"), TermRule("religion", "taoist")))
    kw = dict(terms=TERMS, sample_thr=150, random_state=4)
    a = text_group_fairness_score_reference(Biased(), docs, rs, **kw)
    b = text_group_fairness_score(Biased(), docs, rs, **kw)
    assert (a.n_samples, a.rate_in, a.rate_out) == (b.n_samples, b.rate_in, b.rate_out)
    assert a.rate_in == 1.0 and a.score > 0.4
    rep = test_text_model(Biased(), docs, theta=0.2, terms=TERMS, sample_thr=150, random_state=0)
    assert str(rep.results[0].rule_set) == '"gay", "taoist"'
    assert rep.n_model_rows >= 2 * sum(r.n_samples for r in rep.results)
