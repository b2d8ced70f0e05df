"""``RuleSetBrowser``: browse, filter and act on a TestSGD report (ipywidgets 8)."""
from __future__ import annotations

import html

import ipywidgets as widgets
import numpy as np
import pandas as pd

from ._mitigate import mitigate
from ._rules import as_table, bin_index

__all__ = ["RuleSetBrowser"]

_SORTABLE = ["score", "margin", "support", "rate_in", "rate_out", "n_samples", "n_rules"]


class RuleSetBrowser(widgets.VBox):
    """A sortable, filterable view of a :class:`TestSGDReport`.

    The table lists the rule sets (score, margin, support, rates); selecting
    one shows its two favourable rates with error bars, the group's size and
    composition and sample rows. ``theta`` re-filters by support; buttons
    re-estimate the selected rule set with a tighter error threshold and run
    mitigation on it (needs ``test=`` data with labels).

    Parameters
    ----------
    report : TestSGDReport
        From ``TestSGD(...).run()`` (it remembers its tester: model and data).
    test : Dataset, optional
        Held-out labelled data for the mitigation's accuracy.
    max_rows : int
        Rows shown in the table and the selector.
    background : bool, default False
        Run the mitigation in a background thread so that the kernel stays
        responsive and the ``stop`` button takes effect between retraining
        steps (``.wait()`` joins it). Synchronous by default.

    Attributes
    ----------
    controls : dict
        ``sort_by, ascending, filter, theta, select, error, reestimate, mitigate, stop``.
    result : ScoreResult or None
        The selected rule set's (possibly re-estimated) result.
    filtered : pandas.DataFrame
        Rows currently listed.
    mitigation : MitigationResult or None
    """

    def __init__(self, report, test=None, max_rows: int = 25, mitigation_amounts=None, background: bool = False):
        self.report = report
        self.tester = getattr(report, "tester", None)
        self.test = test
        self.max_rows = int(max_rows)
        self.mitigation_amounts = mitigation_amounts
        self.frame = report.to_frame().reset_index(drop=True)
        self.result = None
        self.mitigation = None
        self._cache = {}
        self._stop = False
        self.background = bool(background)
        self._thread = None
        theta0 = float(report.params.get("theta", 0.05))
        c = {
            "sort_by": widgets.Dropdown(options=_SORTABLE, value="score", description="sort by"),
            "ascending": widgets.Checkbox(value=False, description="ascending", indent=False),
            "filter": widgets.Text(value="", placeholder="e.g. sex=Male", description="contains",
                                   continuous_update=False),
            "theta": widgets.FloatSlider(value=theta0, min=theta0, max=1.0, step=0.01, description="theta",
                                         continuous_update=False, readout_format=".2f"),
            "select": widgets.Select(options=[], rows=8, description="rule set",
                                     layout=widgets.Layout(width="98%")),
            "error": widgets.FloatSlider(value=float(report.params.get("error", 0.05)) / 2, min=0.005, max=0.2,
                                         step=0.005, description="error", continuous_update=False,
                                         readout_format=".3f"),
            "reestimate": widgets.Button(description="re-estimate", icon="refresh"),
            "mitigate": widgets.Button(description="mitigate", icon="wrench"),
            "stop": widgets.Button(description="stop", icon="stop", button_style="warning"),
        }
        self.controls = c
        self.progress = widgets.FloatProgress(value=0, min=0, max=1, description="progress")
        self.status = widgets.HTML()
        self.table_out = widgets.Output()
        self.detail_out = widgets.Output()
        self.error_out = widgets.Output()
        for k in ("sort_by", "ascending", "filter", "theta"):
            c[k].observe(self._on_filter, names="value")
        c["select"].observe(self._on_select, names="value")
        c["reestimate"].on_click(self._on_reestimate)
        c["mitigate"].on_click(self._on_mitigate)
        c["stop"].on_click(self._on_stop)
        super().__init__([
            widgets.HTML(f"<b>TestSGD</b> on <i>{html.escape(str(report.dataset_name))}</i>: "
                         f"{report.n_rule_sets} frequent rule sets, {report.elapsed:.2f} s, "
                         f"confidence {report.confidence:.4g}"),
            widgets.HBox([c["sort_by"], c["ascending"], c["filter"], c["theta"]]),
            self.table_out, c["select"],
            widgets.HBox([c["error"], c["reestimate"], c["mitigate"], c["stop"], self.progress]),
            self.status, self.error_out, self.detail_out,
        ])
        self._on_filter()

    # ------------------------------------------------------------------
    def _show_error(self, exc):
        with self.error_out:
            self.error_out.clear_output()
            print(f"{type(exc).__name__}: {exc}")
        self.status.value = f"<span style='color:#b00'>{html.escape(type(exc).__name__)}: {html.escape(str(exc))}</span>"

    def _apply_filter(self) -> pd.DataFrame:
        c = self.controls
        f = self.frame
        f = f[f["support"] >= c["theta"].value - 1e-12]
        text = c["filter"].value.strip()
        if text:
            for part in [t.strip() for t in text.split(",") if t.strip()]:
                f = f[f["rule_set"].str.contains(part, case=False, regex=False)]
        f = f.sort_values(c["sort_by"].value, ascending=c["ascending"].value, na_position="last", kind="stable")
        return f

    def _on_filter(self, change=None):
        try:
            f = self._apply_filter()
            self.filtered = f
            show = f.head(self.max_rows)
            with self.table_out:
                self.table_out.clear_output(wait=True)
                from IPython.display import HTML, display
                display(HTML(show.to_html(float_format=lambda v: f"{v:.3f}", max_rows=self.max_rows)))
            opts = [(f"{r.score:6.1%} ± {r.margin:.1%} | {r.rule_set}", int(i)) for i, r in show.iterrows()]
            self.controls["select"].options = opts
            self.status.value = f"{len(f)} of {len(self.frame)} rule sets match"
            if opts:
                self.controls["select"].value = opts[0][1]
            else:
                self.result = None
        except Exception as exc:  # shown, never swallowed
            self._show_error(exc)

    def _on_select(self, change=None):
        try:
            i = self.controls["select"].value
            if i is None:
                return
            name = self.frame.loc[i, "rule_set"]
            self.result = self.report.result_for(name)
            self._render_detail()
        except Exception as exc:
            self._show_error(exc)

    def group_composition(self, result=None) -> pd.DataFrame:
        """Size and composition (per sensitive feature) of the selected group in the data."""
        result = result or self.result
        table = as_table(self.tester.dataset) if self.tester is not None else None
        if table is None:
            raise ValueError("the report has no tester (data); run it with TestSGD(...).run()")
        mask = result.rule_set.mask(table.X)
        rows = []
        for f in self.report.frequent.sensitive:
            j = table.index_of(f)
            col = table.X[mask, j]
            cats = table.categories.get(f)
            if cats:
                vals = pd.Series(col).map(lambda v: cats.get(int(v), v))
            else:
                rules = self.report.frequent.rules.get(f, [])
                if rules and rules[0].kind == "range":
                    e = np.asarray(rules[0].edges)
                    b = bin_index(col, e)
                    vals = pd.Series([f"[{e[k]:g}, {e[k + 1]:g})" for k in b])
                else:
                    vals = pd.Series(col)
            vc = vals.value_counts()
            rows += [{"feature": f, "value": v, "count": int(n), "share": n / max(1, mask.sum())}
                     for v, n in vc.items()]
        return pd.DataFrame(rows)

    def sample_rows(self, n=5, result=None) -> pd.DataFrame:
        result = result or self.result
        ds = self.tester.dataset
        mask = result.rule_set.mask(as_table(ds).X)
        idx = np.flatnonzero(mask)[:n]
        frame = getattr(ds, "frame", None)
        if frame is not None and len(frame) == len(mask):
            return frame.iloc[idx]
        t = as_table(ds)
        return pd.DataFrame(t.X[idx], columns=t.feature_names)

    def _render_detail(self):
        import matplotlib.pyplot as plt
        from IPython.display import display

        from .plots import plot_rates

        r = self.result
        with self.detail_out:
            self.detail_out.clear_output(wait=True)
            fig, ax = plt.subplots(figsize=(4.5, 3.2))
            plot_rates(r, ax=ax)
            plt.show()
            plt.close(fig)
            n = int(round(r.support * as_table(self.tester.dataset).X.shape[0])) if self.tester else None
            print(f"group size: {n} rows ({r.support:.1%}); score {r.score:.1%} ± {r.margin:.1%}; "
                  f"rates in/out {r.rate_in:.1%} / {r.rate_out:.1%}; n={r.n_samples}; status {r.status}")
            if self.tester is not None:
                display(self.group_composition(r))
                display(self.sample_rows(5, r))

    def _on_reestimate(self, _=None):
        try:
            if self.result is None:
                raise ValueError("select a rule set first")
            if self.tester is None:
                raise ValueError("the report has no tester; run it with TestSGD(...).run()")
            err = float(self.controls["error"].value)
            key = (str(self.result.rule_set), err)
            if key not in self._cache:
                self.progress.value = 0
                self._cache[key] = self.tester.score(self.result.rule_set, error=err)
                self.progress.value = 1
            self.result = self._cache[key]
            self._render_detail()
            self.status.value = f"re-estimated with error {err:.3f}: margin {self.result.margin:.4f}"
        except Exception as exc:
            self._show_error(exc)

    def _on_stop(self, _=None):
        self._stop = True

    def _on_mitigate(self, _=None):
        try:
            if self.result is None:
                raise ValueError("select a rule set first")
            if self.tester is None:
                raise ValueError("the report has no tester; run it with TestSGD(...).run()")
            if self.test is None:
                raise ValueError("mitigation needs held-out labelled data: RuleSetBrowser(report, test=test)")
            if self._thread is not None and self._thread.is_alive():
                raise RuntimeError("a mitigation is already running; press stop or wait")
            self._stop = False
            self.progress.value = 0
            if self.background:
                import threading

                self._thread = threading.Thread(target=self._run_mitigation, daemon=True)
                self._thread.start()
            else:
                self._run_mitigation()
        except Exception as exc:
            self._show_error(exc)

    def wait(self, timeout=None):
        """Join a background mitigation (no-op when none is running)."""
        if self._thread is not None:
            self._thread.join(timeout)

    def _run_mitigation(self):
        try:
            t = self.tester

            def prog(done, total):
                self.progress.value = done / total

            self.mitigation = mitigate(
                t.model, t.dataset, self.test, self.result.rule_set, t.sensitive, amounts=self.mitigation_amounts,
                error=t.error, confidence=t.confidence, sample_thr=t.sample_thr, max_samples=t.max_samples,
                threshold=t.threshold, perturbation=t.perturbation, random_state=t.random_state,
                progress=prog, stop=lambda: self._stop)
            from matplotlib.figure import Figure

            # append_display_data works from a background thread (the Output context manager does not)
            fig = Figure(figsize=(5.5, 3.5))
            self.mitigation.plot(ax=fig.add_subplot())
            import io

            from IPython.display import Image

            buf = io.BytesIO()
            fig.savefig(buf, format="png", bbox_inches="tight", dpi=90)
            self.detail_out.outputs = ()
            self.detail_out.append_display_data(Image(data=buf.getvalue(), format="png"))
            self.detail_out.append_display_data(self.mitigation.to_frame())
            b = self.mitigation.after
            stopped = " (stopped)" if self._stop else ""
            self.status.value = stopped + ("mitigation: no amount kept the accuracy" if b is None else
                                 f"mitigation: best {int(b['n_added'])} samples, score "
                                 f"{self.mitigation.before['score']:.1%} -> {b['score']:.1%}")
        except Exception as exc:
            self._show_error(exc)
