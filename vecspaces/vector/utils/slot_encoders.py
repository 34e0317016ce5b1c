"""What a shared-memory write checks: one encoder per layout node, made once when the layout is compiled.

An encoder checks one value (the part of the written value at its node's path) and returns what to copy into
the node's slots; a container's encoder only checks. :class:`~vecspaces.vector.utils.shared_layout.SharedLayout`
chains them into the write program and :meth:`~vecspaces.vector.utils.shared_batch.SharedBatch.write` runs it.

What a write checks is the *layout*, not membership of the space: shapes must match exactly, numbers are
cast to the slot's dtype with numpy's unsafe casting (as Gymnasium's ``np.asarray(value, dtype)``), strings
must fit and use the space's characters, dicts must have exactly the space's keys and tuples its length.
A fraction, a NaN or an infinity for an integer slot is refused (:class:`~vecspaces.error.InvalidValueError`):
numpy would store 2.7 as 2 and a NaN as an arbitrary number, without a word (Gymnasium's shared memory does).
Casts numpy may warn about (a float out of an integer dtype's range, an overflow into float16) are done while
checking, so even where warnings are errors (as under this project's pytest settings) a write is all or nothing.
Bounds (``Box.low``, ``Discrete.n``, ``Text.min_length``) are not checked: that is ``space.contains``, too
slow for every step of a large observation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces._ops.memory_nodes import ArrayLeaf, DictNode, OneOfLeaf, Path, TextLeaf, TupleNode, format_path
from vecspaces.error import Error, InvalidTypeError, InvalidValueError, message, show

__all__ = [
    "Arrays",
    "BranchPacker",
    "Encoder",
    "ValueProblem",
    "array_encoder",
    "dict_checker",
    "no_slots",
    "oneof_encoder",
    "text_encoder",
    "tuple_checker",
]

Arrays = Sequence[Any]  # what a leaf's encoder gives: one array (or number) per slot of the leaf
Encoder = Callable[[Any], Arrays]
# Checks one value of a OneOf branch and copies it into a region (a branch's own one-value layout).
BranchPacker = Callable[[Any, npt.NDArray[np.uint8]], None]


class ValueProblem(Exception):
    """A value does not fit the layout; the caller turns it into a public error that names the env."""

    def __init__(self, error_type: type[Error], problem: str, expected: str, got: str, path: Path) -> None:
        super().__init__(problem)
        self.error_type = error_type
        self.problem = problem
        self.expected = expected
        self.got = got
        self.path = path

    def public(self, subject: str, root: str) -> Error:
        """The error to raise: ``subject`` names the value (``obs for env 1``), ``root`` starts its path."""
        return self.error_type(
            message(
                f"{subject} {self.problem}",
                expected=self.expected,
                got=self.got,
                at=format_path(root, self.path),
            )
        )


def no_slots(value: Any) -> Arrays:
    """The encoder of a leaf the buffer does not hold (a variable-size leaf): nothing to check or copy."""
    return ()


def array_encoder(leaf: ArrayLeaf) -> Encoder:
    """The encoder of an array leaf: a numeric array of exactly the leaf's shape, cast to its dtype."""
    shape, path, dtype = leaf.shape, leaf.path, leaf.dtype
    # Unsafe casting between numbers, as Gymnasium's np.asarray(value, dtype); complex only into complex.
    kinds = "biufc" if dtype.kind == "c" else "biuf"
    integer_slot = dtype.kind in "iu"
    expected = f"an array of shape {shape} and a numeric dtype (stored as {dtype})"
    # Per source dtype: whether numpy may warn while casting it to the slot's dtype (filled on first use).
    may_warn: dict[np.dtype[Any], bool] = {}
    ndarray = np.ndarray

    def convert(value: Any) -> npt.NDArray[Any]:
        try:
            array = np.asarray(value)
        except (TypeError, ValueError) as error:  # ragged nested lists
            raise ValueProblem(InvalidValueError, "is not an array", expected, show(value), path) from error
        source = array.dtype
        if source.kind not in kinds:
            raise ValueProblem(InvalidTypeError, "has the wrong dtype", expected, show(value), path)
        if array.shape != shape:
            raise ValueProblem(InvalidValueError, "has the wrong shape", expected, show(array), path)
        if source == dtype:
            return array
        warns = may_warn.get(source)
        if warns is None:
            # Unsafe casts from or to floats may warn (NaN or out of range into an integer, overflow into
            # float16); integer to integer casts wrap silently.
            unsafe = not np.can_cast(source, dtype, "safe")
            warns = may_warn[source] = unsafe and (source.kind in "fc" or dtype.kind in "fc")
        if not warns:
            return array  # cast by the copy, which cannot warn
        if integer_slot and source.kind == "f" and not _whole_numbers(array):
            raise ValueProblem(
                InvalidValueError,
                "has a fraction, a NaN or an infinity, which an integer slot cannot hold",
                f"whole numbers (stored as {dtype})",
                show(array),
                path,
            )
        # Cast here, in the check phase, so that a warning numpy gives (an error where warnings are errors)
        # comes before any slot is written, and the copy itself cannot warn.
        return array.astype(dtype)

    def encode(value: Any) -> Arrays:
        if type(value) is ndarray and value.dtype is dtype and value.shape == shape:
            return (value,)
        return (convert(value),)

    return encode


def _whole_numbers(array: npt.NDArray[np.floating[Any]]) -> bool:
    """Whether every value of a float array is a whole number (NaN and infinities are not)."""
    return bool(np.isfinite(array).all() and (np.trunc(array) == array).all())


def text_encoder(leaf: TextLeaf) -> Encoder:
    """The encoder of a Text leaf: a string that fits, as character indices padded with ``len(characters)``."""
    path, max_length, padding = leaf.path, leaf.max_length, len(leaf.characters)
    codes = {char: code for code, char in enumerate(leaf.characters)}
    alphabet = "".join(leaf.characters)
    expected = f"a str of at most {max_length} characters from {alphabet!r}"

    def encode(value: Any) -> Arrays:
        if not isinstance(value, str):
            raise ValueProblem(InvalidTypeError, "is not a string", expected, show(value), path)
        if len(value) > max_length:
            raise ValueProblem(
                InvalidValueError, "is too long", expected, f"{len(value)} characters: {show(value)}", path
            )
        encoded = np.full(max_length, padding, dtype=np.int32)
        try:
            encoded[: len(value)] = [codes[char] for char in value]
        except KeyError as error:
            raise ValueProblem(
                InvalidValueError,
                f"has a character outside the charset ({error.args[0]!r})",
                expected,
                show(value),
                path,
            ) from None
        return (encoded,)

    return encode


def dict_checker(node: DictNode) -> Encoder:
    """The check of a Dict node: a mapping with exactly the space's keys."""
    keys, path = node.keys, node.path
    key_set = frozenset(keys)
    expected = f"a dict with the keys {list(keys)}"

    def check(value: Any) -> Arrays:
        if not isinstance(value, Mapping):
            raise ValueProblem(InvalidTypeError, "is not a dict", expected, show(value), path)
        if value.keys() != key_set:
            missing = [key for key in keys if key not in value]
            extra = [key for key in value if key not in key_set]
            problem = "has missing keys" if missing else "has unexpected keys"
            got = f"keys {list(value)}" + (f", missing {missing}" if missing else "")
            got += f", unexpected {extra}" if extra else ""
            raise ValueProblem(InvalidValueError, problem, expected, got, path)
        return ()

    return check


def tuple_checker(node: TupleNode) -> Encoder:
    """The check of a Tuple node: a tuple (or list) of the space's length."""
    length, path = node.length, node.path
    expected = f"a tuple of {length} elements"

    def check(value: Any) -> Arrays:
        if not isinstance(value, (tuple, list)):
            raise ValueProblem(InvalidTypeError, "is not a tuple", expected, show(value), path)
        if len(value) != length:
            raise ValueProblem(InvalidValueError, "has the wrong length", expected, f"{len(value)} elements", path)
        return ()

    return check


def oneof_encoder(leaf: OneOfLeaf, branches: tuple[BranchPacker, ...], region_size: int) -> Encoder:
    """The encoder of a OneOf leaf: an ``(index, value)`` pair, as the index and the branch's packed region.

    Args:
        leaf: the OneOf leaf.
        branches: per branch, the function that checks a value of it and packs it into a region.
        region_size: the bytes of the region, enough for the largest branch.
    """
    path, count = leaf.path, len(branches)
    expected = f"a pair (index, value) with 0 <= index < {count}"

    def encode(value: Any) -> Arrays:
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise ValueProblem(InvalidTypeError, "is not an (index, value) pair", expected, show(value), path)
        index, inner = value
        if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)):
            raise ValueProblem(InvalidTypeError, "index is not an int", expected, show(index), (*path, 0))
        if not 0 <= index < count:
            raise ValueProblem(InvalidValueError, "index is out of range", expected, show(index), (*path, 0))
        # The branch is packed into a private region first, so a bad branch value writes nothing shared.
        region = np.zeros(region_size, dtype=np.uint8)
        branches[index](inner, region)
        return (np.int64(index), region)

    return encode
