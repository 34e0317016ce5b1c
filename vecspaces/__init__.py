"""vecspaces: Gymnasium-compatible spaces, vector utilities and a fast, hang-free worker pool.

``vecspaces.spaces`` and ``vecspaces.vector`` are drop-in replacements for ``gymnasium.spaces`` and
``gymnasium.vector``.
"""

from vecspaces import error, spaces, vector
from vecspaces.env import Env
from vecspaces.spaces import (
    Box,
    Dict,
    Discrete,
    Graph,
    GraphInstance,
    MultiBinary,
    MultiDiscrete,
    OneOf,
    Sequence,
    Space,
    Text,
    Tuple,
)
from vecspaces.vector.make import make_vec

__version__ = "0.1.0"

__all__ = [
    "Box",
    "Dict",
    "Discrete",
    "Env",
    "Graph",
    "GraphInstance",
    "MultiBinary",
    "MultiDiscrete",
    "OneOf",
    "Sequence",
    "Space",
    "Text",
    "Tuple",
    "__version__",
    "error",
    "make_vec",
    "spaces",
    "vector",
]
