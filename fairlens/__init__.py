"""fairlens: attacks on explanations, fairness testing and robustness certification.

A Jupyter-native teaching and audit package. Each research result lives in its
own subpackage, a *slice* (``fairlens.shuffle``, ``fairlens.maft``, ``fairlens.testsgd``,
``fairlens.certify``: the slice registry, :mod:`fairlens._registry`, lists them) on top of
shared ``datasets``, ``models`` and ``metrics``.

Importing :mod:`fairlens` is cheap: subpackages are imported on first use, so
no numba compilation or heavy dependency import happens at ``import fairlens``.
"""
from __future__ import annotations

import importlib

from ._registry import slices as _slices
from ._version import __version__

#: the shared modules, then every built-in slice of the registry (read without importing them)
_SUBMODULES = ("datasets", "models", "metrics", *(s.name for s in _slices() if s.module == f"fairlens.{s.name}"),
               "audit")

__all__ = ["__version__", "DASK_RECOMMENDED_CONFIG", *_SUBMODULES]


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name == "DASK_RECOMMENDED_CONFIG":  # dask settings for a cluster running fairlens (see _parallel)
        # deferred: import time (import fairlens loads numpy only when used)
        from ._parallel import DASK_RECOMMENDED_CONFIG

        return dict(DASK_RECOMMENDED_CONFIG)
    raise AttributeError(f"module 'fairlens' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
