"""``RuleSetBrowser``: browse, filter and act on a TestSGD report (ipywidgets 8).

Drawing: the detail figure is rendered to PNG with Agg (pyplot-free
``Figure``) by one latest-wins render worker and set as an
``ipywidgets.Image`` value, the list and the group description as
``HTML`` values; setting a widget value only sends a comm message, which is
safe from any thread, so a finished re-estimation or mitigation (both run as
background jobs that Stop interrupts) always shows up, and a stale selection
never overwrites a newer one (see :mod:`fairlens._widgets`).
"""
from __future__ import annotations

import html
import math

import ipywidgets as widgets
import numpy as np
import pandas as pd

from .._base import strict_keywords
from .._widgets import COMPILING, FairlensWidget, draw_png, kernels_cold, labelled, message_png, resolve_background
from . import _kernels
from ._mitigate import mitigate
from ._rules import as_table, bin_index
from .plots import plot_mitigation, plot_rates

__all__ = ["RuleSetBrowser"]

_SORTABLE = ["rank", "score", "fresh_score", "margin", "support", "rate_in", "rate_out", "n_samples", "n_rules",
             "n_out"]


def _rows(n):
    return f"{int(n)} row{'' if int(n) == 1 else 's'}"


def _small_note(r):
    """'⚠ rest: 1 row' when a side of the finding is below the run's minimum, else ''."""
    side = getattr(r, "small_side", "") or ""
    if side == "rest":
        return f"⚠ rest: {_rows(r.n_out)}"
    if side == "group":
        return f"⚠ group: {_rows(r.n_in)}"
    return ""


def _option_label(r):
    """One list entry: the fresh estimate with its bound where there is one, else the selection
    estimate, each labelled; the side; the whole rule set; a warning when one side is a handful
    of rows; how many equivalent rule sets (same rows) it stands for."""
    arrow = "▲" if r.side > 0 else "▼"
    if np.isfinite(r.fresh_score):
        est = f"fresh {r.fresh_score:5.1%} ± {r.fresh_margin:4.1%} {arrow} (sel. {r.score:.1%})"
    else:
        est = f"selection {r.score:5.1%} ± {r.margin:4.1%} {arrow}"
    note = _small_note(r)
    n_alias = len(r.aliases.split("; ")) if getattr(r, "aliases", "") else 0
    extra = (f" | {note}" if note else "") + (f" (+{n_alias} same rows)" if n_alias else "")
    return f"{est} | {r.rule_set}{extra}"


def _mitigation_text(res, stopped):
    """What a mitigation run found, true also after a Stop."""
    n = len(res.steps)
    if stopped and n == 0:
        return "stopped before the first retraining finished: no amount tried, nothing to compare"
    head = f"stopped after {n} amount(s): " if stopped else ""
    n_const = getattr(res, "n_constant", 0)
    const = (f"; {n_const} of the {n} retrained models predict the same decision for everybody (a collapse, "
             f"not a mitigation: accuracy = the base rate {res.before.get('base_rate', float('nan')):.3f} or "
             "its complement)" if n_const else "")
    b = res.after
    if b is None:
        return head + (f"none of the {n} amounts tried kept the accuracy (within "
                       f"{res.max_accuracy_drop:.1%}) with a non-constant model; score before "
                       f"{res.before['score']:.1%}") + const
    return head + (f"best {int(b['n_added'])} added samples: score {res.before['score']:.1%} -> {b['score']:.1%}, "
                   f"accuracy {res.before['accuracy']:.3f} -> {b['accuracy']:.3f}") + const


def _protected_of(tester):
    """The tester's protected columns (``protected``; ``sensitive`` before the rename)."""
    p = getattr(tester, "protected", None)
    return p if p is not None else tester.sensitive


class RuleSetBrowser(FairlensWidget):
    """A sortable, filterable view of a :class:`TestSGDReport`.

    The list shows the rule sets in the report's order (``sort_by="rank"``: the re-estimated
    top rule sets first, by their fresh estimate) with the score and its sign (which side is
    favoured) and margin, and for the top rule sets also the fresh re-estimate
    ("fresh 30.1% ± 4.9%": the selection estimate at the top of a ranking is biased upward,
    the fresh one is not); selecting one shows its two favourable rates
    with error bars, the group's size and composition and sample rows, next
    to the list. ``theta`` re-filters by support (up to the largest support
    present); buttons re-estimate the selected rule set with a tighter error
    threshold and run mitigation on it (needs ``test=`` data with labels),
    both in the background; Stop interrupts a mitigation between retraining
    steps and keeps the steps done. Rule sets that select exactly the same
    rows of the data are one finding (one entry, the others listed as aliases).
    A finding whose rest (or group) holds fewer rows than the run's ``min_side_rows`` is
    marked "⚠ rest: n rows" in the list and explained in the detail.

    Parameters
    ----------
    report : TestSGDReport
        From ``TestSGD(...).run()`` (it remembers its tester: model and data).
    test : Dataset, optional
        Held-out labelled data for the mitigation's accuracy.
    max_rows : int
        Rows shown in the list.
    mitigation_amounts : list of int, optional
        Numbers of generated rows the mitigation adds to the training data, one retraining
        each (``amounts`` of :func:`fairlens.testsgd.mitigate`). Default: 3 geometric steps
        from 50 to 10% of the training size, the ends of :func:`~fairlens.testsgd.mitigate`'s
        default of 6 and its middle, so that the button answers while a class waits (each
        amount is one retraining); pass a list for more.
    background : bool, default True
        Run re-estimation/mitigation and redraws in background threads
        (``wait()`` joins them); ``False`` runs everything synchronously.

    Attributes
    ----------
    controls : dict
        ``sort_by, ascending, filter, theta, select, error, reestimate, mitigate, stop, projector, export``.
    result : ScoreResult or None
        The selected rule set's (possibly re-estimated) result.
    filtered : pandas.DataFrame
        Rows currently listed (after merging equivalent rule sets).
    mitigation : MitigationResult or None

    Raises
    ------
    TypeError
        For a bad ``background`` (``use_threads=``, its old name, names ``background=``).

    Notes
    -----
    Test protocol: :meth:`wait`, :meth:`snapshot` (views ``list``, ``detail``).
    Every number is labelled with the estimate it is: the *selection estimate* (the
    score that ranked the rule set; biased upward at the top of a ranking), the *fresh
    estimate* (independent samples), a *re-estimate* (independent samples, tighter
    error) and the mitigation's own *before/after* estimates. :meth:`export` returns
    the figures, the numbers and a code cell reproducing the current settings.

    Examples
    --------
    >>> from fairlens.testsgd import TestSGD, RuleSetBrowser     # doctest: +SKIP
    >>> b = RuleSetBrowser(TestSGD(model, train, ["sex"]).run(), test=test)  # doctest: +SKIP
    """

    _export_name = "testsgd-rule-sets"

    @strict_keywords(renamed={"use_threads": "background"})
    def __init__(self, report, test=None, max_rows: int = 40, mitigation_amounts=None, background=None):
        background = resolve_background(background, "RuleSetBrowser")
        self.report = report
        self.tester = getattr(report, "tester", None)
        self.test = test
        self.max_rows = int(max_rows)
        self.mitigation_amounts = mitigation_amounts
        self.result = None
        self.mitigation = None
        self._mitigation_stopped = False
        self._cache = {}
        self.filtered = None
        self._filling = False
        self.frame, self.aliases, self.merged_by = self._build_frame(report)
        self.background = bool(background)
        theta0 = float(report.params.get("theta", 0.05))
        smax = float(self.frame["support"].max()) if len(self.frame) else theta0
        top = max(theta0, math.ceil(smax * 100) / 100)
        lay = widgets.Layout(width="270px")
        c = {
            "sort_by": labelled(widgets.Dropdown(options=_SORTABLE, value="rank", description="sort by",
                                                 layout=lay),
                                "Column the list is ordered by (rank: the report's order, top rule sets by "
                                "their fresh estimate)"),
            "ascending": labelled(widgets.Checkbox(value=False, description="ascending", indent=False,
                                                   layout=widgets.Layout(width="110px")),
                                  "Smallest first"),
            "filter": labelled(widgets.Text(value="", placeholder="e.g. sex=Male", description="rule contains",
                                            continuous_update=False, layout=lay),
                               "Only rule sets containing all these comma-separated words"),
            "theta": labelled(widgets.FloatSlider(value=theta0, min=theta0, max=top, step=0.01,
                                                  description="min support theta", continuous_update=False,
                                                  readout_format=".2f", layout=lay),
                              f"Only rule sets covering at least this share of the data (largest: {smax:.2f})"),
            "select": labelled(widgets.Select(options=[], rows=10, description="",
                                              layout=widgets.Layout(width="calc(100% - 8px)")),
                               "Rule sets: fresh estimate ± bound where re-estimated (else the selection "
                               "estimate), which side is favoured, the rules"),
            "error": labelled(widgets.FloatSlider(value=float(report.params.get("error", 0.05)) / 2, min=0.005,
                                                  max=0.2, step=0.005, description="re-estimate error",
                                                  continuous_update=False, readout_format=".3f", layout=lay),
                              "Error bound for the re-estimation (smaller: more samples, tighter margin)"),
            "reestimate": labelled(widgets.Button(description="re-estimate", icon="refresh"),
                                   "Score the selected rule set again with the error above (cached)"),
            "mitigate": labelled(widgets.Button(description="mitigate", icon="wrench"),
                                 "Retrain with generated samples for the selected group (needs test=)"),
            "stop": labelled(widgets.Button(description="stop", icon="stop", disabled=True),
                             "Stop the mitigation after the current retraining step (keeps the steps done)"),
        }
        self.progress = labelled(widgets.FloatProgress(value=0, min=0, max=1, description="progress",
                                                       layout=widgets.Layout(width="260px")),
                                 "Share of the mitigation steps done")
        self._init_protocol(["list", "detail", "info"], background=self.background, images=["detail"])
        c.update(self._common)
        self.controls = c
        self.list_html = widgets.HTML()
        self.info_html = widgets.HTML(layout=widgets.Layout(flex="1 1 300px", min_width="280px"))
        self.htmls = {"list": self.list_html, "info": self.info_html}
        self.status = self.status_html
        self.error_out = self.error_html
        for k in ("sort_by", "ascending", "filter", "theta"):
            c[k].observe(self._on_filter, names="value")
        c["select"].add_class("fl-list")  # projector mode: as wide as the column, 16 px (fairlens._widgets)
        c["select"].observe(lambda _: None if self._filling else self.request_render(), names="value")
        c["error"].observe(lambda _: self.request_render(), names="value")
        c["reestimate"].on_click(self._on_reestimate)
        c["mitigate"].on_click(self._on_mitigate)
        c["stop"].on_click(lambda _: self.stop())
        c["mitigate"].disabled = test is None
        merged = (f"; {sum(len(v) for v in self.aliases.values())} of them select the same rows as another "
                  f"and are listed as its aliases ({len(self.frame)} distinct groups)" if self.aliases else "")
        n_small = int((self.frame["small_side"] != "").sum()) if "small_side" in self.frame else 0
        min_side = report.params.get("min_side_rows")
        small = (f"; ⚠ {n_small} compare with a side of fewer than {min_side} rows" if n_small else "")
        head = widgets.HTML(f"<b>TestSGD</b> on <i>{html.escape(str(report.dataset_name))}</i>: "
                            f"{report.n_rule_sets} frequent rule sets{merged}{small}, {report.elapsed:.2f} s, "
                            f"confidence {report.confidence:.4g}")
        # the list spans the full width (whole rule names); the detail figure at natural size below
        # it, the group description beside the figure or under it when the column is narrow
        filters = widgets.HBox([c["sort_by"], c["ascending"], c["filter"], c["theta"]],
                               layout=widgets.Layout(flex_flow="row wrap"))
        actions = widgets.HBox([c["error"], c["reestimate"], c["mitigate"], c["stop"], self.progress,
                                self._toolbar()], layout=widgets.Layout(flex_flow="row wrap", align_items="center"))
        detail = widgets.HBox([self.images["detail"], self.info_html],
                              layout=widgets.Layout(flex_flow="row wrap", align_items="flex-start"))
        super().__init__([self._style_html, head, self.status_html, self.error_html, filters, c["select"],
                          self.list_html, actions, detail, self.export_html])
        self.add_class("fl-widget")
        self._on_filter()

    # ------------------------------------------------------------------ data
    def _build_frame(self, report):
        rep = report.merge_equivalent()  # rule sets selecting the same rows of D, merged
        frame = rep.to_frame().reset_index(drop=True)
        frame.insert(0, "rank", np.arange(len(frame)))
        aliases = {row.rule_set: row.aliases.split("; ") for row in frame.itertuples()
                   if row.aliases}
        how = "core"
        # the sign says which side is treated better: +1 group R, -1 its complement
        frame = frame.assign(side=np.sign(frame["signed_score"].fillna(0.0)))
        return frame, aliases, how

    @staticmethod
    def _side(rate_in, rate_out):
        if rate_in > rate_out:
            return "R favoured"
        if rate_in < rate_out:
            return "R disfavoured"
        return "equal"

    def _apply_filter(self) -> pd.DataFrame:
        c = self.controls
        f = self.frame
        f = f[f["support"] >= c["theta"].value - 1e-12]
        text = c["filter"].value.strip()
        if text:
            for part in [t.strip() for t in text.split(",") if t.strip()]:
                f = f[f["rule_set"].str.contains(part, case=False, regex=False)]
        by = c["sort_by"].value
        asc = c["ascending"].value if by != "rank" else not c["ascending"].value
        return f.sort_values(by, ascending=asc, na_position="last", kind="stable")

    def _on_filter(self, change=None):
        try:
            f = self._apply_filter()
            self.filtered = f
            show = f.head(self.max_rows)
            opts = [(_option_label(r), int(i)) for i, r in show.iterrows()]
            sel = self.controls["select"]
            old = sel.value
            self._filling = True
            try:
                sel.options = opts
                if opts:
                    sel.value = old if old in [o[1] for o in opts] else opts[0][1]
            finally:
                self._filling = False
            self.request_render()
        except Exception as exc:  # shown, never swallowed
            self._show_error(exc)

    # ------------------------------------------------------------------ views
    def _state(self):
        c = self.controls
        i = c["select"].value if c["select"].options else None
        return dict(sort_by=c["sort_by"].value, ascending=bool(c["ascending"].value), filter=c["filter"].value,
                    theta=float(c["theta"].value), index=i, error=float(c["error"].value),
                    n_match=0 if self.filtered is None else len(self.filtered),
                    mitigation=None if self.mitigation is None else id(self.mitigation))

    def _busy_text(self, state):
        return "updating the detail..."

    def _selected_result(self, state):
        i = state["index"]
        if i is None:
            return None
        name = self.frame.loc[i, "rule_set"]
        key = (name, state["error"])
        return self._cache.get(key) or self.report.result_for(name)

    def _compute_views(self, state):

        lp = {k: state[k] for k in ("sort_by", "ascending", "filter", "theta", "n_match")}
        r = self._selected_result(state)
        n_all = len(self.frame)
        views = {"list": {"params": dict(lp), "html": "<span class='fl-small'>"
                          f"{state['n_match']} of {n_all} rule sets match"
                          f"{' (first ' + str(self.max_rows) + ' listed)' if state['n_match'] > self.max_rows else ''}"
                          " &middot; ▲ group R favoured, ▼ R disfavoured &middot; <i>fresh</i>: estimate of "
                          "the top rule sets on independent samples; <i>sel.</i> (selection): the estimate that ranked "
                          "them (biased upward at the top of a ranking) &middot; ⚠ rest: the group is compared "
                          "with only that many rows of the data, not with a sizable 'everybody else'</span>"}}
        if r is None:
            msg = "No rule set matches the filter; loosen the filter or lower theta."
            self._extra = None
            views["detail"] = {"params": dict(lp, rule_set=None), "png": message_png(msg, (7.6, 3.4))}
            views["info"] = {"params": dict(lp, rule_set=None), "html": f"<i>{html.escape(msg)}</i>"}
            return views
        mit = self.mitigation if (self.mitigation is not None
                                  and str(self.mitigation.rule_set) == str(r.rule_set)) else None
        reest = (str(r.rule_set), state["error"]) in self._cache
        base = self.report.result_for(str(r.rule_set)) if reest else r
        fresh = getattr(base, "fresh", None)
        # the figure shows the best estimate there is: re-estimate > fresh > selection (labelled)
        shown, which = (r, f"re-estimate (error {state['error']:.3f})") if reest else (
            (fresh, "fresh estimate") if fresh is not None else (r, "selection estimate"))

        def draw(fig, axes):
            axes = np.atleast_1d(axes)
            plot_rates(shown, ax=axes[0])
            axes[0].set_title(f"{which}:\nscore {shown.score:.1%} ± {shown.margin:.1%}")
            if mit is not None:
                plot_mitigation(mit, ax=axes[1])
                axes[1].set_title("mitigation (its own samples)")
                axes[1].legend(loc="best", frameon=False)
            else:
                axes[1].set_axis_off()
                axes[1].text(0.5, 0.5, "mitigate: retrain with\ngenerated samples\nfor this group"
                             + ("" if self.test is not None else "\n(needs test=)"), ha="center", va="center",
                             color="0.4", transform=axes[1].transAxes)

        png = draw_png(draw, (7.6, 3.6), ncols=2)
        side = self._side(shown.rate_in, shown.rate_out)
        if getattr(r, "n_in", -1) >= 0:
            n_in, n_out = int(r.n_in), int(r.n_out)
        elif self.tester:
            n_all = as_table(self.tester.dataset).X.shape[0]
            n_in = int(round(r.support * n_all))
            n_out = n_all - n_in
        else:
            n_in = n_out = None
        parts = [f"<b class='fl-detail-rule'>{html.escape(str(r.rule_set))}</b>: {side}; group {n_in} rows "
                 f"({r.support:.1%}), everybody else {n_out} rows"]
        note = _small_note(r)
        if note:
            need = self.report.params.get("min_side_rows")
            parts.append(f"<span class='fl-small' style='color:#b35806'><b>{html.escape(note)}</b>: below the "
                         f"{need} rows this run asks of each side, so the score compares the group with a "
                         "handful of people (their perturbed copies), not with the rest of the population."
                         "</span>")
        est = ["<table class='fl-estimates fl-small'><tr><th style='text-align:left'>estimate"
               "</th><th>score ± bound</th><th>rate in R</th><th>outside</th><th>n</th></tr>"]

        def row(label, x, strong=False):
            b0, b1 = ("<b>", "</b>") if strong else ("", "")
            est.append(f"<tr><td>{label}</td><td>{b0}{x.score:.1%} ± {x.margin:.1%}{b1}</td>"
                       f"<td>{x.rate_in:.1%}</td><td>{x.rate_out:.1%}</td><td>{x.n_samples}</td></tr>")

        row("selection estimate (ranked the rule set; biased upward at the top)", base, strong=shown is base)
        if fresh is not None:
            row("fresh estimate (independent samples)", fresh, strong=shown is fresh)
        if reest:
            row(f"re-estimate (independent samples, error {state['error']:.3f})", r, strong=True)
        if mit is not None:
            bm = mit.before
            est.append(f"<tr><td>mitigation's own estimate before retraining</td><td>{bm['score']:.1%}"
                       + (f" ± {bm['margin']:.1%}" if 'margin' in bm else "") + "</td><td></td><td></td><td></td></tr>")
        est.append("</table>")
        parts.append("".join(est))
        al = self.aliases.get(str(r.rule_set))
        if al:
            parts.append(f"<span class='fl-small'>same rows as: {html.escape('; '.join(al[:5]))}"
                         f"{' ...' if len(al) > 5 else ''}</span>")
        if mit is not None:
            parts.append("mitigation: " + _mitigation_text(mit, self._mitigation_stopped).replace("->", "&rarr;"))
        if self.tester is not None:
            try:
                comp = self.group_composition(r)
                parts.append("<div style='display:flex;gap:12px'>"
                             + comp.to_html(index=False, float_format=lambda v: f"{v:.2f}") + "</div>")
            except Exception as exc:
                parts.append(f"<i>composition unavailable: {html.escape(str(exc))}</i>")
        self._extra = r
        dp = dict(lp, rule_set=str(r.rule_set), error=state["error"] if reest else None, side=side,
                  mitigation=mit is not None)
        views["detail"] = {"params": dict(dp), "png": png}
        views["info"] = {"params": dict(dp), "html": "<br>".join(parts)}
        return views

    def _view_key(self, state):
        i = state["index"]
        name = None if i is None else self.frame.loc[i, "rule_set"]
        reest = name is not None and (name, state["error"]) in self._cache
        return tuple(sorted({**state, "reest": reest, "error": state["error"] if reest else None}.items()))

    def _on_published(self, state, views):
        self.result = self._extra
        if not self.running:
            n_all = len(self.frame)
            self._status_text = f"{state['n_match']} of {n_all} rule sets match"  # the legend is under the list

    # ------------------------------------------------------------------ details
    def group_composition(self, result=None) -> pd.DataFrame:
        """Size and composition (per sensitive feature) of the selected group in the data.

        Parameters
        ----------
        result : ScoreResult, optional
            The rule set to describe (an item of the report); default: the selected one,
            ``result``.

        Returns
        -------
        DataFrame
            One row per (sensitive feature, value) among the rows the rule set selects:
            columns ``feature``, ``value`` (category name or bin), ``count`` and ``share`` (of
            the group's rows).

        Raises
        ------
        ValueError
            If the report has no tester (it was not produced by ``TestSGD(...).run()``).

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import RuleSetBrowser, TestSGD
        >>> data = load_german_credit()
        >>> k = data.index_of("duration")
        >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
        >>> report = TestSGD(model, data, protected=["sex", "age"], theta=0.2, n_bins=4,
        ...                  top_k=2, random_state=0).run()
        >>> browser = RuleSetBrowser(report, background=False)
        >>> str(browser.result.rule_set)
        'age<61'
        >>> browser.group_composition()[["feature", "value", "count"]]
          feature     value  count
        0     sex      male    656
        1     sex    female    299
        2     age  [19, 33)    483
        3     age  [33, 47)    349
        4     age  [47, 61)    123
        """
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
                vals = pd.Series(col).map(lambda v, cats=cats: cats.get(int(v), v))
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
        """The first rows of the data that a rule set selects (its members, readable).

        Parameters
        ----------
        n : int, default 5
            Number of rows.
        result : ScoreResult, optional
            The rule set (an item of the report); default: the selected one, ``result``.

        Returns
        -------
        DataFrame
            Up to ``n`` rows of the tester's data in the group: the readable frame of the
            dataset when it has one, else the encoded columns.

        Examples
        --------
        >>> from fairlens.datasets import load_german_credit
        >>> from fairlens.testsgd import RuleSetBrowser, TestSGD
        >>> data = load_german_credit()
        >>> k = data.index_of("duration")
        >>> model = lambda X: (X[:, k] < 24).astype(float)  # favourable: loans under 2 years
        >>> report = TestSGD(model, data, protected=["sex", "age"], theta=0.2, n_bins=4,
        ...                  top_k=2, random_state=0).run()
        >>> browser = RuleSetBrowser(report, background=False)
        >>> rows = browser.sample_rows(3)
        >>> len(rows), bool((rows["age"] < 61).all())
        (3, True)
        """
        result = result or self.result
        ds = self.tester.dataset
        mask = result.rule_set.mask(as_table(ds).X)
        idx = np.flatnonzero(mask)[:n]
        frame = getattr(ds, "frame", None)
        if frame is not None and len(frame) == len(mask):
            return frame.iloc[idx]
        t = as_table(ds)
        return pd.DataFrame(t.X[idx], columns=t.feature_names)

    # ------------------------------------------------------------------ actions
    def _set_running(self, running):
        c = self.controls
        c["reestimate"].disabled = running
        c["mitigate"].disabled = running or self.test is None
        c["stop"].disabled = not running
        c["stop"].button_style = "warning" if running else ""  # looks enabled only when it is

    def _on_reestimate(self, _=None):
        try:
            current = self._selected_result(self._state())
            if current is None:
                raise ValueError("select a rule set first")
            if self.tester is None:
                raise ValueError("the report has no tester; run it with TestSGD(...).run()")
            err = float(self.controls["error"].value)
            r = current
            key = (str(r.rule_set), err)
            if key in self._cache:
                self.request_render()
                return
            self._set_status(f"re-estimating with error {err:.3f}...", busy=True)

            def job(stop):
                self.progress.value = 0
                res = self.tester.score(r.rule_set, error=err, stop=stop)
                with self._committing(stop) as keep:
                    if not keep:
                        return
                    if res is None:  # stopped between sampling rounds: nothing half-estimated is kept
                        self._status_text = "re-estimate stopped: discarded (the fresh estimate shown is unchanged)"
                        return
                    self._cache[key] = res
                    self.progress.value = 1
                    self._status_text = (f"re-estimated with error {err:.3f}: score {res.score:.1%} ± "
                                         f"{res.margin:.1%} (independent samples)")

            self._start_job("re-estimate", job)
        except Exception as exc:
            self._show_error(exc)
            self._set_status(f"{type(exc).__name__}: {html.escape(str(exc))}", busy=False)

    def _on_mitigate(self, _=None):
        try:
            current = self._selected_result(self._state())
            if current is None:
                raise ValueError("select a rule set first")
            if self.tester is None:
                raise ValueError("the report has no tester; run it with TestSGD(...).run()")
            if self.test is None:
                raise ValueError("mitigation needs held-out labelled data: RuleSetBrowser(report, test=test)")

            rs = current.rule_set
            self.progress.value = 0
            self._set_status("mitigating (retraining)..." + (f" {COMPILING}" if kernels_cold(_kernels) else ""),
                             busy=True)
            self._start_job("mitigation", lambda stop: self._run_mitigation(rs, stop))
        except Exception as exc:
            self._show_error(exc)
            self._set_status(f"{type(exc).__name__}: {html.escape(str(exc))}", busy=False)

    def _run_mitigation(self, rule_set, stop):
        t = self.tester

        def prog(stage, done, total):
            if not stop.detached:
                self.progress.value = done / total

        amounts = self.mitigation_amounts
        if amounts is None:  # the widget's default: 3 retrainings (see the class docstring)
            n = int(np.asarray(getattr(t.dataset, "X", t.dataset)).shape[0])
            amounts = [int(a) for a in np.unique(np.geomspace(50, max(50, int(0.1 * n)), 3).astype(int))]
        res = mitigate(
            t.model, t.dataset, self.test, rule_set, _protected_of(t), amounts=amounts,
            error=t.error, confidence=t.confidence, sample_thr=t.sample_thr, max_samples=t.max_samples,
            threshold=t.threshold, perturbation=t.perturbation, random_state=t.random_state,
            progress=prog, stop=stop)
        with self._committing(stop) as keep:
            if not keep:
                return
            self.mitigation = res
            self._mitigation_stopped = stop.is_set()
            self._status_text = "mitigation: " + _mitigation_text(res, stop.is_set())

    def _stopped_text(self, name):
        if name == "mitigation":
            return ("mitigation stopped before its retraining step finished: no amount was tried to the end, "
                    "nothing to compare (the model is unchanged)")
        return "re-estimate stopped: discarded (the fresh estimate shown is unchanged)"

    # ------------------------------------------------------------------ export
    def _export_frame(self) -> pd.DataFrame:
        """The rule sets listed (filter, sort and theta applied), with every estimate labelled,
        the selected one flagged, and its re-estimate if one was made."""
        st = self._state()
        f = (self.filtered if self.filtered is not None else self._apply_filter()).head(self.max_rows)
        keep = [c for c in ("rank", "rule_set", "score", "margin", "fresh_score", "fresh_margin", "support",
                            "rate_in", "rate_out", "n_samples", "n_rules", "n_in", "n_out", "small_side",
                            "aliases") if c in f.columns]
        out = f[keep].rename(columns={"score": "selection_score", "margin": "selection_margin"}).copy()
        out["selected"] = out.index == st["index"]
        out["reestimate_error"] = np.nan
        out["reestimate_score"] = np.nan
        out["reestimate_margin"] = np.nan
        for (name, err), res in self._cache.items():
            m = out["rule_set"] == name
            if m.any() and err == st["error"]:
                out.loc[m, ["reestimate_error", "reestimate_score", "reestimate_margin"]] = (err, res.score,
                                                                                           res.margin)
        return out.reset_index(drop=True)

    def _export_code(self) -> str:
        st = self._state()
        by, asc = st["sort_by"], st["ascending"]
        asc = asc if by != "rank" else not asc
        lines = ["# Recomputes what RuleSetBrowser lists for these settings, without the widget.",
                 "# report is the TestSGD report you passed to the widget (TestSGD(...).run()).",
                 "import numpy as np",
                 "",
                 "frame = report.merge_equivalent().to_frame().reset_index(drop=True)",
                 "frame.insert(0, 'rank', np.arange(len(frame)))",
                 f"frame = frame[frame['support'] >= {st['theta']!r} - 1e-12]"]
        for part in [t.strip() for t in st["filter"].split(",") if t.strip()]:
            lines.append(f"frame = frame[frame['rule_set'].str.contains({part!r}, case=False, regex=False)]")
        lines.append(f"frame = frame.sort_values({by!r}, ascending={asc!r}, na_position='last', kind='stable')")
        lines.append(f"print(frame.head({self.max_rows}))")
        if st["index"] is not None:
            name = str(self.frame.loc[st["index"], "rule_set"])
            lines.append(f"selected = report.result_for({name!r})  # selection estimate (and .fresh)")
            if (name, st["error"]) in self._cache:
                lines.append(f"re = report.tester.score(selected.rule_set, error={st['error']!r})  "
                             "# re-estimate on independent samples")
        return "\n".join(lines) + "\n"
