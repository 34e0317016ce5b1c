"""The operations on :class:`~vecspaces.spaces.MultiDiscrete` spaces.

Flat layout: one one-hot block per entry of the value, in C order; entry ``i`` has a block of ``nvec[i]``
slots and value ``v`` sets slot ``v - start[i]`` of it. Length ``sum(nvec)``, in the space's dtype. Block
offsets are computed in int64, so narrow dtypes with large sums (``MultiDiscrete([101] * 4, dtype=int8)``)
flatten correctly.
Batched type: ``Box(low=start, high=start + nvec - 1)`` tiled to shape ``(n_envs, *nvec.shape)`` in the
space's dtype; a batched value is an array whose rows are the per-env values.
Shared memory: one :class:`~vecspaces._ops.memory_nodes.ArrayLeaf` of the space's dtype and shape.
Gymnasium: converted with its ``nvec``, ``start`` and dtype.
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
from vecspaces._space import cached
from vecspaces.error import InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces.box import Box
from vecspaces.spaces.multi_discrete import MultiDiscrete

# Up to this many entries, flatten and unflatten loop over the entries in Python rather than call numpy.
_PYTHON_LOOP_LIMIT = 24


class _FlattenPlan:
    """Where each entry's one-hot block lies in the flat vector, computed once per space (``cached``).

    Offsets are int64 whatever the space's dtype: int8 entries of 101 values sum past 127.
    """

    __slots__ = ("block_starts", "entries", "offsets", "size", "span", "start", "unsigned")

    def __init__(self, space: MultiDiscrete) -> None:
        self.offsets = np.concatenate(([0], np.cumsum(space.nvec.ravel(), dtype=np.int64)))
        self.block_starts = self.offsets[:-1]
        self.size = int(self.offsets[-1])
        # x - start read as unsigned is in range exactly when it is below nvec.
        self.unsigned = np.dtype(f"u{space.dtype.itemsize}")
        self.start = space.start.reshape(-1)
        self.span = space.nvec.reshape(-1).astype(self.unsigned)
        # For small spaces, flatten and unflatten walk the entries in Python, which beats numpy's per-call
        # overhead: per entry (low, high, shift, block_start, block_end), with flat index = value + shift.
        self.entries: list[tuple[int, int, int, int, int]] | None = None
        if space.nvec.size <= _PYTHON_LOOP_LIMIT:
            lows = self.start.tolist()
            counts = space.nvec.ravel().tolist()
            begins = self.block_starts.tolist()
            self.entries = [
                (low, low + count - 1, begin - low, begin, begin + count)
                for low, count, begin in zip(lows, counts, begins, strict=True)
            ]


@flatdim.register(MultiDiscrete)
def _flatdim_multi_discrete(space: MultiDiscrete) -> int:
    return cached(space, _FlattenPlan).size


@flatten_space.register(MultiDiscrete)
def _flatten_space_multi_discrete(space: MultiDiscrete) -> Box:
    return Box(low=0, high=1, shape=(cached(space, _FlattenPlan).size,), dtype=space.dtype)


@flatten.register(MultiDiscrete)
def _flatten_multi_discrete(space: MultiDiscrete, x: Any) -> npt.NDArray[np.integer[Any]]:
    if type(x) is not np.ndarray or x.dtype is not space.dtype:
        x = _checked_values(space, x)  # also takes arrays whose dtype equals the space's without being it
    elif x.shape != space._shape:
        raise InvalidValueError(
            message(
                f"flatten of {space!r} got a value of the wrong shape",
                expected=f"shape {space.shape}",
                got=show(x),
            )
        )
    try:
        plan = space._kernel_cache[_FlattenPlan]  # the hot path: cached(space, _FlattenPlan) without the call
    except KeyError:
        plan = cached(space, _FlattenPlan)
    one_hot = np.zeros(plan.size, dtype=space.dtype)
    entries = plan.entries
    if entries is not None:  # few entries: a Python loop beats numpy's per-call overhead
        for value, (low, high, shift, _, _) in zip(x.ravel().tolist(), entries, strict=True):
            if not low <= value <= high:
                raise _outside_error(space, x)
            one_hot[value + shift] = 1
        return one_hot
    # In the space's dtype x - start may wrap around, but read as unsigned it is exactly the distance from
    # start for every value in range, and a huge number for every value out of range.
    distance = (x.reshape(-1) - plan.start).view(plan.unsigned)
    if np.count_nonzero(distance < plan.span) != distance.size:  # count_nonzero: cheaper than all()
        raise _outside_error(space, x)
    one_hot[plan.block_starts + distance.astype(np.int64)] = 1
    return one_hot


def _outside_error(space: MultiDiscrete, x: Any) -> InvalidValueError:
    return InvalidValueError(
        message(
            f"flatten of {space!r} got a value outside the space",
            expected=f"values from start={space.start.tolist()} to {space._high.tolist()}",
            got=show(x),
        )
    )


def _checked_values(space: MultiDiscrete, x: Any) -> npt.NDArray[np.integer[Any]]:
    """Convert a value of another dtype (or a list) to the space's dtype after checking it is in range."""
    try:
        values = np.asarray(x)
    except (ValueError, TypeError, OverflowError):
        values = None
    if values is None or values.dtype.kind not in "biu":
        raise InvalidTypeError(
            message(
                f"flatten of {space!r} needs an array of integers",
                expected=f"a value of {space!r}",
                got=show(x),
            )
        )
    if values.shape != space.shape:
        raise InvalidValueError(
            message(
                f"flatten of {space!r} got a value of the wrong shape",
                expected=f"shape {space.shape}",
                got=show(x),
            )
        )
    # Compared in the wider of the two dtypes, before the cast that could wrap an out-of-range value around.
    if not ((space.start <= values).all() and (values <= space._high).all()):
        raise InvalidValueError(
            message(
                f"flatten of {space!r} got a value outside the space",
                expected=f"values from start={space.start.tolist()} to {space._high.tolist()}",
                got=show(x),
            )
        )
    return values.astype(space.dtype)


@unflatten.register(MultiDiscrete)
def _unflatten_multi_discrete(space: MultiDiscrete, x: Any) -> npt.NDArray[np.integer[Any]]:
    if type(x) is not np.ndarray or x.ndim != 1:
        x = as_flat_array(x, repr(space))
    try:
        plan = space._kernel_cache[_FlattenPlan]  # the hot path: cached(space, _FlattenPlan) without the call
    except KeyError:
        plan = cached(space, _FlattenPlan)
    offsets = plan.offsets
    if x.shape[0] != plan.size:
        raise InvalidValueError(
            message(
                f"unflatten of {space!r} got a vector of the wrong length",
                expected=f"{int(offsets[-1])} entries, one-hot blocks of sizes {space.nvec.ravel().tolist()}",
                got=show(x),
            )
        )
    hits = x.nonzero()[0]
    entries = plan.entries
    starts = plan.block_starts
    if entries is not None:  # few entries: check the common case (one hit per block) in Python
        if len(hits) == len(entries):
            found = []
            for hit, (_, _, shift, begin, end) in zip(hits.tolist(), entries, strict=True):
                if not begin <= hit < end:
                    break
                found.append(hit - shift)
            else:
                return np.array(found, dtype=space.dtype).reshape(space._shape)
        indices = _first_hit_per_block(space, plan, x)
    elif hits.size == starts.size and np.count_nonzero((hits >= starts) & (hits < offsets[1:])) == hits.size:
        indices = hits - starts  # the common case: exactly one nonzero entry per block
    else:
        indices = _first_hit_per_block(space, plan, x)
    values = indices.astype(space.dtype).reshape(space.shape)
    values += space.start
    return values


def _first_hit_per_block(space: MultiDiscrete, plan: _FlattenPlan, x: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
    """Index of the first nonzero entry of each block, as Discrete's unflatten does for one block."""
    offsets = plan.offsets
    total = plan.size
    positions = np.where(x != 0, np.arange(total), total)
    first = np.minimum.reduceat(positions, plan.block_starts)
    empty = np.flatnonzero(first >= offsets[1:])
    if empty.size:
        raise InvalidValueError(
            message(
                f"unflatten got a vector that is not a concatenation of one-hot vectors for {space!r}",
                expected="one nonzero entry in each block, as made by flatten",
                got=f"{show(x)} with no nonzero entry in block {int(empty[0])}",
                fix="only values made by flatten can be unflattened, not any sample of flatten_space",
            )
        )
    return first - plan.block_starts


is_space_dtype_shape_equiv.register(MultiDiscrete)(same_array_layout)


@batch_space.register(MultiDiscrete)
def _batch_space_multi_discrete(space: MultiDiscrete, n: int = 1) -> Box:
    n = check_batch_size("batch_space", n)
    repeats = (n,) + (1,) * space.nvec.ndim
    return Box(
        low=np.tile(space.start, repeats),
        high=np.tile(space._high, repeats),
        dtype=space.dtype,
        seed=deepcopy(space.np_random),
    )


@batch_differing_spaces.register(MultiDiscrete)  # dispatched on spaces[0], see vecspaces._ops.batch
def _batch_differing_spaces_multi_discrete(spaces: Sequence[MultiDiscrete]) -> Box:  # type: ignore[misc]
    first = spaces[0]
    for index, space in enumerate(spaces):
        if space.dtype != first.dtype:
            raise InvalidValueError(
                message(
                    "batch_differing_spaces needs MultiDiscrete spaces of one dtype",
                    expected=f"dtype {first.dtype}, as spaces[0]",
                    got=f"{space!r} of dtype {space.dtype}",
                    at=f"spaces[{index}]",
                )
            )
        if space.shape != first.shape:
            raise InvalidValueError(
                message(
                    "batch_differing_spaces needs MultiDiscrete spaces of one shape",
                    expected=f"nvec of shape {first.shape}, as spaces[0]",
                    got=repr(space),
                    at=f"spaces[{index}]",
                )
            )
    return Box(
        low=np.stack([space.start for space in spaces]),
        high=np.stack([space._high for space in spaces]),
        dtype=first.dtype,
        seed=deepcopy(first.np_random),
    )


concatenate.register(MultiDiscrete, stack_into)


iterate.register(MultiDiscrete, iterate_rows)


@create_empty_array.register(MultiDiscrete)
def _create_empty_array_multi_discrete(
    space: MultiDiscrete, n: int = 1, fn: Callable[..., npt.NDArray[Any]] = np.zeros
) -> npt.NDArray[Any]:
    return fn((n, *space.shape), dtype=space.dtype)


layout_nodes.register(MultiDiscrete, array_layout)


@register_converter(MultiDiscrete)
def _convert_multi_discrete(space: Any, lib: Any, child: Callable[[Any, str], Any], seed: Any) -> Any:
    return lib.MultiDiscrete(space.nvec.copy(), dtype=space.dtype, seed=seed, start=space.start.copy())
