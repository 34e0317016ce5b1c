"""AsyncVectorEnv: sub-environments stepped in worker processes that write straight into shared memory.

This module is the Gymnasium-facing facade: the call cycle over the pieces of ``vecspaces.vector._async``, whose
package docstring has the data flow of a step, the pieces and the failure semantics.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np
import numpy.typing as npt

from vecspaces.error import (
    InvalidValueError,
    message,
    show,
)
from vecspaces.spaces import Space
from vecspaces.vector._arguments import env_factories, seeds_per_env, split_reset_mask
from vecspaces.vector._async import forks, interrupts, options
from vecspaces.vector._async.gate import DEFERRAL, CallGate, deferring_signals
from vecspaces.vector._async.observations import SharedObservations
from vecspaces.vector._async.pool_mode import RecvResult
from vecspaces.vector._async.processes import describe_this_process, stop_processes
from vecspaces.vector._async.protocol import Command, Reply, raise_env_errors
from vecspaces.vector._async.startup import PoolSettings, StartedPool, prepare_batches, probe, start_pool
from vecspaces.vector._async.worker import WorkerConfig, run_worker
from vecspaces.vector._gymnasium_facing import Face, face_of_arguments
from vecspaces.vector._spaces import (
    ObservationMode,
    as_vecspaces_observation_mode,
    as_vecspaces_space,
    check_observation_mode,
)
from vecspaces.vector.vector_env import AutoresetMode, SubEnvsVectorEnv, autoreset_mode_of

__all__ = ["AsyncVectorEnv"]

# The longest a wait polls before blocking; waits that usually take longer do not poll at all (see _async.waiting).
DEFAULT_MAX_SPIN_SECONDS = 1e-3
# Calls whose effects would bypass the pool's bookkeeping.
_RESERVED_CALLS = ("reset", "step", "close")

StepResult = tuple[Any, npt.NDArray[np.float64], npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]]


class AsyncVectorEnv(SubEnvsVectorEnv[Any, Any, npt.NDArray[np.float64]]):
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
        max_concurrency: at most this many sub-envs in ``reset`` or ``step`` at any one time, across all
            workers (None: no limit).
        num_workers: how many processes share the envs (contiguous slices); default: the number of physical
            cores (from psutil), at most ``len(env_fns)``.
        batch_size: how many envs :meth:`recv` returns in pool mode (default: all of them).
        timeout: the default timeout in seconds of every wait (None waits as long as the workers live).
        startup_timeout: how long the workers may take to build their envs, in seconds.
        restart_workers: restart a worker that died, instead of breaking the pool.
        restart_attempts: with ``restart_workers``, how many times in a row a dead worker's replacement may
            fail (die, or raise while it builds its envs) before the pool gives up and raises
            :class:`WorkerDiedError`.
        spin_seconds: the longest a wait polls before blocking (default 1 ms; a worker waiting for its next
            command polls at most 0.3 ms of it); waits adapt below it, and do not poll at all when the envs
            are slower than that, nor while trials show that blocking makes steps faster (as when other busy
            processes share the cores). 0 always blocks.
        main_process_envs: how many envs (the first ones) the main process steps itself while the workers
            step theirs. Faster for cheap envs on small machines (one process fewer competing for the cores),
            with the same results and errors; but those envs share the main process's fate (a crash in one is
            a crash of the main process) and ``*_wait`` timeouts do not cover them. In pool mode they are stepped
            by ``send``, so ``recv`` finds them ready first.
        pin_workers: True pins each worker process to one CPU, in turn over the CPUs this process may run on
            (Linux only); False never pins. None (the default) pins them, one per CPU, only while that pays: with
            as many workers as CPUs, while neither other processes nor the pool's own threads beside the
            stepping ones (a policy's BLAS threads, an env's threads) keep those CPUs busy, measured every 2 s;
            a pinned worker cannot move away from a busy neighbour (see the README). The main process is never
            pinned.

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
        max_concurrency: int | None = None,
        *,
        num_workers: int | None = None,
        batch_size: int | None = None,
        timeout: float | None = None,
        startup_timeout: float = 120.0,
        restart_workers: bool = False,
        restart_attempts: int = 3,
        spin_seconds: float | None = None,
        main_process_envs: int = 0,
        pin_workers: bool | None = None,
    ) -> None:
        self.closed = True  # until the workers are up, there is nothing for close() to do
        self.env_fns = env_factories(env_fns)
        self.num_envs = len(self.env_fns)
        # Gymnasium's attributes: the arguments as given.
        self.shared_memory = shared_memory
        self.copy = copy
        self.context = context
        self.daemon = daemon
        self.worker = worker
        self.observation_mode = observation_mode
        self.autoreset_mode = autoreset_mode_of(autoreset_mode)
        arguments_face = face_of_arguments(autoreset_mode, observation_mode)
        observation_mode = as_vecspaces_observation_mode(observation_mode)
        check_observation_mode(observation_mode)
        self.timeout = None if timeout is None else options.seconds("timeout", timeout)
        startup_timeout = options.seconds("startup_timeout", startup_timeout)
        self.restart_workers = restart_workers
        self.batch_size = options.pool_batch_size(batch_size, self.num_envs)
        self.max_concurrency = options.max_concurrency(max_concurrency)
        options.check_worker(worker)
        start_context = options.start_context(context)
        local = options.main_process_env_count(main_process_envs, self.num_envs)
        self.num_workers = options.worker_count(num_workers, self.num_envs - local)
        slices = [
            range(local + s.start, local + s.stop) for s in options.split_envs(self.num_envs - local, self.num_workers)
        ]
        self._worker_of = np.repeat(np.arange(-1, self.num_workers), [local] + [len(s) for s in slices])
        settings = PoolSettings(
            self.num_envs,
            slices,
            options.worker_cpus(pin_workers, self.num_workers),
            options.auto_pinning_cpus(pin_workers, self.num_workers),
            worker or run_worker,
            daemon,
            DEFAULT_MAX_SPIN_SECONDS if spin_seconds is None else options.seconds("spin_seconds", spin_seconds),
            startup_timeout,
            restart_workers,
            options.restart_attempts(restart_attempts),
            shared_memory,
            copy,
            self.max_concurrency,
            self.autoreset_mode,
        )

        local_envs, single_observation, single_action = self._probe(local, arguments_face, observation_mode)
        started = start_pool(start_context, self.env_fns, local_envs, single_observation, single_action, settings)
        self._memory, self._local, self._calls, self._pool = started.memory, started.local, started.calls, started.pool
        self._control = self._memory.control()
        self._gate = CallGate(self._calls, self._pool)
        self._finalizer = weakref.finalize(self, _release, self._pool.processes)
        interrupts.watch()
        forks.track(self)
        self.closed = False
        try:
            self._prepare_batches(observation_mode, started)
        except BaseException:
            self.close(terminate=True)
            raise

    def _probe(
        self, local: int, arguments_face: Face, observation_mode: ObservationMode
    ) -> tuple[list[Any], Space[Any], Space[Any]]:
        """Build env 0 here for its spaces and metadata (see ``startup``); return the main process's envs, spaces."""

        def read(first: Any) -> tuple[Space[Any], Space[Any]]:
            self._face = self._read_first_env(first, arguments_face)  # shown once the other envs' spaces are known
            observation = as_vecspaces_space(first.observation_space, "env 0 observation_space")
            return observation, as_vecspaces_space(first.action_space, "env 0 action_space")

        local_envs, (single_observation, single_action) = probe(self.env_fns, local, read)
        if isinstance(observation_mode, tuple):
            single_observation = observation_mode[1]
        return local_envs, single_observation, single_action

    def _prepare_batches(self, observation_mode: ObservationMode, started: StartedPool) -> None:
        """Decide the batched spaces from the envs' descriptions, and how batches are read and written."""
        batches = prepare_batches(started, observation_mode, self._worker_of, self.batch_size, self.copy)
        self._spaces, self._observations, self._actions = batches.spaces, batches.observations, batches.actions
        self._pool_mode = batches.pool_mode
        self._show_spaces(self._spaces, self._face)
        self._gate.pool_mode = self._pool_mode
        self._all_envs = range(self.num_envs)
        # Where step() writes actions when it can take its shortest path (see _step_plainly), else None.
        plain = (
            self._local is None
            and isinstance(self._observations, SharedObservations)
            and not self._observations.piped_leaves
            # A subclass that overrides a half of step (as Gymnasium users do) gets step_async + step_wait.
            and type(self).step_async is AsyncVectorEnv.step_async
            and type(self).step_wait is AsyncVectorEnv.step_wait
        )
        self._plain_action_view = self._actions.view if plain else None

    # -- Gymnasium's API -----------------------------------------------------------------------------------

    @property
    def processes(self) -> list[Any]:
        """The worker processes, one per worker (Gymnasium has one per env); a restart replaces its entry."""
        return list(self._pool.processes)

    @property
    def restarts(self) -> int:
        """How many times a dead worker was restarted."""
        return self._pool.restarts

    @deferring_signals
    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every sub-env, or those selected by ``options["reset_mask"]``; see :meth:`reset_async`."""
        self.reset_async(seed=seed, options=options)
        return self.reset_wait()

    @deferring_signals
    def reset_async(self, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None) -> None:
        """Send the reset command to the workers.

        Args:
            seed: None, an int (env ``i`` gets ``seed + i``) or a list of one seed per env.
            options: passed to each reset sub-env; ``"reset_mask"`` (a bool array) selects which envs reset,
                the others keep their last observation. The caller's dict is not modified.
        """
        self._gate.check_can_start("reset_async", self.timeout)
        seeds = seeds_per_env(seed, self.num_envs)
        mask, options = split_reset_mask(options, self.num_envs)
        selected = np.ones(self.num_envs, dtype=np.bool_) if mask is None else mask
        self._calls.not_reset = np.flatnonzero(~selected).tolist()
        self._observations.choose()
        self._calls.start(
            Command.RESET,
            {
                w: ([seeds[i] for i in envs], options, [bool(selected[i]) for i in envs])
                for w, envs in self._calls.slices()
            },
        )

    @deferring_signals
    def reset_wait(self, timeout: float | None = None) -> tuple[Any, dict[str, Any]]:
        """Wait for the reset to finish and return the batched observation and infos.

        Args:
            timeout: seconds to wait; None uses the pool's default timeout.
        """
        replies = self._finish(Command.RESET, "reset_wait", timeout)
        return self._observations.result(), self._calls.infos(replies)

    def step(self, actions: Any) -> StepResult:
        """Step every sub-env with its action; see :meth:`step_async` and :meth:`step_wait`."""
        if self._plain_action_view is not None and self._gate.can_start():
            with DEFERRAL:  # as deferring_signals does, without its wrapper: this is the hot path
                try:
                    result = self._step_plainly(actions)
                except BaseException as error:
                    self._gate.abandon_on(error)
                    raise
            self._pool.pacing.busy_threads.warn_if_due()
            return result
        return self._step_generally(actions)

    @deferring_signals
    def _step_generally(self, actions: Any) -> StepResult:
        self.step_async(actions)
        return self.step_wait()

    def _step_plainly(self, actions: Any) -> StepResult:
        """``step`` in its most common form, with the least work in this process.

        That form: an action space of one array (its actions written in one assignment, whatever array-like
        they come as), shared observations, every env in a worker, infos of plain numbers only (in shared
        memory). As soon as anything else shows up (a reply, an error, a slow or dead worker), ``step_wait``
        takes over the pending step.
        """
        self._actions.write(actions, self._all_envs)  # converted once, or refused as step_async does
        self._observations.choose()
        self._calls.start(Command.STEP, {})
        started = time.monotonic()
        if not self._pool.collect_quietly(self.timeout):
            # The default timeout bounds the whole wait, this part of it included.
            return self.step_wait(
                None if self.timeout is None else max(0.0, self.timeout - (time.monotonic() - started))
            )
        interrupts.checkpoint()  # a Ctrl-C that came during the wait is raised before the results are taken
        self._calls.pending = None
        observations = self._observations
        observations.settle(())
        return self._step_result(observations.result(), self._calls.infos({}))

    @deferring_signals
    def step_async(self, actions: Any) -> None:
        """Check the batch of actions and send it to the workers (nothing is sent if the actions are bad)."""
        self._gate.check_can_start("step_async", self.timeout)
        arguments = self._actions.write(actions, self._all_envs)
        self._observations.choose()
        self._calls.start(Command.STEP, arguments)

    @deferring_signals
    def step_wait(self, timeout: float | None = None) -> StepResult:
        """Wait for the step to finish and return ``(observations, rewards, terminations, truncations, infos)``.

        Args:
            timeout: seconds to wait; None uses the pool's default timeout.
        """
        replies = self._finish(Command.STEP, "step_wait", timeout)
        return self._step_result(self._observations.result(), self._calls.infos(replies))

    def _step_result(self, observations: Any, infos: dict[str, Any]) -> StepResult:
        """A step's five results; the rewards and flags are copied out of shared memory."""
        control = self._control
        return observations, control.rewards.copy(), control.terminations.copy(), control.truncations.copy(), infos

    @deferring_signals
    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call the method ``name`` of every sub-env; plain attributes are returned. One result per env."""
        self.call_async(name, *args, **kwargs)
        return self.call_wait()

    @deferring_signals
    def call_async(self, name: str, *args: Any, **kwargs: Any) -> None:
        """Send ``call(name, *args, **kwargs)`` to the workers."""
        self._gate.check_can_start("call_async", self.timeout)
        if name in _RESERVED_CALLS:
            raise InvalidValueError(
                message(
                    f"call({name!r}) would bypass the pool",
                    expected="a method other than reset, step and close",
                    got=repr(name),
                    fix=f"use {name}() directly",
                )
            )
        self._calls.start(Command.CALL, {w: (name, args, kwargs) for w, _ in self._calls.slices()})

    @deferring_signals
    def call_wait(self, timeout: float | None = None) -> tuple[Any, ...]:
        """Wait for a call to finish and return one result per env."""
        return self._calls.results(self._finish(Command.CALL, "call_wait", timeout))

    @deferring_signals
    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Each sub-env's attribute ``name``. Unlike Gymnasium, a callable attribute is returned, not called."""
        self._gate.check_can_start("get_attr", self.timeout)
        self._calls.start(Command.GET_ATTR, {w: name for w, _ in self._calls.slices()})
        return self._calls.results(self._finish(Command.GET_ATTR, "get_attr", None))

    @deferring_signals
    def set_attr(self, name: str, values: Any) -> None:
        """Set the attribute ``name`` of every sub-env.

        A list or tuple gives one value per env; anything else is given to all.
        """
        if not isinstance(values, (list, tuple)):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise InvalidValueError(
                message("set_attr values has the wrong length", expected=f"{self.num_envs} values", got=show(values))
            )
        self._gate.check_can_start("set_attr", self.timeout)
        self._calls.start(Command.SET_ATTR, {w: (name, [values[i] for i in envs]) for w, envs in self._calls.slices()})
        self._finish(Command.SET_ATTR, "set_attr", None)

    def render(self) -> tuple[Any, ...]:
        """Each sub-env's ``render()`` result."""
        return self.call("render")

    def worker_info(self) -> list[dict[str, Any]]:
        """Diagnostics per worker: its pid, env indices, whether it is alive and its resident memory in bytes.

        With ``main_process_envs``, the main process comes first, as worker -1.
        """
        self._gate.check_not_inherited("worker_info")
        main = [] if self._local is None else [describe_this_process(-1, list(self._local.env_indices))]
        return main + self._pool.worker_info()

    def close_extras(self, timeout: float | None = None, terminate: bool = False, **kwargs: Any) -> None:
        """Stop the workers: let pending work finish (up to ``timeout``), send close, then escalate.

        Args:
            timeout: seconds to wait for pending work and for the workers to exit (default 1 s each).
            terminate: skip the polite steps and terminate the workers at once.
            **kwargs: accepted for compatibility with other vector envs; unused.

        Raises:
            Exception: the first error an env's ``close()`` raised, once every env is closed and every worker
                has exited.
        """
        self._gate.close()
        if self._gate.inherited:
            interrupts.unwatch()
            return  # the workers, the shared memory and the main process's envs are the parent's
        try:
            with DEFERRAL:
                errors = self._pool.close(1.0 if timeout is None else timeout, terminate)
        except BaseException:
            self._pool.stop(0.0)  # interrupted while waiting politely: no worker may outlive close()
            raise
        finally:
            self._finalizer.detach()
            interrupts.unwatch()
        if self._local is not None:
            errors = self._local.close().errors + errors
        raise_env_errors(errors)  # once everything is released: the first env's close() error, if any

    def __getstate__(self) -> NoReturn:
        raise forks.copy_refused(type(self).__name__)

    def _disown(self) -> None:
        """In a child forked from the env's process: refuse every call, leave the parent's workers alone."""
        self._gate.inherit()
        self._finalizer.detach()
        forks.forget_children(self._pool.processes)

    # -- pool mode -----------------------------------------------------------------------------------------

    @deferring_signals
    def send(self, actions: Any, env_ids: Any = None) -> None:
        """Step the envs ``env_ids`` (default: all) with ``actions``, without waiting for them.

        Envs whose worker is still busy start as soon as it is free. Only envs that are idle (not stepping,
        and whose last results were received) can be sent an action.

        Args:
            actions: a batch of ``len(env_ids)`` actions, in the order of ``env_ids``.
            env_ids: the envs to step, a sequence of distinct indices.

        Example:
            >>> from vecspaces.envs import TinyEnv
            >>> with AsyncVectorEnv([TinyEnv] * 4, num_workers=2, batch_size=2) as envs:
            ...     _ = envs.reset(seed=0)
            ...     envs.send(np.zeros(4, dtype=np.int64))
            ...     obs, rewards, terminations, truncations, infos, env_ids = envs.recv()
            ...     envs.send(np.ones(2, dtype=np.int64), env_ids)
            ...     obs.shape, len(envs.recv()[-1])
            ((2, 4), 2)
        """
        self._gate.check_can_send(self.timeout)
        self._pool_mode.send(actions, env_ids)

    @deferring_signals
    def recv(self, timeout: float | None = None) -> RecvResult:
        """Wait for the first ``batch_size`` envs to finish their step and return their results.

        When fewer than ``batch_size`` envs are stepping or done, it waits for all of them and returns those.

        Returns:
            ``(observations, rewards, terminations, truncations, infos, env_ids)``, each batched over the
            returned envs in the order of ``env_ids``. Observations of envs with contiguous ids are views of
            the shared buffer when ``copy=False``.
        """
        self._gate.check_usable("recv")
        return self._pool_mode.recv(self._timeout(timeout))

    # -- the command cycle ---------------------------------------------------------------------------------

    def _timeout(self, timeout: float | None) -> float | None:
        return options.wait_seconds(timeout, self.timeout)

    def _finish(self, command: Command, call: str, timeout: float | None) -> dict[int, Reply]:
        """Wait until every worker finished ``command``; return the replies; raise the first env error."""
        self._gate.check_can_finish(command, call)
        return self._calls.finish(command, call, self._timeout(timeout))


def _release(processes: list[Any]) -> None:
    """What an AsyncVectorEnv that was never closed leaves behind: its workers, its wrapped signal handlers."""
    stop_processes(processes, 0.0)
    interrupts.unwatch()
