"""MAFT and the baselines on the census benchmark (skipped without the data mirror)."""
import pytest

from tests._support.maft_oracle import check_result


@pytest.fixture(scope="module")
def census(data_home):
    from fairlens.datasets import load_adult
    from fairlens.models import train_mlp

    ds = load_adult(encoding="benchmark", data_home=data_home)
    return ds, train_mlp(ds, random_state=0)


def test_census_lockstep_vs_reference(census):
    from fairlens.maft import MAFT

    ds, model = census
    s = MAFT(model, ds, protected=["sex"])
    a = s.set_params(n_seeds=40, n_local=30, random_state=0).run()
    b = s.set_params(n_seeds=40, n_local=30, random_state=0, engine="reference").run()
    assert a.n_instances > 50
    assert abs(a.n_instances - b.n_instances) <= 0.1 * b.n_instances
    check_result(model, a, [ds.index_of("sex")], ds.bounds)
    fr = a.to_frame(max_rows=5)
    assert set(fr[("x", "sex")]) <= {"Male", "Female"}


@pytest.mark.parametrize("method", ["EIDIG", "ADF", "AEQUITAS"])
def test_census_baselines_rechecked(census, method):
    import fairlens.maft as fm

    ds, model = census
    res = getattr(fm, method)(model, ds, protected=["race", "sex"], n_seeds=30, n_local=20, random_state=1).run()
    assert res.n_instances > 0
    check_result(model, res, [ds.index_of("race"), ds.index_of("sex")], ds.bounds)
