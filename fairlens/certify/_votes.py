"""The decision rules of the certified predictor, handed to the kernels as functions.

Every model is one flat additive ensemble (:class:`fairlens.certify._flat.FlatEnsemble`): each tree
adds its leaf's payload to class scores, and a *vote rule* turns the scores into the prediction.
Three rules cover every supported library:

* :data:`HARD` -- the majority of the trees' hard votes (the paper's rule: a
  FeaturePartitionedForest, and ``vote="hard"``): tree ``t`` adds 1 to the class ``leaf_class`` of
  its leaf; ties by ``rank`` (smallest wins); integer counts, no tolerance;
* :data:`SOFT` -- the soft vote of scikit-learn's forests (``forest.predict``): tree ``t`` adds its
  leaf's probability vector ``value[leaf]`` (K columns); the mean over the trees, first class on
  ties, replayed in scikit-learn's summation order; the bounds compare with ``tol``;
* :data:`ADDITIVE` -- summed raw scores of boosted trees: tree ``t`` adds ``value[leaf, 0]`` to the
  score of class ``group[t]`` (binary models: class 1, whose score is the margin), on top of the
  base scores ``base``; float32 accumulation in tree order when ``f32``; a replayed score within
  ``tol`` of a tie is *ambiguous* and the library's own ``predict`` decides; the bounds compare with
  ``tol_b``.

A vote rule is a :class:`VoteRule`: a named set of small ``@numba.njit(cache=True)`` functions (its
*steps*: the row's quantities and per-set weights of FLB and ELB, the cover search, the gains, bound
and decisions of the exhaustive search). The kernels of :mod:`fairlens.certify._bounds` and
:mod:`fairlens.certify._search` take the rule as an argument and call ``vote.step(...)``; numba
compiles each kernel once per rule. A :class:`VoteRule` is typed by its *name*
(:class:`VoteRuleType`), so a kernel compiled for a rule is cached on disk like any other (a
function passed as a plain numba argument would be typed by the function object and compiled again
in every process). In plain Python (``NUMBA_DISABLE_JIT=1``) ``vote.step`` is the Python function.

Section references are to the paper: FLB 4.3, ELB 4.4, brute force 4.1, more than two classes 4.6.
"""
import numba
import numpy as np
from numba.core import types
from numba.core.typing.templates import AttributeTemplate, infer_getattr
from numba.extending import NativeValue, lower_getattr_generic, models, register_model, typeof_impl, unbox

from ._walk import feature_max, goes_left, leaf, leaf_classes, top_sum

__all__ = ["VoteRule", "VoteRuleType", "HARD", "SOFT", "ADDITIVE", "RULES", "vote_rule",
           "soft_proba", "raw_scores", "hard_vote", "decide_scores", "row_quantities",
           "prepare_hard", "prepare_soft"]

#: The vote rules by name (a kernel compiled for a rule finds its steps here when it is typed).
RULES = {}

#: The steps every rule defines (each an njit function; see the rules below for their contracts).
STEPS = ("flb_scratch", "flb_out", "flb_row", "set_sizes", "elb_row", "elb_skip", "cover", "elb_sizes", "elb_out",
         "brute_scratch", "brute_row", "gain", "zeros", "fixed", "possible", "bb_leaf", "decide")


class VoteRule:
    """A decision rule whose steps the certification kernels call (``vote.flb_row(...)`` etc.).

    Parameters
    ----------
    name : str
        The rule's name (``"hard"``, ``"soft"``, ``"additive"``); the kernels are compiled, and
        cached, once per name.
    integer : bool
        Whether margins and set sizes are integer tree counts (the hard vote) rather than reals.
    literal : bool
        Whether the exhaustive search has a literal enumeration (``prune=False``); without one it
        always prunes (the same answer).
    max_classes : int or None
        The most classes the rule's kernels support (None: no limit).
    replay : callable
        ``replay(ens, X) -> class indices``: the rule's prediction replayed by the kernels (Python).
    covers : callable
        ``covers(ens, x, yi, budget, membership) -> dict``: the quantities of
        :func:`~fairlens.certify.instance_covers` for one row (Python): ``votes``, ``wrong``, ``ok``
        (whether the replay is correct; None when only the library's predict can say), ``delta``,
        ``weights``, ``plus``, ``minus`` (per class) and ``extra`` (attributes of the result).
    **steps : njit functions
        One function per entry of :data:`STEPS`.

    Examples
    --------
    >>> from fairlens.certify._votes import HARD, vote_rule
    >>> HARD.name, vote_rule("hard") is HARD, HARD.integer
    ('hard', True, True)
    """

    def __init__(self, name, *, integer, literal, max_classes, replay, covers, **steps):
        missing = [s for s in STEPS if s not in steps]
        if missing:
            raise ValueError(f"internal: vote rule {name!r} lacks the steps {missing}.")
        self.name = name
        self.integer, self.literal, self.max_classes = bool(integer), bool(literal), max_classes
        self.replay, self.covers = replay, covers
        self.steps = dict(steps)
        for k, fn in steps.items():
            setattr(self, k, fn)
        RULES[name] = self

    def __repr__(self):
        return f"VoteRule({self.name!r})"

    def __reduce__(self):  # the registered singleton, also in a worker process
        return (vote_rule, (self.name,))


def vote_rule(name):
    """The registered :class:`VoteRule` called ``name``.

    Parameters
    ----------
    name : str

    Returns
    -------
    VoteRule
    """
    return RULES[name]


class VoteRuleType(types.Dummy):
    """numba type of a :class:`VoteRule`: keyed by the rule's name (stable across processes, so
    kernels taking a rule are cached on disk); ``rule.step`` types as that step's dispatcher."""

    def __init__(self, rule):
        self.rule = rule
        super().__init__(name=f"VoteRule({rule})")

    @property
    def key(self):
        return self.rule


@typeof_impl.register(VoteRule)
def _typeof_vote_rule(val, c):
    return VoteRuleType(val.name)


register_model(VoteRuleType)(models.OpaqueModel)


@unbox(VoteRuleType)
def _unbox_vote_rule(typ, obj, c):
    return NativeValue(c.context.get_dummy_value())


@infer_getattr
class _VoteRuleAttributes(AttributeTemplate):
    key = VoteRuleType

    def generic_resolve(self, typ, attr):
        fn = RULES[typ.rule].steps.get(attr)
        if fn is not None:
            return types.Dispatcher(fn)
        return None


@lower_getattr_generic(VoteRuleType)
def _lower_vote_rule_step(context, builder, typ, value, attr):
    return context.get_dummy_value()  # the step is known from its type: the call is static


# ---------------------------------------------------------------------------------------------------
# shared by the weighted rules (soft vote and additive scores)
# ---------------------------------------------------------------------------------------------------
@numba.njit(cache=True)
def _weighted_sizes(ptr, trees, w, c, n_sets):
    sizes = np.zeros(n_sets, np.float64)
    for k in range(n_sets):
        s = 0.0
        for q in range(ptr[k], ptr[k + 1]):
            s += w[trees[q], c]
        sizes[k] = s
    return sizes


@numba.njit(cache=True)
def _cover_search_weighted(ptr, trees, w, c, sizes, n_features, budget, need, n_trees, pick_f, pick_s):
    """ELB's exhaustive cover search (section 4.4) with tree weights ``w[:, c]``.

    Looks for at most ``budget`` sets, never both ``S_f^+`` and ``S_f^-``, whose
    union weighs at least ``need``; same depth-first order and FLB-style cut as
    the hard vote's cover search. Returns ``(found, covered_weight)``.
    """
    m = feature_max(sizes, n_features)
    order = np.argsort(-m, kind="mergesort")
    nc = 0
    for j in range(n_features):
        if m[order[j]] > 0.0:
            nc += 1
    pick_f[:] = -1
    pick_s[:] = -1
    if nc == 0:
        return need <= 0.0, 0.0
    item_f = np.empty(2 * nc, np.int64)
    item_s = np.empty(2 * nc, np.int64)
    item_j = np.empty(2 * nc, np.int64)
    ni = 0
    for j in range(nc):
        f = order[j]
        for s in range(2):
            if sizes[2 * f + s] > 0.0:
                item_f[ni] = f
                item_s[ni] = s
                item_j[ni] = j
                ni += 1
    prefix = np.zeros(nc + 1, np.float64)
    for j in range(nc):
        prefix[j + 1] = prefix[j] + m[order[j]]
    cnt = np.zeros(n_trees, np.int64)
    covered = 0.0
    pick = np.full(budget, -1, np.int64)
    added = np.zeros(budget, np.bool_)
    depth = 0
    while depth >= 0:
        if added[depth]:
            k = 2 * item_f[pick[depth]] + item_s[pick[depth]]
            for q in range(ptr[k], ptr[k + 1]):
                t = trees[q]
                cnt[t] -= 1
                if cnt[t] == 0:
                    covered -= w[t, c]
            added[depth] = False
        nxt = pick[depth] + 1
        if depth > 0:
            jprev = item_j[pick[depth - 1]]
            while nxt < ni and item_j[nxt] == jprev:
                nxt += 1
        if nxt >= ni:
            depth -= 1
            continue
        jn = item_j[nxt]
        hi = min(jn + budget - depth, nc)
        if covered + prefix[hi] - prefix[jn] < need:
            depth -= 1
            continue
        pick[depth] = nxt
        k = 2 * item_f[nxt] + item_s[nxt]
        for q in range(ptr[k], ptr[k + 1]):
            t = trees[q]
            if cnt[t] == 0:
                covered += w[t, c]
            cnt[t] += 1
        added[depth] = True
        if covered >= need:
            for q in range(depth + 1):
                pick_f[q] = item_f[pick[q]]
                pick_s[q] = item_s[pick[q]]
            return True, covered
        if depth + 1 < budget:
            depth += 1
            pick[depth] = pick[depth - 1]
            added[depth] = False
    return False, 0.0


@numba.njit(cache=True)
def _flb_out_float(n):
    return np.full(n, np.nan, np.float64), np.full(n, np.nan, np.float64), -np.inf, 0.0


@numba.njit(cache=True)
def _elb_out_float(n):
    return np.zeros(n, np.float64), np.full(n, np.nan, np.float64)


@numba.njit(cache=True)
def _elb_skip_none(ens, ptr, trees, row, yi, c, budget, tol):
    return False


@numba.njit(cache=True)
def _cover_weighted(ens, ptr, trees, row, c, sizes, budget, tol, pf, ps):
    n_features = (ptr.shape[0] - 1) // 2
    return _cover_search_weighted(ptr, trees, row[0], c, sizes, n_features, budget, row[1][c] - tol,
                                  ens.roots.shape[0], pf, ps)


@numba.njit(cache=True)
def _sizes_weighted(ens, ptr, trees, row, yi, c):
    return _weighted_sizes(ptr, trees, row[0], c, ptr.shape[0] - 1)


@numba.njit(cache=True)
def _gain_weighted(row, t, c):
    return row[0][t, c]


@numba.njit(cache=True)
def _zeros_float(n):
    return np.zeros(n, np.float64)


# ---------------------------------------------------------------------------------------------------
# HARD: the majority of the trees' hard votes (paper, section 4; ties by rank)
# ---------------------------------------------------------------------------------------------------
@numba.njit(cache=True)
def _winner(counts, rank):
    best = 0
    for k in range(1, counts.shape[0]):
        if counts[k] > counts[best] or (counts[k] == counts[best] and rank[k] < rank[best]):
            best = k
    return best


@numba.njit(cache=True)
def hard_vote(tree_votes, n_classes, rank):
    """Majority (plurality) vote of hard tree predictions ``(n, n_trees)``, ties by ``rank``."""
    n = tree_votes.shape[0]
    out = np.empty(n, np.int64)
    counts = np.zeros(n_classes, np.int64)
    for i in range(n):
        counts[:] = 0
        for t in range(tree_votes.shape[1]):
            counts[tree_votes[i, t]] += 1
        out[i] = _winner(counts, rank)
    return out


@numba.njit(cache=True)
def prepare_hard(ens, n_classes, rank, x, yi):
    """Tree votes, class counts, whether correct, and delta per target class.

    ``delta[c]`` (section 4.2 / 4.6) is the number of trees among those *not*
    voting ``c`` that an attack must change so that ``c`` beats ``yi``:
    ``ceil((|C_y| - |C_c| + s) / 2)`` with ``s = 1`` when ``yi`` wins a tie
    against ``c`` (else 0). In the binary case with an odd number of trees this
    is the paper's ``ceil(|T| / 2) - |C_bar|``. ``delta[yi] = -1``.
    """
    leaf_class, roots = ens.leaf_class, ens.roots
    n_trees = roots.shape[0]
    votes = np.empty(n_trees, np.int64)
    counts = np.zeros(n_classes, np.int64)
    for t in range(n_trees):
        c = leaf_class[leaf(ens, roots[t], x)]
        votes[t] = c
        counts[c] += 1
    correct = _winner(counts, rank) == yi
    delta = np.full(n_classes, -1, np.int64)
    for c in range(n_classes):
        if c != yi:
            s = 1 if rank[yi] < rank[c] else 0
            delta[c] = (counts[yi] - counts[c] + s + 1) // 2
    return votes, counts, correct, delta


@numba.njit(cache=True)
def _sizes_in_universe(ptr, trees, votes, c, n_sets):
    """|S_k ∩ U_c| for every set k, where U_c = trees not voting class c."""
    sizes = np.zeros(n_sets, np.int64)
    for k in range(n_sets):
        cnt = 0
        for q in range(ptr[k], ptr[k + 1]):
            if votes[trees[q]] != c:
                cnt += 1
        sizes[k] = cnt
    return sizes


@numba.njit(cache=True)
def _cover_search(ptr, trees, votes, c, sizes, n_features, budget, delta, n_trees, pick_f, pick_s):
    """Exhaustive search (section 4.4) for at most ``budget`` sets, never both
    ``S_f^+`` and ``S_f^-``, covering at least ``delta`` trees not voting ``c``.

    Depth-first over features sorted by ``max(|S_f^+|, |S_f^-|)``; a branch is
    cut when the covered count plus the sizes of the next largest feature sets
    cannot reach ``delta`` (the FLB argument applied to the remaining picks), so
    the answer is that of the full enumeration. Writes the cover found into
    ``pick_f``/``pick_s`` (-1 padded) and returns ``(found, covered)``.
    """
    m = feature_max(sizes, n_features)
    order = np.argsort(-m, kind="mergesort")
    nc = 0
    for j in range(n_features):
        if m[order[j]] > 0:
            nc += 1
    pick_f[:] = -1
    pick_s[:] = -1
    if nc == 0:
        return False, 0
    item_f = np.empty(2 * nc, np.int64)
    item_s = np.empty(2 * nc, np.int64)
    item_j = np.empty(2 * nc, np.int64)
    ni = 0
    for j in range(nc):
        f = order[j]
        for s in range(2):
            if sizes[2 * f + s] > 0:
                item_f[ni] = f
                item_s[ni] = s
                item_j[ni] = j
                ni += 1
    prefix = np.zeros(nc + 1, np.int64)
    for j in range(nc):
        prefix[j + 1] = prefix[j] + m[order[j]]
    cnt = np.zeros(n_trees, np.int64)
    covered = 0
    pick = np.full(budget, -1, np.int64)
    added = np.zeros(budget, np.bool_)
    depth = 0
    while depth >= 0:
        if added[depth]:
            k = 2 * item_f[pick[depth]] + item_s[pick[depth]]
            for q in range(ptr[k], ptr[k + 1]):
                t = trees[q]
                if votes[t] != c:
                    cnt[t] -= 1
                    if cnt[t] == 0:
                        covered -= 1
            added[depth] = False
        nxt = pick[depth] + 1
        if depth > 0:
            jprev = item_j[pick[depth - 1]]
            while nxt < ni and item_j[nxt] == jprev:
                nxt += 1
        if nxt >= ni:
            depth -= 1
            continue
        jn = item_j[nxt]
        hi = min(jn + budget - depth, nc)
        if covered + prefix[hi] - prefix[jn] < delta:
            depth -= 1
            continue
        pick[depth] = nxt
        k = 2 * item_f[nxt] + item_s[nxt]
        for q in range(ptr[k], ptr[k + 1]):
            t = trees[q]
            if votes[t] != c:
                if cnt[t] == 0:
                    covered += 1
                cnt[t] += 1
        added[depth] = True
        if covered >= delta:
            for q in range(depth + 1):
                pick_f[q] = item_f[pick[q]]
                pick_s[q] = item_s[pick[q]]
            return True, covered
        if depth + 1 < budget:
            depth += 1
            pick[depth] = pick[depth - 1]
            added[depth] = False
    return False, 0


@numba.njit(cache=True)
def _flb_scratch_hard(ens, n_features, budget):
    return (ens.rank,)


@numba.njit(cache=True)
def _flb_out_hard(n):
    return np.zeros(n, np.int64), np.full(n, -1, np.int64), -(1 << 62), 0


@numba.njit(cache=True)
def _flb_row_hard(ens, x, yi, budget, sc):
    votes, counts, ok, delta = prepare_hard(ens, sc[0].shape[0], sc[0], x, yi)
    return ok, (votes, delta), 0


@numba.njit(cache=True)
def _set_sizes_hard(ens, ptr, trees, row, yi, c):
    return _sizes_in_universe(ptr, trees, row[0], c, ptr.shape[0] - 1)


@numba.njit(cache=True)
def _elb_row_hard(ens, x, yi, budget, sc):
    votes, counts, ok, delta = prepare_hard(ens, sc[0].shape[0], sc[0], x, yi)
    return ok, (votes, delta, delta), 0


@numba.njit(cache=True)
def _cover_hard(ens, ptr, trees, row, c, sizes, budget, tol, pf, ps):
    n_features = (ptr.shape[0] - 1) // 2
    return _cover_search(ptr, trees, row[0], c, sizes, n_features, budget, row[1][c], ens.roots.shape[0], pf, ps)


@numba.njit(cache=True)
def _elb_out_hard(n):
    return np.zeros(n, np.int64), np.full(n, -1, np.int64)


@numba.njit(cache=True)
def _brute_scratch_hard(ens, n_features, budget):
    K = ens.rank.shape[0]
    no_f = np.empty(0, np.float64)
    no_i = np.empty(0, np.int64)
    return (ens.rank,), (np.empty(K, np.int64), np.empty(K, np.int64), no_f, no_i, no_i, no_f)


@numba.njit(cache=True)
def _brute_row_hard(ens, x, yi, budget, sc):
    votes, counts, ok, delta = prepare_hard(ens, sc[0].shape[0], sc[0], x, yi)
    return ok, (votes, delta, counts), 0


@numba.njit(cache=True)
def _gain_hard(row, t, c):
    return 1 if row[0][t] != c else 0


@numba.njit(cache=True)
def _zeros_int(n):
    return np.zeros(n, np.int64)


@numba.njit(cache=True)
def _fixed_hard(ens, row, yi, cnt, S, n_aff):
    fixed, aff, votes = S.fixed, S.aff, row[0]
    fixed[:] = row[2]
    for a in range(n_aff):
        fixed[votes[aff[a]]] -= 1


@numba.njit(cache=True)
def _possible_hard(ens, S, n_aff, yi, tol):
    """Sound test used by the branch and bound of the brute force.

    Attacked feature ``f`` (``ppos[f] = q >= 0``) may take any relevant value
    with index in ``[rlo[q], rhi[q]]``; the others keep ``x``. Each affected
    tree is traversed along every branch some allowed value reaches, giving the
    classes it may vote. The attack is possible only if some class ``c`` can
    gather at least as many votes as ``yi`` surely keeps (ties by ``rank``).
    When every range is a single value this is the exact forest vote.
    """
    x, aff, ppos, rlo, rhi, stack = S.x, S.aff, S.ppos, S.rlo, S.rhi, S.stack
    fixed_counts, maxc = S.fixed, S.bound
    feature, threshold, left, right, roots = ens.feature, ens.threshold, ens.left, ens.right, ens.roots
    leaf_class, missing_left, values, rank = ens.leaf_class, ens.missing_left, ens.values, ens.rank
    n_classes = fixed_counts.shape[0]
    maxc[:] = fixed_counts
    miny = fixed_counts[yi]
    for a in range(n_aff):
        t = aff[a]
        mask = 0
        sp = 1
        stack[0] = roots[t]
        while sp > 0:
            sp -= 1
            node = stack[sp]
            f = feature[node]
            if f < 0:
                mask |= 1 << leaf_class[node]
                continue
            q = ppos[f]
            if q < 0:
                if goes_left(x[f], threshold, missing_left, node):
                    stack[sp] = left[node]
                else:
                    stack[sp] = right[node]
                sp += 1
            else:
                if values[rlo[q]] <= threshold[node]:
                    stack[sp] = left[node]
                    sp += 1
                if values[rhi[q]] > threshold[node]:
                    stack[sp] = right[node]
                    sp += 1
        for c in range(n_classes):
            if (mask >> c) & 1:
                maxc[c] += 1
        if mask == (1 << yi):
            miny += 1
    for c in range(n_classes):
        if c != yi:
            if maxc[c] > miny or (maxc[c] == miny and rank[c] < rank[yi]):
                return True
    return False


@numba.njit(cache=True)
def _bb_leaf_hard(ens, S, k, n_aff, yi):
    return 1  # on single values the bound is the exact vote


@numba.njit(cache=True)
def _decide_hard(ens, S, row, n_aff, yi):
    votes, counts, newcounts, aff, xp = row[0], row[2], S.bound, S.aff, S.xp
    leaf_class, roots = ens.leaf_class, ens.roots
    newcounts[:] = counts
    for a in range(n_aff):
        t = aff[a]
        c2 = leaf_class[leaf(ens, roots[t], xp)]
        if c2 != votes[t]:
            newcounts[votes[t]] -= 1
            newcounts[c2] += 1
    return 1 if _winner(newcounts, ens.rank) != yi else 0


# ---------------------------------------------------------------------------------------------------
# SOFT: the soft vote of scikit-learn's forests (what RandomForest/ExtraTrees ``predict`` returns)
# ---------------------------------------------------------------------------------------------------
# ``value`` (n_nodes, K) holds every leaf's class-probability vector (``tree_.value``, zeros on
# internal nodes); ``tmax`` (n_trees, K, K) holds ``tmax[t, c, y] = max over the leaves l of tree t
# of p_l[c] - p_l[y]`` (the best a tree can do for class ``c`` against ``y`` wherever an attacker
# sends ``x``). The prediction is replayed with scikit-learn's own arithmetic: ``out = 0``, then
# ``out += p_t`` tree by tree in the order of ``estimators_``, then ``out /= n_trees`` and the first
# index of the maximum (``numpy.argmax``). Bounds use real-number margins with a tolerance ``tol``
# (a row is certified only when the margin exceeds the largest possible gain by more than ``tol``);
# every attack found is confirmed with the exact replay, so rounding can make a bound looser, never
# wrong.
@numba.njit(cache=True)
def _soft_argmax(leaf_proba, leaves, n_classes, out):
    n_trees = leaves.shape[0]
    for c in range(n_classes):
        out[c] = 0.0
    for t in range(n_trees):
        node = leaves[t]
        for c in range(n_classes):
            out[c] += leaf_proba[node, c]
    best = 0
    for c in range(n_classes):
        out[c] = out[c] / n_trees
        if out[c] > out[best]:
            best = c
    return best


@numba.njit(cache=True)
def soft_proba(ens, X):
    """``forest.predict_proba`` replayed in scikit-learn's summation order: (n, K) float64."""
    leaf_proba, roots = ens.value, ens.roots
    n = X.shape[0]
    n_trees = roots.shape[0]
    K = leaf_proba.shape[1]
    out = np.empty((n, K), np.float64)
    leaves = np.empty(n_trees, np.int64)
    acc = np.empty(K, np.float64)
    for i in range(n):
        x = X[i]
        for t in range(n_trees):
            leaves[t] = leaf(ens, roots[t], x)
        _soft_argmax(leaf_proba, leaves, K, acc)
        out[i, :] = acc
    return out


@numba.njit(cache=True)
def prepare_soft(ens, x, yi, leaves, acc, d, w, margin):
    """Leaves, exact soft prediction, and the per-tree quantities of the soft bounds.

    Fills ``leaves`` (n_trees,), ``d[t, c] = p_t[c] - p_t[y]`` at the current leaf,
    ``w[t, c] = tmax[t, c, y] - d[t, c] >= 0`` (the largest swing of tree ``t``
    towards ``c``) and ``margin[c] = sum_t p_t[y] - p_t[c]`` (real-number margin, the
    soft analogue of delta). Returns whether the exact prediction is ``yi``.
    """
    leaf_proba, roots, tmax = ens.value, ens.roots, ens.tmax
    n_trees = roots.shape[0]
    K = leaf_proba.shape[1]
    for t in range(n_trees):
        leaves[t] = leaf(ens, roots[t], x)
    pred = _soft_argmax(leaf_proba, leaves, K, acc)
    for c in range(K):
        margin[c] = 0.0
    for t in range(n_trees):
        node = leaves[t]
        for c in range(K):
            dd = leaf_proba[node, c] - leaf_proba[node, yi]
            d[t, c] = dd
            ww = tmax[t, c, yi] - dd
            w[t, c] = ww if ww > 0.0 else 0.0
            margin[c] -= dd
    return pred == yi


@numba.njit(cache=True)
def _soft_flips(ens, leaves, aff, n_aff, xp, yi, tmp_leaves, acc):
    """Exact replay of ``forest.predict`` on ``xp`` (only the trees ``aff`` re-walked)."""
    leaf_proba, roots = ens.value, ens.roots
    tmp_leaves[:] = leaves
    for a in range(n_aff):
        t = aff[a]
        tmp_leaves[t] = leaf(ens, roots[t], xp)
    return _soft_argmax(leaf_proba, tmp_leaves, leaf_proba.shape[1], acc) != yi


@numba.njit(cache=True)
def _flb_scratch_soft(ens, n_features, budget):
    n_trees = ens.roots.shape[0]
    K = ens.value.shape[1]
    return (np.empty(n_trees, np.int64), np.empty(K, np.float64), np.empty((n_trees, K), np.float64),
            np.empty((n_trees, K), np.float64), np.empty(K, np.float64))


@numba.njit(cache=True)
def _flb_row_soft(ens, x, yi, budget, sc):
    leaves, acc, dmat, w, margin = sc
    ok = prepare_soft(ens, x, yi, leaves, acc, dmat, w, margin)
    return ok, (w, margin), ens.tol


@numba.njit(cache=True)
def _elb_row_soft(ens, x, yi, budget, sc):
    leaves, acc, dmat, w, margin = sc
    ok = prepare_soft(ens, x, yi, leaves, acc, dmat, w, margin)
    return ok, (w, margin, w), ens.tol


@numba.njit(cache=True)
def _brute_scratch_soft(ens, n_features, budget):
    n_trees = ens.roots.shape[0]
    K = ens.value.shape[1]
    leaves = np.empty(n_trees, np.int64)
    acc = np.empty(K, np.float64)
    row_sc = (leaves, acc, np.empty((n_trees, K), np.float64), np.empty((n_trees, K), np.float64),
              np.empty(K, np.float64))
    return row_sc, (np.empty(K, np.float64), np.empty(K, np.float64), np.empty(K, np.float64), leaves,
                    np.empty(n_trees, np.int64), acc)


@numba.njit(cache=True)
def _brute_row_soft(ens, x, yi, budget, sc):
    leaves, acc, dmat, w, margin = sc
    ok = prepare_soft(ens, x, yi, leaves, acc, dmat, w, margin)
    return ok, (w, margin, dmat), ens.tol


@numba.njit(cache=True)
def _fixed_soft(ens, row, yi, cnt, S, n_aff):
    fixed, dmat = S.fixed, row[2]
    K = fixed.shape[0]
    fixed[:] = 0.0
    for t in range(cnt.shape[0]):
        if cnt[t] == 0:
            for c in range(K):
                fixed[c] += dmat[t, c]


@numba.njit(cache=True)
def _possible_soft(ens, S, n_aff, yi, tol):
    """Sound test of the soft branch and bound (the analogue of the hard vote's).

    Every affected tree adds, for each class ``c``, the best ``p_l[c] - p_l[y]`` over
    the leaves ``l`` some allowed value reaches; ``fixed[c]`` holds the sum over the
    other trees. Some completion can beat ``y`` only if a bound reaches ``-tol``.
    """
    x, aff, ppos, rlo, rhi, stack = S.x, S.aff, S.ppos, S.rlo, S.rhi, S.stack
    fixed, bound, best = S.fixed, S.bound, S.best
    feature, threshold, left, right, roots = ens.feature, ens.threshold, ens.left, ens.right, ens.roots
    leaf_proba, missing_left, values = ens.value, ens.missing_left, ens.values
    K = leaf_proba.shape[1]
    bound[:] = fixed
    for a in range(n_aff):
        t = aff[a]
        best[:] = -np.inf
        sp = 1
        stack[0] = roots[t]
        while sp > 0:
            sp -= 1
            node = stack[sp]
            f = feature[node]
            if f < 0:
                for c in range(K):
                    v = leaf_proba[node, c] - leaf_proba[node, yi]
                    if v > best[c]:
                        best[c] = v
                continue
            q = ppos[f]
            if q < 0:
                if goes_left(x[f], threshold, missing_left, node):
                    stack[sp] = left[node]
                else:
                    stack[sp] = right[node]
                sp += 1
            else:
                if values[rlo[q]] <= threshold[node]:
                    stack[sp] = left[node]
                    sp += 1
                if values[rhi[q]] > threshold[node]:
                    stack[sp] = right[node]
                    sp += 1
        for c in range(K):
            bound[c] += best[c]
    for c in range(K):
        if c != yi and bound[c] >= -tol:
            return True
    return False


@numba.njit(cache=True)
def _bb_leaf_soft(ens, S, k, n_aff, yi):
    pick, item_f, x, xp, values = S.pick, S.item_f, S.x, S.xp, ens.values
    for qq in range(k):
        xp[item_f[pick[qq]]] = values[S.cur[qq]]
    flips = _soft_flips(ens, S.leaves, S.aff, n_aff, xp, yi, S.tmp_leaves, S.acc)
    for qq in range(k):
        f = item_f[pick[qq]]
        xp[f] = x[f]
    return 1 if flips else 0


@numba.njit(cache=True)
def _decide_soft(ens, S, row, n_aff, yi):
    return 1 if _soft_flips(ens, S.leaves, S.aff, n_aff, S.xp, yi, S.tmp_leaves, S.acc) else 0


# ---------------------------------------------------------------------------------------------------
# ADDITIVE: summed raw scores of boosted trees (argmax; the library decides near ties)
# ---------------------------------------------------------------------------------------------------
# ``value[leaf, 0]`` is the leaf value a tree adds to the score of class ``group[t]`` (binary models:
# class 1, whose score is the margin; class 0 keeps its base score); ``base`` the base scores;
# ``vmin``/``vmax`` a tree's smallest/largest leaf value; ``f32``: float32 accumulation in tree order
# (XGBoost's CPU predictor, bit for bit). For an instance predicted ``y`` the margin towards ``c`` is
# ``s_y - s_c``; a replayed score vector is *decisive* for ``y`` when every margin exceeds ``tol``,
# decisive against ``y`` when some margin is below ``-tol``, *ambiguous* in between (the library's
# link/tie rule decides: the caller asks its ``predict``). Bounds (generalised FLB/ELB, sections
# 4.3/4.4): tree ``t`` can lower the margin towards ``c`` by at most its swing -- ``value(leaf) -
# value(L)`` when it adds to ``y``, ``value(L) - value(leaf)`` when it adds to ``c``, else 0, over
# the leaves ``L`` reachable with ``b`` features (:func:`_budget_weights`) -- and only if an attacked
# feature is tested on its path; they compare real-number margins with ``tol_b`` (``tol`` plus the
# worst float32 accumulation error), so they are sound for the library's arithmetic.
@numba.njit(cache=True)
def _add_scores(value, group, leaves, base, f32, out):
    """``out = base + sum_t value[leaf_t, 0]`` into ``out[group[t]]``, in tree order
    (float32 rounding after each addition when ``f32``)."""
    K = base.shape[0]
    for c in range(K):
        out[c] = base[c]
    n_trees = leaves.shape[0]
    if f32:
        for t in range(n_trees):
            g = group[t]
            out[g] = np.float64(np.float32(out[g] + value[leaves[t], 0]))
    else:
        for t in range(n_trees):
            g = group[t]
            out[g] = out[g] + value[leaves[t], 0]


@numba.njit(cache=True)
def raw_scores(ens, X):
    """Replayed raw scores (n, K) of the rows of ``X`` (the library's arithmetic)."""
    value, roots = ens.value, ens.roots
    group, base, f32 = ens.group, ens.base, ens.f32
    n = X.shape[0]
    n_trees = roots.shape[0]
    K = base.shape[0]
    out = np.empty((n, K), np.float64)
    leaves = np.empty(n_trees, np.int64)
    acc = np.empty(K, np.float64)
    for i in range(n):
        for t in range(n_trees):
            leaves[t] = leaf(ens, roots[t], X[i])
        _add_scores(value, group, leaves, base, f32, acc)
        out[i, :] = acc
    return out


@numba.njit(cache=True)
def decide_scores(s, yi, tol):
    """0: decisively ``yi``; 1: decisively another class; 2: ambiguous (within ``tol``)."""
    amb = False
    for c in range(s.shape[0]):
        if c == yi:
            continue
        d = s[yi] - s[c]
        if d < -tol:
            return 1
        if d <= tol:
            amb = True
    return 2 if amb else 0


@numba.njit(cache=True)
def _prepare_row(ens, x, yi, leaves, w, margin):
    """Leaves, swings ``w[t, c]`` and real-number margins ``margin[c] = s_y - s_c``."""
    value, roots = ens.value, ens.roots
    group, base, vmin, vmax = ens.group, ens.base, ens.vmin, ens.vmax
    n_trees = roots.shape[0]
    K = base.shape[0]
    for c in range(K):
        margin[c] = base[yi] - base[c]
    for t in range(n_trees):
        lf = leaf(ens, roots[t], x)
        leaves[t] = lf
        g = group[t]
        v = value[lf, 0]
        for c in range(K):
            w[t, c] = 0.0
        if g == yi:
            for c in range(K):
                if c != yi:
                    margin[c] += v
                    w[t, c] = v - vmin[t]
        else:
            margin[g] -= v
            w[t, g] = vmax[t] - v


@numba.njit(cache=True)
def _budget_weights(ens, x, yi, leaves, budget, bw):
    """Budget-aware swings (sharper than the global swing ``w``; still sound).

    A leaf ``L`` of tree ``t`` can only be reached by an attack on the features
    ``D(L)`` where ``L``'s path leaves the instance's path side (each in one
    direction); so with at most ``budget`` features only leaves with
    ``|D(L)| <= budget`` and consistent directions count. Its gain (``value(leaf)
    - value(L)`` when ``t`` adds to ``y``, the opposite when it adds to another
    class) is credited to the set ``k`` (``2 f`` for ``S_f^+``, ``2 f + 1`` for
    ``S_f^-``) of the *first* node where ``L``'s path leaves the instance's path
    -- a node on the instance's path, so ``t`` is in that ``S_f^±``. Any attack
    that moves ``t`` to ``L`` attacks that feature in that direction, hence
    ``sum over the attacked sets of best[:, k]`` bounds the margin's fall.

    ``bw`` holds the buffers of :func:`_bw_buffers`; fills ``best = bw[0]`` (n_trees, 2 d) and
    ``wb = bw[1]`` with ``wb[t] = max_k best[t, k]``.

    A row without NaN walks the trees without the NaN test (:func:`_budget_walk` compiled with
    ``missing_left=None``): the same answer (a finite value never reads ``missing_left``), and the
    NaN test in this hot walk cost FLB/ELB 15-20% on boosted models.
    """
    for f in range(x.shape[0]):
        if x[f] != x[f]:
            _budget_walk(ens, ens.missing_left, x, yi, leaves, budget, bw)
            return
    _budget_walk(ens, None, x, yi, leaves, budget, bw)


@numba.njit(cache=True)
def _budget_walk(ens, missing_left, x, yi, leaves, budget, bw):
    """The walk of :func:`_budget_weights`; ``missing_left`` is ``ens.missing_left`` or ``None`` (the
    row has no NaN: the split rule :func:`~fairlens.certify._walk.goes_left` then compiles to
    ``x <= threshold``)."""
    best, wb, st_node, st_f1, st_cnt, st_df, st_ds, sub_lo, sub_hi = bw
    feature, threshold, left, right, roots = ens.feature, ens.threshold, ens.left, ens.right, ens.roots
    value, group = ens.value, ens.group
    n_trees = roots.shape[0]
    for t in range(n_trees):
        for k in range(best.shape[1]):
            best[t, k] = 0.0
        wb[t] = 0.0
        cur = value[leaves[t], 0]
        up = group[t] == yi
        sign = 1.0 if up else -1.0
        # Pruning (the same credits, less walk): the most a leaf under ``node`` can gain is
        # sign * (cur - ext[node]) with ext the subtree's smallest (up) or largest leaf value --
        # exactly the largest leaf gain, since the rounded cur - v is monotone in v. A subtree whose
        # bound cannot raise the credit it would feed is skipped: the "other" child when pushed,
        # and a node when popped, as its credit may have grown meanwhile. Only at budget >= 2, where
        # a deviation's subtree branches again: at budget 1 (one path below each deviation) the
        # checks and the per-call pass of _subtree_extremes cost more than they save.
        ext = sub_lo if up else sub_hi
        deep = budget >= 2
        sp = 1
        st_node[0] = roots[t]
        st_f1[0] = -1
        st_cnt[0] = 0
        while sp > 0:
            sp -= 1
            node = st_node[sp]
            k1 = st_f1[sp]
            f = feature[node]
            if f < 0:
                if k1 >= 0:
                    gain = sign * (cur - value[node, 0])
                    if gain > best[t, k1]:
                        best[t, k1] = gain
                        if gain > wb[t]:
                            wb[t] = gain
                continue
            if deep and k1 >= 0 and sign * (cur - ext[node]) <= best[t, k1]:
                continue  # no leaf below can raise best[t, k1]
            cnt = st_cnt[sp]
            go_left = goes_left(x[f], threshold, missing_left, node)
            same = left[node] if go_left else right[node]
            other = right[node] if go_left else left[node]
            dirn = 0 if go_left else 1  # 0: the attacker must increase x_f to go the other way
            # the child the instance's value would take: no new disagreement (its path's features
            # st_df/st_ds[sp] are the popped node's, already in place)
            st_node[sp] = same
            st_f1[sp] = k1
            st_cnt[sp] = cnt
            sp += 1
            # the other child: f joins D(L) in direction dirn
            pos = -1
            for q in range(cnt):
                if st_df[sp - 1, q] == f:
                    pos = q
            if pos >= 0:
                if st_ds[sp - 1, pos] != dirn:
                    continue  # f would have to move both ways: unreachable
                ncnt = cnt
            else:
                ncnt = cnt + 1
                if ncnt > budget:
                    continue
            k2 = k1 if k1 >= 0 else 2 * f + dirn
            if deep and sign * (cur - ext[other]) <= best[t, k2]:
                continue  # no leaf below can raise best[t, k2]
            st_node[sp] = other
            st_f1[sp] = k2
            st_cnt[sp] = ncnt
            for q in range(cnt):
                st_df[sp, q] = st_df[sp - 1, q]
                st_ds[sp, q] = st_ds[sp - 1, q]
            if pos < 0:
                st_df[sp, cnt] = f
                st_ds[sp, cnt] = dirn
            sp += 1


@numba.njit(cache=True)
def _apply_budget_weights(group, yi, wb, w):
    """Replace the global swings ``w[t, c]`` by the budget-aware ``wb[t]``."""
    n_trees = w.shape[0]
    K = w.shape[1]
    for t in range(n_trees):
        g = group[t]
        for c in range(K):
            w[t, c] = 0.0
        if g == yi:
            for c in range(K):
                if c != yi:
                    w[t, c] = wb[t]
        else:
            w[t, g] = wb[t]


@numba.njit(cache=True)
def _set_weights(ptr, trees, best, group, yi, c, n_sets):
    """``W(S_k)`` towards ``c``: sum of ``best[t, k]`` over the trees of ``S_k`` adding to ``y`` or ``c``."""
    sizes = np.zeros(n_sets, np.float64)
    for k in range(n_sets):
        s = 0.0
        for q in range(ptr[k], ptr[k + 1]):
            t = trees[q]
            g = group[t]
            if g == yi or g == c:
                s += best[t, k]
        sizes[k] = s
    return sizes


@numba.njit(cache=True)
def _bw_buffers(ens, n_features, budget):
    feature, roots = ens.feature, ens.roots
    n_trees = roots.shape[0]
    best = np.zeros((n_trees, 2 * n_features), np.float64)
    wb = np.zeros(n_trees, np.float64)
    N = feature.shape[0] + 2
    if budget >= 2:  # the walk's pruning (at budget 1 it does not pay: no per-call pass)
        sub_lo, sub_hi = _subtree_extremes(ens)
    else:
        sub_lo, sub_hi = np.empty(0, np.float64), np.empty(0, np.float64)
    return (best, wb, np.empty(N, np.int64), np.empty(N, np.int64), np.empty(N, np.int64),
            np.empty((N, budget + 1), np.int64), np.empty((N, budget + 1), np.int64), sub_lo, sub_hi)


@numba.njit(cache=True)
def _subtree_extremes(ens):
    """``(lo, hi)``: the smallest and largest leaf value under every node (a leaf: its own value), for
    the pruning of :func:`_budget_walk`. One backward pass when every child comes after its parent
    (the readers' order), else a post-order walk of every tree (any node order)."""
    feature, left, right, roots, value = ens.feature, ens.left, ens.right, ens.roots, ens.value
    m = feature.shape[0]
    lo = np.empty(m, np.float64)
    hi = np.empty(m, np.float64)
    ordered = True
    for node in range(m - 1, -1, -1):
        if feature[node] < 0:
            lo[node] = value[node, 0]
            hi[node] = value[node, 0]
        else:
            a, b = left[node], right[node]
            if a <= node or b <= node:
                ordered = False
                break
            lo[node] = lo[a] if lo[a] <= lo[b] else lo[b]
            hi[node] = hi[a] if hi[a] >= hi[b] else hi[b]
    if ordered:
        return lo, hi
    stack = np.empty(m + 1, np.int64)
    done = np.zeros(m, np.bool_)
    for t in range(roots.shape[0]):
        sp = 1
        stack[0] = roots[t]
        while sp > 0:
            node = stack[sp - 1]
            if feature[node] < 0:
                lo[node] = value[node, 0]
                hi[node] = value[node, 0]
                sp -= 1
            elif done[node]:
                a, b = left[node], right[node]
                lo[node] = lo[a] if lo[a] <= lo[b] else lo[b]
                hi[node] = hi[a] if hi[a] >= hi[b] else hi[b]
                sp -= 1
            else:
                done[node] = True
                stack[sp] = left[node]
                stack[sp + 1] = right[node]
                sp += 2
    return lo, hi


@numba.njit(cache=True)
def row_quantities(ens, x, yi, budget):
    """``(leaves, w, margin, best)`` of one instance at ``budget`` (budget-aware swings ``w`` and
    per-set credits ``best``, see :func:`_budget_weights`), for ``instance_covers`` and the widget."""
    roots = ens.roots
    group, base = ens.group, ens.base
    n_trees = roots.shape[0]
    K = base.shape[0]
    leaves = np.empty(n_trees, np.int64)
    w = np.empty((n_trees, K), np.float64)
    margin = np.empty(K, np.float64)
    _prepare_row(ens, x, yi, leaves, w, margin)
    bw = _bw_buffers(ens, x.shape[0], budget)
    bbest, wb = bw[0], bw[1]
    _budget_weights(ens, x, yi, leaves, budget, bw)
    _apply_budget_weights(group, yi, wb, w)
    return leaves, w, margin, bbest


@numba.njit(cache=True, inline="always")
def _replay(ens, leaves, aff, n_aff, xp, yi, tmp_leaves, acc):
    """Decision (see :func:`decide_scores`) of the exact replay on ``xp``; only the trees
    ``aff`` are re-walked."""
    value, roots = ens.value, ens.roots
    tmp_leaves[:] = leaves
    for a in range(n_aff):
        t = aff[a]
        tmp_leaves[t] = leaf(ens, roots[t], xp)
    _add_scores(value, ens.group, tmp_leaves, ens.base, ens.f32, acc)
    return decide_scores(acc, yi, ens.tol)


@numba.njit(cache=True)
def _flb_scratch_additive(ens, n_features, budget):
    n_trees = ens.roots.shape[0]
    K = ens.base.shape[0]
    return (np.empty(n_trees, np.int64), np.empty((n_trees, K), np.float64), np.empty(K, np.float64),
            _bw_buffers(ens, n_features, budget))


@numba.njit(cache=True)
def _flb_row_additive(ens, x, yi, budget, sc):
    leaves, w, margin, bw = sc
    _prepare_row(ens, x, yi, leaves, w, margin)
    _budget_weights(ens, x, yi, leaves, budget, bw)
    return True, (bw[0], margin), ens.tol_b


@numba.njit(cache=True)
def _set_sizes_additive(ens, ptr, trees, row, yi, c):
    return _set_weights(ptr, trees, row[0], ens.group, yi, c, ptr.shape[0] - 1)


@numba.njit(cache=True)
def _elb_row_additive(ens, x, yi, budget, sc):
    leaves, w, margin, bw = sc
    _prepare_row(ens, x, yi, leaves, w, margin)
    _budget_weights(ens, x, yi, leaves, budget, bw)
    _apply_budget_weights(ens.group, yi, bw[1], w)
    return True, (w, margin, bw[0]), ens.tol_b


@numba.njit(cache=True)
def _elb_skip_additive(ens, ptr, trees, row, yi, c, budget, tol):
    # what FLB rules out stays ruled out (its per-set credits can be sharper than the union's)
    n_sets = ptr.shape[0] - 1
    s_flb = top_sum(feature_max(_set_weights(ptr, trees, row[2], ens.group, yi, c, n_sets), n_sets // 2),
                    budget, 0.0)
    return s_flb < row[1][c] - tol


@numba.njit(cache=True)
def _brute_scratch_additive(ens, n_features, budget):
    n_trees = ens.roots.shape[0]
    K = ens.base.shape[0]
    leaves = np.empty(n_trees, np.int64)
    row_sc = (leaves, np.empty((n_trees, K), np.float64), np.empty(K, np.float64),
              _bw_buffers(ens, n_features, budget), np.empty((n_trees, K), np.float64))
    return row_sc, (np.empty(K, np.float64), np.empty(K, np.float64), np.empty(0, np.float64), leaves,
                    np.empty(n_trees, np.int64), np.empty(K, np.float64))


@numba.njit(cache=True)
def _brute_row_additive(ens, x, yi, budget, sc):
    leaves, w, margin, bw, contrib = sc
    value, group = ens.value, ens.group
    _prepare_row(ens, x, yi, leaves, w, margin)
    _budget_weights(ens, x, yi, leaves, budget, bw)
    _apply_budget_weights(group, yi, bw[1], w)
    K = margin.shape[0]
    for t in range(leaves.shape[0]):  # contrib[t, c]: what tree t adds to s_c - s_y at its current leaf
        g = group[t]
        v = value[leaves[t], 0]
        for c in range(K):
            contrib[t, c] = 0.0
        if g == yi:
            for c in range(K):
                if c != yi:
                    contrib[t, c] = -v
        else:
            contrib[t, g] = v
    return True, (w, margin, contrib), ens.tol_b


@numba.njit(cache=True)
def _fixed_additive(ens, row, yi, cnt, S, n_aff):
    fixed, contrib, base = S.fixed, row[2], ens.base
    K = fixed.shape[0]
    for c in range(K):
        fixed[c] = base[c] - base[yi]
    for t in range(cnt.shape[0]):
        if cnt[t] == 0:
            for c in range(K):
                fixed[c] += contrib[t, c]


@numba.njit(cache=True)
def _possible_additive(ens, S, n_aff, yi, tol):
    """Sound test of the branch and bound: can some completion of the partial
    assignment (attacked feature ``f`` confined to ``values[rlo[q]..rhi[q]]``,
    ``q = ppos[f]``) give some class ``c`` a score within ``tol_b`` of ``y``'s?

    Each affected tree is relaxed independently: the smallest (tree adds to
    ``y``) or largest (tree adds to ``c``) leaf value among the leaves some
    allowed value reaches. ``fixed[c]`` holds ``s_c - s_y`` of the other trees.
    """
    group, tol_b, values = ens.group, ens.tol_b, ens.values
    x, aff, ppos, rlo, rhi, stack = S.x, S.aff, S.ppos, S.rlo, S.rhi, S.stack
    fixed, bound = S.fixed, S.bound
    feature, threshold, left, right, roots = ens.feature, ens.threshold, ens.left, ens.right, ens.roots
    value, missing_left = ens.value, ens.missing_left
    K = fixed.shape[0]
    for c in range(K):
        bound[c] = fixed[c]
    for a in range(n_aff):
        t = aff[a]
        lo_v = np.inf
        hi_v = -np.inf
        sp = 1
        stack[0] = roots[t]
        while sp > 0:
            sp -= 1
            node = stack[sp]
            f = feature[node]
            if f < 0:
                v = value[node, 0]
                if v < lo_v:
                    lo_v = v
                if v > hi_v:
                    hi_v = v
                continue
            q = ppos[f]
            if q < 0:
                if goes_left(x[f], threshold, missing_left, node):
                    stack[sp] = left[node]
                else:
                    stack[sp] = right[node]
                sp += 1
            else:
                if values[rlo[q]] <= threshold[node]:
                    stack[sp] = left[node]
                    sp += 1
                if values[rhi[q]] > threshold[node]:
                    stack[sp] = right[node]
                    sp += 1
        g = group[t]
        if g == yi:
            for c in range(K):
                if c != yi:
                    bound[c] -= lo_v
        else:
            bound[g] += hi_v
    for c in range(K):
        if c != yi and bound[c] >= -tol_b:
            return True
    return False


@numba.njit(cache=True)
def _bb_leaf_additive(ens, S, k, n_aff, yi):
    pick, item_f, x, xp, values = S.pick, S.item_f, S.x, S.xp, ens.values
    for qq in range(k):
        xp[item_f[pick[qq]]] = values[S.cur[qq]]
    dec = _replay(ens, S.leaves, S.aff, n_aff, xp, yi, S.tmp_leaves, S.acc)
    for qq in range(k):
        f = item_f[pick[qq]]
        xp[f] = x[f]
    return dec


@numba.njit(cache=True)
def _decide_additive(ens, S, row, n_aff, yi):
    return _replay(ens, S.leaves, S.aff, n_aff, S.xp, yi, S.tmp_leaves, S.acc)


# ---------------------------------------------------------------------------------------------------
# what differs between the rules outside the kernels (plain Python, calling the kernels above)
# ---------------------------------------------------------------------------------------------------
def _replay_hard(ens, X):
    return hard_vote(leaf_classes(ens, X), ens.base.shape[0], ens.rank)


def _replay_soft(ens, X):
    return np.argmax(soft_proba(ens, X), axis=1)


def _replay_additive(ens, X):
    return np.argmax(raw_scores(ens, X), axis=1)


def _member_sizes(membership, weights, integer):
    """``(plus, minus)`` per class: the weight of the trees in ``S_f^+`` / ``S_f^-`` of every feature."""
    plus, minus = {}, {}
    for c, wc in weights.items():
        p = ((membership & 1).astype(bool) * wc[:, None]).sum(axis=0)
        m = ((membership & 2).astype(bool) * wc[:, None]).sum(axis=0)
        if integer:
            p, m = p.astype(np.int64), m.astype(np.int64)
        plus[c], minus[c] = p, m
    return plus, minus


def _covers_hard(ens, x, yi, budget, membership):
    K = ens.base.shape[0]
    votes, counts, ok, dlt = prepare_hard(ens, K, ens.rank, x, yi)
    weights = {c: (votes != c).astype(np.float64) for c in range(K) if c != yi}
    plus, minus = _member_sizes(membership, weights, True)
    return {"votes": votes, "wrong": votes != yi, "ok": bool(ok), "delta": {c: int(dlt[c]) for c in weights},
            "weights": weights, "plus": plus, "minus": minus, "extra": {}}


def _covers_soft(ens, x, yi, budget, membership):
    K = ens.base.shape[0]
    T = ens.roots.shape[0]
    votes, _, _, _ = prepare_hard(ens, K, ens.rank, x, yi)
    leaves, acc, dmat, w, margin = np.empty(T, np.int64), np.empty(K), np.empty((T, K)), np.empty((T, K)), np.empty(K)
    ok = prepare_soft(ens, x, yi, leaves, acc, dmat, w, margin)
    weights = {c: w[:, c] for c in range(K) if c != yi}
    plus, minus = _member_sizes(membership, weights, False)
    return {"votes": votes, "wrong": votes != yi, "ok": bool(ok), "delta": {c: float(margin[c]) for c in weights},
            "weights": weights, "plus": plus, "minus": minus, "extra": {}}


def _covers_additive(ens, x, yi, budget, membership):
    leaves, w, margin, best = row_quantities(ens, x, yi, budget)
    group = ens.group
    K, T = ens.base.shape[0], ens.roots.shape[0]
    weights, plus, minus = {}, {}, {}
    for c in range(K):
        if c == yi:
            continue
        rel = (group == yi) | (group == c)
        weights[c] = w[:, c]
        plus[c] = (best[:, 0::2] * rel[:, None]).sum(axis=0)  # W(S_f^+) with the budget-aware credits, as FLB
        minus[c] = (best[:, 1::2] * rel[:, None]).sum(axis=0)
    return {"votes": group.copy(), "wrong": np.zeros(T, dtype=bool), "ok": None,
            "delta": {c: float(margin[c]) for c in weights}, "weights": weights, "plus": plus, "minus": minus,
            "extra": {"contributions": ens.value[leaves, 0], "tree_group": group.copy()}}


# ---------------------------------------------------------------------------------------------------
# the three rules
# ---------------------------------------------------------------------------------------------------
HARD = VoteRule(
    "hard", integer=True, literal=True, max_classes=62, replay=_replay_hard, covers=_covers_hard,
    flb_scratch=_flb_scratch_hard, flb_out=_flb_out_hard, flb_row=_flb_row_hard, set_sizes=_set_sizes_hard,
    elb_row=_elb_row_hard, elb_skip=_elb_skip_none, cover=_cover_hard, elb_sizes=_set_sizes_hard,
    elb_out=_elb_out_hard, brute_scratch=_brute_scratch_hard, brute_row=_brute_row_hard, gain=_gain_hard,
    zeros=_zeros_int, fixed=_fixed_hard, possible=_possible_hard, bb_leaf=_bb_leaf_hard, decide=_decide_hard)

SOFT = VoteRule(
    "soft", integer=False, literal=True, max_classes=None, replay=_replay_soft, covers=_covers_soft,
    flb_scratch=_flb_scratch_soft, flb_out=_flb_out_float, flb_row=_flb_row_soft, set_sizes=_sizes_weighted,
    elb_row=_elb_row_soft, elb_skip=_elb_skip_none, cover=_cover_weighted, elb_sizes=_sizes_weighted,
    elb_out=_elb_out_float, brute_scratch=_brute_scratch_soft, brute_row=_brute_row_soft, gain=_gain_weighted,
    zeros=_zeros_float, fixed=_fixed_soft, possible=_possible_soft, bb_leaf=_bb_leaf_soft, decide=_decide_soft)

# the boosted search always prunes: prune=False would give the same answer, slower (no literal baseline)
ADDITIVE = VoteRule(
    "additive", integer=False, literal=False, max_classes=None, replay=_replay_additive, covers=_covers_additive,
    flb_scratch=_flb_scratch_additive, flb_out=_flb_out_float, flb_row=_flb_row_additive,
    set_sizes=_set_sizes_additive, elb_row=_elb_row_additive, elb_skip=_elb_skip_additive, cover=_cover_weighted,
    elb_sizes=_sizes_weighted, elb_out=_elb_out_float, brute_scratch=_brute_scratch_additive,
    brute_row=_brute_row_additive, gain=_gain_weighted, zeros=_zeros_float, fixed=_fixed_additive,
    possible=_possible_additive, bb_leaf=_bb_leaf_additive, decide=_decide_additive)
