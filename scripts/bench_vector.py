"""Throughput of vector envs as users train: vecspaces' AsyncVectorEnv against Gymnasium's Sync and Async.

Scenarios, in four groups (``--scenarios`` takes names or group names):

- synthetic: the DESIGN.md envs stepped back to back (tiny, atari, dict; cpu envs burn 1 ms a step);
- train: after every step the main process computes as a policy does (matrix products taking 0.3 ms or
  2 ms, with the BLAS threads numpy uses by default), on tiny, CartPole-v1 and cpu envs;
- neighbours: the synthetic scenarios and raw Pong while one (nb1) or two (nb2) other processes burn a core
  each, as on a shared workstation or cluster node;
- real: CartPole-v1, and ALE Pong-v5 raw and preprocessed (84x84 grayscale, 4 stacked), from the bench extra.

Each scenario keeps every contender open and times them in interleaved rounds, in a rotating order, so a slow
spell of the machine lands on all of them alike; each figure is the median of the rounds. cpu and Pong are
also stated against the machine's ceiling, one plain env loop per physical core, timed in the same rounds.
EnvPool, where installed, is timed as an anchor on the scenarios it has an env for. The verdicts at the end
compare unrounded ratios with the project's targets (issue 26).

Usage::

    pip install -e ".[bench]"
    python scripts/bench_vector.py                       # every scenario (about 15 minutes)
    python scripts/bench_vector.py --quick               # short rounds (about 4 minutes)
    python scripts/bench_vector.py --scenarios train tiny
    python scripts/bench_vector.py --settings "spin_seconds=0" "num_workers=1"   # also these vecspaces settings
    python scripts/bench_vector.py --scenarios train --policy-threads 1   # the policy on one BLAS thread
    python scripts/bench_vector.py --scenarios train --policy torch      # the policy in torch (not installed by us)
    python scripts/bench_vector.py --json out.json --plot docs/bench.png
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import platform
import statistics
import sys
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gymnasium
from _bench_machine import (
    Conditions,
    busy_neighbours,
    child_pids,
    cpu_chunk_times,
    physical_cores,
    plain_loops_rate,
    stolen_share,
    tree_rss,
)
from _bench_workloads import (
    GROUPS,
    WORKLOADS,
    Policy,
    Workload,
    batched_actions,
    envpool_available,
    open_vector_env,
)

# What vecspaces' default must reach, per scenario: (what it is compared with, the least ratio). "ceiling" is
# the plain loops; "steady" is the slowest round against the median round (no collapse).
TARGETS: dict[str, list[tuple[str, float]]] = {
    "tiny": [("gym-sync", 1.0)],
    "atari": [("gym-sync", 1.4)],
    "dict": [("gym-sync", 1.9)],
    "cpu": [("ceiling", 0.97)],
    "train-tiny": [("gym-sync", 1.0), ("gym-async", 1.3)],
    "train-cartpole": [("gym-sync", 1.0), ("gym-async", 1.3)],
    # 2 cores at best halve the envs' 4 ms a step, not the policy's 2 ms: the ceiling is 1.5x Sync.
    "train-cpu": [("gym-sync", 1.35)],
    **{w.name: [("gym-async", 1.0), ("steady", 0.5)] for w in WORKLOADS.values() if w.neighbours == 1},
    **{w.name: [("gym-async", 1.0)] for w in WORKLOADS.values() if w.neighbours == 2},
    "pong": [("ceiling", 0.92)],
    "pong-pre": [("envpool", 0.85)],
}


@dataclass
class Contender:
    """One vector env under test: how to make it, and its timed rounds."""

    label: str
    backend: str
    settings: dict[str, Any] = field(default_factory=dict)
    runs: list[float] = field(default_factory=list)
    peak_rss: int = 0

    @property
    def rate(self) -> float:
        return statistics.median(self.runs)


def open_envs(contender: Contender, workload: Workload) -> tuple[Any, Any]:
    """Build, reset and warm up a contender's vector env; return it with the actions it will be stepped with."""
    envs = open_vector_env(contender.backend, workload, contender.settings)
    envs.reset(**({} if contender.backend == "envpool" else {"seed": 0}))  # EnvPool takes seeds when made
    actions = batched_actions(contender.backend, envs, workload.num_envs)
    for _ in range(20):
        envs.step(actions)
    return envs, actions


def timed_run(envs: Any, actions: Any, num_envs: int, seconds: float, policy: Policy | None) -> float:
    """Env-steps per second of ``step()`` (and the policy after each) over about ``seconds``."""
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(10):
            observations = envs.step(actions)[0]
            if policy is not None:
                policy(observations)
        steps += 10
    return steps * num_envs / (time.perf_counter() - start)


def measure(
    contenders: list[Contender], workload: Workload, seconds: float, repeats: int, policy_library: str = "numpy"
) -> Conditions:
    """Fill each contender's runs and peak memory; return the machine's conditions meanwhile.

    Memory: each contender alone (its workers and the main process), one at a time. Speed: every contender is
    kept open and their runs are interleaved round by round, the order rotating each round.
    """
    conditions = Conditions()
    policy = Policy(workload.policy_seconds, policy_library) if workload.policy_seconds else None
    before = psutil.cpu_times()
    for contender in contenders:
        others = child_pids()  # e.g. the workers of a closed vector env that have not exited yet
        envs, actions = open_envs(contender, workload)
        try:
            timed_run(envs, actions, workload.num_envs, min(seconds, 0.2), policy)
            contender.peak_rss = tree_rss(exclude=others)
        finally:
            envs.close()
    opened: list[tuple[Contender, Any, Any]] = []
    try:
        for contender in contenders:
            opened.append((contender, *open_envs(contender, workload)))
        for round_ in range(repeats):
            shift = round_ % len(opened)
            for contender, envs, actions in opened[shift:] + opened[:shift]:
                contender.runs.append(timed_run(envs, actions, workload.num_envs, seconds, policy))
            for cpu, chunk_time in cpu_chunk_times().items():
                conditions.chunk_times.setdefault(cpu, []).append(chunk_time)
            if workload.ceiling:
                conditions.ceiling_runs.append(plain_loops_rate(workload.env.native, seconds))
    finally:
        for _, envs, _ in opened:
            envs.close()
    conditions.stolen = stolen_share(before, psutil.cpu_times())
    return conditions


@dataclass
class Outcome:
    """A scenario's results: every contender, the machine meanwhile, and the verdicts on the targets."""

    workload: Workload
    contenders: dict[str, Contender]
    conditions: Conditions

    def rate(self, label: str) -> float | None:
        if label == "ceiling":
            runs = self.conditions.ceiling_runs
            return statistics.median(runs) if runs else None
        contender = self.contenders.get(label)
        return contender.rate if contender else None

    def verdicts(self) -> list[tuple[str, bool]]:
        """Each target of the scenario, as text and whether vecspaces' default held it (unrounded)."""
        ours = self.contenders["vecspaces"]
        checks = []
        for against, least in TARGETS.get(self.workload.name, []):
            if against == "steady":
                ratio = min(ours.runs) / ours.rate
                checks.append((f"slowest round {ratio:.3f}x the median (>= {least:g}x)", ratio >= least))
                continue
            theirs = self.rate(against)
            if theirs is None:
                continue  # EnvPool not installed
            ratio = ours.rate / theirs
            checks.append((f"{ratio:.3f}x {against} (>= {least:g}x)", ratio >= least))
        return checks


def contenders_for(workload: Workload, variants: list[dict[str, Any]]) -> list[Contender]:
    contenders = [Contender(name, name) for name in ("vecspaces", "gym-sync", "gym-async")]
    if workload.env.envpool_task and envpool_available():
        contenders.append(Contender("envpool", "envpool"))
    for settings in variants:
        label = "vecspaces (" + ", ".join(f"{key}={value!r}" for key, value in settings.items()) + ")"
        contenders.append(Contender(label, "vecspaces", settings))
    return contenders


def run(
    workload: Workload, variants: list[dict[str, Any]], seconds: float, repeats: int, policy_library: str = "numpy"
) -> Outcome:
    contenders = contenders_for(workload, variants)
    progress(f"{workload.name}: {len(contenders)} vector envs, {repeats} interleaved rounds of {seconds} s")
    with busy_neighbours(workload.neighbours):
        conditions = measure(contenders, workload, seconds, repeats, policy_library)
    return Outcome(workload, {c.label: c for c in contenders}, conditions)


def progress(text: str) -> None:
    print(f"  .. {text}", file=sys.stderr, flush=True)


def print_outcomes(outcomes: list[Outcome]) -> None:
    # The CPUs are alike: the quickest chunk of any of them in this run is what each does at full speed.
    fastest = min((t for o in outcomes for times in o.conditions.chunk_times.values() for t in times), default=None)
    print(
        f"\nmachine: {platform.processor() or platform.machine()}, {physical_cores()} physical / "
        f"{psutil.cpu_count()} logical cores, Python {platform.python_version()}, numpy {np.__version__}, "
        f"gymnasium {gymnasium.__version__}"
    )
    print("env-steps per second (median of the rounds) and ratios; peak RSS of main process + workers\n")
    header = (
        f"{'scenario':<15} {'contender':<40} {'steps/s':>10} {'x sync':>7} {'x async':>8} {'x ceiling':>10} "
        f"{'min/med':>8} {'RSS':>7}"
    )
    print(header)
    print("-" * len(header))
    for outcome in outcomes:
        w = outcome.workload
        sync, asynchronous = outcome.contenders["gym-sync"].rate, outcome.contenders["gym-async"].rate
        ceiling = outcome.rate("ceiling")
        for label, contender in outcome.contenders.items():
            rate = contender.rate
            versus_ceiling = f"{rate / ceiling:>9.0%}" if ceiling else ""
            print(
                f"{w.name:<15} {label:<40} {rate:>10,.0f} {rate / sync:>6.2f}x {rate / asynchronous:>7.2f}x "
                f"{versus_ceiling:>10} {min(contender.runs) / rate:>8.2f} {contender.peak_rss / 2**20:>5.0f}MB"
            )
        if ceiling:
            print(f"{'':<15} {'(ceiling: one plain env loop per core)':<40} {ceiling:>10,.0f}")
        notes = [f"{w.num_envs} x {w.env.label}"]
        if w.policy_seconds:
            notes.append(f"policy {w.policy_seconds * 1e3:g} ms a step")
        if w.neighbours:
            notes.append(f"{w.neighbours} busy neighbour{'s' * (w.neighbours > 1)}")
        if outcome.conditions.stolen is not None:
            notes.append(f"stolen {outcome.conditions.stolen:.1%}")
        if fastest is not None and outcome.conditions.chunk_times:
            slowest = min(fastest / statistics.mean(t) for t in outcome.conditions.chunk_times.values())
            notes.append(f"slowest CPU at {slowest:.0%}")
        print(f"{'':<15} ({'; '.join(notes)})\n")


def print_verdicts(outcomes: list[Outcome]) -> None:
    print("targets, vecspaces default settings (unrounded ratios):")
    for outcome in outcomes:
        if checks := outcome.verdicts():
            held = all(ok for _, ok in checks)
            texts = "; ".join(text for text, _ in checks)
            print(f"  {outcome.workload.name:<15} {texts}: {'held' if held else 'MISSED'}")
    print()


def write_json(outcomes: list[Outcome], path: str) -> None:
    document = {
        "machine": {"cores": physical_cores(), "python": platform.python_version(), "numpy": np.__version__},
        "scenarios": {
            o.workload.name: {
                "num_envs": o.workload.num_envs,
                "contenders": {label: {"runs": c.runs, "peak_rss": c.peak_rss} for label, c in o.contenders.items()},
                "conditions": asdict(o.conditions),
                "verdicts": [{"target": text, "held": ok} for text, ok in o.verdicts()],
            }
            for o in outcomes
        },
    }
    Path(path).write_text(json.dumps(document, indent=1))


def plot(outcomes: list[Outcome], path: str) -> None:
    """A chart of every scenario: each contender's rate as a multiple of Gymnasium Sync's."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = ["vecspaces", "gym-async", "envpool"]
    colours = {"vecspaces": "#2b7bba", "gym-async": "#bbbbbb", "envpool": "#e0a040"}
    figure, axis = plt.subplots(figsize=(10, 0.38 * len(outcomes) + 1.2))
    rows = np.arange(len(outcomes))[::-1]
    for offset, label in zip((-0.27, 0.0, 0.27), labels, strict=True):
        ratios = [
            o.contenders[label].rate / o.contenders["gym-sync"].rate if label in o.contenders else 0.0 for o in outcomes
        ]
        axis.barh(rows + offset, ratios, height=0.26, color=colours[label], label=label)
    axis.axvline(1.0, color="#444444", linewidth=0.8)
    axis.set_yticks(rows, [o.workload.name for o in outcomes])
    axis.set_xscale("log")
    axis.set_xlabel("env-steps/s as a multiple of Gymnasium SyncVectorEnv (log scale; higher is better)")
    axis.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    figure.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    print(f"chart written to {path}")


def parse_settings(text: str) -> dict[str, Any]:
    """``"num_workers=1, spin_seconds=0"`` -> ``{"num_workers": 1, "spin_seconds": 0}``."""
    settings = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, _, value = item.partition("=")
        settings[key.strip()] = ast.literal_eval(value.strip())
    return settings


def selected(names: list[str]) -> list[Workload]:
    chosen = [w for w in WORKLOADS.values() if w.name in names or w.group in names]
    unknown = set(names) - set(WORKLOADS) - set(GROUPS)
    if unknown:
        raise SystemExit(f"unknown scenarios {sorted(unknown)}; choose from {[*GROUPS, *WORKLOADS]}")
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="short rounds, fewer of them")
    parser.add_argument("--scenarios", nargs="*", default=list(GROUPS), help="scenario or group names")
    parser.add_argument("--settings", nargs="*", default=[], help='extra vecspaces contenders, e.g. "num_workers=1"')
    parser.add_argument("--policy", choices=["numpy", "torch"], default="numpy", help="what computes the policy")
    parser.add_argument(
        "--policy-threads", type=int, metavar="N", help="limit the main process's BLAS threads (needs threadpoolctl)"
    )
    parser.add_argument("--json", metavar="PATH", help="also write every round's figures as JSON")
    parser.add_argument("--plot", metavar="PNG", help="write a chart (needs matplotlib)")
    args = parser.parse_args()
    warnings.simplefilter("ignore", UserWarning)  # Gymnasium's and EnvPool's notes on the envs, once per env

    seconds, repeats = (0.3, 3) if args.quick else (1.0, 7)
    variants = [parse_settings(text) for text in args.settings]
    with contextlib.ExitStack() as stack:
        if args.policy_threads:
            from threadpoolctl import threadpool_limits

            stack.enter_context(threadpool_limits(limits=args.policy_threads, user_api="blas"))
            if args.policy == "torch":
                import torch

                torch.set_num_threads(args.policy_threads)
        outcomes = [run(workload, variants, seconds, repeats, args.policy) for workload in selected(args.scenarios)]
    print_outcomes(outcomes)
    print_verdicts(outcomes)
    if args.json:
        write_json(outcomes, args.json)
    if args.plot:
        plot(outcomes, args.plot)


if __name__ == "__main__":
    main()
