"""The fairlens report document, schema ``fairlens.report/2``.

An audit (:func:`fairlens.audit`, ``fairlens audit``) and the tour (``fairlens tour``) both
describe what they did in one JSON-safe dict, the *report document*.  ``.to_json(path)`` writes
it as it is; ``.to_html(path)`` writes :func:`fairlens.report._render.render_html` of it.  Values
stay raw numbers in the document (a rate is ``0.213``, never ``"21.3%"``): only the renderer
formats them, in one number format.  This docstring is the documentation of the schema;
:func:`validate_document` checks a document against it and raises ``ValueError`` naming the
first bad field (e.g. ``doc['findings'][2]['verdict']``).

Versioning
    ``schema`` is ``"fairlens.report/<major>"``.  Adding an optional field keeps the major
    version; removing or renaming a field, or changing its meaning, increments it.  Readers
    must ignore fields they do not know.

Top level (all keys required unless marked optional)
    ``schema`` : str
        ``"fairlens.report/2"`` (version 2: verdicts are ``"inconclusive"`` and ``"not computed"``
        instead of version 1's ``"warn"``, decided by tests with a stated error rate; the verdict
        block names the gate's burden of proof and rule).
    ``kind`` : ``"audit"`` or ``"tour"``.
    ``title`` : str
    ``created`` : str
        When the report was made, UTC, ISO 8601 (``"2026-11-24T18:40:00+00:00"``).
    ``environment`` : dict
        ``fairlens``, ``python``, ``platform`` (str) and ``libraries`` (dict: library name ->
        version string, e.g. ``{"numpy": "2.1.3", "scikit-learn": "1.5.2"}``).
    ``data`` : dict
        ``name`` (str), ``source`` (the file name only, never a full path; or null),
        ``n_rows``, ``n_columns`` (int; null in a tour, which uses several tables),
        ``sha256`` (of the file's bytes when read from a file, else of the table's CSV
        serialisation; or null), ``target`` (str or null), ``favourable`` (any JSON value or
        null), ``protected`` (list of str).  Optional: ``datasets``, a list of dicts with the
        same keys ``name``, ``source``, ``n_rows``, ``n_columns``, ``sha256`` (a tour lists
        every table it used).
    ``model`` : dict
        ``class``, ``module`` (str), ``params`` (dict str -> JSON value), ``source`` (file name
        or null), ``sha256`` (of the model file, or null), ``input`` (``"readable frame"``,
        ``"encoded array"``, ``"callable"`` or null).  Optional: ``models``, a list of dicts
        with the same keys (a tour lists every model it trained).
    ``parameters`` : dict
        ``random_state`` (int), ``n_jobs`` (int or null), ``time_limit`` (seconds or null; a report
        written before the keyword was renamed holds ``time_budget`` instead),
        ``checks`` (list of str), plus any other run parameter (str -> JSON value).
    ``verdict`` : dict
        ``passed`` (true, false, or null when no gate was given or the gate could not be checked),
        ``fail_on`` (list of the gate's conditions as normalised, e.g.
        ``"demographic_parity_difference>0.1"``), ``sentence`` (str: the conclusion in one
        sentence).  Optional (an audit has them): ``status`` (``"passed"``, ``"failed"``, ``"not
        computed"`` or ``"no gate"``), ``burden`` (``"violation"``, ``"compliance"`` or
        ``"estimate"``: the gate's burden of proof), ``rule`` and ``report_rule`` (str or null: how the
        gate's findings and the other findings were decided, and their error rate).
    ``findings`` : list of dict
        One row per measured quantity: ``check`` (a check id, see below), ``measure`` (the
        machine name, used by ``fail_on``), ``label`` (its readable name), ``group`` (str or
        null), ``value``, ``ci_low``, ``ci_high``, ``threshold`` (number or null), ``verdict``
        (``"pass"``: the data show the condition does not hold; ``"fail"``: they show it holds;
        ``"inconclusive"``: neither; ``"not computed"``; ``"info"``: no condition;
        ``"not applicable"``), ``sentence`` (plain language, ending with how the verdict was
        decided).  Optional: ``unit`` (see *Units*), ``interval`` (what ``ci_low``/``ci_high`` are,
        e.g. ``"95% interval simultaneous over 3 comparisons"`` or certified bounds),
        ``condition`` (the condition judged, e.g. ``"abs(statistical_parity_difference)>0.1"``),
        ``p_fail``/``p_pass`` (Holm-adjusted p-values of the two claims), ``detectable`` (the
        smallest departure beyond the threshold the data would detect with 80% power),
        ``decided_by`` (``"gate"`` or ``"thresholds"``).
    ``sections`` : list of dict
        One per check (audit) or analysis (tour): ``id`` (str), ``title`` (str), ``status``
        (``"complete"``, ``"cut short"``, ``"not applicable"``, ``"failed"``), ``elapsed``
        (seconds or null), ``verdict`` (one sentence), ``paragraphs`` (list of str, plain
        text), ``tables`` (list of *table*), ``figures`` (list of *figure*), ``params`` (dict:
        every parameter of the check), ``random_state`` (int or null for a deterministic
        check), ``notes`` (list of str).  Optional: ``error`` (str, the error of a failed
        section).
    ``limitations`` : list of str
        What the report does not show.

Check ids
    An audit's sections are ``"group_fairness"`` and the audit checks of the slices in the registry
    (:func:`fairlens._registry.audit_checks`: ``"individual"``, ``"subgroup"``, ``"explanations"``,
    ``"robustness"`` for the four built-in slices); a tour's sections are the slices' names
    (``"shuffle"``, ``"maft"``, ``"testsgd"``, ``"certify"``).  :func:`check_ids` lists them.

Table
    ``title`` (str), ``columns`` (list of readable names), ``rows`` (list of lists of *cell*, one
    cell per column), ``note`` (str or null).  Optional: ``units`` (list, one *unit* or null per
    column); ``key_columns`` (int, default 1: how many leading columns identify a row; a table
    with more than 8 columns is shown in blocks of columns that repeat them).

Cell
    null, a bool, a number, a str, or a dict: ``{"value": number, "ci_low": number|null,
    "ci_high": number|null, "unit": unit|null}`` (a number with its interval), or
    ``{"text": str, "highlight": bool}`` (a value to emphasise, e.g. the attribute a
    discriminatory pair changes).

Figure
    ``title`` (str), ``alt`` (str: what the figure shows, for screen readers), ``png_base64``
    (str: a PNG, base64), ``width_px`` (int: its natural width; figures are drawn at >= 1000
    px wide with >= 12 px text).

Units
    ``"rate"`` (a proportion, shown as a percentage: 0.213 -> 21.3%), ``"difference"`` (a
    difference of rates, shown as percentage points: 0.05 -> 5.0 pp), ``"ratio"``,
    ``"count"``, ``"seconds"``, or null (a plain number).  Every number is shown with three
    significant digits (never in scientific notation; counts in full).

    The convention, one unit per kind of quantity: in the document (and in
    ``AuditReport.to_frame()``, ``findings``, ``gate()`` and ``fail_on``) a rate or a
    difference of rates is ALWAYS a raw proportion (``0.05``), never a percentage (``5``); the
    ``unit`` of a finding, of a table column (``units``) or of a cell says how people see it.
    Everything a person reads -- the rendered HTML, the findings' and sections' sentences, the
    verdict -- shows a ``"rate"`` as a percentage and a ``"difference"`` in percentage points
    (pp), its interval in the same unit: ``value=0.0285, ci_low=0.00166, ci_high=0.0712,
    unit="difference"`` is read "2.85 pp (0.166–7.12)".  A gate condition is written in document
    units (``demographic_parity_difference>0.1``) and glossed in the reader's unit in the verdict
    sentence (``> 10.0 pp``).  The measures and their units are
    ``fairlens.audit._gate.MEASURES``.  ``parameters.confidence`` (optional,
    a proportion) is the confidence level of the intervals when the run has one.

Everything that comes from the user's table or model (column names, category values, class
labels, file names, the model's class and parameters) is plain text in the document: the
renderer escapes every string, so nothing in a document is ever interpreted as HTML.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import math
import numbers
import os
import platform

from .._base import validated
from .._registry import audit_checks
from .._version import __version__

__all__ = ["SCHEMA_VERSION", "check_ids", "VERDICTS", "STATUSES", "UNITS", "validate_document",
           "environment_info", "sha256_file", "frame_sha256", "utc_now"]

SCHEMA_VERSION = "fairlens.report/2"
KINDS = ("audit", "tour")


def check_ids():
    """The audit's section ids: ``"group_fairness"`` and every registered slice's check, in order.

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> from fairlens.report._schema import check_ids
    >>> check_ids()
    ('group_fairness', 'individual', 'subgroup', 'explanations', 'robustness')
    """

    return ("group_fairness", *(c.id for _, c in audit_checks()))

VERDICTS = ("pass", "fail", "inconclusive", "not computed", "info", "not applicable")
GATE_STATUSES = ("passed", "failed", "not computed", "no gate")
BURDENS = ("violation", "compliance", "estimate")
STATUSES = ("complete", "cut short", "not applicable", "failed")
UNITS = ("rate", "difference", "ratio", "count", "seconds")
MODEL_INPUTS = ("readable frame", "encoded array", "callable")

#: libraries whose versions the report records (those installed)
LIBRARIES = ("numpy", "pandas", "scikit-learn", "scipy", "numba", "matplotlib", "shap", "lime",
             "joblib", "xgboost", "lightgbm", "skops", "pyarrow")


def utc_now() -> str:
    """The current time, UTC, ISO 8601 to the second (``"2026-11-24T18:40:00+00:00"``).

    Returns
    -------
    str
        The timestamp a report records as ``created``.

    Examples
    --------
    >>> from fairlens.report import utc_now
    >>> utc_now().endswith("+00:00")
    True
    """
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def environment_info() -> dict:
    """The ``environment`` block: fairlens, Python, platform and installed library versions.

    Returns
    -------
    dict
        ``{"fairlens": str, "python": str, "platform": str, "libraries": {name: version}}``;
        libraries that are not installed are left out.

    Examples
    --------
    >>> from fairlens.report._schema import environment_info
    >>> env = environment_info()
    >>> sorted(env)
    ['fairlens', 'libraries', 'platform', 'python']
    """
    from importlib import metadata


    libs = {}
    for name in LIBRARIES:
        try:
            libs[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return {"fairlens": __version__, "python": platform.python_version(),
            "platform": f"{platform.system()} {platform.machine()}".strip(),
            "libraries": libs}


@validated({
    "path": [str, os.PathLike],
})
def sha256_file(path) -> str:
    """The sha256 (hex) of a file's bytes.

    Parameters
    ----------
    path : str or os.PathLike
        The file (read in 1 MiB blocks).

    Returns
    -------
    str
        64 hex digits.

    Examples
    --------
    >>> import os, tempfile
    >>> from fairlens.report import sha256_file
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     f = os.path.join(tmp, "a.txt")
    ...     _ = open(f, "wb").write(b"abc")
    ...     sha256_file(f)[:12]
    'ba7816bf8f01'
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@validated({
    "frame": "no_validation",
})
def frame_sha256(frame) -> str:
    """The sha256 (hex) of a DataFrame's CSV serialisation (no index), for a table not read
    from a file.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table as the audit read it.

    Returns
    -------
    str
        64 hex digits.

    Examples
    --------
    >>> import pandas as pd
    >>> from fairlens.report import frame_sha256
    >>> len(frame_sha256(pd.DataFrame({"a": [1, 2]})))
    64
    """
    return hashlib.sha256(frame.to_csv(index=False).encode("utf-8")).hexdigest()


# ------------------------------------------------------------------------- validation
def _fail(where, msg):
    raise ValueError(f"report document: {where} {msg}")


def _is_num(v):
    return (isinstance(v, numbers.Real) and not isinstance(v, bool)
            and (not isinstance(v, float) or math.isfinite(v)))


def _need(d, key, where):
    if not isinstance(d, dict):
        _fail(where, f"must be a dict; got {type(d).__name__}")
    if key not in d:
        _fail(f"{where}[{key!r}]", "is missing")
    return d[key]


def _str(v, where, *, null=False):
    if v is None and null:
        return
    if not isinstance(v, str):
        _fail(where, f"must be a str{' or null' if null else ''}; got {type(v).__name__}")


def _num(v, where, *, null=True, integer=False):
    if v is None and null:
        return
    if integer:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            _fail(where, f"must be an int{' or null' if null else ''}; got {v!r}")
        return
    if not _is_num(v):
        _fail(where, f"must be a finite number{' or null' if null else ''}; got {v!r}")


def _choice(v, options, where, *, null=False):
    if v is None and null:
        return
    if v not in options:
        _fail(where, f"must be one of {list(options)}; got {v!r}")


def _str_list(v, where):
    if not isinstance(v, list):
        _fail(where, f"must be a list of str; got {type(v).__name__}")
    for i, s in enumerate(v):
        _str(s, f"{where}[{i}]")


def _jsonable(v, where, depth=0):
    if depth > 20:
        _fail(where, "is nested too deeply")
    if v is None or isinstance(v, (bool, str)):
        return
    if isinstance(v, numbers.Real):
        if not _is_num(v):
            _fail(where, f"must be finite (JSON has no NaN/inf); got {v!r}")
        return
    if isinstance(v, list):
        for i, x in enumerate(v):
            _jsonable(x, f"{where}[{i}]", depth + 1)
        return
    if isinstance(v, dict):
        for k, x in v.items():
            if not isinstance(k, str):
                _fail(where, f"has a non-str key {k!r}")
            _jsonable(x, f"{where}[{k!r}]", depth + 1)
        return
    _fail(where, f"is not JSON-safe ({type(v).__name__})")


def _cell(c, where):
    if isinstance(c, dict):
        if "text" in c:
            _str(c["text"], f"{where}['text']")
            if not isinstance(c.get("highlight", False), bool):
                _fail(f"{where}['highlight']", "must be a bool")
            return
        _num(_need(c, "value", where), f"{where}['value']")
        _num(c.get("ci_low"), f"{where}['ci_low']")
        _num(c.get("ci_high"), f"{where}['ci_high']")
        _choice(c.get("unit"), UNITS, f"{where}['unit']", null=True)
        return
    if c is None or isinstance(c, (bool, str)):
        return
    _num(c, where, null=False)


def _table(t, where):
    _str(_need(t, "title", where), f"{where}['title']")
    cols = _need(t, "columns", where)
    _str_list(cols, f"{where}['columns']")
    rows = _need(t, "rows", where)
    if not isinstance(rows, list):
        _fail(f"{where}['rows']", "must be a list of rows")
    for i, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != len(cols):
            _fail(f"{where}['rows'][{i}]", f"must be a list of {len(cols)} cells (one per "
                                           f"column); got {row!r:.80}")
        for j, c in enumerate(row):
            _cell(c, f"{where}['rows'][{i}][{j}]")
    _str(t.get("note"), f"{where}['note']", null=True)
    if t.get("key_columns") is not None:
        _num(t["key_columns"], f"{where}['key_columns']", null=False, integer=True)
    if t.get("units") is not None:
        units = t["units"]
        if not isinstance(units, list) or len(units) != len(cols):
            _fail(f"{where}['units']", f"must be a list of {len(cols)} units or nulls")
        for j, u in enumerate(units):
            _choice(u, UNITS, f"{where}['units'][{j}]", null=True)


def _figure(f, where):
    import re

    _str(_need(f, "title", where), f"{where}['title']")
    _str(_need(f, "alt", where), f"{where}['alt']")
    png = _need(f, "png_base64", where)
    _str(png, f"{where}['png_base64']")
    if not re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", png) or not png.startswith("iVBOR"):
        _fail(f"{where}['png_base64']", "must be a base64-encoded PNG")
    _num(_need(f, "width_px", where), f"{where}['width_px']", null=False, integer=True)


def _source_block(d, where, keys):
    for key, kind in keys:
        v = _need(d, key, where)
        w = f"{where}[{key!r}]"
        if kind == "str":
            _str(v, w)
        elif kind == "str?":
            _str(v, w, null=True)
        elif kind == "int?":
            _num(v, w, integer=True)
        elif kind == "any":
            _jsonable(v, w)
    src = d.get("source")
    if isinstance(src, str) and ("/" in src or "\\" in src):
        _fail(f"{where}['source']", f"must be a file name only, never a path; got {src!r}")


_DATA_KEYS = [("name", "str"), ("source", "str?"), ("n_rows", "int?"), ("n_columns", "int?"),
              ("sha256", "str?")]
_MODEL_KEYS = [("class", "str"), ("module", "str"), ("params", "any"), ("source", "str?"),
               ("sha256", "str?"), ("input", "str?")]


@validated({
    "doc": "no_validation",
})
def validate_document(doc) -> dict:
    """Check a report document against schema ``fairlens.report/2``.

    Parameters
    ----------
    doc : dict
        A report document (see the module docstring for every field).

    Returns
    -------
    dict
        ``doc`` itself, unchanged.

    Raises
    ------
    ValueError
        Naming the first field that is missing or of the wrong type or value, e.g.
        ``report document: doc['findings'][0]['verdict'] must be one of [...]; got 'ok'``.

    Examples
    --------
    >>> from fairlens.report._schema import validate_document
    >>> validate_document({"schema": "fairlens.report/2"})
    Traceback (most recent call last):
    ...
    ValueError: report document: doc['kind'] is missing
    """
    if not isinstance(doc, dict):
        _fail("doc", f"must be a dict; got {type(doc).__name__}")
    if _need(doc, "schema", "doc") != SCHEMA_VERSION:
        _fail("doc['schema']", f"must be {SCHEMA_VERSION!r}; got {doc['schema']!r}")
    _choice(_need(doc, "kind", "doc"), KINDS, "doc['kind']")
    _str(_need(doc, "title", "doc"), "doc['title']")
    created = _need(doc, "created", "doc")
    _str(created, "doc['created']")
    try:
        when = _dt.datetime.fromisoformat(created)
    except ValueError:
        _fail("doc['created']", f"must be an ISO 8601 date-time; got {created!r}")
    if when.utcoffset() != _dt.timedelta(0):
        _fail("doc['created']", f"must be in UTC (+00:00); got {created!r}")

    env = _need(doc, "environment", "doc")
    for key in ("fairlens", "python", "platform"):
        _str(_need(env, key, "doc['environment']"), f"doc['environment'][{key!r}]")
    libs = _need(env, "libraries", "doc['environment']")
    if not isinstance(libs, dict):
        _fail("doc['environment']['libraries']", "must be a dict name -> version")
    for k, v in libs.items():
        _str(v, f"doc['environment']['libraries'][{k!r}]")

    data = _need(doc, "data", "doc")
    _source_block(data, "doc['data']", _DATA_KEYS + [("target", "str?"), ("favourable", "any")])
    _str_list(_need(data, "protected", "doc['data']"), "doc['data']['protected']")
    for i, d in enumerate(data.get("datasets") or []):
        _source_block(d, f"doc['data']['datasets'][{i}]", _DATA_KEYS)

    model = _need(doc, "model", "doc")
    _source_block(model, "doc['model']", _MODEL_KEYS)
    if not isinstance(model["params"], dict):
        _fail("doc['model']['params']", "must be a dict")
    _choice(model["input"], MODEL_INPUTS, "doc['model']['input']", null=True)
    for i, m in enumerate(model.get("models") or []):
        _source_block(m, f"doc['model']['models'][{i}]", _MODEL_KEYS)

    params = _need(doc, "parameters", "doc")
    if not isinstance(params, dict):
        _fail("doc['parameters']", "must be a dict")
    _num(_need(params, "random_state", "doc['parameters']"), "doc['parameters']['random_state']",
         null=False, integer=True)
    _num(_need(params, "n_jobs", "doc['parameters']"), "doc['parameters']['n_jobs']",
         integer=True)
    # one name for a time limit: ``time_limit``; reports written before the rename say ``time_budget``
    limit_key = "time_budget" if "time_limit" not in params and "time_budget" in params else "time_limit"
    _num(_need(params, limit_key, "doc['parameters']"), f"doc['parameters']['{limit_key}']")
    _str_list(_need(params, "checks", "doc['parameters']"), "doc['parameters']['checks']")
    _jsonable(params, "doc['parameters']")

    verdict = _need(doc, "verdict", "doc")
    passed = _need(verdict, "passed", "doc['verdict']")
    if passed is not None and not isinstance(passed, bool):
        _fail("doc['verdict']['passed']", f"must be true, false or null; got {passed!r}")
    _str_list(_need(verdict, "fail_on", "doc['verdict']"), "doc['verdict']['fail_on']")
    _str(_need(verdict, "sentence", "doc['verdict']"), "doc['verdict']['sentence']")
    _choice(verdict.get("status"), GATE_STATUSES, "doc['verdict']['status']", null=True)
    _choice(verdict.get("burden"), BURDENS, "doc['verdict']['burden']", null=True)
    for key in ("rule", "report_rule"):
        _str(verdict.get(key), f"doc['verdict'][{key!r}]", null=True)

    findings = _need(doc, "findings", "doc")
    if not isinstance(findings, list):
        _fail("doc['findings']", "must be a list")
    for i, f in enumerate(findings):
        w = f"doc['findings'][{i}]"
        for key in ("check", "measure", "label", "sentence"):
            _str(_need(f, key, w), f"{w}[{key!r}]")
        _str(_need(f, "group", w), f"{w}['group']", null=True)
        for key in ("value", "ci_low", "ci_high", "threshold"):
            _num(_need(f, key, w), f"{w}[{key!r}]")
        for key in ("p_fail", "p_pass", "detectable"):
            _num(f.get(key), f"{w}[{key!r}]")
        for key in ("interval", "condition"):
            _str(f.get(key), f"{w}[{key!r}]", null=True)
        _choice(f.get("decided_by"), ("gate", "thresholds"), f"{w}['decided_by']", null=True)
        _choice(_need(f, "verdict", w), VERDICTS, f"{w}['verdict']")
        _choice(f.get("unit"), UNITS, f"{w}['unit']", null=True)

    sections = _need(doc, "sections", "doc")
    if not isinstance(sections, list):
        _fail("doc['sections']", "must be a list")
    for i, s in enumerate(sections):
        w = f"doc['sections'][{i}]"
        for key in ("id", "title", "verdict"):
            _str(_need(s, key, w), f"{w}[{key!r}]")
        _choice(_need(s, "status", w), STATUSES, f"{w}['status']")
        _num(_need(s, "elapsed", w), f"{w}['elapsed']")
        _str_list(_need(s, "paragraphs", w), f"{w}['paragraphs']")
        _str_list(_need(s, "notes", w), f"{w}['notes']")
        tables = _need(s, "tables", w)
        if not isinstance(tables, list):
            _fail(f"{w}['tables']", "must be a list")
        for j, t in enumerate(tables):
            _table(t, f"{w}['tables'][{j}]")
        figures = _need(s, "figures", w)
        if not isinstance(figures, list):
            _fail(f"{w}['figures']", "must be a list")
        for j, fig in enumerate(figures):
            _figure(fig, f"{w}['figures'][{j}]")
        p = _need(s, "params", w)
        if not isinstance(p, dict):
            _fail(f"{w}['params']", "must be a dict")
        _jsonable(p, f"{w}['params']")
        _num(_need(s, "random_state", w), f"{w}['random_state']", integer=True)
        _str(s.get("error"), f"{w}['error']", null=True)

    _str_list(_need(doc, "limitations", "doc"), "doc['limitations']")
    return doc
