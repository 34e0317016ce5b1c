"""Small built-in environments: the benchmark scenarios and a demo env with every kind of observation leaf.

======  ===========================================================  ======================  ============
name    observation                                                  action                  step cost
======  ===========================================================  ======================  ============
tiny    Box(-1, 1, (4,), float32)                                    Discrete(2)             trivial
atari   Box(0, 255, (84, 84, 4), uint8)                              Discrete(6)             trivial
dict    Dict(image 64x64x3 uint8, vector Box(10,), Discrete(5),      MultiDiscrete([3, 4]))  trivial
        MultiBinary(8))
cpu     Box(-1, 1, (16,), float32)                                   Discrete(2)             1 ms of CPU
======  ===========================================================  ======================  ============

Every env ends its episode after ``episode_length`` steps (truncated), so autoreset paths are exercised, and
is deterministic given its reset seed.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from vecspaces.env import Env
from vecspaces.spaces import Box, Dict, Discrete, MultiBinary, MultiDiscrete, Sequence, Text

__all__ = ["AtariEnv", "CpuEnv", "DemoEnv", "DictEnv", "TinyEnv"]


class _CountingEnv(Env[Any, Any]):
    """Shared episode bookkeeping: a step counter and truncation after ``episode_length`` steps."""

    def __init__(self, episode_length: int = 100) -> None:
        self.episode_length = episode_length
        self.steps = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Start an episode; the first observation is drawn from the env's seeded generator."""
        super().reset(seed=seed)
        self.steps = 0
        return self._observe(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Advance one step; reward 1, truncated after ``episode_length`` steps."""
        self.steps += 1
        return self._observe(), 1.0, False, self.steps >= self.episode_length, {}

    def _observe(self) -> Any:
        raise NotImplementedError


class TinyEnv(_CountingEnv):
    """The cheapest possible env: a 4-float observation. Measures pure vectorisation overhead.

    Example:
        >>> env = TinyEnv()
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape, obs.dtype
        ((4,), dtype('float32'))
    """

    observation_space = Box(-1.0, 1.0, (4,), np.float32)
    action_space = Discrete(2)

    def _observe(self) -> Any:
        return self.np_random.uniform(-1.0, 1.0, 4).astype(np.float32)


class AtariEnv(_CountingEnv):
    """An Atari-sized frame stack (84x84x4 uint8, 28 KB) that changes every step.

    Example:
        >>> AtariEnv().reset(seed=0)[0].shape
        (84, 84, 4)
    """

    observation_space = Box(0, 255, (84, 84, 4), np.uint8)
    action_space = Discrete(6)

    def __init__(self, episode_length: int = 100) -> None:
        super().__init__(episode_length)
        self._frame = np.zeros((84, 84, 4), dtype=np.uint8)

    def _observe(self) -> Any:
        self._frame[self.steps % 84, :, self.steps % 4] = self.np_random.integers(256)
        return self._frame.copy()


class DictEnv(_CountingEnv):
    """A Dict observation: an image, a vector, a Discrete and a MultiBinary; MultiDiscrete actions.

    Example:
        >>> sorted(DictEnv().reset(seed=0)[0])
        ['binary', 'discrete', 'image', 'vector']
    """

    observation_space = Dict(
        image=Box(0, 255, (64, 64, 3), np.uint8),
        vector=Box(-1.0, 1.0, (10,), np.float32),
        discrete=Discrete(5),
        binary=MultiBinary(8),
    )
    action_space = MultiDiscrete([3, 4])

    def __init__(self, episode_length: int = 100) -> None:
        super().__init__(episode_length)
        self._image = np.zeros((64, 64, 3), dtype=np.uint8)

    def _observe(self) -> Any:
        rng = self.np_random
        self._image[self.steps % 64] = rng.integers(256)
        return {
            "image": self._image.copy(),
            "vector": rng.uniform(-1.0, 1.0, 10).astype(np.float32),
            "discrete": np.int64(rng.integers(5)),
            "binary": rng.integers(0, 2, 8, dtype=np.int8),
        }


class CpuEnv(_CountingEnv):
    """An env whose every step burns ``step_cpu_seconds`` of CPU time (1 ms by default).

    With ``c`` cores the ideal throughput of a vector env of these is ``c / step_cpu_seconds`` steps/s.

    Example:
        >>> env = CpuEnv(step_cpu_seconds=0.0001)
        >>> _ = env.reset(seed=0)
        >>> env.step(0)[1]
        1.0
    """

    observation_space = Box(-1.0, 1.0, (16,), np.float32)
    action_space = Discrete(2)

    def __init__(self, episode_length: int = 100, step_cpu_seconds: float = 0.001) -> None:
        super().__init__(episode_length)
        self.step_cpu_seconds = step_cpu_seconds

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Burn CPU time (thread CPU time, so being descheduled does not count), then step."""
        deadline = time.thread_time() + self.step_cpu_seconds
        while time.thread_time() < deadline:
            pass
        return super().step(action)

    def _observe(self) -> Any:
        return self.np_random.uniform(-1.0, 1.0, 16).astype(np.float32)


class DemoEnv(_CountingEnv):
    """A rover on a grid with an observation that has one leaf of every kind the pool handles.

    Observation leaves: ``camera`` (32x32x3 uint8 image), ``position`` (Box(2,)), ``heading``
    (Discrete(4)), ``bumpers`` (MultiBinary(4)), ``battery`` (MultiDiscrete([5, 5])), ``mission`` (Text) and
    ``beacons`` (a Sequence of 2-D beacon positions, variable length).

    Example:
        >>> obs, _ = DemoEnv().reset(seed=1)
        >>> obs["mission"] in DemoEnv.observation_space["mission"]
        True
    """

    MISSIONS = ("reach the beacon", "collect rocks", "return home", "map the crater")

    observation_space = Dict(
        camera=Box(0, 255, (32, 32, 3), np.uint8),
        position=Box(-10.0, 10.0, (2,), np.float32),
        heading=Discrete(4),
        bumpers=MultiBinary(4),
        battery=MultiDiscrete([5, 5]),
        mission=Text(24, min_length=1, charset="abcdefghijklmnopqrstuvwxyz "),
        beacons=Sequence(Box(-10.0, 10.0, (2,), np.float32), stack=True),
    )
    action_space = Discrete(4)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Start a mission at a random position."""
        Env.reset(self, seed=seed)
        rng = self.np_random
        self.steps = 0
        self._position = rng.uniform(-5.0, 5.0, 2).astype(np.float32)
        self._heading = np.int64(0)
        self._mission = self.MISSIONS[int(rng.integers(len(self.MISSIONS)))]
        return self._observe(), {"mission_id": self.MISSIONS.index(self._mission)}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Turn to heading ``action`` and move one unit; the episode ends on leaving the map."""
        self._heading = np.int64(action)
        move = np.array([[0, 1], [1, 0], [0, -1], [-1, 0]], dtype=np.float32)[int(action)]
        self._position = np.clip(self._position + move, -10.0, 10.0)
        obs, reward, _, truncated, info = super().step(action)
        terminated = bool(np.abs(self._position).max() >= 10.0)
        return obs, reward, terminated, truncated, info

    def _observe(self) -> Any:
        rng = self.np_random
        count = int(rng.integers(0, 4))
        return {
            "camera": rng.integers(0, 256, (32, 32, 3), dtype=np.uint8),
            "position": self._position.copy(),
            "heading": self._heading,
            "bumpers": (np.abs(self._position) > 9.0).repeat(2).astype(np.int8),
            "battery": np.array([4 - min(self.steps // 25, 4), self.steps % 5], dtype=np.int64),
            "mission": self._mission,
            "beacons": rng.uniform(-10.0, 10.0, (count, 2)).astype(np.float32),
        }
