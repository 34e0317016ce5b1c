"""The catalog properties (test_properties.py), checked on randomly generated nested spaces.

Each test bundles a few properties so that a generated space is built and sampled once for all of them; the
example counts keep the whole file to a few seconds on a 2-core machine.
"""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.catalog import (
    HOSTILE_VALUES,
    ODD_VALUES,
    hostile_copy,
    random_mask,
    random_probability,
    scalars_as_arrays,
)
from tests.helpers import all_same_value, assert_same_value, same_rng_state
from tests.strategies import masks, probabilities, seeds, spaces
from vecspaces.error import NotFlattenableError
from vecspaces.spaces import Discrete, Graph, Sequence, Space, Text, flatdim, flatten, flatten_space, unflatten
from vecspaces.spaces.utils import is_space_dtype_shape_equiv
from vecspaces.vector.utils import batch_differing_spaces, batch_space, concatenate, create_empty_array, iterate

# Hypothesis examples per test: enough to meet every kind of leaf and composite, few enough for CI.
EXAMPLES = 40


@settings(max_examples=EXAMPLES)
@given(spaces, seeds)
def test_sample_contains_flatten_round_trip(space: Space[Any], seed: int) -> None:
    space.seed(seed)
    flat_space = flatten_space(space)
    for _ in range(2):
        x = space.sample()
        assert space.contains(x) and x in space
        flat = flatten(space, x)
        assert flat in flat_space
        assert_same_value(unflatten(space, flat), x)
        if space.is_np_flattenable:
            assert flat.dtype == flat_space.dtype
    if space.is_np_flattenable:
        assert flatdim(space) == flat_space.shape[0] == flat.shape[0]
    else:
        with pytest.raises(NotFlattenableError):
            flatdim(space)


@settings(max_examples=EXAMPLES)
@given(spaces, seeds, st.data())
def test_masked_and_probability_samples_are_contained(space: Space[Any], seed: int, data: st.DataObject) -> None:
    space.seed(seed)
    assert space.contains(space.sample(mask=data.draw(masks(space), label="mask")))
    assert space.contains(space.sample(probability=data.draw(probabilities(space), label="probability")))


@settings(max_examples=EXAMPLES)
@given(spaces, st.one_of(st.none(), seeds))
def test_seeding_reproduces_samples(space: Space[Any], seed: int | None) -> None:
    returned = space.seed(seed)
    xs = [space.sample() for _ in range(2)]
    assert space.seed(returned) == returned
    assert_same_value([space.sample() for _ in range(2)], xs)
    if seed is not None:  # an equal space seeded with the same int draws the same values
        twin = copy.deepcopy(space)
        twin.seed(seed)
        assert_same_value([twin.sample() for _ in range(2)], xs)


@settings(max_examples=EXAMPLES)
@given(spaces, seeds)
def test_copies_keep_the_generator_state_and_json_round_trips(space: Space[Any], seed: int) -> None:
    space.seed(seed)
    space.sample()
    for clone in (copy.deepcopy, lambda s: pickle.loads(pickle.dumps(s))):
        twin = clone(space)
        assert twin == space
        assert twin.np_random is not space.np_random
        assert same_rng_state(twin.np_random, space.np_random)
        assert_same_value(twin.sample(), space.sample())
    xs = [space.sample() for _ in range(2)]
    assert_same_value(space.from_jsonable(json.loads(json.dumps(space.to_jsonable(xs)))), xs)


@settings(max_examples=EXAMPLES)
@given(spaces, spaces)
def test_equality_and_repr(space: Space[Any], other: Space[Any]) -> None:
    assert space == copy.deepcopy(space)
    assert (space == other) == (other == space)
    assert (space != other) is not (space == other)
    if type(space) is not type(other):
        assert space != other
    assert isinstance(repr(space), str) and repr(space).startswith(type(space).__name__)
    assert is_space_dtype_shape_equiv(space, copy.deepcopy(space))


@settings(max_examples=EXAMPLES)
@given(spaces, seeds)
def test_contains_never_raises_on_odd_or_hostile_input(space: Space[Any], seed: int) -> None:
    space.seed(seed)
    for odd in [*ODD_VALUES, *HOSTILE_VALUES, hostile_copy(space.sample())]:
        assert space.contains(odd) in (True, False), odd


@settings(max_examples=EXAMPLES)
@given(spaces, st.integers(1, 3), seeds)
def test_concatenate_iterate_and_batch_space(space: Space[Any], n: int, seed: int) -> None:
    space.seed(seed)
    xs = [space.sample() for _ in range(n)]
    batched_space = batch_space(space, n)
    assert batched_space == batch_differing_spaces([space] * n)
    assert batched_space.np_random is not space.np_random
    assert same_rng_state(batched_space.np_random, space.np_random)
    batched = concatenate(space, xs, create_empty_array(space, n))
    assert batched in batched_space
    assert_same_value(scalars_as_arrays(list(iterate(batched_space, batched))), scalars_as_arrays(xs))


@settings(max_examples=EXAMPLES)
@given(spaces, seeds)
def test_batched_copies_draw_independent_streams(space: Space[Any], seed: int) -> None:
    space.seed(seed)
    if all_same_value([space.sample() for _ in range(8)]):
        return  # (nearly) a single value: nothing to tell streams apart by
    batched = batch_space(space, 4)
    rows = [list(iterate(batched, batched.sample())) for _ in range(6)]
    assert any(not all_same_value(row) for row in rows)


def test_random_masks_take_every_form() -> None:
    # The mask and probability strategies draw through random_mask/random_probability: check that those make
    # every form, so the tests above meet them all.
    forms = set()
    for seed in range(40):
        rng = np.random.default_rng(seed)
        sequence_mask = random_mask(Sequence(Discrete(3)), rng)
        text_mask = random_probability(Text(3, charset="ab"), rng)
        graph_mask = random_mask(Graph(Discrete(3), Discrete(2)), rng)
        forms.add(("sequence length", type(sequence_mask[0]).__name__))
        forms.add(("text", text_mask[0] is None, text_mask[1] is None))
        forms.add(("graph", graph_mask[0] is None, graph_mask[1] is None))
    assert forms == {
        ("sequence length", "int"),
        ("sequence length", "ndarray"),
        ("sequence length", "NoneType"),
        ("text", False, False),
        ("text", True, False),
        ("text", False, True),
        *(("graph", nodes, edges) for nodes in (False, True) for edges in (False, True)),
    }
