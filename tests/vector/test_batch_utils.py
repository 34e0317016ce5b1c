"""create_empty_array with n=0, and the checks of concatenate's fast paths (count, shape, dtype, index named)."""

from __future__ import annotations

import re
from abc import ABC
from typing import Any

import numpy as np
import pytest

from tests.catalog import IDS, make
from vecspaces.error import CustomSpaceError, InvalidValueError
from vecspaces.spaces import Box, Dict, MultiDiscrete, Space, Tuple
from vecspaces.vector.utils import batch_space, concatenate, create_empty_array, iterate


def _leaves(space: Space[Any], value: Any) -> list[Any]:
    """The batched leaves of a batch of ``space``: one per child of a Dict or Tuple, recursively."""
    if isinstance(space, Dict):
        return [leaf for key, child in space.items() for leaf in _leaves(child, value[key])]
    if isinstance(space, Tuple):
        return [leaf for child, item in zip(space, value, strict=True) for leaf in _leaves(child, item)]
    return [value]


# --- create_empty_array(space, 0) ---------------------------------------------------------------------------


@pytest.mark.parametrize("space_id", IDS)
def test_create_empty_array_of_zero_envs_has_the_structure_of_a_batch_with_no_entries(space_id: str) -> None:
    space = make(space_id)
    empty = create_empty_array(space, 0)
    two = create_empty_array(space, 2)
    assert type(empty) is type(two)
    for leaf, full in zip(_leaves(space, empty), _leaves(space, two), strict=True):
        if isinstance(full, np.ndarray):
            assert isinstance(leaf, np.ndarray)
            assert leaf.shape == (0, *full.shape[1:]) and leaf.dtype == full.dtype
        else:
            assert leaf == ()


def test_create_empty_array_of_zero_envs_passes_fn_the_empty_shape() -> None:
    calls: list[tuple[Any, ...]] = []

    def fn(shape: tuple[int, ...], dtype: Any) -> np.ndarray[Any, Any]:
        calls.append((shape, np.dtype(dtype)))
        return np.ones(shape, dtype)

    create_empty_array(Dict(a=Box(0, 1, (2, 3), np.float16), b=MultiDiscrete([2, 3])), 0, fn)
    assert calls == [((0, 2, 3), np.dtype(np.float16)), ((0, 2), np.dtype(np.int64))]


def test_create_empty_array_of_zero_envs_for_a_custom_space_is_an_empty_tuple() -> None:
    class Opaque(Space[Any]):
        pass

    assert create_empty_array(Opaque(), 0) == ()
    assert create_empty_array(Opaque(), 2) == (None, None)


@pytest.mark.parametrize("space_id", ["box_f32", "discrete_2", "text", "dict_nested", "sequence", "graph", "oneof"])
@pytest.mark.parametrize("n", [-1, 1.0, True, "0", None])
def test_create_empty_array_rejects_batch_sizes_that_are_not_ints_above_zero(space_id: str, n: Any) -> None:
    with pytest.raises(InvalidValueError, match=re.escape("expected an int >= 0")):
        create_empty_array(make(space_id), n)


@pytest.mark.parametrize("space_id", ["box_f32", "discrete_2", "text", "dict", "sequence", "oneof"])
def test_batch_space_still_rejects_an_empty_batch(space_id: str) -> None:
    with pytest.raises(InvalidValueError, match=re.escape("expected an int >= 1")):
        batch_space(make(space_id), 0)


# --- the dispatcher of the batching family ------------------------------------------------------------------


def test_a_kernel_registered_after_a_call_is_used_by_the_next_call() -> None:
    class Late(Space[Any]):
        pass

    space = Late()
    assert concatenate(space, [1, 2], None) == (1, 2)  # the custom-space rule, now cached for Late
    concatenate.register(Late)(lambda space, items, out: "late kernel")
    assert concatenate(space, [1, 2], None) == "late kernel"

    @concatenate.register
    def _(space: LateChild, items: Any, out: Any) -> str:
        return "annotated kernel"

    assert concatenate(LateChild(), [], None) == "annotated kernel"
    assert concatenate.dispatch(LateChild) is _


class LateChild(Space[Any]):
    pass


def test_abc_registration_after_a_call_changes_the_dispatch() -> None:
    class Marker(ABC):  # noqa: B024 (a marker ABC with no abstract method)
        pass

    class Plain(Space[Any]):
        pass

    iterate.register(Marker)(lambda space, items: iter(["marker kernel"]))  # type: ignore[misc]
    with pytest.raises(CustomSpaceError):
        iterate(Plain(), ())
    Marker.register(Plain)
    assert list(iterate(Plain(), ())) == ["marker kernel"]


def test_the_dispatcher_keeps_the_functools_api() -> None:
    assert concatenate.registry[Box] is concatenate.dispatch(Box)
    assert concatenate.dispatch(Box).__name__ == "_concatenate_box"
    assert concatenate.__doc__ and getattr(concatenate, "__name__", "") == "concatenate"
    with pytest.raises(TypeError, match="at least 1 positional argument"):
        concatenate()  # type: ignore[call-arg]
