"""Differential tests: every catalog space against its Gymnasium counterpart.

Known, deliberate differences (see README and the kernel modules' docstrings), which the tests spell out:

- OneOf flattens with zero padding and one dtype, so its flat values and flat-space bounds differ.
- ``create_empty_array``: a OneOf placeholder is ``(0, branch 0's placeholder)`` where Gymnasium gives ``()``
  (not a value of the space); a stacked Sequence's is an empty stack where Gymnasium's has length 1; a Graph's
  ``edge_links`` are int32 like sampled ones, where Gymnasium makes them int64.
- ``iterate`` over a batched Dict gives dicts in the space's key order; Gymnasium's ``batch_space`` rebuilds the
  Dict from a plain dict, which its Dict sorts, so its rows come in sorted key order. The values agree.

Everything else must agree.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.catalog import GYMNASIUM_IDS, from_gym_value, make, to_gym_value
from tests.helpers import assert_same_value, skip_before_gymnasium
from vecspaces.spaces import (
    Box,
    Dict,
    Graph,
    GraphInstance,
    OneOf,
    Sequence,
    Space,
    Tuple,
    flatdim,
    flatten,
    flatten_space,
    from_gymnasium,
    to_gymnasium,
    unflatten,
)
from vecspaces.vector.utils import batch_space, concatenate, create_empty_array, iterate

gym_spaces = pytest.importorskip("gymnasium.spaces")
gym_vector_utils = pytest.importorskip("gymnasium.vector.utils")


def contains_oneof(space: Space[Any]) -> bool:
    return "OneOf(" in repr(space)


def text_in_float_composite(space: Space[Any]) -> bool:
    """Gymnasium cannot unflatten a Text inside a composite that flattens to floats (it indexes with floats)."""
    return "Text(" in repr(space) and space.is_np_flattenable and flatten_space(space).dtype.kind == "f"


@pytest.fixture(params=GYMNASIUM_IDS)
def pair(request: pytest.FixtureRequest) -> tuple[Space[Any], Any]:
    space = make(request.param)
    space.seed(0)
    return space, to_gymnasium(space)


def test_flatdim_and_flatten_space_agree(pair: tuple[Space[Any], Any]) -> None:
    if "Text(" in repr(pair[0]) and contains_oneof(pair[0]):
        skip_before_gymnasium((1, 4), "its flatten_space of a OneOf holding a Text makes a Box of strings (ValueError)")
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


def test_an_empty_batch_agrees(pair: tuple[Space[Any], Any]) -> None:
    """``batch_space(space, 0)`` is Gymnasium's; concatenating no items gives the empty batch (Gymnasium's raises)."""
    space, gym_space = pair
    batched = batch_space(space, 0)
    assert batched == from_gymnasium(gym_vector_utils.batch_space(gym_space, 0))
    empty = create_empty_array(space, 0)
    assert_same_value(concatenate(space, [], empty), empty)
    assert batched.contains(empty) and list(iterate(batched, empty)) == []


def in_key_order_of(ours: Any, theirs: Any) -> Any:
    """``theirs`` with every dict's keys in the order of the matching dict of ``ours`` (same key sets)."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        assert set(ours) == set(theirs), f"keys {list(ours)} vs {list(theirs)}"
        return {key: in_key_order_of(ours[key], theirs[key]) for key in ours}
    if isinstance(ours, (tuple, list)) and isinstance(theirs, (tuple, list)) and len(ours) == len(theirs):
        items = [in_key_order_of(a, b) for a, b in zip(ours, theirs, strict=True)]
        return GraphInstance(*items) if isinstance(theirs, GraphInstance) else type(theirs)(items)
    return theirs


@pytest.mark.parametrize("n", [1, 3])
def test_iterate_agrees(pair: tuple[Space[Any], Any], n: int) -> None:
    space, gym_space = pair
    xs = [space.sample() for _ in range(n)]
    ours = list(iterate(batch_space(space, n), concatenate(space, xs, create_empty_array(space, n))))
    gym_xs = [to_gym_value(x) for x in xs]
    gym_batch = gym_vector_utils.concatenate(gym_space, gym_xs, gym_vector_utils.create_empty_array(gym_space, n))
    theirs = from_gym_value(list(gym_vector_utils.iterate(gym_vector_utils.batch_space(gym_space, n), gym_batch)))
    assert_same_value(in_key_order_of(ours, theirs), ours)


def test_iterate_of_scalar_boxes_gives_numpy_scalars_as_gymnasium() -> None:
    space = Box(-1.0, 1.0, (), np.float64)
    batched = batch_space(space, 3)
    batch = batched.sample()
    ours = list(iterate(batched, batch))
    theirs = list(gym_vector_utils.iterate(to_gymnasium(batched), batch))
    assert [type(value) for value in ours] == [type(value) for value in theirs] == [np.float64] * 3
    assert_same_value(ours, theirs)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_create_empty_array_agrees(pair: tuple[Space[Any], Any], n: int) -> None:
    space, gym_space = pair
    for fn in (np.zeros, np.ones):
        ours = create_empty_array(space, n, fn)
        theirs = from_gym_value(gym_vector_utils.create_empty_array(gym_space, n, fn))
        assert_empty_like_gymnasium(space, ours, theirs, fn, "x")


def assert_empty_like_gymnasium(space: Space[Any], ours: Any, theirs: Any, fn: Any, path: str) -> None:
    """``ours`` equals Gymnasium's ``create_empty_array`` result ``theirs``, but for the documented differences."""
    if isinstance(space, Dict):
        assert set(ours) == set(theirs), f"{path}: keys {list(ours)} vs {list(theirs)}"
        for key, child in space.spaces.items():
            assert_empty_like_gymnasium(child, ours[key], theirs[key], fn, f"{path}[{key!r}]")
    elif isinstance(space, Tuple):
        assert type(ours) is type(theirs) is tuple and len(ours) == len(theirs), path
        for index, (child, a, b) in enumerate(zip(space.spaces, ours, theirs, strict=True)):
            assert_empty_like_gymnasium(child, a, b, fn, f"{path}[{index}]")
    elif isinstance(space, OneOf):
        # Gymnasium's () is no value of a OneOf; ours pairs index 0 with branch 0's own placeholder.
        assert theirs == ((),) * len(theirs) and len(ours) == len(theirs), path
        first = space.spaces[0]
        placeholders = create_empty_array(first, len(ours), fn)
        expected = list(iterate(batch_space(first, len(ours)), placeholders)) if ours else []
        assert_same_value(list(ours), [(np.int64(0), value) for value in expected], path)
    elif isinstance(space, Sequence) and space.stack:
        # Ours are empty stacks (always values of the space); Gymnasium's have length 1.
        assert len(ours) == len(theirs), path
        for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            assert_empty_stack(a, b, f"{path}[{index}]")
    elif isinstance(space, Graph):
        assert len(ours) == len(theirs), path
        for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            where = f"{path}[{index}]"
            assert_empty_like_gymnasium(space.node_space, a.nodes, b.nodes, fn, f"{where}.nodes")
            if space.edge_space is None:
                assert a.edges is b.edges is None and a.edge_links is b.edge_links is None, where
                continue
            assert_empty_like_gymnasium(space.edge_space, a.edges, b.edges, fn, f"{where}.edges")
            # int32 edge_links, like sampled ones, where Gymnasium makes them int64.
            assert a.edge_links.dtype == np.int32 and b.edge_links.dtype == np.int64, where
            assert np.array_equal(a.edge_links, b.edge_links), where
    else:
        assert_same_value(ours, theirs, path)


def assert_empty_stack(ours: Any, theirs: Any, path: str) -> None:
    """``ours`` is the length-0 stack of the structure Gymnasium's length-1 stack ``theirs`` has."""
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs), path
        for key in theirs:
            assert_empty_stack(ours[key], theirs[key], f"{path}[{key!r}]")
    elif isinstance(theirs, np.ndarray):
        assert isinstance(ours, np.ndarray) and ours.dtype == theirs.dtype, path
        assert ours.shape == (0, *theirs.shape[1:]) and theirs.shape[0] == 1, path
    else:
        assert len(ours) == 0, path


def test_oneof_flatten_pads_with_zeros_in_one_dtype() -> None:
    space = OneOf((Box(0, 5, (1,), np.int64), Box(-1.0, 1.0, (3,), np.float32)))
    space.seed(0)
    dtypes = {flatten(space, space.sample()).dtype for _ in range(20)}
    assert dtypes == {flatten_space(space).dtype}
    short = flatten(space, (np.int64(0), np.array([3], dtype=np.int64)))
    assert short[2:].tolist() == [0, 0]


def _as_tuple_if_list(x: Any) -> Any:
    return tuple(x) if isinstance(x, list) else x
