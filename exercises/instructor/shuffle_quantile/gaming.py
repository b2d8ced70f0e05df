"""Attempts to game the shuffle_quantile grader: each must score at most a third."""
ATTEMPTS = {
    # hard-coded constants
    "constants": """
def research_rank(model, data):
    return 4
best_q = 1.0
gain, gain_full = 0.01, 0.02
""",
    # only what the public examples show: the ranks printed for the GRID of the exercise's own
    # model (memorised by quantile), the right best_q copied from a classmate, made-up gains
    "public_examples": """
def research_rank(model, data):
    q = getattr(model, "quantile", None)
    return 4 if q is None or q <= 0.2 else 3
best_q = 0.2
gain, gain_full = 0.01, 0.02
""",
    # a constant rank, and everything else computed consistently from it (what the old hidden
    # tests accepted: they checked the student's function against itself)
    "self_checked": """
def research_rank(model, data):
    return 4
best_q = max(q for q in GRID if research_rank(attacked(q), X) == 4)
fav = X[:, 3] == 1
gain = float(attacked(best_q)(X)[fav].mean() - f(X)[fav].mean())
gain_full = float(attacked(1.0)(X)[fav].mean() - f(X)[fav].mean())
""",
}
