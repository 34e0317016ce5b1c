"""Operations on :class:`~vecspaces.spaces.Sequence` spaces.

Flat layout: none of fixed size (``flatdim`` raises :class:`~vecspaces.error.NotFlattenableError`).
``flatten`` keeps the sequence and flattens its items: a tuple of flattened items, or with ``stack=True`` the
stack of the flattened items (an array of shape ``(length, flatdim(feature))`` for a flattenable feature
space). ``flatten_space`` is ``Sequence(flatten_space(feature), stack=stack)``.

Batched type: a ``Tuple`` of ``n`` independently seeded copies of the space; a batch is a tuple of ``n``
sequences. ``create_empty_array`` gives ``n`` empty sequences: ``()`` or, with ``stack=True``, a stack of
length 0 (where Gymnasium gives stacks of length 1, which are not empty and may hold values outside the
feature space).

Shared memory: a :class:`~vecspaces._ops.memory_nodes.VariableLeaf` (no fixed size; a worker pool sends the
value through its pipe).

Gymnasium: converted with its feature space and ``stack``.

A feature space of a custom kind with nothing registered fails the flatten family with its path, e.g.
``space.feature_space['a']: ...`` (:data:`FEATURE`, prefixed by :func:`~vecspaces.spaces._container.relocate`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from vecspaces._kernels.custom import register_batched_as_copies
from vecspaces._ops.batch import batch_space, create_empty_array
from vecspaces._ops.flatten import flatdim, flatten, flatten_space, is_space_dtype_shape_equiv, same_kind, unflatten
from vecspaces._ops.gymnasium import register_converter
from vecspaces._ops.memory_nodes import LayoutNode, Path, VariableLeaf, layout_nodes
from vecspaces._ops.support import reason
from vecspaces._space import Space, cached
from vecspaces.error import (
    CustomSpaceError,
    Error,
    InvalidTypeError,
    NotFlattenableError,
    message,
    show,
)
from vecspaces.spaces._container import relocate
from vecspaces.spaces._stacking import empty_stack, stack_items, unstack
from vecspaces.spaces.sequence import Sequence

# The feature space's place in the path of an error about it.
FEATURE = ".feature_space"


class _StackPlan:
    """What flattening a stacked Sequence needs, computed once per space (``cached``).

    That is the flat feature space and its batched form, which splits a flat stack into rows.
    """

    def __init__(self, space: Sequence) -> None:
        self.flat_space = flatten_space(space.feature_space)
        self.batch_flat_space = batch_space(self.flat_space, 1)


@flatdim.register(Sequence)
def _flatdim_sequence(space: Sequence) -> int:
    raise NotFlattenableError(
        message(
            f"flatdim is undefined for a Sequence: {reason('flatdim', 'Sequence')}",
            expected="a space with a fixed-size flat form",
            got=repr(space),
            fix="flatten_space(space) gives a Sequence of flattened items instead",
        )
    )


@flatten_space.register(Sequence)
def _flatten_space_sequence(space: Sequence) -> Sequence:
    try:
        flat_feature = flatten_space(space.feature_space)
    except CustomSpaceError as error:
        raise relocate(error, FEATURE, "space") from None
    return Sequence(flat_feature, stack=space.stack)


ItemKernels = tuple[Space[Any], Callable[..., Any], Callable[..., Any]]


def _item_kernels(space: Sequence) -> ItemKernels:
    """``(feature space, its flatten kernel, its unflatten kernel)``, looked up once per feature space."""
    return cached(space, _look_up_item_kernels, _same_feature)


def _look_up_item_kernels(space: Sequence) -> ItemKernels:
    feature = space.feature_space
    return (feature, flatten.dispatch(type(feature)), unflatten.dispatch(type(feature)))


def _same_feature(kernels: ItemKernels, space: Sequence) -> bool:
    return kernels[0] is space.feature_space  # False once the feature space was replaced


@flatten.register(Sequence)
def _flatten_sequence(space: Sequence, x: Any) -> Any:
    feature, flatten_item, _ = _item_kernels(space)
    # The try costs nothing until something raises (Python >= 3.11); only a custom feature space's error gets
    # the feature's path: the others are about the value.
    try:
        if not space.stack:
            if type(x) is not tuple:
                _check_tuple("flatten", space, x)
            return tuple([flatten_item(feature, item) for item in x])
        flat_items = [flatten_item(feature, item) for item in unstack(feature, space.stacked_feature_space, x)]
        return stack_items(cached(space, _StackPlan).flat_space, flat_items)
    except CustomSpaceError as error:
        raise relocate(error, FEATURE, "space") from None


@unflatten.register(Sequence)
def _unflatten_sequence(space: Sequence, x: Any) -> Any:
    feature, _, unflatten_item = _item_kernels(space)
    try:  # as in _flatten_sequence
        if not space.stack:
            if type(x) is not tuple:
                _check_tuple("unflatten", space, x)
            return tuple([unflatten_item(feature, item) for item in x])
        plan = cached(space, _StackPlan)
        rows = unstack(plan.flat_space, plan.batch_flat_space, x)
        return stack_items(feature, [unflatten_item(feature, row) for row in rows])
    except CustomSpaceError as error:
        raise relocate(error, FEATURE, "space") from None


def _check_tuple(operation: str, space: Sequence, x: Any) -> None:
    if not isinstance(x, (tuple, list)):
        raise InvalidTypeError(
            message(
                f"{operation} of {space!r} needs a tuple of items",
                expected="a tuple (or list) of feature values",
                got=show(x),
            )
        )


@is_space_dtype_shape_equiv.register(Sequence)
def _is_space_dtype_shape_equiv_sequence(space_1: Sequence, space_2: Space[Any]) -> bool:
    other = same_kind(space_1, space_2, Sequence)
    if other is None or space_1.stack != other.stack:
        return False
    space_2 = other
    try:
        return is_space_dtype_shape_equiv(space_1.feature_space, space_2.feature_space)
    except Error as error:  # no values here: whatever the feature space raises is about it
        raise relocate(error, FEATURE, "space_1") from None


register_batched_as_copies(Sequence)


@create_empty_array.register(Sequence)
def _create_empty_array_sequence(
    space: Sequence, n: int = 1, fn: Callable[..., np.ndarray[Any, Any]] = np.zeros
) -> tuple[Any, ...]:
    if space.stack:
        return tuple(empty_stack(space.feature_space, fn) for _ in range(n))
    return tuple(() for _ in range(n))


@layout_nodes.register(Sequence)
def _layout_nodes_sequence(space: Sequence, path: Path = ()) -> list[LayoutNode]:
    return [VariableLeaf(path, space)]


@register_converter(Sequence)
def _convert_sequence(space: Any, lib: Any, child: Callable[[Any, str], Any], seed: Any) -> Any:
    return lib.Sequence(child(space.feature_space, ".feature_space"), seed=seed, stack=space.stack)
