"""The audit fixtures, shared by tests/contract/audit and tests/internal/audit."""
from tests._support.audit_fixtures import encoded_mlp, german, readable_pipe, small  # noqa: F401
