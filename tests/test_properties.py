"""Round-trip properties that every space of the catalog must satisfy."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import numpy as np
import pytest

from tests.catalog import CATALOG, IDS, is_variable, make, random_mask, random_probability
from tests.helpers import assert_same_value, same_rng_state
from vecspaces.error import NotFlattenableError
from vecspaces.spaces import GraphInstance, Space, flatdim, flatten, flatten_space, unflatten
from vecspaces.spaces.utils import is_space_dtype_shape_equiv
from vecspaces.vector.utils import (
    batch_differing_spaces,
    batch_space,
    concatenate,
    create_empty_array,
    iterate,
)

SAMPLES = 8


def samples(space: Space[Any], seed: int = 0, count: int = SAMPLES) -> list[Any]:
    space.seed(seed)
    return [space.sample() for _ in range(count)]


@pytest.fixture(params=IDS)
def space(request: pytest.FixtureRequest) -> Space[Any]:
    return make(request.param)


def test_sample_is_contained(space: Space[Any]) -> None:
    for x in samples(space):
        assert space.contains(x)
        assert x in space


def test_masked_sample_is_contained(space: Space[Any]) -> None:
    rng = np.random.default_rng(1)
    space.seed(1)
    for _ in range(SAMPLES):
        assert space.contains(space.sample(mask=random_mask(space, rng)))


def test_probability_sample_is_contained(space: Space[Any]) -> None:
    rng = np.random.default_rng(2)
    space.seed(2)
    for _ in range(SAMPLES):
        assert space.contains(space.sample(probability=random_probability(space, rng)))


def test_flatten_is_in_flatten_space(space: Space[Any]) -> None:
    flat_space = flatten_space(space)
    for x in samples(space):
        assert flatten(space, x) in flat_space


@pytest.mark.parametrize("space_id", [i for i in IDS if not is_variable(make(i))])
def test_flatten_dtype_matches_flatten_space(space_id: str) -> None:
    space = make(space_id)
    flat_space = flatten_space(space)
    for x in samples(space):
        assert flatten(space, x).dtype == flat_space.dtype


def test_unflatten_inverts_flatten(space: Space[Any]) -> None:
    for x in samples(space):
        assert_same_value(unflatten(space, flatten(space, x)), x)


def test_flatdim_is_length_of_flatten_space(space: Space[Any]) -> None:
    if is_variable(space):
        with pytest.raises(NotFlattenableError):
            flatdim(space)
    else:
        assert flatdim(space) == flatten_space(space).shape[0]
        assert all(flatten(space, x).shape == (flatdim(space),) for x in samples(space, count=3))


def test_int_seed_is_reproducible(space: Space[Any]) -> None:
    other = make_same(space)
    for a, b in zip(samples(space, seed=42), samples(other, seed=42), strict=True):
        assert_same_value(a, b)


@pytest.mark.parametrize("seed", [None, 7])
def test_seed_return_value_reproduces_samples(space: Space[Any], seed: int | None) -> None:
    returned = space.seed(seed)
    first = [space.sample() for _ in range(4)]
    assert space.seed(returned) == returned
    assert_same_value([space.sample() for _ in range(4)], first)


@pytest.mark.parametrize("clone", [copy.deepcopy, lambda s: pickle.loads(pickle.dumps(s))], ids=["deepcopy", "pickle"])
def test_copies_keep_the_generator_state(space: Space[Any], clone: Any) -> None:
    space.seed(5)
    space.sample()
    twin = clone(space)
    assert twin == space
    assert twin.np_random is not space.np_random
    assert same_rng_state(twin.np_random, space.np_random)
    assert_same_value([twin.sample() for _ in range(3)], [space.sample() for _ in range(3)])


def test_json_round_trip(space: Space[Any]) -> None:
    xs = samples(space, count=3)
    encoded = json.loads(json.dumps(space.to_jsonable(xs)))
    assert_same_value(space.from_jsonable(encoded), xs)


def test_equality_and_repr(space: Space[Any]) -> None:
    assert space == make_same(space)
    assert space == copy.deepcopy(space)
    assert isinstance(repr(space), str) and repr(space).startswith(type(space).__name__)
    different = [make(other) for other in IDS if repr(make(other)) != repr(space)]
    assert all(space != other for other in different)


def test_is_equivalent_to_itself(space: Space[Any]) -> None:
    assert is_space_dtype_shape_equiv(space, make_same(space))


def test_contains_never_raises_on_odd_input(space: Space[Any]) -> None:
    for odd in [None, "x", 1.5, object(), np.zeros((7, 7, 7)), (), {}, [None], np.array(["a"]), float("nan")]:
        assert space.contains(odd) in (True, False)


def test_contains_never_raises_on_values_whose_dunder_methods_raise(space: Space[Any]) -> None:
    # Objects that break in __array__, comparisons, len, iteration or indexing, alone and inside structures,
    # and the space's own samples re-wrapped in such types.
    for odd in [*HOSTILE, *(hostile_copy(x) for x in samples(space, count=2))]:
        assert space.contains(odd) in (True, False), odd


class Hostile(Exception):
    """What the hostile objects below raise."""


def _raise(*args: Any, **kwargs: Any) -> Any:
    raise Hostile


class RaisingArray:
    """An object that claims to convert to an array, and fails."""

    __array__ = _raise
    __len__ = _raise
    __iter__ = _raise
    __getitem__ = _raise

    def __repr__(self) -> str:
        return "RaisingArray()"


class RaisingEq:
    """An object whose comparisons and truth value fail (inside an object array, say)."""

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __bool__ = _raise
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return "RaisingEq()"


class RaisingInt(int):
    """An int whose comparisons, conversions and hashing-free dunders fail."""

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _raise
    __index__ = __int__ = __float__ = __bool__ = _raise
    __hash__ = int.__hash__


class RaisingTuple(tuple):
    """A tuple whose length, iteration and indexing fail."""

    __len__ = __iter__ = __getitem__ = __eq__ = _raise
    __hash__ = tuple.__hash__


class RaisingList(list):
    """A list whose length, iteration and indexing fail."""

    __len__ = __iter__ = __getitem__ = __array__ = _raise


class RaisingStr(str):
    """A str whose length, iteration and membership tests fail."""

    __len__ = __iter__ = __getitem__ = __contains__ = _raise
    __hash__ = str.__hash__


class RaisingDict(dict):
    """A dict whose length, keys, iteration and indexing fail."""

    __len__ = __iter__ = __getitem__ = __contains__ = keys = items = values = _raise


class RaisingGraphInstance(GraphInstance):
    """A GraphInstance whose unpacking and indexing fail."""

    __iter__ = __getitem__ = __len__ = _raise


def _object_array(*items: Any) -> np.ndarray:
    array = np.empty(len(items), dtype=object)
    for index, item in enumerate(items):  # one by one: numpy would call a RaisingArray's __array__
        array[index] = item
    return array


HOSTILE: list[Any] = [
    RaisingArray(),
    RaisingEq(),
    RaisingInt(1),
    RaisingTuple((0, 1)),
    RaisingTuple(()),
    RaisingList([1, 0]),
    RaisingStr("ab"),
    RaisingDict(a=1),
    RaisingGraphInstance(np.zeros(2), None, None),
    GraphInstance(RaisingArray(), None, None),
    GraphInstance(np.zeros(2, dtype=np.int64), RaisingArray(), np.zeros((1, 2), dtype=np.int64)),
    (RaisingInt(0), 1),
    (0, RaisingArray()),
    (np.int64(0), RaisingInt(1)),
    [RaisingArray()],
    [RaisingInt(1), RaisingInt(0)],
    (RaisingEq(), RaisingEq()),
    {"a": RaisingArray(), "b": RaisingInt(0)},
    _object_array(RaisingEq(), RaisingEq(), RaisingEq()),
    _object_array(RaisingArray(), RaisingArray()),
]


def hostile_copy(x: Any) -> Any:
    """``x`` with its tuples, lists, dicts, strings, ints and graphs swapped for the raising kinds above."""
    if isinstance(x, GraphInstance):
        return RaisingGraphInstance(*x)
    if isinstance(x, tuple):
        return RaisingTuple(hostile_copy(item) for item in x)
    if isinstance(x, list):
        return RaisingList(hostile_copy(item) for item in x)
    if isinstance(x, dict):
        return RaisingDict({key: hostile_copy(item) for key, item in x.items()})
    if isinstance(x, str):
        return RaisingStr(x)
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return RaisingInt(int(x))
    if isinstance(x, np.ndarray) and x.size:
        return _object_array(*[RaisingEq() for _ in range(x.size)]).reshape(x.shape)
    return x


@pytest.mark.parametrize("n", [1, 3])
def test_concatenate_is_in_batch_space(space: Space[Any], n: int) -> None:
    xs = samples(space, count=n)
    batched = concatenate(space, xs, create_empty_array(space, n))
    assert batched in batch_space(space, n)


@pytest.mark.parametrize("n", [1, 3])
def test_iterate_inverts_concatenate(space: Space[Any], n: int) -> None:
    xs = samples(space, count=n)
    batched = concatenate(space, xs, create_empty_array(space, n))
    assert_same_value(list(iterate(batch_space(space, n), batched)), xs)


@pytest.mark.parametrize("n", [1, 3])
def test_batch_space_equals_batch_differing_spaces_of_copies(space: Space[Any], n: int) -> None:
    assert batch_space(space, n) == batch_differing_spaces([space] * n)


def test_batch_space_generator_starts_from_the_original_state(space: Space[Any]) -> None:
    space.seed(9)
    batched = batch_space(space, 2)
    assert batched.np_random is not space.np_random
    assert same_rng_state(batched.np_random, space.np_random)


def test_batched_copies_draw_independent_streams(space: Space[Any]) -> None:
    space.seed(11)
    batched = batch_space(space, 4)
    batch = [batched.sample() for _ in range(6)]
    # Entries of one batch must not all be equal every time: each env draws its own stream.
    entries = [list(iterate(batched, b)) for b in batch]
    assert any(not _all_equal(row) for row in entries) or _single_valued(space)


def make_same(space: Space[Any]) -> Space[Any]:
    """A fresh catalog space equal to ``space`` (found by repr)."""
    for space_id in IDS:
        candidate = make(space_id)
        if repr(candidate) == repr(space) and candidate == space:
            return candidate
    raise AssertionError(f"{space!r} is not in the catalog")


def _all_equal(values: list[Any]) -> bool:
    try:
        for value in values[1:]:
            assert_same_value(value, values[0])
    except AssertionError:
        return False
    return True


def _single_valued(space: Space[Any]) -> bool:
    return repr(space) in {repr(CATALOG["discrete_1"]())}
