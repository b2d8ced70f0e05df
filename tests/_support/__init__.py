"""Helpers shared by ``tests/contract`` and ``tests/internal`` (toy models, oracles, fixtures, paths)."""
from pathlib import Path

#: the repository's root and its ``tests`` folder, wherever a test file sits below them
REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
