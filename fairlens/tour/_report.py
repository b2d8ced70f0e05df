"""The tour's report: its sections, the summary, the report document and its writers, and :func:`run_tour`."""
from __future__ import annotations

import json
import numbers
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .. import _registry
from .._base import Interval, resolve_random_state, to_jsonable, validated
from ..report._output import REPORT_SUFFIXES, check_output_path, write_text_atomic
from ..report._render import render_html
from ..report._schema import SCHEMA_VERSION, environment_info, utc_now, validate_document
from ._common import _DPI, _RC, _png  # noqa: F401  (the sections' conventions)

BUDGETS = {
    "quick": dict(shap_explain=0, maft_seeds=20, maft_local=20, testsgd_samples=200,
                  testsgd_max=2000, trees=30, budgets=(1, 2)),
    "full": dict(shap_explain=20, maft_seeds=100, maft_local=100, testsgd_samples=1000,
                 testsgd_max=20000, trees=60, budgets=(1, 2, 3)),
}

#: figures: drawn at >= 1000 px wide (10 in at 100 dpi) with >= 12 px text

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
            :func:`fairlens.report._schema.validate_document`.

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
                           "time_limit": None, "checks": [s.key for s in self.sections],
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

        if path is not None:
            path = check_report_path(path, suffixes={".html", ".htm"})
        page = render_html(self.to_dict())
        if path is not None:

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



@validated({
    "path": "no_validation", "name": [str], "suffixes": "no_validation",
})
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

    return check_output_path(path, name, suffixes=set(suffixes or REPORT_SUFFIXES),
                             default_name="fairlens-tour.html")



def _section_doc(s: TourSection) -> dict:

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



@validated({
    "quick": ["boolean"], "out": "no_validation", "random_state": [Interval(numbers.Integral, 0, 2 ** 32 - 1)],
    "progress": ["boolean"], "only": "no_validation", "json_out": "no_validation",
})
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
        Run only these sections: names of the registered slices (:func:`fairlens._registry.slices`:
        ``"shuffle"``, ``"maft"``, ``"testsgd"``, ``"certify"``, and any slice registered since).
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
    ValueError: run_tour: random_state must be an int in [0, 2**32 - 1]; got -1 (int).
    """
    from tqdm.auto import tqdm


    if isinstance(random_state, (bool, np.bool_)) or not isinstance(
            random_state, (int, np.integer)):
        raise TypeError(f"random_state must be an int in [0, 2**32 - 1]; got {random_state!r}.")
    random_state = resolve_random_state(random_state)
    if out is not None:
        out = check_report_path(out)
    if json_out is not None:
        json_out = check_report_path(json_out, name="json_out", suffixes={".json"})

    specs = [sl for sl in _registry.slices() if sl.tour is not None]   # every registered slice with a tour section
    all_sections = [(sl.name, f"{i}. {sl.title}", sl.tour) for i, sl in enumerate(specs, 1)]
    keys = [k for k, _, _ in all_sections]
    if only is not None:
        unknown = sorted(set(only) - set(keys))
        if unknown:
            raise ValueError(f"unknown tour sections {unknown}; choose from {keys}")
    mode = "quick" if quick else "full"
    budget = BUDGETS[mode]
    sections = []
    created = utc_now()
    start = time.perf_counter()
    todo = [sec for sec in all_sections if only is None or sec[0] in only]
    bar = tqdm(todo, desc="fairlens tour", disable=not progress, unit="analysis")
    for key, title, ref in bar:
        bar.set_postfix_str(key)
        t0 = time.perf_counter()
        section = TourSection(key=key, title=title, dataset="")
        try:
            parts = _registry.resolve(ref)(budget, random_state)
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
