"""The :class:`Tuple` space: the cartesian product of child spaces, in order."""

from __future__ import annotations

import typing
from collections.abc import Iterable, Iterator
from typing import Any, cast, overload

import numpy as np

from vecspaces._ops.gymnasium import equals_gymnasium
from vecspaces._space import Space, space_kind
from vecspaces.error import InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces._container import Container, adopt_child, located

__all__ = ["Tuple"]


@space_kind
class Tuple(Container[tuple[Any, ...]], typing.Sequence[Space[Any]]):
    """A tuple of spaces: its values are tuples holding one value of each child space, in order.

    It is also a sequence of its children: indexing (an int gives a space, a slice a tuple of spaces),
    ``len``, iteration, ``count`` and ``index``.

    Args:
        spaces: an iterable of spaces; Gymnasium spaces are converted to vecspaces.
        seed: an int, None, a tuple or list of per-child seeds, or a ``numpy.random.Generator`` used as the
            space's own generator (see :meth:`seed`).

    Raises:
        InvalidTypeError: ``spaces`` is not iterable, or one of its items is not a space of either library.

    Example:
        >>> from vecspaces.spaces import Box, Discrete, Tuple
        >>> space = Tuple((Discrete(2), Box(-1.0, 1.0, (2,))), seed=42)
        >>> space
        Tuple(Discrete(2), Box(-1.0, 1.0, (2,), float32))
        >>> space.sample() in space
        True
        >>> space[0], len(space)
        (Discrete(2), 2)
    """

    spaces: tuple[Space[Any], ...]
    _structure_types = (tuple, list)

    def __init__(
        self,
        spaces: Iterable[Space[Any]],
        seed: int | typing.Sequence[Any] | np.random.Generator | None = None,
    ) -> None:
        try:
            given = tuple(spaces)
        except TypeError:
            raise InvalidTypeError(
                message("Tuple spaces is not iterable", expected="an iterable of spaces", got=show(spaces))
            ) from None
        self.spaces = tuple(
            adopt_child(space, "Tuple child is not a space", expected="a Space instance", at=f"spaces[{index}]")
            for index, space in enumerate(given)
        )
        super().__init__(None, None, cast(Any, seed))  # seed() also takes per-child seeds

    # The container protocol (see vecspaces.spaces._container).

    def child_keys(self) -> range:
        """The positions ``0..n-1``."""
        return range(len(self.spaces))

    def children(self) -> tuple[Space[Any], ...]:
        """The child spaces, in order."""
        return self.spaces

    def pack(self, parts: Iterable[Any]) -> tuple[Any, ...]:
        """The tuple of ``parts``."""
        return tuple(parts)

    def unpack(self, value: Any, root: str) -> tuple[Any, ...] | list[Any]:
        """A tuple or list of one value per child; see ``Container.unpack``."""
        if type(value) is tuple and len(value) == len(self.spaces):
            return value
        expected = f"a tuple or list of {_entries(len(self.spaces))}"
        if not isinstance(value, (tuple, list)):
            raise located(InvalidTypeError, root, "wrong type for a Tuple", expected=expected, got=show(value))
        if len(value) != len(self.spaces):
            raise located(
                InvalidValueError, root, "wrong length for a Tuple", expected=expected, got=_entries(len(value))
            )
        return value

    def rebuild(self, children: Iterable[Space[Any]], seed: np.random.Generator | None = None) -> Tuple:
        """A Tuple of ``children``."""
        return Tuple(children, seed=seed)

    def _structure_name(self) -> str:
        return "a tuple or list"

    # Space behaviour.

    def sample(self, mask: Any = None, probability: Any = None) -> tuple[Any, ...]:
        """Draw a tuple holding one sample of each child.

        Args:
            mask: a tuple (or list) with one entry per child: that child's mask, or None.
            probability: a tuple (or list) with one entry per child: that child's probability, or None.

        Returns:
            A tuple of the children's samples.

        Raises:
            InvalidValueError: both ``mask`` and ``probability`` are given, or one has the wrong length.
            InvalidTypeError: ``mask`` or ``probability`` is not a tuple or list.

        Example:
            >>> import numpy as np
            >>> from vecspaces.spaces import Discrete, Tuple
            >>> space = Tuple((Discrete(3), Discrete(3)), seed=0)
            >>> space.sample(mask=(np.array([0, 1, 0], dtype=np.int8), None))[0]
            1
        """
        if mask is None and probability is None:
            return tuple([space.sample() for space in self.spaces])
        return self._sample_each(mask, probability)

    def contains(self, x: Any) -> bool:
        """Return whether ``x`` is a tuple of the right length whose entries the children contain.

        Lists and arrays are accepted in place of tuples, as in Gymnasium.

        Example:
            >>> import numpy as np
            >>> from vecspaces.spaces import Discrete, Tuple
            >>> space = Tuple((Discrete(2), Discrete(2)))
            >>> space.contains((np.int64(0), np.int64(1))), space.contains((np.int64(0),))
            (True, False)
        """
        try:
            if type(x) is not tuple:
                if isinstance(x, (list, np.ndarray)):
                    x = tuple(x)
                elif not isinstance(x, tuple):
                    return False
            if len(x) != len(self.spaces):
                return False
            for space, part in zip(self.spaces, x, strict=True):
                if not space.contains(part):
                    return False
        except Exception:  # a 0-d array, or a child that chokes on odd input: not a member
            return False
        return True

    def to_jsonable(self, sample_n: typing.Sequence[Any]) -> list[Any]:
        """Convert a batch of samples to JSON data: one list per child holding its column.

        Example:
            >>> import numpy as np
            >>> from vecspaces.spaces import Discrete, Tuple
            >>> Tuple((Discrete(2), Discrete(3))).to_jsonable([(np.int64(1), np.int64(2))])
            [[1], [2]]
        """
        return list(super().to_jsonable(sample_n))

    # Sequence protocol.

    @overload
    def __getitem__(self, index: int) -> Space[Any]: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Space[Any], ...]: ...
    def __getitem__(self, index: int | slice) -> Space[Any] | tuple[Space[Any], ...]:
        return self.spaces[index]

    def __len__(self) -> int:
        return len(self.spaces)

    def __iter__(self) -> Iterator[Space[Any]]:
        return iter(self.spaces)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tuple):
            return equals_gymnasium(self, other)
        return self.spaces == other.spaces

    def __repr__(self) -> str:
        return "Tuple(" + ", ".join(str(space) for space in self.spaces) + ")"


def _entries(count: int) -> str:
    return f"{count} entr{'y' if count == 1 else 'ies'}"
