"""What the machine does while ``bench_vector.py`` runs: its ceiling, its CPUs' speed, stolen time, memory, and
the busy neighbours the ``nb`` scenarios start. Nothing here is any vector env's doing."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import psutil

from vecspaces.vector._machine import usable_cores

# How long each round times the CPUs, all of them one after the other (see cpu_chunk_times).
CALIBRATION_SECONDS = 0.1


@dataclass
class Conditions:
    """What the machine was like while a scenario ran.

    Attributes:
        stolen: the share of CPU time the hypervisor took (None where the OS does not say).
        ceiling_runs: the rates of :func:`plain_loops_rate`, one per round (scenarios with a ceiling only).
        chunk_times: per CPU, the :func:`cpu_chunk_times` of every round.
    """

    stolen: float | None = None
    ceiling_runs: list[float] = field(default_factory=list)
    chunk_times: dict[int, list[float]] = field(default_factory=dict)


def physical_cores() -> int:
    return psutil.cpu_count(logical=False) or 1


def child_pids() -> set[int]:
    return {child.pid for child in psutil.Process().children(recursive=True)}


def tree_rss(exclude: set[int]) -> int:
    """Resident memory of this process and its children but those in ``exclude``, in bytes."""
    me = psutil.Process()
    total = me.memory_info().rss
    for child in me.children(recursive=True):
        if child.pid not in exclude:
            with contextlib.suppress(psutil.Error):  # a child may exit while we look
                total += child.memory_info().rss
    return total


def _plain_loop(make_env: Callable[[], Any], seconds: float, results: Any) -> None:
    """Step one env as fast as it goes for about ``seconds``, with no vector env around it; put its steps/s."""
    env = make_env()
    env.reset(seed=0)
    action = env.action_space.sample()
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
        steps += 1
    results.put(steps / (time.perf_counter() - start))


def plain_loops_rate(make_env: Callable[[], Any], seconds: float) -> float:
    """The machine's ceiling: env-steps/s of one plain env loop per core this process may use, all at once.

    No vector env of these envs can beat it: it is what the cores give the envs' own work with nothing around
    it, below the nominal figure wherever a VM's hypervisor or interrupts take part of each core.
    """
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    loops = [context.Process(target=_plain_loop, args=(make_env, seconds, results)) for _ in range(usable_cores())]
    for loop in loops:
        loop.start()
    # A loop that died (its env failed to build) never reports: do not wait for it forever.
    rates = [results.get(timeout=seconds + 120) for _ in loops]
    for loop in loops:
        loop.join()
    return sum(rates)


def _burn() -> None:
    while True:
        pass


@contextlib.contextmanager
def busy_neighbours(count: int) -> Iterator[None]:
    """Run ``count`` processes that burn a core each (another training run on the same machine) meanwhile."""
    context = multiprocessing.get_context("spawn")
    neighbours = [context.Process(target=_burn, daemon=True) for _ in range(count)]
    for neighbour in neighbours:
        neighbour.start()
    try:
        yield
    finally:
        for neighbour in neighbours:
            neighbour.kill()
            neighbour.join()


def calibration_chunk() -> int:
    """A fixed piece of pure-Python work (35-55 us on this project's VM, depending on its host's load)."""
    total = 0
    for i in range(1000):
        total += i * i
    return total


def cpu_chunk_times(seconds: float = CALIBRATION_SECONDS) -> dict[int, float]:
    """Per CPU this process may use, the median time of :func:`calibration_chunk` run there alone.

    A VM's CPU can run the same code markedly slower, in spells of milliseconds to seconds, when its host gives
    the physical core to other work (another guest on the core's second hyperthread, say). Steal time does not
    show that, and a lockstep of workers waits for its slowest CPU. The CPUs share ``seconds`` (at least 5 ms
    each). Empty where CPU affinity is not available.
    """
    if not hasattr(os, "sched_setaffinity"):
        return {}
    allowed = os.sched_getaffinity(0)
    times: dict[int, float] = {}
    each = max(0.005, seconds / len(allowed))
    try:
        for cpu in sorted(allowed):
            os.sched_setaffinity(0, {cpu})
            chunks, end = [], time.perf_counter() + each
            while (start := time.perf_counter()) < end:
                calibration_chunk()
                chunks.append(time.perf_counter() - start)
            times[cpu] = statistics.median(chunks)
    finally:
        os.sched_setaffinity(0, allowed)
    return times


def stolen_share(before: Any, after: Any) -> float | None:
    """The share of this machine's CPU time its hypervisor took between two ``psutil.cpu_times()`` readings.

    None where the OS does not say (steal time is a Linux figure). A VM whose CPUs are taken runs everything
    slower, and Gymnasium's process-heavy AsyncVectorEnv differently from the rest: a run with more than a few
    percent stolen is worth repeating.
    """
    if not hasattr(after, "steal"):
        return None
    # guest and guest_nice are already counted in user and nice.
    total = sum(after) - sum(before) - sum(getattr(after, f) - getattr(before, f) for f in ("guest", "guest_nice"))
    return (after.steal - before.steal) / total if total > 0 else 0.0
