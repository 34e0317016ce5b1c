"""AsyncVectorEnv: sub-environments stepped in worker processes that write straight into shared memory.

Data flow of one ``step``::

      main process                                  worker w (envs lo..hi)
      ------------                                  ----------------------
      write actions ------> [shared: actions]
      command[w] = STEP
      command_ready[w].release() ----------------->  wakes (polls briefly, then blocks)
                                                     for each env: read its action, env.step(action),
                                   [shared: obs] <--   write obs, reward, terminated, truncated
                               [shared: control] <--
                                                     has_reply[w] = bool(infos, variable leaves, errors)
      waits on command_done[w] <-------------------  command_done[w].release()
      (polls, then blocks in short slices,           then, only if has_reply[w]: pipe.send_bytes(reply)
       checking every worker is still alive)
      reads replies of workers with has_reply
      returns views of [shared: obs] (copied if copy=True), infos

Everything of fixed size travels through shared memory, laid out once (see ``vecspaces.vector.utils.layout``):
observations, actions, rewards and flags. Only what has no fixed size is pickled: non-empty infos, the
variable-size leaves of observations (Sequence, Graph), call results and errors, and the arguments of reset,
call and set_attr. With ``shared_memory=False`` (or a custom observation space without a layout) whole
observations travel through the pipe instead.

Failure semantics:

- An exception in a sub-env comes back with its remote traceback chained (``raise ... from``) and the env index
  in a note; the worker survives and the pool stays usable.
- A worker that dies is noticed within a wait slice (0.05 s): the call raises :class:`WorkerDiedError` naming
  the envs, the exit code or signal and the command. The pool is then broken (every call but ``close`` raises
  the same error), unless ``restart_workers=True``, which restarts the worker, resets its envs and reports them
  as truncated with ``info["worker_restarted"]``.
- Every wait accepts a timeout. A :class:`TimeoutError` leaves the call pending: call the same ``*_wait`` again
  to collect the late results; other calls are refused until then; ``close()`` always works.
- ``close()`` is idempotent and escalates: close command, join with a timeout, terminate, kill. Workers ignore
  SIGINT, exit by themselves if the main process dies, and are terminated at interpreter exit.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import pickle
import signal
import time
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import cloudpickle
import numpy as np
import numpy.typing as npt
import psutil

from vecspaces._ops.batch import concatenate, create_empty_array, iterate
from vecspaces.error import (
    AlreadyPendingCallError,
    ClosedEnvironmentError,
    InvalidTypeError,
    InvalidValueError,
    NoAsyncCallError,
    WorkerDiedError,
    message,
    show,
)
from vecspaces.vector._arguments import actions_per_env, seeds_per_env, split_reset_mask
from vecspaces.vector._async.protocol import Command, Reply, add_note, rebuild_error
from vecspaces.vector._async.shared import SharedStepMemory
from vecspaces.vector._async.waiting import AdaptiveSpin
from vecspaces.vector._async.worker import WorkerConfig, is_single_array, run_worker
from vecspaces.vector._spaces import ObservationMode, as_vecspaces_space, resolve_spaces
from vecspaces.vector.infos import add_info
from vecspaces.vector.vector_env import AutoresetMode, VectorEnv

__all__ = ["AsyncVectorEnv"]

# How often a blocked wait checks that the workers are alive: the bound on noticing a dead worker.
WAIT_SLICE_SECONDS = 0.05
# The longest a wait polls before blocking; waits that usually take longer do not poll at all (see _async.waiting).
DEFAULT_MAX_SPIN_SECONDS = 1e-3
# Calls whose effects would bypass the pool's bookkeeping.
_RESERVED_CALLS = ("reset", "step", "close")


class AsyncVectorEnv(VectorEnv[Any, Any, npt.NDArray[np.float64]]):
    """Run sub-environments in worker processes, batching their observations in shared memory.

    The arguments up to ``autoreset_mode`` are Gymnasium's; the keyword-only ones are vecspaces' own.

    Args:
        env_fns: callables that each create one sub-environment (sent to the workers with cloudpickle).
        shared_memory: if True, fixed-size observation leaves travel through shared memory; if False whole
            observations are pickled through pipes.
        copy: if True, ``reset`` and ``step`` return observations the next call will not overwrite; if False
            they return views of the shared buffer, valid until the next ``reset`` or ``step``.
        context: the multiprocessing start method (``"fork"``, ``"forkserver"``, ``"spawn"``), or None for the
            platform default.
        daemon: whether workers are daemonic (they cannot start processes of their own, and die with the main
            process).
        worker: a replacement worker entry point, called with a ``WorkerConfig`` (advanced use).
        observation_mode: ``"same"``, ``"different"`` or a ``(batched, single)`` pair of spaces.
        autoreset_mode: an :class:`AutoresetMode` or its string value.
        num_workers: how many processes share the envs (contiguous slices); default: the number of physical
            cores (from psutil), at most ``len(env_fns)``.
        timeout: the default timeout in seconds of every wait (None waits as long as the workers live).
        startup_timeout: how long the workers may take to build their envs, in seconds.
        restart_workers: restart a worker that died, instead of breaking the pool.
        spin_seconds: the longest a wait polls before blocking (default 1 ms); waits adapt below it, and do
            not poll at all when the envs are slower than that. 0 always blocks.

    Example:
        >>> from vecspaces.envs import TinyEnv
        >>> with AsyncVectorEnv([TinyEnv] * 4, num_workers=2) as envs:
        ...     obs, infos = envs.reset(seed=0)
        ...     obs, rewards, terminations, truncations, infos = envs.step(np.array([0, 1, 0, 1]))
        >>> obs.shape, rewards
        ((4, 4), array([1., 1., 1., 1.]))
    """

    def __init__(
        self,
        env_fns: Sequence[Callable[[], Any]],
        shared_memory: bool = True,
        copy: bool = True,
        context: str | None = None,
        daemon: bool = True,
        worker: Callable[[WorkerConfig], None] | None = None,
        observation_mode: ObservationMode = "same",
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        *,
        num_workers: int | None = None,
        timeout: float | None = None,
        startup_timeout: float = 120.0,
        restart_workers: bool = False,
        spin_seconds: float | None = None,
    ) -> None:
        self.closed = True  # until the workers are up, there is nothing for close() to do
        self.env_fns = list(env_fns)
        if not self.env_fns or not all(callable(fn) for fn in self.env_fns):
            raise InvalidTypeError(
                message("env_fns is invalid", expected="a non-empty list of callables", got=show(env_fns))
            )
        self.num_envs = len(self.env_fns)
        self.shared_memory = shared_memory
        self.copy = copy
        self.observation_mode = observation_mode
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.timeout = timeout
        self.restart_workers = restart_workers
        self._ctx: Any = multiprocessing.get_context(context)
        self._daemon = daemon
        self._worker_target = worker or run_worker
        self.num_workers = _worker_count(num_workers, self.num_envs)
        self._slices = _split(self.num_envs, self.num_workers)
        self._spin_seconds = DEFAULT_MAX_SPIN_SECONDS if spin_seconds is None else spin_seconds
        self._spin = AdaptiveSpin(self._spin_seconds)

        # The shared memory must exist before the workers start (spawn can only hand it over at start), so
        # the spaces come from one env built here and closed at once, as Gymnasium does.
        probe = self.env_fns[0]()
        try:
            probe_observation = as_vecspaces_space(probe.observation_space, "env 0 observation_space")
            probe_action = as_vecspaces_space(probe.action_space, "env 0 action_space")
            self.metadata = dict(getattr(probe, "metadata", {}))
            self.render_mode = getattr(probe, "render_mode", None)
        finally:
            probe.close()
        self.metadata["autoreset_mode"] = self.autoreset_mode
        single_observation = observation_mode[1] if isinstance(observation_mode, tuple) else probe_observation
        self._memory = SharedStepMemory(
            self._ctx, single_observation, probe_action, self.num_envs, self.num_workers, shared_memory
        )
        self._control = self._memory.control()
        self._processes: list[Any] = [None] * self.num_workers
        self._connections: list[Any] = [None] * self.num_workers
        self._command_ready: list[Any] = [None] * self.num_workers
        self._command_done: list[Any] = [None] * self.num_workers
        self._finalizer = weakref.finalize(self, _kill_processes, self._processes)

        self._pending: Command | None = None
        self._outstanding: set[int] = set()
        self._replies: dict[int, Reply] = {}
        self._messages: dict[int, bytes] = {}
        self._broken: str | None = None
        self._startup_timeout = startup_timeout
        self.restarts = 0
        descriptions = self._start_workers(range(self.num_workers), startup_timeout)
        self.closed = False

        spaces = resolve_spaces(
            observation_mode,
            [
                as_vecspaces_space(d["observation_space"], f"env {i} observation_space")
                for i, d in enumerate(descriptions)
            ],
            [as_vecspaces_space(d["action_space"], f"env {i} action_space") for i, d in enumerate(descriptions)],
        )
        self.single_observation_space = spaces.single_observation_space
        self.observation_space = spaces.observation_space
        self.single_action_space = spaces.single_action_space
        self.action_space = spaces.action_space

        observations = self._memory.observations
        # Without shared observations, the whole observation is the one leaf that travels by pipe.
        self._variable_leaves = 1 if observations is None else len(observations.layout.variable_leaves)
        self._variable_values: list[list[Any]] = [[None] * self._variable_leaves for _ in range(self.num_envs)]
        self._piped_observations: list[Any] | None = None
        self._observation_buffer: Any = None
        if observations is None:
            self._observation_buffer = create_empty_array(self.single_observation_space, self.num_envs, np.zeros)
            self._piped_observations = _placeholders(self.observation_space, self._observation_buffer, self.num_envs)
        action_layout = self._memory.actions.layout
        self._piped_actions = bool(action_layout.variable_leaves)
        self._action_view = self._memory.actions.batch_views[0] if is_single_array(action_layout) else None

    # -- public API ---------------------------------------------------------------------------------------

    @property
    def np_random_seed(self) -> tuple[Any, ...]:  # type: ignore[override]  # one per sub-env, as Gymnasium
        """Each sub-env's ``np_random_seed``."""
        return self.get_attr("np_random_seed")

    @property  # type: ignore[misc]  # read-only here: the generators live in the sub-envs
    def np_random(self) -> tuple[Any, ...]:  # type: ignore[override]
        """Each sub-env's ``np_random``."""
        return self.get_attr("np_random")

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every sub-env, or those selected by ``options["reset_mask"]``; see :meth:`reset_async`."""
        self.reset_async(seed=seed, options=options)
        return self.reset_wait()

    def reset_async(self, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None) -> None:
        """Send the reset command to the workers.

        Args:
            seed: None, an int (env ``i`` gets ``seed + i``) or a list of one seed per env.
            options: passed to each reset sub-env; ``"reset_mask"`` (a bool array) selects which envs reset,
                the others keep their last observation. The caller's dict is not modified.
        """
        self._check_can_start("reset_async")
        seeds = seeds_per_env(seed, self.num_envs)
        mask, options = split_reset_mask(options, self.num_envs)
        selected = np.ones(self.num_envs, dtype=np.bool_) if mask is None else mask
        messages = {
            w: cloudpickle.dumps(([seeds[i] for i in envs], options, [bool(selected[i]) for i in envs]))
            for w, envs in enumerate(self._slices)
        }
        self._send(Command.RESET, messages)

    def reset_wait(self, timeout: float | None = None) -> tuple[Any, dict[str, Any]]:
        """Wait for the reset to finish and return the batched observation and infos.

        Args:
            timeout: seconds to wait; None uses the pool's default timeout.
        """
        replies = self._wait(Command.RESET, "reset_wait", timeout)
        infos = self._gather_infos(replies)
        return self._observations(replies), infos

    def step(
        self, actions: Any
    ) -> tuple[Any, npt.NDArray[np.float64], npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]]:
        """Step every sub-env with its action; see :meth:`step_async` and :meth:`step_wait`."""
        self.step_async(actions)
        return self.step_wait()

    def step_async(self, actions: Any) -> None:
        """Check the batch of actions and send it to the workers (nothing is sent if the actions are bad)."""
        self._check_can_start("step_async")
        messages: dict[int, bytes] = {}
        view = self._action_view
        if view is not None and type(actions) is np.ndarray and actions.shape == view.shape:
            try:
                np.copyto(view, actions, casting="same_kind")
            except TypeError as error:
                raise InvalidTypeError(
                    message("actions has the wrong dtype", expected=f"{view.dtype} values", got=show(actions))
                ) from error
        else:
            env_actions = actions_per_env(self.action_space, actions, self.num_envs)
            if self._piped_actions:
                messages = {
                    w: cloudpickle.dumps({i: env_actions[i] for i in envs}) for w, envs in enumerate(self._slices)
                }
            else:
                for index, action in enumerate(env_actions):
                    self._memory.actions.write(index, action)
        self._send(Command.STEP, messages)

    def step_wait(
        self, timeout: float | None = None
    ) -> tuple[Any, npt.NDArray[np.float64], npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]]:
        """Wait for the step to finish and return ``(observations, rewards, terminations, truncations, infos)``.

        Args:
            timeout: seconds to wait; None uses the pool's default timeout.
        """
        replies = self._wait(Command.STEP, "step_wait", timeout)
        infos = self._gather_infos(replies)
        control = self._control
        return (
            self._observations(replies),
            control.rewards.copy(),
            control.terminations.copy(),
            control.truncations.copy(),
            infos,
        )

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call the method ``name`` of every sub-env; plain attributes are returned. One result per env."""
        self.call_async(name, *args, **kwargs)
        return self.call_wait()

    def call_async(self, name: str, *args: Any, **kwargs: Any) -> None:
        """Send ``call(name, *args, **kwargs)`` to the workers."""
        self._check_can_start("call_async")
        if name in _RESERVED_CALLS:
            raise InvalidValueError(
                message(
                    f"call({name!r}) would bypass the pool",
                    expected="a method other than reset, step and close",
                    got=repr(name),
                    fix=f"use {name}() directly",
                )
            )
        payload = cloudpickle.dumps((name, args, kwargs))
        self._send(Command.CALL, dict.fromkeys(range(self.num_workers), payload))

    def call_wait(self, timeout: float | None = None) -> tuple[Any, ...]:
        """Wait for a call to finish and return one result per env."""
        return self._results(self._wait(Command.CALL, "call_wait", timeout))

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Each sub-env's attribute ``name``. Unlike Gymnasium, a callable attribute is returned, not called."""
        self._check_can_start("get_attr")
        self._send(Command.GET_ATTR, dict.fromkeys(range(self.num_workers), cloudpickle.dumps(name)))
        return self._results(self._wait(Command.GET_ATTR, "get_attr", None))

    def set_attr(self, name: str, values: Any) -> None:
        """Set the attribute ``name`` of every sub-env.

        A list or tuple gives one value per env; anything else is given to all.
        """
        if not isinstance(values, (list, tuple)):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise InvalidValueError(
                message(
                    "set_attr values has the wrong length",
                    expected=f"{self.num_envs} values",
                    got=show(values),
                )
            )
        self._check_can_start("set_attr")
        messages = {w: cloudpickle.dumps((name, [values[i] for i in envs])) for w, envs in enumerate(self._slices)}
        self._send(Command.SET_ATTR, messages)
        self._wait(Command.SET_ATTR, "set_attr", None)

    def render(self) -> tuple[Any, ...]:
        """Each sub-env's ``render()`` result."""
        return self.call("render")

    def worker_info(self) -> list[dict[str, Any]]:
        """Diagnostics per worker: its pid, env indices, whether it is alive and its resident memory in bytes."""
        info = []
        for w, process in enumerate(self._processes):
            rss = None
            if process is not None and process.is_alive():
                try:
                    rss = psutil.Process(process.pid).memory_info().rss
                except psutil.Error:
                    rss = None
            info.append(
                {
                    "worker": w,
                    "pid": None if process is None else process.pid,
                    "envs": list(self._slices[w]),
                    "alive": process is not None and process.is_alive(),
                    "rss": rss,
                }
            )
        return info

    def close_extras(self, timeout: float | None = None, terminate: bool = False, **kwargs: Any) -> None:
        """Stop the workers: let a pending call finish (up to ``timeout``), send close, then escalate.

        Args:
            timeout: seconds to wait for a pending call and for the workers to exit (default 1 s each).
            terminate: skip the polite steps and terminate the workers at once.
            **kwargs: accepted for compatibility with other vector envs; unused.
        """
        grace = 1.0 if timeout is None else timeout
        if not terminate and self._broken is None:
            try:
                if self._pending is not None:
                    self._wait(self._pending, "close", grace)
                self._send(Command.CLOSE, {})
                self._wait(Command.CLOSE, "close", grace)
            except Exception:
                pass  # closing must finish; whatever failed, the escalation below stops the workers
        _stop_processes(self._processes, grace if not terminate else 0.0)
        for connection in self._connections:
            if connection is not None:
                connection.close()
        self._finalizer.detach()

    # -- worker management --------------------------------------------------------------------------------

    def _start_workers(self, workers: Iterable[int], startup_timeout: float) -> list[dict[str, Any]]:
        """Start the given workers and wait for each to report its envs; return the descriptions in env order."""
        workers = list(workers)
        for w in workers:
            parent_end, child_end = self._ctx.Pipe(duplex=True)
            self._command_ready[w] = self._ctx.Semaphore(0)
            self._command_done[w] = self._ctx.Semaphore(0)
            config = WorkerConfig(
                worker_index=w,
                env_indices=self._slices[w],
                env_fns=cloudpickle.dumps([self.env_fns[i] for i in self._slices[w]]),
                autoreset_mode=self.autoreset_mode,
                memory=self._memory,
                command_ready=self._command_ready[w],
                command_done=self._command_done[w],
                connection=child_end,
                spin_seconds=self._spin_seconds,
                parent_pid=os.getpid(),
            )
            process = self._ctx.Process(
                target=self._worker_target, args=(config,), name=f"vecspaces-worker-{w}", daemon=self._daemon
            )
            process.start()
            child_end.close()
            self._processes[w] = process
            self._connections[w] = parent_end
        descriptions: list[dict[str, Any]] = []
        deadline = time.monotonic() + startup_timeout
        try:
            for w in workers:
                status, payload = self._receive_startup(w, deadline)
                if status == "failed":
                    raise rebuild_error(payload)
                descriptions.extend(payload)
        except BaseException:
            _stop_processes(self._processes, 0.0)
            raise
        return descriptions

    def _receive_startup(self, w: int, deadline: float) -> tuple[str, Any]:
        connection, process = self._connections[w], self._processes[w]
        while not connection.poll(WAIT_SLICE_SECONDS):
            if not process.is_alive():
                raise WorkerDiedError(self._death_message(w, "construction"))
            if time.monotonic() > deadline:
                raise TimeoutError(
                    message(
                        f"worker {w} (envs {_span(self._slices[w])}) did not finish building its envs in time",
                        expected="every env built within startup_timeout",
                        got="no answer",
                        fix="raise startup_timeout if the envs are slow to build",
                    )
                )
        try:
            return connection.recv()
        except EOFError:
            process.join(1.0)
            raise WorkerDiedError(self._death_message(w, "construction")) from None

    def _death_message(self, w: int, command: str) -> str:
        process = self._processes[w]
        code = process.exitcode
        if code is None:
            how = "stopped answering"
        elif code < 0:
            name = signal.Signals(-code).name
            hint = " (killed: out of memory, or killed by a user)" if name == "SIGKILL" else ""
            how = f"died with {name}{hint}"
        else:
            how = f"exited with code {code}"
        return f"worker {w} (pid {process.pid}, envs {_span(self._slices[w])}) {how} during {command}; " + (
            "the pool is now broken: close() it" if not self.restart_workers else "restarting it"
        )

    # -- the command cycle --------------------------------------------------------------------------------

    def _check_can_start(self, call: str) -> None:
        if self.closed:
            raise ClosedEnvironmentError(f"{call} was called on a closed AsyncVectorEnv; create a new one")
        if self._broken is not None:
            raise WorkerDiedError(self._broken)
        if self._pending is not None:
            pending = self._pending.name.lower()
            raise AlreadyPendingCallError(
                f"{call} was called while a {pending} is pending; call {pending}_wait() first "
                f"(it also collects results that arrived after a timeout)",
                pending,
            )

    def _send(self, command: Command, messages: dict[int, bytes]) -> None:
        """Put ``command`` in every worker's slot, wake them, then send each worker's message if any."""
        self._control.commands[:] = command
        for w in range(self.num_workers):
            self._command_ready[w].release()
        for w, payload in messages.items():
            self._connections[w].send_bytes(payload)
        self._messages = messages
        self._pending = command
        self._outstanding = set(range(self.num_workers))
        self._replies = {}

    def _wait(self, command: Command, call: str, timeout: float | None) -> dict[int, Reply]:
        """Wait until every worker finished ``command``; return the replies; raise the first env error."""
        if self.closed and command is not Command.CLOSE:
            raise ClosedEnvironmentError(f"{call} was called on a closed AsyncVectorEnv")
        if self._broken is not None:
            raise WorkerDiedError(self._broken)
        if self._pending is not command:
            name = command.name.lower()
            raise NoAsyncCallError(
                f"{call} was called without a pending {name}; call {name}_async() first",
                name,
            )
        timeout = self.timeout if timeout is None else timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        started = time.perf_counter()
        spin_until = started + self._spin.budget()
        outstanding = self._outstanding
        while outstanding:
            for w in list(outstanding):
                if self._command_done[w].acquire(False):
                    self._finish(w)
            if not outstanding:
                break
            if time.perf_counter() < spin_until:
                os.sched_yield()
                continue
            w = min(outstanding)
            wait = (
                WAIT_SLICE_SECONDS
                if deadline is None
                else max(0.0, min(WAIT_SLICE_SECONDS, deadline - time.monotonic()))
            )
            if self._command_done[w].acquire(timeout=wait):
                self._finish(w)
                continue
            self._check_workers_alive(command)
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(
                    f"{call} timed out after {timeout} s waiting for workers {sorted(outstanding)} "
                    f"(envs {', '.join(_span(self._slices[w]) for w in sorted(outstanding))}); "
                    f"call {call} again to collect the late results, or close()"
                )
        self._spin.record(time.perf_counter() - started)
        self._pending = None
        replies = self._replies
        self._replies = {}
        errors = [error for w in sorted(replies) for error in replies[w].errors]
        if errors:
            first = rebuild_error(errors[0])
            if len(errors) > 1:
                add_note(first, f"{len(errors) - 1} more env error(s) in this call")
            raise first
        return replies

    def _finish(self, w: int) -> None:
        """Worker ``w`` is done: read its reply if it has one."""
        if self._control.has_reply[w]:
            connection = self._connections[w]
            while not connection.poll(WAIT_SLICE_SECONDS):
                self._check_workers_alive(self._pending or Command.STEP)
            self._replies[w] = pickle.loads(connection.recv_bytes())
        self._outstanding.discard(w)

    def _check_workers_alive(self, command: Command) -> None:
        for w in sorted(self._outstanding):
            process = self._processes[w]
            if process.is_alive():
                continue
            process.join(0.1)
            death = self._death_message(w, command.name.lower())
            if self.restart_workers and command is not Command.CLOSE:
                self._restart(w, command)
                continue
            self._broken = death
            self._pending = None
            raise WorkerDiedError(self._broken)

    def _restart(self, w: int, command: Command) -> None:
        """Replace dead worker ``w`` with a new process, reset its envs and finish ``command`` for them.

        A step reports the restarted envs as truncated, with their reset observation, reward 0 and
        ``info["worker_restarted"] = True``; other commands are run again on the new envs.
        """
        self._connections[w].close()
        self._start_workers([w], self._startup_timeout)
        self.restarts += 1
        envs = self._slices[w]
        if command is Command.RESET:
            self._replies[w] = self._run_on(w, Command.RESET, self._messages.get(w))
        else:
            everyone = cloudpickle.dumps(([None] * len(envs), None, [True] * len(envs)))
            reply = self._run_on(w, Command.RESET, everyone)
            if command is Command.STEP:
                for i in envs:
                    self._control.truncations[i] = True
                    reply.infos[i] = {**reply.infos.get(i, {}), "worker_restarted": True}
            else:
                reply = self._run_on(w, command, self._messages.get(w))
            self._replies[w] = reply
        self._outstanding.discard(w)

    def _run_on(self, w: int, command: Command, payload: bytes | None) -> Reply:
        """Run one command on worker ``w`` alone and wait for it (used while restarting it)."""
        self._control.commands[w] = command
        self._command_ready[w].release()
        if payload is not None:
            self._connections[w].send_bytes(payload)
        while not self._command_done[w].acquire(timeout=WAIT_SLICE_SECONDS):
            if not self._processes[w].is_alive():
                self._broken = self._death_message(w, f"{command.name.lower()} after a restart")
                self._pending = None
                raise WorkerDiedError(self._broken)
        if not self._control.has_reply[w]:
            return Reply()
        return pickle.loads(self._connections[w].recv_bytes())

    # -- results --------------------------------------------------------------------------------------------

    def _gather_infos(self, replies: dict[int, Reply]) -> dict[str, Any]:
        infos: dict[str, Any] = {}
        for w in sorted(replies):
            for index, info in sorted(replies[w].infos.items()):
                add_info(infos, info, index, self.num_envs)
        return infos

    def _observations(self, replies: dict[int, Reply]) -> Any:
        for reply in replies.values():
            for index, values in reply.variable.items():
                self._variable_values[index] = values
        if self._piped_observations is not None:
            for index, values in enumerate(self._variable_values):
                if values[0] is not None:
                    self._piped_observations[index] = values[0]
            self._observation_buffer = concatenate(
                self.single_observation_space, self._piped_observations, self._observation_buffer
            )
            return _copy_value(self._observation_buffer) if self.copy else self._observation_buffer
        variable = None
        if self._variable_leaves:
            variable = [
                tuple(values[leaf] for values in self._variable_values) for leaf in range(self._variable_leaves)
            ]
        assert self._memory.observations is not None  # else the observations came through the pipes
        observations = self._memory.observations.read(variable)
        return _copy_value(observations) if self.copy else observations

    def _results(self, replies: dict[int, Reply]) -> tuple[Any, ...]:
        results: dict[int, Any] = {}
        for reply in replies.values():
            results.update(reply.results)
        return tuple(results.get(index) for index in range(self.num_envs))


def _worker_count(requested: int | None, num_envs: int) -> int:
    if requested is None:
        return max(1, min(num_envs, psutil.cpu_count(logical=False) or 1))
    if isinstance(requested, bool) or not isinstance(requested, int) or requested < 1:
        raise InvalidValueError(message("num_workers is invalid", expected="an int >= 1", got=show(requested)))
    return min(requested, num_envs)


def _split(num_envs: int, num_workers: int) -> list[range]:
    """Contiguous, balanced slices of env indices, one per worker."""
    bounds = np.linspace(0, num_envs, num_workers + 1).round().astype(int)
    return [range(int(lo), int(hi)) for lo, hi in itertools.pairwise(bounds)]


def _span(envs: range) -> str:
    return f"{envs.start}" if len(envs) == 1 else f"{envs.start}-{envs.stop - 1}"


def _copy_value(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, dict):
        return {key: _copy_value(item) for key, item in value.items()}
    if isinstance(value, tuple) and type(value) is tuple:
        return tuple(_copy_value(item) for item in value)
    return value


def _placeholders(batched_space: Any, buffer: Any, num_envs: int) -> list[Any]:
    """Per-env values of an empty batch, standing in for envs not reset yet (a partial first reset)."""
    try:
        return list(iterate(batched_space, buffer))
    except Exception:
        return [None] * num_envs


def _stop_processes(processes: list[Any], grace: float) -> None:
    """Join the processes for ``grace`` seconds, then terminate, then kill what is left."""
    deadline = time.monotonic() + grace
    for process in processes:
        if process is not None:
            process.join(max(0.0, deadline - time.monotonic()))
    for escalate in ("terminate", "kill"):
        alive = [p for p in processes if p is not None and p.is_alive()]
        if not alive:
            return
        for process in alive:
            getattr(process, escalate)()
        for process in alive:
            process.join(1.0)


def _kill_processes(processes: list[Any]) -> None:
    """Finalizer: at interpreter exit (or garbage collection without close), stop every worker."""
    _stop_processes(processes, 0.0)
