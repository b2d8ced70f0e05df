"""TestSGD(...).run(): report, ranking, reproducibility, bad input."""

from fairlens.testsgd import TestSGD
from fairlens.testsgd._score import _reference_score, rule_set_rng
from tests.contract.testsgd.test_testsgd_report import SENS


def test_run_matches_reference_per_rule_set(toy, planted):
    ts = TestSGD(planted, toy, protected=SENS, theta=0.2, sample_thr=100, random_state=11)
    rep = ts.run()
    fr = ts.mine()
    by_name = {str(r.rule_set): r for r in rep.results}
    for j in (0, len(fr) // 2, len(fr) - 1):
        # rule set j of the mined list draws from its own stream keyed by (seed, j, 0)
        ref = _reference_score(planted, toy, fr.rule_sets[j], SENS, sample_thr=100, rng=rule_set_rng(11, j, 0))
        got = by_name[str(fr.rule_sets[j])]
        assert (got.n_samples, got.rate_in, got.rate_out) == (ref.n_samples, ref.rate_in, ref.rate_out)
