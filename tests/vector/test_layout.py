"""The compiled shared-memory layout: SharedLayout (slots, offsets) and SharedBatch (write, read, views)."""

from __future__ import annotations

import ctypes
import pickle
import re
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.catalog import IDS, make
from tests.helpers import Opaque, assert_same_value
from tests.strategies import spaces as generated_spaces
from vecspaces._ops.memory_nodes import ArrayLeaf, DictNode, OneOfLeaf, TextLeaf, TupleNode, VariableLeaf
from vecspaces.error import CustomSpaceError, Error, InvalidTypeError, InvalidValueError
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
)
from vecspaces.vector.utils import SharedBatch, SharedLayout, layout_nodes
from vecspaces.vector.utils.shared_layout import SLOT_ALIGNMENT

FIXED_IDS = [space_id for space_id in IDS if not SharedLayout(make(space_id)).variable_leaves]
VARIABLE_IDS = [space_id for space_id in IDS if space_id not in FIXED_IDS]


def normalized(value: Any) -> Any:
    """The value with 0-d arrays as numpy scalars (a 0-d leaf reads back as a scalar, as Gymnasium's does)."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value[()]
    if isinstance(value, dict):
        return {key: normalized(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return tuple(normalized(item) for item in value)
    return value


def assert_env_value(got: Any, expected: Any) -> None:
    assert_same_value(normalized(got), normalized(expected))


def samples(space: Space[Any], count: int, seed: int = 0) -> list[Any]:
    space.seed(seed)
    return [space.sample() for _ in range(count)]


def buffer_bytes(batch: SharedBatch) -> bytes:
    return bytes(np.frombuffer(batch.buffer, dtype=np.uint8))


def kitchen_sink() -> Dict:
    """Every fixed-size leaf kind, nested."""
    return Dict(
        image=Box(0, 255, (4, 4, 3), np.uint8),
        half=Box(-1.0, 1.0, (2,), np.float16),
        flags=Box(0, 1, (3,), np.bool_),
        gear=Discrete(5, start=-2),
        bits=MultiBinary((2, 2)),
        dice=MultiDiscrete([3, 4], start=[1, -1]),
        label=Text(4, min_length=0, charset="日本語🙂é"),
        choice=OneOf((Discrete(3), Box(0.0, 1.0, (5,)), Text(2, charset="pq"))),
        pair=Tuple((Discrete(2), Dict(inner=Box(-1.0, 1.0, (), np.float64)))),
    )


# --- layout_nodes ------------------------------------------------------------------------------------------


def test_layout_nodes_of_array_spaces() -> None:
    assert layout_nodes(Box(0, 1, (2, 3), np.float16)) == [ArrayLeaf((), np.dtype(np.float16), (2, 3))]
    assert layout_nodes(Discrete(4, start=3, dtype=np.int32)) == [ArrayLeaf((), np.dtype(np.int32), ())]
    assert layout_nodes(MultiBinary(3)) == [ArrayLeaf((), np.dtype(np.int8), (3,))]
    assert layout_nodes(MultiDiscrete([2, 3])) == [ArrayLeaf((), np.dtype(np.int64), (2,))]


def test_layout_nodes_of_text_follow_the_character_list() -> None:
    space = Text(3, charset={"z", "a", "m"})
    assert layout_nodes(space, ("t",)) == [TextLeaf(("t",), space.character_list, 3)]


def test_layout_nodes_of_containers_are_preorder_with_paths() -> None:
    space = Dict(b=Tuple((Discrete(2), Sequence(Discrete(2)))), a=Box(0, 1, ()))
    nodes = layout_nodes(space)
    assert [type(node) for node in nodes] == [DictNode, TupleNode, ArrayLeaf, VariableLeaf, ArrayLeaf]
    assert [node.path for node in nodes] == [(), ("b",), ("b", 0), ("b", 1), ("a",)]
    assert nodes[0] == DictNode((), tuple(space.spaces))
    assert nodes[1] == TupleNode(("b",), 2)


def test_oneof_branches_are_laid_out_under_the_value_path() -> None:
    (node,) = layout_nodes(OneOf((Discrete(2), Dict(x=Box(0, 1, (2,))))), ("c",))
    assert isinstance(node, OneOfLeaf)
    assert node.branches[0] == (ArrayLeaf(("c", 1), np.dtype(np.int64), ()),)
    assert [n.path for n in node.branches[1]] == [("c", 1), ("c", 1, "x")]


def test_oneof_with_a_variable_branch_is_variable_as_a_whole() -> None:
    space = OneOf((Discrete(2), Sequence(Discrete(2))))
    assert layout_nodes(space, ("o",)) == [VariableLeaf(("o",), space)]


@pytest.mark.parametrize("space", [Sequence(Discrete(2)), Graph(Box(0, 1, (2,)), None)], ids=repr)
def test_sequence_and_graph_are_variable_leaves(space: Space[Any]) -> None:
    (node,) = layout_nodes(space, (3,))
    assert isinstance(node, VariableLeaf) and node.path == (3,) and node.space is space


class Pixel(Space[Any]):
    """A custom space that registers a layout for itself: an RGB triple."""

    def __init__(self) -> None:
        super().__init__((3,), np.uint8)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pixel)


@layout_nodes.register(Pixel)
def _layout_pixel(space: Pixel, path: tuple[Any, ...] = ()) -> list[Any]:
    return [ArrayLeaf(path, np.uint8, [3])]  # type: ignore[arg-type]  (normalised by the leaf)


def test_custom_space_without_a_layout_raises_custom_space_error_naming_the_path() -> None:
    with pytest.raises(CustomSpaceError, match=re.escape("at space['x'][1]")) as info:
        SharedLayout(Dict(x=Tuple((Discrete(2), Opaque()))))
    assert "layout_nodes.register(Opaque)" in str(info.value)


def test_custom_space_with_a_registered_layout_works_inside_containers() -> None:
    batch = SharedLayout(Dict(p=Pixel(), d=Discrete(2)), n=2).allocate()
    batch.write(1, {"p": np.array([1, 2, 3], np.uint8), "d": 1})
    assert batch.read()["p"].tolist() == [[0, 0, 0], [1, 2, 3]]


def test_non_space_is_an_invalid_type() -> None:
    with pytest.raises(InvalidTypeError):
        layout_nodes("Box")  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError):
        SharedLayout(42)  # type: ignore[arg-type]


def test_layout_nodes_returning_junk_is_reported() -> None:
    class Junk(Space[Any]):
        pass

    layout_nodes.register(Junk)(lambda space, path=(): ["not a node"])
    with pytest.raises(InvalidTypeError, match="not a layout node"):
        SharedLayout(Junk())


@pytest.mark.parametrize("n", [-1, 1.5, True, "2"])
def test_bad_batch_size(n: Any) -> None:
    with pytest.raises(InvalidValueError):
        SharedLayout(Discrete(2), n)


# --- slots and views ---------------------------------------------------------------------------------------


def test_slots_are_leaf_major_aligned_and_do_not_overlap() -> None:
    layout = SharedLayout(kitchen_sink(), n=3)
    end = 0
    for slot in layout.slots:
        assert slot.offset % SLOT_ALIGNMENT == 0
        assert slot.offset >= end
        assert slot.nbytes == slot.dtype.itemsize * int(np.prod(slot.shape))
        end = slot.offset + 3 * slot.nbytes
    assert layout.nbytes >= end
    paths = [slot.path for slot in layout.slots]
    assert paths[:3] == [("image",), ("half",), ("flags",)]
    assert ("choice", 0) in paths and ("choice", 1) in paths
    assert ("pair", 1, "inner") in paths


def test_oneof_takes_one_region_sized_for_its_largest_branch() -> None:
    space = OneOf((Discrete(3), Box(0.0, 1.0, (5,), np.float64), Text(2, charset="pq")))
    layout = SharedLayout(space, n=4)
    index, region = layout.slots
    assert (index.path, index.dtype, index.shape) == ((0,), np.dtype(np.int64), ())
    assert region.path == (1,) and region.dtype == np.uint8
    assert 40 <= region.shape[0] < 40 + 16  # the float64 branch, rounded up to 16 bytes


def test_batch_views_are_c_contiguous_views_of_the_buffer() -> None:
    batch = SharedLayout(kitchen_sink(), n=3).allocate()
    raw = np.frombuffer(batch.buffer, dtype=np.uint8)
    for slot, view in zip(batch.layout.slots, batch.batch_views, strict=True):
        assert view.shape == (3, *slot.shape) and view.dtype == slot.dtype
        assert view.flags.c_contiguous and view.flags.writeable and view.flags.aligned
        assert np.shares_memory(view, raw)
        assert view.ctypes.data % SLOT_ALIGNMENT == 0
    for i in range(3):
        for env_view, view in zip(batch.env_views[i], batch.batch_views, strict=True):
            assert env_view.shape == view.shape[1:]
            assert np.shares_memory(env_view, view[i, ...]) and env_view.base is not None


def test_buffer_is_a_lock_free_multiprocessing_array() -> None:
    batch = SharedLayout(Discrete(2), n=2).allocate()
    assert not hasattr(batch.buffer, "get_lock")
    assert isinstance(batch.buffer, ctypes.Array) and batch.buffer._type_ is ctypes.c_uint8


def test_bind_to_a_too_small_buffer() -> None:
    layout = SharedLayout(Box(0, 1, (4,)), n=2)
    with pytest.raises(InvalidValueError, match="too small"):
        layout.bind(bytearray(layout.nbytes - 1))


def test_allocate_needs_a_context_with_array() -> None:
    with pytest.raises(InvalidTypeError, match="Array"):
        SharedLayout(Discrete(2)).allocate(ctx=object())


def test_layout_pickles_as_its_space_and_batch_size() -> None:
    layout = SharedLayout(kitchen_sink(), n=3)
    again = pickle.loads(pickle.dumps(layout))
    assert again.slots == layout.slots and again.nodes == layout.nodes and again.n == 3


def test_batch_pickles_only_while_starting_a_process() -> None:
    batch = SharedLayout(Discrete(2), n=2).allocate()
    with pytest.raises(InvalidTypeError, match="only be pickled while a process starts"):
        pickle.dumps(batch)


def test_batch_over_a_plain_buffer_pickles_with_a_copy() -> None:
    space = Box(0, 9, (2,), np.int16)
    layout = SharedLayout(space, n=2)
    batch = layout.bind(np.zeros(layout.nbytes, np.uint8))
    batch.write(1, np.array([4, 5], np.int16))
    assert pickle.loads(pickle.dumps(batch)).read().tolist() == [[0, 0], [4, 5]]


def test_reprs() -> None:
    layout = SharedLayout(Discrete(3), n=2)
    assert repr(layout) == "SharedLayout(Discrete(3), n=2, slots=1, nbytes=64, variable_leaves=0)"
    assert repr(layout.allocate()) == "SharedBatch(Discrete(3), n=2, nbytes=64)"


# --- round trips -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 3])
@pytest.mark.parametrize("space_id", FIXED_IDS)
def test_read_of_write_gives_every_env_its_value(space_id: str, n: int) -> None:
    space = make(space_id)
    values = samples(space, n)
    batch = SharedLayout(space, n).allocate()
    for i, value in enumerate(values):
        assert batch.write(i, value) == ()
    for i, value in enumerate(values):
        assert_env_value(batch.read_env(i), value)
    # The batched read holds the same values, in the structure of the batched space.
    batched = batch.read()
    for i, value in enumerate(values):
        assert_env_value(env_of(batched, i, space), value)


def env_of(batched: Any, i: int, space: Space[Any]) -> Any:
    """Env ``i``'s part of a batched read, walking the space (arrays by row, Text/OneOf tuples by item)."""
    if isinstance(space, Dict):
        return {key: env_of(batched[key], i, child) for key, child in space.spaces.items()}
    if isinstance(space, Tuple):
        return tuple(env_of(part, i, child) for part, child in zip(batched, space.spaces, strict=True))
    return batched[i]


def test_kitchen_sink_round_trip_and_no_cross_talk() -> None:
    space = kitchen_sink()
    values = samples(space, 4, seed=3)
    batch = SharedLayout(space, n=4).allocate()
    for i in (2, 0, 3, 1):
        batch.write(i, values[i])
    for i in range(4):
        assert_env_value(batch.read_env(i), values[i])


@given(space=generated_spaces, seed=st.integers(0, 2**16))
def test_generated_spaces_round_trip(space: Space[Any], seed: int) -> None:
    values = samples(space, 2, seed)
    layout = SharedLayout(space, n=2)
    batch = layout.allocate()
    sent = [batch.write(i, value) for i, value in enumerate(values)]
    if not layout.variable_leaves:
        for i, value in enumerate(values):
            assert_env_value(batch.read_env(i), value)
    else:
        assert all(len(variable) == len(layout.variable_leaves) for variable in sent)
        whole = batch.read(variable=[tuple(env[k] for env in sent) for k in range(len(layout.variable_leaves))])
        for k, leaf in enumerate(layout.variable_leaves):
            assert _at(whole, leaf.path, space) == tuple(env[k] for env in sent)


def _at(batched: Any, path: tuple[Any, ...], space: Space[Any]) -> Any:
    for key in path:
        batched = batched[key]
    return batched


def test_variable_leaves_are_returned_by_write_and_put_back_by_read() -> None:
    space = make("dict_with_variable")
    layout = SharedLayout(space, n=2)
    assert [leaf.path for leaf in layout.variable_leaves] == [("seq",), ("graph",)]
    batch = layout.allocate()
    values = samples(space, 2)
    sent = [batch.write(i, value) for i, value in enumerate(values)]
    assert sent[1][0] is values[1]["seq"] and sent[1][1] is values[1]["graph"]
    plain = batch.read()
    assert plain["seq"] is None and plain["graph"] is None
    full = batch.read(variable=[(sent[0][0], sent[1][0]), (sent[0][1], sent[1][1])])
    assert full["seq"] == (values[0]["seq"], values[1]["seq"])
    assert full["graph"][1] is values[1]["graph"]
    assert_env_value(full["choice"][1], values[1]["choice"])
    with pytest.raises(InvalidValueError, match="variable-size values"):
        batch.read(variable=[()])


# --- reads -------------------------------------------------------------------------------------------------


def test_array_reads_are_zero_copy_views_made_once() -> None:
    space = Dict(a=Box(0, 1, (2,)), b=Discrete(3))
    batch = SharedLayout(space, n=2).allocate()
    first, second = batch.read(), batch.read()
    assert first["a"] is second["a"] and first["b"] is second["b"]
    assert first is not second  # fresh containers: callers may mutate them
    batch.write(1, {"a": np.array([0.5, 1.0], np.float32), "b": 2})
    assert first["a"].tolist() == [[0, 0], [0.5, 1.0]] and first["b"].tolist() == [0, 2]
    first["b"][0] = 1  # writing into the view writes the buffer
    assert batch.read_env(0)["b"] == 1


def test_text_and_oneof_reads_reflect_later_writes() -> None:
    space = Tuple((Text(3, charset="abc"), OneOf((Discrete(3), Box(0.0, 1.0, (2,))))))
    batch = SharedLayout(space, n=2).allocate()
    batch.write(0, ("ab", (np.int64(0), np.int64(2))))
    before = batch.read()
    batch.write(0, ("cca", (np.int64(1), np.array([0.5, 0.25], np.float32))))
    after = batch.read()
    assert before[0] == ("ab", "aaa") and after[0] == ("cca", "aaa")
    assert before[1][0] == (0, 2)
    assert after[1][0][0] == 1 and after[1][0][1].tolist() == [0.5, 0.25]


def test_oneof_values_read_are_copies() -> None:
    batch = SharedLayout(OneOf((Box(0.0, 1.0, (2,)),)), n=1).allocate()
    batch.write(0, (0, np.array([0.5, 0.5], np.float32)))
    ((_index, value),) = batch.read()
    batch.write(0, (0, np.array([1.0, 1.0], np.float32)))
    assert value.tolist() == [0.5, 0.5]


def test_unwritten_memory_reads_as_zeros() -> None:
    space = Dict(t=Text(3, charset="xyz"), o=OneOf((Discrete(2, start=5), Box(0, 1, ()))), d=Discrete(2, start=5))
    read = SharedLayout(space, n=2).allocate().read()
    assert read["t"] == ("xxx", "xxx")  # character_list[0] * max_length, as Gymnasium
    assert [(int(i), int(v)) for i, v in read["o"]] == [(0, 0), (0, 0)]
    assert read["d"].tolist() == [0, 0]


def test_text_decoding_drops_padding_and_foreign_codes() -> None:
    space = Text(4, min_length=0, charset="ab")
    batch = SharedLayout(space, n=1).allocate()
    batch.batch_views[0][0] = [1, 2, -7, 99]
    assert batch.read() == ("b",)
    batch.write(0, "")
    assert batch.read() == ("",)


def test_corrupted_oneof_index_is_reported_on_read() -> None:
    batch = SharedLayout(OneOf((Discrete(2),)), n=1).allocate()
    batch.batch_views[0][0] = 5
    with pytest.raises(InvalidValueError, match="out of range"):
        batch.read()


# --- writes: conversions -----------------------------------------------------------------------------------


def test_write_casts_numbers_as_gymnasium_but_whole() -> None:
    space = Dict(f=Box(0, 1, (2,), np.float32), u=Box(0, 255, (2,), np.uint8), b=Box(0, 1, (2,), np.bool_))
    batch = SharedLayout(space, n=1).allocate()
    batch.write(0, {"f": [0.25, 1], "u": np.array([3.0, 250.0]), "b": np.array([0.0, 2.0])})
    read = batch.read_env(0)
    assert read["f"].dtype == np.float32 and read["f"].tolist() == [0.25, 1.0]
    assert read["u"].tolist() == [3, 250]
    assert read["b"].tolist() == [False, True]


@pytest.mark.parametrize(
    ("leaf", "bad"),
    [
        ("int", np.array([1.0, np.nan])),
        ("int", np.array([np.inf, 1.0], np.float32)),
        ("uint", np.array([-np.inf, 0.0], np.float16)),
        ("gear", float("nan")),
        ("gear", np.float64(np.inf)),
        ("int", np.array([1.0, 2.5])),
        ("uint", np.array([3.7, 0.0], np.float32)),
        ("gear", 2.7),
    ],
    ids=["nan", "inf_float32", "minus_inf_float16", "python_nan", "numpy_inf", "half", "fraction", "python_fraction"],
)
def test_fractions_and_non_finite_floats_for_integer_slots_are_refused_before_any_write(leaf: str, bad: Any) -> None:
    space = Dict(first=Box(0.0, 1.0, (2,)), int=Box(-9, 9, (2,), np.int32), uint=Box(0, 9, (2,), np.uint16))
    space["gear"] = Discrete(4)
    batch = SharedLayout(space, n=2).allocate(name="obs")
    good = samples(space, 1, seed=5)[0]
    batch.write(1, good)
    before = buffer_bytes(batch)
    with pytest.raises(InvalidValueError) as info:
        batch.write(1, {**good, "first": np.ones(2, np.float32), leaf: bad})
    assert str(info.value).startswith(
        "obs for env 1 has a fraction, a NaN or an infinity, which an integer slot cannot hold"
    )
    assert str(info.value).endswith(f"at obs[{leaf!r}]")
    assert buffer_bytes(batch) == before


@pytest.mark.parametrize(
    ("leaf", "bad"),
    [("int", np.array([1e300, 0.0])), ("half", np.array([1e300, 0.0])), ("half", np.array([100_000, 0]))],
    ids=["float_out_of_int32_range", "float64_overflowing_float16", "int64_overflowing_float16"],
)
def test_a_cast_warning_raised_as_an_error_leaves_the_write_undone(leaf: str, bad: Any) -> None:
    # numpy warns on these casts; where warnings are errors (as under this repo's pytest settings) the warning
    # must come before any slot is written, so the cast happens while checking, not in the copy loop.
    space = Dict(first=Box(0.0, 1.0, (2,)), int=Box(-9, 9, (2,), np.int32), half=Box(-1, 1, (2,), np.float16))
    batch = SharedLayout(space, n=1).allocate()
    good = samples(space, 1, seed=5)[0]
    batch.write(0, good)
    before = buffer_bytes(batch)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(RuntimeWarning, match="encountered in cast"):
            batch.write(0, {**good, "first": np.ones(2, np.float32), leaf: bad})
    assert buffer_bytes(batch) == before
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        batch.write(0, {**good, leaf: bad})  # numpy's unsafe cast, as Gymnasium's np.asarray(value, dtype)
        expected = np.asarray(bad).astype(space[leaf].dtype)
    assert_env_value(batch.read_env(0)[leaf], expected)


def test_safe_and_integer_casts_still_go_through_the_copy() -> None:
    space = Dict(f=Box(0, 1, (2,), np.float64), u=Box(0, 255, (2,), np.uint8), i=Box(-5, 5, (2,), np.int16))
    batch = SharedLayout(space, n=1).allocate()
    batch.write(0, {"f": np.array([0.25, 1], np.float32), "u": np.array([300, 255]), "i": np.array([True, False])})
    read = batch.read_env(0)
    assert read["f"].tolist() == [0.25, 1.0] and read["u"].tolist() == [44, 255] and read["i"].tolist() == [1, 0]


def test_discrete_accepts_python_and_numpy_integers() -> None:
    batch = SharedLayout(Discrete(10, start=-3, dtype=np.int16), n=3).allocate()
    batch.write(0, 5)
    batch.write(1, np.int64(-3))
    batch.write(2, np.array(2, np.int16))
    assert batch.read().tolist() == [5, -3, 2]
    assert batch.read().dtype == np.int16


def test_float16_and_bool_round_trip_exactly() -> None:
    space = Tuple((Box(-10, 10, (5,), np.float16), Box(0, 1, (5,), np.bool_)))
    values = (np.array([0.1, -2.5, 9.99, 0, 1e-4], np.float16), np.array([1, 0, 1, 1, 0], np.bool_))
    batch = SharedLayout(space, n=2).allocate()
    batch.write(1, values)
    assert_env_value(batch.read_env(1), values)


def test_write_accepts_an_index_of_any_integer_type() -> None:
    batch = SharedLayout(Discrete(3), n=3).allocate()
    batch.write(np.int32(2), 1)
    batch.write(np.uint8(1), 2)
    assert batch.read().tolist() == [0, 2, 1]


# --- writes: bad input -------------------------------------------------------------------------------------

BAD_WRITES: list[tuple[str, Any, type[Error], str]] = [
    # (case, value replacing a good one, error type, text the message must contain)
    ("box wrong shape", {"image": np.zeros((4, 4), np.uint8)}, InvalidValueError, "wrong shape"),
    ("box scalar", {"image": 0}, InvalidValueError, "wrong shape"),
    ("box strings", {"half": np.array(["a", "b"])}, InvalidTypeError, "wrong dtype"),
    ("box object", {"half": [None, 1.0]}, InvalidTypeError, "wrong dtype"),
    ("box ragged", {"half": [[1.0], [1.0, 2.0]]}, InvalidValueError, "is not an array"),
    ("box complex", {"half": np.array([1j, 2j])}, InvalidTypeError, "wrong dtype"),
    ("discrete none", {"gear": None}, InvalidTypeError, "wrong dtype"),
    ("discrete vector", {"gear": np.array([1])}, InvalidValueError, "wrong shape"),
    ("text not str", {"label": 42}, InvalidTypeError, "is not a string"),
    ("text too long", {"label": "日本語🙂é"}, InvalidValueError, "is too long"),
    ("text unknown char", {"label": "日x"}, InvalidValueError, "outside the charset ('x')"),
    ("oneof not a pair", {"choice": 1}, InvalidTypeError, "is not an (index, value) pair"),
    ("oneof triple", {"choice": (0, 1, 2)}, InvalidTypeError, "is not an (index, value) pair"),
    ("oneof index float", {"choice": (0.0, 1)}, InvalidTypeError, "index is not an int"),
    ("oneof index bool", {"choice": (True, 1)}, InvalidTypeError, "index is not an int"),
    ("oneof index range", {"choice": (3, 1)}, InvalidValueError, "index is out of range"),
    ("oneof bad branch", {"choice": (1, np.zeros(4))}, InvalidValueError, "wrong shape"),
    ("oneof bad text", {"choice": (2, "pqp")}, InvalidValueError, "is too long"),
    ("tuple not a tuple", {"pair": "ab"}, InvalidTypeError, "is not a tuple"),
    ("tuple short", {"pair": (1,)}, InvalidValueError, "wrong length"),
    ("inner dict not a dict", {"pair": (1, [0.5])}, InvalidTypeError, "is not a dict"),
    ("inner dict missing", {"pair": (1, {})}, InvalidValueError, "missing keys"),
    ("inner dict extra", {"pair": (1, {"inner": 0.5, "outer": 1})}, InvalidValueError, "unexpected keys"),
]

BAD_PATHS = {
    "box wrong shape": "obs['image']",
    "text unknown char": "obs['label']",
    "oneof index range": "obs['choice'][0]",
    "oneof bad branch": "obs['choice'][1]",
    "tuple short": "obs['pair']",
    "inner dict missing": "obs['pair'][1]",
    "inner dict extra": "obs['pair'][1]",
}


@pytest.mark.parametrize(("case", "change", "error", "text"), BAD_WRITES, ids=[case[0] for case in BAD_WRITES])
def test_bad_write_raises_and_leaves_every_slot_untouched(
    case: str, change: dict[str, Any], error: type[Error], text: str
) -> None:
    space = kitchen_sink()
    good = samples(space, 3, seed=1)
    batch = SharedLayout(space, n=3).allocate(name="obs")
    for i, value in enumerate(good):
        batch.write(i, value)
    before = buffer_bytes(batch)
    bad = {**samples(space, 1, seed=2)[0], **change}
    with pytest.raises(error) as info:
        batch.write(1, bad)
    assert isinstance(info.value, ValueError if error is InvalidValueError else TypeError)
    assert text in str(info.value) and "obs for env 1" in str(info.value)
    if case in BAD_PATHS:
        assert str(info.value).split(" at ")[-1].startswith(BAD_PATHS[case])
    assert buffer_bytes(batch) == before
    for i, value in enumerate(good):
        assert_env_value(batch.read_env(i), value)


def test_bad_write_message_names_expected_and_given_shape_and_dtype() -> None:
    batch = SharedLayout(Dict(camera=Box(0, 255, (8, 8, 3), np.uint8)), n=2).allocate(name="obs")
    with pytest.raises(InvalidValueError) as info:
        batch.write(1, {"camera": np.zeros((8, 8), np.float32)})
    assert str(info.value) == (
        "obs for env 1 has the wrong shape, expected an array of shape (8, 8, 3) and a numeric dtype "
        "(stored as uint8), got array of shape (8, 8) and dtype float32 at obs['camera']"
    )


def test_root_dict_that_is_not_a_mapping() -> None:
    batch = SharedLayout(Dict(a=Discrete(2)), n=1).allocate()
    with pytest.raises(InvalidTypeError, match=re.escape("value for env 0 is not a dict")):
        batch.write(0, [1])
    with pytest.raises(InvalidValueError, match=re.escape("missing ['a'], unexpected ['b']")):
        batch.write(0, {"b": 1})


@pytest.mark.parametrize(
    ("index", "error"),
    [
        (-1, InvalidValueError),
        (2, InvalidValueError),
        (1.0, InvalidTypeError),
        (True, InvalidTypeError),
        (None, InvalidTypeError),
        (np.int64(5), InvalidValueError),
    ],
    ids=repr,
)
def test_bad_env_index(index: Any, error: type[Error]) -> None:
    batch = SharedLayout(Discrete(3), n=2).allocate()
    with pytest.raises(error, match="env index"):
        batch.write(index, 1)
    with pytest.raises(error, match="env index"):
        batch.read_env(index)
    assert batch.read().tolist() == [0, 0]
