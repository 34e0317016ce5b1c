"""Adaptive waiting: poll while the answer is likely to come soon, block when it is not.

Polling avoids the ~10-50 us it takes the OS to wake a blocked process, which dominates cheap envs; but a
polling process burns a core, which slow envs need when there are more processes than cores. So each waiter
remembers how long its recent waits took and polls only for a few times that, and not at all once waits are
longer than ``max_spin`` (the envs are slow, so the wake-up cost no longer matters). While polling it yields
the CPU between polls, so a process that has real work on the same core gets it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

__all__ = ["AdaptiveSpin", "acquire", "poll"]


class AdaptiveSpin:
    """How long to poll before blocking, learnt from how long recent waits took.

    Args:
        max_spin: the longest poll, in seconds; 0 never polls.
    """

    def __init__(self, max_spin: float) -> None:
        self.max_spin = max_spin
        # A typical wait, as an exponential moving average; starting at 0 means "poll" until measured.
        self.typical = 0.0

    def budget(self) -> float:
        """Seconds to poll before blocking."""
        if self.typical >= self.max_spin:
            return 0.0
        return min(self.max_spin, 4.0 * self.typical + 2e-4)

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


def poll(semaphore: Any, until: float) -> bool:
    """Try to take ``semaphore`` without blocking until ``time.perf_counter()`` reaches ``until``.

    Tries at least once, and yields the CPU between tries. Returns whether it was taken.
    """
    while not semaphore.acquire(False):
        if time.perf_counter() >= until:
            return False
        os.sched_yield()
    return True


def acquire(semaphore: Any, spin: AdaptiveSpin, slice_seconds: float, on_slice: Callable[[], None]) -> None:
    """Acquire ``semaphore``: poll for ``spin.budget()``, then block in slices, calling ``on_slice`` after each.

    ``on_slice`` checks whatever could make the wait endless (a dead process) and raises or returns.
    """
    start = time.perf_counter()
    if not poll(semaphore, start + spin.budget()):
        while not semaphore.acquire(timeout=slice_seconds):
            on_slice()
    spin.record(time.perf_counter() - start)
