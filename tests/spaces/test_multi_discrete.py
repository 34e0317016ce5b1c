"""Tests of MultiDiscrete and its kernels (vecspaces.spaces.multi_discrete, vecspaces._kernels)."""

from __future__ import annotations

import copy
import json
import pickle
import warnings
from collections import Counter
from typing import Any

import numpy as np
import pytest

from tests.helpers import assert_same_value, needs_gymnasium, same_rng_state
from vecspaces.error import InvalidTypeError, InvalidValueError
from vecspaces.spaces import (
    Box,
    Discrete,
    MultiBinary,
    MultiDiscrete,
    flatdim,
    flatten,
    flatten_space,
    unflatten,
)
from vecspaces.spaces.utils import is_space_dtype_shape_equiv
from vecspaces.vector.utils import (
    batch_differing_spaces,
    batch_space,
    concatenate,
    create_empty_array,
    iterate,
)

# (nvec, start, dtype): 1-D and 2-D, zero, positive and negative starts, narrow and unsigned dtypes.
PARAMS = [
    ([2, 3, 4], None, np.int64),
    ([[2, 3], [4, 5]], None, np.int64),
    ([3, 2], [-1, 5], np.int64),
    ([101, 101, 101, 101], None, np.int8),
    ([100, 5], [28, -128], np.int8),
    ([200, 3], [50, 0], np.uint8),
    ([4, 4], [-2, 7], np.int32),
    # More entries than the Python-loop limit of flatten/unflatten: their numpy path.
    ([[3] * 6] * 5, (np.arange(30).reshape(5, 6) - 15).tolist(), np.int16),
    ([7] * 40, [249] * 40, np.uint8),
]
IDS = ["1d", "2d", "start", "int8_101", "int8_edges", "uint8", "int32", "many_int16", "many_uint8"]


@pytest.fixture(params=PARAMS, ids=IDS)
def space(request: pytest.FixtureRequest) -> MultiDiscrete:
    nvec, start, dtype = request.param
    return MultiDiscrete(nvec, dtype=dtype, start=start, seed=0)


def int8(*bits: int) -> np.ndarray:
    return np.array(bits, dtype=np.int8)


def highest(space: MultiDiscrete) -> np.ndarray:
    return space.start.astype(np.int64) + space.nvec.astype(np.int64) - 1


# --- construction -------------------------------------------------------------------------------------------


def test_defaults() -> None:
    space = MultiDiscrete([2, 3])
    assert_same_value(space.nvec, np.array([2, 3]))
    assert_same_value(space.start, np.array([0, 0]))
    assert space.dtype == np.int64 and space.shape == (2,) and space.is_np_flattenable


def test_positional_order_is_nvec_dtype_seed_start() -> None:
    space = MultiDiscrete([2, 3], np.int32, 5, [1, 1])
    assert space.dtype == np.int32 and space.start.tolist() == [1, 1]
    assert same_rng_state(space.np_random, MultiDiscrete([2, 3], seed=5).np_random)


def test_arrays_take_the_dtype_and_are_copies() -> None:
    nvec, start = np.array([2, 3]), [5, -5]
    space = MultiDiscrete(nvec, dtype=np.int16, start=start)
    assert space.nvec.dtype == np.int16 and space.start.dtype == np.int16
    nvec[0], start[0] = 100, 100
    assert space.nvec.tolist() == [2, 3] and space.start.tolist() == [5, -5]


def test_integral_floats_are_accepted() -> None:
    assert MultiDiscrete(np.array([3.0, 4.0])) == MultiDiscrete([3, 4])


def test_generator_seed_is_used_by_identity() -> None:
    rng = np.random.default_rng(3)
    assert MultiDiscrete([2], seed=rng).np_random is rng


def test_dtype_none_is_rejected() -> None:
    # Gymnasium raises ValueError here (and TypeError for Discrete).
    with pytest.raises(InvalidValueError, match="MultiDiscrete dtype is missing"):
        MultiDiscrete([2], dtype=None)


@pytest.mark.parametrize("dtype", [np.float32, bool, str])
def test_dtype_must_be_integer(dtype: Any) -> None:
    with pytest.raises(InvalidValueError, match="must be an integer dtype"):
        MultiDiscrete([2], dtype=dtype)


def test_dtype_must_be_a_dtype() -> None:
    with pytest.raises(InvalidTypeError, match="MultiDiscrete dtype is not a dtype"):
        MultiDiscrete([2], dtype="unknown")


@pytest.mark.parametrize("nvec", [[2, 0], [-1], np.array([[1, 0]])])
def test_nvec_must_be_positive(nvec: Any) -> None:
    with pytest.raises(InvalidValueError, match="MultiDiscrete nvec must be positive"):
        MultiDiscrete(nvec)


@pytest.mark.parametrize("nvec", [["2", "3"], [True, True], None, [{}, 2], [[2, 3], [4]]])
def test_nvec_must_be_integers(nvec: Any) -> None:
    with pytest.raises(InvalidTypeError, match="MultiDiscrete nvec is not an array of integers"):
        MultiDiscrete(nvec)


@pytest.mark.parametrize("nvec", [[2.5], [np.nan], [np.inf]])
def test_nvec_must_be_whole(nvec: Any) -> None:
    with pytest.raises(InvalidValueError, match="MultiDiscrete nvec has a non-integer value"):
        MultiDiscrete(nvec)


def test_start_must_be_integers() -> None:
    with pytest.raises(InvalidValueError, match="MultiDiscrete start has a non-integer value"):
        MultiDiscrete([2], start=[0.5])
    with pytest.raises(InvalidTypeError, match="MultiDiscrete start is not an array of integers"):
        MultiDiscrete([2], start=["a"])


def test_start_and_nvec_shapes_must_match() -> None:
    with pytest.raises(InvalidValueError, match="different shapes"):
        MultiDiscrete([2, 3], start=[0, 0, 0])


@pytest.mark.parametrize(
    ("nvec", "start", "dtype", "fragment"),
    [
        ([300], None, np.uint8, "nvec has a value out of range"),
        ([2**70], None, np.int64, "nvec has a value out of range"),
        ([10**400], None, np.int64, "nvec has a value out of range"),
        ([3], [-1], np.uint8, "start has a value out of range"),
        ([100], [50], np.int8, "do not fit in its dtype"),
        ([2], [np.iinfo(np.int64).max], np.int64, "do not fit in its dtype"),
    ],
)
def test_values_must_fit_in_the_dtype(nvec: Any, start: Any, dtype: Any, fragment: str) -> None:
    with pytest.raises(InvalidValueError, match=fragment):
        MultiDiscrete(nvec, dtype=dtype, start=start)


def test_values_at_the_dtype_limits_are_accepted() -> None:
    space = MultiDiscrete([127, 127], dtype=np.int8, start=[-128, 1])
    assert highest(space).tolist() == [-2, 127]
    top = MultiDiscrete([5], dtype=np.uint64, start=[2**64 - 5])
    assert int(top.start[0]) + 4 == 2**64 - 1


# --- sampling -----------------------------------------------------------------------------------------------


def test_sample_is_an_array_of_the_dtype_and_shape(space: MultiDiscrete) -> None:
    for _ in range(10):
        x = space.sample()
        assert type(x) is np.ndarray and x.dtype == space.dtype and x.shape == space.shape
        assert x in space


def test_every_value_of_every_entry_is_reachable(space: MultiDiscrete) -> None:
    draws = np.stack([space.sample() for _ in range(3000)]).reshape(3000, -1).astype(np.int64)
    for column, first, count in zip(draws.T, space.start.ravel(), space.nvec.ravel(), strict=True):
        assert set(column.tolist()) == set(range(int(first), int(first) + int(count)))


def test_uniform_sampling_is_roughly_uniform() -> None:
    space = MultiDiscrete([4, 3], start=[-2, 0], seed=5)
    draws = np.stack([space.sample() for _ in range(6000)])
    first, second = Counter(draws[:, 0].tolist()), Counter(draws[:, 1].tolist())
    assert all(1350 <= first[value] <= 1650 for value in range(-2, 2)), first
    assert all(1800 <= second[value] <= 2200 for value in range(3)), second


def test_huge_entries_sample_exactly_in_range() -> None:
    space = MultiDiscrete([2**40, 3], start=[-(2**39), 0], seed=1)
    draws = np.stack([space.sample() for _ in range(200)])
    assert all(draw in space for draw in draws)
    assert set(draws[:, 1].tolist()) == {0, 1, 2}
    assert draws[:, 0].min() < 0 < draws[:, 0].max()


def test_uint64_near_the_top_samples_in_range() -> None:
    space = MultiDiscrete([5, 2**63], dtype=np.uint64, start=[2**64 - 5, 2**63 - 1], seed=0)
    draws = [space.sample() for _ in range(50)]
    assert all(draw in space for draw in draws)
    assert {int(draw[0]) for draw in draws} == set(range(2**64 - 5, 2**64))


def test_0d_space_samples_a_0d_array() -> None:
    space = MultiDiscrete(np.array(3), start=np.array(1), seed=0)
    x = space.sample()
    assert x.shape == () and x in space
    assert space.sample(mask=int8(0, 0, 1)) == 3


def test_same_seed_same_samples() -> None:
    a, b = MultiDiscrete([5, 6], seed=42), MultiDiscrete([5, 6], seed=42)
    for _ in range(5):
        assert_same_value(a.sample(), b.sample())


def test_mask_restricts_each_entry() -> None:
    space = MultiDiscrete([3, 4], start=[-1, 10], seed=3)
    mask = (int8(0, 1, 1), int8(1, 0, 0, 1))
    draws = np.stack([space.sample(mask=mask) for _ in range(300)])
    assert set(draws[:, 0].tolist()) == {0, 1}
    assert set(draws[:, 1].tolist()) == {10, 13}
    assert draws.dtype == np.int64


def test_all_zero_mask_leaf_gives_that_start() -> None:
    space = MultiDiscrete([3, 4], start=[-1, 10], seed=3)
    x = space.sample(mask=(int8(0, 0, 0), int8(0, 0, 1, 0)))
    assert x.tolist() == [-1, 12]


def test_nested_mask_for_two_axes() -> None:
    space = MultiDiscrete([[2, 3], [4, 5]], start=[[0, 1], [-4, 2]], seed=0)
    mask = ((int8(0, 1), int8(0, 0, 1)), (int8(1, 0, 0, 0), int8(0, 0, 0, 0, 0)))
    assert space.sample(mask=mask).tolist() == [[1, 3], [-4, 2]]


def test_mask_as_lists_is_accepted() -> None:
    space = MultiDiscrete([2, 2], seed=0)
    assert space.sample(mask=[int8(0, 1), int8(1, 0)]).tolist() == [1, 0]


def test_mask_in_int8_space_with_large_offsets() -> None:
    space = MultiDiscrete([101, 101], dtype=np.int8, start=[-100, 26], seed=0)
    mask = np.zeros(101, dtype=np.int8)
    mask[-1] = 1
    x = space.sample(mask=(mask, mask))
    assert x.tolist() == [0, 126] and x.dtype == np.int8


@pytest.mark.parametrize(
    ("mask", "error", "fragment"),
    [
        (int8(1, 1, 1), InvalidTypeError, "mask is not a tuple"),
        ((int8(1, 1),), InvalidValueError, "mask has the wrong length"),
        ((int8(1, 1), int8(1, 1, 1), int8(1)), InvalidValueError, "mask has the wrong length"),
        ((int8(1, 1), [1, 1, 1]), InvalidTypeError, r"mask\[1\] is not an array"),
        ((int8(1, 1), np.ones(3)), InvalidTypeError, r"mask\[1\] has a non-integer dtype"),
        ((int8(1, 1), int8(1, 1)), InvalidValueError, r"mask\[1\] has the wrong shape"),
        ((int8(1, 2), int8(1, 1, 1)), InvalidValueError, r"mask\[0\] has a value out of range"),
    ],
)
def test_bad_masks_raise_our_errors(mask: Any, error: type[Exception], fragment: str) -> None:
    space = MultiDiscrete([2, 3], seed=0)
    before = copy.deepcopy(space.np_random)
    with pytest.raises(error, match=fragment) as info:
        space.sample(mask=mask)
    assert r"MultiDiscrete([2 3]).sample" in str(info.value)
    assert same_rng_state(space.np_random, before)


def test_bad_nested_mask_names_the_path() -> None:
    space = MultiDiscrete([[2, 3], [4, 5]])
    good = ((int8(1, 1), int8(1, 1, 1)), (int8(1, 1, 1, 1), int8(1, 1, 1, 1, 1)))
    with pytest.raises(InvalidValueError, match=r"mask\[1\]\[0\] has the wrong shape"):
        space.sample(mask=(good[0], (int8(1), good[1][1])))
    with pytest.raises(InvalidTypeError, match=r"mask\[0\] is not a tuple"):
        space.sample(mask=(int8(1, 1), good[1]))
    with pytest.raises(InvalidValueError, match=r"mask\[1\] has the wrong length"):
        space.sample(mask=(good[0], good[1][:1]))


def test_probability_follows_the_distribution() -> None:
    space = MultiDiscrete([3, 2], start=[5, -1], seed=2)
    probability = (np.array([0.2, 0.0, 0.8]), np.array([0.5, 0.5]))
    draws = np.stack([space.sample(probability=probability) for _ in range(4000)])
    first = Counter(draws[:, 0].tolist())
    assert first[6] == 0
    assert 700 <= first[5] <= 900 and 3100 <= first[7] <= 3300
    assert 1800 <= (draws[:, 1] == -1).sum() <= 2200


def test_probability_zero_is_never_drawn() -> None:
    space = MultiDiscrete([3, 3], seed=0)
    probability = (np.array([0.0, 1.0, 0.0]), np.array([0.0, 0.0, 1.0]))
    assert {tuple(space.sample(probability=probability).tolist()) for _ in range(100)} == {(1, 2)}


@pytest.mark.parametrize(
    ("probability", "error", "fragment"),
    [
        (np.array([0.5, 0.5]), InvalidTypeError, "probability is not a tuple"),
        ((np.array([0.5, 0.5]),), InvalidValueError, "probability has the wrong length"),
        ((np.array([0.5, 0.5]), [1.0, 0.0, 0.0]), InvalidTypeError, r"probability\[1\] is not an array"),
        (
            (np.array([1, 0]), np.array([1.0, 0.0, 0.0])),
            InvalidTypeError,
            r"probability\[0\] has a non-float",
        ),
        (
            (np.array([0.5, 0.5]), np.array([1.0, 0.0])),
            InvalidValueError,
            r"probability\[1\] has the wrong shape",
        ),
        (
            (np.array([1.5, -0.5]), np.array([1.0, 0.0, 0.0])),
            InvalidValueError,
            r"probability\[0\] has a value",
        ),
        (
            (np.array([0.5, 0.5]), np.array([0.5, 0.0, 0.0])),
            InvalidValueError,
            r"probability\[1\] does not sum",
        ),
    ],
)
def test_bad_probabilities_raise_our_errors(probability: Any, error: type[Exception], fragment: str) -> None:
    with pytest.raises(error, match=fragment):
        MultiDiscrete([2, 3], seed=0).sample(probability=probability)


def test_mask_and_probability_together_are_rejected() -> None:
    with pytest.raises(InvalidValueError, match="got both a mask and a probability"):
        MultiDiscrete([2]).sample(mask=(int8(1, 1),), probability=(np.array([0.5, 0.5]),))


# --- contains -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        (np.array([1, 2]), True),
        (np.array([0, 0]), True),
        (np.array([1, 2], dtype=np.int8), True),
        (np.array([1, 2], dtype=np.uint8), True),
        (np.array([True, True]), True),
        (np.array([2, 2]), False),
        (np.array([-1, 0]), False),
        (np.array([1, 3]), False),
        (np.array([1, 2], dtype=np.uint64), False),
        (np.array([1.0, 2.0]), False),
        (np.array([1, 2, 0]), False),
        (np.array([[1, 2]]), False),
        (np.array(["1", "2"]), False),
        (np.array([1, 2], dtype=object), False),
        ([1, 2], True),
        ((0, 1), True),
        ([1, 3], False),
        ([1.0, 2.0], False),
        ([1, [2]], False),
        ([2**70, 0], False),
        ("12", False),
        (None, False),
        (1, False),
        (np.int64(1), False),
        ({0: 1}, False),
    ],
)
def test_contains(x: Any, expected: bool) -> None:
    space = MultiDiscrete([2, 3])
    assert space.contains(x) is expected
    assert (x in space) is expected


def test_contains_requires_a_safe_cast_for_arrays() -> None:
    space = MultiDiscrete([2, 3], dtype=np.int32)
    assert space.contains(np.array([1, 2], dtype=np.int32))
    assert space.contains(np.array([1, 2], dtype=np.int16))
    assert not space.contains(np.array([1, 2], dtype=np.int64))


def test_contains_judges_python_ints_by_value() -> None:
    # Deliberate difference: Gymnasium turns the list into an int64 array and then refuses the int32 cast.
    space = MultiDiscrete([2, 3], dtype=np.int32)
    assert space.contains([1, 2])
    assert not space.contains([1, 3])
    assert not MultiDiscrete([3], dtype=np.uint8).contains([-1])
    assert not MultiDiscrete([3], dtype=np.uint8).contains([256])


def test_contains_does_not_overflow_at_the_dtype_limits() -> None:
    space = MultiDiscrete([100, 5], dtype=np.int8, start=[28, -128])
    assert space.contains(np.array([127, -128], dtype=np.int8))
    assert space.contains(np.array([28, -124], dtype=np.int8))
    assert not space.contains(np.array([27, -128], dtype=np.int8))
    assert not space.contains(np.array([127, -123], dtype=np.int8))
    assert not space.contains(np.array([-128, -128], dtype=np.int8))
    assert not space.contains(np.array([128, -128], dtype=np.int16))


def test_contains_subclass_arrays() -> None:
    space = MultiDiscrete([2, 3])
    assert space.contains(np.ma.array([1, 2]))
    assert not space.contains(np.ma.array([1, 5]))


# --- indexing and length ------------------------------------------------------------------------------------


def test_getitem_gives_discrete_for_one_entry() -> None:
    space = MultiDiscrete([2, 3], dtype=np.int32, start=[1, -1])
    assert space[1] == Discrete(3, start=-1, dtype=np.int32)
    assert isinstance(space[0], Discrete)


def test_getitem_gives_multi_discrete_otherwise() -> None:
    space = MultiDiscrete([[2, 3], [4, 5]], dtype=np.int16, start=[[0, 1], [2, 3]])
    assert space[1] == MultiDiscrete([4, 5], dtype=np.int16, start=[2, 3])
    assert space[:, 1] == MultiDiscrete([3, 5], dtype=np.int16, start=[1, 3])
    assert space[1, 0] == Discrete(4, start=2, dtype=np.int16)


def test_getitem_subspace_continues_the_parent_stream() -> None:
    space = MultiDiscrete([[2, 3], [4, 5]], start=[[0, 1], [-2, 3]], seed=7)
    space.sample()
    sub = space[:]
    assert sub.np_random is not space.np_random
    assert_same_value(sub.sample(), space.sample())


def test_getitem_out_of_range_is_an_index_error() -> None:
    with pytest.raises(IndexError, match="has no entry 2"):
        MultiDiscrete([2, 3])[2]


def test_iteration_walks_the_entries() -> None:
    assert list(MultiDiscrete([2, 3], start=[0, 1])) == [Discrete(2), Discrete(3, start=1)]


def test_len() -> None:
    assert len(MultiDiscrete([2, 3, 4])) == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        len(MultiDiscrete([2, 3]))


def test_len_warns_for_several_axes() -> None:
    with pytest.warns(UserWarning, match="counts only its first axis"):
        assert len(MultiDiscrete([[2, 3, 4], [5, 6, 7]])) == 2


def test_len_of_a_0d_space_is_an_error() -> None:
    with pytest.raises(InvalidTypeError, match="has no length"):
        len(MultiDiscrete(np.array(3)))


# --- seeding, copies, JSON ----------------------------------------------------------------------------------


def test_seed_returns_a_seed_that_reproduces() -> None:
    space = MultiDiscrete([10, 20])
    entropy = space.seed()
    first = space.sample()
    space.seed(entropy)
    assert_same_value(space.sample(), first)


@pytest.mark.parametrize("clone", ["pickle", "deepcopy"])
def test_copies_keep_parameters_and_generator_state(space: MultiDiscrete, clone: str) -> None:
    space.sample()
    copied = pickle.loads(pickle.dumps(space)) if clone == "pickle" else copy.deepcopy(space)
    assert copied == space
    assert same_rng_state(copied.np_random, space.np_random)
    for _ in range(3):
        assert_same_value(copied.sample(), space.sample())
    x = space.sample()
    assert_same_value(flatten(copied, x), flatten(space, x))


def test_old_pickle_without_start_loads_with_zero_start() -> None:
    state = {
        "nvec": np.array([2, 3], np.int32),
        "_shape": (2,),
        "dtype": np.dtype(np.int32),
        "_np_random": None,
    }
    space = MultiDiscrete.__new__(MultiDiscrete)
    space.__setstate__(state)
    assert_same_value(space.start, np.zeros(2, np.int32))
    assert space == MultiDiscrete([2, 3], dtype=np.int32)
    assert space.sample() in space and flatdim(space) == 5


def test_jsonable_round_trip(space: MultiDiscrete) -> None:
    samples = [space.sample() for _ in range(3)]
    data = json.loads(json.dumps(space.to_jsonable(samples)))
    assert data == [sample.tolist() for sample in samples]
    for restored, original in zip(space.from_jsonable(data), samples, strict=True):
        assert_same_value(restored, original)


# --- repr and equality --------------------------------------------------------------------------------------


def test_repr() -> None:
    assert repr(MultiDiscrete([2, 3])) == "MultiDiscrete([2 3])"
    assert repr(MultiDiscrete([2, 3], start=[1, 1])) == "MultiDiscrete([2 3], start=[1 1])"
    assert repr(MultiDiscrete([2, 3], dtype=np.int8, start=[0, -1])) == "MultiDiscrete([2 3], start=[ 0 -1])"


def test_equality() -> None:
    assert MultiDiscrete([2, 3]) == MultiDiscrete(np.array([2, 3]), seed=1)
    assert MultiDiscrete([2, 3]) != MultiDiscrete([2, 4])
    assert MultiDiscrete([2, 3]) != MultiDiscrete([2, 3], start=[0, 1])
    assert MultiDiscrete([2, 3]) != MultiDiscrete([2, 3], dtype=np.int32)
    assert MultiDiscrete([2, 3]) != MultiDiscrete([[2, 3]])
    assert MultiDiscrete([2, 2]) != MultiBinary(2)
    assert MultiDiscrete([2, 3]) != [2, 3]


# --- flatten family -----------------------------------------------------------------------------------------


def test_flatdim_and_flatten_space(space: MultiDiscrete) -> None:
    total = int(space.nvec.astype(np.int64).sum())
    assert flatdim(space) == total
    assert flatten_space(space) == Box(0, 1, (total,), dtype=space.dtype)


def test_narrow_dtype_with_a_large_sum_flattens() -> None:
    space = MultiDiscrete([101] * 4, dtype=np.int8, seed=0)
    assert flatdim(space) == 404
    x = np.array([0, 100, 50, 7], dtype=np.int8)
    flat = flatten(space, x)
    assert flat.dtype == np.int8 and flat.shape == (404,)
    assert np.flatnonzero(flat).tolist() == [0, 201, 252, 310]
    assert_same_value(unflatten(space, flat), x)


def test_flatten_is_concatenated_one_hot_blocks() -> None:
    space = MultiDiscrete([[2, 3], [1, 2]], start=[[0, -1], [5, 0]])
    flat = flatten(space, np.array([[1, -1], [5, 1]]))
    assert flat.tolist() == [0, 1, 1, 0, 0, 1, 0, 1]


def test_flatten_and_unflatten_round_trip(space: MultiDiscrete) -> None:
    flat_space = flatten_space(space)
    for _ in range(10):
        x = space.sample()
        flat = flatten(space, x)
        assert flat.dtype == space.dtype and flat in flat_space
        assert (flat != 0).sum() == space.nvec.size
        assert_same_value(unflatten(space, flat), x)


def test_flatten_extreme_values_round_trip(space: MultiDiscrete) -> None:
    for x in (space.start.copy(), highest(space).astype(space.dtype)):
        assert_same_value(unflatten(space, flatten(space, x)), x)


def test_flatten_accepts_lists_and_castable_arrays() -> None:
    space = MultiDiscrete([3, 2], dtype=np.int8, start=[-1, 0])
    expected = np.array([0, 0, 1, 1, 0], dtype=np.int8)
    assert_same_value(flatten(space, [1, 0]), expected)
    assert_same_value(flatten(space, np.array([1, 0], dtype=np.int64)), expected)


@pytest.mark.parametrize(
    "x",
    [
        np.array([2, 0]),
        np.array([-2, 0]),
        np.array([0, 300]),
        np.array([-1, 2**40]),
        [0, 2],
        np.array([2, 0], dtype=np.int8),
        np.array([-2, 1], dtype=np.int8),
        np.array([0, -128], dtype=np.int8),
    ],
)
def test_flatten_rejects_values_outside_the_space(x: Any) -> None:
    space = MultiDiscrete([3, 2], dtype=np.int8, start=[-1, 0])
    with pytest.raises(InvalidValueError, match="got a value outside the space"):
        flatten(space, x)


@pytest.mark.parametrize("count", [3, 40], ids=["python_loop", "numpy"])
def test_flatten_and_unflatten_paths_check_every_entry(count: int) -> None:
    space = MultiDiscrete([3] * count, dtype=np.int8, start=[-1] * count)
    x = np.zeros(count, dtype=np.int8)
    for position in (0, count - 1):
        for bad in (-2, 2, -128, 127):
            x[position] = bad
            with pytest.raises(InvalidValueError, match="got a value outside the space"):
                flatten(space, x)
        x[position] = 0
    flat = flatten(space, x)
    flat[-3:] = [1, 1, 0]  # two hits in the last block: the first one wins
    assert unflatten(space, flat)[-1] == -1
    flat[-3:] = 0
    with pytest.raises(InvalidValueError, match=f"block {count - 1}"):
        unflatten(space, flat)


def test_flatten_errors() -> None:
    space = MultiDiscrete([3, 2])
    with pytest.raises(InvalidValueError, match="wrong shape"):
        flatten(space, np.array([0, 0, 0]))
    with pytest.raises(InvalidValueError, match="wrong shape"):
        flatten(space, [0])
    with pytest.raises(InvalidTypeError, match="needs an array of integers"):
        flatten(space, np.array([0.0, 1.0]))
    with pytest.raises(InvalidTypeError, match="needs an array of integers"):
        flatten(space, None)


def test_unflatten_takes_the_first_hit_of_a_block() -> None:
    space = MultiDiscrete([3, 2], start=[1, 0])
    assert unflatten(space, np.array([0, 1, 1, 1, 0])).tolist() == [2, 0]
    assert unflatten(space, np.array([0.0, 0.0, 1.0, 0.0, 1.0])).tolist() == [3, 1]


def test_unflatten_all_zero_block_names_the_space_and_block() -> None:
    with pytest.raises(InvalidValueError, match=r"one-hot vectors for MultiDiscrete\(\[3 2\]\)") as info:
        unflatten(MultiDiscrete([3, 2]), np.array([0, 1, 0, 0, 0]))
    assert "block 1" in str(info.value)
    with pytest.raises(InvalidValueError, match="block 0"):
        unflatten(MultiDiscrete([3, 2]), np.zeros(5))


def test_unflatten_errors() -> None:
    space = MultiDiscrete([3, 2])
    with pytest.raises(InvalidValueError, match="wrong length"):
        unflatten(space, np.array([1, 0, 0, 1]))
    with pytest.raises(InvalidTypeError, match="needs a flat array"):
        unflatten(space, [1, 0, 0, 1, 0])
    with pytest.raises(InvalidTypeError, match="needs a flat array"):
        unflatten(space, np.ones((1, 5)))


def test_is_space_dtype_shape_equiv() -> None:
    assert is_space_dtype_shape_equiv(MultiDiscrete([2, 3]), MultiDiscrete([5, 5], start=[1, 1]))
    assert not is_space_dtype_shape_equiv(MultiDiscrete([2, 3]), MultiDiscrete([2, 3, 4]))
    assert not is_space_dtype_shape_equiv(MultiDiscrete([2, 3]), MultiDiscrete([2, 3], dtype=np.int32))
    assert not is_space_dtype_shape_equiv(MultiDiscrete([2, 2], dtype=np.int8), MultiBinary(2))


# --- batching family ----------------------------------------------------------------------------------------


def test_batch_space_is_a_box_of_the_ranges(space: MultiDiscrete) -> None:
    batched = batch_space(space, 3)
    assert isinstance(batched, Box)
    assert batched.dtype == space.dtype and batched.shape == (3, *space.shape)
    for row in range(3):
        assert_same_value(batched.low[row], space.start)
        assert np.array_equal(batched.high[row].astype(np.int64), highest(space))
    assert batched.np_random is not space.np_random
    assert same_rng_state(batched.np_random, space.np_random)


def test_batch_differing_spaces() -> None:
    spaces = [MultiDiscrete([2, 3], start=[0, 1], seed=1), MultiDiscrete([4, 5], start=[-1, 0])]
    batched = batch_differing_spaces(spaces)
    assert isinstance(batched, Box) and batched.dtype == np.int64
    assert batched.low.tolist() == [[0, 1], [-1, 0]]
    assert batched.high.tolist() == [[1, 3], [2, 4]]
    assert same_rng_state(batched.np_random, spaces[0].np_random)


def test_batch_differing_spaces_checks_dtype_and_shape() -> None:
    with pytest.raises(InvalidValueError, match="one dtype") as info:
        batch_differing_spaces([MultiDiscrete([2]), MultiDiscrete([2], dtype=np.int32)])
    assert "spaces[1]" in str(info.value)
    with pytest.raises(InvalidValueError, match="one shape"):
        batch_differing_spaces([MultiDiscrete([2]), MultiDiscrete([2, 2])])


def test_create_empty_array(space: MultiDiscrete) -> None:
    empty = create_empty_array(space, 2)
    assert empty.shape == (2, *space.shape) and empty.dtype == space.dtype and not empty.any()
    assert create_empty_array(space, 3, fn=np.empty).shape == (3, *space.shape)


def test_concatenate_and_iterate(space: MultiDiscrete) -> None:
    items = [space.sample() for _ in range(3)]
    out = create_empty_array(space, 3)
    batch = concatenate(space, items, out)
    assert batch is out and batch in batch_space(space, 3)
    for row, item in zip(iterate(batch_space(space, 3), batch), items, strict=True):
        assert_same_value(row, item)


def test_concatenate_errors() -> None:
    space = MultiDiscrete([2, 3])
    with pytest.raises(InvalidValueError, match="wrong number of items"):
        concatenate(space, [np.array([0, 0])], create_empty_array(space, 2))
    with pytest.raises(InvalidTypeError, match="does not cast"):
        concatenate(space, [np.array([0.0, 0.0])] * 2, create_empty_array(space, 2))


def test_iterate_needs_a_batch() -> None:
    with pytest.raises(InvalidTypeError, match="needs a batch"):
        iterate(MultiDiscrete([2]), 3)


# --- differential tests against Gymnasium -------------------------------------------------------------------


@pytest.fixture
def gym_spaces() -> Any:
    return pytest.importorskip("gymnasium.spaces")


def gym_twin(gym_spaces: Any, space: MultiDiscrete) -> Any:
    return gym_spaces.MultiDiscrete(space.nvec.copy(), dtype=space.dtype, start=space.start.copy())


CANDIDATES = [
    np.array([1, 2]), np.array([0, 0], np.int8), np.array([1, 2], np.uint8), np.array([1, 2], np.int32),
    np.array([2, 2]), np.array([-1, 0]), np.array([1, 2], np.uint64), np.array([1.0, 2.0]),
    np.array([1, 2, 0]), np.array([[1, 2]]), np.array([True, False]), np.array([127, -128], np.int8),
    np.array([27, -124], np.int8), (0, 1), None, 1,
]  # fmt: skip


@needs_gymnasium((1, 2), "its MultiDiscrete.contains takes an int64 array for an int32 space")
def test_contains_agrees_with_gymnasium(gym_spaces: Any) -> None:
    for nvec, start, dtype in [*PARAMS, ([2, 3], None, np.int32)]:
        ours = MultiDiscrete(nvec, dtype=dtype, start=start)
        theirs = gym_twin(gym_spaces, ours)
        for x in CANDIDATES:
            if isinstance(x, tuple) and dtype != np.int64:
                continue  # Python ints are judged by value (test_contains_judges_python_ints_by_value)
            assert ours.contains(x) == theirs.contains(x), (ours, x)


def test_utilities_agree_with_gymnasium(gym_spaces: Any, space: MultiDiscrete) -> None:
    gym_utils = pytest.importorskip("gymnasium.vector.utils")
    theirs = gym_twin(gym_spaces, space)
    assert repr(space) == repr(theirs)
    assert flatdim(space) == gym_spaces.flatdim(theirs)
    flat_theirs = gym_spaces.flatten_space(theirs)
    assert (flatten_space(space).shape, flatten_space(space).dtype) == (flat_theirs.shape, flat_theirs.dtype)
    xs = [space.sample() for _ in range(3)]
    for x in xs:
        assert theirs.contains(x)
        if space.dtype != np.int8 or flatdim(space) <= 127:  # Gymnasium's int8 one-hot offsets overflow
            assert_same_value(flatten(space, x), gym_spaces.flatten(theirs, x))
            assert_same_value(unflatten(space, flatten(space, x)), gym_spaces.unflatten(theirs, flatten(space, x)))
    batched, gym_batched = batch_space(space, 3), gym_utils.batch_space(theirs, 3)
    assert type(gym_batched).__name__ == type(batched).__name__ == "Box"
    assert (batched.shape, batched.dtype) == (gym_batched.shape, gym_batched.dtype)
    assert np.array_equal(batched.low, gym_batched.low) and np.array_equal(batched.high, gym_batched.high)
    assert_same_value(
        concatenate(space, xs, create_empty_array(space, 3)),
        gym_utils.concatenate(theirs, xs, gym_utils.create_empty_array(theirs, 3)),
    )


@needs_gymnasium((1, 2), "indexing a MultiDiscrete gives a Discrete, which takes no dtype (int64 only)")
def test_getitem_agrees_with_gymnasium(gym_spaces: Any) -> None:
    ours = MultiDiscrete([[2, 3], [4, 5]], dtype=np.int32, start=[[0, 1], [-2, 3]])
    theirs = gym_twin(gym_spaces, ours)
    for index in [0, 1, (1, 0), (slice(None), 1), slice(None)]:
        assert repr(ours[index]) == repr(theirs[index])
