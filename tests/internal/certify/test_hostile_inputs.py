"""The tests of ``tests/contract/certify/test_hostile_inputs.py`` that pin internals
(its docstring describes both halves)."""

import pytest

from fairlens.certify import certify
from tests.contract.certify.test_hostile_inputs import bc, boosted  # noqa: F401 (fixtures)

# --- Ctrl-C -----------------------------------------------------------------------------------

def _two_level_interrupt(*args):
    """What a real SIGINT inside a numba kernel raises: SystemError <- SystemError <- KeyboardInterrupt."""
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as ki:
            raise SystemError("CPUDispatcher(<inner>) returned a result with an exception set") from ki
    except SystemError as inner:
        raise SystemError("CPUDispatcher(brute_search) returned a result with an exception set") from inner


@pytest.mark.parametrize("vote", ["soft", "hard"])
def test_ctrl_c_inside_a_forest_kernel_is_keyboard_interrupt(bc, monkeypatch, vote):
    from fairlens.certify import _search

    rf, X, y = bc
    monkeypatch.setattr(_search, "brute_search", _two_level_interrupt)  # the one exhaustive search
    with pytest.raises(KeyboardInterrupt):
        certify(rf, X, y, budget=2, method="brute", vote=vote)


def test_ctrl_c_inside_a_boosted_kernel_is_keyboard_interrupt(boosted, monkeypatch):
    from fairlens.certify import _search

    model, X, y = boosted
    monkeypatch.setattr(_search, "brute_search", _two_level_interrupt)
    with pytest.raises(KeyboardInterrupt):
        certify(model, X, y, budget=2, method="brute")


def test_other_system_errors_are_not_turned_into_interrupts(bc, monkeypatch):
    rf, X, y = bc

    def broken(*args):
        raise SystemError("a genuine internal error")

    from fairlens.certify import _search

    monkeypatch.setattr(_search, "brute_search", broken)
    with pytest.raises(SystemError, match="genuine"):
        certify(rf, X, y, budget=2, method="brute")
