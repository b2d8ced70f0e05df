"""Shuffling attacks (Yuan & Dasgupta, "Fooling SHAP with Output Shuffling Attacks").

The adversarial model ``f'`` of Algorithm 1 scores the whole batch it is
called with using the honest scorer ``f`` (which ignores the protected
feature), sorts the batch with the superior score on top and hands the *same
multiset of scores* back in a different order chosen by an attack
(Algorithms 2-4). Because the permutation depends on the batch, the value
function ``v(S)`` of Eq. (3)/(5) is unchanged and exact Shapley values of the
protected feature are zero (Eq. 6).
"""
from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
import pandas as pd

from .._base import Interval, Options, Result, refuse_renamed, resolve_random_state, strict_keywords, validated
from .._validation import check_str_list
from ..models import as_scorer
from . import _kernels
from .plots import plot_score_change

__all__ = [
    "ATTACKS",
    "ShuffledModel",
    "ShuffleBatch",
    "shuffle_scores",
    "parse_attack",
]

#: canonical attack names and accepted short forms
ATTACKS = ("dominance", "mixing", "swapping", "none")
_ALIASES = {
    "dominance": "dominance", "dom": "dominance",
    "mixing": "mixing", "mix": "mixing",
    "swapping": "swapping", "swap": "swapping",
    "none": "none", "identity": "none",
}
_MIXING_RULES = ("alg3", "coin")
_SWAPPING_RULES = ("alg4", "once")


@validated({
    "attack": [str],
})
def parse_attack(attack):
    """Parse ``"dominance"`` or a hybrid ``"dom+mix"`` into a tuple of names.

    Parameters
    ----------
    attack : str
        An attack of :data:`ATTACKS` (or dom/mix/swap), or a hybrid ``"top+bottom"``.

    Returns
    -------
    tuple of str
        One name (plain attack) or two names (top half, bottom half), each in :data:`ATTACKS`.

    Raises
    ------
    TypeError, ValueError
        For a non-string or an unknown attack.

    Examples
    --------
    >>> from fairlens.shuffle import parse_attack
    >>> parse_attack("dom+mix")
    ('dominance', 'mixing')
    """
    if not isinstance(attack, str):
        raise TypeError(
            f"attack must be a string such as 'dominance', 'mixing', 'swapping' or a "
            f"hybrid 'dom+mix'; got {type(attack).__name__}."
        )
    parts = [a.strip().lower() for a in attack.split("+")]
    if len(parts) > 2 or any(a not in _ALIASES for a in parts):
        raise ValueError(
            f"attack={attack!r} is not understood: use one of {ATTACKS} (or dom/mix/swap) "
            f"or a hybrid 'top+bottom' such as 'dom+mix' or 'mix+none'."
        )
    return tuple(_ALIASES[a] for a in parts)


def _check_fraction(name, value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a number in [0, 1]; got {value!r}.")
    if not (0.0 <= float(value) <= 1.0) or not np.isfinite(value):
        raise ValueError(f"{name} must lie in [0, 1]; got {value!r}.")
    return float(value)


def _check_mixing_rule(mixing_rule):
    if not isinstance(mixing_rule, str) or mixing_rule not in _MIXING_RULES:
        raise ValueError(f"mixing_rule must be one of {_MIXING_RULES}; got {mixing_rule!r}.")
    return mixing_rule


def _check_swapping_rule(swapping_rule, quantile, names):
    if not isinstance(swapping_rule, str) or swapping_rule not in _SWAPPING_RULES:
        raise ValueError(f"swapping_rule must be one of {_SWAPPING_RULES}; got {swapping_rule!r}.")
    if swapping_rule == "once" and "swapping" in names and quantile != 0.0:
        raise ValueError(
            f"swapping_rule='once' (Algorithm 4 without line 4) is a single pass in which each "
            f"pair is swapped at most once; it has no quantile outer loop, so quantile must be 0 "
            f"(got quantile={quantile!r}). Use swapping_rule='alg4' for repeated passes."
        )
    return swapping_rule


class _OwnStream:
    """A generator a :class:`ShuffledModel` owns and advances call after call (internal: the
    public ``random_state`` is resolved once by :func:`fairlens._base.resolve_random_state`)."""

    __slots__ = ("rng",)

    def __init__(self, rng):
        self.rng = rng


def _rng_of(random_state):
    if isinstance(random_state, _OwnStream):
        return random_state.rng
    return np.random.default_rng(resolve_random_state(random_state))


def _check_region(region):
    if isinstance(region, str):
        raise TypeError(f"region must be a fraction k in (0, 1] or a pair (lo, hi); got {region!r}.")
    if isinstance(region, (tuple, list, np.ndarray)):
        if len(region) != 2:
            raise ValueError(f"region must be a fraction k (top-k) or a pair (lo, hi); got {region!r}.")
        lo = _check_fraction("region[0]", region[0])
        hi = _check_fraction("region[1]", region[1])
        if lo >= hi:
            raise ValueError(f"region=(lo, hi) needs lo < hi; got {region!r}.")
        return lo, hi
    k = _check_fraction("region", region)
    if k == 0.0:
        raise ValueError("region must be > 0 (the top fraction of the batch that is attacked).")
    return 0.0, k


def _check_max_count(max_count):
    if max_count is None:
        return -1
    if isinstance(max_count, (bool, np.bool_)) or not isinstance(max_count, Integral):
        raise TypeError(f"max_count must be None or a non-negative integer; got {max_count!r}.")
    if max_count < 0:
        raise ValueError(f"max_count must be None or a non-negative integer; got {max_count!r}.")
    return int(max_count)


def _position(frac, n):
    """Sorted position that a batch fraction maps to (round half up)."""
    return int(np.floor(frac * n + 0.5))


def _segment_order(name, fav, key, p, quantile, literal, budget, rng, swap_once=False):
    """Run one attack on one (sorted) segment; return (new order, n events)."""
    n = fav.shape[0]
    if name == "none" or n < 2:
        return np.arange(n, dtype=np.int64), 0
    if name == "dominance":
        u = np.zeros(n, dtype=np.float64)
        return _kernels.mixing_order(fav, key, u, 1.0, True, budget)
    if name == "mixing":
        u = rng.random(n)
        return _kernels.mixing_order(fav, key, u, float(p), literal, budget)
    if swap_once:
        return _kernels.swapping_order_once(fav, budget)
    # swapping: outer loop starts at j0 = floor(quantile * N)
    j0 = int(np.floor(quantile * n + 1e-12))
    if budget >= 0:
        return _kernels.swapping_order_literal(fav, j0, budget)
    return _kernels.swapping_order_fast(fav, j0)


@validated({
    "scores": "no_validation", "favoured_mask": "no_validation", "attack": [str],
    "p": [Interval(numbers.Real, 0, 1)], "quantile": [Interval(numbers.Real, 0, 1)],
    "higher_is_better": ["boolean"],
    "region": [Interval(numbers.Real, 0, 1, closed="right"), tuple, list, np.ndarray],
    "split": [Interval(numbers.Real, 0, 1)], "max_count": [Interval(numbers.Integral, 0, None), None],
    "mixing_rule": [Options(*_MIXING_RULES)], "swapping_rule": [str], "random_state": "no_validation",
    "return_details": ["boolean"],
})
def shuffle_scores(scores, favoured_mask, attack="dominance", *, p=0.8, quantile=0.0,
                   higher_is_better=True, region=1.0, split=0.5, max_count=None,
                   mixing_rule="alg3", swapping_rule="alg4", random_state=None,
                   return_details=False):
    """Apply a shuffling attack to a score vector (Algorithm 1, lines 5-7).

    Parameters
    ----------
    scores : array-like of shape (n,)
        Outputs ``y = f(X)`` of the honest scorer on one batch.
    favoured_mask : array-like of bool, shape (n,)
        ``True`` for rows of the favoured group ("males" in the pseudocode).
    attack : str
        ``"dominance"`` (Algorithm 2), ``"mixing"`` (Algorithm 3),
        ``"swapping"`` (Algorithm 4 with the quantile outer loop), ``"none"``,
        or a hybrid ``"top+bottom"`` (e.g. ``"dom+mix"``) that applies the
        first attack to the top part and the second to the bottom part of the
        (region of the) sorted batch, split at ``split``.
    p : float in [0, 1]
        Mixing probability: at each merge step the coin hands the best remaining
        score to the favoured group with probability ``p`` (what a tail does is
        ``mixing_rule``).
    quantile : float in [0, 1]
        Swapping start: the outer loop runs ``j = floor(quantile * N), ..., 0``
        (quantile 0 = one pass of Algorithm 4, quantile 1 = Dominance).
    higher_is_better : bool
        Whether a higher score is superior (Algorithm 1, "Parameter").
    region : float or (lo, hi)
        Region relaxation: only sorted positions in the top ``region``
        fraction (or the band ``[lo, hi)``) are shuffled, within themselves.
    split : float in [0, 1]
        Where a hybrid attack switches from the top to the bottom attack,
        as a fraction of the region.
    max_count : int or None
        Count relaxation: at most ``max_count`` unfair moves per batch
        (swaps for Swapping, merit-overriding picks for Dominance/Mixing),
        counted from the top of the batch.
    mixing_rule : {"alg3", "coin"}, default "alg3"
        What a "tail" of the Mixing coin means. ``"alg3"`` (default): Algorithm 3
        as printed -- on a tail, line 8 gives the score to the higher original
        score (the favoured head wins ties), so the favoured group never loses,
        ``p = 0`` is the identity and ``p = 1`` is Dominance. ``"coin"``: on a
        tail the unfavoured head receives the score, a random merge of the two
        groups (Yang & Stoyanovich 2017, which the paper cites as the origin of
        Mixing); this is the reading under which the experiments section's
        "p = 0.5 ... random mixing with no bias" holds, and ``p = 1`` is still
        Dominance. Under ``"coin"`` the favoured group can *lose*: when it already
        holds most top positions, handing each top slot to it with probability
        only ``p`` lowers its mean (on Graduate Admission at ``p = 0.8``, seed 0,
        the research group's mean goes 0.637 -> 0.621, while ``"alg3"`` raises it
        to 0.666), so ``"coin"`` is kept only to reproduce the paper's p = 0.5
        statement.
    swapping_rule : {"alg4", "once"}, default "alg4"
        ``"alg4"``: Algorithm 4 as printed (line 4 swaps the group labels too, so
        an unfavoured item keeps sinking past favoured ones within one pass),
        with the quantile outer loop of the text. ``"once"``: Algorithm 4 with
        line 4 removed -- the paper's relaxation "If we remove line 4 in
        Algorithm 4, the female candidate in such case will be restricted to
        swapped only one time": each adjacent (unfavoured, favoured) pair of the
        sorted batch is swapped at most once and every item moves at most one
        place. A single pass: ``quantile`` must be 0.
    random_state : None, int, numpy Generator or RandomState
        Randomness of the Mixing coin, resolved once by
        :func:`fairlens._base.resolve_random_state` (the coins are
        ``numpy.random.default_rng(seed).random(n)`` for an int ``seed``).
    return_details : bool
        Also return ``(order, new, n_events)`` where ``order`` sorts the batch
        (superior first) and item ``order[new[r]]`` receives the ``r``-th
        best score.

    Returns
    -------
    ndarray of shape (n,)
        The attacked scores ``y'``: a permutation of ``scores``.

    Raises
    ------
    TypeError, ValueError
        For scores that are not a finite 1-D array, a mask of another shape or not 0/1, an
        unknown attack or rule, or a parameter out of range (named in the message).

    Notes
    -----
    Ties in the score are broken by input position (stable sort), as Python's
    stable ``sorted`` would do in a literal transcription of Algorithm 1.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.shuffle import shuffle_scores
    >>> shuffle_scores([0.9, 0.8, 0.7, 0.6], [False, True, False, True], "dominance")
    array([0.7, 0.9, 0.6, 0.8])
    """
    try:
        y = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("scores must be a 1-D array of numbers.") from None
    if y.ndim != 1:
        raise ValueError(f"scores must be a 1-D array; got shape {y.shape}.")
    if not np.all(np.isfinite(y)):
        raise ValueError("scores contain NaN or inf; a shuffling attack sorts scores, which needs "
                         "finite values.")
    fav = np.asarray(favoured_mask)
    if fav.shape != y.shape:
        raise ValueError(
            f"favoured_mask must have the same shape as scores {y.shape}; got {fav.shape}."
        )
    if fav.dtype != bool and not (fav.dtype.kind in "iuf" and np.isin(fav, (0, 1)).all()):
        raise ValueError("favoured_mask must be boolean (or 0/1); got values "
                         f"{np.unique(fav)[:5].tolist()}.")
    if not isinstance(higher_is_better, (bool, np.bool_)):
        raise TypeError(f"higher_is_better must be True or False; got {higher_is_better!r}.")
    names = parse_attack(attack)
    p = _check_fraction("p", p)
    quantile = _check_fraction("quantile", quantile)
    split = _check_fraction("split", split)
    lo, hi = _check_region(region)
    budget = _check_max_count(max_count)
    _check_mixing_rule(mixing_rule)
    _check_swapping_rule(swapping_rule, quantile, names)
    rng = _rng_of(random_state)

    n = y.shape[0]
    key = y if higher_is_better else -y
    order = np.argsort(-key, kind="stable")
    new = np.arange(n, dtype=np.int64)
    n_events = 0
    fav_sorted = fav.astype(bool)[order].astype(np.int8)
    key_sorted = np.ascontiguousarray(key[order])
    # Attack is skipped when the batch has one row or one group (paper, Sec. "Adversarial shuffling")
    if n >= 2 and 0 < fav_sorted.sum() < n:
        a, b = _position(lo, n), _position(hi, n)
        if len(names) == 1:
            segments = [(a, b, names[0])]
        else:
            m = a + _position(split, b - a)
            segments = [(a, m, names[0]), (m, b, names[1])]
        for s0, s1, name in segments:
            if s1 - s0 < 2:
                continue
            local, ev = _segment_order(
                name, fav_sorted[s0:s1], key_sorted[s0:s1], p, quantile,
                mixing_rule == "alg3", budget, rng, swapping_rule == "once",
            )
            new[s0:s1] = local + s0
            n_events += int(ev)
            if budget >= 0:
                budget = max(budget - int(ev), 0)
    out = np.empty(n, dtype=np.float64)
    out[order[new]] = y[order]
    if return_details:
        return out, (order, new, n_events)
    return out


@dataclass
class ShuffleBatch(Result):
    """What :class:`ShuffledModel` did to one batch (the result of :meth:`ShuffledModel.attack_batch`).

    Parameters
    ----------
    scores_before : ndarray, shape (n,)
        ``f(X)``, the honest scores.
    scores_after : ndarray, shape (n,)
        ``f'(X)``, the attacked scores (a permutation of ``scores_before``).
    favoured : ndarray of bool, shape (n,)
        Membership of the favoured group.
    attacked : bool
        ``False`` when the frequency relaxation skipped this call.
    n_events : int
        Unfair moves performed (swaps or merit-overriding picks).
    group_labels : tuple of str
        Names of the favoured group and of the others in tables and plots.
    params : dict
        The attack's parameters.
    random_state : int or None
        The seed of the model's generator (None: the model was built with fresh entropy).
    elapsed : float
        Wall seconds of the batch (the model's scores and the attack).
    stopped : bool
        True when the run was cut short by ``stop``.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.shuffle import ShuffledModel
    >>> X = np.array([[0.9, 1], [0.8, 0], [0.7, 1], [0.6, 0]])  # column 1: protected
    >>> m = ShuffledModel(lambda A: A[:, 0], protected=1, favoured=0, attack="dominance")
    >>> batch = m.attack_batch(X)
    >>> batch.scores_before, batch.scores_after
    (array([0.9, 0.8, 0.7, 0.6]), array([0.7, 0.9, 0.6, 0.8]))
    >>> batch.favoured.tolist(), batch.n_events
    ([False, True, False, True], 2)
    """

    scores_before: np.ndarray
    scores_after: np.ndarray
    favoured: np.ndarray
    attacked: bool = True
    n_events: int = 0
    group_labels: tuple = ("favoured", "other")
    params: dict = field(default_factory=dict)
    random_state: int | None = None
    elapsed: float = float("nan")
    stopped: bool = False

    title = "Shuffling attack on one batch"

    def summary(self):
        """One row: batch size, favoured rows, whether attacked, unfair moves, group means
        before and after.

        Returns
        -------
        pandas.DataFrame
            One row.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.shuffle import ShuffledModel
        >>> X = np.array([[0.9, 1], [0.8, 0], [0.7, 1], [0.6, 0]])  # column 1: protected
        >>> m = ShuffledModel(lambda A: A[:, 0], protected=1, favoured=0, attack="dominance")
        >>> batch = m.attack_batch(X)
        >>> batch.summary()[["n_rows", "n_favoured", "favoured_mean_before", "favoured_mean_after"]]
           n_rows  n_favoured  favoured_mean_before  favoured_mean_after
        0       4           2                   0.7                 0.85
        """
        fav = np.asarray(self.favoured, dtype=bool)

        def mean(a, m):
            return float(a[m].mean()) if m.any() else float("nan")
        return pd.DataFrame([{
            "n_rows": int(fav.size), "n_favoured": int(fav.sum()), "attacked": bool(self.attacked),
            "n_events": int(self.n_events),
            "favoured_mean_before": mean(self.scores_before, fav),
            "favoured_mean_after": mean(self.scores_after, fav),
            "other_mean_before": mean(self.scores_before, ~fav),
            "other_mean_after": mean(self.scores_after, ~fav),
        }])

    def to_frame(self):
        """One row per instance: scores before/after, change, group.

        Returns
        -------
        pandas.DataFrame
            Columns ``score_before``, ``score_after``, ``change`` and ``group``.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.shuffle import ShuffledModel
        >>> X = np.array([[0.9, 1], [0.8, 0], [0.7, 1], [0.6, 0]])  # column 1: protected
        >>> m = ShuffledModel(lambda A: A[:, 0], protected=1, favoured=0, attack="dominance")
        >>> batch = m.attack_batch(X)
        >>> batch.to_frame().round(2)
           score_before  score_after  change     group
        0           0.9          0.7    -0.2     other
        1           0.8          0.9     0.1  favoured
        2           0.7          0.6    -0.1     other
        3           0.6          0.8     0.2  favoured
        """
        lab = np.where(self.favoured, self.group_labels[0], self.group_labels[1])
        return pd.DataFrame({
            "score_before": self.scores_before,
            "score_after": self.scores_after,
            "change": self.scores_after - self.scores_before,
            "group": lab,
        })

    def group_means(self):
        """Mean score per group before and after the attack.

        Returns
        -------
        pandas.DataFrame
            Index: the group labels; columns ``score_before``, ``score_after``.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.shuffle import ShuffledModel
        >>> X = np.array([[0.9, 1], [0.8, 0], [0.7, 1], [0.6, 0]])  # column 1: protected
        >>> m = ShuffledModel(lambda A: A[:, 0], protected=1, favoured=0, attack="dominance")
        >>> batch = m.attack_batch(X)
        >>> batch.group_means().round(2)
                  score_before  score_after
        group
        favoured           0.7         0.85
        other              0.8         0.65
        """
        df = self.to_frame()
        return df.groupby("group")[["score_before", "score_after"]].mean()

    def plot(self, ax=None, **kwargs):
        """Per-instance score change f -> f' coloured by group (paper Fig. 1).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (a new figure if None).
        **kwargs
            Passed to :func:`fairlens.shuffle.plots.plot_score_change`.

        Returns
        -------
        matplotlib Axes
            The axes drawn on.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.shuffle import ShuffledModel
        >>> X = np.array([[0.9, 1], [0.8, 0], [0.7, 1], [0.6, 0]])  # column 1: protected
        >>> m = ShuffledModel(lambda A: A[:, 0], protected=1, favoured=0, attack="dominance")
        >>> batch = m.attack_batch(X)
        >>> ax = batch.plot()
        """

        return plot_score_change(self, ax=ax, **kwargs)


def _as_scorer(scorer, dataset=None, *, feature_names=None, output="auto", favourable_class=1):
    """Adapt ``scorer`` once with the package-wide :func:`fairlens.models.as_scorer`."""

    if dataset is not None:
        feature_names = None  # the dataset's encoded columns
    return as_scorer(scorer, dataset, feature_names=feature_names, output=output,
                     favourable=favourable_class)


#: Keywords of earlier releases (old -> new): passing the old one is a ``TypeError`` naming the new.
_RENAMED = {"scorer": "model", "dataset": "data", "favourable_class": "favourable"}


class ShuffledModel:
    """Adversarial wrapper ``f'`` of Algorithm 1 around an honest scorer ``f``.

    Every call scores the *whole batch* with ``f``, sorts it with the superior
    score on top (line 5), and reassigns the same multiset of scores with the
    chosen attack (line 6). Explainers (SHAP, LIME) that call the model on
    their own synthetic batches see exactly this batch-dependent behaviour.

    Parameters
    ----------
    model : estimator, pipeline or callable
        The honest scoring function ``f``; it should ignore the protected
        feature(s) (Eq. 7). Adapted once with
        ``fairlens.models.as_scorer(model, data, output=output)``: a fitted
        classifier/pipeline (fitted on the readable frame, on an encoded DataFrame or
        on arrays) scores the probability of ``favourable``; a callable receives
        the batch as an encoded ``(n, d)`` array (a DataFrame batch is aligned by
        column name to ``feature_names``) and returns one score per row.
    protected : str, int or list of them
        Protected feature(s): column names (resolved against the DataFrame's columns,
        ``feature_names`` or the dataset's) or column indices.
        Several features form a conjunction group (e.g. Sex and Age).
    favoured : value, collection, callable, or dict/tuple of these
        Which rows form the favoured group. For one protected feature: a
        value (equality), a list/set of values (membership) or a callable
        ``values -> bool mask``. For several features: a dict
        ``{feature: spec}`` or a tuple of specs in the order of
        ``protected``; the group is the conjunction (logical AND). With a
        ``dataset``, category labels (e.g. ``"male"``) are translated to codes.
    attack : str, default "dominance"
        ``"dominance"`` (Alg. 2), ``"mixing"`` (Alg. 3), ``"swapping"``
        (Alg. 4 with quantile outer loop), ``"none"`` or a hybrid
        ``"top+bottom"`` such as ``"dom+mix"`` (paper, Diabetes experiment).
    p : float in [0, 1], default 0.8
        Mixing probability (see ``mixing_rule``).
    quantile : float in [0, 1], default 0.0
        Swapping starting quantile (0 = one pass, 1 = Dominance).
    higher_is_better : bool, default True
        Whether a higher score is the superior outcome.
    random_state : None, int, RandomState or Generator
        Seeds the Mixing coin and the frequency relaxation, resolved once by
        :func:`fairlens._base.resolve_random_state` (the int is ``random_state_``). The
        generator ``numpy.random.default_rng(random_state_)`` is created once and advanced
        by every call, so two models built with the same seed return the same outputs for
        the same sequence of batches.
    region : float or (lo, hi), default 1.0
        Region relaxation: only the top ``region`` fraction of every sorted
        batch (or the band ``[lo, hi)``) is attacked (paper, German credit).
    split : float, default 0.5
        Split point of hybrid attacks within the region (top half / bottom half).
    frequency : float in [0, 1], default 1.0
        Frequency relaxation: each call is attacked with this probability
        (decided once per batch) and returned honestly otherwise.
    max_count : int >= 0 or None
        Count relaxation: at most this many unfair moves per batch.
    mixing_rule : {"alg3", "coin"}, default "alg3"
        Meaning of a Mixing "tail", see :func:`shuffle_scores` (``"alg3"``:
        Algorithm 3 as printed).
    swapping_rule : {"alg4", "once"}, default "alg4"
        ``"once"``: Algorithm 4 without line 4 (each pair swapped at most once),
        see :func:`shuffle_scores`.
    feature_names : list of str, optional
        The encoded column names (default: the dataset's); used to resolve string
        ``protected`` on arrays and to align DataFrame batches.
    reference : DataFrame or array, optional
        Data used to validate ``protected`` and ``favoured`` up front
        (the favoured group must occur in it).
    data : fairlens Dataset, optional
        The data the model belongs to (for readable-frame pipelines and names); the
        favoured value(s) must occur in it.
    output : {"auto", "proba", "logit", "raw"}, default "auto"
        How a callable's output is read (:func:`fairlens.models.as_scorer`):
        probabilities in [0, 1] by default; ``"raw"`` for ranking scores on any scale
        (the attack only permutes them); ``"logit"`` applies the sigmoid.
    favourable : default 1
        The class whose probability is the score of a fitted classifier.

    Raises
    ------
    TypeError, ValueError
        For a bad parameter (named in the message), a protected feature that is not a
        column, or a favoured value that does not occur in ``data`` / ``reference`` (or,
        without them, in the first batch of two or more rows).

    Notes
    -----
    Everything after the model is keyword-only. The old call form
    ``ShuffledModel(f, protected, favoured, attack, p, quantile, higher_is_better,
    random_state)`` and the old names ``scorer=``, ``dataset=`` and ``favourable_class=``
    are a ``TypeError`` naming the keyword to use.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.shuffle import ShuffledModel
    >>> X = np.array([[0.9, 1], [0.8, 0], [0.7, 1], [0.6, 0]])
    >>> m = ShuffledModel(lambda A: A[:, 0], protected=1, favoured=0, attack="dominance")
    >>> m(X)
    array([0.7, 0.9, 0.6, 0.8])

    The favoured rows (``X[:, 1] == 0``) now hold the two best scores, the same multiset.
    """

    @strict_keywords(renamed=_RENAMED, keyword_only=("protected", "favoured", "attack", "p", "quantile",
                                                     "higher_is_better", "random_state"))
    def __init__(self, model, *, protected=None, favoured=None, attack="dominance", p=0.8,
                 quantile=0.0, higher_is_better=True, random_state=None, region=1.0, split=0.5,
                 frequency=1.0, max_count=None, mixing_rule="alg3", swapping_rule="alg4",
                 feature_names=None, reference=None, data=None, output="auto", favourable=1):
        if protected is None:
            raise TypeError("ShuffledModel() needs protected=<the protected column(s)>.")
        if favoured is None:
            raise TypeError("ShuffledModel() needs favoured=<the favoured value(s) of the protected "
                            "column(s)>.")
        scorer, dataset, favourable_class = model, data, favourable
        if scorer is None or not (callable(scorer) or hasattr(scorer, "predict_proba")):
            raise TypeError(
                "scorer must be a callable mapping an (n, d) batch to n scores, or a "
                "classifier with predict_proba."
            )
        if isinstance(scorer, ShuffledModel):
            raise TypeError("scorer must be the honest model f, not a ShuffledModel (use "
                            "model.with_params(...) to change an attack).")
        if feature_names is not None:

            feature_names = check_str_list("feature_names", feature_names)
        self.model = scorer
        self.data = dataset
        self.output = output
        self.favourable = favourable_class
        self._f = _as_scorer(scorer, dataset, feature_names=feature_names, output=output,
                             favourable_class=favourable_class)
        if feature_names is None:
            feature_names = self._f.feature_names
        self.feature_names = None if feature_names is None else list(feature_names)
        self.protected = protected
        self._protected = list(protected) if isinstance(protected, (list, tuple)) else [protected]
        if not self._protected:
            raise ValueError("protected must name at least one feature.")
        for q in self._protected:
            if isinstance(q, (bool, np.bool_)) or not isinstance(q, (str, Integral)):
                raise TypeError(
                    f"protected must be column names (str) or column indices (int); got {q!r}."
                )
        if len(set(self._protected)) != len(self._protected):
            raise ValueError(f"protected features must be distinct; got {self._protected}.")
        self.favoured = favoured
        self._specs = self._normalise_favoured(favoured)
        self.attack = attack
        self.attack_parts = parse_attack(attack)
        self.p = _check_fraction("p", p)
        self.quantile = _check_fraction("quantile", quantile)
        if not isinstance(higher_is_better, (bool, np.bool_)):
            raise TypeError(f"higher_is_better must be True or False; got {higher_is_better!r}.")
        self.higher_is_better = bool(higher_is_better)
        self.region = region
        _check_region(region)
        self.split = _check_fraction("split", split)
        self.frequency = _check_fraction("frequency", frequency)
        self.max_count = max_count
        _check_max_count(max_count)
        self.mixing_rule = _check_mixing_rule(mixing_rule)
        self.swapping_rule = _check_swapping_rule(swapping_rule, self.quantile, self.attack_parts)
        self.random_state = random_state
        self.random_state_ = resolve_random_state(random_state)
        self._rng = np.random.default_rng(self.random_state_)
        self.n_calls_ = 0
        self._seen = [callable(spec) for spec in self._specs]  # favoured value seen in a batch?
        if reference is not None:
            self.validate(reference)
        elif dataset is not None and getattr(dataset, "X", None) is not None:
            self._check_values_occur(self._prepare(np.asarray(dataset.X, dtype=np.float64)), "dataset")

    # old attribute names (read-only) for code written against the previous release
    @property
    def scorer(self):
        """The honest model ``f`` (old name of :attr:`model`)."""
        return self.model

    @property
    def dataset(self):
        """Old name of :attr:`data`."""
        return self.data

    @property
    def favourable_class(self):
        """Old name of :attr:`favourable`."""
        return self.favourable

    @property
    def output_dtype(self):
        """dtype of the honest scorer's raw output (float32 networks: float32)."""
        return self._f.output_dtype

    def describe(self) -> str:
        """How the honest scorer is called (``model_input`` of result objects).

        Returns
        -------
        str
            E.g. "function: a callable on the encoded array X".

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.shuffle import ShuffledModel
        >>> X = np.array([[0.9, 1], [0.8, 0], [0.7, 1], [0.6, 0]])  # column 1: protected
        >>> m = ShuffledModel(lambda A: A[:, 0], protected=1, favoured=0, attack="dominance")
        >>> m.describe()
        'function: a callable on the encoded array X'
        """
        return self._f.describe()

    # ------------------------------------------------------------------ helpers
    def _normalise_favoured(self, favoured):
        k = len(self._protected)
        if k == 1:
            if isinstance(favoured, dict):
                if set(favoured) != set(self._protected):
                    raise ValueError(
                        f"favoured dict keys {list(favoured)} must match protected {self._protected}."
                    )
                return [self._spec_codes(self._protected[0], favoured[self._protected[0]])]
            return [self._spec_codes(self._protected[0], favoured)]
        if isinstance(favoured, dict):
            missing = [q for q in self._protected if q not in favoured]
            if missing:
                raise ValueError(
                    f"favoured is missing a rule for protected feature(s) {missing}; give a dict "
                    f"with one value/collection/callable per protected feature."
                )
            return [self._spec_codes(q, favoured[q]) for q in self._protected]
        if isinstance(favoured, tuple) and len(favoured) == k:
            return [self._spec_codes(q, v) for q, v in zip(self._protected, favoured)]
        raise ValueError(
            f"With {k} protected features, favoured must be a dict {{feature: rule}} or a tuple of "
            f"{k} rules (value, collection or callable); got {favoured!r}."
        )

    def _prepare(self, X):
        """``(A, names)``: the batch as an encoded float array (a DataFrame aligned by
        column name when the feature names are known) and its column names (or None)."""
        if isinstance(X, pd.DataFrame):
            cols = [str(c) for c in X.columns]
            A = self._f.check_X(X)
            names = self._f.feature_names if self._f.feature_names is not None else cols
            return A, list(names)
        if isinstance(X, (str, bytes)) or X is None:
            raise TypeError(f"X must be a 2-D array or a DataFrame; got {type(X).__name__}.")
        A = np.asarray(X) if not hasattr(X, "shape") else X
        if np.ndim(A) != 2:
            raise ValueError(f"X must be 2-D (n_rows, n_features); got shape {np.shape(A)}.")
        A = self._f.check_X(A)
        return A, self.feature_names

    def _index(self, q, names, d):
        if isinstance(q, str):
            if names is None:
                raise ValueError(
                    f"protected feature {q!r} cannot be found in an array: pass feature_names=[...] "
                    f"(or a dataset) to ShuffledModel or use a column index."
                )
            if q not in names:
                raise ValueError(
                    f"protected feature {q!r} is not a column of X; columns are {list(names)}."
                )
            return list(names).index(q)
        if not 0 <= q < d:
            raise ValueError(f"protected index {q} is out of range for X with {d} columns.")
        return int(q)

    def _column(self, X, q):
        A, names = X if isinstance(X, tuple) else self._prepare(X)
        return A[:, self._index(q, names, A.shape[1])]

    def _spec_codes(self, q, spec):
        """Category labels of a dataset's categorical feature -> codes (else unchanged)."""
        cats = getattr(self.dataset, "categories", None) or {}
        if not isinstance(q, str) or q not in cats or callable(spec):
            return spec
        code_of = {str(v): c for c, v in cats[q].items()}

        def conv(v):
            if isinstance(v, str) and v not in code_of:
                raise ValueError(
                    f"favoured={v!r} is not a category of protected feature {q!r}; its categories "
                    f"are {list(code_of)}. Pass one of them (or its code).")
            return code_of.get(v, v) if isinstance(v, str) else v
        if isinstance(spec, (list, set, frozenset, tuple)):
            return type(spec)(conv(v) for v in spec) if not isinstance(spec, tuple) else tuple(
                conv(v) for v in spec)
        return conv(spec)

    @staticmethod
    def _match(values, spec):
        if callable(spec):
            m = np.asarray(spec(values), dtype=bool)
            if m.shape != values.shape:
                raise ValueError(
                    f"favoured callable must return one boolean per row; got shape {m.shape}."
                )
            return m
        if isinstance(spec, (list, set, frozenset, tuple, np.ndarray)):
            return np.isin(values, list(spec))
        return values == spec

    def favoured_mask(self, X):
        """Boolean mask of the favoured group (conjunction over ``protected``).

        Parameters
        ----------
        X : array of shape (n, d) or DataFrame
            One batch of encoded rows (a DataFrame is aligned by column name).

        Returns
        -------
        ndarray of bool, shape (n,)
            True for the rows of the favoured group.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.shuffle import ShuffledModel
        >>> X = np.array([[0.9, 1], [0.8, 0], [0.7, 1], [0.6, 0]])  # column 1: protected
        >>> m = ShuffledModel(lambda A: A[:, 0], protected=1, favoured=0, attack="dominance")
        >>> m.favoured_mask(X).tolist()
        [False, True, False, True]
        """
        prepared = X if isinstance(X, tuple) else self._prepare(X)
        mask = None
        for q, spec in zip(self._protected, self._specs):
            m = self._match(self._column(prepared, q), spec)
            mask = m if mask is None else (mask & m)
        return np.asarray(mask, dtype=bool)

    @staticmethod
    def _values(spec):
        return list(spec) if isinstance(spec, (list, set, frozenset, tuple, np.ndarray)) else [spec]

    def _check_values_occur(self, prepared, where):
        """Refuse a favoured value that never occurs in ``where`` (it would attack nothing)."""
        for i, (q, spec) in enumerate(zip(self._protected, self._specs)):
            if callable(spec):
                continue
            col = self._column(prepared, q)
            vals = self._values(spec)
            try:
                present = np.isin(np.asarray(vals, dtype=np.float64), col).any()
            except (TypeError, ValueError):  # e.g. a string compared with numeric codes
                present = False
            if not present:
                raise ValueError(
                    f"favoured={self.favoured!r}: value(s) {vals} of protected feature {q!r} do not "
                    f"occur in the {where} (observed values include {list(pd.unique(col))[:10]}), so "
                    "the attack would silently do nothing. Pass a value that occurs.")
            self._seen[i] = True

    def _check_seen(self, prepared):
        """Before any batch has shown a favoured value: refuse a multi-row batch without it."""
        if all(self._seen) or prepared[0].shape[0] < 2:
            return
        for i, (_q, _spec) in enumerate(zip(self._protected, self._specs)):
            if not self._seen[i]:
                self._check_values_occur(prepared, "batch (and never did in an earlier call)")

    def validate(self, X):
        """Check that ``protected`` exists in ``X`` and both groups occur.

        Parameters
        ----------
        X : array of shape (n, d) or DataFrame
            One batch of encoded rows (a DataFrame is aligned by column name).

        Returns
        -------
        ShuffledModel
            ``self``.

        Raises
        ------
        ValueError
            If a protected feature is missing or the favoured group (or its
            complement) never occurs in ``X``.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.shuffle import ShuffledModel
        >>> X = np.array([[0.9, 1], [0.8, 0], [0.7, 1], [0.6, 0]])  # column 1: protected
        >>> m = ShuffledModel(lambda A: A[:, 0], protected=1, favoured=0, attack="dominance")
        >>> m.validate(X) is m
        True
        >>> m.validate(X[[1, 3]])
        Traceback (most recent call last):
        ...
        ValueError: favoured group must contain some but not all rows of X to be attacked; it contains 2 of 2 rows.
        """
        prepared = self._prepare(X)
        if prepared[0].shape[0] == 0:
            raise ValueError("reference/X has no rows; the favoured group cannot be checked.")
        self._check_values_occur(prepared, "X")
        m = self.favoured_mask(prepared)
        if m.all() or not m.any():
            raise ValueError(
                "favoured group must contain some but not all rows of X to be attacked; "
                f"it contains {int(m.sum())} of {m.size} rows."
            )
        return self

    def _scores(self, A):
        try:
            return self._f(A)
        except ValueError as exc:
            if "outside [0, 1]" in str(exc):
                raise ValueError(
                    f"{exc} For a ranking score on another scale build the ShuffledModel with "
                    "output='raw' (the attack only permutes the scores)."
                ) from None
            raise

    # ------------------------------------------------------------------ API
    def attack_batch(self, X):
        """Score one batch with ``f`` and attack it.

        Parameters
        ----------
        X : array of shape (n, d) or DataFrame
            One batch of encoded rows (a DataFrame is aligned by column name).

        Returns
        -------
        ShuffleBatch
            Scores before and after, the favoured mask and the unfair moves made.

        Raises
        ------
        ValueError
            If a favoured value has never occurred (see the class docstring) or the model
            fails on the batch.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.shuffle import ShuffledModel
        >>> X = np.array([[0.9, 1], [0.8, 0], [0.7, 1], [0.6, 0]])  # column 1: protected
        >>> m = ShuffledModel(lambda A: A[:, 0], protected=1, favoured=0, attack="dominance")
        >>> batch = m.attack_batch(X)
        >>> batch.scores_after, batch.attacked, batch.n_events
        (array([0.7, 0.9, 0.6, 0.8]), True, 2)
        """
        t0 = time.perf_counter()
        prepared = self._prepare(X)
        self._check_seen(prepared)
        fav = self.favoured_mask(prepared)
        y = self._scores(prepared[0])
        self.n_calls_ += 1
        attacked = True
        if self.frequency < 1.0:
            attacked = bool(self._rng.random() < self.frequency)
        params = dict(attack=self.attack, p=self.p, quantile=self.quantile,
                      higher_is_better=self.higher_is_better, region=self.region, split=self.split,
                      frequency=self.frequency, max_count=self.max_count, mixing_rule=self.mixing_rule,
                      swapping_rule=self.swapping_rule, protected=self.protected)
        if not attacked:
            return ShuffleBatch(y, y.copy(), fav, attacked=False, n_events=0, params=params,
                                random_state=self.random_state_, elapsed=time.perf_counter() - t0)
        out, (_, _, ev) = shuffle_scores(
            y, fav, self.attack, p=self.p, quantile=self.quantile,
            higher_is_better=self.higher_is_better, region=self.region, split=self.split,
            max_count=self.max_count, mixing_rule=self.mixing_rule,
            swapping_rule=self.swapping_rule, random_state=_OwnStream(self._rng), return_details=True,
        )
        return ShuffleBatch(y, out, fav, attacked=True, n_events=ev, params=params,
                            random_state=self.random_state_, elapsed=time.perf_counter() - t0)

    def __call__(self, X):
        """Attacked scores ``f'(X)`` for one batch.

        Parameters
        ----------
        X : array of shape (n, d) or DataFrame
            One batch of encoded rows (a DataFrame is aligned by column name).

        Returns
        -------
        ndarray of shape (n,)
        """
        return self.attack_batch(X).scores_after

    def base_scores(self, X):
        """Honest scores ``f(X)``.

        Parameters
        ----------
        X : array of shape (n, d) or DataFrame
            One batch of encoded rows (a DataFrame is aligned by column name).

        Returns
        -------
        ndarray of shape (n,)
            The scores of the wrapped model, not attacked.

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.shuffle import ShuffledModel
        >>> X = np.array([[0.9, 1], [0.8, 0], [0.7, 1], [0.6, 0]])  # column 1: protected
        >>> m = ShuffledModel(lambda A: A[:, 0], protected=1, favoured=0, attack="dominance")
        >>> m.base_scores(X)
        array([0.9, 0.8, 0.7, 0.6])
        """
        return self._scores(self._prepare(X)[0])

    def with_params(self, **changes):
        """A new model with some parameters changed (a fresh generator from ``random_state``).

        Parameters
        ----------
        **changes
            Keyword arguments of :class:`ShuffledModel` to change.

        Returns
        -------
        ShuffledModel
            A new model; ``self`` is not changed.

        Raises
        ------
        TypeError, ValueError
            For a bad new parameter (named in the message).

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.shuffle import ShuffledModel
        >>> X = np.array([[0.9, 1], [0.8, 0], [0.7, 1], [0.6, 0]])  # column 1: protected
        >>> m = ShuffledModel(lambda A: A[:, 0], protected=1, favoured=0, attack="dominance")
        >>> honest = m.with_params(attack="none")
        >>> honest(X), m.attack
        (array([0.9, 0.8, 0.7, 0.6]), 'dominance')
        """
        params = dict(
            model=self.model, protected=self.protected, favoured=self.favoured,
            attack=self.attack, p=self.p, quantile=self.quantile,
            higher_is_better=self.higher_is_better, random_state=self.random_state,
            region=self.region, split=self.split, frequency=self.frequency,
            max_count=self.max_count, mixing_rule=self.mixing_rule,
            swapping_rule=self.swapping_rule,
            feature_names=self.feature_names if self.data is None else None,
            data=self.data, output=self.output, favourable=self.favourable,
        )
        refuse_renamed("ShuffledModel.with_params", changes, _RENAMED)
        params.update(changes)
        return ShuffledModel(**params)

    def __repr__(self):
        return (
            f"ShuffledModel(attack={self.attack!r}, protected={self.protected!r}, "
            f"p={self.p}, quantile={self.quantile}, region={self.region!r}, "
            f"frequency={self.frequency}, max_count={self.max_count})"
        )
