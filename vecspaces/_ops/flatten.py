"""Declarations of the flatten family.

The family is ``flatdim``, ``flatten_space``, ``flatten``, ``unflatten`` and ``is_space_dtype_shape_equiv``.

Each is a ``functools.singledispatch`` function on the type of its first argument. The implementations live
with the other operations of the same space, in ``vecspaces._kernels.<space>``; a user adds a custom space
with ``flatten.register(MySpace)`` exactly as with Gymnasium. Without one, the custom-space rule
(``vecspaces._ops.support``) applies: the declarations raise
:class:`~vecspaces.error.CustomSpaceNotImplementedError`, also a ``NotImplementedError`` as in Gymnasium.

When the custom space sits inside another space, the error names its full path, e.g.
``space['a'][1].feature_space: flatten has no implementation ...``: each composite kernel catches a child's
error and re-raises it with the child's place prefixed (:func:`~vecspaces.spaces._container.relocate`, as the
batching family does), so the path costs nothing until something fails. The places are a Dict's key
(``['a']``), a Tuple's or OneOf's position (``[1]``), and a Sequence's ``.feature_space`` or a Graph's
``.node_space`` / ``.edge_space``. The path starts at ``space`` (``space_1`` for
``is_space_dtype_shape_equiv``), the argument holding the custom space, also when ``flatten`` or ``unflatten``
fail on one: it is the space that lacks an implementation, not the value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import numpy.typing as npt

from vecspaces._ops.arguments import no_kernel
from vecspaces._ops.dispatch import convert_if_gymnasium

if TYPE_CHECKING:  # the same API: type checkers check registrations as for functools
    from functools import singledispatch
else:
    from vecspaces._ops.dispatch import singledispatch
from vecspaces._space import Space
from vecspaces.error import InvalidTypeError, message, show

S = TypeVar("S", bound=Space[Any])

__all__ = [
    "as_flat_array",
    "flat_dtype",
    "flatdim",
    "flatten",
    "flatten_space",
    "is_flattenable",
    "is_space_dtype_shape_equiv",
    "same_kind",
    "unflatten",
]


@singledispatch
def flatdim(space: Space[Any]) -> int:
    """Return the length of the flat vector that :func:`flatten` makes from a value of ``space``.

    Args:
        space: a space whose values flatten to one fixed-size vector (``space.is_np_flattenable``).

    Returns:
        The number of entries of the flattened vector.

    Raises:
        NotFlattenableError: the space contains a Sequence or a Graph, so its flat size is not fixed.
        CustomSpaceNotImplementedError: no implementation is registered for the space's type (a
            ``CustomSpaceError`` and a ``NotImplementedError``).

    Example:
        >>> from vecspaces.spaces import Box, Discrete, Dict
        >>> flatdim(Dict(position=Box(-1, 1, (3,)), gear=Discrete(5)))
        8
    """
    raise no_kernel("flatdim", space)


@singledispatch
def flatten_space(space: Space[Any]) -> Space[Any]:
    """Return the space that contains the flattened values of ``space``.

    For a flattenable space this is a 1-D ``Box`` of length ``flatdim(space)``. Sequence and Graph keep their
    structure with flattened parts, and so do the Dict and Tuple spaces that contain them.

    Args:
        space: the space to flatten.

    Returns:
        A space such that ``flatten(space, x) in flatten_space(space)`` for every ``x`` in ``space``.

    Raises:
        CustomSpaceNotImplementedError: no implementation is registered for the space's type (a
            ``CustomSpaceError`` and a ``NotImplementedError``).

    Example:
        >>> from vecspaces.spaces import Box, Discrete, Tuple
        >>> flatten_space(Tuple((Discrete(2), Box(0, 1, (2,)))))
        Box(0.0, 1.0, (4,), float64)
    """
    raise no_kernel("flatten_space", space)


@singledispatch
def flatten(space: Space[Any], x: Any) -> Any:
    """Flatten a value of ``space``.

    Discrete values become one-hot vectors, Text becomes padded character indices, composites are
    concatenated in their space's order; see the module docstring of each kernel for its layout.

    Args:
        space: the space ``x`` belongs to.
        x: the value to flatten.

    Returns:
        A 1-D array for flattenable spaces; a structure of flattened parts for Sequence and Graph.

    Raises:
        CustomSpaceNotImplementedError: no implementation is registered for the space's type (a
            ``CustomSpaceError`` and a ``NotImplementedError``).

    Example:
        >>> from vecspaces.spaces import Discrete
        >>> flatten(Discrete(4, start=1), 2)
        array([0, 1, 0, 0])
    """
    raise no_kernel("flatten", space)


@singledispatch
def unflatten(space: Space[Any], x: Any) -> Any:
    """Turn a value made by :func:`flatten` back into a value of ``space``.

    Only the outputs of ``flatten`` are accepted: a sample of ``flatten_space(space)`` is in general not a
    valid flattened value (for example it is not one-hot), and gives a ``ValueError``.

    Args:
        space: the space the value was flattened from.
        x: the flattened value.

    Returns:
        The value of ``space``.

    Raises:
        CustomSpaceNotImplementedError: no implementation is registered for the space's type (a
            ``CustomSpaceError`` and a ``NotImplementedError``).

    Example:
        >>> from vecspaces.spaces import Discrete
        >>> space = Discrete(4, start=1)
        >>> unflatten(space, flatten(space, 3))
        3
    """
    raise no_kernel("unflatten", space)


@singledispatch
def is_space_dtype_shape_equiv(space_1: Space[Any], space_2: Space[Any]) -> bool:
    """Return whether two spaces are of the same kind, shape and dtype, so their values batch together.

    Bounds may differ (two Boxes with different ``low``), but not the layout of the values.

    Args:
        space_1: a space.
        space_2: another space.

    Returns:
        True when values of both spaces can be stored in one batch.

    Raises:
        CustomSpaceNotImplementedError: no implementation is registered for ``space_1``'s type (a
            ``CustomSpaceError`` and a ``NotImplementedError``).

    Example:
        >>> from vecspaces.spaces import Box
        >>> is_space_dtype_shape_equiv(Box(0, 1, (2,)), Box(-5, 5, (2,)))
        True
    """
    raise no_kernel("is_space_dtype_shape_equiv", space_1, "space_1")


def same_kind(space_1: Space[Any], space_2: Any, kind: type[S]) -> S | None:
    """``space_2`` as a ``kind`` for ``is_space_dtype_shape_equiv`` (a Gymnasium one converted), or None if not one.

    Example:
        >>> from vecspaces.spaces import Discrete
        >>> same_kind(Discrete(2), Discrete(3), Discrete), same_kind(Discrete(2), "Discrete(3)", Discrete)
        (Discrete(3), None)
    """
    if not isinstance(space_2, kind):
        space_2 = convert_if_gymnasium(space_2, "is_space_dtype_shape_equiv", "space_2")
    return space_2 if isinstance(space_2, kind) else None


def is_flattenable(space: Space[Any]) -> bool:
    """Whether ``space`` flattens to one fixed-size vector, True when it does not say.

    A custom space that does not override ``is_np_flattenable`` is taken to be flattenable, so that the
    composites holding it ask its kernels, which either work (they are registered) or raise
    :class:`~vecspaces.error.CustomSpaceNotImplementedError` naming its path, rather than the property's
    bare ``NotImplementedError``.

    Example:
        >>> from vecspaces.spaces import Discrete, Sequence, Space
        >>> is_flattenable(Discrete(2)), is_flattenable(Sequence(Discrete(2))), is_flattenable(Space())
        (True, False, True)
    """
    try:
        return space.is_np_flattenable
    except NotImplementedError:  # a custom space that does not say: let its kernels answer
        return True


def flat_dtype(dtypes: list[np.dtype[Any]]) -> np.dtype[Any]:
    """The dtype of a concatenation of flattened parts: numpy's result type of the parts' dtypes."""
    return np.result_type(*dtypes)


def as_flat_array(x: Any, what: str) -> npt.NDArray[Any]:
    """Check that ``x`` is a 1-D numpy array, as ``unflatten`` of a flattenable space requires."""
    if not isinstance(x, np.ndarray) or x.ndim != 1:
        raise InvalidTypeError(
            message(f"unflatten of {what} needs a flat array", expected="a 1-D numpy array", got=show(x))
        )
    return x
