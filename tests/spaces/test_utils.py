"""The flatten family (``vecspaces.spaces.utils``) on a custom space kind with nothing registered for it.

Nested inside other spaces, the custom space is named by its full path, e.g. ``space['a'][1].feature_space``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from tests.helpers import Opaque
from vecspaces.error import (
    CustomSpaceError,
    CustomSpaceNotImplementedError,
    Error,
    InvalidTypeError,
    NotFlattenableError,
)
from vecspaces.spaces import Dict, Discrete, Graph, GraphInstance, OneOf, Sequence, Space, Tuple
from vecspaces.spaces.utils import flatdim, flatten, flatten_space, is_space_dtype_shape_equiv, unflatten
from vecspaces.vector.utils import iterate

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
    root = "space_1" if name == "is_space_dtype_shape_equiv" else "space"
    path = "[1]" if isinstance(space, Tuple) else "['a'][1]"
    assert str(caught.value).startswith(f"{root}{path}: ")


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

    class GymOpaque(gym_spaces.Space):  # type: ignore[name-defined]  # gym_spaces is a module found at run time
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


# Nested custom spaces: every operation names the custom space's full path.


@dataclass(frozen=True)
class Nested:
    """A space holding an Opaque somewhere inside, with values to call flatten and unflatten with."""

    space: Space[Any]
    path: str  # where the Opaque is, after the root (``space`` or ``space_1``)
    value: Any  # for flatten
    flat: Any  # for unflatten: the structure flatten would keep, wherever it gets that far
    variable: bool  # a Sequence or Graph lies on the way, so flatdim is undefined before the Opaque matters


LEAF = Nested(Opaque(), "", {"opaque": 1}, {"opaque": 1}, False)
# Graph values are never looked at: flatten and unflatten flatten the node space first, which fails.
GRAPH_VALUE = GraphInstance(np.zeros(1), None, None)

# Each puts a Nested one level down and says how the path names that level.
WRAPPERS: dict[str, Callable[[Nested], Nested]] = {
    "dict": lambda inner: Nested(
        Dict(a=inner.space), "['a']" + inner.path, {"a": inner.value}, {"a": inner.flat}, inner.variable
    ),
    "tuple": lambda inner: Nested(
        Tuple((Discrete(2), inner.space)),
        "[1]" + inner.path,
        (0, inner.value),
        (flatten(Discrete(2), 0), inner.flat),
        inner.variable,
    ),
    "sequence": lambda inner: Nested(
        Sequence(inner.space), ".feature_space" + inner.path, (inner.value,), (inner.flat,), True
    ),
    "graph": lambda inner: Nested(Graph(inner.space, None), ".node_space" + inner.path, GRAPH_VALUE, GRAPH_VALUE, True),
    "oneof": lambda inner: Nested(
        OneOf([Discrete(2), inner.space]), "[1]" + inner.path, (1, inner.value), (1, inner.flat), inner.variable
    ),
}

# Every kind and pair of kinds, and triples with every kind at every depth (same-kind and rotated).
KINDS = list(WRAPPERS)
CHAINS = [
    *[(kind,) for kind in KINDS],
    *itertools.product(KINDS, repeat=2),
    *[(kind,) * 3 for kind in KINDS],
    *[tuple(KINDS[(start + step) % len(KINDS)] for step in range(3)) for start in range(len(KINDS))],
]


def nest(chain: tuple[str, ...]) -> Nested:
    """The Opaque wrapped by ``chain``, outermost first."""
    nested = LEAF
    for kind in reversed(chain):
        nested = WRAPPERS[kind](nested)
    return nested


NESTED_OPERATIONS: dict[str, Callable[[Nested], Any]] = {
    "flatdim": lambda nested: flatdim(nested.space),
    "flatten_space": lambda nested: flatten_space(nested.space),
    "flatten": lambda nested: flatten(nested.space, nested.value),
    "unflatten": lambda nested: unflatten(nested.space, nested.flat),
    "is_space_dtype_shape_equiv": lambda nested: is_space_dtype_shape_equiv(nested.space, nested.space),
}

# What the message says after the path: an operation (the one called or one it needs) and how to register it.
NO_IMPLEMENTATION = re.compile(r"^\w+ has no implementation for this kind of space .*@\w+\.register\(Opaque\)$")


@pytest.mark.parametrize("name", NESTED_OPERATIONS)
@pytest.mark.parametrize("chain", CHAINS, ids="-".join)
def test_a_nested_custom_space_is_named_by_its_full_path(name: str, chain: tuple[str, ...]) -> None:
    nested = nest(chain)
    if name == "flatdim" and nested.variable:
        # A Sequence or Graph has no flat size whatever it holds: that is the error, as for built-in leaves.
        with pytest.raises(NotFlattenableError):
            flatdim(nested.space)
        return
    with pytest.raises(CustomSpaceNotImplementedError) as caught:
        NESTED_OPERATIONS[name](nested)
    root = "space_1" if name == "is_space_dtype_shape_equiv" else "space"
    where, _, rest = str(caught.value).partition(": ")
    assert where == root + nested.path
    assert NO_IMPLEMENTATION.match(rest), rest


def test_the_paths_read_as_python_indexing_of_the_space() -> None:
    nested = nest(("dict", "oneof", "sequence", "tuple", "graph"))
    assert nested.path == "['a'][1].feature_space[1].node_space"
    with pytest.raises(CustomSpaceNotImplementedError, match=re.escape(f"space{nested.path}: flatten_space has")):
        flatten_space(nested.space)
    outer: Any = nested.space  # indexed as the path says, whatever the static types of the parts
    assert outer["a"][1].feature_space[1].node_space == Opaque()


def test_a_graph_edge_space_is_named() -> None:
    space = Dict(a=Graph(Discrete(2), Opaque()))
    operations: list[tuple[Callable[[Space[Any]], Any], str]] = [
        (flatten_space, "space"),
        (lambda s: is_space_dtype_shape_equiv(s, s), "space_1"),
    ]
    for operation, root in operations:
        with pytest.raises(CustomSpaceNotImplementedError, match=re.escape(f"{root}['a'].edge_space: ")):
            operation(space)


class Unflattenable(Opaque):
    """A custom space that says it has no flat form, so a Dict holding it keeps its structure."""

    @property
    def is_np_flattenable(self) -> bool:
        return False


@pytest.mark.parametrize("name", ["flatten", "unflatten"])
def test_the_path_of_a_custom_space_starts_at_the_space_not_the_value(name: str) -> None:
    # Here the flat layout builds (nothing to size), and the custom child first fails on the value itself.
    space = Dict(a=Tuple((Discrete(2), Unflattenable())))
    operation = flatten if name == "flatten" else unflatten
    value = {"a": (0, {"opaque": 1})} if name == "flatten" else {"a": (flatten(Discrete(2), 0), {"opaque": 1})}
    with pytest.raises(CustomSpaceNotImplementedError, match=re.escape(f"space['a'][1]: {name} has no")):
        operation(space, value)


def test_a_custom_space_put_into_a_flattened_container_later_is_named_by_its_full_path() -> None:
    inner = Dict(b=Discrete(2))
    space = Dict(a=inner)
    assert flatdim(space) == 2  # the flat layouts of both Dicts are built and cached
    inner["b"] = Opaque()
    with pytest.raises(CustomSpaceNotImplementedError, match=re.escape("space['a']['b']: flatdim has no")):
        flatdim(space)


def test_a_registered_custom_branch_needs_no_is_np_flattenable() -> None:
    class Sized(Opaque):
        pass

    flatdim.register(Sized)(lambda space: 3)
    flatten_space.register(Sized)(lambda space: flatten_space(Tuple((Discrete(3),))))
    # OneOf used to ask the branch's is_np_flattenable, which a custom space need not define.
    assert flatdim(OneOf([Discrete(2), Sized()])) == 4


# A non-space argument.

FAMILY: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "flatdim": ("space", flatdim),
    "flatten_space": ("space", flatten_space),
    "flatten": ("space", lambda space: flatten(space, 0)),
    "unflatten": ("space", lambda space: unflatten(space, np.zeros(2))),
    "is_space_dtype_shape_equiv": ("space_1", lambda space: is_space_dtype_shape_equiv(space, space)),
}


@pytest.mark.parametrize("name", FAMILY)
def test_another_non_space_gets_no_gymnasium_hint(name: str) -> None:
    argument, operation = FAMILY[name]
    with pytest.raises(InvalidTypeError) as caught:
        operation("Discrete(2)")
    assert str(caught.value) == (
        f"{name} was given a non-space as {argument}, expected a vecspaces Space, got 'Discrete(2)' (str)"
    )
