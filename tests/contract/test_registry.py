"""The slice registry (issue #34, item 1): a fifth method is one folder plus one registration.

A toy slice is written to a temporary module that registers itself; without editing any other file it
shows in the tour, the audit (with its share of the time budget and a gate on its own measure), the command
line, the Binder warm-up and the documentation's index of papers.
"""
import sys


def test_the_four_built_in_slices_are_found_without_importing_them():
    import subprocess

    code = ("import sys, fairlens; from fairlens._registry import slices, audit_checks; "
            "print([s.name for s in slices()], [c.id for _, c in audit_checks()], "
            "sorted(m for m in ('numba', 'pandas', 'sklearn', 'fairlens.maft') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ("['shuffle', 'maft', 'testsgd', 'certify'] ['individual', 'subgroup', 'explanations', "
                           "'robustness'] []")
