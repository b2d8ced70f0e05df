"""What every check of :func:`fairlens.audit` shares: the section it returns (:class:`CheckOutcome`),
the audit's :class:`Context`, and the helpers that turn a slice's Result into findings, numbers and figures.

A check is ONE adapter function ``check(ctx, seconds) -> CheckOutcome`` over a slice's public API (the
group check's in :mod:`fairlens.audit._group`; a slice's is named by its registration,
:class:`fairlens._registry.AuditCheck`): ``ctx`` is the audit's :class:`Context` (the Dataset, the adapted
model, predictions, options), ``seconds`` the check's share of the global ``time_limit``.  When a slice's
API changes, only its adapter changes.
"""
from __future__ import annotations

import base64
import dataclasses
import io
import math
import time

import numpy as np

from .. import _stats
from .._base import to_jsonable
from ..report._render import format_number
from ._gate import all_measures


@dataclasses.dataclass
class CheckOutcome:
    """What one check produced: a report-document section plus its findings and its Result.

    Parameters
    ----------
    id : str
        The check id (a key of :data:`CHECKS`): ``"group_fairness"``, ``"individual"``,
        ``"subgroup"``, ``"explanations"`` or ``"robustness"``.
    title : str
        Readable title of the section.
    status : str, default "complete"
        ``"complete"``, ``"cut short"`` (stopped by its share of the time budget; what it measured
        still holds), ``"not applicable"`` (e.g. robustness for a model that is not a tree
        ensemble) or ``"failed"`` (the check raised; see ``error``).
    elapsed : float or None
        Seconds the check took (set by :func:`fairlens.audit.audit`).
    verdict : str
        One sentence concluding the section.
    findings : list of dict
        One dict per finding: the columns of :data:`fairlens.audit.FINDING_COLUMNS` (``verdict``:
        ``"pass"``, ``"fail"``, ``"inconclusive"``, ``"not computed"``, ``"info"`` or ``"not applicable"``,
        decided by the audit once every check has run), plus private keys (``_test``: the test behind
        the verdict) that the report document leaves out.
    paragraphs : list of str
        Explanatory text of the section (method, data used).
    tables : list of dict
        Tables of the report document (``title``, ``columns``, ``rows``, optional ``units`` and
        ``note``; see :mod:`fairlens.report._schema`).
    figures : list of dict
        Figures as built by ``fairlens.audit._checks.figure``: ``title``, ``alt``, ``png_base64``, ``width_px``.
    params : dict
        The parameters the check ran with (including its ``time_share`` in seconds).
    random_state : int or None
        The seed the check used.
    notes : list of str
        Caveats (cut short, binned protected columns, ...).
    error : str or None
        ``"ExceptionType: message"`` when the check failed to run.
    result : object
        The slice's own Result for drill-down (e.g. a
        :class:`fairlens.metrics.GroupMetricsResult` for ``"group_fairness"``), or None.

    See Also
    --------
    fairlens.audit.AuditReport : Holds one CheckOutcome per check that ran.

    Examples
    --------
    >>> from fairlens.audit import CheckOutcome
    >>> out = CheckOutcome("robustness", "Robustness", status="not applicable",
    ...                    verdict="Not applicable: the model is not a tree ensemble.")
    >>> out.status, out.findings, out.error
    ('not applicable', [], None)
    >>> out.section()["verdict"]
    'Not applicable: the model is not a tree ensemble.'
    """

    id: str
    title: str
    status: str = "complete"
    elapsed: float | None = None
    verdict: str = ""
    findings: list = dataclasses.field(default_factory=list)
    paragraphs: list = dataclasses.field(default_factory=list)
    tables: list = dataclasses.field(default_factory=list)
    figures: list = dataclasses.field(default_factory=list)
    params: dict = dataclasses.field(default_factory=dict)
    random_state: int | None = None
    notes: list = dataclasses.field(default_factory=list)
    error: str | None = None
    result: object = None

    def section(self):
        """The report-document section (a JSON-safe dict).

        Returns
        -------
        dict
            ``id``, ``title``, ``status``, ``elapsed``, ``verdict``, ``paragraphs``, ``tables``,
            ``figures``, ``params`` (made JSON-safe), ``random_state``, ``notes``, and ``error`` when
            the check failed.  The findings and ``result`` are not part of it (the report document
            lists the findings of every check in one place).

        Examples
        --------
        >>> from fairlens.audit import CheckOutcome
        >>> out = CheckOutcome("group_fairness", "Group fairness", status="failed",
        ...                    error="ValueError: y_true has one value")
        >>> sec = out.section()
        >>> list(sec)  # doctest: +NORMALIZE_WHITESPACE
        ['id', 'title', 'status', 'elapsed', 'verdict', 'paragraphs', 'tables', 'figures', 'params',
         'random_state', 'notes', 'error']
        >>> sec["status"], sec["error"]
        ('failed', 'ValueError: y_true has one value')
        """

        out = {"id": self.id, "title": self.title, "status": self.status, "elapsed": self.elapsed,
               "verdict": self.verdict, "paragraphs": list(self.paragraphs), "tables": list(self.tables),
               "figures": list(self.figures), "params": to_jsonable(self.params),
               "random_state": self.random_state, "notes": list(self.notes)}
        if self.error:
            out["error"] = self.error
        return out


@dataclasses.dataclass
class Context:
    """Everything the checks share (built once by :func:`fairlens.audit.audit`)."""

    model: object
    user_model: object
    dataset: object
    scorer: object
    favourable_class: object
    protected: list
    y: np.ndarray
    score: np.ndarray
    pred: np.ndarray
    threshold: float
    random_state: int
    n_jobs: int | None
    options: dict
    input: str
    privileged: dict | None = None
    deadline: float = math.inf



# ------------------------------------------------------------------------------------ helpers
def _sig(v):
    """Three significant digits, never in scientific notation (the renderer's convention)."""
    if v is None or not np.isfinite(v):
        return "n/a"
    v = float(v)
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if v == 0:
        return "0"
    digits = max(0, 2 - int(math.floor(math.log10(abs(v)))))
    return f"{v:.{digits}f}"


def _val(v, unit=None):
    """A number for a sentence, in the renderer's units: a rate as a percentage, a difference of rates
    in percentage points, anything else as a plain number."""
    if v is None or not np.isfinite(v):
        return "n/a"
    if unit == "rate":
        return f"{_sig(100 * v)}%"
    if unit == "difference":
        return f"{_sig(100 * v)} pp"
    return _sig(v)


def _plain(v):
    """A plain number as the renderer shows it (``1.4e-14`` -> ``< 0.001``, never scientific)."""

    return format_number(_float(v))


def _num(v):
    return _val(v, "rate")


def _pct(v):
    return _val(v, "rate")


def _ci(lo, hi, conf, unit="rate"):
    if lo is None or hi is None or not np.isfinite(lo) or not np.isfinite(hi):
        return "no interval"
    return f"{100 * conf:.0f}% CI {_val(lo, unit)} to {_val(hi, unit)}"


def _spelled(text):
    """``text`` with the abbreviations of the metrics' labels spelled out (a report is read by people
    who do not know that TPR is the true positive rate)."""
    return str(text).replace("TPR and FPR", "true and false positive rate")


def _float(v):
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _finding(check, measure, group, value, lo, hi, sentence, *, interval=None, test=None, se=None, label=None):
    """One finding: the estimate and its interval, a sentence describing them, and the test behind its
    verdict (``test(cond) -> (p_hold, p_not)``; ``se``: ``(standard error, comparisons)`` for the
    smallest detectable departure).  The verdict, threshold and p-values are filled in by the audit
    once every check has run (:func:`fairlens.audit._gate.decide`)."""
    value, lo, hi = _float(value), _float(lo), _float(hi)
    meta = all_measures().get(measure, (measure, None))
    return {"check": check, "measure": measure, "label": label or meta[0], "group": group, "value": value,
            "ci_low": lo, "ci_high": hi, "interval": interval, "condition": None, "threshold": None,
            "verdict": "info", "p_fail": None, "p_pass": None, "detectable": None, "decided_by": None,
            "sentence": sentence, "unit": meta[1], "_test": test, "_se": se}


def _wilson_limits(k, n, conf):

    lo, hi = _stats.wilson(k, n, float(_stats.z_of(0.5 + conf / 2)))
    return float(lo), float(hi)


def _bounds_test(k_lo, k_hi, n):
    """Test of a proportion known only to lie in ``[k_lo, k_hi] / n`` (certified bounds): evidence for
    ``> c`` must hold at the lower bound, evidence for ``< c`` at the upper one."""
    low, high = _wilson_test(k_lo, n), _wilson_test(k_hi, n)

    def test(cond):
        a, b = low(cond), high(cond)
        return (a[0], b[1]) if cond.upward else (b[0], a[1])

    return test


def _wilson_test(k, n):
    """Test of a proportion ``k / n`` against a condition (inverting its Wilson limits)."""

    def test(cond):
        c, (alt_hold, alt_not) = cond.value, (("greater", "less") if cond.upward else ("less", "greater"))
        return (float(_stats.pvalue([k], [n], [1.0], c, alt_hold)), float(_stats.pvalue([k], [n], [1.0], c, alt_not)))

    return test


def figure(fig, title, alt):
    """A figure entry of the report document (PNG, base64) from a matplotlib figure."""
    import matplotlib.pyplot as plt

    # drawn at its natural size (no tight cropping): a 10-inch figure at 100 dpi is 1000 px wide,
    # so the report shows it unscaled with its 12 px text
    if fig.get_layout_engine() is None:
        fig.set_layout_engine("constrained")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    png = buf.getvalue()
    width = int.from_bytes(png[16:20], "big")  # the PNG header's IHDR width
    return {"title": title, "alt": alt, "png_base64": base64.b64encode(png).decode("ascii"),
            "width_px": width}


def _deadline_stop(seconds):
    end = time.perf_counter() + max(0.0, float(seconds))
    return (lambda: time.perf_counter() >= end), end


def _cell(value, lo=None, hi=None, unit=None):
    return {"value": _float(value), "ci_low": _float(lo), "ci_high": _float(hi), "unit": unit}


