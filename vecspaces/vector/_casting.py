"""Exact casts of action arrays: to a dtype that holds every value given, or an error naming the one it would change.

A cast may round a float (0.1 as float32) but never changes a value otherwise: an integer dtype refuses
fractions, NaN, infinities and numbers out of its range, a float dtype refuses finite values that would overflow
to infinity, bool refuses all but 0 and 1. Errors name the value's index in the batch.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces.error import InvalidTypeError, InvalidValueError, message, show

__all__ = ["cast_exactly", "cast_objects", "lost_integer_digits"]

# The dtype kinds an action array may have: bool, signed and unsigned integers, floats.
_NUMERIC_KINDS = "biuf"
# Every float64 with a magnitude below this that holds a whole number holds it exactly; above it, a list of
# Python ints that numpy turned into float64 (as it does for [2**63 + 5, 1]) may have lost digits.
_EXACT_FLOAT_INTEGERS = 2.0**53

CHANGED_BY_CAST = "{what} has a value that changes when cast to {dtype}"
OVERFLOWS_CAST = "{what} has a value that overflows {dtype}"
WRONG_DTYPE = "{what} has the wrong dtype"


def cast_exactly(values: npt.NDArray[Any], dtype: npt.DTypeLike, what: str = "actions") -> npt.NDArray[Any]:
    """Cast ``values`` to ``dtype``, refusing any value the cast would change beyond float rounding.

    An integer dtype refuses fractions, NaN, infinities and numbers out of its range (a uint64 above the
    int64 maximum is refused rather than wrapped to a negative number); a float dtype refuses finite values
    that would overflow to infinity, while rounding (0.1 as float32) is fine; bool refuses all but 0 and 1.
    Values of ``dtype`` itself come back as they are, without a copy or a check.

    Args:
        values: the array to cast.
        dtype: the dtype to cast to.
        what: the name of ``values`` in error messages, a path such as ``"actions['gear']"``.

    Returns:
        ``values`` if it already has ``dtype``, else a new array of ``dtype`` with the same values.

    Raises:
        InvalidTypeError: ``values`` or ``dtype`` is not numeric (bool, integer or float).
        InvalidValueError: a value would change; the message names its index, the dtype and the value.

    Example:
        >>> cast_exactly(np.array([1.0, 2.0]), np.int64)
        array([1, 2])
        >>> cast_exactly(np.array([0, 2**63 + 5], np.uint64), np.int64)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        vecspaces.error.InvalidValueError: actions has a value that changes when cast to int64, ... at actions[1]
    """
    dtype = np.dtype(dtype)
    source = values.dtype
    if source == dtype:
        return values
    if source.kind not in _NUMERIC_KINDS or dtype.kind not in _NUMERIC_KINDS:
        raise InvalidTypeError(message(WRONG_DTYPE.format(what=what), expected=f"{dtype} values", got=show(values)))
    if np.can_cast(source, dtype, "safe"):
        return values.astype(dtype)  # every value is held exactly (or, for an int to a float, rounded)
    if dtype.kind == "f":
        largest = np.finfo(dtype).max
        # The common case first (float64 actions for a float32 Box, every step): a check that warns of nothing.
        if values.size and np.abs(values).max() <= largest:  # False for NaN and infinities: checked below
            return values.astype(dtype)
        with np.errstate(invalid="ignore", over="ignore"):
            cast = values.astype(dtype)
            bad = np.isinf(cast) & np.isfinite(values)
        if not bad.any():
            return cast
        problem, expected = OVERFLOWS_CAST, f"finite values of magnitude at most {float(largest):.6g}"
    elif dtype.kind == "b":
        bad = (values != 0) & (values != 1)
        problem, expected = CHANGED_BY_CAST, "0 or 1 (False or True)"
    else:
        low, high = _integer_range(dtype)
        # The common case first (int64 actions for a MultiBinary's int8, every step): two exact reductions.
        if source.kind in "iu" and values.size and low <= int(values.min()) and int(values.max()) <= high:
            return values.astype(dtype)
        bad = _outside_integers(values, np.iinfo(dtype))
        problem, expected = CHANGED_BY_CAST, f"whole numbers from {low} to {high}"
    if bad.any():
        index = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), bad.shape))
        raise _changed(problem, what, dtype, expected, values[index], index)
    return values.astype(dtype)


@functools.cache
def _integer_range(dtype: np.dtype[Any]) -> tuple[int, int]:
    """The smallest and largest value of the integer ``dtype``, as Python ints (``np.iinfo`` takes microseconds)."""
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _outside_integers(values: npt.NDArray[Any], info: np.iinfo[Any]) -> npt.NDArray[np.bool_]:
    """Where ``values`` (integers or floats) holds no whole number in ``info``'s range.

    Every comparison is exact: integers are compared with bounds of their own dtype (numpy 1.x compares uint64
    with int64 through float64), floats with float64 bounds, which are powers of two and so held exactly.
    """
    if values.dtype.kind == "f":
        low, above = np.float64(info.min), np.float64(int(info.max) + 1)
        return ~np.isfinite(values) | (np.trunc(values) != values) | (values < low) | (values >= above)
    if values.dtype.kind == "b":
        return np.zeros(values.shape, np.bool_)
    own = np.iinfo(values.dtype)
    bad = np.zeros(values.shape, np.bool_)
    if info.min > own.min:
        bad |= values < values.dtype.type(info.min)
    if info.max < own.max:
        bad |= values > values.dtype.type(info.max)
    return bad


def cast_objects(objects: npt.NDArray[Any], dtype: np.dtype[Any], path: str) -> npt.NDArray[Any]:
    """Convert an array of Python numbers exactly, one by one.

    The slow path for what numpy held as objects (ints beyond uint64) or as float64 (a list mixing ints too
    large for int64 with negative ones).
    """
    numbers: list[int | float] = []
    indices = list(np.ndindex(objects.shape))
    for index in indices:
        item = objects[index]
        if isinstance(item, (bool, np.bool_, int, np.integer)):
            numbers.append(int(item))
        elif isinstance(item, (float, np.floating)):
            numbers.append(float(item))
        else:
            raise InvalidTypeError(
                message(WRONG_DTYPE.format(what=path), expected=f"{dtype} values", got=show(item), at=_at(path, index))
            )
    if dtype.kind == "f":
        floats = []
        for index, number in zip(indices, numbers, strict=True):
            try:
                floats.append(float(number))
            except OverflowError:
                expected = f"finite values of magnitude at most {float(np.finfo(dtype).max):.6g}"
                raise _changed(OVERFLOWS_CAST, path, dtype, expected, number, index) from None
        return cast_exactly(np.array(floats, np.float64).reshape(objects.shape), dtype, path)
    low, high = (0, 1) if dtype.kind == "b" else (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
    expected = "0 or 1 (False or True)" if dtype.kind == "b" else f"whole numbers from {low} to {high}"
    for index, number in zip(indices, numbers, strict=True):
        exact = isinstance(number, int) or (np.isfinite(number) and float(number).is_integer())
        if not exact or not low <= int(number) <= high:
            raise _changed(CHANGED_BY_CAST, path, dtype, expected, objects[index], index)
    return np.array([int(number) for number in numbers], dtype=dtype).reshape(objects.shape)


def _changed(
    problem: str, what: str, dtype: np.dtype[Any], expected: str, value: Any, index: tuple[int, ...]
) -> InvalidValueError:
    return InvalidValueError(
        message(problem.format(what=what, dtype=dtype), expected=expected, got=show(value), at=_at(what, index))
    )


def _at(path: str, index: tuple[int, ...]) -> str:
    return path + "".join(f"[{i}]" for i in index)


def lost_integer_digits(array: npt.NDArray[Any], value: Any) -> npt.NDArray[Any] | None:
    """``value`` as an object array when numpy made ``array`` float64 from ints too large for its mantissa.

    numpy promotes a list mixing uint64-sized and negative (or plain) ints to float64, losing digits; the
    conversion is then redone from the list's own numbers.
    """
    finite = array[np.isfinite(array)]
    if not finite.size or np.abs(finite).max() < _EXACT_FLOAT_INTEGERS:
        return None
    try:
        objects = np.array(value, dtype=object)
    except (ValueError, TypeError):
        return None
    return objects if objects.shape == array.shape else None
