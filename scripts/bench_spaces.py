"""Time sample, contains, flatten and unflatten on every catalog space, vecspaces against Gymnasium.

Both libraries run in the same process on the same values. A ratio is Gymnasium's time divided by ours, so
above 1.0 means vecspaces is faster. Usage: ``python scripts/bench_spaces.py [--quick] [--only ID ...]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gymnasium.spaces as gym_spaces

from tests.catalog import IDS, make, to_gym_value  # the one catalog; scripts import no test module
from vecspaces.spaces import flatten, to_gymnasium, unflatten

OPERATIONS = ["sample", "contains", "flatten", "unflatten"]


def best_time(fn: Callable[[], Any], budget: float) -> float:
    """Seconds per call: the best of five rounds, each sized to take about ``budget / 5`` seconds."""
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed > budget / 25:
            break
        calls *= 4
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        rounds.append((time.perf_counter() - start) / calls)
    return min(rounds)


def bench_space(space_id: str, budget: float) -> dict[str, tuple[float, float] | None]:
    """Per operation: (our seconds per call, Gymnasium's), or None where the operation does not apply."""
    ours = make(space_id)
    ours.seed(0)
    theirs = to_gymnasium(ours)
    x = ours.sample()
    gx = to_gym_value(x)
    results: dict[str, tuple[float, float] | None] = {
        "sample": (best_time(ours.sample, budget), best_time(theirs.sample, budget)),
        "contains": (
            best_time(lambda: ours.contains(x), budget),
            best_time(lambda: theirs.contains(gx), budget),
        ),
        "flatten": (
            best_time(lambda: flatten(ours, x), budget),
            best_time(lambda: gym_spaces.flatten(theirs, gx), budget),
        ),
    }
    flat, gym_flat = flatten(ours, x), gym_spaces.flatten(theirs, gx)
    try:
        gym_spaces.unflatten(theirs, gym_flat)
    except Exception:  # Gymnasium's own bug (e.g. a Text inside a float-flattened composite): nothing to compare
        results["unflatten"] = None
        return results
    results["unflatten"] = (
        best_time(lambda: unflatten(ours, flat), budget),
        best_time(lambda: gym_spaces.unflatten(theirs, gym_flat), budget),
    )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="shorter timing rounds (less precise)")
    parser.add_argument("--only", nargs="*", default=IDS, help="catalog ids to run")
    args = parser.parse_args()
    budget = 0.02 if args.quick else 0.1

    ratios: dict[str, list[float]] = {op: [] for op in OPERATIONS}
    print(f"{'space':<26}" + "".join(f"{op:>22}" for op in OPERATIONS))
    print(f"{'':<26}" + "".join(f"{'ours us / ratio':>22}" for _ in OPERATIONS))
    for space_id in args.only:
        row = bench_space(space_id, budget)
        cells = []
        for op in OPERATIONS:
            timing = row[op]
            if timing is None:
                cells.append(f"{'-':>22}")
                continue
            ours, theirs = timing
            ratios[op].append(theirs / ours)
            cells.append(f"{ours * 1e6:>12.2f} / {theirs / ours:>6.2f}x")
        print(f"{space_id:<26}" + "".join(cells), flush=True)
    print()
    print("median ratio (Gymnasium time / vecspaces time; > 1 means vecspaces is faster):")
    for op in OPERATIONS:
        values = ratios[op]
        print(
            f"  {op:<10} median {statistics.median(values):6.2f}x   min {min(values):6.2f}x   over {len(values)} spaces"
        )


if __name__ == "__main__":
    main()
