"""A Gymnasium script moved to vecspaces' worker pool by one line: CartPole from ``gymnasium.make``.

The only change from the Gymnasium version is the import of ``AsyncVectorEnv``. Given Gymnasium envs, the
pool shows Gymnasium's types: it is a ``gymnasium.vector.VectorEnv`` and its spaces are ``gymnasium.spaces``,
so Gymnasium's vector wrappers (here ``RecordEpisodeStatistics``) and ``isinstance`` checks work unchanged.

This script prints the spaces, runs CartPole with random actions, and checks that vecspaces' pool and
Gymnasium's own give the same trajectory for the same seeds and actions.

Run it with ``python examples/gymnasium_cartpole.py``; it needs gymnasium (``pip install gymnasium``).
"""

from __future__ import annotations

import functools
import time
from typing import Any

import numpy as np

try:
    import gymnasium
except ImportError:
    raise SystemExit(
        "This example runs Gymnasium's CartPole, but gymnasium is not installed.\n"
        "Install it with: pip install gymnasium"
    ) from None

from vecspaces.vector import AsyncVectorEnv  # was: from gymnasium.vector import AsyncVectorEnv

NUM_ENVS = 8
NUM_STEPS = 1000
COMPARED_STEPS = 100
SEED = 0

make_cartpole = functools.partial(gymnasium.make, "CartPole-v1")


def heading(number: int, title: str) -> None:
    print(f"\n{number}. {title}\n{'-' * (len(title) + 3)}")


def show_spaces(envs: AsyncVectorEnv) -> None:
    heading(1, "Spaces: Gymnasium's, as Gymnasium's own vector env shows them")
    gym_env = make_cartpole()
    theirs: Any = gym_env.observation_space  # both are Boxes
    ours: Any = envs.single_observation_space
    same_bounds = np.array_equal(ours.low, theirs.low) and np.array_equal(ours.high, theirs.high)
    rows = [
        ("the env's observation space", describe(theirs)),
        ("envs.single_observation_space", f"{describe(ours)}, same bounds: {same_bounds}"),
        ("the env's action space", describe(gym_env.action_space)),
        ("envs.single_action_space", describe(envs.single_action_space)),
        ("envs.observation_space", describe(envs.observation_space)),
        ("envs.action_space", describe(envs.action_space)),
        ("a gymnasium.vector.VectorEnv", str(isinstance(envs, gymnasium.vector.VectorEnv))),
    ]
    gym_env.close()
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"   {name.ljust(width)}  {value}")


def describe(space: Any) -> str:
    """A space's library and class, with its shape and dtype, e.g. ``vecspaces Box (4,) float32``."""
    library = type(space).__module__.split(".")[0]
    return f"{library} {type(space).__name__} {space.shape} {space.dtype}"


def play(envs: Any) -> None:  # a gymnasium.vector.VectorEnv at run time, which type checkers cannot see
    heading(2, f"{NUM_STEPS} steps of {NUM_ENVS} CartPoles with random actions")
    recorded = gymnasium.wrappers.vector.RecordEpisodeStatistics(envs)
    recorded.reset(seed=SEED)
    recorded.action_space.seed(SEED)
    returns: list[float] = []
    start = time.perf_counter()
    for _ in range(NUM_STEPS):
        *_, infos = recorded.step(recorded.action_space.sample())
        if "episode" in infos:
            returns.extend(infos["episode"]["r"][infos["_episode"]].tolist())
    seconds = time.perf_counter() - start
    print(f"   {len(returns)} episodes finished, mean return {np.mean(returns):.1f} (random play)")
    print(f"   {NUM_STEPS / seconds:,.0f} vector steps/s, {NUM_STEPS * NUM_ENVS / seconds:,.0f} env steps/s")


def trajectory(envs: Any, actions: np.ndarray) -> list[tuple[np.ndarray, ...]]:
    """Observations, rewards and flags of a seeded run with the given actions."""
    observations, _ = envs.reset(seed=SEED)
    steps: list[tuple[np.ndarray, ...]] = [(observations,)]
    for action in actions:
        steps.append(tuple(envs.step(action)[:4]))
    return steps


def compare_with_gymnasium() -> None:
    heading(3, f"Same seeds and actions in Gymnasium's AsyncVectorEnv ({COMPARED_STEPS} steps)")
    actions = np.random.default_rng(SEED).integers(0, 2, (COMPARED_STEPS, NUM_ENVS))
    with AsyncVectorEnv([make_cartpole] * NUM_ENVS) as envs:
        ours = trajectory(envs, actions)
    theirs_env = gymnasium.vector.AsyncVectorEnv([make_cartpole] * NUM_ENVS)
    try:
        theirs = trajectory(theirs_env, actions)
    finally:
        theirs_env.close()
    identical = all(
        np.array_equal(a, b)
        for step_a, step_b in zip(ours, theirs, strict=True)
        for a, b in zip(step_a, step_b, strict=True)
    )
    print(f"   observations, rewards, terminations and truncations identical: {identical}")


def main() -> None:
    print("Gymnasium CartPole in vecspaces' AsyncVectorEnv")
    print("================================================")
    envs = AsyncVectorEnv([make_cartpole] * NUM_ENVS)
    with envs:
        show_spaces(envs)
        play(envs)
    compare_with_gymnasium()


if __name__ == "__main__":
    main()
