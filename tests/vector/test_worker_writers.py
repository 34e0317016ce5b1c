"""The worker's observation writers: their fast paths store exactly what the checked write stores, or defer to it.

A writer may only skip the checked write (``SharedBatch.write``) for values it can copy as they are; for
everything else the checked write converts or raises. So for any value the two must leave the same bytes in
shared memory and raise the same error.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import pytest

from tests.catalog import IDS, make
from vecspaces.spaces import Box, Dict, Discrete, MultiBinary, Space, Tuple
from vecspaces.vector._async.writers import observation_writer
from vecspaces.vector.utils import SharedLayout

FIXED_IDS = [space_id for space_id in IDS if not SharedLayout(make(space_id)).variable_leaves]


def stored(space: Space[Any], value: Any, fast: bool) -> tuple[bytes, str | None]:
    """The buffer's bytes after writing ``value`` for env 1 of 2, and the error raised, if any."""
    batch = SharedLayout(space, n=2).allocate()
    write = observation_writer(batch) if fast else batch.write
    try:
        write(1, value)
    except Exception as error:  # the two paths must fail alike, whatever the type
        return bytes(memoryview(batch.buffer).cast("B")), f"{type(error).__name__}: {error}"
    return bytes(memoryview(batch.buffer).cast("B")), None


def assert_writes_alike(space: Space[Any], value: Any) -> None:
    fast, checked = stored(space, value, fast=True), stored(space, value, fast=False)
    assert fast == checked


@pytest.mark.parametrize("space_id", FIXED_IDS)
def test_every_catalog_sample_is_stored_as_the_checked_write_stores_it(space_id: str) -> None:
    space = make(space_id)
    space.seed(0)
    for _ in range(3):
        assert_writes_alike(space, space.sample())


DICT = Dict(pos=Box(-1.0, 1.0, (2,), np.float32), mode=Discrete(5), bits=MultiBinary(3))
TUPLE = Tuple((Box(-1.0, 1.0, (2,), np.float32), Discrete(5), MultiBinary(3)))
POS = np.array([0.5, -0.5], np.float32)
BITS = np.array([1, 0, 1], np.int8)

NEAR_MISSES = {
    "exact": {"pos": POS, "mode": np.int64(3), "bits": BITS},
    "python int": {"pos": POS, "mode": 3, "bits": BITS},
    "python bool": {"pos": POS, "mode": True, "bits": BITS},
    "int beyond int64": {"pos": POS, "mode": 2**70, "bits": BITS},
    "0-d array": {"pos": POS, "mode": np.array(3), "bits": BITS},
    "0-d array of another dtype": {"pos": POS, "mode": np.array(3, np.int8), "bits": BITS},
    "another integer scalar": {"pos": POS, "mode": np.int32(3), "bits": BITS},
    "float for a Discrete": {"pos": POS, "mode": 3.0, "bits": BITS},
    "float64 array": {"pos": POS.astype(np.float64), "mode": 3, "bits": BITS},
    "list for an array": {"pos": [0.5, -0.5], "mode": 3, "bits": BITS},
    "wrong shape": {"pos": np.zeros(3, np.float32), "mode": 3, "bits": BITS},
    "wrong dtype": {"pos": np.array(["a", "b"]), "mode": 3, "bits": BITS},
    "missing key": {"pos": POS, "mode": 3, "other": BITS},
    "extra key": {"pos": POS, "mode": 3, "bits": BITS, "other": 1},
    "dict subclass": OrderedDict(pos=POS, mode=3, bits=BITS),
    "not a dict": [POS, 3, BITS],
    # A leaf off the exact path first, then one that does not fit: nothing may be copied before the refusal.
    "python int, then a wrong shape": {"pos": POS, "mode": 3, "bits": np.zeros(4, np.int8)},
    "0-d array, then a list": {"pos": POS, "mode": np.array(3), "bits": [1, 0, 1]},
}


@pytest.mark.parametrize("value", NEAR_MISSES.values(), ids=NEAR_MISSES.keys())
def test_a_dict_value_off_the_fast_path_is_stored_or_refused_as_the_checked_write_does(value: Any) -> None:
    assert_writes_alike(DICT, value)


@pytest.mark.parametrize("value", NEAR_MISSES.values(), ids=NEAR_MISSES.keys())
def test_a_tuple_value_off_the_fast_path_is_stored_or_refused_as_the_checked_write_does(value: Any) -> None:
    as_tuple = tuple(value.values()) if isinstance(value, dict) else value
    assert_writes_alike(TUPLE, as_tuple)
    assert_writes_alike(TUPLE, as_tuple[:2])


def test_the_fast_path_writes_only_its_env_row() -> None:
    batch = SharedLayout(DICT, n=3).allocate()
    observation_writer(batch)(1, NEAR_MISSES["exact"])
    read = batch.read()
    np.testing.assert_array_equal(read["pos"], [[0, 0], POS, [0, 0]])
    np.testing.assert_array_equal(read["mode"], [0, 3, 0])
    np.testing.assert_array_equal(read["bits"], [[0, 0, 0], BITS, [0, 0, 0]])


@pytest.mark.parametrize(
    ("space", "value"),
    [
        (DICT, NEAR_MISSES["exact"]),
        (DICT, NEAR_MISSES["python int"]),
        (TUPLE, tuple(NEAR_MISSES["0-d array"].values())),
    ],
)
def test_values_of_the_exact_shapes_and_dtypes_skip_the_checked_write(space: Space[Any], value: Any) -> None:
    batch = SharedLayout(space, n=2).allocate()

    def checked_write(index: int, value: Any) -> tuple[Any, ...]:
        raise AssertionError("the checked write was called")

    batch.write = checked_write  # type: ignore[method-assign]
    observation_writer(batch)(1, value)
