"""Build and grade every exercise with otter-grader, locally (no Docker).

For each ``exercises/<name>/<name>.ipynb`` (an otter-assign master notebook: solutions and
hidden tests):

1. ``otter assign`` splits it into ``exercises/_build/<name>/student/<name>.ipynb`` (what students
   get: no solutions, public tests only) and ``exercises/_build/<name>/autograder/`` (the solution
   notebook and the autograder zip with every test, hidden ones included);
2. ``otter run`` grades the **solution** notebook, which must get full marks, and the **blank
   student** notebook, which must get zero (every test, public or hidden, fails on a blank);
3. the generated student notebook must be the one committed as
   ``exercises/<name>/student/<name>.ipynb`` (``--update`` rewrites the committed copies).

``otter run`` grades in this Python environment, without Docker (``otter grade`` would start a
container). Exit status 0 only if every exercise passes all three checks.

Usage: ``python exercises/check_exercises.py [--update] [--jobs N] [NAME ...]``
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
BUILD = HERE / "_build"


def otter(*args, cwd):
    """Run the otter CLI of this environment; return (exit code, combined output)."""
    exe = Path(sys.executable).with_name("otter")
    cmd = [str(exe) if exe.exists() else "otter", *map(str, args)]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


def score(results_json: Path):
    """(points, possible) from otter's results.json (the per-question entries)."""
    data = json.loads(results_json.read_text())
    got = possible = 0.0
    for test in data.get("tests", []):
        if test.get("max_score") is None:      # "Public Tests" summary entry: no points
            continue
        got += float(test.get("score") or 0.0)
        possible += float(test["max_score"])
    return got, possible


def sources(path: Path):
    nb = nbformat.read(path, as_version=4)
    return [(c.cell_type, c.source) for c in nb.cells]


def check(name: str, update: bool) -> tuple[bool, str]:
    master = HERE / name / f"{name}.ipynb"
    out = BUILD / name
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    t0 = time.perf_counter()
    rc, log = otter("assign", master, out, cwd=HERE / name)
    if rc != 0:
        return False, f"otter assign failed:\n{log}"
    zips = sorted((out / "autograder").glob(f"{name}-autograder_*.zip"))
    if not zips:
        return False, f"otter assign wrote no autograder zip:\n{log}"
    grades = {}
    for which, nb in (("solution", out / "autograder" / f"{name}.ipynb"),
                      ("student", out / "student" / f"{name}.ipynb")):
        res = out / f"results_{which}"
        res.mkdir()
        rc, log = otter("run", "-a", zips[-1], "-o", res, nb, cwd=out)
        if rc != 0 or not (res / "results.json").exists():
            return False, f"otter run ({which}) failed:\n{log}"
        grades[which] = score(res / "results.json")
    problems = []
    got, possible = grades["solution"]
    if possible <= 0 or got != possible:
        problems.append(f"solution scored {got:g}/{possible:g} (want full marks)")
    got_s, possible_s = grades["student"]
    if got_s != 0:
        problems.append(f"blank student notebook scored {got_s:g}/{possible_s:g} (want 0)")
    committed = HERE / name / "student" / f"{name}.ipynb"
    generated = out / "student" / f"{name}.ipynb"
    if update:
        committed.parent.mkdir(exist_ok=True)
        shutil.copyfile(generated, committed)
    elif not committed.exists() or sources(committed) != sources(generated):
        problems.append(f"{committed.relative_to(HERE.parent)} is not what otter assign generates "
                        "from the master: run `python exercises/check_exercises.py --update`")
    line = (f"solution {got:g}/{possible:g}, blank student {got_s:g}/{possible_s:g}, "
            f"{time.perf_counter() - t0:.0f} s")
    return not problems, line + ("" if not problems else "\n    " + "\n    ".join(problems))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="exercise folders (default: all)")
    ap.add_argument("--update", action="store_true", help="rewrite the committed student notebooks")
    ap.add_argument("--jobs", type=int, default=2, help="exercises checked at once (default 2)")
    args = ap.parse_args(argv)
    names = args.names or sorted(p.parent.name for p in HERE.glob("*/*.ipynb")
                                 if p.stem == p.parent.name)
    os.environ.setdefault("MPLBACKEND", "Agg")
    failed = 0
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:   # each check is subprocesses
        outcomes = pool.map(lambda n: (n, *check(n, args.update)), names)
        for name, ok, line in outcomes:
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name}: {line}", flush=True)
    print(f"{len(names) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
