"""Property-based boundary tests for fairlens.shuffle (issue 11): awkward and bad inputs
give the correct result (cross-checked against independent computations) or a
ValueError/TypeError naming the argument."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairlens.shuffle import ShuffledModel, batch_consistency, shuffle_scores

SETTINGS = settings(max_examples=20, deadline=None)
NAMES = ["a", "b", "c", "g"]


def f(A):
    A = np.asarray(A, dtype=float)
    return A[:, :3].mean(axis=1)          # in [0, 1] for A in [0, 1]; ignores g


def _X(n=30, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.random((n, 3)), rng.integers(0, 2, n)]).astype(float)
    X[:2, 3] = [0, 1]
    return X


ATTACK = st.sampled_from(["dominance", "mixing", "swapping", "none", "dom+mix", "mix+swap",
                          "swap+none", "DOM", " mix "])


@SETTINGS
@given(scores=st.lists(st.floats(-1e6, 1e6), min_size=0, max_size=40), data=st.data(),
       attack=ATTACK, p=st.floats(0, 1), quantile=st.floats(0, 1),
       region=st.one_of(st.floats(0.01, 1), st.tuples(st.floats(0, 0.45), st.floats(0.55, 1))),
       max_count=st.one_of(st.none(), st.integers(0, 5)), hib=st.booleans(),
       rule=st.sampled_from(["coin", "alg3"]), seed=st.integers(0, 2**32 - 1))
def test_shuffle_scores_returns_a_permutation(scores, data, attack, p, quantile, region, max_count,
                                              hib, rule, seed):
    mask = data.draw(st.lists(st.booleans(), min_size=len(scores), max_size=len(scores)))
    out = shuffle_scores(scores, mask, attack, p=p, quantile=quantile, region=region,
                         max_count=max_count, higher_is_better=hib, mixing_rule=rule,
                         random_state=seed)
    np.testing.assert_array_equal(np.sort(out), np.sort(np.asarray(scores, dtype=float)))
    if not any(mask) or all(mask) or attack.strip().lower() == "none":
        np.testing.assert_array_equal(out, np.asarray(scores, dtype=float))


BAD = {
    "p": [-0.1, 1.5, np.nan, "high", None, True],
    "quantile": [-1, 2.0, np.inf, "q"],
    "region": [0.0, -0.5, 1.5, (0.5, 0.2), (0.1,), "top", np.nan],
    "split": [-0.1, 1.1, "half"],
    "frequency": [1.1, -0.2, np.nan, "often"],
    "max_count": [-1, 1.5, "3", True],
    "mixing_rule": ["fair", None, 3],
    "swapping_rule": ["twice", None, 3, "ALG4"],
    "attack": ["scaffold", "dom+mix+swap", "", 3, None],
    "random_state": ["abc", -1, 2**40, 1.5],
    "higher_is_better": ["yes", 1, None],
}


@SETTINGS
@given(data=st.data())
def test_bad_parameters_name_the_argument(data):
    name = data.draw(st.sampled_from(sorted(BAD)))
    value = data.draw(st.sampled_from(BAD[name]))
    with pytest.raises((ValueError, TypeError)) as info:
        ShuffledModel(f, protected=3, favoured=1, **{name: value})
    assert name in str(info.value) or (name == "region" and "lo < hi" in str(info.value))
    if name not in ("random_state",):
        with pytest.raises((ValueError, TypeError)) as info:
            shuffle_scores([0.1, 0.5, 0.9], [True, False, True],
                           **({"attack": value} if name == "attack" else {name: value}))
        assert name in str(info.value) or (name == "region" and "lo < hi" in str(info.value))


@SETTINGS
@given(perm=st.permutations(NAMES), attack=ATTACK, seed=st.integers(0, 100))
def test_dataframe_columns_are_aligned_by_name(perm, attack, seed):
    X = _X()
    df = pd.DataFrame(X, columns=NAMES)[list(perm)]
    a = ShuffledModel(f, protected="g", favoured=1, attack=attack, feature_names=NAMES, random_state=seed)(df)
    b = ShuffledModel(f, protected=3, favoured=1, attack=attack, random_state=seed)(X)
    np.testing.assert_array_equal(a, b)


@SETTINGS
@given(kind=st.sampled_from(["missing", "extra", "nan", "inf", "strings", "1d", "empty", "str"]))
def test_awkward_batches_are_refused_with_a_named_error(kind):
    X = _X()
    df = pd.DataFrame(X, columns=NAMES)
    m = ShuffledModel(f, protected="g", favoured=1, feature_names=NAMES)
    bad = {"missing": df.drop(columns="b"), "extra": df.assign(z=1.0),
           "nan": df.assign(a=np.where(df.a > 0.5, np.nan, df.a)),
           "inf": X * np.where(X > 0.9, np.inf, 1), "strings": df.assign(a="x"),
           "1d": X[:, 0], "empty": X[:0], "str": "X"}[kind]
    if kind == "empty":
        assert m(bad).shape == (0,)
        return
    with pytest.raises((ValueError, TypeError), match="X|column|features"):
        m(bad)
    with pytest.raises((ValueError, TypeError), match="X|column|features"):
        batch_consistency(m, bad)


@SETTINGS
@given(w=st.lists(st.floats(0, 1), min_size=3, max_size=3).filter(lambda v: sum(v) > 0),
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 50),
       n=st.integers(2, 40))
def test_row_wise_models_always_pass_and_nan_always_fails(w, dtype, seed, n):
    X = _X(n, seed)
    w = np.asarray(w) / sum(w)

    def honest(A):
        return (np.asarray(A, dtype=dtype)[:, :3] @ w.astype(dtype)).astype(dtype)

    res = batch_consistency(honest, X, random_state=seed, n_single=5)
    assert not res.suspicious, res.summary()
    assert res.output_dtype == np.dtype(dtype).name

    def broken(A):
        out = honest(A).astype(np.float64)
        out[0] = np.nan                       # the first row of every batch
        return out

    res = batch_consistency(broken, X, random_state=seed, n_single=5)
    assert res.suspicious and res.n_nonfinite > 0


@SETTINGS
@given(seed=st.integers(0, 30), attack=st.sampled_from(["dominance", "swapping", "dom+mix"]))
def test_attacks_are_flagged_when_they_move_a_score(seed, attack):
    X = _X(40, seed)
    m = ShuffledModel(f, protected=3, favoured=1, attack=attack, random_state=seed)
    moved = not np.array_equal(m(X), f(X))
    res = batch_consistency(ShuffledModel(f, protected=3, favoured=1, attack=attack, random_state=seed), X,
                            random_state=seed)
    if moved:
        assert res.suspicious
