"""Adaptive waiting: poll while answers come quickly, block when they do not (vecspaces.vector._async.waiting)."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import threading
import time
from typing import Any

import numpy as np
import pytest

from tests.vector.envs import SleepyEnv
from vecspaces.envs import TinyEnv
from vecspaces.vector import AsyncVectorEnv
from vecspaces.vector._async import waiting
from vecspaces.vector._async.waiting import AdaptiveSpin, TrialSpin, acquire, poll
from vecspaces.vector._async.worker import WorkerConfig, run_worker


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
    assert poll(semaphore, until=0.0)
    assert not semaphore.acquire(blocking=False)


def test_poll_gives_up_at_its_deadline_without_taking_anything() -> None:
    semaphore = threading.Semaphore(0)
    assert not poll(semaphore, until=time.perf_counter() + 0.01)
    semaphore.release()
    assert semaphore.acquire(blocking=False)


def test_poll_takes_a_release_that_comes_while_it_polls() -> None:
    semaphore = threading.Semaphore(0)
    releaser = threading.Timer(0.01, semaphore.release)
    releaser.start()
    assert poll(semaphore, until=time.perf_counter() + 10.0)
    releaser.join()


def test_acquire_blocks_in_slices_and_checks_between_them() -> None:
    semaphore, slices = threading.Semaphore(0), []

    def on_slice() -> None:
        slices.append(1)
        if len(slices) == 3:
            semaphore.release()

    acquire(semaphore, AdaptiveSpin(0.0), 0.001, on_slice)
    assert len(slices) == 3


class FakeClock:
    """Stands in for the ``time`` module in ``waiting``: the tests say how long each cycle takes."""

    def __init__(self) -> None:
        self.now = 100.0

    def perf_counter(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(waiting, "time", fake)
    return fake


def run_cycles(spin: TrialSpin, clock: FakeClock, seconds: list[float]) -> None:
    """Cycles of the given lengths, each ending with a short wait."""
    for cycle in seconds:
        clock.now += cycle
        spin.record(10e-6)


def cycles_until_the_trial_is_due(spin: TrialSpin, clock: FakeClock, cycle: float) -> None:
    """Run cycles of one length until the next clock read finds the trial due (the clock is read rarely)."""
    while spin.timed is None:
        run_cycles(spin, clock, [cycle])


def spin_at_its_first_trial(clock: FakeClock, cycle: float) -> TrialSpin:
    """A new main-process spin whose first trial has just begun, after cycles of length ``cycle``."""
    spin = TrialSpin(1e-3, np.zeros(1, np.int8))
    clock.now += waiting.FIRST_TRIAL_SECONDS
    cycles_until_the_trial_is_due(spin, clock, cycle)
    return spin


TIMED = waiting.TRIAL_CYCLES


def test_the_main_process_starts_polling_and_tries_nothing_in_its_first_moments(clock: FakeClock) -> None:
    spin = TrialSpin(1e-3, np.zeros(1, np.int8))
    run_cycles(spin, clock, [1e-5] * 100)  # 1 ms, well before FIRST_TRIAL_SECONDS
    assert spin.blocking[0] == 0 and spin.timed is None
    assert spin.budget() > 0


def test_a_trial_keeps_blocking_when_blocking_made_the_cycles_clearly_shorter(clock: FakeClock) -> None:
    spin = spin_at_its_first_trial(clock, 1e-3)
    run_cycles(spin, clock, [1e-3] * TIMED)  # polling, while someone else's process takes the core
    assert spin.blocking[0] == 1  # the trial of blocking is under way, and the workers see it
    run_cycles(spin, clock, [1e-4] * TIMED)
    assert spin.blocking[0] == 1 and spin.timed is None
    assert spin.budget() == 0.0


def test_a_trial_that_is_not_clearly_faster_goes_back(clock: FakeClock) -> None:
    spin = spin_at_its_first_trial(clock, 1e-4)
    run_cycles(spin, clock, [1e-4] * TIMED)
    run_cycles(spin, clock, [0.95e-4] * TIMED)  # 5% faster is within the noise: not worth switching
    assert spin.blocking[0] == 0 and spin.timed is None


def test_the_next_trial_comes_after_the_interval_and_can_switch_back(clock: FakeClock) -> None:
    spin = spin_at_its_first_trial(clock, 1e-3)
    run_cycles(spin, clock, [1e-3] * TIMED + [1e-4] * TIMED)
    assert spin.blocking[0] == 1
    run_cycles(spin, clock, [1e-4] * 1000)  # 0.1 s: too soon for another trial
    assert spin.timed is None
    clock.now += waiting.TRIAL_INTERVAL_SECONDS  # the busy neighbour is gone
    cycles_until_the_trial_is_due(spin, clock, 1e-4)
    run_cycles(spin, clock, [1e-4] * TIMED)  # blocking
    run_cycles(spin, clock, [2e-5] * TIMED)  # polling
    assert spin.blocking[0] == 0


def test_a_few_long_pauses_of_the_caller_do_not_decide_a_trial(clock: FakeClock) -> None:
    spin = spin_at_its_first_trial(clock, 2e-5)
    pauses = [5.0] * 3  # e.g. the caller evaluated its policy between steps
    run_cycles(spin, clock, [2e-5] * (TIMED - len(pauses)) + pauses)
    run_cycles(spin, clock, [5e-5] * TIMED)  # blocking, without pauses but slower
    assert spin.blocking[0] == 0


def test_a_few_long_pauses_in_the_tried_mode_do_not_decide_a_trial_either(clock: FakeClock) -> None:
    spin = spin_at_its_first_trial(clock, 1e-3)
    run_cycles(spin, clock, [1e-3] * TIMED)  # polling, while someone else's process takes the core
    run_cycles(spin, clock, [5.0] * 3 + [1e-4] * (TIMED - 3))  # blocking, with pauses of the caller
    assert spin.blocking[0] == 1 and spin.timed is None


def test_a_pool_that_never_polls_never_tries_to(clock: FakeClock) -> None:
    spin = TrialSpin(0.0, np.zeros(1, np.int8))
    for _ in range(5):
        clock.now += waiting.TRIAL_INTERVAL_SECONDS
        run_cycles(spin, clock, [1e-3] * 200)
    assert spin.blocking[0] == 0 and spin.timed is None
    assert spin.budget() == 0.0


def test_the_workers_follow_the_shared_flag() -> None:
    flag = np.zeros(1, np.int8)
    worker_spin = AdaptiveSpin(1e-3, flag)
    assert worker_spin.budget() > 0
    flag[0] = 1
    assert worker_spin.budget() == 0.0


def _worker_noting_its_spin(folder: str, config: WorkerConfig) -> None:
    with open(os.path.join(folder, str(config.worker_index)), "w") as note:
        note.write(repr(config.spin_seconds))
    run_worker(config)


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("spin_seconds", "worker_spin"), [(1e-3, waiting.WORKER_MAX_SPIN_SECONDS), (5e-5, 5e-5), (0, 0)]
)
def test_workers_poll_for_their_next_command_no_longer_than_a_few_wake_ups(
    tmp_path: Any, spin_seconds: float, worker_spin: float
) -> None:
    # What a worker waits for is the main process's work between steps, which needs the cores meanwhile.
    worker = functools.partial(_worker_noting_its_spin, str(tmp_path))
    with AsyncVectorEnv([TinyEnv] * 2, num_workers=2, spin_seconds=spin_seconds, worker=worker) as envs:
        envs.reset(seed=0)
        assert envs._pool.pacing.spin.max_spin == spin_seconds  # the main process's own waits keep the full limit
    assert [float((tmp_path / str(w)).read_text()) for w in range(2)] == [worker_spin] * 2


@pytest.mark.timeout(60)
def test_the_main_process_learns_the_whole_wait_of_steps_whose_envs_return_infos() -> None:
    # An info sends the step down the general path after the quiet one has waited; that wait must count, or
    # the main process polls through every slow step as if it were quick.
    with AsyncVectorEnv([functools.partial(SleepyEnv, seconds=0.003)] * 2, num_workers=2, spin_seconds=1e-3) as envs:
        envs.reset(seed=0)
        for _ in range(20):
            envs.step(np.zeros(2, dtype=np.int64))
        assert envs._pool.pacing.spin.typical >= 1e-3
        assert envs._pool.pacing.spin.budget() == 0.0


@pytest.mark.timeout(60)
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity is a Linux feature")
def test_a_pool_sharing_its_cpu_with_a_busy_process_stops_polling() -> None:
    allowed = os.sched_getaffinity(0)
    cpu = min(allowed)
    busy = subprocess.Popen([sys.executable, "-c", f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"])
    os.sched_setaffinity(0, {cpu})
    try:
        with AsyncVectorEnv([TinyEnv] * 4, num_workers=2, pin_workers=True) as envs:
            envs.reset(seed=0)
            deadline = time.monotonic() + 30.0
            while not envs._control.blocking[0] and time.monotonic() < deadline:
                observations = envs.step(np.zeros(4, dtype=np.int64))[0]
                assert envs.observation_space.contains(observations)
            assert envs._control.blocking[0] == 1
    finally:
        os.sched_setaffinity(0, allowed)
        busy.kill()
        busy.wait()
