"""The maft fixtures, shared by tests/contract/maft and tests/internal/maft."""
from tests._support.maft_fixtures import german, readable_pipe, reordered_lr, smooth, toy, toy_mlp  # noqa: F401
