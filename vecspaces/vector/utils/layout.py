"""A shared-memory layout compiled once per (space, n), :class:`SharedLayout`, bound as :class:`SharedBatch`.

A space's values are described by the nodes of :func:`layout_nodes` (see ``vecspaces._ops.memory_nodes``). Compiling
them once gives everything the per-step path needs, so a write is one array copy per slot, with no recursion
and no dispatch:

- **Slots.** Every fixed-size leaf owns one or two *slots*: an Array leaf one (its dtype and shape), a Text
  leaf one (int32 character indices), a OneOf leaf two (an int64 index and a byte region sized for its largest
  branch). The buffer is leaf-major::

      | slot 0: env 0 .. env n-1 | pad | slot 1: env 0 .. env n-1 | pad | ...

  and every slot starts on a 64-byte boundary, so a slot's whole-batch view is an ordinary C-contiguous
  ``(n, *shape)`` array and one env's value is a contiguous row of it.
- **Write program.** The nodes in pre-order, each with the index of its parent and its key. A write walks it
  once: fetch ``parent_value[key]``, check containers (a dict with exactly the space's keys, a tuple of the
  right length), convert leaves. Only when the whole value has passed does it copy, one item assignment
  (numpy's copy with unsafe casting, as ``np.copyto(..., casting="unsafe")``) per slot into views made at
  bind time. A failed write therefore leaves every slot untouched, the env's own too.
- **Reads.** Array leaves read as the zero-copy batch views made at bind time. Text and OneOf leaves are
  decoded from the buffer at every read, so a read always reflects what the buffer holds now (Gymnasium
  decodes them once in its async pool and then returns stale values).
- **Variable-size leaves** (Sequence, Graph) are not stored; they are listed in
  :attr:`SharedLayout.variable_leaves`, :meth:`SharedBatch.write` returns their values and
  :meth:`SharedBatch.read` takes them back, so a worker pool can send just those through its pipe. With
  ``custom_as_variable=True`` (what a worker pool asks for) a custom space with no registered layout is such a
  leaf too, wherever it sits, instead of an error: its values are opaque objects, and a pipe carries any
  object that pickles.

What a write checks is the *layout*, not membership of the space: shapes must match exactly, numbers are
cast to the slot's dtype with numpy's unsafe casting (as Gymnasium's ``np.asarray(value, dtype)``), strings
must fit and use the space's characters, dicts must have exactly the space's keys and tuples its length.
A NaN or an infinity for an integer slot is refused (:class:`~vecspaces.error.InvalidValueError`): it has no
integer value, and numpy would store an arbitrary one. Casts numpy may warn about (a float out of an integer
dtype's range, an overflow into float16) are done while checking, so even where warnings are errors (as under
this project's pytest settings) a write is all or nothing.
Bounds (``Box.low``, ``Discrete.n``, ``Text.min_length``) are not checked: that is ``space.contains``, too
slow for every step of a large observation.

A buffer that was never written holds zeros: arrays of zeros, Text as ``character_list[0] * max_length``
(as in Gymnasium), OneOf as branch 0 holding zeros. For Text this is not ``create_empty_array``'s placeholder
(the first character of the *sorted* charset, ``min_length`` times), again as in Gymnasium; the reason both
are kept is in ``vecspaces._kernels.text``.
"""

from __future__ import annotations

import ctypes
import multiprocessing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing.context import get_spawning_popen
from operator import itemgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces._ops.batch import check_batch_size
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
from vecspaces.error import CustomSpaceError, Error, InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces import Dict, Tuple
from vecspaces.spaces.space import Space

__all__ = [
    "ArrayLeaf",
    "DictNode",
    "LayoutNode",
    "OneOfLeaf",
    "SharedBatch",
    "SharedLayout",
    "Slot",
    "TextLeaf",
    "TupleNode",
    "VariableLeaf",
    "layout_nodes",
    "layout_nodes_or_variable",
]

# Slots start on a cache-line boundary; regions inside a OneOf only need numpy's largest alignment.
SLOT_ALIGNMENT = 64
BRANCH_ALIGNMENT = 16

Arrays = Sequence[Any]  # what a leaf's encoder gives: one array (or number) per slot of the leaf
Encoder = Callable[[Any], Arrays]


def _round_up(size: int, alignment: int) -> int:
    return -(-size // alignment) * alignment


@dataclass(frozen=True)
class Slot:
    """One contiguous region of the buffer holding one leaf part for all envs.

    Attributes:
        path: the path of the value stored here (a OneOf's index is at ``path + (0,)``, its region at
            ``path + (1,)``).
        dtype: the dtype of the stored values.
        shape: the shape of one env's value.
        offset: the byte offset of env 0's value from the start of the layout.
        nbytes: the bytes taken by one env's value; env ``i`` starts at ``offset + i * nbytes``.
    """

    path: Path
    dtype: np.dtype[Any]
    shape: tuple[int, ...]
    offset: int
    nbytes: int


class _ValueProblem(Exception):
    """A value does not fit the layout; the caller turns it into a public error that names the env."""

    def __init__(self, error_type: type[Error], problem: str, expected: str, got: str, path: Path) -> None:
        super().__init__(problem)
        self.error_type = error_type
        self.problem = problem
        self.expected = expected
        self.got = got
        self.path = path

    def public(self, subject: str, root: str) -> Error:
        return self.error_type(
            message(
                f"{subject} {self.problem}",
                expected=self.expected,
                got=self.got,
                at=format_path(root, self.path),
            )
        )


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


# ---------------------------------------------------------------------------------------------------------
# Encoders: one per node, made once. Each checks one value and returns what to copy into the node's slots.


def _no_slots(value: Any) -> Arrays:
    return ()


def _array_encoder(leaf: ArrayLeaf) -> Encoder:
    shape, path, dtype = leaf.shape, leaf.path, leaf.dtype
    # Unsafe casting between numbers, as Gymnasium's np.asarray(value, dtype); complex only into complex.
    kinds = "biufc" if dtype.kind == "c" else "biuf"
    integer_slot = dtype.kind in "iu"
    expected = f"an array of shape {shape} and a numeric dtype (stored as {dtype})"
    # Per source dtype: whether numpy may warn while casting it to the slot's dtype (filled on first use).
    may_warn: dict[np.dtype[Any], bool] = {}
    ndarray = np.ndarray

    def convert(value: Any) -> npt.NDArray[Any]:
        try:
            array = np.asarray(value)
        except (TypeError, ValueError) as error:  # ragged nested lists
            raise _ValueProblem(InvalidValueError, "is not an array", expected, show(value), path) from error
        source = array.dtype
        if source.kind not in kinds:
            raise _ValueProblem(InvalidTypeError, "has the wrong dtype", expected, show(value), path)
        if array.shape != shape:
            raise _ValueProblem(InvalidValueError, "has the wrong shape", expected, show(array), path)
        if source == dtype:
            return array
        warns = may_warn.get(source)
        if warns is None:
            # Unsafe casts from or to floats may warn (NaN or out of range into an integer, overflow into
            # float16); integer to integer casts wrap silently.
            unsafe = not np.can_cast(source, dtype, "safe")
            warns = may_warn[source] = unsafe and (source.kind in "fc" or dtype.kind in "fc")
        if not warns:
            return array  # cast by the copy, which cannot warn
        if integer_slot and source.kind == "f" and not np.isfinite(array).all():
            raise _ValueProblem(
                InvalidValueError,
                "has a NaN or an infinity, which an integer slot cannot hold",
                f"finite numbers (stored as {dtype})",
                show(array),
                path,
            )
        # Cast here, in the check phase, so that a warning numpy gives (an error where warnings are errors)
        # comes before any slot is written, and the copy itself cannot warn.
        return array.astype(dtype)

    def encode(value: Any) -> Arrays:
        if type(value) is ndarray and value.dtype is dtype and value.shape == shape:
            return (value,)
        return (convert(value),)

    return encode


def _text_encoder(leaf: TextLeaf) -> Encoder:
    path, max_length, padding = leaf.path, leaf.max_length, len(leaf.characters)
    codes = {char: code for code, char in enumerate(leaf.characters)}
    alphabet = "".join(leaf.characters)
    expected = f"a str of at most {max_length} characters from {alphabet!r}"

    def encode(value: Any) -> Arrays:
        if not isinstance(value, str):
            raise _ValueProblem(InvalidTypeError, "is not a string", expected, show(value), path)
        if len(value) > max_length:
            raise _ValueProblem(
                InvalidValueError, "is too long", expected, f"{len(value)} characters: {show(value)}", path
            )
        encoded = np.full(max_length, padding, dtype=np.int32)
        try:
            encoded[: len(value)] = [codes[char] for char in value]
        except KeyError as error:
            raise _ValueProblem(
                InvalidValueError,
                f"has a character outside the charset ({error.args[0]!r})",
                expected,
                show(value),
                path,
            ) from None
        return (encoded,)

    return encode


def _dict_checker(node: DictNode) -> Encoder:
    keys, path = node.keys, node.path
    key_set = frozenset(keys)
    expected = f"a dict with the keys {list(keys)}"

    def check(value: Any) -> Arrays:
        if not isinstance(value, Mapping):
            raise _ValueProblem(InvalidTypeError, "is not a dict", expected, show(value), path)
        if value.keys() != key_set:
            missing = [key for key in keys if key not in value]
            extra = [key for key in value if key not in key_set]
            problem = "has missing keys" if missing else "has unexpected keys"
            got = f"keys {list(value)}" + (f", missing {missing}" if missing else "")
            got += f", unexpected {extra}" if extra else ""
            raise _ValueProblem(InvalidValueError, problem, expected, got, path)
        return ()

    return check


def _tuple_checker(node: TupleNode) -> Encoder:
    length, path = node.length, node.path
    expected = f"a tuple of {length} elements"

    def check(value: Any) -> Arrays:
        if not isinstance(value, (tuple, list)):
            raise _ValueProblem(InvalidTypeError, "is not a tuple", expected, show(value), path)
        if len(value) != length:
            raise _ValueProblem(InvalidValueError, "has the wrong length", expected, f"{len(value)} elements", path)
        return ()

    return check


def _oneof_encoder(leaf: OneOfLeaf, branches: tuple[SharedLayout, ...], region_size: int) -> Encoder:
    path, count = leaf.path, len(branches)
    expected = f"a pair (index, value) with 0 <= index < {count}"

    def encode(value: Any) -> Arrays:
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise _ValueProblem(InvalidTypeError, "is not an (index, value) pair", expected, show(value), path)
        index, inner = value
        if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)):
            raise _ValueProblem(InvalidTypeError, "index is not an int", expected, show(index), (*path, 0))
        if not 0 <= index < count:
            raise _ValueProblem(InvalidValueError, "index is out of range", expected, show(index), (*path, 0))
        branch = branches[index]
        # The branch is packed into a private region first, so a bad branch value writes nothing shared.
        region = np.zeros(region_size, dtype=np.uint8)
        branch._pack(region, branch._prepare(inner)[0])
        return (np.int64(index), region)

    return encode


# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _FixedLeaf:
    """A compiled fixed-size leaf: its node, its slots ``[first, stop)`` and, for a OneOf, its branches."""

    node: ArrayLeaf | TextLeaf | OneOfLeaf
    first: int
    stop: int
    branches: tuple[SharedLayout, ...] = ()


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
        slots: the fixed-size slots in buffer order, each with its path, dtype, per-env shape and offset.
        variable_leaves: the leaves with no fixed size, which the buffer does not hold.
        nbytes: the size of the buffer region the layout needs.

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
        self.nodes = nodes
        slots: list[Slot] = []
        fixed: list[_FixedLeaf] = []
        encoders: list[Encoder] = []
        variable_nodes: list[int] = []
        offset = 0

        def add_slot(path: Path, dtype: np.dtype[Any], shape: tuple[int, ...]) -> None:
            nonlocal offset
            offset = _round_up(offset, alignment)
            nbytes = dtype.itemsize * int(np.prod(shape, dtype=np.int64))
            slots.append(Slot(path, dtype, shape, offset, nbytes))
            offset += self.n * nbytes

        for index, node in enumerate(nodes):
            first = len(slots)
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
                add_slot(node.path, node.dtype, node.shape)
                fixed.append(_FixedLeaf(node, first, len(slots)))
                encoders.append(_array_encoder(node))
            elif isinstance(node, TextLeaf):
                add_slot(node.path, np.dtype(np.int32), (node.max_length,))
                fixed.append(_FixedLeaf(node, first, len(slots)))
                encoders.append(_text_encoder(node))
            elif isinstance(node, OneOfLeaf):
                branches = tuple(self._from_nodes(branch, BRANCH_ALIGNMENT) for branch in node.branches)
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
                add_slot((*node.path, 0), np.dtype(np.int64), ())
                add_slot((*node.path, 1), np.dtype(np.uint8), (region,))
                fixed.append(_FixedLeaf(node, first, len(slots), branches))
                encoders.append(_oneof_encoder(node, branches, region))
            elif isinstance(node, DictNode):
                encoders.append(_dict_checker(node))
            elif isinstance(node, TupleNode):
                encoders.append(_tuple_checker(node))
            elif isinstance(node, VariableLeaf):
                variable_nodes.append(index)
                encoders.append(_no_slots)
            else:
                raise InvalidTypeError(
                    message(
                        "layout_nodes returned something that is not a layout node",
                        expected="ArrayLeaf, TextLeaf, OneOfLeaf, VariableLeaf, DictNode or TupleNode",
                        got=show(node),
                    )
                )

        self.slots: tuple[Slot, ...] = tuple(slots)
        self.nbytes: int = _round_up(offset, alignment)
        self.variable_leaves: tuple[VariableLeaf, ...] = tuple(node for node in nodes if isinstance(node, VariableLeaf))
        self._fixed = tuple(fixed)
        self._variable_nodes = tuple(variable_nodes)
        position = {node.path: index for index, node in enumerate(nodes)}
        # Step k of the program fetches node k + 1 from its parent's value (the root is the value itself).
        program = tuple(
            (position[node.path[:-1]], node.path[-1], encoders[index]) for index, node in enumerate(nodes) if index > 0
        )
        self._prepare = _make_prepare(encoders[0], program)
        self._assemble = _make_assembler(nodes)

    def _pack(self, region: npt.NDArray[np.uint8], arrays: Arrays) -> None:
        """Copy one value's prepared slot contents into ``region`` (one-value layouts: OneOf branches)."""
        for slot, array in zip(self.slots, arrays, strict=True):
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
        buffer = array_factory(ctypes.c_uint8, self.nbytes + SLOT_ALIGNMENT, lock=False)
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


def _make_assembler(nodes: tuple[LayoutNode, ...]) -> Callable[[list[Any]], Any]:
    """Build the function that puts leaf values (in pre-order) back into the space's structure."""
    leaf_count = 0

    def build(index: int) -> tuple[Callable[[list[Any]], Any], int]:
        nonlocal leaf_count
        node = nodes[index]
        index += 1
        if isinstance(node, DictNode):
            children = []
            for key in node.keys:
                child, index = build(index)
                children.append((key, child))
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


class SharedBatch:
    """A batch of ``n`` values of a space stored in one buffer, with its views made once.

    This is what :func:`~vecspaces.vector.utils.create_shared_memory` returns. It can be passed to a child
    ``Process`` under every start method: it pickles as its space, batch size and shared buffer, and the
    child compiles the layout again once. (Like every ``multiprocessing`` shared array it can only be
    pickled while a process is being started, not sent through a pipe.)

    Args:
        layout: the compiled layout.
        buffer: a writable buffer of at least ``offset + layout.nbytes`` bytes.
        offset: where the layout starts in ``buffer``.
        name: what error messages call the value.

    Attributes:
        layout: the compiled layout.
        buffer: the underlying buffer.
        batch_views: one ``(n, *shape)`` array per slot of the layout, in slot order.
        env_views: ``env_views[i]`` holds env ``i``'s view of every slot.

    Example:
        >>> from vecspaces.spaces import Text
        >>> batch = SharedLayout(Text(5, charset="abc"), n=2).allocate()
        >>> _ = batch.write(1, "cab")
        >>> batch.read()
        ('aaaaa', 'cab')
    """

    def __init__(self, layout: SharedLayout, buffer: Any, offset: int = 0, name: str = "value") -> None:
        self.layout = layout
        self.buffer = buffer
        self.offset = offset
        self.name = name
        self.n = n = layout.n
        raw = np.frombuffer(buffer, dtype=np.uint8)
        if raw.size < offset + layout.nbytes:
            raise InvalidValueError(
                message(
                    "shared-memory buffer is too small for its layout",
                    expected=f"at least {offset + layout.nbytes} bytes",
                    got=f"{raw.size} bytes",
                )
            )
        self.batch_views: tuple[npt.NDArray[Any], ...] = tuple(
            raw[offset + slot.offset : offset + slot.offset + n * slot.nbytes]
            .view(slot.dtype)
            .reshape((n, *slot.shape))
            for slot in layout.slots
        )
        # view[i, ...] keeps 0-d entries (a Discrete's value) as views rather than copied scalars.
        self.env_views: tuple[tuple[npt.NDArray[Any], ...], ...] = tuple(
            tuple(view[i, ...] for view in self.batch_views) for i in range(n)
        )
        self._accepted_space = layout.space
        self._prepare = layout._prepare
        self._variable_nodes = layout._variable_nodes
        self._bind_readers()

    def _bind_readers(self) -> None:
        """Prepare the read: array leaves are their batch views; Text and OneOf get decoders run per read."""
        template: list[Any] = []  # one entry per leaf, in pre-order
        array_leaves: list[tuple[int, int]] = []
        fresh: list[tuple[int, Callable[[], Any]]] = []
        variable_positions: list[int] = []
        self._env_readers: list[Callable[[int], Any]] = []
        fixed = iter(self.layout._fixed)
        for node in self.layout.nodes:
            if isinstance(node, (DictNode, TupleNode)):
                continue
            position = len(template)
            template.append(None)
            if isinstance(node, VariableLeaf):
                variable_positions.append(position)
                self._env_readers.append(lambda i: None)
                continue
            leaf = next(fixed)
            views = self.batch_views[leaf.first : leaf.stop]
            if isinstance(leaf.node, ArrayLeaf):
                template[position] = views[0]
                array_leaves.append((position, leaf.first))
                # Rows of 0-d leaves come out as numpy scalars, as Gymnasium's iterate gives them.
                self._env_readers.append(views[0].__getitem__)
                continue
            read_env: Callable[[int], Any]
            if isinstance(leaf.node, TextLeaf):
                read_env = _text_env_reader(leaf.node, views[0])
            else:
                read_env = _oneof_env_reader(leaf.node, leaf.branches, views[0], views[1])
            fresh.append((position, _all_envs(read_env, self.n)))
            self._env_readers.append(read_env)
        self._template = tuple(template)
        # (position among the leaves, slot index) of every array leaf, for callers of read_leaves.
        self.array_leaves: tuple[tuple[int, int], ...] = tuple(array_leaves)
        self._fresh = tuple(fresh)
        self._variable_positions = tuple(variable_positions)

    def write(self, index: int, value: Any) -> tuple[Any, ...]:
        """Write one env's value into its slots, after checking the whole value.

        Args:
            index: the env's position in the batch, ``0 <= index < n``.
            value: a value of the layout's space.

        Returns:
            The values of the variable-size leaves (in ``layout.variable_leaves`` order), which the buffer
            does not hold: the caller must send them another way. ``()`` when there are none.

        Raises:
            InvalidTypeError: ``index`` is not an int, or a part of ``value`` has the wrong type.
            InvalidValueError: ``index`` is out of range, or a part of ``value`` has the wrong shape,
                length or keys. Nothing is written then.

        Example:
            >>> from vecspaces.spaces import Box
            >>> batch = SharedLayout(Box(0, 9, (2,), dtype=np.uint8), n=2).allocate(name="obs")
            >>> batch.write(0, np.array([3, 4], np.uint8))
            ()
            >>> batch.write(1, np.zeros(3))  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            vecspaces.error.InvalidValueError: obs for env 1 has the wrong shape, expected an array of ...
        """
        if type(index) is not int or not 0 <= index < self.n:
            index = self._check_index(index)
        try:
            arrays, values = self._prepare(value)
        except _ValueProblem as problem:
            raise problem.public(f"{self.name} for env {index}", self.name) from problem.__cause__
        # Item assignment casts as np.copyto(casting="unsafe") does, with less call overhead.
        for target, array in zip(self.env_views[index], arrays):  # noqa: B905 (lengths match by construction)
            target[...] = array
        if self._variable_nodes:
            return tuple([values[node] for node in self._variable_nodes])
        return ()

    def _check_index(self, index: object) -> int:
        expected = f"an int with 0 <= index < {self.n}"
        if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)):
            raise InvalidTypeError(message("shared-memory env index is not an int", expected=expected, got=show(index)))
        if not 0 <= index < self.n:
            raise InvalidValueError(
                message("shared-memory env index is out of range", expected=expected, got=show(index))
            )
        return int(index)

    def read(self, variable: Sequence[Any] | None = None) -> Any:
        """Return the whole batch in the structure of the batched space.

        Array leaves are the zero-copy ``(n, *shape)`` views of the buffer (the same objects at every read);
        Text leaves are tuples of ``n`` strings and OneOf leaves tuples of ``n`` ``(index, value)`` pairs,
        decoded from the buffer at this call.

        Args:
            variable: the batched values of the variable-size leaves (``layout.variable_leaves`` order), to
                put back in the structure; without it those leaves read as None.

        Returns:
            The batched value: arrays, tuples and dicts as Gymnasium's ``read_from_shared_memory`` gives.

        Example:
            >>> from vecspaces.spaces import Box, Tuple
            >>> batch = SharedLayout(Tuple((Box(0, 1, ()), Box(0, 1, ()))), n=2).allocate()
            >>> _ = batch.write(1, (np.float32(0.5), np.float32(1)))
            >>> batch.read()
            (array([0. , 0.5], dtype=float32), array([0., 1.], dtype=float32))
        """
        return self.layout._assemble(self.read_leaves(variable))

    def read_leaves(self, variable: Sequence[Any] | None = None) -> list[Any]:
        """What :meth:`read` puts in the structure: one entry per leaf of the space, in pre-order.

        Array leaves are the batch views themselves (``array_leaves`` says where they are), so a caller can
        swap in copies before :meth:`assemble` puts the entries in the structure.

        Example:
            >>> from vecspaces.spaces import Box, Dict, Text
            >>> batch = SharedLayout(Dict(a=Box(0, 1, ()), b=Text(2)), n=2).allocate()
            >>> leaves = batch.read_leaves()
            >>> leaves[batch.array_leaves[0][0]] = np.ones(2)
            >>> batch.assemble(leaves)["a"]
            array([1., 1.])
        """
        leaves = list(self._template)
        for position, decode in self._fresh:
            leaves[position] = decode()
        if variable is not None:
            self._check_variable_count("read", variable)
            for position, batched in zip(self._variable_positions, variable, strict=True):
                leaves[position] = batched
        return leaves

    def _check_variable_count(self, call: str, variable: Sequence[Any]) -> None:
        if len(variable) != len(self._variable_positions):
            raise InvalidValueError(
                message(
                    f"{call} was given the wrong number of variable-size values",
                    expected=f"{len(self._variable_positions)} values, one per variable-size leaf",
                    got=f"{len(variable)} values",
                )
            )

    def assemble(self, leaves: list[Any]) -> Any:
        """Put the entries of :meth:`read_leaves` (possibly replaced) into the structure of the batched space."""
        return self.layout._assemble(leaves)

    def read_env(self, index: int, variable: Sequence[Any] | None = None) -> Any:
        """Return env ``index``'s value: array rows as views (0-d ones as scalars), Text and OneOf decoded.

        Args:
            index: the env's position in the batch.
            variable: the env's values of the variable-size leaves, as :meth:`write` returned them, to put
                back in the structure; without it those leaves read as None.

        Example:
            >>> from vecspaces.spaces import Discrete, Sequence, Tuple
            >>> batch = SharedLayout(Tuple((Discrete(4), Sequence(Discrete(2)))), n=2).allocate()
            >>> sent = batch.write(1, (3, (1, 0)))
            >>> batch.read_env(1, sent)
            (3, (1, 0))
        """
        if type(index) is not int or not 0 <= index < self.n:
            index = self._check_index(index)
        leaves = [read(index) for read in self._env_readers]
        if variable is not None:
            self._check_variable_count("read_env", variable)
            for position, value in zip(self._variable_positions, variable, strict=True):
                leaves[position] = value
        return self.layout._assemble(leaves)

    def accepts(self, space: Space[Any]) -> bool:
        """Whether ``space`` has the layout of the space this batch was made for (remembered when True)."""
        if space is self._accepted_space:
            return True
        if tuple(self.layout.nodes_of(space)) != self.layout.nodes:
            return False
        self._accepted_space = space
        return True

    def __reduce__(self) -> tuple[Any, ...]:
        if self.layout.space is None:
            raise InvalidTypeError(
                message("a OneOf branch batch cannot be pickled", expected="a top-level batch", got="a branch")
            )
        if isinstance(self.buffer, ctypes.Array) and get_spawning_popen() is None:
            raise InvalidTypeError(
                message(
                    "a SharedBatch in shared memory can only be pickled while a process starts",
                    expected="the batch given to multiprocessing.Process as an argument",
                    got="a pickle made at another time (e.g. through a pipe or queue)",
                    fix="pass it to the worker when starting it; it stays shared afterwards",
                )
            )
        layout = self.layout
        return (
            _rebuild_batch,
            (layout.space, self.n, self.buffer, self.offset, self.name, layout.custom_as_variable),
        )

    def __repr__(self) -> str:
        return f"SharedBatch({self.layout.space!r}, n={self.n}, nbytes={self.layout.nbytes})"


def _rebuild_batch(
    space: Space[Any], n: int, buffer: Any, offset: int, name: str, custom_as_variable: bool = False
) -> SharedBatch:
    return SharedLayout(space, n, custom_as_variable).bind(buffer, offset, name)


def _all_envs(read_env: Callable[[int], Any], n: int) -> Callable[[], tuple[Any, ...]]:
    envs = range(n)
    return lambda: tuple([read_env(i) for i in envs])


def _text_env_reader(leaf: TextLeaf, view: npt.NDArray[np.int32]) -> Callable[[int], str]:
    padding = len(leaf.characters)
    # Both the padding index and -1 land on the trailing "", so clipping to [-1, padding] makes any code
    # that is not a character (padding, or foreign bytes in the buffer) decode to nothing.
    characters = (*leaf.characters, "")

    def read_env(i: int) -> str:
        return "".join([characters[code] for code in np.clip(view[i], -1, padding).tolist()])

    return read_env


def _oneof_env_reader(
    leaf: OneOfLeaf,
    branches: tuple[SharedLayout, ...],
    indices: npt.NDArray[np.int64],
    regions: npt.NDArray[np.uint8],
) -> Callable[[int], tuple[np.int64, Any]]:
    count = len(branches)

    def read_env(i: int) -> tuple[np.int64, Any]:
        index = indices[i]
        if not 0 <= index < count:
            raise InvalidValueError(
                message(
                    "OneOf index in shared memory is out of range",
                    expected=f"0 <= index < {count}",
                    got=show(index),
                    at=format_path("value", (*leaf.path, 0)),
                    fix="write the buffer only through SharedBatch.write",
                )
            )
        # A private copy of the region: the value read stays valid whatever is written later.
        return index, branches[int(index)].bind(regions[i].copy()).read_env(0)

    return read_env
