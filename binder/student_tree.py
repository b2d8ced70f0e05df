"""What a student gets: the repository minus the instructor material.

``binder/postBuild`` runs ``python binder/student_tree.py`` in the image being built, so the
Binder link opens a tree with the student notebooks only: the exercise masters (solutions and
hidden tests), the gaming attempts and the grading tools are deleted, and so is the git history
(which holds older masters). ``exercises/check_exercises.py`` builds the same tree from the
tracked files and checks that no line of a solution or a hidden test is left in it.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

#: paths (relative to the repository root) that never reach a student
INSTRUCTOR_ONLY = (
    "exercises/instructor",       # masters: solutions and hidden tests; gaming attempts
    "exercises/check_exercises.py",
    "exercises/_build",
    ".git",                       # history: earlier masters
)


def apply(root) -> list[str]:
    """Delete :data:`INSTRUCTOR_ONLY` under ``root``; returns what was removed."""
    root = Path(root)
    removed = []
    for rel in INSTRUCTOR_ONLY:
        path = root / rel
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
        else:
            continue
        removed.append(rel)
    return removed


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
    print("student tree: removed", ", ".join(apply(target)) or "nothing")
