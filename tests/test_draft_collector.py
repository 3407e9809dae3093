"""The draft pauses Python's cycle collector for its search, and gives it back as it found it."""

from __future__ import annotations

import gc

import pytest

from symtf.draft import _collector_paused


def test_the_collector_is_paused_inside_and_restored_after() -> None:
    assert gc.isenabled()
    with _collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_failing_search_restores_it_too() -> None:
    with pytest.raises(RuntimeError), _collector_paused():
        raise RuntimeError("the search failed")
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off() -> None:
    gc.disable()
    try:
        with _collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
