"""Checks of the operations' arguments, and the errors for arguments no implementation takes.

Shared by the declarations in ``vecspaces._ops``, the kernels in ``vecspaces._kernels`` and the vector
utilities, so that one kind of mistake reads the same whichever function caught it. It lives with the
declarations rather than beside ``vecspaces.error`` because the errors are about what the operations accept:
a space (:class:`~vecspaces._space.Space`, with a hint for a Gymnasium one) and a registered
implementation (with the reason from the support table, ``vecspaces._ops.support``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from vecspaces._ops.gymnasium import is_gymnasium_space
from vecspaces._ops.support import CUSTOM, UNSUPPORTED
from vecspaces._space import Space
from vecspaces.error import (
    CustomSpaceError,
    CustomSpaceNotImplementedError,
    InvalidTypeError,
    InvalidValueError,
    message,
    show,
)

__all__ = [
    "FROM_GYMNASIUM",
    "as_items",
    "check_batch_size",
    "no_kernel",
    "not_a_space",
    "out_array_problem",
]

# The fix an error suggests for a Gymnasium space given where a vecspaces space belongs.
FROM_GYMNASIUM = "convert it first with vecspaces.spaces.from_gymnasium(space)"

# Gymnasium raises NotImplementedError for a custom space in these, and CustomSpaceError in the vector
# utilities; no_kernel raises an error that is both for them.
_FLATTEN_FAMILY = frozenset({"flatdim", "flatten_space", "flatten", "unflatten", "is_space_dtype_shape_equiv"})


def not_a_space(operation: str, value: object, argument: str = "space", at: str = "") -> InvalidTypeError:
    """The error for a non-space given to ``operation`` as ``argument``, with a hint for a Gymnasium space.

    Args:
        operation: the function that was called.
        value: what it was given.
        argument: the argument's name.
        at: where ``value`` is inside the argument, e.g. ``spaces[2]``.

    Example:
        >>> print(not_a_space("batch_space", None))
        batch_space was given a non-space as space, expected a vecspaces Space, got None (NoneType)
    """
    gymnasium = is_gymnasium_space(value)
    return InvalidTypeError(
        message(
            f"{operation} was given a non-space as {argument}",
            expected="a vecspaces Space",
            got=f"the Gymnasium space {value!r}" if gymnasium else show(value),
            at=at,
            fix=FROM_GYMNASIUM if gymnasium else "",
        )
    )


def no_kernel(operation: str, space: object, argument: str = "space") -> Exception:
    """Return the error for calling ``operation`` on ``space`` when no kernel is registered for its type.

    A non-space argument gets an :class:`InvalidTypeError` naming ``argument``, with a hint to convert a
    Gymnasium space (:func:`not_a_space`); a space of an unknown kind gets a :class:`CustomSpaceError` that
    says how to register an implementation, which for the flatten family is a
    :class:`CustomSpaceNotImplementedError` (also a ``NotImplementedError``, as in Gymnasium).

    Args:
        operation: the name of the operation called.
        space: what it was called on.
        argument: the name of the operation's argument that holds ``space``.

    Returns:
        The error, to be raised by the caller.

    Example:
        >>> from vecspaces.spaces import Space
        >>> type(no_kernel("flatdim", Space())).__name__, type(no_kernel("batch_space", Space())).__name__
        ('CustomSpaceNotImplementedError', 'CustomSpaceError')
        >>> print(no_kernel("flatdim", None))
        flatdim was given a non-space as space, expected a vecspaces Space, got None (NoneType)
    """
    if not isinstance(space, Space):
        return not_a_space(operation, space, argument)
    kind = f"{type(space).__module__}.{type(space).__qualname__}"
    unsupported = UNSUPPORTED.get((operation, CUSTOM))
    why = f" ({unsupported.reason})" if unsupported is not None else ""
    kind_error = CustomSpaceNotImplementedError if operation in _FLATTEN_FAMILY else CustomSpaceError
    return kind_error(
        message(
            f"{operation} has no implementation for this kind of space{why}",
            expected="a space with a registered implementation",
            got=f"{space!r} of type {kind}",
            fix=f"register one with @{operation}.register({type(space).__name__})",
        )
    )


def check_batch_size(operation: str, n: object) -> int:
    """Check that ``n`` is an integer batch size, 0 or more (as Gymnasium, a batch may be empty), and return it.

    Example:
        >>> check_batch_size("batch_space", np.int64(0))
        0
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise InvalidValueError(message(f"{operation} batch size is invalid", expected="an int >= 0", got=show(n)))
    return int(n)


def as_items(items: Any) -> Sequence[Any]:
    """``items`` of ``concatenate`` as a list or tuple (as given when it is one), or an error naming the argument.

    Example:
        >>> as_items(iter([1, 2]))
        [1, 2]
    """
    if isinstance(items, (list, tuple)):  # subclasses too, e.g. a namedtuple
        return items
    try:
        return list(items)
    except TypeError as error:
        raise InvalidTypeError(
            message(
                "concatenate items is not iterable",
                expected="an iterable of values of the space, one per env",
                got=show(items),
            )
        ) from error


def out_array_problem(space: Space[Any], out: Any) -> Exception | None:
    """The error for an ``out`` of concatenate that is not a writeable numpy array, or None if it is one.

    Example:
        >>> from vecspaces.spaces import Discrete
        >>> print(out_array_problem(Discrete(2), [0, 0]))  # doctest: +ELLIPSIS
        concatenate of Discrete(2) needs an array to write into, expected a numpy array made by ...
    """
    if not isinstance(out, np.ndarray):
        return InvalidTypeError(
            message(
                f"concatenate of {space!r} needs an array to write into",
                expected="a numpy array made by create_empty_array",
                got=show(out),
            )
        )
    if not out.flags.writeable:
        return InvalidValueError(
            message(f"concatenate of {space!r} got a read-only out", expected="a writeable array", got=show(out))
        )
    return None
