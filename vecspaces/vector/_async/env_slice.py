"""A slice of sub-envs and the commands they run (:class:`EnvSlice`), with their concurrency permits.

A worker process runs one slice; with ``main_process_envs`` the main process runs one too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from vecspaces._ops.memory_nodes import format_path
from vecspaces.vector._async.action_dtypes import ActionDtypes
from vecspaces.vector._async.copies import copied
from vecspaces.vector._async.info_slots import InfoWriter, Layout
from vecspaces.vector._async.protocol import ActionLeaves, Command, Reply, capture_error
from vecspaces.vector._async.shared import Control, SharedStepMemory
from vecspaces.vector._async.writers import observation_writers
from vecspaces.vector._runner import EnvRunner, reward_out_of_range
from vecspaces.vector.utils.shared_batch import SharedBatch
from vecspaces.vector.utils.shared_layout import is_single_array
from vecspaces.vector.vector_env import AutoresetMode

__all__ = ["EnvSlice", "PipedActions"]

# How long a wait for a concurrency permit blocks before it calls ``while_waiting`` (which, in a worker,
# checks that the main process still exists).
PERMIT_WAIT_SECONDS = 0.5

# What a step command carries: nothing (actions are in shared memory) or the variable-size leaves of the
# actions, keyed by env index (their fixed-size leaves are in shared memory).
PipedActions = ActionLeaves | None


class EnvSlice:
    """A contiguous slice of sub-envs and the commands they run, in a worker or in the main process.

    Both places run the same code, so an env behaves the same wherever it lives. A command returns a
    :class:`Reply` only when there is something to send back (infos that are not plain numbers, variable-size leaves,
    results, errors): most steps send nothing but the completion signal, their infos being in shared memory.

    Args:
        env_indices: the envs' indices in the vector env.
        envs: the envs.
        autoreset_mode: the vector env's autoreset mode.
        memory: the pool's shared memory (observations, actions, control).
        slot: where the slice's ``permits`` flag is (its worker's index; the main process has the last one).
        while_waiting: called while waiting long for a concurrency permit; raises to give up.
        env_errors: the exceptions of an env that become its error (and the slice goes on). In a worker also
            ``KeyboardInterrupt`` and ``SystemExit`` raised by an env (the worker ignores Ctrl-C itself); in the
            main process those are the user's, and propagate.
        learn_layouts: in the main process, what learns the info layouts the envs use for the first time (a
            worker announces them in its reply instead).
    """

    def __init__(
        self,
        env_indices: range,
        envs: list[Any],
        autoreset_mode: AutoresetMode,
        memory: SharedStepMemory,
        slot: int,
        while_waiting: Callable[[], None] = lambda: None,
        env_errors: tuple[type[BaseException], ...] = (Exception,),
        learn_layouts: Callable[[dict[int, Layout]], None] | None = None,
    ) -> None:
        self.env_indices = env_indices
        self.learn_layouts = learn_layouts
        self.env_errors = env_errors
        self.runners = [EnvRunner(env, i, autoreset_mode) for i, env in zip(env_indices, envs, strict=True)]
        permits = None if memory.concurrency is None else _Permits(memory, slot, while_waiting)
        # What a step and a reset call: the runners' own methods, or those holding a permit while they run.
        self.steppers = [runner.step if permits is None else permits.holding(runner.step) for runner in self.runners]
        self.resetters = [runner.reset if permits is None else permits.holding(runner.reset) for runner in self.runners]
        self.positions = range(len(self.runners))
        self.control: Control = memory.control()
        self.variable_actions = bool(memory.actions.layout.variable_leaves)
        action_dtypes = ActionDtypes(memory.actions, self.control.action_dtypes)
        self.read_action = action_dtypes.read_env if action_dtypes.paths else memory.actions.read_env
        envs_slice = slice(env_indices.start, env_indices.stop)
        self.rewards = self.control.rewards[envs_slice]
        self.terminations = self.control.terminations[envs_slice]
        self.truncations = self.control.truncations[envs_slice]
        self.stepping = self.control.stepping[envs_slice]
        self.generation = self.control.generation
        self.read_actions = _action_reader(memory.actions, envs_slice, action_dtypes, self.read_action)
        self.info_writer = InfoWriter(self.control.info_layouts, self.control.info_values, env_indices)
        # One writer per observation buffer; the main process says which one a command writes.
        self.writers = observation_writers(memory.observations)
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
                try:
                    rewards[position] = reward
                except OverflowError:
                    raise reward_out_of_range(reward, runner.index) from None
                terminations[position] = terminated
                truncations[position] = truncated
                variable = write(runner.index, obs)
            except self.env_errors as error:
                self.info_writer.clear(position)
                if reply is None:
                    reply = Reply()
                reply.errors.append(capture_error(error, runner.index, "step"))
                continue
            if info:
                info = self.info_writer.put(position, info)
            else:
                self.info_writer.clear(position)
            if variable or info:
                if reply is None:
                    reply = Reply()
                if variable:
                    reply.variable[runner.index] = variable
                if info:
                    reply.infos[runner.index] = info
        return self._announce(reply)

    def reset(self, arguments: tuple[list[int | None], dict[str, Any] | None, list[bool]]) -> Reply | None:
        """Reset the selected envs of the slice with their seeds and the shared options."""
        seeds, options, mask = arguments
        reply = Reply()
        write = self.writers[self.generation[0]]
        for position, (runner, seed, selected) in enumerate(zip(self.runners, seeds, mask, strict=True)):
            self.info_writer.clear(position)
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
                    info = self.info_writer.put(position, info)
                if info:
                    reply.infos[i] = info
            except self.env_errors as error:
                reply.errors.append(capture_error(error, i, "reset"))
        return self._announce(reply)

    def _announce(self, reply: Reply | None) -> Reply | None:
        """``reply`` with the info layouts the main process has yet to learn (a new reply if needed).

        The main process's own slice has them learnt at once instead (``learn_layouts``).
        """
        layouts = self.info_writer.announcements()
        if layouts:
            if self.learn_layouts is not None:
                self.learn_layouts(layouts)
                return reply
            if reply is None:
                reply = Reply()
            reply.info_layouts.update(layouts)
        return reply

    def call(self, arguments: tuple[str, tuple[Any, ...], dict[str, Any]]) -> Reply:
        name, args, kwargs = arguments
        reply = Reply()
        for runner in self.runners:
            try:
                runner.ensure_reset()
                attribute = _get_attribute(runner.env, name)
                reply.results[runner.index] = attribute(*args, **kwargs) if callable(attribute) else attribute
            except self.env_errors as error:
                reply.errors.append(capture_error(error, runner.index, f"call({name!r})"))
        return reply

    def get_attr(self, name: str) -> Reply:
        reply = Reply()
        for runner in self.runners:
            try:
                runner.ensure_reset()
                reply.results[runner.index] = _get_attribute(runner.env, name)
            except self.env_errors as error:
                reply.errors.append(capture_error(error, runner.index, f"get_attr({name!r})"))
        return reply

    def set_attr(self, arguments: tuple[str, list[Any]]) -> Reply:
        name, values = arguments
        reply = Reply()
        for runner, value in zip(self.runners, values, strict=True):
            try:
                runner.ensure_reset()
                setter = getattr(runner.env, "set_wrapper_attr", None)
                if setter is not None:
                    setter(name, value)
                else:
                    setattr(runner.env, name, value)
            except self.env_errors as error:
                reply.errors.append(capture_error(error, runner.index, f"set_attr({name!r})"))
        return reply

    def close(self, arguments: None = None) -> Reply:
        reply = Reply()
        for runner in self.runners:
            try:
                runner.env.close()
            except self.env_errors as error:
                reply.errors.append(capture_error(error, runner.index, "close"))
        return reply


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
            while not self.semaphore.acquire(timeout=PERMIT_WAIT_SECONDS):
                self.while_waiting()
            self.flags[self.slot] = 1
            try:
                return function(*args, **kwargs)
            finally:
                self.flags[self.slot] = 0
                self.semaphore.release()

        return run


def _action_reader(
    actions: SharedBatch, envs: slice, dtypes: ActionDtypes, read: Callable[[int], Any]
) -> Callable[[], list[Any]]:
    """A function returning the actions of the envs ``envs`` from shared memory, as values the envs may keep.

    ``read`` reads one env's action (in the dtypes the caller gave), for an action space that is not one array.
    """
    if is_single_array(actions.layout):
        batch = actions.batch_views[0][envs]
        if dtypes.paths:  # a float Box: each env's row in the float dtype the caller gave
            return dtypes.array_reader(batch, envs)
        if batch.ndim == 1:  # a Discrete's: iterating gives numpy scalars, copies already, as iterate() does
            return lambda: list(batch)
        # One copy for the whole slice; iterating it gives rows, as iterate() does.
        return lambda: list(batch.copy())
    indices = range(envs.start, envs.stop)
    # Copies, so an env that keeps its action keeps it unchanged.
    return lambda: [copied(read(i)) for i in indices]


def _get_attribute(env: Any, name: str) -> Any:
    getter = getattr(env, "get_wrapper_attr", None)
    return getter(name) if getter is not None else getattr(env, name)
