"""TestSGD for text classifiers: identity-term rules (Table 1, Eq. 3) and term-replacement sampling."""
from __future__ import annotations

import itertools
import math
import numbers
import re
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .._base import Interval, resolve_random_state, strict_keywords, validated
from .._validation import check_int, check_str_list
from ._rules import FrequentRuleSets, _check_theta, _min_count
from ._score import DEFAULT_MAX_SAMPLES, ScoreResult, _check_alg2_params, _margin, z_value


def _text_rng(random_state):
    """The generator of one text estimate: a Generator is used as is (how
    :func:`test_text_model` hands each rule set its own child stream), anything else is
    resolved once by :func:`fairlens._base.resolve_random_state`."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.default_rng(resolve_random_state(random_state))

__all__ = ["IDENTITY_TERMS", "TermRule", "TextRuleSet", "text_frequent_rule_sets", "TextSampler",
           "text_group_fairness_score", "text_group_fairness_score_reference", "test_text_model"]

#: Table 1 of the paper (Dixon et al. 2018): 48 identity terms in 4 categories.
IDENTITY_TERMS = {
    "gender": ["lesbian", "gay", "bisexual", "transgender", "trans", "queer", "lgbt", "lgbtq", "homosexual",
               "straight", "heterosexual", "male", "female", "nonbinary"],
    "race": ["african", "african american", "black", "white", "european", "hispanic", "latino", "latina",
             "latinx", "mexican", "canadian", "american", "asian", "indian", "middle eastern", "chinese",
             "japanese"],
    "religion": ["christian", "muslim", "jewish", "buddhist", "catholic", "protestant", "sikh", "taoist",
                 "atheist"],
    "age": ["old", "older", "young", "younger", "teenage", "millennial", "middle aged", "elderly"],
}

_U = 8  # uniforms per group per iteration (fixed, so reference and batched share the stream)


@dataclass(frozen=True)
class TermRule:
    """The text contains the identity term ``term`` of category ``category``.

    Parameters
    ----------
    category : str
        The identity-term category (a key of the ``terms`` dict, e.g. "religion").
    term : str
        The identity term (e.g. "muslim").

    Examples
    --------
    >>> from fairlens.testsgd import TermRule
    >>> str(TermRule("religion", "muslim"))
    '"muslim"'
    """

    category: str
    term: str

    def __str__(self):
        return f'"{self.term}"'

    __repr__ = __str__


@dataclass(frozen=True)
class TextRuleSet:
    """Identity terms of distinct categories (section 4.1, text data).

    Parameters
    ----------
    rules : tuple of TermRule
        At least one term, of distinct categories.

    Raises
    ------
    ValueError
        If ``rules`` is empty or holds two terms of the same category.

    Examples
    --------
    >>> from fairlens.testsgd import TermRule, TextRuleSet
    >>> rs = TextRuleSet((TermRule("age", "old"), TermRule("gender", "woman")))
    >>> str(rs), rs.categories, len(rs)
    ('"old", "woman"', ('age', 'gender'), 2)
    """

    rules: tuple

    def __post_init__(self):
        cats = [r.category for r in self.rules]
        if not self.rules or len(set(cats)) != len(cats):
            raise ValueError(f"a text rule set needs 1..n terms of distinct categories, got {self.rules}")

    @property
    def categories(self):
        return tuple(r.category for r in self.rules)

    def __len__(self):
        return len(self.rules)

    def __str__(self):
        return ", ".join(str(r) for r in self.rules)

    __repr__ = __str__


def _pattern(terms):
    alts = sorted(terms, key=len, reverse=True)  # "african american" before "african"
    return re.compile(r"\b(" + "|".join(re.escape(t) for t in alts) + r")\b", re.IGNORECASE)


def _check_docs(docs):
    """Documents: a list of strings (a bare string would be iterated by character)."""
    return check_str_list("docs", docs)


def _check_terms(terms, categories):
    terms = IDENTITY_TERMS if terms is None else terms
    if not isinstance(terms, dict):
        raise TypeError(f"terms must be a dict {{category: [identity terms]}}; got {type(terms).__name__}")
    for c, v in terms.items():
        check_str_list(f"terms[{c!r}]", v)
    if isinstance(categories, str):
        categories = [categories]
    cats = list(terms) if categories is None else check_str_list("categories", categories)
    for c in cats:
        if c not in terms:
            raise ValueError(f"unknown identity-term category {c!r}; choose from {list(terms)}")
        if len(terms[c]) < 2:
            raise ValueError(f"category {c!r} needs at least two terms for replacement sampling")
    return {c: list(terms[c]) for c in cats}


def _contains(docs, terms):
    """Boolean (n_docs, n_categories): contains(d, s) of Eq. 3."""
    pats = [_pattern(v) for v in terms.values()]
    return np.array([[p.search(d) is not None for p in pats] for d in docs], dtype=bool).reshape(len(docs), len(pats))


@validated({
    "docs": "no_validation", "categories": "no_validation",
    "theta": [Interval(numbers.Real, 0, 1, closed="right")], "terms": "no_validation",
    "max_size": [Interval(numbers.Integral, 1, None), None],
})
def text_frequent_rule_sets(docs: Sequence[str], categories=None, theta: float = 0.05, *, terms=None,
                            max_size: int | None = None) -> FrequentRuleSets:
    """Frequent text rule sets (Algorithm 1 with the support of Eq. 3).

    Eq. 3 counts the documents that contain SOME term of each rule's category,
    so a rule set's support depends only on its categories: every combination
    of one term per category of a frequent category set is frequent.

    Parameters
    ----------
    docs : list of str
        The corpus ``D``.
    categories : str or list of str, optional
        Categories of ``terms`` to use (default: all).
    theta : float in (0, 1], default 0.05
        Support threshold.
    terms : dict, optional
        ``{category: [identity terms]}`` (default :data:`IDENTITY_TERMS`, the paper's Table 1).
    max_size : int >= 1, optional
        Largest number of terms in a rule set (None: no limit).

    Returns
    -------
    FrequentRuleSets
        Of :class:`TextRuleSet` (without row bitsets).

    Raises
    ------
    TypeError, ValueError
        For a bad parameter (named in the message), e.g. an unknown category.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.testsgd import text_frequent_rule_sets
    >>> docs = ["a young man wrote this", "the old woman smiled", "an old man and a young woman"]
    >>> terms = {"age": ["young", "old"], "gender": ["man", "woman"]}
    >>> fr = text_frequent_rule_sets(docs, theta=0.5, terms=terms)
    >>> [str(r) for r in fr.rule_sets][:4], fr.counts[:4].tolist()
    (['"young"', '"old"', '"man"', '"woman"'], [3, 3, 3, 3])
    >>> len(fr)  # plus the 4 (age, gender) pairs: every document has both
    8
    """
    t0 = time.perf_counter()
    theta = _check_theta(theta)
    docs = _check_docs(docs)
    max_size = check_int("max_size", max_size, min=1, allow_none=True)
    terms = _check_terms(terms, categories)
    cats = list(terms)
    n = len(docs)
    has = _contains(docs, terms)
    need = _min_count(float(theta), n)
    max_size = len(cats) if max_size is None else max_size
    sets, counts = [], []
    n_cand = 0
    for k in range(1, max_size + 1):
        for combo in itertools.combinations(range(len(cats)), k):
            n_cand += 1
            c = int(np.all(has[:, combo], axis=1).sum())
            if c < need:
                continue
            for chosen in itertools.product(*[terms[cats[i]] for i in combo]):
                sets.append(TextRuleSet(tuple(TermRule(cats[i], t) for i, t in zip(combo, chosen))))
                counts.append(c)
    rules = {c: [TermRule(c, t) for t in terms[c]] for c in cats}
    n_cross = int(np.prod([len(v) + 1 for v in terms.values()]) - 1)
    return FrequentRuleSets(sets, np.asarray(counts, dtype=np.int64), n, float(theta), cats, rules,
                            np.zeros((0, 0), np.uint64), n_cand, n_cross, time.perf_counter() - t0)


class TextSampler:
    """Section 4.3 text sampling by identity-term replacement.

    ``Sample(D, R)``: a seed containing a term of every category of R; every
    term of each such category is replaced by R's term. ``Sample(D, not R)``
    (our choice, the paper does not spell it out): the same seeds, with one
    rule of R (chosen at random) replaced by a DIFFERENT term of its category
    and the other categories by a random term of theirs -- so the sample
    violates R while keeping identity terms of the same categories. Each call
    consumes ``8`` uniforms (seed, which rule to violate, term choices).

    Parameters
    ----------
    docs : list of str
        The corpus ``D`` (the seeds).
    terms : dict
        ``{category: [identity terms]}``, at least two terms per category.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.testsgd import TermRule, TextRuleSet, TextSampler
    >>> docs = ["a young man wrote this", "the old woman smiled", "an old man and a young woman"]
    >>> terms = {"age": ["young", "old"], "gender": ["man", "woman"]}
    >>> sampler = TextSampler(docs, terms)
    >>> rs = TextRuleSet((TermRule("age", "old"),))
    >>> seeds = sampler.seeds(rs)
    >>> seeds.tolist()  # every document with an age term
    [0, 1, 2]
    >>> sampler.sample_in(rs, seeds, np.zeros(8))
    'a old man wrote this'
    >>> sampler.sample_out(rs, seeds, np.full(8, 0.5))
    'the young woman smiled'
    """

    def __init__(self, docs, terms):
        self.docs = list(docs)
        self.terms = terms
        self.cats = list(terms)
        self.pats = {c: _pattern(v) for c, v in terms.items()}
        self.has = _contains(self.docs, terms)

    def seeds(self, rule_set: TextRuleSet):
        """The documents containing a term of every category of ``rule_set``.

        Parameters
        ----------
        rule_set : TextRuleSet
            The group ``R``.

        Returns
        -------
        ndarray of int
            Indices into ``docs``.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.testsgd import TermRule, TextRuleSet, TextSampler
        >>> docs = ["a young man wrote this", "the old woman smiled", "an old man and a young woman"]
        >>> terms = {"age": ["young", "old"], "gender": ["man", "woman"]}
        >>> rs = TextRuleSet((TermRule("age", "old"), TermRule("gender", "woman")))
        >>> TextSampler(docs + ["an old tree"], terms).seeds(rs).tolist()  # not the tree
        [0, 1, 2]
        """
        idx = [self.cats.index(c) for c in rule_set.categories]
        return np.flatnonzero(np.all(self.has[:, idx], axis=1))

    def _replace(self, doc, mapping):
        for c, t in mapping.items():
            doc = self.pats[c].sub(t, doc)
        return doc

    def sample_in(self, rule_set, seeds, u):
        """``Sample(D, R)``: a seed with every term of R's categories replaced by R's term.

        Parameters
        ----------
        rule_set : TextRuleSet
            The group ``R``.
        seeds : ndarray of int
            :meth:`seeds` of ``rule_set``.
        u : array of 8 floats in [0, 1)
            ``u[0]`` picks the seed.

        Returns
        -------
        str
            The sampled document (it satisfies R).

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.testsgd import TermRule, TextRuleSet, TextSampler
        >>> docs = ["a young man wrote this", "the old woman smiled", "an old man and a young woman"]
        >>> terms = {"age": ["young", "old"], "gender": ["man", "woman"]}
        >>> sampler = TextSampler(docs, terms)
        >>> rs = TextRuleSet((TermRule("age", "young"), TermRule("gender", "man")))
        >>> sampler.sample_in(rs, sampler.seeds(rs), np.full(8, 0.9))
        'an young man and a young man'
        """
        d = self.docs[seeds[min(int(u[0] * len(seeds)), len(seeds) - 1)]]
        return self._replace(d, {r.category: r.term for r in rule_set.rules})

    def sample_out(self, rule_set, seeds, u):
        """``Sample(D, not R)``: a seed with one rule of R violated (see the class docstring).

        Parameters
        ----------
        rule_set : TextRuleSet
            The group ``R``.
        seeds : ndarray of int
            :meth:`seeds` of ``rule_set``.
        u : array of 8 floats in [0, 1)
            ``u[0]`` picks the seed, ``u[1]`` the violated rule, ``u[2:]`` the terms.

        Returns
        -------
        str
            The sampled document (it does not satisfy R).

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.testsgd import TermRule, TextRuleSet, TextSampler
        >>> docs = ["a young man wrote this", "the old woman smiled", "an old man and a young woman"]
        >>> terms = {"age": ["young", "old"], "gender": ["man", "woman"]}
        >>> sampler = TextSampler(docs, terms)
        >>> rs = TextRuleSet((TermRule("age", "young"), TermRule("gender", "man")))
        >>> sampler.sample_out(rs, sampler.seeds(rs), np.zeros(8))  # "young" violated
        'a old man wrote this'
        """
        d = self.docs[seeds[min(int(u[0] * len(seeds)), len(seeds) - 1)]]
        k = len(rule_set)
        bad = min(int(u[1] * k), k - 1)
        mapping = {}
        for i, r in enumerate(rule_set.rules):
            pool = self.terms[r.category]
            if i == bad:
                others = [t for t in pool if t != r.term]
                mapping[r.category] = others[min(int(u[2 + i] * len(others)), len(others) - 1)]
            else:
                mapping[r.category] = pool[min(int(u[2 + i] * len(pool)), len(pool) - 1)]
        return self._replace(d, mapping)


def _text_scorer(model):
    """``docs -> (n,)`` probabilities of the favourable class, checked like
    :class:`fairlens.models.Scorer` checks them (finite, in [0, 1])."""
    if hasattr(model, "predict_proba"):
        def raw(docs):
            return np.asarray(model.predict_proba(list(docs)), dtype=np.float64)
    elif callable(model):
        def raw(docs):
            return np.asarray(model(list(docs)), dtype=np.float64)
    else:
        raise TypeError("model must have predict_proba or be callable on a list of strings")

    def f(docs):
        out = raw(docs)
        out = (out[:, 1] if out.ndim == 2 and out.shape[1] == 2
               else out.reshape(-1) if out.ndim == 2 and out.shape[1] == 1 else out)
        if out.shape != (len(docs),):
            raise ValueError(f"the text model returned shape {out.shape} for {len(docs)} documents; "
                             "return (n,) probabilities or (n, 2) class probabilities")
        if not np.all(np.isfinite(out)):
            raise ValueError("the text model returned non-finite scores (nan or inf)")
        if out.size and (out.min() < 0.0 or out.max() > 1.0):
            raise ValueError(f"the text model returned scores in [{out.min():.4g}, {out.max():.4g}], "
                             "outside [0, 1]; return probabilities of the favourable class (apply "
                             "the sigmoid to logits)")
        return out
    return f


#: The table the two text scorers share (:func:`text_group_fairness_score` also takes ``block``).
_TEXT_SCORE_TABLE = {
    "model": "no_validation", "docs": "no_validation", "rule_set": "no_validation", "terms": "no_validation",
    "error": [Interval(numbers.Real, 0, 1, closed="right")],
    "confidence": [Interval(numbers.Real, 0, 1, closed="neither")],
    "sample_thr": [Interval(numbers.Integral, 1, None)], "max_samples": [Interval(numbers.Integral, 1, None)],
    "threshold": [Interval(numbers.Real, 0, 1)], "random_state": ["random_state"], "sampler": "no_validation",
}


@strict_keywords(renamed={"error_thr": "error"})
@validated(_TEXT_SCORE_TABLE)
def text_group_fairness_score_reference(model, docs, rule_set: TextRuleSet, *, terms=None, error=0.05,
                                        confidence=0.95, sample_thr=1000, max_samples=DEFAULT_MAX_SAMPLES,
                                        threshold=0.5, random_state=None, sampler=None) -> ScoreResult:
    """Literal Algorithm 2 on text (one sample per group per iteration, one model call each).

    Parameters
    ----------
    model, docs, rule_set, terms, error, confidence, sample_thr, max_samples, threshold, random_state, sampler
        See :func:`text_group_fairness_score`.

    Returns
    -------
    ScoreResult
        As :func:`text_group_fairness_score` returns for the same ``random_state``.

    Raises
    ------
    TypeError, ValueError
        For a bad parameter (named in the message) or a model output that is not probabilities.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.testsgd import (TermRule, TextRuleSet, text_group_fairness_score,
    ...                               text_group_fairness_score_reference)
    >>> docs = ["a young man wrote this", "the old woman smiled", "an old man and a young woman"]
    >>> terms = {"age": ["young", "old"], "gender": ["man", "woman"]}
    >>> model = lambda ds: np.array([0.2 if "old" in d else 0.9 for d in ds])  # dislikes "old"
    >>> rs = TextRuleSet((TermRule("age", "old"),))
    >>> ref = text_group_fairness_score_reference(model, docs, rs, terms=terms, sample_thr=100,
    ...                                           random_state=0)
    >>> fast = text_group_fairness_score(model, docs, rs, terms=terms, sample_thr=100, random_state=0)
    >>> (ref.score, ref.n_samples) == (fast.score, fast.n_samples)
    True
    """
    error_thr, sample_thr, max_samples, threshold = _check_alg2_params(
        error, sample_thr, max_samples, threshold, confidence, name="error")
    terms = _check_terms(terms, None) if sampler is None else sampler.terms
    sampler = sampler or TextSampler(_check_docs(docs), terms)
    scorer = _text_scorer(model)
    z = z_value(confidence)
    rng = _text_rng(random_state)
    seeds = sampler.seeds(rule_set)
    support = seeds.size / max(1, len(sampler.docs))
    if seeds.size == 0:
        return ScoreResult(rule_set, np.nan, np.nan, np.nan, np.nan, 0, False, confidence ** 2, "no-seeds", support)
    c_in = c_out = num = 0
    eps, p, q = math.inf, np.nan, np.nan
    while eps > error_thr and num < max_samples:
        u = rng.random(2 * _U)
        c_in += int(scorer([sampler.sample_in(rule_set, seeds, u[:_U])])[0] >= threshold)
        c_out += int(scorer([sampler.sample_out(rule_set, seeds, u[_U:])])[0] >= threshold)
        num += 1
        if num > sample_thr:
            p, q = c_in / num, c_out / num
            eps = z * math.sqrt(p * (1 - p) / num) + z * math.sqrt(q * (1 - q) / num)
    conv = eps <= error_thr
    return ScoreResult(rule_set, float(p), float(q), float(abs(p - q)), float(eps), num, bool(conv),
                       confidence ** 2, "ok" if conv else "cap", support)


@strict_keywords(renamed={"error_thr": "error"})
@validated({**_TEXT_SCORE_TABLE, "block": [Interval(numbers.Integral, 1, None)]})
def text_group_fairness_score(model, docs, rule_set: TextRuleSet, *, terms=None, error=0.05,
                              confidence=0.95, sample_thr=1000, max_samples=DEFAULT_MAX_SAMPLES, threshold=0.5,
                              random_state=None, block=512, sampler=None) -> ScoreResult:
    """Batched Algorithm 2 on text: whole blocks of samples per model call; same numbers as the reference.

    Parameters
    ----------
    model : callable or estimator
        Maps a list of documents to scores (or has ``predict_proba`` on documents).
    docs : list of str
        The corpus ``D``.
    rule_set : TextRuleSet
        The group.
    terms : dict, optional
        Identity terms per category (default :data:`IDENTITY_TERMS`).
    error, confidence, sample_thr, max_samples, threshold
        Algorithm 2's parameters (see :func:`group_fairness_score`).
    random_state : None, int, numpy Generator or RandomState
        A Generator is used as is (one child stream per rule set); anything else is
        resolved by :func:`fairlens._base.resolve_random_state`.
    block : int, default 512
        Iterations drawn per round after the first ``sample_thr + 1``.
    sampler : TextSampler, optional
        Reused sampler.

    Returns
    -------
    ScoreResult
        The estimate; status "no-seeds" (NaN score) when no document holds a term of every
        category of ``rule_set``.

    Raises
    ------
    TypeError, ValueError
        For a bad parameter (named in the message) or a model output that is not probabilities.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.testsgd import TermRule, TextRuleSet, text_group_fairness_score
    >>> docs = ["a young man wrote this", "the old woman smiled", "an old man and a young woman"]
    >>> terms = {"age": ["young", "old"], "gender": ["man", "woman"]}
    >>> model = lambda ds: np.array([0.2 if "old" in d else 0.9 for d in ds])  # dislikes "old"
    >>> rs = TextRuleSet((TermRule("age", "old"),))
    >>> res = text_group_fairness_score(model, docs, rs, terms=terms, sample_thr=100, random_state=0)
    >>> res.rate_in, res.rate_out, res.score, res.status
    (0.0, 1.0, 1.0, 'ok')
    """
    error_thr, sample_thr, max_samples, threshold = _check_alg2_params(
        error, sample_thr, max_samples, threshold, confidence, name="error")
    block = check_int("block", block, min=1)
    terms = _check_terms(terms, None) if sampler is None else sampler.terms
    sampler = sampler or TextSampler(_check_docs(docs), terms)
    scorer = _text_scorer(model)
    z = z_value(confidence)
    rng = _text_rng(random_state)
    seeds = sampler.seeds(rule_set)
    support = seeds.size / max(1, len(sampler.docs))
    if seeds.size == 0:
        return ScoreResult(rule_set, np.nan, np.nan, np.nan, np.nan, 0, False, confidence ** 2, "no-seeds", support)
    lab_in, lab_out = np.zeros(0, np.int64), np.zeros(0, np.int64)
    drawn = 0
    while True:
        w = min(sample_thr + 1 if drawn == 0 else block, max_samples - drawn)
        U = rng.random((w, 2 * _U))
        docs_in = [sampler.sample_in(rule_set, seeds, u[:_U]) for u in U]
        docs_out = [sampler.sample_out(rule_set, seeds, u[_U:]) for u in U]
        lab = (scorer(docs_in + docs_out) >= threshold).astype(np.int64)
        lab_in = np.concatenate([lab_in, lab[:w]])
        lab_out = np.concatenate([lab_out, lab[w:]])
        lo = max(sample_thr, drawn)
        drawn += w
        ci, co = np.cumsum(lab_in), np.cumsum(lab_out)
        num = np.arange(1, drawn + 1, dtype=np.float64)
        eps = _margin(ci[lo:], co[lo:], num[lo:], z)
        hit = np.flatnonzero(eps <= error_thr)
        if hit.size or drawn >= max_samples:
            k = lo + (hit[0] if hit.size else len(eps) - 1)
            nn = k + 1
            p, q = ci[k] / nn, co[k] / nn
            conv = bool(hit.size)
            return ScoreResult(rule_set, float(p), float(q), float(abs(p - q)), float(eps[k - lo]), int(nn), conv,
                               confidence ** 2, "ok" if conv else "cap", support)


@validated({
    "model": "no_validation", "docs": "no_validation", "categories": "no_validation",
    "theta": [Interval(numbers.Real, 0, 1, closed="right")],
    "error": [Interval(numbers.Real, 0, 1, closed="right")],
    "confidence": [Interval(numbers.Real, 0, 1, closed="neither")],
    "sample_thr": [Interval(numbers.Integral, 1, None)], "max_samples": [Interval(numbers.Integral, 1, None)],
    "threshold": [Interval(numbers.Real, 0, 1)], "random_state": ["random_state"], "terms": "no_validation",
    "max_size": [Interval(numbers.Integral, 1, None), None],
})
def test_text_model(model, docs, categories=None, theta=0.05, error=0.05, confidence=0.95, sample_thr=1000,
                    random_state=None, *, terms=None, max_size=None, max_samples=DEFAULT_MAX_SAMPLES,
                    threshold=0.5):
    """TestSGD on a text classifier: frequent identity-term rule sets, scored and ranked.

    Each rule set uses child ``j`` of ``SeedSequence(random_state)``.

    Parameters
    ----------
    model : callable or estimator
        Maps a list of documents to probabilities of the favourable class (or has
        ``predict_proba`` on documents).
    docs : list of str
        The corpus ``D``.
    categories : str or list of str, optional
        Categories of ``terms`` to use (default: all).
    theta : float in (0, 1], default 0.05
        Support threshold (Eq. 3).
    error : float in (0, 1], default 0.05
        ``error_thr`` of Algorithm 2.
    confidence : float in (0, 1), default 0.95
        ``delta`` per group.
    sample_thr : int >= 1, default 1000
        No stop before ``num > sample_thr``.
    random_state : None, int, numpy Generator or RandomState
        Resolved once by :func:`fairlens._base.resolve_random_state`.
    terms : dict, optional
        ``{category: [identity terms]}`` (default :data:`IDENTITY_TERMS`).
    max_size : int >= 1, optional
        Largest number of terms in a rule set.
    max_samples : int > sample_thr, default 100000
        Cap on ``num`` per rule set.
    threshold : float in [0, 1], default 0.5
        A score ``>= threshold`` is the favourable decision.

    Returns
    -------
    TestSGDReport
        The rule sets ranked by score (``to_frame()``, ``top(k)``).

    Raises
    ------
    TypeError, ValueError
        For a bad parameter (named in the message).

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.testsgd import test_text_model
    >>> docs = ["a young man wrote this", "the old woman smiled", "an old man and a young woman"]
    >>> terms = {"age": ["young", "old"], "gender": ["man", "woman"]}
    >>> model = lambda ds: np.array([0.2 if "old" in d else 0.9 for d in ds])  # dislikes "old"
    >>> report = test_text_model(model, docs, theta=0.5, terms=terms, sample_thr=100, random_state=0)
    >>> report.top(2)[["rule_set", "score"]]
         rule_set  score
    rank
    0       "old"    1.0
    1     "young"    1.0
    """
    from ._testsgd import TestSGDReport, _rank  # deferred: circle: testsgd._testsgd imports this module

    t0 = time.perf_counter()
    docs = _check_docs(docs)
    error, sample_thr, max_samples, threshold = _check_alg2_params(
        error, sample_thr, max_samples, threshold, confidence, name="error")
    random_state = resolve_random_state(random_state)
    terms = _check_terms(terms, categories)
    fr = text_frequent_rule_sets(docs, list(terms), theta, terms=terms, max_size=max_size)
    t1 = time.perf_counter()
    sampler = TextSampler(docs, terms)
    ss = np.random.SeedSequence(random_state)
    children = ss.spawn(len(fr))
    scorer = _text_scorer(model)
    n_rows = [0]

    def counted(batch):
        n_rows[0] += len(batch)
        return scorer(batch)

    results = [text_group_fairness_score(counted, docs, rs, error=error, confidence=confidence,
                                         sample_thr=sample_thr, max_samples=max_samples, threshold=threshold,
                                         random_state=np.random.default_rng(children[j]), sampler=sampler)
               for j, rs in enumerate(fr.rule_sets)]
    t2 = time.perf_counter()
    params = dict(theta=float(theta), error=error, confidence=confidence, sample_thr=sample_thr,
                  max_samples=max_samples, random_state=random_state, protected=list(terms),
                  threshold=threshold,
                  model_input=f"{type(model).__name__}: a model on a list of documents (strings)")
    return TestSGDReport(_rank(results), fr, params, t2 - t0, t1 - t0, t2 - t1, n_rows[0], "text",
                         random_state=random_state)


test_text_model.__test__ = False
