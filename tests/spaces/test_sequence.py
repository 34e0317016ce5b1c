"""Tests of the Sequence space and its operations (vecspaces.spaces.sequence, vecspaces._kernels.sequence)."""

from __future__ import annotations

import copy
import json
import pickle
from collections import Counter
from typing import Any

import numpy as np
import pytest

import vecspaces.spaces
from tests.helpers import assert_same_value, same_rng_state, skip_before_gymnasium
from vecspaces.error import CustomSpaceError, Error, InvalidTypeError, InvalidValueError, NotFlattenableError
from vecspaces.spaces import (
    Box,
    Dict,
    Discrete,
    MultiBinary,
    Sequence,
    Text,
    Tuple,
    flatdim,
    flatten,
    flatten_space,
    unflatten,
)
from vecspaces.spaces._stacking import empty_stack, stack_items, unstack
from vecspaces.spaces.utils import is_space_dtype_shape_equiv
from vecspaces.vector.utils import (
    batch_differing_spaces,
    batch_space,
    concatenate,
    create_empty_array,
    iterate,
)


def int8(*bits: int) -> np.ndarray:
    return np.array(bits, dtype=np.int8)


def dict_feature() -> Dict:
    return Dict(x=Box(-1.0, 1.0, (2,)), k=Discrete(4, start=1))


# Feature spaces with the empty stack each gives.
STACKED_FEATURES: dict[str, tuple[Any, Any]] = {
    "box": (lambda: Box(0.0, 1.0, (2, 3)), np.zeros((0, 2, 3), dtype=np.float32)),
    "discrete": (lambda: Discrete(3, start=-1), np.zeros((0,), dtype=np.int64)),
    "multi_binary": (lambda: MultiBinary(4), np.zeros((0, 4), dtype=np.int8)),
    "dict": (
        dict_feature,
        {"x": np.zeros((0, 2), dtype=np.float32), "k": np.zeros((0,), dtype=np.int64)},
    ),
    "text": (lambda: Text(3, charset="abc"), ()),
    "tuple_with_text": (
        lambda: Tuple((Text(2, charset="xy"), Discrete(2))),
        ((), np.zeros((0,), dtype=np.int64)),
    ),
}


# --- construction -------------------------------------------------------------------------------------------


def test_attributes() -> None:
    feature = Discrete(3)
    space = Sequence(feature)
    assert space.feature_space is feature
    assert space.stack is False
    assert space.shape is None and space.dtype is None
    assert space.is_np_flattenable is False
    assert not hasattr(space, "stacked_feature_space")


def test_stack_builds_the_batched_feature_space() -> None:
    space = Sequence(Box(0.0, 1.0, (2,)), stack=True)
    assert space.stack is True
    assert space.stacked_feature_space == batch_space(Box(0.0, 1.0, (2,)), 1)


@pytest.mark.parametrize("feature", [None, 3, "Discrete(3)", Discrete])
def test_feature_space_must_be_a_space(feature: Any) -> None:
    with pytest.raises(InvalidTypeError, match="Sequence feature space is not a space"):
        Sequence(feature)
    with pytest.raises(TypeError):  # still catchable as Gymnasium's TypeError
        Sequence(feature)


@pytest.mark.parametrize("stack", ["yes", 2, None, 1.0])
def test_stack_must_be_a_bool(stack: Any) -> None:
    with pytest.raises(InvalidTypeError, match="stack is not a bool"):
        Sequence(Discrete(2), stack=stack)


@pytest.mark.parametrize("stack", [True, np.bool_(True), 1])
def test_stack_accepts_bool_like(stack: Any) -> None:
    assert Sequence(Discrete(2), stack=stack).stack is True


def test_generator_seed_is_used_as_is() -> None:
    rng = np.random.default_rng(3)
    assert Sequence(Discrete(2), seed=rng).np_random is rng


# --- seeding ------------------------------------------------------------------------------------------------


def test_int_seed_returns_own_and_feature_seed_and_reproduces() -> None:
    space = Sequence(Discrete(100))
    seeds = space.seed(7)
    assert isinstance(seeds, tuple) and len(seeds) == 2
    assert seeds[0] == 7 and isinstance(seeds[1], int)
    first = [space.sample() for _ in range(5)]
    space.seed(7)
    assert [space.sample() for _ in range(5)] == first
    space.seed(seeds)
    assert [space.sample() for _ in range(5)] == first


def test_int_seed_gives_the_feature_an_independent_stream() -> None:
    space = Sequence(Discrete(1000))
    own, feature_seed = space.seed(0)
    assert feature_seed != own
    assert not same_rng_state(space.np_random, space.feature_space.np_random)
    assert space.seed(1) != space.seed(0)


def test_none_seed_returns_fresh_reproducible_seeds() -> None:
    space = Sequence(Discrete(1000))
    seeds = space.seed(None)
    assert all(isinstance(s, int) for s in seeds)
    first = [space.sample() for _ in range(5)]
    space.seed(seeds)
    assert [space.sample() for _ in range(5)] == first


@pytest.mark.parametrize("as_type", [tuple, list])
def test_pair_seed(as_type: type) -> None:
    space = Sequence(Discrete(1000))
    assert space.seed(as_type([3, 4])) == (3, 4)
    first = space.sample()
    space.seed((3, 4))
    assert space.sample() == first


def test_nested_seed_round_trip() -> None:
    space = Sequence(Tuple((Discrete(100), Discrete(100))))
    seeds = space.seed(5)
    assert isinstance(seeds[1], tuple) and len(seeds[1]) == 2
    first = [space.sample() for _ in range(3)]
    space.seed(seeds)
    assert [space.sample() for _ in range(3)] == first


@pytest.mark.parametrize("seed", [(1,), (1, 2, 3), []])
def test_pair_seed_of_wrong_length(seed: Any) -> None:
    with pytest.raises(InvalidValueError, match="seed pair has the wrong length"):
        Sequence(Discrete(2)).seed(seed)


@pytest.mark.parametrize("seed", [1.5, "3", True, {"a": 1}])
def test_seed_of_wrong_type(seed: Any) -> None:
    with pytest.raises(InvalidTypeError, match="Sequence seed has the wrong type"):
        Sequence(Discrete(2)).seed(seed)


def test_negative_seed() -> None:
    with pytest.raises(InvalidValueError):
        Sequence(Discrete(2)).seed(-1)


def test_numpy_integer_seed() -> None:
    space = Sequence(Discrete(100))
    assert space.seed(np.int64(4))[0] == 4


# --- sampling -----------------------------------------------------------------------------------------------


def test_default_length_is_geometric_with_mean_4() -> None:
    space = Sequence(Discrete(2), seed=0)
    lengths = [len(space.sample()) for _ in range(4000)]
    assert min(lengths) == 1
    assert 3.7 < np.mean(lengths) < 4.3


def test_samples_are_tuples_of_feature_values() -> None:
    space = Sequence(Discrete(3, start=5), seed=1)
    for _ in range(50):
        value = space.sample()
        assert type(value) is tuple
        assert all(isinstance(item, np.int64) and 5 <= item < 8 for item in value)
        assert value in space


@pytest.mark.parametrize("length", [0, 1, 5, np.int32(3), np.uint8(2)])
def test_fixed_length(length: Any) -> None:
    space = Sequence(Discrete(3), seed=0)
    for _ in range(5):
        assert len(space.sample(mask=(length, None))) == int(length)
        assert len(space.sample(probability=(length, None))) == int(length)


def test_length_array_respected_and_every_length_reachable() -> None:
    space = Sequence(Discrete(3), seed=0)
    allowed = np.array([0, 2, 7])
    counts = Counter(len(space.sample(mask=(allowed, None))) for _ in range(600))
    assert set(counts) == {0, 2, 7}
    assert min(counts.values()) > 150  # uniform over the three lengths
    counts = Counter(len(space.sample(probability=(np.array([1, 3], dtype=np.uint8), None))) for _ in range(200))
    assert set(counts) == {1, 3}


def test_feature_mask_is_applied_to_every_item() -> None:
    space = Sequence(Discrete(4), seed=0)
    for _ in range(20):
        value = space.sample(mask=(None, int8(0, 0, 1, 0)))
        assert len(value) >= 1 and set(value) == {2}


def test_feature_probability_is_applied_to_every_item() -> None:
    space = Sequence(Discrete(3), seed=0)
    values = [item for _ in range(50) for item in space.sample(probability=(4, np.array([0.0, 0.0, 1.0])))]
    assert len(values) == 200 and set(values) == {2}


@pytest.mark.parametrize(
    ("mask", "error", "text"),
    [
        (np.array([1, 0]), InvalidTypeError, "mask is not a pair"),
        (3, InvalidTypeError, "mask is not a pair"),
        ((1,), InvalidValueError, "mask has the wrong length"),
        ((1, None, None), InvalidValueError, "mask has the wrong length"),
        ((-1, None), InvalidValueError, "is negative"),
        ((2.0, None), InvalidTypeError, "has the wrong type"),
        ((True, None), InvalidTypeError, "has the wrong type"),
        (([2, 3], None), InvalidTypeError, "has the wrong type"),
        ((np.array([1.0, 2.0]), None), InvalidTypeError, "non-integer dtype"),
        ((np.array([True, False]), None), InvalidTypeError, "non-integer dtype"),
        ((np.array([[1, 2]]), None), InvalidValueError, "non-empty 1-D"),
        ((np.array([], dtype=np.int64), None), InvalidValueError, "non-empty 1-D"),
        ((np.array([2, -1]), None), InvalidValueError, "negative length"),
    ],
)
def test_bad_masks_give_clear_errors(mask: Any, error: type[Exception], text: str) -> None:
    space = Sequence(Discrete(3), seed=0)
    with pytest.raises(error, match=text):
        space.sample(mask=mask)
    with pytest.raises(error, match=text.replace("mask is", "probability is").replace("mask has", "probability has")):
        space.sample(probability=mask)


def test_mask_and_probability_together() -> None:
    with pytest.raises(InvalidValueError, match="both a mask and a probability"):
        Sequence(Discrete(3)).sample(mask=(1, None), probability=(1, None))


def test_bad_feature_mask_is_reported_by_the_feature_space() -> None:
    space = Sequence(Discrete(3), seed=0)
    with pytest.raises(Error):
        space.sample(mask=(2, int8(1, 0)))
    with pytest.raises(Error):
        space.sample(probability=(2, np.array([0.5, 0.6, 0.0])))


def test_length_0_without_stack_is_an_empty_tuple() -> None:
    space = Sequence(Box(0.0, 1.0, (2,)), seed=0)
    assert space.sample(mask=(0, None)) == ()
    assert () in space


@pytest.mark.parametrize("name", list(STACKED_FEATURES))
def test_stacked_length_0_is_an_empty_stack(name: str) -> None:
    make_feature, empty = STACKED_FEATURES[name]
    space = Sequence(make_feature(), stack=True, seed=0)
    value = space.sample(mask=(0, None))
    assert_same_value(value, empty)
    assert value in space
    assert_same_value(space.sample(probability=(np.array([0]), None)), empty)


@pytest.mark.parametrize("name", list(STACKED_FEATURES))
def test_stacked_samples_are_stacks_of_feature_values(name: str) -> None:
    make_feature, _ = STACKED_FEATURES[name]
    feature = make_feature()
    space = Sequence(feature, stack=True, seed=0)
    for length in [1, 4]:
        value = space.sample(mask=(length, None))
        assert value in space
        items = unstack(feature, space.stacked_feature_space, value)
        assert len(items) == length and all(item in feature for item in items)


def test_stacked_box_dtype_and_shape() -> None:
    space = Sequence(Box(0, 9, (3,), dtype=np.uint8), stack=True, seed=0)
    value = space.sample(mask=(5, None))
    assert value.shape == (5, 3) and value.dtype == np.uint8


def test_stacked_dict_sample() -> None:
    space = Sequence(dict_feature(), stack=True, seed=0)
    value = space.sample(mask=(3, None))
    assert list(value) == ["x", "k"]
    assert value["x"].shape == (3, 2) and value["x"].dtype == np.float32
    assert value["k"].shape == (3,) and set(value["k"].tolist()) <= {1, 2, 3, 4}


def test_stacked_with_feature_mask() -> None:
    space = Sequence(Discrete(4), stack=True, seed=0)
    value = space.sample(mask=(6, int8(0, 1, 0, 0)))
    assert_same_value(value, np.ones(6, dtype=np.int64))


# --- contains -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        [0, 1],
        np.array([0, 1]),
        (0, 3),
        (0, -1),
        (0, 1.0),
        None,
        "01",
        0,
        {"a": 0},
        (x for x in (0, 1)),
    ],
    ids=repr,
)
def test_unstacked_contains_rejects(value: Any) -> None:
    assert Sequence(Discrete(3)).contains(value) is False


def test_unstacked_contains_accepts() -> None:
    space = Sequence(Discrete(3))
    assert space.contains((0, np.int64(2)))
    assert space.contains(())
    assert np.int64(1) in Discrete(3) and (np.int64(1),) in space


@pytest.mark.parametrize(
    "value",
    [
        np.zeros((3, 3), dtype=np.float32),
        np.full((2, 2), 5.0, dtype=np.float32),
        np.float32(0.5),
        5,
        None,
        "ab",
        {"x": 1},
    ],
    ids=repr,
)
def test_stacked_box_contains_rejects(value: Any) -> None:
    assert Sequence(Box(0.0, 1.0, (2,)), stack=True).contains(value) is False


def test_stacked_box_contains_accepts() -> None:
    space = Sequence(Box(0.0, 1.0, (2,)), stack=True)
    assert space.contains(np.zeros((3, 2), dtype=np.float32))
    assert space.contains(np.zeros((0, 2), dtype=np.float32))


@pytest.mark.parametrize(
    "value",
    [
        {"x": np.zeros((2, 2), dtype=np.float32)},  # missing key
        {"x": np.zeros((2, 2), dtype=np.float32), "k": np.array([1, 1, 1])},  # ragged
        {"x": np.zeros((1, 2), dtype=np.float32), "k": np.array([0])},  # 0 is below start
        ({"x": np.zeros(2, dtype=np.float32), "k": np.int64(1)},),  # a tuple of items, not a stack
        np.zeros((2, 2)),
    ],
    ids=["missing_key", "ragged", "out_of_range", "tuple_of_items", "array"],
)
def test_stacked_dict_contains_rejects(value: Any) -> None:
    assert Sequence(dict_feature(), stack=True).contains(value) is False


def test_stacked_text_contains() -> None:
    space = Sequence(Text(3, charset="abc"), stack=True)
    assert space.contains(("a", "abc"))
    assert space.contains(())
    assert space.contains(["a", "abc"])  # a list of the items, as Gymnasium accepts
    assert not space.contains("abc")
    assert not space.contains(("a", "abcd"))


# --- JSON ---------------------------------------------------------------------------------------------------


def json_round_trip(space: Sequence, values: list[Any]) -> list[Any]:
    return space.from_jsonable(json.loads(json.dumps(space.to_jsonable(values))))


@pytest.mark.parametrize(
    "make_space",
    [
        lambda: Sequence(Discrete(3, start=2)),
        lambda: Sequence(Box(-1.0, 1.0, (2,))),
        lambda: Sequence(Tuple((Discrete(2), Text(2, charset="xy")))),
        lambda: Sequence(Sequence(Discrete(2))),
        *[(lambda make=make: Sequence(make(), stack=True)) for make, _ in STACKED_FEATURES.values()],
    ],
)
def test_json_round_trip(make_space: Any) -> None:
    space = make_space()
    space.seed(0)
    values = [space.sample(mask=(length, None)) for length in (0, 1, 3)] + [space.sample()]
    assert_same_value(json_round_trip(space, values), values)


def test_json_of_an_empty_batch() -> None:
    assert Sequence(Discrete(2)).to_jsonable([]) == []
    assert Sequence(Discrete(2), stack=True).from_jsonable([]) == []


# --- equality, repr, pickling -------------------------------------------------------------------------------


def test_eq() -> None:
    assert Sequence(Discrete(3)) == Sequence(Discrete(3))
    assert Sequence(Discrete(3)) != Sequence(Discrete(4))
    assert Sequence(Discrete(3)) != Sequence(Discrete(3), stack=True)
    assert Sequence(Discrete(3)) != Discrete(3)
    assert Sequence(Discrete(3)) != (Discrete(3),)


def test_repr() -> None:
    assert repr(Sequence(Discrete(2))) == "Sequence(Discrete(2), stack=False)"
    assert repr(Sequence(Box(0.0, 1.0, (2,)), stack=True)) == "Sequence(Box(0.0, 1.0, (2,), float32), stack=True)"


@pytest.mark.parametrize("stack", [False, True])
@pytest.mark.parametrize("clone", [pickle.loads, copy.deepcopy], ids=["pickle", "deepcopy"])
def test_pickle_and_deepcopy_keep_the_stream(stack: bool, clone: Any) -> None:
    space = Sequence(Box(0.0, 1.0, (2,)), stack=stack, seed=0)
    space.sample()
    copied = clone(pickle.dumps(space)) if clone is pickle.loads else clone(space)
    assert copied == space
    assert_same_value(copied.sample(), space.sample())
    flatten(space, space.sample(mask=(2, None)))  # fills the flatten cache, which must copy too
    copied = clone(pickle.dumps(space)) if clone is pickle.loads else clone(space)
    x = space.sample()
    assert_same_value(flatten(copied, x), flatten(space, x))


class _LambdaFlattened(Discrete):
    """A custom space whose flatten kernel is a lambda, which pickle cannot store."""


def test_pickle_after_flatten_leaves_the_cached_item_kernels_out() -> None:
    flatten.register(_LambdaFlattened, lambda space, x: np.array([x]))
    space = Sequence(_LambdaFlattened(3), seed=0)
    assert_same_value(flatten(space, (np.int64(2),)), (np.array([2]),))
    copied = pickle.loads(pickle.dumps(space))
    assert copied == space and "_item_kernels" not in copied.__dict__


def test_unpickle_state_without_stack() -> None:
    space = Sequence.__new__(Sequence)
    state = Sequence(Discrete(2)).__dict__.copy()
    del state["stack"]
    space.__setstate__(state)
    assert space.stack is False and space == Sequence(Discrete(2))


# --- flatten family -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", [False, True])
def test_flatdim_is_undefined(stack: bool) -> None:
    space = Sequence(Discrete(2), stack=stack)
    with pytest.raises(NotFlattenableError, match="flatdim is undefined for a Sequence"):
        flatdim(space)
    with pytest.raises(ValueError):
        flatdim(space)


@pytest.mark.parametrize("stack", [False, True])
def test_flatten_space(stack: bool) -> None:
    space = Sequence(Dict(a=Discrete(3), b=Box(0.0, 1.0, (2,))), stack=stack)
    assert flatten_space(space) == Sequence(flatten_space(space.feature_space), stack=stack)


def test_flatten_unstacked() -> None:
    space = Sequence(Discrete(3, start=1))
    flat = flatten(space, (np.int64(1), np.int64(3)))
    assert_same_value(flat, (np.array([1, 0, 0]), np.array([0, 0, 1])))
    assert flat in flatten_space(space)
    assert_same_value(unflatten(space, flat), (np.int64(1), np.int64(3)))
    assert flatten(space, ()) == () and unflatten(space, ()) == ()


@pytest.mark.parametrize("name", list(STACKED_FEATURES))
def test_flatten_stacked_round_trip(name: str) -> None:
    make_feature, _ = STACKED_FEATURES[name]
    space = Sequence(make_feature(), stack=True, seed=0)
    for length in (0, 1, 4):
        value = space.sample(mask=(length, None))
        flat = flatten(space, value)
        assert isinstance(flat, np.ndarray)
        assert flat.shape == (length, flatdim(space.feature_space))
        assert flat in flatten_space(space)
        assert_same_value(unflatten(space, flat), value)


def test_flatten_stacked_box_layout() -> None:
    space = Sequence(Box(0, 9, (2, 2), dtype=np.int16), stack=True)
    value = np.arange(12, dtype=np.int16).reshape(3, 2, 2) % 10
    assert_same_value(flatten(space, value), value.reshape(3, 4))


def test_flatten_nested_sequences() -> None:
    space = Sequence(Sequence(Discrete(2), stack=True), seed=0)
    value = tuple(space.feature_space.sample(mask=(n, None)) for n in (0, 2))
    flat = flatten(space, value)
    assert [item.shape for item in flat] == [(0, 2), (2, 2)]
    assert_same_value(unflatten(space, flat), value)


@pytest.mark.parametrize("operation", [flatten, unflatten])
@pytest.mark.parametrize("value", [None, np.array([1, 2]), 3, "ab"], ids=repr)
def test_flatten_unstacked_needs_a_tuple(operation: Any, value: Any) -> None:
    with pytest.raises(InvalidTypeError, match="needs a tuple of items"):
        operation(Sequence(Discrete(2)), value)


def test_flatten_unstacked_accepts_a_list_of_items() -> None:
    space = Sequence(Discrete(2))
    assert_same_value(flatten(space, [np.int64(1)]), (np.array([0, 1]),))
    assert_same_value(unflatten(space, [np.array([0, 1])]), (np.int64(1),))


def test_is_space_dtype_shape_equiv() -> None:
    space = Sequence(Box(0.0, 1.0, (2,)))
    assert is_space_dtype_shape_equiv(space, Sequence(Box(-5.0, 5.0, (2,))))
    assert not is_space_dtype_shape_equiv(space, Sequence(Box(0.0, 1.0, (2,)), stack=True))
    assert not is_space_dtype_shape_equiv(space, Sequence(Box(0.0, 1.0, (3,))))
    assert not is_space_dtype_shape_equiv(space, Sequence(Discrete(2)))
    assert not is_space_dtype_shape_equiv(space, Box(0.0, 1.0, (2,)))


# --- batching family ----------------------------------------------------------------------------------------


def test_batch_space_is_a_tuple_of_independent_copies() -> None:
    space = Sequence(Discrete(1000), seed=0)
    before = copy.deepcopy(space.np_random)
    batched = batch_space(space, 3)
    assert isinstance(batched, Tuple) and len(batched) == 3
    assert all(sub == space and sub is not space for sub in batched)
    assert same_rng_state(space.np_random, before)  # the original is not advanced
    samples = [sub.sample(mask=(5, None)) for sub in batched]
    assert len(set(samples)) == 3
    assert batched.sample() in batched


def test_batch_space_rejects_bad_sizes() -> None:
    with pytest.raises(InvalidValueError):
        batch_space(Sequence(Discrete(2)), -1)


def test_batch_differing_spaces() -> None:
    spaces = [Sequence(Discrete(2)), Sequence(Discrete(3), stack=True)]
    batched = batch_differing_spaces(spaces)
    assert isinstance(batched, Tuple)
    assert list(batched) == spaces
    assert all(a is not b for a, b in zip(batched, spaces, strict=True))


def test_concatenate_and_iterate() -> None:
    space = Sequence(Discrete(3), seed=0)
    items = [space.sample() for _ in range(3)]
    batch = concatenate(space, items, create_empty_array(space, 3))
    assert batch == tuple(items)
    assert list(iterate(batch_space(space, 3), batch)) == items


def test_iterate_of_a_sequence_itself_is_refused() -> None:
    with pytest.raises(CustomSpaceError, match="iterate needs a batched space"):
        iterate(Sequence(Discrete(2)), ((0,), (1,)))


def test_create_empty_array_unstacked() -> None:
    assert create_empty_array(Sequence(Discrete(2)), 3) == ((), (), ())
    assert create_empty_array(Sequence(Discrete(2)), 0) == ()


@pytest.mark.parametrize("name", list(STACKED_FEATURES))
@pytest.mark.parametrize("fn", [np.zeros, np.empty])
def test_create_empty_array_stacked_gives_empty_stacks(name: str, fn: Any) -> None:
    make_feature, empty = STACKED_FEATURES[name]
    space = Sequence(make_feature(), stack=True)
    batch = create_empty_array(space, 2, fn)
    assert isinstance(batch, tuple) and len(batch) == 2
    for value in batch:
        assert_same_value(value, empty)
        assert value in space


@pytest.mark.parametrize("n", [-1, 1.5, "2", True])
def test_create_empty_array_rejects_bad_sizes(n: Any) -> None:
    with pytest.raises(InvalidValueError, match="batch size is invalid"):
        create_empty_array(Sequence(Discrete(2)), n)


# --- stacking helpers ---------------------------------------------------------------------------------------


def test_stack_helpers_invert_each_other() -> None:
    feature = Tuple((Text(2, charset="ab"), dict_feature()))
    feature.seed(0)
    batched = batch_space(feature, 1)
    for length in (0, 1, 3):
        items = [feature.sample() for _ in range(length)]
        stacked = stack_items(feature, items)
        assert_same_value(unstack(feature, batched, stacked), items)
    assert_same_value(stack_items(feature, []), empty_stack(feature))


def test_unstack_takes_a_list_for_a_tuple_of_copies_but_not_a_string() -> None:
    assert unstack(Text(2), batch_space(Text(2), 1), ["a", "ab"]) == ["a", "ab"]
    with pytest.raises(InvalidTypeError, match="is not a tuple"):
        unstack(Text(2), batch_space(Text(2), 1), "ab")


def test_unstack_takes_the_items_of_an_array_stack_one_by_one() -> None:
    space = Discrete(3, dtype=np.int32)
    assert unstack(space, batch_space(space, 1), [1, np.int32(2)]) == [1, np.int32(2)]
    assert unstack(space, batch_space(space, 1), ()) == []


# --- differential tests against Gymnasium -------------------------------------------------------------------


def gym_pair(stack: bool) -> tuple[Sequence, Any]:
    gym_spaces = pytest.importorskip("gymnasium.spaces")
    if stack:
        return (
            Sequence(Box(0.0, 1.0, (2,)), stack=True, seed=0),
            gym_spaces.Sequence(gym_spaces.Box(0.0, 1.0, (2,)), stack=True),
        )
    return Sequence(Discrete(3, start=1), seed=0), gym_spaces.Sequence(gym_spaces.Discrete(3, start=1))


@pytest.mark.parametrize("stack", [False, True])
def test_flatten_agrees_with_gymnasium(stack: bool) -> None:
    gym_spaces = pytest.importorskip("gymnasium.spaces")
    space, gym_space = gym_pair(stack)
    assert repr(flatten_space(space)) == repr(gym_spaces.flatten_space(gym_space))
    for length in (1, 2, 5):
        value = space.sample(mask=(length, None))
        flat = flatten(space, value)
        assert_same_value(flat, gym_spaces.flatten(gym_space, value))
        assert_same_value(unflatten(space, flat), gym_spaces.unflatten(gym_space, flat))


@pytest.mark.parametrize("stack", [False, True])
def test_contains_agrees_with_gymnasium(stack: bool) -> None:
    space, gym_space = gym_pair(stack)
    if stack:
        candidates: list[Any] = [
            np.zeros((3, 2), dtype=np.float32),
            np.zeros((3, 3), dtype=np.float32),
            np.full((1, 2), 2.0, dtype=np.float32),
            np.zeros((0, 2), dtype=np.float32),
        ]
    else:
        candidates = [(), (np.int64(1),), (np.int64(0),), (np.int64(3), np.int64(2)), [np.int64(1)], (1.5,)]
    for _ in range(5):
        candidates.append(space.sample())
    for value in candidates:
        assert space.contains(value) == gym_space.contains(value), value


STACKED_LIST_CASES: dict[str, tuple[Any, list[Any]]] = {
    "discrete": (
        lambda spaces: spaces.Discrete(2),
        [[1, 0], (1, 0), (), [], [2], [-1], [1.0], [[1]], [True], ["a"], [None], (np.int64(1),), [np.int32(1)]],
    ),
    "discrete_int32_start": (
        lambda spaces: spaces.Discrete(3, start=-1, dtype=np.int32),
        [[-1, 1], (0,), [2], [np.int64(0)], [np.int32(0)], []],
    ),
    "box": (
        lambda spaces: spaces.Box(0.0, 1.0, (2,)),
        [[[0.5, 0.5]], ([0.0, 1.0], (1.0, 0.0)), [[0.5, 2.0]], [0.5, 0.5], [], (), [np.zeros(2, np.float32)]],
    ),
    "multibinary": (lambda spaces: spaces.MultiBinary(2), [[[0, 1], [1, 1]], [[0, 2]], [(1, 0)], []]),
    "multidiscrete": (lambda spaces: spaces.MultiDiscrete([2, 3]), [[[1, 2]], [[2, 0]], ([0, 0], [1, 1]), ()]),
    "text": (lambda spaces: spaces.Text(3, charset="abc"), [["a", "abc"], ("b",), ["abcd"], [1], []]),
    "tuple": (
        lambda spaces: spaces.Tuple((spaces.Discrete(2), spaces.Box(0.0, 1.0, (1,)))),
        [[[0, 1], [[0.5], [1.0]]], ([1], [[0.5]]), [[0, 2], [[0.5], [1.0]]], [[], []]],
    ),
}


@pytest.mark.filterwarnings("ignore:.*Casting input x to numpy array")
@pytest.mark.parametrize("case", list(STACKED_LIST_CASES))
def test_stacked_contains_of_lists_and_tuples_agrees_with_gymnasium(case: str) -> None:
    gym_spaces = pytest.importorskip("gymnasium.spaces")
    if case == "discrete_int32_start":
        skip_before_gymnasium((1, 2), "its Discrete takes no dtype (TypeError)")
    make_feature, candidates = STACKED_LIST_CASES[case]
    space = Sequence(make_feature(vecspaces.spaces), stack=True)
    gym_space = gym_spaces.Sequence(make_feature(gym_spaces), stack=True)
    for value in candidates:
        assert space.contains(value) == gym_space.contains(value), value


def test_stacked_contains_of_a_list_for_a_dict_feature_is_false() -> None:
    # Gymnasium raises TypeError here (it indexes the list with the Dict's keys); contains never raises.
    space = Sequence(dict_feature(), stack=True)
    assert space.contains([]) is False
    assert space.contains([{"x": np.zeros(2, dtype=np.float32), "k": np.int64(1)}]) is False


@pytest.mark.parametrize("stack", [False, True])
def test_json_agrees_with_gymnasium(stack: bool) -> None:
    space, gym_space = gym_pair(stack)
    values = [space.sample(mask=(length, None)) for length in (1, 3)]
    data = space.to_jsonable(values)
    assert data == gym_space.to_jsonable(values)
    assert_same_value(space.from_jsonable(data), gym_space.from_jsonable(data))


def test_repr_agrees_with_gymnasium() -> None:
    gym_spaces = pytest.importorskip("gymnasium.spaces")
    assert repr(Sequence(Discrete(2), stack=True)) == repr(gym_spaces.Sequence(gym_spaces.Discrete(2), stack=True))
