"""The operations on :class:`~vecspaces.spaces.Discrete` spaces.

Flat layout: a one-hot vector of length ``n`` in the space's dtype; value ``v`` sets entry ``v - start``.
Batched type: ``MultiDiscrete`` of shape ``(n_envs,)`` with ``nvec`` full of ``n`` and ``start`` full of
``start``; a batched value is a 1-D array of the space's dtype. There is no batched Discrete, so ``iterate``
on a Discrete is an error (iterate over its batched MultiDiscrete instead).
Shared memory: one :class:`~vecspaces._ops.memory_nodes.ArrayLeaf`, a scalar of the space's dtype.
Gymnasium: converted with its ``n``, ``start`` and dtype.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from copy import deepcopy
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces._kernels.arrays import array_layout, same_array_layout, stack_into
from vecspaces._ops.arguments import check_batch_size
from vecspaces._ops.batch import batch_differing_spaces, batch_space, concatenate, create_empty_array, iterate
from vecspaces._ops.flatten import (
    as_flat_array,
    flatdim,
    flatten,
    flatten_space,
    is_space_dtype_shape_equiv,
    unflatten,
)
from vecspaces._ops.gymnasium import register_converter
from vecspaces._ops.memory_nodes import layout_nodes
from vecspaces._ops.support import reason
from vecspaces._space import cached
from vecspaces.error import InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces.box import Box
from vecspaces.spaces.discrete import Discrete
from vecspaces.spaces.multi_discrete import MultiDiscrete

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
    try:
        rows = space._kernel_cache[_one_hot_rows]  # the hot path: cached(space, _one_hot_rows) without the call
    except KeyError:
        rows = cached(space, _one_hot_rows)
    if rows is None:
        one_hot = np.zeros(space._count, dtype=space.dtype)
        one_hot[index] = 1
        return one_hot
    return rows[index].copy()  # copying a ready one-hot vector beats filling a new one


def _one_hot_rows(space: Discrete) -> list[npt.NDArray[np.integer[Any]]] | None:
    """The one-hot vector of every value of a small space (None for a large one), for flatten to copy."""
    if space._count * space._count * space.dtype.itemsize > _ONE_HOT_BYTES:
        return None
    return [row.copy() for row in np.eye(space._count, dtype=space.dtype)]


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
    try:
        values = space._kernel_cache[_values]  # the hot path: cached(space, _values) without the call
    except KeyError:
        values = cached(space, _values)
    if values is None:
        return space._scalar_type(space._low + index)
    return values[index]


def _values(space: Discrete) -> list[np.integer[Any]] | None:
    """Every value of a small space as a numpy scalar (None for a large one), for unflatten to hand out.

    numpy scalars are immutable, so one instance per value can be handed out every time.
    """
    if space._count > _VALUES_LIMIT:
        return None
    return [space._scalar_type(space._low + i) for i in range(space._count)]


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


concatenate.register(Discrete, stack_into)


@register_converter(Discrete)
def _convert_discrete(space: Any, lib: Any, child: Callable[[Any, str], Any], seed: Any) -> Any:
    # int64 is the default of both libraries; Gymnasium's Discrete takes no dtype at all before 1.2.
    dtype = {} if space.dtype == np.int64 else {"dtype": space.dtype}
    return lib.Discrete(int(space.n), seed=seed, start=int(space.start), **dtype)
