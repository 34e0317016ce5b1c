"""An env factory that returns something other than an env gets a typed error naming it, and leaves no process."""

from __future__ import annotations

import time
from typing import Any

import psutil
import pytest

from tests.vector.envs import CountdownEnv
from vecspaces.error import InvalidTypeError
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
