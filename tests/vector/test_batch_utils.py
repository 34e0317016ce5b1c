"""create_empty_array with n=0, and the checks of concatenate's fast paths (count, shape, dtype, index named)."""

from __future__ import annotations

import re
from abc import ABC
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tests.catalog import IDS, make
from vecspaces.error import CustomSpaceError, InvalidTypeError, InvalidValueError
from vecspaces.spaces import Box, Dict, Discrete, MultiBinary, MultiDiscrete, Space, Text, Tuple
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


# --- concatenate: the fast path gives np.stack's results, the checked path names the offending item --------

ARRAY_SPACES: dict[str, Callable[[], Space[Any]]] = {
    "box": lambda: Box(-1.0, 1.0, (3,), np.float32),
    "box_scalar": lambda: Box(0, 9, (), np.int64),
    "discrete": lambda: Discrete(4, start=-1),
    "multibinary": lambda: MultiBinary((2, 2)),
    "multidiscrete": lambda: MultiDiscrete([3, 4]),
}


@pytest.mark.parametrize("name", list(ARRAY_SPACES))
def test_concatenate_fills_out_like_np_stack(name: str) -> None:
    space = ARRAY_SPACES[name]()
    space.seed(3)
    items = [space.sample() for _ in range(4)]
    out = create_empty_array(space, 4)
    assert concatenate(space, items, out) is out
    np.testing.assert_array_equal(out, np.stack(items))
    assert out.dtype == space.dtype
    # Lists and other dtypes go through the checked path, with the same result.
    converted = [np.asarray(item).tolist() for item in items]
    again = concatenate(space, converted, create_empty_array(space, 4))
    np.testing.assert_array_equal(again, out)


def test_concatenate_casts_within_a_kind_as_np_stack_does() -> None:
    space = Box(-1.0, 1.0, (2,), np.float32)
    items = [np.array([0.5, -0.25]), np.array([1.0, 0.0])]  # float64
    np.testing.assert_array_equal(concatenate(space, items, create_empty_array(space, 2)), np.stack(items))


def test_concatenate_of_an_empty_batch_returns_the_empty_out() -> None:
    for name in ARRAY_SPACES:
        space = ARRAY_SPACES[name]()
        out = create_empty_array(space, 0)
        assert concatenate(space, [], out) is out
    container = Dict(a=Box(0, 1, (2,)), b=Discrete(3))
    batch = concatenate(container, [], create_empty_array(container, 0))
    assert batch["a"].shape == (0, 2) and batch["b"].shape == (0,)


@pytest.mark.parametrize("name", list(ARRAY_SPACES))
def test_concatenate_rejects_the_wrong_number_of_items(name: str) -> None:
    space = ARRAY_SPACES[name]()
    items = [space.sample() for _ in range(3)]
    for count in (2, 4):
        with pytest.raises(InvalidValueError, match="wrong number of items"):
            concatenate(space, (items * 2)[:count], create_empty_array(space, 3))


@pytest.mark.parametrize("name", list(ARRAY_SPACES))
def test_concatenate_names_the_item_of_the_wrong_shape(name: str) -> None:
    space = ARRAY_SPACES[name]()
    good = space.sample()
    bad = np.zeros((1, *np.shape(good)), dtype=space.dtype)
    with pytest.raises(InvalidValueError, match=re.escape("at items[2]")) as info:
        concatenate(space, [good, good, bad], create_empty_array(space, 3))
    assert "wrong shape" in str(info.value)
    # Items that numpy would broadcast into the rows are refused too.
    if np.shape(good):
        small = np.zeros((1,) * len(np.shape(good)), dtype=space.dtype)
        with pytest.raises(InvalidValueError, match=re.escape("at items[0]")):
            concatenate(space, [small] * 3, create_empty_array(space, 3))


@pytest.mark.parametrize("name", ["box_scalar", "discrete", "multibinary", "multidiscrete"])
def test_concatenate_names_the_item_of_a_dtype_out_cannot_hold(name: str) -> None:
    space = ARRAY_SPACES[name]()
    good = space.sample()
    bad = np.asarray(good).astype(np.float64) + 0.5
    out = create_empty_array(space, 3)
    before = out.copy()
    with pytest.raises(InvalidTypeError, match=re.escape("at items[1]")):
        concatenate(space, [good, bad, good], out)
    np.testing.assert_array_equal(out, before)  # nothing written


def test_concatenate_of_a_container_names_the_path_of_a_bad_item() -> None:
    space = Dict(a=Box(0.0, 1.0, (3,), np.float32), b=Tuple((Discrete(3), MultiBinary(2))))
    good = space.sample()
    out = create_empty_array(space, 2)
    wrong_shape = {"a": np.zeros(2, np.float32), "b": good["b"]}
    with pytest.raises(InvalidValueError, match=re.escape("space['a']")) as info:
        concatenate(space, [good, wrong_shape], out)
    assert "items[1]" in str(info.value)
    wrong_dtype = {"a": good["a"], "b": (np.float64(0.5), good["b"][1])}
    with pytest.raises(InvalidTypeError, match=re.escape("space['b'][0]")):
        concatenate(space, [wrong_dtype, good], out)
    with pytest.raises(InvalidValueError, match=re.escape("items[1]")):
        concatenate(space, [good, {"a": good["a"], "c": good["b"]}], out)
    with pytest.raises(InvalidValueError, match=re.escape("items[0]")):
        concatenate(space, [{**good, "extra": 1}, good], out)
    with pytest.raises(InvalidValueError, match="wrong number of items"):
        concatenate(space, [good], out)


def test_concatenate_of_a_container_accepts_other_mappings_and_sequences() -> None:
    from collections import OrderedDict

    space = Dict(a=Discrete(3), b=Tuple((Box(0, 1, (2,)), Discrete(2))))
    space.seed(1)
    items = [space.sample() for _ in range(3)]
    expected = concatenate(space, items, create_empty_array(space, 3))
    others = [OrderedDict([("b", list(item["b"])), ("a", item["a"])]) for item in items]
    result = concatenate(space, others, create_empty_array(space, 3))
    np.testing.assert_array_equal(result["a"], expected["a"])
    np.testing.assert_array_equal(result["b"][0], expected["b"][0])


def test_a_container_notices_a_changed_child_between_calls() -> None:
    space = Dict(a=Discrete(3))
    items = [{"a": np.int64(1)}, {"a": np.int64(2)}]
    assert concatenate(space, items, create_empty_array(space, 2))["a"].tolist() == [1, 2]
    space["a"] = Text(3)
    assert concatenate(space, [{"a": "x"}, {"a": "yz"}], create_empty_array(space, 2)) == {"a": ("x", "yz")}
    space.spaces["b"] = Discrete(2)  # a direct edit of the children
    batch = concatenate(space, [{"a": "x", "b": 1}, {"a": "y", "b": 0}], create_empty_array(space, 2))
    assert batch["b"].tolist() == [1, 0]


def test_a_container_uses_a_kernel_registered_after_it_was_batched() -> None:
    class Counter(Space[Any]):
        pass

    space = Tuple((Counter(), Discrete(2)))
    items = [(object(), np.int64(1)), (object(), np.int64(0))]
    before = concatenate(space, items, create_empty_array(space, 2))
    assert before[0] == (items[0][0], items[1][0])  # the custom-space rule: a tuple of the items
    concatenate.register(Counter)(lambda space, items, out: len(items))
    assert concatenate(space, items, create_empty_array(space, 2))[0] == 2


# --- iterate ------------------------------------------------------------------------------------------------


def test_iterate_of_a_dict_batch_gives_one_dict_per_env_in_the_space_order() -> None:
    space = Dict(z=Discrete(3), a=Box(0, 1, (2,)), t=Tuple((MultiBinary(2), Discrete(2))))
    space.seed(5)
    items = [space.sample() for _ in range(3)]
    batched = batch_space(space, 3)
    rows = list(iterate(batched, concatenate(space, items, create_empty_array(space, 3))))
    assert len(rows) == 3
    for row, item in zip(rows, items, strict=True):
        assert list(row) == list(space.keys())
        assert int(row["z"]) == int(item["z"]) and np.array_equal(row["a"], item["a"])
        assert np.array_equal(row["t"][0], item["t"][0]) and int(row["t"][1]) == int(item["t"][1])


def test_iterate_of_a_dict_with_ragged_children_raises_at_the_call() -> None:
    batched = batch_space(Dict(a=Discrete(3), b=Box(0, 1, (2,))), 3)
    with pytest.raises(InvalidValueError, match="different batch sizes"):
        iterate(batched, {"a": np.zeros(3, np.int64), "b": np.zeros((2, 2), np.float32)})


def test_iterate_of_a_box_batch_gives_row_views() -> None:
    batch = np.arange(6, dtype=np.float32).reshape(3, 2)
    rows = list(iterate(batch_space(Box(0, 9, (2,)), 3), batch))
    assert [row.tolist() for row in rows] == batch.tolist()
    assert all(np.shares_memory(row, batch) for row in rows)
