"""The support table (vecspaces._kernels.support, its data in vecspaces._ops.support) agrees with the implementations.

Every (operation, kind) pair is run on a catalog space of that kind: a supported pair must not raise; an
unsupported one must raise the listed error with the listed reason in its message. Pairs supported under a
condition are also run on a space that breaks the condition.
"""

from __future__ import annotations

from collections.abc import Callable
from copy import deepcopy
from typing import Any

import numpy as np
import pytest

from tests.catalog import make
from tests.helpers import Opaque
from vecspaces._kernels import support as table
from vecspaces._ops.memory_nodes import VariableLeaf, layout_nodes
from vecspaces.error import CustomSpaceError
from vecspaces.spaces import (
    Box,
    Dict,
    Discrete,
    Graph,
    OneOf,
    Sequence,
    Space,
    Text,
    Tuple,
    flatdim,
    flatten,
    flatten_space,
    unflatten,
)
from vecspaces.spaces.utils import is_space_dtype_shape_equiv
from vecspaces.vector.utils import (
    batch_differing_spaces,
    batch_space,
    concatenate,
    create_empty_array,
    create_shared_memory,
    iterate,
    read_from_shared_memory,
    write_to_shared_memory,
)

# One catalog space per kind, with nested and non-default parts where the catalog has them.
EXAMPLES: dict[str, Callable[[], Space[Any]]] = {
    "Box": lambda: make("box_f64_2d"),
    "Discrete": lambda: make("discrete_neg"),
    "MultiBinary": lambda: make("multibinary_2d"),
    "MultiDiscrete": lambda: make("multidiscrete_start"),
    "Text": lambda: make("text_unicode"),
    "Dict": lambda: make("dict_nested"),
    "Tuple": lambda: make("tuple_nested"),
    "Sequence": lambda: make("sequence_stack_dict"),
    "Graph": lambda: make("graph"),
    "OneOf": lambda: make("oneof_mixed"),
    table.CUSTOM: Opaque,
}

# Spaces of a kind that break the kind's condition (table.CONDITIONS).
BREAKING_CONDITION: dict[tuple[str, str], Callable[[], Space[Any]]] = {
    ("flatdim", "Dict"): lambda: make("dict_with_variable"),
    ("flatdim", "Tuple"): lambda: make("tuple_of_oneof_sequence"),
    ("flatdim", "OneOf"): lambda: OneOf((Discrete(2), Sequence(Discrete(3)))),
    ("iterate", "Box"): lambda: make("box_scalar"),  # shape (): not a batch
    (table.SHARED_MEMORY, "Dict"): lambda: make("dict_with_variable"),
    (table.SHARED_MEMORY, "Tuple"): lambda: make("tuple_of_oneof_sequence"),
    (table.SHARED_MEMORY, "OneOf"): lambda: OneOf((Discrete(2), Graph(Discrete(2), None))),
}


def _unflatten(space: Space[Any]) -> Any:
    value = space.sample()
    flat = flatten(space, value) if table.support("flatten", type(space)).supported else value
    return unflatten(space, flat)


def _iterate(space: Space[Any]) -> list[Any]:
    # iterate takes a batched space: the batch of ``space`` when it is of the same kind, else ``space``
    # itself taken as a batch (a MultiBinary or MultiDiscrete value is the batch of its entries).
    batched = batch_space(space, 2)
    if type(batched) is type(space):
        batch = concatenate(space, [space.sample(), space.sample()], create_empty_array(space, 2))
        return list(iterate(batched, batch))
    return list(iterate(space, space.sample()))


def _shared_memory(space: Space[Any]) -> Any:
    memory = create_shared_memory(space, 2)
    write_to_shared_memory(space, 1, space.sample(), memory)
    return read_from_shared_memory(space, memory, 2)


RUNNERS: dict[str, Callable[[Space[Any]], Any]] = {
    "flatdim": flatdim,
    "flatten_space": flatten_space,
    "flatten": lambda space: flatten(space, space.sample()),
    "unflatten": _unflatten,
    "is_space_dtype_shape_equiv": lambda space: is_space_dtype_shape_equiv(space, deepcopy(space)),
    "batch_space": lambda space: batch_space(space, 2),
    "batch_differing_spaces": lambda space: batch_differing_spaces([space, deepcopy(space)]),
    "concatenate": lambda space: concatenate(space, [space.sample(), space.sample()], create_empty_array(space, 2)),
    "iterate": _iterate,
    "create_empty_array": lambda space: create_empty_array(space, 2),
    table.SHARED_MEMORY: _shared_memory,
}

CELLS = table.support_table()


def test_the_table_covers_every_operation_and_kind() -> None:
    assert set(RUNNERS) == set(table.OPERATIONS)
    assert set(EXAMPLES) == set(table.KINDS)
    assert {(cell.operation, cell.kind) for cell in CELLS} == {
        (operation, kind) for operation in table.OPERATIONS for kind in table.KINDS
    }
    listed = set(table.UNSUPPORTED) | set(table.CONDITIONS)
    assert listed <= {(cell.operation, cell.kind) for cell in CELLS}
    assert not set(table.UNSUPPORTED) & set(table.CONDITIONS)


@pytest.mark.parametrize("cell", CELLS, ids=lambda cell: f"{cell.operation}-{cell.kind}")
def test_every_pair_works_or_raises_its_documented_error(cell: table.Support) -> None:
    space = EXAMPLES[cell.kind]()
    space.seed(0)
    run = RUNNERS[cell.operation]
    if cell.supported:
        result = run(space)
        if cell.operation == "is_space_dtype_shape_equiv":
            assert result is True
        if cell.operation == "iterate":
            assert len(result) == (len(space.sample()) if cell.kind in ("MultiBinary", "MultiDiscrete") else 2)
    else:
        assert cell.error is not None and cell.reason
        with pytest.raises(cell.error) as info:
            run(space)
        assert cell.reason in str(info.value)


@pytest.mark.parametrize("pair", list(table.CONDITIONS), ids="-".join)
def test_a_space_breaking_a_condition_raises_the_documented_error(pair: tuple[str, str]) -> None:
    operation, kind = pair
    space = BREAKING_CONDITION[pair]()
    assert table.kind_of(type(space)) == kind
    # iterate is given the space itself as the batched space, so the condition is on it.
    run = (lambda space: list(iterate(space, space.sample()))) if operation == "iterate" else RUNNERS[operation]
    with pytest.raises(table.CONDITIONS[pair].error):
        run(space)


def test_built_in_kinds_register_a_kernel_for_every_operation() -> None:
    # The rule for kernel modules: an operation a space does not support still has a kernel, which raises
    # the documented error; none of them falls back to the custom-space default.
    for operation in table.OPERATIONS:
        function = table.registries()[operation]
        for kind, cls in table.kind_classes().items():
            assert cls in function.registry, (operation, kind)  # type: ignore[attr-defined]


def test_supported_is_read_from_the_registries() -> None:
    class Registered(Space[Any]):
        pass

    assert not table.support("flatdim", Registered).supported
    assert not table.support(table.SHARED_MEMORY, Registered).supported
    flatdim.register(Registered)(lambda space: 0)
    layout_nodes.register(Registered)(lambda space, path=(): [VariableLeaf(path, space)])
    assert table.support("flatdim", Registered).supported
    assert table.support(table.SHARED_MEMORY, Registered).supported
    assert flatdim(Registered()) == 0


def test_a_subclass_of_a_built_in_kind_follows_its_kind_unless_it_registers_its_own() -> None:
    class MyText(Text):
        pass

    assert table.kind_of(MyText) == "Text"
    assert table.support("iterate", MyText) == table.support("iterate", Text)
    assert not table.support("iterate", MyText).supported
    iterate.register(MyText)(lambda space, items: iter(items))
    assert table.support("iterate", MyText).supported
    assert list(iterate(MyText(3), ("a", "b"))) == ["a", "b"]


def test_custom_space_rule_moves_opaque_values() -> None:
    space = Opaque(seed=1)
    items = [space.sample(), space.sample()]
    batched = batch_space(space, 2)
    assert isinstance(batched, Tuple) and all(isinstance(copy, Opaque) for copy in batched)
    assert create_empty_array(space, 2) == (None, None)
    batch = concatenate(space, items, create_empty_array(space, 2))
    assert list(iterate(batched, batch)) == items
    with pytest.raises(CustomSpaceError):
        iterate(space, batch)


def test_render_lists_every_operation_kind_and_reason() -> None:
    text = table.render_support_table()
    lines = text.splitlines()
    assert lines[0].split()[1:] == ["custom" if kind == table.CUSTOM else kind for kind in table.KINDS]
    rows = {line.split()[0]: line.split()[1:] for line in lines[1 : 1 + len(table.OPERATIONS)] if line}
    assert rows["flatdim"][table.KINDS.index("Sequence")] == "no"
    assert rows["flatdim"][table.KINDS.index("Dict")] == "yes*"
    assert rows["batch_space"] == ["yes"] * len(table.KINDS)
    for entry in table.UNSUPPORTED.values():
        assert entry.reason in text
    for condition in table.CONDITIONS.values():
        assert condition.condition in text


def test_dict_and_box_examples_are_what_the_table_says() -> None:
    # A spot check of the derived cells against the spaces themselves.
    assert table.support("flatdim", Dict).reason == table.CONDITIONS["flatdim", "Dict"].condition
    assert table.support("concatenate", Box).supported
    assert not table.support("flatdim", Sequence).supported
    assert table.support("flatdim", Sequence).error is table.UNSUPPORTED["flatdim", "Sequence"].error
    assert np.ndim(flatdim(make("dict_nested"))) == 0


def test_every_built_in_concatenate_kernel_has_a_check_phase() -> None:
    # A Dict or Tuple checks every child before any writes only through the children's check phases
    # (vecspaces._ops.batch.register_concatenate); a built-in kernel without one would break that guarantee.
    from vecspaces._ops.batch import preparers

    for kind, cls in table.kind_classes().items():
        assert concatenate.dispatch(cls) in preparers(), kind
    assert concatenate.registry[object] in preparers()  # the custom-space rule writes nothing
