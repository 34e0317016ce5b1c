"""The :class:`MultiBinary` space: int8 arrays of a fixed shape whose entries are 0 or 1."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces._ops.gymnasium import equals_gymnasium
from vecspaces._space import Space, arrays_from_json, json_checked, space_kind
from vecspaces.error import InvalidValueError, message, show
from vecspaces.spaces._masks import check_mask, check_probability, reject_both

__all__ = ["MultiBinary"]

_INT8 = np.dtype(np.int8)
_EXPECTED_N = "a positive int or a sequence of positive ints"


@space_kind
class MultiBinary(Space[npt.NDArray[np.int8]]):
    """Binary arrays of a fixed shape, e.g. which of ``n`` buttons are pressed.

    Samples are int8 arrays. ``contains`` accepts any array (or nested list) of the right shape whose
    entries all equal 0 or 1, whatever its dtype.

    Args:
        n: the shape: an int for a vector, or a sequence of ints for several axes.
        seed: an int or None to seed the sampler, or a ``numpy.random.Generator`` to use as the sampler.

    Kernel-facing (read by ``vecspaces._kernels.multi_binary``, set only here): ``_size``, the number of
    entries of a value, and ``_vector_size``, the same for a 1-D space (whose value is its flat form) and -1
    otherwise.

    Example:
        >>> space = MultiBinary((2, 3), seed=1)
        >>> space
        MultiBinary((2, 3))
        >>> space.sample().shape
        (2, 3)
        >>> space.contains(np.array([[0, 1, 1], [1, 0, 0]]))
        True
    """

    dtype: np.dtype[np.int8]
    n: int | tuple[int, ...]

    def __init__(
        self, n: int | np.integer[Any] | Sequence[int] | npt.NDArray[np.integer[Any]], seed: Any = None
    ) -> None:
        # Gymnasium raises ValueError for a wrong kind of n, so every check below does too.
        if isinstance(n, np.ndarray) and n.ndim == 0:
            n = n.item()
        if isinstance(n, (int, np.integer)) and not isinstance(n, bool):
            self.n = int(n)
            shape: tuple[int, ...] = (self.n,)
        elif isinstance(n, (Sequence, np.ndarray)) and not isinstance(n, (str, bytes)):
            items = list(n)
            if not all(isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)) for i in items):
                raise InvalidValueError(
                    message("MultiBinary n has a non-integer entry", expected=_EXPECTED_N, got=show(n))
                )
            self.n = shape = tuple(int(i) for i in items)
        else:
            raise InvalidValueError(message("MultiBinary n has the wrong type", expected=_EXPECTED_N, got=show(n)))
        if any(size < 1 for size in shape):
            raise InvalidValueError(message("MultiBinary n must be positive", expected=_EXPECTED_N, got=show(n)))
        super().__init__(shape, _INT8, seed)
        self._cache_sizes()

    def _cache_sizes(self) -> None:
        self._size = int(np.prod(self.shape))
        self._words = -(-self._size // 64)  # 64-bit draws per uniform sample
        self._vector_size = self._size if len(self._shape) == 1 else -1  # type: ignore[arg-type]

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the values."""
        return self._shape  # type: ignore[return-value]

    @property
    def is_np_flattenable(self) -> bool:
        """Always True: a value flattens to its ravelled entries."""
        return True

    def sample(
        self, mask: npt.NDArray[np.int8] | None = None, probability: npt.NDArray[np.float64] | None = None
    ) -> npt.NDArray[np.int8]:
        """Draw a binary array: fair coins, or as the mask or the per-entry probabilities say.

        Args:
            mask: an int8 array of the space's shape: 0 forces a 0, 1 forces a 1, 2 draws a fair coin.
            probability: a float array of the space's shape; each entry is the probability that the
                corresponding bit is 1 (0 gives always 0, 1 always 1).

        Returns:
            An int8 array of the space's shape.

        Raises:
            InvalidTypeError: ``mask`` or ``probability`` is not an array of the right kind.
            InvalidValueError: it has the wrong shape or values, or both were given.

        Example:
            >>> space = MultiBinary(4, seed=0)
            >>> space.sample(mask=np.array([0, 1, 0, 1], dtype=np.int8))
            array([0, 1, 0, 1], dtype=int8)
            >>> space.sample(probability=np.array([1.0, 0.0, 1.0, 0.0]))
            array([1, 0, 1, 0], dtype=int8)
        """
        rng = self._np_random if self._np_random is not None else self.np_random
        if mask is None and probability is None:
            return self._coins(rng)
        owner = repr(self)
        reject_both(owner, mask, probability)
        if mask is not None:
            checked = check_mask(mask, owner=owner, shape=self.shape, allowed=(0, 1, 2))
            return np.where(checked == 2, self._coins(rng), checked)
        bits = rng.random(self.shape) < check_probability(probability, owner=owner, shape=self.shape, sums_to_one=False)
        return bits.astype(np.int8)

    def _coins(self, rng: np.random.Generator) -> npt.NDArray[np.int8]:
        # One raw 64-bit draw gives 64 fair bits: far cheaper than rng.integers(0, 2, dtype=int8). The
        # little-endian byte view keeps samples the same on every platform.
        raw = rng.bit_generator.random_raw(self._words).astype("<u8", copy=False).view(np.uint8)
        return np.unpackbits(raw, count=self._size, bitorder="little").view(np.int8).reshape(self.shape)

    def contains(self, x: Any) -> bool:
        """Return whether ``x`` has the space's shape and only 0 and 1 entries. Never raises.

        Example:
            >>> space = MultiBinary(3)
            >>> space.contains(np.array([0, 1, 1], dtype=np.int8)), space.contains([1.0, 0.0, 1.0])
            (True, True)
            >>> space.contains(np.array([0, 2, 1])), space.contains([0, 1]), space.contains(None)
            (False, False, False)
        """
        if type(x) is np.ndarray and x.dtype is _INT8:
            # Viewed as uint8, a valid entry is 0 or 1 and any other int8 value is above 1.
            return x.shape == self._shape and int(x.view(np.uint8).max()) <= 1
        try:
            return self._contains_slow(x)
        except Exception:  # odd input of any kind (ragged lists, objects whose __array__ or == raises): False
            return False

    def _contains_slow(self, x: Any) -> bool:
        if isinstance(x, (list, tuple)):
            x = np.asarray(x)
        if not isinstance(x, np.ndarray) or x.shape != self._shape:
            return False
        kind = x.dtype.kind
        if kind == "b":
            return True
        if kind in "iufcO":
            return bool(np.logical_or(x == 0, x == 1).all())
        return False

    def __repr__(self) -> str:
        """Return ``MultiBinary(n)`` with ``n`` as given (an int or a tuple)."""
        return f"MultiBinary({self.n})"

    def __eq__(self, other: object) -> bool:
        """Return whether ``other`` is a MultiBinary space (or a Gymnasium one) of the same shape."""
        if not isinstance(other, MultiBinary):
            return equals_gymnasium(self, other)
        return self.shape == other.shape

    __hash__ = None  # type: ignore[assignment]

    def __setstate__(self, state: Any) -> None:
        """Restore a pickled space (the draw size is recomputed, so older pickles load too)."""
        super().__setstate__(state)
        self._cache_sizes()

    @json_checked
    def to_jsonable(self, sample_n: Sequence[npt.NDArray[np.int8]]) -> list[Any]:
        """Convert a batch of samples to nested lists of ints.

        Example:
            >>> MultiBinary(2).to_jsonable([np.array([0, 1], dtype=np.int8)])
            [[0, 1]]
        """
        return [np.asarray(sample).tolist() for sample in sample_n]

    @json_checked
    def from_jsonable(self, sample_n: Iterable[Any]) -> list[npt.NDArray[np.int8]]:
        """Convert nested lists made by :meth:`to_jsonable` back to int8 arrays.

        Example:
            >>> MultiBinary(2).from_jsonable([[0, 1]])
            [array([0, 1], dtype=int8)]
        """
        return arrays_from_json(self, sample_n, np.int8)
