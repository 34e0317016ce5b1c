"""Gymnasium-compatible shared-memory functions: across processes, against Gymnasium; CloudpickleWrapper."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import re
from typing import Any

import numpy as np
import pytest

from tests.catalog import make
from tests.helpers import Opaque, needs_gymnasium
from tests.vector.test_layout import FIXED_IDS, assert_env_value, env_of, kitchen_sink, normalized, samples
from vecspaces.error import CustomSpaceError, InvalidTypeError, InvalidValueError
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
from vecspaces.vector.utils import (
    CloudpickleWrapper,
    SharedBatch,
    SharedLayout,
    clear_mpi_env_vars,
    create_shared_memory,
    read_from_shared_memory,
    write_to_shared_memory,
)

START_METHODS = [
    method for method in ("fork", "forkserver", "spawn") if method in multiprocessing.get_all_start_methods()
]


@pytest.mark.parametrize("space_id", FIXED_IDS)
def test_read_of_write_through_the_gymnasium_functions(space_id: str) -> None:
    space = make(space_id)
    values = samples(space, 3, seed=5)
    memory = create_shared_memory(space, n=3)
    assert isinstance(memory, SharedBatch)
    for i, value in enumerate(values):
        assert write_to_shared_memory(space, i, value, memory) is None
    batched = read_from_shared_memory(space, memory, n=3)
    for i, value in enumerate(values):
        assert_env_value(memory.read_env(i), value)
    assert type(batched) is type(memory.read())


def test_buffer_is_one_lock_free_array_of_the_given_context() -> None:
    ctx = multiprocessing.get_context("spawn")
    memory = create_shared_memory(kitchen_sink(), n=2, ctx=ctx)
    assert not hasattr(memory.buffer, "get_lock") and not hasattr(memory.buffer, "get_obj")
    assert len(memory.buffer) >= memory.layout.nbytes


def test_array_reads_are_zero_copy_views() -> None:
    space = Box(0, 1, (2,))
    memory = create_shared_memory(space, n=2)
    view = read_from_shared_memory(space, memory, n=2)
    write_to_shared_memory(space, 1, np.array([0.5, 1.0], np.float32), memory)
    assert view.tolist() == [[0.0, 0.0], [0.5, 1.0]]
    assert read_from_shared_memory(space, memory, n=2) is view


def test_text_and_oneof_reads_are_never_stale() -> None:
    # Gymnasium's async pool reads once and keeps returning its first decode (spec section 6, item 2).
    space = Dict(t=Text(3, charset="abc"), o=OneOf((Discrete(2), Box(0.0, 1.0, (2,)))))
    memory = create_shared_memory(space, n=1)
    first = read_from_shared_memory(space, memory, n=1)
    write_to_shared_memory(space, 0, {"t": "cab", "o": (1, np.array([0.25, 0.5], np.float32))}, memory)
    second = read_from_shared_memory(space, memory, n=1)
    assert first["t"] == ("aaa",) and second["t"] == ("cab",)
    assert second["o"][0][0] == 1 and second["o"][0][1].tolist() == [0.25, 0.5]


# --- writes from child processes ---------------------------------------------------------------------------


def _write_all(space: Space[Any], memory: SharedBatch, values: list[Any]) -> None:
    for i, value in enumerate(values):
        write_to_shared_memory(space, i, value, memory)


def _write_all_through_the_batch(memory: SharedBatch, values: list[Any]) -> None:
    for i, value in enumerate(values):
        memory.write(i, value)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("method", START_METHODS)
def test_child_process_writes_are_read_by_the_parent(method: str) -> None:
    ctx = multiprocessing.get_context(method)
    space = kitchen_sink()
    values = samples(space, 3, seed=11)
    memory = create_shared_memory(space, n=3, ctx=ctx)
    view = read_from_shared_memory(space, memory, n=3)["image"]
    child = ctx.Process(target=_write_all, args=(space, memory, values))
    child.start()
    child.join(50)
    assert child.exitcode == 0
    for i, value in enumerate(values):
        assert_env_value(memory.read_env(i), value)
    assert np.array_equal(view, np.stack([value["image"] for value in values]))  # seen through the old view


@pytest.mark.timeout(60)
@pytest.mark.parametrize("method", START_METHODS)
def test_child_process_writes_through_the_batch_alone(method: str) -> None:
    ctx = multiprocessing.get_context(method)
    space = Tuple((Text(5, charset="日本語🙂é"), OneOf((Box(-1, 1, (2,), np.float16), Discrete(4, start=2)))))
    values = samples(space, 2, seed=2)
    memory = create_shared_memory(space, n=2, ctx=ctx)
    child = ctx.Process(target=_write_all_through_the_batch, args=(memory, values))
    child.start()
    child.join(50)
    assert child.exitcode == 0
    for i, value in enumerate(values):
        assert_env_value(memory.read_env(i), value)


# Integer Boxes over their dtype's whole range, besides the catalog's (uint16 is not in it).
FULL_RANGE_DTYPES = [np.uint16, np.int16, np.uint32, np.int32, np.uint8, np.int8, np.uint64, np.int64]


def full_range_box(dtype: Any) -> Box:
    info = np.iinfo(dtype)
    return Box(int(info.min), int(info.max), (3,), dtype)


def catalog_dict() -> Dict:
    """One Dict of every fixed-size catalog space, and of full-range uint16, int16 and uint32 Boxes."""
    children: dict[str, Space[Any]] = {space_id: make(space_id) for space_id in FIXED_IDS}
    for dtype in (np.uint16, np.int16, np.uint32):
        children[f"full_{np.dtype(dtype).name}"] = full_range_box(dtype)
    return Dict(children)


def catalog_values(space: Dict, n: int) -> list[Any]:
    """Samples of ``space``, with the full-range Boxes at their dtype's minimum and maximum in envs 0 and 1."""
    values = samples(space, n, seed=13)
    for key, child in space.spaces.items():
        if key.startswith("full_"):
            info = np.iinfo(child.dtype)
            values[0][key] = np.array([info.min, info.max, 0], child.dtype)
            values[1][key] = np.array([info.max, info.min, info.max // 3], child.dtype)
    return values


@pytest.mark.timeout(120)
@pytest.mark.parametrize("method", START_METHODS)
def test_child_process_writes_every_fixed_size_catalog_space(method: str) -> None:
    # One child per start method writes every env of a Dict holding every fixed-size catalog space, with
    # write_to_shared_memory; the parent reads each env's value back through read_from_shared_memory.
    ctx = multiprocessing.get_context(method)
    space = catalog_dict()
    values = catalog_values(space, 3)
    memory = create_shared_memory(space, n=3, ctx=ctx)
    child = ctx.Process(target=_write_all, args=(space, memory, values))
    child.start()
    child.join(100)
    assert child.exitcode == 0
    batched = read_from_shared_memory(space, memory, n=3)
    for key, child_space in space.spaces.items():
        for i, value in enumerate(values):
            try:
                assert_env_value(env_of(batched[key], i, child_space), value[key])
            except AssertionError as error:
                raise AssertionError(f"{key}, env {i}: {error}") from error


@pytest.mark.parametrize("dtype", FULL_RANGE_DTYPES, ids=lambda dtype: np.dtype(dtype).name)
def test_integer_boxes_keep_their_extremes(dtype: Any) -> None:
    space = full_range_box(dtype)
    info = np.iinfo(dtype)
    memory = create_shared_memory(space, n=2)
    write_to_shared_memory(space, 0, np.array([info.min, info.max, 1], dtype), memory)
    write_to_shared_memory(space, 1, np.array([info.max, info.min, -1 if info.min else 2], dtype), memory)
    read = read_from_shared_memory(space, memory, n=2)
    assert read.dtype == np.dtype(dtype)
    assert read.tolist() == [[info.min, info.max, 1], [info.max, info.min, -1 if info.min else 2]]


# --- errors ------------------------------------------------------------------------------------------------

# Spaces with a leaf of no fixed size, where that leaf is, and its kind.
VARIABLE_SIZE_SPACES = pytest.mark.parametrize(
    ("space", "path", "kind"),
    [
        (Sequence(Discrete(2)), "at space;", "Sequence"),
        (Dict(a=Discrete(2), trail=Sequence(Box(0, 1, (2,)))), "at space['trail'];", "Sequence"),
        (Tuple((Discrete(2), Tuple((Box(0, 1, ()), Graph(Discrete(3), None))))), "at space[1][1];", "Graph"),
        (Dict(o=OneOf((Discrete(2), Sequence(Discrete(2))))), "at space['o'];", "OneOf"),
    ],
    ids=["sequence", "dict_sequence", "nested_graph", "oneof_sequence"],
)


@VARIABLE_SIZE_SPACES
def test_variable_size_leaves_cannot_be_created_and_the_error_names_the_path(
    space: Space[Any], path: str, kind: str
) -> None:
    with pytest.raises(InvalidTypeError) as info:
        create_shared_memory(space, n=2)
    text = str(info.value)
    assert isinstance(info.value, TypeError)
    assert f"create_shared_memory cannot store a {kind}: its size is not fixed" in text
    assert path in text and "shared_memory=False" in text


@VARIABLE_SIZE_SPACES
def test_read_and_write_refuse_layout_memory_with_variable_size_leaves(space: Space[Any], path: str, kind: str) -> None:
    # SharedLayout(space, n).allocate() accepts such spaces (the pool sends those leaves through its pipe);
    # the Gymnasium-compatible functions cannot carry them, so they refuse instead of dropping the values.
    memory = SharedLayout(space, n=2).allocate()
    space.seed(3)
    value = space.sample()
    before = bytes(np.frombuffer(memory.buffer, dtype=np.uint8))
    for operation, call in (
        ("write_to_shared_memory cannot write", lambda: write_to_shared_memory(space, 0, value, memory)),
        ("read_from_shared_memory cannot read", lambda: read_from_shared_memory(space, memory, n=2)),
    ):
        with pytest.raises(InvalidTypeError) as info:
            call()
        text = str(info.value)
        assert f"{operation} a {kind}: its size is not fixed" in text
        assert path in text and "shared_memory=False" in text and "SharedBatch.write" in text
    assert bytes(np.frombuffer(memory.buffer, dtype=np.uint8)) == before
    # SharedBatch itself still carries them: write returns the variable values, read takes them back.
    sent = memory.write(1, value)
    assert len(sent) == len(memory.layout.variable_leaves) >= 1
    assert memory.read(variable=[(None, variable) for variable in sent]) is not None


def test_a_gymnasium_space_gets_a_hint_to_convert_it() -> None:
    gym_spaces = pytest.importorskip("gymnasium.spaces")
    gym_space = gym_spaces.Discrete(3)
    memory = create_shared_memory(Discrete(3), n=1)
    for call in (
        lambda: create_shared_memory(gym_space),
        lambda: read_from_shared_memory(gym_space, memory),
        lambda: write_to_shared_memory(gym_space, 0, 1, memory),
    ):
        with pytest.raises(InvalidTypeError, match=re.escape("vecspaces.spaces.from_gymnasium")):
            call()


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, 2.5], ids=repr)
def test_fractions_and_non_finite_numbers_for_integer_leaves_are_refused_and_nothing_is_written(bad: float) -> None:
    space = Dict(a=Box(0.0, 1.0, (2,)), count=Discrete(5), pixels=Box(0, 255, (2,), np.uint8))
    memory = create_shared_memory(space, n=2)
    good = {"a": np.array([0.5, 0.5], np.float32), "count": 3, "pixels": np.array([1, 2], np.uint8)}
    write_to_shared_memory(space, 0, good, memory)
    before = bytes(np.frombuffer(memory.buffer, dtype=np.uint8))
    for change, path in ((("count", bad), "value['count']"), (("pixels", np.array([7.0, bad])), "value['pixels']")):
        with pytest.raises(InvalidValueError, match=re.escape("a fraction, a NaN or an infinity")) as info:
            write_to_shared_memory(space, 0, {**good, "a": np.zeros(2, np.float32), change[0]: change[1]}, memory)
        assert str(info.value).endswith(f"at {path}")
    assert bytes(np.frombuffer(memory.buffer, dtype=np.uint8)) == before
    write_to_shared_memory(
        space, 1, {**good, "a": np.array([np.nan, bad], np.float32)}, memory
    )  # float leaves take them
    assert np.isnan(read_from_shared_memory(space, memory, n=2)["a"][1, 0]) or bad == 2.5


NOT_A_SPACE = ["Box", None, np.zeros(3), 3]


@pytest.mark.parametrize("thing", NOT_A_SPACE, ids=repr)
def test_non_spaces_are_invalid_types(thing: Any) -> None:
    memory = create_shared_memory(Discrete(2), n=1)
    with pytest.raises(InvalidTypeError, match="create_shared_memory was given a non-space"):
        create_shared_memory(thing)
    with pytest.raises(InvalidTypeError, match="read_from_shared_memory was given a non-space"):
        read_from_shared_memory(thing, memory)
    with pytest.raises(InvalidTypeError, match="write_to_shared_memory was given a non-space"):
        write_to_shared_memory(thing, 0, 1, memory)


def test_custom_space_without_a_layout() -> None:
    with pytest.raises(CustomSpaceError, match=re.escape("at space['c']")):
        create_shared_memory(Dict(c=Opaque()))


def test_reading_or_writing_a_custom_space_names_the_space_first() -> None:
    # As in Gymnasium: a custom space is what is wrong, whatever memory comes with it; a memory for another
    # space of a known kind is the memory's fault.
    memory = create_shared_memory(Discrete(2), n=1)
    for bad_memory in (None, memory):
        with pytest.raises(CustomSpaceError, match=re.escape("at space['c']")):
            read_from_shared_memory(Dict(c=Opaque()), bad_memory, 1)
        with pytest.raises(CustomSpaceError, match=re.escape("at space['c']")):
            write_to_shared_memory(Dict(c=Opaque()), 0, {"c": 1}, bad_memory)
    with pytest.raises(InvalidTypeError, match="needs the memory made by create_shared_memory"):
        read_from_shared_memory(Discrete(2), None, 1)
    with pytest.raises(InvalidValueError, match="layout differs"):
        read_from_shared_memory(Box(0, 1, (2,)), memory, 1)


@pytest.mark.parametrize("n", [-2, 2.0, None])
def test_bad_batch_size(n: Any) -> None:
    with pytest.raises(InvalidValueError, match="create_shared_memory batch size"):
        create_shared_memory(Discrete(2), n=n)


def test_read_with_another_batch_size() -> None:
    space = Discrete(2)
    memory = create_shared_memory(space, n=3)
    with pytest.raises(InvalidValueError, match=re.escape("expected n=3, got 1")):
        read_from_shared_memory(space, memory)


def test_memory_that_is_not_a_shared_batch() -> None:
    space = Discrete(2)
    with pytest.raises(InvalidTypeError, match="needs the memory made by create_shared_memory"):
        read_from_shared_memory(space, multiprocessing.Array("l", 2), n=2)
    with pytest.raises(InvalidTypeError, match="needs the memory made by create_shared_memory"):
        write_to_shared_memory(space, 0, 1, {"a": 1})


def test_space_with_another_layout_is_refused_and_one_with_the_same_layout_accepted() -> None:
    memory = create_shared_memory(Box(0, 1, (2,)), n=2)
    with pytest.raises(InvalidValueError, match="layout differs"):
        write_to_shared_memory(Box(0, 1, (3,)), 0, np.zeros(3, np.float32), memory)
    with pytest.raises(InvalidValueError, match="layout differs"):
        read_from_shared_memory(Box(0, 1, (2,), np.float64), memory, n=2)
    other_bounds = Box(-5, 5, (2,))
    write_to_shared_memory(other_bounds, 1, np.array([-4.0, 4.0], np.float32), memory)
    assert read_from_shared_memory(other_bounds, memory, n=2)[1].tolist() == [-4.0, 4.0]


def test_bad_values_raise_and_write_nothing() -> None:
    space = Dict(camera=Box(0, 255, (2, 2), np.uint8), name=Text(2, charset="ab"))
    memory = create_shared_memory(space, n=2)
    with pytest.raises(InvalidValueError, match=re.escape("at value['name']")):
        write_to_shared_memory(space, 0, {"camera": np.ones((2, 2), np.uint8), "name": "abc"}, memory)
    with pytest.raises(InvalidValueError, match="missing keys"):
        write_to_shared_memory(space, 0, {"camera": np.ones((2, 2), np.uint8)}, memory)
    with pytest.raises(InvalidValueError, match="env index is out of range"):
        write_to_shared_memory(space, 2, {"camera": np.ones((2, 2), np.uint8), "name": "a"}, memory)
    assert not read_from_shared_memory(space, memory, n=2)["camera"].any()


# --- differential: Gymnasium's vector utilities ------------------------------------------------------------


def _pairs() -> list[tuple[str, Space[Any], Any]]:
    gym_spaces = pytest.importorskip("gymnasium.spaces")
    return [
        ("box_uint8", Box(0, 255, (4, 4, 3), np.uint8), gym_spaces.Box(0, 255, (4, 4, 3), np.uint8)),
        ("box_f16", Box(-1, 1, (3,), np.float16), gym_spaces.Box(-1, 1, (3,), np.float16)),
        ("box_bool", Box(0, 1, (3,), np.bool_), gym_spaces.Box(0, 1, (3,), np.bool_)),
        *(
            (f"box_{np.dtype(dtype).name}", full_range_box(dtype), gym_spaces.Box(*_bounds(dtype), (3,), dtype))
            for dtype in (np.uint16, np.int16, np.uint32)
        ),
        ("discrete_start", Discrete(5, start=-2), gym_spaces.Discrete(5, start=-2)),
        ("multibinary", MultiBinary((2, 2)), gym_spaces.MultiBinary((2, 2))),
        (
            "multidiscrete",
            MultiDiscrete([3, 4], start=[1, -1]),
            gym_spaces.MultiDiscrete([3, 4], start=[1, -1]),
        ),
        ("text_unicode", Text(4, charset="日本語🙂é"), gym_spaces.Text(4, charset="日本語🙂é")),
        (
            "oneof",
            OneOf((Discrete(3), Box(0.0, 1.0, (2,)))),
            gym_spaces.OneOf((gym_spaces.Discrete(3), gym_spaces.Box(0.0, 1.0, (2,)))),
        ),
        (
            "nested",
            Dict(a=Tuple((Discrete(2), Box(-1, 1, (2,)))), b=Dict(c=MultiBinary(3), d=Text(2, charset="xy"))),
            gym_spaces.Dict(
                a=gym_spaces.Tuple((gym_spaces.Discrete(2), gym_spaces.Box(-1, 1, (2,)))),
                b=gym_spaces.Dict(c=gym_spaces.MultiBinary(3), d=gym_spaces.Text(2, charset="xy")),
            ),
        ),
    ]


def _bounds(dtype: Any) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


@needs_gymnasium((1, 4), "its create_shared_memory cannot hold a float16 Box (TypeError)")
def test_differential_read_of_write_matches_gymnasium() -> None:
    gym_utils = pytest.importorskip("gymnasium.vector.utils")
    for name, space, gym_space in _pairs():
        values = samples(space, 2, seed=7)
        ours = create_shared_memory(space, n=3)
        theirs = gym_utils.create_shared_memory(gym_space, n=3)
        for i, value in zip((0, 2), values, strict=True):  # env 1 stays unwritten in both
            write_to_shared_memory(space, i, value, ours)
            gym_utils.write_to_shared_memory(gym_space, i, value, theirs)
        expected = gym_utils.read_from_shared_memory(gym_space, theirs, n=3)
        got = read_from_shared_memory(space, ours, n=3)
        try:
            assert_env_value(_as_tuples(got), _as_tuples(expected))
        except AssertionError as error:
            raise AssertionError(f"{name}: {error}") from error


def _as_tuples(batched: Any) -> Any:
    """Gymnasium's OneOf reads row views; ours copies. Compare values only, as plain structures."""
    if isinstance(batched, dict):
        return {key: _as_tuples(item) for key, item in batched.items()}
    if isinstance(batched, tuple):
        return tuple(_as_tuples(item) for item in batched)
    if isinstance(batched, np.ndarray):
        return np.array(batched)
    return normalized(batched)


# --- CloudpickleWrapper and clear_mpi_env_vars -------------------------------------------------------------


def _call_and_report(fn: CloudpickleWrapper, queue: Any) -> None:
    queue.put(fn())


@pytest.mark.timeout(60)
def test_cloudpickle_wrapper_carries_a_lambda_to_a_spawned_process() -> None:
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    offset = 40
    child = ctx.Process(target=_call_and_report, args=(CloudpickleWrapper(lambda: offset + 2), queue))
    child.start()
    try:
        assert queue.get(timeout=50) == 42
    finally:
        child.join(10)
    assert child.exitcode == 0


def test_cloudpickle_wrapper_pickles_closures_and_passes_arguments() -> None:
    scale = 3
    wrapper = pickle.loads(pickle.dumps(CloudpickleWrapper(lambda x, *, bias=0: scale * x + bias)))
    assert wrapper(2) == 6 and wrapper(2, bias=1) == 7
    with pytest.raises(Exception):  # noqa: B017 (plain pickle cannot carry a lambda: the reason for the wrapper)
        pickle.dumps(lambda: 1)


def test_cloudpickle_wrapper_repr() -> None:
    assert repr(CloudpickleWrapper(len)) == "CloudpickleWrapper(<built-in function len>)"


def test_clear_mpi_env_vars_hides_and_restores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "4")
    monkeypatch.setenv("PMI_RANK", "1")
    monkeypatch.setenv("OTHER", "x")
    with clear_mpi_env_vars():
        assert "OMPI_COMM_WORLD_SIZE" not in os.environ and "PMI_RANK" not in os.environ
        assert os.environ["OTHER"] == "x"
    assert os.environ["OMPI_COMM_WORLD_SIZE"] == "4" and os.environ["PMI_RANK"] == "1"
