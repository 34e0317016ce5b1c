"""The operations on :class:`~vecspaces.spaces.OneOf`.

Flat layout: a vector of ``1 + max(flatdim(branch))`` entries, ``[index, *flatten(branch, value), 0, ...]``:
the branch index, the branch's flat value, then zeros up to the full length. Every value uses one dtype, the
result type of all branches' flat dtypes (widened if needed so the largest index fits), whichever branch was
drawn. ``flatten_space`` is a ``Box`` of that length and dtype whose bounds at each position cover every
branch's bounds there and the zero padding, so ``flatten(space, x) in flatten_space(space)`` always holds.
(Gymnasium pads with the branch's first entry instead, so the two libraries' flat vectors differ after the end
of a short branch; ``unflatten`` reads the same values from both.)

When a branch has no fixed-size flat form (a Sequence or Graph inside), ``flatdim`` raises NotFlattenableError
and the structure is kept instead, as Tuple and Dict do: ``flatten`` gives ``(np.int64(index), flat_value)``
and ``flatten_space`` is the OneOf of the flattened branches. (Gymnasium raises for such spaces.)

Batched type: a ``Tuple`` of ``n`` independently seeded copies of the space; a batch of values is a ``tuple``
of ``(index, value)`` pairs. ``create_empty_array`` fills it with ``(np.int64(0), v)``, ``v`` being branch 0's
own empty-array placeholder, so a placeholder is a value of the space whenever branch 0's is (always for a
Text; for array spaces when their range contains 0), where Gymnasium gives ``()``.

Shared memory: one :class:`~vecspaces._ops.memory_nodes.OneOfLeaf` holding each branch's layout (an int64
index and a region sized for the largest branch); a OneOf with a branch of variable size is a
:class:`~vecspaces._ops.memory_nodes.VariableLeaf` as a whole, since its region would have no fixed size.

Gymnasium: converted branch by branch.

A branch of a custom kind with nothing registered fails the flatten family with its path, e.g.
``space[1]['a']: ...`` for branch 1 (prefixed by :func:`~vecspaces.spaces._container.relocate`), as
``OneOf.__getitem__`` indexes branches.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from vecspaces._kernels.custom import register_batched_as_copies
from vecspaces._ops.batch import batch_space, create_empty_array, iterate, register_concatenate
from vecspaces._ops.flatten import (
    as_flat_array,
    flat_dtype,
    flatdim,
    flatten,
    flatten_space,
    is_flattenable,
    is_space_dtype_shape_equiv,
    same_kind,
    unflatten,
)
from vecspaces._ops.gymnasium import register_converter
from vecspaces._ops.memory_nodes import LayoutNode, OneOfLeaf, Path, VariableLeaf, layout_nodes
from vecspaces._space import Space, cached
from vecspaces.error import (
    CustomSpaceError,
    Error,
    InvalidTypeError,
    InvalidValueError,
    NotFlattenableError,
    message,
    show,
)
from vecspaces.spaces._container import relocate
from vecspaces.spaces.box import Box
from vecspaces.spaces.oneof import OneOf

__all__: list[str] = []


@dataclass(frozen=True)
class _FlattenPlan:
    """What flatten and unflatten need to know about a OneOf whose branches all flatten to arrays."""

    size: int  # 1 + the longest branch's flatdim
    dtype: np.dtype[Any]  # the one dtype of every flat value
    branch_sizes: tuple[int, ...]
    branch_dtypes: tuple[np.dtype[Any], ...]  # each branch's own flat dtype, restored before unflattening it
    # Each branch's flatten and unflatten kernels, looked up once so that calls skip the dispatch.
    flatteners: tuple[Callable[..., Any], ...]
    unflatteners: tuple[Callable[..., Any], ...]


def _index_fits(dtype: np.dtype[Any], index: int) -> bool:
    if dtype.kind == "b":
        return index <= 1
    if dtype.kind in "iu":
        return index <= np.iinfo(dtype).max
    return index <= 2 ** (np.finfo(dtype).nmant + 1)  # floats hold whole numbers exactly up to here


# Branch indices as the np.int64 scalars values carry; numpy scalars are immutable, so they can be shared, and
# reusing them saves building one per call.
_INDICES = tuple(np.int64(index) for index in range(64))


def _as_index(index: int) -> np.int64:
    return _INDICES[index] if index < 64 else np.int64(index)


def _plan(space: OneOf[Any]) -> _FlattenPlan | None:
    """The flatten plan of ``space`` (computed once per space), or None when a branch has no fixed flat size."""
    try:
        plan: _FlattenPlan | None = space._kernel_cache[_build_plan]  # cached(...) without the call
    except KeyError:
        plan = cached(space, _build_plan)
    return plan


def _branch(error: Error, index: int, root: str = "space") -> Error:
    """``error``, raised by branch ``index``, with the branch's place prefixed to the path it names."""
    return relocate(error, f"[{index}]", root)


def _each_branch(space: OneOf[Any], operation: Callable[[Space[Any]], Any]) -> list[Any]:
    """``[operation(branch) for branch in space.spaces]``, a custom branch's error naming its path."""
    results: list[Any] = []
    try:
        for branch in space.spaces:
            results.append(operation(branch))
    except CustomSpaceError as error:
        raise _branch(error, len(results)) from None
    return results


def _build_plan(space: OneOf[Any]) -> _FlattenPlan | None:
    # Not space.is_np_flattenable, which raises a bare NotImplementedError for a custom branch that does not
    # say: such a branch is asked for its flatdim, which works or names the branch.
    if not all(is_flattenable(branch) for branch in space.spaces):
        return None
    branch_sizes = tuple(_each_branch(space, flatdim))
    branch_dtypes = tuple(np.dtype(flat.dtype) for flat in _each_branch(space, flatten_space))
    dtype = flat_dtype(list(branch_dtypes))
    largest_index = len(space.spaces) - 1
    if not _index_fits(dtype, largest_index):
        dtype = np.result_type(dtype, np.min_scalar_type(largest_index))
    flatteners = tuple(flatten.dispatch(type(branch)) for branch in space.spaces)
    unflatteners = tuple(unflatten.dispatch(type(branch)) for branch in space.spaces)
    return _FlattenPlan(1 + max(branch_sizes), dtype, branch_sizes, branch_dtypes, flatteners, unflatteners)


@flatdim.register(OneOf)
def _flatdim_oneof(space: OneOf[Any]) -> int:
    plan = _plan(space)
    if plan is None:
        index = next(i for i, branch in enumerate(space.spaces) if not is_flattenable(branch))
        raise NotFlattenableError(
            message(
                "OneOf has no fixed flat size",
                expected="branches that all flatten to fixed-size vectors",
                got=repr(space.spaces[index]),
                at=f"spaces[{index}]",
                fix="flatten and unflatten still work and keep the (index, value) structure",
            )
        )
    return plan.size


@flatten_space.register(OneOf)
def _flatten_space_oneof(space: OneOf[Any]) -> Space[Any]:
    plan = _plan(space)
    if plan is None:
        return OneOf(_each_branch(space, flatten_space))
    # Row b holds branch b's bounds followed by the zero padding its flat values carry.
    lows = np.zeros((len(space.spaces), plan.size), dtype=plan.dtype)
    highs = np.zeros_like(lows)
    for row, branch in enumerate(space.spaces):
        flat_branch = cast(Box, flatten_space(branch))  # a flattenable space flattens to a Box
        lows[row, 1 : 1 + plan.branch_sizes[row]] = flat_branch.low
        highs[row, 1 : 1 + plan.branch_sizes[row]] = flat_branch.high
    highs[:, 0] = len(space.spaces) - 1
    return Box(lows.min(axis=0), highs.max(axis=0), shape=(plan.size,), dtype=plan.dtype)


def _split(space: OneOf[Any], x: Any, operation: str) -> tuple[int, Any]:
    """Check that ``x`` is an ``(index, value)`` pair with a valid index."""
    expected = f"a tuple (index, value) with an integer index in [0, {len(space.spaces) - 1}]"
    if not isinstance(x, tuple) or len(x) != 2:
        raise InvalidTypeError(
            message(f"{operation} of a OneOf needs an (index, value) pair", expected=expected, got=show(x))
        )
    index = x[0]
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
        raise InvalidTypeError(
            message(f"{operation} of a OneOf got a non-integer index", expected=expected, got=show(index))
        )
    if not 0 <= index < len(space.spaces):
        raise InvalidValueError(
            message(f"{operation} of a OneOf got an index out of range", expected=expected, got=show(index))
        )
    return int(index), x[1]


@flatten.register(OneOf)
def _flatten_oneof(space: OneOf[Any], x: tuple[Any, Any]) -> Any:
    index, value = _split(space, x, "flatten")
    plan = _plan(space)
    try:  # costs nothing until something raises
        if plan is None:
            return _as_index(index), flatten(space.spaces[index], value)
        flat_value = plan.flatteners[index](space.spaces[index], value)
    except CustomSpaceError as error:
        raise _branch(error, index) from None
    out = np.zeros(plan.size, dtype=plan.dtype)
    out[0] = index
    out[1 : 1 + plan.branch_sizes[index]] = flat_value
    return out


@unflatten.register(OneOf)
def _unflatten_oneof(space: OneOf[Any], x: Any) -> tuple[np.int64, Any]:
    plan = _plan(space)
    if plan is None:
        index, flat_value = _split(space, x, "unflatten")
        try:
            return _as_index(index), unflatten(space.spaces[index], flat_value)
        except CustomSpaceError as error:
            raise _branch(error, index) from None
    if type(x) is not np.ndarray or x.ndim != 1:
        x = as_flat_array(x, "a OneOf")
    if len(x) != plan.size:
        raise InvalidValueError(
            message(
                "unflatten of a OneOf got a vector of the wrong length",
                expected=f"{plan.size} entries (the index, then the longest branch's flatdim)",
                got=show(x),
            )
        )
    first = x.item(0)
    try:
        index = int(first)
    except (ValueError, OverflowError):  # NaN or infinity
        index = -1
    if index != first or not 0 <= index < len(space.spaces):
        raise InvalidValueError(
            message(
                "unflatten of a OneOf got an invalid branch index",
                expected=f"a whole number in [0, {len(space.spaces) - 1}] as the first entry",
                got=show(x[0]),
            )
        )
    flat_value = x[1 : 1 + plan.branch_sizes[index]]
    if flat_value.dtype != plan.branch_dtypes[index]:
        flat_value = flat_value.astype(plan.branch_dtypes[index])
    try:
        return _as_index(index), plan.unflatteners[index](space.spaces[index], flat_value)
    except CustomSpaceError as error:
        raise _branch(error, index) from None


@is_space_dtype_shape_equiv.register(OneOf)
def _is_space_dtype_shape_equiv_oneof(space_1: OneOf[Any], space_2: Space[Any]) -> bool:
    other = same_kind(space_1, space_2, OneOf)
    if other is None or len(space_1.spaces) != len(other.spaces):
        return False
    space_2 = other
    checked = 0
    try:
        for branch_1, branch_2 in zip(space_1.spaces, space_2.spaces, strict=True):
            if not is_space_dtype_shape_equiv(branch_1, branch_2):
                return False
            checked += 1
    except Error as error:  # no values here: whatever a branch raises is about that branch
        raise _branch(error, checked, "space_1") from None
    return True


def _prepare_oneof(space: OneOf[Any], items: Sequence[Any], out: Any) -> Callable[[], tuple[Any, ...]]:
    batch = tuple(items)
    if isinstance(out, tuple) and len(out) != len(batch):
        raise InvalidValueError(
            message(
                "concatenate of a OneOf got a batch of the wrong size",
                expected=f"{len(out)} items, as many as out holds",
                got=f"{len(batch)} items",
            )
        )
    return lambda: batch


register_concatenate(OneOf, _prepare_oneof)
register_batched_as_copies(OneOf, concatenate_items=False)


@create_empty_array.register(OneOf)
def _create_empty_array_oneof(
    space: OneOf[Any], n: int = 1, fn: Callable[..., np.ndarray[Any, Any]] = np.zeros
) -> tuple[tuple[np.int64, Any], ...]:
    if n == 0:
        return ()
    first = space.spaces[0]
    # Branch 0's batch container, split into its n per-env values: each placeholder gets its own array.
    values = iterate(batch_space(first, n), create_empty_array(first, n, fn))
    return tuple((np.int64(0), value) for value in values)


@layout_nodes.register(OneOf)
def _layout_nodes_oneof(space: OneOf[Any], path: Path = ()) -> list[LayoutNode]:
    branches = tuple(tuple(layout_nodes(branch, (*path, 1))) for branch in space.spaces)
    if any(isinstance(node, VariableLeaf) for branch in branches for node in branch):
        return [VariableLeaf(path, space)]
    return [OneOfLeaf(path, branches)]


@register_converter(OneOf)
def _convert_oneof(space: Any, lib: Any, child: Callable[[Any, str], Any], seed: Any) -> Any:
    return lib.OneOf([child(sub, f"[{index}]") for index, sub in enumerate(space.spaces)], seed=seed)
