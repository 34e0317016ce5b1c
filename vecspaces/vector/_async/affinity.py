"""Pinning the workers while it pays (``pin_workers=None``): one worker per CPU, unpinned when the cores are shared.

With as many workers as CPUs, the workers and the main process (which polls while they step) are more busy
processes than cores, and the scheduler pairs them with the cores as it likes: at times both workers share one
core and step in turn while the main process has the other to itself. One worker pinned to each CPU rules that
out (measured on 2 cores: tiny envs 10%, atari 7%, dict 12% faster). But a pinned worker cannot move away from
a core that something else holds: another busy process (raw Pong fell from 2.4-3.1k to 282-350 steps/s) or the
main process's own helper threads, such as numpy's BLAS threads busy-waiting after a product (a 2-ms policy
made the pool 26% slower), or an env's threads beside its worker's. So every ``INTERVAL_SECONDS`` the main
process measures, over ``WINDOW_SECONDS`` of steady stepping, how much CPU the pool's CPUs gave to other
processes, and to the threads of the pool's own processes other than the one in each that steps, and pins the
workers only while both stay below ``BUSY_LIMIT_CORES``.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import psutil

__all__ = ["AutoPinning", "CpuReading"]

# What counts as busy, in cores: on a quiet machine both readings stay below 0.05; one busy neighbour reads
# about 0.95, numpy's BLAS threads after a policy's products about 0.9.
BUSY_LIMIT_CORES = 0.25
# Long enough for the kernel's CPU accounting (10-ms ticks) to tell 0.25 of a core apart from none.
WINDOW_SECONDS = 0.3
INTERVAL_SECONDS = 2.0
# The longest the main process may spend between two waits inside a window (a policy's step takes less).
MAX_PAUSE_SECONDS = 0.05
# The first window opens this long after the pool starts, once its envs step.
FIRST_WINDOW_SECONDS = 0.3
# The clock is read once per this many waits, or after a wait this long.
WAITS_BETWEEN_CLOCK_READS = 64
LONG_WAIT_SECONDS = 0.01


class CpuReading(NamedTuple):
    """The clock and CPU seconds used so far, as read at one moment.

    CPU seconds of: the pool's CPUs (every process on them), this process, its stepping thread, the workers,
    and the workers' threads other than their main ones.
    """

    clock: float
    cpus: float
    process: float
    thread: float
    workers: float
    worker_threads: float


class AutoPinning:
    """Pins worker ``w`` to ``cpus[w]`` while the pool's CPUs serve nothing else (see the module).

    Args:
        cpus: per worker, the CPU it is pinned to.
        processes: the workers' processes, as the pool holds them (a restart replaces one).
        readings: what is measured; the default reads the machine (tests pass their own).
    """

    def __init__(
        self,
        cpus: list[int],
        processes: Sequence[Any],
        readings: Callable[[], CpuReading] | None = None,
    ) -> None:
        self.cpus = cpus
        self.processes = processes
        self.readings = readings or _MachineReadings(cpus, processes).read
        self.pinned = False
        self.applied: dict[int, bool] = {}  # per worker pid, whether it was last pinned or unpinned
        self.countdown = WAITS_BETWEEN_CLOCK_READS
        self.next_window = time.perf_counter() + FIRST_WINDOW_SECONDS
        self.window_start: CpuReading | None = None
        self.last_end = 0.0  # when the last wait of the open window ended

    def tick(self, waited: float) -> None:
        """Called after every wait for the workers, ``waited`` seconds long: opens and closes the windows."""
        if self.window_start is None:
            self.countdown -= 1
            if self.countdown and waited < LONG_WAIT_SECONDS:
                return
            self.countdown = WAITS_BETWEEN_CLOCK_READS
            now = time.perf_counter()
            if now >= self.next_window:
                self.window_start = self._read()
                self.last_end = now
            return
        # While a window is open every wait reads the clock: the window counts only if the pool stepped all
        # along, since whatever ran during a pause (another vector env, a training update) is not a neighbour.
        now = time.perf_counter()
        if now - waited - self.last_end > MAX_PAUSE_SECONDS:
            self.window_start = None  # a new one opens at the next reading of the clock
            return
        self.last_end = now
        if now - self.window_start.clock >= WINDOW_SECONDS:
            end = self._read()
            if end is not None:
                self.decide(self.window_start, end)
                self.next_window = now + INTERVAL_SECONDS
            self.window_start = None

    def _read(self) -> CpuReading | None:
        """The readings, or None where the machine does not give them: then the workers are left free for good."""
        try:
            return self.readings()
        except (OSError, psutil.Error):  # e.g. a sandbox that hides /proc/stat
            self.next_window = math.inf
            self.pinned = False
            self.apply()
            return None

    def decide(self, start: CpuReading, end: CpuReading) -> None:
        """Pin or unpin from what the CPUs did between two readings, and apply it to every worker."""
        used = CpuReading(*(b - a for a, b in zip(start, end, strict=True)))
        others = (used.cpus - used.process - used.workers) / used.clock  # other processes on the pool's CPUs
        # The pool's threads other than the stepping ones: a policy's BLAS threads, an env's own threads.
        helpers = (used.process - used.thread + used.worker_threads) / used.clock
        self.pinned = others < BUSY_LIMIT_CORES and helpers < BUSY_LIMIT_CORES
        self.apply()

    def apply(self) -> None:
        """Give every worker the current pinning, if it does not have it (a restarted one starts unpinned)."""
        everywhere = set(self.cpus)
        for cpu, process in zip(self.cpus, self.processes, strict=True):
            pid = None if process is None else process.pid
            if pid is None or self.applied.get(pid, False) == self.pinned:  # workers start unpinned
                continue
            # A worker that just died, or a CPU the process may no longer use, leaves it as it was.
            with contextlib.suppress(OSError):
                os.sched_setaffinity(pid, {cpu} if self.pinned else everywhere)
                self.applied[pid] = self.pinned


class _MachineReadings:
    """Reads the machine's :class:`CpuReading`."""

    def __init__(self, cpus: list[int], processes: Sequence[Any]) -> None:
        self.cpus = cpus
        self.processes = processes
        self.known: dict[int, psutil.Process] = {}

    def read(self) -> CpuReading:
        per_cpu = psutil.cpu_times(percpu=True)
        machine = 0.0
        for cpu in self.cpus:
            if cpu < len(per_cpu):
                times = per_cpu[cpu]
                machine += times.user + times.nice + times.system + times.irq + times.softirq
        workers, worker_threads = self._workers()
        return CpuReading(
            time.perf_counter(), machine, time.process_time(), time.thread_time(), workers, worker_threads
        )

    def _workers(self) -> tuple[float, float]:
        """The workers' CPU seconds: all their threads', and those of threads other than their main ones."""
        total = others = 0.0
        for process in self.processes:
            pid = None if process is None else process.pid
            if pid is None:
                continue
            with contextlib.suppress(psutil.Error):
                if pid not in self.known:
                    self.known[pid] = psutil.Process(pid)
                worker = self.known[pid]
                times = worker.cpu_times()  # threads that ended count here, not in threads()
                total += times.user + times.system
                # A worker's main thread has the process's id.
                others += sum(thread.user_time + thread.system_time for thread in worker.threads() if thread.id != pid)
        return total, others
