"""Reading and writing a batch in shared memory: :class:`SharedBatch`, a compiled layout bound to a buffer.

A batch is made by :meth:`SharedLayout.bind <vecspaces.vector.utils.shared_layout.SharedLayout.bind>` or
:meth:`~vecspaces.vector.utils.shared_layout.SharedLayout.allocate`; the layout says where every slot lives and
what a write checks (``vecspaces.vector.utils.shared_layout``). Binding makes the views once:

- **Writes** run the layout's write program on the whole value, then copy one item assignment per slot into
  the env's row views; a value that fails a check raises before any slot is touched.
- **Reads.** Array leaves read as the zero-copy batch views made at bind time. Text and OneOf leaves are
  decoded from the buffer at every read, so a read always reflects what the buffer holds now (Gymnasium
  decodes them once in its async pool and then returns stale values).
- **Variable-size leaves**, which the buffer does not hold: :meth:`SharedBatch.write` returns their values and
  :meth:`SharedBatch.read` takes them back, so a worker pool can send just those through its pipe.

A buffer that was never written holds zeros: arrays of zeros, Text as ``character_list[0] * max_length``
(as in Gymnasium), OneOf as branch 0 holding zeros. For Text this is not ``create_empty_array``'s placeholder
(the first character of the *sorted* charset, ``min_length`` times), again as in Gymnasium; the reason both
are kept is in ``vecspaces._kernels.text``.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.context import get_spawning_popen
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

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
)
from vecspaces.error import InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces.space import Space
from vecspaces.vector.utils.slot_encoders import Arrays, ValueProblem

__all__ = ["BatchLayout", "FixedLeaf", "SharedBatch", "Slot"]


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


@dataclass(frozen=True)
class FixedLeaf:
    """A compiled fixed-size leaf: its node, its slots ``[first, stop)`` and, for a OneOf, its branches."""

    node: ArrayLeaf | TextLeaf | OneOfLeaf
    first: int
    stop: int
    branches: tuple[BatchLayout, ...] = ()


class BatchLayout(Protocol):
    """What a batch uses of its compiled layout (see the attributes of ``SharedLayout``).

    :class:`~vecspaces.vector.utils.shared_layout.SharedLayout` is the one implementation. It binds batches, so
    it imports this module, and this module knows it only by this protocol.
    """

    space: Space[Any] | None
    n: int
    nbytes: int
    nodes: tuple[LayoutNode, ...]
    slots: tuple[Slot, ...]
    variable_leaves: tuple[VariableLeaf, ...]
    fixed_leaves: tuple[FixedLeaf, ...]
    variable_nodes: tuple[int, ...]
    prepare: Callable[[Any], tuple[Arrays, list[Any]]]
    assemble: Callable[[Sequence[Any]], Any]

    def nodes_of(self, space: Space[Any]) -> list[LayoutNode]:
        """The layout nodes of ``space`` as this layout computes them."""
        ...


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
        >>> from vecspaces.vector.utils import SharedLayout
        >>> batch = SharedLayout(Text(5, charset="abc"), n=2).allocate()
        >>> _ = batch.write(1, "cab")
        >>> batch.read()
        ('aaaaa', 'cab')
    """

    def __init__(self, layout: BatchLayout, buffer: Any, offset: int = 0, name: str = "value") -> None:
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
        self._prepare = layout.prepare
        self._variable_nodes = layout.variable_nodes
        self._bind_readers()

    def _bind_readers(self) -> None:
        """Prepare the read: array leaves are their batch views; Text and OneOf get decoders run per read."""
        template: list[Any] = []  # one entry per leaf, in pre-order
        array_leaves: list[tuple[int, int]] = []
        fresh: list[tuple[int, Callable[[], Any]]] = []
        variable_positions: list[int] = []
        self._env_readers: list[Callable[[int], Any]] = []
        fixed = iter(self.layout.fixed_leaves)
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
            >>> from vecspaces.vector.utils import SharedLayout
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
        except ValueProblem as problem:
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
            >>> from vecspaces.vector.utils import SharedLayout
            >>> batch = SharedLayout(Tuple((Box(0, 1, ()), Box(0, 1, ()))), n=2).allocate()
            >>> _ = batch.write(1, (np.float32(0.5), np.float32(1)))
            >>> batch.read()
            (array([0. , 0.5], dtype=float32), array([0., 1.], dtype=float32))
        """
        return self.layout.assemble(self.read_leaves(variable))

    def read_leaves(self, variable: Sequence[Any] | None = None) -> list[Any]:
        """What :meth:`read` puts in the structure: one entry per leaf of the space, in pre-order.

        Array leaves are the batch views themselves (``array_leaves`` says where they are), so a caller can
        swap in copies before :meth:`assemble` puts the entries in the structure.

        Example:
            >>> from vecspaces.spaces import Box, Dict, Text
            >>> from vecspaces.vector.utils import SharedLayout
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

    def assemble(self, leaves: Sequence[Any]) -> Any:
        """Put the entries of :meth:`read_leaves` (possibly replaced) into the structure of the batched space."""
        return self.layout.assemble(leaves)

    def read_env(self, index: int, variable: Sequence[Any] | None = None) -> Any:
        """Return env ``index``'s value: array rows as views (0-d ones as scalars), Text and OneOf decoded.

        Args:
            index: the env's position in the batch.
            variable: the env's values of the variable-size leaves, as :meth:`write` returned them, to put
                back in the structure; without it those leaves read as None.

        Example:
            >>> from vecspaces.spaces import Discrete, Sequence, Tuple
            >>> from vecspaces.vector.utils import SharedLayout
            >>> batch = SharedLayout(Tuple((Discrete(4), Sequence(Discrete(2)))), n=2).allocate()
            >>> sent = batch.write(1, (3, (1, 0)))
            >>> batch.read_env(1, sent)
            (3, (1, 0))
        """
        return self.layout.assemble(self.read_env_leaves(index, variable))

    def read_env_leaves(self, index: int, variable: Sequence[Any] | None = None) -> list[Any]:
        """What :meth:`read_env` puts in the structure: one entry per leaf, in pre-order (as :meth:`read_leaves`).

        Example:
            >>> from vecspaces.spaces import Box, Dict
            >>> from vecspaces.vector.utils import SharedLayout
            >>> batch = SharedLayout(Dict(a=Box(0, 1, ()), b=Box(0, 1, (2,))), n=2).allocate()
            >>> leaves = batch.read_env_leaves(1)
            >>> leaves[1] = np.ones(2)
            >>> batch.assemble(leaves)["b"]
            array([1., 1.])
        """
        if type(index) is not int or not 0 <= index < self.n:
            index = self._check_index(index)
        leaves = [read(index) for read in self._env_readers]
        if variable is not None:
            self._check_variable_count("read_env", variable)
            for position, value in zip(self._variable_positions, variable, strict=True):
                leaves[position] = value
        return leaves

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
        # The layout pickles as its space, so the child compiles it once and binds it to the same buffer.
        return (SharedBatch, (self.layout, self.buffer, self.offset, self.name))

    def __repr__(self) -> str:
        return f"SharedBatch({self.layout.space!r}, n={self.n}, nbytes={self.layout.nbytes})"


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
    branches: tuple[BatchLayout, ...],
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
        return index, SharedBatch(branches[int(index)], regions[i].copy()).read_env(0)

    return read_env
