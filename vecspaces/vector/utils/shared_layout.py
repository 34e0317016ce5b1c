"""Compiling a shared-memory layout once per (space, n): :class:`SharedLayout`.

A space's values are described by the nodes of :func:`layout_nodes` (see ``vecspaces._ops.memory_nodes``).
Compiling them once gives everything the per-step path needs, so a write is one array copy per slot, with no
recursion and no dispatch:

- **Slots.** Every fixed-size leaf owns one or two *slots*: an Array leaf one (its dtype and shape), a Text
  leaf one (int32 character indices), a OneOf leaf two (an int64 index and a byte region sized for its largest
  branch). The buffer is leaf-major::

      | slot 0: env 0 .. env n-1 | pad | slot 1: env 0 .. env n-1 | pad | ...

  and every slot starts on a 64-byte boundary, so a slot's whole-batch view is an ordinary C-contiguous
  ``(n, *shape)`` array and one env's value is a contiguous row of it.
- **Write program.** The nodes in pre-order, each with the index of its parent, its key and its encoder
  (``vecspaces.vector.utils.slot_encoders``, which also says what a write checks). A write walks it once:
  fetch ``parent_value[key]``, check containers (a dict with exactly the space's keys, a tuple of the right
  length), convert leaves. Only when the whole value has passed does it copy, one item assignment (numpy's
  copy with unsafe casting, as ``np.copyto(..., casting="unsafe")``) per slot into views made at bind time. A
  failed write therefore leaves every slot untouched, the env's own too.
- **Variable-size leaves** (Sequence, Graph) are not stored; they are listed in
  :attr:`SharedLayout.variable_leaves`, and a write returns their values, so a worker pool can send just those
  through its pipe. With ``custom_as_variable=True`` a custom space with no registered layout is such a leaf
  too, wherever it sits, instead of an error: that is how a worker pool follows the custom-space rule
  (stated in ``vecspaces._ops.support``).

Binding a layout to a buffer (:meth:`SharedLayout.bind`, :meth:`SharedLayout.allocate`) gives the
:class:`~vecspaces.vector.utils.shared_batch.SharedBatch` that reads and writes it.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import multiprocessing.heap
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

import numpy as np
import numpy.typing as npt
import psutil

from vecspaces._ops.arguments import check_batch_size
from vecspaces._ops.memory_nodes import (
    ArrayLeaf,
    DictNode,
    LayoutNode,
    OneOfLeaf,
    Path,
    TextLeaf,
    TupleNode,
    VariableLeaf,
    format_path,
    layout_nodes,
)
from vecspaces.error import CustomSpaceError, InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces import Dict, Tuple
from vecspaces.spaces.space import Space
from vecspaces.vector._machine import cgroup_memory_limit
from vecspaces.vector.utils.shared_batch import BatchLayout, FixedLeaf, SharedBatch, Slot
from vecspaces.vector.utils.slot_encoders import (
    Arrays,
    Encoder,
    array_encoder,
    dict_checker,
    no_slots,
    oneof_encoder,
    text_encoder,
    tuple_checker,
)

__all__ = ["SLOT_ALIGNMENT", "SharedLayout", "is_single_array", "layout_nodes_or_variable"]

# Slots start on a cache-line boundary; regions inside a OneOf only need numpy's largest alignment.
SLOT_ALIGNMENT = 64
BRANCH_ALIGNMENT = 16


def _round_up(size: int, alignment: int) -> int:
    return -(-size // alignment) * alignment


def layout_nodes_or_variable(space: Space[Any], path: Path = ()) -> list[LayoutNode]:
    """:func:`layout_nodes`, with every custom space that has no registered layout as a :class:`VariableLeaf`.

    Only the custom spaces themselves become variable: the Dicts and Tuples around them keep their nodes, so
    every fixed-size leaf beside them keeps its slot. A composite that needs a fixed layout for its children
    (a OneOf) becomes one variable leaf as a whole, as it does with a Sequence branch.

    Args:
        space: the space of one value.
        path: the path of the value inside the root value.

    Returns:
        The nodes in pre-order.

    Example:
        >>> from vecspaces.spaces import Box, Space
        >>> class Bag(Space):
        ...     pass
        >>> [type(node).__name__ for node in layout_nodes_or_variable(Dict(bag=Bag(), pos=Box(0, 1, (2,))))]
        ['DictNode', 'VariableLeaf', 'ArrayLeaf']
    """
    try:
        return layout_nodes(space, path)
    except CustomSpaceError:
        pass  # somewhere inside there is a custom space; this only runs once per layout, so finding it is cheap
    # Walk into Dicts and Tuples laid out by the built-in kernels, so only the custom leaves go variable.
    kernel = layout_nodes.dispatch(type(space))
    nodes: list[LayoutNode]
    if isinstance(space, Dict) and kernel is layout_nodes.dispatch(Dict):
        nodes = [DictNode(path, tuple(space.spaces))]
        for key, child in space.spaces.items():
            nodes += layout_nodes_or_variable(child, (*path, key))
        return nodes
    if isinstance(space, Tuple) and kernel is layout_nodes.dispatch(Tuple):
        nodes = [TupleNode(path, len(space.spaces))]
        for position, child in enumerate(space.spaces):
            nodes += layout_nodes_or_variable(child, (*path, position))
        return nodes
    return [VariableLeaf(path, space)]


class _SlotAllocator:
    """Hands out the slots of a layout in buffer order, each starting on an ``alignment`` boundary."""

    def __init__(self, n: int, alignment: int) -> None:
        self.n = n
        self.alignment = alignment
        self.slots: list[Slot] = []
        self.end = 0

    def add(self, path: Path, dtype: np.dtype[Any], shape: tuple[int, ...]) -> None:
        offset = _round_up(self.end, self.alignment)
        nbytes = dtype.itemsize * int(np.prod(shape, dtype=np.int64))
        self.slots.append(Slot(path, dtype, shape, offset, nbytes))
        self.end = offset + self.n * nbytes


class SharedLayout:
    """Where each part of a batch of ``n`` values of ``space`` lives in one flat buffer, computed once.

    Args:
        space: the space of one value.
        n: the number of values in the batch.
        custom_as_variable: lay out a custom space that has no registered layout as a variable-size leaf
            (see :func:`layout_nodes_or_variable`), as a worker pool does to send its values through its
            pipe, instead of raising :class:`~vecspaces.error.CustomSpaceError`.

    Attributes:
        space: the space of one value.
        n: the batch size.
        custom_as_variable: whether custom spaces without a layout are variable-size leaves.
        nodes: the space's layout nodes in pre-order (see :func:`layout_nodes`).
        slots: the fixed-size slots in buffer order, each with its path, dtype, per-env shape and offset
            (:class:`~vecspaces.vector.utils.shared_batch.Slot`).
        variable_leaves: the leaves with no fixed size, which the buffer does not hold.
        nbytes: the size of the buffer region the layout needs.
        fixed_leaves: the fixed-size leaves in pre-order, each with its slots (what a batch reads).
        variable_nodes: the positions in ``nodes`` of the variable-size leaves.
        prepare: checks a whole value and returns the contents of every slot and the value at every node;
            raises :class:`~vecspaces.vector.utils.slot_encoders.ValueProblem`.
        assemble: puts one entry per leaf (in pre-order) back into the structure of the space.

    Raises:
        CustomSpaceError: the space (or a space inside it) has no registered layout, and
            ``custom_as_variable`` is False.

    Example:
        >>> from vecspaces.spaces import Box, Dict, Discrete
        >>> layout = SharedLayout(Dict(gear=Discrete(3), pos=Box(0, 1, (2,))), n=4)
        >>> for slot in layout.slots:
        ...     print(slot.path, slot.dtype, slot.shape, slot.offset)
        ('gear',) int64 () 0
        ('pos',) float32 (2,) 64
        >>> batch = layout.bind(np.zeros(layout.nbytes, dtype=np.uint8))
        >>> batch.write(2, {"gear": 1, "pos": np.array([0.5, 0.25], np.float32)})
        ()
        >>> batch.read()["gear"]
        array([0, 0, 1, 0])
    """

    def __init__(self, space: Space[Any], n: int = 1, custom_as_variable: bool = False) -> None:
        self.space: Space[Any] | None = space
        self.n = check_batch_size("SharedLayout", n)
        self.custom_as_variable = bool(custom_as_variable)
        self._build(tuple(self.nodes_of(space)), SLOT_ALIGNMENT)

    @classmethod
    def _from_nodes(cls, nodes: tuple[LayoutNode, ...], alignment: int) -> SharedLayout:
        """Compile a one-value layout without a space: a OneOf branch, rooted inside its parent value."""
        layout = cls.__new__(cls)
        layout.space = None
        layout.n = 1
        layout.custom_as_variable = False
        layout._build(nodes, alignment)
        return layout

    def nodes_of(self, space: Space[Any]) -> list[LayoutNode]:
        """The layout nodes of ``space`` as this layout computes them (custom spaces as it treats them)."""
        return layout_nodes_or_variable(space) if self.custom_as_variable else layout_nodes(space, ())

    def _build(self, nodes: tuple[LayoutNode, ...], alignment: int) -> None:
        allocator = _SlotAllocator(self.n, alignment)
        compiled = [_compile_node(node, allocator) for node in nodes]
        encoders = [encoder for encoder, _ in compiled]
        self.nodes = nodes
        self.slots: tuple[Slot, ...] = tuple(allocator.slots)
        self.nbytes: int = _round_up(allocator.end, alignment)
        self.variable_leaves: tuple[VariableLeaf, ...] = tuple(node for node in nodes if isinstance(node, VariableLeaf))
        # What a SharedBatch binds: the fixed-size leaves with their slots, and which nodes are variable.
        self.fixed_leaves: tuple[FixedLeaf, ...] = tuple(leaf for _, leaf in compiled if leaf is not None)
        self.variable_nodes: tuple[int, ...] = tuple(
            index for index, node in enumerate(nodes) if isinstance(node, VariableLeaf)
        )
        position = {node.path: index for index, node in enumerate(nodes)}
        # Step k of the program fetches node k + 1 from its parent's value (the root is the value itself).
        program = tuple(
            (position[node.path[:-1]], node.path[-1], encoders[index]) for index, node in enumerate(nodes) if index > 0
        )
        self.prepare = _make_prepare(encoders[0], program)
        self.assemble = _make_assembler(nodes)

    def _pack(self, value: Any, region: npt.NDArray[np.uint8]) -> None:
        """Check one value and copy it into ``region`` (one-value layouts: OneOf branches)."""
        for slot, array in zip(self.slots, self.prepare(value)[0], strict=True):
            target = region[slot.offset : slot.offset + slot.nbytes].view(slot.dtype).reshape(slot.shape)
            target[...] = array

    def bind(self, buffer: Any, offset: int = 0, name: str = "value") -> SharedBatch:
        """Make the views of this layout over ``buffer``.

        Args:
            buffer: any writable object with the buffer protocol (a ``multiprocessing`` array, a numpy
                array...), of at least ``offset + nbytes`` bytes.
            offset: where the layout starts in ``buffer``, in bytes.
            name: what error messages call the value, e.g. ``"obs"`` gives paths like ``obs['camera']``.

        Returns:
            The bound batch.

        Example:
            >>> from vecspaces.spaces import Box
            >>> layout = SharedLayout(Box(0, 1, (2,)), n=3)
            >>> layout.bind(bytearray(layout.nbytes)).read().shape
            (3, 2)
        """
        return SharedBatch(self, buffer, offset, name)

    def allocate(self, ctx: Any = multiprocessing, name: str = "value") -> SharedBatch:
        """Allocate zeroed shared memory for this layout with ``ctx.Array`` (no lock) and bind it.

        Args:
            ctx: ``multiprocessing`` or a context from ``multiprocessing.get_context``.
            name: what error messages call the value.

        Returns:
            The bound batch; pass it to a ``Process`` to share it (fork, forkserver and spawn).

        Example:
            >>> from vecspaces.spaces import Discrete
            >>> SharedLayout(Discrete(3), n=2).allocate().read()
            array([0, 0])
        """
        array_factory = getattr(ctx, "Array", None)
        if not callable(array_factory):
            raise InvalidTypeError(
                message(
                    "shared-memory context has no Array factory",
                    expected="the multiprocessing module or a multiprocessing context",
                    got=show(ctx),
                )
            )
        # Room to move the start to a slot boundary: the allocator only promises 8-byte alignment.
        nbytes = self.nbytes + SLOT_ALIGNMENT
        check_room(nbytes, name)
        buffer = array_factory(ctypes.c_uint8, nbytes, lock=False)
        padding = -ctypes.addressof(buffer) % SLOT_ALIGNMENT
        return SharedBatch(self, buffer, padding, name)

    def __reduce__(self) -> tuple[Any, ...]:
        if self.space is None:
            raise InvalidTypeError(
                message("a OneOf branch layout cannot be pickled", expected="a top-level layout", got="a branch")
            )
        return (SharedLayout, (self.space, self.n, self.custom_as_variable))

    def __repr__(self) -> str:
        return (
            f"SharedLayout({self.space!r}, n={self.n}, slots={len(self.slots)}, nbytes={self.nbytes}, "
            f"variable_leaves={len(self.variable_leaves)})"
        )


def is_single_array(layout: BatchLayout) -> bool:
    """Whether the whole value is one array (a Box, Discrete, MultiBinary or MultiDiscrete space).

    Example:
        >>> from vecspaces.spaces import Box, Dict
        >>> is_single_array(SharedLayout(Box(0, 1, (2,)))), is_single_array(SharedLayout(Dict(a=Box(0, 1))))
        (True, False)
    """
    return len(layout.nodes) == 1 and isinstance(layout.nodes[0], ArrayLeaf)


def _compile_node(node: LayoutNode, slots: _SlotAllocator) -> tuple[Encoder, FixedLeaf | None]:
    """A node's encoder and, for a fixed-size leaf, its slots (added to ``slots``)."""
    first = len(slots.slots)
    if isinstance(node, ArrayLeaf):
        if node.dtype.kind not in "biufc":
            raise InvalidTypeError(
                message(
                    "shared-memory array leaf has a non-numeric dtype",
                    expected="a bool, integer, float or complex dtype",
                    got=str(node.dtype),
                    at=format_path("space", node.path),
                )
            )
        slots.add(node.path, node.dtype, node.shape)
        return array_encoder(node), FixedLeaf(node, first, len(slots.slots))
    if isinstance(node, TextLeaf):
        slots.add(node.path, np.dtype(np.int32), (node.max_length,))
        return text_encoder(node), FixedLeaf(node, first, len(slots.slots))
    if isinstance(node, OneOfLeaf):
        return _compile_oneof(node, slots)
    if isinstance(node, DictNode):
        return dict_checker(node), None
    if isinstance(node, TupleNode):
        return tuple_checker(node), None
    if isinstance(node, VariableLeaf):
        return no_slots, None
    raise InvalidTypeError(
        message(
            "layout_nodes returned something that is not a layout node",
            expected="ArrayLeaf, TextLeaf, OneOfLeaf, VariableLeaf, DictNode or TupleNode",
            got=show(node),
        )
    )


def _compile_oneof(node: OneOfLeaf, slots: _SlotAllocator) -> tuple[Encoder, FixedLeaf]:
    """A OneOf's encoder and slots: its index, and a region sized for its largest branch (each compiled)."""
    first = len(slots.slots)
    branches = tuple(SharedLayout._from_nodes(branch, BRANCH_ALIGNMENT) for branch in node.branches)
    for branch in branches:
        if branch.variable_leaves:
            raise InvalidTypeError(
                message(
                    "OneOf layout has a branch without a fixed size",
                    expected="a VariableLeaf for the whole OneOf",
                    got="a VariableLeaf inside a branch",
                    at=format_path("space", node.path),
                )
            )
    region = _round_up(max(branch.nbytes for branch in branches), BRANCH_ALIGNMENT)
    slots.add((*node.path, 0), np.dtype(np.int64), ())
    slots.add((*node.path, 1), np.dtype(np.uint8), (region,))
    encoder = oneof_encoder(node, tuple(branch._pack for branch in branches), region)
    return encoder, FixedLeaf(node, first, len(slots.slots), branches)


def _make_prepare(
    root: Encoder, program: tuple[tuple[int, Any, Encoder], ...]
) -> Callable[[Any], tuple[Arrays, list[Any]]]:
    """Build the function that checks a whole value and returns (slot contents, value of every node)."""
    if not program:  # the value is one leaf
        return lambda value: (root(value), [value])

    def prepare(value: Any) -> tuple[Arrays, list[Any]]:
        values = [value]
        arrays = list(root(value))
        for parent, key, encode in program:
            item = values[parent][key]
            values.append(item)
            arrays += encode(item)
        return arrays, values

    return prepare


def _make_assembler(nodes: tuple[LayoutNode, ...]) -> Callable[[Sequence[Any]], Any]:
    """Build the function that puts leaf values (in pre-order) back into the space's structure."""
    leaf_count = 0

    def build(index: int) -> tuple[Callable[[Sequence[Any]], Any], int]:
        nonlocal leaf_count
        node = nodes[index]
        index += 1
        if isinstance(node, DictNode):
            first_leaf = leaf_count
            children = []
            for key in node.keys:
                child, index = build(index)
                children.append((key, child))
            if all(isinstance(child, itemgetter) for _, child in children):  # a Dict of leaves: one slice of them
                keys, last_leaf = tuple(node.keys), leaf_count
                return (lambda leaves: dict(zip(keys, leaves[first_leaf:last_leaf], strict=True))), index
            return (lambda leaves: {key: child(leaves) for key, child in children}), index
        if isinstance(node, TupleNode):
            items = []
            for _ in range(node.length):
                child, index = build(index)
                items.append(child)
            return (lambda leaves: tuple([child(leaves) for child in items])), index
        leaf_count += 1
        return itemgetter(leaf_count - 1), index

    assemble, _ = build(0)
    return assemble


def check_room(nbytes: int, name: str) -> None:
    """Raise if ``nbytes`` of shared memory could never be had here, before trying.

    Trying would not fail cleanly: ``multiprocessing`` writes the zeros of a new array into a file in
    ``/dev/shm`` (Linux) until the file is whole, so an impossible size fills memory for minutes, then fails
    deep inside (or, past a container's memory limit, gets the process killed). The bound is the memory the
    process may have (the machine's RAM and swap, or its cgroup's limit and swap) and the room left where the
    file can go: ``/dev/shm``, or the temporary directory where ``multiprocessing`` puts an array ``/dev/shm``
    has no room for (a container's ``/dev/shm`` is 64 MB by default).

    Raises:
        InvalidValueError: naming the size and the bound.
    """
    swap = psutil.swap_memory().total
    room = psutil.virtual_memory().total + swap
    where = "this machine's memory (RAM and swap)"
    limit = cgroup_memory_limit()
    if limit is not None and limit + swap < room:
        room, where = limit + swap, "the memory limit of this process's cgroup (a container's), and swap"
    directories = [d for d in getattr(multiprocessing.heap.Arena, "_dir_candidates", ()) if os.path.isdir(d)]
    if directories:
        directories.append(tempfile.gettempdir())
        free = max(shutil.disk_usage(directory).free for directory in directories)
        if free < room:
            room, where = free, f"the room left in {' or '.join(directories)}"
    if nbytes > room:
        raise InvalidValueError(
            message(
                f"shared memory for {name} is too large",
                expected=f"at most {_size(room)}, {where}",
                got=f"{_size(nbytes)} ({nbytes} bytes)",
                fix="use fewer envs or smaller observations, or shared_memory=False",
            )
        )


def _size(nbytes: int) -> str:
    """``nbytes`` in the largest binary unit that keeps it at least 1, e.g. ``4.0 TiB``."""
    size, unit = float(nbytes), "bytes"
    for larger in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        if size < 1024:
            break
        size, unit = size / 1024, larger
    return f"{size:.1f} {unit}" if unit != "bytes" else f"{nbytes} bytes"
