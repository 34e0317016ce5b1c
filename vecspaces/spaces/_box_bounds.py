"""What the :class:`~vecspaces.spaces.Box` constructor checks: the dtype, the shape and the bounds.

The bounds are read without writing into the caller's arrays and rejected when the dtype cannot hold them (see
the ``vecspaces.spaces.box`` module docstring for how this differs from Gymnasium).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from vecspaces.error import InvalidTypeError, InvalidValueError, message, show

__all__ = ["as_number_array", "cast_bound", "check_dtype", "check_order", "check_shape", "infer_shape"]

_DTYPE_EXPECTED = "a numpy integer, floating or bool dtype"
_SHAPE_EXPECTED = "a tuple of non-negative ints"
_BOUND_EXPECTED = "a number, or an array or (nested) list of numbers"


def check_dtype(dtype: object) -> np.dtype[Any]:
    """The Box dtype: a numpy integer, floating or bool dtype, else an error.

    Example:
        >>> check_dtype("float32")
        dtype('float32')
    """
    if dtype is None:
        raise InvalidValueError(
            message("Box dtype must be given", expected=_DTYPE_EXPECTED, got="None", fix="e.g. dtype=np.float32")
        )
    try:
        box_dtype = np.dtype(dtype)  # type: ignore[call-overload]
    except Exception as error:
        raise InvalidTypeError(
            message("Box dtype is not a dtype", expected=_DTYPE_EXPECTED, got=show(dtype))
        ) from error
    if box_dtype.kind not in "iufb":
        raise InvalidValueError(message("Box dtype is not numeric", expected=_DTYPE_EXPECTED, got=f"dtype {box_dtype}"))
    return box_dtype


def check_shape(shape: object) -> tuple[int, ...]:
    """The Box shape as a tuple of non-negative ints, else an error.

    Example:
        >>> check_shape([2, np.int64(3)])
        (2, 3)
    """
    if not isinstance(shape, Iterable) or isinstance(shape, (str, bytes)):
        raise InvalidTypeError(message("Box shape is not a tuple", expected=_SHAPE_EXPECTED, got=show(shape)))
    dims = tuple(shape)
    for dim in dims:
        if isinstance(dim, (bool, np.bool_)) or not isinstance(dim, (int, np.integer)):
            raise InvalidTypeError(
                message("Box shape has a non-integer entry", expected=_SHAPE_EXPECTED, got=show(shape))
            )
        if dim < 0:
            raise InvalidValueError(
                message("Box shape has a negative entry", expected=_SHAPE_EXPECTED, got=show(shape))
            )
    return tuple(int(dim) for dim in dims)


def _is_array_like(value: object) -> bool:
    return isinstance(value, (np.ndarray, list, tuple))


def as_number_array(value: object, name: str) -> NDArray[Any]:
    """The bound as an array, without copying an ndarray (it is only read from)."""
    if not _is_array_like(value) and not isinstance(value, (int, float, np.number, np.bool_)):
        raise InvalidValueError(message(f"Box {name} is not a number", expected=_BOUND_EXPECTED, got=show(value)))
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as error:  # ragged nested lists
        raise InvalidValueError(
            message(f"Box {name} is not a rectangular array", expected=_BOUND_EXPECTED, got=show(value))
        ) from error
    if array.dtype.kind in "fO" and not isinstance(value, np.ndarray):
        array = _exact_python_ints(value, name, array)
    if array.dtype.kind not in "biuf":
        raise InvalidValueError(
            message(f"Box {name} has non-numeric entries", expected=_BOUND_EXPECTED, got=show(value))
        )
    if array.dtype.kind == "f" and np.isnan(array).any():
        raise InvalidValueError(message(f"Box {name} contains NaN", expected=_BOUND_EXPECTED, got=show(value)))
    return array


def _exact_python_ints(value: object, name: str, array: NDArray[Any]) -> NDArray[Any]:
    """Keep Python ints exact: numpy turns ``[0, 2**64 - 1]`` into float64 and ``2**64`` into objects."""
    items = np.array(value, dtype=object)
    if not items.size or not all(type(item) is int for item in items.flat):
        return array
    smallest, largest = min(items.flat), max(items.flat)
    if smallest >= -(2**63) and largest < 2**63:
        return items.astype(np.int64)
    if smallest >= 0 and largest < 2**64:
        return items.astype(np.uint64)
    raise InvalidValueError(
        message(
            f"Box {name} is outside the range of every numpy integer dtype",
            expected="integers in [-2**63, 2**63 - 1], or in [0, 2**64 - 1]",
            got=show(value),
        )
    )


def infer_shape(low: object, high: object, low_raw: NDArray[Any], high_raw: NDArray[Any]) -> tuple[int, ...]:
    """The shape of a Box built without ``shape``: that of the array bounds, or ``(1,)`` for two numbers."""
    low_is_array, high_is_array = _is_array_like(low), _is_array_like(high)
    if low_is_array and high_is_array:
        if low_raw.shape != high_raw.shape:
            raise InvalidValueError(
                message(
                    "Box low and high have different shapes",
                    expected="bounds of one shape, or an explicit shape= they both broadcast to",
                    got=f"low of shape {low_raw.shape} and high of shape {high_raw.shape}",
                )
            )
        return low_raw.shape
    if low_is_array:
        return low_raw.shape
    if high_is_array:
        return high_raw.shape
    return (1,)


def _dtype_range(dtype: np.dtype[Any]) -> tuple[int | float, int | float]:
    if dtype.kind == "f":
        limit = float(np.finfo(dtype).max)
        return -limit, limit
    if dtype.kind == "b":
        return 0, 1
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def cast_bound(
    raw: NDArray[Any], name: str, shape: tuple[int, ...], dtype: np.dtype[Any]
) -> tuple[NDArray[Any], NDArray[np.bool_]]:
    """Return the bound as a new array of ``shape`` and ``dtype``, and per entry whether it is finite.

    ``raw`` is only read, never written to.
    """
    try:
        np.broadcast_to(raw, shape)
    except ValueError as error:
        raise InvalidValueError(
            message(
                f"Box {name} does not fit the shape",
                expected=f"a number or an array that broadcasts to {shape}",
                got=show(raw),
            )
        ) from error
    minimum, maximum = _dtype_range(dtype)
    values = np.empty(shape, dtype)
    if raw.dtype.kind != "f":
        if raw.size and (int(raw.min()) < minimum or int(raw.max()) > maximum):
            raise _out_of_range(name, raw, dtype, minimum, maximum)
        np.copyto(values, raw, casting="unsafe")
        return values, np.ones(shape, np.bool_)
    finite, unbounded = _check_float_bound(raw, name, dtype, minimum, maximum)
    if dtype.kind == "f":
        np.copyto(values, raw, casting="unsafe")
    else:
        np.copyto(values, np.where(finite, raw, 0.0), casting="unsafe")
        if unbounded.any():
            values[np.broadcast_to(unbounded, shape)] = minimum if name == "low" else maximum
    return values, np.broadcast_to(~unbounded, shape).copy()


def _check_float_bound(
    raw: NDArray[Any], name: str, dtype: np.dtype[Any], minimum: float, maximum: float
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Check a float bound against ``dtype``; return per entry whether it is finite and whether it is unbounded."""
    # An infinity on the bound's own side (low=-inf, high=inf) means unbounded; on the other side it is a
    # value like any other, which only a float dtype can hold.
    unbounded = np.isneginf(raw) if name == "low" else np.isposinf(raw)
    finite = np.isfinite(raw)
    if not finite.all():
        if dtype.kind != "f" and not (finite | unbounded).all():
            raise _out_of_range(name, raw, dtype, minimum, maximum)
        if dtype.kind in "ub" and unbounded.any():
            raise InvalidValueError(
                message(
                    f"Box {name} is infinite but a {dtype} box cannot be unbounded",
                    expected=f"finite bounds for dtype {dtype}, or a signed integer or float dtype",
                    got=show(raw),
                )
            )
    finite_values = raw[finite] if not finite.all() else raw
    if finite_values.size:
        if dtype.kind == "f":
            # As Python floats: numpy would compare a float32 bound with float64's limits by casting them down.
            out_of_range = float(finite_values.min()) < float(minimum) or float(finite_values.max()) > float(maximum)
        elif dtype.kind == "b":
            out_of_range = not np.isin(finite_values, (0, 1)).all()
        else:  # truncated toward zero like numpy's cast; the dtype's limits are exact powers of two in float
            truncated = np.trunc(finite_values)
            out_of_range = truncated.min() < float(minimum) or truncated.max() >= float(maximum + 1)
        if out_of_range:
            raise _out_of_range(name, raw, dtype, minimum, maximum)
    return finite, unbounded


def _out_of_range(
    name: str, raw: NDArray[Any], dtype: np.dtype[Any], minimum: float, maximum: float
) -> InvalidValueError:
    return InvalidValueError(
        message(
            f"Box {name} is outside the range of dtype {dtype}",
            expected=f"values in [{minimum}, {maximum}]" + (", or -inf/inf" if dtype.kind in "fi" else ""),
            got=show(raw),
        )
    )


def check_order(low: NDArray[Any], high: NDArray[Any]) -> None:
    """Refuse ``low > high`` anywhere, naming the first such index."""
    above = low > high
    if above.any():
        index = tuple(int(i) for i in np.argwhere(above)[0])
        raise InvalidValueError(
            message(
                "Box low is above high",
                expected="low <= high everywhere",
                got=f"low={low[index]!r} and high={high[index]!r}",
                at=f"index {index}",
            )
        )
