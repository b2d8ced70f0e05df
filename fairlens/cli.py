"""Command line: ``fairlens --version``, ``fairlens tour [--quick] [--out PATH]``.

Arguments are checked before any analysis runs; a bad one is a one-line error and exit
code 2, as argparse does for a bad option.
"""
from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="fairlens",
        description="fairlens: attacks on explanations, fairness testing and robustness "
                    "certification.",
    )
    parser.add_argument("--version", action="version", version=f"fairlens {__version__}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command")
    tour = sub.add_parser("tour", help="run the four analyses on bundled data and write an "
                                       "HTML report")
    tour.add_argument("--quick", action="store_true", help="about a minute instead of a few")
    tour.add_argument("--out", default="fairlens-tour.html",
                      help="where to write the HTML report; its folder must exist "
                           "(default: %(default)s)")
    tour.add_argument("--seed", type=int, default=0, help="random_state of every step")
    tour.add_argument("--only", nargs="+", choices=["shuffle", "maft", "testsgd", "certify"],
                      help="run only these analyses")
    tour.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    sub.add_parser("version", help="print the version")
    args = parser.parse_args(argv)

    if args.command == "version":
        print(__version__)
        return 0
    if args.command != "tour":
        parser.print_help()
        return 2

    from .tour import check_report_path

    try:  # before any analysis runs
        args.out = str(check_report_path(args.out, name="--out"))
    except (TypeError, ValueError) as exc:
        tour.exit(2, f"{tour.prog}: error: {exc}\n")  # one line, argparse's exit code 2

    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd

    from .tour import run_tour

    report = run_tour(quick=args.quick, out=args.out, random_state=args.seed,
                      progress=not args.no_progress, only=args.only)
    with pd.option_context("display.max_colwidth", 110, "display.width", 200):
        print(report.summary().to_string(index=False))
    print(f"\nreport written to {args.out} ({report.elapsed:.0f} s)")
    for s in report.sections:
        if s.error is not None:
            print(f"\n--- {s.title} failed ---\n{s.error}", file=sys.stderr)
    return 0 if report.ok else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
