"""The fairlens tour: the four analyses on bundled data, at a teaching-sized budget.

``fairlens tour`` (or :func:`run_tour`) needs no data download and no Jupyter: it uses the
datasets bundled with fairlens (Graduate Admission v1, UCI Adult, scikit-learn's breast
cancer), prints a summary table, and writes a self-contained report (HTML, or the JSON report
document) with the figures embedded, which a student can open in any browser.  The report is
the same document and the same renderer as :func:`fairlens.audit`'s (schema
``fairlens.report/2``): date, versions, data checksums, every parameter, a conclusion and the
limitations.

1. Shuffling attacks (admission): an honest score that ignores research experience is
   shuffled by Dominance / Mixing / Swapping; fairness drops, linear SHAP stays blind, the
   batch-consistency detector catches it.
2. MAFT (census, benchmark encoding): black-box search for individual discrimination on the
   reference MLP, against AEQUITAS on the same budget.
3. TestSGD (census, readable values): the rule sets over sex, race and age with the largest
   group fairness scores, each with its error margin.
4. Certification (breast cancer): accuracy of a random forest and a Feature Partitioned
   Forest under attackers that change b features, by FLB, ELB and exact brute force.
"""
from __future__ import annotations

import base64
import io
import json
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["TourSection", "TourReport", "run_tour", "BUDGETS", "check_report_path"]

#: budgets of the two tour sizes
BUDGETS = {
    "quick": dict(shap_explain=0, maft_seeds=20, maft_local=20, testsgd_samples=200,
                  testsgd_max=2000, trees=30, budgets=(1, 2)),
    "full": dict(shap_explain=20, maft_seeds=100, maft_local=100, testsgd_samples=1000,
                 testsgd_max=20000, trees=60, budgets=(1, 2, 3)),
}

#: figures: drawn at >= 1000 px wide (10 in at 100 dpi) with >= 12 px text
_DPI = 100
_RC = {"font.size": 13, "axes.titlesize": 14, "axes.labelsize": 13, "xtick.labelsize": 12,
       "ytick.labelsize": 12, "legend.fontsize": 12, "figure.dpi": _DPI}


@dataclass
class TourSection:
    """One analysis of the tour: a table, figures and what they show.

    Sections are built by :func:`run_tour`; every field but the first three is optional.

    Parameters
    ----------
    key, title, dataset : str
        Section id (``"shuffle"``, ``"maft"``, ``"testsgd"``, ``"certify"``), heading, data.
    headline : str
        The result in one sentence.
    table : pandas.DataFrame or None
        The numbers (raw values; ``columns`` gives readable names and units).
    figures : list of matplotlib.figure.Figure
        The section's figures.
    text : str
        Plain-text explanation.
    elapsed : float
        Seconds.
    error : str or None
        The traceback of a failed section.
    columns : dict
        ``table column -> (readable name, unit)`` for the report.
    paragraphs, notes : list of str
        The explanation, paragraph by paragraph, and footnotes.
    params : dict
        Every parameter of the section.
    datasets, models : list of dict
        Identity of the tables and models used (report document blocks).
    findings : list of dict
        The section's key numbers (report document findings).
    extra_tables : list of dict
        Further report tables (document form).
    conclusion : str
        The section's clause of the report's verdict sentence.
    table_title : str
        Caption of ``table``.
    table_note : str or None
        Note under ``table``.
    figure_titles : list of str
        Captions of ``figures``.
    _png : list of str
        Cache of :meth:`png_base64` (internal).

    Examples
    --------
    >>> import pandas as pd
    >>> from fairlens.tour import TourReport, TourSection
    >>> section = TourSection(key="shuffle", title="Shuffling attacks", dataset="admission",
    ...                       headline="fairness drops under the attack",
    ...                       table=pd.DataFrame({"attack": ["none", "dominance"], "dp": [0.03, 0.9]}),
    ...                       elapsed=2.0)
    >>> report = TourReport(sections=[section], mode="quick", random_state=0, elapsed=2.0,
    ...                     created="2026-01-01T00:00:00Z")
    >>> section.key, section.error is None
    ('shuffle', True)
    """

    key: str
    title: str
    dataset: str
    headline: str = ""
    table: pd.DataFrame | None = None
    figures: list = field(default_factory=list)
    text: str = ""
    elapsed: float = 0.0
    error: str | None = None
    columns: dict = field(default_factory=dict)
    paragraphs: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    params: dict = field(default_factory=dict)
    datasets: list = field(default_factory=list)
    models: list = field(default_factory=list)
    findings: list = field(default_factory=list)
    extra_tables: list = field(default_factory=list)
    conclusion: str = ""
    table_title: str = ""
    table_note: str | None = None
    figure_titles: list = field(default_factory=list)
    _png: list = field(default_factory=list, repr=False)

    def png_base64(self) -> list:
        """The figures as base64 PNG (drawn once, at their natural size).

        Returns
        -------
        list of str
            One base64 PNG per figure, in order (cached).

        Examples
        --------
        >>> import matplotlib.pyplot as plt
        >>> from fairlens.tour import TourSection
        >>> fig, ax = plt.subplots()
        >>> _ = ax.plot([0, 1], [0, 1])
        >>> section = TourSection(key="shuffle", title="Shuffling attacks", dataset="admission",
        ...                       figures=[fig])
        >>> pngs = section.png_base64()
        >>> len(pngs), pngs[0][:8]  # base64 of the PNG signature
        (1, 'iVBORw0K')
        """
        if len(self._png) != len(self.figures):
            self._png = [_png(f) for f in self.figures]
        return self._png


_LIMITATIONS = [
    "The tour runs at a teaching-sized budget (see each section's parameters); the papers' "
    "experiments use larger budgets, so counts and bounds here are smaller or looser.",
    "The models are trained here on bundled copies of public benchmark tables; they are "
    "examples, not a model anyone deploys. Audit your own model with `fairlens audit`.",
    "Estimates carry the stated error margins or bounds at the stated confidence; a count of "
    "discriminatory instances is a lower bound on what exists, not a rate.",
    "Certified accuracies hold for the attacker model of the paper (any b features changed, "
    "within each feature's observed range) on the 114 test rows only.",
]


@dataclass
class TourReport:
    """All sections of a tour run.

    ``summary()`` for the table, ``to_dict()`` for the report document,
    ``to_html()``/``to_json()``/``save()`` to write it.

    Parameters
    ----------
    sections : list of TourSection
        The analyses, in the order they ran.
    mode : {"quick", "full"}
        The budget used (a key of :data:`BUDGETS`).
    random_state : int
        The seed of every random step.
    elapsed : float
        Wall seconds of the whole tour.
    created : str, default ""
        UTC creation time (ISO 8601); empty means "now" in the document.

    Examples
    --------
    >>> import pandas as pd
    >>> from fairlens.tour import TourReport, TourSection
    >>> section = TourSection(key="shuffle", title="Shuffling attacks", dataset="admission",
    ...                       headline="fairness drops under the attack",
    ...                       table=pd.DataFrame({"attack": ["none", "dominance"], "dp": [0.03, 0.9]}),
    ...                       elapsed=2.0)
    >>> report = TourReport(sections=[section], mode="quick", random_state=0, elapsed=2.0,
    ...                     created="2026-01-01T00:00:00Z")
    >>> report.ok, len(report.sections)
    (True, 1)
    """

    sections: list
    mode: str
    random_state: int
    elapsed: float
    created: str = ""

    @property
    def ok(self) -> bool:
        """True when every section ran without an error."""
        return all(s.error is None for s in self.sections)

    def summary(self) -> pd.DataFrame:
        """One row per section: analysis, data, result (one sentence), seconds.

        Returns
        -------
        pandas.DataFrame
            Columns ``analysis, data, result, seconds``; a failed section's result is
            ``"FAILED: "`` and the last line of its traceback.

        Examples
        --------
        >>> import pandas as pd
        >>> from fairlens.tour import TourReport, TourSection
        >>> section = TourSection(key="shuffle", title="Shuffling attacks", dataset="admission",
        ...                       headline="fairness drops under the attack",
        ...                       table=pd.DataFrame({"attack": ["none", "dominance"], "dp": [0.03, 0.9]}),
        ...                       elapsed=2.0)
        >>> report = TourReport(sections=[section], mode="quick", random_state=0, elapsed=2.0,
        ...                     created="2026-01-01T00:00:00Z")
        >>> report.summary()
                    analysis       data                           result  seconds
        0  Shuffling attacks  admission  fairness drops under the attack      2.0
        """
        return pd.DataFrame([
            {"analysis": s.title, "data": s.dataset,
             "result": s.headline if s.error is None else "FAILED: " + s.error.splitlines()[-1],
             "seconds": round(s.elapsed, 1)}
            for s in self.sections
        ])

    # ------------------------------------------------------------------ the document
    def to_dict(self) -> dict:
        """The report document (schema ``fairlens.report/2``, kind ``"tour"``).

        Returns
        -------
        dict
            JSON-safe; figures as base64 PNG.  Validated with
            :func:`fairlens.audit._schema.validate_document`.

        Examples
        --------
        >>> import pandas as pd
        >>> from fairlens.tour import TourReport, TourSection
        >>> section = TourSection(key="shuffle", title="Shuffling attacks", dataset="admission",
        ...                       headline="fairness drops under the attack",
        ...                       table=pd.DataFrame({"attack": ["none", "dominance"], "dp": [0.03, 0.9]}),
        ...                       elapsed=2.0)
        >>> report = TourReport(sections=[section], mode="quick", random_state=0, elapsed=2.0,
        ...                     created="2026-01-01T00:00:00Z")
        >>> doc = report.to_dict()
        >>> doc["schema"], doc["kind"], doc["verdict"]["sentence"]
        ('fairlens.report/2', 'tour', 'All 1 analyses ran on bundled data in 2 s.')
        """
        from ._base import to_jsonable
        from .audit._schema import SCHEMA_VERSION, environment_info, utc_now, validate_document

        datasets, models, findings, sections = [], [], [], []
        for s in self.sections:
            for d in s.datasets:
                if d not in datasets:
                    datasets.append(d)
            models.extend(m for m in s.models if m not in models)
            findings.extend(s.findings)
            sections.append(_section_doc(s))
        n_ok = sum(s.error is None for s in self.sections)
        clauses = [s.conclusion for s in self.sections if s.error is None and s.conclusion]
        if self.ok:
            sentence = ("; ".join(clauses) + "." if clauses else
                        f"All {len(self.sections)} analyses ran on bundled data in "
                        f"{self.elapsed:.0f} s.")
            sentence = sentence[0].upper() + sentence[1:]
        else:
            failed = ", ".join(s.title for s in self.sections if s.error is not None)
            sentence = (f"{n_ok} of {len(self.sections)} analyses ran; failed: {failed} "
                        "(the error is shown in its section).")
        doc = {
            "schema": SCHEMA_VERSION,
            "kind": "tour",
            "title": "fairlens tour",
            "created": self.created or utc_now(),
            "environment": environment_info(),
            "data": {"name": "tables bundled with fairlens", "source": None, "n_rows": None,
                     "n_columns": None, "sha256": None, "target": None, "favourable": None,
                     "protected": sorted({p for s in self.sections
                                          for p in s.params.get("protected", [])}),
                     "datasets": datasets},
            "model": {"class": f"{len(models)} models trained by the tour", "module": "",
                      "params": {}, "source": None, "sha256": None, "input": None,
                      "models": models},
            "parameters": {"random_state": int(self.random_state), "n_jobs": 1,
                           "time_budget": None, "checks": [s.key for s in self.sections],
                           "mode": self.mode,
                           "budgets": to_jsonable(BUDGETS[self.mode])},
            "verdict": {"passed": None, "fail_on": [], "sentence": sentence},
            "findings": to_jsonable(findings),
            "sections": sections,
            "limitations": list(_LIMITATIONS),
        }
        return validate_document(doc)

    def _repr_html_(self) -> str:
        """The report in JupyterLab (styles scoped to it)."""
        from .audit._render import render_html

        return render_html(self.to_dict(), fragment=True)

    def to_html(self, path=None) -> str:
        """The self-contained HTML report; written to ``path`` when given.

        Parameters
        ----------
        path : str or os.PathLike, optional
            Where to write it (checked first, see :func:`check_report_path`).

        Returns
        -------
        str
            The HTML.

        Raises
        ------
        TypeError, ValueError
            For a bad ``path`` (see :func:`check_report_path`).

        Examples
        --------
        >>> import pandas as pd
        >>> from fairlens.tour import TourReport, TourSection
        >>> section = TourSection(key="shuffle", title="Shuffling attacks", dataset="admission",
        ...                       headline="fairness drops under the attack",
        ...                       table=pd.DataFrame({"attack": ["none", "dominance"], "dp": [0.03, 0.9]}),
        ...                       elapsed=2.0)
        >>> report = TourReport(sections=[section], mode="quick", random_state=0, elapsed=2.0,
        ...                     created="2026-01-01T00:00:00Z")
        >>> report.to_html()[:15]
        '<!DOCTYPE html>'
        """
        from .audit._render import render_html

        if path is not None:
            path = check_report_path(path, suffixes={".html", ".htm"})
        page = render_html(self.to_dict())
        if path is not None:
            from .audit._output import write_text_atomic

            write_text_atomic(path, page)
        return page

    def to_json(self, path=None) -> str:
        """The report document as JSON (figures as base64 PNG); written to ``path`` if given.

        Parameters
        ----------
        path : str or os.PathLike, optional
            Where to write it (must end in ``.json``; checked first, see
            :func:`check_report_path`).

        Returns
        -------
        str
            The JSON text.

        Raises
        ------
        TypeError, ValueError
            For a bad ``path``.

        Examples
        --------
        >>> import pandas as pd
        >>> from fairlens.tour import TourReport, TourSection
        >>> section = TourSection(key="shuffle", title="Shuffling attacks", dataset="admission",
        ...                       headline="fairness drops under the attack",
        ...                       table=pd.DataFrame({"attack": ["none", "dominance"], "dp": [0.03, 0.9]}),
        ...                       elapsed=2.0)
        >>> report = TourReport(sections=[section], mode="quick", random_state=0, elapsed=2.0,
        ...                     created="2026-01-01T00:00:00Z")
        >>> import json
        >>> json.loads(report.to_json())["schema"]
        'fairlens.report/2'
        """
        if path is not None:
            path = check_report_path(path, suffixes={".json"})
        text = json.dumps(self.to_dict(), indent=1, allow_nan=False, ensure_ascii=False)
        if path is not None:
            from .audit._output import write_text_atomic

            write_text_atomic(path, text)
        return text

    def save(self, path) -> Path:
        """Write the report to ``path``: HTML for ``.html``/``.htm``, the JSON document for
        ``.json`` (anything else is refused with ``ValueError``).

        Parameters
        ----------
        path : str or os.PathLike
            The file to write (its folder must exist).

        Returns
        -------
        pathlib.Path
            The path written.

        Raises
        ------
        TypeError, ValueError
            For a bad ``path`` (see :func:`check_report_path`).

        Examples
        --------
        >>> import pandas as pd
        >>> from fairlens.tour import TourReport, TourSection
        >>> section = TourSection(key="shuffle", title="Shuffling attacks", dataset="admission",
        ...                       headline="fairness drops under the attack",
        ...                       table=pd.DataFrame({"attack": ["none", "dominance"], "dp": [0.03, 0.9]}),
        ...                       elapsed=2.0)
        >>> report = TourReport(sections=[section], mode="quick", random_state=0, elapsed=2.0,
        ...                     created="2026-01-01T00:00:00Z")
        >>> import os, tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     path = report.save(os.path.join(tmp, "tour.html"))
        ...     path.name, path.exists()
        ('tour.html', True)
        """
        path = check_report_path(path)
        if path.suffix.lower() == ".json":
            self.to_json(path)
        else:
            self.to_html(path)
        return path


def check_report_path(path, name="out", suffixes=None) -> Path:
    """Validate where a report will be written, before any work is done.

    The extension must be ``.html``, ``.htm`` or ``.json`` (or one of ``suffixes``), the
    folder must exist (it is never created silently), ``path`` must not be a folder or a
    device, no part of it may be an existing file, and the file must really be creatable.

    Parameters
    ----------
    path : str or os.PathLike
        The report file to be written.
    name : str
        The argument's name in messages.
    suffixes : collection of str, optional
        Accepted extensions; default ``.html``, ``.htm``, ``.json``.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    TypeError
        For a non-path.
    ValueError
        One line naming ``name``, the path and the fix.

    Examples
    --------
    >>> import os, tempfile
    >>> from fairlens.tour import check_report_path
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     check_report_path(os.path.join(tmp, "report.json")).name
    'report.json'
    >>> check_report_path("report.txt")
    Traceback (most recent call last):
    ...
    ValueError: out: 'report.txt' has the extension '.txt'; a report is written as .html, .htm, .json
    """
    from .audit._output import REPORT_SUFFIXES, check_output_path

    return check_output_path(path, name, suffixes=set(suffixes or REPORT_SUFFIXES),
                             default_name="fairlens-tour.html")


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI)  # natural size: no cropping below 1000 px
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _figure(width=11.0, height=4.6, ncols=1):
    import matplotlib.pyplot as plt

    with plt.rc_context(_RC):
        fig, axes = plt.subplots(1, ncols, figsize=(width, height), dpi=_DPI,
                                 layout="constrained")
    return fig, axes


def _model_info(model, what, input_kind) -> dict:
    from ._base import to_jsonable

    params = {}
    if hasattr(model, "get_params"):
        try:
            raw = model.get_params(deep=False)
        except Exception:  # a model without sklearn-style parameters: identity only
            raw = {}
        params = {k: to_jsonable(v) if isinstance(v, (int, float, str, bool, type(None),
                                                      tuple, list)) else type(v).__name__
                  for k, v in raw.items()}
    cls = type(model)
    return {"class": f"{cls.__name__} ({what})", "module": cls.__module__, "params": params,
            "source": None, "sha256": None, "input": input_kind}


def _data_info(ds, name) -> dict:
    from .audit._schema import frame_sha256

    return {"name": name, "source": None, "n_rows": int(ds.frame.shape[0]),
            "n_columns": int(ds.frame.shape[1]), "sha256": frame_sha256(ds.frame)}


def _finding(check, measure, label, value, *, group=None, ci=(None, None), unit=None,
             sentence="", verdict="info"):
    return {"check": check, "measure": measure, "label": label, "group": group,
            "value": None if value is None else float(value),
            "ci_low": None if ci[0] is None else float(ci[0]),
            "ci_high": None if ci[1] is None else float(ci[1]), "threshold": None,
            "verdict": verdict, "sentence": sentence, "unit": unit}


def _section_doc(s: TourSection) -> dict:
    from ._base import to_jsonable

    tables = []
    if s.table is not None:
        # a column mapped to None is left out of the report (e.g. a constant, said in the note)
        cols = [c for c in s.table.columns if s.columns.get(c, (c, None)) is not None]
        labels = [s.columns.get(c, (c, None))[0] for c in cols]
        units = [s.columns.get(c, (c, None))[1] for c in cols]
        rows = [[to_jsonable(v) for v in rec]
                for rec in s.table[cols].itertuples(index=False)]
        tables.append({"title": s.table_title or s.title, "columns": labels, "rows": rows,
                       "units": units, "note": s.table_note})
    tables.extend(s.extra_tables)
    figures = [{"title": t, "alt": t, "png_base64": png, "width_px": int(f.get_figwidth() * _DPI)}
               for f, png, t in zip(s.figures, s.png_base64(),
                                    s.figure_titles + [s.title] * len(s.figures))]
    status = "complete" if s.error is None else "failed"
    verdict = s.headline if s.error is None else \
        f"This analysis failed: {s.error.strip().splitlines()[-1]}"
    doc = {"id": s.key, "title": s.title, "status": status, "elapsed": float(s.elapsed),
           "verdict": verdict,
           "paragraphs": ([f"Data: {s.dataset}."] if s.dataset else []) + list(s.paragraphs),
           "tables": tables, "figures": figures, "params": to_jsonable(s.params),
           "random_state": s.params.get("random_state"), "notes": list(s.notes)}
    if s.error is not None:
        doc["error"] = s.error
    return doc


# ------------------------------------------------------------------------ sections
def _shuffle_figure(table):
    """The shuffle section's figure: the admission-rate gap before/after each attack (left) and
    the attribution of Research by exact Shapley values and linear SHAP (right)."""
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = _figure(11, 4.6, ncols=2)
    with plt.rc_context(_RC):
        x = np.arange(len(table))
        w = 0.38
        ax1.bar(x - w / 2, 100 * table["DP difference before"], w, label="honest score f",
                color="#9aa5b1", edgecolor="black")
        ax1.bar(x + w / 2, 100 * table["DP difference after"], w, label="attacked f'",
                color="#c0392b", edgecolor="black", hatch="//")
        ax1.set_xticks(x, table["attack"])
        ax1.set_ylabel("admission-rate gap (pp)")
        ax1.set_title("Demographic-parity gap, top 30% admitted")
        ax1.legend(loc="upper center", ncols=2)
        ax1.set_ylim(0, 1.3 * max(1e-9, 100 * table[["DP difference before",
                                                     "DP difference after"]].to_numpy().max()))
        ax2.bar(x - w / 2, table["exact Shapley |Research|"], w, label="exact Shapley",
                color="#2e86c1", edgecolor="black")
        ax2.bar(x + w / 2, table["linear SHAP |Research|"], w, label="linear SHAP",
                color="#f5b041", edgecolor="black", hatch="..")
        ax2.set_xticks(x, table["attack"])
        ax2.set_ylabel("mean |attribution| of Research")
        ax2.set_title("What the explanations see")
        for xi, v in zip(x - w / 2, table["exact Shapley |Research|"]):
            ax2.annotate(f"{v:.0f}" if abs(v) < 5e-4 else f"{v:.3f}", (xi, v), ha="center",
                         va="bottom", xytext=(0, 2), textcoords="offset points")
        ax2.set_ylim(0, 1.3 * max(1e-9, table[["exact Shapley |Research|",
                                               "linear SHAP |Research|"]].to_numpy().max()))
        ax2.legend(loc="upper center", ncols=2)
    plt.close(fig)
    return fig


def _shuffle_section(budget, random_state):
    from .datasets import load_admission
    from .shuffle import ShuffledModel, attributions, batch_consistency, exact_shapley_values, fairness_before_after

    adm = load_admission(version="1")  # bundled (400 applicants)
    cols = ["GRE Score", "TOEFL Score", "University Rating", "Research"]
    X = adm.X[:, [adm.index_of(c) for c in cols]].copy()
    lo, hi = X[:, :3].min(0), X[:, :3].max(0)
    X[:, :3] = (X[:, :3] - lo) / (hi - lo)
    research = X[:, 3] == 1

    def honest(A):  # equal-weighted sum of the normalised scores; ignores Research
        return np.asarray(A, dtype=float)[:, :3] @ np.full(3, 1 / 3)

    threshold = float(np.quantile(honest(X), 0.7))  # admit the top 30%
    attacks = {"Dominance": dict(attack="dominance"),
               "Mixing p=0.8": dict(attack="mixing", p=0.8, mixing_rule="alg3"),  # Algorithm 3
               "Swapping q=0.5": dict(attack="swapping", quantile=0.5)}
    explainers = ("linear", "shap") if budget["shap_explain"] else ("linear",)
    n_explain = budget["shap_explain"] or 50
    rng = np.random.default_rng(random_state)
    Xe = X[rng.choice(len(X), n_explain, replace=False)]
    bg = X[rng.choice(len(X), 50, replace=False)]
    rows = []
    honest_flag = batch_consistency(honest, X, random_state=random_state).suspicious
    s0 = honest(X)
    admitted0 = s0 >= threshold
    for name, kw in attacks.items():
        model = ShuffledModel(honest, protected="Research", favoured=1, feature_names=cols,
                              random_state=random_state, **kw)
        fair = fairness_before_after(model, X, adm.y, threshold=threshold,
                                     protected=X[:, 3]).set_index("metric")
        s1 = np.asarray(model(X), dtype=float).ravel()
        admitted1 = s1 >= threshold
        att = attributions(model, Xe, explainers, background=bg, random_state=random_state)
        prot = att[att.protected].set_index("explainer")
        exact = np.mean([abs(exact_shapley_values(model, x, bg[:20])[3]) for x in Xe[:5]])
        row = {"attack": name,
               "scores changed": int(np.sum(s0 != s1)),
               "mean score gap before": float(s0[research].mean() - s0[~research].mean()),
               "mean score gap after": float(s1[research].mean() - s1[~research].mean()),
               "decisions changed": int(np.sum(admitted0 != admitted1)),
               "DP difference before": fair.loc["demographic_parity_difference", "before"],
               "DP difference after": fair.loc["demographic_parity_difference", "after"],
               "exact Shapley |Research|": exact,
               "linear SHAP |Research|": prot.loc["linear", "mean_abs"]}
        if "shap" in prot.index:
            row["SHAP |Research|"] = prot.loc["shap", "mean_abs"]
        row["detector flags it"] = bool(
            batch_consistency(model, X, random_state=random_state).suspicious)
        rows.append(row)
    table = pd.DataFrame(rows)

    fig = _shuffle_figure(table)

    caught = int(table["detector flags it"].sum())
    before = table["DP difference before"].iloc[0]
    raised = table[table["DP difference after"] > table["DP difference before"] + 1e-12]
    same = table[table["decisions changed"] == 0]
    parts = []
    if len(raised):
        parts.append(f"{' and '.join(raised['attack'])} raise the admission-rate gap between "
                     f"applicants with and without research from {100 * before:.1f} pp to "
                     f"{100 * raised['DP difference after'].max():.1f} pp")
    for _, r in same.iterrows():
        parts.append(f"{r['attack']} reorders {r['scores changed']} of {len(X)} scores "
                     f"(mean score gap {r['mean score gap before']:.3f} -> "
                     f"{r['mean score gap after']:.3f}) but admits the same applicants at "
                     f"this threshold, so its admission-rate gap is unchanged")
    headline = ("; ".join(parts) + f". The exact Shapley value of Research stays zero; the "
                f"detector caught {caught} of {len(table)} attacks"
                f"{' but also flagged the honest model' if honest_flag else ''}.")
    paragraphs = [
        "The admission score f ignores research experience. Each attack hands back the same "
        "scores re-ordered so that applicants with research rank higher: the exact Shapley "
        "value of Research stays zero, because f' shuffles whatever batch the explainer sends "
        "(the paper's theorem). Linear SHAP explains a linear model fitted to f' and sees a "
        "small part of the shift (Eq. 15).",
        "Mixing follows Algorithm 3 as printed: at each merge step a coin (p = 0.8) hands the "
        "best remaining score to the research group, and on a tail the higher original score "
        "wins, so research applicants only ever move up. On this table the applicants it "
        "moves up stay on the same side of the admission threshold (the research group "
        "already holds most of the top 30%), so it changes scores and the mean score gap but "
        "no admission decision: the demographic-parity gap, which counts decisions, is the "
        "same before and after. Dominance and Swapping move research applicants across the "
        "threshold.",
        "Querying the same rows in different batches (the batch-consistency detector) "
        "exposes each of these attacks, which fire on every call; an attack that fires on "
        "only some calls is caught only with some probability (tutorial 01 measures it).",
    ]
    data = _data_info(adm, "Graduate Admission v1 (bundled, 400 applicants)")
    findings = []
    for _, r in table.iterrows():
        findings.append(_finding(
            "shuffle", "demographic_parity_difference", "Admission-rate gap after the attack",
            r["DP difference after"], group=r["attack"], unit="difference",
            sentence=(f"{100 * r['DP difference before']:.1f} pp before the attack; "
                      f"{r['decisions changed']} of {len(X)} admission decisions changed.")))
    findings.append(_finding(
        "shuffle", "exact_shapley_research", "Largest exact Shapley value of Research",
        float(table["exact Shapley |Research|"].max()),
        sentence="Zero up to rounding: the explanation cannot see the attack."))
    findings.append(_finding(
        "shuffle", "detected", "Attacks flagged by the batch-consistency detector", caught,
        unit="count", sentence=f"{caught} of {len(table)} attacks flagged; honest model "
                               f"{'flagged (false alarm)' if honest_flag else 'not flagged'}."))
    conclusion = (f"shuffled scores raised the admission-rate gap to "
                  f"{100 * table['DP difference after'].max():.1f} pp while the exact Shapley "
                  f"value of Research stayed zero, and the batch-consistency detector caught "
                  f"{caught} of {len(table)} attacks")
    return dict(
        table=table, figures=[fig], headline=headline, paragraphs=paragraphs,
        conclusion=conclusion,
        dataset="Graduate Admission v1 (bundled, 400 applicants)",
        columns={"attack": ("Attack", None), "scores changed": ("Scores changed", "count"),
                 "mean score gap before": None,  # the same for every attack: in the note
                 "mean score gap after": ("Mean score gap, after", None),
                 "decisions changed": ("Admissions changed", "count"),
                 "DP difference before": None,
                 "DP difference after": ("Admission-rate gap, after", "difference"),
                 "exact Shapley |Research|": ("Exact Shapley |Research|", None),
                 "linear SHAP |Research|": ("Linear SHAP |Research|", None),
                 "SHAP |Research|": ("KernelSHAP |Research|", None),
                 "detector flags it": ("Detector flags it", None)},
        table_title="Three attacks on the honest admission score",
        table_note=(f"Before any attack the admission-rate gap is {100 * before:.1f} pp and "
                    f"the mean score gap {table['mean score gap before'].iloc[0]:.3f}. "
                    "Admission-rate gap = admission rate of applicants with research minus "
                    "without, in percentage points; mean score gap = difference of the groups' "
                    "mean scores (0-1 scale). Shapley values: mean over 5 applicants, 20 "
                    "background rows."),
        figure_titles=["Left: the admission-rate gap before and after each attack. Right: the "
                       "attribution of Research by exact Shapley values and linear SHAP."],
        params={"protected": ["Research"], "favoured value": 1,
                "threshold (admit top 30%)": threshold, "attacks": list(attacks),
                "mixing p": 0.8, "mixing rule": "alg3", "swapping quantile": 0.5,
                "explainers": list(explainers), "rows explained": n_explain,
                "background rows": 50, "random_state": int(random_state)},
        datasets=[data],
        models=[{"class": "honest linear score (admission)", "module": "fairlens.tour",
                 "params": {"weights": "1/3 each of GRE, TOEFL, University Rating"},
                 "source": None, "sha256": None, "input": "encoded array"}],
        findings=findings,
    )


def _maft_section(budget, random_state):
    import matplotlib.pyplot as plt

    from .datasets import load_adult
    from .maft import AEQUITAS, MAFT
    from .models import train_mlp

    census = load_adult(encoding="benchmark")
    model = train_mlp(census, random_state=random_state)
    rows, results = [], {}
    for name, cls in (("MAFT", MAFT), ("AEQUITAS", AEQUITAS)):
        res = cls(model, census, protected=["sex"], n_seeds=budget["maft_seeds"],
                  n_local=budget["maft_local"], random_state=random_state).run()
        results[name] = res
        rows.append({"method": name,
                     "discriminatory instances": res.n_instances,
                     "global": res.n_global, "local": res.n_local,
                     "model queries (rows)": res.queries,
                     "instances / s": res.instances_per_second,
                     "seconds": res.elapsed})
    table = pd.DataFrame(rows)
    fig, (ax1, ax2) = _figure(11, 4.6, ncols=2)
    with plt.rc_context(_RC):
        for (name, res), style in zip(results.items(), ("-", "--")):
            tl = np.asarray(res.timeline)
            if tl.size:
                ax1.step(tl[:, 0], tl[:, 1], style, where="post", label=name, linewidth=2)
        ax1.set_xlabel("seconds")
        ax1.set_ylabel("discriminatory instances found")
        ax1.set_title("Found over time")
        ax1.legend(loc="upper left")
        x = np.arange(len(table))
        ax2.bar(x, table["discriminatory instances"], 0.55, color=["#2e86c1", "#f5b041"],
                edgecolor="black")
        for xi, v in zip(x, table["discriminatory instances"]):
            ax2.annotate(f"{int(v):,}", (xi, v), ha="center", va="bottom",
                         xytext=(0, 3), textcoords="offset points")
        ax2.set_xticks(x, table["method"])
        ax2.set_ylabel("discriminatory instances")
        ax2.set_title(f"Same budget: {budget['maft_seeds']} seeds x {budget['maft_local']} "
                      "local steps")
        ax2.margins(y=0.15)
    plt.close(fig)
    m, a = results["MAFT"], results["AEQUITAS"]
    headline = (f"On the census MLP (test accuracy {model.test_score_:.3f}), MAFT found "
                f"{m.n_instances:,} people whose predicted income class flips when only their "
                f"sex is changed; AEQUITAS found {a.n_instances:,} with the same budget.")
    paragraphs = [
        "Each discriminatory instance is a person whose predicted income class flips when "
        "only their sex is changed. MAFT estimates gradients from two model calls per feature "
        "(zero-order), so it needs no access to the network's weights; AEQUITAS searches "
        "randomly around the discriminatory inputs it finds.",
        "These are counts of distinct inputs found within the budget, not a rate over the "
        "population: a larger budget finds more.",
    ]
    findings = [_finding("maft", "discriminatory_instances", "Discriminatory instances found",
                         r["discriminatory instances"], group=r["method"], unit="count",
                         sentence=f"{int(r['model queries (rows)']):,} model queries "
                                  f"(rows) in {r['seconds']:.1f} s.")
                for _, r in table.iterrows()]
    return dict(
        table=table, figures=[fig], headline=headline, paragraphs=paragraphs,
        conclusion=(f"MAFT found {m.n_instances:,} inputs of the census MLP whose decision "
                    f"flips with sex alone (AEQUITAS {a.n_instances:,} on the same budget)"),
        dataset="UCI Adult, benchmark encoding (bundled)",
        columns={"method": ("Method", None),
                 "discriminatory instances": ("Discriminatory instances", "count"),
                 "global": ("Found in the global phase", "count"),
                 "local": ("Found in the local phase", "count"),
                 "model queries (rows)": ("Model queries (rows)", "count"),
                 "instances / s": ("Instances per second", None),
                 "seconds": ("Time", "seconds")},
        table_title="MAFT against AEQUITAS, protected attribute: sex",
        figure_titles=["Left: distinct discriminatory instances found over time. Right: the "
                       "totals at the same budget."],
        params={"protected": ["sex"], "seeds": budget["maft_seeds"],
                "local steps per seed": budget["maft_local"], "random_state": int(random_state)},
        datasets=[_data_info(census, "UCI Adult, benchmark encoding")],
        models=[_model_info(model, "census MLP, benchmark encoding", "encoded array")],
        findings=findings,
    )


def _wrap(text, width=38):
    import textwrap

    return "\n".join(textwrap.wrap(str(text), width)) or str(text)


def _testsgd_section(budget, random_state):
    import matplotlib.pyplot as plt

    from .datasets import load_adult
    from .models import train_mlp
    from .testsgd import TestSGD

    census = load_adult()
    model = train_mlp(census, random_state=random_state)
    analysis = TestSGD(model, census, protected=["sex", "race", "age"], theta=0.05,
                       sample_thr=budget["testsgd_samples"], max_samples=budget["testsgd_max"],
                       random_state=random_state)
    report = analysis.run()
    top = report.top(5)
    keep = [c for c in ("rule_set", "support", "rate_in", "rate_out", "fresh_score",
                        "fresh_margin", "score", "n_samples") if c in top.columns]
    table = top[keep].reset_index(drop=True)
    table["rule_set"] = table["rule_set"].astype(str)
    if "rate_in" in table and "rate_out" in table:
        table.insert(1, "direction", np.where(table["rate_in"] < table["rate_out"],
                                              "disfavoured", "favoured"))
    fig, ax = _figure(11, 1.6 + 0.85 * len(table))
    with plt.rc_context(_RC):
        y = np.arange(len(table))[::-1]
        ax.barh(y, 100 * table["fresh_score"], 0.5,
                xerr=100 * table["fresh_margin"], capsize=5, color="#2e86c1",
                edgecolor="black", label="re-estimated on fresh samples, with its margin")
        ax.plot(100 * table["score"], y, "D", color="#c0392b", markersize=9,
                label="estimate when selected (biased upward)")
        ax.set_yticks(y, [_wrap(r, 44) for r in table["rule_set"]])
        ax.set_xlabel("gap in favourable-outcome rate, inside vs outside the group (pp)")
        ax.set_title("The five groups with the largest fairness score")
        fig.legend(loc="outside lower center", ncols=2)
        ax.margins(x=0.05)
    plt.close(fig)
    best = table.iloc[0]
    direction = best.get("direction", "")
    headline = (f"{report.n_groups:,} distinct frequent groups over sex, race and age were scored; the "
                f"largest gap is for {best['rule_set']} ({direction}): "
                f"{100 * best['fresh_score']:.1f} pp ± {100 * best['fresh_margin']:.1f} pp "
                f"re-estimated on fresh samples ({100 * best['score']:.1f} pp when selected).")
    paragraphs = [
        "A rule set such as 'sex=Male, race=White, 40<=age<60' names a group; its score is the "
        "gap between the favourable-outcome (income >50K) rates inside and outside the group, "
        "estimated by sampling until the error margin is small. 'Favoured' means the group's "
        "rate is higher than the rest's, 'disfavoured' lower.",
        "The top of a ranking of thousands of noisy estimates is biased upward, so the top "
        "groups are re-estimated on fresh samples; the table and the ranking use that fresh "
        "estimate, and show the selection estimate only for comparison.",
    ]
    findings = [_finding("testsgd", "fresh_score", "Group fairness score (fresh estimate)",
                         r["fresh_score"], group=r["rule_set"],
                         ci=(r["fresh_score"] - r["fresh_margin"],
                             r["fresh_score"] + r["fresh_margin"]), unit="difference",
                         sentence=f"{r.get('direction', '')}; support "
                                  f"{100 * r['support']:.1f}% of the rows.")
                for _, r in table.head(3).iterrows()]
    return dict(
        table=table, figures=[fig], headline=headline, paragraphs=paragraphs,
        conclusion=(f"TestSGD's largest subgroup gap is {100 * best['fresh_score']:.1f} pp "
                    f"± {100 * best['fresh_margin']:.1f} pp ({best['rule_set']}, "
                    f"{direction})"),
        dataset="UCI Adult, readable values (bundled)",
        columns={"rule_set": ("Group (rule set)", None), "direction": ("Direction", None),
                 "support": ("Share of rows in the group", "rate"),
                 "rate_in": ("Favourable rate inside", "rate"),
                 "rate_out": ("Favourable rate outside", "rate"),
                 "fresh_score": ("Gap, fresh estimate", "difference"),
                 "fresh_margin": ("Error margin of the fresh estimate", "difference"),
                 "score": ("Gap when selected (biased up)", "difference"),
                 "n_samples": ("Samples used", "count")},
        table_title="The five groups with the largest gap, ranked by the fresh estimate",
        table_note=(f"Error margins hold at confidence {1 - 0.05:.2f} (theta 0.05)."),
        figure_titles=["Gap per group: the fresh estimate with its error margin (bars) and "
                       "the estimate at selection (diamonds)."],
        params={"protected": ["sex", "race", "age"], "theta": 0.05,
                "samples per estimate": budget["testsgd_samples"],
                "max samples": budget["testsgd_max"], "random_state": int(random_state)},
        datasets=[_data_info(census, "UCI Adult, readable values")],
        models=[_model_info(model, "census MLP, readable values", "readable frame")],
        findings=findings,
    )


def _certify_section(budget, random_state):
    import matplotlib.pyplot as plt
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import train_test_split

    from .certify import FeaturePartitionedForest, certify
    from .datasets import load_breast_cancer

    bc = load_breast_cancer()
    Xtr, Xte, ytr, yte = train_test_split(bc.X, bc.y, test_size=0.2, random_state=0,
                                          stratify=bc.y)
    n = budget["trees"]
    rows = []
    forests = {"random forest": RandomForestClassifier(n_estimators=n, max_depth=6,
                                                       random_state=random_state)}
    for b in budget["budgets"]:
        forests[f"FPF (b={b})"] = FeaturePartitionedForest(
            budget=b, rounds=max(1, round(n / (2 * b + 1))), random_state=random_state)
    models = []
    for name, forest in forests.items():
        forest.fit(Xtr, ytr)
        models.append(_model_info(forest, name, "encoded array"))
        budgets = budget["budgets"] if name == "random forest" else (int(name[-2]),)
        for b in budgets:
            res = certify(forest, Xte, yte, budget=b, method="cascade")
            rows.append({"forest": name, "b": b, "clean": res.accuracy_clean,
                         "FLB": res.accuracy_flb, "ELB": res.accuracy_elb,
                         "exact": res.accuracy_exact, "sent to brute force": res.n_brute,
                         "seconds": res.elapsed})
    table = pd.DataFrame(rows)
    fig, axes = _figure(11, 5.2, ncols=2)
    bars = (("clean", "#9aa5b1", ""), ("FLB", "#f5b041", "//"), ("ELB", "#e67e22", "\\\\"),
            ("exact", "#2e86c1", ""))
    with plt.rc_context(_RC):
        for ax, (label, part) in zip(axes, (
                ("random forest", table[table.forest == "random forest"]),
                ("Feature Partitioned Forests (one per b)",
                 table[table.forest != "random forest"]))):
            x = np.arange(len(part))
            w = 0.2
            for k, (col, color, hatch) in enumerate(bars):
                vals = 100 * part[col].to_numpy()
                ax.bar(x + (k - 1.5) * w, vals, w, label=col, color=color, hatch=hatch,
                       edgecolor="black")
                for xi, v in zip(x, vals):  # a bar of height 0 is still visible as a label
                    ax.annotate(f"{v:.0f}", (xi + (k - 1.5) * w, v), ha="center",
                                va="bottom", fontsize=11, xytext=(0, 2),
                                textcoords="offset points")
            ax.set_xticks(x, [f"b = {b}" for b in part.b])
            ax.set_ylim(0, 112)
            ax.set_ylabel("accuracy under attack (%)")
            ax.set_title(label)
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=4)
    plt.close(fig)
    rf = table[table.forest == "random forest"]
    worst = rf.iloc[-1]
    b = int(worst["b"])
    n_test = len(yte)
    if max(worst["FLB"], worst["ELB"]) == 0:
        bound_text = (f"the fast bounds FLB and ELB alone prove no test row robust at b = {b} "
                      f"(0% certified: the bounds are loose on this forest), so the cascade "
                      f"settled the rows by exact search")
    else:
        bound_text = (f"the fast bounds alone certify {100 * worst['FLB']:.1f}% (FLB) and "
                      f"{100 * worst['ELB']:.1f}% (ELB) without search; exact search settles "
                      f"the rest")
    headline = (f"Random forest: {100 * worst['clean']:.1f}% accurate on clean data, "
                f"{100 * worst['exact']:.1f}% when an attacker may change any {b} features "
                f"(exact); {bound_text}.")
    paragraphs = [
        "An attacker may change any b features of a test instance. The certified accuracy is "
        "the share of test rows that are classified correctly and cannot be flipped by any "
        "such change. FLB and ELB are fast lower bounds on it: a row they certify is "
        "certainly robust, a row they do not certify is undecided (not necessarily "
        "vulnerable). The cascade runs exact brute force only on the undecided rows, so the "
        "exact column is the true accuracy under attack.",
        "A Feature Partitioned Forest trains each tree on its own feature group, so b changed "
        "features corrupt at most r·b trees: its bounds are much tighter and its exact "
        "accuracy under attack is higher.",
    ]
    findings = [_finding("certify", "accuracy_exact", "Accuracy under attack (exact)",
                         r["exact"], group=f"{r['forest']}, b = {int(r['b'])}", unit="rate",
                         sentence=f"{100 * r['clean']:.1f}% clean; fast bounds certify "
                                  f"{100 * r['FLB']:.1f}% (FLB) / {100 * r['ELB']:.1f}% (ELB).")
                for _, r in table.iterrows()]
    return dict(
        table=table, figures=[fig], headline=headline, paragraphs=paragraphs,
        conclusion=(f"a random forest keeps {100 * worst['exact']:.1f}% accuracy against "
                    f"attackers changing {b} features ({100 * worst['clean']:.1f}% clean), a "
                    f"Feature Partitioned Forest built for b = {b} keeps "
                    f"{100 * table[table.forest != 'random forest']['exact'].iloc[-1]:.1f}%"),
        dataset=f"Wisconsin breast cancer (scikit-learn), {n_test} test rows",
        columns={"forest": ("Forest", None), "b": ("Features changed (b)", "count"),
                 "clean": ("Accuracy, clean", "rate"),
                 "FLB": ("Certified by FLB (fast bound)", "rate"),
                 "ELB": ("Certified by ELB (fast bound)", "rate"),
                 "exact": ("Accuracy under attack (exact)", "rate"),
                 "sent to brute force": ("Rows settled by exact search", "count"),
                 "seconds": ("Time", "seconds")},
        table_title="Accuracy under attackers that change b features",
        table_note=("FLB <= ELB <= exact <= clean on every row. A bound of 0% means the fast "
                    "bound decided no row; the exact column does not depend on the bounds. "
                    "The first certification also compiles the kernels (its time includes "
                    "that, once per machine)."),
        figure_titles=["Clean accuracy, the two fast lower bounds (FLB, ELB) and the exact "
                       "accuracy under attack, side by side for each budget b."],
        params={"trees": n, "max_depth": 6, "budgets b": list(budget["budgets"]),
                "method": "cascade", "test share": 0.2, "split random_state": 0,
                "random_state": int(random_state)},
        datasets=[_data_info(bc, "Wisconsin breast cancer (scikit-learn)")],
        models=models,
        findings=findings,
    )


_SECTIONS = [
    ("shuffle", "1. Shuffling attacks hide a protected feature from SHAP", _shuffle_section),
    ("maft", "2. MAFT: black-box individual fairness testing", _maft_section),
    ("testsgd", "3. TestSGD: subtle group discrimination", _testsgd_section),
    ("certify", "4. Certified accuracy of tree ensembles under b-feature attacks",
     _certify_section),
]


def run_tour(quick=False, out=None, random_state=0, progress=True, only=None,
             json_out=None) -> TourReport:
    """Run the tour; write the report to ``out`` (and ``json_out``) when given.

    Parameters
    ----------
    quick : bool
        About a minute in all (smaller budgets, no SHAP) instead of a few minutes.
    out : path-like, optional
        Where to write the report: ``.html``/``.htm`` (self-contained HTML) or ``.json`` (the
        report document).  Checked before any analysis runs (extension, folder, writability).
    random_state : int
        Seed of every random step, in ``[0, 2**32 - 1]``; checked before any analysis runs.
    progress : bool
        Show a progress bar over the four analyses.
    only : list of str, optional
        Run only these sections (``"shuffle"``, ``"maft"``, ``"testsgd"``, ``"certify"``).
    json_out : path-like, optional
        Also write the JSON report document here (must end in ``.json``).

    Returns
    -------
    TourReport
        The sections (with their tables, figures and errors) and the report writers.

    Raises
    ------
    TypeError, ValueError
        For a bad ``out``, ``json_out``, ``random_state`` or ``only``, before any analysis.

    Notes
    -----
    A section that fails is reported (with its traceback) in the summary and the report, and
    the others still run; ``report.ok`` tells whether all succeeded.

    Examples
    --------
    >>> from fairlens.tour import run_tour
    >>> run_tour(random_state=-1)
    Traceback (most recent call last):
    ...
    ValueError: random_state must be an int in [0, 2**32 - 1]; got -1.
    """
    from tqdm.auto import tqdm

    from ._base import resolve_random_state
    from .audit._schema import utc_now

    if isinstance(random_state, (bool, np.bool_)) or not isinstance(
            random_state, (int, np.integer)):
        raise TypeError(f"random_state must be an int in [0, 2**32 - 1]; got {random_state!r}.")
    random_state = resolve_random_state(random_state)
    if out is not None:
        out = check_report_path(out)
    if json_out is not None:
        json_out = check_report_path(json_out, name="json_out", suffixes={".json"})
    keys = [k for k, _, _ in _SECTIONS]
    if only is not None:
        unknown = sorted(set(only) - set(keys))
        if unknown:
            raise ValueError(f"unknown tour sections {unknown}; choose from {keys}")
    mode = "quick" if quick else "full"
    budget = BUDGETS[mode]
    sections = []
    created = utc_now()
    start = time.perf_counter()
    todo = [s for s in _SECTIONS if only is None or s[0] in only]
    bar = tqdm(todo, desc="fairlens tour", disable=not progress, unit="analysis")
    for key, title, fn in bar:
        bar.set_postfix_str(key)
        t0 = time.perf_counter()
        section = TourSection(key=key, title=title, dataset="")
        try:
            parts = fn(budget, random_state)
            section.dataset = parts.pop("dataset")
            for name, value in parts.items():
                setattr(section, name, value)
            section.text = " ".join(section.paragraphs)
        except Exception:  # reported, not swallowed: the summary and the report show it
            section.error = traceback.format_exc()
        section.elapsed = time.perf_counter() - t0
        sections.append(section)
    report = TourReport(sections=sections, mode=mode, random_state=random_state,
                        elapsed=time.perf_counter() - start, created=created)
    if out is not None:
        report.save(out)
    if json_out is not None:
        report.to_json(json_out)
    return report
