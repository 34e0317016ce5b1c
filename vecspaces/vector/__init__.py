"""Vector environments: several sub-environments stepped as one batch.

A drop-in replacement for ``gymnasium.vector``: :class:`AsyncVectorEnv` steps its envs in worker processes
that write into shared memory, :class:`SyncVectorEnv` steps them in this process;
``utils`` holds the batching and shared-memory utilities; :class:`VectorWrapper` and its observation, action and
reward forms are the base classes of wrappers around a vector env.
"""

from vecspaces.vector import utils
from vecspaces.vector.async_vector_env import AsyncVectorEnv
from vecspaces.vector.sync_vector_env import SyncVectorEnv
from vecspaces.vector.vector_env import AutoresetMode, VectorEnv
from vecspaces.vector.vector_wrapper import (
    VectorActionWrapper,
    VectorObservationWrapper,
    VectorRewardWrapper,
    VectorWrapper,
)

__all__ = [
    "AsyncVectorEnv",
    "AutoresetMode",
    "SyncVectorEnv",
    "VectorActionWrapper",
    "VectorEnv",
    "VectorObservationWrapper",
    "VectorRewardWrapper",
    "VectorWrapper",
    "utils",
]
