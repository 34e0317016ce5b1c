"""How a batch of actions reaches the workers: written into shared memory, with only piped leaves sent."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces.vector._arguments import CARRIED_FLOATS, as_action_batch, split_action_batch
from vecspaces.vector._async.action_dtypes import EVERY_ENV, ActionDtypes
from vecspaces.vector._async.protocol import ActionLeaves
from vecspaces.vector._async.shared import SharedStepMemory
from vecspaces.vector._casting import cast_exactly
from vecspaces.vector._spaces import VectorSpaces
from vecspaces.vector.utils.shared_layout import is_single_array

__all__ = ["ActionWriter"]


class ActionWriter:
    """Checks a batch of actions and puts it where the workers read it.

    An action space that is one array (Box, Discrete, MultiBinary, MultiDiscrete) has one shared view,
    :attr:`view`, written in one assignment; any other is split per env and written leaf by leaf, and the leaves
    with no fixed size (Sequence, Graph, custom spaces) go with the command instead. Float Box leaves keep the
    caller's float dtype (see ``action_dtypes``).

    Args:
        memory: the pool's shared memory.
        spaces: the vector env's spaces.
        worker_of: per env, the index of its worker (-1 for the main process).
    """

    def __init__(self, memory: SharedStepMemory, spaces: VectorSpaces, worker_of: npt.NDArray[np.int64]) -> None:
        self.memory = memory
        self.spaces = spaces
        self.worker_of = worker_of
        self.num_envs = len(worker_of)
        layout = memory.actions.layout
        self.piped = bool(layout.variable_leaves)
        self.view: npt.NDArray[Any] | None = memory.actions.batch_views[0] if is_single_array(layout) else None
        self.dtype: Any = spaces.action_space.dtype  # the dtype of a one-array space's actions
        self.dtypes = ActionDtypes(memory.actions, memory.control().action_dtypes)
        self.float_leaves = bool(self.dtypes.paths)

    def write(self, actions: Any, envs: Sequence[int]) -> dict[int, ActionLeaves]:
        """Put the actions of ``envs`` in shared memory; return per worker what must go with the command, if any.

        Raises:
            InvalidValueError: the actions are not a batch of ``len(envs)`` actions of the space, or a value
                would change in the cast to the space's dtype.
            InvalidTypeError: the actions cannot be converted to the space's dtype.
        """
        view = self.view
        count = len(envs)
        # Every env, in order (pool mode's lists of envs may not be in order).
        rows = EVERY_ENV if type(envs) is range and count == self.num_envs else list(envs)
        if view is not None:
            if type(actions) is not np.ndarray:  # a list, a tensor...: converted as a whole, as actions_per_env does
                actions = as_action_batch(self.spaces.batched_action_space(count), actions)
            if type(actions) is np.ndarray and actions.shape == (count, *view.shape[1:]):
                if actions.dtype != view.dtype and not (self.float_leaves and actions.dtype in CARRIED_FLOATS):
                    actions = cast_exactly(actions, self.dtype, "actions")
                view[rows] = actions
                if self.float_leaves:
                    self.dtypes.record_array(actions.dtype, rows)
                return {}
        space = self.spaces.batched_action_space(count)
        actions = as_action_batch(space, actions)
        env_actions = split_action_batch(space, actions, count)
        if self.piped:
            # The fixed-size leaves go to shared memory; only the variable-size ones travel with the command.
            leaves = self.memory.write_actions(envs, env_actions, self.worker_of)
        else:
            leaves = {}
            for i, action in zip(envs, env_actions, strict=True):
                self.memory.actions.write(i, action)
        if self.float_leaves:
            self.dtypes.record(actions, rows)
        return leaves
