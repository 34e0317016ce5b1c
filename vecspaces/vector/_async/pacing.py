"""What the main process's waits for the workers steer: polling or blocking, the busy-threads warning, pinning.

Each wait asks how long to poll, blocks through :meth:`Pacing.block` once polling is over, and reports how
long it took to :meth:`Pacing.record`; the three mechanisms learn from that (see ``waiting``, ``busy_threads``
and ``affinity``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces.vector._async.affinity import AutoPinning
from vecspaces.vector._async.busy_threads import BusyThreadsWatch
from vecspaces.vector._async.waiting import TrialSpin

__all__ = ["Pacing"]


class Pacing:
    """The main process's polling trial, busy-threads watch and workers' pinning, fed by its waits.

    Args:
        spin_seconds: the longest a wait polls before blocking.
        blocking: the pool's shared flag telling every wait to block without polling.
        auto_pinning: the CPUs the workers are pinned to while that pays (see ``affinity``); None: never.
        processes: the workers' processes, as the pool holds them.
    """

    def __init__(
        self,
        spin_seconds: float,
        blocking: npt.NDArray[np.int8],
        auto_pinning: list[int] | None,
        processes: Sequence[Any],
    ) -> None:
        self.spin = TrialSpin(spin_seconds, blocking)
        self.busy_threads = BusyThreadsWatch()
        self.pinning = None if auto_pinning is None else AutoPinning(auto_pinning, processes)

    def spin_until(self, started: float) -> float:
        """Until when a wait that started at ``started`` (``time.perf_counter()``) polls."""
        return started + self.spin.budget()

    def block(self, semaphore: Any, timeout: float) -> bool:
        """Acquire ``semaphore``, blocking for at most ``timeout`` seconds; return whether it was acquired."""
        self.busy_threads.blocking()
        acquired = bool(semaphore.acquire(timeout=timeout))
        self.busy_threads.unblocked()
        return acquired

    def record(self, waited: float) -> None:
        """Learn from a wait for the workers that took ``waited`` seconds."""
        self.spin.record(waited)
        if self.pinning is not None:
            self.pinning.tick(waited)
