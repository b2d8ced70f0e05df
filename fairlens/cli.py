"""Command line: ``fairlens --version``, ``fairlens tour``, ``fairlens audit``, ``fairlens example``.

Arguments are checked before any analysis runs; a bad one (including an output path that
cannot be written, a seed out of range, a missing file) is one line on stderr and exit code 2,
never a traceback.

Exit codes: 0 = done (``audit``: the ``--fail-on`` gate passed), 1 = ``audit``: the gate failed
(``tour``: a section failed), 2 = bad usage or input, 3 = ``audit``: the gate could not be checked
(a measure it names was not computed).
"""
from __future__ import annotations

import argparse
import sys

from . import __version__
from ._registry import slices


class _OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (``prog: error: message``), exit code 2."""

    def error(self, message):  # noqa: D102 - argparse API
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _seed(text):
    """``--seed``/``--random-state``: an int in [0, 2**32 - 1], checked while parsing."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be an int in [0, 2**32 - 1]; got {text!r}") from None
    if not 0 <= value <= 2**32 - 1:
        raise argparse.ArgumentTypeError(f"must be an int in [0, 2**32 - 1]; got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The ``fairlens`` argument parser (subcommands ``tour``, ``audit``, ``example``,
    ``version``)."""
    parser = _OneLineParser(
        prog="fairlens",
        description="fairlens: attacks on explanations, fairness testing and robustness "
                    "certification.",
        epilog="exit codes: 0 done / gate passed, 1 gate failed, 2 bad usage or input, 3 gate not checked "
               "(a measure it names was not computed)",
    )
    parser.add_argument("--version", action="version", version=f"fairlens {__version__}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", parser_class=_OneLineParser)
    tour = sub.add_parser("tour", help="run the four analyses on bundled data and write a "
                                       "report")
    tour.add_argument("--quick", action="store_true", help="about a minute instead of a few")
    tour.add_argument("--out", default="fairlens-tour.html",
                      help="where to write the report: .html (self-contained page) or .json "
                           "(the report document); its folder must exist "
                           "(default: %(default)s)")
    tour.add_argument("--json", dest="json_out", default=None, metavar="PATH",
                      help="also write the JSON report document here (.json)")
    tour.add_argument("--seed", type=_seed, default=0,
                      help="random_state of every step, an int in [0, 2**32 - 1]")

    tour.add_argument("--only", nargs="+", choices=[s.name for s in slices() if s.tour is not None],
                      help="run only these analyses (the registered slices)")
    tour.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    from .audit import _cli as audit_cli  # deferred: import time: fairlens.audit loads only when used

    audit_cli.add_parsers(sub, seed_type=_seed)
    sub.add_parser("version", help="print the version")
    return parser


def _tour(args, tour_parser) -> int:
    from .tour import check_report_path  # deferred: import time: fairlens.tour loads only when used

    try:  # before any analysis runs
        args.out = str(check_report_path(args.out, name="--out"))
        if args.json_out is not None:
            args.json_out = str(check_report_path(args.json_out, name="--json",
                                                  suffixes={".json"}))
    except (TypeError, ValueError) as exc:
        tour_parser.exit(2, f"{tour_parser.prog}: error: {exc}\n")  # one line, exit code 2

    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd

    from .tour import run_tour  # deferred: import time: fairlens.tour loads only when used

    report = run_tour(quick=args.quick, random_state=args.seed,
                      progress=not args.no_progress, only=args.only)
    with pd.option_context("display.max_colwidth", 110, "display.width", 200):
        print(report.summary().to_string(index=False))
    written = []
    try:
        report.save(args.out)
        written.append(args.out)
        if args.json_out is not None:
            report.to_json(args.json_out)
            written.append(args.json_out)
    except (OSError, ValueError) as exc:
        print(f"{tour_parser.prog}: error: the report could not be written: {exc}",
              file=sys.stderr)
        return 2
    print(f"\nreport written to {' and '.join(written)} ({report.elapsed:.0f} s)")
    for s in report.sections:
        if s.error is not None:
            print(f"\n--- {s.title} failed ---\n{s.error}", file=sys.stderr)
    return 0 if report.ok else 1


def main(argv=None) -> int:
    """Run the command line; returns the exit code (0, 1, 2 or 3, see the module docstring)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    subparsers = parser._subparsers._group_actions[0].choices

    if args.command == "version":
        print(__version__)
        return 0
    if args.command == "tour":
        return _tour(args, subparsers["tour"])
    if args.command in ("audit", "example"):
        from .audit import _cli as audit_cli  # deferred: import time: fairlens.audit loads only when used

        return audit_cli.main(args, subparsers[args.command])
    parser.print_help()
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
