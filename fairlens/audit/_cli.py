"""``fairlens audit`` and ``fairlens example``: audit a model file on a table file.

Everything the user gives is checked before any analysis runs, and a problem is one line on
stderr with exit code 2 (never a traceback): a missing, unreadable or wrong-format file, a
target that is not binary, a favourable value that does not occur, an absent protected column,
a model whose feature names do not match the table, a pickle without ``--trust-pickle``, a
skops file with types skops does not trust without ``--trust-types``, an output path that
cannot be written, an unreadable ``--fail-on`` gate.

Exit codes: 0 = the audit ran and the gate passed (or no gate was given), 1 = the gate failed,
2 = bad usage or input, 3 = the gate could not be checked (a measure it names was not computed:
its check did not run, was cut short before it, or does not apply).

Model files (by extension)
    ``.skops``: scikit-learn models saved with ``skops.io.dump``.  skops rebuilds the objects
    without unpickling; a type that skops does not trust by default is accepted only if its name
    resolves to a CLASS DEFINED in scikit-learn (``module.Class`` where the module is a
    scikit-learn module and the class's own ``__module__`` and ``__qualname__`` are that module and
    name: never a function, a re-export or an attribute reached through another module); anything
    else is listed and refused unless ``--trust-types``.
    ``.json``/``.ubj``: XGBoost (``XGBClassifier.save_model``).
    ``.txt``/``.lgb``: LightGBM text model (``booster.save_model``).
    ``.pkl``/``.pickle``/``.joblib``: only with ``--trust-pickle``: unpickling runs arbitrary
    code from the file, so load only files you made yourself.
Table files
    ``.csv`` (also ``.csv.gz``), ``.parquet``/``.pq`` (needs pyarrow).
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..datasets import load_adult
from ..report._output import check_output_path, write_text_atomic
from ..report._render import format_number, render_html
from ..report._schema import check_ids, sha256_file
from . import audit
from ._gate import parse_fail_on

__all__ = ["add_parsers", "main", "load_table", "load_model", "write_example", "CliError"]



def _check_ids():
    """The audit's check ids: the group check and every registered slice's (:mod:`fairlens._registry`)."""

    return check_ids()

TABLE_SUFFIXES = (".csv", ".csv.gz", ".parquet", ".pq")
MODEL_SUFFIXES = {".skops": "skops", ".json": "xgboost", ".ubj": "xgboost", ".txt": "lightgbm",
                  ".lgb": "lightgbm", ".pkl": "pickle", ".pickle": "pickle",
                  ".joblib": "pickle"}


class CliError(Exception):
    """A bad input of the command line: one line for the user, exit code 2."""


# ----------------------------------------------------------------------------- parsers
def add_parsers(sub, *, seed_type=int):
    """Add the ``audit`` and ``example`` subcommands to ``sub`` (argparse subparsers)."""
    a = sub.add_parser(
        "audit", help="audit your model on your table and write a report",
        description="Audit a model file on a table file: group fairness with intervals, "
                    "individual discrimination (MAFT), subgroup discrimination (TestSGD), "
                    "explanations and robustness. Exit code 0 = the --fail-on gate passed, "
                    "1 = it failed, 2 = bad usage or input.")
    a.add_argument("--data", required=True, metavar="FILE",
                   help="the table: .csv or .parquet, one row per person, with the target "
                        "and protected columns")
    a.add_argument("--target", required=True, metavar="COLUMN",
                   help="the outcome column (binary)")
    a.add_argument("--favourable", required=True, metavar="VALUE",
                   help="the target value that is the favourable outcome, e.g. '>50K' or 1")
    a.add_argument("--protected", required=True, nargs="+", metavar="COLUMN",
                   help="the protected column(s), e.g. --protected sex race")
    a.add_argument("--model", required=True, metavar="FILE",
                   help="the fitted binary classifier: .skops, XGBoost .json/.ubj, LightGBM "
                        ".txt, or .pkl/.joblib with --trust-pickle")
    a.add_argument("--out", default="fairlens-audit.html", metavar="FILE.html",
                   help="the HTML report (default: %(default)s); its folder must exist")
    a.add_argument("--json", dest="json_out", default=None, metavar="FILE.json",
                   help="also write the report document as JSON")
    a.add_argument("--fail-on", action="append", default=None, metavar="GATE",
                   help="gate, e.g. 'demographic_parity_difference>0.1,"
                        "abs(statistical_parity_difference)>0.1'; repeated flags combine. Exit "
                        "code 1 when the gate fails (see --burden), 3 when a measure it names "
                        "was not computed")
    a.add_argument("--burden", choices=("violation", "compliance", "estimate"), default="violation",
                   help="burden of proof of the gate (named in the report): 'violation' fails only "
                        "where the data show a condition holds; 'compliance' passes only where "
                        "they show none holds; 'estimate' compares point estimates (no error "
                        "control). Default: %(default)s")
    a.add_argument("--privileged", action="append", default=None, metavar="COLUMN=VALUE",
                   help="reference group of the signed measures for COLUMN (default: every group "
                        "against everyone else); repeat for several columns")
    a.add_argument("--checks", nargs="+", default=None, metavar="CHECK",
                   help=f"run only these checks (default: all that apply): "
                        f"{', '.join(_check_ids())}")
    a.add_argument("--time-limit", "--time-budget", dest="time_limit", type=float, default=60.0,
                   metavar="SECONDS",
                   help="seconds of wall time for the whole command, shared by the checks "
                        "(audit(time_limit=...); --time-budget is the older spelling) "
                        "(default: %(default)s)")
    a.add_argument("--n-jobs", type=int, default=None, metavar="N",
                   help="parallel workers (same findings at any value)")
    a.add_argument("--random-state", type=seed_type, default=0, metavar="SEED",
                   help="seed of every random step, an int in [0, 2**32 - 1] (default: 0)")
    a.add_argument("--trust-pickle", action="store_true",
                   help="allow loading a pickle/joblib model: this RUNS CODE from the file")
    a.add_argument("--trust-types", action="store_true",
                   help="load a .skops model even if it holds types skops does not trust by "
                        "default (they are listed when refused)")
    a.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    e = sub.add_parser(
        "example", help="write an example table and model to try `fairlens audit` offline",
        description="Write example.csv (4,000 rows of the bundled UCI Adult census table) and "
                    "model.skops (a scikit-learn pipeline trained on it) into DIR, and print "
                    "the audit command to run on them.")
    e.add_argument("dir", metavar="DIR", help="folder to write into (created if missing)")
    return a, e


# ------------------------------------------------------------------------------ inputs
def _file(path, what, flag):
    p = Path(path).expanduser()
    if not p.exists():
        raise CliError(f"{flag}: {str(path)!r} does not exist")
    if p.is_dir():
        raise CliError(f"{flag}: {str(path)!r} is a folder, not a {what} file")
    if not os.access(p, os.R_OK):
        raise CliError(f"{flag}: {str(path)!r} is not readable (permission denied)")
    return p


def load_table(path):
    """Read a CSV or Parquet table; raises :class:`CliError` with one line on any problem.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    pandas.DataFrame
    """
    import pandas as pd

    p = _file(path, "table", "--data")
    name = p.name.lower()
    try:
        if name.endswith((".parquet", ".pq")):
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise CliError("--data: reading Parquet needs pyarrow: pip install "
                               "'fairlens-lab[audit]'") from None
            frame = pd.read_parquet(p)
        elif name.endswith((".csv", ".csv.gz")):
            frame = pd.read_csv(p)
        else:
            raise CliError(f"--data: {p.name!r} is neither .csv nor .parquet; save the table "
                           "as CSV or Parquet")
    except CliError:
        raise
    except UnicodeDecodeError:
        raise CliError(f"--data: {p.name!r} is not a text CSV file (not UTF-8); is it really "
                       "a CSV?") from None
    except Exception as exc:  # pandas/pyarrow parse errors: many types, one line
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CliError(f"--data: {p.name!r} cannot be read as "
                       f"{'Parquet' if 'parq' in name or name.endswith('.pq') else 'CSV'}: "
                       f"{msg}") from None
    if frame.shape[0] == 0 or frame.shape[1] < 2:
        raise CliError(f"--data: {p.name!r} has {frame.shape[0]} rows and {frame.shape[1]} "
                       "columns; a table with a target and features is needed")
    return frame


def _coerce_favourable(values, text):
    """The value of the target column that ``text`` (from the command line) names."""
    for v in values:
        if str(v) == text:
            return v
    for v in values:  # 1 vs 1.0, True vs true
        if isinstance(v, (bool, np.bool_)) and text.lower() in ("true", "false"):
            if bool(v) == (text.lower() == "true"):
                return v
        elif isinstance(v, (int, float, np.integer, np.floating)):
            try:
                if float(text) == float(v):
                    return v
            except ValueError:
                pass
    return None


def check_table(frame, target, favourable, protected):
    """Check the target, favourable value and protected columns; return the favourable value
    as it occurs in the table."""
    import pandas as pd

    cols = [str(c) for c in frame.columns]
    if target not in frame.columns:
        raise CliError(f"--target: {target!r} is not a column of the table; columns: "
                       f"{', '.join(cols[:30])}")
    labels = frame[target]
    if labels.isna().any():
        raise CliError(f"--target: {target!r} has {int(labels.isna().sum())} missing values; "
                       "fill or drop those rows first")
    values = list(pd.unique(labels))
    if len(values) != 2:
        shown = ", ".join(repr(v.item() if isinstance(v, np.generic) else v)
                          for v in values[:6]) + (", ..." if len(values) > 6 else "")
        raise CliError(f"--target: {target!r} must be binary (two outcomes); it has "
                       f"{len(values)} value(s): {shown}")
    fav = _coerce_favourable(values, favourable)
    if fav is None:
        raise CliError(f"--favourable: {favourable!r} does not occur in {target!r}; its values "
                       f"are {', '.join(repr(str(v)) for v in values)}")
    missing = [p for p in protected if p not in frame.columns]
    if missing:
        raise CliError(f"--protected: {', '.join(map(repr, missing))} "
                       f"{'is not a column' if len(missing) == 1 else 'are not columns'} of the "
                       f"table; columns: {', '.join(cols[:30])}")
    if target in protected:
        raise CliError(f"--protected: the target {target!r} cannot also be protected")
    return fav.item() if isinstance(fav, np.generic) else fav


class LightGBMTextModel:
    """A LightGBM text model (``booster.save_model``) as a binary classifier.

    Attributes
    ----------
    booster_ : lightgbm.Booster
    classes_ : ndarray, ``[0, 1]``
    feature_names_in_ : ndarray of str
    """

    def __init__(self, booster):
        self.booster_ = booster
        self.classes_ = np.array([0, 1])
        self.feature_names_in_ = np.array(booster.feature_name(), dtype=object)
        self.n_features_in_ = len(self.feature_names_in_)

    def predict_proba(self, X):
        """``(n, 2)`` class probabilities."""
        p = np.asarray(self.booster_.predict(X), dtype=float).reshape(-1)
        return np.column_stack([1 - p, p])

    def predict(self, X):
        """Class labels (0/1) at probability 0.5."""
        return (self.predict_proba(X)[:, 1] >= 0.5).astype(int)

    def get_params(self, deep=False):
        """The booster's parameters as recorded in the model file."""
        return {k: v for k, v in (getattr(self.booster_, "params", {}) or {}).items()
                if isinstance(v, (int, float, str, bool))}


def sklearn_class(name: str):
    """The class a skops type name stands for, if it is a class DEFINED in scikit-learn; else None.

    ``name`` must be ``module.Class`` where ``module`` is a scikit-learn module (found by the import
    system under the ``sklearn`` package, not an attribute of another module), ``Class`` is in that
    module's own namespace, is a class (not a function, method or instance), and its ``__module__``
    and ``__qualname__`` are exactly that module and name (so a re-export such as a standard-library
    class imported into a scikit-learn module is refused).

    Parameters
    ----------
    name : str
        A type name as :func:`skops.io.get_untrusted_types` lists it.

    Returns
    -------
    type or None
    """
    import importlib
    import importlib.util

    module_name, _, attr = name.rpartition(".")
    parts = module_name.split(".")
    if not module_name or parts[0] != "sklearn" or not all(p.isidentifier() for p in [*parts, attr]):
        return None
    try:
        spec = importlib.util.find_spec(module_name)
    except (ImportError, ValueError, AttributeError):
        return None
    if spec is None or spec.origin is None or not spec.name == module_name:
        return None
    try:
        module = importlib.import_module(module_name)
    except Exception:  # noqa: BLE001 - an unimportable name is not a scikit-learn class
        return None
    obj = vars(module).get(attr)
    if not isinstance(obj, type):
        return None
    if obj.__module__ != module_name or obj.__qualname__ != attr:
        return None
    return obj


def load_model(path, *, trust_pickle=False, trust_types=False):
    """Load a model file by extension (see the module docstring).

    Parameters
    ----------
    path : str or os.PathLike
    trust_pickle : bool
        Allow pickle/joblib files (unpickling runs code from the file).
    trust_types : bool
        Load a ``.skops`` file even when it holds types outside skops' trusted set.

    Returns
    -------
    object
        The fitted model.

    Raises
    ------
    CliError
        One line for a missing, unreadable, refused or wrong-format file.
    """
    p = _file(path, "model", "--model")
    kind = MODEL_SUFFIXES.get(p.suffix.lower())
    if kind is None:
        raise CliError(f"--model: {p.name!r} has an unknown extension; use .skops "
                       "(scikit-learn, skops.io.dump), .json/.ubj (XGBoost), .txt (LightGBM), "
                       "or .pkl/.joblib with --trust-pickle")
    if kind == "pickle":
        if not trust_pickle:
            raise CliError(f"--model: {p.name!r} is a pickle: loading it runs any code it "
                           "contains. Save the model with skops (skops.io.dump) instead, or "
                           "pass --trust-pickle if you made this file yourself")
        import joblib

        try:
            return joblib.load(p)
        except Exception as exc:
            raise CliError(f"--model: {p.name!r} cannot be unpickled: "
                           f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                           ) from None
    if kind == "skops":
        try:
            import skops.io as sio
        except ImportError:
            raise CliError("--model: reading .skops needs skops: pip install "
                           "'fairlens-lab[audit]'") from None
        try:
            untrusted = sio.get_untrusted_types(file=p)
        except Exception as exc:
            raise CliError(f"--model: {p.name!r} is not a readable skops file: "
                           f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                           ) from None
        # classes defined in scikit-learn (e.g. sklearn.tree._tree.Tree) are rebuilt by skops
        # without running code from the file; anything else needs the user's word
        unknown = [t for t in untrusted if sklearn_class(t) is None]
        if unknown and not trust_types:
            raise CliError(f"--model: {p.name!r} holds types that are neither skops' trusted "
                           f"types nor classes defined in scikit-learn: {', '.join(unknown)}; "
                           "loading them could run code: check them and pass --trust-types "
                           "to load anyway")
        try:
            return sio.load(p, trusted=untrusted or None)
        except Exception as exc:
            raise CliError(f"--model: {p.name!r} cannot be loaded with skops: "
                           f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                           ) from None
    if kind == "xgboost":
        try:
            import xgboost
        except ImportError:
            raise CliError("--model: reading an XGBoost model needs xgboost: pip install "
                           "'fairlens-lab[boost]'") from None
        model = xgboost.XGBClassifier()
        try:
            model.load_model(p)
        except Exception as exc:
            raise CliError(f"--model: {p.name!r} is not an XGBoost model file: "
                           f"{str(exc).strip().splitlines()[0][:200] if str(exc) else ''}"
                           ) from None
        if getattr(model, "n_classes_", 2) != 2:
            raise CliError(f"--model: {p.name!r} is a {model.n_classes_}-class XGBoost model; "
                           "the audit needs a binary classifier")
        return model
    try:
        import lightgbm
    except ImportError:
        raise CliError("--model: reading a LightGBM model needs lightgbm: pip install "
                       "'fairlens-lab[boost]'") from None
    try:
        booster = lightgbm.Booster(model_file=str(p))
    except Exception as exc:
        raise CliError(f"--model: {p.name!r} is not a LightGBM text model: "
                       f"{str(exc).strip().splitlines()[0][:200] if str(exc) else ''}") from None
    k = int(booster.num_model_per_iteration())
    objective = str((getattr(booster, "params", {}) or {}).get("objective", ""))
    if k != 1 or objective.startswith(("multiclass", "regression", "lambdarank", "rank_xendcg")):
        what = f"a {k}-class LightGBM model" if k != 1 else f"a LightGBM model with objective {objective!r}"
        raise CliError(f"--model: {p.name!r} is {what}; the audit needs a binary classifier")
    return LightGBMTextModel(booster)


def model_feature_names(model):
    """The column names a model was fitted on, or None when it does not record them."""
    names = getattr(model, "feature_names_in_", None)
    if names is None and hasattr(model, "get_booster"):
        try:
            names = model.get_booster().feature_names
        except Exception:  # not fitted / no names
            names = None
    if names is None:
        return None
    return [str(n) for n in names]


def check_features(model, frame, target, model_name):
    """The model's feature names must all be columns of the table (the target excluded)."""
    names = model_feature_names(model)
    features = [str(c) for c in frame.columns if c != target]
    if names is None:
        n = getattr(model, "n_features_in_", None)
        if n is not None and int(n) != len(features):
            raise CliError(f"--model: {model_name!r} expects {int(n)} features but the table "
                           f"has {len(features)} columns besides the target {target!r}")
        return
    missing = [n for n in names if n not in features]
    if missing:
        shown = ", ".join(map(repr, missing[:8])) + (", ..." if len(missing) > 8 else "")
        raise CliError(f"--model: {model_name!r} was fitted on columns the table does not have: "
                       f"{shown}")
    if target in names:
        raise CliError(f"--model: {model_name!r} takes the target {target!r} as a feature")


# -------------------------------------------------------------------------------- audit
def _process_age():
    """Seconds since this process started (Linux ``/proc``), or None where that is not available."""
    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            start_ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as fh:
            uptime = float(fh.read().split()[0])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return None


#: Seconds of the budget kept for writing the report (rendering the figures and the HTML).
RENDER_RESERVE = 3.0


def _audit(args) -> int:
    import time

    age = _process_age()
    t_start = time.perf_counter() - (age or 0.0)   # the budget bounds the whole command, start-up included

    # 1. outputs, the gate, checks: no file is read and nothing runs before these hold
    try:
        out = check_output_path(args.out, "--out", suffixes={".html", ".htm"},
                                default_name="fairlens-audit.html")
        json_out = (check_output_path(args.json_out, "--json", suffixes={".json"},
                                      default_name="fairlens-audit.json")
                    if args.json_out is not None else None)
    except (TypeError, ValueError) as exc:
        raise CliError(str(exc)) from None
    if json_out is not None and out.resolve() == json_out.resolve():
        raise CliError("--json: the same file as --out; give two different files")
    for flag, given in (("--out", out), ("--json", json_out)):
        for src_flag, src in (("--data", args.data), ("--model", args.model)):
            if given is not None and Path(src).expanduser().resolve() == given.resolve():
                raise CliError(f"{flag}: {str(given)!r} is the {src_flag} file; the report "
                               "would overwrite it")
    if args.fail_on is not None:

        try:
            parse_fail_on(list(args.fail_on))
        except (TypeError, ValueError) as exc:
            raise CliError(f"--fail-on: {str(exc).removeprefix('fail_on: ')}") from None
    privileged = None
    if args.privileged:
        privileged = {}
        for item in args.privileged:
            col, sep, val = item.partition("=")
            if not sep or not col:
                raise CliError(f"--privileged: {item!r} is not COLUMN=VALUE, e.g. --privileged sex=Male")
            if col not in args.protected:
                raise CliError(f"--privileged: {col!r} is not one of the --protected columns "
                               f"{', '.join(args.protected)}")
            privileged[col] = val
    if args.checks is not None:
        checks = [c for part in args.checks for c in part.split(",") if c]
        bad = [c for c in checks if c not in _check_ids()]
        if bad or not checks:
            raise CliError(f"--checks: unknown check(s) {', '.join(map(repr, bad))}; choose "
                           f"from {', '.join(_check_ids())}")
        args.checks = checks
    if not (args.time_limit > 0 and np.isfinite(args.time_limit)):
        raise CliError(f"--time-limit (--time-budget): must be a positive number of seconds; got "
                       f"{args.time_limit}")
    if args.n_jobs is not None and args.n_jobs == 0:
        raise CliError("--n-jobs: must be a positive int or negative (-1 = all cores); got 0")

    # 2. the table, the model, and whether they fit together
    frame = load_table(args.data)
    favourable = check_table(frame, args.target, args.favourable, args.protected)
    model = load_model(args.model, trust_pickle=args.trust_pickle,
                       trust_types=args.trust_types)
    model_path = Path(args.model).expanduser()
    check_features(model, frame, args.target, model_path.name)
    if not hasattr(model, "predict_proba"):
        raise CliError(f"--model: {model_path.name!r} ({type(model).__name__}) has no "
                       "predict_proba; the audit needs a classifier's probabilities")
    data_path = Path(args.data).expanduser()

    # 3. the audit
    import matplotlib

    matplotlib.use("Agg")

    # the budget bounds the whole command: start-up and reading the files came out of it, and a few
    # seconds are kept for writing the report
    budget = max(1.0, args.time_limit - (time.perf_counter() - t_start) - RENDER_RESERVE)
    try:
        report = audit(model, frame, target=args.target, protected=list(args.protected),
                       favourable=favourable, checks=args.checks, time_limit=budget,
                       n_jobs=args.n_jobs, random_state=args.random_state,
                       progress=not args.no_progress, fail_on=args.fail_on, burden=args.burden,
                       privileged=privileged,
                       model_source={"name": model_path.name,
                                     "sha256": sha256_file(model_path)},
                       data_source={"name": data_path.name, "sha256": sha256_file(data_path)})
    except (TypeError, ValueError) as exc:  # refused input (the engine validates first)
        raise CliError(str(exc).strip().splitlines()[0]) from None

    # 4. the report and the gate
    import json


    doc = report.to_dict()
    try:
        write_text_atomic(out, render_html(doc))
        if json_out is not None:
            write_text_atomic(json_out, json.dumps(doc, indent=1, allow_nan=False,
                                                   ensure_ascii=False))
    except OSError as exc:
        raise CliError(f"the report could not be written: {exc}") from None

    for f in doc["findings"]:  # one line per finding, in the report's number format
        value = format_number(f["value"], f.get("unit"))
        group = "" if f["group"] is None else f" [{f['group']}]"
        print(f"{f['verdict']:>14}  {f['label']}{group}: {value}")
    print(f"\n{doc['verdict']['sentence']}")
    if doc["verdict"]["rule"]:
        print(doc["verdict"]["rule"])
    print(f"report written to {out}" + (f" and {json_out}" if json_out is not None else ""))
    if args.fail_on is None:
        return 0
    passed = doc["verdict"]["passed"]
    word = {True: "passed", False: "FAILED", None: "NOT CHECKED"}[passed]
    print(f"gate {word} (burden of proof: {args.burden}): {', '.join(doc['verdict']['fail_on'])}")
    return {True: 0, False: 1, None: 3}[passed]


# ------------------------------------------------------------------------------ example
def write_example(folder, *, n_rows=4000, random_state=0):
    """Write ``example.csv`` and ``model.skops`` into ``folder`` for a first offline audit.

    The table is ``n_rows`` rows of the bundled UCI Adult census table (readable values,
    target ``income``, favourable ``>50K``); the model is a scikit-learn pipeline (one-hot
    encoding + random forest) fitted on it and saved with skops.

    Parameters
    ----------
    folder : str or os.PathLike
        Created if missing.
    n_rows : int
    random_state : int

    Returns
    -------
    (pathlib.Path, pathlib.Path)
        The table and the model file.
    """
    import pandas as pd
    import skops.io as sio
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder


    folder = Path(folder).expanduser()
    folder.mkdir(parents=True, exist_ok=True)
    adult = load_adult(download=False)
    frame = adult.frame.sample(n=min(n_rows, len(adult.frame)), random_state=random_state)
    table = folder / "example.csv"
    frame.to_csv(table, index=False)
    frame = pd.read_csv(table)  # fit on the table exactly as `fairlens audit` will read it
    target = adult.target
    X = frame.drop(columns=[target])
    y = frame[target]
    categorical = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    pre = ColumnTransformer([("categories", OneHotEncoder(handle_unknown="ignore"),
                              categorical)], remainder="passthrough")
    model = Pipeline([("encode", pre),
                      ("forest", RandomForestClassifier(n_estimators=60, max_depth=8,
                                                        min_samples_leaf=5,
                                                        random_state=random_state))])
    model.fit(X, y)
    model_file = folder / "model.skops"
    sio.dump(model, model_file)
    return table, model_file


def _example(args) -> int:
    folder = Path(args.dir).expanduser()
    if folder.exists() and not folder.is_dir():
        raise CliError(f"DIR: {str(folder)!r} is a file, not a folder")
    try:
        table, model_file = write_example(folder)
    except ImportError as exc:
        raise CliError(f"example: needs {exc.name}: pip install 'fairlens-lab[audit]'") \
            from None
    except OSError as exc:
        raise CliError(f"DIR: cannot write into {str(folder)!r}: {exc.strerror or exc}") \
            from None

    fav = load_adult(download=False).label_names[1].split()[-1]
    print(f"wrote {table} and {model_file}\nnow run:\n"
          f"  fairlens audit --data {table} --model {model_file} --target income "
          f"--favourable '{fav}' --protected sex race --out {folder / 'report.html'} "
          "--fail-on 'demographic_parity_difference>0.1'")
    return 0


def main(args, parser) -> int:
    """Run ``fairlens audit`` or ``fairlens example`` (parsed ``args``); returns the exit
    code. A :class:`CliError` becomes one line on stderr and exit code 2."""
    try:
        if args.command == "example":
            return _example(args)
        return _audit(args)
    except CliError as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    except KeyboardInterrupt:
        parser.exit(130, f"{parser.prog}: interrupted\n")
