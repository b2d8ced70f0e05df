"""numba kernels of the shuffling attacks (and nothing else).

Every kernel works on a batch that has already been sorted by Algorithm 1,
line 5 ("superior score on top"). The inputs are

``fav``   int8 array, ``fav[r] == 1`` when the item at sorted position ``r``
          belongs to the favoured group (the "males" of the paper's pseudocode);
``key``   float64 array of superiority keys in sorted order (non-increasing);
``u``     float64 array of uniform random numbers in [0, 1) (mixing only).

and every kernel returns ``new``: an int64 array such that the item at sorted
position ``new[r]`` receives the ``r``-th best score.  This is exactly the
``newId`` list of Algorithm 3 (and the re-ordered ``id`` column of Algorithms 2
and 4): "Sort([newId, y]) by newId" hands the ``r``-th sorted score to the
``r``-th id of the new order.

Kernels are plain-Python compatible (they run unchanged under
``NUMBA_DISABLE_JIT=1``) and compile on first call only.
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = [
    "mixing_order",
    "swapping_order_literal",
    "swapping_order_fast",
    "swapping_order_once",
]


@numba.njit(cache=True)
def mixing_order(fav, key, u, p, literal, max_count):  # pragma: no cover - jitted
    """Merge the two groups top-down (Algorithm 3; Dominance is ``p = 1``).

    Parameters
    ----------
    fav : int8[:]
    key : float64[:]
    u : float64[:]
        One uniform draw per merge step (only the first steps are used).
    p : float
        Probability that the coin hands the current best score to the
        favoured group's head.
    literal : bool
        ``True``: on "tail" the higher original score wins (Algorithm 3,
        line 8, favoured wins ties). ``False``: on "tail" the unfavoured head
        wins (random group merge of Yang & Stoyanovich 2017).
    max_count : int
        Maximum number of *unfair decisions* (a pick that differs from the
        pure merit merge); negative means unlimited. After the budget is used
        up the merge continues on merit.

    Returns
    -------
    new : int64[:]
    n_events : int64
        Number of unfair decisions taken.
    """
    n = fav.shape[0]
    fav_pos = np.empty(n, dtype=np.int64)
    unf_pos = np.empty(n, dtype=np.int64)
    nf = 0
    nu = 0
    for r in range(n):
        if fav[r] == 1:
            fav_pos[nf] = r
            nf += 1
        else:
            unf_pos[nu] = r
            nu += 1
    new = np.empty(n, dtype=np.int64)
    i = 0
    j = 0
    k = 0
    count = 0
    while i < nf and j < nu:
        a = fav_pos[i]
        b = unf_pos[j]
        merit_fav = key[b] <= key[a]
        if max_count >= 0 and count >= max_count:
            pick_fav = merit_fav
        else:
            if u[k] < p:
                pick_fav = True
            elif literal:
                pick_fav = merit_fav
            else:
                pick_fav = False
            if pick_fav != merit_fav:
                count += 1
        if pick_fav:
            new[k] = a
            i += 1
        else:
            new[k] = b
            j += 1
        k += 1
    while i < nf:
        new[k] = fav_pos[i]
        i += 1
        k += 1
    while j < nu:
        new[k] = unf_pos[j]
        j += 1
        k += 1
    return new, np.int64(count)


@numba.njit(cache=True)
def swapping_order_literal(fav, j0, max_count):  # pragma: no cover - jitted
    """Literal repeated Swapping (Algorithm 4 inside the outer loop of the text).

    Outer loop ``j = j0, j0 - 1, ..., 0``; inner loop ``i = j .. N-2``: when
    the item at ``i`` is unfavoured and the one at ``i + 1`` favoured, swap
    them (lines 3-5 of Algorithm 4). ``j0 = 0`` is the one-pass Swapping
    attack, ``j0 >= N - 2`` is Dominance. Quadratic; the reference for
    :func:`swapping_order_fast` and the path used when ``max_count`` limits
    the number of swaps.

    Returns
    -------
    new : int64[:]
    n_events : int64
        Number of swaps performed.
    """
    n = fav.shape[0]
    g = fav.copy()
    new = np.arange(n).astype(np.int64)
    count = 0
    if j0 > n - 2:
        j0 = n - 2
    j = j0
    while j >= 0:
        for i in range(j, n - 1):
            if max_count >= 0 and count >= max_count:
                return new, np.int64(count)
            if g[i] == 0 and g[i + 1] == 1:
                g[i] = 1
                g[i + 1] = 0
                t = new[i]
                new[i] = new[i + 1]
                new[i + 1] = t
                count += 1
        j -= 1
    return new, np.int64(count)


@numba.njit(cache=True)
def swapping_order_once(fav, max_count):  # pragma: no cover - jitted
    """Algorithm 4 with its line 4 removed: each adjacent pair swapped at most once.

    One pass ``i = 0 .. N-2`` over the sorted batch; when the item at ``i`` is
    unfavoured and the one at ``i + 1`` favoured *in the original group column*
    ``p`` (line 3), their ids are swapped (line 5). Line 4, which also swaps
    ``p[i]`` and ``p[i + 1]``, is left out -- the paper's "Relaxing" paragraph:
    "If we remove line 4 in Algorithm 4, the female candidate in such case will be
    restricted to swapped only one time". Because ``p`` never changes, the pairs
    that swap are the disjoint (unfavoured, favoured) neighbours of the original
    order, and every item moves by at most one position.

    Parameters
    ----------
    fav : int8[:]
    max_count : int
        At most this many swaps, counted from the top; negative = unlimited.

    Returns
    -------
    new : int64[:]
    n_events : int64
        Number of swaps performed.
    """
    n = fav.shape[0]
    new = np.arange(n).astype(np.int64)
    count = 0
    for i in range(n - 1):
        if max_count >= 0 and count >= max_count:
            break
        if fav[i] == 0 and fav[i + 1] == 1:
            t = new[i]
            new[i] = new[i + 1]
            new[i + 1] = t
            count += 1
    return new, np.int64(count)


@numba.njit(cache=True)
def swapping_order_fast(fav, j0):  # pragma: no cover - jitted
    """O(N) equivalent of :func:`swapping_order_literal` without a count limit.

    A bubble pass over ``[j, N)`` that sinks unfavoured items past favoured
    ones acts on the *gap sequence* ``g_0, g_1, ..., g_F`` (``g_0`` favoured
    items above the first unfavoured one, ``g_t`` favoured items between the
    ``t``-th and ``t+1``-th unfavoured one) as follows: with ``s`` the first
    unfavoured item at a position ``>= j``, the gap ``g_s`` is merged into
    ``g_{s-1}`` (those favoured items move up one place each) and a zero gap
    is appended at the end. Swaps never reorder items of the same group, so
    the final gap sequence determines the final order. ``s`` never increases
    from one pass to the next, so a stack (gaps left of ``s``) and a queue
    (gaps from ``s`` on) give O(1) amortised work per pass.

    Returns
    -------
    new : int64[:]
    n_events : int64
        Number of swaps the literal algorithm would perform.
    """
    n = fav.shape[0]
    new = np.arange(n).astype(np.int64)
    if n < 2:
        return new, np.int64(0)
    if j0 > n - 2:
        j0 = n - 2
    # gaps: g[0] leading favoured count, g[t] favoured after t-th unfavoured
    n_unf = 0
    for r in range(n):
        if fav[r] == 0:
            n_unf += 1
    if n_unf == 0 or n_unf == n:
        return new, np.int64(0)
    n_fav = n - n_unf
    gaps = np.zeros(n_unf + 1, dtype=np.int64)
    t = 0
    for r in range(n):
        if fav[r] == 0:
            t += 1
        else:
            gaps[t] += 1
    # left stack holds g_0 .. g_{s-1}; right queue holds g_s .. g_F (+ zeros)
    left = np.empty(n_unf + 1, dtype=np.int64)
    size = 2 * (n_unf + 1) + n + 4
    right = np.zeros(size, dtype=np.int64)
    head = n_unf + 2  # room to push to the front
    tail = head
    for t in range(1, n_unf + 1):
        right[tail] = gaps[t]
        tail += 1
    left[0] = gaps[0]
    n_left = 1
    sum_left = gaps[0]
    s = 1  # 1-based index of the unfavoured item at the queue front
    count = 0
    j = j0
    while j >= 0:
        # position of unfavoured item s is (s - 1) + sum_left
        # move s left while unfavoured item s-1 sits at a position >= j
        while s > 1 and (s - 2) + sum_left - left[n_left - 1] >= j:
            top = left[n_left - 1]
            n_left -= 1
            sum_left -= top
            head -= 1
            right[head] = top
            s -= 1
        # move s right while unfavoured item s sits above j
        while s <= n_unf and (s - 1) + sum_left < j:
            g = right[head]
            head += 1
            left[n_left] = g
            n_left += 1
            sum_left += g
            s += 1
        if s <= n_unf:
            g = right[head]
            head += 1
            right[tail] = 0
            tail += 1
            # every favoured item below unfavoured item s moves up one place
            count += n_fav - sum_left
            left[n_left - 1] += g
            sum_left += g
        j -= 1
    # rebuild the final gap sequence and the order
    for t in range(n_left):
        gaps[t] = left[t]
    t = n_left
    while t <= n_unf:
        gaps[t] = right[head]
        head += 1
        t += 1
    # assign positions: favoured items in their order, unfavoured in theirs
    fav_pos = np.empty(n - n_unf, dtype=np.int64)
    unf_pos = np.empty(n_unf, dtype=np.int64)
    nf = 0
    nu = 0
    for r in range(n):
        if fav[r] == 1:
            fav_pos[nf] = r
            nf += 1
        else:
            unf_pos[nu] = r
            nu += 1
    k = 0
    nf = 0
    for t in range(n_unf + 1):
        for _ in range(gaps[t]):
            new[k] = fav_pos[nf]
            nf += 1
            k += 1
        if t < n_unf:
            new[k] = unf_pos[t]
            k += 1
    return new, np.int64(count)
