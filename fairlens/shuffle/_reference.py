"""Literal, slow transcriptions of Algorithms 1-4 of Yuan & Dasgupta.

These functions follow the pseudocode line by line on Python lists of
``[id, p, y]`` rows. They exist only to cross-check the fast kernels in
:mod:`fairlens.shuffle._kernels` (tests and benchmark) and are deliberately
unoptimised. ``p`` is ``True`` for the favoured group (the "males" of the
pseudocode).
"""
from __future__ import annotations

__all__ = [
    "algorithm1",
    "dominance_reference",
    "mixing_reference",
    "swapping_reference",
]


def algorithm1(y, p, attack, higher_is_better=True, **kwargs):
    """Algorithm 1: sort ``[id, p, y]`` with the superior score on top, attack.

    Python's ``sorted`` is stable, so ties keep their input order.
    Returns the attacked score list indexed by the original id.
    """
    n = len(y)  # line 2
    ids = list(range(n))  # line 3
    rows = list(zip(ids, list(p), list(y)))  # line 4
    sign = -1.0 if higher_is_better else 1.0
    rows = sorted(rows, key=lambda r: sign * r[2])  # line 5
    if attack is mixing_reference:
        kwargs.setdefault("higher_is_better", higher_is_better)
    return attack(rows, **kwargs)  # line 6


def _sort_by_id(new_ids, ys):
    pairs = sorted(zip(new_ids, ys), key=lambda t: t[0])
    return [v for _, v in pairs]


def dominance_reference(rows):
    """Algorithm 2 (Dominance)."""
    y = [r[2] for r in rows]  # line 1
    idp = [(r[0], r[1]) for r in rows]  # line 2
    idp = sorted(idp, key=lambda t: 0 if t[1] else 1)  # line 3 (stable)
    new_ids = [t[0] for t in idp]  # line 4-5: concat [id, p] with y
    return _sort_by_id(new_ids, y)  # line 6


def mixing_reference(rows, coins, prob, literal=True, higher_is_better=True):
    """Algorithm 3 (Mixing) with a given sequence of uniform draws ``coins``.

    ``unfairCoin(p)`` is "heads" when ``coins[k] < prob`` at merge step
    ``k``. With ``literal=True`` a tail falls through to line 8 (the superior
    score wins, the favoured head wins ties); with ``literal=False`` a tail
    hands the score to the unfavoured head.

    Line 8 reads ``y_female[0] <= y_male[0]``, written for the paper's running case
    "a higher value is superior"; the text says that on a tail "the one with a higher
    score will be given the new score", i.e. the *superior* head.  With
    ``higher_is_better=False`` (Algorithm 1's parameter "higher/lower f output is
    superior") the comparison is therefore made on superiority,
    ``y_male[0] <= y_female[0]``: comparing raw values would hand every tail to the
    inferior head, so that ``p = 0`` (no bias) would not even be the identity.
    """
    y = [r[2] for r in rows]  # line 1
    id_m = [r[0] for r in rows if r[1]]  # line 2
    y_m = [r[2] for r in rows if r[1]]
    id_f = [r[0] for r in rows if not r[1]]
    y_f = [r[2] for r in rows if not r[1]]
    new_ids = []  # line 3
    k = 0
    while id_m and id_f:  # line 4
        heads = coins[k] < prob
        k += 1
        if heads:  # line 5
            new_ids.append(id_m.pop(0))  # line 6
            y_m.pop(0)  # line 7
        elif literal and (y_f[0] <= y_m[0] if higher_is_better else y_m[0] <= y_f[0]):  # line 8
            new_ids.append(id_m.pop(0))  # line 9
            y_m.pop(0)  # line 10
        else:
            new_ids.append(id_f.pop(0))  # line 12
            y_f.pop(0)  # line 13
    if id_m:  # line 16
        new_ids.extend(id_m)  # line 17
    else:
        new_ids.extend(id_f)  # line 19
    return _sort_by_id(new_ids, y)  # line 21


def swapping_reference(rows, j0=0, line4=True):
    """Algorithm 4 (Swapping) wrapped in the outer loop described in the text.

    Outer loop ``j = j0 .. 0`` (``j0 = 0`` is plain Algorithm 4), inner
    loop ``i = j .. N-2``. ``line4=False`` leaves out line 4 (the swap of
    ``p[i]`` and ``p[i+1]``), the relaxation of the paper's "Relaxing" paragraph;
    it is defined for the single pass only (``j0 = 0``).
    """
    if not line4 and j0 != 0:
        raise ValueError("Algorithm 4 without line 4 is a single pass (j0 = 0).")
    y = [r[2] for r in rows]
    ids = [r[0] for r in rows]
    p = [r[1] for r in rows]
    n = len(y)  # line 1
    for j in range(min(j0, n - 2), -1, -1):
        for i in range(j, n - 1):  # line 2
            if (not p[i]) and p[i + 1]:  # line 3
                if line4:
                    p[i], p[i + 1] = p[i + 1], p[i]  # line 4
                ids[i], ids[i + 1] = ids[i + 1], ids[i]  # line 5
    return _sort_by_id(ids, y)  # line 8
