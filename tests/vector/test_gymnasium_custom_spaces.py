"""Gymnasium envs whose spaces are of a custom Gymnasium kind (a user's ``gymnasium.spaces.Space`` subclass).

vecspaces has no counterpart to convert such a space to, so it holds it (``GymnasiumCustomSpace``) and batches it
as it batches its own custom spaces: every backend steps such envs as Gymnasium's SyncVectorEnv does, and shows
the env's own space objects.
"""

from __future__ import annotations

import functools
from typing import Any

import gymnasium
import numpy as np
import pytest

from tests.helpers import assert_same_value
from vecspaces.vector import AsyncVectorEnv, SyncVectorEnv

pytestmark = pytest.mark.timeout(120)


class Card(gymnasium.spaces.Space):  # type: ignore[misc]
    """A custom Gymnasium kind: a playing card as a (rank, suit) string pair."""

    RANKS = "A23456789TJQK"
    SUITS = "CDHS"

    def sample(self, mask: Any = None, probability: Any = None) -> tuple[str, str]:
        return str(self.np_random.choice(list(self.RANKS))), str(self.np_random.choice(list(self.SUITS)))

    def contains(self, x: Any) -> bool:
        return isinstance(x, tuple) and len(x) == 2 and x[0] in self.RANKS and x[1] in self.SUITS

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Card)


class CardEnv(gymnasium.Env[Any, Any]):
    """Deals a card and a count each step; the action is a card whose rank is added to the score."""

    def __init__(self, length: int = 4) -> None:
        self.observation_space = gymnasium.spaces.Dict(
            {"card": Card(), "count": gymnasium.spaces.Box(0, 100, (1,), np.int64)}
        )
        self.action_space = Card()
        self.length = length

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.count = 0
        return self._observe(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        assert self.action_space.contains(action), action
        self.count += 1
        reward = float(Card.RANKS.index(action[0]))
        return self._observe(), reward, self.count >= self.length, False, {}

    def _observe(self) -> dict[str, Any]:
        rank = Card.RANKS[int(self.np_random.integers(13))]
        return {"card": (rank, "S"), "count": np.array([self.count], np.int64)}


BACKENDS = {
    "sync": SyncVectorEnv,
    "shm": functools.partial(AsyncVectorEnv, num_workers=2, timeout=30),
    "pipe": functools.partial(AsyncVectorEnv, shared_memory=False, timeout=30),
    "main": functools.partial(AsyncVectorEnv, main_process_envs=1, timeout=30),
    "forkserver": functools.partial(AsyncVectorEnv, context="forkserver", timeout=30),
}
ACTIONS = [(("A", "C"), ("K", "H"), ("7", "D")), (("2", "S"), ("2", "S"), ("T", "C"))] * 3


def rollout(envs: Any) -> list[Any]:
    results: list[Any] = [envs.reset(seed=3)]
    results += [envs.step(actions) for actions in ACTIONS]
    return results


def ray_vector_env(transport: str) -> Any:
    def make(env_fns: list[Any]) -> Any:
        from vecspaces.vector.ray import RayVectorEnv

        return RayVectorEnv(env_fns, num_agents=2, transport=transport, context="fork", timeout=30)

    return make


RAY_BACKENDS = {"ray-socket": ray_vector_env("socket"), "ray-calls": ray_vector_env("ray")}


@pytest.fixture(params=[*BACKENDS, *RAY_BACKENDS])
def vectorise(request: pytest.FixtureRequest) -> Any:
    if request.param in RAY_BACKENDS:
        request.getfixturevalue("ray_cluster")
        return RAY_BACKENDS[request.param]
    return BACKENDS[request.param]


def test_every_backend_steps_them_as_gymnasium_does(vectorise: Any) -> None:
    env_fns = [CardEnv] * 3
    reference = gymnasium.vector.SyncVectorEnv(env_fns)
    expected = rollout(reference)
    reference.close()
    with vectorise(env_fns) as envs:
        assert_same_value(rollout(envs), expected)
        assert isinstance(envs.single_action_space, Card)
        assert isinstance(envs.single_observation_space["card"], Card)
        assert isinstance(envs.action_space, gymnasium.spaces.Tuple) and len(envs.action_space) == 3
        assert all(isinstance(card, Card) for card in envs.action_space)
        assert all(envs.single_action_space.contains(card) for card in envs.action_space.sample())


def test_the_vector_env_shows_the_env_space_objects() -> None:
    with SyncVectorEnv([CardEnv] * 2) as envs:
        first = envs.envs[0]
        assert envs.single_action_space is first.action_space
        assert envs.single_observation_space["card"] is first.observation_space["card"]
