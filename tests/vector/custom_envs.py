"""Custom spaces (nothing registered for them) and an env using them, for the pool tests.

Top-level classes, so they pickle by reference under spawn and forkserver. Each custom space has values of a
different plain Python type: a dict (:class:`Bag`), a string (:class:`Word`) and an object (:class:`Token`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.vector.envs import SpaceEnv
from vecspaces.spaces import Box, Dict, Discrete, OneOf, Sequence, Space, Tuple


class Bag(Space[Any]):
    """Values are dicts ``{"n": int, "tags": list of str}``."""

    def __init__(self, seed: Any = None) -> None:
        super().__init__(None, None, seed)

    def sample(self, mask: Any = None, probability: Any = None) -> dict[str, Any]:
        n = int(self.np_random.integers(100))
        return {"n": n, "tags": [f"t{n % 7}"] * int(self.np_random.integers(3))}

    def contains(self, x: Any) -> bool:
        return isinstance(x, dict) and set(x) == {"n", "tags"}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Bag)

    def __repr__(self) -> str:
        return "Bag()"


class Word(Space[Any]):
    """Values are strings of any length (no charset, no maximum: nothing a Text could hold)."""

    def __init__(self, seed: Any = None) -> None:
        super().__init__(None, None, seed)

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        return "w" * int(self.np_random.integers(1, 6)) + "é" + str(int(self.np_random.integers(1000)))

    def contains(self, x: Any) -> bool:
        return isinstance(x, str)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Word)

    def __repr__(self) -> str:
        return "Word()"


class Token:
    """A plain object, compared by its fields."""

    def __init__(self, kind: str, weight: float) -> None:
        self.kind = kind
        self.weight = weight

    def __eq__(self, other: object) -> bool:
        return type(other) is Token and (other.kind, other.weight) == (self.kind, self.weight)

    def __hash__(self) -> int:
        return hash((self.kind, self.weight))

    def __repr__(self) -> str:
        return f"Token({self.kind!r}, {self.weight!r})"


class TokenSpace(Space[Any]):
    """Values are :class:`Token` objects."""

    def __init__(self, seed: Any = None) -> None:
        super().__init__(None, None, seed)

    def sample(self, mask: Any = None, probability: Any = None) -> Token:
        return Token(str(self.np_random.choice(["a", "b", "c"])), float(self.np_random.random()))

    def contains(self, x: Any) -> bool:
        return isinstance(x, Token)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TokenSpace)

    def __repr__(self) -> str:
        return "TokenSpace()"


def observation_space(name: str) -> Space[Any]:
    """The observation spaces the tests use, by name."""
    if name == "bag":  # the whole observation is custom
        return Bag()
    if name == "dict":
        return Dict(bag=Bag(), pos=Box(-1, 1, (2,), np.float32), word=Word(), frame=Box(0, 255, (4, 4), np.uint8))
    if name == "tuple":
        return Tuple((Discrete(5, start=-2), TokenSpace(), Box(0, 255, (3,), np.uint8)))
    if name == "nested":  # custom leaves deep inside, beside a Sequence and a OneOf with a custom branch
        return Dict(
            parts=Tuple((Bag(), Dict(token=TokenSpace(), level=Discrete(3)))),
            trail=Sequence(Discrete(4)),
            choice=OneOf((Discrete(2), Word())),
            pos=Box(-1, 1, (3,), np.float64),
        )
    raise AssertionError(name)


def action_space(name: str) -> Space[Any]:
    """The action spaces the tests use, by name."""
    if name == "discrete":
        return Discrete(3)
    if name == "bag":  # the whole action is custom
        return Bag()
    if name == "dict":
        return Dict(bag=Bag(), move=Discrete(3), force=Box(-1, 1, (2,), np.float32))
    if name == "tuple":
        return Tuple((Word(), Discrete(4, start=1), Tuple((TokenSpace(), Box(0, 1, (), np.float32)))))
    raise AssertionError(name)


class CustomEnv(SpaceEnv):
    """Observations are samples of a space with custom leaves, drawn from the env's seeded generator.

    Every action is checked against the action space (a ValueError otherwise) and recorded in ``actions``. An
    episode terminates after ``length`` steps. ``kill_at`` kills the env's process at that step (once per
    process), as a crashing env would.
    """

    def __init__(self, observation: str = "dict", action: str = "dict", length: int = 3, kill_at: int = 0) -> None:
        super().__init__(observation_space(observation), action_space(action), length)
        self.kill_at = kill_at
        self.steps = 0

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if action not in self.action_space:
            raise ValueError(f"action {action!r} is not in {self.action_space!r}")
        self.steps += 1
        if self.steps == self.kill_at:
            import os
            import signal

            os.kill(os.getpid(), signal.SIGKILL)
        self.actions.append(action)
        self.count += 1
        info = {"count": self.count} if self.count % 2 else {}
        return self.observation_space.sample(), float(self.count), self.count >= self.length, False, info


class UnpicklableLeafEnv(CustomEnv):
    """A :class:`CustomEnv` (dict observations) whose ``bag`` leaf holds a lock at step ``at_step``."""

    def __init__(self, at_step: int = 1) -> None:
        super().__init__("dict", "discrete", length=100)
        self.at_step = at_step

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = super().step(action)
        if self.count == self.at_step:
            import threading

            obs["bag"] = {"n": 0, "tags": [threading.Lock()]}
        return obs, reward, terminated, truncated, info
