"""Tests of the Discrete space and its operations (vecspaces.spaces.discrete, vecspaces._kernels.discrete)."""

from __future__ import annotations

import copy
import json
import pickle
from collections import Counter
from typing import Any

import numpy as np
import pytest

from tests.helpers import assert_same_value, needs_gymnasium, same_rng_state
from vecspaces.error import InvalidTypeError, InvalidValueError
from vecspaces.spaces import Box, Discrete, MultiDiscrete, flatdim, flatten, flatten_space, unflatten
from vecspaces.spaces.utils import is_space_dtype_shape_equiv
from vecspaces.vector.utils import (
    batch_differing_spaces,
    batch_space,
    concatenate,
    create_empty_array,
    iterate,
)

# (n, start, dtype): zero, positive and negative start; narrow, unsigned and the default dtypes.
PARAMS = [
    (5, 0, np.int64),
    (4, 3, np.int64),
    (4, -2, np.int64),
    (3, 0, np.int32),
    (200, 10, np.uint8),
    (6, -3, np.int8),
]
IDS = [f"n{n}_start{start}_{np.dtype(dtype).name}" for n, start, dtype in PARAMS]


@pytest.fixture(params=PARAMS, ids=IDS)
def space(request: pytest.FixtureRequest) -> Discrete:
    n, start, dtype = request.param
    return Discrete(n, start=start, dtype=dtype, seed=0)


def int8(*bits: int) -> np.ndarray:
    return np.array(bits, dtype=np.int8)


# --- construction -------------------------------------------------------------------------------------------


def test_defaults() -> None:
    space = Discrete(3)
    assert space.n == 3 and type(space.n) is np.int64
    assert space.start == 0 and type(space.start) is np.int64
    assert space.dtype == np.int64
    assert space.shape == ()
    assert space.is_np_flattenable


def test_positional_order_is_n_seed_start() -> None:
    space = Discrete(4, 7, 2)
    assert space.start == 2
    assert same_rng_state(space.np_random, Discrete(4, seed=7).np_random)


def test_attributes_take_the_dtype() -> None:
    space = Discrete(np.int32(5), start=np.int64(-1), dtype=np.int16)
    assert type(space.n) is np.int16 and type(space.start) is np.int16
    assert (int(space.n), int(space.start)) == (5, -1)


def test_generator_seed_is_used_by_identity() -> None:
    rng = np.random.default_rng(3)
    assert Discrete(3, seed=rng).np_random is rng


@pytest.mark.parametrize("n", [2.0, "3", None, True, np.array(3), np.float64(2)])
def test_n_must_be_an_integer(n: Any) -> None:
    with pytest.raises(InvalidTypeError, match="Discrete n must be an integer"):
        Discrete(n)


@pytest.mark.parametrize("start", [0.0, "0", None, False])
def test_start_must_be_an_integer(start: Any) -> None:
    with pytest.raises(InvalidTypeError, match="Discrete start must be an integer"):
        Discrete(3, start=start)


@pytest.mark.parametrize("n", [0, -1, np.int8(-5)])
def test_n_must_be_positive(n: Any) -> None:
    with pytest.raises(InvalidValueError, match="Discrete n must be positive"):
        Discrete(n)


def test_dtype_none_is_rejected() -> None:
    with pytest.raises(InvalidTypeError, match="Discrete dtype is missing"):
        Discrete(3, dtype=None)


@pytest.mark.parametrize("dtype", [np.float32, bool, np.complex64, str, object])
def test_dtype_must_be_integer(dtype: Any) -> None:
    with pytest.raises(InvalidTypeError, match="must be an integer dtype"):
        Discrete(3, dtype=dtype)


@pytest.mark.parametrize("dtype", ["unknown", 0.5])
def test_dtype_must_be_a_dtype(dtype: Any) -> None:
    with pytest.raises(InvalidTypeError, match="Discrete dtype is not a dtype"):
        Discrete(3, dtype=dtype)


@pytest.mark.parametrize(
    ("n", "start", "dtype"),
    [(300, 0, np.uint8), (256, 0, np.uint8), (3, -1, np.uint8), (2, 127, np.int8), (128, -128, np.int8)],
)
def test_values_must_fit_in_the_dtype(n: int, start: int, dtype: Any) -> None:
    with pytest.raises(InvalidValueError, match="do not fit in its dtype"):
        Discrete(n, start=start, dtype=dtype)


def test_values_at_the_dtype_limits_are_accepted() -> None:
    assert Discrete(127, start=-128, dtype=np.int8).start == -128
    assert Discrete(255, start=1, dtype=np.uint8).start + (Discrete(255, start=1, dtype=np.uint8).n - 1) == 255


# --- sampling -----------------------------------------------------------------------------------------------


def test_sample_is_a_scalar_of_the_dtype(space: Discrete) -> None:
    for _ in range(20):
        x = space.sample()
        assert type(x) is space.dtype.type
        assert x in space


def test_every_value_is_reachable_including_negative_start(space: Discrete) -> None:
    values = {int(space.sample()) for _ in range(40 * int(space.n))}
    assert values == set(range(int(space.start), int(space.start) + int(space.n)))


def test_values_at_the_dtype_limits_are_reachable() -> None:
    low = Discrete(3, start=-128, dtype=np.int8, seed=1)
    high = Discrete(3, start=125, dtype=np.int8, seed=1)
    assert {int(low.sample()) for _ in range(100)} == {-128, -127, -126}
    assert {int(high.sample()) for _ in range(100)} == {125, 126, 127}


def test_uniform_sampling_is_roughly_uniform() -> None:
    space = Discrete(6, start=-2, seed=5)
    counts = Counter(int(space.sample()) for _ in range(6000))
    assert all(850 <= counts[value] <= 1150 for value in range(-2, 4)), counts


def test_same_seed_same_samples() -> None:
    a, b = Discrete(10, seed=42), Discrete(10, seed=42)
    assert [a.sample() for _ in range(10)] == [b.sample() for _ in range(10)]


def test_mask_restricts_the_values(space: Discrete) -> None:
    mask = np.zeros(int(space.n), dtype=np.int8)
    mask[[0, -1]] = 1
    allowed = {int(space.start), int(space.start) + int(space.n) - 1}
    values = {int(space.sample(mask=mask)) for _ in range(100)}
    assert values == allowed


def test_mask_result_has_the_dtype(space: Discrete) -> None:
    mask = np.ones(int(space.n), dtype=np.int8)
    assert type(space.sample(mask=mask)) is space.dtype.type
    assert type(space.sample(mask=np.zeros(int(space.n), dtype=np.int8))) is space.dtype.type


def test_all_zero_mask_gives_start(space: Discrete) -> None:
    assert space.sample(mask=np.zeros(int(space.n), dtype=np.int8)) == space.start


def test_bool_mask_is_accepted() -> None:
    space = Discrete(3, seed=0)
    assert space.sample(mask=np.array([False, True, False])) == 1


def test_masked_sampling_is_uniform_over_the_allowed_values() -> None:
    space = Discrete(5, seed=2)
    counts = Counter(int(space.sample(mask=int8(1, 0, 1, 0, 1))) for _ in range(3000))
    assert set(counts) == {0, 2, 4}
    assert all(850 <= count <= 1150 for count in counts.values()), counts


@pytest.mark.parametrize(
    ("mask", "error", "fragment"),
    [
        ([1, 0, 1], InvalidTypeError, "mask is not an array"),
        ((1, 0, 1), InvalidTypeError, "mask is not an array"),
        (np.array([1.0, 0.0, 1.0]), InvalidTypeError, "mask has a non-integer dtype"),
        (int8(1, 0), InvalidValueError, "mask has the wrong shape"),
        (np.ones((3, 1), dtype=np.int8), InvalidValueError, "mask has the wrong shape"),
        (int8(1, 2, 0), InvalidValueError, "mask has a value out of range"),
        (int8(1, -1, 0), InvalidValueError, "mask has a value out of range"),
    ],
)
def test_bad_masks_raise_our_errors(mask: Any, error: type[Exception], fragment: str) -> None:
    space = Discrete(3, seed=0)
    before = copy.deepcopy(space.np_random)
    with pytest.raises(error, match=fragment) as info:
        space.sample(mask=mask)
    assert "Discrete(3).sample" in str(info.value)
    assert same_rng_state(space.np_random, before)


def test_probability_follows_the_distribution() -> None:
    space = Discrete(4, start=1, seed=3)
    probability = np.array([0.1, 0.0, 0.6, 0.3])
    counts = Counter(int(space.sample(probability=probability)) for _ in range(5000))
    assert counts[2] == 0
    assert 400 <= counts[1] <= 600
    assert 2800 <= counts[3] <= 3200
    assert 1350 <= counts[4] <= 1650


def test_probability_zero_is_never_drawn() -> None:
    space = Discrete(3, seed=0)
    probability = np.array([0.0, 1.0, 0.0])
    assert {int(space.sample(probability=probability)) for _ in range(200)} == {1}


def test_probability_close_to_one_is_renormalised() -> None:
    space = Discrete(2, seed=0)
    probability = np.array([0.5, 0.500001])  # np.isclose to 1; numpy's own choice would reject it
    assert {int(space.sample(probability=probability)) for _ in range(200)} == {0, 1}


def test_float32_probability_is_accepted() -> None:
    space = Discrete(2, seed=0)
    assert space.sample(probability=np.array([0.0, 1.0], dtype=np.float32)) == 1


@pytest.mark.parametrize(
    ("probability", "error", "fragment"),
    [
        ([0.5, 0.5, 0.0], InvalidTypeError, "probability is not an array"),
        (np.array([1, 0, 0]), InvalidTypeError, "probability has a non-float dtype"),
        (np.array([0.5, 0.5]), InvalidValueError, "probability has the wrong shape"),
        (np.array([1.5, -0.5, 0.0]), InvalidValueError, r"probability has a value outside \[0, 1\]"),
        (np.array([np.nan, 0.5, 0.5]), InvalidValueError, r"probability has a value outside \[0, 1\]"),
        (np.array([0.5, 0.6, 0.0]), InvalidValueError, "probability does not sum to 1"),
        (np.zeros(3), InvalidValueError, "probability does not sum to 1"),
    ],
)
def test_bad_probabilities_raise_our_errors(probability: Any, error: type[Exception], fragment: str) -> None:
    space = Discrete(3, seed=0)
    with pytest.raises(error, match=fragment):
        space.sample(probability=probability)


def test_mask_and_probability_together_are_rejected() -> None:
    with pytest.raises(InvalidValueError, match="got both a mask and a probability"):
        Discrete(2).sample(mask=int8(1, 1), probability=np.array([0.5, 0.5]))


# --- contains -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        (0, True),
        (2, True),
        (3, False),
        (-1, False),
        (2**70, False),
        (-(2**70), False),
        (np.int64(1), True),
        (np.int32(1), True),
        (np.uint8(1), True),
        (np.int64(5), False),
        (np.array(1), True),
        (np.array(1, dtype=np.int8), True),
        (np.array([1]), False),
        (np.array([[1]]), False),
        (1.0, False),
        (np.float64(1.0), False),
        (np.array(1.0), False),
        (np.bool_(True), False),
        ([1], False),
        ((1,), False),
        (None, False),
        ("1", False),
        (b"1", False),
        (object(), False),
        ({1: 1}, False),
    ],
)
def test_contains(x: Any, expected: bool) -> None:
    space = Discrete(3)
    assert space.contains(x) is expected
    assert (x in space) is expected


def test_contains_python_bool_as_python_does() -> None:
    # True == 1 in Python; Gymnasium accepts bools the same way.
    assert Discrete(2).contains(True)
    assert not Discrete(2, start=2).contains(True)


def test_contains_requires_a_safe_cast() -> None:
    space = Discrete(3, dtype=np.int32)
    assert space.contains(np.int32(2))
    assert space.contains(np.int8(2))
    assert not space.contains(np.int64(2))
    assert not space.contains(np.array(2))  # int64 0-d array
    assert not Discrete(3, dtype=np.int8).contains(np.uint8(1))


def test_contains_python_int_outside_the_dtype_range() -> None:
    space = Discrete(200, start=10, dtype=np.uint8)
    assert space.contains(209)
    assert not space.contains(210)
    assert not space.contains(256)
    assert not space.contains(-1)


def test_contains_with_negative_start_in_int8() -> None:
    space = Discrete(6, start=-3, dtype=np.int8)
    assert space.contains(np.int8(-3)) and space.contains(np.int8(2))
    assert not space.contains(np.int8(-4)) and not space.contains(np.int8(3))
    assert not space.contains(np.int8(-128)) and not space.contains(np.int8(127))


# --- seeding, copies, JSON ----------------------------------------------------------------------------------


def test_seed_returns_a_seed_that_reproduces() -> None:
    space = Discrete(100)
    entropy = space.seed()
    first = [space.sample() for _ in range(5)]
    assert space.seed(entropy) == entropy
    assert [space.sample() for _ in range(5)] == first
    assert space.seed(7) == 7


def test_bad_seeds_are_rejected() -> None:
    with pytest.raises(InvalidValueError):
        Discrete(2).seed(-1)
    with pytest.raises(InvalidTypeError):
        Discrete(2).seed("abc")


@pytest.mark.parametrize("clone", [pickle.loads, copy.deepcopy], ids=["pickle", "deepcopy"])
def test_copies_keep_parameters_and_generator_state(space: Discrete, clone: Any) -> None:
    space.sample()
    copied = clone(pickle.dumps(space)) if clone is pickle.loads else clone(space)
    assert copied == space
    assert type(copied.n) is type(space.n) and type(copied.start) is type(space.start)
    assert same_rng_state(copied.np_random, space.np_random)
    assert [copied.sample() for _ in range(5)] == [space.sample() for _ in range(5)]
    assert copied.contains(space.start) and not copied.contains(int(space.start) - 1)


def test_old_pickle_without_start_loads_with_start_zero() -> None:
    state = {"n": np.int64(4), "_shape": (), "dtype": np.dtype(np.int64), "_np_random": None}
    space = Discrete.__new__(Discrete)
    space.__setstate__(state)
    assert space.start == 0 and type(space.start) is np.int64
    assert space == Discrete(4)
    assert space.sample() in space and not space.contains(4)


def test_legacy_public_attribute_names_are_renamed() -> None:
    rng = np.random.default_rng(0)
    space = Discrete.__new__(Discrete)
    space.__setstate__({"n": np.int64(3), "shape": (), "dtype": np.dtype(np.int64), "np_random": rng})
    assert space.np_random is rng and space.shape == ()


def test_jsonable_round_trip(space: Discrete) -> None:
    samples = [space.sample() for _ in range(4)]
    data = json.loads(json.dumps(space.to_jsonable(samples)))
    assert data == [int(x) for x in samples]
    for restored, original in zip(space.from_jsonable(data), samples, strict=True):
        assert_same_value(restored, original)


# --- repr and equality --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("space", "text"),
    [
        (Discrete(3), "Discrete(3)"),
        (Discrete(3, start=-1), "Discrete(3, start=-1)"),
        (Discrete(3, dtype=np.int32), "Discrete(3, dtype=int32)"),
        (Discrete(3, start=-1, dtype=np.int32), "Discrete(3, start=-1, dtype=int32)"),
        (Discrete(200, start=10, dtype=np.uint8), "Discrete(200, start=10, dtype=uint8)"),
    ],
)
def test_repr(space: Discrete, text: str) -> None:
    assert repr(space) == text


def test_equality() -> None:
    assert Discrete(3) == Discrete(3, seed=5)
    assert Discrete(3, start=1, dtype=np.int32) == Discrete(np.int8(3), start=np.int64(1), dtype="int32")
    assert Discrete(3) != Discrete(4)
    assert Discrete(3) != Discrete(3, start=1)
    assert Discrete(3) != Discrete(3, dtype=np.int32)
    assert Discrete(3) != MultiDiscrete([3])
    assert Discrete(3) != 3


def test_is_unhashable_like_gymnasium() -> None:
    with pytest.raises(TypeError):
        hash(Discrete(3))


# --- flatten family -----------------------------------------------------------------------------------------


def test_flatdim_and_flatten_space(space: Discrete) -> None:
    assert flatdim(space) == int(space.n)
    flat = flatten_space(space)
    assert flat == Box(0, 1, (int(space.n),), dtype=space.dtype)
    assert flat.dtype == space.dtype


def test_flatten_is_one_hot_of_value_minus_start(space: Discrete) -> None:
    for offset in (0, int(space.n) - 1):
        value = space.dtype.type(int(space.start) + offset)
        flat = flatten(space, value)
        assert flat.dtype == space.dtype and flat.shape == (int(space.n),)
        assert flat.tolist() == [int(i == offset) for i in range(int(space.n))]
        assert flat in flatten_space(space)


def test_flatten_accepts_python_ints_and_0d_arrays() -> None:
    space = Discrete(4, start=-2)
    assert flatten(space, -2).tolist() == [1, 0, 0, 0]
    assert flatten(space, np.array(1, dtype=np.int8)).tolist() == [0, 0, 0, 1]


@pytest.mark.parametrize("x", [2, -3, 100, np.int8(-128)])
def test_flatten_rejects_values_outside_the_space(x: Any) -> None:
    with pytest.raises(InvalidValueError, match=r"flatten of Discrete\(4, start=-2\) got a value outside"):
        flatten(Discrete(4, start=-2), x)


@pytest.mark.parametrize("x", [1.0, "1", None, np.array([1])])
def test_flatten_rejects_non_integers(x: Any) -> None:
    with pytest.raises(InvalidTypeError, match="needs an integer"):
        flatten(Discrete(4), x)


def test_unflatten_inverts_flatten(space: Discrete) -> None:
    for _ in range(10):
        x = space.sample()
        assert_same_value(unflatten(space, flatten(space, x)), x)


@pytest.mark.parametrize("n", [3, 100, 2000], ids=["cached", "values_cached", "large"])
def test_flatten_and_unflatten_with_and_without_ready_values(n: int) -> None:
    space = Discrete(n, start=-1)
    for value in (-1, n // 2, n - 2):
        flat = flatten(space, value)
        assert np.flatnonzero(flat).tolist() == [value + 1]
        flat[:] = 7  # the result is the caller's own array: the next one is unaffected
        assert flatten(space, value).sum() == 1
        assert_same_value(unflatten(space, flatten(space, value)), np.int64(value))
    restored = pickle.loads(pickle.dumps(space))
    assert "_one_hot_rows" not in pickle.dumps(space).decode("latin-1")
    assert_same_value(unflatten(restored, flatten(restored, 0)), np.int64(0))


def test_unflatten_accepts_float_one_hot_and_takes_the_first_hit() -> None:
    space = Discrete(4, start=1)
    assert_same_value(unflatten(space, np.array([0.0, 0.0, 1.0, 0.0])), np.int64(3))
    assert_same_value(unflatten(space, np.array([0, 1, 1, 0])), np.int64(2))


def test_unflatten_all_zero_names_the_space() -> None:
    with pytest.raises(InvalidValueError, match=r"not a one-hot vector for Discrete\(5\)"):
        unflatten(Discrete(5), np.zeros(5))


def test_unflatten_wrong_length() -> None:
    with pytest.raises(InvalidValueError, match="wrong length"):
        unflatten(Discrete(5), np.array([1, 0, 0]))


@pytest.mark.parametrize("x", [[1, 0, 0], np.eye(3), 1])
def test_unflatten_needs_a_flat_array(x: Any) -> None:
    with pytest.raises(InvalidTypeError, match="needs a flat array"):
        unflatten(Discrete(3), x)


def test_is_space_dtype_shape_equiv() -> None:
    assert is_space_dtype_shape_equiv(Discrete(3), Discrete(7, start=-2))
    assert not is_space_dtype_shape_equiv(Discrete(3), Discrete(3, dtype=np.int32))
    assert not is_space_dtype_shape_equiv(Discrete(3), MultiDiscrete([3]))
    assert not is_space_dtype_shape_equiv(Discrete(3), Box(0, 2, (), np.int64))


# --- batching family ----------------------------------------------------------------------------------------


def test_batch_space_is_a_multi_discrete(space: Discrete) -> None:
    batched = batch_space(space, 3)
    assert isinstance(batched, MultiDiscrete)
    assert batched.dtype == space.dtype
    assert batched.nvec.tolist() == [int(space.n)] * 3
    assert batched.start.tolist() == [int(space.start)] * 3
    assert batched.sample() in batched


def test_batch_space_copies_the_generator() -> None:
    space = Discrete(5, seed=9)
    space.sample()
    batched = batch_space(space, 2)
    assert batched.np_random is not space.np_random
    assert same_rng_state(batched.np_random, space.np_random)
    batched.sample()
    assert not same_rng_state(batched.np_random, space.np_random)


@pytest.mark.parametrize("n", [-1, 1.5, "2"])
def test_batch_space_needs_a_size_of_at_least_zero(n: Any) -> None:
    with pytest.raises(InvalidValueError, match="batch size"):
        batch_space(Discrete(3), n)


def test_batch_differing_spaces() -> None:
    spaces = [Discrete(2, seed=1), Discrete(3, start=-1, dtype=np.int32), Discrete(4, start=5, dtype=np.int8)]
    batched = batch_differing_spaces(spaces)
    assert isinstance(batched, MultiDiscrete)
    assert batched.dtype == np.int64  # the largest itemsize
    assert batched.nvec.tolist() == [2, 3, 4] and batched.start.tolist() == [0, -1, 5]
    assert same_rng_state(batched.np_random, spaces[0].np_random)
    assert batched.np_random is not spaces[0].np_random


def test_batch_differing_spaces_widens_when_the_largest_dtype_cannot_hold_every_value() -> None:
    batched = batch_differing_spaces([Discrete(3, dtype=np.uint32), Discrete(3, start=-1, dtype=np.int32)])
    assert batched.dtype == np.int64
    assert batched.start.tolist() == [0, -1]


def test_batch_differing_spaces_keeps_gymnasium_dtype_choice() -> None:
    batched = batch_differing_spaces([Discrete(3, dtype=np.int8), Discrete(3, dtype=np.int16)])
    assert batched.dtype == np.int16


def test_batch_differing_spaces_needs_one_kind() -> None:
    with pytest.raises(InvalidTypeError, match="spaces of one kind"):
        batch_differing_spaces([Discrete(3), MultiDiscrete([3])])


def test_create_empty_array(space: Discrete) -> None:
    empty = create_empty_array(space, 4)
    assert empty.shape == (4,) and empty.dtype == space.dtype and not empty.any()
    assert create_empty_array(space, 2, fn=np.empty).shape == (2,)
    assert create_empty_array(space, 0).shape == (0,)  # an empty batch container, as in Gymnasium
    with pytest.raises(InvalidValueError):
        create_empty_array(space, -1)


def test_concatenate_fills_out_and_returns_it(space: Discrete) -> None:
    items = [space.sample() for _ in range(3)]
    out = create_empty_array(space, 3)
    result = concatenate(space, items, out)
    assert result is out
    assert out.tolist() == [int(x) for x in items]
    assert result in batch_space(space, 3)


def test_concatenate_accepts_python_ints_that_fit() -> None:
    space = Discrete(200, start=10, dtype=np.uint8)
    out = concatenate(space, iter([10, 209]), create_empty_array(space, 2))
    assert out.tolist() == [10, 209] and out.dtype == np.uint8
    with pytest.raises(InvalidTypeError, match="does not cast"):
        concatenate(space, [10, 300], create_empty_array(space, 2))


def test_concatenate_errors() -> None:
    space = Discrete(3)
    with pytest.raises(InvalidValueError, match="wrong number of items"):
        concatenate(space, [0, 1], create_empty_array(space, 3))
    with pytest.raises(InvalidTypeError, match="needs an array to write into"):
        concatenate(space, [0, 1], [0, 0])
    with pytest.raises(InvalidTypeError, match="does not cast"):
        concatenate(space, [0.5, 1.0], create_empty_array(space, 2))
    with pytest.raises(InvalidValueError, match="wrong shape"):
        concatenate(space, [np.array([0, 1]), np.array([1, 2])], create_empty_array(space, 2))


def test_iterate_on_a_discrete_is_an_error() -> None:
    with pytest.raises(InvalidTypeError, match="there is no batched Discrete"):
        iterate(Discrete(3), np.array([0, 1]))


def test_iterate_over_the_batched_space_gives_scalars(space: Discrete) -> None:
    items = [space.sample() for _ in range(3)]
    batch = concatenate(space, items, create_empty_array(space, 3))
    values = list(iterate(batch_space(space, 3), batch))
    assert values == items
    assert all(type(value) is space.dtype.type for value in values)


# --- differential tests against Gymnasium -------------------------------------------------------------------


@pytest.fixture
def gym_spaces() -> Any:
    return pytest.importorskip("gymnasium.spaces")


CANDIDATES = [
    0, 1, 2, 3, 4, 5, 10, 12, 209, 210, -1, -2, -3, 300, 2**70, True, False, 1.0, None, "1", [1],
    np.int64(1), np.int32(1), np.int8(-3), np.uint8(12), np.int64(2**40), np.array(1), np.array([1]),
    np.array(1, dtype=np.int8), np.array(1.0), np.float32(1), np.bool_(True),
]  # fmt: skip


@needs_gymnasium((1, 2), "its Discrete takes no dtype (TypeError)")
def test_same_samples_as_gymnasium(gym_spaces: Any) -> None:
    for n, start, dtype in PARAMS:
        ours = Discrete(n, start=start, dtype=dtype, seed=11)
        theirs = gym_spaces.Discrete(n, start=start, dtype=dtype, seed=11)
        mask = (np.arange(n) % 3 == 0).astype(np.int8)
        probability = np.arange(n, dtype=np.float64) / np.arange(n).sum()
        for _ in range(10):
            assert_same_value(ours.sample(), theirs.sample())
            assert_same_value(ours.sample(mask=mask), theirs.sample(mask=mask))
            assert_same_value(ours.sample(probability=probability), theirs.sample(probability=probability))


@needs_gymnasium((1, 4), "its Discrete.contains raises OverflowError for an int beyond int64")
def test_contains_agrees_with_gymnasium(gym_spaces: Any) -> None:
    for n, start, dtype in PARAMS:
        ours, theirs = Discrete(n, start=start, dtype=dtype), gym_spaces.Discrete(n, start=start, dtype=dtype)
        for x in CANDIDATES:
            assert ours.contains(x) == theirs.contains(x), (ours, x)


@needs_gymnasium((1, 2), "its Discrete takes no dtype (TypeError)")
def test_utilities_agree_with_gymnasium(gym_spaces: Any) -> None:
    gym_utils = pytest.importorskip("gymnasium.vector.utils")
    for n, start, dtype in PARAMS:
        ours = Discrete(n, start=start, dtype=dtype, seed=2)
        theirs = gym_spaces.Discrete(n, start=start, dtype=dtype)
        assert flatdim(ours) == gym_spaces.flatdim(theirs)
        flat_ours, flat_theirs = flatten_space(ours), gym_spaces.flatten_space(theirs)
        assert (flat_ours.shape, flat_ours.dtype) == (flat_theirs.shape, flat_theirs.dtype)
        assert np.array_equal(flat_ours.low, flat_theirs.low) and np.array_equal(flat_ours.high, flat_theirs.high)
        xs = [ours.sample() for _ in range(4)]
        for x in xs:
            assert_same_value(flatten(ours, x), gym_spaces.flatten(theirs, x))
            assert_same_value(unflatten(ours, flatten(ours, x)), gym_spaces.unflatten(theirs, flatten(ours, x)))
        batched, gym_batched = batch_space(ours, 4), gym_utils.batch_space(theirs, 4)
        assert type(gym_batched).__name__ == type(batched).__name__
        assert batched.dtype == gym_batched.dtype
        assert np.array_equal(batched.nvec, gym_batched.nvec) and np.array_equal(batched.start, gym_batched.start)
        assert_same_value(
            concatenate(ours, xs, create_empty_array(ours, 4)),
            gym_utils.concatenate(theirs, xs, gym_utils.create_empty_array(theirs, 4)),
        )
