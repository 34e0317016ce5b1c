"""Gymnasium-compatible shared memory, built on the compiled layout of ``vecspaces.vector.utils.shared_layout``.

``create_shared_memory``, ``read_from_shared_memory`` and ``write_to_shared_memory`` keep Gymnasium's
signatures. Differences from Gymnasium, and why:

- ``create_shared_memory`` returns one :class:`~vecspaces.vector.utils.shared_batch.SharedBatch`, not a nested
  structure of ``multiprocessing`` arrays: one contiguous buffer (``ctx.Array(c_uint8, ..., lock=False)``,
  no unused lock) plus its layout, compiled once, so ``read`` and ``write`` never recompile it. Pass it to a
  child ``Process`` as an argument, under fork, forkserver or spawn, exactly as Gymnasium's buffers.
- Text and OneOf are decoded from the buffer at every read, so reads never return stale values, and a OneOf
  takes one region per env sized for its largest branch instead of a buffer per branch.
- A write checks the whole value before copying anything: a wrong shape, a dict with missing or extra keys, a
  tuple of the wrong length, a too long string or an unknown character raise
  :class:`~vecspaces.error.InvalidValueError` or :class:`~vecspaces.error.InvalidTypeError` naming the env
  and the path (``value['camera']``), and no slot is touched. Gymnasium raises IndexError or KeyError for
  bad Text, and accepts any value of the right *size*; here the shape must match.
- The functions are ``functools.singledispatch`` as in Gymnasium; the default implementation serves every
  space through its layout (:func:`~vecspaces.vector.utils.layout_nodes`). Custom spaces follow the one
  rule stated in ``vecspaces._ops.support``.
- Spaces holding a Sequence or Graph are refused by all three functions with the same
  :class:`~vecspaces.error.InvalidTypeError` naming the leaf's path, also when the memory was made with
  ``SharedLayout(space, n).allocate()``: these functions have no way to carry such values. ``SharedBatch.write``
  and ``SharedBatch.read`` do (a worker pool sends them through its pipe).
- A fraction, a NaN or an infinity written into an integer leaf raises :class:`~vecspaces.error.InvalidValueError`
  (Gymnasium stores 2.7 as 2, and a NaN as an arbitrary integer).
- A Gymnasium space given as ``space`` gets an :class:`~vecspaces.error.InvalidTypeError` that says to convert
  it with ``vecspaces.spaces.from_gymnasium``.
"""

from __future__ import annotations

import multiprocessing
from functools import singledispatch
from typing import Any

from vecspaces._ops.arguments import check_batch_size, not_a_space
from vecspaces._ops.memory_nodes import format_path
from vecspaces._ops.support import VARIABLE_SIZE
from vecspaces.error import InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces.space import Space
from vecspaces.vector.utils.shared_batch import BatchLayout, SharedBatch
from vecspaces.vector.utils.shared_layout import SharedLayout

__all__ = ["create_shared_memory", "read_from_shared_memory", "write_to_shared_memory"]


@singledispatch
def create_shared_memory(space: Space[Any], n: int = 1, ctx: Any = multiprocessing) -> SharedBatch:
    """Allocate zeroed shared memory for a batch of ``n`` values of ``space``.

    Args:
        space: the space of one value.
        n: the number of values in the batch.
        ctx: ``multiprocessing`` or a context from ``multiprocessing.get_context``, whose ``Array`` allocates.

    Returns:
        A :class:`SharedBatch`: one buffer holding every fixed-size leaf, and the compiled layout.

    Raises:
        InvalidTypeError: ``space`` is not a space, or it holds a Sequence or Graph (their values have no
            fixed size; the message names the leaf's path).
        InvalidValueError: ``n`` is not an int >= 0.
        CustomSpaceError: a space inside ``space`` has no registered layout.

    Example:
        >>> from vecspaces.spaces import Box, Dict, Discrete
        >>> memory = create_shared_memory(Dict(gear=Discrete(3), pos=Box(0, 1, (2,))), n=4)
        >>> memory.n, [slot.path for slot in memory.layout.slots]
        (4, [('gear',), ('pos',)])
    """
    if not isinstance(space, Space):
        raise not_a_space("create_shared_memory", space)
    layout = SharedLayout(space, check_batch_size("create_shared_memory", n))
    if layout.variable_leaves:
        raise _variable_size_error("create_shared_memory cannot store", layout)
    return layout.allocate(ctx)


def _variable_size_error(subject: str, layout: BatchLayout) -> InvalidTypeError:
    """The error for a space with a leaf of no fixed size (Sequence, Graph), naming the first one's path.

    ``subject`` is the operation and what it cannot do, e.g. ``"write_to_shared_memory cannot write"``.
    """
    leaf = layout.variable_leaves[0]
    return InvalidTypeError(
        message(
            f"{subject} a {type(leaf.space).__name__}: {VARIABLE_SIZE}",
            expected="a space whose values all have a fixed size",
            got=repr(leaf.space),
            at=format_path("space", leaf.path),
            fix="send such values through a pipe instead (AsyncVectorEnv(..., shared_memory=False)), "
            "or use SharedLayout and SharedBatch directly: SharedBatch.write returns those values and "
            "SharedBatch.read(variable=...) takes them back",
        )
    )


@singledispatch
def read_from_shared_memory(space: Space[Any], shared_memory: SharedBatch, n: int = 1) -> Any:
    """Return the batch held in ``shared_memory``.

    Array leaves are zero-copy views of the shared buffer: later writes show through them. Text leaves come
    back as a tuple of ``n`` strings and OneOf leaves as a tuple of ``n`` ``(index, value)`` pairs, decoded
    now from the buffer.

    Args:
        space: the space of one value, with the layout ``shared_memory`` was created for.
        shared_memory: what :func:`create_shared_memory` returned.
        n: the batch size, as given to :func:`create_shared_memory`.

    Returns:
        The batched value, structured as the batched space.

    Raises:
        InvalidTypeError: ``space`` is not a space, ``shared_memory`` not a :class:`SharedBatch`, or the space
            holds a Sequence or Graph (memory from ``SharedLayout.allocate``; the message names the leaf's path).
        InvalidValueError: ``n`` or the layout of ``space`` differs from those of ``shared_memory``.
        CustomSpaceError: a space inside ``space`` has no registered layout.

    Example:
        >>> from vecspaces.spaces import Box
        >>> space = Box(0, 1, (2,))
        >>> memory = create_shared_memory(space, n=3)
        >>> read_from_shared_memory(space, memory, n=3).shape
        (3, 2)
    """
    if not isinstance(space, Space):
        raise not_a_space("read_from_shared_memory", space)
    batch = _checked_batch("read_from_shared_memory", space, shared_memory)
    if n != batch.n:
        raise InvalidValueError(
            message(
                "read_from_shared_memory batch size differs from the memory's",
                expected=f"n={batch.n}",
                got=show(n),
                fix="pass the n given to create_shared_memory",
            )
        )
    return batch.read()


@singledispatch
def write_to_shared_memory(space: Space[Any], index: int, value: Any, shared_memory: SharedBatch) -> None:
    """Write one env's value into its slot of ``shared_memory``.

    The whole value is checked first; if any part of it does not fit, nothing is written.

    Args:
        space: the space of one value, with the layout ``shared_memory`` was created for.
        index: the env's position in the batch.
        value: the env's value.
        shared_memory: what :func:`create_shared_memory` returned.

    Raises:
        InvalidTypeError: ``space`` is not a space, ``shared_memory`` not a :class:`SharedBatch`, ``index``
            not an int, a part of ``value`` has the wrong type (e.g. a Dict value that is not a dict), or the
            space holds a Sequence or Graph (memory from ``SharedLayout.allocate``; the message names its path).
        InvalidValueError: ``index`` is out of range, the layout of ``space`` differs from the memory's, or a
            part of ``value`` has the wrong shape, keys, length or characters.
        CustomSpaceError: a space inside ``space`` has no registered layout.

    Example:
        >>> from vecspaces.spaces import Text
        >>> space = Text(5, charset="abc")
        >>> memory = create_shared_memory(space, n=2)
        >>> write_to_shared_memory(space, 0, "cab", memory)
        >>> read_from_shared_memory(space, memory, n=2)
        ('cab', 'aaaaa')
    """
    if not isinstance(space, Space):
        raise not_a_space("write_to_shared_memory", space)
    _checked_batch("write_to_shared_memory", space, shared_memory).write(index, value)


def _checked_batch(operation: str, space: Space[Any], shared_memory: object) -> SharedBatch:
    # On a failure, a space of a kind with no layout (a custom space) is named first, as Gymnasium does: laying
    # it out raises CustomSpaceError. Only failures pay for that.
    if not isinstance(shared_memory, SharedBatch):
        SharedLayout(space, 1)
        raise InvalidTypeError(
            message(
                f"{operation} needs the memory made by create_shared_memory",
                expected="a SharedBatch",
                got=show(shared_memory),
                fix="create it with vecspaces.vector.utils.create_shared_memory(space, n)",
            )
        )
    if not shared_memory.accepts(space):
        SharedLayout(space, 1)
        raise InvalidValueError(
            message(
                f"{operation} was given a space whose layout differs from the memory's",
                expected=f"the layout of {shared_memory.layout.space!r}",
                got=repr(space),
            )
        )
    if shared_memory.layout.variable_leaves:
        # Memory from SharedLayout(space, n).allocate() may have such leaves; these functions would drop their
        # values silently (Gymnasium's write returns None and its read has no way to take them back).
        verb = "read" if operation.startswith("read") else "write"
        raise _variable_size_error(f"{operation} cannot {verb}", shared_memory.layout)
    return shared_memory
