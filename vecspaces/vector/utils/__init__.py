"""Vector utilities: batch spaces and values, and share batches between processes.

A drop-in replacement for ``gymnasium.vector.utils``. The batching functions are ``functools.singledispatch``
functions; see ``vecspaces._ops.batch`` for the rule that custom spaces follow.
"""

from vecspaces._ops.batch import batch_differing_spaces, batch_space, concatenate, create_empty_array, iterate

__all__ = ["batch_differing_spaces", "batch_space", "concatenate", "create_empty_array", "iterate"]
