"""What AsyncVectorEnv does once, before its first call: build the envs it needs here, start the workers.

The shared memory must exist before the workers start (spawn can only hand it over at start), so the spaces
come from one env built in the main process (:func:`probe`), as Gymnasium does; when the main process steps
envs itself (``main_process_envs``), that env is its env 0. :func:`start_pool` then lays out the memory and
starts the workers, which describe their envs back.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from vecspaces.spaces import Space
from vecspaces.vector._async.actions import ActionWriter
from vecspaces.vector._async.busy_threads import stacklevel_outside_vecspaces
from vecspaces.vector._async.calls import CallCycle
from vecspaces.vector._async.env_slice import EnvSlice
from vecspaces.vector._async.observations import ObservationPath, observation_path
from vecspaces.vector._async.pool import WorkerPool
from vecspaces.vector._async.pool_mode import PoolMode
from vecspaces.vector._async.shared import SharedStepMemory
from vecspaces.vector._async.worker import WorkerConfig, describe
from vecspaces.vector._runner import build_env
from vecspaces.vector._spaces import ObservationMode, VectorSpaces, resolve_env_spaces
from vecspaces.vector.vector_env import AutoresetMode

__all__ = ["Batches", "PoolSettings", "StartedPool", "prepare_batches", "probe", "start_pool"]

Found = TypeVar("Found")


def probe(env_fns: list[Callable[[], Any]], local: int, read: Callable[[Any], Found]) -> tuple[list[Any], Found]:
    """Build env 0 and the rest of the first ``local`` envs here, and ``read`` env 0 (its spaces, its metadata).

    Returns the main process's envs (none when ``local`` is 0: env 0 is closed again) and what ``read`` returned.
    If building or reading fails, the envs built so far are closed before the error goes on.
    """
    envs: list[Any] = []
    try:
        for index in range(max(local, 1)):
            envs.append(build_env(env_fns[index], index))
        found = read(envs[0])
    except BaseException:
        for env in envs:
            with contextlib.suppress(Exception):  # the error that stopped us is the one to raise
                env.close()
        raise
    if local:
        return envs, found
    try:
        envs[0].close()
    except Exception as error:  # the pool does not need this env: its workers build their own
        warnings.warn(
            f"env 0, built in the main process only to read its spaces, raised {type(error).__name__} in close(): "
            f"{error}; the vector env starts anyway (the workers build envs of their own), but expect the same "
            f"error from close()",
            RuntimeWarning,
            stacklevel=stacklevel_outside_vecspaces(),
        )
    return [], found


@dataclass(frozen=True)
class PoolSettings:
    """The checked options of the worker pool (see ``AsyncVectorEnv``'s arguments)."""

    num_envs: int
    slices: list[range]
    cpus: list[int | None]
    auto_pinning: list[int] | None
    worker: Callable[[WorkerConfig], None]
    daemon: bool
    spin_seconds: float
    startup_timeout: float
    restart: bool
    restart_attempts: int
    shared_memory: bool
    copy: bool
    max_concurrency: int | None
    autoreset_mode: AutoresetMode


@dataclass(frozen=True)
class StartedPool:
    """The pieces :func:`start_pool` made, and every env's description (the main process's envs first)."""

    memory: SharedStepMemory
    local: EnvSlice | None
    calls: CallCycle
    pool: WorkerPool
    descriptions: list[dict[str, Any]]


def start_pool(
    context: Any,
    env_fns: list[Callable[[], Any]],
    local_envs: list[Any],
    single_observation: Space[Any],
    single_action: Space[Any],
    settings: PoolSettings,
) -> StartedPool:
    """Lay out the shared memory and start the workers; the main process's ``local_envs`` join as one slice.

    If the workers fail to start, they are stopped and the local envs closed before the error goes on.
    """
    num_workers = len(settings.slices)
    try:
        memory = SharedStepMemory(
            context,
            single_observation,
            single_action,
            settings.num_envs,
            num_workers,
            settings.shared_memory,
            settings.copy,
            settings.max_concurrency,
        )
    except BaseException:
        for env in local_envs:
            env.close()
        raise
    pool = WorkerPool(
        context,
        env_fns,
        settings.slices,
        memory,
        settings.autoreset_mode,
        settings.daemon,
        settings.worker,
        settings.spin_seconds,
        settings.cpus,
        settings.restart,
        settings.restart_attempts,
        settings.auto_pinning,
    )
    local_slice = None
    if local_envs:
        local_slice = EnvSlice(
            range(len(local_envs)),
            local_envs,
            settings.autoreset_mode,
            memory,
            num_workers,
            learn_layouts=pool.info_reader.learn,
        )
    calls = CallCycle(local_slice, settings.num_envs)
    calls.pool = pool
    try:
        descriptions = [describe(env) for env in local_envs] + pool.start(range(num_workers), settings.startup_timeout)
    except BaseException:
        if local_slice is not None:
            local_slice.close()
        raise
    return StartedPool(memory, local_slice, calls, pool, descriptions)


@dataclass(frozen=True)
class Batches:
    """How the batches of a started pool are read and written: its spaces, observations, actions, pool mode."""

    spaces: VectorSpaces
    observations: ObservationPath
    actions: ActionWriter
    pool_mode: PoolMode


def prepare_batches(
    started: StartedPool, observation_mode: ObservationMode, worker_of: Any, batch_size: int, copy: bool
) -> Batches:
    """Decide the batched spaces from the envs' descriptions, and how ``started``'s batches are read and written.

    ``worker_of``: each env's worker (-1: the main process).
    """
    descriptions = started.descriptions
    spaces = resolve_env_spaces(
        observation_mode,
        [d["observation_space"] for d in descriptions],
        [d["action_space"] for d in descriptions],
    )
    num_envs = len(descriptions)
    observations = observation_path(
        spaces.single_observation_space, spaces.observation_space, started.memory, num_envs, copy
    )
    actions = ActionWriter(started.memory, spaces, worker_of)
    pool_mode = PoolMode(
        started.pool, actions, observations, worker_of, batch_size, started.calls.errors, started.local
    )
    started.calls.observations = observations
    return Batches(spaces, observations, actions, pool_mode)
