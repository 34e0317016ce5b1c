"""Validation of the ``mask`` and ``probability`` arguments of ``Space.sample``, shared by every space.

A mask is an integer or bool array (Gymnasium asks for int8; any integer or bool dtype is accepted) whose
entries say which values may be drawn. A probability is a float array in [0, 1] that sums to 1. Invalid input
raises :class:`~vecspaces.error.InvalidTypeError` or :class:`~vecspaces.error.InvalidValueError` naming the
argument, never an ``AssertionError``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces.error import InvalidTypeError, InvalidValueError, message, show

__all__ = ["check_mask", "check_probability", "reject_both"]


def reject_both(owner: str, mask: Any, probability: Any) -> None:
    """Raise if both ``mask`` and ``probability`` were given to ``owner``'s ``sample``."""
    if mask is not None and probability is not None:
        raise InvalidValueError(
            message(
                f"{owner}.sample got both a mask and a probability",
                expected="at most one of them",
                got=f"mask={show(mask)}, probability={show(probability)}",
            )
        )


def check_mask(
    mask: Any, *, owner: str, shape: tuple[int, ...], allowed: Collection[int] = (0, 1), name: str = "mask"
) -> npt.NDArray[np.int8]:
    """Return ``mask`` as an int8 array after checking its type, shape and values.

    Args:
        mask: the mask given by the caller.
        owner: the space, for the message, e.g. ``"Discrete(3)"``.
        shape: the required shape.
        allowed: the values an entry may take.
        name: how the argument is called in the message, e.g. ``"mask[1]"``.

    Example:
        >>> check_mask(np.array([1, 0], dtype=np.int8), owner="Discrete(2)", shape=(2,))
        array([1, 0], dtype=int8)
    """
    expected = f"an int8 array of shape {shape} with values in {sorted(allowed)}"
    if not isinstance(mask, np.ndarray):
        raise InvalidTypeError(message(f"{owner}.sample {name} is not an array", expected=expected, got=show(mask)))
    if mask.dtype.kind not in "biu":
        raise InvalidTypeError(
            message(f"{owner}.sample {name} has a non-integer dtype", expected=expected, got=show(mask))
        )
    if mask.shape != shape:
        raise InvalidValueError(
            message(f"{owner}.sample {name} has the wrong shape", expected=expected, got=show(mask))
        )
    if not np.isin(mask, list(allowed)).all():
        raise InvalidValueError(
            message(f"{owner}.sample {name} has a value out of range", expected=expected, got=show(mask))
        )
    return mask.astype(np.int8, copy=False)


def check_probability(
    probability: Any,
    *,
    owner: str,
    shape: tuple[int, ...],
    sums_to_one: bool = True,
    name: str = "probability",
) -> npt.NDArray[np.float64]:
    """Return ``probability`` as a float64 array after checking its type, shape, range and sum.

    Args:
        probability: the probabilities given by the caller.
        owner: the space, for the message.
        shape: the required shape.
        sums_to_one: whether the entries must sum to 1 (False for per-bit probabilities of MultiBinary).
        name: how the argument is called in the message.

    Example:
        >>> check_probability(np.array([0.25, 0.75]), owner="Discrete(2)", shape=(2,))
        array([0.25, 0.75])
    """
    expected = f"a float array of shape {shape} with values in [0, 1]" + (" summing to 1" if sums_to_one else "")
    if not isinstance(probability, np.ndarray):
        raise InvalidTypeError(
            message(f"{owner}.sample {name} is not an array", expected=expected, got=show(probability))
        )
    if probability.dtype.kind != "f":
        raise InvalidTypeError(
            message(f"{owner}.sample {name} has a non-float dtype", expected=expected, got=show(probability))
        )
    if probability.shape != shape:
        raise InvalidValueError(
            message(f"{owner}.sample {name} has the wrong shape", expected=expected, got=show(probability))
        )
    probability = probability.astype(np.float64, copy=False)
    if not ((probability >= 0) & (probability <= 1)).all():  # NaN fails both comparisons
        raise InvalidValueError(
            message(f"{owner}.sample {name} has a value outside [0, 1]", expected=expected, got=show(probability))
        )
    if sums_to_one and not np.isclose(probability.sum(), 1.0):
        raise InvalidValueError(
            message(
                f"{owner}.sample {name} does not sum to 1",
                expected=expected,
                got=f"{show(probability)} summing to {probability.sum():g}",
            )
        )
    return probability
