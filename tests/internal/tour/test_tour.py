"""The tour: runs on bundled data only, writes a self-contained HTML report."""


from fairlens import tour
from tests.contract.tour.test_tour import no_data_home  # noqa: F401 (fixtures)


def test_failed_section_is_reported_not_swallowed(tmp_path, monkeypatch, no_data_home):
    def broken(budget, random_state):
        raise RuntimeError("boom in the section")

    monkeypatch.setattr("fairlens._registry.resolve", lambda ref: broken)
    report = tour.run_tour(quick=True, out=tmp_path / "r.html", progress=False, only=["shuffle"])
    assert not report.ok
    assert "FAILED: RuntimeError: boom in the section" in report.summary().result[0]
    assert "boom in the section" in (tmp_path / "r.html").read_text()
