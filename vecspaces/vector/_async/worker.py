"""The worker process: builds its slice of sub-envs, then runs commands until told to close.

A worker never raises out of its loop for an env's error: the error goes back to the main process with its
traceback, and the worker waits for the next command. It ignores SIGINT (the main process owns Ctrl-C) and
exits by itself if the main process disappears.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import operator
import os
import pickle
import signal
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import cloudpickle
import numpy as np

from vecspaces._ops.memory_nodes import ArrayLeaf, DictNode, TupleNode, format_path
from vecspaces.error import InvalidTypeError, message, show
from vecspaces.vector._async.lending import copied
from vecspaces.vector._async.protocol import ActionLeaves, Command, EnvError, Reply, capture_error
from vecspaces.vector._async.shared import Control, SharedStepMemory
from vecspaces.vector._async.waiting import AdaptiveSpin, acquire
from vecspaces.vector._runner import EnvRunner
from vecspaces.vector.utils.shared_batch import SharedBatch
from vecspaces.vector.utils.shared_layout import is_single_array
from vecspaces.vector.vector_env import AutoresetMode

__all__ = ["WorkerConfig", "is_single_array", "run_worker"]

# How long a blocked worker sleeps before checking that the main process still exists.
PARENT_CHECK_SECONDS = 0.5

# What a step command carries: nothing (actions are in shared memory) or the variable-size leaves of the
# actions, keyed by env index (their fixed-size leaves are in shared memory).
PipedActions = ActionLeaves | None


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


def run_worker(config: WorkerConfig) -> None:
    """The worker process's entry point."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if config.cpu is not None:
        # Only a hint: a CPU this process may no longer use (its cpuset changed) leaves the worker unpinned.
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {config.cpu})
    connection = config.connection
    envs: list[Any] = []
    try:
        for env_fn in pickle.loads(config.env_fns):
            envs.append(env_fn())
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
            config.env_indices, envs, config.autoreset_mode, config.memory, config.worker_index, _check_parent
        )
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
        """Signal completion, then send the reply (after: a large reply must not block before main reads)."""
        payload = _serialise(reply, _activity(command, arguments), self.envs.variable_names) if reply else None
        self.control.has_reply[self.index] = payload is not None
        self.control.finished[self.index] = 1
        self.config.completions.release()
        if payload is not None:
            self.connection.send_bytes(payload)


class EnvSlice:
    """A contiguous slice of sub-envs and the commands they run, in a worker or in the main process.

    Both places run the same code, so an env behaves the same wherever it lives. A command returns a
    :class:`Reply` only when there is something to send back (infos, variable-size leaves, results, errors):
    most steps send nothing but the completion signal.

    Args:
        env_indices: the envs' indices in the vector env.
        envs: the envs.
        autoreset_mode: the vector env's autoreset mode.
        memory: the pool's shared memory (observations, actions, control).
        slot: where the slice's ``permits`` flag is (its worker's index; the main process has the last one).
        while_waiting: called while waiting long for a concurrency permit; raises to give up.
    """

    def __init__(
        self,
        env_indices: range,
        envs: list[Any],
        autoreset_mode: AutoresetMode,
        memory: SharedStepMemory,
        slot: int,
        while_waiting: Callable[[], None] = lambda: None,
    ) -> None:
        self.env_indices = env_indices
        self.runners = [EnvRunner(env, i, autoreset_mode) for i, env in zip(env_indices, envs, strict=True)]
        permits = None if memory.concurrency is None else _Permits(memory, slot, while_waiting)
        # What a step and a reset call: the runners' own methods, or those holding a permit while they run.
        self.steppers = [runner.step if permits is None else permits.holding(runner.step) for runner in self.runners]
        self.resetters = [runner.reset if permits is None else permits.holding(runner.reset) for runner in self.runners]
        self.positions = range(len(self.runners))
        self.control: Control = memory.control()
        self.variable_actions = bool(memory.actions.layout.variable_leaves)
        self.read_action = memory.actions.read_env
        envs_slice = slice(env_indices.start, env_indices.stop)
        self.rewards = self.control.rewards[envs_slice]
        self.terminations = self.control.terminations[envs_slice]
        self.truncations = self.control.truncations[envs_slice]
        self.stepping = self.control.stepping[envs_slice]
        self.generation = self.control.generation
        self.read_actions = _action_reader(memory.actions, envs_slice)
        # One writer per observation buffer; the main process says which one a command writes.
        self.writers = _observation_writers(memory.observations)
        # What an error calls the observation's parts that travel by pipe, e.g. obs['bag'].
        self.variable_names = (
            ("obs",)
            if memory.observations is None
            else tuple(format_path("obs", leaf.path) for leaf in memory.observations[0].layout.variable_leaves)
        )
        self.handlers: dict[Command, Callable[[Any], Reply | None]] = {
            Command.STEP: self.step,
            Command.STEP_SELECTED: self.step_selected,
            Command.RESET: self.reset,
            Command.CALL: self.call,
            Command.GET_ATTR: self.get_attr,
            Command.SET_ATTR: self.set_attr,
            Command.CLOSE: self.close,
        }

    def handle(self, command: Command, arguments: Any) -> Reply | None:
        """Run ``command`` with its (decoded) arguments on the envs of the slice."""
        return self.handlers[command](arguments)

    def step(self, piped_actions: PipedActions) -> Reply | None:
        """Step every env of the slice."""
        return self._step(piped_actions, self.positions)

    def step_selected(self, piped_actions: PipedActions) -> Reply | None:
        """Step the envs whose ``stepping`` flag is set (pool mode), clearing the flags."""
        stepping = self.stepping
        positions = [position for position in self.positions if stepping[position]]
        stepping.fill(0)
        return self._step(piped_actions, positions)

    def _piped_actions(self, piped: ActionLeaves) -> list[Any]:
        """The actions of a step whose command carried actions (those with variable-size leaves)."""
        # The fixed-size leaves from shared memory, copied so an env that keeps its action keeps it unchanged;
        # the command carried the others.
        values, read = piped.values, self.read_action
        return [copied(read(i, values[i])) if i in values else None for i in self.env_indices]

    def _step(self, piped_actions: PipedActions, positions: Iterable[int]) -> Reply | None:
        actions = self.read_actions() if piped_actions is None else self._piped_actions(piped_actions)
        rewards, terminations, truncations = self.rewards, self.terminations, self.truncations
        runners, steppers = self.runners, self.steppers
        write = self.writers[self.generation[0]]
        reply = None
        for position in positions:
            runner = runners[position]
            try:
                obs, reward, terminated, truncated, info = steppers[position](actions[position])
                rewards[position] = reward
                terminations[position] = terminated
                truncations[position] = truncated
                variable = write(runner.index, obs)
            except Exception as error:
                if reply is None:
                    reply = Reply()
                reply.errors.append(capture_error(error, runner.index, "step"))
                continue
            if variable or info:
                if reply is None:
                    reply = Reply()
                if variable:
                    reply.variable[runner.index] = variable
                if info:
                    reply.infos[runner.index] = info
        return reply

    def reset(self, arguments: tuple[list[int | None], dict[str, Any] | None, list[bool]]) -> Reply | None:
        """Reset the selected envs of the slice with their seeds and the shared options."""
        seeds, options, mask = arguments
        reply = Reply()
        write = self.writers[self.generation[0]]
        for position, (runner, seed, selected) in enumerate(zip(self.runners, seeds, mask, strict=True)):
            if not selected:
                continue
            i = runner.index
            try:
                obs, info = self.resetters[position](seed=seed, options=options)
                self.rewards[position] = 0.0
                self.terminations[position] = self.truncations[position] = False
                variable = write(i, obs)
                if variable:
                    reply.variable[i] = variable
                if info:
                    reply.infos[i] = info
            except Exception as error:
                reply.errors.append(capture_error(error, i, "reset"))
        return reply

    def call(self, arguments: tuple[str, tuple[Any, ...], dict[str, Any]]) -> Reply:
        name, args, kwargs = arguments
        reply = Reply()
        for runner in self.runners:
            try:
                attribute = _get_attribute(runner.env, name)
                reply.results[runner.index] = attribute(*args, **kwargs) if callable(attribute) else attribute
            except Exception as error:
                reply.errors.append(capture_error(error, runner.index, f"call({name!r})"))
        return reply

    def get_attr(self, name: str) -> Reply:
        reply = Reply()
        for runner in self.runners:
            try:
                reply.results[runner.index] = _get_attribute(runner.env, name)
            except Exception as error:
                reply.errors.append(capture_error(error, runner.index, f"get_attr({name!r})"))
        return reply

    def set_attr(self, arguments: tuple[str, list[Any]]) -> Reply:
        name, values = arguments
        reply = Reply()
        for runner, value in zip(self.runners, values, strict=True):
            try:
                setter = getattr(runner.env, "set_wrapper_attr", None)
                if setter is not None:
                    setter(name, value)
                else:
                    setattr(runner.env, name, value)
            except Exception as error:
                reply.errors.append(capture_error(error, runner.index, f"set_attr({name!r})"))
        return reply

    def close(self, arguments: None = None) -> Reply:
        reply = Reply()
        for runner in self.runners:
            try:
                runner.env.close()
            except Exception as error:
                reply.errors.append(capture_error(error, runner.index, "close"))
        return reply


def _check_parent() -> None:
    """Raise ``_ParentGone`` if the main process is gone."""
    # multiprocessing's parent sentinel closes when the main process dies, even while it is an unreaped
    # zombie; os.getppid() would not do: under forkserver a worker's parent is the fork server.
    parent = multiprocessing.parent_process()
    if parent is not None and not parent.is_alive():
        raise _ParentGone


class _Permits:
    """Gymnasium's ``max_concurrency``: at most that many envs of the whole pool in reset or step at once.

    The ``permits`` flag of the slot says whether it holds a permit, so the main process can give back the
    permit of a worker that died holding it (else every other env would wait for it forever).
    """

    def __init__(self, memory: SharedStepMemory, slot: int, while_waiting: Callable[[], None]) -> None:
        self.semaphore = memory.concurrency
        self.flags = memory.control().permits
        self.slot = slot
        self.while_waiting = while_waiting

    def holding(self, function: Callable[..., Any]) -> Callable[..., Any]:
        """``function`` run while holding a permit."""

        def run(*args: Any, **kwargs: Any) -> Any:
            while not self.semaphore.acquire(timeout=PARENT_CHECK_SECONDS):
                self.while_waiting()
            self.flags[self.slot] = 1
            try:
                return function(*args, **kwargs)
            finally:
                self.flags[self.slot] = 0
                self.semaphore.release()

        return run


def _activity(command: Command, arguments: Any) -> str:
    """How an error message names what the worker was doing, e.g. ``call('render')``."""
    if command is Command.CALL:
        return f"call({arguments[0]!r})"
    if command is Command.GET_ATTR:
        return f"get_attr({arguments!r})"
    return command.name.lower()


def _get_attribute(env: Any, name: str) -> Any:
    getter = getattr(env, "get_wrapper_attr", None)
    return getter(name) if getter is not None else getattr(env, name)


def _action_reader(actions: SharedBatch, envs: slice) -> Callable[[], list[Any]]:
    """A function returning this worker's actions from shared memory, as values the envs may keep."""
    if is_single_array(actions.layout):
        batch = actions.batch_views[0][envs]
        # One copy for the whole slice; iterating it gives numpy scalars (Discrete) or rows, as iterate() does.
        return lambda: list(batch.copy())
    indices = range(envs.start, envs.stop)
    # Copies, so an env that keeps its action keeps it unchanged.
    return lambda: [copied(actions.read_env(i)) for i in indices]


def _observation_writers(
    observations: tuple[SharedBatch, ...] | None,
) -> list[Callable[[int, Any], list[Any] | None]]:
    """Per observation buffer, a function writing one env's observation there (see :func:`_observation_writer`)."""
    if observations is None:
        return [lambda index, obs: [obs]]
    return [_observation_writer(batch) for batch in observations]


def _observation_writer(observations: SharedBatch) -> Callable[[int, Any], list[Any] | None]:
    """A function writing one env's observation; it returns what must travel by pipe instead, if anything."""
    layout = observations.layout
    write = observations.write
    flat = _flat_container_writer(observations)
    if flat is not None:
        return flat
    if is_single_array(layout):
        slot = layout.slots[0]
        rows = [views[0] for views in observations.env_views]
        shape, dtype = slot.shape, slot.dtype

        def write_array(index: int, obs: Any) -> None:
            # The common case costs one copy; anything else goes through the checked write for its errors.
            if type(obs) is np.ndarray and obs.shape == shape and obs.dtype == dtype:
                rows[index][...] = obs
            else:
                write(index, obs)

        return write_array

    def write_any(index: int, obs: Any) -> list[Any] | None:
        variable = write(index, obs)
        return list(variable) if variable else None

    return write_any


def _flat_container_writer(observations: SharedBatch) -> Callable[[int, Any], None] | None:
    """For a Dict or Tuple of arrays: a writer that checks every leaf cheaply, then copies, else None.

    A value that is not exactly of the stored shapes and dtypes goes through the checked write, which
    converts what it can and raises what it cannot; so does anything the cheap checks are unsure of.

    The writer is generated for the layout with every leaf's check and copy written out, as the worker runs it
    for every env on every step: a loop over the leaves calling a check per leaf took 40% longer (the dict
    benchmark's obs: 1.9 us against 1.4 us), and the dict benchmark 5-10% slower.
    """
    layout = observations.layout
    root, leaves = layout.nodes[0], layout.nodes[1:]
    if not isinstance(root, (DictNode, TupleNode)) or len(leaves) < 2:
        return None
    arrays = [leaf for leaf in leaves if isinstance(leaf, ArrayLeaf) and len(leaf.path) == 1]
    if len(arrays) != len(leaves):
        return None
    # Names the generated code sees; slots follow the leaves' order, so env_views[i][k] holds leaf k.
    names: dict[str, Any] = {
        "container": dict if isinstance(root, DictNode) else tuple,
        "get": operator.itemgetter(*(leaf.path[0] for leaf in arrays)),
        "ndarray": np.ndarray,
        "env_rows": observations.env_views,
        "write": observations.write,
    }
    checks, copies = [], []
    for k, leaf in enumerate(arrays):
        names[f"shape{k}"], names[f"dtype{k}"] = leaf.shape, leaf.dtype
        if leaf.shape:
            checks.append(f"type(v{k}) is ndarray and v{k}.shape == shape{k} and v{k}.dtype == dtype{k}")
        else:  # the leaf's own numpy scalar at once; Python numbers and 0-d arrays through the full check
            names[f"scalar{k}"], names[f"check{k}"] = leaf.dtype.type, _scalar_check(leaf.dtype)
            checks.append(f"(type(v{k}) is scalar{k} or check{k}(v{k}))")
        copies.append(f"rows[{k}][...] = v{k}")
    values = ", ".join(f"v{k}" for k in range(len(arrays)))
    source = f"""
def write_flat(index, obs):
    if type(obs) is container and len(obs) == {len(arrays)}:
        try:
            {values} = get(obs)
        except (KeyError, IndexError):
            pass
        else:
            if {" and ".join(checks)}:
                rows = env_rows[index]
                {"; ".join(copies)}
                return
    write(index, obs)
"""
    exec(source, names)  # the source holds only names and numbers made here, never a value from an env
    writer: Callable[[int, Any], None] = names["write_flat"]
    return writer


def _scalar_check(dtype: np.dtype[Any]) -> Callable[[Any], bool]:
    """A cheap test that a value can be copied into a scalar slot of ``dtype`` as it is (no conversion, no overflow).

    For values other than ``dtype``'s own numpy scalar, which the generated writer accepts before calling it.
    """
    ndarray = np.ndarray
    python_type = (
        {"b": bool, "i": int, "f": float}.get(dtype.kind) if dtype.itemsize == 8 or dtype.kind == "b" else None
    )

    def check_scalar(value: Any) -> bool:
        kind = type(value)
        if kind is ndarray:
            return value.shape == () and value.dtype == dtype
        # Python numbers only where the slot holds every value of their type (an int must fit in int64).
        return kind is python_type and (kind is not int or -(2**63) <= value < 2**63)

    return check_scalar


def _serialise(reply: Reply, activity: str, variable_names: tuple[str, ...] = ()) -> bytes:
    """Pickle a reply; a value that cannot be pickled is replaced by an error naming where it was.

    Args:
        reply: the reply.
        activity: what the worker was doing, for the errors.
        variable_names: what the errors call the observation's variable-size leaves, e.g. ``obs['bag']``.
    """
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
