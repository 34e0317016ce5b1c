"""The operations on :class:`~vecspaces.spaces.Text`.

Flat layout: an ``int32`` vector of ``max_length`` entries. Entry ``i`` is the index (in ``character_list``)
of the string's ``i``-th character; the entries past the end of the string hold the padding value
``len(character_list)``. ``flatten_space`` is ``Box(0, len(charset), (max_length,), int32)``. Indices depend
on the charset's order, which ``Text.__eq__`` ignores.

Batched type: a ``Tuple`` of ``n`` independently seeded copies of the space; a batch of values is a ``tuple``
of ``str``. ``concatenate`` checks that every item is a string that fits ``max_length`` and the charset.

Placeholders. ``create_empty_array`` fills its tuple with ``characters[0] * min_length``, the shortest string
of the smallest character (``characters`` is the sorted charset), as Gymnasium does. Zeroed shared memory
reads as ``character_list[0] * max_length`` instead, also as Gymnasium: index 0 is the first character of
``character_list`` (the flat encoding's order), and a zero-filled slot holds no padding. The two differ
(``Text(3, min_length=2, charset="zab")``: ``'aa'`` and ``'zzz'``); both are values of the space. We keep
Gymnasium's two placeholders rather than make them agree: agreeing would break parity with Gymnasium on one
of the two functions (its ``create_empty_array``, or what its zeroed shared memory reads as), and making
zeroed memory read otherwise would also mean writing into every buffer when it is allocated or bound.

Shared memory: one :class:`~vecspaces._ops.memory_nodes.TextLeaf` over ``character_list`` (the flat layout).

Gymnasium: converted with its lengths and its charset in ``character_list`` order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces._kernels.custom import register_batched_as_copies
from vecspaces._ops.batch import create_empty_array, register_concatenate
from vecspaces._ops.flatten import (
    as_flat_array,
    flatdim,
    flatten,
    flatten_space,
    is_space_dtype_shape_equiv,
    same_kind,
    unflatten,
)
from vecspaces._ops.gymnasium import register_converter
from vecspaces._ops.memory_nodes import LayoutNode, Path, TextLeaf, layout_nodes
from vecspaces._space import Space, cached
from vecspaces.error import InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces.box import Box
from vecspaces.spaces.text import Text

__all__: list[str] = []

_INT32 = np.dtype(np.int32)

# Up to this many characters, flatten writes them one by one: cheaper than numpy converting a list.
_SHORT = 16


@flatdim.register(Text)
def _flatdim_text(space: Text) -> int:
    return space.max_length


@flatten_space.register(Text)
def _flatten_space_text(space: Text) -> Box:
    return Box(0, len(space.character_list), shape=(space.max_length,), dtype=np.int32)


@flatten.register(Text)
def _flatten_text(space: Text, x: str) -> npt.NDArray[np.int32]:
    if not isinstance(x, str):
        raise InvalidTypeError(message("flatten of a Text needs a string", expected="a str", got=show(x)))
    if len(x) > space.max_length:
        raise InvalidValueError(
            message(
                "flatten of a Text got a string that is too long",
                expected=f"at most {space.max_length} characters",
                got=f"{len(x)} characters in {show(x)}",
            )
        )
    codes = space._char_codes
    try:
        padding = space._kernel_cache[_padding]  # the hot path: cached(space, _padding) without the call
    except KeyError:
        padding = cached(space, _padding)
    out = padding.copy()
    try:
        if len(x) <= _SHORT:
            for position, char in enumerate(x):
                out[position] = codes[char]
        else:
            out[: len(x)] = [codes[char] for char in x]
    except KeyError as error:
        raise InvalidValueError(
            message(
                "flatten of a Text got a character outside the charset",
                expected=f"characters of {space.characters!r}",
                got=f"{error.args[0]!r} in {show(x)}",
            )
        ) from None
    return out


def _padding(space: Text) -> npt.NDArray[np.int32]:
    """The flat form of "", which flatten copies and fills in: every slot holds the padding index."""
    padding = np.full(space.max_length, len(space.character_list), dtype=np.int32)
    padding.flags.writeable = False
    return padding


@unflatten.register(Text)
def _unflatten_text(space: Text, x: npt.NDArray[Any]) -> str:
    if type(x) is np.ndarray and x.dtype is _INT32 and x.ndim == 1 and len(x) == space.max_length:
        codes = x.tolist()  # the common case, as made by flatten: nothing to convert
    else:
        codes = _checked_codes(space, x)
    chars = space._char_list
    padding = len(chars)
    if codes and min(codes) < 0:
        raise InvalidValueError(
            message(
                "unflatten of a Text got a negative character index",
                expected=f"indices in [0, {padding}], {padding} meaning padding",
                got=show(x),
            )
        )
    return "".join([chars[code] for code in codes if code < padding])


def _checked_codes(space: Text, x: Any) -> list[int]:
    """The character indices of a flat Text value that is not an int32 vector, after checking them."""
    x = as_flat_array(x, "a Text")
    if x.shape[0] != space.max_length:
        raise InvalidValueError(
            message(
                "unflatten of a Text got a vector of the wrong length",
                expected=f"{space.max_length} character indices",
                got=show(x),
            )
        )
    if x.dtype.kind not in "iu":
        if x.dtype.kind != "f":
            raise InvalidTypeError(
                message(
                    "unflatten of a Text needs numeric character indices",
                    expected="an integer (or whole float) vector",
                    got=show(x),
                )
            )
        # A OneOf holding a Text flattens in a shared dtype, which may be float; indices must still be whole.
        if not np.array_equal(x, np.floor(x)):
            raise InvalidValueError(
                message(
                    "unflatten of a Text needs integer character indices",
                    expected="a vector of whole numbers",
                    got=show(x),
                )
            )
        x = x.astype(np.int64)
    codes: list[int] = x.tolist()
    return codes


@is_space_dtype_shape_equiv.register(Text)
def _is_space_dtype_shape_equiv_text(space_1: Text, space_2: Space[Any]) -> bool:
    other = same_kind(space_1, space_2, Text)
    return other is not None and space_1.max_length == other.max_length and space_1.character_set == other.character_set


def _prepare_text(space: Text, items: Sequence[Any], out: Any) -> Callable[[], tuple[str, ...]]:
    """The check phase of concatenate: every item must be a str that fits the space's length and charset.

    The minimum length is not checked, as no array space's bounds are: that is ``space.contains``.
    """
    batch = tuple(items)
    max_length, allowed = space.max_length, space.character_set
    expected = f"a str of at most {max_length} characters from {space.characters!r}"
    for index, item in enumerate(batch):
        if not isinstance(item, str):
            raise InvalidTypeError(
                message(
                    "concatenate of a Text got a non-string", expected=expected, got=show(item), at=f"items[{index}]"
                )
            )
        if len(item) > max_length:
            raise InvalidValueError(
                message(
                    "concatenate of a Text got a string that is too long",
                    expected=expected,
                    got=f"{len(item)} characters in {show(item)}",
                    at=f"items[{index}]",
                )
            )
        if not allowed.issuperset(item):
            unknown = next(char for char in item if char not in allowed)
            raise InvalidValueError(
                message(
                    "concatenate of a Text got a character outside the charset",
                    expected=expected,
                    got=f"{unknown!r} in {show(item)}",
                    at=f"items[{index}]",
                )
            )
    if isinstance(out, tuple) and len(out) != len(batch):
        raise InvalidValueError(
            message(
                "concatenate of a Text got a batch of the wrong size",
                expected=f"{len(out)} items, as many as out holds",
                got=f"{len(batch)} items",
            )
        )
    return lambda: batch


register_concatenate(Text, _prepare_text)
register_batched_as_copies(Text, concatenate_items=False)


@create_empty_array.register(Text)
def _create_empty_array_text(
    space: Text, n: int = 1, fn: Callable[..., np.ndarray[Any, Any]] = np.zeros
) -> tuple[str, ...]:
    # fn builds arrays and a batch of Text is a tuple of str, so it has no use here. The placeholder is
    # Gymnasium's: the shortest string of the smallest character (first of the *sorted* charset, not of
    # character_list), always a value of the space. See the module docstring for shared memory's.
    placeholder = space.characters[0] * space.min_length
    return (placeholder,) * n


@layout_nodes.register(Text)
def _layout_nodes_text(space: Text, path: Path = ()) -> list[LayoutNode]:
    return [TextLeaf(path, tuple(space.character_list), int(space.max_length))]


@register_converter(Text)
def _convert_text(space: Any, lib: Any, child: Callable[[Any, str], Any], seed: Any) -> Any:
    # A string keeps its order in both libraries (a set would be sorted); the order is the flatten encoding.
    charset = "".join(space.character_list)
    return lib.Text(space.max_length, min_length=space.min_length, charset=charset, seed=seed)
