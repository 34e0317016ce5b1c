"""The :class:`Discrete` space: the integers ``start, start + 1, ..., start + n - 1``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces._ops.gymnasium import equals_gymnasium
from vecspaces._space import Space, json_checked, space_kind
from vecspaces.error import InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces._masks import check_mask, check_probability, reject_both

__all__ = ["Discrete"]


@space_kind
class Discrete(Space[np.integer[Any]]):
    r"""A finite set of consecutive integers :math:`\{start, start + 1, \dots, start + n - 1\}`.

    Samples are numpy scalars of the space's dtype. ``contains`` accepts a Python int in the range, or an
    integer numpy scalar or 0-d array in the range whose dtype casts safely to the space's dtype (so
    ``np.int64(0)`` is not in an int32 space); anything else, floats included, is not contained.

    Args:
        n: the number of elements, an integer >= 1.
        seed: an int or None to seed the sampler, or a ``numpy.random.Generator`` to use as the sampler.
        start: the smallest element.
        dtype: an integer dtype that holds ``n`` and every element.

    Kernel-facing (read by ``vecspaces._kernels.discrete``, set only here): ``_count``, ``_low`` and
    ``_high``, the number of values and the smallest and largest one as Python ints (cheap to compare, immune
    to dtype overflow), and ``_scalar_type``, the numpy scalar type of the values.

    Example:
        >>> space = Discrete(3, start=-1, seed=42)
        >>> space
        Discrete(3, start=-1)
        >>> space.sample()
        -1
        >>> space.sample(mask=np.array([0, 0, 1], dtype=np.int8))
        1
        >>> 1 in space, 2 in space, 0.0 in space
        (True, False, False)
    """

    dtype: np.dtype[Any]
    n: np.integer[Any]
    start: np.integer[Any]

    def __init__(
        self,
        n: int | np.integer[Any],
        seed: int | np.random.Generator | None = None,
        start: int | np.integer[Any] = 0,
        dtype: npt.DTypeLike = np.int64,
    ) -> None:
        count = integer_argument("Discrete n", n)
        first = integer_argument("Discrete start", start)
        if count < 1:
            raise InvalidValueError(message("Discrete n must be positive", expected="an int >= 1", got=show(n)))
        space_dtype = integer_dtype("Discrete", dtype, InvalidTypeError)
        info = np.iinfo(space_dtype)
        if count > info.max or first < info.min or first + count - 1 > info.max:
            raise InvalidValueError(
                message(
                    f"Discrete values do not fit in its dtype {space_dtype}",
                    expected=f"n <= {info.max} and {info.min} <= start <= start + n - 1 <= {info.max}",
                    got=f"n={count}, start={first}",
                    fix="pass a wider dtype",
                )
            )
        self.n = space_dtype.type(count)
        self.start = space_dtype.type(first)
        super().__init__((), space_dtype, seed)
        self._cache_bounds()

    def _cache_bounds(self) -> None:
        # Python ints make the hot paths (sample, contains) cheap and immune to dtype overflow.
        self._count = int(self.n)
        self._low = int(self.start)
        self._high = self._low + self._count - 1
        self._scalar_type = self.dtype.type

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the values, always ``()``."""
        return ()

    @property
    def is_np_flattenable(self) -> bool:
        """Always True: a value flattens to a one-hot vector of length ``n``."""
        return True

    def sample(
        self, mask: npt.NDArray[np.int8] | None = None, probability: npt.NDArray[np.float64] | None = None
    ) -> np.integer[Any]:
        """Draw an element uniformly, or among the allowed ones, or with the given probabilities.

        Args:
            mask: an int8 array of shape ``(n,)``; only elements whose entry is 1 can be drawn. An all-zero
                mask gives ``start``.
            probability: a float array of shape ``(n,)`` in [0, 1] summing to 1; element ``start + i`` is
                drawn with probability ``probability[i]`` (elements of probability 0 never are).

        Returns:
            A numpy scalar of the space's dtype.

        Raises:
            InvalidTypeError: ``mask`` or ``probability`` is not an array of the right kind.
            InvalidValueError: it has the wrong shape or values, or both were given.

        Example:
            >>> space = Discrete(4, start=10, seed=0)
            >>> space.sample(probability=np.array([0.0, 0.0, 1.0, 0.0]))
            12
            >>> space.sample(mask=np.zeros(4, dtype=np.int8))
            10
        """
        rng = self._np_random if self._np_random is not None else self.np_random
        if mask is None and probability is None:
            return rng.integers(self._low, self._high, endpoint=True, dtype=self._scalar_type)
        owner = repr(self)
        reject_both(owner, mask, probability)
        shape = (int(self.n),)
        if mask is not None:
            index = draw_allowed(rng, check_mask(mask, owner=owner, shape=shape))
            return self._scalar_type(self._low if index is None else self._low + index)
        index = draw_weighted(rng, check_probability(probability, owner=owner, shape=shape))
        return self._scalar_type(self._low + index)

    def contains(self, x: Any) -> bool:
        """Return whether ``x`` is an element of the space. Never raises.

        Example:
            >>> space = Discrete(3, dtype=np.int32)
            >>> space.contains(2), space.contains(np.int32(2)), space.contains(np.int64(2))
            (True, True, False)
            >>> space.contains(2**40), space.contains(np.array(1, dtype=np.int8)), space.contains("1")
            (False, True, False)
        """
        if type(x) is int:
            return self._low <= x <= self._high
        try:
            if isinstance(x, np.integer) or (isinstance(x, np.ndarray) and x.shape == () and x.dtype.kind in "iu"):
                return bool(np.can_cast(x.dtype, self.dtype)) and self._low <= int(x) <= self._high
            if isinstance(x, int):  # bool and other int subclasses follow Python: True == 1
                return bool(self._low <= x <= self._high)
        except Exception:  # a subclass whose comparisons or conversions raise
            return False
        return False

    def __repr__(self) -> str:
        """Return ``Discrete(n)``, with ``start`` and ``dtype`` when they are not the defaults."""
        parts = [str(int(self.n))]
        if self.start != 0:
            parts.append(f"start={int(self.start)}")
        if self.dtype != np.int64:
            parts.append(f"dtype={self.dtype}")
        return f"Discrete({', '.join(parts)})"

    def __eq__(self, other: object) -> bool:
        """Whether ``other`` is a Discrete space (or a Gymnasium one) with the same ``n``, ``start`` and dtype."""
        if not isinstance(other, Discrete):
            return equals_gymnasium(self, other)
        return int(self.n) == int(other.n) and int(self.start) == int(other.start) and self.dtype == other.dtype

    __hash__ = None  # type: ignore[assignment]  # equality compares mutable attributes

    def __setstate__(self, state: Any) -> None:
        """Restore a pickled space, filling in ``start`` for spaces pickled before it existed."""
        state = dict(state)
        if "start" not in state:
            state["start"] = np.dtype(state.get("dtype", np.int64)).type(0)
        super().__setstate__(state)
        self._cache_bounds()

    @json_checked
    def to_jsonable(self, sample_n: Sequence[Any]) -> list[int]:
        """Convert a batch of samples to a list of Python ints.

        Example:
            >>> Discrete(3).to_jsonable([np.int64(0), np.int64(2)])
            [0, 2]
        """
        return [int(x) for x in sample_n]

    @json_checked
    def from_jsonable(self, sample_n: Iterable[Any]) -> list[np.integer[Any]]:
        """Convert a list of ints made by :meth:`to_jsonable` back to numpy scalars of the space's dtype.

        Example:
            >>> Discrete(3, dtype=np.int32).from_jsonable([0, 2])
            [0, 2]
        """
        return [self._scalar_type(x) for x in sample_n]


def integer_argument(what: str, value: Any) -> int:
    """Return ``value`` as a Python int if it is a Python or numpy integer (not a bool), else raise.

    Example:
        >>> integer_argument("Discrete n", np.uint8(3))
        3
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidTypeError(message(f"{what} must be an integer", expected="an int", got=show(value)))
    return int(value)


def integer_dtype(owner: str, dtype: Any, error: type[Exception]) -> np.dtype[Any]:
    """Return ``np.dtype(dtype)`` if it is a signed or unsigned integer dtype, else raise ``error``.

    Gymnasium raises TypeError for a bad Discrete dtype but ValueError for a bad MultiDiscrete dtype, so the
    caller chooses the error class.

    Example:
        >>> integer_dtype("Discrete", "int16", InvalidTypeError)
        dtype('int16')
    """
    expected = "an integer dtype such as np.int64, np.int32 or np.uint8"
    if dtype is None:
        raise error(message(f"{owner} dtype is missing", expected=expected, got="None"))
    try:
        result = np.dtype(dtype)
    except TypeError:
        raise InvalidTypeError(message(f"{owner} dtype is not a dtype", expected=expected, got=show(dtype))) from None
    if result.kind not in "iu":
        raise error(message(f"{owner} dtype must be an integer dtype", expected=expected, got=str(result)))
    return result


def draw_allowed(rng: np.random.Generator, mask: npt.NDArray[np.int8]) -> int | None:
    """Draw the index of one of the nonzero entries of ``mask`` uniformly, or None if there are none.

    Example:
        >>> draw_allowed(np.random.default_rng(0), np.array([0, 0, 1], dtype=np.int8))
        2
    """
    allowed = np.flatnonzero(mask)
    if allowed.size == 0:
        return None
    return int(allowed[rng.integers(allowed.size)])


def draw_weighted(rng: np.random.Generator, probability: npt.NDArray[np.float64]) -> int:
    """Draw an index with the given (checked, non-negative) probabilities; zero entries are never drawn.

    The probabilities are renormalised, so a sum that is only close to 1 is fine.

    Example:
        >>> draw_weighted(np.random.default_rng(0), np.array([0.0, 1.0, 0.0]))
        1
    """
    support = np.flatnonzero(probability)
    cumulative = np.cumsum(probability[support])
    position = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
    return int(support[min(position, support.size - 1)])
