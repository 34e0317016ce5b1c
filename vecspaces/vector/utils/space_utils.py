"""Gymnasium's module path for the batching functions (``gymnasium.vector.utils.space_utils``).

They live in ``vecspaces._ops.batch``, with their kernels per space in ``vecspaces._kernels``; this module only
gives them the path that code written against Gymnasium imports them from.
"""

from vecspaces._ops.batch import batch_differing_spaces, batch_space, concatenate, create_empty_array, iterate

__all__ = ["batch_differing_spaces", "batch_space", "concatenate", "create_empty_array", "iterate"]
