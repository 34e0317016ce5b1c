"""Actions given as any array-like (lists, tuples, numpy scalars, arrays of another dtype) and reset seeds
given as any sequence: converted once, exactly, or refused with a typed error before any env is touched."""

from __future__ import annotations

import functools
import multiprocessing
from typing import Any

import numpy as np
import pytest

from tests.catalog import IDS, make
from tests.helpers import assert_same_value
from tests.vector.envs import CountdownEnv
from vecspaces.env import Env
from vecspaces.error import InvalidTypeError, InvalidValueError
from vecspaces.spaces import Box, Dict, Discrete, MultiBinary, MultiDiscrete, Space, Tuple
from vecspaces.vector import AsyncVectorEnv, SyncVectorEnv
from vecspaces.vector._arguments import actions_per_env, as_action_batch, seeds_per_env
from vecspaces.vector._casting import cast_exactly
from vecspaces.vector.utils import batch_space, concatenate, create_empty_array

N = 3
FORMS = ["lists", "tuples", "rows", "scalars"]
CONTEXT = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
ARRAY_KINDS = (Box, Discrete, MultiBinary, MultiDiscrete)


class EchoEnv(Env[Any, Any]):
    """Action space and observation space are the catalog space ``space_id``; each step returns the action it
    got as the observation and keeps it in ``received``."""

    def __init__(self, space_id: str) -> None:
        self.action_space = make(space_id)
        self.observation_space = make(space_id)
        self.received: list[Any] = []

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.observation_space.seed(0)
        return self.observation_space.sample(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.received.append(action)
        return action, 0.0, False, False, {}


def sampled_batch(space_id: str, seed: int = 0) -> tuple[Space[Any], Space[Any], Any]:
    """The single space, its batch of N, and a batch of N samples in the batched space's own form."""
    single = make(space_id)
    single.seed(seed)
    samples = [single.sample() for _ in range(N)]
    return single, batch_space(single, N), concatenate(single, samples, create_empty_array(single, N))


def express(single: Space[Any], batch: Any, form: str) -> Any:
    """``batch`` (a value of ``batch_space(single, N)``) written as the array-like ``form``."""
    if isinstance(single, Dict):
        return {key: express(child, batch[key], form) for key, child in single.spaces.items()}
    if isinstance(single, Tuple):
        parts = [express(child, part, form) for child, part in zip(single.spaces, batch, strict=True)]
        return tuple(parts) if form == "tuples" else parts
    if not isinstance(single, ARRAY_KINDS):  # a batch of per-env values (Text, Sequence, Graph, OneOf)
        return tuple(batch) if form == "tuples" else list(batch)
    assert isinstance(batch, np.ndarray)
    if form == "lists":
        return batch.tolist()
    if form == "tuples":
        return _tuples(batch.tolist())
    if form == "rows":
        return list(batch)
    return _numpy_scalars(batch)


def as_given(single: Space[Any], batch: Any, form: str) -> Any:
    """``batch`` as the envs get it given in ``form``: Python floats for a float Box stay float64, as in Gymnasium."""
    if isinstance(single, Dict):
        return {key: as_given(child, batch[key], form) for key, child in single.spaces.items()}
    if isinstance(single, Tuple) and all(isinstance(child, (*ARRAY_KINDS, Dict, Tuple)) for child in single.spaces):
        return tuple(as_given(child, part, form) for child, part in zip(single.spaces, batch, strict=True))
    if isinstance(single, Box) and single.dtype.kind == "f" and form in ("lists", "tuples"):
        return batch.astype(np.float64)
    return batch


def _tuples(value: Any) -> Any:
    return tuple(_tuples(item) for item in value) if isinstance(value, list) else value


def _numpy_scalars(array: np.ndarray) -> Any:
    return [_numpy_scalars(row) for row in array] if array.ndim else array[()]


def has_array_leaf(space: Space[Any]) -> bool:
    if isinstance(space, ARRAY_KINDS):
        return True
    if isinstance(space, Dict):
        return any(has_array_leaf(child) for child in space.spaces.values())
    if isinstance(space, Tuple):
        return any(has_array_leaf(child) for child in space.spaces)
    return False


# -- every kind, every form ------------------------------------------------------------------------------------


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("space_id", IDS)
def test_array_likes_split_like_the_batch_itself(space_id: str, form: str) -> None:
    single, batched, batch = sampled_batch(space_id)
    expected = as_given(single, batch, form)
    given = express(single, batch, form)
    assert_same_value(actions_per_env(batched, given, N), actions_per_env(batched, expected, N))
    if has_array_leaf(single):  # the form really differs from the batch: there was something to convert
        assert not isinstance(given, np.ndarray)
        assert_same_value(as_action_batch(batched, given), expected)


@pytest.mark.parametrize("space_id", IDS)
def test_sync_vector_env_steps_with_array_likes(space_id: str) -> None:
    single, _, batch = sampled_batch(space_id)
    with SyncVectorEnv([functools.partial(EchoEnv, space_id) for _ in range(N)]) as envs:
        envs.reset(seed=0)
        for form in FORMS:
            envs.step(as_given(single, batch, form))
            envs.step(express(single, batch, form))
        received = envs.get_attr("received")
    for env_actions in received:
        assert len(env_actions) == 2 * len(FORMS)
        for expected, action in zip(env_actions[::2], env_actions[1::2], strict=True):
            assert_same_value(action, expected)


ASYNC_IDS = ["discrete_start3", "box_f64_2d", "box_uint64_big", "multibinary_2d", "dict_nested", "tuple_nested"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("shared_memory", [True, False], ids=["shm", "pipes"])
def test_async_vector_env_steps_with_array_likes(shared_memory: bool) -> None:
    for space_id in ASYNC_IDS:
        single, _, batch = sampled_batch(space_id)
        fns = [functools.partial(EchoEnv, space_id) for _ in range(N)]
        with AsyncVectorEnv(fns, shared_memory=shared_memory, context=CONTEXT, num_workers=2, timeout=30) as envs:
            envs.reset(seed=0)
            for form in ["lists", "scalars"]:
                envs.step(as_given(single, batch, form))
                envs.step(express(single, batch, form))
            received = envs.get_attr("received")
        for env_actions in received:
            assert len(env_actions) == 4, space_id
            for expected, action in zip(env_actions[::2], env_actions[1::2], strict=True):
                assert_same_value(action, expected, space_id)


def iterated(single: Space[Any], batch: Any) -> Any:
    """``batch`` with each per-env dimension given as a generator (a new one at every call)."""
    if isinstance(single, Dict):
        return {key: iterated(child, batch[key]) for key, child in single.spaces.items()}
    if isinstance(single, Tuple):
        return tuple(iterated(child, part) for child, part in zip(single.spaces, batch, strict=True))
    return (value for value in (batch.tolist() if isinstance(batch, np.ndarray) else batch))


@pytest.mark.parametrize("space_id", IDS)
def test_generators_of_actions_split_like_lists(space_id: str) -> None:
    single, batched, batch = sampled_batch(space_id)
    expected = actions_per_env(batched, as_given(single, batch, "lists"), N)
    assert_same_value(actions_per_env(batched, iterated(single, batch), N), expected)
    if has_array_leaf(single):
        assert_same_value(as_action_batch(batched, iterated(single, batch)), as_given(single, batch, "lists"))


# Iterables numpy reads as one object rather than a batch; Gymnasium iterates them, one action per env.
ONE_PASS = {
    "generator": lambda actions: (action for action in actions),
    "map": lambda actions: map(int, actions),
    "iterator": iter,
    "dict values": lambda actions: dict(enumerate(actions)).values(),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", list(ONE_PASS))
def test_vector_envs_step_with_any_iterable_of_actions_as_gymnasium_does(kind: str) -> None:
    gym = pytest.importorskip("gymnasium")
    fns = [functools.partial(EchoEnv, "discrete_start3") for _ in range(N)]
    actions = [3, 5, 4]  # Discrete(3, start=3)
    received = []
    for make_envs in (
        gym.vector.SyncVectorEnv,
        SyncVectorEnv,
        functools.partial(AsyncVectorEnv, context=CONTEXT, num_workers=2, timeout=30),
    ):
        envs = make_envs(fns)  # Gymnasium's vector envs before 1.4 are no context managers
        try:
            envs.reset(seed=0)
            envs.step(ONE_PASS[kind](actions))
            received.append([int(env_actions[0]) for env_actions in envs.get_attr("received")])
        finally:
            envs.close()
    assert received == [actions] * 3


class TensorLike:
    """What a torch tensor shows numpy: ``__array__``, and 0-d tensors (not numbers) when iterated."""

    def __init__(self, values: Any) -> None:
        self.values = np.asarray(values)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self.values if dtype is None else self.values.astype(dtype)

    def __len__(self) -> int:
        return len(self.values)

    def __iter__(self) -> Any:
        return (TensorLike(value) for value in self.values)


@pytest.mark.timeout(60)
def test_tensor_like_actions_reach_the_envs_as_numpy_values() -> None:
    # Gymnasium hands each env a 0-d tensor, which a Discrete action space refuses.
    fns = [functools.partial(EchoEnv, "discrete_start3") for _ in range(N)]
    for envs in [SyncVectorEnv(fns), AsyncVectorEnv(fns, context=CONTEXT, num_workers=2, timeout=30)]:
        with envs:
            envs.reset(seed=0)
            observations, *_ = envs.step(TensorLike([3, 4, 5]))
            assert observations.tolist() == [3, 4, 5]
            assert [type(actions[0]) for actions in envs.get_attr("received")] == [np.int64] * N
            with pytest.raises(InvalidValueError, match="changes when cast"):
                envs.step(TensorLike([3.5, 4.0, 5.0]))


def test_exact_arrays_are_not_copied() -> None:
    batch = np.array([[0.5, 0.25], [1.0, 0.0]], np.float32)
    rows = actions_per_env(batch_space(Box(0, 1, (2,)), 2), batch, 2)
    assert all(np.shares_memory(row, batch) for row in rows)
    assert cast_exactly(batch, np.float32) is batch
    parts = {"gear": np.array([1, 2]), "force": batch}
    converted = as_action_batch(batch_space(Dict(gear=Discrete(3), force=Box(0, 1, (2,))), 2), parts)
    assert converted["gear"] is parts["gear"] and converted["force"] is batch


INTEGER_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


@pytest.mark.parametrize("target", INTEGER_DTYPES, ids=lambda dtype: np.dtype(dtype).name)
@pytest.mark.parametrize("source", INTEGER_DTYPES, ids=lambda dtype: np.dtype(dtype).name)
def test_integer_casts_keep_exactly_the_values_the_target_holds(source: Any, target: Any) -> None:
    # Each source's extremes and the target's bounds and their neighbours, where the source holds them.
    own, info = np.iinfo(source), np.iinfo(target)
    candidates = {int(own.min), int(own.max), 0, 1, int(info.min), int(info.max), int(info.min) - 1, int(info.max) + 1}
    for value in sorted(number for number in candidates if own.min <= number <= own.max):
        values = np.array([0, value], source)
        if info.min <= value <= info.max:
            assert cast_exactly(values, target).tolist() == [0, value]
        else:
            with pytest.raises(InvalidValueError, match=r"changes when cast.*at actions\[1\]"):
                cast_exactly(values, target)


# -- casts that are accepted -----------------------------------------------------------------------------------

ACCEPTED = {
    # name: (single space, actions for a batch of 2, the per-env values expected)
    "whole floats to int64": (Discrete(3), np.array([1.0, 2.0]), [1, 2]),
    "whole float list to int64": (Discrete(3), [1.0, np.float32(2)], [1, 2]),
    "uint64 below the int64 maximum": (Discrete(3), np.array([2**63 - 1, 0], np.uint64), [2**63 - 1, 0]),
    "float64 int64 minimum": (Discrete(3), np.array([-(2.0**63), 0.0]), [-(2**63), 0]),
    "largest float64 below 2**64": (
        Box(0, 2**64 - 1, (1,), np.uint64),
        [[2.0**64 - 2048], [0.0]],
        [[2**64 - 2048], [0]],
    ),
    "python ints beyond int64 to uint64": (Box(0, 2**64 - 1, (1,), np.uint64), [[2**63 + 5], [1]], [[2**63 + 5], [1]]),
    "uint64 and negative numpy ints": (Discrete(3, start=-2), [np.uint64(1), np.int64(-2)], [1, -2]),
    "0 and 1 to bool": (Box(0, 1, (2,), np.bool_), np.array([[0.0, 1.0], [1.0, -0.0]]), [[False, True], [True, False]]),
    "out of bounds but representable": (Discrete(3), [7, -4], [7, -4]),
    "bool to float": (Box(0, 1, (1,)), [[True], [False]], [[1.0], [0.0]]),
    "int list to bool": (Box(0, 1, (2,), np.bool_), [[0, 1], [1, 0]], [[False, True], [True, False]]),
}


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_exact_casts_are_accepted(name: str) -> None:
    single, actions, expected = ACCEPTED[name]
    batched = batch_space(single, 2)
    split = actions_per_env(batched, actions, 2)
    for action, value in zip(split, expected, strict=True):
        assert np.asarray(action).dtype == single.dtype
        assert np.asarray(action).tolist() == np.asarray(value, dtype=single.dtype).tolist()


FLOAT_FORMS = {
    "float64 array": (np.array([[0.1], [1e300]]), np.float64),
    "float32 array": (np.array([[0.1], [0.2]], np.float32), np.float32),
    "float16 array": (np.array([[0.1], [0.2]], np.float16), np.float16),
    "list of Python floats": ([[0.1], [1e300]], np.float64),
    "list of float32 scalars": ([[np.float32(0.1)], [np.float32(0.2)]], np.float32),
}


@pytest.mark.parametrize("space_dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("form", list(FLOAT_FORMS))
def test_float_actions_for_a_float_box_keep_their_dtype_as_in_gymnasium(form: str, space_dtype: Any) -> None:
    # Gymnasium hands each env its row of the caller's array: nothing is cast, so 1e300 for a float16 Box too.
    actions, dtype = FLOAT_FORMS[form]
    split = actions_per_env(batch_space(Box(-1, 1, (1,), space_dtype), 2), actions, 2)
    assert [row.dtype for row in split] == [np.dtype(dtype)] * 2
    assert [row.tolist() for row in split] == np.asarray(actions).tolist()


# -- casts that are refused ------------------------------------------------------------------------------------

INT64_RANGE = "whole numbers from -9223372036854775808 to 9223372036854775807"
REFUSED = {
    # name: (single space, actions for a batch of 2, message parts the error must hold)
    "uint64 array above int64": (
        Discrete(3),
        np.array([0, 2**63 + 5], np.uint64),
        ["changes when cast to int64", INT64_RANGE, "9223372036854775813", "at actions[1]"],
    ),
    "uint64 exactly 2**63": (Discrete(3), np.array([2**63, 0], np.uint64), ["int64", "9223372036854775808", "[0]"]),
    "python int above int64": (Discrete(3), [0, 2**63 + 5], ["changes when cast to int64", "9223372036854775813"]),
    "python int beyond uint64": (Discrete(3), [2**64, 0], ["int64", "18446744073709551616", "at actions[0]"]),
    "uint64 scalars above int64": (Discrete(3), [np.uint64(2**63 + 5), np.int64(-1)], ["int64", "9223372036854775813"]),
    "float64 2**63": (Discrete(3), np.array([0.0, 2.0**63]), ["int64", "9.223372036854776e+18", "at actions[1]"]),
    "fraction": (Discrete(3), [0.5, 1], ["changes when cast to int64", "0.5", "at actions[0]"]),
    "fraction in an array": (Discrete(3), np.array([1.0, 2.5]), ["int64", "2.5", "at actions[1]"]),
    "nan": (Discrete(3), np.array([np.nan, 1.0]), ["int64", "nan", "at actions[0]"]),
    "inf": (Discrete(3), [1, np.inf], ["int64", "inf", "at actions[1]"]),
    "above uint8": (Discrete(200, start=10, dtype=np.uint8), [300, 10], ["uint8", "from 0 to 255", "300"]),
    "negative to uint8": (Discrete(200, start=10, dtype=np.uint8), [10, -1], ["uint8", "-1", "at actions[1]"]),
    "int64 array above int8": (Box(-128, 127, (2,), np.int8), np.array([[0, 0], [0, 200]]), ["int8", "[1][1]"]),
    "negative to uint64": (Box(0, 2**64 - 1, (2,), np.uint64), [[1, 2], [-1, 0]], ["uint64", "-1", "[1][0]"]),
    "int overflow to float16": (Box(-1, 1, (1,), np.float16), np.array([[0], [70000]]), ["float16", "70000"]),
    "2 to bool": (Box(0, 1, (2,), np.bool_), [[0, 1], [2, 1]], ["changes when cast to bool", "0 or 1", "[1][0]"]),
    "fraction to bool": (Box(0, 1, (2,), np.bool_), np.array([[0.5, 1], [1, 1]]), ["bool", "0.5"]),
    "nested leaf": (
        Dict(gear=Discrete(3), force=Box(-1, 1, (2,))),
        {"gear": [1, 1.5], "force": [[0, 0], [0, 0]]},
        ["actions['gear'] has a value that changes when cast to int64", "1.5", "at actions['gear'][1]"],
    ),
    "leaf in a tuple": (
        Tuple((Discrete(2), Tuple((Box(-1, 1, (), np.int8),)))),
        ([0, 1], ([0, 128],)),
        ["int8", "128", "at actions[1][0][1]"],
    ),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_casts_that_change_a_value_are_refused(name: str) -> None:
    single, actions, parts = REFUSED[name]
    with pytest.raises(InvalidValueError) as info:
        actions_per_env(batch_space(single, 2), actions, 2)
    for part in parts:
        assert part in str(info.value)


@pytest.mark.parametrize("name", ["uint64 array above int64", "python int above int64", "fraction", "nested leaf"])
def test_a_refused_cast_never_reaches_the_sync_envs(name: str) -> None:
    single, actions, _ = REFUSED[name]
    env_fns = [functools.partial(_SpaceEcho, single) for _ in range(2)]
    with SyncVectorEnv(env_fns) as envs:
        envs.reset(seed=0)
        with pytest.raises(InvalidValueError):
            envs.step(actions)
        assert envs.get_attr("received") == ([], [])


class _SpaceEcho(EchoEnv):
    def __init__(self, space: Space[Any]) -> None:
        self.action_space = space
        self.observation_space = space
        self.received = []


@pytest.mark.timeout(60)
def test_a_refused_list_never_reaches_the_async_envs() -> None:
    fns = [functools.partial(EchoEnv, "discrete_2") for _ in range(2)]
    with AsyncVectorEnv(fns, context=CONTEXT, num_workers=2, timeout=30) as envs:
        envs.reset(seed=0)
        for refused in ([0, 2**63 + 5], [0.5, 1], [np.nan, 0]):
            with pytest.raises(InvalidValueError, match="changes when cast to int64"):
                envs.step(refused)
        envs.step([1, np.int64(0)])
        received = envs.get_attr("received")
    assert [[int(action) for action in actions] for actions in received] == [[1], [0]]


@pytest.mark.timeout(60)
def test_async_arrays_of_another_dtype_are_cast_exactly() -> None:
    fns = [functools.partial(EchoEnv, "discrete_2") for _ in range(2)]
    with AsyncVectorEnv(fns, context=CONTEXT, num_workers=2, timeout=30) as envs:
        envs.reset(seed=0)
        with pytest.raises(InvalidValueError, match="changes when cast to int64"):
            envs.step(np.array([0, 2**63 + 5], np.uint64))
        envs.step(np.array([1.0, 0.0]))  # whole floats convert exactly
        received = envs.get_attr("received")
    assert [[int(action) for action in actions] for actions in received] == [[1], [0]]


# -- what does not convert -------------------------------------------------------------------------------------

TWO_FORCES = Dict(gear=Discrete(3), force=Box(-1, 1, (2,)))
UNCONVERTIBLE = {
    # name: (single space, actions for a batch of 2, exception type, message parts)
    "ragged": (Box(0, 1, (2,)), [[0.1, 0.2], [0.3]], InvalidValueError, ["do not form a batch"]),
    "ragged leaf": (TWO_FORCES, {"gear": [0, 1], "force": [[0], [0, 0]]}, InvalidValueError, ["do not form a batch"]),
    "strings for a Box": (Box(0, 1, (2,)), [["a", "b"], ["c", "d"]], InvalidTypeError, ["wrong dtype", "float32"]),
    "numeric strings for a Box": (Box(0, 1, (1,)), [["1"], ["2"]], InvalidTypeError, ["wrong dtype"]),
    "None in a list": (Discrete(3), [None, 1], InvalidTypeError, ["wrong dtype", "at actions[0]"]),
    "complex": (Box(0, 1, (1,)), [[1j], [0]], InvalidTypeError, ["wrong dtype"]),
    "string array": (Discrete(3), np.array(["1", "2"]), InvalidTypeError, ["actions has the wrong dtype"]),
    "too many": (Discrete(3), [1, 2, 0], InvalidValueError, ["wrong batch size", "expected 2 actions, got 3"]),
    "too few rows": (Box(0, 1, (2,)), [[0.1, 0.2]], InvalidValueError, ["wrong batch size", "got 1 actions"]),
    "wrong shape": (Discrete(3), [[1], [2]], InvalidValueError, ["wrong shape", "a batch of 2 actions"]),
    "array of the wrong shape": (Discrete(3), np.array([1, 2, 0]), InvalidValueError, ["wrong shape"]),
    "a scalar": (Discrete(3), 1, InvalidTypeError, ["a single value, not a batch", "a batch of 2 actions"]),
    "a 0-d array": (Box(0, 1), np.array(0.5), InvalidTypeError, ["a single value, not a batch"]),
    "missing key": (TWO_FORCES, {"force": [[0, 0], [0, 0]]}, InvalidValueError, ["missing a key", "actions['gear']"]),
    "extra key": (
        TWO_FORCES,
        {"gear": [0, 1], "force": [[0, 0], [0, 0]], "brake": [0, 0]},
        InvalidValueError,
        ["a key the action space has not", "at actions['brake']"],
    ),
    "leaf batch size": (
        TWO_FORCES,
        {"gear": [0, 1, 2], "force": [[0, 0], [0, 0]]},
        InvalidValueError,
        ["wrong batch size", "at actions['gear']"],
    ),
    "list of dicts": (TWO_FORCES, [{"gear": 0, "force": [0, 0]}] * 2, InvalidValueError, ["do not form a batch"]),
    "short tuple": (Tuple((Discrete(2), Discrete(3))), ([0, 1],), InvalidValueError, ["number of entries", "1 entry"]),
}


@pytest.mark.parametrize("name", list(UNCONVERTIBLE))
def test_what_does_not_convert_is_refused_clearly(name: str) -> None:
    single, actions, error, parts = UNCONVERTIBLE[name]
    with pytest.raises(error) as info:
        actions_per_env(batch_space(single, 2), actions, 2)
    for part in parts:
        assert part in str(info.value)


# -- seeds -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "seed",
    [np.array([7, 8, 9]), (7, 8, 9), [np.int64(7), np.uint8(8), 9], range(7, 10), np.array([7, 8, 9], np.uint64)],
    ids=["array", "tuple", "numpy ints", "range", "uint64 array"],
)
def test_seed_sequences_give_python_ints(seed: Any) -> None:
    seeds = seeds_per_env(seed, 3)
    assert seeds == [7, 8, 9] and all(type(item) is int for item in seeds)
    with SyncVectorEnv([functools.partial(CountdownEnv, 3, label) for label in range(3)]) as envs:
        _, infos = envs.reset(seed=seed)
    assert infos["seed"].tolist() == [7, 8, 9]


def test_seed_sequences_keep_none_and_numpy_int_scalars_count_up() -> None:
    assert seeds_per_env((None, np.int32(4), None), 3) == [None, 4, None]
    seeds = seeds_per_env(np.int64(5), 2)
    assert seeds == [5, 6] and all(type(item) is int for item in seeds)


@pytest.mark.parametrize(
    ("seed", "error", "parts"),
    [
        ([1, True, 3], InvalidTypeError, ["wrong type", "True", "at seed[1]"]),
        ([1, 2, 3.0], InvalidTypeError, ["wrong type", "3.0", "at seed[2]"]),
        (np.array([1.5, 2, 3]), InvalidTypeError, ["wrong type", "at seed[0]"]),
        ([1, -2, 3], InvalidValueError, ["negative", "-2", "at seed[1]"]),
        (np.array([1, 2, -3]), InvalidValueError, ["negative", "at seed[2]"]),
        (-1, InvalidValueError, ["negative", "-1"]),
        (True, InvalidTypeError, ["wrong type"]),
        ("123", InvalidTypeError, ["wrong type"]),
        (np.array([[1, 2, 3]]), InvalidTypeError, ["wrong type"]),
        ((1, 2), InvalidValueError, ["wrong length", "3 seeds"]),
    ],
)
def test_bad_seeds_are_refused_naming_the_index(seed: Any, error: type[Exception], parts: list[str]) -> None:
    with pytest.raises(error) as info:
        seeds_per_env(seed, 3)
    for part in parts:
        assert part in str(info.value)
    env_fns = [functools.partial(CountdownEnv, 3, label) for label in range(3)]
    with SyncVectorEnv(env_fns) as envs, pytest.raises(error):
        envs.reset(seed=seed)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("form", ["float64", "lists", "tuples"])
def test_async_actions_that_convert_take_the_plain_step(monkeypatch: pytest.MonkeyPatch, form: str) -> None:
    # numpy's default float is float64, and Gymnasium's examples step with lists: such actions once took the
    # general path of step(), 25-40% slower.
    fns = [functools.partial(EchoEnv, "box_f32") for _ in range(2)]
    with AsyncVectorEnv(fns, context=CONTEXT, num_workers=2, timeout=30) as envs:
        envs.reset(seed=0)
        monkeypatch.setattr(envs, "_step_generally", lambda actions: pytest.fail("the general path was taken"))
        batch = np.random.default_rng(0).uniform(-1, 1, envs.action_space.shape)  # float64
        given = {"float64": batch, "lists": batch.tolist(), "tuples": tuple(map(tuple, batch.tolist()))}[form]
        observations, *_ = envs.step(given)
        assert_same_value(observations, batch.astype(np.float32))
        with pytest.raises(InvalidTypeError, match="wrong dtype"):
            envs.step([["a"] * 3] * 2)
        observations, *_ = envs.step(batch * 0.5)  # nothing is left pending by the refused step
        received = envs.get_attr("received")
    assert_same_value(observations, (batch * 0.5).astype(np.float32))
    assert [len(actions) for actions in received] == [2, 2]
    # As in Gymnasium, each env got its row of what was given: float64 (Python floats) for the float32 Box.
    assert_same_value([actions[0] for actions in received], list(batch))
