"""The flatten family (``vecspaces.spaces.utils``) on a custom space kind with nothing registered for it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from vecspaces.error import CustomSpaceError, CustomSpaceNotImplementedError, Error
from vecspaces.spaces import Dict, Discrete, Space, Tuple
from vecspaces.spaces.utils import flatdim, flatten, flatten_space, is_space_dtype_shape_equiv, unflatten
from vecspaces.vector.utils import iterate


class Opaque(Space[Any]):
    """A custom space with no kernels: its values are opaque objects."""

    def __init__(self, seed: Any = None) -> None:
        super().__init__(None, None, seed)

    def sample(self, mask: Any = None, probability: Any = None) -> Any:
        return {"opaque": int(self.np_random.integers(10))}

    def contains(self, x: Any) -> bool:
        return isinstance(x, dict) and "opaque" in x

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Opaque)

    def __repr__(self) -> str:
        return "Opaque()"


OPERATIONS: dict[str, Callable[[Space[Any]], Any]] = {
    "flatdim": flatdim,
    "flatten_space": flatten_space,
    "flatten": lambda space: flatten(space, {"opaque": 1}),
    "unflatten": lambda space: unflatten(space, np.zeros(1)),
    "is_space_dtype_shape_equiv": lambda space: is_space_dtype_shape_equiv(space, space),
}


@pytest.mark.parametrize("name", OPERATIONS)
def test_the_error_is_caught_as_not_implemented_error_like_gymnasium(name: str) -> None:
    with pytest.raises(NotImplementedError, match=rf"^{name} has no implementation .*@{name}\.register\(Opaque\)"):
        OPERATIONS[name](Opaque())


@pytest.mark.parametrize("name", OPERATIONS)
def test_the_error_is_caught_as_type_error_and_custom_space_error(name: str) -> None:
    for kind in (TypeError, CustomSpaceError, Error):
        with pytest.raises(kind) as caught:
            OPERATIONS[name](Opaque())
        assert type(caught.value) is CustomSpaceNotImplementedError


@pytest.mark.parametrize("name", OPERATIONS)
def test_plain_except_clauses_catch_it(name: str) -> None:
    # What user code written for Gymnasium, or for our TypeError, actually looks like.
    try:
        OPERATIONS[name](Opaque())
    except NotImplementedError:
        caught_as_not_implemented = True
    assert caught_as_not_implemented
    try:
        OPERATIONS[name](Opaque())
    except TypeError:
        caught_as_type_error = True
    assert caught_as_type_error


@pytest.mark.parametrize("name", OPERATIONS)
@pytest.mark.parametrize(
    "space", [Tuple((Discrete(2), Opaque())), Dict(a=Tuple((Discrete(2), Opaque())))], ids=["tuple", "dict_of_tuple"]
)
def test_a_nested_custom_space_keeps_the_error_type(name: str, space: Space[Any]) -> None:
    with pytest.raises(NotImplementedError) as caught:
        OPERATIONS[name](space)
    assert type(caught.value) is CustomSpaceNotImplementedError
    if name != "is_space_dtype_shape_equiv":  # the others name where the custom space is
        assert "[1]: flatdim has no implementation" in str(caught.value)


def test_other_operations_keep_raising_plain_custom_space_error() -> None:
    # Gymnasium raises its CustomSpaceError (not NotImplementedError) outside the flatten family.
    with pytest.raises(CustomSpaceError) as caught:
        iterate(Opaque(), [{"opaque": 1}])
    assert not isinstance(caught.value, NotImplementedError)


def test_a_registered_kernel_replaces_the_error() -> None:
    class Registered(Opaque):
        pass

    flatdim.register(Registered)(lambda space: 1)
    assert flatdim(Registered()) == 1
    with pytest.raises(NotImplementedError):
        flatdim(Opaque())


def test_gymnasium_raises_not_implemented_error_too() -> None:
    gym_spaces = pytest.importorskip("gymnasium.spaces")

    class GymOpaque(gym_spaces.Space):  # type: ignore[misc]
        pass

    for operation in (
        gym_spaces.flatdim,
        gym_spaces.flatten_space,
        lambda space: gym_spaces.flatten(space, 1),
        lambda space: gym_spaces.unflatten(space, np.zeros(1)),
        lambda space: gym_spaces.utils.is_space_dtype_shape_equiv(space, space),
    ):
        with pytest.raises(NotImplementedError):
            operation(GymOpaque())
