"""The tests of ``tests/contract/test_registry.py`` that pin internals
(its docstring describes both halves)."""
import importlib
import importlib.util
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from fairlens import _registry
from tests._support import REPO

ROOT = REPO

TOY = '''
import numpy as np

from fairlens._registry import AuditCheck, SliceSpec, register

CALLS = []


def section(budget, random_state):
    CALLS.append(("tour", random_state))
    return dict(dataset="toy rows", table=None, figures=[], headline="the toy section ran",
                paragraphs=["A fifth method, registered from outside fairlens."], params={"random_state": random_state})


def check(ctx, seconds):
    from fairlens.audit._core import CheckOutcome, _finding, _wilson_test

    CALLS.append(("audit", seconds))
    out = CheckOutcome("toy_check", "Toy check", random_state=ctx.random_state)
    k, n = int(ctx.pred.sum()), int(ctx.pred.size)
    out.findings.append(_finding("toy_check", "toy_rate", None, k / n, None, None,
                                 f"{k} of {n} rows are predicted favourable", test=_wilson_test(k, n)))
    out.verdict = "toy"
    return out


def warm():
    CALLS.append(("warm", None))


SLICE = register(SliceSpec(
    name="toy", title="A toy fifth method", paper="A. Author, \\"A toy paper\\", 2026", module="toymod",
    check=AuditCheck("toy_check", "Toy check", "toymod:check", share=0.2,
                     measures=(("toy_rate", "Toy favourable rate", "rate", 0.0, 1.0, False, "test"),)),
    tour="toymod:section", warmup="toymod:warm", docs_page="papers/toy", order=50))
'''


@pytest.fixture
def toy(tmp_path, monkeypatch):
    (tmp_path / "toymod.py").write_text(textwrap.dedent(TOY))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("toymod", None)
    mod = importlib.import_module("toymod")
    yield mod
    _registry.unregister("toy")
    sys.modules.pop("toymod", None)


def test_every_reference_of_the_built_in_slices_resolves():
    for s in _registry.slices():
        mod = importlib.import_module(s.module)
        for name in (*s.analyses, *([s.widget] if s.widget else [])):
            assert hasattr(mod, name), (s.name, name)
        for ref in (s.tour, s.warmup, s.check.function if s.check else None, s.check.applies if s.check else None):
            if ref is not None:
                assert callable(_registry.resolve(ref)), ref
        assert (ROOT / "docs" / f"{s.docs_page}.md").is_file()
        assert (ROOT / s.tutorial).is_file()


def test_a_registered_fifth_slice_shows_everywhere(toy, tmp_path):
    import fairlens
    from fairlens import cli
    from fairlens.tour import run_tour

    assert [s.name for s in _registry.slices()][-1] == "toy"
    # the tour
    report = run_tour(only=["toy"], progress=False, random_state=3)
    assert [s.key for s in report.sections] == ["toy"] and report.sections[0].title == "5. A toy fifth method"
    assert ("tour", 3) in toy.CALLS
    # the command line: `fairlens tour --only toy`, `fairlens audit --checks toy_check`
    parser = cli.build_parser()
    assert parser.parse_args(["tour", "--only", "toy"]).only == ["toy"]
    from fairlens.audit._cli import _check_ids

    assert "toy_check" in _check_ids()
    # the audit: its check runs with a share of the budget, and a gate on its own measure is judged
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=300), "g": rng.choice(["a", "b"], 300)})
    frame["y"] = (frame["x"] > 0).astype(int)
    rep = fairlens.audit(lambda X: 1 / (1 + np.exp(-3 * X[:, 0])), frame, target="y", protected=["g"],
                         favourable=1, checks=["group_fairness", "toy_check"], time_limit=30, progress=False,
                         fail_on="toy_rate>0.9")
    assert [o.id for o in rep.outcomes] == ["group_fairness", "toy_check"]
    seconds = [s for kind, s in toy.CALLS if kind == "audit"][0]
    assert 0 < seconds < 30
    assert rep.section("toy_check").params["time_share"] == pytest.approx(seconds, abs=1e-3)
    f = rep.findings.query("measure == 'toy_rate'").iloc[0]
    assert f["verdict"] == "pass" and f["decided_by"] == "gate" and f["unit"] == "rate"
    assert rep.gate()[0] is True
    # the Binder warm-up
    spec = importlib.util.spec_from_file_location("binder_warmup", ROOT / "binder" / "warmup.py")
    warmup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(warmup)
    assert warmup.main(["toy"]) == 0 and ("warm", None) in toy.CALLS
    # the documentation's index of papers
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    try:
        from slices_index import papers_index
    finally:
        sys.path.remove(str(ROOT / "docs" / "_ext"))
    page = papers_index(_registry.slices())
    assert "{doc}`/papers/toy`" in page and "A toy paper" in page


def test_registrations_are_checked():
    with pytest.raises(ValueError, match="already taken"):
        _registry.register(_registry.SliceSpec(
            name="other", title="t", paper="p", module="m",
            check=_registry.AuditCheck("individual", "t", "m:f", share=0.1)))
    with pytest.raises(ValueError, match="'module:attribute'"):
        _registry.SliceSpec(name="x", title="t", paper="p", module="m", tour="not a reference")
    with pytest.raises(ValueError, match="share"):
        _registry.AuditCheck("x", "t", "m:f", share=1.5)
    with pytest.raises(TypeError, match="SliceSpec"):
        _registry.register("maft")
