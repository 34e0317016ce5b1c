"""The pool's shared memory: everything fixed-size of a step, laid out once, seen by the main process and workers.

=================  =======================================================================================
part               contents
=================  =======================================================================================
``observations``   one or more :class:`SharedBatch` of ``num_envs`` observations (fixed-size leaves only), or
                   None when observations travel through the pipes. The first is the pool's own buffer; the
                   others are lent to the caller in turn (see ``vecspaces.vector._async.lending``)
``actions``        a :class:`SharedBatch` of ``num_envs`` actions (fixed-size leaves only; float Box leaves as
                   float64, see ``vecspaces.vector._async.action_dtypes``)
``control``        per env: reward (float64), terminated, truncated (bool), whether to step it (int8); per
                   worker: the command code (int32), whether it finished it and whether a reply follows in
                   the pipe (int8), whether it holds a concurrency permit (int8); which observation buffer
                   the current command writes (int32); whether every wait blocks without polling (int8, set by
                   the main process's :class:`~vecspaces.vector._async.waiting.TrialSpin`); per env, the
                   layout of its info and the info's numbers (see ``vecspaces.vector._async.info_slots``),
                   and per float Box leaf of its action the float dtype the caller gave (int8)
=================  =======================================================================================

Observations and actions are laid out with ``custom_as_variable=True``: a leaf with no fixed size (Sequence,
Graph, a OneOf holding one) and a custom space with no registered layout (see the custom-space rule in
``vecspaces._ops.support``) are *variable-size* leaves, which the buffer does not hold. Their values travel
through the pipes while every other leaf stays in shared memory (:meth:`SharedStepMemory.write_actions` splits
actions that way).

Each part is one ``multiprocessing`` array without a lock: who may touch what, and when, is decided by the
command/done semaphores (see the data flow in ``vecspaces.vector._async``), never by a lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces.spaces import Box, Dict, Space
from vecspaces.vector._arguments import CARRIED_FLOATS
from vecspaces.vector._async.action_dtypes import own_dtype_codes, stored_action_space
from vecspaces.vector._async.info_slots import MAX_INFO_VALUES
from vecspaces.vector._async.lending import buffers_needed
from vecspaces.vector._async.protocol import ActionLeaves
from vecspaces.vector.utils.shared_batch import SharedBatch
from vecspaces.vector.utils.shared_layout import SLOT_ALIGNMENT, SharedLayout, check_room

__all__ = ["Control", "SharedStepMemory"]

_INT64 = np.iinfo(np.int64)


@dataclass
class Control:
    """Numpy views of the control part of the shared memory."""

    rewards: npt.NDArray[np.float64]
    terminations: npt.NDArray[np.bool_]
    truncations: npt.NDArray[np.bool_]
    commands: npt.NDArray[np.int32]
    has_reply: npt.NDArray[np.int8]
    finished: npt.NDArray[np.int8]
    stepping: npt.NDArray[np.int8]
    generation: npt.NDArray[np.int32]
    permits: npt.NDArray[np.int8]
    blocking: npt.NDArray[np.int8]
    info_layouts: npt.NDArray[np.int64]
    info_values: npt.NDArray[np.int64]
    action_dtypes: npt.NDArray[np.int8]


def _control_space(num_envs: int, num_workers: int, float_action_leaves: int) -> Dict:
    return Dict(
        rewards=Box(-np.inf, np.inf, (num_envs,), np.float64),
        terminations=Box(0, 1, (num_envs,), np.bool_),
        truncations=Box(0, 1, (num_envs,), np.bool_),
        commands=Box(0, 100, (num_workers,), np.int32),
        has_reply=Box(0, 1, (num_workers,), np.int8),
        finished=Box(0, 1, (num_workers,), np.int8),
        stepping=Box(0, 1, (num_envs,), np.int8),
        generation=Box(0, 100, (1,), np.int32),
        # One more than the workers: the main process's own envs.
        permits=Box(0, 1, (num_workers + 1,), np.int8),
        blocking=Box(0, 1, (1,), np.int8),
        # Per env, the infos of plain numbers (see vecspaces.vector._async.info_slots).
        info_layouts=Box(_INT64.min, _INT64.max, (num_envs,), np.int64),
        info_values=Box(_INT64.min, _INT64.max, (num_envs, MAX_INFO_VALUES), np.int64),
        action_dtypes=Box(0, len(CARRIED_FLOATS) - 1, (num_envs, max(1, float_action_leaves)), np.int8),
    )


class SharedStepMemory:
    """Allocates the pool's shared memory; pass it to the workers, then call :meth:`control` on each side.

    Args:
        ctx: the multiprocessing context the workers are started with.
        observation_space: the single observation space.
        action_space: the single action space.
        num_envs: the batch size.
        num_workers: the number of worker processes.
        shared_observations: False to send observations through the pipes (``observations`` is None then).
        lend_observations: whether to allocate spare observation buffers to lend (``copy=True``).
        max_concurrency: at most this many envs of the pool in ``reset`` or ``step`` at once (None: no limit).

    Attributes:
        concurrency: the semaphore holding the ``max_concurrency`` permits, or None.
    """

    def __init__(
        self,
        ctx: Any,
        observation_space: Space[Any],
        action_space: Space[Any],
        num_envs: int,
        num_workers: int,
        shared_observations: bool = True,
        lend_observations: bool = False,
        max_concurrency: int | None = None,
    ) -> None:
        observations = (
            SharedLayout(observation_space, num_envs, custom_as_variable=True) if shared_observations else None
        )
        copies = 0 if observations is None else buffers_needed(observations, lend_observations)
        actions = SharedLayout(stored_action_space(action_space), num_envs, custom_as_variable=True)
        float_action_codes = own_dtype_codes(action_space)
        control = SharedLayout(_control_space(num_envs, num_workers, len(float_action_codes)), 1)
        # Every buffer together, before any is allocated (each checks itself alone too).
        layouts = [actions, control] + [observations] * copies if observations is not None else [actions, control]
        check_room(
            sum(layout.nbytes + SLOT_ALIGNMENT for layout in layouts),
            f"{num_envs} envs ({copies} observation buffers, actions and control)",
        )
        self.concurrency: Any = None if max_concurrency is None else ctx.BoundedSemaphore(max_concurrency)
        self.observations: tuple[SharedBatch, ...] | None = None
        if observations is not None:
            self.observations = tuple(observations.allocate(ctx, name="obs") for _ in range(copies))
        self.actions: SharedBatch = actions.allocate(ctx, name="action")
        self._control: SharedBatch = control.allocate(ctx)
        if float_action_codes:  # until the main process records what the caller gave, the leaves' own dtypes
            self.control().action_dtypes[:] = float_action_codes

    def write_actions(
        self, envs: Sequence[int], env_actions: Sequence[Any], worker_of: Sequence[int] | npt.NDArray[np.integer[Any]]
    ) -> dict[int, ActionLeaves]:
        """Write the fixed-size leaves of actions that have variable-size leaves; return the rest per worker.

        Each action is checked whole before any of its leaves is written (see ``SharedBatch.write``).

        Args:
            envs: the envs the actions are for.
            env_actions: one action per env of ``envs``.
            worker_of: the worker of each env of the pool.

        Returns:
            Per worker, the values of the variable-size leaves of its envs' actions, to send with the command.
        """
        write = self.actions.write
        messages: dict[int, ActionLeaves] = {}
        for i, action in zip(envs, env_actions, strict=True):
            w = int(worker_of[i])
            leaves = messages.get(w)
            if leaves is None:
                leaves = messages[w] = ActionLeaves({})
            leaves.values[i] = write(i, action)
        return messages

    def control(self) -> Control:
        """Numpy views of the control block (make them after unpickling, in the process that uses them)."""
        views = self._control.read()
        return Control(**{key: array[0] for key, array in views.items()})
