"""The :class:`OneOf` space: a value of exactly one of several spaces, tagged with that space's index."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Generic, TypeVar, overload

import numpy as np

from vecspaces._ops.gymnasium import equals_gymnasium
from vecspaces._space import Space, derive_seeds, json_checked, space_kind
from vecspaces.error import InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces._container import adopt_child
from vecspaces.spaces._masks import reject_both
from vecspaces.spaces.dict import Dict
from vecspaces.spaces.tuple import Tuple

__all__ = ["OneOf"]

T_co = TypeVar("T_co", covariant=True)


@space_kind
class OneOf(Space[tuple[np.int64, T_co]], Generic[T_co]):
    """The direct sum of spaces: a value is ``(index, value)`` with ``value`` in ``spaces[index]``.

    Args:
        spaces: the branches, a non-empty iterable of spaces; Gymnasium spaces are converted to vecspaces.
        seed: an int, None, a tuple of ``len(spaces) + 1`` seeds (this space's, then each branch's), or a
            ``numpy.random.Generator`` used as this space's sampler (the branches keep their own).

    Raises:
        InvalidTypeError: ``spaces`` is not iterable or holds something that is not a space.
        InvalidValueError: ``spaces`` is empty.

    Example:
        >>> from vecspaces.spaces import Discrete, Text
        >>> space = OneOf([Discrete(3), Text(4, charset="ab")], seed=0)
        >>> space
        OneOf(Discrete(3), Text(1, 4, charset=ab))
        >>> index, value = space.sample()
        >>> (index, value) in space, space[index].contains(value)
        (True, True)
    """

    def __init__(self, spaces: Iterable[Space[T_co]], seed: int | np.random.Generator | None = None) -> None:
        expected = "a non-empty iterable of spaces"
        if not isinstance(spaces, Iterable):
            raise InvalidTypeError(message("OneOf spaces is not iterable", expected=expected, got=show(spaces)))
        given = tuple(spaces)
        if not given:
            raise InvalidValueError(message("OneOf needs at least one space", expected=expected, got="no spaces"))
        self.spaces: tuple[Space[T_co], ...] = tuple(
            adopt_child(space, "OneOf holds something that is not a space", expected=expected, at=f"spaces[{index}]")
            for index, space in enumerate(given)
        )
        super().__init__(None, None, seed)

    @property
    def is_np_flattenable(self) -> bool:
        """Whether every branch flattens to a fixed-size vector.

        Example:
            >>> from vecspaces.spaces import Discrete, Text
            >>> OneOf([Discrete(2), Text(3)]).is_np_flattenable
            True
        """
        return all(space.is_np_flattenable for space in self.spaces)

    def seed(self, seed: int | tuple[Any, ...] | list[Any] | None = None) -> tuple[Any, ...]:
        """Seed this space's generator (which picks the branch) and every branch's.

        Args:
            seed: ``None`` seeds everything from fresh entropy. An int seeds this space with it and every
                branch with its own seed derived from it, so equal branches still draw independently. A
                tuple (or list) of ``len(spaces) + 1`` entries gives this space's seed first, then one seed
                per branch (nested for composite branches).

        Returns:
            ``(own_seed, *branch_seeds)``, which reproduces the same samples when given back to ``seed``.

        Raises:
            InvalidTypeError: ``seed`` is of another type.
            InvalidValueError: a tuple seed of the wrong length.

        Example:
            >>> from vecspaces.spaces import Discrete
            >>> space = OneOf([Discrete(5), Discrete(5)])
            >>> seeds = space.seed(3)
            >>> seeds[0], len(seeds)
            (3, 3)
            >>> first = [space.sample() for _ in range(5)]
            >>> _ = space.seed(seeds)
            >>> first == [space.sample() for _ in range(5)]
            True
        """
        if seed is None:
            own = super().seed(None)
            return (own, *(space.seed(None) for space in self.spaces))
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            own = super().seed(seed)
            children = derive_seeds(own, len(self.spaces))
            return (own, *(space.seed(child) for space, child in zip(self.spaces, children, strict=True)))
        if isinstance(seed, (tuple, list)):
            if len(seed) != len(self.spaces) + 1:
                raise InvalidValueError(
                    message(
                        "OneOf seed has the wrong length",
                        expected=f"{len(self.spaces) + 1} seeds (this space's, then one per branch)",
                        got=show(seed),
                    )
                )
            own = super().seed(seed[0])
            return (own, *(space.seed(child) for space, child in zip(self.spaces, seed[1:], strict=True)))
        raise InvalidTypeError(
            message(
                "OneOf seed has the wrong type",
                expected=f"an int, None, or a tuple of {len(self.spaces) + 1} seeds",
                got=show(seed),
            )
        )

    def sample(
        self, mask: tuple[Any, ...] | None = None, probability: tuple[Any, ...] | None = None
    ) -> tuple[np.int64, T_co]:
        """Draw a branch uniformly, then a value of that branch.

        Args:
            mask: a tuple with one entry per branch (each a mask for that branch, or None); only the drawn
                branch's entry is used, so a mask restricts values but not which branch is drawn.
            probability: the same with per-branch probabilities.

        Returns:
            ``(np.int64(index), value)``.

        Raises:
            InvalidTypeError: ``mask`` or ``probability`` is not a tuple.
            InvalidValueError: both are given, or one has the wrong length.

        Example:
            >>> from vecspaces.spaces import Discrete
            >>> space = OneOf([Discrete(3), Discrete(3)], seed=0)
            >>> mask = np.array([0, 0, 1], dtype=np.int8)
            >>> space.sample(mask=(mask, mask))[1]
            2
        """
        if mask is None and probability is None:
            index = self.np_random.integers(len(self.spaces))
            return index, self.spaces[index].sample()
        reject_both("OneOf", mask, probability)
        if mask is not None:
            self._check_per_branch("mask", mask)
            index = self.np_random.integers(len(self.spaces))
            return index, self.spaces[index].sample(mask=mask[index])
        assert probability is not None  # for mypy: one of the two is set
        self._check_per_branch("probability", probability)
        index = self.np_random.integers(len(self.spaces))
        return index, self.spaces[index].sample(probability=probability[index])

    def _check_per_branch(self, name: str, argument: object) -> None:
        expected = f"a tuple of {len(self.spaces)} entries, one per branch (None for no {name})"
        if not isinstance(argument, tuple):
            raise InvalidTypeError(
                message(f"OneOf.sample {name} is not a tuple", expected=expected, got=show(argument))
            )
        if len(argument) != len(self.spaces):
            raise InvalidValueError(
                message(f"OneOf.sample {name} has the wrong length", expected=expected, got=show(argument))
            )

    def contains(self, x: Any) -> bool:
        """Return whether ``x`` is a tuple ``(index, value)`` with ``value`` in the branch at ``index``.

        The index may be any Python or NumPy integer (not a bool).

        Example:
            >>> from vecspaces.spaces import Discrete
            >>> space = OneOf([Discrete(2), Discrete(5)])
            >>> (1, np.int64(4)) in space, (0, np.int64(4)) in space, (True, np.int64(0)) in space
            (True, False, False)
        """
        if not isinstance(x, tuple):
            return False
        try:  # a tuple subclass's len() or [], or an int subclass's comparisons, may raise
            if len(x) != 2:
                return False
            index = x[0]
            if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
                return False
            if not 0 <= index < len(self.spaces):
                return False
            return bool(self.spaces[index].contains(x[1]))
        except Exception:
            return False

    @json_checked
    def to_jsonable(self, sample_n: Iterable[tuple[Any, Any]]) -> list[list[Any]]:
        """Convert a batch of values to JSON-serialisable ``[[index, branch_json], ...]``.

        ``branch_json`` is the branch's JSON for the one value, as Gymnasium writes it. A Dict or Tuple branch
        writes its JSON column-wise, so for those ``branch_json`` is the branch's JSON of the batch of one
        value (Gymnasium writes only its first column there and cannot read it back).

        Example:
            >>> from vecspaces.spaces import Discrete, Text
            >>> OneOf([Discrete(2), Text(3)]).to_jsonable([(np.int64(1), "ab")])
            [[1, 'ab']]
        """
        result = []
        for index, value in sample_n:
            branch = self.spaces[index]
            data = branch.to_jsonable([value])
            result.append([int(index), data if _column_wise(branch) else data[0]])
        return result

    @json_checked
    def from_jsonable(self, sample_n: Iterable[Any]) -> list[tuple[np.int64, Any]]:
        """Convert the output of :meth:`to_jsonable` back to a batch of values.

        Example:
            >>> from vecspaces.spaces import Discrete, Text
            >>> OneOf([Discrete(2), Text(3)]).from_jsonable([[1, "ab"]])
            [(1, 'ab')]
        """
        result = []
        for index, data in sample_n:
            branch = self.spaces[index]
            result.append((np.int64(index), branch.from_jsonable(data if _column_wise(branch) else [data])[0]))
        return result

    @overload
    def __getitem__(self, index: int) -> Space[T_co]: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Space[T_co], ...]: ...

    def __getitem__(self, index: int | slice) -> Space[T_co] | tuple[Space[T_co], ...]:
        """Return the branch at ``index`` (a tuple of branches for a slice)."""
        return self.spaces[index]

    def __len__(self) -> int:
        """Return the number of branches."""
        return len(self.spaces)

    def __iter__(self) -> Iterator[Space[T_co]]:
        """Iterate over the branches."""
        return iter(self.spaces)

    def __repr__(self) -> str:
        """Return ``OneOf(<branch>, ...)``."""
        return f"OneOf({', '.join(repr(space) for space in self.spaces)})"

    def __eq__(self, other: object) -> bool:
        """Whether ``other`` is a OneOf (or a Gymnasium one) with equal branches in the same order."""
        if not isinstance(other, OneOf):
            return equals_gymnasium(self, other)
        return self.spaces == other.spaces


def _column_wise(space: Space[Any]) -> bool:
    """Whether ``space.to_jsonable`` writes a batch as columns (one per child), not one entry per value."""
    return isinstance(space, (Dict, Tuple))
