"""Tests of the Tuple space (vecspaces.spaces.tuple) and its use of the container kernels.

The kernels shared with Dict, and nested Dict-in-Tuple-in-Dict spaces, are also covered in test_dict.py.
"""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Sequence as SequenceABC
from typing import Any

import numpy as np
import pytest

from tests.helpers import Opaque, assert_same_value, same_rng_state
from vecspaces.error import CustomSpaceError, InvalidTypeError, InvalidValueError, NotFlattenableError
from vecspaces.spaces import (
    Box,
    Dict,
    Discrete,
    Graph,
    MultiBinary,
    MultiDiscrete,
    OneOf,
    Sequence,
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


def int8(*bits: int) -> np.ndarray:
    return np.array(bits, dtype=np.int8)


def mixed() -> Tuple:
    return Tuple((Discrete(3, start=2), Box(-1.0, 1.0, (2,)), Dict(a=MultiBinary(2), b=Discrete(2))))


# --- construction and the Sequence protocol ------------------------------------------------------------------


@pytest.mark.parametrize(
    "spaces", [[Discrete(2), Discrete(3)], (Discrete(2), Discrete(3)), iter([Discrete(2), Discrete(3)])]
)
def test_accepts_any_iterable_of_spaces(spaces: Any) -> None:
    space = Tuple(spaces)
    assert space.spaces == (Discrete(2), Discrete(3)) and type(space.spaces) is tuple
    assert space.shape is None and space.dtype is None


def test_copy_of_a_tuple_space() -> None:
    inner = Tuple((Discrete(2), Discrete(3)))
    assert Tuple(inner) == inner


def test_non_iterable_is_rejected() -> None:
    with pytest.raises(InvalidTypeError, match="not iterable") as info:
        Tuple(5)  # type: ignore[arg-type]
    assert isinstance(info.value, TypeError)


@pytest.mark.parametrize("spaces", ["abc", [Discrete(2), 3], [None]])
def test_non_space_items_are_rejected_with_their_index(spaces: Any) -> None:
    with pytest.raises(InvalidTypeError, match=r"not a space.*at spaces\[\d\]"):
        Tuple(spaces)


def test_sequence_protocol() -> None:
    a, b, c = Discrete(2), Box(0.0, 1.0, (2,)), Discrete(2)
    space = Tuple((a, b, c))
    assert isinstance(space, SequenceABC)
    assert space[0] is a and space[-1] is c
    assert space[1:] == (b, c) and type(space[1:]) is tuple
    assert len(space) == 3 and list(space) == [a, b, c] and list(reversed(space)) == [c, b, a]
    assert space.count(Discrete(2)) == 2 and space.index(b) == 1
    with pytest.raises(IndexError):
        space[3]


def test_in_tests_membership_of_values() -> None:
    space = Tuple((Discrete(2),))
    assert (np.int64(1),) in space
    assert Discrete(2) not in space  # as Gymnasium: `in` is Space.contains, not a search of the children


# --- seeding -------------------------------------------------------------------------------------------------


def test_int_seed_gives_identical_children_different_streams() -> None:
    space = Tuple([Discrete(1000) for _ in range(3)])
    space.seed(0)
    columns = list(zip(*[space.sample() for _ in range(20)], strict=True))
    assert columns[0] != columns[1] and columns[1] != columns[2] and columns[0] != columns[2]


@pytest.mark.parametrize("seed", [None, 3])
def test_returned_seeds_reproduce_samples(seed: Any) -> None:
    space = mixed()
    returned = space.seed(seed)
    assert isinstance(returned, tuple) and isinstance(returned[2], dict)
    first = [space.sample() for _ in range(5)]
    assert space.seed(returned) == returned
    assert_same_value([space.sample() for _ in range(5)], first)


def test_int_seed_is_reproducible_across_instances() -> None:
    a, b = mixed(), mixed()
    assert a.seed(11) == b.seed(11)
    assert_same_value([a.sample() for _ in range(5)], [b.sample() for _ in range(5)])
    assert a.seed(11) != a.seed(12)


@pytest.mark.parametrize("seed", [[1, 2, {"a": 3, "b": 4}], (1, 2, {"a": 3, "b": 4})])
def test_structured_seed(seed: Any) -> None:
    space = mixed()
    assert space.seed(seed) == (1, 2, {"a": 3, "b": 4})
    reference = Box(-1.0, 1.0, (2,), seed=2)
    assert_same_value(space[1].sample(), reference.sample())


@pytest.mark.parametrize(
    ("seed", "error", "match"),
    [
        (
            (1,),
            InvalidValueError,
            r"^seed: wrong length for a Tuple, expected a tuple or list of 3 entries, got 1 entry",
        ),
        ([1, 2, 3, 4], InvalidValueError, r"^seed: wrong length"),
        ({"a": 1}, InvalidTypeError, "Tuple seed has the wrong type"),
        ("ab", InvalidTypeError, "Tuple seed has the wrong type"),
        (2.0, InvalidTypeError, "Tuple seed has the wrong type"),
        (np.array([1, 2, 3]), InvalidTypeError, "Tuple seed has the wrong type"),
        (-3, InvalidValueError, "must not be negative"),
        ((1, 2, {"a": 3}), InvalidValueError, r"^seed\[2\]: missing key 'b'"),
        ((1, "x", None), InvalidTypeError, r"^seed\[1\]: "),
    ],
)
def test_bad_seeds_are_rejected(seed: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        mixed().seed(seed)


def test_generator_seed_is_stored_by_identity() -> None:
    rng = np.random.default_rng(1)
    space = Tuple((Discrete(2), Discrete(3)), seed=rng)
    assert space.np_random is rng


# --- sampling ------------------------------------------------------------------------------------------------


def test_sample_is_a_contained_tuple() -> None:
    space = mixed()
    space.seed(0)
    for _ in range(10):
        x = space.sample()
        assert type(x) is tuple and len(x) == 3 and x in space


@pytest.mark.parametrize("container", [tuple, list])
def test_mask_per_child(container: type) -> None:
    space = Tuple((Discrete(3), Discrete(3)), seed=0)
    for _ in range(20):
        x = space.sample(mask=container([int8(0, 1, 0), None]))
        assert x[0] == 1


def test_probability_per_child() -> None:
    space = Tuple((Discrete(3), MultiBinary(2)), seed=0)
    for _ in range(20):
        x = space.sample(probability=(np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0])))
        assert x[0] == 2 and x[1].tolist() == [1, 0]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"mask": (None,), "probability": (None,)}, InvalidValueError, "both a mask and a probability"),
        ({"mask": int8(1, 0)}, InvalidTypeError, r"^mask: wrong type for a Tuple"),
        ({"mask": (None,)}, InvalidValueError, r"^mask: wrong length for a Tuple"),
        ({"mask": (int8(1, 0, 0), None)}, InvalidValueError, r"^mask\[0\]: .*wrong shape"),
        ({"probability": (None, np.array([0.2, 0.2, 0.2]))}, InvalidValueError, r"^probability\[1\]: .*sum to 1"),
        ({"mask": {"a": None}}, InvalidTypeError, r"^mask: wrong type for a Tuple"),
    ],
)
def test_invalid_masks_name_their_path(kwargs: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        Tuple((Discrete(2), Discrete(3))).sample(**kwargs)


def test_nested_mask_error_names_the_full_path() -> None:
    with pytest.raises(InvalidValueError, match=r"^mask\[2\]\['b'\]: .*out of range"):
        mixed().sample(mask=(None, None, {"a": None, "b": int8(0, 5)}))


# --- contains ------------------------------------------------------------------------------------------------


def test_contains_accepts_tuples_lists_and_arrays() -> None:
    space = Tuple((Discrete(3), Discrete(3)))
    assert space.contains((np.int64(0), np.int64(2)))
    assert space.contains([np.int64(0), np.int64(2)])
    assert space.contains(np.array([0, 2]))
    assert not space.contains((np.int64(0),))
    assert not space.contains((np.int64(0), np.int64(3)))
    assert not space.contains((np.int64(0), np.int64(1), np.int64(2)))


@pytest.mark.parametrize("odd", [None, 1, "ab", {"a": 1}, np.array(3), np.zeros((2, 2)), (None, None), object()])
def test_contains_never_raises(odd: Any) -> None:
    assert mixed().contains(odd) is False


# --- JSON, pickle, copy, equality, repr ----------------------------------------------------------------------


def test_jsonable_round_trip_is_column_wise() -> None:
    space = mixed()
    space.seed(0)
    xs = [space.sample() for _ in range(3)]
    data = space.to_jsonable(xs)
    assert type(data) is list and len(data) == 3 and data[0] == [int(x[0]) for x in xs]
    assert_same_value(space.from_jsonable(json.loads(json.dumps(data))), xs)


def test_jsonable_errors() -> None:
    space = Tuple((Discrete(2), Discrete(2)))
    assert space.to_jsonable([]) == [[], []] and space.from_jsonable([[], []]) == []
    with pytest.raises(InvalidValueError, match=r"^sample_n\[0\]: wrong length"):
        space.to_jsonable([(np.int64(0),)])
    with pytest.raises(InvalidValueError, match=r"^sample_n: wrong length"):
        space.from_jsonable([[0]])


@pytest.mark.parametrize("clone", [copy.deepcopy, lambda s: pickle.loads(pickle.dumps(s))], ids=["deepcopy", "pickle"])
def test_copies_are_equal_and_continue_the_same_streams(clone: Any) -> None:
    space = mixed()
    space.seed(8)
    space.sample()
    flatdim(space)
    twin = clone(space)
    assert twin == space and "_flat_layout" not in twin.__dict__
    assert same_rng_state(twin.np_random, space.np_random)
    assert_same_value([twin.sample() for _ in range(3)], [space.sample() for _ in range(3)])


def test_equality_is_order_sensitive() -> None:
    assert Tuple((Discrete(2), Discrete(3))) == Tuple([Discrete(2), Discrete(3)])
    assert Tuple((Discrete(2), Discrete(3))) != Tuple((Discrete(3), Discrete(2)))
    assert Tuple((Discrete(2),)) != Tuple((Discrete(2), Discrete(2)))
    assert Tuple((Discrete(2),)) != (Discrete(2),)


def test_repr() -> None:
    assert repr(Tuple((Discrete(2), Box(0.0, 1.0, (2,))))) == "Tuple(Discrete(2), Box(0.0, 1.0, (2,), float32))"
    assert repr(Tuple(())) == "Tuple()"


# --- flatten family ------------------------------------------------------------------------------------------


def test_flatten_space_and_round_trip() -> None:
    space = mixed()
    space.seed(3)
    flat_space = flatten_space(space)
    assert flat_space.dtype == np.float64 and flatdim(space) == 3 + 2 + 2 + 2 == flat_space.shape[0]
    assert flat_space.low.tolist() == [0, 0, 0, -1, -1, 0, 0, 0, 0]
    for _ in range(10):
        x = space.sample()
        flat = flatten(space, x)
        assert flat in flat_space and flat.dtype == np.float64
        assert_same_value(unflatten(space, flat), x)


def test_flatten_accepts_a_list_value() -> None:
    space = Tuple((Discrete(2), Discrete(3)))
    assert flatten(space, [np.int64(1), np.int64(0)]).tolist() == [0, 1, 1, 0, 0]


def test_flatten_errors() -> None:
    space = Tuple((Discrete(2), Discrete(3)))
    with pytest.raises(InvalidValueError, match=r"^x: wrong length for a Tuple"):
        flatten(space, (np.int64(0),))
    with pytest.raises(InvalidTypeError, match=r"^x: wrong type for a Tuple"):
        flatten(space, np.int64(0))
    with pytest.raises(InvalidValueError, match=r"^x\[1\]: "):
        flatten(space, (np.int64(0), np.int64(7)))


def test_variable_children_keep_the_tuple_structure() -> None:
    space = Tuple((Discrete(2), Sequence(Discrete(3)), Graph(Discrete(2), None)))
    space.seed(0)
    flat_space = flatten_space(space)
    assert isinstance(flat_space, Tuple) and len(flat_space) == 3
    x = space.sample()
    flat = flatten(space, x)
    assert type(flat) is tuple and flat in flat_space
    assert_same_value(unflatten(space, flat), x)
    with pytest.raises(NotFlattenableError, match=r"at space\[1\]"):
        flatdim(space)
    with pytest.raises(InvalidValueError, match=r"^x: wrong length for a Tuple"):
        unflatten(space, flat[:2])


def test_oneof_and_text_children_flatten() -> None:
    space = Tuple((OneOf((Discrete(2), Box(0.0, 1.0, (2,)))), Text(3, charset="xyz")))
    space.seed(0)
    for _ in range(5):
        x = space.sample()
        flat = flatten(space, x)
        assert flat in flatten_space(space)
        assert_same_value(unflatten(space, flat), x)


def test_reassigned_spaces_rebuild_the_layout() -> None:
    space = Tuple((Discrete(2),))
    assert flatdim(space) == 2
    space.spaces = (Discrete(2), Discrete(5))
    assert flatdim(space) == 7


def test_custom_child_without_kernels_raises_custom_space_error() -> None:
    with pytest.raises(CustomSpaceError, match=r"^space\[1\]: flatdim"):
        flatten(Tuple((Discrete(2), Opaque())), (np.int64(0), {"opaque": 1}))


def test_is_space_dtype_shape_equiv_compares_lengths() -> None:
    short, long = Tuple((Discrete(2),)), Tuple((Discrete(2), Discrete(3)))
    # Gymnasium says True for (short, long) and raises IndexError for (long, short).
    assert not is_space_dtype_shape_equiv(short, long)
    assert not is_space_dtype_shape_equiv(long, short)
    assert is_space_dtype_shape_equiv(long, Tuple((Discrete(7), Discrete(1))))
    assert not is_space_dtype_shape_equiv(long, Tuple((Discrete(2), Discrete(3, dtype=np.int32))))
    assert not is_space_dtype_shape_equiv(long, Dict(a=Discrete(2), b=Discrete(3)))
    assert is_space_dtype_shape_equiv(mixed(), mixed())


# --- batching family -----------------------------------------------------------------------------------------


def test_batch_space_batches_each_child() -> None:
    space = mixed()
    space.seed(1)
    batched = batch_space(space, 3)
    assert isinstance(batched, Tuple) and len(batched) == 3
    assert batched[0] == MultiDiscrete([3, 3, 3], start=[2, 2, 2])
    assert batched[1] == Box(-1.0, 1.0, (3, 2))
    assert isinstance(batched[2], Dict) and batched[2]["a"] == Box(0, 1, (3, 2), np.int8)
    assert batched.np_random is not space.np_random and same_rng_state(batched.np_random, space.np_random)


def test_batch_differing_spaces() -> None:
    batched = batch_differing_spaces(
        [Tuple((Discrete(2), Box(0.0, 1.0, ()))), Tuple((Discrete(4), Box(-1.0, 0.0, ())))]
    )
    assert batched[0] == MultiDiscrete([2, 4]) and batched[1].low.tolist() == [0.0, -1.0]


def test_batch_differing_spaces_rejects_different_lengths() -> None:
    with pytest.raises(InvalidValueError, match=r"^spaces\[1\]: wrong length for a Tuple"):
        batch_differing_spaces([Tuple((Discrete(2), Discrete(2))), Tuple((Discrete(2),))])


def test_batch_differing_spaces_names_the_child_that_differs() -> None:
    with pytest.raises(InvalidValueError, match=r"^space\[0\]: "):
        batch_differing_spaces([Tuple((Box(0.0, 1.0, (2,)),)), Tuple((Box(0.0, 1.0, (2,), np.float64),))])


def test_concatenate_create_empty_array_iterate() -> None:
    space = mixed()
    space.seed(6)
    xs = [space.sample() for _ in range(4)]
    out = create_empty_array(space, 4)
    assert type(out) is tuple and out[1].shape == (4, 2) and isinstance(out[2], dict)
    batched = concatenate(space, xs, out)
    assert type(batched) is tuple and batched[1] is out[1]
    assert batched in batch_space(space, 4)
    rows = list(iterate(batch_space(space, 4), batched))
    assert all(type(row) is tuple for row in rows)
    assert_same_value(rows, xs)


def test_concatenate_errors() -> None:
    space = Tuple((Discrete(2), Box(0.0, 1.0, (2,))))
    good = space.sample()
    with pytest.raises(InvalidValueError, match=r"^items\[1\]: wrong length for a Tuple"):
        concatenate(space, [good, good[:1]], create_empty_array(space, 2))
    with pytest.raises(InvalidTypeError, match=r"^out: wrong type for a Tuple"):
        concatenate(space, [good, good], None)


@pytest.mark.parametrize(
    "child",
    [
        lambda: Text(4, charset="ab"),
        lambda: Sequence(Discrete(3)),
        lambda: Graph(Box(0.0, 1.0, (2,)), None),
        lambda: OneOf((Discrete(2), Box(0.0, 1.0, (1,)))),
        lambda: Opaque(),
    ],
    ids=["text", "sequence", "graph", "oneof", "custom"],
)
def test_iterate_a_batch_of_copies_yields_the_values(child: Any) -> None:
    space = child()
    space.seed(0)
    batched = batch_space(space, 3)
    assert isinstance(batched, Tuple) and len(batched) == 3
    xs = [space.sample() for _ in range(3)]
    values = concatenate(space, xs, create_empty_array(space, 3))
    assert_same_value(list(iterate(batched, values)), xs)


def test_iterate_a_tuple_holding_batches_of_copies() -> None:
    space = Tuple((Text(3, charset="ab"), Discrete(4)))
    space.seed(0)
    xs = [space.sample() for _ in range(3)]
    batched = concatenate(space, xs, create_empty_array(space, 3))
    assert_same_value(list(iterate(batch_space(space, 3), batched)), xs)


def test_iterate_a_tuple_with_box_subclass_children_goes_child_wise() -> None:
    class MyBox(Box):
        pass

    space = Tuple((MyBox(0.0, 1.0, (2,)), Discrete(3)))
    space.seed(0)
    xs = [space.sample() for _ in range(2)]
    batched = concatenate(space, xs, create_empty_array(space, 2))
    assert_same_value(list(iterate(batch_space(space, 2), batched)), xs)


def test_iterate_errors() -> None:
    batched_space = batch_space(Tuple((Discrete(2), Box(0.0, 1.0, (2,)))), 3)
    with pytest.raises(InvalidValueError, match=r"^items: wrong length for a Tuple"):
        iterate(batched_space, (np.zeros(3, np.int64),))
    with pytest.raises(InvalidValueError, match="different batch sizes"):
        list(iterate(batched_space, (np.zeros(3, np.int64), np.zeros((4, 2), np.float32))))
    with pytest.raises(InvalidTypeError, match=r"^space\[0\]: "):
        iterate(Tuple((Discrete(2), Discrete(2))), (np.int64(0), np.int64(1)))  # not a batched space


# --- against Gymnasium ---------------------------------------------------------------------------------------


def gym_pair() -> tuple[Tuple, Any]:
    gym = pytest.importorskip("gymnasium.spaces")
    ours = Tuple((Discrete(3, start=2), Box(-1.0, 1.0, (2,)), Tuple((Discrete(2), Box(0, 4, (2,), np.int16)))))
    theirs = gym.Tuple(
        (
            gym.Discrete(3, start=2),
            gym.Box(-1.0, 1.0, (2,)),
            gym.Tuple((gym.Discrete(2), gym.Box(0, 4, (2,), np.int16))),
        )
    )
    ours.seed(0)
    theirs.seed(0)
    return ours, theirs


def test_gymnasium_flatten_family() -> None:
    gym = pytest.importorskip("gymnasium.spaces")
    ours, theirs = gym_pair()
    assert flatdim(ours) == gym.flatdim(theirs)
    a, b = flatten_space(ours), gym.flatten_space(theirs)
    assert (a.dtype, a.shape) == (b.dtype, b.shape)
    assert np.array_equal(a.low, b.low) and np.array_equal(a.high, b.high)
    for _ in range(5):
        for x in (ours.sample(), theirs.sample()):
            assert ours.contains(x) and theirs.contains(x)
            assert ours.contains(list(x)) == theirs.contains(list(x)) is True
            flat = flatten(ours, x)
            assert_same_value(flat, gym.flatten(theirs, x))
            assert_same_value(unflatten(ours, flat), gym.unflatten(theirs, flat))
    bad = (np.int64(0), *ours.sample()[1:])
    assert ours.contains(bad) == theirs.contains(bad) is False


@pytest.mark.parametrize("n", [1, 3])
def test_gymnasium_batching(n: int) -> None:
    utils = pytest.importorskip("gymnasium.vector.utils")
    ours, theirs = gym_pair()
    batched, gym_batched = batch_space(ours, n), utils.batch_space(theirs, n)
    assert repr(batched) == repr(gym_batched)
    xs = [ours.sample() for _ in range(n)]
    mine = concatenate(ours, xs, create_empty_array(ours, n))
    assert_same_value(mine, utils.concatenate(theirs, xs, utils.create_empty_array(theirs, n)))
    assert_same_value(list(iterate(batched, mine)), list(utils.iterate(gym_batched, mine)))
    assert repr(batch_differing_spaces([ours] * n)) == repr(utils.batch_differing_spaces([theirs] * n))
