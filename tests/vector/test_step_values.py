"""A reward that is not a real number, or a flag that is not a bool, is refused naming the env; real ones pass."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

from vecspaces.error import InvalidTypeError, InvalidValueError
from vecspaces.vector import AsyncVectorEnv, SyncVectorEnv

from .envs import CountdownEnv, ValuesEnv

BACKENDS = ["sync", "fork", "forkserver", "spawn"]


def vector_env(backend: str, fns: list[Any]) -> Any:
    if backend == "sync":
        return SyncVectorEnv(fns)
    return AsyncVectorEnv(fns, context=backend, num_workers=2)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("values", "refused"),
    [
        ((None, False, False), "a reward that is not a real number, expected an int, a float"),
        (("1.0", False, False), "a reward that is not a real number"),
        ((1 + 2j, False, False), "a reward that is not a real number"),
        ((np.ones(2), False, False), "a reward of 2 numbers, expected one real number"),
        ((0.0, "yes", False), "terminated that is not a bool, expected a bool or a numpy bool, got 'yes'"),
        ((0.0, 1, False), "terminated that is not a bool"),
        ((0.0, False, None), "truncated that is not a bool"),
        ((0.0, False, np.zeros(1)), "truncated that is not a bool"),
        ((10**400, False, False), "a reward beyond float64's range"),
    ],
    ids=["none", "str", "complex", "array2", "yes", "int_flag", "none_flag", "float_array_flag", "huge_int"],
)
def test_a_bad_reward_or_flag_is_refused_naming_the_env(backend: str, values: tuple[Any, ...], refused: str) -> None:
    fns = [functools.partial(CountdownEnv, 100), functools.partial(ValuesEnv, *values)]
    envs = vector_env(backend, fns)
    try:
        envs.reset(seed=0)
        with pytest.raises((InvalidTypeError, InvalidValueError), match=f"env 1 returned {refused}"):
            envs.step(np.ones(2, dtype=np.int64))
        if backend != "sync":  # the worker survives: env 0 steps on
            assert envs.call("count")[0] == 1
    finally:
        envs.close()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "values",
    [
        (np.float32(0.5), np.bool_(True), False),
        (np.int64(2), False, np.bool_(False)),
        (np.array(0.5), np.array(True), np.array([False])),
        (np.array([0.5]), np.array([[True]]), False),  # numpy 2 refuses to store these in one slot as they are
        (np.array([[2]], np.int32), False, np.array([True])),
        (True, False, False),
        (np.uint8(3), np.bool_(False), True),
    ],
    ids=["float32", "int64", "size1_arrays", "shape1_arrays", "shape11_int_reward", "bool_reward", "uint8"],
)
def test_real_rewards_and_bool_flags_of_any_numpy_kind_pass(backend: str, values: tuple[Any, ...]) -> None:
    envs = vector_env(backend, [functools.partial(ValuesEnv, *values)] * 2)
    try:
        envs.reset(seed=0)
        _, rewards, terminations, truncations, _ = envs.step(np.ones(2, dtype=np.int64))
        reward, terminated, truncated = values
        assert rewards.tolist() == [float(np.asarray(reward).item())] * 2
        assert terminations.tolist() == [bool(np.asarray(terminated).item())] * 2
        assert truncations.tolist() == [bool(np.asarray(truncated).item())] * 2
    finally:
        envs.close()
