"""The shared-memory layout (``layout_nodes``) of every built-in space; node kinds: ``vecspaces._ops.layout``.

- Box, Discrete, MultiBinary, MultiDiscrete: one :class:`ArrayLeaf` of the space's dtype and shape
  (a Discrete is one scalar of its dtype).
- Text: one :class:`TextLeaf` over the space's ``character_list``.
- OneOf: one :class:`OneOfLeaf` holding each branch's layout; a OneOf with a branch of variable size is a
  :class:`VariableLeaf` as a whole, since its region would have no fixed size.
- Dict and Tuple: a :class:`DictNode` / :class:`TupleNode`, then each child's nodes in the space's order.
- Sequence and Graph: a :class:`VariableLeaf` (no fixed size).
"""

from __future__ import annotations

from typing import Any

from vecspaces._ops.layout import (
    ArrayLeaf,
    DictNode,
    LayoutNode,
    OneOfLeaf,
    Path,
    TextLeaf,
    TupleNode,
    VariableLeaf,
    layout_nodes,
)
from vecspaces.spaces.box import Box
from vecspaces.spaces.dict import Dict
from vecspaces.spaces.discrete import Discrete
from vecspaces.spaces.graph import Graph
from vecspaces.spaces.multi_binary import MultiBinary
from vecspaces.spaces.multi_discrete import MultiDiscrete
from vecspaces.spaces.oneof import OneOf
from vecspaces.spaces.sequence import Sequence
from vecspaces.spaces.text import Text
from vecspaces.spaces.tuple import Tuple


@layout_nodes.register(Box)
@layout_nodes.register(Discrete)
@layout_nodes.register(MultiBinary)
@layout_nodes.register(MultiDiscrete)
def _layout_array(space: Any, path: Path = ()) -> list[LayoutNode]:
    return [ArrayLeaf(path, space.dtype, space.shape)]


@layout_nodes.register(Text)
def _layout_text(space: Any, path: Path = ()) -> list[LayoutNode]:
    return [TextLeaf(path, tuple(space.character_list), int(space.max_length))]


@layout_nodes.register(Dict)
def _layout_dict(space: Any, path: Path = ()) -> list[LayoutNode]:
    nodes: list[LayoutNode] = [DictNode(path, tuple(space.spaces))]
    for key, child in space.spaces.items():
        nodes += layout_nodes(child, (*path, key))
    return nodes


@layout_nodes.register(Tuple)
def _layout_tuple(space: Any, path: Path = ()) -> list[LayoutNode]:
    nodes: list[LayoutNode] = [TupleNode(path, len(space.spaces))]
    for position, child in enumerate(space.spaces):
        nodes += layout_nodes(child, (*path, position))
    return nodes


@layout_nodes.register(OneOf)
def _layout_oneof(space: Any, path: Path = ()) -> list[LayoutNode]:
    branches = tuple(tuple(layout_nodes(branch, (*path, 1))) for branch in space.spaces)
    if any(isinstance(node, VariableLeaf) for branch in branches for node in branch):
        return [VariableLeaf(path, space)]
    return [OneOfLeaf(path, branches)]


@layout_nodes.register(Sequence)
@layout_nodes.register(Graph)
def _layout_variable(space: Any, path: Path = ()) -> list[LayoutNode]:
    return [VariableLeaf(path, space)]
