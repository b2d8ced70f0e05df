import numpy as np
from sklearn.datasets import load_breast_cancer

from fairlens.certify import FeaturePartitionedForest, certify
from fairlens.certify._reference import reference_brute, reference_tree_votes


def test_fpf_brute_force_matches_reference():
    X, y = load_breast_cancer(return_X_y=True)
    X = X[:, :9]
    fpf = FeaturePartitionedForest(budget=1, rounds=3, max_leaf_nodes=4, random_state=0).fit(X[:400], y[:400])
    Xte, yte = X[400:460], y[400:460]
    for b in (1, 2):
        res = certify(fpf, Xte, yte, budget=b, method="cascade")
        correct, att = reference_brute(fpf, Xte, yte, b)
        np.testing.assert_array_equal(res.status == "attackable", att)
        for i, xw in res.witnesses.items():
            votes = reference_tree_votes(fpf, xw.reshape(1, -1))
            assert fpf.predict(xw.reshape(1, -1))[0] != yte[i]
            assert votes.shape == (1, 9)


def test_fpf_check_estimator_with_documented_exceptions():
    import warnings

    from sklearn.utils.estimator_checks import check_estimator

    from fairlens.certify._fpf import EXPECTED_FAILED_CHECKS

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(FeaturePartitionedForest(rounds=3, random_state=0),
                                  expected_failed_checks=EXPECTED_FAILED_CHECKS, on_fail=None)
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert failed == []
    xfailed = {r["check_name"] for r in results if r["status"] == "xfail"}
    assert xfailed <= set(EXPECTED_FAILED_CHECKS)
    assert sum(r["status"] == "passed" for r in results) >= 30
