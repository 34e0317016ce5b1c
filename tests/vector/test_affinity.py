"""Pinning workers to CPUs (``pin_workers``)."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import numpy as np
import psutil
import pytest

from tests.vector.envs import CountdownEnv, FaultyEnv
from vecspaces.error import InvalidTypeError
from vecspaces.vector import AsyncVectorEnv
from vecspaces.vector._async import affinity, options

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="CPU affinity is a Linux feature"),
]
ALLOWED = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []


def worker_cpus(envs: AsyncVectorEnv) -> list[list[int]]:
    return [sorted(psutil.Process(info["pid"]).cpu_affinity()) for info in envs.worker_info()]


def test_by_default_workers_start_unpinned_even_one_per_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {2, 5, 7})
    assert options.worker_cpus(None, 3) == [None] * 3
    assert options.worker_cpus(None, 2) == [None, None]


def test_a_default_pool_with_one_worker_per_cpu_starts_with_them_free_to_move() -> None:
    with AsyncVectorEnv([CountdownEnv] * len(ALLOWED), num_workers=len(ALLOWED)) as envs:
        assert worker_cpus(envs) == [ALLOWED] * len(ALLOWED)


def test_only_the_default_with_one_worker_per_allowed_cpu_pins_by_measurement(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {5, 2})
    assert options.auto_pinning_cpus(None, 2) == [2, 5]
    assert options.auto_pinning_cpus(None, 1) is None  # the main process has a core of its own
    assert options.auto_pinning_cpus(None, 3) is None  # pinned, two workers would share a core
    assert options.auto_pinning_cpus(True, 2) is None
    assert options.auto_pinning_cpus(False, 2) is None


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def perf_counter(self) -> float:
        return self.now


class FakeCpus:
    """Readings as ``AutoPinning`` takes them: the clock and the CPU seconds used so far, which tests advance."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.machine = self.process = self.thread = self.workers = self.worker_threads = 0.0

    def advance(
        self, seconds: float, *, others: float = 0.0, helpers: float = 0.0, worker_helpers: float = 0.0
    ) -> None:
        """``seconds`` of stepping: the workers and the stepping thread busy; other processes, the main process's
        other threads and the workers' other threads as given (in cores)."""
        self.clock.now += seconds
        self.workers += (2.0 * 0.9 + worker_helpers) * seconds
        self.worker_threads += worker_helpers * seconds
        self.thread += 0.3 * seconds
        self.process += (0.3 + helpers) * seconds
        self.machine += (2.0 * 0.9 + 0.3 + helpers + worker_helpers + others) * seconds

    def read(self) -> affinity.CpuReading:
        return affinity.CpuReading(
            self.clock.now, self.machine, self.process, self.thread, self.workers, self.worker_threads
        )


@dataclass
class FakeProcess:
    pid: int


FakeMachine = tuple[FakeCpus, dict[int, set[int]]]


@pytest.fixture
def fake_machine(monkeypatch: pytest.MonkeyPatch) -> FakeMachine:
    """Fake CPU readings and a record of the affinity each pid was given."""
    clock = FakeClock()
    monkeypatch.setattr(affinity, "time", clock)
    given: dict[int, set[int]] = {}
    monkeypatch.setattr(affinity.os, "sched_setaffinity", lambda pid, cpus: given.__setitem__(pid, set(cpus)))
    return FakeCpus(clock), given


def step_for(pinning: affinity.AutoPinning, cpus: FakeCpus, seconds: float, **busy: float) -> None:
    """Steps of 1 ms for ``seconds``, each ending with a wait of 0.8 ms."""
    for _ in range(round(seconds / 1e-3)):
        cpus.advance(1e-3, **busy)
        pinning.tick(8e-4)


def test_auto_pinning_pins_while_nothing_else_keeps_the_cpus_busy(fake_machine: FakeMachine) -> None:
    cpus, given = fake_machine
    processes = [FakeProcess(11), FakeProcess(12)]
    pinning = affinity.AutoPinning([0, 1], processes, cpus.read)
    step_for(pinning, cpus, affinity.FIRST_WINDOW_SECONDS)
    assert given == {}  # nothing is decided before a window of stepping was measured
    step_for(pinning, cpus, affinity.WINDOW_SECONDS + 0.2)
    assert given == {11: {0}, 12: {1}}
    given.clear()
    step_for(pinning, cpus, affinity.INTERVAL_SECONDS + affinity.WINDOW_SECONDS + 0.2)
    assert pinning.pinned and given == {}  # still quiet: nothing to change


@pytest.mark.parametrize(
    "busy",
    [{"others": 0.95}, {"helpers": 0.9}, {"worker_helpers": 0.5}],
    ids=["busy-neighbour", "busy-blas-threads", "busy-env-threads"],
)
def test_auto_pinning_unpins_when_a_neighbour_or_a_helper_thread_keeps_a_cpu_busy(
    fake_machine: FakeMachine, busy: dict[str, float]
) -> None:
    cpus, given = fake_machine
    pinning = affinity.AutoPinning([0, 1], [FakeProcess(11), FakeProcess(12)], cpus.read)
    step_for(pinning, cpus, affinity.FIRST_WINDOW_SECONDS + affinity.WINDOW_SECONDS + 0.2)
    assert given == {11: {0}, 12: {1}}
    step_for(pinning, cpus, affinity.INTERVAL_SECONDS + affinity.WINDOW_SECONDS + 0.2, **busy)
    assert not pinning.pinned
    assert given == {11: {0, 1}, 12: {0, 1}}


def test_auto_pinning_ignores_a_window_with_a_pause_in_stepping(fake_machine: FakeMachine) -> None:
    cpus, given = fake_machine
    pinning = affinity.AutoPinning([0, 1], [FakeProcess(11), FakeProcess(12)], cpus.read)
    step_for(pinning, cpus, affinity.FIRST_WINDOW_SECONDS + affinity.WINDOW_SECONDS + 0.2)
    assert given == {11: {0}, 12: {1}}
    step_for(pinning, cpus, affinity.INTERVAL_SECONDS - 0.1)
    step_for(pinning, cpus, 0.2)  # a window opens
    # Another vector env keeps both cores busy meanwhile: not a neighbour of this pool's steps.
    cpus.clock.now += 1.0
    cpus.machine += 2.0
    step_for(pinning, cpus, affinity.WINDOW_SECONDS + 0.2)
    assert pinning.pinned
    assert given == {11: {0}, 12: {1}}


def test_auto_pinning_leaves_the_workers_free_where_the_cpu_times_cannot_be_read(fake_machine: FakeMachine) -> None:
    cpus, given = fake_machine

    def hidden() -> affinity.CpuReading:
        raise PermissionError("/proc/stat")

    pinning = affinity.AutoPinning([0, 1], [FakeProcess(11), FakeProcess(12)], hidden)
    step_for(pinning, cpus, affinity.FIRST_WINDOW_SECONDS + affinity.INTERVAL_SECONDS + 1.0)
    assert given == {}
    assert not pinning.pinned
    # Readings that stop in the middle of a window free workers pinned before.
    readable = {"now": True}

    def until_hidden() -> affinity.CpuReading:
        if readable["now"]:
            return cpus.read()
        raise PermissionError("/proc/stat")

    pinning = affinity.AutoPinning([0, 1], [FakeProcess(11), FakeProcess(12)], until_hidden)
    step_for(pinning, cpus, affinity.FIRST_WINDOW_SECONDS + affinity.WINDOW_SECONDS + 0.2)
    assert given == {11: {0}, 12: {1}}
    step_for(pinning, cpus, affinity.INTERVAL_SECONDS + 0.1)  # the next window opens
    readable["now"] = False
    step_for(pinning, cpus, affinity.WINDOW_SECONDS + 0.1)
    assert not pinning.pinned
    assert given == {11: {0, 1}, 12: {0, 1}}


def test_auto_pinning_gives_a_replaced_worker_the_current_pinning_and_survives_a_gone_one(
    fake_machine: FakeMachine,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cpus, given = fake_machine
    processes: list[FakeProcess | None] = [FakeProcess(11), FakeProcess(12)]
    pinning = affinity.AutoPinning([0, 1], processes, cpus.read)
    pinning.pinned = True
    pinning.apply()
    processes[1] = FakeProcess(13)  # restarted
    processes[0] = None  # being replaced
    given.clear()
    pinning.apply()
    assert given == {13: {1}}

    def gone(pid: int, cpus: set[int]) -> None:
        raise ProcessLookupError(pid)

    monkeypatch.setattr(affinity.os, "sched_setaffinity", gone)
    processes[0] = FakeProcess(14)
    pinning.apply()  # the worker died meanwhile: nothing to pin, no error
    assert 14 not in pinning.applied


def test_a_default_pool_pins_and_unpins_its_real_workers_as_measured() -> None:
    fns = [CountdownEnv] * (len(ALLOWED) - 1) + [functools.partial(FaultyEnv, "exit", 1, 0.0, 100)]
    with AsyncVectorEnv(fns, num_workers=len(ALLOWED), restart_workers=True) as envs:
        pinning = envs._pool.pacing.pinning
        assert pinning is not None
        start = affinity.CpuReading(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        quiet = start, affinity.CpuReading(1.0, 1.0, 0.2, 0.2, 0.8, 0.0)
        busy = start, affinity.CpuReading(1.0, 2.0, 0.2, 0.2, 0.8, 0.0)
        pinning.decide(*quiet)
        assert worker_cpus(envs) == [[cpu] for cpu in ALLOWED]
        envs.reset(seed=0)
        envs.step(np.zeros(len(ALLOWED), dtype=np.int64))
        assert envs.restarts == 1
        pinning.decide(*quiet)  # the same decision reaches the replacement
        assert worker_cpus(envs) == [[cpu] for cpu in ALLOWED]
        pinning.decide(*busy)
        assert worker_cpus(envs) == [ALLOWED] * len(ALLOWED)


def test_pin_true_goes_round_the_allowed_cpus_and_false_never_pins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {2, 5})
    assert options.worker_cpus(True, 3) == [2, 5, 2]
    assert options.worker_cpus(False, 2) == [None, None]


def test_pinned_workers_run_on_their_cpus_and_the_main_process_stays_free() -> None:
    with AsyncVectorEnv([CountdownEnv] * 3, num_workers=3, pin_workers=True) as envs:
        envs.reset(seed=0)
        envs.step(np.zeros(3, dtype=np.int64))
        assert worker_cpus(envs) == [[ALLOWED[w % len(ALLOWED)]] for w in range(3)]
    assert sorted(os.sched_getaffinity(0)) == ALLOWED


def test_unpinned_workers_may_run_anywhere_the_main_process_may() -> None:
    with AsyncVectorEnv([CountdownEnv] * 2, num_workers=2, pin_workers=False) as envs:
        assert worker_cpus(envs) == [ALLOWED, ALLOWED]


def test_a_restarted_worker_is_pinned_like_the_one_it_replaces() -> None:
    fns = [CountdownEnv, functools.partial(FaultyEnv, "exit", 1, 0.0, 100)]
    with AsyncVectorEnv(fns, num_workers=2, pin_workers=True, restart_workers=True) as envs:
        envs.reset(seed=0)
        before = worker_cpus(envs)
        envs.step(np.zeros(2, dtype=np.int64))
        assert envs.restarts == 1
        assert worker_cpus(envs) == before == [[ALLOWED[0]], [ALLOWED[1 % len(ALLOWED)]]]


def test_pin_workers_must_be_none_or_a_bool() -> None:
    with pytest.raises(InvalidTypeError, match=r"pin_workers is invalid, expected None, True or False, got 'yes'"):
        AsyncVectorEnv([CountdownEnv] * 2, pin_workers="yes")  # type: ignore[arg-type]
