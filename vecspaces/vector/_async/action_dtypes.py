"""Float actions reach the envs in the float dtype the caller gave them, as in Gymnasium.

Gymnasium hands each env its row of the caller's array, so float64 actions for a float32 Box reach the env as
float64, and an env computing with them (Pendulum clips the action and goes on in Python floats) gives results
that the same actions cast to float32 would not. So every float Box leaf of the actions (in a Dict or Tuple
too) is stored in shared memory as float64 (:func:`stored_action_space`), which holds float16, float32 and
float64 values exactly, and :class:`ActionDtypes` records per env and leaf which of those dtypes the caller's
batch had; the worker hands each env its row in that dtype. Other leaves are stored in the space's own dtype.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces._ops.memory_nodes import Path
from vecspaces.spaces import Box, Dict, Space, Tuple
from vecspaces.vector._arguments import CARRIED_FLOATS
from vecspaces.vector.utils.shared_batch import SharedBatch

__all__ = ["EVERY_ENV", "ActionDtypes", "own_dtype_codes", "stored_action_space"]

_STORED = CARRIED_FLOATS[0]  # float64: a code is an index into CARRIED_FLOATS, 0 meaning the row as stored
_CODES = {dtype: code for code, dtype in enumerate(CARRIED_FLOATS)}
EVERY_ENV = slice(None)  # the rows of a write to every env


def stored_action_space(space: Space[Any]) -> Space[Any]:
    """``space`` with each float Box leaf, in a Dict or Tuple too, as a float64 Box: how actions are stored.

    Example:
        >>> stored_action_space(Dict(force=Box(-1, 1, (2,)), gear=Box(0, 3, (), np.int64)))
        Dict('force': Box(-1.0, 1.0, (2,), float64), 'gear': Box(0, 3, (), int64))
    """
    if isinstance(space, Box) and space.dtype in _CODES:
        return space if space.dtype == _STORED else Box(space.low, space.high, space.shape, _STORED)
    if isinstance(space, Dict):
        return Dict(OrderedDict((key, stored_action_space(child)) for key, child in space.spaces.items()))
    if isinstance(space, Tuple):
        return Tuple([stored_action_space(child) for child in space.spaces])
    return space


def _float_leaves(space: Space[Any], path: Path = ()) -> list[tuple[Path, np.dtype[Any]]]:
    """The path and dtype of each float Box leaf of ``space``, in a Dict or Tuple too."""
    if isinstance(space, Box):
        return [(path, space.dtype)] if space.dtype in _CODES else []
    if isinstance(space, Dict):
        return [found for key, child in space.spaces.items() for found in _float_leaves(child, (*path, key))]
    if isinstance(space, Tuple):
        return [found for index, child in enumerate(space.spaces) for found in _float_leaves(child, (*path, index))]
    return []


def own_dtype_codes(space: Space[Any]) -> list[int]:
    """Per float Box leaf of action space ``space``, the code of its own dtype: what the codes start as.

    Example:
        >>> own_dtype_codes(Dict(a=Box(0, 1, (2,)), b=Box(0, 1, (), np.float64)))
        [1, 0]
    """
    return [_CODES[dtype] for _, dtype in _float_leaves(space)]


class ActionDtypes:
    """Per env and float Box leaf of the actions, which float dtype the caller gave.

    The main process records the dtypes with the actions; whoever steps the env reads its action through this.

    Args:
        actions: the shared actions, laid out from :func:`stored_action_space`.
        codes: the ``(num_envs, columns)`` codes in the shared control block, one column per float Box leaf.
    """

    def __init__(self, actions: SharedBatch, codes: npt.NDArray[np.int8]) -> None:
        self.actions = actions
        self.codes = codes
        space = actions.layout.space
        self.paths = [] if space is None else [path for path, _ in _float_leaves(space)]
        slot_paths = {actions.layout.slots[slot].path: position for position, slot in actions.array_leaves}
        # Where each float leaf is among the leaves of SharedBatch.read_env_leaves, in the order of paths.
        self.positions = [slot_paths[path] for path in self.paths]
        self.every_env_code = -1  # the code record_array last wrote for every env, while it stands

    def record(self, batch: Any, envs: Sequence[int] | slice) -> None:
        """Note the float dtype of each float leaf of ``batch`` (the actions of ``envs``, as_action_batch made)."""
        for column, path in enumerate(self.paths):
            leaf = batch
            for key in path:
                leaf = leaf[key]
            self.codes[envs, column] = _CODES.get(leaf.dtype, 0)
        self.every_env_code = -1

    def record_array(self, dtype: np.dtype[Any], envs: Sequence[int] | slice) -> None:
        """:meth:`record` for an action space that is one float Box, given the dtype of its batch."""
        code = _CODES.get(dtype, 0)
        if envs is not EVERY_ENV:
            self.codes[envs, 0] = code
            self.every_env_code = -1
        elif code != self.every_env_code:  # a training loop gives one dtype step after step: written once
            self.codes[:, 0] = self.every_env_code = code

    def array_reader(self, batch: npt.NDArray[Any], envs: slice) -> Callable[[], list[Any]]:
        """A function giving copies of the rows of ``batch`` (the float Box actions of ``envs``) in their dtypes."""
        codes = self.codes[envs, 0]
        # The codes' bytes when every env has the same one (the common case: one conversion of the whole slice).
        uniform: dict[bytes, np.dtype[Any]] = {
            bytes([code]) * len(codes): dtype for code, dtype in enumerate(CARRIED_FLOATS)
        }

        def read() -> list[Any]:
            dtype = uniform.get(codes.tobytes())
            if dtype is not None:
                return list(batch.astype(dtype))  # astype copies, so an env may keep its action
            return [row.astype(CARRIED_FLOATS[code]) for row, code in zip(batch, codes, strict=True)]

        return read

    def read_env(self, index: int, variable: Sequence[Any] | None = None) -> Any:
        """Env ``index``'s action (``SharedBatch.read_env``), with its float leaves in the dtypes recorded."""
        leaves = self.actions.read_env_leaves(index, variable)
        codes = self.codes[index]
        for column, position in enumerate(self.positions):
            code = codes[column]
            if code:
                leaves[position] = leaves[position].astype(CARRIED_FLOATS[code])
        return self.actions.assemble(leaves)
