"""Bad arguments are refused by name, before any analysis runs."""
import pytest

import fairlens
from fairlens._base import make_invalid
from fairlens.audit._audit import _AUDIT_CONSTRAINTS


@pytest.fixture
def args(german, readable_pipe):
    return dict(model=readable_pipe, data=german.frame, target=german.target, protected=["sex"],
                favourable="good", progress=False)


@pytest.mark.parametrize("change,match", [
    (dict(protected=["gender"]), r"protected columns \['gender'\] are not columns of data"),
    (dict(target="nope"), "target 'nope' is not a column"),
    (dict(favourable="excellent"), "favourable='excellent' does not occur in 'class'"),
    (dict(time_budget=0), "time_budget"),
    (dict(time_budget=-5.0), "time_budget"),
    (dict(checks=["group_fairness", "vibes"]), r"unknown check\(s\) \['vibes'\]"),
    (dict(options={"n_bootstrap": 5}), r"unknown option\(s\) \['n_bootstrap'\]"),
    (dict(thresholds={"dpd": 0.1}), "unknown measure 'dpd'"),
    (dict(fail_on="dpd>0.1"), "unknown measure 'dpd'"),
    (dict(protected=None), "protected is required"),
    (dict(favourable=None), "favourable is required"),
    (dict(data=[[1, 2]]), "data must be a pandas DataFrame or a fairlens Dataset"),
    (dict(model_source="/no/such/model.skops"), "model_source"),
])
def test_bad_arguments_are_refused_by_name(args, change, match):
    args.update(change)
    with pytest.raises((ValueError, TypeError), match=match):
        fairlens.audit(args.pop("model"), args.pop("data"), **args)


def test_non_binary_target_is_refused(args, german):
    frame = german.frame.copy()
    frame["class"] = frame["class"].astype(object)
    frame.loc[:5, "class"] = "unknown"
    args["data"] = frame
    with pytest.raises(ValueError, match="target 'class' must be binary.*3 value"):
        fairlens.audit(args.pop("model"), args.pop("data"), **args)


def test_every_invalid_parameter_value_is_refused_by_name(args):
    for name, bad in make_invalid(_AUDIT_CONSTRAINTS):
        kw = dict(args)
        kw[name] = bad
        with pytest.raises((TypeError, ValueError), match=name):
            fairlens.audit(kw.pop("model"), kw.pop("data"), **kw)


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
    rep = fairlens.audit(args.pop("model"), args.pop("data"), checks=["group_fairness"], time_budget=None,
                         model_source=model_file, data_source=data_file, options={"n_boot": 10}, **args)
    doc = rep.to_dict()
    assert doc["model"]["source"] == "model.pkl"
    assert doc["model"]["sha256"] == hashlib.sha256(model_file.read_bytes()).hexdigest()
    assert doc["data"]["source"] == "table.csv"
    assert doc["data"]["sha256"] == hashlib.sha256(data_file.read_bytes()).hexdigest()
    assert str(tmp_path) not in str(doc)  # never a full path
