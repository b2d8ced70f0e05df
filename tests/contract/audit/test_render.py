"""The report renderer: schema validation, one number format, escaping, self-contained HTML."""
import html.parser
import json
import re

import pytest

from fairlens.report import SCHEMA_VERSION, environment_info, format_number, render_html, validate_document
from tests._support.audit_docs import EVIL_COLUMN, EVIL_VALUE, make_doc, make_evil_doc, png_base64


class _Collector(html.parser.HTMLParser):
    """Every tag and attribute of a page, as a browser's tokenizer sees them."""

    def __init__(self):
        super().__init__()
        self.tags, self.attrs, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_data(self, data):
        self.text.append(data)


def _parse(page):
    p = _Collector()
    p.feed(page)
    return p


def test_valid_document_passes_and_is_json():
    doc = make_doc()
    assert validate_document(doc) is doc
    json.dumps(doc, allow_nan=False)
    assert doc["schema"] == SCHEMA_VERSION


def test_the_time_limit_key_and_reports_written_before_its_rename():
    """One name for a time limit: ``parameters.time_limit``; a report written when the keyword was
    ``time_budget`` still validates, a report with neither is refused by name."""
    doc = make_doc()
    assert "time_limit" in doc["parameters"] and "time_budget" not in doc["parameters"]
    doc["parameters"]["time_budget"] = doc["parameters"].pop("time_limit")
    assert validate_document(doc) is doc
    doc["parameters"].pop("time_budget")
    with pytest.raises(ValueError, match=r"doc\['parameters'\]\['time_limit'\]|time_limit"):
        validate_document(doc)
    doc["parameters"]["time_limit"] = "1 minute"
    with pytest.raises(ValueError, match="time_limit"):
        validate_document(doc)


@pytest.mark.parametrize("mutate, where", [
    (lambda d: d.pop("kind"), "doc['kind'] is missing"),
    (lambda d: d.update(schema="fairlens.report/0"), "doc['schema']"),
    (lambda d: d.update(created="2026-11-24T18:40:00+01:00"), "doc['created'] must be in UTC"),
    (lambda d: d["findings"][1].update(verdict="ok"), "doc['findings'][1]['verdict']"),
    (lambda d: d["findings"][0].update(value=float("nan")), "doc['findings'][0]['value']"),
    (lambda d: d["data"].update(source="/home/me/credit.csv"), "doc['data']['source']"),
    (lambda d: d["sections"][0]["tables"][0]["rows"][0].pop(),
     "doc['sections'][0]['tables'][0]['rows'][0]"),
    (lambda d: d["sections"][0].update(status="done"), "doc['sections'][0]['status']"),
    (lambda d: d["sections"][0]["figures"].append(
        {"title": "t", "alt": "a", "png_base64": "javascript:alert(1)", "width_px": 1000}),
     "png_base64"),
    (lambda d: d["parameters"].update(random_state=None), "doc['parameters']['random_state']"),
    (lambda d: d["verdict"].update(passed="yes"), "doc['verdict']['passed']"),
])
def test_invalid_documents_name_the_field(mutate, where):
    doc = make_doc()
    mutate(doc)
    with pytest.raises(ValueError) as exc:
        validate_document(doc)
    assert where in str(exc.value)
    with pytest.raises(ValueError):
        render_html(doc)


@pytest.mark.parametrize("value, unit, text", [
    (12240.0, None, "12,240"), (2.405e-17, None, "< 0.001"), (0.0018271, None, "0.00183"),
    (0.4269, None, "0.427"), (1.224e4, "count", "12,240"), (0.2134, "rate", "21.3%"),
    (0.05, "difference", "5.00 pp"), (-0.05, "difference", "-5.00 pp"), (3.4123, "seconds",
                                                                       "3.41 s"),
    (9.996, None, "10.0"), (0.9996, None, "1.00"), (99.96, None, "100"), (0, None, "0"),
    (None, None, "–"), (float("nan"), None, "–"), (True, None, "yes"), (7, None, "7"),
    (123.456, None, "123"), (-0.000003, None, "> -0.001"),
])
def test_one_number_format(value, unit, text):
    assert format_number(value, unit) == text


def test_no_scientific_notation_anywhere():
    page = render_html(make_doc())
    body = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", page)
    assert not re.search(r"\d[eE][+-]\d", body)
    # the interval format
    assert "21.3 pp (19.0–23.6)" in page
    assert "31.0% (28.0–34.0)" in page
    assert "12,240" in page


def test_sections_and_identity_are_shown():
    page = render_html(make_doc()).replace("<wbr>", "")  # break opportunities in long tokens
    for text in ("Audit of a model", "2026-11-24 18:40 UTC", "Gate failed.", "Findings",
                 "Group fairness", "Rates per group", "Parameters", "n_bootstrap",
                 "Environment", "numpy", "2.1.3", "3.11.9", "credit.csv", "ab" * 32,
                 "RandomForestClassifier", "cd" * 32, "Limitations",
                 "random sample", "demographic_parity_difference&gt;0.1", "Demographic parity difference",
                 "Value (interval)",
                 "1.23 s", "random_state"):
        assert text in page, text
    assert "<mark>changed</mark>" in page


def test_self_contained_no_scripts_no_network():
    doc = make_doc()
    doc["sections"][0]["figures"] = [{"title": "fig", "alt": "bars", "width_px": 1000,
                                      "png_base64": png_base64()}]
    page = render_html(doc)
    parsed = _parse(page)
    assert "script" not in parsed.tags and "link" not in parsed.tags
    assert "iframe" not in parsed.tags and "object" not in parsed.tags
    for name, value in parsed.attrs:
        assert not name.startswith("on")
        if name in ("src", "href"):
            assert value.startswith("data:image/png;base64,"), value
    assert "http://" not in page and "https://" not in page and "@import" not in page
    assert "@media print" in page and "size:A4" in page
    assert 'width="1000"' in page


def test_user_strings_are_escaped():
    page = render_html(make_evil_doc())
    parsed = _parse(page)
    # nothing but the renderer's own tags, no event handler attributes, no script
    assert set(parsed.tags) <= {"html", "head", "meta", "title", "style", "body", "header", "h1",
                                "p", "div", "strong", "span", "nav", "ol", "li", "section",
                                "h2", "table", "caption", "thead", "tr", "th", "tbody", "td", "ul",
                                "mark", "figure", "img", "figcaption", "h3", "dl", "dt", "dd",
                                "footer", "colgroup", "col", "wbr"}
    assert parsed.tags.count("img") == 1  # the figure only
    for name, _ in parsed.attrs:
        assert not name.startswith("on"), name
    assert EVIL_COLUMN not in page and EVIL_VALUE not in page
    text = "".join(parsed.text)
    assert EVIL_COLUMN in text and EVIL_VALUE in text  # shown as text
    assert "onmouseover=alert(2)" in text


def test_environment_info_is_valid_block():
    env = environment_info()
    doc = make_doc(environment=env)
    validate_document(doc)
    assert "numpy" in env["libraries"] and env["python"].count(".") == 2


def test_long_tokens_get_break_opportunities_words_do_not():
    doc = make_doc()
    doc["sections"][0]["tables"][0]["rows"][0][0] = "native-country=United-States,race=White"
    doc["sections"][0]["tables"][0]["rows"][0][3] = "an ordinary sentence of short words"
    page = render_html(doc)
    assert "native-<wbr>country=<wbr>United-<wbr>States,<wbr>race=<wbr>White" in page
    assert "an ordinary sentence of short words" in page


def test_wide_table_in_blocks_with_key_columns_repeated():
    doc = make_doc()
    cols = ["Pair", "Row"] + [f"feature {i}" for i in range(13)]
    doc["sections"][0]["tables"] = [{"title": "Pairs", "columns": cols, "key_columns": 2,
                                     "rows": [["1", "original"] + list(range(13))],
                                     "note": None}]
    page = render_html(doc)
    assert page.count("<table>") == 3 and page.count(">Row</th>") == 3
    assert "columns 9–14 of 15" in page and "column 15 of 15" in page
    doc["sections"][0]["tables"][0]["key_columns"] = "2"
    with pytest.raises(ValueError, match="key_columns"):
        validate_document(doc)


def test_figure_shown_at_its_real_width_never_stretched():
    doc = make_doc()
    doc["sections"][0]["figures"] = [{"title": "f", "alt": "a", "width_px": 1000,
                                      "png_base64": png_base64(9.39, 3)}]  # 939 px wide
    page = render_html(doc)
    assert 'width="939"' in page and 'width="1000"' not in page


def test_fragment_for_notebooks_scopes_every_style():
    import re

    frag = render_html(make_doc(), fragment=True)
    assert frag.startswith("<div class='fairlens-report'>") and frag.endswith("</div>")
    assert "<html" not in frag and "<body" not in frag and "@page" not in frag
    css = re.search(r"<style>(.*?)</style>", frag, re.S).group(1)
    for rule in re.findall(r"([^{}]+)\{[^{}]*\}", css):
        for sel in rule.split(","):
            sel = sel.strip()
            if sel.startswith("@media"):
                continue
            assert sel.startswith(".fairlens-report"), sel
    assert "@media print" in css
    assert "Findings" in frag and "Limitations" in frag
