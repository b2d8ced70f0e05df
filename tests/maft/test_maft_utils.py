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


def test_wilson():
    lo, hi = wilson_interval(10, 100)
    assert lo < 0.1 < hi and 0.04 < lo < 0.06 and 0.16 < hi < 0.18


def test_import_is_lazy():
    """Importing fairlens.maft neither imports ipywidgets nor compiles a kernel."""
    import subprocess
    import sys

    code = (
        "import sys, fairlens.maft as m; from fairlens.maft import _kernels as k; "
        "print('ipywidgets' in sys.modules, any(getattr(f, 'signatures', None) for f in "
        "(k.similar_rows, k.check_discrimination, k.global_update, k.local_perturb, k.table_insert)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
