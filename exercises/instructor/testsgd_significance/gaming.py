"""Attempts to game the testsgd_significance grader: each must score at most a third."""
ATTEMPTS = {
    "constants": """
def margin(rate_in, rate_out, n, z):
    return 0.05
def significant(r):
    return True
n_significant_fresh, selection_minus_fresh = 3, 0.0
""",
    # fits the public examples only: the report's own margin, answers read off this report
    "public_examples": """
def margin(rate_in, rate_out, n, z):
    return top.margin
_shown = {id(r): bool(r.score > r.margin) for r in report.results}
def significant(r):
    return _shown.get(id(r), True)
n_significant_fresh, selection_minus_fresh = 3, 0.01
""",
    # significance checked against a margin that is always 0, and the count made consistent with it
    "self_checked": """
def margin(rate_in, rate_out, n, z):
    return 0.0
def significant(r):
    return bool(r.score - margin(r.rate_in, r.rate_out, r.n_samples, Z_PER_RATE) > 0)
refreshed = [r for r in report.results if r.fresh is not None]
n_significant_fresh = sum(significant(r.fresh) for r in refreshed)
selection_minus_fresh = 0.0
""",
}
