"""How the batch of observations reaches the caller: the one owner of ``copy`` in AsyncVectorEnv.

Two paths, one interface:

- :class:`SharedObservations` (``shared_memory=True``): the workers write fixed-size leaves into shared
  buffers; the variable-size leaves (Sequence, Graph, custom spaces) come through the pipes and are put back
  in place when the batch is read. With ``copy=True`` a spare buffer is lent to the caller for each result
  (see ``lending``); with ``copy=False`` the caller gets views of the one buffer.
- :class:`PipedObservations` (``shared_memory=False``): every observation comes whole through the pipes and is
  concatenated into one batch, copied for the caller with ``copy=True``.

The env calls :meth:`~ObservationPath.choose` before a command that writes observations,
:meth:`~ObservationPath.receive` with a worker's pipe values, :meth:`~ObservationPath.settle` when the command
is over, then :meth:`~ObservationPath.result` (a Gymnasium call) or :meth:`~ObservationPath.take` (pool mode).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from vecspaces._ops.batch import concatenate, create_empty_array, iterate
from vecspaces.spaces import Dict, Space, Tuple
from vecspaces.vector._async.copies import copied
from vecspaces.vector._async.lending import ObservationLender
from vecspaces.vector._async.shared import SharedStepMemory

__all__ = ["ObservationPath", "PipedObservations", "SharedObservations", "observation_path", "take_envs"]


class ObservationPath:
    """The observations of every env, as the workers left them, and the caller's view of them.

    Args:
        single_space: one env's observation space.
        num_envs: how many envs.
        copy: whether results must survive the next call (see the module docstring).
        piped_leaves: how many leaves of an observation come through the pipes.
    """

    def __init__(self, single_space: Space[Any], num_envs: int, copy: bool, piped_leaves: int) -> None:
        self.single_space = single_space
        self.copy = copy
        self.piped_leaves = piped_leaves
        # Per env, the last values of its piped leaves (an env that did not write keeps its last ones).
        self.piped_values: list[list[Any]] = [[None] * piped_leaves for _ in range(num_envs)]

    def receive(self, index: int, values: list[Any]) -> None:
        """Keep env ``index``'s values of the piped leaves, from its worker's reply."""
        self.piped_values[index] = values

    def choose(self) -> None:
        """Before a command that writes observations: pick the buffer it writes."""

    def settle(self, stale: Sequence[int]) -> None:
        """After such a command: envs ``stale`` did not write this time, so they keep their last observation."""

    def own_buffer(self) -> None:
        """Pool mode reads and writes only the first buffer (results are copied or sliced from it)."""

    def read(self) -> Any:
        """The whole batch as it stands (views where the leaves are arrays)."""
        raise NotImplementedError

    def result(self) -> Any:
        """The caller's batch after a reset or step: lent, copied or views, as ``copy`` says."""
        raise NotImplementedError

    def take(self, index: slice | list[int]) -> Any:
        """The caller's batch of the envs ``index`` (pool mode): views of contiguous envs unless ``copy``."""
        observations = take_envs(self.single_space, self.read(), index)
        return copied(observations) if self.copy else observations


class SharedObservations(ObservationPath):
    """Observations written into shared memory by the workers, lent or viewed (see the module docstring)."""

    def __init__(self, single_space: Space[Any], memory: SharedStepMemory, num_envs: int, copy: bool) -> None:
        buffers = memory.observations
        assert buffers is not None  # shared_memory=True
        super().__init__(single_space, num_envs, copy, len(buffers[0].layout.variable_leaves))
        self.lender = ObservationLender(buffers, copy)
        self.has_spares = bool(self.lender.spares)
        self.generation = memory.control().generation  # which buffer the workers write

    def choose(self) -> None:
        if self.has_spares:
            self.generation[0] = self.lender.choose()

    def settle(self, stale: Sequence[int]) -> None:
        if self.has_spares:
            self.lender.settle(stale)

    def own_buffer(self) -> None:
        self.lender.use_own_buffer()
        self.generation[0] = 0

    def read(self) -> Any:
        lender = self.lender
        return lender.batches[lender.current].read(self._piped_batches())

    def result(self) -> Any:
        return self.lender.result(self._piped_batches() if self.piped_leaves else None)

    def _piped_batches(self) -> list[tuple[Any, ...]] | None:
        """The batched values of the piped leaves, one tuple of per-env values per leaf."""
        if not self.piped_leaves:
            return None
        return [tuple(values[leaf] for values in self.piped_values) for leaf in range(self.piped_leaves)]


class PipedObservations(ObservationPath):
    """Whole observations that came through the pipes, concatenated into one batch in place."""

    def __init__(self, single_space: Space[Any], batched_space: Space[Any], num_envs: int, copy: bool) -> None:
        super().__init__(single_space, num_envs, copy, 1)
        self.batch = create_empty_array(single_space, num_envs, np.zeros)
        self.per_env = _placeholders(batched_space, self.batch, num_envs)

    def read(self) -> Any:
        for index, values in enumerate(self.piped_values):
            if values[0] is not None:
                self.per_env[index] = values[0]
        self.batch = concatenate(self.single_space, self.per_env, self.batch)
        return self.batch

    def result(self) -> Any:
        observations = self.read()
        return copied(observations) if self.copy else observations


def observation_path(
    single_space: Space[Any], batched_space: Space[Any], memory: SharedStepMemory, num_envs: int, copy: bool
) -> ObservationPath:
    """The path of the pool's observations: shared when the memory holds them, else piped."""
    if memory.observations is None:
        return PipedObservations(single_space, batched_space, num_envs, copy)
    return SharedObservations(single_space, memory, num_envs, copy)


def take_envs(space: Any, value: Any, index: slice | list[int]) -> Any:
    """The envs ``index`` of a batch of the single ``space`` (views where ``index`` is a slice and leaves arrays).

    Example:
        >>> from vecspaces.spaces import Discrete
        >>> take_envs(Discrete(3), np.array([2, 0, 1]), [2, 0])
        array([1, 2])
    """
    if isinstance(space, Dict):
        return {key: take_envs(child, value[key], index) for key, child in space.items()}
    if isinstance(space, Tuple):
        return tuple(take_envs(child, item, index) for child, item in zip(space, value, strict=True))
    if isinstance(value, np.ndarray):
        return value[index]
    # A tuple of per-env values: Text, OneOf, Sequence, Graph and custom spaces.
    return value[index] if isinstance(index, slice) else tuple(value[i] for i in index)


def _placeholders(batched_space: Any, buffer: Any, num_envs: int) -> list[Any]:
    """Per-env values of an empty batch, standing in for envs not reset yet (a partial first reset)."""
    try:
        return list(iterate(batched_space, buffer))
    except Exception:
        return [None] * num_envs
