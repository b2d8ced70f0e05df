"""One renderer for every fairlens report: a report document -> self-contained HTML.

:func:`render_html` turns a report document (schema ``fairlens.report/2``, see
:mod:`fairlens.report._schema`) into one HTML page that needs nothing else: the CSS is inline,
figures are ``data:`` URIs, there are no scripts, fonts or links to fetch, so it opens offline
and prints (or saves to PDF, A4) cleanly.  Every string of the document is escaped, so a column
named ``<img src=x onerror=alert(1)>`` is shown as text and runs nothing.

Numbers are formatted in one place, :func:`format_number`: three significant digits, never in
scientific notation; rates as percentages, differences of rates in percentage points, counts in
full, intervals as ``0.213 (0.190–0.236)`` or ``21.3% (19.0–23.6)`` (the unit once).
"""
from __future__ import annotations

import datetime as _dt
import html
import json
import math
import numbers
import re

from .._base import validated
from ._schema import validate_document

__all__ = ["render_html", "format_number", "format_cell"]


def _e(s) -> str:
    """Escape anything for HTML text *and* attribute values (quotes included)."""
    return html.escape(str(s), quote=True)


_BREAK_AFTER = set("_-/.,=|&;:)}]")


def _breakable(text, limit=16) -> str:
    """Escaped ``text`` with ``<wbr>`` break opportunities inside long unbroken tokens
    (column names, rule sets, hashes), so a narrow column wraps them instead of widening the
    table; ordinary words are never broken."""
    out = []
    for token in _split_space(str(text)):
        if len(token) <= limit or token.isspace():
            out.append(_e(token))
            continue
        piece, run = [], 0
        for ch in token:
            piece.append(_e(ch))
            run += 1
            if ch in _BREAK_AFTER or run >= limit:
                piece.append("<wbr>")
                run = 0
        out.append("".join(piece))
    return "".join(out)


def _split_space(text):
    import re

    return [t for t in re.split(r"(\s+)", text) if t]


def _sig3(v: float) -> str:
    """``v`` with three significant digits, fixed notation (never ``1.2e+04``)."""
    if v == 0:
        return "0"
    a = abs(v)
    if a < 0.001:
        return "< 0.001" if v > 0 else "> -0.001"
    if a >= 1000:
        return f"{v:,.0f}"
    digits = max(0, 2 - int(math.floor(math.log10(a))))
    s = f"{v:.{digits}f}"
    # rounding may add a digit (9.995 -> 10.00): recompute on the rounded value
    r = float(s)
    if r != 0 and abs(r) >= 10 ** (3 - digits):
        digits = max(0, digits - 1)
        s = f"{v:.{digits}f}"
    return s


@validated({
    "v": "no_validation", "unit": [str, None],
})
def format_number(v, unit=None) -> str:
    """One number format for every report.

    Parameters
    ----------
    v : number, bool or None
        The value to show.
    unit : {"rate", "difference", "ratio", "count", "seconds"} or None
        ``"rate"``: a proportion shown as a percentage (0.2134 -> ``21.3%``);
        ``"difference"``: a difference of rates in percentage points (0.05 -> ``5.00 pp``);
        ``"count"``: an integer in full (``12,240``); ``"seconds"``: ``3.41 s``; otherwise
        three significant digits.

    Returns
    -------
    str
        ``"–"`` for None/NaN.

    Examples
    --------
    >>> from fairlens.report._render import format_number
    >>> format_number(12240.0), format_number(2.405e-17), format_number(0.0018271)
    ('12,240', '< 0.001', '0.00183')
    >>> format_number(0.2134, "rate"), format_number(-0.05, "difference")
    ('21.3%', '-5.00 pp')
    """
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if not isinstance(v, numbers.Real):
        return str(v)
    v = float(v)
    if math.isnan(v):
        return "–"
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    if unit == "count" or (unit is None and v.is_integer() and abs(v) >= 1000):
        return f"{v:,.0f}"
    if unit == "rate":
        return _sig3(100 * v) + "%"
    if unit == "difference":
        return _sig3(100 * v) + " pp"
    if unit == "seconds":
        return _sig3(v) + " s"
    if v.is_integer() and abs(v) < 1000:
        return str(int(v))
    return _sig3(v)


def _interval(value, lo, hi, unit) -> str:
    s = format_number(value, unit)
    if lo is None and hi is None:
        return s
    if lo is not None and hi is not None and format_number(lo, unit) == format_number(hi, unit) == s:
        return s  # an exact value (e.g. a certified accuracy): "46.7% (46.7–46.7)" says nothing more
    a, b = (format_number(x, unit).removesuffix("%").removesuffix(" pp").removesuffix(" s")
            for x in (lo, hi))
    sep = " to " if (lo is not None and lo < 0) or (hi is not None and hi < 0) else "–"
    return f"{s} ({a}{sep}{b})"


def format_cell(c, unit=None) -> str:
    """The escaped HTML of one table cell (see *Cell* in the schema)."""
    if isinstance(c, dict):
        if "text" in c:
            text = _breakable(c["text"])
            return f"<mark>{text}</mark>" if c.get("highlight") else text
        return _e(_interval(c.get("value"), c.get("ci_low"), c.get("ci_high"),
                            c.get("unit", unit)))
    if c is None or isinstance(c, (bool, numbers.Real)):
        return _e(format_number(c, unit))
    return _breakable(c)


def _is_numeric_cell(c) -> bool:
    return (isinstance(c, numbers.Real) and not isinstance(c, bool)) or (
        isinstance(c, dict) and "value" in c)


# ------------------------------------------------------------------------------ CSS
_CSS = """
:root{--ink:#1d1d1f;--muted:#555;--line:#c9ccd1;--head:#eef0f3;--pass:#1b6e2d;--fail:#a4161a;
--warn:#8a5a00;--info:#24527a}
*{box-sizing:border-box}
html{font-size:16px}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
color:var(--ink);line-height:1.5;max-width:1100px;margin:0 auto;padding:24px 24px 64px}
h1{font-size:1.9rem;margin:.2em 0 .1em;overflow-wrap:anywhere}
h2{font-size:1.4rem;margin:1.8em 0 .4em;padding-top:.6em;border-top:2px solid var(--line);
overflow-wrap:anywhere}
h3{font-size:1.1rem;margin:1.2em 0 .3em;overflow-wrap:anywhere}
p,li{overflow-wrap:anywhere}
.meta{color:var(--muted);margin:0 0 1em}
.banner{border-radius:6px;padding:14px 18px;margin:1em 0 1.4em;font-size:1.1rem;
border:2px solid var(--info);background:#eef4fa}
.banner.pass{border-color:var(--pass);background:#edf7ef}
.banner.fail{border-color:var(--fail);background:#fbeeee}
.banner strong{margin-right:.4em}
nav ul{columns:2;margin:.2em 0 1em;padding-left:0;list-style:none}
.table-wrap{max-width:100%;overflow-x:auto;margin:.6em 0 1.2em;padding:1px}
table{border-collapse:collapse;width:100%;font-size:.92rem}
caption{text-align:left;font-weight:600;padding:.3em 0;caption-side:top}
th,td{border:1px solid var(--line);padding:5px 8px;vertical-align:top;text-align:left;
overflow-wrap:break-word;word-break:normal;hyphens:manual}
th{background:var(--head);font-weight:600}
td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
tr.check th{background:#f7f8fa;font-size:1rem;text-align:left}
table.findings{table-layout:fixed}
table.findings td.num{white-space:normal}
tr{break-inside:avoid;page-break-inside:avoid}
thead{display:table-header-group}
.tnote{color:var(--muted);font-size:.88rem;margin:-.8em 0 1.2em}
.legend{color:var(--muted);font-size:.88rem;margin:.2em 0 .6em}
.v{display:inline-block;padding:1px 8px;border-radius:10px;font-size:.85rem;font-weight:600;
white-space:nowrap;border:1px solid currentColor}
.v-pass{color:var(--pass)}.v-fail{color:var(--fail)}.v-warn,.v-inconclusive,.v-not-computed{color:var(--warn)}
.v-info,.v-not-applicable{color:var(--info)}
.v-complete{color:var(--pass)}.v-cut-short{color:var(--warn)}.v-failed{color:var(--fail)}
.sverdict{font-weight:600}
figure{margin:1em 0 1.4em;break-inside:avoid;page-break-inside:avoid}
figure img{display:block;max-width:100%;height:auto;border:1px solid #e3e5e8}
figcaption{color:var(--muted);font-size:.92rem;margin-top:.3em;overflow-wrap:anywhere}
mark{background:#ffe58a;padding:0 2px}
dl.kv{display:grid;grid-template-columns:minmax(120px,max-content) 1fr;gap:2px 16px;
margin:.4em 0 1em}
dl.kv dt{font-weight:600;overflow-wrap:anywhere}dl.kv dd{margin:0;overflow-wrap:anywhere}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em;
overflow-wrap:anywhere}
pre.err{background:#fbeeee;border:1px solid var(--fail);padding:10px;white-space:pre-wrap;
overflow-wrap:anywhere;font-size:.85rem}
ul.notes{color:var(--muted)}
footer{margin-top:3em;color:var(--muted);font-size:.85rem;border-top:1px solid var(--line);
padding-top:.6em}
@page{size:A4;margin:14mm 12mm}
@media print{
html{font-size:11pt}
body{max-width:none;padding:0}
nav{display:none}
.table-wrap{overflow:visible}
.table-wrap.short{break-inside:avoid;page-break-inside:avoid}
table{font-size:9pt;table-layout:auto}
th,td{padding:3px 4px}
table.findings{table-layout:auto}
td.num{white-space:normal}
h2{break-before:auto;break-after:avoid;page-break-after:avoid}
h3,caption{break-after:avoid;page-break-after:avoid}
figure img{max-width:100%;border:none}
.banner,.v,mark{-webkit-print-color-adjust:exact;print-color-adjust:exact}
}
"""


# ------------------------------------------------------------------------- pieces
def _badge(word) -> str:
    cls = "v-" + str(word).replace(" ", "-")
    return f"<span class='v {_e(cls)}'>{_e(word)}</span>"


def _when(created) -> str:
    try:
        t = _dt.datetime.fromisoformat(created)
        return t.strftime("%Y-%m-%d %H:%M UTC")
    except (TypeError, ValueError):
        return str(created)


def _value_text(v) -> str:
    """A parameter value as plain text, exactly enough to reproduce the run (a parameter is
    not a result: 1e-06 stays 1e-06, a seed stays in full); the rest as JSON."""
    if v is None or isinstance(v, bool):
        return format_number(v)
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        return f"{float(v):.6g}"
    if isinstance(v, str):
        return v
    return json.dumps(v, ensure_ascii=False, sort_keys=True)


def _kv(d: dict) -> str:
    if not d:
        return "<p class='meta'>none</p>"
    rows = "".join(f"<dt>{_breakable(k, 24)}</dt><dd>{_breakable(_value_text(v), 24)}</dd>"
                   for k, v in d.items())
    return f"<dl class='kv'>{rows}</dl>"


#: a table with more columns is shown in blocks of columns (the key columns repeated), so it
#: fits an A4 page at 12 px text instead of being cut or scrolled
MAX_COLUMNS = 8
#: and a block holds at most this many characters of its columns' widest cells (about 7 px a
#: character at 12 px text: ~900 px, inside a 1280 px screen and an A4 page)
MAX_BLOCK_CHARS = 120


#: a text cell wraps at its spaces: it needs its longest word, and at most this many characters
WRAP_CHARS = 30


def _cell_chars(c, unit) -> int:
    text = html.unescape(re.sub(r"<[^>]+>", "", format_cell(c, unit)))
    if _is_numeric_cell(c):  # a number or an interval is read on one line
        return len(text)
    return max(max((len(w) for w in text.split()), default=0), min(len(text), WRAP_CHARS))


def _column_chars(col, unit, rows, i) -> int:
    """The characters column ``i`` needs: its widest cell (text wrapped at ``WRAP_CHARS``), or
    its longest header word."""
    cell = max((_cell_chars(r[i], unit) for r in rows), default=0)
    head = max((len(w) for w in str(col).split()), default=0)
    return max(cell, head) + 3   # cell padding


def _column_blocks(cols, units, rows, n_key):
    """The non-key columns cut into blocks of at most ``MAX_COLUMNS`` columns (keys included) and
    ``MAX_BLOCK_CHARS`` characters (at least one column a block)."""
    width = [_column_chars(cols[i], units[i], rows, i) for i in range(len(cols))]
    key_chars = sum(width[:n_key])
    blocks, cur, used = [], [], key_chars
    for i in range(n_key, len(cols)):
        if cur and (len(cur) + n_key >= MAX_COLUMNS or used + width[i] > MAX_BLOCK_CHARS):
            blocks.append(cur)
            cur, used = [], key_chars
        cur.append(i)
        used += width[i]
    if cur:
        blocks.append(cur)
    return blocks


def _table_block(title, cols, units, rows) -> str:
    head = "".join(f"<th scope='col'>{_breakable(c)}</th>" for c in cols)
    body = []
    for row in rows:
        cells = []
        for c, u in zip(row, units):
            cls = " class='num'" if _is_numeric_cell(c) else ""
            cells.append(f"<td{cls}>{format_cell(c, u)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    if not body:
        body.append(f"<tr><td colspan='{max(1, len(cols))}'>no rows</td></tr>")
    short = " short" if len(rows) <= 20 else ""  # kept on one printed page
    return (f"<div class='table-wrap{short}'><table><caption>{title}</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>")


def _table_html(t: dict) -> str:
    cols = list(t["columns"])
    units = list(t.get("units") or [None] * len(cols))
    rows = [list(r) for r in t["rows"]]
    n_key = max(1, min(int(t.get("key_columns") or 1), MAX_COLUMNS - 2))
    parts = _column_blocks(cols, units, rows, n_key) if len(cols) > n_key else []
    if len(parts) <= 1:
        out = _table_block(_e(t["title"]), cols, units, rows)
    else:
        blocks = []
        for k, part in enumerate(parts):
            idx = list(range(n_key)) + part
            start, end = part[0], part[-1] + 1
            span = f"column {end}" if end == start + 1 else f"columns {start + 1}–{end}"
            title = _e(t["title"]) + ("" if k == 0 else
                                      f" <span class='meta'>(continued: {span} of "
                                      f"{len(cols)})</span>")
            blocks.append(_table_block(title, [cols[i] for i in idx], [units[i] for i in idx],
                                       [[r[i] for i in idx] for r in rows]))
        out = "".join(blocks)
    if t.get("note"):
        out += f"<p class='tnote'>{_e(t['note'])}</p>"
    return out


def _png_width(png_b64: str) -> int | None:
    """The pixel width recorded in a base64 PNG's header (IHDR), or None."""
    import base64
    import struct

    try:
        head = base64.b64decode(png_b64[:44])
        return int(struct.unpack(">I", head[16:20])[0]) if head[12:16] == b"IHDR" else None
    except (ValueError, struct.error):
        return None


def _figure_html(f: dict) -> str:
    png = "".join(ch for ch in f["png_base64"] if ch.isalnum() or ch in "+/=")
    # shown at its real width (never stretched beyond it), scaled down to fit the page
    width = _png_width(png) or int(f.get("width_px") or 1000)
    # the caption says what the figure shows (its alt text), not only its title
    title, alt = str(f["title"]).strip(), str(f["alt"]).strip()
    caption = f"<strong>{_e(title)}.</strong> {_e(alt)}" if alt and alt != title else _e(title)
    return (f"<figure><img src=\"data:image/png;base64,{png}\" width=\"{width}\" "
            f"alt=\"{_e(alt)}\"><figcaption>{caption}</figcaption></figure>")


_FINDING_COLUMNS = ["Measure", "Group", "Value (interval)", "Fails when", "Verdict",
                    "What it means"]
_FINDING_WIDTHS = ("16%", "12%", "16%", "9%", "12%", "35%")


def _condition_cell(f, unit):
    """The condition a finding was judged against, in the reader's unit (``> 10.0 pp``)."""
    cond, thr = f.get("condition"), f.get("threshold")
    if thr is None:
        return format_number(None, unit)
    op = next((o for o in (">=", "<=", ">", "<") if cond and o in cond), ">")
    shown = f"{op} {format_number(thr, unit)}"
    return f"|value| {shown}" if cond and cond.startswith("abs(") else shown


def _confidence(doc):
    """The run's confidence level (``parameters.confidence``) when it is a proportion, else None."""
    c = doc["parameters"].get("confidence")
    return float(c) if isinstance(c, numbers.Real) and not isinstance(c, bool) and 0 < c < 1 else None


def _units(doc):
    """Every unit used by the findings and tables of ``doc``."""
    used = {f.get("unit") for f in doc["findings"]}
    for s in doc["sections"]:
        for t in s["tables"]:
            used.update(t.get("units") or [])
            used.update(c.get("unit") for r in t["rows"] for c in r if isinstance(c, dict))
    return used


def _units_note(doc, conf=None) -> str:
    """The legend under the findings: what the intervals are and what the units mean (only
    those the report uses), so that no number needs a guess."""
    out = []
    if any(f["ci_low"] is not None or f["ci_high"] is not None for f in doc["findings"]):
        level = (f"{100 * conf:g}% confidence intervals" if conf is not None
                 else "confidence intervals")
        out.append(f"In parentheses: {level} (CI; each check states how it computes them in its "
                   "section; a value shown alone is exact or has no interval).")
    used = _units(doc)
    if "rate" in used:
        out.append("Rates and shares are percentages of the rows concerned.")
    if "difference" in used:
        out.append("Differences of rates are in percentage points (pp): from 70% to 75% is "
                   "5 pp.")
    if "ratio" in used:
        out.append("Ratios of rates are plain numbers (1 means equal rates).")
    return " ".join(out)


def _findings_html(doc) -> str:
    findings = doc["findings"]
    if not findings:
        return "<p class='meta'>No findings.</p>"
    titles = {s["id"]: s["title"] for s in doc["sections"]}
    rows, current = [], object()
    for f in findings:
        if f["check"] != current:  # one header row per check, instead of a column
            current = f["check"]
            rows.append(f"<tr class='check'><th colspan='{len(_FINDING_COLUMNS)}' scope='rowgroup'>"
                        f"{_e(titles.get(current, current))}</th></tr>")
        unit = f.get("unit")
        rows.append(
            "<tr>"
            f"<td>{_breakable(f['label'])}</td>"
            f"<td>{_breakable(f['group'] if f['group'] is not None else 'all')}</td>"
            f"<td class='num'>{_e(_interval(f['value'], f['ci_low'], f['ci_high'], unit))}"
            + (f"<br><span class='meta'>{_e(f['interval'])}</span>" if f.get("interval") else "") + "</td>"
            f"<td class='num'>{_e(_condition_cell(f, unit))}</td>"
            f"<td>{_badge(f['verdict'])}</td>"
            f"<td>{_breakable(f['sentence'], 24)}</td>"
            "</tr>")
    cols = "".join(f"<col style='width:{w}'>" for w in _FINDING_WIDTHS)
    conf = _confidence(doc)
    head_cols = list(_FINDING_COLUMNS)
    if conf is not None:
        head_cols[2] = f"Value ({100 * conf:g}% interval)"
    head = "".join(f"<th scope='col'>{_e(c)}</th>" for c in head_cols)
    note = _units_note(doc, conf)
    note = f"<p class='legend'>{_e(note)}</p>" if note else ""
    rules = [r for r in (doc["verdict"].get("rule"), doc["verdict"].get("report_rule")) if r]
    if rules:
        note += ("<p class='legend'>How the verdicts were decided: " + " ".join(_e(r) for r in dict.fromkeys(rules))
                 + "</p>")
    # the legend comes before the table: a reader meets "pp" and the intervals already explained
    return (note + f"<div class='table-wrap'><table class='findings'><colgroup>{cols}</colgroup>"
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>")


def _section_html(s: dict, n: int) -> str:
    parts = [f"<section id='sec-{n}'><h2>{_e(s['title'])}</h2>",
             f"<p class='meta'>{_badge(s['status'])} &nbsp;time "
             f"{_e(format_number(s['elapsed'], 'seconds'))}"
             + (f" &middot; random_state {_e(s['random_state'])}"
                if s.get("random_state") is not None else " &middot; deterministic")
             + "</p>",
             f"<p class='sverdict'>{_e(s['verdict'])}</p>"]
    parts += [f"<p>{_e(p)}</p>" for p in s["paragraphs"]]
    if s.get("error"):
        parts.append(f"<pre class='err'>{_e(s['error'])}</pre>")
    parts += [_table_html(t) for t in s["tables"]]
    parts += [_figure_html(f) for f in s["figures"]]
    parts.append("<h3>Parameters</h3>" + _kv(s["params"]))
    if s["notes"]:
        parts.append("<h3>Notes</h3><ul class='notes'>"
                     + "".join(f"<li>{_e(x)}</li>" for x in s["notes"]) + "</ul>")
    parts.append("</section>")
    return "\n".join(parts)


def _reproducibility_html(doc) -> str:
    env, data, model, params = doc["environment"], doc["data"], doc["model"], doc["parameters"]
    out = ["<section id='reproduce'><h2>Reproducibility</h2>"]
    out.append("<h3>Environment</h3>")
    out.append(_kv({"fairlens": env["fairlens"], "Python": env["python"],
                    "platform": env["platform"], **env["libraries"]}))
    out.append("<h3>Data</h3>")
    if data.get("datasets"):  # several tables (a tour): the table below identifies them
        out.append(_kv({"name": data["name"],
                        "protected": ", ".join(map(str, data["protected"])) or None}))
    else:
        out.append(_kv({"name": data["name"], "file": data["source"],
                        "rows": data["n_rows"], "columns": data["n_columns"],
                        "sha256": data["sha256"], "target": data["target"],
                        "favourable value": data["favourable"],
                        "protected": ", ".join(map(str, data["protected"])) or None}))
    if data.get("datasets"):
        out.append(_table_html({
            "title": "Tables used", "columns": ["Name", "File", "Rows", "Columns", "sha256"],
            "units": [None, None, "count", "count", None],
            "rows": [[d["name"], d["source"], d["n_rows"], d["n_columns"],
                      {"text": d["sha256"] or "–"}] for d in data["datasets"]]}))
    out.append("<h3>Model</h3>")
    if model.get("models"):
        out.append(f"<p>{_e(model['class'])}.</p>")
    else:
        out.append(_kv({"class": model["class"], "module": model["module"],
                        "file": model["source"], "sha256": model["sha256"],
                        "input": model["input"]}))
    if model["params"]:
        out.append("<p><strong>Model parameters</strong></p>" + _kv(model["params"]))
    if model.get("models"):
        out.append(_table_html({
            "title": "Models used", "columns": ["Class", "Module", "Parameters", "Input"],
            "rows": [[m["class"], m["module"],
                      json.dumps(m["params"], ensure_ascii=False, sort_keys=True),
                      m["input"]] for m in model["models"]]}))
    out.append("<h3>Run parameters</h3>" + _kv(params))
    out.append("</section>")
    return "\n".join(out)


_SCOPE = ".fairlens-report"


def _scoped_css(css: str, scope: str = _SCOPE) -> str:
    """``css`` with every selector under ``scope`` (``html``/``body``/``:root`` become the
    scope itself) and ``@page`` rules dropped, so a report embedded in a notebook restyles
    nothing outside itself."""
    out, i, n = [], 0, len(css)
    while i < n:
        j = css.find("{", i)
        if j < 0:
            break
        head = css[i:j].strip()
        if head.startswith("@media"):
            depth, k = 1, j + 1
            while depth and k < n:
                depth += {"{": 1, "}": -1}.get(css[k], 0)
                k += 1
            out.append(f"{head}{{{_scoped_css(css[j + 1:k - 1], scope)}}}")
            i = k
            continue
        k = css.find("}", j)
        body = css[j + 1:k]
        i = k + 1
        if head.startswith("@page"):
            continue
        sels = []
        for sel in head.split(","):
            sel = sel.strip()
            if sel in ("html", "body", ":root", "*"):
                sels.append(scope if sel != "*" else f"{scope} *")
            else:
                sels.append(f"{scope} {sel}")
        out.append(f"{','.join(sels)}{{{body}}}")
    return "\n".join(out)


@validated({
    "doc": "no_validation", "fragment": ["boolean"],
})
def render_html(doc, *, fragment=False) -> str:
    """A report document as one self-contained HTML page.

    Parameters
    ----------
    doc : dict
        A report document, schema ``fairlens.report/2`` (checked with
        :func:`~fairlens.report._schema.validate_document`).

    fragment : bool, default False
        Return a ``<div class="fairlens-report">`` with its styles scoped to it instead of a
        whole page: for ``_repr_html_`` in JupyterLab, where a page's ``body``/``h2``/``table``
        styles would restyle the notebook itself.

    Returns
    -------
    str
        The HTML: title, date, verdict, findings, one section per check (status, time,
        verdict, tables, figures, parameters, random_state, notes), environment, data and
        model identity, limitations.  No scripts, no external resources; every string of the
        document is escaped.

    Raises
    ------
    ValueError
        If ``doc`` does not follow the schema (naming the field).

    Examples
    --------
    >>> from fairlens.report._render import render_html
    >>> from fairlens.report._schema import environment_info, SCHEMA_VERSION
    >>> doc = {"schema": SCHEMA_VERSION, "kind": "audit", "title": "<b>t</b>",
    ...        "created": "2026-11-24T18:40:00+00:00", "environment": environment_info(),
    ...        "data": {"name": "d", "source": None, "n_rows": 1, "n_columns": 1,
    ...                 "sha256": None, "target": None, "favourable": None, "protected": []},
    ...        "model": {"class": "M", "module": "m", "params": {}, "source": None,
    ...                  "sha256": None, "input": None},
    ...        "parameters": {"random_state": 0, "n_jobs": None, "time_limit": None,
    ...                       "checks": []},
    ...        "verdict": {"passed": None, "fail_on": [], "sentence": "ok"},
    ...        "findings": [], "sections": [], "limitations": []}
    >>> page = render_html(doc)
    >>> "&lt;b&gt;t&lt;/b&gt;" in page and "<b>t</b>" not in page
    True
    """
    validate_document(doc)
    verdict = doc["verdict"]
    passed = verdict["passed"]
    status = verdict.get("status")
    state, word = (("pass", "Gate passed.") if passed is True else
                   ("fail", "Gate failed.") if passed is False else
                   ("warn", "Gate not checked.") if status == "not computed" else
                   ("info", "Summary." if doc["kind"] == "tour" else "No gate set."))
    gate = ""
    if verdict["fail_on"]:
        gate = (" <span class='meta'>Fails on: " + _e(", ".join(verdict["fail_on"]))
                + (f" &middot; burden of proof: {_e(verdict['burden'])}" if verdict.get("burden") else "")
                + "</span>")
    if verdict.get("rule"):
        gate += f"<br><span class='meta'>{_e(verdict['rule'])}</span>"
    nav = "".join(f"<li>{_e(s['title'])}</li>" for s in doc["sections"])
    kind = "fairlens audit" if doc["kind"] == "audit" else "fairlens tour"
    if fragment:
        start = [f"<div class='fairlens-report'><style>{_scoped_css(_CSS)}</style>"]
    else:
        start = ["<!DOCTYPE html>",
                 "<html lang='en'><head><meta charset='utf-8'>",
                 "<meta name='viewport' content='width=device-width, initial-scale=1'>",
                 f"<title>{_e(doc['title'])}</title>",
                 f"<style>{_CSS}</style></head><body>"]
    parts = start + [
        f"<header><h1>{_e(doc['title'])}</h1>",
        f"<p class='meta'>{_e(kind)} report &middot; created {_e(_when(doc['created']))}"
        f" &middot; fairlens {_e(doc['environment']['fairlens'])}"
        f" &middot; random_state {_e(doc['parameters']['random_state'])}</p></header>",
        f"<div class='banner {state}' role='status'><strong>{_e(word)}</strong>"
        f"{_e(verdict['sentence'])}{gate}</div>",
    ]
    if nav:
        parts.append(f"<nav><strong>Contents</strong><ul>{nav}"
                     "<li>Reproducibility</li><li>Limitations</li></ul></nav>")
    parts.append("<section id='findings'><h2>Findings</h2>" + _findings_html(doc) + "</section>")
    parts += [_section_html(s, i) for i, s in enumerate(doc["sections"], 1)]
    parts.append(_reproducibility_html(doc))
    lim = doc["limitations"] or ["none stated"]
    parts.append("<section id='limitations'><h2>Limitations</h2><ul>"
                 + "".join(f"<li>{_e(x)}</li>" for x in lim) + "</ul></section>")
    parts.append(f"<footer>Schema {_e(doc['schema'])}. Every number in this report was "
                 f"computed by fairlens {_e(doc['environment']['fairlens'])} on the machine "
                 "and data named above.</footer>")
    parts.append("</div>" if fragment else "</body></html>")
    return "\n".join(parts)
