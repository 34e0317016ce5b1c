"""What the kinds whose value is one fixed-size array share: Box, Discrete, MultiBinary, MultiDiscrete.

Their kernel modules register these for their own classes; a new array kind can too (see the toy kind in
``tests/test_architecture.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces._ops.arguments import out_array_problem
from vecspaces._ops.batch import stacked_concatenate
from vecspaces._ops.flatten import same_kind
from vecspaces._ops.memory_nodes import ArrayLeaf, LayoutNode, Path
from vecspaces._space import Space, vecspaces_class
from vecspaces.error import InvalidTypeError, InvalidValueError, message, show

__all__ = ["array_layout", "iterate_rows", "same_array_layout", "stack_into"]


def same_array_layout(space_1: Space[Any], space_2: Any) -> bool:
    """``is_space_dtype_shape_equiv`` of the kinds whose values are one array: same class, shape and dtype.

    Example:
        >>> from vecspaces.spaces import Box
        >>> same_array_layout(Box(0, 1, (2,)), Box(-5, 5, (2,))), same_array_layout(Box(0, 1, (2,)), Box(0, 1, (3,)))
        (True, False)
    """
    other = same_kind(space_1, space_2, vecspaces_class(type(space_1)))
    return (
        other is not None
        and vecspaces_class(type(other)) is vecspaces_class(type(space_1))  # a subclass is another kind
        and space_1.shape == other.shape
        and space_1.dtype == other.dtype
    )


def array_layout(space: Space[Any], path: Path = ()) -> list[LayoutNode]:
    """``layout_nodes`` of the kinds whose value is one array: one :class:`~vecspaces._ops.memory_nodes.ArrayLeaf`.

    Example:
        >>> from vecspaces.spaces import MultiBinary
        >>> array_layout(MultiBinary(3))
        [ArrayLeaf(path=(), dtype=dtype('int8'), shape=(3,))]
    """
    return [ArrayLeaf(path, np.dtype(space.dtype), tuple(space.shape or ()))]


def iterate_rows(space: Space[Any], items: Any) -> Iterator[Any]:
    """Iterate over the rows of a batch held in one array (the batch of a MultiBinary or MultiDiscrete).

    The batch of a Discrete is a MultiDiscrete, so its rows are numpy scalars; Gymnasium also accepts the
    MultiBinary itself here, whose batch is a Box. Like Gymnasium, any other iterable (a list of actions, a
    generator) is iterated as it is.

    Example:
        >>> from vecspaces.spaces import MultiDiscrete
        >>> list(iterate_rows(MultiDiscrete([3, 3]), [2, 0]))
        [2, 0]
    """
    if not (isinstance(items, np.ndarray) and items.ndim == 0):
        try:
            return iter(items)
        except TypeError:
            pass
    raise InvalidTypeError(
        message(
            f"iterate over {space!r} needs a batch",
            expected="an array with a batch axis or an iterable of values",
            got=show(items),
        )
    )


def _prepare_checked(space: Space[Any], items: Sequence[Any], out: Any) -> Callable[[], npt.NDArray[Any]]:
    """Check every item; an error names the first that does not fit. Return the write of the checked values.

    The checked path of :data:`stack_into`, which copies one item per row into ``out`` (with ``same_kind``
    casting, as ``np.stack``) for the array spaces whose batch is a plain stack of their values.

    Example:
        >>> from vecspaces.spaces import Discrete
        >>> stack_into(Discrete(3), [np.int64(2), 0], np.zeros(2, dtype=np.int64))
        array([2, 0])
    """
    problem = out_array_problem(space, out)
    if problem is not None:
        raise problem
    if out.ndim == 0 or len(items) != out.shape[0]:
        raise InvalidValueError(
            message(
                f"concatenate for {space!r} got the wrong number of items",
                expected=f"one item per row of out, {out.shape[0] if out.ndim else 0} items",
                got=f"{len(items)} items",
            )
        )
    row_shape = out.shape[1:]
    values = []
    for index, item in enumerate(items):
        try:
            value = np.asarray(item)
        except (ValueError, TypeError, OverflowError) as error:  # a ragged list, or an object numpy cannot hold
            raise InvalidValueError(
                message(
                    f"concatenate for {space!r} got an item that is not an array",
                    expected=f"a value of shape {row_shape}",
                    got=show(item),
                    at=f"items[{index}]",
                )
            ) from error
        if value.shape != row_shape:
            raise InvalidValueError(
                message(
                    f"concatenate for {space!r} got an item of the wrong shape",
                    expected=f"shape {row_shape}",
                    got=f"shape {value.shape}",
                    at=f"items[{index}]",
                )
            )
        if not np.can_cast(value.dtype, out.dtype, casting="same_kind") and not _integers_fit(value, out.dtype):
            raise InvalidTypeError(
                message(
                    f"concatenate for {space!r} got an item of a dtype that does not cast to {out.dtype}",
                    expected=f"a value castable to {out.dtype} (same kind)",
                    got=f"dtype {value.dtype}",
                    at=f"items[{index}]",
                )
            )
        values.append(value)
    return partial(_assign_each, out, values)


def _assign_each(out: npt.NDArray[Any], values: list[npt.NDArray[Any]]) -> npt.NDArray[Any]:
    for index, value in enumerate(values):
        out[index] = value  # checked: same kind, or integers that fit
    return out


# Shared by Discrete, MultiBinary and MultiDiscrete.
stack_into = stacked_concatenate(_prepare_checked, "stack_into")


def _integers_fit(values: npt.NDArray[Any], dtype: np.dtype[Any]) -> bool:
    # Python ints arrive as int64; they belong in a uint8 batch when their values fit.
    if values.size == 0:
        return True
    if values.dtype.kind not in "iu" or dtype.kind not in "iu":
        return False
    info = np.iinfo(dtype)
    return bool(int(values.min()) >= info.min and int(values.max()) <= info.max)
