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

from ._report import BUDGETS, TourReport, TourSection, check_report_path, run_tour

__all__ = ["TourSection", "TourReport", "run_tour", "BUDGETS", "check_report_path"]
