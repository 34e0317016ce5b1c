"""Batching of Hypothesis-generated nested spaces: batch_space against batch_differing_spaces, and the batched
spaces' generators (determined by the seed, separate from the original's, copies drawing different streams)."""

from __future__ import annotations

from collections.abc import Iterator
from copy import deepcopy
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers import assert_same_value, same_rng_state
from tests.strategies import spaces
from vecspaces.spaces import Dict, Graph, OneOf, Sequence, Space, Text, Tuple
from vecspaces.vector.utils import batch_differing_spaces, batch_space

# Kinds batched as a Tuple of independently seeded copies of the space.
COPIED = (Text, Sequence, Graph, OneOf)

batch_sizes = st.integers(1, 4)
seeds = st.integers(0, 2**32 - 1)


def generators(space: Space[Any]) -> Iterator[np.random.Generator]:
    """Every generator in ``space``: its own, then its children's (a Graph's node and edge spaces too)."""
    yield space.np_random
    if isinstance(space, (Dict, Tuple, OneOf)):
        children = space.spaces.values() if isinstance(space, Dict) else space.spaces
        for child in children:
            yield from generators(child)
    elif isinstance(space, Sequence):
        yield from generators(space.feature_space)
    elif isinstance(space, Graph):
        yield from generators(space.node_space)
        if space.edge_space is not None:
            yield from generators(space.edge_space)


def states(space: Space[Any]) -> list[Any]:
    return [deepcopy(rng.bit_generator.state) for rng in generators(space)]


@given(space=spaces, n=batch_sizes)
def test_batch_space_equals_batch_differing_spaces_of_copies(space: Space[Any], n: int) -> None:
    assert batch_space(space, n) == batch_differing_spaces([space] * n)
    assert batch_space(space, n) == batch_differing_spaces([deepcopy(space) for _ in range(n)])


@given(space=spaces, n=batch_sizes, seed=seeds)
def test_batched_samples_are_determined_by_the_seed(space: Space[Any], n: int, seed: int) -> None:
    space.seed(seed)
    first = batch_space(space, n)
    drawn = [first.sample() for _ in range(2)]
    space.seed(seed)
    second = batch_space(space, n)
    assert states(second) == states(batch_space(space, n))
    assert_same_value([second.sample() for _ in range(2)], drawn)


@given(space=spaces, n=batch_sizes, seed=seeds)
def test_sampling_the_batched_space_and_the_space_never_advance_each_other(
    space: Space[Any], n: int, seed: int
) -> None:
    space.seed(seed)
    before = states(space)
    batched = batch_space(space, n)
    assert states(space) == before  # batching draws the copies' seeds from a copy of the generator
    batched.sample()
    assert states(space) == before
    after = states(batched)
    space.sample()
    assert states(batched) == after


@given(space=spaces, n=batch_sizes, seed=seeds)
def test_batched_generators_are_new_objects_starting_where_the_originals_are(
    space: Space[Any], n: int, seed: int
) -> None:
    space.seed(seed)
    batched = batch_space(space, n)
    original = {id(rng) for rng in generators(space)}
    assert not original & {id(rng) for rng in generators(batched)}
    _check_batched_generators(space, batched, n)


@given(space=spaces, n=st.integers(2, 4), seed=seeds)
def test_copies_in_a_tuple_of_copies_draw_different_streams(space: Space[Any], n: int, seed: int) -> None:
    space.seed(seed)
    batched = batch_space(space, n)
    for original, copies in _copied(space, batched):
        assert isinstance(copies, Tuple) and len(copies.spaces) == n
        assert all(type(copy) is type(original) and copy == original for copy in copies.spaces)
        keys = {repr(copy.np_random.bit_generator.state) for copy in copies.spaces}
        assert len(keys) == n  # every copy its own seed, hence its own stream
        ids = {id(rng) for copy in copies.spaces for rng in generators(copy)}
        assert len(ids) == n * len(list(generators(original)))  # no generator shared between copies


def _check_batched_generators(space: Space[Any], batched: Space[Any], n: int) -> None:
    """The batched space's generator starts in the original's state, at every level of the structure."""
    assert same_rng_state(batched.np_random, space.np_random)
    if isinstance(space, Dict):
        for key, child in space.spaces.items():
            _check_batched_generators(child, batched[key], n)
    elif isinstance(space, Tuple):
        for child, batched_child in zip(space.spaces, batched.spaces, strict=True):
            _check_batched_generators(child, batched_child, n)


def _copied(space: Space[Any], batched: Space[Any]) -> Iterator[tuple[Space[Any], Space[Any]]]:
    """Each space batched as a Tuple of copies inside ``space``, with its batch."""
    if isinstance(space, Dict):
        for key, child in space.spaces.items():
            yield from _copied(child, batched[key])
    elif isinstance(space, Tuple):
        for child, batched_child in zip(space.spaces, batched.spaces, strict=True):
            yield from _copied(child, batched_child)
    elif isinstance(space, COPIED):
        yield space, batched
