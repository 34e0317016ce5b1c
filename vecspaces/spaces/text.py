"""The :class:`Text` space: strings of bounded length over a character set.

Character order. The charset's order gives every character an index (:meth:`Text.character_index`), and
those indices are what masks, probabilities and ``flatten`` use. A ``set`` or ``frozenset`` charset is sorted,
so the order does not depend on ``PYTHONHASHSEED``; any other iterable (a ``str``, a list) keeps its own order
with duplicates dropped. Equality follows Gymnasium and compares only the lengths and the *set* of characters,
so ``Text(5, charset="ab") == Text(5, charset="ba")`` although the two flatten ``"a"`` to different indices:
compare ``character_list`` when the flat layout matters.
"""

from __future__ import annotations

import string
from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces._ops.gymnasium import equals_gymnasium
from vecspaces._space import Space, space_kind
from vecspaces.error import InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces._masks import check_mask, check_probability, reject_both

__all__ = ["Text", "alphanumeric"]

alphanumeric: frozenset[str] = frozenset(string.ascii_letters + string.digits)
"""The default charset: ASCII letters and digits (sorted, it reads ``0-9A-Za-z``)."""


def _check_length(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidTypeError(message(f"Text {name} has the wrong type", expected="an int", got=show(value)))
    if value < 0:
        raise InvalidValueError(message(f"Text {name} must not be negative", expected="an int >= 0", got=show(value)))
    return int(value)


def _character_list(charset: Iterable[str]) -> tuple[str, ...]:
    """Return the charset's characters in index order, after checking each is one character."""
    expected = "an iterable of one-character strings, e.g. 'abc'"
    if not isinstance(charset, Iterable):
        raise InvalidTypeError(message("Text charset has the wrong type", expected=expected, got=show(charset)))
    elements = list(charset)
    for element in elements:
        if not isinstance(element, str):
            raise InvalidTypeError(
                message("Text charset holds a non-string element", expected=expected, got=show(element))
            )
    elements = [str(element) for element in elements]  # np.str_ elements become plain str
    too_long = [element for element in elements if len(element) != 1]
    if too_long:
        raise InvalidValueError(
            message("Text charset elements must be single characters", expected=expected, got=show(too_long))
        )
    if not elements:
        raise InvalidValueError(
            message(
                "Text charset is empty",
                expected=expected,
                got=show(charset),
                fix="give at least one character (a space of only the empty string is Text(0, min_length=0))",
            )
        )
    if isinstance(charset, (set, frozenset)):
        return tuple(sorted(elements))
    return tuple(dict.fromkeys(elements))


@space_kind
class Text(Space[str]):
    """Strings of ``min_length`` to ``max_length`` characters (both inclusive) taken from ``charset``.

    Args:
        max_length: the longest string length.
        min_length: the shortest string length (keyword only); ``0`` admits the empty string.
        charset: the characters (keyword only): a ``str`` or list keeps its order, a set is sorted. Each
            element must be exactly one character (any Unicode code point); the charset must not be empty.
        seed: an int or None to seed the sampler, or a ``numpy.random.Generator`` used as the sampler itself.

    Raises:
        InvalidTypeError: a length is not an int, or the charset is not an iterable of strings.
        InvalidValueError: a length is negative, ``min_length > max_length``, a charset element is not one
            character, or the charset is empty.

    Kernel-facing (read by ``vecspaces._kernels.text``, set only here): ``_char_codes``, each character's
    index in :attr:`character_list` (the flat encoding), and ``_char_list``, that list itself.

    Example:
        >>> space = Text(5, charset="αβγ", seed=0)
        >>> space
        Text(1, 5, charset=αβγ)
        >>> value = space.sample()
        >>> value in space, 1 <= len(value) <= 5
        (True, True)
        >>> "αδ" in space
        False
    """

    def __init__(
        self,
        max_length: int,
        *,
        min_length: int = 1,
        charset: Iterable[str] = alphanumeric,
        seed: int | np.random.Generator | None = None,
    ) -> None:
        self.max_length: int = _check_length("max_length", max_length)
        self.min_length: int = _check_length("min_length", min_length)
        if self.min_length > self.max_length:
            raise InvalidValueError(
                message(
                    "Text min_length is above max_length",
                    expected=f"min_length <= max_length = {self.max_length}",
                    got=show(min_length),
                )
            )
        chars = _character_list(charset)
        self._char_list: tuple[str, ...] = chars
        self._char_set: frozenset[str] = frozenset(chars)
        self._char_codes: dict[str, int] = {char: code for code, char in enumerate(chars)}
        self._char_str: str = "".join(sorted(chars))
        super().__init__(dtype=str, seed=seed)

    @property
    def character_set(self) -> frozenset[str]:
        """The characters of the space, as a set.

        Example:
            >>> sorted(Text(3, charset="ba").character_set)
            ['a', 'b']
        """
        return self._char_set

    @property
    def character_list(self) -> tuple[str, ...]:
        """The characters in index order: the order masks, probabilities and ``flatten`` use.

        Example:
            >>> Text(3, charset="cab").character_list
            ('c', 'a', 'b')
        """
        return self._char_list

    @property
    def characters(self) -> str:
        """The characters as one sorted string (as shown by ``repr``).

        Example:
            >>> Text(3, charset="cab").characters
            'abc'
        """
        return self._char_str

    def character_index(self, char: str) -> np.int32:
        """Return the index of ``char`` in :attr:`character_list`.

        Raises:
            InvalidTypeError: ``char`` is not a string.
            InvalidValueError: ``char`` is not in the charset.

        Example:
            >>> Text(3, charset="cab").character_index("a")
            1
        """
        if not isinstance(char, str):
            raise InvalidTypeError(
                message("Text character_index needs a string", expected="a one-character str", got=show(char))
            )
        code = self._char_codes.get(char)
        if code is None:
            raise InvalidValueError(
                message(
                    "Text character is not in the charset",
                    expected=f"one of {self._char_str!r}",
                    got=show(char),
                )
            )
        return np.int32(code)

    @property
    def is_np_flattenable(self) -> bool:
        """Always True: a string flattens to ``max_length`` padded character indices."""
        return True

    def sample(
        self,
        mask: tuple[int | None, npt.NDArray[np.int8] | None] | None = None,
        probability: tuple[int | None, npt.NDArray[np.float64] | None] | None = None,
    ) -> str:
        """Draw a random string: a uniform length, then independent characters.

        Args:
            mask: ``(length, char_mask)``. ``length`` (or None for a uniform length) fixes the string length;
                ``char_mask`` (or None) is an int8 array with one 0/1 entry per character of
                :attr:`character_list`, and characters are drawn uniformly among the allowed ones. An all-zero
                mask gives ``""`` when ``min_length == 0`` and is an error otherwise.
            probability: ``(length, char_probability)``, as ``mask`` but with a float array of per-character
                probabilities summing to 1.

        Returns:
            A string of the space.

        Raises:
            InvalidTypeError: a mask or probability of the wrong form.
            InvalidValueError: a length out of range, a bad mask or probability, or an all-zero mask when
                ``min_length > 0``.

        Example:
            >>> space = Text(4, charset="abc", seed=1)
            >>> space.sample(mask=(3, np.array([0, 1, 0], dtype=np.int8)))
            'bbb'
        """
        rng = self.np_random
        chars = self._char_list
        span = self.max_length - self.min_length + 1
        if mask is None and probability is None:
            # u < 1 and n >= 1, so int(u * n) < n: the rounded product of a float below 1 stays below n.
            length = self.min_length + int(rng.random() * span)
            codes = (rng.random(length) * len(chars)).astype(np.intp)
            return "".join([chars[code] for code in codes.tolist()])
        reject_both("Text", mask, probability)
        allowed: npt.NDArray[np.intp] | None = None  # the codes a mask allows
        cumulative: npt.NDArray[np.float64] | None = None  # the cumulative character probabilities
        if mask is not None:
            fixed_length, char_mask = self._split("mask", mask)
            if char_mask is not None:
                char_mask = check_mask(char_mask, owner="Text", shape=(len(chars),), name="mask[1]")
                allowed = np.flatnonzero(char_mask)
                if allowed.size == 0:
                    return self._nothing_allowed(char_mask)
        else:
            fixed_length, char_probability = self._split("probability", probability)
            if char_probability is not None:
                char_probability = check_probability(
                    char_probability, owner="Text", shape=(len(chars),), name="probability[1]"
                )
                cumulative = np.cumsum(char_probability)
                cumulative /= cumulative[-1]
        length = self.min_length + int(rng.random() * span) if fixed_length is None else fixed_length
        uniform = rng.random(length)
        if allowed is not None:
            codes = allowed[(uniform * allowed.size).astype(np.intp)]
        elif cumulative is not None:
            # side="right" never picks a zero-probability character: its cumulative value equals its
            # predecessor's, so its interval is empty.
            codes = np.searchsorted(cumulative, uniform, side="right")
        else:
            codes = (uniform * len(chars)).astype(np.intp)
        return "".join([chars[code] for code in codes.tolist()])

    def _nothing_allowed(self, char_mask: npt.NDArray[np.int8]) -> str:
        """The sample for an all-zero character mask: the empty string, if the space has it."""
        if self.min_length == 0:
            return ""
        raise InvalidValueError(
            message(
                "Text.sample mask[1] allows no character but the space has no empty string",
                expected="at least one 1 in the character mask",
                got=show(char_mask),
                fix=f"allow a character, or use min_length=0 (it is {self.min_length})",
            )
        )

    def _split(self, name: str, argument: Any) -> tuple[int | None, Any]:
        """Check the ``(length, per_character)`` form of a mask or probability and return its parts."""
        expected = "a tuple (length or None, per-character array or None)"
        if not isinstance(argument, tuple):
            raise InvalidTypeError(message(f"Text.sample {name} is not a tuple", expected=expected, got=show(argument)))
        if len(argument) != 2:
            raise InvalidValueError(
                message(f"Text.sample {name} must have two entries", expected=expected, got=show(argument))
            )
        length, per_character = argument
        if length is not None:
            bounds = f"an int in [{self.min_length}, {self.max_length}] or None"
            if isinstance(length, bool) or not isinstance(length, (int, np.integer)):
                raise InvalidTypeError(
                    message(
                        f"Text.sample {name}[0] (the length) has the wrong type",
                        expected=bounds,
                        got=show(length),
                    )
                )
            if not self.min_length <= length <= self.max_length:
                raise InvalidValueError(
                    message(
                        f"Text.sample {name}[0] (the length) is out of range",
                        expected=bounds,
                        got=show(length),
                    )
                )
            length = int(length)
        return length, per_character

    def contains(self, x: Any) -> bool:
        """Return whether ``x`` is a ``str`` of allowed length made of charset characters.

        Example:
            >>> space = Text(3, charset="ab")
            >>> "ab" in space, "" in space, "abc" in space, b"ab" in space
            (True, False, False, False)
        """
        if type(x) is str:
            return self.min_length <= len(x) <= self.max_length and self._char_set.issuperset(x)
        if not isinstance(x, str):
            return False
        try:  # a str subclass may override len() or iteration with something that raises
            return bool(self.min_length <= len(x) <= self.max_length and self._char_set.issuperset(x))
        except Exception:
            return False

    def __repr__(self) -> str:
        """Return ``Text(min_length, max_length, charset=<sorted characters>)``."""
        return f"Text({self.min_length}, {self.max_length}, charset={self._char_str})"

    def __eq__(self, other: object) -> bool:
        """Whether ``other`` is a Text (or a Gymnasium one) with the same lengths and characters (in any order)."""
        if not isinstance(other, Text):
            return equals_gymnasium(self, other)
        return (
            self.min_length == other.min_length
            and self.max_length == other.max_length
            and self._char_set == other._char_set
        )
