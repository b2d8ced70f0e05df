"""The typed groups of arrays every certify kernel receives (the bottom layer: imports nothing
from :mod:`fairlens.certify`).

Every supported model is read (:mod:`fairlens.certify._readers`) into flat node arrays; the
kernels get them grouped in three namedtuples, which numba accepts (also with ``cache=True``)
like pynndescent's ``FlatTree``, so that no kernel takes a long list of same-typed arrays whose
order could be swapped silently:

* :class:`Trees` -- the nodes of all trees, one after the other in the reader's node order:
  ``feature`` (int64, -1 on leaves), ``threshold`` (float64; ``x[f] <= threshold`` goes left),
  ``left``/``right`` (int64 global node indices, -1 on leaves), ``value`` (the leaf payload:
  int64 class index for a hard vote, float64 (n_nodes, K) probabilities for a soft vote,
  float64 raw leaf value for a boosted model), ``roots`` (int64 root node of every tree) and
  ``missing_left`` (bool: where a missing value, NaN, goes at every node -- the library's
  default direction where the reader knows it, else False).
* :class:`Values` -- the relevant attack values of every feature, CSR: ``ptr`` (int64,
  n_features + 1) and ``values`` (float64).
* :class:`Rule` -- how the leaves decide: ``rank`` (int64 (K,), tie-break priority of the hard
  vote, smallest wins; its length is the number of classes), ``tmax`` (float64 (T, K, K), the
  soft vote's largest per-tree swing ``p[c] - p[y]``), ``group`` (int64 (T,), the class a
  boosted tree adds to), ``base`` (float64 (K,), base scores), ``vmin``/``vmax`` (float64 (T,),
  smallest/largest leaf value of a boosted tree), ``f32`` (bool: float32 accumulation in tree
  order, XGBoost), ``tol`` (float: ambiguity half-width of the replay / soft-vote tolerance)
  and ``tol_b`` (float: tolerance of the bounds). Fields a predictor does not use hold empty
  or zero arrays of the documented dtype and number of dimensions, so each kernel compiles
  once per leaf payload type.

:func:`check_groups` checks the dtypes and shapes of the three groups: it is called, through
:func:`fairlens.certify._common._check_kernel_inputs`, before every kernel call.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

__all__ = ["Trees", "Values", "Rule", "Search", "check_groups", "empty_rule_parts"]

Trees = namedtuple("Trees", "feature threshold left right value roots missing_left")
Values = namedtuple("Values", "ptr values")
Rule = namedtuple("Rule", "rank tmax group base vmin vmax f32 tol tol_b")
#: The exhaustive search's per-row state, built inside :func:`fairlens.certify._search.brute_search`
#: and handed to its helpers as one argument: the search items (``item_f``/``item_s``), the picked items, the value
#: ranges (``cur``/``lo``/``hi``/``rlo``/``rhi``), the row ``x`` and its attacked copy ``xp``, and
#: the scratch arrays of the bounds and the replay (``fixed``/``bound``/``best``, ``leaves``/
#: ``tmp_leaves``/``acc``; empty where a predictor does not use them).
Search = namedtuple("Search", "pick item_f item_s region ppos cur lo hi rlo rhi stack aff x xp fixed bound best leaves "
                              "tmp_leaves acc")


def empty_rule_parts(n_trees, n_classes):
    """Zero-filled ``Rule`` fields for a predictor that does not use them (right dtypes and
    number of dimensions).

    Parameters
    ----------
    n_trees, n_classes : int

    Returns
    -------
    dict
        ``rank``, ``tmax``, ``group``, ``base``, ``vmin``, ``vmax`` as zero arrays.

    Examples
    --------
    >>> sorted(empty_rule_parts(3, 2))
    ['base', 'group', 'rank', 'tmax', 'vmax', 'vmin']
    """
    return {"rank": np.arange(n_classes, dtype=np.int64), "tmax": np.zeros((0, 0, 0), np.float64),
            "group": np.zeros(n_trees, np.int64), "base": np.zeros(n_classes, np.float64),
            "vmin": np.zeros(n_trees, np.float64), "vmax": np.zeros(n_trees, np.float64)}


def _check(group, name, a, dtype, shape):
    if not isinstance(a, np.ndarray) or a.dtype != dtype or a.shape != shape or not a.flags.c_contiguous:
        got = f"{a.dtype} {a.shape}" if isinstance(a, np.ndarray) else type(a).__name__
        raise ValueError(f"internal: {group}.{name} must be a C-contiguous {np.dtype(dtype).name} array of shape "
                         f"{shape}; got {got}.")


def check_groups(tr, rule, vals, n_features):
    """Dtypes and shapes of the kernels' typed groups (cheap: no pass over the arrays).

    Parameters
    ----------
    tr : Trees
    rule : Rule
    vals : Values or None
        None for kernels that do not search attack values.
    n_features : int

    Raises
    ------
    ValueError
        Naming the group and field that is wrong.

    Examples
    --------
    >>> import numpy as np
    >>> tr = Trees(np.array([-1]), np.zeros(1), np.array([-1]), np.array([-1]), np.array([0]),
    ...            np.array([0]), np.zeros(1, bool))
    >>> rule = Rule(**empty_rule_parts(1, 2), f32=False, tol=0.0, tol_b=0.0)
    >>> check_groups(tr, rule, None, 3)
    >>> check_groups(tr._replace(left=np.array([-1], np.int32)), rule, None, 3)
    Traceback (most recent call last):
    ...
    ValueError: internal: Trees.left must be a C-contiguous int64 array of shape (1,); got int32 (1,).
    """
    if not isinstance(tr, Trees) or not isinstance(rule, Rule):
        raise ValueError("internal: the kernels take a Trees and a Rule namedtuple.")
    m = tr.feature.shape[0] if isinstance(tr.feature, np.ndarray) else -1
    T = tr.roots.shape[0] if isinstance(tr.roots, np.ndarray) else -1
    K = rule.base.shape[0] if isinstance(rule.base, np.ndarray) else -1
    for name, dt in (("feature", np.int64), ("threshold", np.float64), ("left", np.int64), ("right", np.int64),
                     ("missing_left", np.bool_)):
        _check("Trees", name, getattr(tr, name), dt, (m,))
    _check("Trees", "roots", tr.roots, np.int64, (T,))
    v = tr.value
    if not isinstance(v, np.ndarray) or v.shape[:1] != (m,) or v.ndim not in (1, 2) or \
            (v.ndim == 1 and v.dtype not in (np.int64, np.float64)) or (v.ndim == 2 and v.shape[1] != K) or \
            (v.ndim == 2 and v.dtype != np.float64) or not v.flags.c_contiguous:
        got = f"{v.dtype} {v.shape}" if isinstance(v, np.ndarray) else type(v).__name__
        raise ValueError(f"internal: Trees.value must be int64/float64 of shape ({m},) or float64 of shape "
                         f"({m}, {K}); got {got}.")
    _check("Rule", "rank", rule.rank, np.int64, (K,))
    if rule.tmax.shape not in ((T, K, K), (0, 0, 0)):
        raise ValueError(f"internal: Rule.tmax must have shape ({T}, {K}, {K}) or (0, 0, 0); got {rule.tmax.shape}.")
    _check("Rule", "tmax", rule.tmax, np.float64, rule.tmax.shape)
    _check("Rule", "group", rule.group, np.int64, (T,))
    _check("Rule", "base", rule.base, np.float64, (K,))
    _check("Rule", "vmin", rule.vmin, np.float64, (T,))
    _check("Rule", "vmax", rule.vmax, np.float64, (T,))
    if type(rule.f32) is not bool or type(rule.tol) is not float or type(rule.tol_b) is not float:
        raise ValueError("internal: Rule.f32 must be a bool, Rule.tol and Rule.tol_b floats.")
    if vals is not None:
        if not isinstance(vals, Values):
            raise ValueError("internal: the attack values must be a Values namedtuple.")
        _check("Values", "ptr", vals.ptr, np.int64, (n_features + 1,))
        _check("Values", "values", vals.values, np.float64, (int(vals.ptr[-1]),))
