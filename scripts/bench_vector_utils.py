"""Vector utilities, vecspaces against Gymnasium in one run, on the DESIGN.md benchmark observation spaces.

For each space (tiny, atari, dict) with n=8 envs it times ``concatenate``, ``iterate`` (consumed to a list),
``write_to_shared_memory`` (all 8 envs) and ``read_from_shared_memory``, and prints the time per call of
both libraries and their ratio (Gymnasium time / vecspaces time: above 1 means vecspaces is faster).
It also times writing one env's atari observation through the precompiled layout against a bare
``np.copyto`` of the same bytes into the same slot: the physical floor.

Timing: ``time.perf_counter`` over many calls per round, best of several rounds (the least disturbed one);
the rounds of the two libraries alternate, so background load hits both alike.

Usage: python scripts/bench_vector_utils.py [--rounds 7] [--min-time 0.05]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import vecspaces.spaces as vs
import vecspaces.vector.utils as vu

N = 8


def scenarios() -> dict[str, tuple[Any, Any]]:
    import gymnasium.spaces as gs

    return {
        "tiny": (vs.Box(-1.0, 1.0, (4,), np.float32), gs.Box(-1.0, 1.0, (4,), np.float32)),
        "atari": (vs.Box(0, 255, (84, 84, 4), np.uint8), gs.Box(0, 255, (84, 84, 4), np.uint8)),
        "dict": (
            vs.Dict(
                image=vs.Box(0, 255, (64, 64, 3), np.uint8),
                vector=vs.Box(-1.0, 1.0, (10,), np.float32),
                choice=vs.Discrete(5),
                flags=vs.MultiBinary(8),
            ),
            gs.Dict(
                image=gs.Box(0, 255, (64, 64, 3), np.uint8),
                vector=gs.Box(-1.0, 1.0, (10,), np.float32),
                choice=gs.Discrete(5),
                flags=gs.MultiBinary(8),
            ),
        ),
    }


def calls_per_round(fn: Callable[[], Any], min_time: float) -> int:
    """Double the number of calls until one round lasts at least ``min_time`` seconds."""
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if time.perf_counter() - start >= min_time:
            return calls
        calls *= 2


def best_times(fns: list[Callable[[], Any]], rounds: int, min_time: float) -> list[float]:
    """Seconds per call of each function: best of ``rounds`` rounds.

    The functions' rounds alternate, so a burst of load from other processes hits them alike.
    """
    calls = [calls_per_round(fn, min_time) for fn in fns]
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for k, fn in enumerate(fns):
            start = time.perf_counter()
            for _ in range(calls[k]):
                fn()
            best[k] = min(best[k], (time.perf_counter() - start) / calls[k])
    return best


def operations(ours_space: Any, gym_space: Any) -> dict[str, tuple[Callable[[], Any], Callable[[], Any]]]:
    import gymnasium.vector.utils as gu

    ours_space.seed(0)
    items = [ours_space.sample() for _ in range(N)]

    ours_out = vu.create_empty_array(ours_space, N)
    gym_out = gu.create_empty_array(gym_space, N)
    ours_batched_space = vu.batch_space(ours_space, N)
    gym_batched_space = gu.batch_space(gym_space, N)
    ours_batch = vu.concatenate(ours_space, items, ours_out)
    gym_batch = gu.concatenate(gym_space, items, gym_out)

    ours_memory = vu.create_shared_memory(ours_space, N)
    gym_memory = gu.create_shared_memory(gym_space, N)

    def ours_write() -> None:
        for i, item in enumerate(items):
            vu.write_to_shared_memory(ours_space, i, item, ours_memory)

    def gym_write() -> None:
        for i, item in enumerate(items):
            gu.write_to_shared_memory(gym_space, i, item, gym_memory)

    def ours_read() -> Any:
        return vu.read_from_shared_memory(ours_space, ours_memory, N)

    def gym_read() -> Any:
        return gu.read_from_shared_memory(gym_space, gym_memory, N)

    return {
        "concatenate": (
            lambda: vu.concatenate(ours_space, items, ours_out),
            lambda: gu.concatenate(gym_space, items, gym_out),
        ),
        "iterate": (
            lambda: list(vu.iterate(ours_batched_space, ours_batch)),
            lambda: list(gu.iterate(gym_batched_space, gym_batch)),
        ),
        "write (8 envs)": (ours_write, gym_write),
        "read": (ours_read, gym_read),
        "write + read": (lambda: (ours_write(), ours_read()), lambda: (gym_write(), gym_read())),
    }


def floor_comparison(rounds: int, min_time: float) -> tuple[float, float]:
    """One env's atari observation: through the compiled layout, and a bare np.copyto into the same slot."""
    space = vs.Box(0, 255, (84, 84, 4), np.uint8)
    batch = vu.SharedLayout(space, N).allocate()
    observation = space.sample()
    slot = batch.env_views[3][0]
    layout_time, copy_time = best_times(
        [lambda: batch.write(3, observation), lambda: np.copyto(slot, observation)], rounds, min_time
    )
    return layout_time, copy_time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--min-time", type=float, default=0.05, help="seconds per timing round")
    args = parser.parse_args()

    print(f"n={N} envs; times per call, best of {args.rounds} rounds; ratio = gymnasium / vecspaces")
    print(f"{'space':<7} {'operation':<15} {'vecspaces':>12} {'gymnasium':>12} {'ratio':>7}")
    for name, (ours_space, gym_space) in scenarios().items():
        for operation, (ours, gym) in operations(ours_space, gym_space).items():
            ours_time, gym_time = best_times([ours, gym], args.rounds, args.min_time)
            print(
                f"{name:<7} {operation:<15} {ours_time * 1e6:>10.2f}us {gym_time * 1e6:>10.2f}us "
                f"{gym_time / ours_time:>6.2f}x"
            )
    layout_time, copy_time = floor_comparison(args.rounds, args.min_time)
    print()
    print("one atari observation (84x84x4 uint8) into its slot:")
    print(f"  SharedBatch.write  {layout_time * 1e6:8.2f}us")
    print(f"  bare np.copyto     {copy_time * 1e6:8.2f}us  (floor)")
    print(f"  layout / floor     {layout_time / copy_time:8.2f}x  (target <= 2x)")


if __name__ == "__main__":
    main()
