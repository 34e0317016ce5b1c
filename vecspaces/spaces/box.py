"""The :class:`Box` space: arrays of one shape and dtype whose entries lie in closed intervals.

Compared with ``gymnasium.spaces.Box`` the constructor never writes into the caller's arrays, accepts bounds
that broadcast to an explicit ``shape`` and plain lists of numbers, rejects bounds a dtype cannot hold
(``float16`` overflow, ``+inf`` in an integer ``high`` array, ``2**63`` for ``int64``) instead of storing a
wrapped value, and integer sampling reaches every value of the box, endpoints included, for every dtype up
to ``uint64``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from vecspaces._ops.gymnasium import equals_gymnasium
from vecspaces._space import Space, arrays_from_json, json_checked, space_kind
from vecspaces.error import InvalidTypeError, InvalidValueError, message, show
from vecspaces.spaces._box_bounds import as_number_array, cast_bound, check_dtype, check_order, check_shape, infer_shape

__all__ = ["Box"]


@space_kind
class Box(Space[NDArray[Any]]):
    r"""A box in :math:`\mathbb{R}^n`: arrays of a fixed shape and dtype with ``low <= x <= high`` everywhere.

    Each entry has its own closed interval. A bound may be infinite (``-inf`` below, ``inf`` above) for
    float and signed integer dtypes; an integer box stores an infinite bound as the dtype's limit and
    remembers it in ``bounded_below``/``bounded_above``.

    Args:
        low: the lower bounds: a number, or an array (or list) that broadcasts to ``shape``.
        high: the upper bounds, like ``low``.
        shape: the shape of the values. When None it is the shape of the array bounds (which must then
            agree), or ``(1,)`` when both bounds are numbers.
        dtype: an integer, floating or bool dtype; bounds outside its range are rejected.
        seed: an int or None to seed the sampler, or a ``numpy.random.Generator`` to use as the sampler.

    Raises:
        InvalidTypeError: ``dtype`` is not a dtype, or ``shape`` is not a tuple of ints.
        InvalidValueError: ``dtype`` is None or not numeric; a bound is NaN, not a number, does not broadcast
            to ``shape``, is outside the dtype's range or infinite where the dtype cannot be unbounded; or
            ``low > high`` somewhere.

    Kernel-facing (used by ``vecspaces._kernels.box``, set only here): :meth:`_from_checked`, which builds a
    box from arrays already valid for it without checking or copying them; ``_size``, the number of entries of
    a value; ``_vector_size``, the same for a 1-D box (whose value is its flat form) and -1 otherwise.

    Example:
        >>> Box(-1.0, 2.0, (3, 4))
        Box(-1.0, 2.0, (3, 4), float32)
        >>> Box(np.array([0, 0]), [5, 9], dtype=np.int64)
        Box(0, [5 9], (2,), int64)
        >>> Box(0, 255, (84, 84, 4), np.uint8).sample().shape
        (84, 84, 4)
    """

    dtype: np.dtype[Any]

    def __init__(
        self,
        low: npt.ArrayLike,
        high: npt.ArrayLike,
        shape: Sequence[int] | None = None,
        dtype: npt.DTypeLike = np.float32,
        seed: int | np.random.Generator | None = None,
    ) -> None:
        box_dtype = check_dtype(dtype)
        low_raw = as_number_array(low, "low")
        high_raw = as_number_array(high, "high")
        box_shape = infer_shape(low, high, low_raw, high_raw) if shape is None else check_shape(shape)
        low_values, low_bounded = cast_bound(low_raw, "low", box_shape, box_dtype)
        high_values, high_bounded = cast_bound(high_raw, "high", box_shape, box_dtype)
        check_order(low_values, high_values)

        super().__init__(box_shape, box_dtype, seed)
        self.low = low_values
        self.high = high_values
        self._bounded_below = low_bounded
        self._bounded_above = high_bounded
        self._plan: _SamplePlan | None = None
        self._cache_sizes()

    @classmethod
    def _from_checked(
        cls,
        low: NDArray[Any],
        high: NDArray[Any],
        bounded_below: NDArray[np.bool_],
        bounded_above: NDArray[np.bool_],
        seed: int | np.random.Generator | None = None,
    ) -> Box:
        """Build a Box from arrays already valid for it (the batching and flattening kernels use this).

        ``low`` and ``high`` share a shape and dtype; the flags have that shape. The arrays are taken as
        they are, without a copy, so pass arrays nobody else holds.
        """
        box = cls.__new__(cls)
        Space.__init__(box, low.shape, low.dtype, seed)
        box.low = low
        box.high = high
        box._bounded_below = bounded_below
        box._bounded_above = bounded_above
        box._plan = None
        box._cache_sizes()
        return box

    def _cache_sizes(self) -> None:
        # Kernel-facing (see the class docstring).
        self._size = math.prod(self._shape)  # type: ignore[arg-type]
        self._vector_size = self._size if len(self._shape) == 1 else -1  # type: ignore[arg-type]

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the values (a Box always has one).

        Example:
            >>> Box(0, 1, (2, 3)).shape
            (2, 3)
        """
        return self._shape  # type: ignore[return-value]

    @property
    def bounded_below(self) -> NDArray[np.bool_]:
        """Per entry, whether ``low`` is finite (an integer box stores ``-inf`` as its dtype's minimum).

        Example:
            >>> Box(np.array([-np.inf, 0.0]), 1.0).bounded_below
            array([False,  True])
        """
        return self._bounded_below

    @bounded_below.setter
    def bounded_below(self, value: NDArray[np.bool_]) -> None:
        self._bounded_below = value
        self._plan = None

    @property
    def bounded_above(self) -> NDArray[np.bool_]:
        """Per entry, whether ``high`` is finite (an integer box stores ``inf`` as its dtype's maximum).

        Example:
            >>> Box(-128, np.inf, (2,), np.int8).bounded_above
            array([False, False])
        """
        return self._bounded_above

    @bounded_above.setter
    def bounded_above(self, value: NDArray[np.bool_]) -> None:
        self._bounded_above = value
        self._plan = None

    @property
    def low_repr(self) -> str:
        """``low`` as shown by ``repr``: a single number when every entry is the same.

        Example:
            >>> Box(0.0, 1.0, (2,)).low_repr
            '0.0'
        """
        return _short_repr(self.low)

    @property
    def high_repr(self) -> str:
        """``high`` as shown by ``repr``: a single number when every entry is the same.

        Example:
            >>> Box(0, np.array([1, 2]), dtype=np.int32).high_repr
            '[1 2]'
        """
        return _short_repr(self.high)

    @property
    def is_np_flattenable(self) -> bool:
        """Always True: a Box flattens to its values in C order.

        Example:
            >>> Box(0, 1).is_np_flattenable
            True
        """
        return True

    def is_bounded(self, manner: Literal["both", "below", "above"] = "both") -> bool:
        """Return whether every entry is bounded on the given side(s).

        Args:
            manner: ``"below"``, ``"above"`` or ``"both"``.

        Raises:
            InvalidValueError: ``manner`` is none of these.

        Example:
            >>> space = Box(0.0, np.inf, (2,))
            >>> space.is_bounded("below"), space.is_bounded("above"), space.is_bounded()
            (True, False, False)
        """
        below = bool(np.all(self.bounded_below))
        above = bool(np.all(self.bounded_above))
        if manner == "both":
            return below and above
        if manner == "below":
            return below
        if manner == "above":
            return above
        raise InvalidValueError(
            message("Box.is_bounded manner is unknown", expected="'both', 'below' or 'above'", got=show(manner))
        )

    def sample(self, mask: None = None, probability: None = None) -> NDArray[Any]:
        r"""Draw a random array from the box; each entry is drawn on its own.

        * :math:`[a, b]`: uniform; integer dtypes draw every integer of the interval with equal chance.
        * :math:`[a, \infty)`: ``a + Exp(1)``, rounded down for integer dtypes.
        * :math:`(-\infty, b]`: ``b - Exp(1)``, with integer dtypes drawing ``b - floor(Exp(1))``.
        * :math:`(-\infty, \infty)`: ``N(0, 1)``, rounded down for integer dtypes.

        Results are kept inside the bounds and the dtype's finite range.

        Args:
            mask: not supported, must be None.
            probability: not supported, must be None.

        Returns:
            An array of the box's shape and dtype that the box contains.

        Raises:
            InvalidTypeError: a mask or a probability was given.

        Example:
            >>> space = Box(0, 2, (5,), np.int8, seed=3)
            >>> sample = space.sample()
            >>> sample.dtype, sample.shape, sample in space
            (dtype('int8'), (5,), True)
        """
        if mask is not None or probability is not None:
            raise InvalidTypeError(
                message(
                    "Box.sample cannot be masked",
                    expected="mask=None and probability=None",
                    got=f"mask={show(mask)}, probability={show(probability)}",
                    fix="draw a sample and clip it, or sample from a smaller Box",
                )
            )
        plan = self._plan
        if plan is None:
            plan = self._plan = _SamplePlan(self.bounded_below, self.bounded_above)
        if self.dtype.kind == "f":
            return _sample_float(self.np_random, plan, self.low, self.high, self.dtype)
        return _sample_int(self.np_random, plan, self.low, self.high, self.dtype)

    def contains(self, x: Any) -> bool:
        """Return whether ``x`` is an array of the box's shape, a dtype that casts safely, within the bounds.

        An ``ndarray`` must have a dtype that ``np.can_cast`` to the box's dtype under the safe rule, so a
        float64 array is not in a float32 box. Other values (lists, numbers) are converted to the box's
        dtype first; for an integer or bool box they must convert exactly (``1.5`` is not in an int box).
        Strings, None and other non-numbers give False. Never raises.

        Example:
            >>> space = Box(0.0, 1.0, (2,))
            >>> space.contains(np.array([0.5, 1.0], dtype=np.float32)), space.contains([0.5, 1.0])
            (True, True)
            >>> space.contains(np.array([0.5, 1.0])), space.contains("ab")
            (False, False)
        """
        if type(x) is np.ndarray and x.dtype == self.dtype:
            # The common case: a sample-like array, checked without any conversion.
            return x.shape == self._shape and bool((x >= self.low).all() and (x <= self.high).all())
        try:
            return self._contains_slow(x)
        except Exception:  # odd input of any kind answers False
            return False

    def _contains_slow(self, x: Any) -> bool:
        if isinstance(x, np.ndarray):
            if not np.can_cast(x.dtype, self.dtype):
                return False
        else:
            raw = np.asarray(x)
            if raw.dtype.kind not in "biuf":
                return False
            with np.errstate(all="ignore"):
                x = raw.astype(self.dtype)
            if self.dtype.kind != "f" and not np.array_equal(x, raw):
                return False  # the number is not an integer of the dtype's range
        return x.shape == self._shape and bool(np.all(x >= self.low) and np.all(x <= self.high))

    @json_checked
    def to_jsonable(self, sample_n: Sequence[Any]) -> list[Any]:
        """Convert a batch of samples to nested lists of numbers.

        Example:
            >>> Box(0, 9, (2,), np.int64).to_jsonable([np.array([1, 2]), np.array([3, 4])])
            [[1, 2], [3, 4]]
        """
        return [np.asarray(sample).tolist() for sample in sample_n]

    @json_checked
    def from_jsonable(self, sample_n: Iterable[Any]) -> list[NDArray[Any]]:
        """Convert nested lists made by :meth:`to_jsonable` back to arrays of the box's dtype.

        Example:
            >>> Box(0, 9, (2,), np.int64).from_jsonable([[1, 2]])
            [array([1, 2])]
        """
        return arrays_from_json(self, sample_n, self.dtype)

    def __repr__(self) -> str:
        """Return ``Box(low, high, shape, dtype)``, with a uniform bound shown as one number.

        Example:
            >>> Box(0, 255, (2, 2), np.uint8)
            Box(0, 255, (2, 2), uint8)
        """
        return f"Box({self.low_repr}, {self.high_repr}, {self.shape}, {self.dtype})"

    def __eq__(self, other: object) -> bool:
        """Return whether ``other`` is a Box of the same shape, dtype and bounds.

        Float bounds are compared with ``np.allclose`` (as Gymnasium does), integer bounds exactly. A Gymnasium
        space is converted and compared the same way (:func:`~vecspaces._space.equals_gymnasium`, which
        every kind's ``__eq__`` uses); with the Gymnasium space on the left, Gymnasium's ``__eq__`` decides, which
        takes a vecspaces space made while Gymnasium is imported for one of its own (see ``Space``).

        Example:
            >>> Box(0, 1, (2,)) == Box(0.0, 1.0, (2,)), Box(0, 1, (2,)) == Box(0, 1, (2,), np.float64)
            (True, False)
            >>> import gymnasium
            >>> Box(0, 1, (2,)) == gymnasium.spaces.Box(0, 1, (2,)), gymnasium.spaces.Box(0, 1, (2,)) == Box(0, 1, (2,))
            (True, True)
        """
        if not isinstance(other, Box):
            return equals_gymnasium(self, other)
        if self.shape != other.shape or self.dtype != other.dtype:
            return False
        if self.dtype.kind == "f":
            return bool(np.allclose(self.low, other.low) and np.allclose(self.high, other.high))
        return bool(np.array_equal(self.low, other.low) and np.array_equal(self.high, other.high))

    __hash__ = None  # type: ignore[assignment]  # mutable and compared by value, like Gymnasium's

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_plan"] = None  # derived from the flags; rebuilt on the first sample
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        # Gymnasium pickles keep the flags and the cached repr strings under their public names.
        for name in ("bounded_below", "bounded_above"):
            if name in state:
                state[f"_{name}"] = state.pop(name)
        state.pop("low_repr", None)
        state.pop("high_repr", None)
        state["_plan"] = None
        super().__setstate__(state)
        # An unpickled dtype is a copy; the canonical instance lets the kernels compare dtypes with ``is``.
        self.dtype = np.dtype(self.dtype.str)
        self._cache_sizes()


def _short_repr(array: NDArray[Any]) -> str:
    if array.size and array.min() == array.max():
        return str(array.min())
    return str(array)


# --- sampling -----------------------------------------------------------------------------------------

# The ways an entry is drawn, by which of its bounds are finite.
_UNIFORM, _FROM_LOW, _FROM_HIGH, _NORMAL = "uniform", "from_low", "from_high", "normal"


class _SamplePlan:
    """Which entries are drawn which way, worked out once from the boundedness flags.

    ``parts`` lists ``(way, where, size)`` for each way some entry is drawn; when one way covers every entry,
    ``where`` is None and ``size`` the box's shape, so no masking is needed.
    """

    def __init__(self, bounded_below: NDArray[np.bool_], bounded_above: NDArray[np.bool_]) -> None:
        below = np.asarray(bounded_below, np.bool_)
        above = np.asarray(bounded_above, np.bool_)
        masks = {
            _UNIFORM: below & above,
            _FROM_LOW: below & ~above,
            _FROM_HIGH: ~below & above,
            _NORMAL: ~below & ~above,
        }
        self.parts: list[tuple[str, NDArray[np.bool_] | None, Any]] = []
        for way, where in masks.items():
            if where.all():  # also true for a box with no entries, which counts as uniform
                self.parts = [(way, None, where.shape)]
                break
            if where.any():
                self.parts.append((way, where, int(where.sum())))
        self.all_bounded = self.parts[0][0] == _UNIFORM and self.parts[0][1] is None
        self.ways = {way for way, _, _ in self.parts}


def _pick(array: NDArray[Any], where: NDArray[np.bool_] | None) -> NDArray[Any]:
    return array if where is None else array[where]


def _uniform(rng: np.random.Generator, low: NDArray[Any], high: NDArray[Any], size: Any) -> NDArray[np.float64]:
    """Uniform floats from ``[low, high]`` computed in float64 the way ``Generator.uniform`` does."""
    if low.dtype.itemsize < 8:  # no float32 or float16 difference overflows float64
        width = np.subtract(high, low, dtype=np.float64)
    else:
        with np.errstate(over="ignore"):
            width = high - low
        if not np.isfinite(width).all():
            # Wider than the largest float: mix the bounds instead of scaling the width.
            u = rng.random(size)
            return np.asarray(np.multiply(low, 1.0 - u) + np.multiply(high, u))
    sample = rng.random(size)
    sample *= width
    sample += low
    return sample


def _sample_float(
    rng: np.random.Generator, plan: _SamplePlan, low: NDArray[Any], high: NDArray[Any], dtype: np.dtype[Any]
) -> NDArray[Any]:
    if plan.all_bounded:
        sample = _uniform(rng, low, high, low.shape).astype(dtype, copy=False)
        # Rounding in the float64 arithmetic can land one ulp above high, never below low.
        return np.minimum(sample, high, out=sample)
    drawn = np.empty(low.shape)
    for way, where, size in plan.parts:
        if way == _UNIFORM:
            values = _uniform(rng, _pick(low, where), _pick(high, where), size)
        elif way == _FROM_LOW:
            values = rng.exponential(size=size)
            values += _pick(low, where)
        elif way == _FROM_HIGH:
            values = _pick(high, where) - rng.exponential(size=size)
        else:
            values = rng.normal(size=size)
        if where is None:
            drawn = np.asarray(values)  # numpy gives scalars, not 0-d arrays, for a box of shape ()
        else:
            drawn[where] = values
    if plan.ways == {_NORMAL}:  # small numbers and infinite bounds: nothing to clip
        return drawn.astype(dtype)
    if dtype.itemsize < 8:  # a draw beyond the dtype's largest value would overflow to inf in the cast
        limit = float(np.finfo(dtype).max)
        np.clip(drawn, -limit, limit, out=drawn)
    sample = drawn.astype(dtype)
    np.maximum(sample, low, out=sample)
    return np.minimum(sample, high, out=sample)


def _sample_int(
    rng: np.random.Generator, plan: _SamplePlan, low: NDArray[Any], high: NDArray[Any], dtype: np.dtype[Any]
) -> NDArray[Any]:
    if plan.all_bounded:
        if low.size:
            first_low, first_high = low.flat[0], high.flat[0]
            if (low == first_low).all() and (high == first_high).all():
                # Scalar bounds make numpy's integer sampler several times faster than array bounds.
                return np.asarray(
                    rng.integers(first_low.item(), first_high.item(), size=low.shape, endpoint=True, dtype=dtype)
                )
        return np.asarray(rng.integers(low, high, size=low.shape, endpoint=True, dtype=dtype))

    # Only signed integer boxes have unbounded entries, and int64 holds every value of every signed dtype.
    info = np.iinfo(dtype)
    drawn = np.empty(low.shape, np.int64)
    for way, where, size in plan.parts:
        if way == _UNIFORM:
            values = rng.integers(_pick(low, where), _pick(high, where), size=size, endpoint=True, dtype=np.int64)
        elif way == _FROM_LOW:  # floor(low + e) == low + floor(e), saturated at the dtype's maximum
            steps = np.floor(rng.exponential(size=size)).astype(np.int64)
            start = _pick(low, where).astype(np.int64)
            values = np.where(start > info.max - steps, info.max, start + steps)
        elif way == _FROM_HIGH:  # Gymnasium's floor(high + 1 - e) == high - floor(e), saturated at the minimum
            steps = np.floor(rng.exponential(size=size)).astype(np.int64)
            start = _pick(high, where).astype(np.int64)
            values = np.where(start < info.min + steps, info.min, start - steps)
        else:
            values = np.floor(rng.normal(size=size)).astype(np.int64)
        if where is None:
            drawn = np.asarray(values)  # numpy gives scalars, not 0-d arrays, for a box of shape ()
        else:
            drawn[where] = values
    if _NORMAL in plan.ways and dtype.itemsize < 8:
        np.clip(drawn, info.min, info.max, out=drawn)
    return drawn.astype(dtype, copy=False)
