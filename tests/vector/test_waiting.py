"""Adaptive waiting: poll while answers come quickly, block when they do not (vecspaces.vector._async.waiting)."""

from __future__ import annotations

from vecspaces.vector._async.waiting import AdaptiveSpin


def test_polls_until_waits_are_measured() -> None:
    assert AdaptiveSpin(1e-3).budget() > 0


def test_short_waits_keep_polling_a_few_times_their_length() -> None:
    spin = AdaptiveSpin(1e-3)
    for _ in range(50):
        spin.record(20e-6)
    assert 80e-6 <= spin.budget() < 1e-3


def test_waits_longer_than_the_limit_stop_polling() -> None:
    spin = AdaptiveSpin(1e-3)
    for _ in range(50):
        spin.record(2.5e-3)  # a slow env: the wake-up cost no longer matters, the cores do
    assert spin.budget() == 0.0


def test_one_long_pause_does_not_stop_polling() -> None:
    spin = AdaptiveSpin(1e-3)
    for _ in range(50):
        spin.record(50e-6)
    spin.record(30.0)  # e.g. the caller evaluated a model for half a minute between two steps
    assert spin.budget() > 0
    for _ in range(3):
        spin.record(50e-6)
    assert spin.budget() > 0


def test_a_zero_limit_never_polls() -> None:
    spin = AdaptiveSpin(0.0)
    assert spin.budget() == 0.0
    spin.record(1e-6)
    assert spin.budget() == 0.0
