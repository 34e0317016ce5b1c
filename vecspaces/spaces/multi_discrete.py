"""The :class:`MultiDiscrete` space: integer arrays whose entry ``i`` ranges over ``nvec[i]`` values."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from copy import deepcopy
from typing import Any

import numpy as np
import numpy.typing as npt

from vecspaces._ops.gymnasium import equals_gymnasium
from vecspaces._space import Space, arrays_from_json, json_checked, space_kind
from vecspaces.error import InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces._masks import check_mask, check_probability, reject_both
from vecspaces.spaces.discrete import Discrete, draw_allowed, draw_weighted, integer_dtype

__all__ = ["MultiDiscrete"]

# Up to this many values per entry, a uniform draw is floor(random() * nvec): as fast as Gymnasium's sampler,
# with a bias below 2**-29 per value. Larger entries use rng.integers, which is exact but slower.
_FLOAT_SAMPLING_LIMIT = 2**24


@space_kind
class MultiDiscrete(Space[npt.NDArray[np.integer[Any]]]):
    """Several discrete choices at once, e.g. the keys of a game controller.

    ``nvec`` gives the number of values of each entry and ``start`` the smallest one (0 by default); both can
    have several axes. Samples are arrays of the space's dtype and shape. ``contains`` accepts an array of
    the right shape whose dtype casts safely to the space's dtype (or a nested list of Python ints) with
    every entry in its range.

    Args:
        nvec: the number of values of each entry, all >= 1.
        dtype: an integer dtype that holds ``nvec``, ``start`` and every value.
        seed: an int or None to seed the sampler, or a ``numpy.random.Generator`` to use as the sampler.
        start: the smallest value of each entry, of the same shape as ``nvec``; zeros if None.

    Kernel-facing (read by ``vecspaces._kernels.multi_discrete``, set only here): ``_high``, the largest
    value of each entry (``start + nvec - 1``).

    Example:
        >>> space = MultiDiscrete([2, 3], start=[1, 1], seed=0)
        >>> space
        MultiDiscrete([2 3], start=[1 1])
        >>> space.sample() in space
        True
        >>> space[1]
        Discrete(3, start=1)
        >>> space.contains(np.array([2, 3])), space.contains(np.array([0, 3]))
        (True, False)
    """

    dtype: np.dtype[Any]
    nvec: npt.NDArray[np.integer[Any]]
    start: npt.NDArray[np.integer[Any]]

    def __init__(
        self,
        nvec: npt.ArrayLike,
        dtype: npt.DTypeLike = np.int64,
        seed: int | np.random.Generator | None = None,
        start: npt.ArrayLike | None = None,
    ) -> None:
        # Gymnasium raises ValueError for a bad MultiDiscrete dtype (TypeError for Discrete).
        space_dtype = integer_dtype("MultiDiscrete", dtype, InvalidValueError)
        counts = _integer_array("MultiDiscrete nvec", nvec, space_dtype)
        if start is None:
            firsts = np.zeros(counts.shape, dtype=space_dtype)
        else:
            firsts = _integer_array("MultiDiscrete start", start, space_dtype)
        if firsts.shape != counts.shape:
            raise InvalidValueError(
                message(
                    "MultiDiscrete start and nvec have different shapes",
                    expected=f"start of shape {counts.shape}",
                    got=show(firsts),
                )
            )
        if not (counts > 0).all():
            raise InvalidValueError(
                message("MultiDiscrete nvec must be positive", expected="every entry >= 1", got=show(counts))
            )
        top = np.iinfo(space_dtype).max
        # start + nvec - 1 <= top, written so that it cannot overflow: nvec - 1 lies in [0, top].
        if not (firsts <= top - (counts - 1)).all():
            raise InvalidValueError(
                message(
                    f"MultiDiscrete values do not fit in its dtype {space_dtype}",
                    expected=f"start + nvec - 1 <= {top}",
                    got=f"nvec={show(counts)}, start={show(firsts)}",
                    fix="pass a wider dtype",
                )
            )
        self.nvec = counts
        self.start = firsts
        super().__init__(counts.shape, space_dtype, seed)
        self._cache_layout()

    def _cache_layout(self) -> None:
        # The largest value of each entry (kernel-facing, see the class docstring), and for sample the
        # number of values of each entry as floats.
        self._high = self.start + (self.nvec - 1)
        small = self.nvec.size == 0 or int(self.nvec.max()) <= _FLOAT_SAMPLING_LIMIT
        self._float_nvec = self.nvec.astype(np.float64) if small else None

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the values, the shape of ``nvec``."""
        return self._shape  # type: ignore[return-value]

    @property
    def is_np_flattenable(self) -> bool:
        """Always True: a value flattens to one one-hot block per entry."""
        return True

    def sample(self, mask: Any | None = None, probability: Any | None = None) -> npt.NDArray[np.integer[Any]]:
        """Draw every entry uniformly, or among allowed values, or with given probabilities.

        Args:
            mask: a tuple with one int8 array of length ``nvec[i]`` per entry (tuples of tuples when ``nvec``
                has several axes); only values whose mask entry is 1 can be drawn, and an all-zero array gives
                that entry's ``start``.
            probability: the same structure with float arrays in [0, 1] summing to 1; values of probability
                0 are never drawn.

        Returns:
            An array of the space's shape and dtype.

        Raises:
            InvalidTypeError: the structure, or an array in it, is of the wrong kind.
            InvalidValueError: a length, shape or value is wrong, or both arguments were given.

        Example:
            >>> space = MultiDiscrete([3, 2], start=[-1, 0], seed=0)
            >>> space.sample(mask=(np.array([0, 0, 1], dtype=np.int8), np.array([0, 0], dtype=np.int8)))
            array([1, 0])
            >>> space.sample(probability=(np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0])))
            array([-1,  1])
        """
        rng = self._np_random if self._np_random is not None else self.np_random
        if mask is None and probability is None:
            if self._float_nvec is not None:
                draws = rng.random(self._shape)
                draws *= self._float_nvec
                values = draws.astype(self.dtype)
                values += self.start
                return values
            return rng.integers(self.start, self._high, endpoint=True, dtype=self.dtype)
        owner = repr(self)
        reject_both(owner, mask, probability)
        result = self.start.copy()
        flat = result.reshape(-1)
        if mask is not None:
            masks = [
                check_mask(leaf, owner=owner, shape=(count,), name=path)
                for leaf, count, path in self._leaves(mask, "mask", owner)
            ]
            for position, leaf_mask in enumerate(masks):
                index = draw_allowed(rng, leaf_mask)
                if index is not None:
                    flat[position] += index
        else:
            probabilities = [
                check_probability(leaf, owner=owner, shape=(count,), name=path)
                for leaf, count, path in self._leaves(probability, "probability", owner)
            ]
            for position, leaf_probability in enumerate(probabilities):
                flat[position] += draw_weighted(rng, leaf_probability)
        return result

    def _leaves(self, tree: Any, name: str, owner: str) -> list[tuple[Any, int, str]]:
        """Walk a nested mask or probability along ``nvec``: (leaf, nvec entry, path) in C order."""
        leaves: list[tuple[Any, int, str]] = []

        def walk(node: Any, counts: npt.NDArray[np.integer[Any]], path: str) -> None:
            if counts.ndim == 0:
                leaves.append((node, int(counts), path))
                return
            expected = f"a tuple of {len(counts)} entries, one per entry of nvec {counts.tolist()}"
            if not isinstance(node, (tuple, list)):
                raise InvalidTypeError(
                    message(f"{owner}.sample {path} is not a tuple", expected=expected, got=show(node))
                )
            if len(node) != len(counts):
                raise InvalidValueError(
                    message(f"{owner}.sample {path} has the wrong length", expected=expected, got=show(node))
                )
            for index, child in enumerate(node):
                walk(child, counts[index], f"{path}[{index}]")

        walk(tree, self.nvec, name)
        return leaves

    def contains(self, x: Any) -> bool:
        """Return whether ``x`` is a value of the space. Never raises.

        Example:
            >>> space = MultiDiscrete([2, 3], dtype=np.int32)
            >>> space.contains(np.array([1, 2], dtype=np.int32)), space.contains(np.array([1, 2], np.int8))
            (True, True)
            >>> space.contains(np.array([1, 2])), space.contains([1, 2]), space.contains([1.0, 2.0])
            (False, True, False)
        """
        if type(x) is np.ndarray:  # the common case, which cannot raise
            return self._contains_array(x)
        try:
            return self._contains_slow(x)
        except Exception:  # odd input of any kind (ragged lists, objects whose __array__ raises): False
            return False

    def _contains_slow(self, x: Any) -> bool:
        if not isinstance(x, (list, tuple)):
            return isinstance(x, np.ndarray) and self._contains_array(x)
        x = np.asarray(x)
        if x.dtype.kind not in "biu":
            return False
        if not np.can_cast(x.dtype, self.dtype):
            # Python ints have no dtype of their own (numpy picks int64): judge them by their values.
            if x.shape != self._shape:
                return False
            converted = x.astype(self.dtype)
            if not (converted.astype(x.dtype) == x).all():
                return False
            x = converted
        return self._contains_array(x)

    def _contains_array(self, x: npt.NDArray[Any]) -> bool:
        if x.shape != self._shape or not (x.dtype == self.dtype or np.can_cast(x.dtype, self.dtype)):
            return False
        # x casts safely to the space's dtype, so these comparisons are exact and cannot overflow.
        return bool((self.start <= x).all() and (x <= self._high).all())

    def __getitem__(self, index: Any) -> Discrete | MultiDiscrete:
        """Return the space of ``value[index]``: a Discrete for one entry, a MultiDiscrete otherwise.

        The subspace's generator starts in the parent's current state, so ``space[:].sample()`` equals
        ``space.sample()``.

        Example:
            >>> space = MultiDiscrete([[2, 3], [4, 5]], seed=3)
            >>> space[1], space[0, 1], space[:, 0]
            (MultiDiscrete([4 5]), Discrete(3), MultiDiscrete([2 4]))
            >>> bool((space[:].sample() == space.sample()).all())
            True
        """
        try:
            counts, firsts = self.nvec[index], self.start[index]
        except IndexError as error:
            raise IndexError(
                message(
                    f"{self!r} has no entry {index!r}",
                    expected=f"an index into shape {self.shape}",
                    got=show(index),
                )
            ) from error
        subspace: Discrete | MultiDiscrete
        if np.ndim(counts) == 0:
            subspace = Discrete(counts, start=firsts, dtype=self.dtype)
        else:
            subspace = MultiDiscrete(counts, dtype=self.dtype, start=firsts)
        subspace._np_random = deepcopy(self.np_random)
        return subspace

    def __len__(self) -> int:
        """Return the number of entries along the first axis (warns when ``nvec`` has several axes).

        Example:
            >>> len(MultiDiscrete([2, 3, 4]))
            3
        """
        if self.nvec.ndim == 0:
            raise InvalidTypeError(
                message(f"{self!r} has no length", expected="a space with at least one axis", got="a 0-d nvec")
            )
        if self.nvec.ndim >= 2:
            warnings.warn(
                f"len() of {self!r} counts only its first axis of {self.nvec.ndim}", UserWarning, stacklevel=2
            )
        return len(self.nvec)

    def __repr__(self) -> str:
        """Return ``MultiDiscrete(nvec)``, with ``start`` when it is not all zero."""
        if (self.start != 0).any():
            return f"MultiDiscrete({self.nvec}, start={self.start})"
        return f"MultiDiscrete({self.nvec})"

    def __eq__(self, other: object) -> bool:
        """Whether ``other`` is a MultiDiscrete (or a Gymnasium one) with the same dtype, ``nvec`` and ``start``."""
        if not isinstance(other, MultiDiscrete):
            return equals_gymnasium(self, other)
        return bool(
            self.dtype == other.dtype
            and self.shape == other.shape
            and (self.nvec == other.nvec).all()
            and (self.start == other.start).all()
        )

    __hash__ = None  # type: ignore[assignment]  # equality compares mutable arrays

    def __setstate__(self, state: Any) -> None:
        """Restore a pickled space, filling in a zero ``start`` for spaces pickled before it existed."""
        state = dict(state)
        if "start" not in state:
            shape = state.get("_shape", state.get("shape", np.shape(state["nvec"])))
            state["start"] = np.zeros(shape, dtype=state.get("dtype", np.int64))
        super().__setstate__(state)
        # An unpickled dtype is a copy; the canonical instance lets flatten compare dtypes with ``is``.
        self.dtype = np.dtype(self.dtype.str)
        self._cache_layout()

    @json_checked
    def to_jsonable(self, sample_n: Sequence[npt.NDArray[np.integer[Any]]]) -> list[Any]:
        """Convert a batch of samples to nested lists of ints.

        Example:
            >>> MultiDiscrete([2, 3]).to_jsonable([np.array([1, 2])])
            [[1, 2]]
        """
        return [np.asarray(sample).tolist() for sample in sample_n]

    @json_checked
    def from_jsonable(self, sample_n: Iterable[Any]) -> list[npt.NDArray[np.integer[Any]]]:
        """Convert nested lists made by :meth:`to_jsonable` back to arrays of the space's dtype.

        Example:
            >>> MultiDiscrete([2, 3], dtype=np.int8).from_jsonable([[1, 2]])
            [array([1, 2], dtype=int8)]
        """
        return arrays_from_json(self, sample_n, self.dtype)


def _integer_array(what: str, value: Any, dtype: np.dtype[Any]) -> npt.NDArray[np.integer[Any]]:
    """Return ``value`` as a new array of ``dtype``; refuse non-integers and values ``dtype`` cannot hold."""
    expected = f"integers that fit in {dtype}"
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "iu":
        converted = np.asarray(value).astype(dtype)
        if not (converted.astype(value.dtype) == value).all():  # a cast that wrapped around
            raise InvalidValueError(message(f"{what} has a value out of range", expected=expected, got=show(value)))
        return converted
    # Anything else is checked item by item as Python numbers, which neither wrap nor round.
    try:
        items = np.array(value, dtype=object)
    except (ValueError, TypeError):
        items = None
    if items is None or not all(_is_number(item) for item in items.ravel()):
        raise InvalidTypeError(message(f"{what} is not an array of integers", expected=expected, got=show(value)))
    if not all(_is_whole(item) for item in items.ravel()):
        raise InvalidValueError(message(f"{what} has a non-integer value", expected=expected, got=show(value)))
    numbers = [int(item) for item in items.ravel()]
    info = np.iinfo(dtype)
    if not all(info.min <= number <= info.max for number in numbers):
        raise InvalidValueError(message(f"{what} has a value out of range", expected=expected, got=show(value)))
    return np.array(numbers, dtype=dtype).reshape(items.shape)


def _is_number(item: object) -> bool:
    return isinstance(item, (int, float, np.integer, np.floating)) and not isinstance(item, (bool, np.bool_))


def _is_whole(number: Any) -> bool:
    return isinstance(number, (int, np.integer)) or (math.isfinite(number) and number == int(number))
