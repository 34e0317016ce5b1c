"""Tests of MultiBinary and its kernels (vecspaces.spaces.multi_binary, vecspaces._kernels.multi_binary)."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import numpy as np
import pytest

from tests.helpers import assert_same_value, same_rng_state
from vecspaces.error import InvalidTypeError, InvalidValueError
from vecspaces.spaces import Box, MultiBinary, MultiDiscrete, flatdim, flatten, flatten_space, unflatten
from vecspaces.spaces.utils import is_space_dtype_shape_equiv
from vecspaces.vector.utils import (
    batch_differing_spaces,
    batch_space,
    concatenate,
    create_empty_array,
    iterate,
)

SHAPES = [5, (2, 3), (70,), (3, 4, 5), 1]


@pytest.fixture(params=SHAPES, ids=[str(shape) for shape in SHAPES])
def space(request: pytest.FixtureRequest) -> MultiBinary:
    return MultiBinary(request.param, seed=0)


# --- construction -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "stored", "shape"),
    [
        (3, 3, (3,)),
        (np.int32(3), 3, (3,)),
        (np.array(4), 4, (4,)),
        ((2, 3), (2, 3), (2, 3)),
        ([2, 3], (2, 3), (2, 3)),
        (np.array([2, 3]), (2, 3), (2, 3)),
        ([np.int8(2)], (2,), (2,)),
    ],
)
def test_n_forms(n: Any, stored: Any, shape: tuple[int, ...]) -> None:
    space = MultiBinary(n)
    assert space.n == stored and type(space.n) is type(stored)
    assert all(type(size) is int for size in (space.n if isinstance(space.n, tuple) else (space.n,)))
    assert space.shape == shape
    assert space.dtype == np.int8
    assert space.is_np_flattenable


def test_generator_seed_is_used_by_identity() -> None:
    rng = np.random.default_rng(3)
    assert MultiBinary(3, seed=rng).np_random is rng


@pytest.mark.parametrize("n", [0, -2, (2, 0), [3, -1]])
def test_n_must_be_positive(n: Any) -> None:
    with pytest.raises(InvalidValueError, match="MultiBinary n must be positive"):
        MultiBinary(n)


@pytest.mark.parametrize("n", [2.0, "3", None, True, {3: 1}])
def test_n_must_be_an_int_or_a_sequence(n: Any) -> None:
    # Gymnasium raises ValueError here; InvalidValueError is one.
    with pytest.raises(InvalidValueError, match="MultiBinary n has the wrong type"):
        MultiBinary(n)


@pytest.mark.parametrize("n", [[2.5], [True, 2], (2, "3"), np.array([2.0, 3.0]), np.ones((2, 2), dtype=int)])
def test_n_entries_must_be_integers(n: Any) -> None:
    with pytest.raises(InvalidValueError, match="MultiBinary n has a non-integer entry"):
        MultiBinary(n)


# --- sampling -----------------------------------------------------------------------------------------------


def test_sample_is_an_int8_array_of_the_shape(space: MultiBinary) -> None:
    for _ in range(10):
        x = space.sample()
        assert type(x) is np.ndarray and x.dtype == np.int8 and x.shape == space.shape
        assert set(np.unique(x).tolist()) <= {0, 1}
        assert x in space


def test_sample_is_a_fresh_writeable_array() -> None:
    space = MultiBinary(8, seed=0)
    a = space.sample()
    a[:] = 7
    assert a.flags.writeable and space.sample() in space


def test_every_bit_takes_both_values_about_half_the_time(space: MultiBinary) -> None:
    draws = np.stack([space.sample() for _ in range(2000)])
    mean = draws.mean(axis=0)
    assert ((mean > 0.4) & (mean < 0.6)).all(), mean


def test_same_seed_same_samples() -> None:
    a, b = MultiBinary((3, 30), seed=4), MultiBinary((3, 30), seed=4)
    for _ in range(5):
        assert_same_value(a.sample(), b.sample())


def test_bits_are_the_raw_words_least_significant_first() -> None:
    # Defined on Python ints, so the same seed gives the same sample on every platform.
    words = np.random.Generator(np.random.PCG64(np.random.SeedSequence(0))).bit_generator.random_raw(2)
    expected = [(int(words[i // 64]) >> (i % 64)) & 1 for i in range(70)]
    assert MultiBinary(70, seed=0).sample().tolist() == expected


def test_mask_forces_zeros_and_ones_and_randomises_twos() -> None:
    space = MultiBinary(4, seed=1)
    mask = np.array([0, 1, 2, 2], dtype=np.int8)
    draws = np.stack([space.sample(mask=mask) for _ in range(400)])
    assert (draws[:, 0] == 0).all() and (draws[:, 1] == 1).all()
    means = draws[:, 2:].mean(axis=0)
    assert ((means > 0.4) & (means < 0.6)).all(), means
    assert draws.dtype == np.int8


def test_mask_of_another_integer_dtype_is_accepted() -> None:
    result = MultiBinary(3, seed=0).sample(mask=np.array([1, 0, 1]))
    assert result.tolist() == [1, 0, 1] and result.dtype == np.int8


@pytest.mark.parametrize(
    ("mask", "error", "fragment"),
    [
        ([0, 1, 2], InvalidTypeError, "mask is not an array"),
        (np.array([0.0, 1.0, 1.0]), InvalidTypeError, "mask has a non-integer dtype"),
        (np.array([0, 1], dtype=np.int8), InvalidValueError, "mask has the wrong shape"),
        (np.array([0, 1, 3], dtype=np.int8), InvalidValueError, "mask has a value out of range"),
        (np.array([0, -1, 1], dtype=np.int8), InvalidValueError, "mask has a value out of range"),
    ],
)
def test_bad_masks_raise_our_errors(mask: Any, error: type[Exception], fragment: str) -> None:
    space = MultiBinary(3, seed=0)
    before = copy.deepcopy(space.np_random)
    with pytest.raises(error, match=fragment) as info:
        space.sample(mask=mask)
    assert "MultiBinary(3).sample" in str(info.value)
    assert same_rng_state(space.np_random, before)


def test_probability_is_per_bit() -> None:
    space = MultiBinary(4, seed=2)
    probability = np.array([0.0, 1.0, 0.3, 0.9])
    draws = np.stack([space.sample(probability=probability) for _ in range(3000)])
    assert (draws[:, 0] == 0).all() and (draws[:, 1] == 1).all()
    assert 0.27 < draws[:, 2].mean() < 0.33
    assert 0.87 < draws[:, 3].mean() < 0.93
    assert draws.dtype == np.int8


@pytest.mark.parametrize(
    ("probability", "error", "fragment"),
    [
        ([0.5, 0.5], InvalidTypeError, "probability is not an array"),
        (np.array([1, 0]), InvalidTypeError, "probability has a non-float dtype"),
        (np.array([0.5, 0.5, 0.5]), InvalidValueError, "probability has the wrong shape"),
        (np.array([1.5, 0.5]), InvalidValueError, r"probability has a value outside \[0, 1\]"),
        (np.array([-0.1, 0.5]), InvalidValueError, r"probability has a value outside \[0, 1\]"),
        (np.array([np.nan, 0.5]), InvalidValueError, r"probability has a value outside \[0, 1\]"),
    ],
)
def test_bad_probabilities_raise_our_errors(probability: Any, error: type[Exception], fragment: str) -> None:
    with pytest.raises(error, match=fragment):
        MultiBinary(2, seed=0).sample(probability=probability)


def test_probabilities_need_not_sum_to_one() -> None:
    assert MultiBinary(2, seed=0).sample(probability=np.array([1.0, 1.0])).tolist() == [1, 1]


def test_mask_and_probability_together_are_rejected() -> None:
    with pytest.raises(InvalidValueError, match="got both a mask and a probability"):
        MultiBinary(2).sample(mask=np.array([1, 1], dtype=np.int8), probability=np.array([0.5, 0.5]))


# --- contains -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        (np.array([0, 1, 1], dtype=np.int8), True),
        (np.array([0, 1, 1]), True),
        (np.array([0, 1, 1], dtype=np.uint64), True),
        (np.array([0.0, 1.0, 1.0]), True),
        (np.array([True, False, True]), True),
        ([0, 1, 1], True),
        ((1, 1, 0), True),
        ([0.0, 1.0, 0.0], True),
        (np.array([0, 2, 1], dtype=np.int8), False),
        (np.array([0, -1, 1], dtype=np.int8), False),
        (np.array([0, -128, 1], dtype=np.int8), False),
        (np.array([0, 255, 1], dtype=np.uint8), False),
        (np.array([0, 0.5, 1]), False),
        (np.array([0, np.nan, 1]), False),
        (np.array([0, 1]), False),
        (np.array([[0, 1, 1]]), False),
        ([0, 1], False),
        ([0, [1], 1], False),
        (["0", "1", "1"], False),
        (np.array(["0", "1", "1"]), False),
        (np.array([0, 1, None], dtype=object), False),
        (np.array([0, 1, 1], dtype=object), True),
        ("011", False),
        (None, False),
        (1, False),
        ({0: 1}, False),
    ],
)
def test_contains(x: Any, expected: bool) -> None:
    space = MultiBinary(3)
    assert space.contains(x) is expected
    assert (x in space) is expected


def test_contains_with_two_axes() -> None:
    space = MultiBinary((2, 2))
    assert space.contains([[0, 1], [1, 0]])
    assert not space.contains([0, 1, 1, 0])
    assert not space.contains(np.array([[0, 1], [1, 0]]).T[None])


class _Weird:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("cannot compare")


def test_contains_never_raises_on_odd_objects() -> None:
    space = MultiBinary(2)
    weird = np.empty(2, dtype=object)
    weird[:] = [_Weird(), _Weird()]
    assert space.contains(weird) is False
    assert space.contains([_Weird(), 1]) is False


# --- seeding, copies, JSON ----------------------------------------------------------------------------------


def test_seed_returns_a_seed_that_reproduces() -> None:
    space = MultiBinary(10)
    entropy = space.seed()
    first = space.sample()
    space.seed(entropy)
    assert_same_value(space.sample(), first)


@pytest.mark.parametrize("clone", ["pickle", "deepcopy"])
def test_copies_keep_parameters_and_generator_state(space: MultiBinary, clone: str) -> None:
    space.sample()
    copied = pickle.loads(pickle.dumps(space)) if clone == "pickle" else copy.deepcopy(space)
    assert copied == space and copied.n == space.n
    assert same_rng_state(copied.np_random, space.np_random)
    for _ in range(3):
        assert_same_value(copied.sample(), space.sample())


def test_old_pickle_without_cached_sizes_loads() -> None:
    space = MultiBinary.__new__(MultiBinary)
    space.__setstate__({"n": (2, 3), "_shape": (2, 3), "dtype": np.dtype(np.int8), "_np_random": None})
    assert space == MultiBinary((2, 3))
    assert space.sample().shape == (2, 3) and flatdim(space) == 6


def test_jsonable_round_trip(space: MultiBinary) -> None:
    samples = [space.sample() for _ in range(3)]
    data = json.loads(json.dumps(space.to_jsonable(samples)))
    assert data == [sample.tolist() for sample in samples]
    for restored, original in zip(space.from_jsonable(data), samples, strict=True):
        assert_same_value(restored, original)


# --- repr and equality --------------------------------------------------------------------------------------


def test_repr() -> None:
    assert repr(MultiBinary(5)) == "MultiBinary(5)"
    assert repr(MultiBinary((2, 3))) == "MultiBinary((2, 3))"
    assert repr(MultiBinary([2, 3])) == "MultiBinary((2, 3))"


def test_equality_compares_shapes() -> None:
    assert MultiBinary(3) == MultiBinary(3, seed=1)
    assert MultiBinary((2, 3)) == MultiBinary([2, 3])
    assert MultiBinary(3) == MultiBinary([3])  # the same set of values (Gymnasium compares n and says no)
    assert MultiBinary(3) != MultiBinary(4)
    assert MultiBinary((2, 3)) != MultiBinary((3, 2))
    assert MultiBinary(2) != MultiDiscrete([2, 2])
    assert MultiBinary(2) != Box(0, 1, (2,), np.int8)


# --- flatten family -----------------------------------------------------------------------------------------


def test_flatdim_and_flatten_space(space: MultiBinary) -> None:
    size = int(np.prod(space.shape))
    assert flatdim(space) == size
    assert flatten_space(space) == Box(0, 1, (size,), dtype=np.int8)


def test_flatten_ravels_a_copy(space: MultiBinary) -> None:
    x = space.sample()
    flat = flatten(space, x)
    assert flat.dtype == np.int8 and flat.shape == (x.size,)
    assert flat.tolist() == x.ravel().tolist()
    assert not np.shares_memory(flat, x)
    assert flat in flatten_space(space)


def test_flatten_accepts_lists_and_other_dtypes() -> None:
    space = MultiBinary((2, 2))
    assert_same_value(flatten(space, [[0, 1], [1, 1]]), np.array([0, 1, 1, 1], dtype=np.int8))
    assert_same_value(flatten(space, np.array([[True, False], [False, True]])), np.array([1, 0, 0, 1], np.int8))


def test_flatten_errors() -> None:
    space = MultiBinary((2, 2))
    with pytest.raises(InvalidValueError, match="wrong shape"):
        flatten(space, np.zeros(4, dtype=np.int8))
    with pytest.raises(InvalidTypeError, match="needs an array"):
        flatten(space, [["a", "b"], ["c", "d"]])


def test_unflatten_inverts_flatten(space: MultiBinary) -> None:
    for _ in range(5):
        x = space.sample()
        assert_same_value(unflatten(space, flatten(space, x)), x)


def test_unflatten_casts_to_int8() -> None:
    assert_same_value(unflatten(MultiBinary(2), np.array([1.0, 0.0])), np.array([1, 0], dtype=np.int8))


def test_unflatten_errors() -> None:
    with pytest.raises(InvalidValueError, match="wrong length"):
        unflatten(MultiBinary((2, 2)), np.zeros(3, dtype=np.int8))
    with pytest.raises(InvalidTypeError, match="needs a flat array"):
        unflatten(MultiBinary(2), [0, 1])
    with pytest.raises(InvalidTypeError, match="needs a flat array"):
        unflatten(MultiBinary((2, 2)), np.zeros((2, 2), dtype=np.int8))


def test_is_space_dtype_shape_equiv() -> None:
    assert is_space_dtype_shape_equiv(MultiBinary((2, 3)), MultiBinary([2, 3]))
    assert not is_space_dtype_shape_equiv(MultiBinary(3), MultiBinary(4))
    assert not is_space_dtype_shape_equiv(MultiBinary(3), Box(0, 1, (3,), np.int8))
    assert not is_space_dtype_shape_equiv(MultiBinary(3), MultiDiscrete([2, 2, 2], dtype=np.int8))


# --- batching family ----------------------------------------------------------------------------------------


def test_batch_space_is_a_box(space: MultiBinary) -> None:
    batched = batch_space(space, 3)
    assert batched == Box(0, 1, (3, *space.shape), np.int8)
    assert batched.np_random is not space.np_random
    assert same_rng_state(batched.np_random, space.np_random)


def test_batch_differing_spaces() -> None:
    spaces = [MultiBinary((2, 3), seed=1), MultiBinary([2, 3])]
    batched = batch_differing_spaces(spaces)
    assert batched == Box(0, 1, (2, 2, 3), np.int8)
    assert same_rng_state(batched.np_random, spaces[0].np_random)


def test_batch_differing_spaces_needs_one_shape() -> None:
    with pytest.raises(InvalidValueError, match="one shape") as info:
        batch_differing_spaces([MultiBinary(3), MultiBinary(3), MultiBinary(4)])
    assert "spaces[2]" in str(info.value)


def test_create_empty_array(space: MultiBinary) -> None:
    empty = create_empty_array(space, 2)
    assert empty.shape == (2, *space.shape) and empty.dtype == np.int8 and not empty.any()
    assert create_empty_array(space, 1, fn=np.empty).shape == (1, *space.shape)


def test_concatenate_and_iterate(space: MultiBinary) -> None:
    items = [space.sample() for _ in range(3)]
    out = create_empty_array(space, 3)
    batch = concatenate(space, items, out)
    assert batch is out and batch in batch_space(space, 3)
    rows = list(iterate(batch_space(space, 3), batch))
    for row, item in zip(rows, items, strict=True):
        assert_same_value(row, item)
    for row, item in zip(iterate(space, batch), items, strict=True):
        assert_same_value(row, item)


def test_concatenate_errors() -> None:
    space = MultiBinary(2)
    with pytest.raises(InvalidValueError, match="wrong number of items"):
        concatenate(space, [np.zeros(2, np.int8)], create_empty_array(space, 2))
    with pytest.raises(InvalidValueError, match="wrong shape"):
        concatenate(space, [np.zeros(1, np.int8), np.zeros(1, np.int8)], create_empty_array(space, 2))
    with pytest.raises(InvalidValueError, match=r"wrong shape.*at items\[1\]"):
        concatenate(space, [np.zeros(2, np.int8), np.zeros(3, np.int8)], create_empty_array(space, 2))


def test_iterate_needs_a_batch() -> None:
    with pytest.raises(InvalidTypeError, match="needs a batch"):
        iterate(MultiBinary(2), np.int8(1))


# --- differential tests against Gymnasium -------------------------------------------------------------------


@pytest.fixture
def gym_spaces() -> Any:
    return pytest.importorskip("gymnasium.spaces")


CANDIDATES = [
    np.array([0, 1, 1], dtype=np.int8), np.array([0, 1, 1]), np.array([0.0, 1.0, 0.0]),
    np.array([True, False, True]), [0, 1, 1], (1, 0, 0), np.array([0, 2, 1]), np.array([0, -1, 1], np.int8),
    np.array([0, 1]), [0, 1], np.array([[0, 1, 1]]), np.array([0, 0.5, 1]), None, 1,
]  # fmt: skip


def test_contains_agrees_with_gymnasium(gym_spaces: Any) -> None:
    ours, theirs = MultiBinary(3), gym_spaces.MultiBinary(3)
    for x in CANDIDATES:
        assert ours.contains(x) == theirs.contains(x), x


def test_utilities_agree_with_gymnasium(gym_spaces: Any, space: MultiBinary) -> None:
    gym_utils = pytest.importorskip("gymnasium.vector.utils")
    theirs = gym_spaces.MultiBinary(space.n)
    assert repr(space) == repr(theirs)
    assert flatdim(space) == gym_spaces.flatdim(theirs)
    flat_theirs = gym_spaces.flatten_space(theirs)
    assert (flatten_space(space).shape, flatten_space(space).dtype) == (flat_theirs.shape, flat_theirs.dtype)
    xs = [space.sample() for _ in range(3)]
    for x in xs:
        assert_same_value(flatten(space, x), gym_spaces.flatten(theirs, x))
        assert_same_value(unflatten(space, flatten(space, x)), gym_spaces.unflatten(theirs, flatten(space, x)))
    batched, gym_batched = batch_space(space, 3), gym_utils.batch_space(theirs, 3)
    assert (batched.shape, batched.dtype) == (gym_batched.shape, gym_batched.dtype)
    assert np.array_equal(batched.low, gym_batched.low) and np.array_equal(batched.high, gym_batched.high)
    assert_same_value(
        concatenate(space, xs, create_empty_array(space, 3)),
        gym_utils.concatenate(theirs, xs, gym_utils.create_empty_array(theirs, 3)),
    )
