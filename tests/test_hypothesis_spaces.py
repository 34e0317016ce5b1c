"""The catalog properties, checked on randomly generated nested spaces."""

from __future__ import annotations

import json
import pickle
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.helpers import assert_same_value
from tests.strategies import spaces
from vecspaces.spaces import Space, flatdim, flatten, flatten_space, unflatten
from vecspaces.vector.utils import batch_space, concatenate, create_empty_array, iterate


@given(spaces, st.integers(0, 2**32))
def test_sample_contains_flatten_round_trip(space: Space[Any], seed: int) -> None:
    space.seed(seed)
    x = space.sample()
    assert space.contains(x)
    flat = flatten(space, x)
    assert flat in flatten_space(space)
    assert_same_value(unflatten(space, flat), x)
    if space.is_np_flattenable:
        assert flat.shape == (flatdim(space),)


@given(spaces, st.integers(0, 2**32))
def test_seed_pickle_and_json_round_trips(space: Space[Any], seed: int) -> None:
    returned = space.seed(seed)
    xs = [space.sample() for _ in range(2)]
    space.seed(returned)
    assert_same_value([space.sample() for _ in range(2)], xs)
    twin = pickle.loads(pickle.dumps(space))
    assert twin == space
    assert_same_value(twin.sample(), space.sample())
    assert_same_value(space.from_jsonable(json.loads(json.dumps(space.to_jsonable(xs)))), xs)


@given(spaces, st.integers(1, 3), st.integers(0, 2**32))
def test_concatenate_iterate_round_trip(space: Space[Any], n: int, seed: int) -> None:
    space.seed(seed)
    xs = [space.sample() for _ in range(n)]
    batched_space = batch_space(space, n)
    batched = concatenate(space, xs, create_empty_array(space, n))
    assert batched in batched_space
    assert_same_value(list(iterate(batched_space, batched)), xs)
