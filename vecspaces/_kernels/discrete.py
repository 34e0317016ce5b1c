"""The operations on :class:`~vecspaces.spaces.Discrete` spaces.

Flat layout: a one-hot vector of length ``n`` in the space's dtype; value ``v`` sets entry ``v - start``.
Batched type: ``MultiDiscrete`` of shape ``(n_envs,)`` with ``nvec`` full of ``n`` and ``start`` full of
``start``; a batched value is a 1-D array of the space's dtype. There is no batched Discrete, so ``iterate``
on a Discrete is an error (iterate over its batched MultiDiscrete instead).
Shared memory: one :class:`~vecspaces._ops.memory_nodes.ArrayLeaf`, a scalar of the space's dtype.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Sequence
from copy import deepcopy
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces._ops.batch import (
    batch_differing_spaces,
    batch_space,
    check_batch_size,
    concatenate,
    create_empty_array,
    iterate,
    out_array_problem,
    stacked_concatenate,
)
from vecspaces._ops.flatten import (
    as_flat_array,
    flatdim,
    flatten,
    flatten_space,
    is_space_dtype_shape_equiv,
    same_array_layout,
    unflatten,
)
from vecspaces._ops.memory_nodes import array_layout, layout_nodes
from vecspaces._ops.support import reason
from vecspaces.error import InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces.box import Box
from vecspaces.spaces.discrete import Discrete
from vecspaces.spaces.multi_discrete import MultiDiscrete
from vecspaces.spaces.space import Space

# Small spaces keep each value's one-hot vector (when all of them take up to this many bytes) and each value
# as a numpy scalar (up to this many values) ready for flatten and unflatten.
_ONE_HOT_BYTES = 65536
_VALUES_LIMIT = 1024

_as_index = operator.index


@flatdim.register(Discrete)
def _flatdim_discrete(space: Discrete) -> int:
    return int(space.n)


@flatten_space.register(Discrete)
def _flatten_space_discrete(space: Discrete) -> Box:
    return Box(low=0, high=1, shape=(int(space.n),), dtype=space.dtype)


@flatten.register(Discrete)
def _flatten_discrete(space: Discrete, x: Any) -> npt.NDArray[np.integer[Any]]:
    try:
        index = _as_index(x) - space._low
    except TypeError:
        raise InvalidTypeError(
            message(f"flatten of {space!r} needs an integer", expected="an int in the space", got=show(x))
        ) from None
    if not 0 <= index < space._count:
        raise InvalidValueError(
            message(
                f"flatten of {space!r} got a value outside the space",
                expected=f"an int in [{space._low}, {space._high}]",
                got=show(x),
            )
        )
    rows = space._one_hot_rows
    if rows is None:
        if space._count * space._count * space.dtype.itemsize > _ONE_HOT_BYTES:
            one_hot = np.zeros(space._count, dtype=space.dtype)
            one_hot[index] = 1
            return one_hot
        rows = space._one_hot_rows = [row.copy() for row in np.eye(space._count, dtype=space.dtype)]
    return rows[index].copy()  # copying a ready one-hot vector beats filling a new one


@unflatten.register(Discrete)
def _unflatten_discrete(space: Discrete, x: Any) -> np.integer[Any]:
    if type(x) is not np.ndarray or x.ndim != 1:
        x = as_flat_array(x, repr(space))
    if len(x) != space._count:
        raise InvalidValueError(
            message(
                f"unflatten of {space!r} got a vector of the wrong length",
                expected=f"a one-hot vector of length {space._count}",
                got=show(x),
            )
        )
    hits = x.nonzero()[0]
    if hits.size == 0:
        raise InvalidValueError(
            message(
                f"unflatten got a vector that is not a one-hot vector for {space!r}",
                expected="a vector with a nonzero entry, as made by flatten",
                got=show(x),
                fix="only values made by flatten can be unflattened, not any sample of flatten_space",
            )
        )
    # Like Gymnasium, a multi-hot vector gives its first nonzero entry.
    index: int = hits.item(0)
    values = space._values
    if values is None:
        if space._count > _VALUES_LIMIT:
            return space._scalar_type(space._low + index)
        # numpy scalars are immutable, so one instance per value can be handed out every time.
        values = space._values = [space._scalar_type(space._low + i) for i in range(space._count)]
    return values[index]


is_space_dtype_shape_equiv.register(Discrete)(same_array_layout)


@batch_space.register(Discrete)
def _batch_space_discrete(space: Discrete, n: int = 1) -> MultiDiscrete:
    n = check_batch_size("batch_space", n)
    return MultiDiscrete(
        np.full((n,), space.n, dtype=space.dtype),
        dtype=space.dtype,
        seed=deepcopy(space.np_random),
        start=np.full((n,), space.start, dtype=space.dtype),
    )


@batch_differing_spaces.register(Discrete)  # dispatched on spaces[0], see vecspaces._ops.batch
def _batch_differing_spaces_discrete(spaces: Sequence[Discrete]) -> MultiDiscrete:  # type: ignore[misc]
    counts = [int(space.n) for space in spaces]
    starts = [int(space.start) for space in spaces]
    # Gymnasium's rule: the dtype of the largest itemsize (the first one on a tie). When that dtype cannot
    # hold every value (int32 and uint32 mixed, say), fall back to numpy's common type of all of them.
    dtype = max((space.dtype for space in spaces), key=lambda dtype: dtype.itemsize)
    info = np.iinfo(dtype)
    if min(starts) < info.min or max(first + count - 1 for first, count in zip(starts, counts, strict=True)) > info.max:
        dtype = np.result_type(*(space.dtype for space in spaces))
    return MultiDiscrete(
        np.array(counts, dtype=dtype), dtype=dtype, seed=deepcopy(spaces[0].np_random), start=np.array(starts)
    )


@iterate.register(Discrete)
def _iterate_discrete(space: Discrete, items: Any) -> Any:
    raise InvalidTypeError(
        message(
            f"iterate got the unbatched space {space!r} ({reason('iterate', 'Discrete')})",
            expected="a batched space",
            got=show(items),
            fix="iterate over batch_space(space, n), a MultiDiscrete",
        )
    )


@create_empty_array.register(Discrete)
def _create_empty_array_discrete(
    space: Discrete, n: int = 1, fn: Callable[..., npt.NDArray[Any]] = np.zeros
) -> npt.NDArray[Any]:
    return fn((n,), dtype=space.dtype)


layout_nodes.register(Discrete, array_layout)


def iterate_rows(space: Space[Any], items: Any) -> Iterator[Any]:
    """Iterate over the rows of a batch held in one array (the batch of a MultiBinary or MultiDiscrete).

    The batch of a Discrete is a MultiDiscrete, so its rows are numpy scalars; Gymnasium also accepts the
    MultiBinary itself here, whose batch is a Box.
    """
    if not isinstance(items, np.ndarray) or items.ndim == 0:
        raise InvalidTypeError(
            message(f"iterate over {space!r} needs a batch", expected="an array with a batch axis", got=show(items))
        )
    return iter(items)


def _prepare_checked(space: Space[Any], items: Sequence[Any], out: Any) -> Callable[[], npt.NDArray[Any]]:
    """Check every item; an error names the first that does not fit. Return the write of the checked values.

    The checked path of :data:`stack_into`, which copies one item per row into ``out`` (with ``same_kind``
    casting, as ``np.stack``) for the array spaces whose batch is a plain stack of their values.

    Example:
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
concatenate.register(Discrete, stack_into)


def _integers_fit(values: npt.NDArray[Any], dtype: np.dtype[Any]) -> bool:
    # Python ints arrive as int64; they belong in a uint8 batch when their values fit.
    if values.size == 0:
        return True
    if values.dtype.kind not in "iu" or dtype.kind not in "iu":
        return False
    info = np.iinfo(dtype)
    return bool(int(values.min()) >= info.min and int(values.max()) <= info.max)
