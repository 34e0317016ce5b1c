"""Differential tests: every catalog space against its Gymnasium counterpart.

Known, deliberate differences (see README): OneOf flattens with zero padding and one dtype, so its flat values
and flat-space bounds differ from Gymnasium's; everything else must agree.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.catalog import IDS, make
from tests.helpers import assert_same_value
from vecspaces.spaces import (
    Box,
    GraphInstance,
    OneOf,
    Space,
    flatdim,
    flatten,
    flatten_space,
    from_gymnasium,
    to_gymnasium,
    unflatten,
)
from vecspaces.vector.utils import batch_space, concatenate, create_empty_array

gym_spaces = pytest.importorskip("gymnasium.spaces")
gym_vector_utils = pytest.importorskip("gymnasium.vector.utils")


def contains_oneof(space: Space[Any]) -> bool:
    return "OneOf(" in repr(space)


def text_in_float_composite(space: Space[Any]) -> bool:
    """Gymnasium cannot unflatten a Text inside a composite that flattens to floats (it indexes with floats)."""
    return "Text(" in repr(space) and space.is_np_flattenable and flatten_space(space).dtype.kind == "f"


def to_gym_value(x: Any) -> Any:
    if isinstance(x, GraphInstance):
        return gym_spaces.GraphInstance(*x)
    if isinstance(x, tuple):
        return tuple(to_gym_value(item) for item in x)
    if isinstance(x, dict):
        return {key: to_gym_value(item) for key, item in x.items()}
    return x


def from_gym_value(x: Any) -> Any:
    if isinstance(x, gym_spaces.GraphInstance):
        return GraphInstance(*x)
    if isinstance(x, tuple):
        return tuple(from_gym_value(item) for item in x)
    if isinstance(x, dict):
        return {key: from_gym_value(item) for key, item in x.items()}
    return x


@pytest.fixture(params=IDS)
def pair(request: pytest.FixtureRequest) -> tuple[Space[Any], Any]:
    space = make(request.param)
    space.seed(0)
    return space, to_gymnasium(space)


def test_flatdim_and_flatten_space_agree(pair: tuple[Space[Any], Any]) -> None:
    space, gym_space = pair
    if not space.is_np_flattenable:
        assert not gym_space.is_np_flattenable
        return
    assert flatdim(space) == gym_spaces.flatdim(gym_space)
    ours, theirs = flatten_space(space), from_gymnasium(gym_spaces.flatten_space(gym_space))
    if contains_oneof(space):
        assert (ours.shape, ours.dtype) == (theirs.shape, theirs.dtype)
    else:
        assert ours == theirs


def test_flatten_and_unflatten_agree(pair: tuple[Space[Any], Any]) -> None:
    space, gym_space = pair
    for _ in range(5):
        x = space.sample()
        ours = flatten(space, x)
        theirs = gym_spaces.flatten(gym_space, to_gym_value(x))
        if not contains_oneof(space):
            assert_same_value(from_gym_value(_as_tuple_if_list(theirs)), _as_tuple_if_list(ours))
            if not text_in_float_composite(space):
                assert_same_value(from_gym_value(gym_spaces.unflatten(gym_space, to_gym_value(ours))), x)
        assert_same_value(unflatten(space, ours), x)


def test_contains_agrees_on_both_libraries_samples(pair: tuple[Space[Any], Any]) -> None:
    space, gym_space = pair
    gym_space.seed(1)
    for _ in range(5):
        x = space.sample()
        assert gym_space.contains(to_gym_value(x)) == space.contains(x)
        y = gym_space.sample()
        assert space.contains(from_gym_value(y)) == gym_space.contains(y)


@pytest.mark.parametrize("n", [1, 3])
def test_batch_space_and_concatenate_agree(pair: tuple[Space[Any], Any], n: int) -> None:
    space, gym_space = pair
    assert from_gymnasium(gym_vector_utils.batch_space(gym_space, n)) == batch_space(space, n)
    xs = [space.sample() for _ in range(n)]
    ours = concatenate(space, xs, create_empty_array(space, n))
    theirs = gym_vector_utils.concatenate(
        gym_space, [to_gym_value(x) for x in xs], gym_vector_utils.create_empty_array(gym_space, n)
    )
    assert_same_value(from_gym_value(theirs), ours)


def test_oneof_flatten_pads_with_zeros_in_one_dtype() -> None:
    space = OneOf((Box(0, 5, (1,), np.int64), Box(-1.0, 1.0, (3,), np.float32)))
    space.seed(0)
    dtypes = {flatten(space, space.sample()).dtype for _ in range(20)}
    assert dtypes == {flatten_space(space).dtype}
    short = flatten(space, (np.int64(0), np.array([3], dtype=np.int64)))
    assert short[2:].tolist() == [0, 0]


def _as_tuple_if_list(x: Any) -> Any:
    return tuple(x) if isinstance(x, list) else x
