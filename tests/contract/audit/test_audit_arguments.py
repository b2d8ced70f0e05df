"""Bad arguments are refused by name, before any analysis runs."""
import pytest

import fairlens


@pytest.fixture
def args(german, readable_pipe):
    return dict(model=readable_pipe, data=german.frame, target=german.target, protected=["sex"],
                favourable="good", progress=False)


@pytest.mark.parametrize("change,match", [
    (dict(protected=["gender"]), r"protected columns \['gender'\] are not columns of data"),
    (dict(target="nope"), "target 'nope' is not a column"),
    (dict(favourable="excellent"), "favourable='excellent' does not occur in 'class'"),
    (dict(time_limit=0), "time_limit"),
    (dict(time_limit=-5.0), "time_limit"),
    (dict(checks=["group_fairness", "vibes"]), r"unknown check\(s\) \['vibes'\]"),
    (dict(options={"n_bootstrap": 5}), r"unknown option\(s\) \['n_bootstrap'\]"),
    (dict(thresholds={"dpd": 0.1}), "unknown measure 'dpd'"),
    (dict(fail_on="dpd>0.1"), "unknown measure 'dpd'"),
    (dict(protected=None), "protected is required"),
    (dict(favourable=None), "favourable is required"),
    (dict(data=[[1, 2]]), "data must be a pandas DataFrame or a fairlens Dataset"),
    (dict(model_source="/no/such/model.skops"), "model_source"),
    # every option is checked before anything runs (issue #33: these ran the audit and failed a section later)
    (dict(options={"n_boot": -5}), "'n_boot' was removed"),
    (dict(options={"confidence": 1.5}), "confidence"),
    (dict(options={"min_group_size": -1}), "min_group_size"),
    (dict(options={"maft_seeds": 0}), "maft_seeds"),
    (dict(options={"n_rate": 0}), "n_rate"),
    (dict(options={"certify_budgets": (0,)}), "certify_budgets"),
    (dict(options={"explainers": ("nope",)}), "explainers"),
    (dict(options={"n_explain": 1.5}), "n_explain"),
    # conditions that cannot be judged
    (dict(fail_on="demographic_parity_difference>1e999"), "non-finite"),
    (dict(fail_on="demographic_parity_difference>inf"), "non-finite"),
    (dict(fail_on="demographic_parity_difference>1"), "can never hold"),
    (dict(fail_on="disparate_impact<0"), "can never hold"),
    (dict(fail_on="demographic_parity_difference>=0"), "always holds"),
    (dict(fail_on="abs(demographic_parity_difference)>0.1"), "never negative"),
    (dict(fail_on="demographic_parity_difference>0.1,demographic_parity_difference>0.2"), "names "
     "demographic_parity_difference twice"),
    (dict(thresholds={"demographic_parity_difference": float("nan")}), "non-finite"),
    (dict(thresholds={"demographic_parity_difference": "<0.05"}), None),
    (dict(burden="maybe"), "burden"),
    (dict(privileged={"sex": "nonbinary"}), "does not occur"),
])
def test_bad_arguments_are_refused_by_name(args, change, match):
    args.update(change)
    if match is None:  # accepted: a condition string for a threshold
        rep = fairlens.audit(args.pop("model"), args.pop("data"), checks=["group_fairness"], **args)
        assert rep.thresholds["demographic_parity_difference"].text == "demographic_parity_difference<0.05"
        return

    class Exploding:  # any analysis would call the model: a refusal must come first
        classes_ = args["model"].classes_
        feature_names_in_ = args["model"].feature_names_in_

        def predict_proba(self, X):
            raise AssertionError("the model was called before the arguments were checked")

    if not any(k in change for k in ("protected", "target", "favourable", "data", "privileged")):
        args["model"] = Exploding()
    with pytest.raises((ValueError, TypeError), match=match):
        fairlens.audit(args.pop("model"), args.pop("data"), **args)


def test_duplicated_columns_missing_values_and_multiclass_models_are_refused(args, german):
    import numpy as np
    import pandas as pd
    from sklearn.tree import DecisionTreeClassifier

    frame = german.frame
    dup = pd.concat([frame, frame[["age"]]], axis=1)
    with pytest.raises(ValueError, match=r"duplicated column names \['age'\]"):
        fairlens.audit(args.pop("model"), dup, **{k: v for k, v in args.items() if k != "data"})
    holes = frame.copy()
    holes.loc[:9, "duration"] = np.nan
    with pytest.raises(ValueError, match=r"missing values in \['duration'\] \(10 rows\).*dropna"):
        fairlens.audit(lambda X: np.full(len(X), 0.5), holes, target="class", protected=["sex"],
                       favourable="good", progress=False)
    X = german.X
    three = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, np.arange(len(X)) % 3)
    with pytest.raises(ValueError, match="model: a classifier with 3 classes"):
        fairlens.audit(three, german, protected=["sex"], progress=False)


def test_non_binary_target_is_refused(args, german):
    frame = german.frame.copy()
    frame["class"] = frame["class"].astype(object)
    frame.loc[:5, "class"] = "unknown"
    args["data"] = frame
    with pytest.raises(ValueError, match="target 'class' must be binary.*3 value"):
        fairlens.audit(args.pop("model"), args.pop("data"), **args)


def test_model_that_cannot_score_the_table_is_refused(args):
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    wrong = LogisticRegression().fit(np.random.default_rng(0).random((20, 3)), [0, 1] * 10)
    args["model"] = wrong
    with pytest.raises((ValueError, TypeError)):
        fairlens.audit(args.pop("model"), args.pop("data"), **args)


def test_model_and_data_sources_are_hashed_and_named_by_file_name_only(args, tmp_path):
    import hashlib
    import pickle

    model_file = tmp_path / "model.pkl"
    model_file.write_bytes(pickle.dumps(args["model"]))
    data_file = tmp_path / "table.csv"
    args["data"].to_csv(data_file, index=False)
    rep = fairlens.audit(args.pop("model"), args.pop("data"), checks=["group_fairness"], time_limit=None,
                         model_source=model_file, data_source=data_file, **args)
    doc = rep.to_dict()
    assert doc["model"]["source"] == "model.pkl"
    assert doc["model"]["sha256"] == hashlib.sha256(model_file.read_bytes()).hexdigest()
    assert doc["data"]["source"] == "table.csv"
    assert doc["data"]["sha256"] == hashlib.sha256(data_file.read_bytes()).hexdigest()
    assert str(tmp_path) not in str(doc)  # never a full path


def test_old_time_budget_keyword_names_time_limit(args):
    """``time_budget=`` was renamed ``time_limit=`` (issue #34 item 4): refused by name, before any work."""
    with pytest.raises(TypeError, match=r"time_budget= was renamed time_limit="):
        fairlens.audit(args.pop("model"), args.pop("data"), time_budget=5, **args)


def test_two_argument_progress_is_refused_before_any_work(args):
    calls = []
    with pytest.raises(TypeError, match=r"progress.*progress\(stage, done, total\)"):
        fairlens.audit(args.pop("model"), args.pop("data"), checks=["group_fairness"],
                       **dict(args, progress=lambda done, total: calls.append((done, total))))
    assert calls == []
