"""The env the pool fuzz test drives (a top-level class, so it pickles by reference under every start method).

Its observation, reward, flags and infos are a pure function of its state and the action, and its reset
observation never depends on a random generator, so an in-process copy of it predicts every row the pool must
return, also after a worker restart (a fresh env reset with ``seed=None``).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from vecspaces.env import Env
from vecspaces.spaces import Box, Discrete

__all__ = ["RAISE", "TRUNCATE", "FuzzEnv", "FuzzEnvError"]

# The action that truncates the episode, and the one that makes the step raise.
TRUNCATE = 4
RAISE = 5


class FuzzEnvError(Exception):
    """What a :class:`FuzzEnv` raises when it is told to fail."""


class FuzzEnv(Env[Any, Any]):
    """An env whose observation ``[label, origin, episode, count]`` says which env, episode and step a row is.

    - ``reset(seed=s)`` sets ``origin = s % 1000`` (``seed=None`` keeps it; a fresh env has 0), counts one more
      episode and sets ``count`` to ``options["start"]`` (default 0); its info is ``{"origin", "episode"}``.
    - ``step(a)`` raises :class:`FuzzEnvError` when ``a == RAISE`` or when the step would reach ``fail_at``
      (which it then clears, changing nothing else); else counts one step, rewards ``a + count / 4``,
      terminates at ``length`` steps, truncates when ``a == TRUNCATE``; its info is ``{"count"}`` on even
      counts and empty on odd ones (so steps go both through the pool's quiet path and its reply path).
    - ``delay`` seconds of sleep in each step (0 by default) make a step slow, for timeouts.

    Args:
        label: the env's index, reported in every observation.
        length: the number of steps after which an episode terminates.
    """

    observation_space = Box(0, 10**6, (4,), np.int64)
    action_space = Discrete(6)

    def __init__(self, label: int, length: int = 3) -> None:
        self.label = label
        self.length = length
        self.origin = 0
        self.episode = 0
        self.count = 0
        self.fail_at: int | None = None
        self.delay = 0.0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self.origin = seed % 1000
        self.episode += 1
        self.count = int(options.get("start", 0)) if options else 0
        return self.observation(), {"origin": self.origin, "episode": self.episode}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self.delay:
            time.sleep(self.delay)
        action = int(action)
        if action == RAISE or (self.fail_at is not None and self.count + 1 == self.fail_at):
            self.fail_at = None
            raise FuzzEnvError(f"env {self.label} was told to fail at step {self.count + 1}")
        self.count += 1
        info = {"count": self.count} if self.count % 2 == 0 else {}
        return self.observation(), action + self.count / 4, self.count >= self.length, action == TRUNCATE, info

    def observation(self) -> np.ndarray:
        """``[label, origin, episode, count]``."""
        return np.array([self.label, self.origin, self.episode, self.count], dtype=np.int64)

    def state(self) -> tuple[int, int, int, int, int | None]:
        """``(label, origin, episode, count, fail_at)``, for ``call``."""
        return self.label, self.origin, self.episode, self.count, self.fail_at

    def shift(self, by: int) -> int:
        """Move ``origin`` by ``by`` (a call with an argument that changes the env); return the new origin."""
        self.origin = (self.origin + by) % 1000
        return self.origin

    def rewind(self) -> None:
        """Make the env as a fresh one (episode 0, origin 0, nothing to fail, no delay): a fuzz example's start."""
        self.origin = self.episode = self.count = 0
        self.fail_at = None
        self.delay = 0.0
