


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
