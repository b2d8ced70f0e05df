"""Bad arguments are refused by name, before any analysis runs."""
import pytest

import fairlens
from fairlens._base import make_invalid
from fairlens.audit._audit import _AUDIT_CONSTRAINTS
from tests.contract.audit.test_audit_arguments import args  # noqa: F401 (fixtures)


def test_every_invalid_parameter_value_is_refused_by_name(args):
    for name, bad in make_invalid(_AUDIT_CONSTRAINTS):
        kw = dict(args)
        kw[name] = bad
        with pytest.raises((TypeError, ValueError), match=name):
            fairlens.audit(kw.pop("model"), kw.pop("data"), **kw)
