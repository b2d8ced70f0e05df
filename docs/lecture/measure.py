"""Measure the lecture plan: the time of every section of every notebook, on a fresh
Binder-like environment (empty numba cache warmed by ``binder/warmup.py`` for the generic CPU,
exactly as the Binder image is built), and the compute time of every exercise's solution.

    python docs/lecture/measure.py --widgets          # writes docs/lecture/timings.md (and .json)
    python docs/lecture/measure.py --full --widgets --only tutorials/00_start_here.ipynb
                                                      # Binder's (full) mode: timings-full.md

Notebooks run with nbclient in ``FAIRLENS_REDUCED=1`` (the class size; unset it with
``--full`` for the papers' sizes). A section is a ``##`` heading and the cells up to the next
one; its time is the sum of its cells' execution times (nbclient's timestamps). The load average
of the machine is recorded beside every number: re-measure on an idle machine before a class.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ["tutorials/00_start_here.ipynb", "tutorials/01_shuffling_attacks.ipynb", "tutorials/02_maft.ipynb",
             "tutorials/03_testsgd.ipynb", "tutorials/04_certify_forests.ipynb"]
EXERCISES = ["shuffle_quantile", "maft_pair", "testsgd_significance", "certify_flb"]


def _load():
    return float(Path("/proc/loadavg").read_text().split()[0]) if Path("/proc/loadavg").exists() else float("nan")


def _seconds(cell):
    ex = cell.get("metadata", {}).get("execution", {})
    a, b = ex.get("iopub.execute_input") or ex.get("shell.execute_reply.started"), ex.get("shell.execute_reply")
    if not a or not b:
        return 0.0
    f = lambda s: dt.datetime.fromisoformat(s.replace("Z", "+00:00"))  # noqa: E731
    return max(0.0, (f(b) - f(a)).total_seconds())


def run(path: Path, env: dict, cwd: Path):
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    old = dict(os.environ)
    os.environ.update(env)
    try:
        t0 = time.perf_counter()
        NotebookClient(nb, timeout=3600, kernel_name="python3", record_timing=True, allow_errors=False,
                       resources={"metadata": {"path": str(cwd)}}).execute()
        wall = time.perf_counter() - t0
    finally:
        os.environ.clear()
        os.environ.update(old)
    sections, current = [], ["(set-up)", 0.0]
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = re.match(r"^##\s+(.*)", cell.source.lstrip())
            if m:
                sections.append(current)
                current = [m.group(1).strip(), 0.0]
        elif cell.cell_type == "code":
            current[1] += _seconds(cell)
    sections.append(current)
    return wall, [(name, round(sec, 1)) for name, sec in sections if sec > 0 or name != "(set-up)"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="the papers' sizes (FAIRLENS_REDUCED unset)")
    ap.add_argument("--only", nargs="*", help="notebook paths or exercise names to measure")
    ap.add_argument("--widgets", action="store_true", help="also time each widget's first interaction "
                    "(docs/lecture/first_interaction.py, a fresh process with the warmed cache)")
    args = ap.parse_args(argv)
    cache = Path(tempfile.mkdtemp(prefix="fl-numba-"))
    env = {"NUMBA_CACHE_DIR": str(cache), "NUMBA_CPU_NAME": "generic", "NUMBA_CPU_FEATURES": "",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           "FAIRLENS_REDUCED": "0" if args.full else "1"}
    os.environ.pop("FAIRLENS_DATA_HOME", None)   # bundled data, as on Binder
    t0, l0 = time.perf_counter(), _load()
    subprocess.run([sys.executable, str(ROOT / "binder" / "warmup.py")], env={**os.environ, **env}, check=True)
    out = {"warmup": {"seconds": round(time.perf_counter() - t0, 1), "load": l0}, "notebooks": {}, "exercises": {},
           "mode": "full" if args.full else "reduced", "date": dt.date.today().isoformat()}
    for rel in NOTEBOOKS:
        if args.only and rel not in args.only:
            continue
        load = _load()
        wall, sections = run(ROOT / rel, env, (ROOT / rel).parent)
        out["notebooks"][rel] = {"wall": round(wall, 1), "load": load, "sections": sections}
        print(f"{rel}: {wall:.0f} s (load {load:.1f})", flush=True)
    for name in EXERCISES:
        if args.only and name not in args.only:
            continue
        master = ROOT / "exercises" / "_build" / name / "autograder" / f"{name}.ipynb"
        if not master.exists():
            print(f"{name}: run exercises/check_exercises.py first (no solution notebook)")
            continue
        load = _load()
        wall, sections = run(master, env, master.parent)
        out["exercises"][name] = {"wall": round(wall, 1), "load": load}
        print(f"{name}: {wall:.0f} s (load {load:.1f})", flush=True)
    if args.widgets:
        load = _load()
        proc = subprocess.run([sys.executable, str(Path(__file__).with_name("first_interaction.py"))],
                              env={**os.environ, **env}, capture_output=True, text=True, check=True)
        out["widgets"] = {"load": load, "seconds": json.loads(proc.stdout.strip().splitlines()[-1])}
        print(f"widgets: {out['widgets']}", flush=True)
    stem = "timings-full" if args.full else "timings"
    dest = Path(__file__).with_name(f"{stem}.json")
    old = json.loads(dest.read_text()) if dest.exists() and args.only else {}
    if "widgets" not in out and "widgets" in old:
        out["widgets"] = old["widgets"]
    for k in ("notebooks", "exercises"):
        out[k] = {**old.get(k, {}), **out[k]}
    dest.write_text(json.dumps(out, indent=1) + "\n")
    write_table(out, stem)
    return 0


def write_table(data, stem="timings"):
    lines = [f"Measured {data['date']} in {data['mode']} mode on a 2-core machine, with its 1-minute load "
             f"average beside each number (about 1: the measurement alone on an otherwise idle machine; "
             f"higher: other jobs shared it, and the numbers are slower). Fresh environment: an empty "
             f"numba cache warmed by `binder/warmup.py` for the generic CPU, as the Binder image is "
             f"({data['warmup']['seconds']:.0f} s at load {data['warmup']['load']:.1f}, at image build, "
             "not in class).", "",
             "| notebook | section | compute time (s) | load |", "|---|---|---|---|"]
    for rel, d in data["notebooks"].items():
        for i, (name, sec) in enumerate(d["sections"]):
            lines.append(f"| {Path(rel).stem if i == 0 else ''} | {name} | {sec:.0f} | {d['load']:.1f} |")
        lines.append(f"| | **Run All, wall clock** | **{d['wall']:.0f}** | {d['load']:.1f} |")
    if data["exercises"]:
        lines += ["", "| exercise | Run All of the solution (s) | load |", "|---|---|---|"]
    for name, d in data["exercises"].items():
        lines.append(f"| `{name}` | {d['wall']:.0f} | {d['load']:.1f} |")
    if data.get("widgets"):
        lines += ["", "| widget: first interaction in a fresh process (warmed cache) | seconds | load |",
                  "|---|---|---|"]
        for name, sec in data["widgets"]["seconds"].items():
            lines.append(f"| {name} | {sec} | {data['widgets']['load']:.1f} |")
    Path(__file__).with_name(f"{stem}.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
