"""Small environments for the vector-env tests (top-level classes, so they pickle under spawn)."""

from __future__ import annotations

from typing import Any

import numpy as np

from vecspaces.env import Env
from vecspaces.spaces import Box, Discrete, Space


class CountdownEnv(Env[Any, Any]):
    """Observation = steps taken in the episode; terminates after ``length`` steps; reward = the action.

    Every step's info reports the step count and the env's ``label``; reset info reports the reset seed.
    """

    observation_space = Box(0, 1000, (1,), np.int64)
    action_space = Discrete(10)

    def __init__(self, length: int = 3, label: int = 0) -> None:
        self.length = length
        self.label = label
        self.count = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.count = 0 if not options else int(options.get("start", 0))
        return np.array([self.count]), {"seed": -1 if seed is None else seed}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.count += 1
        return (
            np.array([self.count]),
            float(action),
            self.count >= self.length,
            False,
            {"count": self.count, "label": self.label},
        )


class SpaceEnv(Env[Any, Any]):
    """Observations are samples of any space, drawn from the env's seeded generator; actions are checked."""

    def __init__(self, observation_space: Space[Any], action_space: Space[Any], length: int = 4) -> None:
        self.observation_space = observation_space
        self.action_space = action_space
        self.length = length
        self.count = 0
        self.actions: list[Any] = []

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.observation_space.seed(int(self.np_random.integers(2**31)))
        self.count = 0
        return self.observation_space.sample(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if action not in self.action_space:
            raise ValueError(f"action {action!r} is not in {self.action_space!r}")
        self.actions.append(action)
        self.count += 1
        return self.observation_space.sample(), 0.5, False, self.count >= self.length, {}
