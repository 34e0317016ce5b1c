"""The failure battery: every way a sub-env or worker can fail, under every start method, none may hang."""

from __future__ import annotations

import functools
import multiprocessing
import os
import pickle
import re
import struct
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any

import numpy as np
import psutil
import pytest

from tests.helpers import is_running
from tests.vector.envs import (
    CloseRecordingEnv,
    CountdownEnv,
    DictFaultyEnv,
    FaultyEnv,
    FrameEnv,
    SpaceEnv,
    TwoArgumentError,
    assert_first_close_error_raised_after_every_env_closed,
    close_recording_envs,
    failing_factory,
)
from vecspaces.error import (
    AlreadyPendingCallError,
    ClosedEnvironmentError,
    InvalidTypeError,
    InvalidValueError,
    SpaceMismatchError,
    WaitTimeoutError,
    WorkerDiedError,
)
from vecspaces.spaces import Box, Discrete
from vecspaces.vector import AsyncVectorEnv, SyncVectorEnv
from vecspaces.vector._async import pool as pool_module
from vecspaces.vector._async import worker as worker_module
from vecspaces.vector._async.protocol import Command, RemoteTraceback
from vecspaces.vector._async.worker import WorkerConfig

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(params=["fork", "forkserver", "spawn"])
def context(request: pytest.FixtureRequest) -> str:
    return request.param


def pool(context: str, fault: str | None = None, at_step: int = 1, seconds: float = 2.0) -> AsyncVectorEnv:
    """Three envs in two workers; env 2 (worker 1) has the fault."""
    faulty = functools.partial(FaultyEnv, fault, at_step, seconds) if fault else CountdownEnv
    fns = [functools.partial(CountdownEnv, 100), functools.partial(CountdownEnv, 100), faulty]
    return AsyncVectorEnv(fns, context=context, num_workers=2)


def worker_pids(envs: AsyncVectorEnv) -> list[int]:
    return [info["pid"] for info in envs.worker_info()]


def assert_gone(pids: list[int]) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(is_running(pid) for pid in pids):
        time.sleep(0.05)
    assert not any(is_running(pid) for pid in pids), f"workers left running: {pids}"


STEP = np.array([1, 1, 1])
SLICE = pool_module.WAIT_SLICE_SECONDS


@pytest.mark.parametrize(
    ("fault", "error_type", "text"),
    [
        ("raise", KeyError, "missing-key"),
        ("raise_odd", TwoArgumentError, "odd"),
        ("percent", ValueError, "50%"),
    ],
)
@pytest.mark.parametrize("at_step", [0, 1], ids=["in_reset", "in_step"])
def test_env_exception_keeps_type_traceback_and_index(
    context: str, fault: str, error_type: type[Exception], text: str, at_step: int
) -> None:
    with pool(context, fault, at_step) as envs:
        with pytest.raises(error_type, match=text) as caught:
            envs.reset(seed=0)
            envs.step(STEP)
        error = caught.value
        assert isinstance(error.__cause__, RemoteTraceback)
        assert "_misbehave" in str(error.__cause__), "the worker's traceback is chained"
        assert any("env 2" in note for note in error.__notes__)
        # The pool is still usable: the worker survived and a reset works.
        obs, _ = envs.reset(seed=1)
        assert obs.shape == (3, 1)


@pytest.mark.parametrize("fault", ["exit", "kill"])
def test_worker_death_raises_a_pool_error_promptly(context: str, fault: str) -> None:
    envs = pool(context, fault)
    envs.reset(seed=0)
    start = time.monotonic()
    with pytest.raises(WorkerDiedError) as caught:
        envs.step(STEP)
    assert time.monotonic() - start < 1.0
    text = str(caught.value)
    assert "envs 2" in text and "during step" in text
    assert ("SIGKILL" in text) if fault == "kill" else ("exited with code 3" in text)
    # The pool is broken: further calls say so, close() still works and stops every worker.
    with pytest.raises(WorkerDiedError):
        envs.step(STEP)
    pids = worker_pids(envs)
    envs.close()
    assert_gone(pids)


def test_factory_error_fails_the_constructor_and_leaves_no_process(context: str) -> None:
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    with pytest.raises(RuntimeError, match="factory exploded") as caught:
        AsyncVectorEnv([CountdownEnv, failing_factory], context=context, num_workers=2)
    assert isinstance(caught.value.__cause__, RemoteTraceback)
    assert any("env 1" in note for note in caught.value.__notes__)
    time.sleep(0.2)
    new = [
        p
        for p in psutil.Process().children(recursive=True)
        if p.pid not in before
        and is_running(p.pid)
        and "forkserver" not in " ".join(p.cmdline())
        and "resource_tracker" not in " ".join(p.cmdline())
    ]
    assert not new, f"processes left running: {new}"


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        (
            "bad_shape",
            "shape (1,)",
        ),
        ("bad_dtype", "dtype <U1"),
    ],
)
def test_observation_not_matching_the_space_names_env_and_leaf(context: str, fault: str, expected: str) -> None:
    with pool(context, fault) as envs:
        envs.reset(seed=0)
        with pytest.raises((TypeError, ValueError), match=re.escape(expected)) as caught:
            envs.step(STEP)
        assert "obs" in str(caught.value)
        assert any("env 2" in note for note in caught.value.__notes__)
        envs.reset(seed=0)


@pytest.mark.parametrize(
    ("fault", "error_type", "expected"),
    [
        (
            "missing_key",
            ValueError,
            r"has missing keys, expected a dict with the keys \['pos', 'camera'\].*missing \['camera'\]",
        ),
        (
            "bad_leaf_shape",
            ValueError,
            r"wrong shape, expected an array of shape \(4, 4\).*got .*\(3, 3\).* at obs\['camera'\]",
        ),
        ("bad_leaf_dtype", TypeError, r"wrong dtype, expected .*got .*<U1.* at obs\['camera'\]"),
        (
            "fractional_leaf",
            ValueError,
            r"has a fraction, .* integer slot cannot hold, expected whole numbers \(stored as uint8\).*camera",
        ),
    ],
)
def test_dict_observation_not_matching_the_space_names_env_path_expected_and_got(
    context: str, fault: str, error_type: type[Exception], expected: str
) -> None:
    fns = [DictFaultyEnv, DictFaultyEnv, functools.partial(DictFaultyEnv, fault)]
    with AsyncVectorEnv(fns, context=context, num_workers=2) as envs:
        envs.reset(seed=0)
        with pytest.raises(error_type, match=expected) as caught:
            envs.step(np.array([0, 0, 0]))
        assert "obs for env 2" in str(caught.value)
        assert any("env 2" in note for note in caught.value.__notes__)
        obs, _ = envs.reset(seed=0)  # the worker survived
        assert obs["camera"].shape == (3, 4, 4)


@pytest.mark.parametrize("fault", ["missing_key", "bad_leaf_shape", "bad_leaf_dtype", "fractional_leaf"])
def test_sync_observation_not_matching_the_space_is_named_with_its_env(fault: str) -> None:
    fns = [DictFaultyEnv, DictFaultyEnv, functools.partial(DictFaultyEnv, fault)]
    with SyncVectorEnv(fns) as envs:
        envs.reset(seed=0)
        with pytest.raises((TypeError, ValueError), match=r"items\[2\]") as caught:
            envs.step(np.array([0, 0, 0]))
        assert "items[k] is env k's observation" in caught.value.__notes__[-1]
        assert "returned from step" in caught.value.__notes__[-1]


@pytest.mark.parametrize("restart", [False, True])
@pytest.mark.parametrize("call", ["reset", "call", "set_attr"])
def test_a_worker_killed_while_idle_is_reported_by_the_next_call(context: str, call: str, restart: bool) -> None:
    envs = AsyncVectorEnv(
        [functools.partial(CountdownEnv, 100, label) for label in range(3)],
        context=context,
        num_workers=2,
        restart_workers=restart,
    )
    envs.reset(seed=0)
    envs.step(STEP)
    os.kill(worker_pids(envs)[1], 9)
    assert_gone(worker_pids(envs)[1:])  # dead (a zombie until the pool reaps it)
    run = {
        "reset": lambda: envs.reset(seed=5),
        "call": lambda: envs.call("label"),
        "set_attr": lambda: envs.set_attr("label", 7),
    }[call]
    if not restart:
        with pytest.raises(WorkerDiedError, match=r"worker 1 \(pid \d+, envs 2\) died with SIGKILL"):
            run()
        with pytest.raises(WorkerDiedError):  # the pool says it is broken, not that a call is pending
            envs.step(STEP)
    else:
        result = run()
        if call == "reset":
            obs, infos = result
            assert obs[:, 0].tolist() == [0, 0, 0]
            assert infos["_worker_restarted"].tolist() == [False, False, True]
            assert infos["seed"].tolist() == [5, 6, 7]
        elif call == "call":
            assert result == (0, 1, 2)
        assert envs.restarts == 1
        obs, _, _, truncations, infos = envs.step(STEP)
        if call == "reset":  # the reset was env 2's first result after the restart, and said so
            assert obs[2, 0] == 1 and not truncations.any()
        else:  # a call's result is no row: env 2's first row after the restart is this step's, and says so
            assert obs[2, 0] == 0 and truncations.tolist() == [False, False, True]
            assert infos["_worker_restarted"].tolist() == [False, False, True]
    pids = worker_pids(envs)
    envs.close()
    assert_gone([pid for pid in pids if pid is not None])


def test_a_constructor_failing_after_the_workers_started_stops_them(context: str) -> None:
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    # Env 1 has other bounds than env 0: observation_mode="same" refuses them once the workers described them.
    with pytest.raises(SpaceMismatchError, match="env 1's observation space differs"):
        AsyncVectorEnv([DictFaultyEnv, functools.partial(SpaceEnv, Box(0, 2, (3,)), Discrete(2))], context=context)
    time.sleep(0.2)
    left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before and is_running(p.pid)]
    left = [
        p for p in left if "forkserver" not in " ".join(p.cmdline()) and "resource_tracker" not in " ".join(p.cmdline())
    ]
    assert not left, f"processes left running: {left}"


@pytest.mark.parametrize(
    ("arguments", "error", "match"),
    [
        ({"timeout": -1}, InvalidValueError, "timeout is invalid, expected a number of seconds >= 0, got -1"),
        ({"timeout": float("nan")}, InvalidValueError, "timeout is invalid"),
        ({"timeout": "5"}, InvalidTypeError, "timeout is not a number, expected a number of seconds, got '5'"),
        ({"startup_timeout": None}, InvalidTypeError, "startup_timeout is not a number"),
        ({"spin_seconds": -0.001}, InvalidValueError, "spin_seconds is invalid"),
        ({"spin_seconds": True}, InvalidTypeError, "spin_seconds is not a number"),
    ],
)
def test_bad_durations_are_refused_before_any_worker_starts(
    arguments: dict[str, Any], error: type[Exception], match: str
) -> None:
    before = set(psutil.Process().children(recursive=True))
    with pytest.raises(error, match=re.escape(match)):
        AsyncVectorEnv([CountdownEnv] * 2, **arguments)
    assert not set(psutil.Process().children(recursive=True)) - before  # no process was started


@pytest.mark.timeout(60)
def test_a_bad_wait_timeout_is_refused_and_the_call_stays_pending() -> None:
    with AsyncVectorEnv([CountdownEnv] * 2, num_workers=2, context="fork") as envs:
        envs.reset(seed=0)
        envs.step_async(STEP[:2])
        with pytest.raises(InvalidTypeError, match="timeout is not a number"):
            envs.step_wait(timeout="1")
        with pytest.raises(InvalidValueError, match="timeout is invalid"):
            envs.step_wait(timeout=float("nan"))
        observations, *_ = envs.step_wait(timeout=30)
        assert observations.shape[0] == 2


def test_a_worker_function_of_the_wrong_signature_is_refused() -> None:
    def gymnasium_style(index, env_fn, pipe, parent_pipe, shared_memory, error_queue, autoreset_mode):
        pass

    with pytest.raises(TypeError, match="worker does not take one argument"):
        AsyncVectorEnv([CountdownEnv], worker=gymnasium_style)


def test_unpicklable_info_names_the_key_and_the_worker_survives(context: str) -> None:
    with pool(context, "unpicklable_info") as envs:
        envs.reset(seed=0)
        with pytest.raises(TypeError, match=r"info\['lock'\] of env 2"):
            envs.step(STEP)
        obs, *_ = envs.step(STEP)
        assert obs.shape == (3, 1)


def test_unpicklable_call_result_names_the_attribute(context: str) -> None:
    with pool(context) as envs:
        envs.reset(seed=0)
        with pytest.raises(TypeError, match=r"call\('make_lock'\) result of env 0"):
            envs.call("make_lock")
        assert envs.get_attr("length") == (100, 100, 3)


@pytest.mark.parametrize("actions", [np.array([1, 1]), np.array([1, 1, 1, 1]), np.array([[1, 1, 1]]), [1, 2]])
def test_wrong_actions_are_rejected_before_anything_is_sent(context: str, actions: Any) -> None:
    with pool(context) as envs:
        envs.reset(seed=0)
        with pytest.raises(ValueError, match="actions"):
            envs.step(actions)
        obs, *_ = envs.step(STEP)
        assert obs[:, 0].tolist() == [1, 1, 1]


def test_step_timeout_keeps_the_pool_usable(context: str) -> None:
    with pool(context, "sleep", seconds=0.5) as envs:
        envs.reset(seed=0)
        envs.step_async(STEP)
        with pytest.raises(TimeoutError, match="step_wait") as caught:
            envs.step_wait(timeout=0.05)
        # Code written for Gymnasium catches multiprocessing.TimeoutError; both work.
        assert isinstance(caught.value, multiprocessing.TimeoutError)
        with pytest.raises(AlreadyPendingCallError, match="step_wait"):
            envs.step_async(STEP)
        obs, rewards, *_ = envs.step_wait(timeout=10)
        assert obs[:, 0].tolist() == [1, 1, 1] and rewards.tolist() == [1, 1, 1]
        obs, *_ = envs.step(STEP)
        assert obs[:, 0].tolist() == [2, 2, 2]


def test_the_default_timeout_covers_step(context: str) -> None:
    fns = [functools.partial(CountdownEnv, 100), functools.partial(FaultyEnv, "sleep", 1, 1.0)]
    with AsyncVectorEnv(fns, context=context, num_workers=2, timeout=0.1) as envs:
        envs.reset(seed=0)
        with pytest.raises(TimeoutError, match="step_wait timed out"):
            envs.step(np.array([1, 1]))
        obs, *_ = envs.step_wait(timeout=10)  # the late results are still there
        assert obs[:, 0].tolist() == [1, 1]


def test_close_while_a_call_is_pending(context: str) -> None:
    envs = pool(context, "sleep", seconds=30)
    envs.reset(seed=0)
    pids = worker_pids(envs)
    envs.step_async(STEP)
    start = time.monotonic()
    with pytest.warns(UserWarning, match="while a step is pending"):
        envs.close(timeout=0.2)
    assert time.monotonic() - start < 5
    assert_gone(pids)
    with pytest.raises(ClosedEnvironmentError):
        envs.step(STEP)
    envs.close()  # idempotent


SCRIPT_PREAMBLE = """
import os, signal, sys, threading, time
import numpy as np
sys.path.insert(0, {root!r})
from tests.vector.envs import FaultyEnv, CountdownEnv
from vecspaces.vector import AsyncVectorEnv
# A shell's background job starts with SIGINT ignored, and children inherit that: give Ctrl-C its usual meaning.
signal.signal(signal.SIGINT, signal.default_int_handler)
"""


def run_script(body: str, context: str) -> subprocess.CompletedProcess[str]:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = SCRIPT_PREAMBLE.format(root=root) + textwrap.dedent(body).replace("CONTEXT", repr(context))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=50)


def test_ctrl_c_during_step_returns_promptly_without_worker_noise(context: str) -> None:
    result = run_script(
        """
        if __name__ == "__main__":
            envs = AsyncVectorEnv([lambda: FaultyEnv("sleep", 1, seconds=30)] * 2, context=CONTEXT, num_workers=2)
            envs.reset(seed=0)
            print("pids", *[w["pid"] for w in envs.worker_info()], flush=True)
            threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
            start = time.monotonic()
            try:
                envs.step(np.array([1, 1]))
            except KeyboardInterrupt:
                print("interrupted after", round(time.monotonic() - start, 1), flush=True)
            envs.close(terminate=True)
        """,
        context,
    )
    assert "interrupted after" in result.stdout, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    pids = [int(pid) for pid in result.stdout.split("pids")[1].split("\n")[0].split()]
    assert_gone(pids)


def test_interpreter_exit_without_close_leaves_no_worker(context: str) -> None:
    result = run_script(
        """
        if __name__ == "__main__":
            envs = AsyncVectorEnv([CountdownEnv] * 2, context=CONTEXT, num_workers=2)
            envs.reset(seed=0)
            envs.step(np.array([1, 1]))
            print("pids", *[w["pid"] for w in envs.worker_info()], flush=True)
        """,
        context,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == "", result.stderr
    pids = [int(pid) for pid in result.stdout.split("pids")[1].split()]
    assert_gone(pids)


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_a_script_without_a_main_guard_is_told_to_add_one(method: str, tmp_path: Any) -> None:
    # A spawned worker imports the script anew, which creates the vector env again there, before the worker's
    # own code runs: multiprocessing refuses, and the worker can only exit with code 1.
    script = tmp_path / "unguarded.py"
    script.write_text(
        "from vecspaces.envs import TinyEnv\n"
        "from vecspaces.vector import AsyncVectorEnv\n"
        f"envs = AsyncVectorEnv([TinyEnv] * 2, num_workers=1, context={method!r})\n"
        "envs.close()\n"
    )
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=50)
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith("vecspaces.error.WorkerDiedError: worker 0"), result.stderr
    assert f"a {method!r} worker first imports the main module" in error
    assert "create it under `if __name__ == '__main__':`" in error
    assert "close() it" not in error  # the constructor raised: there is no pool to close


@pytest.mark.timeout(300)
def test_repeated_create_step_close_does_not_leak(context: str) -> None:
    # A leak of one fd or child per cycle shows in a few cycles; spawn and forkserver start workers far more
    # slowly than fork (spawn took about 1 s a cycle on a slow 2-core VM), so they run fewer.
    cycles = 200 if context == "fork" else 60
    me = psutil.Process()

    def cycle() -> None:
        with AsyncVectorEnv([CountdownEnv] * 2, context=context, num_workers=2) as envs:
            envs.reset(seed=0)
            envs.step(np.array([1, 1]))

    for _ in range(3):
        cycle()
    fds, children = me.num_fds(), len(me.children(recursive=True))
    for _ in range(cycles):
        cycle()
    assert me.num_fds() <= fds
    assert len(me.children(recursive=True)) <= children


@pytest.mark.parametrize("fault", ["exit", "kill"])
def test_restart_brings_crashed_workers_back(context: str, fault: str) -> None:
    fns = [CountdownEnv, CountdownEnv, functools.partial(FaultyEnv, fault, 2, 0.0, 100)]
    with AsyncVectorEnv(fns, context=context, num_workers=2, restart_workers=True) as envs:
        envs.reset(seed=0)
        envs.step(STEP)
        old = worker_pids(envs)
        obs, rewards, _, truncations, infos = envs.step(STEP)
        assert envs.restarts == 1
        assert worker_pids(envs)[0] == old[0] and worker_pids(envs)[1] != old[1]
        assert truncations.tolist() == [False, False, True]
        assert obs[2, 0] == 0 and rewards[2] == 0.0
        assert infos["_worker_restarted"].tolist() == [False, False, True]
        # The pool keeps stepping; as after any truncation in NEXT_STEP mode, the new env's next step is its reset.
        obs, rewards, *_ = envs.step(STEP)
        assert obs[:, 0].tolist() == [3, 3, 0] and rewards.tolist() == [1, 1, 0]
        obs, rewards, *_ = envs.step(STEP)
        assert obs[:, 0].tolist() == [0, 0, 1] and rewards.tolist() == [0, 0, 1]  # envs 0, 1 ended at 3: reset
        assert envs.restarts == 1


def dies_while_replying(marker: str, how: str, config: WorkerConfig) -> None:
    """Worker 1, the first time it has a step reply to send: signals completion, then dies before sending the
    reply (``how="before"``) or halfway through it (``"midway"``). ``marker`` (a file) records that it did."""
    original = worker_module._Worker.finish

    def finish(self: Any, reply: Any, command: Command, arguments: Any) -> None:
        if command is not Command.STEP or not reply or config.worker_index != 1 or os.path.exists(marker):
            original(self, reply, command, arguments)
            return
        open(marker, "w").close()
        payload = pickle.dumps(reply)
        self.control.has_reply[self.index] = 1
        self.control.finished[self.index] = 1
        config.completions.release()
        if how == "midway":  # the message's length header (multiprocessing's framing) and half its bytes
            os.write(config.connection.fileno(), struct.pack("!i", len(payload)) + payload[: len(payload) // 2])
        os._exit(3)

    worker_module._Worker.finish = finish  # type: ignore[method-assign]
    worker_module.run_worker(config)


@pytest.mark.parametrize("how", ["before", "midway"])
@pytest.mark.parametrize("restart", [False, True])
def test_a_worker_dying_while_sending_its_reply(context: str, tmp_path: Any, how: str, restart: bool) -> None:
    worker = functools.partial(dies_while_replying, str(tmp_path / "died"), how)
    fns = [functools.partial(CountdownEnv, 100)] * 3
    with AsyncVectorEnv(fns, context=context, num_workers=2, worker=worker, restart_workers=restart) as envs:
        envs.reset(seed=0)
        if not restart:
            death = r"worker 1 \(pid \d+, envs 2\) exited with code 3 during sending its reply"
            with pytest.raises(WorkerDiedError, match=death):
                envs.step(STEP)
            with pytest.raises(WorkerDiedError):
                envs.step(STEP)
            return
        obs, _, _, truncations, infos = envs.step(STEP)
        assert obs[:, 0].tolist() == [1, 1, 0] and truncations.tolist() == [False, False, True]
        assert infos["_worker_restarted"].tolist() == [False, False, True]
        # Every count of the dead worker's step is accounted for: the next steps wait for every worker.
        for expected in ([2, 2, 0], [3, 3, 1]):  # env 2's next step is its reset step (NEXT_STEP)
            obs, *_ = envs.step(STEP)
            assert obs[:, 0].tolist() == expected
        assert envs.restarts == 1


def counts_late(config: WorkerConfig) -> None:
    """Worker 1 sets its finished flag well after its step starts, and releases its completion count later still.

    A real worker preempted between flag and count does the same, only rarely and briefly. Here the main
    process gives up polling for counts at its second wait slice (``SLICE`` after the first), then finds the
    flag and returns the step; the count arrives in the next step's first wait slice, where it must not pass
    for a completion of that step (worker 1 has not even started it).
    """
    if config.worker_index == 1:
        handle, finish = worker_module.EnvSlice.handle, worker_module._Worker.finish

        def slow_handle(self: Any, command: Command, arguments: Any) -> Any:
            if command is Command.STEP:
                time.sleep(1.4 * SLICE)
            return handle(self, command, arguments)

        def finish_with_late_count(self: Any, reply: Any, command: Command, arguments: Any) -> None:
            if command is not Command.STEP:
                finish(self, reply, command, arguments)
                return
            self.control.has_reply[self.index] = reply is not None
            self.control.finished[self.index] = 1
            time.sleep(SLICE)
            config.completions.release()
            if reply is not None:
                self.connection.send_bytes(pickle.dumps(reply))

        worker_module.EnvSlice.handle = slow_handle  # type: ignore[method-assign]
        worker_module._Worker.finish = finish_with_late_count  # type: ignore[method-assign]
    worker_module.run_worker(config)


@pytest.mark.parametrize("with_infos", [False, True], ids=["plain_step", "step_with_infos"])
def test_a_completion_count_arriving_after_its_step_returned_is_not_taken_for_the_next_step(
    context: str, with_infos: bool
) -> None:
    env_fn = functools.partial(CountdownEnv, 100) if with_infos else FrameEnv
    with AsyncVectorEnv([env_fn] * 3, context=context, num_workers=2, worker=counts_late) as envs:
        envs.reset(seed=0)
        for t in range(1, 5):
            obs, _, _, _, infos = envs.step(STEP)
            counts = obs[:, 0] if with_infos else obs["count"]
            assert counts.tolist() == [t, t, t]  # env 2 would still be at t - 1 had the step ended early
            assert ("count" in infos) == with_infos


def test_workers_exit_by_themselves_when_the_main_process_is_killed(context: str) -> None:
    result = run_script(
        """
        if __name__ == "__main__":
            envs = AsyncVectorEnv([CountdownEnv] * 2, context=CONTEXT, num_workers=2)
            envs.reset(seed=0)
            print("pids", *[w["pid"] for w in envs.worker_info()], flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        """,
        context,
    )
    assert result.returncode == -9
    pids = [int(pid) for pid in result.stdout.split("pids")[1].split()]
    assert_gone(pids)


def test_ctrl_c_during_pool_mode_recv_returns_promptly(context: str) -> None:
    result = run_script(
        """
        if __name__ == "__main__":
            fns = [lambda: FaultyEnv("sleep", 1, seconds=30)] * 2
            envs = AsyncVectorEnv(fns, context=CONTEXT, num_workers=2, batch_size=2)
            envs.reset(seed=0)
            print("pids", *[w["pid"] for w in envs.worker_info()], flush=True)
            envs.send(np.array([1, 1]))
            threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
            try:
                envs.recv()
            except KeyboardInterrupt:
                print("interrupted", flush=True)
            envs.close(terminate=True)
        """,
        context,
    )
    assert "interrupted" in result.stdout, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    pids = [int(pid) for pid in result.stdout.split("pids")[1].split("\n")[0].split()]
    assert_gone(pids)


class SlowToBuildEnv(CountdownEnv):
    """An env whose constructor takes ``seconds``."""

    def __init__(self, seconds: float) -> None:
        time.sleep(seconds)
        super().__init__()


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_a_worker_slower_to_build_its_envs_than_startup_timeout(start_method: str) -> None:
    stop = threading.Event()
    threading.Thread(target=stop.wait, daemon=True).start()
    others = threading.active_count() - 1  # this one, and any an earlier test left (Ray's)
    try:
        start = time.monotonic()
        # Env 0 is built in this process too, for the spaces: the slow one comes second.
        fns = [CountdownEnv, functools.partial(SlowToBuildEnv, 30)]
        with pytest.raises(WaitTimeoutError, match=r"worker 0 \(envs 0-1\) did not finish building its envs") as caught:
            AsyncVectorEnv(fns, num_workers=1, context=start_method, startup_timeout=2.0)
        assert time.monotonic() - start < 15
    finally:
        stop.set()
    message = str(caught.value)
    assert "within startup_timeout (2 s)" in message
    assert "raise startup_timeout" in message
    # Only a forked worker inherits the locks the other threads held.
    plural = "s" if others > 1 else ""
    assert (f"ran {others} other thread{plural} when it forked" in message) is (start_method == "fork")
    assert ("context='forkserver' or 'spawn'" in message) is (start_method == "fork")


class ProcessStartingEnv(CountdownEnv):
    """An env whose constructor runs a helper process, as a simulator launched through multiprocessing does."""

    def __init__(self) -> None:
        helper = multiprocessing.get_context("fork").Process(target=int)
        helper.start()
        helper.join()
        super().__init__()


def test_an_env_starting_processes_in_a_daemon_worker_is_told_to_use_daemon_false() -> None:
    with pytest.raises(AssertionError, match="daemonic processes are not allowed to have children") as caught:
        AsyncVectorEnv([ProcessStartingEnv] * 2, num_workers=1, context="fork")
    assert any("create the vector env with daemon=False" in note for note in caught.value.__notes__)
    with AsyncVectorEnv([ProcessStartingEnv] * 2, num_workers=1, context="fork", daemon=False) as envs:
        assert envs.reset(seed=0)[0].shape == (2, 1)


@pytest.mark.parametrize("backend", ["sync", "async", "async with main_process_envs"])
def test_every_env_is_closed_and_the_first_close_error_reaches_the_caller(backend: str, tmp_path: Any) -> None:
    fns = close_recording_envs(str(tmp_path))
    if backend == "sync":
        envs: Any = SyncVectorEnv(fns)
    else:
        local = 2 if backend == "async with main_process_envs" else 0
        envs = AsyncVectorEnv(fns, num_workers=2, main_process_envs=local, context="fork")
    envs.reset(seed=0)
    # Env 0 of a pool without main_process_envs is closed twice: its probe copy, then the worker's.
    assert_first_close_error_raised_after_every_env_closed(envs, str(tmp_path))


def test_a_probe_env_whose_close_raises_is_a_warning_not_a_failed_start(tmp_path: Any) -> None:
    fns = [functools.partial(CloseRecordingEnv, str(tmp_path), label, (0,)) for label in range(2)]
    with pytest.warns(RuntimeWarning, match=r"env 0, built in the main process only to read its spaces, raised Va"):
        envs = AsyncVectorEnv(fns, num_workers=1, context="fork")
    assert envs.reset(seed=0)[0].shape == (2, 1)
    with pytest.raises(ValueError, match="env 0 could not close"):
        envs.close()
