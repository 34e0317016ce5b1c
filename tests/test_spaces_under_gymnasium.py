"""vecspaces spaces under Gymnasium: while gymnasium is imported, each is an instance of Gymnasium's class too.

What a user expects after swapping ``from gymnasium import spaces`` for ``from vecspaces import spaces`` in an env
module: ``gymnasium.make`` (whose env checker refuses anything but Gymnasium spaces), Gymnasium's wrappers, its
own vector envs and functions take the env as before, with the same results as with Gymnasium's spaces.
"""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import cloudpickle
import numpy as np
import pytest

from tests.catalog import GYMNASIUM_IDS, make, to_gym_value
from tests.helpers import assert_same_value
from vecspaces import spaces as vs
from vecspaces.spaces import from_gymnasium, to_gymnasium
from vecspaces.spaces.utils import is_space_dtype_shape_equiv
from vecspaces.vector import AsyncVectorEnv, SyncVectorEnv
from vecspaces.vector.utils import batch_differing_spaces

gym = pytest.importorskip("gymnasium")
gym_utils = gym.spaces.utils
gym_vector_utils = gym.vector.utils


# --- every space is one of Gymnasium's -----------------------------------------------------------------------


@pytest.mark.parametrize("space_id", GYMNASIUM_IDS)
def test_a_space_is_an_instance_of_the_gymnasium_class_of_its_kind(space_id: str) -> None:
    space = make(space_id)
    gym_kind = type(to_gymnasium(space))
    assert isinstance(space, gym_kind) and isinstance(space, gym.spaces.Space)
    assert isinstance(space, getattr(vs, gym_kind.__name__)) and type(space).__name__ == gym_kind.__name__
    assert type(to_gymnasium(space)).__module__.startswith("gymnasium.")  # still converted to Gymnasium's own


@pytest.mark.parametrize("space_id", GYMNASIUM_IDS)
def test_gymnasiums_functions_give_what_they_give_for_the_gymnasium_form(space_id: str) -> None:
    space = make(space_id)
    gym_space = to_gymnasium(space)
    assert gym_space == space and space == gym_space
    assert gym_vector_utils.batch_space(space, 3) == gym_vector_utils.batch_space(gym_space, 3)
    if not gym_space.is_np_flattenable:
        return
    value = to_gym_value(space.sample())
    assert gym_utils.flatdim(space) == gym_utils.flatdim(gym_space)
    # Where Gymnasium fails on its own space (an older Gymnasium's flatten_space of a OneOf, unflatten of a Text
    # in a Dict), it must fail the same way on the vecspaces one.
    mine, theirs = (outcome(gym_utils.flatten_space, target) for target in (space, gym_space))
    assert mine == theirs
    flat = outcome(gym_utils.flatten, gym_space, value)
    assert_same_value(outcome(gym_utils.flatten, space, value), flat)
    if isinstance(flat, np.ndarray):
        assert_same_value(outcome(gym_utils.unflatten, space, flat), outcome(gym_utils.unflatten, gym_space, flat))


def outcome(function: Callable[..., Any], *args: Any) -> Any:
    """What ``function(*args)`` returns, or the type of what it raises."""
    try:
        return function(*args)
    except Exception as error:  # compared by the caller, not swallowed
        return type(error)


def test_subclasses_and_custom_spaces_are_gymnasiums_too() -> None:
    class Image(vs.Box):
        pass

    class Coin(vs.Space[int]):
        def sample(self, mask: Any = None, probability: Any = None) -> int:
            return 1

        def contains(self, x: Any) -> bool:
            return x in (0, 1)

    image, coin = Image(0, 255, (2, 2), np.uint8), Coin()
    assert isinstance(image, Image) and isinstance(image, gym.spaces.Box) and type(image).__name__ == "Image"
    assert isinstance(coin, Coin) and isinstance(coin, gym.spaces.Space) and not isinstance(coin, gym.spaces.Box)
    assert type(to_gymnasium(image)) is gym.spaces.Box


@pytest.mark.parametrize("space_id", GYMNASIUM_IDS)
@pytest.mark.parametrize("copier", ["pickle", "pickle protocol 0", "cloudpickle", "deepcopy"])
def test_copies_are_gymnasiums_too(space_id: str, copier: str) -> None:
    space = make(space_id)
    space.seed(3)
    if copier == "pickle protocol 0":  # no __newobj__: the copy is made without Space.__new__, of the plain class
        copied = pickle.loads(pickle.dumps(space, protocol=0))
        assert isinstance(copied, type(space).__bases__[0]) and copied == space
        return
    copied = {
        "pickle": lambda: pickle.loads(pickle.dumps(space)),
        "cloudpickle": lambda: cloudpickle.loads(cloudpickle.dumps(space)),
        "deepcopy": lambda: copy.deepcopy(space),
    }[copier]()
    assert type(copied) is type(space) and copied == space
    assert_same_value(copied.sample(), space.sample())


def run_python(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.timeout(240)
def test_without_gymnasium_imported_spaces_stay_plain_and_gymnasium_is_not_imported() -> None:
    made_here = pickle.dumps(vs.Dict(a=vs.Box(0, 1, (2,)), b=vs.Discrete(3)))
    printed = run_python(
        f"""
        import pickle, sys
        from vecspaces.spaces import Box, Dict
        space = pickle.loads({made_here!r})
        print(type(space) is Dict, type(space["a"]) is Box, type(Box(0, 1)) is Box, "gymnasium" in sys.modules)
        """
    )
    assert printed == "True True True False"


@pytest.mark.timeout(240)
def test_spaces_made_before_gymnasium_was_imported_still_batch_with_those_made_after() -> None:
    printed = run_python(
        """
        from vecspaces.spaces import Box, Discrete
        from vecspaces.spaces.utils import is_space_dtype_shape_equiv
        from vecspaces.vector.utils import batch_differing_spaces
        before = [Box(0, 1, (2,)), Discrete(3)]
        import gymnasium
        after = [Box(0, 2, (2,)), Discrete(4)]
        print(isinstance(before[0], gymnasium.spaces.Box), isinstance(after[0], gymnasium.spaces.Box))
        print(is_space_dtype_shape_equiv(before[0], after[0]), is_space_dtype_shape_equiv(after[0], before[0]))
        print(batch_differing_spaces([before[0], after[0]]).high.tolist())
        print(batch_differing_spaces([after[1], before[1]]))
        """
    )
    assert printed.splitlines() == ["False True", "True True", "[[1.0, 1.0], [2.0, 2.0]]", "MultiDiscrete([4 3])"]


def test_vecspaces_operations_take_them_as_their_own() -> None:
    old_style, box = vs.Box(0, 1, (2,)), vs.Box(0, 2, (2,))
    assert from_gymnasium(box) is box and is_space_dtype_shape_equiv(old_style, box)
    assert batch_differing_spaces([old_style, box]) == vs.Box(0, [[1, 1], [2, 2]], (2, 2))


# --- an env module that swapped its spaces, under Gymnasium's stack -----------------------------------------


class PointEnv(gym.Env[dict[str, Any], np.ndarray]):
    """A deterministic env of the space kinds Gymnasium's wrappers look for, on either library's spaces."""

    def __init__(self, library: str = "vecspaces") -> None:
        spaces: Any = vs if library == "vecspaces" else gym.spaces
        self.observation_space = spaces.Dict(
            {"position": spaces.Box(-10, 10, (3,), np.float32), "flag": spaces.Discrete(2)}
        )
        self.action_space = spaces.Box(-1, 1, (3,), np.float32)
        self.position = np.zeros(3, np.float32)

    def observation(self) -> dict[str, Any]:
        return {"position": self.position.copy(), "flag": np.int64(self.position.sum() > 0)}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.position = self.np_random.uniform(-1, 1, 3).astype(np.float32)
        return self.observation(), {}

    def step(self, action: np.ndarray) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.position = np.clip(self.position + action, -10, 10).astype(np.float32)
        reward = float(-np.abs(self.position).sum())
        return self.observation(), reward, bool(np.abs(self.position).max() >= 10), False, {}


@pytest.fixture(scope="module")
def env_ids() -> Any:
    ids = {}
    for library in ("vecspaces", "gymnasium"):
        ids[library] = f"vecspaces-tests/Point-{library}-v0"
        gym.register(ids[library], entry_point=PointEnv, kwargs={"library": library}, max_episode_steps=20)
    yield ids
    for env_id in ids.values():
        gym.registry.pop(env_id)


def rollout(env: Any, steps: int = 30) -> list[Any]:
    """What an env gives over ``steps`` seeded steps, resetting where an episode ends."""
    env.action_space.seed(1)
    records = [env.reset(seed=5)[0]]
    for _ in range(steps):
        observation, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        records.append((observation, np.asarray(reward), np.asarray(terminated), np.asarray(truncated)))
        if np.all(np.logical_or(terminated, truncated)):
            records.append(env.reset()[0])
    env.close()
    return records


WRAPPERS = {
    "none": lambda env: env,
    "FlattenObservation": lambda env: gym.wrappers.FlattenObservation(env),
    "RescaleAction+ClipAction": lambda env: gym.wrappers.ClipAction(gym.wrappers.RescaleAction(env, 0, 1)),
    "NormalizeObservation": lambda env: gym.wrappers.NormalizeObservation(gym.wrappers.FlattenObservation(env)),
    "FilterObservation": lambda env: gym.wrappers.FilterObservation(env, ["position"]),
}


@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_gymnasium_make_and_wrappers_give_what_they_give_with_gymnasium_spaces(env_ids: Any, wrapper: str) -> None:
    # gymnasium.make runs its env checker, which refused anything but Gymnasium spaces.
    records = {library: rollout(WRAPPERS[wrapper](gym.make(env_id))) for library, env_id in env_ids.items()}
    assert_same_value(records["vecspaces"], records["gymnasium"])


def test_gymnasium_env_checker_passes() -> None:
    from gymnasium.utils.env_checker import check_env

    check_env(PointEnv(), skip_render_check=True)


VECTOR_ENVS = {
    "gymnasium sync": lambda fns: gym.vector.SyncVectorEnv(fns),
    "gymnasium async": lambda fns: gym.vector.AsyncVectorEnv(fns, shared_memory=True),
    "vecspaces sync": lambda fns: SyncVectorEnv(fns),
    "vecspaces async": lambda fns: AsyncVectorEnv(fns, num_workers=2, timeout=30),
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("vector_env", VECTOR_ENVS)
def test_vector_envs_and_vector_wrappers_give_what_they_give_with_gymnasium_spaces(
    env_ids: Any, vector_env: str
) -> None:
    records = {}
    for library, env_id in env_ids.items():
        envs = VECTOR_ENVS[vector_env]([lambda env_id=env_id: gym.make(env_id)] * 3)
        assert isinstance(envs.single_observation_space, gym.spaces.Dict)
        records[library] = rollout(gym.wrappers.vector.FlattenObservation(envs), steps=25)
    assert_same_value(records["vecspaces"], records["gymnasium"])
