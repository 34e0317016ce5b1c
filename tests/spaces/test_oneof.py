"""Tests of the OneOf space and its operations (vecspaces.spaces.oneof, vecspaces._kernels.oneof)."""

from __future__ import annotations

import copy
import json
import pickle
from collections import Counter
from typing import Any

import numpy as np
import pytest

from tests.helpers import assert_same_value, needs_gymnasium, same_rng_state
from vecspaces.error import CustomSpaceError, InvalidTypeError, InvalidValueError, NotFlattenableError
from vecspaces.spaces import (
    Box,
    Dict,
    Discrete,
    MultiBinary,
    OneOf,
    Sequence,
    Space,
    Text,
    Tuple,
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


def mixed() -> OneOf[Any]:
    return OneOf((Discrete(3, start=-1), Box(-2.0, 2.0, (2, 2), np.float32), Text(3, charset="ab😀")))


def int8(*bits: int) -> np.ndarray:
    return np.array(bits, dtype=np.int8)


# --- construction -------------------------------------------------------------------------------------------


def test_sequence_protocol() -> None:
    a, b = Discrete(2), Text(3)
    space = OneOf([a, b])
    assert space.spaces == (a, b)
    assert space[0] is a and space[1] is b
    assert space[:1] == (a,)
    assert len(space) == 2
    assert list(space) == [a, b]
    assert space.shape is None and space.dtype is None


def test_accepts_any_iterable() -> None:
    assert len(OneOf(Discrete(n) for n in (2, 3, 4))) == 3


@pytest.mark.parametrize(
    ("spaces", "error", "words"),
    [
        (5, InvalidTypeError, "not iterable"),
        (None, InvalidTypeError, "not iterable"),
        ([], InvalidValueError, "at least one"),
        ((), InvalidValueError, "at least one"),
        ([Discrete(2), 3], InvalidTypeError, r"spaces\[1\]"),
        ("abc", InvalidTypeError, "not a space"),
        ({"a": Discrete(2)}, InvalidTypeError, "not a space"),
    ],
)
def test_constructor_errors(spaces: Any, error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=words):
        OneOf(spaces)


def test_a_gymnasium_branch_is_converted() -> None:
    gym_spaces = pytest.importorskip("gymnasium.spaces")
    space = OneOf([gym_spaces.Discrete(2), Box(0, 1, (2,))])
    assert space == OneOf([Discrete(2), Box(0, 1, (2,))]) and isinstance(space.spaces[0], Discrete)


def test_is_np_flattenable() -> None:
    assert mixed().is_np_flattenable
    assert not OneOf((Discrete(2), Sequence(Discrete(2)))).is_np_flattenable


# --- seeding ------------------------------------------------------------------------------------------------


def draws(space: Space[Any], count: int = 20) -> list[Any]:
    return [space.sample() for _ in range(count)]


def test_int_seed_returns_a_seed_per_branch_that_reproduces() -> None:
    space = mixed()
    seeds = space.seed(11)
    assert len(seeds) == 4 and seeds[0] == 11
    assert len(set(seeds[1:])) == 3
    first = draws(space)
    space.seed(11)
    assert_same_value(draws(space), first)
    space.seed(seeds)
    assert_same_value(draws(space), first)
    assert_same_value(draws(OneOf(mixed().spaces, seed=11)), first)


def test_int_seed_gives_identical_branches_independent_streams() -> None:
    space = OneOf((Discrete(1000), Discrete(1000)), seed=0)
    branch_0 = [int(space[0].sample()) for _ in range(20)]
    branch_1 = [int(space[1].sample()) for _ in range(20)]
    assert branch_0 != branch_1


def test_none_seed_returns_what_reproduces_it() -> None:
    space = mixed()
    seeds = space.seed(None)
    assert len(seeds) == 4 and all(isinstance(seed, int) for seed in seeds)
    first = draws(space)
    space.seed(list(seeds))
    assert_same_value(draws(space), first)


def test_nested_seed_round_trip() -> None:
    space = OneOf((OneOf((Discrete(4), Text(2))), Tuple((Discrete(3), Discrete(3)))))
    seeds = space.seed(5)
    assert isinstance(seeds[1], tuple) and len(seeds[1]) == 3
    first = draws(space)
    space.seed(None)
    space.seed(seeds)
    assert_same_value(draws(space), first)


def test_tuple_seed_with_none_entries() -> None:
    space = OneOf((Discrete(4), Discrete(4)))
    seeds = space.seed((1, None, 3))
    assert seeds[0] == 1 and seeds[2] == 3 and isinstance(seeds[1], int)


@pytest.mark.parametrize(
    ("seed", "error"),
    [
        ((1, 2), InvalidValueError),
        ((1, 2, 3, 4), InvalidValueError),
        (1.5, InvalidTypeError),
        ("3", InvalidTypeError),
        (True, InvalidTypeError),
        (-1, InvalidValueError),
        ({"a": 1}, InvalidTypeError),
    ],
)
def test_seed_errors(seed: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        OneOf((Discrete(2), Discrete(3))).seed(seed)


def test_generator_seed_is_stored_by_identity() -> None:
    rng = np.random.default_rng(0)
    assert OneOf([Discrete(2)], seed=rng).np_random is rng


# --- sampling -----------------------------------------------------------------------------------------------


def test_samples_are_index_value_pairs_in_the_space() -> None:
    space = mixed()
    space.seed(0)
    for index, value in draws(space, 100):
        assert type(index) is np.int64
        assert (index, value) in space
        assert space[index].contains(value)


def test_every_branch_is_reachable_and_roughly_uniform() -> None:
    space = OneOf((Discrete(2), Discrete(3), Text(2), MultiBinary(2)), seed=3)
    counts = Counter(int(index) for index, _ in draws(space, 4000))
    assert set(counts) == {0, 1, 2, 3}
    assert all(850 <= counts[i] <= 1150 for i in range(4)), counts


def test_mask_applies_to_the_drawn_branch_only() -> None:
    space = OneOf((Discrete(3), Text(4, charset="xyz")), seed=1)
    mask = (int8(0, 0, 1), (2, int8(1, 0, 0)))
    seen = Counter()
    for index, value in (space.sample(mask=mask) for _ in range(200)):
        seen[int(index)] += 1
        assert value == (np.int64(2) if index == 0 else "xx")
    assert set(seen) == {0, 1}
    mixed_none = (None, (None, int8(0, 1, 0)))
    for index, value in (space.sample(mask=mixed_none) for _ in range(50)):
        assert index == 0 or set(value) == {"y"}


def test_probability_applies_to_the_drawn_branch_only() -> None:
    space = OneOf((Discrete(3), Text(4, charset="xyz")), seed=2)
    probability = (np.array([0.0, 1.0, 0.0]), (3, np.array([0.0, 0.0, 1.0])))
    for index, value in (space.sample(probability=probability) for _ in range(100)):
        assert value == (np.int64(1) if index == 0 else "zzz")


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"mask": [None, None]}, InvalidTypeError, "not a tuple"),
        ({"mask": (None,)}, InvalidValueError, "2 entries"),
        ({"mask": (None, None, None)}, InvalidValueError, "wrong length"),
        ({"probability": np.array([0.5, 0.5])}, InvalidTypeError, "not a tuple"),
        ({"probability": (None,)}, InvalidValueError, "wrong length"),
        ({"mask": (None, None), "probability": (None, None)}, InvalidValueError, "both"),
    ],
)
def test_invalid_mask_and_probability(kwargs: dict[str, Any], error: type[Exception], words: str) -> None:
    space = OneOf((Discrete(3), Discrete(3)), seed=0)
    state = copy.deepcopy(space.np_random.bit_generator.state)
    with pytest.raises(error, match=words):
        space.sample(**kwargs)
    assert space.np_random.bit_generator.state == state  # validated before the branch is drawn


def test_invalid_branch_mask_raises_from_the_branch() -> None:
    space = OneOf((Discrete(3), Discrete(3)), seed=0)
    with pytest.raises(InvalidValueError):
        space.sample(mask=(int8(1, 0), int8(1, 0)))


# --- contains -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        ((np.int64(0), np.int64(1)), True),
        ((0, np.int64(1)), True),
        ((np.int32(1), "ab"), True),
        ((np.uint8(1), "ab"), True),
        ((1, "ab"), True),
        ((0, "ab"), False),
        ((1, np.int64(1)), False),
        ((2, "ab"), False),
        ((-1, "ab"), False),
        ((10**30, "ab"), False),
        ((True, "ab"), False),
        ((np.bool_(True), "ab"), False),
        ((1.0, "ab"), False),
        ((np.array(1), "ab"), False),
        (("1", "ab"), False),
        ([1, "ab"], False),
        ((1, "ab", None), False),
        ((1,), False),
        ((), False),
        (None, False),
        ("ab", False),
        (np.array([1, 2]), False),
    ],
)
def test_contains(x: Any, expected: bool) -> None:
    space = OneOf((Discrete(3, start=-1), Text(3, charset="ab")))
    assert space.contains(x) is expected
    assert (x in space) is expected


# --- identity, copies, serialisation ------------------------------------------------------------------------


def test_repr() -> None:
    assert repr(OneOf((Discrete(2), Text(2, charset="ba")))) == "OneOf(Discrete(2), Text(1, 2, charset=ab))"


def test_eq() -> None:
    assert OneOf((Discrete(2), Text(2))) == OneOf([Discrete(2), Text(2)])
    assert OneOf((Discrete(2), Text(2))) != OneOf((Text(2), Discrete(2)))
    assert OneOf((Discrete(2), Text(2))) != OneOf((Discrete(2),))
    assert OneOf((Discrete(2),)) != Tuple((Discrete(2),))
    assert OneOf((Discrete(2),)) != (Discrete(2),)


def test_pickle_and_deepcopy_keep_every_generator_state() -> None:
    space = mixed()
    space.seed(4)
    draws(space, 3)
    flatdim(space)  # fills the layout cache, which must survive copies
    for make_clone in (lambda s: pickle.loads(pickle.dumps(s)), copy.deepcopy):
        clone = make_clone(space)
        assert clone == space
        assert same_rng_state(clone.np_random, space.np_random)
        assert all(same_rng_state(a.np_random, b.np_random) for a, b in zip(clone, space, strict=True))
        assert flatdim(clone) == flatdim(space)
        assert_same_value(draws(clone, 10), draws(copy.deepcopy(space), 10))


def test_jsonable_round_trip_with_container_branches() -> None:
    space = OneOf(
        (
            Dict(a=Discrete(3), b=Text(2, charset="xy")),
            Tuple((Box(0, 1, (2,), np.float32), Discrete(2))),
            Tuple((Discrete(4),)),
            OneOf((Text(2), Sequence(Discrete(2)))),
        ),
        seed=1,
    )
    batch = draws(space, 40)
    assert {int(index) for index, _ in batch} == {0, 1, 2, 3}
    data = json.loads(json.dumps(space.to_jsonable(batch)))
    assert_same_value(space.from_jsonable(data), batch)


def test_jsonable_round_trip() -> None:
    space = mixed()
    space.seed(6)
    batch = draws(space, 12)
    data = json.loads(json.dumps(space.to_jsonable(batch)))
    assert all(isinstance(entry, list) and type(entry[0]) is int for entry in data)
    assert_same_value(space.from_jsonable(data), batch)


# --- flatten family -----------------------------------------------------------------------------------------


def test_flatdim() -> None:
    assert flatdim(mixed()) == 1 + 4
    assert flatdim(OneOf((Discrete(7), Text(2)))) == 1 + 7


def test_flat_layout_is_index_value_zero_padding() -> None:
    space = OneOf((Box(5, 9, (1,), np.int64), Box(-1.0, 1.0, (3,), np.float32)))
    flat = flatten(space, (np.int64(0), np.array([7], dtype=np.int64)))
    assert flat.dtype == np.float64
    assert flat.tolist() == [0, 7, 0, 0]
    flat = flatten(space, (1, np.array([0.5, -0.5, 0.25], dtype=np.float32)))
    assert flat.tolist() == [1, 0.5, -0.5, 0.25]


def test_flat_dtype_is_the_same_whichever_branch_is_drawn() -> None:
    space = OneOf((Discrete(3), Box(0, 1, (2,), np.float32), Text(3, charset="ab")), seed=0)
    expected = flatten_space(space).dtype
    assert expected == np.result_type(np.int64, np.float32, np.int32)
    assert {flatten(space, x).dtype for x in draws(space, 60)} == {expected}


def test_flatten_space_bounds_cover_each_position_and_the_padding() -> None:
    space = OneOf((Box(5.0, 6.0, (3,), np.float32), Box(-1.0, 1.0, (1,), np.float32)))
    flat_space = flatten_space(space)
    assert flat_space.shape == (4,) and flat_space.dtype == np.float32
    assert flat_space.low.tolist() == [0, -1, 0, 0]
    assert flat_space.high.tolist() == [1, 6, 6, 6]


def test_flatten_is_in_flatten_space_and_round_trips() -> None:
    spaces = [
        mixed(),
        OneOf((Box(5, 9, (1,), np.int64), Box(-1.0, 1.0, (3,), np.float32))),
        OneOf((MultiBinary(3), Discrete(2, start=4), Text(2, min_length=0, charset="日本"))),
        OneOf((OneOf((Discrete(2), Text(1))), Tuple((Discrete(2), Box(0, 3, (2,), np.int16))))),
    ]
    for space in spaces:
        space.seed(8)
        flat_space = flatten_space(space)
        assert flat_space.shape == (flatdim(space),)
        for x in draws(space, 60):
            flat = flatten(space, x)
            assert flat in flat_space, (space, x, flat)
            assert_same_value(unflatten(space, flat), x)


def test_index_widens_the_dtype_when_it_would_not_fit() -> None:
    space = OneOf([MultiBinary(1)] * 200)
    assert flatten_space(space).dtype == np.int16
    flat = flatten(space, (199, np.array([1], dtype=np.int8)))
    assert flat.tolist() == [199, 1]
    assert_same_value(unflatten(space, flat), (np.int64(199), np.array([1], dtype=np.int8)))
    assert flatten_space(OneOf([MultiBinary(1)] * 3)).dtype == np.int8


def test_flatten_errors() -> None:
    space = OneOf((Discrete(2), Text(2)))
    with pytest.raises(InvalidTypeError):
        flatten(space, [0, np.int64(1)])
    with pytest.raises(InvalidTypeError):
        flatten(space, (0,))
    with pytest.raises(InvalidTypeError, match="index"):
        flatten(space, (True, np.int64(1)))
    with pytest.raises(InvalidValueError, match="out of range"):
        flatten(space, (2, np.int64(1)))


@pytest.mark.parametrize(
    ("x", "error"),
    [
        (np.array([0.0, 1.0, 0.0]), InvalidValueError),  # too short
        (np.array([2.0, 1.0, 0.0, 0.0]), InvalidValueError),  # index out of range
        (np.array([-1.0, 1.0, 0.0, 0.0]), InvalidValueError),
        (np.array([0.5, 1.0, 0.0, 0.0]), InvalidValueError),  # index not whole
        (np.array([np.nan, 1.0, 0.0, 0.0]), InvalidValueError),
        (np.array([np.inf, 1.0, 0.0, 0.0]), InvalidValueError),
        ([0, 1, 0, 0], InvalidTypeError),
        (np.zeros((1, 4)), InvalidTypeError),
    ],
)
def test_unflatten_errors(x: Any, error: type[Exception]) -> None:
    space = OneOf((Discrete(3), Text(2)))
    with pytest.raises(error):
        unflatten(space, x)


def test_branch_without_fixed_flat_size_keeps_the_structure() -> None:
    space = OneOf((Discrete(3), Sequence(Box(0, 1, (2,), np.int64))), seed=0)
    with pytest.raises(NotFlattenableError, match=r"spaces\[1\]"):
        flatdim(space)
    flat_space = flatten_space(space)
    assert flat_space == OneOf((flatten_space(Discrete(3)), Sequence(Box(0, 1, (2,), np.int64))))
    assert_same_value(flatten(space, (1, (np.array([1, 0]),))), (np.int64(1), (np.array([1, 0]),)))
    assert_same_value(flatten(space, (np.int64(0), np.int64(2))), (np.int64(0), np.array([0, 0, 1])))
    for x in draws(space, 30):
        flat = flatten(space, x)
        assert flat in flat_space
        assert_same_value(unflatten(space, flat), x)


@pytest.mark.parametrize(
    ("x", "error"),
    [
        (np.array([0, 0, 0, 1]), InvalidTypeError),
        ([0, np.array([1, 0, 0])], InvalidTypeError),
        ((2, ()), InvalidValueError),
        ((np.True_, ()), InvalidTypeError),
    ],
)
def test_structured_unflatten_errors(x: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        unflatten(OneOf((Discrete(3), Sequence(Discrete(2)))), x)


def test_is_space_dtype_shape_equiv() -> None:
    space = OneOf((Discrete(2), Text(3, charset="ab")))
    assert is_space_dtype_shape_equiv(space, OneOf((Discrete(5), Text(3, charset="ba"))))
    assert not is_space_dtype_shape_equiv(space, OneOf((Discrete(2),)))
    assert not is_space_dtype_shape_equiv(space, OneOf((Discrete(2), Text(4, charset="ab"))))
    assert not is_space_dtype_shape_equiv(space, OneOf((Discrete(2), Text(3, charset="ab"), Discrete(2))))
    assert not is_space_dtype_shape_equiv(space, Tuple((Discrete(2), Text(3, charset="ab"))))


# --- batching family ----------------------------------------------------------------------------------------


def test_batch_space_is_a_tuple_of_independent_copies() -> None:
    space = OneOf((Discrete(1000), Text(6)), seed=0)
    before = copy.deepcopy(space.np_random.bit_generator.state)
    batched = batch_space(space, 3)
    assert isinstance(batched, Tuple) and len(batched) == 3
    assert all(sub == space and sub is not space for sub in batched)
    assert space.np_random.bit_generator.state == before
    streams = [repr(draws(sub, 5)) for sub in batched]
    assert len(set(streams)) == 3
    assert batched.sample() in batched


def test_batch_differing_spaces() -> None:
    spaces = [OneOf((Discrete(2), Text(2)), seed=1), OneOf((Discrete(4), Text(3)))]
    batched = batch_differing_spaces(spaces)
    assert isinstance(batched, Tuple) and list(batched) == spaces
    assert batched[1] is not spaces[1]
    assert same_rng_state(batched.np_random, spaces[0].np_random)


def test_concatenate_returns_a_tuple_of_the_items() -> None:
    space = mixed()
    space.seed(0)
    items = draws(space, 3)
    out = create_empty_array(space, 3)
    result = concatenate(space, iter(items), out)
    assert type(result) is tuple
    assert_same_value(result, tuple(items))
    with pytest.raises(InvalidValueError, match="3 items"):
        concatenate(space, items[:2], out)


@pytest.mark.parametrize("fn", [np.zeros, np.empty])
def test_create_empty_array_holds_branch_0_placeholders(fn: Any) -> None:
    space = OneOf((Text(4, min_length=2, charset="qr"), Discrete(3)))
    empty = create_empty_array(space, 3, fn)
    assert_same_value(empty, ((np.int64(0), "qq"),) * 3)
    assert all(x in space for x in empty)
    discrete_first = create_empty_array(OneOf((Discrete(3), Text(2))), 2)
    assert all(x in OneOf((Discrete(3), Text(2))) for x in discrete_first)


def test_create_empty_array_gives_each_placeholder_its_own_array() -> None:
    space = OneOf((Box(-1.0, 1.0, (2,), np.float32), Discrete(2)))
    empty = create_empty_array(space, 2)
    assert all(x in space for x in empty)
    empty[0][1][0] = 0.5
    assert empty[1][1][0] == 0.0


def test_iterate_is_only_for_the_batched_space() -> None:
    space = OneOf((Discrete(2), Text(2)))
    with pytest.raises(CustomSpaceError, match="batch_space"):
        iterate(space, ((0, 1),))
    items = ((np.int64(0), np.int64(1)), (np.int64(1), "a"))
    assert_same_value(tuple(iterate(batch_space(space, 2), items)), items)


# --- against Gymnasium --------------------------------------------------------------------------------------


def gym_mixed() -> Any:
    gym_spaces = pytest.importorskip("gymnasium.spaces")
    return gym_spaces.OneOf(
        (
            gym_spaces.Discrete(3, start=-1),
            gym_spaces.Box(-2.0, 2.0, (2, 2), np.float32),
            gym_spaces.Text(3, charset="ab😀"),
        )
    )


def test_flatdim_and_repr_agree_with_gymnasium() -> None:
    gym_utils = pytest.importorskip("gymnasium.spaces.utils")
    assert flatdim(mixed()) == gym_utils.flatdim(gym_mixed())
    assert repr(mixed()) == repr(gym_mixed())


@needs_gymnasium((1, 4), "its unflatten of a OneOf indexes with a float (TypeError)")
def test_unflatten_of_flatten_agrees_with_gymnasium() -> None:
    gym_utils = pytest.importorskip("gymnasium.spaces.utils")
    ours, theirs = mixed(), gym_mixed()
    ours.seed(3)
    for x in draws(ours, 60):
        flat, gym_flat = flatten(ours, x), gym_utils.flatten(theirs, x)
        assert flat.shape == gym_flat.shape
        assert flat[: 1 + flatdim(ours[x[0]])].tolist() == gym_flat[: 1 + flatdim(ours[x[0]])].tolist()
        assert_same_value(unflatten(ours, flat), x)
        assert_same_value(gym_utils.unflatten(theirs, gym_flat), x)
        # Only the padding differs, and neither library reads it.
        assert_same_value(unflatten(ours, gym_flat), x)
        assert_same_value(gym_utils.unflatten(theirs, flat), x)


def test_contains_agrees_with_gymnasium() -> None:
    ours, theirs = mixed(), gym_mixed()
    ours.seed(1)
    theirs.seed(1)
    candidates = [*draws(ours, 20), *(theirs.sample() for _ in range(20))]
    candidates += [(0, "ab"), (2, "ab"), (3, "ab"), (-1, np.int64(0)), [0, np.int64(0)], (0,), None, "x"]
    for x in candidates:
        assert ours.contains(x) == theirs.contains(x), x


def test_jsonable_agrees_with_gymnasium() -> None:
    ours, theirs = mixed(), gym_mixed()
    ours.seed(2)
    batch = draws(ours, 10)
    assert ours.to_jsonable(batch) == theirs.to_jsonable(batch)
    data = theirs.to_jsonable(batch)
    assert_same_value(ours.from_jsonable(data), theirs.from_jsonable(data))
