"""Attempts to game the certify_flb grader: each must score at most a third."""
ATTEMPTS = {
    "constants": """
def votes_and_delta(forest, x, label):
    return np.ones(9, int), 5
def covers(forest, x, label):
    return np.zeros(6, int), np.zeros(6, int)
def flb(forest, x, label):
    return 5, False
def attack_exists(forest, x, label):
    return False
""",
    # the answers of the public example (test row 0) whatever the row
    "public_examples": """
from fairlens.certify import instance_covers as _ic
_cov = _ic(forest, x, label, budget=1, vote="hard", missing=False)
def votes_and_delta(forest_, x_, label_):
    return _cov.votes.copy(), int(_cov.delta[1 - label])
def covers(forest_, x_, label_):
    return _cov.plus_sizes[1 - label].copy(), _cov.minus_sizes[1 - label].copy()
def flb(forest_, x_, label_):
    return int(_cov.flb[1 - label][0]), bool(_cov.flb[1 - label][0] < _cov.delta[1 - label])
def attack_exists(forest_, x_, label_):
    return False
""",
    # honest votes, then every answer checked against the student's own (wrong) covers: FLB from
    # them, and "an attack exists" exactly when that FLB does not certify
    "self_checked": """
def votes_and_delta(forest, x, label):
    votes = np.array([int(t.predict(np.asarray(x)[None])[0]) for t in forest.estimators_])
    C = int((votes == label).sum())
    return votes, (C - (len(votes) - C) + 1) // 2
def covers(forest, x, label):
    return np.zeros(6, int), np.zeros(6, int)
def flb(forest, x, label):
    plus, minus = covers(forest, x, label)
    s = int(np.max(np.maximum(plus, minus)))
    return s, bool(s < votes_and_delta(forest, x, label)[1])
def attack_exists(forest, x, label):
    return not flb(forest, x, label)[1]
""",
}
