"""Tests of the Box space and its operations (vecspaces.spaces.box, vecspaces._kernels.box)."""

from __future__ import annotations

import copy
import json
import math
import pickle
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

from tests.helpers import assert_same_value, same_rng_state, skip_before_gymnasium
from vecspaces.error import Error, InvalidTypeError, InvalidValueError
from vecspaces.spaces import Box, Discrete, flatdim, flatten, flatten_space, unflatten
from vecspaces.spaces.utils import is_space_dtype_shape_equiv
from vecspaces.vector.utils import (
    batch_differing_spaces,
    batch_space,
    concatenate,
    create_empty_array,
    iterate,
)

inf = np.inf
INT64_MIN, INT64_MAX = int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max)
FLOAT16_MAX = float(np.finfo(np.float16).max)
FLOAT64_MAX = float(np.finfo(np.float64).max)

# Constructor arguments of the boxes the behaviour tests run over: every dtype kind, bounded, half-bounded and
# unbounded entries, shape () and an empty shape.
BOXES: dict[str, tuple[Any, ...]] = {
    "f32": (-1.0, 2.0, (3,), np.float32),
    "f64_2d": (0.0, 1.0, (2, 2), np.float64),
    "f32_scalar": (-1.0, 1.0, (), np.float32),
    "f16": (-1.0, 1.0, (4,), np.float16),
    "f16_wide": (-FLOAT16_MAX, FLOAT16_MAX, (4,), np.float16),
    "f64_widest": (-FLOAT64_MAX, FLOAT64_MAX, (3,), np.float64),
    "f32_arrays": (np.array([0.0, -5.0, 2.0]), np.array([1.0, 5.0, 2.0]), None, np.float32),
    "u8_image": (0, 255, (4, 4, 3), np.uint8),
    "i8_full": (-128, 127, (2,), np.int8),
    "i16": (-300, 300, (2,), np.int16),
    "u32": (0, 4_000_000_000, (2,), np.uint32),
    "i64": (-10, 10, (3,), np.int64),
    "i64_full": (INT64_MIN, INT64_MAX, (3,), np.int64),
    "i64_scalar": (0, 5, (), np.int64),
    "u64_big": (0, 2**64 - 1, (2,), np.uint64),
    "u64_top": (2**63, 2**64 - 1, (2,), np.uint64),
    "bool": (0, 1, (3,), np.bool_),
    "unbounded_f32": (-inf, inf, (2,), np.float32),
    "below_f64": (0.0, inf, (2,), np.float64),
    "above_f32": (-inf, 0.0, (2,), np.float32),
    "mixed_f64": (np.array([-inf, 0.0, -1.0, -inf]), np.array([inf, inf, 1.0, 3.0]), None, np.float64),
    "mixed_f16": (np.array([-inf, 0.0, -1.0, -inf]), np.array([inf, inf, 1.0, 3.0]), None, np.float16),
    "unbounded_i32": (-inf, inf, (2,), np.int32),
    "mixed_i64": (np.array([-inf, 0.0, -1.0, -inf]), np.array([inf, inf, 1.0, 3.0]), None, np.int64),
    "mixed_i8": (np.array([-inf, 120.0, -1.0, -inf]), np.array([inf, inf, 1.0, -120.0]), None, np.int8),
    "empty": (0.0, 1.0, (2, 0), np.float32),
}


def make(name: str, seed: int | None = 0) -> Box:
    low, high, shape, dtype = BOXES[name]
    return Box(low, high, shape, dtype, seed=seed)


@contextmanager
def raises(error: type[Exception], *fragments: str) -> Iterator[None]:
    """The block raises ``error`` with a message containing every fragment."""
    with pytest.raises(error) as info:
        yield
    for fragment in fragments:
        assert fragment in str(info.value), f"{fragment!r} not in {str(info.value)!r}"


# --- construction -------------------------------------------------------------------------------------


def test_defaults_and_attributes() -> None:
    space = Box(-1.0, 2.0, (3, 4))
    assert space.shape == (3, 4) and isinstance(space.shape, tuple)
    assert space.dtype == np.dtype(np.float32)
    assert space.low.dtype == space.high.dtype == np.float32
    assert space.low.shape == space.high.shape == (3, 4)
    assert np.all(space.low == -1.0) and np.all(space.high == 2.0)
    assert space.bounded_below.dtype == np.bool_ and space.bounded_below.shape == (3, 4)
    assert space.bounded_below.all() and space.bounded_above.all()
    assert space.is_np_flattenable is True


@pytest.mark.parametrize(
    ("low", "high", "shape"),
    [
        (0.0, 1.0, (1,)),
        (0, 1, (1,)),
        (np.float32(0), np.int64(1), (1,)),
        (np.zeros(3), np.ones(3), (3,)),
        (np.zeros((2, 3)), 1.0, (2, 3)),
        (0.0, np.ones((2, 3)), (2, 3)),
        (np.array(0.0), np.array(1.0), ()),
        ([0.0, 0.0], [1, 1], (2,)),
        ((0, 0, 0), (1, 1, 1), (3,)),
        ([[0, 0]], 1, (1, 2)),
    ],
)
def test_shape_inferred(low: Any, high: Any, shape: tuple[int, ...]) -> None:
    assert Box(low, high).shape == shape


@pytest.mark.parametrize(
    ("low", "shape", "expected"),
    [
        (np.zeros(3), (2, 3), np.zeros((2, 3))),
        (np.zeros((2, 1)), (2, 3), np.zeros((2, 3))),
        (np.zeros(2), (2, 2), np.zeros((2, 2))),  # Gymnasium rejects arrays that only broadcast
        ([0.0, -1.0], (3, 2), np.tile([0.0, -1.0], (3, 1))),
        (np.array(-2.0), (2,), np.full(2, -2.0)),
    ],
)
def test_bounds_broadcast_to_explicit_shape(low: Any, shape: tuple[int, ...], expected: np.ndarray) -> None:
    space = Box(low, 1.0, shape)
    assert space.shape == shape
    assert_same_value(space.low, expected.astype(np.float32))


@pytest.mark.parametrize("shape", [[2, 3], np.array([2, 3]), (np.int64(2), np.int32(3)), range(2, 4)])
def test_shape_accepts_integer_sequences(shape: Any) -> None:
    space = Box(0, 1, shape)
    assert space.shape == (2, 3)
    assert all(type(dim) is int for dim in space.shape)


def test_zero_sized_shape() -> None:
    space = Box(0.0, 1.0, (2, 0))
    assert space.low.shape == (2, 0)
    sample = space.sample()
    assert sample.shape == (2, 0) and sample in space
    assert repr(Box(np.zeros(0), np.zeros(0))) == "Box([], [], (0,), float32)"


# Every constructor error path, with its type and a fragment of the message.
CONSTRUCTOR_ERRORS: list[tuple[Callable[[], Box], type[Exception], str]] = [
    (lambda: Box(0, 1, dtype=None), InvalidValueError, "dtype must be given"),
    (lambda: Box(0, 1, dtype=0), InvalidTypeError, "dtype is not a dtype"),  # type: ignore[arg-type]
    (lambda: Box(0, 1, dtype="unknown"), InvalidTypeError, "dtype is not a dtype"),
    (lambda: Box(0, 1, dtype=np.zeros(2)), InvalidTypeError, "dtype is not a dtype"),  # type: ignore[arg-type]
    (lambda: Box(0, 1, dtype=np.complex64), InvalidValueError, "dtype is not numeric"),
    (lambda: Box(0, 1, dtype=str), InvalidValueError, "dtype is not numeric"),
    (lambda: Box(0, 1, dtype=object), InvalidValueError, "dtype is not numeric"),
    (lambda: Box(0, 1, dtype="datetime64[s]"), InvalidValueError, "dtype is not numeric"),
    (lambda: Box(0, 1, shape=3), InvalidTypeError, "shape is not a tuple"),  # type: ignore[arg-type]
    (lambda: Box(0, 1, shape="ab"), InvalidTypeError, "shape is not a tuple"),
    (lambda: Box(0, 1, shape=(2.0,)), InvalidTypeError, "non-integer entry"),  # type: ignore[arg-type]
    (lambda: Box(0, 1, shape=(True,)), InvalidTypeError, "non-integer entry"),
    (lambda: Box(0, 1, shape=(None,)), InvalidTypeError, "non-integer entry"),  # type: ignore[arg-type]
    (lambda: Box(0, 1, shape=(2, -1)), InvalidValueError, "negative entry"),
    (lambda: Box("a", 1), InvalidValueError, "Box low is not a number"),
    (lambda: Box(0, None), InvalidValueError, "Box high is not a number"),  # type: ignore[arg-type]
    (lambda: Box(0, {"a": 1}), InvalidValueError, "Box high is not a number"),  # type: ignore[arg-type]
    (lambda: Box(0, 1j), InvalidValueError, "Box high is not a number"),
    (lambda: Box(np.array([0, 1j]), 2), InvalidValueError, "Box low has non-numeric entries"),
    (lambda: Box([0, "a"], 2), InvalidValueError, "Box low has non-numeric entries"),
    (lambda: Box(np.array([0, None]), 2), InvalidValueError, "Box low has non-numeric entries"),
    (lambda: Box([[0, 1], [2]], 3), InvalidValueError, "Box low is not a rectangular array"),
    (lambda: Box(np.nan, 1), InvalidValueError, "Box low contains NaN"),
    (lambda: Box(0, np.array([1.0, np.nan])), InvalidValueError, "Box high contains NaN"),
    (lambda: Box(np.zeros(2), np.ones(3)), InvalidValueError, "different shapes"),
    (lambda: Box(np.zeros(2), 1, shape=(3,)), InvalidValueError, "Box low does not fit the shape"),
    (lambda: Box(0, np.ones((2, 3)), shape=(3,)), InvalidValueError, "Box high does not fit the shape"),
    (lambda: Box(1, 0), InvalidValueError, "low is above high"),
    (lambda: Box(np.array([0, 2]), np.array([1, 1])), InvalidValueError, "index (1,)"),
    # Infinite bounds where the dtype cannot be unbounded.
    (lambda: Box(-inf, 0, dtype=np.uint8), InvalidValueError, "cannot be unbounded"),
    (lambda: Box(0, inf, dtype=np.uint64), InvalidValueError, "cannot be unbounded"),
    (lambda: Box(0, np.array([1.0, inf]), dtype=np.uint16), InvalidValueError, "cannot be unbounded"),
    (lambda: Box(0, inf, dtype=np.bool_), InvalidValueError, "cannot be unbounded"),
    (lambda: Box(inf, inf, dtype=np.int8), InvalidValueError, "Box low is outside the range of dtype int8"),
    (
        lambda: Box(-inf, -inf, dtype=np.int8),
        InvalidValueError,
        "Box high is outside the range of dtype int8",
    ),
    # Bounds outside the dtype's range.
    (lambda: Box(0, 300, dtype=np.uint8), InvalidValueError, "Box high is outside the range of dtype uint8"),
    (lambda: Box(-1, 3, dtype=np.uint8), InvalidValueError, "Box low is outside the range of dtype uint8"),
    (lambda: Box(0, np.array([300], np.uint16), dtype=np.uint8), InvalidValueError, "outside the range"),
    (lambda: Box(-129, 0, dtype=np.int8), InvalidValueError, "outside the range of dtype int8"),
    (lambda: Box(0, 2.0**63, dtype=np.int64), InvalidValueError, "outside the range of dtype int64"),
    (lambda: Box(0, np.array([2.0**63]), dtype=np.int64), InvalidValueError, "outside the range"),
    (lambda: Box(0, 2**64, dtype=np.uint64), InvalidValueError, "outside the range of every numpy integer"),
    (lambda: Box(0, 2, dtype=np.bool_), InvalidValueError, "outside the range of dtype bool"),
    (lambda: Box(0, 0.5, dtype=np.bool_), InvalidValueError, "outside the range of dtype bool"),
    (lambda: Box(0, 80000, dtype=np.float16), InvalidValueError, "outside the range of dtype float16"),
    (lambda: Box(0, 65510.0, dtype=np.float16), InvalidValueError, "outside the range of dtype float16"),
    (lambda: Box(np.array([-8e4], np.float32), 0, dtype=np.float16), InvalidValueError, "Box low is outside"),
    (lambda: Box(0, 1e300), InvalidValueError, "outside the range of dtype float32"),
]


@pytest.mark.parametrize(("build", "error", "fragment"), CONSTRUCTOR_ERRORS)
def test_constructor_errors(build: Callable[[], Box], error: type[Exception], fragment: str) -> None:
    with raises(error, fragment, "expected", "got"):
        build()


def test_constructor_errors_are_catchable_as_builtins() -> None:
    with pytest.raises(ValueError):
        Box(1, 0)
    with pytest.raises(TypeError):
        Box(0, 1, shape=3)  # type: ignore[arg-type]
    with pytest.raises(Error):
        Box(0, 1, dtype=None)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_signed_int_infinities_become_limits_and_stay_unbounded(dtype: type) -> None:
    info = np.iinfo(dtype)
    space = Box(-inf, inf, (2,), dtype)
    assert space.low.tolist() == [info.min] * 2 and space.high.tolist() == [info.max] * 2
    assert not space.bounded_below.any() and not space.bounded_above.any()
    # The same limits given as numbers are bounds.
    finite = Box(int(info.min), int(info.max), (2,), dtype)
    assert finite.bounded_below.all() and finite.bounded_above.all()


def test_infinity_inside_an_int_array_bound() -> None:
    # Gymnasium wraps the inf of an int high array to the int64 minimum; here it becomes the maximum.
    space = Box(-inf, np.array([1.0, inf]), dtype=np.int64)
    assert space.high.tolist() == [1, INT64_MAX]
    assert space.low.tolist() == [INT64_MIN, INT64_MIN]
    assert space.bounded_above.tolist() == [True, False]
    assert space.bounded_below.tolist() == [False, False]


def test_float_bounds_keep_infinities() -> None:
    space = Box(np.array([-inf, 0.0]), np.array([1.0, inf]))
    assert space.low.tolist() == [-inf, 0.0] and space.high.tolist() == [1.0, inf]
    assert space.bounded_below.tolist() == [False, True]
    assert space.bounded_above.tolist() == [True, False]
    # Gymnasium accepts +inf as a low bound of a float box: the box holds only inf there.
    assert Box(inf, inf).contains(np.array([inf], np.float32))


def test_float_bounds_at_dtype_limits() -> None:
    space = Box(-FLOAT16_MAX, FLOAT16_MAX, (2,), np.float16)
    assert np.isfinite(space.low).all() and np.isfinite(space.high).all()
    assert space.is_bounded()
    assert Box(0, 65504, dtype=np.float16).high[0] == FLOAT16_MAX


@pytest.mark.parametrize("bound_dtype", [np.float16, np.float32])
def test_narrower_float_bounds_for_a_wider_dtype_convert_without_a_warning(bound_dtype: type) -> None:
    # numpy compared a float32 bound with float64's limits by casting the limits down: an overflow warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        space = Box(np.array([-1, 0], bound_dtype), np.array([1, 2], bound_dtype), dtype=np.float64)
    assert space.low.tolist() == [-1.0, 0.0] and space.high.dtype == np.float64


def test_fractional_int_bounds_truncate_like_gymnasium() -> None:
    space = Box(0.5, 2.7, dtype=np.int64)
    assert space.low.tolist() == [0] and space.high.tolist() == [2]


def test_large_python_ints() -> None:
    space = Box(0, [0, 2**64 - 1], dtype=np.uint64)
    assert space.high.tolist() == [0, 2**64 - 1]
    space = Box(2**63, 2**64 - 1, (2,), np.uint64)
    assert space.low.tolist() == [2**63] * 2
    assert Box(INT64_MIN, INT64_MAX, dtype=np.int64).high.tolist() == [INT64_MAX]


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int8])
def test_caller_arrays_are_not_mutated(dtype: type) -> None:
    low = np.array([-inf, 0.0, -1.0])
    high = np.array([inf, inf, 1.0])
    low_before, high_before = low.copy(), high.copy()
    space = Box(low, high, dtype=dtype)
    assert_same_value(low, low_before)
    assert_same_value(high, high_before)
    # And the box does not alias them: changing the inputs later leaves the box alone.
    space_low = space.low.copy()
    low[:] = 0.5
    assert_same_value(space.low, space_low)
    assert not np.shares_memory(space.low, low)


def test_box_does_not_alias_same_dtype_arrays() -> None:
    low = np.zeros(3, np.float32)
    high = np.ones(3, np.float32)
    space = Box(low, high)
    assert not np.shares_memory(space.low, low) and not np.shares_memory(space.high, high)
    assert not np.shares_memory(space.bounded_below, space.bounded_above)


def test_broadcast_bounds_are_writable_copies() -> None:
    space = Box(np.zeros(3), 1.0, (2, 3))
    assert space.low.flags.writeable and space.low.flags.owndata
    space.low[0, 0] = -1.0
    assert space.low[1, 0] == 0.0


# --- is_bounded, repr, eq, pickling -------------------------------------------------------------------


def test_is_bounded() -> None:
    space = Box(np.array([0.0, -inf]), np.array([inf, 1.0]))
    assert (space.is_bounded("below"), space.is_bounded("above"), space.is_bounded("both")) == (False,) * 3
    space = Box(0.0, inf, (2,))
    assert (space.is_bounded("below"), space.is_bounded("above"), space.is_bounded()) == (True, False, False)
    assert Box(0, 1).is_bounded()
    with raises(InvalidValueError, "manner", "'sideways'"):
        space.is_bounded("sideways")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("space", "text"),
    [
        (Box(-1.0, 2.0, (3, 4)), "Box(-1.0, 2.0, (3, 4), float32)"),
        (Box(0, 255, (2, 2), np.uint8), "Box(0, 255, (2, 2), uint8)"),
        (Box(np.array([0.0, 1.0]), np.array([1.0, 2.0])), "Box([0. 1.], [1. 2.], (2,), float32)"),
        (Box(-inf, inf, (2,)), "Box(-inf, inf, (2,), float32)"),
        (Box(0, 1, (3,), np.bool_), "Box(False, True, (3,), bool)"),
        (Box(-inf, inf, (1,), np.int64), "Box(-9223372036854775808, 9223372036854775807, (1,), int64)"),
        (Box(0.0, 1.0, ()), "Box(0.0, 1.0, (), float32)"),
    ],
)
def test_repr(space: Box, text: str) -> None:
    assert repr(space) == text


def test_repr_strings() -> None:
    space = Box(0.0, np.array([1.0, 2.0]))
    assert space.low_repr == "0.0" and space.high_repr == "[1. 2.]"


def test_eq() -> None:
    space = Box(0.0, 1.0, (2,))
    assert space == Box(0, 1, (2,))
    assert space == Box(np.zeros(2), np.ones(2))
    assert space == Box(0.0, 1.0 + 1e-9, (2,))  # floats compare with allclose, as in Gymnasium
    assert space != Box(0.0, 1.0, (3,))
    assert space != Box(0.0, 1.0, (2,), np.float64)
    assert space != Box(0.0, 2.0, (2,))
    assert space != Box(-1.0, 1.0, (2,))
    assert space != Discrete(2)
    assert space != "Box(0.0, 1.0, (2,), float32)"
    # Integer bounds compare exactly (Gymnasium's allclose calls these equal).
    assert Box(0, 100_000, dtype=np.int64) != Box(0, 100_001, dtype=np.int64)
    assert Box(0, 2**64 - 1, dtype=np.uint64) != Box(0, 2**64 - 2, dtype=np.uint64)


def test_unhashable_like_gymnasium() -> None:
    with pytest.raises(TypeError):
        hash(Box(0, 1))


@pytest.mark.parametrize("name", ["f32", "mixed_i64", "u64_big", "unbounded_f32"])
@pytest.mark.parametrize("clone", [pickle.loads, copy.deepcopy], ids=["pickle", "deepcopy"])
def test_copies_keep_rng_state(name: str, clone: Callable[[Any], Any]) -> None:
    space = make(name, seed=11)
    space.sample()
    copied = clone(pickle.dumps(space)) if clone is pickle.loads else clone(space)
    assert copied == space and repr(copied) == repr(space)
    assert_same_value(copied.bounded_below, space.bounded_below)
    assert_same_value(copied.bounded_above, space.bounded_above)
    assert copied.np_random is not space.np_random
    assert same_rng_state(copied.np_random, space.np_random)
    for _ in range(3):
        assert_same_value(copied.sample(), space.sample())


def test_setstate_of_legacy_state() -> None:
    # A state as older Gymnasium versions pickled it: public names, no repr strings, cached repr strings.
    space = Box(-inf, np.array([1.0, inf]), dtype=np.int32, seed=5)
    state = {
        "low": space.low,
        "high": space.high,
        "bounded_below": space.bounded_below,
        "bounded_above": space.bounded_above,
        "shape": space.shape,
        "dtype": space.dtype,
        "np_random": np.random.default_rng(5),
    }
    old = Box.__new__(Box)
    old.__setstate__(state)
    assert repr(old) == repr(space)
    assert old.low_repr == space.low_repr and old.high_repr == space.high_repr
    assert_same_value(old.bounded_above, np.array([True, False]))
    assert old.sample() in old
    # A Gymnasium 1.x state carries the cached repr strings; they are recomputed, not trusted.
    state = dict(space.__getstate__(), low_repr=None, high_repr="stale")
    new = Box.__new__(Box)
    new.__setstate__(state)
    assert new.high_repr == space.high_repr
    assert "low_repr" not in vars(new)


def test_assigning_flags_changes_sampling() -> None:
    # The Gymnasium converter assigns the flags after construction; sampling must follow them.
    space = Box(INT64_MIN, INT64_MAX, (200,), np.int64, seed=0)
    assert np.abs(space.sample()).max() > 2**40  # uniform over the whole range
    space.bounded_below = np.zeros(200, bool)
    space.bounded_above = np.zeros(200, bool)
    assert np.abs(space.sample()).max() < 10  # floor(N(0, 1))


# --- seeding ------------------------------------------------------------------------------------------


def test_seeding_reproduces_samples() -> None:
    a, b = make("mixed_f64", seed=None), make("mixed_f64", seed=None)
    assert a.seed(123) == 123 and b.seed(123) == 123
    for _ in range(3):
        assert_same_value(a.sample(), b.sample())
    c = make("mixed_f64", seed=124)
    assert not np.array_equal(a.sample(), c.sample())


def test_generator_seed_is_used_by_identity() -> None:
    rng = np.random.default_rng(3)
    space = Box(0, 1, (2,), seed=rng)
    assert space.np_random is rng


# --- sample -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(BOXES))
def test_samples_are_arrays_of_the_space(name: str) -> None:
    space = make(name)
    for _ in range(50):
        sample = space.sample()
        assert type(sample) is np.ndarray
        assert sample.dtype == space.dtype and sample.shape == space.shape
        assert sample in space, sample


@pytest.mark.parametrize("name", list(BOXES))
def test_sample_gives_no_numpy_warnings(name: str) -> None:
    space = make(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(20):
            space.sample()


@pytest.mark.parametrize(("mask", "probability"), [(np.ones(2, np.int8), None), (None, np.ones(2) / 2), (0, 0)])
def test_sample_rejects_mask_and_probability(mask: Any, probability: Any) -> None:
    with raises(InvalidTypeError, "Box.sample cannot be masked"):
        Box(0, 1, (2,)).sample(mask=mask, probability=probability)


@pytest.mark.parametrize(
    ("low", "high", "dtype"),
    [(-3, 3, np.int8), (0, 5, np.uint8), (-2, 2, np.int64), (250, 255, np.uint8), (-128, -123, np.int8)],
)
def test_int_sampling_reaches_every_value_uniformly(low: int, high: int, dtype: type) -> None:
    space = Box(low, high, (7000,), dtype, seed=1)
    counts = Counter(space.sample().tolist())
    assert sorted(counts) == list(range(low, high + 1))  # both endpoints included
    expected = 7000 / (high - low + 1)
    assert all(abs(count - expected) < 0.15 * expected for count in counts.values()), counts


def test_int_sampling_with_per_entry_bounds() -> None:
    low, high = np.array([0, -5, 7]), np.array([1, -3, 7])
    space = Box(low, high, dtype=np.int16, seed=2)
    samples = np.array([space.sample() for _ in range(300)])
    for entry in range(3):
        assert set(samples[:, entry].tolist()) == set(range(low[entry], high[entry] + 1))


def test_bool_sampling() -> None:
    space = Box(0, 1, (4000,), np.bool_, seed=0)
    sample = space.sample()
    assert sample.dtype == np.bool_
    assert 0.45 < sample.mean() < 0.55
    assert not Box(0, 0, (10,), np.bool_, seed=0).sample().any()
    assert Box(1, 1, (10,), np.bool_, seed=0).sample().all()


def test_uint64_bounds_above_2_63() -> None:
    # Gymnasium returns only 0 for the first and raises for the second.
    space = Box(0, 2**64 - 1, (4000,), np.uint64, seed=0)
    sample = space.sample()
    assert 0.45 < (sample >= 2**63).mean() < 0.55
    assert len(set(sample.tolist())) == 4000
    space = Box(2**63, 2**63 + 3, (4000,), np.uint64, seed=0)
    assert sorted(set(space.sample().tolist())) == [2**63, 2**63 + 1, 2**63 + 2, 2**63 + 3]
    space = Box(2**64 - 2, 2**64 - 1, (100,), np.uint64, seed=0)
    assert set(space.sample().tolist()) == {2**64 - 2, 2**64 - 1}


def test_int64_full_range() -> None:
    sample = Box(INT64_MIN, INT64_MAX, (1000,), np.int64, seed=0).sample()
    assert (sample < 0).any() and (sample > 0).any() and np.abs(sample).max() > 2**62
    sample = Box(INT64_MAX - 1, INT64_MAX, (100,), np.int64, seed=0).sample()
    assert set(sample.tolist()) == {INT64_MAX - 1, INT64_MAX}


def test_float_uniform_statistics() -> None:
    space = Box(np.array([-1.0, 10.0]), np.array([1.0, 20.0]), dtype=np.float64, seed=0)
    samples = np.array([space.sample() for _ in range(4000)])
    assert (samples >= space.low).all() and (samples <= space.high).all()
    assert np.allclose(samples.mean(axis=0), [0.0, 15.0], atol=0.15)
    assert np.allclose(samples.std(axis=0), np.array([2.0, 10.0]) / math.sqrt(12), rtol=0.05)


def test_float_equal_bounds() -> None:
    sample = Box(np.array([2.0, 0.1]), np.array([2.0, 0.1]), seed=0).sample()
    assert_same_value(sample, np.array([2.0, 0.1], np.float32))


def test_float64_range_wider_than_the_largest_float() -> None:
    # Gymnasium raises OverflowError: "Range exceeds valid bounds".
    space = Box(-FLOAT64_MAX, FLOAT64_MAX, (2000,), np.float64, seed=0)
    sample = space.sample()
    assert np.isfinite(sample).all() and sample in space
    assert (sample < -1e307).any() and (sample > 1e307).any()


def test_half_bounded_float_distributions() -> None:
    below = Box(1.0, inf, (20000,), np.float64, seed=0).sample()
    assert below.min() >= 1.0 and abs(below.mean() - 2.0) < 0.05  # 1 + Exp(1)
    above = Box(-inf, 1.0, (20000,), np.float32, seed=0).sample()
    assert above.max() <= 1.0 and abs(above.mean() - 0.0) < 0.05  # 1 - Exp(1)
    normal = Box(-inf, inf, (20000,), np.float64, seed=0).sample()
    assert abs(normal.mean()) < 0.05 and abs(normal.std() - 1.0) < 0.05


def test_half_bounded_int_distributions() -> None:
    below = Box(5, inf, (20000,), np.int32, seed=0).sample()
    assert below.min() == 5 and abs((below == 5).mean() - (1 - math.exp(-1))) < 0.02  # 5 + floor(Exp(1))
    above = Box(-inf, 5, (20000,), np.int16, seed=0).sample()
    assert above.max() == 5 and abs((above == 5).mean() - (1 - math.exp(-1))) < 0.02  # 5 - floor(Exp(1))
    assert abs(above.mean() - (5 - 1 / (math.e - 1))) < 0.05
    normal = Box(-inf, inf, (20000,), np.int64, seed=0).sample()  # floor(N(0, 1))
    assert abs(normal.mean() + 0.5) < 0.05
    assert set(normal[:200].tolist()) <= set(range(-6, 6))


def test_half_bounded_samples_saturate_at_the_dtype_limits() -> None:
    assert set(Box(126, inf, (2000,), np.int8, seed=0).sample().tolist()) == {126, 127}
    assert set(Box(-inf, -127, (2000,), np.int8, seed=0).sample().tolist()) == {-128, -127}
    assert set(Box(INT64_MAX - 1, inf, (2000,), np.int64, seed=0).sample().tolist()) == {
        INT64_MAX - 1,
        INT64_MAX,
    }
    assert set(Box(-inf, INT64_MIN + 1, (2000,), np.int64, seed=0).sample().tolist()) == {
        INT64_MIN,
        INT64_MIN + 1,
    }
    top = Box(FLOAT16_MAX, inf, (100,), np.float16, seed=0).sample()
    assert np.isfinite(top).all() and (top == FLOAT16_MAX).all()


def test_mixed_entries_use_their_own_distribution() -> None:
    space = Box(np.array([-inf, 0.0, -1.0, -inf]), np.array([inf, inf, 1.0, 3.0]), dtype=np.float64, seed=0)
    samples = np.array([space.sample() for _ in range(4000)])
    assert abs(samples[:, 0].mean()) < 0.1 and abs(samples[:, 0].std() - 1) < 0.1
    assert samples[:, 1].min() >= 0 and abs(samples[:, 1].mean() - 1) < 0.1
    assert samples[:, 2].min() >= -1 and samples[:, 2].max() <= 1 and abs(samples[:, 2].mean()) < 0.1
    assert samples[:, 3].max() <= 3 and abs(samples[:, 3].mean() - 2) < 0.1


def test_scalar_shape_samples_are_0d_arrays() -> None:
    for dtype in (np.float32, np.int64, np.bool_):
        sample = Box(0, 1, (), dtype, seed=0).sample()
        assert type(sample) is np.ndarray and sample.shape == () and sample.dtype == dtype
    for low, high in ((-inf, inf), (0.0, inf), (-inf, 0.0)):
        sample = Box(low, high, (), np.int32, seed=0).sample()
        assert type(sample) is np.ndarray and sample.shape == ()


# --- contains -----------------------------------------------------------------------------------------


def test_contains_exact_arrays() -> None:
    space = Box(-1.0, 1.0, (2,))
    assert space.contains(np.array([0.0, 1.0], np.float32))
    assert space.contains(np.array([-1.0, -1.0], np.float32))
    assert not space.contains(np.array([0.0, 1.5], np.float32))
    assert not space.contains(np.array([-1.5, 0.0], np.float32))
    assert type(space.contains(np.zeros(2, np.float32))) is bool


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (np.zeros(2, np.float64), False),  # float64 does not cast safely to float32
        (np.zeros(2, np.float16), True),
        (np.zeros(2, np.int16), True),
        (np.zeros(2, np.int32), False),
        (np.zeros(2, np.int64), False),
        (np.zeros(2, np.bool_), True),
        (np.zeros(2, object), False),
        (np.array(["a", "b"]), False),
        (np.zeros(3, np.float32), False),
        (np.zeros((1, 2), np.float32), False),
        (np.zeros((), np.float32), False),
        (np.array([np.nan, 0.0], np.float32), False),
    ],
)
def test_contains_dtype_and_shape_rules(value: Any, expected: bool) -> None:
    assert Box(-1.0, 1.0, (2,)).contains(value) is expected


def test_contains_int_boxes() -> None:
    space = Box(0, 200, (2,), np.uint8)
    assert space.contains(np.array([0, 200], np.uint8))
    assert not space.contains(np.array([0, 201], np.uint8))
    assert not space.contains(np.array([0, 1], np.int8))  # int8 does not cast safely to uint8
    assert not space.contains(np.array([0.0, 1.0], np.float32))
    assert Box(-5, 5, (2,), np.int64).contains(np.array([-5, 5], np.int8))
    assert Box(0, 2**64 - 1, (1,), np.uint64).contains(np.array([2**64 - 1], np.uint64))


def test_contains_lists_and_numbers_without_warning() -> None:
    space = Box(-1.0, 1.0, (2,))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert space.contains([0.5, -0.5])
        assert space.contains((1, 0))
        assert space.contains([True, False])
        assert not space.contains([0.5, 2.0])
        assert not space.contains([0.5])
        assert not space.contains([[0.5, 0.5]])
        assert Box(0.0, 1.0, ()).contains(0.5)
        assert Box(0.0, 1.0, ()).contains(np.float64(0.5))
        assert not Box(0.0, 1.0, (1,)).contains(0.5)


def test_contains_lists_in_int_boxes_must_convert_exactly() -> None:
    space = Box(0, 255, (2,), np.uint8)
    assert space.contains([1, 255])
    assert space.contains([1.0, 2.0])
    assert not space.contains([1.5, 2.0])  # Gymnasium truncates 1.5 to 1 and answers True
    assert not space.contains([256, 0])
    assert not space.contains([-1, 0])
    assert not space.contains([300.0, 0.0])
    assert not Box(0, 1, (1,), np.bool_).contains([2])
    assert Box(0, 1, (1,), np.bool_).contains([True])
    assert not Box(-inf, inf, (1,), np.int64).contains([2**70])


@pytest.mark.parametrize(
    "value",
    ["ab", b"ab", None, {"a": 1}, object(), [[0.5, 0.5], [0.5]], ["a", "b"], [None, None], [1j, 0], 1j],
)
def test_contains_odd_input_is_false_without_raising(value: Any) -> None:
    for space in (Box(-1.0, 1.0, (2,)), Box(0, 5, (2,), np.int64), Box(-inf, inf, (), np.float64)):
        assert space.contains(value) is False


def test_contains_never_raises_on_hostile_objects() -> None:
    class Hostile:
        def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
            raise RuntimeError("no")

        def __len__(self) -> int:
            raise RuntimeError("no")

    assert Box(0, 1, (2,)).contains(Hostile()) is False


def test_contains_infinities() -> None:
    assert Box(-inf, inf, (2,)).contains(np.array([inf, -inf], np.float32))
    assert not Box(-inf, 0.0, (1,)).contains(np.array([inf], np.float32))
    assert Box(-inf, inf, (1,), np.int8).contains(np.array([-128], np.int8))


def test_in_operator() -> None:
    assert np.zeros(2, np.float32) in Box(-1, 1, (2,))
    assert np.full(2, 2, np.float32) not in Box(-1, 1, (2,))


# --- JSON ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["f32", "f16", "i8_full", "u64_big", "bool", "f32_scalar", "unbounded_i32"])
def test_jsonable_round_trip(name: str) -> None:
    space = make(name)
    samples = [space.sample() for _ in range(3)]
    data = json.loads(json.dumps(space.to_jsonable(samples)))
    assert data == [sample.tolist() for sample in samples]
    back = space.from_jsonable(data)
    assert len(back) == 3
    for sample, restored in zip(samples, back, strict=True):
        assert_same_value(restored, sample)


# --- flatten family -----------------------------------------------------------------------------------


def test_flatdim() -> None:
    assert flatdim(Box(0, 1, (3, 4))) == 12
    assert flatdim(Box(0, 1, ())) == 1
    assert flatdim(Box(0, 1, (2, 0))) == 0
    assert type(flatdim(Box(0, 1, (3,)))) is int


def test_flatten_space() -> None:
    space = Box(np.arange(6.0).reshape(2, 3), 10.0, dtype=np.float64)
    flat = flatten_space(space)
    assert isinstance(flat, Box) and flat.shape == (6,) and flat.dtype == np.float64
    assert_same_value(flat.low, np.arange(6.0))
    assert_same_value(flat.high, np.full(6, 10.0))
    assert not np.shares_memory(flat.low, space.low)
    # Unbounded integer entries stay unbounded (their stored bound is the dtype limit).
    flat = flatten_space(Box(np.array([[-inf, 0.0]]), np.array([[1.0, inf]]), dtype=np.int32))
    assert flat.bounded_below.tolist() == [False, True] and flat.bounded_above.tolist() == [True, False]
    assert all(flat.sample() in flat for _ in range(20))


def test_flatten_and_unflatten() -> None:
    space = Box(0, 10, (2, 3), np.int16, seed=0)
    x = space.sample()
    flat = flatten(space, x)
    assert flat.shape == (6,) and flat.dtype == np.int16
    assert not np.shares_memory(flat, x)  # a new array, as Gymnasium's flatten gives
    assert flat in flatten_space(space)
    back = unflatten(space, flat)
    assert_same_value(back, x)
    assert_same_value(flatten(space, x.tolist()), x.reshape(-1))
    assert_same_value(flatten(space, x.astype(np.int64)), x.reshape(-1))
    assert_same_value(unflatten(space, flat.tolist()), x)
    # A non-contiguous view is flattened in C order.
    transposed = np.ascontiguousarray(x.T).T
    assert_same_value(flatten(space, transposed), x.reshape(-1))


def test_flatten_scalar_box() -> None:
    space = Box(0.0, 1.0, ())
    x = np.array(0.5, np.float32)
    assert_same_value(flatten(space, x), np.array([0.5], np.float32))
    assert_same_value(unflatten(space, np.array([0.5], np.float32)), x)


@pytest.mark.parametrize("value", [np.zeros(5, np.float32), np.zeros((3, 3), np.float32), [0.0], 0.5])
def test_flatten_wrong_size(value: Any) -> None:
    with raises(InvalidValueError, "flatten of Box(0.0, 1.0, (2, 2), float32)", "wrong size", "(2, 2)"):
        flatten(Box(0.0, 1.0, (2, 2)), value)


def test_flatten_non_numbers() -> None:
    with raises(InvalidValueError, "flatten of Box", "cannot convert"):
        flatten(Box(0.0, 1.0, (2,)), ["a", "b"])


@pytest.mark.parametrize("value", [np.zeros(5, np.float32), np.zeros(3), [0.0], ["a", "b", "c", "d"]])
def test_unflatten_errors(value: Any) -> None:
    with raises(InvalidValueError, "unflatten of Box(0.0, 1.0, (2, 2), float32)", "4 entries"):
        unflatten(Box(0.0, 1.0, (2, 2)), value)


def test_is_space_dtype_shape_equiv() -> None:
    class MyBox(Box):
        pass

    space = Box(0.0, 1.0, (2,))
    assert is_space_dtype_shape_equiv(space, Box(-5.0, 5.0, (2,)))
    assert is_space_dtype_shape_equiv(space, Box(np.array([0.0, -inf]), np.array([1.0, 2.0])))
    assert not is_space_dtype_shape_equiv(space, Box(0.0, 1.0, (3,)))
    assert not is_space_dtype_shape_equiv(space, Box(0.0, 1.0, (2,), np.float64))
    assert not is_space_dtype_shape_equiv(space, MyBox(0.0, 1.0, (2,)))
    assert not is_space_dtype_shape_equiv(space, Discrete(2))


# --- batching family ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["f32", "f64_2d", "f32_scalar", "u8_image", "mixed_i64", "bool", "u64_big"])
def test_batch_space(name: str) -> None:
    space = make(name, seed=4)
    batched = batch_space(space, 3)
    assert isinstance(batched, Box)
    assert batched.shape == (3, *space.shape) and batched.dtype == space.dtype
    for index in range(3):
        assert_same_value(batched.low[index, ...], space.low)
        assert_same_value(batched.high[index, ...], space.high)
        assert_same_value(batched.bounded_below[index, ...], space.bounded_below)
        assert_same_value(batched.bounded_above[index, ...], space.bounded_above)
    assert not np.shares_memory(batched.low, space.low)
    assert batched.np_random is not space.np_random
    assert same_rng_state(batched.np_random, space.np_random)
    state = copy.deepcopy(space.np_random.bit_generator.state)
    assert all(batched.sample() in batched for _ in range(5))
    assert space.np_random.bit_generator.state == state  # the original did not advance


@pytest.mark.parametrize("n", [-1, 2.0, True, "3", None])
def test_batch_size_must_be_an_int_of_at_least_zero(n: Any) -> None:
    for function in (batch_space, create_empty_array):
        with raises(InvalidValueError, "batch size"):
            function(Box(0, 1), n)


def test_batch_differing_spaces() -> None:
    spaces = [Box(0.0, 1.0, (2,), seed=3), Box(np.array([-1.0, -inf]), np.array([0.0, 5.0])), Box(2, 3, (2,))]
    batched = batch_differing_spaces(spaces)
    assert isinstance(batched, Box) and batched.shape == (3, 2) and batched.dtype == np.float32
    assert_same_value(batched.low, np.array([[0, 0], [-1, -inf], [2, 2]], np.float32))
    assert_same_value(batched.high, np.array([[1, 1], [0, 5], [3, 3]], np.float32))
    assert batched.bounded_below.tolist() == [[True, True], [True, False], [True, True]]
    assert same_rng_state(batched.np_random, spaces[0].np_random)
    assert batched.np_random is not spaces[0].np_random
    sample = batched.sample()
    assert sample in batched
    assert all(row in space for row, space in zip(sample, spaces, strict=True))


def test_batch_differing_spaces_keeps_int_flags() -> None:
    spaces = [Box(-inf, 5, (2,), np.int16), Box(0, 5, (2,), np.int16)]
    batched = batch_differing_spaces(spaces)
    assert batched.bounded_below.tolist() == [[False, False], [True, True]]


@pytest.mark.parametrize(
    ("other", "fragment"),
    [(Box(0.0, 1.0, (3,)), "shape (3,)"), (Box(0.0, 1.0, (2,), np.float64), "dtype float64")],
)
def test_batch_differing_spaces_errors(other: Box, fragment: str) -> None:
    with raises(InvalidValueError, "one shape and dtype", fragment, "at spaces[1]"):
        batch_differing_spaces([Box(0.0, 1.0, (2,)), other])


def test_batch_differing_spaces_of_mixed_kinds() -> None:
    with pytest.raises(InvalidTypeError):
        batch_differing_spaces([Box(0.0, 1.0, (2,)), Discrete(2)])


@pytest.mark.parametrize("name", ["f32", "f64_2d", "f32_scalar", "u8_image", "bool", "u64_big"])
def test_concatenate_and_iterate(name: str) -> None:
    space = make(name)
    items = [space.sample() for _ in range(4)]
    out = create_empty_array(space, 4)
    assert out.shape == (4, *space.shape) and out.dtype == space.dtype
    result = concatenate(space, items, out)
    assert result is out
    assert result in batch_space(space, 4)
    for index, item in enumerate(items):
        assert_same_value(result[index, ...], item)
    rows = list(iterate(batch_space(space, 4), result))
    assert len(rows) == 4
    for row, item in zip(rows, items, strict=True):
        if space.shape == ():  # numpy scalars, as Gymnasium's iterate gives, where samples are 0-d arrays
            assert type(row) is space.dtype.type
            row = np.asarray(row)
        assert_same_value(row, item)


def test_concatenate_accepts_generators_and_lists() -> None:
    space = Box(0, 9, (2,), np.int64)
    out = create_empty_array(space, 3)
    result = concatenate(space, (np.array([i, i]) for i in range(3)), out)
    assert result is out and out.tolist() == [[0, 0], [1, 1], [2, 2]]
    concatenate(space, [[5, 6], [7, 8], [9, 9]], out)
    assert out.tolist() == [[5, 6], [7, 8], [9, 9]]


def test_concatenate_errors() -> None:
    space = Box(0.0, 1.0, (2,))
    out = create_empty_array(space, 3)
    with raises(InvalidValueError, "wrong number of items", "3 items", "got 2 items"):
        concatenate(space, [np.zeros(2, np.float32)] * 2, out)
    with raises(InvalidValueError, "wrong shape", "shape (2,)", "got shape (3,)", "at items[1]"):
        concatenate(space, [np.zeros(2, np.float32), np.zeros(3, np.float32), np.zeros(2, np.float32)], out)
    with raises(InvalidValueError, "out array of the wrong shape", "(n, 2)"):
        concatenate(space, [np.zeros(2, np.float32)] * 3, np.zeros((3, 4), np.float32))
    with raises(InvalidTypeError, "dtype out cannot hold", "float64", "at items[0]"):
        concatenate(Box(0, 9, (2,), np.int8), [np.zeros(2)] * 3, np.zeros((3, 2), np.int8))
    with raises(InvalidTypeError, "array to write into"):
        concatenate(space, [np.zeros(2, np.float32)], [[0.0, 0.0]])


def test_iterate_errors() -> None:
    with raises(InvalidTypeError, "iterate needs a batched space"):
        iterate(Box(0.0, 1.0, ()), np.array(0.5, np.float32))
    with raises(InvalidTypeError, "cannot iterate"):
        iterate(Box(0.0, 1.0, (2,)), np.float32(0.5))


def test_create_empty_array() -> None:
    space = Box(0, 5, (2, 3), np.uint8)
    empty = create_empty_array(space, 4)
    assert_same_value(empty, np.zeros((4, 2, 3), np.uint8))
    ones = create_empty_array(space, 2, fn=np.ones)
    assert_same_value(ones, np.ones((2, 2, 3), np.uint8))
    assert create_empty_array(Box(0, 1, ()), 3).shape == (3,)


# --- differential tests against Gymnasium -------------------------------------------------------------

DIFFERENTIAL = [
    "f32",
    "f64_2d",
    "f32_scalar",
    "f16",
    "f16_wide",
    "f32_arrays",
    "u8_image",
    "i8_full",
    "i64",
    "i64_full",
    "u64_big",
    "bool",
    "unbounded_f32",
    "below_f64",
    "mixed_f64",
    "unbounded_i32",
    "empty",
]


def gym_box(name: str, seed: int | None = 0) -> Any:
    gym_spaces = pytest.importorskip("gymnasium.spaces")
    low, high, shape, dtype = BOXES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Gymnasium warns about float64 bounds cast to float32
        return gym_spaces.Box(low, high, shape, dtype, seed=seed)


def contains_candidates(space: Box) -> list[Any]:
    sample = space.sample()
    values: list[Any] = [sample, sample.tolist(), sample[None], np.zeros((5,), space.dtype)]
    values += [sample.astype(dtype) for dtype in (np.float16, np.float32, np.float64, np.int8, np.int64)]
    values += [sample.astype(dtype) for dtype in (np.uint8, np.uint64, np.bool_)]
    values += [np.full(space.shape, np.nan), np.zeros(space.shape, object)]
    values += [np.asarray(space.low, np.float64) - 1, np.asarray(space.high, np.float64) + 1]
    values += ["abc", None, {}, 0.5, 1, [0.5], [[0.5, 0.5]]]
    return values


@pytest.mark.parametrize("name", DIFFERENTIAL)
def test_same_construction_as_gymnasium(name: str) -> None:
    if name == "f32_scalar":
        skip_before_gymnasium((1, 4), "a scalar Box's bounded_below and bounded_above are numpy bools, not arrays")
    ours, theirs = make(name), gym_box(name)
    assert repr(ours) == repr(theirs)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    assert_same_value(ours.low, theirs.low)
    assert_same_value(ours.high, theirs.high)
    assert_same_value(ours.bounded_below, theirs.bounded_below)
    assert_same_value(ours.bounded_above, theirs.bounded_above)
    for manner in ("both", "below", "above"):
        assert ours.is_bounded(manner) == theirs.is_bounded(manner)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", DIFFERENTIAL)
def test_same_contains_answers_as_gymnasium(name: str) -> None:
    ours, theirs = make(name), gym_box(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Gymnasium warns when it casts a list
        for index, value in enumerate(contains_candidates(ours)):
            assert ours.contains(value) == theirs.contains(value), (index, value)
        for _ in range(20):
            assert theirs.contains(ours.sample())


@pytest.mark.parametrize("name", ["f32", "f64_2d", "f32_scalar", "f32_arrays"])
def test_bounded_float_samples_equal_gymnasiums(name: str) -> None:
    # Fully bounded float boxes draw exactly Gymnasium's stream for the same seed.
    ours, theirs = make(name, seed=42), gym_box(name, seed=42)
    for _ in range(3):
        assert_same_value(ours.sample(), theirs.sample())


@pytest.mark.parametrize("name", DIFFERENTIAL)
def test_same_flatten_results_as_gymnasium(name: str) -> None:
    gym_spaces = pytest.importorskip("gymnasium.spaces")
    ours, theirs = make(name), gym_box(name)
    assert flatdim(ours) == gym_spaces.flatdim(theirs)
    flat_ours, flat_theirs = flatten_space(ours), gym_spaces.flatten_space(theirs)
    assert flat_ours.shape == flat_theirs.shape and flat_ours.dtype == flat_theirs.dtype
    assert_same_value(flat_ours.low, flat_theirs.low)
    assert_same_value(flat_ours.high, flat_theirs.high)
    x = ours.sample()
    assert_same_value(flatten(ours, x), gym_spaces.flatten(theirs, x))
    flat = flatten(ours, x)
    assert_same_value(unflatten(ours, flat), gym_spaces.unflatten(theirs, flat))


@pytest.mark.parametrize("name", DIFFERENTIAL)
def test_same_batching_results_as_gymnasium(name: str) -> None:
    gym_vector_utils = pytest.importorskip("gymnasium.vector.utils")
    ours, theirs = make(name), gym_box(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        batched_theirs = gym_vector_utils.batch_space(theirs, 3)
    batched_ours = batch_space(ours, 3)
    assert batched_ours.shape == batched_theirs.shape and batched_ours.dtype == batched_theirs.dtype
    assert_same_value(batched_ours.low, batched_theirs.low)
    assert_same_value(batched_ours.high, batched_theirs.high)
    assert repr(batched_ours) == repr(batched_theirs)
    items = [ours.sample() for _ in range(3)]
    result_ours = concatenate(ours, items, create_empty_array(ours, 3))
    result_theirs = gym_vector_utils.concatenate(theirs, items, gym_vector_utils.create_empty_array(theirs, 3))
    assert_same_value(result_ours, result_theirs)
    for row_ours, row_theirs in zip(
        iterate(batched_ours, result_ours),
        gym_vector_utils.iterate(batched_theirs, result_theirs),
        strict=True,
    ):
        assert_same_value(row_ours, row_theirs)  # numpy scalars for shape (), as Gymnasium gives


def test_flatten_returns_a_new_array_never_a_view_of_the_observation() -> None:
    for x in (np.zeros(3, np.float32), np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32).T):
        space = Box(-1.0, 1.0, x.shape, np.float32)
        flat = flatten(space, x)
        flat[0] = 0.5
        assert x.flat[0] == 0.0
