"""The workloads ``bench_vector.py`` times: which envs, how many, what the main process does between steps, what
else runs on the machine, and how each contender (vecspaces, Gymnasium, EnvPool) builds its vector env."""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np

from vecspaces.envs import AtariEnv, CpuEnv, DictEnv, TinyEnv
from vecspaces.spaces import to_gymnasium
from vecspaces.vector import AsyncVectorEnv


class GymnasiumAdapter(gymnasium.Env):
    """One of vecspaces' built-in envs, presented with Gymnasium spaces so Gymnasium's vector envs accept it."""

    def __init__(self, env_class: type[Any]) -> None:
        self.env = env_class()
        self.observation_space = to_gymnasium(env_class.observation_space)
        self.action_space = to_gymnasium(env_class.action_space)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> Any:
        return self.env.step(action)


def make_cartpole() -> Any:
    return gymnasium.make("CartPole-v1")


def make_pong(preprocessed: bool = False) -> Any:
    """ALE Pong-v5: raw 210x160x3 frames, or 84x84 grayscale stacked by 4 as Atari agents are trained on."""
    import ale_py  # the bench extra; it ships the ROMs

    gymnasium.register_envs(ale_py)
    if not preprocessed:
        return gymnasium.make("ALE/Pong-v5")
    env = gymnasium.wrappers.AtariPreprocessing(gymnasium.make("ALE/Pong-v5", frameskip=1), frame_skip=4)
    return gymnasium.wrappers.FrameStackObservation(env, 4)


@dataclass(frozen=True)
class EnvKind:
    """How to make one env: for vecspaces and the plain loops, and for Gymnasium's vector envs."""

    label: str
    native: Callable[[], Any]
    gymnasium: Callable[[], Any]
    envpool_task: str | None = None  # EnvPool's closest task, timed as an anchor where EnvPool is installed


def built_in(env_class: type[Any]) -> EnvKind:
    return EnvKind(env_class.__name__, env_class, functools.partial(GymnasiumAdapter, env_class))


def real(label: str, make: Callable[[], Any], envpool_task: str | None = None) -> EnvKind:
    return EnvKind(label, make, make, envpool_task)


TINY, ATARI, DICT, CPU = (built_in(cls) for cls in (TinyEnv, AtariEnv, DictEnv, CpuEnv))
CARTPOLE = real("CartPole-v1", make_cartpole, "CartPole-v1")
PONG = real("ALE Pong-v5", make_pong)
PONG_PREPROCESSED = real("ALE Pong-v5, 84x84x4", functools.partial(make_pong, preprocessed=True), "Pong-v5")


@dataclass(frozen=True)
class Workload:
    """One scenario of the benchmark.

    Attributes:
        group: synthetic, train, neighbours or real.
        policy_seconds: how long the main process computes (matrix products, BLAS threads at their default)
            after every step, as a training loop's policy does; 0 for none.
        neighbours: how many other processes burn a core each meanwhile.
        ceiling: whether to time the machine's ceiling (one plain env loop per core) in every round.
    """

    name: str
    group: str
    env: EnvKind
    num_envs: int
    policy_seconds: float = 0.0
    neighbours: int = 0
    ceiling: bool = False


def _workloads() -> list[Workload]:
    synthetic = [
        Workload("tiny", "synthetic", TINY, 8),
        Workload("atari", "synthetic", ATARI, 8),
        Workload("dict", "synthetic", DICT, 8),
        Workload("cpu", "synthetic", CPU, 4, ceiling=True),
    ]
    train = [
        Workload("train-tiny", "train", TINY, 8, policy_seconds=3e-4),
        Workload("train-cartpole", "train", CARTPOLE, 4, policy_seconds=3e-4),
        Workload("train-cpu", "train", CPU, 4, policy_seconds=2e-3),
    ]
    pong = Workload("pong", "real", PONG, 8, ceiling=True)
    real_envs = [
        Workload("cartpole", "real", CARTPOLE, 8),
        pong,
        Workload("pong-pre", "real", PONG_PREPROCESSED, 8, ceiling=True),
    ]
    neighbours = [
        Workload(f"nb{count}-{w.name}", "neighbours", w.env, w.num_envs, neighbours=count)
        for count in (1, 2)
        for w in [*synthetic, pong]
    ]
    return [*synthetic, *train, *neighbours, *real_envs]


WORKLOADS: dict[str, Workload] = {w.name: w for w in _workloads()}
GROUPS = ("synthetic", "train", "neighbours", "real")


class Policy:
    """Stands in for a policy's forward and backward pass: a matrix product sized to take about ``seconds``.

    numpy (or torch) runs it on the threads it uses by default, one per core, so the policy competes with the
    pool's processes for the cores as a real one does.
    """

    def __init__(self, seconds: float, library: str = "numpy") -> None:
        self.library = library
        size = 64
        for _ in range(4):  # the time grows as size**3; a few corrections land close enough
            self._allocate(size)
            taken = self._median_time()
            size = max(8, round(size * (seconds / taken) ** (1 / 3)))
        self._allocate(size)

    def _allocate(self, size: int) -> None:
        generator = np.random.default_rng(0)
        left, right = (generator.random((size, size), dtype=np.float32) for _ in range(2))
        if self.library == "torch":
            import torch

            self.left, self.right, self.out = torch.from_numpy(left), torch.from_numpy(right), torch.empty(size, size)
            self.product: Callable[..., Any] = torch.mm
        else:
            self.left, self.right, self.out = left, right, np.empty((size, size), np.float32)
            self.product = np.matmul

    def _median_time(self) -> float:
        times = []
        for _ in range(30):
            start = time.perf_counter()
            self(None)
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    def __call__(self, observations: Any) -> None:
        self.product(self.left, self.right, out=self.out)


def envpool_available() -> bool:
    try:
        import envpool  # noqa: F401
    except ImportError:
        return False
    return True


def open_vector_env(backend: str, workload: Workload, settings: dict[str, Any]) -> Any:
    """The vector env of ``backend`` (vecspaces, gym-async, gym-sync or envpool) over the workload's envs."""
    env, n = workload.env, workload.num_envs
    if backend == "vecspaces":
        return AsyncVectorEnv([env.native] * n, **settings)
    if backend == "gym-async":
        return gymnasium.vector.AsyncVectorEnv([env.gymnasium] * n)
    if backend == "gym-sync":
        return gymnasium.vector.SyncVectorEnv([env.gymnasium] * n)
    if backend == "envpool":
        import envpool

        return envpool.make_gymnasium(env.envpool_task, num_envs=n, num_threads=0)
    raise ValueError(f"unknown backend {backend!r}")


def batched_actions(backend: str, envs: Any, num_envs: int) -> Any:
    """A fixed batch of valid actions (EnvPool's spaces are the single env's, and it takes int32 actions)."""
    if backend == "envpool":
        space = envs.action_space
        space.seed(0)
        dtype = np.int32 if np.issubdtype(space.dtype, np.integer) else space.dtype
        return np.array([space.sample() for _ in range(num_envs)], dtype=dtype)
    envs.action_space.seed(0)
    return envs.action_space.sample()
