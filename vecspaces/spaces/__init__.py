"""Gymnasium-compatible spaces: the sets that observations and actions are drawn from.

Every class here behaves as its namesake in ``gymnasium.spaces`` (same constructor arguments, samples, masks,
seeding, JSON form, equality and repr), with the fixes listed in the project README.
``from_gymnasium`` and ``to_gymnasium`` convert spaces between the two libraries.

The operations' implementations (``vecspaces._kernels``) are registered by the package root, ``vecspaces``,
which Python imports before this package. ``__all__`` is also what the package root exports, so a new kind of
space is exported by its import line here and its name in ``__all__``.
"""

from vecspaces._ops.gymnasium import from_gymnasium, to_gymnasium
from vecspaces._space import Space
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
