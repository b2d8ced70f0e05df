"""What every tour section shares: figures drawn at >= 1000 px with >= 12 px text, the data and model
blocks of the report document, findings, and the section's table/figure conventions.  A slice's tour
section (its registration's ``tour`` entry, :class:`fairlens._registry.SliceSpec`) is a function
``section(budget, random_state) -> dict`` built with these helpers."""
from __future__ import annotations

import base64
import io

from .._base import to_jsonable
from ..report._schema import frame_sha256

_DPI = 100
_RC = {"font.size": 13, "axes.titlesize": 14, "axes.labelsize": 13, "xtick.labelsize": 12,
       "ytick.labelsize": 12, "legend.fontsize": 12, "figure.dpi": _DPI}



def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI)  # natural size: no cropping below 1000 px
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _figure(width=11.0, height=4.6, ncols=1):
    import matplotlib.pyplot as plt

    with plt.rc_context(_RC):
        fig, axes = plt.subplots(1, ncols, figsize=(width, height), dpi=_DPI,
                                 layout="constrained")
    return fig, axes


def _model_info(model, what, input_kind) -> dict:

    params = {}
    if hasattr(model, "get_params"):
        try:
            raw = model.get_params(deep=False)
        except Exception:  # a model without sklearn-style parameters: identity only
            raw = {}
        params = {k: to_jsonable(v) if isinstance(v, (int, float, str, bool, type(None),
                                                      tuple, list)) else type(v).__name__
                  for k, v in raw.items()}
    cls = type(model)
    return {"class": f"{cls.__name__} ({what})", "module": cls.__module__, "params": params,
            "source": None, "sha256": None, "input": input_kind}


def _data_info(ds, name) -> dict:

    return {"name": name, "source": None, "n_rows": int(ds.frame.shape[0]),
            "n_columns": int(ds.frame.shape[1]), "sha256": frame_sha256(ds.frame)}


def _finding(check, measure, label, value, *, group=None, ci=(None, None), unit=None,
             sentence="", verdict="info"):
    return {"check": check, "measure": measure, "label": label, "group": group,
            "value": None if value is None else float(value),
            "ci_low": None if ci[0] is None else float(ci[0]),
            "ci_high": None if ci[1] is None else float(ci[1]), "threshold": None,
            "verdict": verdict, "sentence": sentence, "unit": unit}



def _wrap(text, width=38):
    import textwrap

    return "\n".join(textwrap.wrap(str(text), width)) or str(text)


