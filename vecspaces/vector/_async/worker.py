"""The worker process: builds its slice of sub-envs, then runs commands until told to close.

A worker never raises out of its loop for an env's error: the error goes back to the main process with its
traceback, and the worker waits for the next command. It ignores SIGINT (the main process owns Ctrl-C) and
exits by itself if the main process disappears.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import signal
from dataclasses import dataclass
from typing import Any

import cloudpickle

from vecspaces.error import InvalidTypeError, message, show
from vecspaces.vector._async.blas_threads import cap_worker_threads
from vecspaces.vector._async.env_slice import EnvSlice
from vecspaces.vector._async.protocol import Command, EnvError, Reply, capture_error, pack_values
from vecspaces.vector._async.shared import SharedStepMemory
from vecspaces.vector._async.waiting import AdaptiveSpin, acquire
from vecspaces.vector._runner import build_env
from vecspaces.vector.vector_env import AutoresetMode

__all__ = ["WorkerConfig", "describe", "run_worker"]

# How long a blocked worker sleeps before checking that the main process still exists.
PARENT_CHECK_SECONDS = 0.1
# The worker's parent when it started (see _check_parent).
_parent_pid = -1


@dataclass
class WorkerConfig:
    """Everything a worker process is started with (picklable under every start method).

    Attributes:
        worker_index: the worker's position in the pool.
        env_indices: the indices of its sub-envs, a contiguous range.
        env_fns: the cloudpickled list of its env factories.
        autoreset_mode: the pool's autoreset mode.
        memory: the pool's shared memory.
        command_ready: released by the main process when a command is in the worker's slot.
        completions: released by every worker each time it finishes a command.
        connection: the worker's end of its pipe.
        spin_seconds: the longest the worker polls for the next command before blocking.
        cpu: the CPU the worker pins itself to, or None to let the OS place it.
        restarted: it replaces a worker that died, so each env reports its first result as a restart.
    """

    worker_index: int
    env_indices: range
    env_fns: bytes
    autoreset_mode: AutoresetMode
    memory: SharedStepMemory
    command_ready: Any
    completions: Any
    connection: Any
    spin_seconds: float
    cpu: int | None = None
    restarted: bool = False


def run_worker(config: WorkerConfig) -> None:
    """The worker process's entry point."""
    global _parent_pid
    _parent_pid = os.getppid()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    cap_worker_threads()
    if config.cpu is not None:
        # Only a hint: a CPU this process may no longer use (its cpuset changed) leaves the worker unpinned.
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {config.cpu})
    connection = config.connection
    envs: list[Any] = []
    try:
        for env_fn in pickle.loads(config.env_fns):
            envs.append(build_env(env_fn, config.env_indices[len(envs)]))
        connection.send(("ready", [describe(env) for env in envs]))
    except BaseException as error:
        index = config.env_indices[len(envs)] if len(envs) < len(config.env_indices) else None
        connection.send(("failed", capture_error(error, index, "construction")))
        for env in envs:
            _close_quietly(env)
        return
    _Worker(config, envs).serve()


def describe(env: Any) -> dict[str, Any]:
    """What the main process needs to know of an env: its spaces, metadata and render mode."""
    return {
        "observation_space": env.observation_space,
        "action_space": env.action_space,
        "metadata": getattr(env, "metadata", {}),
        "render_mode": getattr(env, "render_mode", None),
    }


def _close_quietly(env: Any) -> None:
    with contextlib.suppress(Exception):
        env.close()


class _ParentGone(BaseException):
    """The main process exited: the worker has no one left to work for (not an env error: nothing catches it)."""


# The commands whose arguments always follow through the pipe (a step's too when actions have variable-size
# leaves). Indexed by command code, so the worker turns the code it reads into a command without Enum lookup.
_COMMANDS_WITH_ARGUMENTS = (Command.RESET, Command.CALL, Command.GET_ATTR, Command.SET_ATTR)
_STEPS = (Command.STEP, Command.STEP_SELECTED)
_BY_CODE: tuple[Command | None, ...] = tuple(
    Command(code) if code in Command._value2member_map_ else None for code in range(max(Command) + 1)
)


class _Worker:
    """The command loop of one worker process around its :class:`EnvSlice`."""

    def __init__(self, config: WorkerConfig, envs: list[Any]) -> None:
        self.config = config
        self.index = config.worker_index
        self.envs = EnvSlice(
            config.env_indices,
            envs,
            config.autoreset_mode,
            config.memory,
            config.worker_index,
            _check_parent,
            (Exception, KeyboardInterrupt, SystemExit),
        )
        if config.restarted:
            for runner in self.envs.runners:
                runner.restarted = True
        self.control = self.envs.control
        self.connection = config.connection
        self.spin = AdaptiveSpin(config.spin_seconds, self.control.blocking)

    def serve(self) -> None:
        try:
            self._serve()
        except _ParentGone:
            self.envs.handle(Command.CLOSE, None)

    def _serve(self) -> None:
        commands, index, handle = self.control.commands, self.index, self.envs.handle
        piped_steps = self.envs.variable_actions
        while True:
            acquire(self.config.command_ready, self.spin, PARENT_CHECK_SECONDS, _check_parent)
            command = _BY_CODE[commands[index]]
            assert command is not None  # the main process writes only Command codes
            arguments = None
            if command in _COMMANDS_WITH_ARGUMENTS or (piped_steps and command in _STEPS):
                arguments = pickle.loads(self.connection.recv_bytes())
            self.finish(handle(command, arguments), command, arguments)
            if command is Command.CLOSE:
                return

    def finish(self, reply: Reply | None, command: Command, arguments: Any) -> None:
        """Send the reply and signal completion.

        A small reply is sent first, so that the main process finds it as soon as it wakes up (one wake-up, not
        two); a large one after, so that it cannot fill the channel and block before the main process reads.
        """
        payload = _serialise(reply, _activity(command, arguments), self.envs.variable_names) if reply else None
        sent_first = payload is not None and len(payload) <= SMALL_REPLY_BYTES
        if sent_first:
            self.connection.send_bytes(payload)
        self.control.has_reply[self.index] = payload is not None
        self.control.finished[self.index] = 1
        self.config.completions.release()
        if payload is not None and not sent_first:
            self.connection.send_bytes(payload)


# Fits any socket pair's buffer (8 KiB on macOS, more on Linux) with the channel empty, as it is at a reply.
SMALL_REPLY_BYTES = 4096


def _check_parent() -> None:
    """Raise ``_ParentGone`` if the main process is gone."""
    # multiprocessing's parent sentinel closes when the main process dies, even while it is an unreaped
    # zombie. But under fork every worker started after this one holds a copy of the main process's end of
    # this worker's sentinel pipe, so alone it would let the workers go one at a time, the last first. A new
    # parent pid (the worker was adopted) tells them all at once, as soon as the dead main process is reaped.
    # (Under forkserver a worker's parent is the fork server, which exits when the main process does.)
    if os.getppid() != _parent_pid:
        raise _ParentGone
    parent = multiprocessing.parent_process()
    if parent is not None and not parent.is_alive():
        raise _ParentGone


def _activity(command: Command, arguments: Any) -> str:
    """How an error message names what the worker was doing, e.g. ``call('render')``."""
    if command is Command.CALL:
        return f"call({arguments[0]!r})"
    if command is Command.GET_ATTR:
        return f"get_attr({arguments!r})"
    return command.name.lower()


def _serialise(reply: Reply, activity: str, variable_names: tuple[str, ...] = ()) -> bytes:
    """Pickle a reply; a value that cannot be pickled is replaced by an error naming where it was.

    Args:
        reply: the reply.
        activity: what the worker was doing, for the errors.
        variable_names: what the errors call the observation's variable-size leaves, e.g. ``obs['bag']``.
    """
    pack_values(reply)
    try:
        return pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        pass
    try:
        return cloudpickle.dumps(reply)
    except Exception:
        pass
    reply.errors.extend(_unpicklable_parts(reply, activity, variable_names))
    reply.results.clear()
    reply.infos.clear()
    reply.variable.clear()
    return cloudpickle.dumps(reply)


def _unpicklable_parts(reply: Reply, activity: str, variable_names: tuple[str, ...]) -> list[EnvError]:
    """An error for every info entry, call result or observation leaf of ``reply`` that cannot be pickled."""
    found: list[EnvError] = []

    def check(env_index: int, what: str, value: Any) -> None:
        try:
            cloudpickle.dumps(value)
        except Exception as cause:
            error = InvalidTypeError(
                message(
                    f"{what} of env {env_index} cannot be sent to the main process",
                    expected="a picklable value",
                    got=f"{show(value)}, which fails to pickle with {type(cause).__name__}: {cause}",
                )
            )
            found.append(capture_error(error, env_index, activity))

    for env_index, info in reply.infos.items():
        for key, value in info.items():
            check(env_index, f"info[{key!r}]", value)
    for env_index, result in reply.results.items():
        check(env_index, f"{activity} result", result)
    for env_index, values in reply.variable.items():
        for position, value in enumerate(values):
            name = variable_names[position] if position < len(variable_names) else f"observation part {position}"
            check(env_index, name, value)
    return found
