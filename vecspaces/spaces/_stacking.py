"""Stacks of values: the values of a batch of one space, gathered as ``concatenate`` batches them.

A stacked Sequence holds its items this way, and a Graph its nodes and edges; their spaces and kernels build
and split stacks with :func:`stack_items`, :func:`empty_stack` and :func:`unstack`. A stack has any length,
zero included, which is what sets it apart from a batch of the vector utilities.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces._ops.batch import concatenate, create_empty_array, iterate
from vecspaces._space import Space
from vecspaces.error import InvalidTypeError, message, show
from vecspaces.spaces._container import Container

__all__ = ["empty_stack", "stack_items", "unstack"]


def stack_items(space: Space[Any], items: tuple[Any, ...] | list[Any]) -> Any:
    """Stack values of ``space`` the way ``concatenate`` batches them; no values give :func:`empty_stack`.

    Example:
        >>> from vecspaces.spaces import Discrete
        >>> stack_items(Discrete(3), [np.int64(1), np.int64(2)])
        array([1, 2])
    """
    if not items:
        return empty_stack(space)
    return concatenate(space, items, create_empty_array(space, len(items)))


def empty_stack(space: Space[Any], fn: Callable[..., npt.NDArray[Any]] = np.zeros) -> Any:
    """The stack of zero values of ``space``: what ``concatenate`` would make of an empty list.

    Arrays get length 0 along the batch axis, tuple batches are empty, Dict and Tuple spaces hold the empty
    stacks of their children.

    Example:
        >>> from vecspaces.spaces import Box, Dict, Discrete
        >>> empty_stack(Dict(a=Box(0, 1, (2,)), b=Discrete(3)))
        {'a': array([], shape=(0, 2), dtype=float32), 'b': array([], dtype=int64)}
    """
    if isinstance(space, Container):
        return space.pack([empty_stack(child, fn) for child in space.children()])
    # A batch of one, cut to none: batch containers are arrays or tuples, and both slice.
    return create_empty_array(space, 1, fn)[:0]


def unstack(space: Space[Any], batched: Space[Any], stacked: Any) -> list[Any]:
    """Split a stack of values of ``space`` (of any length) back into the values.

    ``batched`` is ``batch_space(space, 1)``, whose parts tell how each part of the stack is laid out. Unlike
    ``iterate(batched, stacked)`` this works for every length, also where a part batches to a Tuple of copies
    (Text, Sequence, Graph, OneOf, custom spaces), whose stack is a tuple of values. Wherever a part of the
    stack is an array or a tuple of values, a list or tuple of the values themselves is accepted too, as
    Gymnasium's ``iterate`` accepts it: ``[1, 0]`` unstacks as the stack ``np.array([1, 0])`` of a Discrete.

    Raises:
        Error: ``stacked`` does not have the layout of a stack of ``space``.

    Example:
        >>> from vecspaces.spaces import Discrete, Text, Tuple
        >>> from vecspaces.vector.utils import batch_space
        >>> space = Tuple((Text(2), Discrete(3)))
        >>> unstack(space, batch_space(space, 1), (("a", "bc"), np.array([0, 2])))
        [('a', 0), ('bc', 2)]
        >>> unstack(space, batch_space(space, 1), [["a", "bc"], [0, 2]])
        [('a', 0), ('bc', 2)]
    """
    if isinstance(space, Container):
        parts = space.unpack(stacked, "stacked")
        columns = [
            unstack(child, batched_child, part)
            for child, batched_child, part in zip(space.children(), batched.children(), parts, strict=True)  # type: ignore[attr-defined]  # batched is a container like space
        ]
        return [space.pack(row) for row in zip(*columns, strict=True)]
    if isinstance(stacked, (tuple, list)):
        # The values one by one: the stack of a Tuple of copies, or the items of an array stack given as a
        # list (which Gymnasium's iterate walks like the array).
        return list(stacked)
    if isinstance(batched, Container):  # a Tuple of copies: the stack is a tuple of values
        raise InvalidTypeError(
            message(f"a stack of {space!r} is not a tuple", expected="a tuple or list of values", got=show(stacked))
        )
    return list(iterate(batched, stacked))
