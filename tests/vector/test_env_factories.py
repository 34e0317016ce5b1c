"""Bad env_fns (not a list of factories, a factory that returns no env) and start methods get typed errors naming
them, and leave no process."""

from __future__ import annotations

import time
from typing import Any

import psutil
import pytest

from tests.vector.envs import CountdownEnv
from vecspaces.error import InvalidTypeError, InvalidValueError
from vecspaces.vector import AsyncVectorEnv, SyncVectorEnv

pytestmark = pytest.mark.timeout(60)


def returns_none() -> None:
    return None


def returns_a_number() -> int:
    return 3


def returns_the_class() -> type:
    return CountdownEnv


def returns_an_object() -> object:
    return object()


BAD_FACTORIES = {
    returns_none: "None (NoneType), which has no observation_space, action_space, reset, step, close",
    returns_a_number: "3 (int), which has no observation_space",
    returns_the_class: "the class CountdownEnv",
    returns_an_object: "(object), which has no observation_space",
}


def our_processes() -> set[int]:
    return {
        child.pid
        for child in psutil.Process().children(recursive=True)
        if child.is_running()
        and child.status() != psutil.STATUS_ZOMBIE
        and not any(helper in " ".join(child.cmdline()) for helper in ("forkserver", "resource_tracker"))
    }


@pytest.mark.parametrize("factory", list(BAD_FACTORIES), ids=lambda factory: factory.__name__)
def test_sync_names_the_factory_and_what_it_returned(factory: Any) -> None:
    with pytest.raises(InvalidTypeError) as caught:
        SyncVectorEnv([CountdownEnv, factory])
    assert str(caught.value).startswith("env_fns[1] did not return an env, expected an object with")
    assert BAD_FACTORIES[factory] in str(caught.value)


@pytest.mark.parametrize("context", ["fork", "forkserver", "spawn"])
@pytest.mark.parametrize("position", [0, 1], ids=["main_process", "worker"])
@pytest.mark.parametrize("factory", [returns_none, returns_the_class], ids=lambda factory: factory.__name__)
def test_async_names_the_factory_and_leaves_no_process(context: str, position: int, factory: Any) -> None:
    """Env 0 is built in the main process (for the spaces), env 1 in a worker: both report the same way."""
    before = our_processes()
    fns: list[Any] = [CountdownEnv, CountdownEnv]
    fns[position] = factory
    with pytest.raises(InvalidTypeError) as caught:
        AsyncVectorEnv(fns, context=context, num_workers=2)
    assert f"env_fns[{position}] did not return an env" in str(caught.value)
    assert BAD_FACTORIES[factory] in str(caught.value)
    time.sleep(0.2)
    assert not our_processes() - before


def test_a_main_process_env_factory_is_checked_too() -> None:
    with pytest.raises(InvalidTypeError, match=r"env_fns\[1\] did not return an env"):
        AsyncVectorEnv([CountdownEnv, returns_a_number, CountdownEnv], main_process_envs=2, num_workers=1)


@pytest.mark.parametrize("vector_env", [SyncVectorEnv, AsyncVectorEnv])
@pytest.mark.parametrize(
    ("env_fns", "says"),
    [
        pytest.param(CountdownEnv, "(type); pass a list: [env_fn] * n", id="one_factory_not_in_a_list"),
        pytest.param([CountdownEnv, CountdownEnv()], "at env_fns[1]; pass functions that make the envs", id="an_env"),
        pytest.param([CountdownEnv, None], "got None (NoneType) at env_fns[1]", id="none"),
        pytest.param([], "got [] (list)", id="empty"),
        pytest.param(3, "got 3 (int)", id="a_number"),
    ],
)
def test_env_fns_that_are_not_a_list_of_factories_are_named_with_the_fix(
    vector_env: Any, env_fns: Any, says: str
) -> None:
    before = our_processes()
    with pytest.raises(InvalidTypeError, match="env_fns is invalid, expected a non-empty list of callables") as error:
        vector_env(env_fns)
    assert says in str(error.value)
    assert our_processes() == before


def test_an_unknown_start_method_is_named_before_any_env_is_built() -> None:
    built: list[int] = []

    def counted() -> CountdownEnv:
        built.append(1)
        return CountdownEnv()

    with pytest.raises(InvalidValueError, match=r"context is invalid, expected None or one of 'fork'.*got 'forky'"):
        AsyncVectorEnv([counted] * 2, context="forky", main_process_envs=1)
    assert built == []
