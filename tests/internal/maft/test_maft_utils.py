import numpy as np

from fairlens.maft._utils import RowSet, stream_uniform, wilson_interval


def test_rowset_exact_dedup_and_growth():
    rng = np.random.default_rng(0)
    rows = np.floor(rng.random((5000, 4)) * 5)
    rs = RowSet(4, capacity=16)
    new = np.concatenate([rs.add(rows[i : i + 700]) for i in range(0, 5000, 700)])
    _, first = np.unique(rows, axis=0, return_index=True)
    expect = np.zeros(5000, dtype=bool)
    expect[first] = True
    np.testing.assert_array_equal(new, expect)
    assert len(rs) == len(first)
    np.testing.assert_array_equal(rs.rows, rows[np.sort(first)])
    z = RowSet(4)
    assert z.add(np.zeros((1, 4)))[0]
    assert not z.add(np.array([[-0.0, 0.0, 0.0, 0.0]]))[0]  # -0.0 == 0.0


def test_stream_uniform_is_per_walker():
    a = stream_uniform(123, np.arange(10), 5, 1)
    b = stream_uniform(123, [7], 5, 1)
    assert a[7] == b[0]
    assert np.all((a >= 0) & (a < 1))
    assert not np.array_equal(a, stream_uniform(123, np.arange(10), 6, 1))
    assert not np.array_equal(a, stream_uniform(123, np.arange(10), 5, 2))
    u = stream_uniform(9, np.arange(200000), 0, 0)
    assert abs(u.mean() - 0.5) < 0.005 and abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 0.01


def test_stream_fill_kernel_is_the_numpy_stream_bit_for_bit():
    """The numba kernel of the lockstep engine draws exactly the numbers of ``stream_uniform``
    (its NumPy twin): any key (including keys >= 2**63), walker, iteration and slot."""
    from fairlens.maft import _kcall
    from fairlens.maft._utils import stream_counter

    rng = np.random.default_rng(3)
    walkers = np.concatenate([np.arange(50), rng.integers(0, 2**62, 50)]).astype(np.int64)
    for key in (0, 1, 2**63 - 2, 2**63 + 5, 2**64 - 1, int(rng.integers(0, 2**63 - 1))):
        for it, slot in ((0, 0), (1, 1), (999, 2), (10**12, 3), (2**40 + 7, 1)):
            out = np.empty(walkers.size)
            _kcall.stream_fill(key, walkers, stream_counter(it, slot), out)
            np.testing.assert_array_equal(out, stream_uniform(key, walkers, it, slot))
            one = np.empty(1)
            _kcall.stream_fill(key, walkers[7:8], stream_counter(it, slot), one)
            assert one[0] == out[7]


def test_wilson():
    lo, hi = wilson_interval(10, 100)
    assert lo < 0.1 < hi and 0.04 < lo < 0.06 and 0.16 < hi < 0.18


def test_keyset_equals_a_python_set_and_codec_round_trips():
    """The engines' row sets against plain Python: positions, first occurrences, round trips."""
    from fairlens.maft._utils import KeySet, RowCodec

    rng = np.random.default_rng(3)
    lo, hi = np.array([0.0, -2.0, 1.0, 0.0]), np.array([3.0, 2.0, 9.0, 40.0])
    X = lo + np.floor(rng.random((20000, 4)) * (hi - lo + 1))
    for grid in (True, False):
        codec = RowCodec(lo, hi, grid)
        assert codec.packed == grid and codec.k == (1 if grid else 4)
        K = codec.keys(X)
        np.testing.assert_array_equal(codec.rows(K), X)
        if grid:  # the numba packing against numpy's mixed-radix formula
            mult = np.array([np.prod(hi[j + 1:] - lo[j + 1:] + 1) for j in range(4)], dtype=np.int64)
            np.testing.assert_array_equal(K[:, 0], (X - lo).astype(np.int64) @ mult)
            np.testing.assert_array_equal(codec.keys(X[::-3]), K[::-3])  # strided input
        ks = KeySet(codec.k, capacity=16)  # grows many times
        seen, first = {}, []
        for a in range(0, len(X), 777):
            pos, new = ks.index(K[a:a + 777])
            for i, row in enumerate(map(tuple, X[a:a + 777])):
                if row not in seen:
                    seen[row] = len(seen)
                    first.append(True)
                else:
                    first.append(False)
                assert pos[i] == seen[row]
            assert new.tolist() == first[a:a + 777]
        assert len(ks) == len(seen)
        np.testing.assert_array_equal(codec.rows(ks.keys), np.array(list(seen)))
    # -0.0 and 0.0 are one row off the grid too
    codec = RowCodec(lo, hi, False)
    assert KeySet(4).add(codec.keys(np.array([[0.0, 0, 1, 0], [-0.0, 0, 1, 0]]))).tolist() == [True, False]


def test_keyset_single_key_slots_hold_any_int64():
    """The one-slot table of single int64 keys (key beside 1 + position, 0 = empty) against a
    Python dict: zero, -1, the int64 extremes and many colliding keys (same low bits)."""
    from fairlens.maft._utils import KeySet

    i64 = np.iinfo(np.int64)
    rng = np.random.default_rng(5)
    special = np.array([0, -1, 0, i64.min, i64.max, -1, 1, i64.min], dtype=np.int64)
    colliding = (rng.integers(0, 50, 3000) << 40).astype(np.int64)  # equal low 40 bits
    K = np.concatenate([special, colliding, rng.integers(i64.min, i64.max, 3000, dtype=np.int64), special])
    ks = KeySet(1, capacity=16)
    seen = {}
    for a in range(0, len(K), 333):
        pos, new = ks.index(K[a:a + 333, None])
        for i, k in enumerate(K[a:a + 333].tolist()):
            assert new[i] == (k not in seen)
            seen.setdefault(k, len(seen))
            assert pos[i] == seen[k]
    assert ks.keys[:, 0].tolist() == list(seen)


def test_mlp_replay_is_bitwise_and_refuses_what_it_cannot_replay(toy, toy_mlp):
    """The replay of a scikit-learn MLP (alone or after StandardScaler) equals predict_proba bit
    for bit at several batch sizes; other pipelines and callables are called as usual."""
    import warnings

    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler, StandardScaler

    from fairlens.maft._utils import MLPReplay, mlp_replay
    from fairlens.models import as_scorer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = make_pipeline(StandardScaler(), MLPClassifier((12, 6), max_iter=200, random_state=1)).fit(toy.X, toy.y)
        minmax = make_pipeline(MinMaxScaler(), MLPClassifier((6,), max_iter=50, random_state=1)).fit(toy.X, toy.y)
    X = np.asarray(toy.X, dtype=float)
    for model, fav in ((toy_mlp, 1), (pipe, 1), (pipe, 0)):
        sc = as_scorer(model, toy, favourable=fav)
        rep = mlp_replay(sc, X[:100])
        assert isinstance(rep, MLPReplay)
        for n in (1, 7, 300, X.shape[0]):
            np.testing.assert_array_equal(rep(X[:n]), model.predict_proba(X[:n])[:, fav])
    assert mlp_replay(as_scorer(minmax, toy), X[:50]) is None
    assert mlp_replay(as_scorer(lambda A: A[:, 0] * 0 + 0.5, toy), X[:50]) is None


def test_maft_same_instances_with_and_without_the_replay(toy, toy_mlp, monkeypatch):
    from fairlens.maft import MAFT, _searchers

    kw = dict(n_seeds=30, n_local=40, random_state=2)
    fast = MAFT(toy_mlp, toy, **kw).run()
    monkeypatch.setattr(_searchers, "mlp_replay", lambda scorer, probe: None)
    slow = MAFT(toy_mlp, toy, **kw).run()
    assert fast.n_global > 0 and fast.n_local > 0
    np.testing.assert_array_equal(fast.instances, slow.instances)
    np.testing.assert_array_equal(fast.instance_scores, slow.instance_scores)


def test_local_commit_kernel_equals_the_masked_numpy_updates():
    """The end of a local step in one kernel: the same values as the masked NumPy assignments."""
    from fairlens.maft import _kcall

    rng = np.random.default_rng(5)
    W, C, d = 37, 4, 6
    ok = rng.random(W) < 0.4
    S, gS, S_cur = (rng.random((W, C, d)) for _ in range(3))
    sc, gsc, sc_cur = (rng.random((W, C)) for _ in range(3))
    X, X0, P, P0 = (rng.random((W, d)) for _ in range(4))
    suc = rng.integers(0, 9, W)
    want = [a.copy() for a in (X, P, suc, S_cur, sc_cur)]
    wX, wP, wsuc, wS_cur, wsc_cur = want
    wS_cur[ok] = S[ok]
    wsc_cur[ok] = sc[ok]
    bad = ~ok
    wX[bad] = X0[bad]
    wP[bad] = P0[bad]
    wsuc[bad] = 0
    wS_cur[bad] = gS[bad]
    wsc_cur[bad] = gsc[bad]
    _kcall.local_commit(ok, (S, sc), (X, P, suc, S_cur, sc_cur), (X0, P0, gS, gsc))
    for got, w in zip((X, P, suc, S_cur, sc_cur), want):
        np.testing.assert_array_equal(got, w)
    import pytest

    with pytest.raises(ValueError, match="local_commit: argument S_cur must have shape"):
        _kcall.local_commit(ok, (S, sc), (X, P, suc, S_cur[:, :2], sc_cur), (X0, P0, gS, gsc))


def test_unpack_rows_kernel_equals_the_numpy_inverse():
    from fairlens.maft._utils import RowCodec

    rng = np.random.default_rng(1)
    lo = np.array([-3.0, 0.0, 17.0, 1.0, -1.0])
    hi = lo + np.array([4, 1, 120, 9, 2])
    X = lo + np.floor(rng.random((500, 5)) * (hi - lo + 1))
    c = RowCodec(lo, hi, True)
    K = c.keys(X)
    back = c.rows(K)
    np.testing.assert_array_equal(back, X)
    # the former NumPy loop, independently
    k = K.reshape(-1).copy()
    ref = np.empty_like(X)
    for j in range(4, -1, -1):
        ref[:, j] = lo[j] + (k % c.span[j])
        k //= c.span[j]
    np.testing.assert_array_equal(back, ref)


def test_zero_order_kernels_equal_the_numpy_expression():
    """Algorithm 2's probe rows and estimate in two kernels: the values of the NumPy expression
    they replace, bit for bit (two-sided steps at the bounds included, and a score of exactly 0.5)."""
    from fairlens.maft._gradients import _zo_steps, _zo_vectored

    rng = np.random.default_rng(2)
    n, d = 23, 5
    lo, hi = np.zeros(d), np.full(d, 3.0)
    X = np.floor(rng.random((n, d)) * 4)
    W = rng.normal(size=d)

    def scorer(R):
        out = 1 / (1 + np.exp(-(R - 1.5) @ W))
        out[::7] = 0.5
        return out

    for bounds in (None, (lo, hi)):
        steps = np.full((n, d), 1.0) if bounds is None else _zo_steps(X, 1.0, *bounds)
        P = np.repeat(X, d, axis=0).reshape(n, d, d)
        P += steps[:, :, None] * np.eye(d)[None, :, :]
        rows = np.concatenate([X, P.reshape(n * d, d)], axis=0)
        Y = scorer(rows)
        y = Y[:n]
        with np.errstate(invalid="ignore", divide="ignore"):
            G = np.where(steps != 0, (Y[n:].reshape(n, d) - y[:, None]) / np.where(steps != 0, steps, 1.0), 0.0)
        flip = ~(y > 0.5)
        G[flip] = -G[flip]
        seen = []

        def spy(R, seen=seen):
            seen.append(R.copy())
            return scorer(R)

        got, gy = _zo_vectored(spy, X, 1.0, bounds)
        np.testing.assert_array_equal(seen[0], rows)
        np.testing.assert_array_equal(got, G)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(G))
        np.testing.assert_array_equal(gy, y)


def test_finds_add_step_kernel_equals_the_numpy_add():
    """One step's discoveries in one kernel: the same rows, counterparts, scores and order keys
    as ``_Finds.add`` (duplicates within and across steps, rows excluded up front, ties and
    exact 0.5 scores, three protected columns)."""
    from fairlens.maft._state import Finds as _Finds
    from fairlens.maft._utils import RowCodec

    rng = np.random.default_rng(11)
    W, C, d = 40, 6, 5
    lo, hi = np.zeros(d), np.array([2.0, 1.0, 2.0, 3.0, 1.0])
    codec = RowCodec(lo, hi, True)
    prot = np.array([1, 2, 4], dtype=np.int64)
    excl = codec.keys(lo + np.floor(rng.random((7, d)) * (hi - lo + 1)))
    a = _Finds(codec, prot, excl, capacity=16)
    b = _Finds(codec, prot, excl, capacity=16)
    for it in range(25):
        X = lo + np.floor(rng.random((W, d)) * (hi - lo + 1))
        S = lo + np.floor(rng.random((W, C, d)) * (hi - lo + 1))
        sc = np.round(rng.random((W, C)) * 4) / 4  # many ties and exact 0.5
        ok = rng.random(W) < 0.6
        order_key = (np.arange(W, dtype=np.int64)[::-1] * 100 + it).copy()
        if ok.any():
            a.add(X[ok], S[ok], sc[ok], order_key[ok])
        b.add_step(ok, X, S, sc, order_key)
    pa, pb = a.pack(), b.pack()
    assert len(a) == len(b) > 100
    for k in ("keys", "cp", "s1", "s2", "order"):
        np.testing.assert_array_equal(getattr(pa, k), getattr(pb, k))


def test_membership_only_keyset_equals_a_python_set():
    """The explored rows' set (8-byte slots, key + 1; no positions) against a Python set: zero,
    the largest allowed key, colliding low bits, duplicates across and within calls, many
    growths; it refuses ``index`` and keys it cannot hold, by name."""
    import pytest

    from fairlens.maft import _kcall
    from fairlens.maft._utils import KeySet

    i64 = np.iinfo(np.int64)
    rng = np.random.default_rng(11)
    special = np.array([0, 1, 0, i64.max - 1, 2, i64.max - 1], dtype=np.int64)
    colliding = (rng.integers(0, 60, 4000) << 40).astype(np.int64)
    K = np.concatenate([special, colliding, rng.integers(0, 5000, 6000), rng.integers(0, i64.max - 1, 3000),
                        special])
    ks = KeySet(1, capacity=16, positions=False)  # grows many times
    seen = {}
    for a in range(0, len(K), 451):
        ks.insert(K[a:a + 451, None])
        for k in K[a:a + 451].tolist():
            seen.setdefault(k, len(seen))
        assert len(ks) == len(seen)
    assert ks.keys[:, 0].tolist() == list(seen)  # insertion order, each key once
    assert ks._table.ndim == 1 and np.count_nonzero(ks._table) == len(seen)  # 8 bytes a slot
    with pytest.raises(TypeError, match="positions=False"):
        ks.index(K[:3, None])
    table, n_before = ks._table.copy(), len(ks)
    for bad in (np.array([[-1]]), np.array([[i64.max]]), np.array([[7], [8], [-3], [9]])):
        with pytest.raises(ValueError, match=r"KeySet.insert: .*\[0, 2\*\*63 - 1\)"):
            ks.insert(bad)
    # refused before anything is inserted: the keys ahead of the bad one are not in the set
    assert len(ks) == n_before and np.array_equal(ks._table, table)
    t64 = np.zeros(64, np.int64)
    with pytest.raises(ValueError, match=r"key_add1: argument keys must lie in"):
        _kcall.key_add1(t64, np.empty((8, 1), np.int64), 0, np.array([[3], [-5]]))
    assert not t64.any()  # nothing inserted
    with pytest.raises(ValueError, match="key_add1: 40 keys do not fit a table of 64 slots"):
        _kcall.key_add1(np.zeros(64, np.int64), np.empty((40, 1), np.int64), 0, np.arange(40)[:, None])
    # a set with positions still takes insert() (the engines call insert() on either)
    both = KeySet(1, capacity=16)
    both.insert(K[:500, None])
    assert both.keys[:, 0].tolist() == list(dict.fromkeys(K[:500].tolist()))


def test_unpack_pairs_kernel_writes_rows_and_counterparts():
    """Rows and counterparts decoded in one pass equal the codec's rows with the protected
    columns replaced (NumPy), packed and unpacked codecs, into slices of larger arrays."""
    import pytest

    from fairlens.maft import _kcall
    from fairlens.maft._utils import RowCodec

    rng = np.random.default_rng(4)
    lo = np.array([-3.0, 0.0, 17.0, 1.0, -1.0])
    hi = lo + np.array([4, 1, 120, 9, 2])
    X = lo + np.floor(rng.random((300, 5)) * (hi - lo + 1))
    prot = np.array([3, 1], dtype=np.int64)
    cpv = lo[prot] + np.floor(rng.random((300, 2)) * (hi - lo + 1)[prot])
    want_cp = X.copy()
    want_cp[:, prot] = cpv
    for grid in (True, False):
        c = RowCodec(lo, hi, grid)
        out, cp_out = np.full((310, 5), np.nan), np.full((310, 5), np.nan)
        c.pairs(c.keys(X), cpv, prot, out[7:307], cp_out[7:307])
        np.testing.assert_array_equal(out[7:307], X)
        np.testing.assert_array_equal(cp_out[7:307], want_cp)
        assert np.isnan(out[:7]).all() and np.isnan(cp_out[307:]).all()  # nothing written outside
    c = RowCodec(lo, hi, True)
    K = c.keys(X).reshape(-1)
    with pytest.raises(ValueError, match="unpack_pairs: argument prot_idx holds indices outside"):
        _kcall.unpack_pairs(K, cpv, c.lo, c.span, np.array([0, 5]), np.empty((300, 5)), np.empty((300, 5)))
    with pytest.raises(ValueError, match=r"unpack_pairs: argument cp_out must have shape \(300, 5\)"):
        _kcall.unpack_pairs(K, cpv, c.lo, c.span, prot, np.empty((300, 5)), np.empty((299, 5)))


def test_order_permutation_is_the_stable_argsort():
    """The share's pack sorts its rows by order key through direct addressing; it must give the
    argsort's permutation (distinct keys, a wide range, equal keys, no keys)."""
    from fairlens.maft._state import order_permutation as _order_permutation

    rng = np.random.default_rng(0)
    cases = [np.zeros(0, np.int64), np.array([5], np.int64)]
    for n, span in ((1000, 3000), (5000, 5000), (300, 10**7)):
        cases.append(rng.choice(span, size=n, replace=False).astype(np.int64) + 12_345)
    cases.append(rng.integers(0, 50, size=400).astype(np.int64))  # equal keys: the argsort's tie order
    for order in cases:
        np.testing.assert_array_equal(_order_permutation(order), np.argsort(order, kind="stable"))


def test_fresh_zeros_are_private_writable_zeros_and_large_keysets_use_them(monkeypatch):
    import mmap
    import os
    import pickle
    import sys

    import fairlens.maft._utils as utils
    from fairlens.maft._utils import FRESH_BYTES, KeySet, fresh_zeros

    mmap_type = mmap.mmap  # (patched below)

    def mapped(a):  # whether the array's memory is an mmap (through views and a memoryview)
        while isinstance(a, np.ndarray):
            a = a.base
        return isinstance(getattr(a, "obj", a), mmap_type)

    assert not mapped(fresh_zeros((16, 2)))  # below the threshold: np.zeros
    with monkeypatch.context() as m:  # NumPy advises no huge pages (NUMPY_MADVISE_HUGEPAGE=0): np.zeros
        m.setattr(utils, "_numpy_huge_pages", lambda: False)
        assert not mapped(fresh_zeros((FRESH_BYTES // 8,)))
        m.setattr(utils, "_numpy_huge_pages", lambda: True)
        m.setattr(utils.mmap, "mmap", lambda *a, **k: (_ for _ in ()).throw(OSError(12, "Cannot allocate memory")))
        refused = fresh_zeros((FRESH_BYTES // 8,))  # a mapping the system refuses: np.zeros
        assert not mapped(refused) and refused.shape == (FRESH_BYTES // 8,) and not refused.any()
    linux = sys.platform.startswith("linux") and utils._numpy_huge_pages()
    for shape in [(FRESH_BYTES // 8,), (FRESH_BYTES // 16 + 3, 2)]:
        a = fresh_zeros(shape)
        assert mapped(a) == linux
        assert a.shape == shape and a.dtype == np.int64 and a.flags.writeable and a.flags.c_contiguous
        assert not a.any()
        flat = a.reshape(-1)  # a view: the writes land in a
        flat[::4096] = 7
        assert int(a.sum()) == 7 * flat[::4096].size
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(a)), a)
    # private: a write in a forked child is not seen here (a shared mapping would leak it)
    if linux:
        a = fresh_zeros((FRESH_BYTES // 8,))
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            a[:] = 1
            os._exit(0)
        os.waitpid(pid, 0)
        assert not a.any()
    # a set whose slot table passes the threshold (and one that grows into it) answers as a Python set
    rng = np.random.default_rng(3)
    keys = rng.integers(-(2**62), 2**62, size=(200_000, 1), dtype=np.int64)
    keys[100_000:] = keys[:100_000]
    for capacity in (200_000, 16):
        ks = KeySet(1, capacity)
        pos, new = ks.index(keys)
        assert int(new.sum()) == len(set(keys[:, 0].tolist())) == len(ks)
        np.testing.assert_array_equal(ks.keys[pos, 0], keys[:, 0])
        assert ks._table.nbytes >= FRESH_BYTES and mapped(ks._table) == linux
