"""The testsgd fixtures, shared by tests/contract/testsgd and tests/internal/testsgd."""
from tests._support.testsgd_fixtures import planted, toy  # noqa: F401
