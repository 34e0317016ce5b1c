"""Implementations of the operations, one module per space kind.

A module is that space's row of the operation x space table (flatten family, batching family, shared-memory
layout).

Importing this package registers them all; ``vecspaces.spaces`` does so on import.
"""

from vecspaces._kernels import (  # noqa: F401
    box,
    container,
    discrete,
    graph,
    multi_binary,
    multi_discrete,
    oneof,
    sequence,
    text,
)
