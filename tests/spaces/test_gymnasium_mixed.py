"""Gymnasium spaces given to vecspaces: the operations convert them, and equality compares them by value."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tests.catalog import CATALOG, GYMNASIUM_IDS, make
from tests.helpers import assert_same_value
from vecspaces._ops.dispatch import lookup
from vecspaces.error import CustomSpaceError, NotFlattenableError
from vecspaces.spaces import (
    Box,
    Dict,
    Discrete,
    Graph,
    MultiBinary,
    MultiDiscrete,
    OneOf,
    Sequence,
    Space,
    Text,
    Tuple,
    flatdim,
    flatten,
    flatten_space,
    to_gymnasium,
    unflatten,
)
from vecspaces.spaces.utils import is_space_dtype_shape_equiv
from vecspaces.vector.utils import batch_differing_spaces, batch_space, concatenate, create_empty_array, iterate

gym = pytest.importorskip("gymnasium.spaces")

KINDS = [Box, Discrete, MultiBinary, MultiDiscrete, Text, Dict, Tuple, Sequence, Graph, OneOf]
# The operations dispatched through vecspaces._ops.dispatch, whose fallback converts Gymnasium spaces.
DISPATCHED = [flatdim, flatten_space, flatten, unflatten, is_space_dtype_shape_equiv, batch_space, concatenate, iterate]


def is_ours(space: Any) -> bool:
    return isinstance(space, Space) and type(space).__module__.startswith("vecspaces.")


@pytest.fixture(params=GYMNASIUM_IDS)
def pair(request: pytest.FixtureRequest) -> tuple[Space[Any], Any]:
    space = make(request.param)
    space.seed(0)
    return space, to_gymnasium(space)  # the Gymnasium form has a copy of the generator


# --- the operations accept Gymnasium spaces -----------------------------------------------------------------


def test_flatdim_and_flatten_space(pair: tuple[Space[Any], Any]) -> None:
    space, gym_space = pair
    if space.is_np_flattenable:
        assert flatdim(gym_space) == flatdim(space)
    else:
        with pytest.raises(NotFlattenableError):
            flatdim(gym_space)
    flat_space = flatten_space(gym_space)
    assert is_ours(flat_space) and flat_space == flatten_space(space)


def test_flatten_and_unflatten(pair: tuple[Space[Any], Any]) -> None:
    space, gym_space = pair
    for _ in range(3):
        x = space.sample()
        flat = flatten(gym_space, x)
        assert_same_value(flat, flatten(space, x))
        assert_same_value(unflatten(gym_space, flat), unflatten(space, flat))


def test_is_space_dtype_shape_equiv_converts_every_gymnasium_argument(pair: tuple[Space[Any], Any]) -> None:
    space, gym_space = pair
    assert is_space_dtype_shape_equiv(gym_space, gym_space)
    assert is_space_dtype_shape_equiv(gym_space, space)
    assert is_space_dtype_shape_equiv(gym_space, space_2=gym_space)
    other = Box(0.0, 1.0) if isinstance(space, Discrete) else Discrete(7, start=-3)
    assert not is_space_dtype_shape_equiv(gym_space, to_gymnasium(other))


def test_is_space_dtype_shape_equiv_with_a_gymnasium_second_argument(pair: tuple[Space[Any], Any]) -> None:
    space, gym_space = pair
    assert is_space_dtype_shape_equiv(space, gym_space)
    other = Box(0.0, 1.0) if isinstance(space, Discrete) else Discrete(7, start=-3)
    assert not is_space_dtype_shape_equiv(space, to_gymnasium(other))


@pytest.mark.parametrize("n", [1, 3])
def test_batch_space_concatenate_and_iterate(pair: tuple[Space[Any], Any], n: int) -> None:
    space, gym_space = pair
    batched = batch_space(gym_space, n)
    expected = batch_space(space, n)
    assert is_ours(batched) and batched == expected
    assert_same_value(batched.sample(), expected.sample())  # the same generator state, copied twice
    xs = [space.sample() for _ in range(n)]
    batch = concatenate(gym_space, xs, create_empty_array(space, n))
    assert_same_value(batch, concatenate(space, xs, create_empty_array(space, n)))
    assert_same_value(list(iterate(to_gymnasium(expected), batch)), list(iterate(expected, batch)))


def test_create_empty_array_converts() -> None:
    space = Dict(a=Box(0.0, 1.0, (2,)), b=Discrete(3))
    assert_same_value(create_empty_array(to_gymnasium(space), 2), create_empty_array(space, 2))


def test_batch_differing_spaces_converts() -> None:
    spaces = [Discrete(2), Discrete(3, start=1)]
    assert batch_differing_spaces([to_gymnasium(space) for space in spaces]) == batch_differing_spaces(spaces)


# --- how the fallback is found ------------------------------------------------------------------------------


@pytest.mark.parametrize("operation", DISPATCHED, ids=lambda operation: operation.__name__)
def test_vecspaces_kinds_keep_their_registered_implementation(operation: Any) -> None:
    find = lookup(operation)
    for kind in KINDS:
        assert find(kind) is operation.dispatch(kind), kind.__name__  # no wrapper on the vecspaces path
    default = operation.registry[object]
    converting = find(gym.Box)
    assert converting is not default and find(gym.Box) is converting  # made once, then cached


def test_a_registered_implementation_for_a_gymnasium_class_wins() -> None:
    class Special(gym.Discrete):  # type: ignore[misc]
        pass

    flatdim.register(Special)(lambda space: 42)
    assert flatdim(Special(3)) == 42
    assert flatdim(gym.Discrete(3)) == 3


class Maze(gym.Space):  # type: ignore[misc]
    """A custom Gymnasium space kind with no vecspaces counterpart."""


@pytest.mark.parametrize(
    ("call", "where"),
    [
        (lambda: flatdim(gym.Dict(a=gym.Tuple([gym.Discrete(2), Maze()]))), r"flatdim .* at space\['a'\]\[1\]"),
        (lambda: batch_space(Maze(), 2), r"batch_space .* at space; build the vecspaces.spaces equivalent"),
        (lambda: is_space_dtype_shape_equiv(gym.Discrete(2), Maze()), r"is_space_dtype_shape_equiv .* at space_2"),
    ],
    ids=["nested", "top", "second_argument"],
)
def test_a_custom_gymnasium_kind_is_named_with_the_operation_and_argument(call: Callable[[], Any], where: str) -> None:
    with pytest.raises(CustomSpaceError, match=r"cannot convert the custom space kind Maze") as caught:
        call()
    assert caught.match(where)


@pytest.mark.timeout(60)
def test_vecspaces_does_not_import_gymnasium() -> None:
    script = (
        "import sys\n"
        "import vecspaces\n"
        "from vecspaces.spaces import Box, Dict, Discrete, flatdim\n"
        "from vecspaces.vector.utils import batch_space\n"
        "space = Dict(a=Box(0, 1, (2,)), b=Discrete(3))\n"
        "assert flatdim(space) == 5 and batch_space(space, 2) == batch_space(space, 2)\n"
        "assert space != 3 and space != Box(0, 1, (2,))\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] == 'gymnasium'))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


# --- equality -----------------------------------------------------------------------------------------------


def test_a_space_equals_its_gymnasium_form(pair: tuple[Space[Any], Any]) -> None:
    space, gym_space = pair
    assert space == gym_space
    assert (space != gym_space) is False
    # Gymnasium's __eq__ decides this one: it accepts the vecspaces space as one of its own kind.
    assert gym_space == space


def test_equality_with_gymnasium_forms_is_equality_between_vecspaces_spaces() -> None:
    spaces = {space_id: CATALOG[space_id]() for space_id in GYMNASIUM_IDS}
    gym_forms = {space_id: to_gymnasium(space) for space_id, space in spaces.items()}
    for id_a, a in spaces.items():
        for id_b, b in spaces.items():
            assert (a == gym_forms[id_b]) == (a == b), f"{id_a} == {id_b}"


def test_equality_ignores_what_vecspaces_ignores() -> None:
    assert Box(0, 1, (2,)) == gym.Box(0.0, 1.0 + 1e-9, (2,))  # float bounds: allclose
    assert Dict(a=Discrete(2), b=Text(3)) == gym.Dict({"b": gym.Text(3), "a": gym.Discrete(2)})  # key order
    assert Text(2, charset="ab") == gym.Text(2, charset="ba")  # the set of characters
    assert Tuple([Discrete(2)]) != gym.Tuple([gym.Discrete(2, start=1)])
    assert Sequence(Discrete(2), stack=True) != gym.Sequence(gym.Discrete(2))


def test_a_gymnasium_space_without_a_vecspaces_form_is_unequal() -> None:
    assert Discrete(2) != Maze()
    assert Tuple([Discrete(2)]) != gym.Tuple([Maze()])
    assert Box(0, 1, (2,)) != gym.Space()


@pytest.mark.parametrize("kind", KINDS, ids=lambda kind: kind.__name__)
def test_hashing_is_unchanged(kind: type) -> None:
    assert kind.__hash__ is None  # compared by value and mutable: unhashable, like Gymnasium's
    assert isinstance(hash(Space()), int)  # the base class keeps identity equality and hash


def test_membership_in_a_list_asks_the_lists_items() -> None:
    # ``x in [item]`` calls ``item == x``, so Gymnasium's __eq__ decides the second.
    assert gym.Box(0, 1, (2,), np.float32) in [Box(0, 1, (2,), np.float32)]
    assert Box(0, 1, (2,), np.float32) in [gym.Box(0, 1, (2,), np.float32)]
