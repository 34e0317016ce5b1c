"""Adaptive waiting: poll while answers come quickly, block when they do not (vecspaces.vector._async.waiting)."""

from __future__ import annotations

import threading
import time

import pytest

from vecspaces.vector._async import waiting
from vecspaces.vector._async.waiting import AdaptiveSpin, acquire, poll


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


def test_poll_takes_what_is_there_even_past_its_deadline() -> None:
    semaphore = threading.Semaphore(1)
    assert poll(semaphore, until=0.0, spin=AdaptiveSpin(1e-3))
    assert not semaphore.acquire(blocking=False)


def test_poll_gives_up_at_its_deadline_without_taking_anything() -> None:
    semaphore = threading.Semaphore(0)
    assert not poll(semaphore, until=time.perf_counter() + 0.01, spin=AdaptiveSpin(1e-3))
    semaphore.release()
    assert semaphore.acquire(blocking=False)


def test_poll_takes_a_release_that_comes_while_it_polls() -> None:
    semaphore = threading.Semaphore(0)
    releaser = threading.Timer(0.01, semaphore.release)
    releaser.start()
    assert poll(semaphore, until=time.perf_counter() + 10.0, spin=AdaptiveSpin(1e-3))
    releaser.join()


def test_acquire_blocks_in_slices_and_checks_between_them() -> None:
    semaphore, slices = threading.Semaphore(0), []

    def on_slice() -> None:
        slices.append(1)
        if len(slices) == 3:
            semaphore.release()

    acquire(semaphore, AdaptiveSpin(0.0), 0.001, on_slice)
    assert len(slices) == 3


def _yields_lose_the_core_for(seconds: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every yield take ``seconds``, as when a busy process of someone else gets the core each time."""
    monkeypatch.setattr(waiting.os, "sched_yield", lambda: time.sleep(seconds))


def _poll_once(spin: AdaptiveSpin) -> bool:
    return poll(threading.Semaphore(0), time.perf_counter() + spin.budget(), spin)


def test_two_yields_longer_than_max_spin_stop_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    spin = AdaptiveSpin(1e-3)
    _yields_lose_the_core_for(5e-3, monkeypatch)
    assert not _poll_once(spin)
    assert not _poll_once(spin)
    assert spin.budget() == 0.0


def test_one_long_yield_alone_keeps_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(waiting, "LOSS_WINDOW_SECONDS", 0.01)
    spin = AdaptiveSpin(1e-3)
    _yields_lose_the_core_for(5e-3, monkeypatch)
    _poll_once(spin)  # e.g. the VM's host paused the vCPU once
    time.sleep(0.02)
    _poll_once(spin)
    assert spin.budget() > 0


def test_short_yields_keep_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    spin = AdaptiveSpin(0.05)  # far above the yields, so a loaded test machine cannot make them look long
    _yields_lose_the_core_for(1e-4, monkeypatch)
    for _ in range(3):
        assert not _poll_once(spin)
    assert spin.budget() > 0


def test_polling_resumes_after_the_back_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(waiting, "BACK_OFF_SECONDS", 0.01)
    spin = AdaptiveSpin(1e-3)
    _yields_lose_the_core_for(5e-3, monkeypatch)
    _poll_once(spin)
    _poll_once(spin)
    assert spin.budget() == 0.0
    time.sleep(0.02)
    assert spin.budget() > 0


def test_a_poll_that_never_yields_reports_no_lost_core(monkeypatch: pytest.MonkeyPatch) -> None:
    spin, losses = AdaptiveSpin(0.0), []
    monkeypatch.setattr(spin, "lost_core", lambda: losses.append(1))
    _yields_lose_the_core_for(5e-3, monkeypatch)
    for _ in range(3):
        assert not _poll_once(spin)  # a zero budget: one try, no yield
    assert losses == []


def test_acquire_backs_off_and_still_takes_the_semaphore(monkeypatch: pytest.MonkeyPatch) -> None:
    semaphore, spin = threading.Semaphore(0), AdaptiveSpin(1e-3)
    _yields_lose_the_core_for(5e-3, monkeypatch)
    _poll_once(spin)
    releaser = threading.Timer(0.05, semaphore.release)
    releaser.start()
    acquire(semaphore, spin, 0.01, lambda: None)
    releaser.join()
    assert spin.budget() == 0.0
