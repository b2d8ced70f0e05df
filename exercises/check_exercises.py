"""Build, grade and try to game every exercise with otter-grader, locally (no Docker).

Layout::

    exercises/<name>/<name>.ipynb                   the STUDENT notebook (what Binder opens)
    exercises/instructor/<name>/<name>.ipynb        the master: solutions and hidden tests
    exercises/instructor/<name>/gaming.py           attempts to game the grader (ATTEMPTS)

``exercises/instructor/`` is instructor material: the Binder image deletes it
(``binder/student_tree.py``) and the documentation site never includes it.

For each exercise this script

1. runs ``otter assign`` on the master: ``exercises/_build/<name>/student/`` and
   ``exercises/_build/<name>/autograder/`` (the solution notebook and the autograder zip);
2. turns otter's student notebook into one that needs no otter-grader (:func:`studentize`): its
   first cell is a small self-contained checker of the *public* tests (which carry no points and
   say so), tagged ``otter_ignore`` like the check cells, so grading skips them; the result must
   be the committed ``exercises/<name>/<name>.ipynb`` (``--update`` rewrites it);
3. grades with ``otter run`` (in this environment): the **solution** must get full marks, the
   **blank** student notebook zero, and every **gaming attempt** (the blank notebook plus one
   cell of ``ATTEMPTS[...]``: hard-coded constants, answers that only fit the public examples,
   functions checked against themselves) at most a third of the points;
4. checks what a student is told when a hidden test fails: the test's hint, never its code (no
   line of a hidden test other than its final ``assert`` appears in the graded output);
5. executes the student notebook with ``import otter`` made impossible (the Binder image has no
   otter-grader): the checker cell and every check cell must run.

Then the student tree (the repository as ``binder/student_tree.py`` leaves it) and the built
documentation site (``docs/_build/html``, when it exists) must contain no line of a solution or
of a hidden test.

Usage::

    python exercises/check_exercises.py [--update] [--jobs N] [NAME ...]     # CI's exercises stage
    python exercises/check_exercises.py --instructor OUT                        # instructor build

``--instructor OUT`` writes, per exercise, ``OUT/<name>/student/<name>.ipynb`` (hand out),
``OUT/<name>/solution/<name>.ipynb`` and ``OUT/<name>/<name>-autograder.zip`` (keep private),
after the checks above pass. Exit status 0 only if every check passes.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BUILD = HERE / "_build"
INSTRUCTOR = HERE / "instructor"
MAX_GAMED_SHARE = 1 / 3

# The first cell of every student notebook: runs the public tests stored in the notebook's own
# metadata (otter's exception-based format) with nothing but the standard library, so the
# student image needs no otter-grader. Tagged otter_ignore: grading never runs it.
CHECKER = '''\
# Public checks: run this cell first. They only check the FORM of your answers and carry no
# points; your answers are graded by hidden tests when you submit. (Needs nothing but Python.)
import json as _json, inspect as _inspect

class _PublicChecks:
    def __init__(self, notebook):
        with open(notebook, encoding="utf-8") as fh:
            self._tests = _json.load(fh)["metadata"]["otter"]["tests"]

    def check(self, question):
        import __main__
        cases = []
        def test_case(points=0, hidden=False, success_message=None, failure_message=None):
            def register(fn):
                cases.append((fn, hidden, success_message, failure_message))
                return fn
            return register
        source = self._tests[question].replace("from otter.test_files import test_case", "")
        exec(compile(source, question, "exec"), {"test_case": test_case})
        for fn, hidden, ok, bad in cases:
            if hidden:
                continue
            args = {p: vars(__main__).get(p) for p in _inspect.signature(fn).parameters}
            try:
                fn(**args)
            except Exception as exc:
                print(f"{question}: format check FAILED: {exc}" + (f" ({bad})" if bad else ""))
                return False
            print(f"{question}: {ok or 'format check passed'}")
        return True

grader = _PublicChecks("{notebook}")
'''


def otter(*args, cwd, env=None):
    """Run the otter CLI of this environment; return (exit code, combined output)."""
    exe = Path(sys.executable).with_name("otter")
    cmd = [str(exe) if exe.exists() else "otter", *map(str, args)]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    return proc.returncode, proc.stdout + proc.stderr


def results_of(results_json: Path):
    """(points, possible, {question: (score, max_score, output)}) from otter's results.json
    (the Gradescope format: what a student is shown)."""
    data = json.loads(results_json.read_text())
    got = possible = 0.0
    questions = {}
    for test in data.get("tests", []):
        if test.get("max_score") is None:      # "Public Tests" summary entry: no points
            continue
        questions[test["name"]] = (float(test.get("score") or 0.0), float(test["max_score"]), test.get("output", ""))
        got += float(test.get("score") or 0.0)
        possible += float(test["max_score"])
    return got, possible, questions


def master_tests(master: Path):
    """[(question, hidden, points or None, hint, body)] of every test cell of a master."""
    nb = nbformat.read(master, as_version=4)
    tests, question = [], None
    for cell in nb.cells:
        m = re.search(r"# BEGIN QUESTION\s*\nname:\s*(\S+)", cell.source)
        if cell.cell_type == "raw" and m:
            question = m.group(1)
        m = re.search(r'""" # BEGIN TEST CONFIG\n([\s\S]*?)""" # END TEST CONFIG\n([\s\S]*)', cell.source)
        if cell.cell_type == "code" and m:
            import yaml

            conf = yaml.safe_load(m.group(1)) or {}
            tests.append((question, bool(conf.get("hidden")), conf.get("points"), conf.get("failure_message"),
                          m.group(2)))
    return tests


def studentize(nb, name: str):
    """otter's student notebook -> one that runs without otter-grader (see module docstring)."""
    out = []
    for cell in nb.cells:
        src = cell.source
        if cell.cell_type == "code" and "import otter" in src and "otter.Notebook" in src:
            cell.source = CHECKER.replace("{notebook}", f"{name}.ipynb")
            cell.metadata.setdefault("tags", []).append("otter_ignore")
        elif cell.cell_type == "code" and re.fullmatch(r'\s*grader\.check\("[^"]+"\)\s*', src):
            tags = cell.metadata.setdefault("tags", [])
            if "otter_ignore" not in tags:
                tags.append("otter_ignore")
        out.append(cell)
    nb.cells = out
    return nb


def sources(path: Path):
    nb = nbformat.read(path, as_version=4)
    return [(c.cell_type, c.source, sorted(c.get("metadata", {}).get("tags", []))) for c in nb.cells]


def load_attempts(name: str) -> dict:
    path = INSTRUCTOR / name / "gaming.py"
    if not path.exists():
        return {}
    spec = importlib.util.spec_from_file_location(f"gaming_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return dict(mod.ATTEMPTS)


def _grade(zip_path: Path, nb_path: Path, res_dir: Path, cwd: Path):
    res_dir.mkdir(parents=True, exist_ok=True)
    rc, log = otter("run", "-a", zip_path, "-o", res_dir, nb_path, cwd=cwd)
    if rc != 0 or not (res_dir / "results.json").exists():
        raise RuntimeError(f"otter run ({nb_path.name}) failed:\n{log[-3000:]}")
    return results_of(res_dir / "results.json")


def _code_leaks(tests, questions) -> list[str]:
    """What a student is shown for a failed question: a hint, and no line of a hidden test
    other than its final ``assert`` (which names no value)."""
    leaks = []
    for q, (score, max_score, output) in questions.items():
        if score >= max_score:
            continue
        hidden = [t for t in tests if t[0] == q and t[1]]
        if not any(t[3] and t[3] in output for t in hidden):
            leaks.append(f"{q}: a failed hidden test shows no hint")
        for t in hidden:
            for line in t[4].splitlines():
                s = line.strip()
                if len(s) < 12 or s.startswith(("assert ", "def ", "import ", "from ", "return ")):
                    continue
                if s in output:
                    leaks.append(f"{q}: grading output shows the hidden test's line {s!r}")
    return leaks


_BLOCK_OTTER = "import sys\nclass _NoOtter:\n    def find_spec(self, name, path=None, target=None):\n" \
               "        if name == 'otter' or name.startswith('otter.'):\n" \
               "            raise ImportError('otter-grader is not installed in the student image')\n" \
               "sys.meta_path.insert(0, _NoOtter())\n"


def run_without_otter(student: Path, workdir: Path) -> list[str]:
    """Execute the student notebook with ``import otter`` impossible; problems found."""
    from nbclient import NotebookClient

    nb = nbformat.read(student, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(_BLOCK_OTTER))
    client = NotebookClient(nb, timeout=1800, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(workdir)}})
    shutil.copy(student, workdir / student.name)
    client.execute()
    problems = []
    for cell in nb.cells[1:]:
        tags = cell.get("metadata", {}).get("tags", [])
        if cell.cell_type != "code" or "otter_ignore" not in tags:
            continue
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if errors:
            problems.append(f"without otter, cell {cell.source.splitlines()[0][:50]!r} fails: "
                            f"{errors[0].get('ename')}: {errors[0].get('evalue')}")
        elif "grader.check" in cell.source and "format check" not in json.dumps(cell.get("outputs", [])):
            problems.append(f"without otter, {cell.source.strip()} printed no format-check line")
    return problems


def check(name: str, update: bool) -> tuple[bool, str]:
    master = INSTRUCTOR / name / f"{name}.ipynb"
    out = BUILD / name
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    t0 = time.perf_counter()
    rc, log = otter("assign", master, out, cwd=master.parent)
    if rc != 0:
        return False, f"otter assign failed:\n{log}"
    zips = sorted((out / "autograder").glob(f"{name}-autograder_*.zip"))
    if not zips:
        return False, f"otter assign wrote no autograder zip:\n{log}"
    generated = out / "student" / f"{name}.ipynb"
    nbformat.write(studentize(nbformat.read(generated, as_version=4), name), generated)
    problems = []
    committed = HERE / name / f"{name}.ipynb"
    if update:
        committed.parent.mkdir(exist_ok=True)
        shutil.copyfile(generated, committed)
    elif not committed.exists() or sources(committed) != sources(generated):
        problems.append(f"{committed.relative_to(ROOT)} is not what otter assign generates from the "
                        "master: run `python exercises/check_exercises.py --update`")
    try:
        tests = master_tests(master)
        problems += [f"{q}: a public test carries points ({pts})" for q, hid, pts, _, _ in tests
                     if not hid and pts != 0]
        got, possible, _ = _grade(zips[-1], out / "autograder" / f"{name}.ipynb", out / "res_solution", out)
        line = [f"solution {got:g}/{possible:g}"]
        if possible <= 0 or got != possible:
            problems.append(f"solution scored {got:g}/{possible:g} (want full marks)")
        got_b, _, qs = _grade(zips[-1], generated, out / "res_blank", out)
        line.append(f"blank {got_b:g}")
        if got_b != 0:
            problems.append(f"blank student notebook scored {got_b:g}/{possible:g} (want 0)")
        problems += _code_leaks(tests, qs)
        for attempt, code in load_attempts(name).items():
            nb = nbformat.read(generated, as_version=4)
            nb.cells.append(nbformat.v4.new_code_cell(code))
            gamed = out / f"gamed_{attempt}" / f"{name}.ipynb"
            gamed.parent.mkdir(parents=True)
            nbformat.write(nb, gamed)
            got_g, _, qs_g = _grade(zips[-1], gamed, gamed.parent / "res", gamed.parent)
            line.append(f"{attempt} {got_g:g}")
            if got_g > MAX_GAMED_SHARE * possible + 1e-9:
                problems.append(f"gaming attempt {attempt!r} scored {got_g:g}/{possible:g} "
                                f"(want at most a third)")
            problems += _code_leaks(tests, qs_g)
        if not load_attempts(name):
            problems.append(f"no gaming attempts in exercises/instructor/{name}/gaming.py")
        with tempfile.TemporaryDirectory() as tmp:
            problems += run_without_otter(generated, Path(tmp))
    except RuntimeError as exc:
        return False, str(exc)
    line = ", ".join(line) + f" (of {possible:g}), {time.perf_counter() - t0:.0f} s"
    return not problems, line + ("" if not problems else "\n    " + "\n    ".join(problems))


# --- what must never reach a student -----------------------------------------------------------

def solution_lines(master: Path) -> set[str]:
    """Distinctive lines of a master's solutions and hidden tests (stripped, >= 24 characters)."""
    nb = nbformat.read(master, as_version=4)
    lines = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        src = cell.source
        hidden = re.search(r"BEGIN TEST CONFIG[\s\S]*?hidden:\s*true", src) is not None
        block = False
        for line in src.splitlines():
            s = line.strip()
            if "# BEGIN SOLUTION" in s or "# END SOLUTION" in s:
                block = "# BEGIN" in s
                continue
            solution = s.endswith("# SOLUTION") or block or hidden
            s = re.sub(r"\s*#\s*SOLUTION$", "", s)
            if solution and len(s) >= 24 and not s.startswith(("#", '"""', "failure_message")):
                lines.add(s)
    return lines


def _strings(node):
    """Every string of a JSON document (a notebook's sources, outputs and metadata: the public
    tests otter stores in it included); a list of strings (a cell source) is joined."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, list):
        if node and all(isinstance(x, str) for x in node):
            yield "".join(node)
        else:
            for x in node:
                yield from _strings(x)
    elif isinstance(node, dict):
        for x in node.values():
            yield from _strings(x)


def leaked(paths, fingerprints: set[str]) -> list[str]:
    found = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if path.suffix == ".ipynb":  # the JSON escapes quotes: compare on every string it holds
            try:
                text = "\n".join(_strings(json.loads(text)))
            except ValueError:
                pass
        for line in fingerprints:
            if line in text:
                found.append(f"{path}: {line[:70]!r}")
                break
    return found


def student_tree(dest: Path) -> Path:
    """The repository's tracked files as the Binder image has them (binder/student_tree.py)."""
    spec = importlib.util.spec_from_file_location("student_tree", ROOT / "binder" / "student_tree.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    mod.apply(dest)
    return dest


def check_no_solutions(site: Path | None) -> list[str]:
    # generic lines reveal nothing: imports, and lines the package or its tests already contain
    # (a solution may call fairlens exactly as fairlens's own code does)
    library = "\n".join(p.read_text(encoding="utf-8", errors="replace")
                        for d in ("fairlens", "tests") for p in sorted((ROOT / d).rglob("*.py")))
    library_lines = {line.strip() for line in library.splitlines()}
    fingerprints = set()
    for master in sorted(INSTRUCTOR.glob("*/*.ipynb")):
        public = HERE / master.stem / master.name   # the student notebook: public anyway
        shown = "\n".join(c.source for c in nbformat.read(public, as_version=4).cells) if public.exists() else ""
        fingerprints |= {line for line in solution_lines(master) if line not in shown and line not in library_lines
                         and not line.startswith(("import ", "from "))}
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        tree = student_tree(Path(tmp))
        if (tree / "exercises" / "instructor").exists():
            problems.append("the student tree still holds exercises/instructor/")
        problems += [f"solution text in the student tree: {p}" for p in
                     leaked(sorted(p for p in tree.rglob("*") if p.is_file()), fingerprints)]
    if site is not None and site.is_dir():
        problems += [f"solution text on the site: {p}" for p in
                     leaked(sorted(site.rglob("*.html")) + sorted(site.rglob("*.ipynb"))
                            + sorted(site.rglob("*.txt")), fingerprints)]
    return problems


def instructor_build(dest: Path, names) -> None:
    for name in names:
        out = BUILD / name
        target = dest / name
        shutil.rmtree(target, ignore_errors=True)
        (target / "student").mkdir(parents=True)
        (target / "solution").mkdir()
        shutil.copy(HERE / name / f"{name}.ipynb", target / "student" / f"{name}.ipynb")
        shutil.copy(out / "autograder" / f"{name}.ipynb", target / "solution" / f"{name}.ipynb")
        zipf = sorted((out / "autograder").glob(f"{name}-autograder_*.zip"))[-1]
        shutil.copy(zipf, target / f"{name}-autograder.zip")
    print(f"instructor materials in {dest} (keep them private: solutions and hidden tests)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="exercise folders (default: all)")
    ap.add_argument("--update", action="store_true", help="rewrite the committed student notebooks")
    ap.add_argument("--jobs", type=int, default=2, help="exercises checked at once (default 2)")
    ap.add_argument("--site", type=Path, default=ROOT / "docs" / "_build" / "html",
                    help="built documentation site to scan for solution text (skipped if absent)")
    ap.add_argument("--instructor", type=Path, metavar="OUT",
                    help="after the checks, write the instructor materials (solutions, autograder zips) to OUT")
    args = ap.parse_args(argv)
    names = args.names or sorted(p.parent.name for p in INSTRUCTOR.glob("*/*.ipynb")
                                 if p.stem == p.parent.name)
    os.environ.setdefault("MPLBACKEND", "Agg")
    failed = 0
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:   # each check is subprocesses
        outcomes = pool.map(lambda n: (n, *check(n, args.update)), names)
        for name, ok, line in outcomes:
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name}: {line}", flush=True)
    leaks = check_no_solutions(args.site)
    where = "student tree" + (f" and site {args.site}" if args.site.is_dir() else " (no built site to scan)")
    print(f"{'ok  ' if not leaks else 'FAIL'} no solution text in the {where}")
    for p in leaks[:20]:
        print(f"    {p}")
    total = len(names) + 1
    failed += bool(leaks)
    print(f"{total - failed} passed, {failed} failed")
    if args.instructor and not failed:
        instructor_build(args.instructor, names)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
