import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier, RandomForestRegressor
from sklearn.tree import DecisionTreeClassifier

from fairlens.certify import certify, flatten_forest, instance_covers


@pytest.fixture(scope="module")
def data():
    X, y = load_breast_cancer(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    return rf, X[:20], y[:20]


def test_regression_and_boosting_rejected(data):
    _, X, y = data
    reg = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    with pytest.raises(TypeError, match="regress"):
        certify(reg, X, y)
    gb = GradientBoostingClassifier(n_estimators=3).fit(X, y)
    with pytest.raises(TypeError, match="RandomForestClassifier"):
        flatten_forest(gb)  # the forest adapter; certify itself handles boosted models (issue #15)
    assert certify(gb, X, y).vote == "additive"


def test_multi_output_rejected(data):
    _, X, y = data
    Y = np.column_stack([y, 1 - y])
    with pytest.raises(ValueError, match="multi-output"):
        flatten_forest(RandomForestClassifier(n_estimators=2, random_state=0).fit(X, Y))
    with pytest.raises(ValueError, match="multi-output"):
        flatten_forest(DecisionTreeClassifier(random_state=0).fit(X, Y))


@pytest.mark.parametrize("budget,err,msg", [(0, ValueError, ">= 1"), (-2, ValueError, ">= 1"),
                                            (31, ValueError, "larger than the number of features"),
                                            (1.5, TypeError, "integer"), (True, TypeError, "integer")])
def test_bad_budget(data, budget, err, msg):
    rf, X, y = data
    with pytest.raises(err, match=msg):
        certify(rf, X, y, budget=budget)


def test_bad_X_and_y(data):
    rf, X, y = data
    with pytest.raises(ValueError, match="30 features"):
        certify(rf, X[:, :10], y)
    Xn = X.copy()
    Xn[0, 3] = np.nan
    # a row with NaN is certified since NaN is routed as predict routes it (#24 item 4; was refused):
    # refused only where the model's predict refuses NaN (test_nan_rows_refused_where_predict_refuses_nan)
    assert certify(rf, Xn, y, missing=False).status.shape == (len(y),)
    Xi = X.copy()
    Xi[1, 0] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        certify(rf, Xi, y)
    Xb = X.copy()
    Xb[2, 0] = 1e300
    with pytest.raises(ValueError, match="float32"):
        certify(rf, Xb, y)
    with pytest.raises(ValueError, match="rows"):
        certify(rf, X, y[:-1])
    with pytest.raises(ValueError, match="no rows"):
        certify(rf, X[:0], y[:0])
    with pytest.raises(ValueError, match="not one of the model's classes"):
        certify(rf, X, y + 5)
    with pytest.raises(ValueError, match="method"):
        certify(rf, X, y, method="exact")
    with pytest.raises(ValueError, match="2-D"):
        certify(rf, X[0], y[:1])
    with pytest.raises(ValueError, match="1-D"):
        instance_covers(rf, X[:2], y[0])


def test_unfitted_rejected(data):
    _, X, y = data
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        certify(RandomForestClassifier(), X, y)


# --- issue 11: every public parameter validated at the boundary ------------------------

from fairlens.certify import accuracy_under_attack  # noqa: E402


def test_chunk_size_validated_and_result_invariant(data):
    rf, X, y = data
    ref = certify(rf, X, y, budget=1)
    for bad in (-1, 0):  # reproducer: chunk_size=-1 returned 0.009 instead of 0.56
        with pytest.raises(ValueError, match="chunk_size"):
            certify(rf, X, y, chunk_size=bad)
    with pytest.raises(TypeError, match="chunk_size"):
        certify(rf, X, y, chunk_size=2.5)
    for cs in (1, 3, 1000):
        res = certify(rf, X, y, budget=1, chunk_size=cs)
        np.testing.assert_array_equal(res.status, ref.status)
        assert res.accuracy == ref.accuracy


def test_enums_flags_and_keywords(data):
    rf, X, y = data
    with pytest.raises(ValueError, match="method.*'cascade'"):
        certify(rf, X, y, method="exact")
    with pytest.raises(ValueError, match="vote.*'soft'"):
        certify(rf, X, y, vote="mean")
    with pytest.raises(TypeError, match="prune"):
        certify(rf, X, y, prune="yes")
    with pytest.raises(TypeError, match="progress"):
        certify(rf, X, y, progress="bar")
    with pytest.raises(TypeError):
        certify(rf, X, y, n_jobs=2.0)
    with pytest.raises(TypeError, match="n_jobs"):
        accuracy_under_attack(rf, X, y, budgets=(1,), n_jobs="2")
    with pytest.raises(TypeError, match="nope"):
        accuracy_under_attack(rf, X, y, budgets=(1,), nope=2)
    with pytest.raises(ValueError, match="budgets"):
        accuracy_under_attack(rf, X, y, budgets=(1, 99))
    with pytest.raises(ValueError, match="budgets"):
        accuracy_under_attack(rf, X, y, budgets=())
    with pytest.raises(TypeError, match="budgets"):
        accuracy_under_attack(rf, X, y, budgets="12")
    with pytest.raises(ValueError, match="tie_class"):
        certify(rf, X, y, tie_class=0)  # soft vote follows sklearn's tie rule


def test_labels_must_be_model_classes(data):
    rf, X, y = data
    with pytest.raises(ValueError, match="y"):
        certify(rf, X, 1)
    with pytest.raises(ValueError, match="0.5"):
        certify(rf, X, np.full(len(y), 0.5))
    with pytest.raises(ValueError, match="'a'"):
        certify(rf, X, np.array(["a"] * len(y)))
    with pytest.raises(ValueError, match="rows"):
        certify(rf, X, y[:-1])


def test_single_row_and_dataframe_row(data):
    rf, X, y = data
    full = certify(rf, X, y, budget=1)
    one = certify(rf, X[3:4], y[3:4], budget=1)
    assert one.status[0] == full.status[3]
    assert one.n_instances == 1


def test_keyboard_interrupt_between_chunks_leaves_everything_reusable(data):
    import _thread

    rf, X, y = data
    ref = certify(rf, X, y, budget=2, method="brute")
    calls = []

    def interrupt(stage, done, total):
        calls.append(stage)
        if stage == "brute":
            _thread.interrupt_main()  # as Ctrl-C would

    # a process started in the background by a non-interactive shell ignores SIGINT, and then
    # interrupt_main() does nothing: install Python's own handler, as an interactive session has
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            certify(rf, X, y, budget=2, method="brute", chunk_size=2, progress=interrupt)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert "vote" in calls and "brute" in calls

    def stop(stage, done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        certify(rf, X, y, budget=2, method="cascade", chunk_size=2, progress=stop)
    again = certify(rf, X, y, budget=2, method="brute")
    np.testing.assert_array_equal(again.status, ref.status)
    seen = []
    certify(rf, X, y, budget=2, method="cascade", chunk_size=3,
            progress=lambda stage, done, total: seen.append((stage, done, total)))
    assert seen[0][0] == "vote" and seen[-1][1] == seen[-1][2]
