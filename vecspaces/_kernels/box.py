"""The operations on :class:`~vecspaces.spaces.Box`.

Flat layout: the value's entries in C order, as a 1-D array of the box's dtype with ``prod(shape)`` entries.
``flatten_space`` is a Box of the flattened bounds and the same dtype (and boundedness flags).

Batched type: a Box of shape ``(n, *shape)`` and the same dtype; a batch of values is one array whose row
``i`` is the ``i``-th value. ``iterate`` gives numpy scalars for a batch of shape-``()`` boxes, as
Gymnasium does, although their samples are 0-d arrays. ``batch_differing_spaces`` stacks the bounds of boxes
that share a shape and dtype. ``concatenate`` checks every item before it writes into ``out``.

Shared memory: one :class:`~vecspaces._ops.memory_nodes.ArrayLeaf` of the box's dtype and shape.

Gymnasium: converted with its bounds, dtype and boundedness flags.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from copy import deepcopy
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray

from vecspaces._kernels.arrays import array_layout, same_array_layout
from vecspaces._ops.arguments import check_batch_size, out_array_problem
from vecspaces._ops.batch import (
    batch_differing_spaces,
    batch_space,
    concatenate,
    create_empty_array,
    iterate,
    stacked_concatenate,
)
from vecspaces._ops.flatten import flatdim, flatten, flatten_space, is_space_dtype_shape_equiv, unflatten
from vecspaces._ops.gymnasium import register_converter
from vecspaces._ops.memory_nodes import layout_nodes
from vecspaces.error import InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces.box import Box

__all__: list[str] = []

_ndarray = np.ndarray  # a module global: one lookup less in the hot paths


@flatdim.register(Box)
def _flatdim_box(space: Box) -> int:
    return math.prod(space.shape)


@flatten_space.register(Box)
def _flatten_space_box(space: Box) -> Box:
    return Box._from_checked(
        space.low.flatten(),
        space.high.flatten(),
        space.bounded_below.flatten(),
        space.bounded_above.flatten(),
    )


@flatten.register(Box)
def _flatten_box(space: Box, x: Any) -> NDArray[Any]:
    if x.__class__ is _ndarray:  # the common case, checked as cheaply as possible
        flat = x.ravel()  # x itself or a view, unless x is not contiguous
        if flat.dtype is space.dtype and len(flat) == space._size:
            # Always a new array, as in Gymnasium: changing the flat vector must not change the observation.
            return flat.copy() if flat is x or flat.base is not None else flat
    try:
        flat = np.array(x, dtype=space.dtype).reshape(-1)  # np.array copies, so this is never a view of x
    except (ValueError, TypeError, OverflowError) as error:
        raise InvalidValueError(
            message(f"flatten of {space!r} got a value it cannot convert", expected="a numeric array", got=show(x))
        ) from error
    if flat.size != math.prod(space.shape):
        raise InvalidValueError(
            message(
                f"flatten of {space!r} got a value of the wrong size",
                expected=f"an array of shape {space.shape}",
                got=show(x),
            )
        )
    return flat


@unflatten.register(Box)
def _unflatten_box(space: Box, x: Any) -> NDArray[Any]:
    if x.__class__ is _ndarray and x.dtype is space.dtype:  # the common case: no conversion
        if x.ndim == 1 and len(x) == space._vector_size:
            return x.view()  # a 1-D box: the same as reshape, for less
        try:
            return x.reshape(space._shape)
        except ValueError:
            pass  # the wrong size: explained below
    try:
        return np.asarray(x, dtype=space.dtype).reshape(space._shape)
    except (ValueError, TypeError, OverflowError) as error:
        raise InvalidValueError(
            message(
                f"unflatten of {space!r} got a value that does not fit",
                expected=f"a numeric array of {math.prod(space.shape)} entries",
                got=show(x),
            )
        ) from error


is_space_dtype_shape_equiv.register(Box)(same_array_layout)


@batch_space.register(Box)
def _batch_space_box(space: Box, n: int = 1) -> Box:
    n = check_batch_size("batch_space", n)

    def stack(array: NDArray[Any]) -> NDArray[Any]:
        return np.broadcast_to(array, (n, *array.shape)).copy()

    return Box._from_checked(
        stack(space.low),
        stack(space.high),
        stack(space.bounded_below),
        stack(space.bounded_above),
        seed=deepcopy(space.np_random),
    )


@batch_differing_spaces.register(Box)  # dispatched on spaces[0], see vecspaces._ops.batch
def _batch_differing_spaces_box(spaces: Sequence[Box]) -> Box:  # type: ignore[misc]
    first = spaces[0]
    for index, space in enumerate(spaces):
        if space.dtype != first.dtype or space.shape != first.shape:
            raise InvalidValueError(
                message(
                    "batch_differing_spaces needs Boxes of one shape and dtype",
                    expected=f"shape {first.shape} and dtype {first.dtype} (those of spaces[0])",
                    got=f"shape {space.shape} and dtype {space.dtype}",
                    at=f"spaces[{index}]",
                )
            )
    return Box._from_checked(
        np.stack([space.low for space in spaces]),
        np.stack([space.high for space in spaces]),
        np.stack([space.bounded_below for space in spaces]),
        np.stack([space.bounded_above for space in spaces]),
        seed=deepcopy(first.np_random),
    )


def _prepare_checked(space: Box, items: Sequence[Any], out: Any) -> Callable[[], NDArray[Any]]:
    """Check every item (and ``out``) before anything is written; name the first that does not fit."""
    problem = _concatenate_problem(space, items, out)
    if problem is not None:
        raise problem
    if not items and out is not None:
        return lambda: out
    if out is not None:
        # Casts numpy may warn about (float64 overflowing float16) happen here, before anything is written, so
        # the write cannot fail even where warnings are errors.
        items = [_cast_if_unsafe(item, out.dtype) for item in items]
    return partial(np.stack, items, axis=0, out=out)


def _cast_if_unsafe(item: Any, dtype: np.dtype[Any]) -> Any:
    array = np.asarray(item)
    if array.dtype == dtype or np.can_cast(array.dtype, dtype, "safe"):
        return item
    return array.astype(dtype)


concatenate.register(Box, stacked_concatenate(_prepare_checked, "_concatenate_box"))


def _concatenate_problem(space: Box, items: Sequence[Any], out: Any) -> Exception | None:
    """The error for the first of ``items`` (or ``out``) that does not fit, or None when they all do."""
    # out=None stacks into a new array, as np.stack does in Gymnasium.
    if out is not None:
        problem = _out_problem(space, items, out)
        if problem is not None:
            return problem
    elif not items:
        return InvalidValueError(
            message(
                f"concatenate of {space!r} without out needs items",
                expected="at least one item, or an out array made by create_empty_array",
                got="no items",
            )
        )
    for index, item in enumerate(items):
        try:
            item_shape = np.shape(item)
        except ValueError:  # a ragged list
            item_shape = None
        if item_shape != space.shape:
            return InvalidValueError(
                message(
                    f"concatenate of {space!r} got an item of the wrong shape",
                    expected=f"shape {space.shape}",
                    got=f"shape {item_shape}" if item_shape is not None else show(item),
                    at=f"items[{index}]",
                )
            )
        item_dtype = np.asarray(item).dtype
        if out is not None and not np.can_cast(item_dtype, out.dtype, "same_kind"):
            return InvalidTypeError(
                message(
                    f"concatenate of {space!r} got an item of a dtype out cannot hold",
                    expected=f"a dtype that casts to {out.dtype}",
                    got=f"dtype {item_dtype}",
                    at=f"items[{index}]",
                )
            )
    return None


def _out_problem(space: Box, items: Sequence[Any], out: Any) -> Exception | None:
    problem = out_array_problem(space, out)
    if problem is not None:
        return problem
    if out.ndim == 0 or out.shape[1:] != space.shape:
        return InvalidValueError(
            message(
                f"concatenate of {space!r} got an out array of the wrong shape",
                expected=f"shape {_batched_shape(space.shape)}",
                got=show(out),
            )
        )
    if len(items) != len(out):
        return InvalidValueError(
            message(
                f"concatenate of {space!r} got the wrong number of items",
                expected=f"{len(out)} items (the length of out)",
                got=f"{len(items)} items",
            )
        )
    return None


def _batched_shape(shape: tuple[int, ...]) -> str:
    return "(n" + "".join(f", {dim}" for dim in shape) + (")" if shape else ",)")


@iterate.register(Box)
def _iterate_box(space: Box, items: Any) -> Iterator[Any]:
    if type(items) is _ndarray and items.ndim > 1 and space._shape:
        return iter(items)  # the common case: rows are views of the batch
    if space.shape == ():
        raise InvalidTypeError(
            message(
                "iterate needs a batched space",
                expected="a Box with a batch axis, as made by batch_space",
                got=f"{space!r}",
            )
        )
    try:
        return iter(items)
    except TypeError as error:
        raise InvalidTypeError(
            message(
                f"iterate over {space!r} got a value it cannot iterate",
                expected="a batched array",
                got=show(items),
            )
        ) from error


@create_empty_array.register(Box)
def _create_empty_array_box(space: Box, n: int = 1, fn: Callable[..., np.ndarray[Any, Any]] = np.zeros) -> NDArray[Any]:
    return fn((n, *space.shape), dtype=space.dtype)


layout_nodes.register(Box, array_layout)


@register_converter(Box)
def _convert_box(space: Any, lib: Any, child: Callable[[Any, str], Any], seed: Any) -> Any:
    low = _bound(space.low, space.bounded_below, -np.inf)
    high = _bound(space.high, space.bounded_above, np.inf)
    box = lib.Box(low, high, space.shape, space.dtype, seed=seed)
    # Left: an integer Box unbounded on only some entries. Gymnasium wraps an infinity inside an int64 bound
    # array to the dtype minimum, so the dtype limits go in and the flags are copied.
    if not np.array_equal(box.bounded_below, space.bounded_below):
        box.bounded_below = space.bounded_below.copy()
    if not np.array_equal(box.bounded_above, space.bounded_above):
        box.bounded_above = space.bounded_above.copy()
    return box


def _bound(values: NDArray[Any], bounded: NDArray[np.bool_], infinity: float) -> NDArray[Any] | float:
    # An integer Box stores an infinite bound as the dtype's limit, which would count as bounded if passed
    # back; a side unbounded everywhere is given back as the infinity the user gave.
    if values.dtype.kind != "f" and values.size and not np.any(bounded):
        return infinity
    return values.copy()
