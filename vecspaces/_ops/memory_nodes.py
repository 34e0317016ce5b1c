"""Declaration of ``layout_nodes``: how one value of a space is stored in a flat shared-memory buffer.

A space's layout is a list of *nodes* in pre-order (a container comes before its children):

- :class:`ArrayLeaf`: one fixed-size array of ``dtype`` and ``shape`` per env (Box, Discrete with shape
  ``()``, MultiBinary, MultiDiscrete).
- :class:`TextLeaf`: ``max_length`` int32 character indices per env, padded with ``len(characters)``.
- :class:`OneOfLeaf`: an int64 branch index plus *one* byte region per env, sized for the largest branch;
  the chosen branch's own layout is written at the start of the region.
- :class:`VariableLeaf`: nothing; the value has no fixed size (Sequence, Graph, a OneOf with such a branch),
  so a caller must send it another way (a worker pool sends it through its pipe).
- :class:`DictNode` / :class:`TupleNode`: nothing themselves; their children's nodes follow them, each path
  extended by the child's key or position.

Every node carries its *path*: the keys leading to it from the root value, e.g. ``("camera", 2)`` for
``value["camera"][2]``. The value of a OneOf is an ``(index, value)`` pair, so the chosen branch's nodes live
under the path ``oneof_path + (1,)``.

``layout_nodes`` is a ``functools.singledispatch`` function; each built-in space registers its implementation
in its own kernel module, ``vecspaces._kernels.<space>``, next to its other operations. A custom space follows
the custom-space rule (``vecspaces._ops.support``) until it registers a layout: an :class:`ArrayLeaf` layout
for one whose values are fixed-size arrays puts them in shared memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import singledispatch
from typing import Any, Union

import numpy as np

from vecspaces._ops.arguments import not_a_space
from vecspaces._ops.support import CUSTOM, SHARED_MEMORY, reason
from vecspaces._space import Space
from vecspaces.error import CustomSpaceError, message

__all__ = [
    "ArrayLeaf",
    "DictNode",
    "LayoutNode",
    "OneOfLeaf",
    "Path",
    "TextLeaf",
    "TupleNode",
    "VariableLeaf",
    "format_path",
    "layout_nodes",
]

Path = tuple[Any, ...]


def format_path(root: str, path: Path) -> str:
    """Write ``path`` as Python indexing on a value named ``root``.

    Example:
        >>> format_path("obs", ("camera", 2))
        "obs['camera'][2]"
    """
    return root + "".join(f"[{key!r}]" for key in path)


@dataclass(frozen=True)
class ArrayLeaf:
    """A fixed-size numeric array per env.

    Attributes:
        path: where the value sits inside the root value.
        dtype: the dtype stored in the buffer.
        shape: the shape of one env's value (``()`` for a Discrete).
    """

    path: Path
    dtype: np.dtype[Any]
    shape: tuple[int, ...]

    def __post_init__(self) -> None:
        # Accept what a custom registration may naturally pass: np.uint8 for a dtype, a list for a shape.
        object.__setattr__(self, "dtype", np.dtype(self.dtype))
        object.__setattr__(self, "shape", tuple(int(size) for size in self.shape))


@dataclass(frozen=True)
class TextLeaf:
    """A string per env: ``max_length`` int32 indices into ``characters``, padded with ``len(characters)``.

    Attributes:
        path: where the value sits inside the root value.
        characters: the alphabet; a character is stored as its position in this tuple.
        max_length: the longest string that fits.
    """

    path: Path
    characters: tuple[str, ...]
    max_length: int


@dataclass(frozen=True)
class OneOfLeaf:
    """An ``(index, value)`` pair per env: an int64 index and one region that holds the chosen branch's value.

    Attributes:
        path: where the pair sits inside the root value.
        branches: the layout (a tuple of nodes) of each branch, rooted at ``path + (1,)``.
    """

    path: Path
    branches: tuple[tuple[LayoutNode, ...], ...]


@dataclass(frozen=True)
class VariableLeaf:
    """A value without a fixed size; it is not stored in the buffer and must travel another way.

    Attributes:
        path: where the value sits inside the root value.
        space: the space of the value (not compared: two layouts match when their paths do).
    """

    path: Path
    space: Space[Any] = field(compare=False)


@dataclass(frozen=True)
class DictNode:
    """A dict whose children's nodes follow this one.

    Attributes:
        path: where the dict sits inside the root value.
        keys: the keys, in the space's order.
    """

    path: Path
    keys: tuple[Any, ...]


@dataclass(frozen=True)
class TupleNode:
    """A tuple whose children's nodes follow this one.

    Attributes:
        path: where the tuple sits inside the root value.
        length: the number of elements.
    """

    path: Path
    length: int


LayoutNode = Union[ArrayLeaf, TextLeaf, OneOfLeaf, VariableLeaf, DictNode, TupleNode]  # noqa: UP007 (runtime alias, Python 3.10)


@singledispatch
def layout_nodes(space: Space[Any], path: Path = ()) -> list[LayoutNode]:
    """Return the shared-memory layout of one value of ``space``: its nodes in pre-order.

    Args:
        space: the space of one value.
        path: the path of the value inside the root value, prepended to every node's path.

    Returns:
        The nodes; see the module docstring for what each kind of node stores.

    Raises:
        CustomSpaceError: no layout is registered for the space's type (or the type of a space inside it).
        InvalidTypeError: ``space`` is not a space.

    Example:
        >>> from vecspaces.spaces import Box, Dict, Discrete
        >>> for node in layout_nodes(Dict(gear=Discrete(3), pos=Box(0, 1, (2,)))):
        ...     print(node)
        DictNode(path=(), keys=('gear', 'pos'))
        ArrayLeaf(path=('gear',), dtype=dtype('int64'), shape=())
        ArrayLeaf(path=('pos',), dtype=dtype('float32'), shape=(2,))
    """
    if not isinstance(space, Space):
        raise not_a_space("layout_nodes", space)
    kind = f"{type(space).__module__}.{type(space).__qualname__}"
    raise CustomSpaceError(
        message(
            f"shared-memory layout has no implementation for this kind of space ({reason(SHARED_MEMORY, CUSTOM)})",
            expected="a space with a registered layout",
            got=f"{space!r} of type {kind}",
            at=format_path("space", path),
            fix=f"register one with @layout_nodes.register({type(space).__name__}) "
            "(vecspaces.vector.utils.layout_nodes)",
        )
    )
