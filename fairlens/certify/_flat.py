"""The one flat ensemble every certify kernel receives (the bottom layer: imports nothing from
:mod:`fairlens.certify`).

Every supported model is read (:mod:`fairlens.certify._readers`) into one additive tree ensemble;
the kernels get its arrays as one namedtuple, :class:`FlatEnsemble`, which numba accepts (also with
``cache=True``) like pynndescent's ``FlatTree``, so that no kernel takes a long list of same-typed
arrays whose order could be swapped silently. Its fields have the same dtypes and number of
dimensions for every model, so each kernel compiles once per decision rule
(:mod:`fairlens.certify._votes`):

* the nodes of all trees, one after the other (children after their parent): ``feature`` (int64,
  -1 on leaves), ``threshold`` (float64; ``x[f] <= threshold`` goes left), ``left``/``right``
  (int64 global node indices, -1 on leaves), ``missing_left`` (bool: where a missing value, NaN,
  goes -- the library's default direction) and ``roots`` (int64, the root node of every tree);
* the leaves' payload: ``leaf_class`` (int64 (n_nodes,), the class a leaf votes for: the hard
  vote) and ``value`` (float64 (n_nodes, W), the vector a leaf adds to the class scores: the
  class-probability vector of a forest's leaf (W = K), or a boosted tree's leaf value (W = 1));
* per tree: ``group`` (int64, the class a boosted tree adds to), ``vmin``/``vmax`` (float64, its
  smallest/largest leaf value) and, for the soft vote, ``tmax`` (float64 (T, K, K), the largest
  per-tree swing ``p[c] - p[y]``; (0, 0, 0) where unused);
* per class: ``base`` (float64 (K,), base scores; its length is the number of classes) and ``rank``
  (int64 (K,), tie-break priority of the hard vote, smallest wins);
* arithmetic: ``f32`` (bool: float32 accumulation in tree order, XGBoost), ``tol`` (float: the
  replay's ambiguity half-width / the soft vote's tolerance), ``tol_b`` (float: the bounds'
  tolerance);
* the attack: ``values_ptr`` (int64 (d + 1,)) and ``values`` (float64), the relevant attack values
  of every feature, CSR.

:func:`check_flat` checks the dtypes and shapes (through
:func:`fairlens.certify._common.check_kernel_inputs`, before every kernel call).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

__all__ = ["FlatEnsemble", "check_flat"]

FlatEnsemble = namedtuple("FlatEnsemble", "feature threshold left right missing_left roots leaf_class value group base "
                                          "rank tmax vmin vmax f32 tol tol_b values_ptr values")


def _check(name, a, dtype, shape):
    if not isinstance(a, np.ndarray) or a.dtype != dtype or a.shape != shape or not a.flags.c_contiguous:
        got = f"{a.dtype} {a.shape}" if isinstance(a, np.ndarray) else type(a).__name__
        raise ValueError(f"internal: FlatEnsemble.{name} must be a C-contiguous {np.dtype(dtype).name} array of "
                         f"shape {shape}; got {got}.")


def check_flat(ens, n_features):
    """Dtypes and shapes of the kernels' :class:`FlatEnsemble` (cheap: no pass over the arrays).

    Parameters
    ----------
    ens : FlatEnsemble
    n_features : int

    Raises
    ------
    ValueError
        Naming the field that is wrong.

    Examples
    --------
    >>> import numpy as np
    >>> from fairlens.certify._flat import FlatEnsemble, check_flat
    >>> z, f = np.zeros(1, np.int64), np.zeros(1)
    >>> ens = FlatEnsemble(np.array([-1]), f, np.array([-1]), np.array([-1]), np.zeros(1, bool), z, z,
    ...                    np.zeros((1, 1)), z, np.zeros(2), np.arange(2), np.zeros((0, 0, 0)), f, f, False,
    ...                    0.0, 0.0, np.zeros(4, np.int64), np.zeros(0))
    >>> check_flat(ens, 3)
    >>> check_flat(ens._replace(left=np.array([-1], np.int32)), 3)
    Traceback (most recent call last):
    ...
    ValueError: internal: FlatEnsemble.left must be a C-contiguous int64 array of shape (1,); got int32 (1,).
    """
    if not isinstance(ens, FlatEnsemble):
        raise ValueError("internal: the kernels take a FlatEnsemble namedtuple.")
    m = ens.feature.shape[0] if isinstance(ens.feature, np.ndarray) else -1
    T = ens.roots.shape[0] if isinstance(ens.roots, np.ndarray) else -1
    K = ens.base.shape[0] if isinstance(ens.base, np.ndarray) else -1
    for name, dt in (("feature", np.int64), ("threshold", np.float64), ("left", np.int64), ("right", np.int64),
                     ("missing_left", np.bool_), ("leaf_class", np.int64)):
        _check(name, getattr(ens, name), dt, (m,))
    _check("roots", ens.roots, np.int64, (T,))
    v = ens.value
    W = v.shape[1] if isinstance(v, np.ndarray) and v.ndim == 2 else -1
    if W not in (1, K):
        raise ValueError(f"internal: FlatEnsemble.value must have shape ({m}, 1) or ({m}, {K}); "
                         f"got {getattr(v, 'shape', type(v).__name__)}.")
    _check("value", v, np.float64, (m, W))
    _check("rank", ens.rank, np.int64, (K,))
    if ens.tmax.shape not in ((T, K, K), (0, 0, 0)):
        raise ValueError(f"internal: FlatEnsemble.tmax must have shape ({T}, {K}, {K}) or (0, 0, 0); "
                         f"got {ens.tmax.shape}.")
    _check("tmax", ens.tmax, np.float64, ens.tmax.shape)
    _check("group", ens.group, np.int64, (T,))
    _check("base", ens.base, np.float64, (K,))
    _check("vmin", ens.vmin, np.float64, (T,))
    _check("vmax", ens.vmax, np.float64, (T,))
    if type(ens.f32) is not bool or type(ens.tol) is not float or type(ens.tol_b) is not float:
        raise ValueError("internal: FlatEnsemble.f32 must be a bool, FlatEnsemble.tol and tol_b floats.")
    _check("values_ptr", ens.values_ptr, np.int64, (n_features + 1,))
    _check("values", ens.values, np.float64, (int(ens.values_ptr[-1]),))
