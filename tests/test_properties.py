"""Round-trip properties that every space of the catalog must satisfy."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import numpy as np
import pytest

from tests.catalog import (
    CATALOG,
    HOSTILE_VALUES,
    IDS,
    ODD_VALUES,
    hostile_copy,
    is_variable,
    make,
    random_mask,
    random_probability,
    scalars_as_arrays,
)
from tests.helpers import all_same_value, assert_same_value, same_rng_state
from vecspaces.error import Error, InvalidValueError, NotFlattenableError
from vecspaces.spaces import Box, MultiBinary, MultiDiscrete, Space, flatdim, flatten, flatten_space, unflatten
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


def test_json_conversions_refuse_odd_data_with_vecspaces_errors(space: Space[Any]) -> None:
    # Either the data converts or the error is one of vecspaces' (naming the space), never a bare TypeError or
    # IndexError from deep inside the conversion.
    for odd in [*ODD_VALUES, *([value] for value in ODD_VALUES), [[object()]], [{"nodes": 1}], [[5, 1]]]:
        for convert in (space.to_jsonable, space.from_jsonable):
            try:
                converted = convert(odd)
            except Error:
                continue
            assert isinstance(converted, (list, dict)), (convert.__name__, odd)  # a Dict's JSON is a dict


@pytest.mark.parametrize("space_id", [i for i in IDS if isinstance(make(i), (Box, MultiBinary, MultiDiscrete))])
def test_json_samples_of_another_shape_are_refused(space_id: str) -> None:
    # Gymnasium hands back an array of the wrong shape: a value outside the space.
    space = make(space_id)
    [sample] = space.to_jsonable(samples(space, count=1))
    for reshaped in ([sample, sample], [[sample]], np.zeros((*space.shape, 1)).tolist()):
        with pytest.raises(InvalidValueError, match=r"from_jsonable got sample 0 of shape"):
            space.from_jsonable([reshaped])


def test_contains_never_raises_on_odd_input(space: Space[Any]) -> None:
    for odd in ODD_VALUES:
        assert space.contains(odd) in (True, False)


def test_contains_never_raises_on_values_whose_dunder_methods_raise(space: Space[Any]) -> None:
    # Objects that break in __array__, comparisons, len, iteration or indexing, alone and inside structures,
    # and the space's own samples re-wrapped in such types.
    for odd in [*HOSTILE_VALUES, *(hostile_copy(x) for x in samples(space, count=2))]:
        assert space.contains(odd) in (True, False), odd


@pytest.mark.parametrize("n", [1, 3])
def test_concatenate_is_in_batch_space(space: Space[Any], n: int) -> None:
    xs = samples(space, count=n)
    batched = concatenate(space, xs, create_empty_array(space, n))
    assert batched in batch_space(space, n)


@pytest.mark.parametrize("n", [1, 3])
def test_iterate_inverts_concatenate(space: Space[Any], n: int) -> None:
    xs = samples(space, count=n)
    batched = concatenate(space, xs, create_empty_array(space, n))
    assert_same_value(scalars_as_arrays(list(iterate(batch_space(space, n), batched))), scalars_as_arrays(xs))


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
    assert any(not all_same_value(row) for row in entries) or _single_valued(space)


def make_same(space: Space[Any]) -> Space[Any]:
    """A fresh catalog space equal to ``space`` (found by repr)."""
    for space_id in IDS:
        candidate = make(space_id)
        if repr(candidate) == repr(space) and candidate == space:
            return candidate
    raise AssertionError(f"{space!r} is not in the catalog")


def _single_valued(space: Space[Any]) -> bool:
    return repr(space) in {repr(CATALOG["discrete_1"]())}
