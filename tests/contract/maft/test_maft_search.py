import threading

import numpy as np
import pytest

from fairlens.maft import AEQUITAS, MAFT, select_seeds
from tests._support.maft_oracle import check_result

PROT = [1, 2]


def _set(res):
    return {tuple(r) for r in res.instances}


@pytest.mark.parametrize("random_state", [0, 7])
def test_lockstep_equals_reference_exactly(toy, smooth, random_state):
    s = MAFT(smooth, toy)
    a = s.set_params(n_seeds=30, n_local=40, random_state=random_state).run()
    b = s.set_params(n_seeds=30, n_local=40, random_state=random_state, engine="reference").run()
    assert a.n_instances > 20
    assert _set(a) == _set(b)
    assert (a.n_global, a.n_local, a.tries_global, a.tries_local, a.n_explored) == (
        b.n_global,
        b.n_local,
        b.tries_global,
        b.tries_local,
        b.n_explored,
    )
    np.testing.assert_array_equal(a.instances[: a.n_global], b.instances[: b.n_global])


def test_every_instance_rechecked_smooth(toy, smooth):
    res = MAFT(smooth, toy, n_seeds=40, n_local=60, random_state=1).run()
    assert res.n_local > 0 and res.n_global > 0
    check_result(smooth, res, PROT, toy.bounds)


def test_every_instance_rechecked_mlp(toy, toy_mlp):
    res = MAFT(toy_mlp, toy, protected=["sex"], n_seeds=40, n_local=60, random_state=2).run()
    assert res.n_instances > 0
    check_result(toy_mlp, res, [1], toy.bounds)


def test_same_seed_same_result_and_seed_changes_it(toy, smooth):
    s = MAFT(smooth, toy)
    a = s.set_params(n_seeds=20, n_local=30, random_state=4).run()
    b = s.set_params(n_seeds=20, n_local=30, random_state=4).run()
    c = s.set_params(n_seeds=20, n_local=30, random_state=5).run()
    np.testing.assert_array_equal(a.instances, b.instances)
    assert _set(a) != _set(c)


def test_global_phase_matches_brute_force_walk(toy, smooth):
    """n_local=0: every global instance is a seed walked by Alg. 3; a seed that is
    already discriminatory is returned unchanged (found at iteration 0)."""
    from tests._support.maft_oracle import is_discriminatory

    s = MAFT(smooth, toy, max_iter=1)
    seeds = toy.X[:60]
    res = s.set_params(n_local=0, seeds=seeds).run()
    expect = {tuple(x) for x in seeds if is_discriminatory(smooth, x, PROT, toy.bounds)}
    assert _set(res) == expect
    assert res.tries_global == 60 and res.tries_local == 0


def test_duplicates_counted_once(toy, smooth):
    seeds = np.repeat(toy.X[:10], 3, axis=0)
    res = MAFT(smooth, toy, n_local=20, seeds=seeds, random_state=0).run()
    assert len(_set(res)) == res.n_instances
    ref = MAFT(smooth, toy, n_local=20, seeds=toy.X[:10], random_state=0).run()
    assert res.n_global == ref.n_global


def test_aequitas_rechecked_and_comparable(toy, smooth):
    s = AEQUITAS(smooth, toy)
    a = s.set_params(n_seeds=200, n_local=60, random_state=0).run()
    b = s.set_params(n_seeds=200, n_local=60, random_state=0, engine="reference").run()
    check_result(smooth, a, PROT, toy.bounds)
    check_result(smooth, b, PROT, toy.bounds)
    assert a.n_global == b.n_global  # identical random global sampling
    assert a.n_instances > a.n_global
    assert 0.6 < a.n_instances / b.n_instances < 1.6


def test_stop_keeps_what_was_found(toy, smooth):
    ev = threading.Event()
    seen = []

    def cb(state):
        seen.append(state)
        if state["phase"] == "local" and state["step"] >= 3:
            ev.set()

    res = MAFT(smooth, toy, n_seeds=30, n_local=200, random_state=0).run(callback=cb, stop=ev)
    assert res.stopped
    assert res.tries_local == 3 * res.n_global
    assert res.n_instances >= res.n_global > 0
    check_result(smooth, res, PROT, toy.bounds)


def test_seeds_round_robin_from_clusters(toy):
    seeds = select_seeds(toy.X, 40, n_clusters=4, random_state=0)
    assert seeds.shape == (40, 6)
    pool = {tuple(r) for r in toy.X}
    assert all(tuple(r) in pool for r in seeds)
    np.testing.assert_array_equal(seeds, select_seeds(toy.X, 40, 4, 0))
    np.testing.assert_array_equal(select_seeds(toy.X, 10_000), toy.X)


def test_seed_kmeans_runs_on_one_thread(toy, monkeypatch):
    """k-means sums per-thread partial sums; on one thread its clusters do not depend on the
    machine's core count (and no thread waits at a barrier for a busy core)."""
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_info

    seen = []
    fit_predict = KMeans.fit_predict

    def spy(self, X, *args, **kwargs):
        seen.append({(i["user_api"], i["num_threads"]) for i in threadpool_info()})
        return fit_predict(self, X, *args, **kwargs)

    monkeypatch.setattr(KMeans, "fit_predict", spy)
    seeds = select_seeds(toy.X, 40, n_clusters=4, random_state=0)
    assert len(seen) == 1 and seen[0] and all(n == 1 for _, n in seen[0])
    monkeypatch.setattr(KMeans, "fit_predict", fit_predict)
    np.testing.assert_array_equal(seeds, select_seeds(toy.X, 40, n_clusters=4, random_state=0))


def test_result_frame_and_summary(toy, smooth):
    res = MAFT(smooth, toy, n_seeds=20, n_local=20, random_state=0).run()
    fr = res.to_frame()
    assert len(fr) == res.n_instances
    assert ("x", "sex") in fr.columns and ("x'", "sex") in fr.columns
    assert set(fr[("", "phase")]) <= {"global", "local"}
    sm = res.summary()
    assert sm.loc[0, "instances"] == res.n_instances
    assert 0 < res.success_rate <= 1
    assert res.queries > 0 and res.elapsed > 0
    assert res.timeline[-1, 1] == res.n_instances


def test_fair_model_finds_nothing(toy):
    """A model that ignores the protected attributes has no discriminatory instance."""
    fair = lambda Z: 1 / (1 + np.exp(-(np.asarray(Z)[:, 3] - 4.5 + 0.3 * np.asarray(Z)[:, 4])))  # noqa: E731
    for cls in (MAFT, AEQUITAS):
        res = cls(fair, toy, n_seeds=30, n_local=20, random_state=0).run()
        assert res.n_instances == 0 and res.n_global == 0 and res.tries_local == 0
        assert res.instances.shape == (0, 6) and res.counterparts.shape == (0, 6)
        assert len(res.to_frame()) == 0
        assert res.summary().loc[0, "instances"] == 0


def test_global_walk_hand_example():
    """f = s(2*sex + a - b - 3), seed (sex=0, a=1, b=2); worked by hand:
    iter 0: f(x)=s(-4), f(x')=s(-2): same label; both (flipped) gradients say a up, b down
    iter 1: x=(0,2,1): f=s(-2), f(x')=s(0)=0.5 -> label 0 (not > 0.5): same label
    iter 2: x=(0,3,0): f=s(0)=0.5 -> 0, f(x')=s(2) -> 1: discriminatory."""
    from tests._support.maft_toy import ToyDataset

    X = np.array([[0, 1, 2], [1, 5, 0], [0, 0, 5]], dtype=float)
    ds = ToyDataset(X, np.array([0, 1, 0]), np.array([[0, 1], [0, 5], [0, 5]], dtype=float), ["sex", "a", "b"], ["sex"])
    f = lambda Z: 1 / (1 + np.exp(-(2 * Z[:, 0] + Z[:, 1] - Z[:, 2] - 3)))  # noqa: E731
    for engine in ("lockstep", "reference"):
        r = MAFT(f, ds, max_iter=3, n_local=0, seeds=X[:1], engine=engine).run()
        np.testing.assert_array_equal(r.instances, [[0, 3, 0]])
        np.testing.assert_array_equal(r.counterparts, [[1, 3, 0]])
        assert r.tries_global == 3 and r.n_explored == 2
        r2 = MAFT(f, ds, max_iter=2, n_local=0, seeds=X[:1], engine=engine).run()
        assert r2.n_instances == 0 and r2.tries_global == 2
