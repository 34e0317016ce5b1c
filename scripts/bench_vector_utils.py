"""Vector utilities, vecspaces against Gymnasium in one run, on the DESIGN.md benchmark observation spaces.

For each space (tiny, atari, dict) with n=8 envs it times ``concatenate``, ``iterate`` (consumed to a list),
``write_to_shared_memory`` (all 8 envs) and ``read_from_shared_memory``, and prints the time per call of
both libraries and their ratio (Gymnasium time / vecspaces time: above 1 means vecspaces is faster).

The physical floor of ``concatenate`` and of ``write + read`` is one ``np.copyto`` of the same bytes (the 8
observations) from a contiguous source into a preallocated destination: an ``np.empty`` array for
concatenate, a shared ``multiprocessing.Array`` for write + read (a read is zero-copy, so its floor is
nothing). Each is printed with our time / floor. It also times writing one env's atari observation through
the precompiled layout against a bare ``np.copyto`` of the same bytes into the same slot.

At the end it says whether each target of issue 3 is met: at least 2x Gymnasium on concatenate and on write
+ read, and the layout write of one atari observation within 2x of its floor. A 2x target is *bounded by
the floor* when Gymnasium itself takes less than twice the floor: then no implementation can be 2x faster.

Timing: ``time.perf_counter`` over many calls per round, best of several rounds (the least disturbed one);
the rounds of the two libraries alternate, so background load hits both alike.

Usage: python scripts/bench_vector_utils.py [--rounds 7] [--min-time 0.05]
"""

from __future__ import annotations

import argparse
import ctypes
import multiprocessing
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
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
    assert gym_out is not None  # Gymnasium gives None only for custom spaces, and no scenario has one
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

    def ours_write_read() -> Any:
        ours_write()
        return ours_read()

    def gym_write_read() -> Any:
        gym_write()
        return gym_read()

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
        "write + read": (ours_write_read, gym_write_read),
    }


def observation_bytes(value: Any) -> int:
    """The bytes of one observation's arrays (a Dict's leaves summed)."""
    if isinstance(value, dict):
        return sum(observation_bytes(part) for part in value.values())
    return int(np.asarray(value).nbytes)


def floors(nbytes: int) -> dict[str, Callable[[], Any]]:
    """One np.copyto of ``nbytes`` bytes: into an np.empty array, and into a shared multiprocessing.Array.

    The shared array is a ``RawArray``, which is what ``multiprocessing.Array(..., lock=False)`` returns.
    """
    source = np.random.default_rng(0).integers(0, 256, nbytes, dtype=np.uint8)
    out = np.empty(nbytes, np.uint8)
    shared = np.frombuffer(memoryview(multiprocessing.RawArray(ctypes.c_uint8, nbytes)), dtype=np.uint8)
    return {
        "concatenate": lambda: np.copyto(out, source),
        "write + read": lambda: np.copyto(shared, source),
    }


def empty_batch(space: vs.Space[Any]) -> np.ndarray[Any, Any]:
    """An uninitialized array for the ``N`` values of a fixed-shape space."""
    assert space.shape is not None, f"{space} has no fixed shape"
    return np.empty((N, *space.shape), space.dtype)


def bare_assignment(space: Any) -> Callable[[], Any]:
    """numpy copying the 8 separate observations into a preallocated out, leaf by leaf, with no check at all.

    Not a floor (the floor copies one contiguous source), but what any concatenate of these items pays.
    """
    space.seed(0)
    items = [space.sample() for _ in range(N)]
    if isinstance(space, vs.Dict):
        columns = [(empty_batch(child), [item[key] for item in items]) for key, child in space.items()]
    else:
        columns = [(empty_batch(space), items)]

    def assign() -> None:
        for out, column in columns:
            out[...] = column

    return assign


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


@dataclass
class Row:
    scenario: str
    operation: str
    ours: float
    gym: float
    floor: float | None = None
    nbytes: int = 0
    bare: float | None = None  # numpy's own copy of the separate items, for concatenate


def us(seconds: float) -> str:
    return f"{seconds * 1e6:.2f}us"


def kilobytes(nbytes: int) -> str:
    return f"{nbytes / 1000:.0f} KB" if nbytes >= 1000 else f"{nbytes} bytes"


def speedup_verdict(row: Row, target: float) -> list[str]:
    """Whether vecspaces is at least ``target`` times faster than Gymnasium on ``row``, and what bounds it."""
    ratio = row.gym / row.ours
    lines = [f"{'met' if ratio >= target else 'missed':<6} {ratio:5.2f}x Gymnasium"]
    if row.floor is None:
        return lines
    needed = row.gym / target  # the time that would meet the target
    lines[0] += f"; ours is {row.ours / row.floor:.2f}x the floor, Gymnasium {row.gym / row.floor:.2f}x"
    if ratio >= target:
        return lines
    floor = f"one np.copyto of {kilobytes(row.nbytes)} taking {us(row.floor)}"
    if needed <= row.floor:
        lines.append(
            f"bounded by the floor: {target:g}x Gymnasium needs {us(needed)}, no more than the floor ({floor}), "
            "so no implementation can meet it"
        )
    elif row.bare is not None and needed <= row.bare:
        lines.append(
            f"bounded by the copy: {target:g}x Gymnasium needs {us(needed)} ({needed / row.floor:.2f}x the floor, "
            f"{floor}), but numpy alone, copying the {N} separate observations into out with no check "
            f"(out[...] = items), takes {us(row.bare)}: both libraries are near the floor"
        )
    else:
        lines.append(
            f"missed by overhead: {target:g}x Gymnasium needs {us(needed)}; the floor ({floor}) would allow up to "
            f"{row.gym / row.floor:.2f}x"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--min-time", type=float, default=0.05, help="seconds per timing round")
    args = parser.parse_args()

    print(f"n={N} envs; times per call, best of {args.rounds} rounds; ratio = gymnasium / vecspaces")
    print("floor = one np.copyto of the same bytes into a preallocated destination (see the module docstring)")
    print(
        f"{'space':<7} {'operation':<15} {'vecspaces':>11} {'gymnasium':>11} {'ratio':>7} {'floor':>11} "
        f"{'ours/floor':>10}"
    )
    rows: list[Row] = []
    for name, (ours_space, gym_space) in scenarios().items():
        ops = operations(ours_space, gym_space)
        ours_space.seed(0)
        nbytes = N * observation_bytes(ours_space.sample())
        floor_fns = floors(nbytes)
        for operation, (ours, gym) in ops.items():
            extra = []
            if operation in floor_fns:
                extra.append(floor_fns[operation])
            if operation == "concatenate":
                extra.append(bare_assignment(ours_space))
            times = best_times([ours, gym, *extra], args.rounds, args.min_time)
            row = Row(name, operation, times[0], times[1], nbytes=nbytes)
            if operation in floor_fns:
                row.floor = times[2]
            if operation == "concatenate":
                row.bare = times[3]
            rows.append(row)
            floor_text = f"{us(row.floor):>11} {row.ours / row.floor:>9.2f}x" if row.floor else f"{'':>11} {'':>10}"
            print(
                f"{name:<7} {operation:<15} {us(row.ours):>11} {us(row.gym):>11} {row.gym / row.ours:>6.2f}x "
                f"{floor_text}".rstrip()
            )
    print()
    print(f"numpy alone copying the {N} separate observations into out (out[...] = items, no check):")
    for row in rows:
        if row.bare is not None:
            print(
                f"  {row.scenario:<6} {us(row.bare):>10}  ({row.bare / row.floor:.2f}x the floor)" if row.floor else ""
            )

    layout_time, copy_time = floor_comparison(args.rounds, args.min_time)
    print()
    print("one atari observation (84x84x4 uint8, 28 KB) into its slot:")
    print(f"  SharedBatch.write  {layout_time * 1e6:8.2f}us")
    print(f"  bare np.copyto     {copy_time * 1e6:8.2f}us  (floor)")
    print(f"  layout / floor     {layout_time / copy_time:8.2f}x  (target <= 2x)")

    print()
    print("Targets of issue 3:")
    for operation in ("concatenate", "write + read"):
        print(f"  {operation} >= 2x Gymnasium:")
        for row in rows:
            if row.operation == operation:
                first, *rest = speedup_verdict(row, 2.0)
                print(f"    {row.scenario:<6} {first}")
                for line in rest:
                    print(textwrap.fill(line, width=116, initial_indent=" " * 11, subsequent_indent=" " * 11))
    ratio = layout_time / copy_time
    print("  layout write of one atari observation within 2x of a bare np.copyto:")
    print(f"    atari  {'met' if ratio <= 2.0 else 'missed':<6} {ratio:5.2f}x the floor")


if __name__ == "__main__":
    main()
