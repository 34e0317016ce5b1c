"""Vector environments: several sub-environments stepped as one batch.

A drop-in replacement for ``gymnasium.vector``: :class:`SyncVectorEnv` steps its envs in this process;
``utils`` holds the batching and shared-memory utilities.
"""

from vecspaces.vector import utils
from vecspaces.vector.sync import SyncVectorEnv
from vecspaces.vector.vector_env import AutoresetMode, VectorEnv

__all__ = ["AutoresetMode", "SyncVectorEnv", "VectorEnv", "utils"]
