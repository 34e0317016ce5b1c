"""Tests of the Dict space and the container kernels (vecspaces.spaces.dict, vecspaces._kernels.container).

Kernels shared with Tuple are tested here on Dicts and on nested Dict-in-Tuple-in-Dict spaces; Tuple-only
behaviour is in test_tuple.py.
"""

from __future__ import annotations

import copy
import json
import pickle
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from tests.helpers import assert_same_value, same_rng_state
from vecspaces.error import InvalidTypeError, InvalidValueError, NotFlattenableError
from vecspaces.spaces import (
    Box,
    Dict,
    Discrete,
    MultiBinary,
    MultiDiscrete,
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


def int8(*bits: int) -> np.ndarray:
    return np.array(bits, dtype=np.int8)


def nested() -> Dict:
    """A Dict holding a Tuple holding a Dict, with mixed flat dtypes."""
    return Dict(
        pos=Box(-1.0, 1.0, (2,)),
        pair=Tuple((Discrete(3, start=-1), Dict(flag=MultiBinary(2), mode=Discrete(2)))),
    )


# --- construction and key order ------------------------------------------------------------------------------


def test_plain_mapping_is_sorted_by_key() -> None:
    space = Dict({"b": Discrete(2), "a": Discrete(3), "c": Discrete(4)})
    assert list(space) == ["a", "b", "c"]
    assert type(space.spaces) is dict
    assert space.shape is None and space.dtype is None


def test_sort_keys_false_keeps_insertion_order() -> None:
    assert list(Dict({"b": Discrete(2), "a": Discrete(3)}, sort_keys=False)) == ["b", "a"]


def test_incomparable_keys_keep_insertion_order() -> None:
    assert list(Dict({"b": Discrete(2), 1: Discrete(3), "a": Discrete(4)})) == ["b", 1, "a"]


def test_ordered_dict_keeps_its_order() -> None:
    assert list(Dict(OrderedDict([("z", Discrete(2)), ("a", Discrete(3))]))) == ["z", "a"]


def test_dict_space_input_keeps_its_order() -> None:
    inner = Dict(OrderedDict([("z", Discrete(2)), ("a", Discrete(3))]))
    assert list(Dict(inner)) == ["z", "a"]


@pytest.mark.parametrize("pairs", [[("z", Discrete(2)), ("a", Discrete(3))], (["z", Discrete(2)], ["a", Discrete(3)])])
def test_sequence_of_pairs_keeps_its_order(pairs: Any) -> None:
    assert list(Dict(pairs)) == ["z", "a"]


def test_kwargs_keep_their_order_and_are_appended() -> None:
    assert list(Dict(b=Discrete(2), a=Discrete(3))) == ["b", "a"]
    assert list(Dict({"m": Discrete(2), "c": Discrete(2)}, z=Discrete(2), b=Discrete(2))) == ["c", "m", "z", "b"]


def test_none_and_empty() -> None:
    assert len(Dict()) == 0
    assert Dict(None).spaces == {}
    assert Dict().sample() == {}


def test_duplicate_kwarg_is_rejected() -> None:
    with pytest.raises(InvalidValueError, match="'a' is given twice"):
        Dict({"a": Discrete(2)}, a=Discrete(3))


def test_duplicate_pair_key_is_rejected() -> None:
    with pytest.raises(InvalidValueError, match=r"'a' is given twice.*spaces\[1\]"):
        Dict([("a", Discrete(2)), ("a", Discrete(3))])


@pytest.mark.parametrize("spaces", [5, "ab", {"a", "b"}, Discrete(2), 1.5])
def test_bad_input_type_is_rejected(spaces: Any) -> None:
    with pytest.raises(InvalidTypeError, match="Dict spaces has the wrong type"):
        Dict(spaces)


@pytest.mark.parametrize("pairs", [["a"], [("a", Discrete(2), 3)], [Discrete(2)]])
def test_malformed_pairs_are_rejected(pairs: Any) -> None:
    with pytest.raises(InvalidTypeError, match=r"not a \(key, space\) pair.*spaces\[0\]"):
        Dict(pairs)


@pytest.mark.parametrize(
    "make", [lambda: Dict(a=Discrete(2), b=3), lambda: Dict({"a": "x"}), lambda: Dict([("a", None)])]
)
def test_non_space_child_is_rejected(make: Any) -> None:
    with pytest.raises(InvalidTypeError, match="is not a space") as info:
        make()
    assert isinstance(info.value, TypeError)


# --- Mapping protocol ----------------------------------------------------------------------------------------


def test_mapping_protocol() -> None:
    a, b = Discrete(2), Box(0.0, 1.0, (2,))
    space = Dict(b=b, a=a)
    assert isinstance(space, Mapping)
    assert space["a"] is a and space.get("b") is b and space.get("zz") is None
    assert list(space.keys()) == ["b", "a"]
    assert list(space.values()) == [b, a]
    assert list(space.items()) == [("b", b), ("a", a)]
    assert list(iter(space)) == ["b", "a"] and len(space) == 2
    with pytest.raises(KeyError):
        space["zz"]


def test_in_tests_membership_of_values_not_keys() -> None:
    space = Dict(a=Discrete(2))
    assert "a" not in space  # as Gymnasium: `in` is Space.contains
    assert {"a": np.int64(1)} in space


def test_setitem_adds_and_replaces_children() -> None:
    space = Dict(a=Discrete(2))
    space["b"] = Discrete(3)
    space["a"] = Discrete(5)
    assert list(space) == ["a", "b"] and space["a"] == Discrete(5)


def test_setitem_requires_a_space() -> None:
    space = Dict(a=Discrete(2))
    with pytest.raises(InvalidTypeError, match="'b' is not a space") as info:
        space["b"] = 3  # type: ignore[assignment]
    assert isinstance(info.value, TypeError)
    assert list(space) == ["a"]


def test_is_not_hashable_like_gymnasium() -> None:
    with pytest.raises(TypeError):
        hash(Dict(a=Discrete(2)))


# --- seeding -------------------------------------------------------------------------------------------------


def test_int_seed_gives_identical_children_different_streams() -> None:
    space = Dict(a=Discrete(1000), b=Discrete(1000), c=Discrete(1000))
    space.seed(0)
    draws = [space.sample() for _ in range(20)]
    columns = [[int(d[key]) for d in draws] for key in "abc"]
    assert columns[0] != columns[1] and columns[1] != columns[2] and columns[0] != columns[2]


def test_int_seed_is_reproducible_and_returns_child_seeds() -> None:
    space, twin = nested(), nested()
    returned = space.seed(42)
    assert twin.seed(42) == returned
    assert list(returned) == ["pos", "pair"] and isinstance(returned["pair"], tuple)
    assert isinstance(returned["pair"][1], dict)
    assert_same_value([space.sample() for _ in range(5)], [twin.sample() for _ in range(5)])


@pytest.mark.parametrize("seed", [None, 3, np.int64(3)])
def test_returned_seeds_reproduce_samples(seed: Any) -> None:
    space = nested()
    returned = space.seed(seed)
    first = [space.sample() for _ in range(5)]
    assert space.seed(returned) == returned
    assert_same_value([space.sample() for _ in range(5)], first)


def test_int_seed_seeds_own_generator() -> None:
    space = Dict(a=Discrete(2))
    space.seed(5)
    other = Dict(a=Discrete(2))
    other.seed(5)
    assert same_rng_state(space.np_random, other.np_random)


def test_structured_seed_seeds_each_child() -> None:
    space = nested()
    returned = space.seed({"pair": (1, {"mode": 2, "flag": 3}), "pos": 4})
    assert returned == {"pos": 4, "pair": (1, {"flag": 3, "mode": 2})}
    assert list(returned) == ["pos", "pair"]  # the space's key order, not the seed's
    reference = Discrete(2, seed=2)
    assert [space["pair"][1]["mode"].sample() for _ in range(10)] == [reference.sample() for _ in range(10)]


def test_none_seed_reseeds_children_and_returns_their_entropy() -> None:
    space = Dict(a=Discrete(100), b=Discrete(100))
    returned = space.seed(None)
    assert set(returned) == {"a", "b"} and all(isinstance(v, int) for v in returned.values())
    assert returned["a"] != returned["b"]


def test_constructor_seed_equals_seed_call() -> None:
    a, b = nested(), Dict(list(nested().items()), seed=7)
    a.seed(7)
    assert_same_value(a.sample(), b.sample())


@pytest.mark.parametrize(
    ("seed", "error", "match"),
    [
        ({"a": 1}, InvalidValueError, r"seed: missing key 'b'"),
        ({"a": 1, "b": 2, "c": 3}, InvalidValueError, r"seed: unexpected key 'c'"),
        ("abc", InvalidTypeError, "Dict seed has the wrong type"),
        (1.5, InvalidTypeError, "Dict seed has the wrong type"),
        ([1, 2], InvalidTypeError, "Dict seed has the wrong type"),
        (True, InvalidTypeError, "seed has the wrong type"),
        (-1, InvalidValueError, "must not be negative"),
        ({"a": "x", "b": 1}, InvalidTypeError, r"seed\['a'\]: seed has the wrong type"),
    ],
)
def test_bad_seeds_are_rejected(seed: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        Dict(a=Discrete(2), b=Discrete(2)).seed(seed)


def test_nested_bad_seed_names_its_path() -> None:
    with pytest.raises(InvalidValueError, match=r"seed\['pair'\]\[1\]: missing key 'mode'"):
        nested().seed({"pos": 1, "pair": (2, {"flag": 3})})
    with pytest.raises(InvalidValueError, match=r"seed\['pair'\]: wrong length for a Tuple"):
        nested().seed({"pos": 1, "pair": (2,)})


def test_generator_seed_is_stored_by_identity() -> None:
    rng = np.random.default_rng(0)
    assert Dict(a=Discrete(2), seed=rng).np_random is rng


def test_own_generator_creation_does_not_reseed_children() -> None:
    child = Discrete(1000, seed=1)
    space = Dict(a=child)
    state = copy.deepcopy(child.np_random.bit_generator.state)
    space.np_random  # noqa: B018  (Gymnasium reseeds the children here)
    batch_space(space, 2)
    assert child.np_random.bit_generator.state == state


# --- sampling ------------------------------------------------------------------------------------------------


def test_sample_follows_space_key_order_and_is_contained() -> None:
    space = Dict({"b": Discrete(2), "a": Box(0.0, 1.0, (2,))}, seed=0)
    for _ in range(10):
        x = space.sample()
        assert list(x) == ["a", "b"] and x in space


def test_mask_restricts_children() -> None:
    space = Dict(a=Discrete(3), b=Discrete(3), seed=0)
    for _ in range(20):
        x = space.sample(mask={"a": int8(0, 0, 1), "b": None})
        assert x["a"] == 2 and x in space


def test_probability_restricts_children() -> None:
    space = Dict(a=Discrete(3), b=Discrete(3), seed=0)
    for _ in range(20):
        x = space.sample(probability={"a": np.array([0.0, 1.0, 0.0]), "b": None})
        assert x["a"] == 1


def test_nested_mask() -> None:
    space = nested()
    space.seed(0)
    mask = {"pos": None, "pair": (int8(1, 0, 0), {"flag": int8(1, 0), "mode": int8(0, 1)})}
    for _ in range(10):
        x = space.sample(mask=mask)
        assert x["pair"][0] == -1 and x["pair"][1]["flag"].tolist() == [1, 0] and x["pair"][1]["mode"] == 1


def test_mask_and_probability_together_are_rejected() -> None:
    with pytest.raises(InvalidValueError, match="both a mask and a probability"):
        Dict(a=Discrete(2)).sample(mask={"a": None}, probability={"a": None})


@pytest.mark.parametrize(
    ("mask", "error", "match"),
    [
        ((None, None), InvalidTypeError, r"mask: wrong type for a Dict"),
        ({"a": None}, InvalidValueError, r"mask: missing key 'b'"),
        ({"a": None, "b": None, "c": None}, InvalidValueError, r"mask: unexpected key 'c'"),
        ({"a": int8(1, 1, 1), "b": None}, InvalidValueError, r"mask\['a'\]: .*wrong shape"),
        ({"a": None, "b": int8(3, 0)}, InvalidValueError, r"mask\['b'\]: .*out of range"),
    ],
)
def test_invalid_masks_name_their_path(mask: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        Dict(a=Discrete(2), b=Discrete(2)).sample(mask=mask)


def test_invalid_nested_probability_names_its_path() -> None:
    probability = {"pos": None, "pair": (None, {"flag": None, "mode": np.array([0.5, 0.6])})}
    with pytest.raises(InvalidValueError, match=r"probability\['pair'\]\[1\]\['mode'\]: .*sum to 1"):
        nested().sample(probability=probability)
    with pytest.raises(InvalidValueError, match=r"probability\['pair'\]\[1\]: missing key 'mode'"):
        nested().sample(probability={"pos": None, "pair": (None, {"flag": None})})


# --- contains ------------------------------------------------------------------------------------------------


def test_contains() -> None:
    space = Dict(a=Discrete(3), b=Box(0.0, 1.0, (2,)))
    good = {"a": np.int64(1), "b": np.zeros(2, np.float32)}
    assert space.contains(good)
    assert space.contains({"b": good["b"], "a": good["a"]})  # key order of the value does not matter
    assert space.contains(OrderedDict(good))
    assert not space.contains({"a": np.int64(1)})
    assert not space.contains({**good, "c": 1})
    assert not space.contains({"a": np.int64(5), "b": good["b"]})
    assert not space.contains({"a": np.int64(1), "c": good["b"]})


@pytest.mark.parametrize("odd", [None, 1, "ab", [1, 2], (1, 2), np.zeros(2), {"a": None, "b": None}, {1: 2, 3: 4}])
def test_contains_never_raises(odd: Any) -> None:
    assert Dict(a=Discrete(3), b=Box(0.0, 1.0, (2,))).contains(odd) is False


def test_contains_survives_a_child_that_raises() -> None:
    class Fussy(Space[Any]):
        def contains(self, x: Any) -> bool:
            raise RuntimeError("boom")

    assert Dict(a=Fussy()).contains({"a": 1}) is False


# --- JSON, pickle, copy, equality, repr ----------------------------------------------------------------------


def test_jsonable_round_trip_is_column_wise() -> None:
    space = nested()
    space.seed(0)
    xs = [space.sample() for _ in range(3)]
    data = space.to_jsonable(xs)
    assert list(data) == ["pos", "pair"] and len(data["pos"]) == 3
    assert_same_value(space.from_jsonable(json.loads(json.dumps(data))), xs)


def test_jsonable_of_empty_batch_and_empty_dict() -> None:
    assert Dict(a=Discrete(2)).to_jsonable([]) == {"a": []}
    assert Dict(a=Discrete(2)).from_jsonable({"a": []}) == []
    assert Dict().from_jsonable({}) == []


def test_jsonable_errors() -> None:
    space = Dict(a=Discrete(2), b=Discrete(2))
    with pytest.raises(InvalidValueError, match=r"sample_n\[1\]: missing key 'b'"):
        space.to_jsonable([{"a": 0, "b": 1}, {"a": 0}])
    with pytest.raises(InvalidValueError, match=r"sample_n: missing key 'b'"):
        space.from_jsonable({"a": [1]})
    with pytest.raises(InvalidValueError, match="columns of different lengths"):
        space.from_jsonable({"a": [1], "b": [1, 0]})


@pytest.mark.parametrize("clone", [copy.deepcopy, lambda s: pickle.loads(pickle.dumps(s))], ids=["deepcopy", "pickle"])
def test_copies_are_equal_and_continue_the_same_streams(clone: Any) -> None:
    space = nested()
    space.seed(3)
    flatten(space, space.sample())  # builds the cached layout, which must not travel
    twin = clone(space)
    assert twin == space and "_flat_layout" not in twin.__dict__
    assert_same_value([twin.sample() for _ in range(3)], [space.sample() for _ in range(3)])
    x = twin.sample()
    assert_same_value(unflatten(twin, flatten(twin, x)), x)


def test_old_pickles_without_sort_keys_load() -> None:
    space = Dict(a=Discrete(2))
    state = space.__dict__.copy()
    del state["sort_keys"]
    restored = Dict.__new__(Dict)
    restored.__setstate__(state)
    assert restored.sort_keys is True and restored == space


def test_equality_ignores_key_order_like_gymnasium() -> None:
    a = Dict(OrderedDict([("x", Discrete(2)), ("y", Discrete(3))]))
    b = Dict(OrderedDict([("y", Discrete(3)), ("x", Discrete(2))]))
    assert a == b
    assert a != Dict(x=Discrete(2), y=Discrete(4))
    assert a != Dict(x=Discrete(2))
    assert Dict(a=Discrete(2)) != Tuple((Discrete(2),))
    assert Dict(a=Discrete(2)) != {"a": Discrete(2)}


def test_repr() -> None:
    assert (
        repr(Dict(b=Discrete(2), a=Box(0.0, 1.0, (2,)))) == "Dict('b': Discrete(2), 'a': Box(0.0, 1.0, (2,), float32))"
    )
    assert repr(Dict()) == "Dict()"


# --- flatten family ------------------------------------------------------------------------------------------


def test_flatten_space_concatenates_bounds_with_promoted_dtype() -> None:
    space = Dict(a=Box(-1.0, 2.0, (2,)), b=Discrete(3))
    flat = flatten_space(space)
    assert isinstance(flat, Box) and flat.dtype == np.float64 and flat.shape == (5,)
    assert flat.low.tolist() == [-1, -1, 0, 0, 0] and flat.high.tolist() == [2, 2, 1, 1, 1]
    assert flatdim(space) == 5


def test_flatten_space_of_integer_children_stays_integer() -> None:
    flat = flatten_space(Dict(a=MultiBinary(2), b=Discrete(2, dtype=np.int32)))
    assert flat.dtype == np.int32


def test_flatten_follows_space_order_not_value_order() -> None:
    space = Dict(OrderedDict([("z", Discrete(2)), ("a", Box(5.0, 6.0, (1,)))]))
    flat = flatten(space, {"a": np.array([5.5], np.float32), "z": np.int64(1)})
    assert flat.tolist() == [0.0, 1.0, 5.5] and flat.dtype == np.float64


def test_flatten_round_trip_nested() -> None:
    space = nested()
    space.seed(1)
    flat_space = flatten_space(space)
    assert flatdim(space) == 2 + 3 + 2 + 2 == flat_space.shape[0]
    for _ in range(10):
        x = space.sample()
        flat = flatten(space, x)
        assert flat.dtype == flat_space.dtype and flat in flat_space
        assert_same_value(unflatten(space, flat), x)


def test_flatten_returns_a_copy() -> None:
    space = Dict(a=Box(0.0, 1.0, (2,)))
    x = {"a": np.zeros(2, np.float32)}
    flatten(space, x)[0] = 1.0
    assert x["a"][0] == 0.0


def test_empty_dict_flattens_to_empty_bool_vector() -> None:
    assert flatdim(Dict()) == 0
    assert flatten(Dict(), {}).shape == (0,)
    flat_space = flatten_space(Dict())
    assert flat_space.shape == (0,) and flat_space.dtype == np.bool_
    assert unflatten(Dict(), np.zeros(0)) == {}
    # an empty child does not change its parent's flat dtype
    assert flatten_space(Dict(a=Discrete(2), e=Dict())).dtype == np.int64


def test_variable_child_keeps_the_structure() -> None:
    space = Dict(a=Discrete(2), seq=Sequence(Discrete(3)))
    space.seed(0)
    assert not space.is_np_flattenable
    flat_space = flatten_space(space)
    assert isinstance(flat_space, Dict) and list(flat_space) == ["a", "seq"]
    assert flat_space["a"] == Box(0, 1, (2,), np.int64)
    x = space.sample()
    flat = flatten(space, x)
    assert isinstance(flat, dict) and flat in flat_space
    assert_same_value(unflatten(space, flat), x)


def test_flatdim_of_variable_child_names_its_path() -> None:
    space = Dict(a=Discrete(2), inner=Tuple((Discrete(2), Sequence(Discrete(3)))))
    with pytest.raises(NotFlattenableError, match=r"Sequence\(Discrete\(3\).* at space\['inner'\]\[1\]") as info:
        flatdim(space)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("x", "error", "match"),
    [
        ([1, 2], InvalidTypeError, r"^x: wrong type for a Dict"),
        ({"pos": np.zeros(2, np.float32)}, InvalidValueError, r"^x: missing key 'pair'"),
        (
            {"pos": np.zeros(2, np.float32), "pair": (np.int64(0), {"flag": np.zeros(2, np.int8)})},
            InvalidValueError,
            r"^x\['pair'\]\[1\]: missing key 'mode'",
        ),
        (
            {"pos": np.zeros(2, np.float32), "pair": (np.int64(0),)},
            InvalidValueError,
            r"^x\['pair'\]: wrong length for a Tuple",
        ),
        (
            {"pos": np.zeros(2, np.float32), "pair": (np.int64(0), {"flag": np.zeros(2, np.int8), "mode": "x"})},
            InvalidTypeError,
            r"^x\['pair'\]\[1\]\['mode'\]: ",
        ),
    ],
)
def test_flatten_errors_name_their_path(x: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        flatten(nested(), x)


def test_flatten_rejects_extra_keys() -> None:
    with pytest.raises(InvalidValueError, match="unexpected key 'c'"):
        flatten(Dict(a=Discrete(2)), {"a": np.int64(0), "c": 1})


def test_unflatten_errors() -> None:
    space = nested()
    with pytest.raises(InvalidValueError, match="wrong length, expected 9 entries"):
        unflatten(space, np.zeros(8))
    with pytest.raises(InvalidTypeError, match="needs a flat array"):
        unflatten(space, [0.0] * 9)
    with pytest.raises(InvalidTypeError, match="needs a flat array"):
        unflatten(space, np.zeros((3, 3)))
    with pytest.raises(InvalidValueError, match=r"^x\['pair'\]\[0\]: "):
        unflatten(space, np.zeros(9))  # the Discrete block is not one-hot
    with pytest.raises(InvalidTypeError, match=r"^x: wrong type for a Dict"):
        unflatten(Dict(s=Sequence(Discrete(2))), np.zeros(2))


def test_layout_follows_setitem_and_direct_edits() -> None:
    space = Dict(a=Discrete(2), b=Discrete(3))
    assert flatdim(space) == 5
    space["c"] = Box(0.0, 1.0, (4,))
    assert flatdim(space) == 9 and flatten_space(space).dtype == np.float64
    space.spaces["b"] = Discrete(7)
    assert flatdim(space) == 13
    x = space.sample()
    assert_same_value(unflatten(space, flatten(space, x)), x)
    del space.spaces["c"]
    assert flatdim(space) == 9 and flatten(space, {"a": np.int64(1), "b": np.int64(0)}).dtype == np.int64


def test_layout_follows_edits_of_a_nested_dict() -> None:
    space = nested()
    assert flatdim(space) == 9
    space["pair"][1]["extra"] = Discrete(4)
    assert flatdim(space) == 13
    x = space.sample()
    assert_same_value(unflatten(space, flatten(space, x)), x)


def test_text_child_flattens_with_its_own_dtype() -> None:
    space = Dict(t=Text(3, charset="ab"), d=Discrete(2, dtype=np.int32))
    space.seed(0)
    assert flatten_space(space).dtype == np.int32
    x = space.sample()
    assert_same_value(unflatten(space, flatten(space, x)), x)


def test_is_space_dtype_shape_equiv() -> None:
    space = Dict(a=Box(0.0, 1.0, (2,)), b=Discrete(3))
    assert is_space_dtype_shape_equiv(space, Dict(b=Discrete(5), a=Box(-3.0, 3.0, (2,))))
    assert not is_space_dtype_shape_equiv(space, Dict(a=Box(0.0, 1.0, (2,))))
    assert not is_space_dtype_shape_equiv(space, Dict(a=Box(0.0, 1.0, (2,)), c=Discrete(3)))
    assert not is_space_dtype_shape_equiv(space, Dict(a=Box(0.0, 1.0, (3,)), b=Discrete(3)))
    assert not is_space_dtype_shape_equiv(space, Dict(a=Box(0.0, 1.0, (2,), np.float64), b=Discrete(3)))
    assert not is_space_dtype_shape_equiv(space, Tuple((Box(0.0, 1.0, (2,)), Discrete(3))))
    assert is_space_dtype_shape_equiv(nested(), nested())


# --- batching family -----------------------------------------------------------------------------------------


def test_batch_space_batches_each_child_and_keeps_key_order() -> None:
    space = Dict(OrderedDict([("z", Discrete(3)), ("a", Box(0.0, 1.0, (2,)))]))
    batched = batch_space(space, 4)
    assert isinstance(batched, Dict) and list(batched) == ["z", "a"]  # Gymnasium re-sorts here
    assert batched["z"] == MultiDiscrete([3, 3, 3, 3])
    assert batched["a"] == Box(0.0, 1.0, (4, 2))


def test_batch_space_copies_the_generator() -> None:
    space = nested()
    space.seed(2)
    batched = batch_space(space, 3)
    assert batched.np_random is not space.np_random
    assert same_rng_state(batched.np_random, space.np_random)
    x = batched.sample()
    assert x in batched and x["pos"].shape == (3, 2)


@pytest.mark.parametrize("n", [-1, 1.5, "2", True])
def test_batch_size_must_be_an_int_of_at_least_zero(n: Any) -> None:
    for function in (batch_space, create_empty_array):
        with pytest.raises(InvalidValueError, match="batch size"):
            function(Dict(a=Discrete(2)), n)
    with pytest.raises(InvalidValueError, match="batch size"):
        batch_space(Dict(), n)


def test_batch_differing_spaces_batches_per_key() -> None:
    spaces = [Dict(a=Discrete(2), b=Box(0.0, 1.0, (2,))), Dict(b=Box(-1.0, 2.0, (2,)), a=Discrete(5, start=1))]
    batched = batch_differing_spaces(spaces)
    assert list(batched) == ["a", "b"]
    assert batched["a"] == MultiDiscrete([2, 5], start=[0, 1])
    assert batched["b"].low.tolist() == [[0, 0], [-1, -1]]


def test_batch_differing_spaces_rejects_different_keys() -> None:
    with pytest.raises(InvalidValueError, match=r"spaces\[1\]: missing key 'b'"):
        batch_differing_spaces([Dict(a=Discrete(2), b=Discrete(2)), Dict(a=Discrete(2), c=Discrete(2))])
    with pytest.raises(InvalidValueError, match=r"spaces\[1\]: unexpected key 'c'"):
        batch_differing_spaces([Dict(a=Discrete(2)), Dict(a=Discrete(2), c=Discrete(2))])


def test_batch_differing_spaces_names_the_child_that_differs() -> None:
    with pytest.raises(InvalidValueError, match=r"space\['b'\]: "):
        batch_differing_spaces([Dict(b=Box(0.0, 1.0, (2,))), Dict(b=Box(0.0, 1.0, (3,)))])


def test_create_empty_array() -> None:
    space = nested()
    empty = create_empty_array(space, 3)
    assert list(empty) == ["pos", "pair"]
    assert empty["pos"].shape == (3, 2) and empty["pos"].dtype == np.float32
    assert isinstance(empty["pair"], tuple) and list(empty["pair"][1]) == ["flag", "mode"]
    assert empty["pair"][1]["flag"].shape == (3, 2)
    filled = create_empty_array(space, 2, fn=np.ones)
    assert filled["pos"].tolist() == [[1, 1], [1, 1]]


def test_concatenate_writes_into_out_and_returns_a_new_dict() -> None:
    space = nested()
    space.seed(4)
    xs = [space.sample() for _ in range(3)]
    out = create_empty_array(space, 3)
    batched = concatenate(space, xs, out)
    assert batched is not out and list(batched) == ["pos", "pair"]
    assert batched["pos"] is out["pos"] and batched["pair"][1]["mode"] is out["pair"][1]["mode"]
    assert batched["pos"].tolist() == [x["pos"].tolist() for x in xs]
    assert batched in batch_space(space, 3)


def test_concatenate_accepts_any_iterable_and_any_key_order() -> None:
    space = Dict(a=Discrete(3), b=Discrete(3))
    items = ({"b": np.int64(i), "a": np.int64(2 - i)} for i in range(3))
    batched = concatenate(space, items, create_empty_array(space, 3))
    assert batched["a"].tolist() == [2, 1, 0] and batched["b"].tolist() == [0, 1, 2]


def test_concatenate_errors_name_item_and_path() -> None:
    space = nested()
    xs = [space.sample() for _ in range(3)]
    xs[2] = {**xs[2], "pair": (xs[2]["pair"][0], {"flag": xs[2]["pair"][1]["flag"]})}
    with pytest.raises(InvalidValueError, match=r"^items\[2\]\['pair'\]\[1\]: missing key 'mode'"):
        concatenate(space, xs, create_empty_array(space, 3))
    with pytest.raises(InvalidTypeError, match=r"^items\[0\]: wrong type for a Dict"):
        concatenate(space, [1, 2], create_empty_array(space, 2))
    out = create_empty_array(space, 2)
    del out["pair"][1]["flag"]
    with pytest.raises(InvalidValueError, match=r"^out\['pair'\]\[1\]: missing key 'flag'"):
        concatenate(space, [space.sample(), space.sample()], out)
    with pytest.raises(InvalidValueError, match=r"^space\['pos'\]: "):
        concatenate(space, [space.sample(), space.sample()], create_empty_array(space, 3))


def test_iterate_yields_one_dict_per_env() -> None:
    space = nested()
    space.seed(5)
    xs = [space.sample() for _ in range(4)]
    batched = concatenate(space, xs, create_empty_array(space, 4))
    rows = list(iterate(batch_space(space, 4), batched))
    assert_same_value(rows, xs)


def test_iterate_errors() -> None:
    batched_space = batch_space(Dict(a=Discrete(2), b=Box(0.0, 1.0, (2,))), 3)
    with pytest.raises(InvalidValueError, match=r"^items: missing key 'b'"):
        iterate(batched_space, {"a": np.zeros(3, np.int64)})
    ragged = {"a": np.zeros(3, np.int64), "b": np.zeros((2, 2), np.float32)}
    with pytest.raises(InvalidValueError, match="different batch sizes"):
        list(iterate(batched_space, ragged))


def test_iterate_of_empty_dict_is_empty() -> None:
    assert list(iterate(Dict(), {})) == []


# --- against Gymnasium ---------------------------------------------------------------------------------------


def gym_pair(kind: str) -> tuple[Dict, Any]:
    gym = pytest.importorskip("gymnasium.spaces")
    if kind == "flat":
        ours = Dict({"b": Discrete(3, start=1), "a": Box(-1.0, 2.0, (2,)), "c": Box(0, 9, (3,), np.int64)})
        theirs = gym.Dict(
            {"b": gym.Discrete(3, start=1), "a": gym.Box(-1.0, 2.0, (2,)), "c": gym.Box(0, 9, (3,), np.int64)}
        )
    elif kind == "ordered":
        ours = Dict(OrderedDict([("z", Discrete(4)), ("a", Box(0.0, 1.0, (2,), np.float64))]))
        theirs = gym.Dict(OrderedDict([("z", gym.Discrete(4)), ("a", gym.Box(0.0, 1.0, (2,), np.float64))]))
    else:
        ours = Dict(
            pos=Box(-1.0, 1.0, (2,)),
            pair=Tuple((Discrete(3, start=-1), Dict(mode=Discrete(2), size=Box(0, 5, (1,), np.int32)))),
        )
        theirs = gym.Dict(
            pos=gym.Box(-1.0, 1.0, (2,)),
            pair=gym.Tuple(
                (gym.Discrete(3, start=-1), gym.Dict(mode=gym.Discrete(2), size=gym.Box(0, 5, (1,), np.int32)))
            ),
        )
    ours.seed(0)
    theirs.seed(0)
    return ours, theirs


KINDS = ["flat", "ordered", "nested"]


@pytest.mark.parametrize("kind", KINDS)
def test_gymnasium_flatdim_and_flatten_space(kind: str) -> None:
    gym = pytest.importorskip("gymnasium.spaces")
    ours, theirs = gym_pair(kind)
    assert list(ours) == list(theirs)
    assert flatdim(ours) == gym.flatdim(theirs)
    a, b = flatten_space(ours), gym.flatten_space(theirs)
    assert (a.dtype, a.shape) == (b.dtype, b.shape)
    assert np.array_equal(a.low, b.low) and np.array_equal(a.high, b.high)


@pytest.mark.parametrize("kind", KINDS)
def test_gymnasium_flatten_unflatten_contains(kind: str) -> None:
    gym = pytest.importorskip("gymnasium.spaces")
    ours, theirs = gym_pair(kind)
    for _ in range(5):
        for x in (ours.sample(), theirs.sample()):
            assert ours.contains(x) and theirs.contains(x)
            flat = flatten(ours, x)
            assert_same_value(flat, gym.flatten(theirs, x))
            assert_same_value(unflatten(ours, flat), gym.unflatten(theirs, flat))
    bad = ours.sample()
    bad["pos" if kind == "nested" else "a"] = np.full(2, 7.0, np.float32)
    assert ours.contains(bad) == theirs.contains(bad) is False


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [1, 3])
def test_gymnasium_batch_space_and_concatenate(kind: str, n: int) -> None:
    utils = pytest.importorskip("gymnasium.vector.utils")
    ours, theirs = gym_pair(kind)
    batched, gym_batched = batch_space(ours, n), utils.batch_space(theirs, n)
    if kind == "ordered":  # Gymnasium re-sorts the keys of the batched Dict; we keep the space's order
        assert list(batched) == ["z", "a"] and list(gym_batched) == ["a", "z"]
    assert {key: repr(child) for key, child in batched.items()} == {
        key: repr(child) for key, child in gym_batched.items()
    }
    xs = [ours.sample() for _ in range(n)]
    mine = concatenate(ours, xs, create_empty_array(ours, n))
    theirs_value = utils.concatenate(theirs, xs, utils.create_empty_array(theirs, n))
    assert_same_value(mine, theirs_value)
    rows, gym_rows = list(iterate(batched, mine)), list(utils.iterate(gym_batched, theirs_value))
    assert_same_value([dict(sorted(row.items())) for row in rows], [dict(sorted(row.items())) for row in gym_rows])
