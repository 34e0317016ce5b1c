"""A Ctrl-C at any instant of a call leaves the pool consistent: no hang, no stale row, no lasting slowdown.

The interrupt is injected at every bytecode instruction the main process runs during the call (a tracer
raises SIGINT there, so the real signal path is exercised), then the pool must carry on: a step collects or
drops the interrupted call, and every later row is the env's true state.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import numpy as np
import pytest

from vecspaces.error import NoAsyncCallError
from vecspaces.vector import AsyncVectorEnv
from vecspaces.vector._async import interrupts
from vecspaces.vector._async.pool import WAIT_SLICE_SECONDS

from .envs import TickEnv

NUM_ENVS = 4
ONES = np.ones(NUM_ENVS, dtype=np.int64)
# Every instruction under fork; every few under the slower start methods (the main process runs the same code).
STRIDE = {"fork": 1, "forkserver": 7, "spawn": 7}


def no_stray_interrupt(test: Callable[..., None]) -> Callable[..., None]:
    """Fail the test, rather than end the whole pytest session, if an interrupt escapes it."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        try:
            test(*args, **kwargs)
        except KeyboardInterrupt as error:
            pytest.fail(f"a KeyboardInterrupt escaped the test: {error!r}")

    return run


@pytest.fixture(params=["fork", "forkserver", "spawn"])
def context(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def tick_pool(context: str, **kwargs: Any) -> AsyncVectorEnv:
    return AsyncVectorEnv([TickEnv] * NUM_ENVS, context=context, num_workers=2, timeout=10.0, **kwargs)


@contextmanager
def sigint_at(instant: int | None) -> Iterator[list[int]]:
    """Count the Python instructions run in the block; raise SIGINT at its ``instant``-th one (None: only count)."""
    count = [0]

    def on_instruction() -> None:
        count[0] += 1
        if count[0] == instant:
            signal.raise_signal(signal.SIGINT)

    gc.disable()  # a collection's callbacks (Hypothesis has some) would be traced too, and swallow the interrupt
    try:
        with _instruction_events(on_instruction):
            yield count
    finally:
        gc.enable()


@contextmanager
def _instruction_events(callback: Callable[[], None]) -> Iterator[None]:
    """Call ``callback`` before every bytecode instruction the main thread runs in the block."""
    if sys.version_info >= (3, 12):
        # sys.settrace's opcode events are built on sys.monitoring from 3.12 on, and miss the first calls of a code
        # object (on 3.13.0, 20 of a step's ~900 instructions were reported); the instruction events do not.
        monitoring = sys.monitoring  # type: ignore[attr-defined]
        tool = monitoring.DEBUGGER_ID
        # Claimed once for the whole run: a cleanup longer than switching the events off could be cut short by
        # the interrupt raised here.
        if monitoring.get_tool(tool) is None:
            monitoring.use_tool_id(tool, "interrupt tests")
        main = threading.get_ident()  # the events come from every thread, settrace's only from this one

        def on_instruction(code: Any, offset: int) -> None:
            if threading.get_ident() == main:
                callback()

        monitoring.register_callback(tool, monitoring.events.INSTRUCTION, on_instruction)
        monitoring.set_events(tool, monitoring.events.INSTRUCTION)
        try:
            yield
        finally:
            monitoring.set_events(tool, 0)
        return

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "opcode":
            callback()
        return local

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        return local

    sys.settrace(tracer)
    try:
        yield
    finally:
        sys.settrace(None)


def instructions_of(call: Callable[[], Any]) -> int:
    with sigint_at(None) as count:
        call()
    return count[0]


def assert_rows_are_the_envs_state(envs: AsyncVectorEnv, result: tuple[Any, ...], actions: np.ndarray) -> None:
    obs, rewards, terminations, truncations, infos = result
    counts = np.array(envs.get_attr("count"))
    assert obs[:, 0].tolist() == counts.tolist()
    assert rewards.tolist() == actions.astype(float).tolist()
    assert not terminations.any() and not truncations.any()
    odd = counts % 2 == 1
    if odd.any():
        assert infos["_tick"].tolist() == odd.tolist()
        assert infos["tick"][odd].tolist() == counts[odd].tolist()
    else:
        assert "tick" not in infos


def assert_next_step_is_right(envs: AsyncVectorEnv) -> None:
    actions = np.arange(NUM_ENVS) % 10
    assert_rows_are_the_envs_state(envs, envs.step(actions), actions)


def interrupt_each_instant(envs: AsyncVectorEnv, call: Callable[[], Any], stride: int) -> Iterator[int]:
    """Run ``call`` once per instant with a SIGINT there; yield after each, the interrupt caught."""
    total = instructions_of(call)
    assert total > 100  # the tracer saw the call's code
    for instant in range(1, total + 1, stride):
        try:
            with sigint_at(instant):
                call()
        except KeyboardInterrupt:
            pass
        yield instant


@pytest.mark.timeout(300)
@no_stray_interrupt
def test_a_step_interrupted_at_any_instant_then_stepped_again(context: str) -> None:
    with tick_pool(context) as envs:
        envs.reset()
        envs.step(ONES)  # the next steps alternate: with infos (general path), without (fast path)
        for _ in interrupt_each_instant(envs, lambda: envs.step(ONES), STRIDE[context]):
            assert_next_step_is_right(envs)


@pytest.mark.timeout(300)
@no_stray_interrupt
def test_a_step_interrupted_at_any_instant_then_collected_with_step_wait(context: str) -> None:
    with tick_pool(context) as envs:
        envs.reset()
        before = np.array(envs.get_attr("count"))
        for _ in interrupt_each_instant(envs, lambda: envs.step(ONES), STRIDE[context]):
            # NoAsyncCallError: the interrupt came before the step was sent, or after it returned.
            with contextlib.suppress(NoAsyncCallError):
                assert_rows_are_the_envs_state(envs, envs.step_wait(timeout=10), ONES)
            counts = np.array(envs.get_attr("count"))
            assert len(set(counts.tolist())) == 1  # every env stepped, or none
            assert counts[0] - before[0] in (0, 1)
            before = counts


@pytest.mark.timeout(300)
@no_stray_interrupt
def test_a_reset_interrupted_at_any_instant(context: str) -> None:
    with tick_pool(context) as envs:
        envs.reset()
        mask = np.array([True, False, True, False])
        for _ in interrupt_each_instant(envs, lambda: envs.reset(options={"reset_mask": mask}), STRIDE[context]):
            envs.step(ONES)
            assert_next_step_is_right(envs)


@pytest.mark.timeout(300)
@no_stray_interrupt
def test_pool_mode_interrupted_at_any_instant(context: str) -> None:
    with tick_pool(context, batch_size=2) as envs:
        envs.reset()
        idle = set(range(NUM_ENVS))

        def send_and_recv() -> None:
            ids = sorted(idle)
            envs.send(np.full(len(ids), 2), ids)
            idle.clear()
            idle.update(envs.recv()[-1].tolist())

        for _ in interrupt_each_instant(envs, send_and_recv, STRIDE[context]):
            while envs._pool_mode.active():
                rewards, env_ids = envs.recv(timeout=10)[1::4]
                assert rewards.tolist() == [2.0] * len(env_ids)
            idle.update(range(NUM_ENVS))
            assert_next_step_is_right(envs)


@pytest.mark.timeout(120)
@no_stray_interrupt
def test_a_sigint_storm_leaves_no_hang_no_stale_row_and_no_slowdown(
    context: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Thousands of steps with SIGINTs at random instants; each interrupt is caught and the loop goes on."""
    # A SIGINT can land in a finalizer run by the garbage collector: Python reports it as unraisable. pytest's own
    # hook for those is Python code, which the next SIGINT interrupts (failing the test); Python's is not.
    monkeypatch.setattr(sys, "unraisablehook", sys.__unraisablehook__)
    with tick_pool(context) as envs:
        envs.reset()
        envs.step(ONES)

        def step_times(count: int) -> float:
            started = time.perf_counter()
            for _ in range(count):
                envs.step(ONES)
            return (time.perf_counter() - started) / count

        stop, go = threading.Event(), threading.Event()
        rng = np.random.default_rng(0)
        delays = rng.uniform(0.0005, 0.003, 100_000)

        interrupts = steps = 0
        deadline = time.monotonic() + 3.0

        def storm() -> None:
            go.wait()  # nothing is sent before the test stands in the loops that catch every interrupt
            for delay in delays:
                # Also past the deadline by itself: a storm outliving the test would interrupt pytest.
                if stop.wait(delay) or time.monotonic() > deadline + 5.0:
                    return
                os.kill(os.getpid(), signal.SIGINT)

        def step_until_the_deadline() -> None:
            nonlocal interrupts, steps
            while time.monotonic() < deadline:
                try:
                    actions = rng.integers(0, 10, NUM_ENVS)
                    result = envs.step(actions)
                    steps += 1
                    assert result[1].tolist() == actions.astype(float).tolist()
                    assert len(set(result[0][:, 0].tolist())) == 1  # every env stepped as often
                except KeyboardInterrupt:
                    interrupts += 1

        thread = threading.Thread(target=storm, daemon=True)
        thread.start()
        # From go.set() until the storm is over, a KeyboardInterrupt can be raised at any line: each one is caught,
        # or one escaping the test would end pytest's whole session (the storm would go on during its report).
        try:
            while True:
                try:
                    go.set()
                    step_until_the_deadline()
                    break
                except KeyboardInterrupt:  # one that landed in the handler above or between its loop's turns
                    interrupts += 1
        finally:
            while True:  # stopping it too, until the last SIGINT sent has been raised
                try:
                    stop.set()
                    go.set()  # a storm that never started must end too
                    thread.join()
                    time.sleep(0.05)
                    break
                except KeyboardInterrupt:
                    interrupts += 1
        for _ in range(2):
            assert_next_step_is_right(envs)
        after = min(step_times(200) for _ in range(3))
        assert interrupts > 100 and steps > 100
        # No lasting damage: the old failure made every later step wait out blocking slices (~7000x slower);
        # a healthy one takes well under a millisecond, so one slice leaves room for any machine's load.
        assert after < WAIT_SLICE_SECONDS, after


@pytest.mark.timeout(60)
@no_stray_interrupt
def test_a_handler_installed_after_the_pool_is_deferred_too_and_saved_chains_stay_whole() -> None:
    caught: list[int] = []
    with tick_pool("fork") as envs:
        envs.reset()
        saved = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
        envs.step(ONES)  # the next call wraps the new handler in turn
        assert signal.getsignal(signal.SIGINT) is not saved
        signal.raise_signal(signal.SIGINT)
        assert caught == [signal.SIGINT]
        signal.signal(signal.SIGINT, saved)  # put back what was saved: the chain in front of Ctrl-C's default
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
            time.sleep(0.01)
    with pytest.raises(KeyboardInterrupt):  # after close(), Ctrl-C is Python's default again
        signal.raise_signal(signal.SIGINT)
        time.sleep(0.01)


def test_an_ignored_sigint_costs_no_rewrapping_and_a_later_sigterm_handler_is_still_deferred(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A run started in the background (`python train.py &`) ignores SIGINT: not a handler to wrap, so it must not
    # make every call look for one again (that made tiny steps 11-16% slower: 99-105k against 112-125k).
    wraps: list[int] = []
    original = interrupts._wrap_handlers
    monkeypatch.setattr(interrupts, "_wrap_handlers", lambda: (wraps.append(1), original())[1])
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    caught: list[int] = []
    try:
        with tick_pool("fork") as envs:
            envs.reset()
            for _ in range(5):
                envs.step(ONES)
            assert len(wraps) == 1  # by the constructor only
            saved = signal.signal(signal.SIGTERM, lambda signum, frame: caught.append(signum))
            try:
                envs.step(ONES)  # wraps the new SIGTERM handler
                assert len(wraps) == 2
                with interrupts.deferred():
                    signal.raise_signal(signal.SIGTERM)
                    assert caught == []  # held back until the deferred section ends
                assert caught == [signal.SIGTERM]
            finally:
                signal.signal(signal.SIGTERM, saved)
    finally:
        signal.signal(signal.SIGINT, previous)
