"""Other threads of the main process that keep a core busy while it waits for the workers.

A policy computed with numpy leaves OpenBLAS's threads busy-waiting for about a tenth of a second after each
product, and torch's OpenMP threads do the same: while the workers then step, those idle threads hold a core the
workers need (on 2 cores, a 2 ms step took 4.3 ms). The pool cannot stop them, but it can see them: while the
main thread is blocked waiting, the process's CPU time grows only by what its other threads use. Once those
threads used half a core or more over ``WATCH_SECONDS`` of such waits, the pool warns, once, with the fix.

The warning is issued when the call that found it ends, not in the wait: where warnings are errors (``-W error``,
pytest's ``filterwarnings = error``), raising it mid-wait would lose a completion the pool had already taken.
"""

from __future__ import annotations

import os
import sys
import time
import warnings

from vecspaces.error import PerformanceWarning

__all__ = ["BusyThreadsWatch", "stacklevel_outside_vecspaces"]

# Seconds of blocked waiting summed up before each verdict, and the share of a core that is busy.
WATCH_SECONDS = 2.0
BUSY_SHARE = 0.5
# Only one blocked wait in this many is measured: reading the CPU clocks costs a few microseconds.
SAMPLE_EVERY = 4


class BusyThreadsWatch:
    """Measures the CPU the process's other threads use while the main thread is blocked; warns once.

    Call :meth:`blocking` just before a blocking wait, :meth:`unblocked` just after it, and :meth:`warn_if_due`
    once the call that waited has settled the pool's state.
    """

    def __init__(self) -> None:
        self.warned = False
        self.due: float | None = None  # the busy share found, until it is warned of
        self.countdown = 1
        self.measuring = False
        self.waited = self.used = 0.0  # seconds blocked, CPU seconds of the other threads meanwhile
        self.wall = self.process = self.thread = 0.0

    def blocking(self) -> None:
        if self.warned:
            return
        self.countdown -= 1
        self.measuring = not self.countdown
        if self.measuring:
            self.countdown = SAMPLE_EVERY
            self.wall, self.process, self.thread = time.perf_counter(), time.process_time(), time.thread_time()

    def unblocked(self) -> None:
        if not self.measuring:
            return
        self.measuring = False
        self.used += (time.process_time() - self.process) - (time.thread_time() - self.thread)
        self.waited += time.perf_counter() - self.wall
        if self.waited * SAMPLE_EVERY < WATCH_SECONDS:
            return
        share = self.used / self.waited
        self.waited = self.used = 0.0
        if share >= BUSY_SHARE:
            self.warned = True
            self.due = share

    def warn_if_due(self) -> None:
        """Issue the warning a wait found due (it raises where warnings are errors: the pool is settled by now)."""
        if self.due is None:
            return
        share, self.due = self.due, None
        warnings.warn(
            f"while the workers stepped, other threads of this process kept {share:.1f} of a core busy (numpy's "
            f"BLAS threads and torch's OpenMP threads busy-wait after each computation), taking it from the "
            f"workers; let them sleep at once (OPENBLAS_THREAD_TIMEOUT=4 for numpy, OMP_WAIT_POLICY=PASSIVE for torch, "
            f"set before either is imported) or run the policy on one thread (threadpoolctl.threadpool_limits(1) "
            f"around numpy code, torch.set_num_threads(1))",
            PerformanceWarning,
            stacklevel=stacklevel_outside_vecspaces(),
        )


_PACKAGE_DIRECTORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def stacklevel_outside_vecspaces() -> int:
    """The ``stacklevel`` that points a warning at the caller's own code (the call of ``step``, ...)."""
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIRECTORY):
        frame, level = frame.f_back, level + 1
    return level
