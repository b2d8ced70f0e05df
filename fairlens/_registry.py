"""The slice registry: every paper's slice, registered once, read by the tour, the audit, the CLI, the
Binder warm-up and the documentation.

A *slice* is one paper's method: a folder ``fairlens/<name>/`` with its core, its widget, its tutorial and
a small ``_slice.py`` that declares it::

    from fairlens._registry import AuditCheck, SliceSpec

    SLICE = SliceSpec(
        name="maft", title="MAFT: black-box individual fairness testing", paper="Wang et al. ...",
        module="fairlens.maft", analyses=("MAFT", "EIDIG"), widget="MAFTSession",
        check=AuditCheck("individual", "Individual discrimination (MAFT)", "fairlens.audit._individual:check",
                         share=0.25, measures=("individual_discrimination_rate",)),
        tour="fairlens.tour._maft:section", warmup="fairlens.maft._warmup:warm", docs_page="papers/maft",
        tutorial="tutorials/02_maft.ipynb")

The built-in slices are discovered from those files WITHOUT importing their packages (a package imports
numba and pandas; ``import fairlens`` must stay cheap), in the order of their ``order`` field.  A slice
from elsewhere (another package, a notebook, a test) calls :func:`register` with its spec; references to
code are ``"module:attribute"`` strings, resolved only when used (:func:`resolve`).

Adding a fifth method is one folder plus its ``_slice.py``: nothing else names the slices.
"""
from __future__ import annotations

import dataclasses
import importlib
import os
import re

__all__ = ["SliceSpec", "AuditCheck", "register", "unregister", "slices", "get", "resolve", "audit_checks"]

_REF = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def _check_ref(value, what):
    if value is not None and (not isinstance(value, str) or not _REF.match(value)):
        raise ValueError(f"{what} must be a 'module:attribute' string (e.g. 'fairlens.tour._maft:section'); "
                         f"got {value!r}.")


@dataclasses.dataclass(frozen=True)
class AuditCheck:
    """What a slice adds to :func:`fairlens.audit`: one check.

    Parameters
    ----------
    id : str
        The check's id (``--checks`` on the command line; the report section's ``id``).
    title : str
        The section's title.
    function : str
        ``"module:function"`` of the adapter ``check(ctx, seconds) -> CheckOutcome``
        (see :mod:`fairlens.audit._core`).
    share : float in (0, 1)
        The check's share of the audit's time budget (the shares of the checks that run are normalised
        to sum to 1 with the group check's).
    measures : tuple
        The measures its findings carry: names of :data:`fairlens.audit._gate.MEASURES`, or new measures
        as ``(name, label, unit, lowest, highest, signed, how)`` with ``unit`` one of ``"rate"``,
        ``"difference"``, ``"ratio"``, ``"count"`` and ``how`` ``"test"`` (its findings carry a test) or
        ``"exact"``.
    applies : str, optional
        ``"module:function"`` of ``applies(model) -> (bool, reason)``: a check that does not apply takes
        no share of the budget.
    order : int, default 100
        Position among the audit's checks (the group check is first; a check that runs later may use the
        time an earlier one left).
    """

    id: str
    title: str
    function: str
    share: float
    measures: tuple = ()
    applies: str | None = None
    order: int = 100

    def __post_init__(self):
        if not isinstance(self.id, str) or not _NAME.match(self.id):
            raise ValueError(f"AuditCheck.id must be a lower-case identifier; got {self.id!r}.")
        _check_ref(self.function, "AuditCheck.function")
        _check_ref(self.applies, "AuditCheck.applies")
        if not isinstance(self.share, (int, float)) or isinstance(self.share, bool) or not 0 < self.share < 1:
            raise ValueError(f"AuditCheck.share must be a number in (0, 1); got {self.share!r}.")
        for m in self.measures:
            if not (isinstance(m, str) or (isinstance(m, tuple) and len(m) == 7 and isinstance(m[0], str)
                                           and m[6] in ("test", "exact"))):
                raise ValueError(f"AuditCheck.measures: {m!r} is neither a measure name nor a "
                                 "(name, label, unit, lowest, highest, signed, how) tuple.")


@dataclasses.dataclass(frozen=True)
class SliceSpec:
    """One paper's slice: what it is and where its pieces are.

    Parameters
    ----------
    name : str
        Short lower-case name (``"maft"``): the subpackage, ``fairlens tour --only`` choice, tour section key.
    title : str
        Readable title (the tour section's and the docs index's).
    paper : str
        The paper it implements, cited by title, authors and venue (and DOI where it has one).
    module : str
        The public module (``"fairlens.maft"``).
    analyses : tuple of str
        Public names of its analyses in ``module``.
    widget : str, optional
        Public name of its widget in ``module``.
    check : AuditCheck, optional
        Its audit check.
    tour : str, optional
        ``"module:function"`` of its tour section ``section(budget, random_state) -> dict``.
    warmup : str, optional
        ``"module:function"`` that compiles and caches its numba kernels (Binder's image build).
    docs_page : str, optional
        Its documentation page, relative to ``docs/`` without suffix (``"papers/maft"``).
    tutorial : str, optional
        Its tutorial notebook, relative to the repository.
    order : int, default 100
        Position among the slices (tour sections, audit checks, docs index).
    """

    name: str
    title: str
    paper: str
    module: str
    analyses: tuple = ()
    widget: str | None = None
    check: AuditCheck | None = None
    tour: str | None = None
    warmup: str | None = None
    docs_page: str | None = None
    tutorial: str | None = None
    order: int = 100

    def __post_init__(self):
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ValueError(f"SliceSpec.name must be a lower-case identifier; got {self.name!r}.")
        for field in ("title", "paper", "module"):
            if not isinstance(getattr(self, field), str) or not getattr(self, field):
                raise ValueError(f"SliceSpec.{field} must be a non-empty string; got {getattr(self, field)!r}.")
        _check_ref(self.tour, "SliceSpec.tour")
        _check_ref(self.warmup, "SliceSpec.warmup")
        if self.check is not None and not isinstance(self.check, AuditCheck):
            raise TypeError(f"SliceSpec.check must be an AuditCheck or None; got {self.check!r}.")


_BUILTIN = None          # the slices found in fairlens/*/_slice.py (read once)
_REGISTERED = {}         # slices registered at run time, by name


def _builtin():
    """The built-in slices: every ``fairlens/<folder>/_slice.py``, executed on its own (no package import)."""
    global _BUILTIN
    if _BUILTIN is None:
        found = []
        root = os.path.dirname(os.path.abspath(__file__))
        for entry in sorted(os.listdir(root)):
            path = os.path.join(root, entry, "_slice.py")
            if not (os.path.isfile(path) and os.path.isfile(os.path.join(root, entry, "__init__.py"))):
                continue
            namespace = {"__name__": f"fairlens.{entry}._slice", "__file__": path}
            with open(path, encoding="utf-8") as fh:
                code = compile(fh.read(), path, "exec")
            exec(code, namespace)  # noqa: S102 - the package's own declaration file, nothing else
            spec = namespace.get("SLICE")
            if not isinstance(spec, SliceSpec):
                raise TypeError(f"{path} must define SLICE = SliceSpec(...)")
            if spec.module != f"fairlens.{entry}":
                raise ValueError(f"{path}: SliceSpec.module must be 'fairlens.{entry}'; got {spec.module!r}")
            found.append(spec)
        _BUILTIN = tuple(found)
    return _BUILTIN


def slices():
    """Every slice: the built-in ones and those registered, in their ``order`` (then by name).

    Returns
    -------
    tuple of SliceSpec

    Examples
    --------
    >>> from fairlens._registry import slices
    >>> [s.name for s in slices()]
    ['shuffle', 'maft', 'testsgd', 'certify']
    """
    everything = {s.name: s for s in _builtin()}
    everything.update(_REGISTERED)
    return tuple(sorted(everything.values(), key=lambda s: (s.order, s.name)))


def get(name):
    """The slice called ``name``.

    Parameters
    ----------
    name : str

    Returns
    -------
    SliceSpec

    Raises
    ------
    KeyError
        Naming the slices there are.
    """
    for s in slices():
        if s.name == name:
            return s
    raise KeyError(f"no slice {name!r}; slices: {[s.name for s in slices()]}")


def register(spec):
    """Register a slice (from a package, a notebook or a test); returns it.

    Parameters
    ----------
    spec : SliceSpec

    Returns
    -------
    SliceSpec

    Raises
    ------
    TypeError
        If ``spec`` is not a :class:`SliceSpec`.
    ValueError
        If its name or its check id is already taken by another slice.
    """
    if not isinstance(spec, SliceSpec):
        raise TypeError(f"spec must be a SliceSpec; got {spec!r}.")
    taken = {s.name: s for s in slices()}
    if spec.name in taken and taken[spec.name] != spec:
        raise ValueError(f"a slice named {spec.name!r} is already registered.")
    if spec.check is not None:
        ids = {s.check.id for s in slices() if s.check is not None and s.name != spec.name} | {"group_fairness"}
        if spec.check.id in ids:
            raise ValueError(f"the audit check id {spec.check.id!r} is already taken; checks: {sorted(ids)}.")
    _REGISTERED[spec.name] = spec
    return spec


def unregister(name):
    """Remove a slice registered with :func:`register` (the built-in ones stay).

    Parameters
    ----------
    name : str
    """
    _REGISTERED.pop(name, None)


def resolve(ref):
    """The object a ``"module:attribute"`` reference names (imports the module).

    Parameters
    ----------
    ref : str

    Returns
    -------
    object
    """
    _check_ref(ref, "ref")
    module, attr = ref.split(":")
    return getattr(importlib.import_module(module), attr)


def audit_checks():
    """The audit checks of the slices, in their order: ``[(slice, AuditCheck), ...]``.

    Returns
    -------
    list of (SliceSpec, AuditCheck)

    Examples
    --------
    >>> from fairlens._registry import audit_checks
    >>> [(s.name, c.id, c.share) for s, c in audit_checks()]  # doctest: +NORMALIZE_WHITESPACE
    [('maft', 'individual', 0.25), ('testsgd', 'subgroup', 0.3), ('shuffle', 'explanations', 0.2),
     ('certify', 'robustness', 0.15)]
    """
    pairs = [(s, s.check) for s in slices() if s.check is not None]
    return sorted(pairs, key=lambda p: (p[1].order, p[0].order, p[0].name))
