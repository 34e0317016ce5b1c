"""The :class:`Sequence` space: variable-length sequences of values of one feature space."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from vecspaces._ops.batch import batch_space
from vecspaces._ops.gymnasium import equals_gymnasium
from vecspaces._space import Space, derive_seeds, json_checked, space_kind
from vecspaces.error import InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces._container import adopt_child
from vecspaces.spaces._masks import reject_both
from vecspaces.spaces._stacking import stack_items, unstack

__all__ = ["Sequence"]

# Mean sequence length 4 when no length is requested, as in Gymnasium.
_GEOMETRIC_P = 0.25

_LENGTH_FORM = "None, an int >= 0, or a 1-D integer numpy array of allowed lengths (each >= 0)"


@space_kind
class Sequence(Space[Any]):
    """Finite sequences of any length whose items all belong to one feature space.

    A value is a ``tuple`` of feature values. With ``stack=True`` the items are stacked instead, the way
    :func:`~vecspaces.vector.utils.concatenate` batches them: a ``Box`` feature gives one array of shape
    ``(length, *feature.shape)``, a ``Dict`` feature a dict of such arrays, and so on. An empty stacked
    sequence is a stack of length 0 (``shape (0, *feature.shape)``), where Gymnasium fails to build one.

    Args:
        space: the feature space every item belongs to; a Gymnasium space is converted to vecspaces.
        seed: an int, ``None``, a ``(sequence seed, feature seed)`` pair, or a ``numpy.random.Generator`` used
            as the sequence's own sampler (see :meth:`seed`).
        stack: whether values are stacked rather than tuples of items.

    Raises:
        InvalidTypeError: ``space`` is not a space, or ``stack`` is not a bool.

    Example:
        >>> from vecspaces.spaces import Box, Discrete
        >>> space = Sequence(Discrete(3), seed=0)
        >>> space
        Sequence(Discrete(3), stack=False)
        >>> value = space.sample(mask=(4, None))
        >>> type(value).__name__, len(value), value in space
        ('tuple', 4, True)
        >>> Sequence(Box(0, 1, (2,)), stack=True, seed=0).sample(mask=(3, None)).shape
        (3, 2)
    """

    feature_space: Space[Any]
    stack: bool
    stacked_feature_space: Space[Any]

    def __init__(self, space: Space[Any], seed: int | np.random.Generator | None = None, stack: bool = False) -> None:
        space = adopt_child(space, "Sequence feature space is not a space", expected="a space")
        if not (isinstance(stack, (bool, np.bool_)) or (isinstance(stack, int) and stack in (0, 1))):
            raise InvalidTypeError(message("Sequence stack is not a bool", expected="True or False", got=show(stack)))
        self.feature_space = space
        self.stack = bool(stack)
        if self.stack:
            # The batched form of one item, which tells how each part of a stack is laid out.
            self.stacked_feature_space = batch_space(space, 1)
        super().__init__(None, None, seed)

    @property
    def is_np_flattenable(self) -> Literal[False]:
        """Always False: a sequence has no fixed length, so it has no fixed-size flat vector."""
        return False

    def seed(self, seed: int | tuple[Any, Any] | list[Any] | None = None) -> tuple[int, Any]:
        """Seed the sequence's generator (which draws lengths) and the feature space's.

        Args:
            seed: one of

                * ``None``: both get fresh entropy;
                * an int: seeds the sequence, and an independent seed derived from it seeds the feature space;
                * a ``(sequence seed, feature seed)`` pair (tuple or list), e.g. a value returned by ``seed``.

        Returns:
            ``(sequence seed, feature space seed)``, which reproduces the same samples when given back.

        Raises:
            InvalidTypeError: ``seed`` is of another type.
            InvalidValueError: a pair does not have exactly two elements.

        Example:
            >>> from vecspaces.spaces import Discrete
            >>> space = Sequence(Discrete(5))
            >>> seeds = space.seed(42)
            >>> first = space.sample()
            >>> _ = space.seed(seeds)
            >>> space.sample() == first
            True
        """
        if seed is None:
            return super().seed(None), self.feature_space.seed(None)
        if isinstance(seed, (tuple, list)):
            if len(seed) != 2:
                raise InvalidValueError(
                    message(
                        "Sequence seed pair has the wrong length",
                        expected="two elements (sequence seed, feature space seed)",
                        got=show(seed),
                    )
                )
            return super().seed(seed[0]), self.feature_space.seed(seed[1])
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
            own = super().seed(seed)  # checks the seed first: it must not be negative
            (feature_seed,) = derive_seeds(own, 1)
            return own, self.feature_space.seed(feature_seed)
        raise InvalidTypeError(
            message(
                "Sequence seed has the wrong type",
                expected="None, a non-negative int, or a (sequence seed, feature space seed) pair",
                got=show(seed),
            )
        )

    def sample(
        self,
        mask: tuple[int | npt.NDArray[np.integer[Any]] | None, Any] | None = None,
        probability: tuple[int | npt.NDArray[np.integer[Any]] | None, Any] | None = None,
    ) -> Any:
        """Draw a random sequence.

        Args:
            mask: ``(length_mask, feature_mask)``. ``length_mask`` is ``None`` (a geometric length with mean
                4, at least 1), an int >= 0 (that exact length) or a 1-D integer array (a length drawn
                uniformly from its entries). ``feature_mask`` is passed as ``mask`` to every item's sample.
            probability: ``(length_mask, feature_probability)``, the same with a probability for the items.

        Returns:
            A tuple of feature values, or their stack when ``stack=True`` (a stack of length 0 when the length
            is 0).

        Raises:
            InvalidTypeError: ``mask``/``probability`` or the length mask has the wrong form.
            InvalidValueError: both were given, or a length is negative or the array of lengths is empty.

        Example:
            >>> from vecspaces.spaces import Discrete
            >>> space = Sequence(Discrete(4), seed=1)
            >>> only_2 = np.array([0, 0, 1, 0], dtype=np.int8)
            >>> space.sample(mask=(np.array([2, 3]), only_2)) in {(2, 2), (2, 2, 2)}
            True
        """
        reject_both("Sequence", mask, probability)
        feature_sample = self.feature_space.sample
        if mask is None and probability is None:
            length = int(self.np_random.geometric(_GEOMETRIC_P))
            items = tuple([feature_sample() for _ in range(length)])
        else:
            kind = "mask" if mask is not None else "probability"
            length_mask, feature_arg = self._split(mask if mask is not None else probability, kind)
            length = self._draw_length(length_mask, kind)
            if feature_arg is None:
                items = tuple([feature_sample() for _ in range(length)])
            elif kind == "mask":
                items = tuple([feature_sample(mask=feature_arg) for _ in range(length)])
            else:
                items = tuple([feature_sample(probability=feature_arg) for _ in range(length)])
        if self.stack:
            return self._stack_items(items)
        return items

    @staticmethod
    def _split(pair: Any, kind: str) -> tuple[Any, Any]:
        """Check that a mask or probability argument is a ``(length_mask, feature_arg)`` pair."""
        if not isinstance(pair, (tuple, list)):
            raise InvalidTypeError(
                message(
                    f"Sequence.sample {kind} is not a pair",
                    expected=f"a tuple (length_mask, feature_{kind})",
                    got=show(pair),
                )
            )
        if len(pair) != 2:
            raise InvalidValueError(
                message(
                    f"Sequence.sample {kind} has the wrong length",
                    expected=f"a tuple (length_mask, feature_{kind})",
                    got=show(pair),
                )
            )
        return pair[0], pair[1]

    def _draw_length(self, length_mask: Any, kind: str) -> int:
        """Return the length requested by ``length_mask``, drawing it where it leaves a choice."""
        if length_mask is None:
            return int(self.np_random.geometric(_GEOMETRIC_P))
        problem = f"Sequence.sample length mask {kind}[0]"
        if isinstance(length_mask, (int, np.integer)) and not isinstance(length_mask, (bool, np.bool_)):
            if length_mask < 0:
                raise InvalidValueError(message(f"{problem} is negative", expected=_LENGTH_FORM, got=show(length_mask)))
            return int(length_mask)
        if not isinstance(length_mask, np.ndarray):
            raise InvalidTypeError(
                message(f"{problem} has the wrong type", expected=_LENGTH_FORM, got=show(length_mask))
            )
        if length_mask.dtype.kind not in "iu":
            raise InvalidTypeError(
                message(f"{problem} has a non-integer dtype", expected=_LENGTH_FORM, got=show(length_mask))
            )
        if length_mask.ndim != 1 or length_mask.size == 0:
            raise InvalidValueError(
                message(f"{problem} is not a non-empty 1-D array", expected=_LENGTH_FORM, got=show(length_mask))
            )
        if (length_mask < 0).any():
            raise InvalidValueError(
                message(f"{problem} has a negative length", expected=_LENGTH_FORM, got=show(length_mask))
            )
        return int(self.np_random.choice(length_mask))

    def _stack_items(self, items: Iterable[Any]) -> Any:
        """Stack feature values into one value, the way ``concatenate`` batches them."""
        return stack_items(self.feature_space, tuple(items))

    def _unstack(self, x: Any) -> list[Any]:
        """Split a stacked value into its items."""
        return unstack(self.feature_space, self.stacked_feature_space, x)

    def contains(self, x: Any) -> bool:
        """Return whether ``x`` is a sequence of this space; never raises.

        Without ``stack`` a value must be a ``tuple`` (a list is not accepted) whose items are all in the
        feature space. With ``stack`` it must split into items of the feature space (see
        :func:`~vecspaces.spaces._stacking.unstack`): a list or tuple of items stands for the stack of an array
        feature, as in Gymnasium.

        Example:
            >>> from vecspaces.spaces import Discrete
            >>> space = Sequence(Discrete(3))
            >>> (0, 2) in space, () in space, (0, 3) in space, [0, 2] in space
            (True, True, False, False)
            >>> stacked = Sequence(Discrete(3), stack=True)
            >>> np.array([0, 2]) in stacked, [0, 2] in stacked, (0, 3) in stacked, [] in stacked
            (True, True, False, True)
        """
        try:
            if not self.stack:
                return isinstance(x, tuple) and all(map(self.feature_space.contains, x))
            return all(map(self.feature_space.contains, self._unstack(x)))
        except Exception:  # a value that does not split into items, or a tuple subclass that cannot iterate
            return False

    @json_checked
    def to_jsonable(self, sample_n: Iterable[Any]) -> list[Any]:
        """Convert a batch of sequences to JSON-serialisable data: one entry per sequence.

        Each entry is the feature space's JSON form of the sequence's items. For array features this is the
        same data Gymnasium writes; for stacked Dict or Tuple features Gymnasium writes one column-wise
        structure for the whole batch instead, which cannot keep the shape of an empty stack.

        Example:
            >>> from vecspaces.spaces import Discrete
            >>> Sequence(Discrete(3)).to_jsonable([(np.int64(1), np.int64(2)), ()])
            [[1, 2], []]
        """
        to_jsonable = self.feature_space.to_jsonable
        if self.stack:
            return [to_jsonable(self._unstack(sample)) for sample in sample_n]
        return [to_jsonable(list(sample)) for sample in sample_n]

    @json_checked
    def from_jsonable(self, sample_n: Iterable[Any]) -> list[Any]:
        """Convert data made by :meth:`to_jsonable` back to a list of sequences.

        Example:
            >>> from vecspaces.spaces import Discrete
            >>> Sequence(Discrete(3)).from_jsonable([[1, 2], []])
            [(1, 2), ()]
        """
        from_jsonable = self.feature_space.from_jsonable
        if self.stack:
            return [self._stack_items(from_jsonable(sample)) for sample in sample_n]
        return [tuple(from_jsonable(sample)) for sample in sample_n]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return equals_gymnasium(self, other)
        return self.stack == other.stack and self.feature_space == other.feature_space

    def __repr__(self) -> str:
        return f"Sequence({self.feature_space!r}, stack={self.stack})"

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        if "stack" not in self.__dict__:  # pickled before stacking existed
            self.stack = False
