"""Throughput of vector envs: vecspaces' AsyncVectorEnv against Gymnasium's Async and Sync, side by side.

Runs the benchmark scenarios of DESIGN.md (tiny, atari, dict, cpu) with the same envs in every backend and
prints env-steps per second, the ratio to Gymnasium's AsyncVectorEnv, and peak memory (main process plus
workers). Each number is the median of several timed runs; the runs of every vector env of a scenario are
interleaved round by round, so the load of a shared machine falls on all of them alike.

Usage::

    python scripts/bench_vector.py            # full run (a few minutes)
    python scripts/bench_vector.py --quick    # under a minute
    python scripts/bench_vector.py --sweep    # also num_envs from 1 to 64 for tiny and cpu
    python scripts/bench_vector.py --plot docs/bench.png   # needs matplotlib (pip install ".[bench]")
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gymnasium

from vecspaces.envs import AtariEnv, CpuEnv, DictEnv, TinyEnv
from vecspaces.spaces import to_gymnasium
from vecspaces.vector import AsyncVectorEnv

SCENARIOS: dict[str, tuple[type, int]] = {
    "tiny": (TinyEnv, 8),
    "atari": (AtariEnv, 8),
    "dict": (DictEnv, 8),
    "cpu": (CpuEnv, 4),
}
# The project's must-reach targets: the default's ratio to Gymnasium's AsyncVectorEnv in the same run. Besides,
# tiny must match Gymnasium's SyncVectorEnv and cpu must reach CPU_IDEAL_SHARE of the ideal (cores x 1000).
MUST_REACH = {"tiny": 10.0, "atari": 6.0, "dict": 8.0, "cpu": 1.3}
CPU_IDEAL_SHARE = 0.9
# How long each round times the CPUs, all of them one after the other (see cpu_chunk_times).
CALIBRATION_SECONDS = 0.1
SHORT_NAMES = {"num_workers": "workers", "main_process_envs": "main_envs"}
# "half" stands for half of the scenario's envs (the main process steps them, one worker the rest).
TUNINGS: list[dict[str, Any]] = [
    {"num_workers": 1},
    {"num_workers": 2},
    {"copy": False},
    {"num_workers": 1, "copy": False},
    {"num_workers": 1, "main_process_envs": "half"},
    {"num_workers": 1, "main_process_envs": "half", "copy": False},
]


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


def make_factories(env_class: type, num_envs: int, gym: bool) -> list[Callable[[], Any]]:
    if gym:
        return [lambda: GymnasiumAdapter(env_class)] * num_envs
    return [env_class] * num_envs


BACKENDS: dict[str, Callable[[type, int, dict[str, Any]], Any]] = {
    "vecspaces": lambda cls, n, kw: AsyncVectorEnv(make_factories(cls, n, False), **kw),
    "gym-async": lambda cls, n, kw: gymnasium.vector.AsyncVectorEnv(make_factories(cls, n, True)),
    "gym-sync": lambda cls, n, kw: gymnasium.vector.SyncVectorEnv(make_factories(cls, n, True)),
}


@dataclass
class Result:
    steps_per_second: float
    peak_rss: int


def child_pids() -> set[int]:
    return {child.pid for child in psutil.Process().children(recursive=True)}


def tree_rss(exclude: set[int]) -> int:
    """Resident memory of this process and its children but those in ``exclude``, in bytes."""
    me = psutil.Process()
    total = me.memory_info().rss
    for child in me.children(recursive=True):
        if child.pid not in exclude:
            with contextlib.suppress(psutil.Error):  # a child may exit while we look
                total += child.memory_info().rss
    return total


@dataclass
class Contender:
    """One vector env under test: how to make it, and its timed runs."""

    label: str
    backend: str
    settings: dict[str, Any] = field(default_factory=dict)
    runs: list[float] = field(default_factory=list)
    peak_rss: int = 0


def open_envs(contender: Contender, env_class: type, num_envs: int) -> tuple[Any, Any]:
    """Build, reset and warm up a contender's vector env; return it with the actions it will be stepped with."""
    envs = BACKENDS[contender.backend](env_class, num_envs, contender.settings)
    envs.reset(seed=0)
    envs.action_space.seed(0)
    actions = envs.action_space.sample()
    for _ in range(20):
        envs.step(actions)
    return envs, actions


def timed_run(envs: Any, actions: Any, num_envs: int, seconds: float) -> float:
    """Env-steps per second of ``step()`` over about ``seconds``."""
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(10):
            envs.step(actions)
        steps += 10
    return steps * num_envs / (time.perf_counter() - start)


def plain_loop(env_class: type, seconds: float, results: Any) -> None:
    """Step one env as fast as it goes for about ``seconds``, with no vector env around it; put its steps/s."""
    env = env_class()
    env.reset(seed=0)
    action = env.action_space.sample()
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
        steps += 1
    results.put(steps / (time.perf_counter() - start))


def machine_rate(env_class: type, seconds: float) -> float:
    """What this machine delivers: env-steps/s of one :func:`plain_loop` per physical core, all at once.

    For envs that only burn CPU this is the true ceiling of any vector env here, below the nominal ideal
    where a VM's hypervisor or interrupts take part of each core.
    """
    context = multiprocessing.get_context()
    results = context.Queue()
    loops = [
        context.Process(target=plain_loop, args=(env_class, seconds, results))
        for _ in range(psutil.cpu_count(logical=False) or 1)
    ]
    for loop in loops:
        loop.start()
    rates = [results.get() for _ in loops]
    for loop in loops:
        loop.join()
    return sum(rates)


def cpu_ideal() -> int:
    """The cpu scenario's ideal: every physical core steps 1000 of its 1 ms envs a second."""
    return (psutil.cpu_count(logical=False) or 1) * 1000


def calibration_chunk() -> int:
    """A fixed piece of pure-Python work (35-55 us on the VM of the README, depending on its host's load)."""
    total = 0
    for i in range(1000):
        total += i * i
    return total


def cpu_chunk_times(seconds: float) -> dict[int, float]:
    """Per CPU this process may use, the median time of :func:`calibration_chunk` run there alone.

    A VM's CPU can run the same code markedly slower, in spells of milliseconds to seconds, when its host gives
    the physical core to other work (another guest on the core's second hyperthread, say). Steal time does not
    show that, and a lockstep of workers waits for its slowest CPU. The CPUs share ``seconds`` (at least 5 ms
    each). Empty where CPU affinity is not available.
    """
    if not hasattr(os, "sched_setaffinity"):
        return {}
    allowed = os.sched_getaffinity(0)
    times: dict[int, float] = {}
    each = max(0.005, seconds / len(allowed))
    try:
        for cpu in sorted(allowed):
            os.sched_setaffinity(0, {cpu})
            chunks, end = [], time.perf_counter() + each
            while (start := time.perf_counter()) < end:
                calibration_chunk()
                chunks.append(time.perf_counter() - start)
            times[cpu] = statistics.median(chunks)
    finally:
        os.sched_setaffinity(0, allowed)
    return times


@dataclass
class Conditions:
    """What the machine was like while a scenario ran: nothing in it is any vector env's doing.

    Attributes:
        stolen: the share of CPU time the hypervisor took (None where the OS does not say).
        machine_runs: the rates of :func:`machine_rate` (cpu only), one per round.
        chunk_times: per CPU, the :func:`cpu_chunk_times` of every round.
    """

    stolen: float | None = None
    machine_runs: list[float] = field(default_factory=list)
    chunk_times: dict[int, list[float]] = field(default_factory=dict)


def measure(
    contenders: list[Contender],
    env_class: type,
    num_envs: int,
    seconds: float,
    repeats: int,
    plain_loops: bool = False,
) -> Conditions:
    """Fill each contender's runs and peak memory; return the machine's conditions meanwhile.

    Memory: each contender alone (its workers and the main process), one at a time. Speed: every contender is
    kept open and their runs are interleaved round by round, so a slow spell of a shared machine lands on
    all of them alike instead of on whichever ran then. Each round also times the CPUs, and with
    ``plain_loops`` the machine's own rate (:func:`machine_rate`).
    """
    conditions = Conditions()
    before = psutil.cpu_times()
    for contender in contenders:
        others = child_pids()  # e.g. the workers of a closed vector env that have not exited yet
        envs, actions = open_envs(contender, env_class, num_envs)
        try:
            timed_run(envs, actions, num_envs, min(seconds, 0.2))
            contender.peak_rss = tree_rss(exclude=others)
        finally:
            envs.close()
    opened: list[tuple[Contender, Any, Any]] = []
    try:
        for contender in contenders:
            opened.append((contender, *open_envs(contender, env_class, num_envs)))
        for _ in range(repeats):
            for contender, envs, actions in opened:
                contender.runs.append(timed_run(envs, actions, num_envs, seconds))
            for cpu, chunk_time in cpu_chunk_times(CALIBRATION_SECONDS).items():
                conditions.chunk_times.setdefault(cpu, []).append(chunk_time)
            if plain_loops:
                conditions.machine_runs.append(machine_rate(env_class, seconds))
    finally:
        for _, envs, _ in opened:
            envs.close()
    conditions.stolen = stolen_share(before, psutil.cpu_times())
    return conditions


def stolen_share(before: Any, after: Any) -> float | None:
    """The share of this machine's CPU time its hypervisor took between two ``psutil.cpu_times()`` readings.

    None where the OS does not say (steal time is a Linux figure). A VM whose CPUs are taken runs everything
    slower, and Gymnasium's process-heavy AsyncVectorEnv differently from the rest: a run with more than a few
    percent stolen is worth repeating.
    """
    if not hasattr(after, "steal"):
        return None
    # guest and guest_nice are already counted in user and nice.
    total = sum(after) - sum(before) - sum(getattr(after, f) - getattr(before, f) for f in ("guest", "guest_nice"))
    return (after.steal - before.steal) / total if total > 0 else 0.0


def progress(text: str) -> None:
    print(f"  .. {text}", file=sys.stderr, flush=True)


def run_scenarios(
    names: list[str], seconds: float, repeats: int, tune: bool
) -> tuple[dict[str, dict[str, Result]], dict[str, Conditions]]:
    """Measure the scenarios; return their results and the machine's conditions while each ran."""
    table: dict[str, dict[str, Result]] = {}
    conditions: dict[str, Conditions] = {}
    for name in names:
        env_class, num_envs = SCENARIOS[name]
        contenders = [Contender(backend, backend) for backend in BACKENDS]
        if tune:
            for tuning in TUNINGS:
                label = ", ".join(f"{SHORT_NAMES.get(key, key)}={value}" for key, value in tuning.items())
                settings = {key: num_envs // 2 if value == "half" else value for key, value in tuning.items()}
                contenders.append(Contender(f"tuned ({label})", "vecspaces", settings))
        progress(f"{name}: {len(contenders)} vector envs, {repeats} interleaved rounds of {seconds} s")
        conditions[name] = measure(contenders, env_class, num_envs, seconds, repeats, plain_loops=name == "cpu")
        results = {c.label: Result(statistics.median(c.runs), c.peak_rss) for c in contenders}
        row = {backend: results[backend] for backend in BACKENDS}
        tuned = [label for label in results if label.startswith("tuned")]
        if tuned:
            best = max(tuned, key=lambda label: results[label].steps_per_second)
            row[best] = results[best]
        table[name] = row
    return table, conditions


def sweep_rate(backend: str, env_class: type, num_envs: int, seconds: float) -> float:
    contender = Contender(backend, backend)
    envs, actions = open_envs(contender, env_class, num_envs)
    try:
        return timed_run(envs, actions, num_envs, seconds)
    finally:
        envs.close()


def print_table(table: dict[str, dict[str, Result]], conditions: dict[str, Conditions]) -> None:
    # The CPUs are alike: the quickest round of any of them in this run is what each does at full speed.
    fastest = min((t for c in conditions.values() for times in c.chunk_times.values() for t in times), default=None)
    cores = psutil.cpu_count(logical=False), psutil.cpu_count()
    print(
        f"\nmachine: {platform.processor() or platform.machine()}, {cores[0]} physical / {cores[1]} logical cores, "
        f"Python {platform.python_version()}, numpy {np.__version__}, gymnasium {gymnasium.__version__}"
    )
    print("env-steps per second (median), ratio to Gymnasium AsyncVectorEnv, peak RSS of main + workers\n")
    header = (
        f"{'scenario':<8} {'backend':<48} {'steps/s':>10} {'vs gym-async':>13} {'vs gym-sync':>12} {'peak RSS':>10}"
    )
    print(header)
    print("-" * len(header))
    for name, row in table.items():
        gym_async, gym_sync = row["gym-async"].steps_per_second, row["gym-sync"].steps_per_second
        for backend, result in row.items():
            rate = result.steps_per_second
            print(
                f"{name:<8} {backend:<48} {rate:>10,.0f} {rate / gym_async:>12.2f}x {rate / gym_sync:>11.2f}x "
                f"{result.peak_rss / 2**20:>8.0f} MB"
            )
        state = conditions[name]
        if name == "cpu":
            ideal = cpu_ideal()
            ours = row["vecspaces"].steps_per_second
            print(f"{'':<8} {'(ideal: physical cores x 1000)':<48} {ideal:>10,}")
            line = f"(vecspaces default: {ours / ideal:.0%} of ideal"
            if state.machine_runs:
                # The ideal assumes whole cores; this is what the cores really gave a plain loop meanwhile.
                rate = statistics.median(state.machine_runs)
                print(f"{'':<8} {'(this machine: a plain env loop per core)':<48} {rate:>10,.0f}")
                line += f", {ours / rate:.0%} of what this machine gave plain loops"
                # No vector env outruns the plain loops, so they bound every ratio of this scenario.
                print(f"{'':<8} (so a vector env can reach at most {rate / gym_async:.2f}x Gymnasium Async here)")
            print(f"{'':<8} {line})")
        if state.stolen is not None:
            print(f"{'':<8} (CPU time stolen by the hypervisor meanwhile: {state.stolen:.1%})")
        if fastest is not None and state.chunk_times:
            speeds = sorted(fastest / statistics.mean(times) for times in state.chunk_times.values())
            shown = f"{speeds[0]:.0%}" if len(speeds) == 1 else f"{speeds[0]:.0%} (slowest) to {speeds[-1]:.0%}"
            print(f"{'':<8} (speed of the CPUs meanwhile, against the fastest seen in this run: {shown})")
        print()


def print_targets(table: dict[str, dict[str, Result]]) -> None:
    """Whether the default reached each must-reach target, judged on unrounded ratios."""
    print("must-reach targets, default settings (unrounded):")
    for name, row in table.items():
        ours = row["vecspaces"].steps_per_second
        ratio = ours / row["gym-async"].steps_per_second
        checks = [(f"{ratio:6.3f}x Gymnasium Async (>= {MUST_REACH[name]:g}x)", ratio >= MUST_REACH[name])]
        if name == "tiny":
            versus_sync = ours / row["gym-sync"].steps_per_second
            checks.append((f"{versus_sync:.3f}x Gymnasium Sync (>= 1x)", versus_sync >= 1.0))
        if name == "cpu":
            share = ours / cpu_ideal()
            checks.append((f"{share:.1%} of ideal (>= {CPU_IDEAL_SHARE:.0%})", share >= CPU_IDEAL_SHARE))
        verdict = "held" if all(held for _, held in checks) else "MISSED"
        print(f"  {name:<6} {', '.join(text for text, _ in checks)}: {verdict}")
    print()


def sweep(seconds: float, sizes: list[int]) -> None:
    print("num_envs sweep: vecspaces (default settings) vs Gymnasium AsyncVectorEnv, env-steps/s\n")
    print(f"{'scenario':<8} {'num_envs':>8} {'vecspaces':>12} {'gym-async':>12} {'ratio':>8}")
    for name in ("tiny", "cpu"):
        env_class, _ = SCENARIOS[name]
        before = psutil.cpu_times()
        for n in sizes:
            progress(f"sweep {name} n={n}")
            # Alternating, median of three each: the sweep's runs are short.
            rates: dict[str, list[float]] = {"vecspaces": [], "gym-async": []}
            for _ in range(3):
                for backend, runs in rates.items():
                    runs.append(sweep_rate(backend, env_class, n, seconds / 3))
            ours, theirs = (statistics.median(runs) for runs in rates.values())
            print(f"{name:<8} {n:>8} {ours:>12,.0f} {theirs:>12,.0f} {ours / theirs:>7.2f}x", flush=True)
        share = stolen_share(before, psutil.cpu_times())
        if share is not None:
            print(f"{'':<8} (CPU time stolen by the hypervisor meanwhile: {share:.1%})")


def plot(table: dict[str, dict[str, Result]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(table)
    figure, axes = plt.subplots(1, len(names), figsize=(3.4 * len(names), 3.6))
    for axis, name in zip(np.atleast_1d(axes), names, strict=True):
        tuned = [backend for backend in table[name] if backend.startswith("tuned")]
        backends = ["vecspaces", *tuned, "gym-async", "gym-sync"]
        rates = [table[name][b].steps_per_second for b in backends]
        labels = ["vecspaces", *(["vecspaces tuned"] if tuned else []), "gym-async", "gym-sync"]
        axis.bar(labels, rates, color=["#2b7bba", *(["#74b3e0"] if tuned else []), "#bbbbbb", "#888888"])
        axis.set_title(f"{name} ({SCENARIOS[name][1]} envs)")
        axis.tick_params(axis="x", labelrotation=30)
        axis.set_ylabel("env-steps / s" if name == names[0] else "")
    figure.suptitle("vecspaces AsyncVectorEnv vs Gymnasium (higher is better)")
    figure.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    print(f"chart written to {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="short runs, no tuning search (under a minute)")
    parser.add_argument("--sweep", action="store_true", help="also sweep num_envs for tiny and cpu")
    parser.add_argument("--plot", metavar="PNG", help="write a bar chart (needs matplotlib)")
    parser.add_argument("--scenarios", nargs="*", default=list(SCENARIOS), choices=list(SCENARIOS))
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")

    seconds, repeats = (0.25, 3) if args.quick else (1.0, 7)
    table, conditions = run_scenarios(args.scenarios, seconds, repeats, tune=not args.quick)
    print_table(table, conditions)
    print_targets(table)
    if args.sweep:
        sweep(0.3 if args.quick else 1.0, [1, 4, 16, 64] if args.quick else [1, 2, 4, 8, 16, 32, 64])
    if args.plot:
        plot(table, args.plot)


if __name__ == "__main__":
    main()
