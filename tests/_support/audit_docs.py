"""Report documents for the renderer tests (schema fairlens.report/2)."""
from __future__ import annotations

import base64
import copy
import io

EVIL_COLUMN = "<img src=x onerror=alert(1)>"
EVIL_VALUE = "<script>window.__pwned=1</script>"


def png_base64(width_in=10.0, height_in=4.0, title="a figure"):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context({"font.size": 12}):
        fig, ax = plt.subplots(figsize=(width_in, height_in), dpi=100)
        ax.bar(["a", "b", "c"], [0.3, 0.5, 0.2])
        ax.set_title(title)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100)
        plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


_BASE = {
    "schema": "fairlens.report/2",
    "kind": "audit",
    "title": "Audit of a model",
    "created": "2026-11-24T18:40:00+00:00",
    "environment": {"fairlens": "0.0.test", "python": "3.11.9", "platform": "Linux x86_64",
                    "libraries": {"numpy": "2.1.3", "pandas": "2.2.3"}},
    "data": {"name": "credit", "source": "credit.csv", "n_rows": 1000, "n_columns": 5,
             "sha256": "ab" * 32, "target": "approved", "favourable": "yes",
             "protected": ["sex"]},
    "model": {"class": "RandomForestClassifier", "module": "sklearn.ensemble._forest",
              "params": {"n_estimators": 100, "max_depth": None}, "source": "model.skops",
              "sha256": "cd" * 32, "input": "readable frame"},
    "parameters": {"random_state": 0, "n_jobs": 1, "time_limit": 60.0,
                   "checks": ["group_fairness"]},
    "verdict": {"passed": False, "fail_on": ["demographic_parity_difference>0.1"],
                "sentence": "The gate failed: the demographic parity difference is 0.213."},
    "findings": [
        {"check": "group_fairness", "measure": "demographic_parity_difference",
         "label": "Demographic parity difference", "group": "sex", "value": 0.2134,
         "ci_low": 0.19, "ci_high": 0.236, "threshold": 0.1, "verdict": "fail",
         "sentence": "Women are approved less often than men.", "unit": "difference"},
        {"check": "group_fairness", "measure": "selection_rate", "label": "Selection rate",
         "group": "sex=female", "value": 0.31, "ci_low": 0.28, "ci_high": 0.34,
         "threshold": None, "verdict": "info", "sentence": "Share approved.", "unit": "rate"},
    ],
    "sections": [
        {"id": "group_fairness", "title": "Group fairness", "status": "complete",
         "elapsed": 1.234, "verdict": "The approval rates differ by sex.",
         "paragraphs": ["Rates per group with 95% bootstrap intervals."],
         "tables": [{"title": "Rates per group",
                     "columns": ["Group", "Rows", "Selection rate", "Note"],
                     "units": [None, "count", "rate", None],
                     "rows": [["sex=female", 12240, {"value": 0.31, "ci_low": 0.28,
                                                     "ci_high": 0.34}, None],
                              ["sex=male", 20000, 0.52, {"text": "changed", "highlight": True}]],
                     "note": "Intervals: 95% bootstrap, 1,000 resamples."}],
         "figures": [], "params": {"n_bootstrap": 1000, "confidence": 0.95},
         "random_state": 0, "notes": ["Groups under 30 rows are flagged."]},
    ],
    "limitations": ["The intervals assume the rows are a random sample."],
}


def make_doc(**changes):
    """A valid audit document; keyword arguments replace top-level keys."""
    doc = copy.deepcopy(_BASE)
    doc.update(changes)
    return doc


def make_evil_doc(with_figure=True):
    """A document whose user strings (column names, values, file and class names) are HTML."""
    doc = make_doc()
    doc["title"] = f"Audit of {EVIL_VALUE}"
    doc["data"]["source"] = f"{EVIL_COLUMN}.csv"
    doc["data"]["protected"] = [EVIL_COLUMN]
    doc["data"]["favourable"] = EVIL_VALUE
    doc["model"]["class"] = EVIL_VALUE
    doc["model"]["params"] = {EVIL_COLUMN: EVIL_VALUE}
    doc["findings"][0]["group"] = f"{EVIL_COLUMN}={EVIL_VALUE}"
    doc["findings"][0]["label"] = EVIL_COLUMN
    doc["verdict"]["fail_on"] = [f"{EVIL_COLUMN}>0.1"]
    sec = doc["sections"][0]
    sec["verdict"] = EVIL_VALUE
    sec["paragraphs"].append(f"'\" onmouseover=alert(2) {EVIL_VALUE}")
    sec["tables"][0]["columns"][0] = EVIL_COLUMN
    sec["tables"][0]["rows"][0][0] = EVIL_VALUE
    sec["tables"][0]["rows"][1][3] = {"text": EVIL_VALUE, "highlight": True}
    sec["params"] = {EVIL_COLUMN: EVIL_VALUE}
    sec["notes"] = [EVIL_VALUE]
    if with_figure:
        sec["figures"] = [{"title": EVIL_COLUMN, "alt": "\" onerror=alert(3) x=\"",
                           "png_base64": png_base64(), "width_px": 1000}]
    doc["limitations"] = [EVIL_VALUE]
    return doc
