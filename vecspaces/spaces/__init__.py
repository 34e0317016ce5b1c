"""Gymnasium-compatible spaces: the sets that observations and actions are drawn from.

Every class here behaves as its namesake in ``gymnasium.spaces`` (same constructor arguments, samples, masks,
seeding, JSON form, equality and repr), with the fixes listed in the project README.
``from_gymnasium`` and ``to_gymnasium`` convert spaces between the two libraries.
"""

from vecspaces.spaces.space import Space  # isort: skip
from vecspaces.spaces.box import Box
from vecspaces.spaces.dict import Dict
from vecspaces.spaces.discrete import Discrete
from vecspaces.spaces.graph import Graph, GraphInstance
from vecspaces.spaces.multi_binary import MultiBinary
from vecspaces.spaces.multi_discrete import MultiDiscrete
from vecspaces.spaces.oneof import OneOf
from vecspaces.spaces.sequence import Sequence
from vecspaces.spaces.text import Text
from vecspaces.spaces.tuple import Tuple
from vecspaces.spaces.utils import flatdim, flatten, flatten_space, unflatten

from vecspaces.spaces._gymnasium import from_gymnasium, to_gymnasium  # isort: skip

import vecspaces._kernels  # noqa: F401  (registers every space's implementations of the operations)

__all__ = [
    "Box",
    "Dict",
    "Discrete",
    "Graph",
    "GraphInstance",
    "MultiBinary",
    "MultiDiscrete",
    "OneOf",
    "Sequence",
    "Space",
    "Text",
    "Tuple",
    "flatdim",
    "flatten",
    "flatten_space",
    "from_gymnasium",
    "to_gymnasium",
    "unflatten",
]
