"""vecspaces' worker pool at a glance: a rich Dict observation batched in shared memory.

Runs 8 copies of the built-in ``DemoEnv`` (a rover whose observation has an image, vectors, a Discrete, a
MultiBinary, a MultiDiscrete, a mission string and a variable-length list of beacons) in an
``AsyncVectorEnv`` with its default settings, steps it with random actions and prints:

1. the batched observation, one line per leaf, and whether the leaf travels through shared memory or through
   the workers' pipes (only variable-size leaves, here the beacons, are pickled);
2. a few decoded values;
3. the throughput;
4. the worker processes, their envs and their memory.

Run it with ``python examples/async_pool_demo.py``; it needs nothing but vecspaces.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import psutil

from vecspaces.envs import DemoEnv
from vecspaces.spaces import Dict, Space, Tuple
from vecspaces.vector import AsyncVectorEnv
from vecspaces.vector.utils import SharedLayout

NUM_ENVS = 8
NUM_STEPS = 3000
SEED = 42


def heading(number: int, title: str) -> None:
    print(f"\n{number}. {title}\n{'-' * (len(title) + 3)}")


def table(rows: Sequence[tuple[str, ...]], header: tuple[str, ...] | None = None) -> None:
    """Print rows in aligned columns, under a header if one is given."""
    lines = list(rows) if header is None else [header, *rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    if header is not None:
        lines.insert(1, tuple("-" * width for width in widths))
    for line in lines:
        print("   " + "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip())


def leaves(space: Space[Any], value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    """The (path, value) pairs of a batched observation, walking the single observation space."""
    if isinstance(space, Dict):
        return [leaf for key, sub in space.spaces.items() for leaf in leaves(sub, value[key], (*path, key))]
    if isinstance(space, Tuple):
        return [leaf for i, sub in enumerate(space.spaces) for leaf in leaves(sub, value[i], (*path, i))]
    return [(path, value)]


def path_name(path: tuple[Any, ...]) -> str:
    return "obs" + "".join(f"[{key!r}]" for key in path)


def shape_and_dtype(value: Any) -> tuple[str, str]:
    """How a batched leaf looks: an array's shape and dtype, or what its tuple (one item per env) holds."""
    if isinstance(value, np.ndarray):
        return str(value.shape), str(value.dtype)
    if all(isinstance(item, str) for item in value):
        return f"{len(value)} strings", "str"
    if all(isinstance(item, np.ndarray) for item in value):
        # Rows differ between envs only in their first dimension: show it as k.
        row = ("k", *value[0].shape[1:])
        return f"{len(value)} arrays of shape ({', '.join(map(str, row))})", str(value[0].dtype)
    return f"{len(value)} items", "-"


def piped_paths(envs: AsyncVectorEnv, layout: SharedLayout) -> set[tuple[Any, ...]] | None:
    """The leaves the workers pickle through their pipes: those with no fixed size; None means all of them."""
    if not envs.shared_memory:
        return None
    return {leaf.path for leaf in layout.variable_leaves}


def show_pool(envs: AsyncVectorEnv) -> None:
    print(
        f"{envs.num_envs} DemoEnv sub-environments in {envs.num_workers} worker processes, "
        f"shared_memory={envs.shared_memory}, autoreset_mode={envs.autoreset_mode.value}"
    )


def show_structure(envs: AsyncVectorEnv, obs: dict[str, Any]) -> None:
    heading(1, f"Batched observation (reset(seed={SEED}))")
    layout = SharedLayout(envs.single_observation_space, envs.num_envs)
    piped = piped_paths(envs, layout)
    rows = []
    for path, value in leaves(envs.single_observation_space, obs):
        if piped is None:
            transport = "pipe (shared_memory=False)"
        else:
            transport = "pipe (variable size)" if path in piped else "shared memory"
        rows.append((path_name(path), *shape_and_dtype(value), transport))
    table(rows, ("leaf", "shape", "dtype", "travels by"))
    if piped is not None:
        print(f"   shared-memory observation buffer: {layout.nbytes / 1024:.1f} KiB for {envs.num_envs} envs")


def show_values(obs: dict[str, Any]) -> None:
    heading(2, "A few decoded values")
    beacons = obs["beacons"]
    with_beacons = next((i for i, rows in enumerate(beacons) if len(rows)), 0)
    table(
        [
            ("missions", ", ".join(repr(mission) for mission in obs["mission"][:4]) + ", ..."),
            ("env 0 position", np.array2string(obs["position"][0], precision=2)),
            ("env 0 heading", str(obs["heading"][0])),
            ("beacons per env", str([len(rows) for rows in beacons])),
            (f"env {with_beacons} beacons", np.array2string(beacons[with_beacons], precision=2).replace("\n", "")),
            ("camera mean", f"{obs['camera'].mean():.1f} (of 0..255)"),
        ]
    )


def run_steps(envs: AsyncVectorEnv) -> tuple[float, int, float]:
    """Step with random actions; return the elapsed seconds, the episodes finished and their mean length."""
    envs.action_space.seed(SEED)
    lengths: list[int] = []
    running = np.zeros(envs.num_envs, dtype=np.int64)
    start = time.perf_counter()
    for _ in range(NUM_STEPS):
        _, _, terminations, truncations, _ = envs.step(envs.action_space.sample())
        running += 1
        done = terminations | truncations
        lengths.extend(running[done].tolist())
        running[done] = -1  # the next step of a finished env is its autoreset, not a step of an episode
    return time.perf_counter() - start, len(lengths), float(np.mean(lengths)) if lengths else 0.0


def show_speed(envs: AsyncVectorEnv) -> None:
    heading(3, f"Stepping {NUM_STEPS} times with random actions")
    seconds, episodes, mean_length = run_steps(envs)
    table(
        [
            ("time", f"{seconds:.2f} s"),
            ("vector steps per second", f"{NUM_STEPS / seconds:,.0f}"),
            ("env steps per second", f"{NUM_STEPS * envs.num_envs / seconds:,.0f}"),
            ("episodes finished", f"{episodes} (mean length {mean_length:.1f} steps)"),
        ]
    )


def show_workers(envs: AsyncVectorEnv) -> None:
    heading(4, "Worker processes")
    rows = []
    for info in envs.worker_info():
        envs_of_worker = info["envs"]
        memory = "-" if info["rss"] is None else f"{info['rss'] / 2**20:.1f} MiB"
        rows.append(
            (
                str(info["worker"]),
                str(info["pid"]),
                f"{envs_of_worker[0]}-{envs_of_worker[-1]}",
                "yes" if info["alive"] else "no",
                memory,
            )
        )
    table(rows, ("worker", "pid", "envs", "alive", "memory (RSS)"))


def main() -> None:
    print("vecspaces AsyncVectorEnv demo")
    print("=============================")
    envs = AsyncVectorEnv([DemoEnv] * NUM_ENVS)
    with envs:
        show_pool(envs)
        obs, _ = envs.reset(seed=SEED)
        show_structure(envs, obs)
        show_values(obs)
        show_speed(envs)
        show_workers(envs)
        pids = [info["pid"] for info in envs.worker_info()]
    left = [pid for pid in pids if psutil.pid_exists(pid)]
    print(f"\nclosed: {len(pids) - len(left)} of {len(pids)} worker processes have exited")


if __name__ == "__main__":
    main()
