"""Adaptive waiting: poll while the answer is likely to come soon, block when it is not.

Polling avoids the time the OS takes to wake a blocked process, which is longer than a cheap env's step; but a
polling process burns a core, which slow envs need when there are more processes than cores. So each waiter
remembers how long its recent waits took and polls only for a few times that, and not at all once waits are
longer than ``max_spin`` (the envs are slow, so the wake-up cost no longer matters). While polling it yields
the CPU between polls, so a process that has real work on the same core gets it.

Yielding is cheap only while the processes it yields to are the pool's own, which soon wait in turn. When
other busy processes share the cores (another training run, a process pinned to the same CPU), a yield hands
the core to them for a whole scheduler slice, far longer than the wait it was meant to shorten, so a pool that
keeps polling falls far behind one that blocks. Whether that is happening cannot be read off a single wait,
so the main process finds out by trial (:class:`TrialSpin`) and tells the workers through a shared flag.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["WORKER_MAX_SPIN_SECONDS", "AdaptiveSpin", "TrialSpin", "acquire", "poll"]

# The longest a worker polls for its next command. It waits for the main process's own work between steps (a
# training loop's policy), whose threads need the cores meanwhile: once that work takes longer than this, a
# wake-up (~30-50 us) costs little against it, and polls that keep yielding the cores slow it down (CartPole
# with a 0.3 ms policy on 2 cores: 0.70x Gymnasium Sync polling up to 1 ms, 0.87x with this limit).
WORKER_MAX_SPIN_SECONDS = 3e-4

# Cycles timed in each mode. The longest few of them do not count, so that neither a pause of the caller
# between two steps nor the first cycle after a switch (still partly in the other mode) can decide a trial.
TRIAL_CYCLES = 32
IGNORED_CYCLES = 4
# When the main process first tries the mode it is not in (once the pool's first, slower cycles are past), and
# how often after that.
FIRST_TRIAL_SECONDS = 0.5
TRIAL_INTERVAL_SECONDS = 2.0
# Between trials the main process reads the clock only once per this many waits.
WAITS_BETWEEN_CLOCK_READS = 64
# The other mode is kept only if its cycles took at most this share of the time of the current mode's.
SWITCH_MARGIN = 0.9


class AdaptiveSpin:
    """How long to poll before blocking, learnt from how long recent waits took.

    Args:
        max_spin: the longest poll, in seconds; 0 never polls.
        blocking: the pool's shared flag which, when set, makes every wait block without polling (see
            :class:`TrialSpin`); None: a flag of this waiter's own, never set.
    """

    def __init__(self, max_spin: float, blocking: npt.NDArray[np.int8] | None = None) -> None:
        self.max_spin = max_spin
        self.blocking = np.zeros(1, np.int8) if blocking is None else blocking
        # A typical wait, as an exponential moving average; starting at 0 means "poll" until measured.
        self.typical = 0.0

    def budget(self) -> float:
        """Seconds to poll before blocking."""
        if self.typical >= self.max_spin or self.blocking[0]:
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


class TrialSpin(AdaptiveSpin):
    """The main process's spin, which also decides by trial whether the pool polls at all.

    Every ``TRIAL_INTERVAL_SECONDS`` it times ``TRIAL_CYCLES`` cycles in the current mode, then as many in the
    other (blocking if it polled, polling if it blocked), and keeps the other mode if its cycles took clearly
    less time (leaving out the longest few of each). A cycle runs from the end of one wait to the end of the
    next: whole cycles, because polling that loses the core to someone else's process also delays the main
    process between waits. In the usual case a trial costs a few slower cycles every two seconds.

    Args:
        max_spin: the longest poll, in seconds; 0 never polls (and never tries to).
        blocking: the pool's shared flag, read by the workers' spins.

    Example:
        >>> spin = TrialSpin(1e-3, np.zeros(1, np.int8))
        >>> spin.budget() > 0  # the pool starts polling
        True
    """

    def __init__(self, max_spin: float, blocking: npt.NDArray[np.int8]) -> None:
        super().__init__(max_spin, blocking)
        self.next_trial = time.perf_counter() + FIRST_TRIAL_SECONDS
        # Waits until the next look at the clock: between trials it is read only every so many waits.
        self.countdown = WAITS_BETWEEN_CLOCK_READS
        # During a trial (None between trials): the cycles timed in the current mode, then in the other.
        self.timed: list[float] | None = None
        self.last_end = 0.0

    def record(self, waited: float) -> None:
        """Learn from a wait that took ``waited`` seconds, and run the trials (see the class)."""
        super().record(waited)
        self.countdown -= 1
        if not self.countdown and self.max_spin > 0.0:
            self._run_trial()

    def _run_trial(self) -> None:
        now = time.perf_counter()
        if self.timed is None:
            if now < self.next_trial:
                self.countdown = WAITS_BETWEEN_CLOCK_READS
                return
            self.timed = []
        else:
            self.timed.append(now - self.last_end)
        self.last_end = now
        self.countdown = 1  # a trial times every cycle
        if len(self.timed) == TRIAL_CYCLES:
            self.blocking[0] ^= 1  # now the other mode
        elif len(self.timed) == 2 * TRIAL_CYCLES:
            current, other = _usual_total(self.timed[:TRIAL_CYCLES]), _usual_total(self.timed[TRIAL_CYCLES:])
            if other > SWITCH_MARGIN * current:
                self.blocking[0] ^= 1
            self.timed = None
            self.next_trial = now + TRIAL_INTERVAL_SECONDS
            self.countdown = WAITS_BETWEEN_CLOCK_READS


def _usual_total(cycles: list[float]) -> float:
    """The time the cycles took, without the ``IGNORED_CYCLES`` longest."""
    ordered = sorted(cycles)
    return sum(ordered[: max(len(ordered) - IGNORED_CYCLES, 0)])


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
