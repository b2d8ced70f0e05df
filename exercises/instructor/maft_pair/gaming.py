"""Attempts to game the maft_pair grader: each must score at most a third."""
ATTEMPTS = {
    "constants": """
def counterpart(x):
    return np.array(x, dtype=float)
def by_hand(model, rows):
    return np.zeros(len(rows), dtype=bool)
n_found, share_model2 = 100, 1.0
""",
    # fits the public examples only: the flip of X[0] whatever the row, the mask of the
    # exercise's own model (computed with its predict, as the question forbids) whatever the model
    "public_examples": """
_c0 = X[0].astype(float).copy(); _c0[SEX] = 1 - _c0[SEX]
def counterpart(x):
    return _c0.copy()
_flip = X.astype(float).copy(); _flip[:, SEX] = 1 - _flip[:, SEX]
_mask = model.predict(X) != model.predict(_flip)
def by_hand(model, rows):
    return _mask[:len(rows)].copy()
n_found, share_model2 = len(result.instances), 1.0
""",
    # a function checked against itself: by_hand says "nobody", and the share computed with it
    "self_checked": """
def counterpart(x):
    return np.array(x, dtype=float)
def by_hand(model, rows):
    return np.zeros(len(rows), dtype=bool)
found = np.asarray(result.instances, dtype=float)
n_found = len(found)
share_model2 = float(by_hand(model2, found).mean())
""",
}
