"""The trust boundary of `fairlens audit`: a .skops file from the party being audited runs no code.

skops resolves a type name ``module.name`` as an attribute of an imported module, so a file can name a
scikit-learn module's re-export of a dangerous function (``sklearn.utils._testing.check_output`` is
``subprocess.check_output``; ``sklearn.datasets._rcv1.remove`` is ``os.remove``) or of a class
(``sklearn.ensemble._bagging.partial`` is ``functools.partial``).  Only classes DEFINED in
scikit-learn are accepted without ``--trust-types``.
"""
import json
import operator
import zipfile

import numpy as np
import pandas as pd
import pytest

skops_io = pytest.importorskip("skops.io")



def _forged(tmp_path, name, module, func):
    """A real skops file of a pipeline with a FunctionTransformer, its function renamed in the file's
    schema to ``module.func`` (what an attacker edits)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    X = np.random.default_rng(0).normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    pipe = make_pipeline(FunctionTransformer(operator.neg), LogisticRegression()).fit(X, y)
    src = tmp_path / "honest.skops"
    skops_io.dump(pipe, src)
    out = tmp_path / name
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(out, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "schema.json":
                text = data.decode()
                old_mod, old_name = '"__module__": "_operator"', '"__class__": "neg"'
                assert text.count(old_mod) == 1 and text.count(old_name) == 1
                text = text.replace(old_mod, f'"__module__": {json.dumps(module)}').replace(
                    old_name, f'"__class__": {json.dumps(func)}')
                data = text.encode()
            zout.writestr(item, data)
    return out


def test_the_command_line_exits_2_before_any_analysis(tmp_path, capsys):
    from fairlens.cli import main

    path = _forged(tmp_path, "model.skops", "sklearn.utils._testing", "check_output")
    table = tmp_path / "t.csv"
    rng = np.random.default_rng(0)
    pd.DataFrame({"x0": rng.normal(size=50), "x1": rng.normal(size=50), "g": rng.choice(["a", "b"], 50),
                  "y": rng.integers(0, 2, 50)}).to_csv(table, index=False)
    out = tmp_path / "r.html"
    with pytest.raises(SystemExit) as exc:
        main(["audit", "--data", str(table), "--model", str(path), "--target", "y", "--favourable", "1",
              "--protected", "g", "--out", str(out), "--no-progress"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "sklearn.utils._testing.check_output" in err and "could run code" in err
    assert not out.exists()
