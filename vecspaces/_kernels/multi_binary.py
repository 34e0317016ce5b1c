"""The operations on :class:`~vecspaces.spaces.MultiBinary` spaces.

Flat layout: the value's entries in C order, int8, length ``prod(shape)``.
Batched type: ``Box(0, 1, (n_envs, *shape), int8)``; a batched value is an int8 array whose rows are the
per-env values.
Shared memory: one :class:`~vecspaces._ops.memory_nodes.ArrayLeaf`, int8 of the space's shape.
Gymnasium: converted with its ``n``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from copy import deepcopy
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces._kernels.arrays import array_layout, iterate_rows, same_array_layout, stack_into
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
from vecspaces._space import Space
from vecspaces.error import InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces.box import Box
from vecspaces.spaces.multi_binary import MultiBinary

_INT8 = np.dtype(np.int8)


@flatdim.register(MultiBinary)
def _flatdim_multi_binary(space: MultiBinary) -> int:
    return space._size


@flatten_space.register(MultiBinary)
def _flatten_space_multi_binary(space: MultiBinary) -> Box:
    return Box(low=0, high=1, shape=(space._size,), dtype=np.int8)


@flatten.register(MultiBinary)
def _flatten_multi_binary(space: MultiBinary, x: Any) -> npt.NDArray[np.int8]:
    # The common case first, as cheaply as possible: an int8 array of the right shape. The result is a copy, as
    # Gymnasium's: the flat value never aliases the caller's array.
    try:
        if x.dtype is _INT8:
            if x.ndim == 1 and len(x) == space._vector_size:  # a 1-D space: no shape tuple to build and compare
                return x.copy()
            if x.shape == space._shape:
                return x.ravel().copy()  # for several axes, twice as fast as ndarray.flatten
    except AttributeError:
        pass
    x = as_array(space, x)
    if x.shape != space._shape:
        raise InvalidValueError(
            message(
                f"flatten of {space!r} got a value of the wrong shape",
                expected=f"shape {space.shape}",
                got=show(x),
            )
        )
    return x.flatten()


@unflatten.register(MultiBinary)
def _unflatten_multi_binary(space: MultiBinary, x: Any) -> npt.NDArray[np.int8]:
    if x.__class__ is np.ndarray and x.dtype is _INT8 and x.ndim == 1:  # the common case: what flatten makes
        if len(x) == space._vector_size:
            return x.view()  # a 1-D space: the same as reshape, for less
    else:
        if type(x) is not np.ndarray or x.ndim != 1:
            x = as_flat_array(x, repr(space))
        if x.dtype is not _INT8:
            x = x.astype(np.int8)
    try:
        return x.reshape(space._shape)
    except ValueError:  # reshape checks the length for us; this is the rare path
        raise InvalidValueError(
            message(
                f"unflatten of {space!r} got a vector of the wrong length",
                expected=f"a vector of length {space._size}",
                got=show(x),
            )
        ) from None


is_space_dtype_shape_equiv.register(MultiBinary)(same_array_layout)


@batch_space.register(MultiBinary)
def _batch_space_multi_binary(space: MultiBinary, n: int = 1) -> Box:
    n = check_batch_size("batch_space", n)
    return Box(low=0, high=1, shape=(n, *space.shape), dtype=np.int8, seed=deepcopy(space.np_random))


@batch_differing_spaces.register(MultiBinary)  # dispatched on spaces[0], see vecspaces._ops.batch
def _batch_differing_spaces_multi_binary(spaces: Sequence[MultiBinary]) -> Box:  # type: ignore[misc]
    shape = spaces[0].shape
    for index, space in enumerate(spaces):
        if space.shape != shape:
            raise InvalidValueError(
                message(
                    "batch_differing_spaces needs MultiBinary spaces of one shape",
                    expected=f"shape {shape}, as spaces[0]",
                    got=repr(space),
                    at=f"spaces[{index}]",
                )
            )
    return Box(low=0, high=1, shape=(len(spaces), *shape), dtype=np.int8, seed=deepcopy(spaces[0].np_random))


concatenate.register(MultiBinary, stack_into)


iterate.register(MultiBinary, iterate_rows)


@create_empty_array.register(MultiBinary)
def _create_empty_array_multi_binary(
    space: MultiBinary, n: int = 1, fn: Callable[..., npt.NDArray[Any]] = np.zeros
) -> npt.NDArray[Any]:
    return fn((n, *space.shape), dtype=np.int8)


layout_nodes.register(MultiBinary, array_layout)


def as_array(space: Space[Any], x: Any) -> npt.NDArray[Any]:
    """Return ``x`` as an array of ``space.dtype`` for flatten, raising InvalidTypeError if it is not numeric.

    Example:
        >>> as_array(MultiBinary(2), [0, 1])
        array([0, 1], dtype=int8)
    """
    try:
        return np.asarray(x, dtype=space.dtype)
    except (ValueError, TypeError, OverflowError):
        raise InvalidTypeError(
            message(f"flatten of {space!r} needs an array", expected=f"a value of {space!r}", got=show(x))
        ) from None


@register_converter(MultiBinary)
def _convert_multi_binary(space: Any, lib: Any, child: Callable[[Any, str], Any], seed: Any) -> Any:
    return lib.MultiBinary(space.n, seed=seed)
