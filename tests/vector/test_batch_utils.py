"""The batching family's edge cases: create_empty_array with n=0, concatenate's checks (count, shape, dtype,
Text length and charset, the item named) and its all-or-nothing writes, bad arguments, iterate's rows, seeds."""

from __future__ import annotations

import re
from abc import ABC
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tests.catalog import IDS, make
from tests.helpers import Opaque
from vecspaces import spaces as vecspaces_spaces
from vecspaces.error import CustomSpaceError, InvalidTypeError, InvalidValueError
from vecspaces.spaces import Box, Dict, Discrete, MultiBinary, MultiDiscrete, Space, Text, Tuple
from vecspaces.vector.utils import batch_differing_spaces, batch_space, concatenate, create_empty_array, iterate


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

    assert create_empty_array(Opaque(), 0) == ()
    assert create_empty_array(Opaque(), 2) == (None, None)


@pytest.mark.parametrize("space_id", ["box_f32", "discrete_2", "text", "dict_nested", "sequence", "graph", "oneof"])
@pytest.mark.parametrize("n", [-1, 1.0, True, "0", None])
def test_create_empty_array_rejects_batch_sizes_that_are_not_ints_above_zero(space_id: str, n: Any) -> None:
    with pytest.raises(InvalidValueError, match=re.escape("expected an int >= 0")):
        create_empty_array(make(space_id), n)


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


def test_iterate_of_a_batch_of_shape_scalar_boxes_gives_numpy_scalars_as_gymnasium() -> None:
    space = Box(-1.0, 1.0, (), np.float32)
    batch = np.array([0.5, -0.25, 1.0], np.float32)
    rows = list(iterate(batch_space(space, 3), batch))
    assert [type(row) for row in rows] == [np.float32] * 3
    assert rows == [np.float32(0.5), np.float32(-0.25), np.float32(1.0)]
    nested = Dict(a=Box(0, 9, (), np.int64), b=Tuple((Box(0, 1, (), np.float16),)))
    rows = list(iterate(batch_space(nested, 2), {"a": np.array([3, 4]), "b": (np.zeros(2, np.float16),)}))
    assert type(rows[1]["a"]) is np.int64 and type(rows[1]["b"][0]) is np.float16


# --- arguments that are not what they should be ------------------------------------------------------------


@pytest.mark.parametrize("spaces", [Box(0, 1, (2,)), Tuple((Discrete(2), Discrete(3))), Dict(a=Discrete(2))], ids=repr)
def test_batch_differing_spaces_given_one_space_says_to_pass_a_list(spaces: Space[Any]) -> None:
    with pytest.raises(InvalidTypeError, match="batch_differing_spaces was given one space as spaces") as info:
        batch_differing_spaces(spaces)  # type: ignore[arg-type]
    assert "batch_space(space, n)" in str(info.value)


@pytest.mark.parametrize("spaces", [None, 3, "Box", b"ab"], ids=repr)
def test_batch_differing_spaces_of_a_non_list_names_the_argument(spaces: Any) -> None:
    with pytest.raises(InvalidTypeError, match="batch_differing_spaces spaces is not a list"):
        batch_differing_spaces(spaces)


def test_batch_differing_spaces_names_the_entry_that_is_not_a_space() -> None:
    with pytest.raises(InvalidTypeError, match=re.escape("at spaces[1]")):
        batch_differing_spaces([Discrete(2), None])
    with pytest.raises(InvalidTypeError, match=re.escape("at spaces[0]")):
        batch_differing_spaces([None, Discrete(2)])
    with pytest.raises(InvalidValueError, match="non-empty"):
        batch_differing_spaces(iter([]))


def test_batch_differing_spaces_still_dispatches_on_the_first_space() -> None:
    assert batch_differing_spaces((Discrete(2), Discrete(3, start=1))) == MultiDiscrete([2, 3], start=[0, 1])
    assert batch_differing_spaces(iter([Box(0, 1, (2,)), Box(-1, 1, (2,))])).shape == (2, 2)

    class Marked(Discrete):
        pass

    batch_differing_spaces.register(Marked)(lambda spaces: "marked kernel")
    assert batch_differing_spaces([Marked(2), Marked(3)]) == "marked kernel"
    assert batch_differing_spaces.dispatch(Marked)([]) == "marked kernel"
    assert batch_differing_spaces.__name__ == "batch_differing_spaces" and batch_differing_spaces.__doc__


@pytest.mark.parametrize("items", [None, 3, object()], ids=repr)
@pytest.mark.parametrize("space_id", ["box_f32", "discrete_2", "multibinary_5", "text", "dict", "tuple", "oneof"])
def test_concatenate_of_items_that_are_not_iterable_names_the_argument(space_id: str, items: Any) -> None:
    space = make(space_id)
    with pytest.raises(InvalidTypeError, match="concatenate items is not iterable"):
        concatenate(space, items, create_empty_array(space, 2))


@pytest.mark.parametrize("fn", [None, 3, "zeros"], ids=repr)
@pytest.mark.parametrize("space_id", ["box_f32", "discrete_2", "text", "dict_nested", "sequence", "graph", "oneof"])
def test_create_empty_array_with_a_non_callable_fn_names_the_argument(space_id: str, fn: Any) -> None:
    with pytest.raises(InvalidTypeError, match="create_empty_array fn is not callable"):
        create_empty_array(make(space_id), 2, fn=fn)


def test_create_empty_array_of_a_custom_space_checks_its_arguments_too() -> None:

    with pytest.raises(InvalidTypeError, match="fn is not callable"):
        create_empty_array(Opaque(), 2, fn=None)  # type: ignore[arg-type]
    with pytest.raises(InvalidValueError, match="batch size"):
        create_empty_array(Opaque(), -1)


OPERATIONS_ON_A_SPACE: dict[str, Callable[[Any], Any]] = {
    "batch_space": lambda space: batch_space(space, 2),
    "batch_differing_spaces": lambda space: batch_differing_spaces([space, space]),
    "concatenate": lambda space: concatenate(space, [], None),
    "iterate": lambda space: iterate(space, np.zeros((2, 2))),
    "create_empty_array": lambda space: create_empty_array(space, 2),
}


@pytest.mark.parametrize("operation", list(OPERATIONS_ON_A_SPACE))
def test_a_non_space_is_an_invalid_type_naming_the_operation(operation: str) -> None:
    with pytest.raises(InvalidTypeError, match=f"{operation} was given a non-space") as info:
        OPERATIONS_ON_A_SPACE[operation](None)
    assert "from_gymnasium" not in str(info.value)


# --- Text items are checked --------------------------------------------------------------------------------


def test_concatenate_of_text_names_a_too_long_string() -> None:
    space = Text(3)
    with pytest.raises(InvalidValueError, match=re.escape("at items[1]")) as info:
        concatenate(space, ["ab", "abcdef"], create_empty_array(space, 2))
    assert "too long" in str(info.value) and "6 characters" in str(info.value)


def test_concatenate_of_text_names_a_character_outside_the_charset() -> None:
    space = Text(4, charset="ab")
    with pytest.raises(InvalidValueError, match=re.escape("'c' in 'abc' (str) at items[2]")):
        concatenate(space, ["a", "b", "abc"], create_empty_array(space, 3))
    with pytest.raises(InvalidTypeError, match=re.escape("at items[0]")):
        concatenate(space, [b"ab"], create_empty_array(space, 1))
    assert concatenate(space, ["", "abba"], create_empty_array(space, 2)) == ("", "abba")


def test_concatenate_of_text_inside_a_dict_names_the_path() -> None:
    space = Dict(name=Text(2, charset="xy"), n=Discrete(3))
    items = [{"name": "xy", "n": 1}, {"name": "xz", "n": 2}]
    with pytest.raises(InvalidValueError, match=re.escape("space['name']")) as info:
        concatenate(space, items, create_empty_array(space, 2))
    assert "items[1]" in str(info.value)


# --- concatenate of a Dict or Tuple is all or nothing ------------------------------------------------------


def _copy(batch: Any) -> Any:
    if isinstance(batch, dict):
        return {key: _copy(value) for key, value in batch.items()}
    if isinstance(batch, tuple):
        return tuple(_copy(value) for value in batch)
    return batch.copy() if isinstance(batch, np.ndarray) else batch


NESTED = Dict(
    a=Box(-1.0, 1.0, (3,), np.float32),
    b=Tuple((Discrete(4), MultiBinary(2), Dict(c=MultiDiscrete([3, 3]), d=Box(0, 9, (), np.int64)))),
    t=Text(2, charset="pq"),
    z=Box(0, 255, (2, 2), np.uint8),
)


def _break(value: dict[str, Any], where: str) -> dict[str, Any]:
    """``value`` with one part that concatenate must refuse; the parts are in the space's order."""
    value = {**value, "b": tuple(value["b"])}
    if where == "last box shape":
        value["z"] = np.zeros((2, 3), np.uint8)
    elif where == "text too long":
        value["t"] = "ppp"
    elif where == "text charset":
        value["t"] = "px"
    elif where == "nested dtype":
        inner = dict(value["b"][2])
        inner["d"] = np.float64(0.5)
        value["b"] = (value["b"][0], value["b"][1], inner)
    elif where == "ragged rows":
        value["a"] = np.zeros(2, np.float32)
    elif where == "missing key":
        del value["z"]
    elif where == "short tuple":
        value["b"] = value["b"][:2]
    elif where == "list item":
        value["z"] = [[1, 2], [3, 4, 5]]
    return value


BREAKS = ["last box shape", "text too long", "text charset", "nested dtype", "ragged rows", "missing key"]
BREAKS += ["short tuple", "list item"]


@pytest.mark.parametrize("where", BREAKS)
@pytest.mark.parametrize("bad_item", [0, 2])
def test_a_failed_concatenate_of_a_container_leaves_out_untouched(where: str, bad_item: int) -> None:
    NESTED.seed(4)
    items = [NESTED.sample() for _ in range(3)]
    out = create_empty_array(NESTED, 3, fn=np.ones)
    concatenate(NESTED, [NESTED.sample() for _ in range(3)], out)  # out holds an earlier batch
    before = _copy(out)
    items[bad_item] = _break(items[bad_item], where)
    with pytest.raises((InvalidValueError, InvalidTypeError)) as info:
        concatenate(NESTED, items, out)
    assert f"items[{bad_item}]" in str(info.value)
    for got, expected in zip(_leaves(NESTED, out), _leaves(NESTED, before), strict=True):
        if isinstance(expected, np.ndarray):
            np.testing.assert_array_equal(got, expected)


ARRAYS = Dict(a=Box(0.0, 1.0, (3,), np.float32), b=Discrete(4), c=MultiBinary((2, 2)), d=Box(0, 9, (2,), np.int16))
WRONG = {
    # One more entry in the last dimension (a 1-D array for a shape-() child), in the item's dtype: numpy would
    # find the rows ragged.
    "ragged": lambda value: np.zeros(
        (*np.shape(value)[:-1], np.shape(value)[-1] + 1) if np.ndim(value) else 2, np.asarray(value).dtype
    ),
    "dtype": lambda value: np.asarray(value).astype(np.complex128),  # no same-kind cast to a real dtype
}


@pytest.mark.parametrize("wrong", list(WRONG))
@pytest.mark.parametrize("key", list(ARRAYS.spaces))
@pytest.mark.parametrize("bad_item", [0, 2])
def test_a_dict_of_arrays_with_one_bad_item_leaves_out_untouched(key: str, wrong: str, bad_item: int) -> None:
    # The one-pass path for a Dict of arrays leaves the shapes of its first child's later items to numpy, which
    # refuses them before writing; every other child is checked item by item. Either way nothing is written.
    ARRAYS.seed(8)
    out = create_empty_array(ARRAYS, 3)
    concatenate(ARRAYS, [ARRAYS.sample() for _ in range(3)], out)
    before = _copy(out)
    items = [ARRAYS.sample() for _ in range(3)]
    value = items[bad_item][key]
    items[bad_item][key] = (
        WRONG[wrong](value).astype(np.asarray(value).dtype) if wrong == "ragged" else WRONG[wrong](value)
    )
    with pytest.raises((InvalidValueError, InvalidTypeError)) as info:
        concatenate(ARRAYS, items, out)
    assert f"space[{key!r}]" in str(info.value) and f"items[{bad_item}]" in str(info.value)
    for name in ARRAYS.spaces:
        np.testing.assert_array_equal(out[name], before[name])


def test_a_failed_concatenate_of_a_tuple_of_arrays_leaves_every_child_untouched() -> None:
    space = Tuple((Box(0, 1, (2,)), Discrete(3), Box(0, 1, (2,))))
    out = create_empty_array(space, 2)
    good = (np.ones(2, np.float32), np.int64(2), np.ones(2, np.float32))
    with pytest.raises(InvalidValueError, match=re.escape("space[2]")):
        concatenate(space, [good, (good[0], good[1], np.ones(3, np.float32))], out)
    assert not out[0].any() and not out[1].any() and not out[2].any()
    batch = concatenate(space, [good, good], out)
    assert batch[0] is out[0] and out[0].all() and out[1].tolist() == [2, 2]


def test_a_cast_warning_raised_as_an_error_comes_before_any_write() -> None:
    import warnings

    space = Dict(a=Discrete(3), b=Box(-1.0, 1.0, (2,), np.float16))
    out = create_empty_array(space, 2)
    items = [{"a": np.int64(1), "b": np.array([1e300, 0.0])}, {"a": np.int64(2), "b": np.zeros(2)}]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(RuntimeWarning, match="overflow"):
            concatenate(space, items, out)
    assert not out["a"].any() and not out["b"].any()


def test_a_failed_concatenate_with_a_read_only_child_out_writes_nothing() -> None:
    space = Dict(a=Discrete(3), b=Box(0, 1, (2,)))
    out = create_empty_array(space, 2)
    out["b"].flags.writeable = False
    items = [{"a": np.int64(1), "b": np.ones(2, np.float32)}] * 2
    with pytest.raises(InvalidValueError, match="read-only"):
        concatenate(space, items, out)
    assert not out["a"].any()


def test_a_custom_kernel_in_a_container_runs_after_the_built_in_children_are_checked() -> None:
    calls: list[Any] = []

    class Counter(Space[Any]):
        pass

    concatenate.register(Counter)(lambda space, items, out: calls.append(tuple(items)) or len(calls))
    space = Tuple((Counter(), Discrete(3)))
    out = create_empty_array(space, 2)
    with pytest.raises(InvalidTypeError, match=re.escape("space[1]")):
        concatenate(space, [("x", np.int64(1)), ("y", np.float64(0.5))], out)
    assert calls == []  # Discrete's column failed its check before the custom kernel ran
    assert concatenate(space, [("x", np.int64(1)), ("y", np.int64(2))], out) == (1, out[1])
    assert calls == [("x", "y")] and out[1].tolist() == [1, 2]


def test_concatenate_of_a_container_with_iterables_and_namedtuples() -> None:
    from collections import namedtuple

    Pair = namedtuple("Pair", ["x", "y"])
    space = Tuple((Discrete(3), Box(0, 1, (2,))))
    items = (Pair(np.int64(i), np.full(2, i / 4, np.float32)) for i in range(3))
    batch = concatenate(space, items, create_empty_array(space, 3))
    assert batch[0].tolist() == [0, 1, 2] and batch[1][2].tolist() == [0.5, 0.5]


# --- create_empty_array(Text) is Gymnasium's placeholder -------------------------------------------------


def test_create_empty_array_of_text_uses_the_first_character_of_the_sorted_charset() -> None:
    assert create_empty_array(Text(3, min_length=2, charset="zab"), 2) == ("aa", "aa")
    assert create_empty_array(Text(4, min_length=1, charset="日本語🙂é"), 1) == ("é",)
    assert create_empty_array(Text(3, min_length=0, charset="zy"), 2) == ("", "")
    space = Text(5, min_length=3, charset="qpo")
    assert all(space.contains(value) for value in create_empty_array(space, 3))


# --- the copies of a Tuple of copies -----------------------------------------------------------------------


@pytest.mark.parametrize("space_id", ["text", "sequence", "graph", "oneof"])
def test_copies_are_seeded_from_a_copy_of_the_space_generator_in_0_to_2_63(space_id: str) -> None:
    from copy import deepcopy

    space = make(space_id)
    space.seed(21)
    state = deepcopy(space.np_random.bit_generator.state)
    seeds = deepcopy(space.np_random).integers(0, 2**63 - 1, size=4)
    batched = batch_space(space, 4)
    assert space.np_random.bit_generator.state == state  # the space is not advanced
    assert len({int(seed) for seed in seeds}) == 4
    for copy, seed in zip(batched, seeds, strict=True):
        twin = make(space_id)
        twin.seed(int(seed))
        assert copy.np_random.bit_generator.state == twin.np_random.bit_generator.state
    assert any(int(seed) >= 10**8 for seed in seeds)  # not Gymnasium's [0, 1e8): see vecspaces._ops.batch


ITERABLE_BATCHES: dict[str, tuple[Callable[[Any], Space[Any]], Callable[[], Any]]] = {
    "Discrete, a list": (lambda spaces: spaces.Discrete(3), lambda: [2, 0]),
    "Discrete, a tuple": (lambda spaces: spaces.Discrete(3), lambda: (2, 0)),
    "Discrete, a generator": (lambda spaces: spaces.Discrete(3), lambda: (action for action in [2, 0])),
    "MultiDiscrete, a list": (lambda spaces: spaces.MultiDiscrete([2, 3]), lambda: [[1, 2], [0, 0]]),
    "MultiDiscrete, a generator": (lambda spaces: spaces.MultiDiscrete([2, 3]), lambda: iter([[1, 2], [0, 0]])),
    "MultiBinary, a list": (lambda spaces: spaces.MultiBinary(2), lambda: [[1, 0], [0, 1]]),
}


@pytest.mark.parametrize("name", list(ITERABLE_BATCHES))
def test_iterate_takes_any_iterable_of_values_as_gymnasium_does(name: str) -> None:
    gymnasium = pytest.importorskip("gymnasium")
    make_space, batch = ITERABLE_BATCHES[name]
    ours = list(iterate(batch_space(make_space(vecspaces_spaces), 2), batch()))
    theirs = list(
        gymnasium.vector.utils.iterate(gymnasium.vector.utils.batch_space(make_space(gymnasium.spaces), 2), batch())
    )
    assert ours == theirs == list(batch())
