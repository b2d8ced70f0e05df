"""The tests of ``tests/contract/audit/test_units.py`` that pin internals
(its docstring describes both halves)."""
import html
import re

import numpy as np
import pytest

import fairlens
from fairlens.audit._gate import MEASURES
from fairlens.report import validate_document
from fairlens.report._render import _interval, render_html
from tests._support.audit_docs import make_doc, png_base64
from tests.contract.audit.test_units import group_report  # noqa: F401 (fixtures)


def _text(page):
    return html.unescape(re.sub(r"<[^>]+>", "", page.replace("<wbr>", "")))


def test_all_group_measures_table_uses_the_findings_units(group_report):
    sec = group_report.section("group_fairness")
    table = next(t for t in sec.tables if t["title"] == "All group measures")
    found = {(f["measure"], f["group"]): f for f in sec.findings}
    labels = {v[0].lower(): k for k, v in MEASURES.items()}
    checked = 0
    for attr, label, cell, *_ in table["rows"]:
        measure = next(m for name, m in labels.items() if label.lower().startswith(name))
        # every value cell carries its measure's unit: a difference in pp, a ratio plain
        assert cell["unit"] == MEASURES[measure][1], (measure, cell)
        f = found.get((measure, attr))
        if f is not None:  # the same number, shown the same way, in the table and the findings
            assert (cell["value"], cell["ci_low"], cell["ci_high"]) == pytest.approx(
                (f["value"], f["ci_low"], f["ci_high"]))
            assert _interval(cell["value"], cell["ci_low"], cell["ci_high"], cell["unit"]) == \
                _interval(f["value"], f["ci_low"], f["ci_high"], f["unit"])
            checked += 1
    assert checked == 24  # 8 measures x (sex, age, sex & age)
    assert "TPR" not in str(table["rows"])  # abbreviations spelled out


def test_rendered_table_shows_percentage_points_not_proportions(group_report):
    doc = group_report.to_dict()
    validate_document(doc)
    page = render_html(doc)
    block = page[page.index("All group measures"):]
    block = block[: block.index("<p class='tnote'>")]  # every column block of the table
    # the row's key columns (attribute, measure) are repeated in each block: its cells, all blocks
    row = "".join(r for r in block.split("<tr>") if "Demographic parity difference" in r and ">sex<" in r)
    f = group_report.findings.query("measure == 'demographic_parity_difference' and group == 'sex'").iloc[0]
    # hand check of the unit: 100 x the raw proportion, 3 significant digits, "pp"
    pp = 100 * f["value"]
    expected = f"{pp:.{max(0, 2 - int(np.floor(np.log10(abs(pp)))))}f} pp"
    assert expected in _text(row), (expected, _text(row))
    raw = f"{f['value']:.3g}"
    assert raw not in _text(row)  # the raw proportion is not what the reader sees
    # the legend says what pp means and what the intervals are
    text = _text(page)
    assert "percentage points (pp)" in text and "95% confidence intervals" in text
    assert "Value (95% interval)" in text


def test_document_keeps_raw_proportions_with_their_unit(group_report):
    doc = group_report.to_dict()
    frame = group_report.to_frame()
    for f, (_, r) in zip(doc["findings"], frame.iterrows()):
        assert f["unit"] == r["unit"] == MEASURES[f["measure"]][1]
        if f["unit"] in ("rate", "difference"):
            assert -1 <= f["value"] <= 1  # a proportion, never a percentage


def test_exact_value_is_not_shown_as_an_interval():
    assert _interval(0.4667, 0.4667, 0.4667, "rate") == "46.7%"
    assert _interval(0.4667, 0.40, 0.50, "rate") == "46.7% (40.0–50.0)"
    assert _interval(0.05, None, None, "difference") == "5.00 pp"


def test_legend_only_explains_units_the_report_uses():
    doc = make_doc()
    text = _text(render_html(doc))
    assert "percentage points (pp)" in text  # the base document has a difference
    for f in doc["findings"]:
        f["unit"] = None
        f["ci_low"] = f["ci_high"] = None
    for s in doc["sections"]:
        for t in s["tables"]:
            t["units"] = None
            t["rows"] = [[c if not isinstance(c, dict) or "text" in c else c["value"] for c in r]
                         for r in t["rows"]]
    text = _text(render_html(doc))
    assert "percentage points" not in text and "confidence intervals" not in text


def test_figure_caption_says_what_the_figure_shows():
    doc = make_doc()
    doc["sections"][0]["figures"] = [{"title": "Selection rate by sex", "alt": "Each group's share with "
                                      "its interval.", "png_base64": png_base64(), "width_px": 1000}]
    page = render_html(doc)
    cap = page[page.index("<figcaption>"):page.index("</figcaption>")]
    assert "Selection rate by sex." in _text(cap) and "Each group's share with its interval." in _text(cap)


def test_no_scientific_notation_in_a_real_report(german, encoded_mlp):
    """The batch-consistency tolerance (about 1e-14) is read as a plain number, like every other."""
    from tests._support.audit_fixtures import SMALL

    report = fairlens.audit(encoded_mlp, german, protected=["sex"], checks=["explanations"],
                            options=dict(SMALL, explainers=("shap",)), time_limit=None, progress=False)
    assert not report.findings["sentence"].str.contains(r"\d[eE][+-]?\d", regex=True).any()
    page = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", render_html(report.to_dict()))
    page = page.split("<section id='reproduce'>")[0]  # run parameters are shown exactly (1e-06 stays)
    sections = page[page.index("<section id='sec-1'>"):]
    findings = page[page.index("<section id='findings'>"):page.index("<section id='sec-1'>")]
    assert not re.search(r"\d[eE][+-]?\d", _text(findings))
    body = sections.split("<h3>Parameters</h3>")[0]  # parameters too are shown exactly
    assert not re.search(r"\d[eE][+-]?\d", _text(body))
