"""Adaptive waiting: poll while the answer is likely to come soon, block when it is not.

Polling avoids the ~10-50 us it takes the OS to wake a blocked process, which dominates cheap envs; but a
polling process burns a core, which slow envs need when there are more processes than cores. So each waiter
remembers how long its recent waits took and polls only for a few times that, and not at all once waits are
longer than ``max_spin`` (the envs are slow, so the wake-up cost no longer matters). While polling it yields
the CPU between polls, so a process that has real work on the same core gets it.

Yielding is cheap only while the processes it yields to are the pool's own, which soon wait in turn. When
other busy processes share the cores, a yield can hand the core away for a whole scheduler slice
(milliseconds), and a pool that kept polling would run dozens of times slower than one that blocks. So two
yields that each take longer than ``max_spin``, within ``LOSS_WINDOW_SECONDS`` of each other, make the waiter
block without polling for ``BACK_OFF_SECONDS``, after which it tries polling again. One such yield alone is
not enough: a VM's host pauses a vCPU that long now and then, busy neighbours or not.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

__all__ = ["BACK_OFF_SECONDS", "LOSS_WINDOW_SECONDS", "AdaptiveSpin", "acquire", "poll"]

# How long a waiter blocks without polling after other processes took its core away while it polled.
BACK_OFF_SECONDS = 2.0
# Two yields that lost the core within this time mean busy neighbours, not a hiccup of the host.
LOSS_WINDOW_SECONDS = 0.1


class AdaptiveSpin:
    """How long to poll before blocking, learnt from how long recent waits took.

    Args:
        max_spin: the longest poll, in seconds; 0 never polls.
    """

    def __init__(self, max_spin: float) -> None:
        self.max_spin = max_spin
        # A typical wait, as an exponential moving average; starting at 0 means "poll" until measured.
        self.typical = 0.0
        # Waits do not poll before this time.perf_counter() (see lost_core).
        self.blocking_until = 0.0
        # When a yield last lost the core for longer than max_spin.
        self.last_loss = -float("inf")

    def budget(self) -> float:
        """Seconds to poll before blocking."""
        if self.typical >= self.max_spin or time.perf_counter() < self.blocking_until:
            return 0.0
        return min(self.max_spin, 4.0 * self.typical + 2e-4)

    def lost_core(self) -> None:
        """Note a yield that took longer than ``max_spin``; the second in a short time stops polling a while."""
        now = time.perf_counter()
        if now - self.last_loss < LOSS_WINDOW_SECONDS:
            self.blocking_until = now + BACK_OFF_SECONDS
        self.last_loss = now

    def record(self, waited: float) -> None:
        """Learn from a wait that took ``waited`` seconds.

        A wait counts as at most twice ``max_spin``: one long pause (the caller busy elsewhere) moves the
        average no more than a few long waits would, so polling resumes as soon as waits are short again.

        Example:
            >>> spin = AdaptiveSpin(max_spin=1e-3)
            >>> spin.record(5.0)  # a pause of five seconds
            >>> spin.budget() > 0
            True
        """
        self.typical += 0.2 * (min(waited, 2.0 * self.max_spin) - self.typical)


def poll(semaphore: Any, until: float, spin: AdaptiveSpin) -> bool:
    """Try to take ``semaphore`` without blocking until ``time.perf_counter()`` reaches ``until``.

    Tries at least once, and yields the CPU between tries. Returns whether it was taken. A yield that took
    longer than ``spin.max_spin`` is reported to ``spin`` (such a yield always ends past ``until``, as no
    budget is longer than ``max_spin``).
    """
    yielded_at = None  # only a yield can lose the core: a single try (a zero budget) reports nothing
    while not semaphore.acquire(False):
        now = time.perf_counter()
        if now >= until:
            if yielded_at is not None and now - yielded_at > spin.max_spin:
                spin.lost_core()
            return False
        yielded_at = now
        os.sched_yield()
    return True


def acquire(semaphore: Any, spin: AdaptiveSpin, slice_seconds: float, on_slice: Callable[[], None]) -> None:
    """Acquire ``semaphore``: poll for ``spin.budget()``, then block in slices, calling ``on_slice`` after each.

    ``on_slice`` checks whatever could make the wait endless (a dead process) and raises or returns.
    """
    start = time.perf_counter()
    if not poll(semaphore, start + spin.budget(), spin):
        while not semaphore.acquire(timeout=slice_seconds):
            on_slice()
    spin.record(time.perf_counter() - start)
