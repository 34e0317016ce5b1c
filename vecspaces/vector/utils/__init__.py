"""Vector utilities: batch spaces and values, and share batches between processes.

A drop-in replacement for ``gymnasium.vector.utils``. The batching functions are ``functools.singledispatch``
functions; see ``vecspaces._ops.support`` for the one rule that custom spaces follow and the table of which
operation supports which space kind (``vecspaces._kernels.support.render_support_table()`` prints it). The
shared-memory functions are built on a layout compiled once per space (:class:`SharedLayout`, bound to a buffer
as :class:`SharedBatch`); see ``vecspaces.vector.utils.shared_memory`` for how they differ from Gymnasium's.
"""

from vecspaces._ops.batch import batch_differing_spaces, batch_space, concatenate, create_empty_array, iterate
from vecspaces._ops.memory_nodes import layout_nodes
from vecspaces.vector.utils import space_utils as space_utils  # an attribute, as in Gymnasium
from vecspaces.vector.utils.misc import CloudpickleWrapper, clear_mpi_env_vars
from vecspaces.vector.utils.shared_batch import SharedBatch
from vecspaces.vector.utils.shared_layout import SharedLayout
from vecspaces.vector.utils.shared_memory import (
    create_shared_memory,
    read_from_shared_memory,
    write_to_shared_memory,
)

__all__ = [
    "CloudpickleWrapper",
    "SharedBatch",
    "SharedLayout",
    "batch_differing_spaces",
    "batch_space",
    "clear_mpi_env_vars",
    "concatenate",
    "create_empty_array",
    "create_shared_memory",
    "iterate",
    "layout_nodes",
    "read_from_shared_memory",
    "write_to_shared_memory",
]
