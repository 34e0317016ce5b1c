"""RayVectorEnv on one machine: its throughput against a local AsyncVectorEnv and the naive Ray design, and what an
agent's death costs.

Contenders, each stepping the same envs with a fixed batch of random actions:

- RayVectorEnv with its defaults (``transport="socket"``; on these 2 CPUs, 2 agents step their envs themselves and
  1 agent steps half of its envs itself beside a worker), the same with a local pool of one worker per agent
  (``workers_per_agent=1``), and with ``transport="ray"`` (every step an actor call to each agent);
- vecspaces' local AsyncVectorEnv over the same envs, with its default number of workers (one per core);
- the naive design, written here: one Ray actor per block of envs holding a SyncVectorEnv, every step one actor
  call per block, the results joined on the driver. The Ray backends of PufferLib and Tianshou work so.

Scenarios: the tiny, atari and cpu envs of bench_vector.py, with 1 or 2 agents (blocks) of 4 or 64 envs each.
Every scenario keeps its contenders open and times them in interleaved rounds, in an order that rotates each
round; each figure is the median of the rounds, with its interquartile range. Memory (RSS of the processes that
run the envs: Ray agents or actors and their children, or the local pool's workers) is measured after the warm-up.

Costs are timed apart, each contender alone, on 2 agents of 4 tiny envs whose agent 0 naps in every step (so a
step of it is surely running): startup, from the constructor to the first reset done; for RayVectorEnv, SIGKILL
agent 0 while a step is in flight and time the ``step_wait`` until its WorkerDiedError, and with
``restart_agents=True`` the ``step_wait`` that waits for the replacement, less the time the agent's envs take to
build.

One local Ray (2 CPUs, no dashboard) serves the whole run. The verdicts at the end compare unrounded figures with
RayVectorEnv's targets.

Usage::

    python scripts/bench_ray.py                  # every scenario (about 8 minutes on 2 cores)
    python scripts/bench_ray.py --quick          # 2 agents x 4 envs only, short rounds (about 1.5 minutes)
    python scripts/bench_ray.py --json out.json --plot docs/bench_ray.png
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import platform
import signal
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import ray

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _bench_machine import physical_cores
from _bench_workloads import WORKLOADS, batched_actions
from bench_vector import Contender, progress, timed_run

from vecspaces.envs import TinyEnv
from vecspaces.error import WorkerDiedError
from vecspaces.vector import AsyncVectorEnv, SyncVectorEnv
from vecspaces.vector.ray import RayVectorEnv
from vecspaces.vector.utils import batch_space

ENV_KINDS = ("tiny", "atari", "cpu")
SOCKET, SOCKET_POOL, CALLS, LOCAL, NAIVE = (
    "RayVectorEnv socket",
    "RayVectorEnv socket, 1 worker each",
    "RayVectorEnv ray calls",
    "AsyncVectorEnv (local)",
    "naive: actor call per block",
)
# The scenarios whose startup and memory the second table shows, where they ran.
REFERENCES = ("tiny 2x4", "atari 2x64")
# The failure tests: agent 0's envs nap this long in every step, and the agent is killed this long into one.
NAP_SECONDS, KILL_AFTER_SECONDS = 0.5, 0.1
# RayVectorEnv's targets: (scenario, contender, against, least ratio); the failure targets in seconds.
THROUGHPUT_TARGETS = [
    ("tiny 2x4", SOCKET, NAIVE, 8.0),
    ("atari 2x4", SOCKET, NAIVE, 5.0),
    *((f"cpu {agents}x{size}", SOCKET, LOCAL, 0.9) for agents in (1, 2) for size in (4, 64)),
]
DETECTION_TARGET, RESTART_TARGET = 0.05, 1.0
# How long a standby agent takes to be ready, at most, here (a Ray worker process and a forkserver start).
STANDBY_WARMUP_SECONDS = 3.0


# -- processes ---------------------------------------------------------------------------------------------------

# Every process that ran envs in this run, checked at the end: the benchmark must leave none behind.
SEEN: list[psutil.Process] = []


def process_tree(pids: list[int]) -> list[psutil.Process]:
    """The processes ``pids`` and all their descendants (each once); remembered for the final check."""
    tree: dict[int, psutil.Process] = {}
    for pid in pids:
        with contextlib.suppress(psutil.Error):  # one may have exited meanwhile
            root = psutil.Process(pid)
            for process in [root, *root.children(recursive=True)]:
                tree[process.pid] = process
    SEEN.extend(tree.values())
    return list(tree.values())


def total_rss(processes: list[psutil.Process]) -> int:
    total = 0
    for process in processes:
        with contextlib.suppress(psutil.Error):
            total += process.memory_info().rss
    return total


def agent_pids(envs: RayVectorEnv) -> list[int]:
    """The pids of a RayVectorEnv's agents (worker_info gives their workers', which are not the agents')."""
    return ray.get([agent.actor.ping.remote() for agent in envs._crew.agents])


def leftovers() -> list[str]:
    """The processes seen running envs that were still alive 5 s after everything was closed; now killed."""
    _, alive = psutil.wait_procs(SEEN, timeout=5)
    found = []
    for process in alive:
        with contextlib.suppress(psutil.Error):  # it may end while we look
            found.append(f"{process.pid} {process.name()} (parent {process.ppid()})")
            process.kill()
    return found


# -- the naive design --------------------------------------------------------------------------------------------


class Block:
    """The remote half of the naive design: a Ray actor holding one block of envs, stepped one after another."""

    def __init__(self, env_fns: list[Callable[[], Any]]) -> None:
        self.envs = SyncVectorEnv(env_fns, copy=False)  # its results are pickled for the driver anyway

    def pid(self) -> int:
        return os.getpid()

    def reset(self, seed: int) -> Any:
        return self.envs.reset(seed=seed)

    def step(self, actions: Any) -> Any:
        return self.envs.step(actions)


class NaiveRayVectorEnv:
    """The driver's half of the naive design: every step is one actor call per block, joined here."""

    def __init__(self, env_fns: list[Callable[[], Any]], num_blocks: int) -> None:
        self.num_envs = len(env_fns)
        size = self.num_envs // num_blocks
        self.blocks = [range(k * size, (k + 1) * size) for k in range(num_blocks)]
        # No CPU reserved, as RayVectorEnv's agents: both are placed alike, and every contender fits on 2 CPUs.
        actor_class: Any = ray.remote(num_cpus=0)(Block)
        self.actors = [actor_class.remote(env_fns[block.start : block.stop]) for block in self.blocks]
        self.action_space = batch_space(env_fns[0]().action_space, self.num_envs)

    def reset(self, seed: int) -> tuple[Any, list[Any]]:
        results = ray.get([a.reset.remote(seed + b.start) for a, b in zip(self.actors, self.blocks, strict=True)])
        return np.concatenate([observations for observations, _ in results]), [infos for _, infos in results]

    def step(self, actions: Any) -> tuple[Any, ...]:
        calls = [a.step.remote(actions[b.start : b.stop]) for a, b in zip(self.actors, self.blocks, strict=True)]
        results = ray.get(calls)
        joined = tuple(np.concatenate(column) for column in zip(*(result[:4] for result in results), strict=True))
        return (*joined, [result[4] for result in results])

    def pids(self) -> list[int]:
        return ray.get([actor.pid.remote() for actor in self.actors])

    def close(self) -> None:
        for actor in self.actors:
            ray.kill(actor)


# -- throughput --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """One env kind of bench_vector.py, on ``agents`` agents (or naive blocks) of ``envs_per_agent`` envs each."""

    kind: str
    agents: int
    envs_per_agent: int

    @property
    def name(self) -> str:
        return f"{self.kind} {self.agents}x{self.envs_per_agent}"

    @property
    def num_envs(self) -> int:
        return self.agents * self.envs_per_agent

    def env_fns(self) -> list[Callable[[], Any]]:
        return [WORKLOADS[self.kind].env.native] * self.num_envs


@dataclass
class Entry(Contender):
    """A contender of one scenario; ``peak_rss`` is its processes' RSS after the warm-up.

    ``startup`` is its constructor and first reset with the scenario's other contenders opened before it: it
    depends on its place (Ray prestarts only a few worker processes), so only the JSON keeps it.
    """

    startup: float = 0.0


def contenders() -> list[Entry]:
    return [
        Entry(SOCKET, "ray", {"transport": "socket"}),
        Entry(SOCKET_POOL, "ray", {"transport": "socket", "workers_per_agent": 1}),
        Entry(CALLS, "ray", {"transport": "ray"}),
        # Its default: one worker per core. As many workers as agents would leave a core idle with 1 agent.
        Entry(LOCAL, "local"),
        Entry(NAIVE, "naive"),
    ]


def build(entry: Entry, env_fns: list[Callable[[], Any]], agents: int) -> Any:
    if entry.backend == "ray":
        return RayVectorEnv(env_fns, num_agents=agents, **entry.settings)
    if entry.backend == "local":
        return AsyncVectorEnv(env_fns, **entry.settings)
    return NaiveRayVectorEnv(env_fns, agents)


def timed_open(make: Callable[[], Any]) -> tuple[Any, float]:
    """A vector env made and reset, and the seconds that took (closed again if the reset fails)."""
    start = time.perf_counter()
    envs = make()
    try:
        envs.reset(seed=0)
    except BaseException:
        envs.close()
        raise
    return envs, time.perf_counter() - start


def env_processes(envs: Any) -> list[psutil.Process]:
    """The processes that run a contender's envs, with their children."""
    if isinstance(envs, RayVectorEnv):
        return process_tree(agent_pids(envs))
    if isinstance(envs, NaiveRayVectorEnv):
        return process_tree(envs.pids())
    return process_tree([worker["pid"] for worker in envs.worker_info()])


def open_entry(entry: Entry, scenario: Scenario, stack: contextlib.ExitStack) -> tuple[Any, Any]:
    """Open, warm up and weigh a contender; ``stack`` closes it. Returns it and its actions."""
    envs, entry.startup = timed_open(functools.partial(build, entry, scenario.env_fns(), scenario.agents))
    stack.callback(envs.close)
    actions = batched_actions(entry.backend, envs, scenario.num_envs)
    for _ in range(20):
        envs.step(actions)
    entry.peak_rss = total_rss(env_processes(envs))
    return envs, actions


def measure(scenario: Scenario, seconds: float, repeats: int) -> dict[str, Entry]:
    """Every contender's rounds on ``scenario``: all kept open, their rounds interleaved in a rotating order."""
    entries = contenders()
    progress(f"{scenario.name}: {len(entries)} vector envs, {repeats} interleaved rounds of {seconds} s")
    with contextlib.ExitStack() as stack:
        opened = [(entry, *open_entry(entry, scenario, stack)) for entry in entries]
        for round_ in range(repeats):
            shift = round_ % len(opened)
            for entry, envs, actions in opened[shift:] + opened[:shift]:
                entry.runs.append(timed_run(envs, actions, scenario.num_envs, seconds, None))
    return {entry.label: entry for entry in entries}


def interquartile_range(runs: list[float]) -> float:
    if len(runs) < 2:
        return 0.0
    low, _, high = statistics.quantiles(runs, n=4, method="inclusive")
    return high - low


# -- an agent's death --------------------------------------------------------------------------------------------


class NappingEnv(TinyEnv):
    """A TinyEnv whose every step sleeps ``nap_seconds``: a step of it is still running when its agent is killed."""

    def __init__(self, nap_seconds: float = 0.0) -> None:
        super().__init__()
        self.nap_seconds = nap_seconds

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        time.sleep(self.nap_seconds)
        return super().step(action)


FAILURE_ENVS_PER_AGENT = 4
# Agent 0's envs nap, agent 1's do not: a step_wait then waits for nothing but agent 0 (or its replacement).
FAILURE_ENV_FNS: list[Callable[[], Any]] = [functools.partial(NappingEnv, NAP_SECONDS)] * FAILURE_ENVS_PER_AGENT + [
    NappingEnv
] * FAILURE_ENVS_PER_AGENT


@dataclass
class Costs:
    """One contender's costs on the failure tests' envs, alone, in seconds.

    Attributes:
        startups: per open, from the constructor to the first reset done.
        detections: RayVectorEnv: per try, from the SIGKILL of agent 0 to the WorkerDiedError of the step in flight.
        restarts: RayVectorEnv: per try, from the SIGKILL to the end of the step_wait that waited for the
            replacement, less ``build``.
        build: how long agent 0's envs take to build (in this process).
    """

    label: str
    startups: list[float] = field(default_factory=list)
    detections: list[float] = field(default_factory=list)
    restarts: list[float] = field(default_factory=list)
    build: float = 0.0


def build_seconds(env_fns: list[Callable[[], Any]]) -> float:
    start = time.perf_counter()
    for env_fn in env_fns:
        env_fn()
    return time.perf_counter() - start


def kill_agent_in_step(envs: RayVectorEnv) -> float:
    """Start a step, SIGKILL agent 0 while it runs; return the moment of the kill."""
    pid = agent_pids(envs)[0]
    process_tree([pid])  # its workers too: none may outlive it
    envs.step_async(np.zeros(envs.num_envs, dtype=np.int64))
    time.sleep(KILL_AFTER_SECONDS)
    os.kill(pid, signal.SIGKILL)
    return time.perf_counter()


def open_failure_envs(settings: dict[str, Any], costs: Costs) -> RayVectorEnv:
    """A RayVectorEnv over the failure tests' envs, reset; its startup is added to ``costs``."""
    envs: RayVectorEnv
    envs, startup = timed_open(functools.partial(RayVectorEnv, FAILURE_ENV_FNS, num_agents=2, **settings))
    costs.startups.append(startup)
    return envs


def detection_seconds(settings: dict[str, Any], costs: Costs) -> float:
    envs = open_failure_envs(settings, costs)
    with envs:  # not `as envs`: VectorEnv.__enter__ is typed to return a plain VectorEnv
        killed = kill_agent_in_step(envs)
        try:
            envs.step_wait()
        except WorkerDiedError:
            return time.perf_counter() - killed
    raise RuntimeError(f"a step survived the death of its agent ({settings})")


def restart_seconds(settings: dict[str, Any], tries: int, costs: Costs) -> list[float]:
    """Per try, from the kill to the end of the step_wait that includes the replacement (env build included)."""
    times = []
    envs = open_failure_envs({**settings, "restart_agents": True}, costs)
    with envs:
        for _ in range(tries):
            # A standby agent is warmed up at the start and after each restart; time the restart it makes.
            time.sleep(STANDBY_WARMUP_SECONDS)
            killed = kill_agent_in_step(envs)
            *_, truncations, infos = envs.step_wait()
            times.append(time.perf_counter() - killed)
            if not (truncations[:FAILURE_ENVS_PER_AGENT].all() and "worker_restarted" in infos):
                raise RuntimeError(f"agent 0's envs were not reported restarted ({settings})")
            # Their next step is the autoreset that follows a truncation, which does not nap: take it here, so
            # that the next try kills the agent in a step that naps.
            envs.step(np.zeros(envs.num_envs, dtype=np.int64))
        env_processes(envs)  # the last replacement's processes, for the final check
    return times


def startup_seconds(entry: Entry) -> float:
    envs, seconds = timed_open(functools.partial(build, entry, FAILURE_ENV_FNS, 2))
    envs.close()
    return seconds


def measure_costs(tries: int) -> list[Costs]:
    """Every contender's costs, one contender at a time; RayVectorEnv's startups are those of its failure tests."""
    results = []
    for entry in contenders():
        costs = Costs(entry.label, build=build_seconds(FAILURE_ENV_FNS[:FAILURE_ENVS_PER_AGENT]))
        if entry.backend != "ray":
            progress(f"{entry.label}: {tries} startups")
            costs.startups = [startup_seconds(entry) for _ in range(tries)]
        else:
            progress(f"{entry.label}: {tries} agent deaths, then {tries} restarts")
            costs.detections = [detection_seconds(entry.settings, costs) for _ in range(tries)]
            restarts = restart_seconds(entry.settings, tries, costs)
            costs.restarts = [seconds - costs.build for seconds in restarts]
        results.append(costs)
    return results


# -- reporting ---------------------------------------------------------------------------------------------------


@dataclass
class Report:
    """Everything measured in one run."""

    outcomes: dict[str, dict[str, Entry]]  # per scenario, per contender
    costs: list[Costs]

    def rate(self, scenario: str, label: str) -> float:
        return self.outcomes[scenario][label].rate

    def verdicts(self) -> list[tuple[str, bool]]:
        """Each target as text with its unrounded figure, and whether it held."""
        checks = []
        for scenario, ours, theirs, least in THROUGHPUT_TARGETS:
            if scenario in self.outcomes:
                ratio = self.rate(scenario, ours) / self.rate(scenario, theirs)
                checks.append((f"{scenario}: {ours} at {ratio}x {theirs} (>= {least:g}x)", ratio >= least))
        for costs in self.costs:
            if not costs.detections:
                continue  # not a RayVectorEnv
            slowest = max(costs.detections)
            text = f"{costs.label}: death detected in {slowest * 1e3} ms at the slowest"
            checks.append((f"{text} (<= {DETECTION_TARGET * 1e3:g} ms)", slowest <= DETECTION_TARGET))
            slowest = max(costs.restarts)
            text = f"{costs.label}: restart ready in {slowest} s + env build at the slowest"
            checks.append((f"{text} (<= {RESTART_TARGET:g} s + env build)", slowest <= RESTART_TARGET))
        return checks


def print_machine() -> None:
    print(
        f"\nmachine: {platform.processor() or platform.machine()}, {physical_cores()} physical / "
        f"{psutil.cpu_count()} logical cores, Python {platform.python_version()}, numpy {np.__version__}, "
        f"ray {ray.__version__}"
    )


def print_throughput(report: Report) -> None:
    print("env-steps per second: median of the rounds, interquartile range, and ratios of the medians\n")
    header = f"{'scenario':<11} {'contender':<34} {'steps/s':>9} {'IQR':>8} {'x naive':>8} {'x local':>8}"
    print(header)
    print("-" * len(header))
    for scenario, entries in report.outcomes.items():
        naive, local = entries[NAIVE].rate, entries[LOCAL].rate
        for label, entry in entries.items():
            print(
                f"{scenario:<11} {label:<34} {entry.rate:>9,.0f} {interquartile_range(entry.runs):>8,.0f} "
                f"{entry.rate / naive:>7.2f}x {entry.rate / local:>7.2f}x"
            )
        print()


def in_milliseconds(times: list[float]) -> str:
    """``median / slowest`` in ms, or ``-`` for none."""
    return f"{statistics.median(times) * 1e3:.0f} / {max(times) * 1e3:.0f}" if times else "-"


def print_costs(report: Report) -> None:
    if not report.costs:
        return
    references = [name for name in REFERENCES if name in report.outcomes]
    print(f"costs, each contender alone on 2 agents x {FAILURE_ENVS_PER_AGENT} tiny envs, in ms (median / slowest):")
    print("  startup: constructor to first reset done; agent 0 killed in a step: death found, restart ready less")
    print("  env build. RSS of the env processes (agents or actors and their children, or workers) per scenario\n")
    columns = [f"{'RSS ' + name:>15}" for name in references]
    header = f"{'contender':<34} {'startup':>12} {'death found':>12} {'restart':>12} {' '.join(columns)}"
    print(header)
    print("-" * len(header))
    for costs in report.costs:
        times = [in_milliseconds(t) for t in (costs.startups, costs.detections, costs.restarts)]
        memory = [f"{report.outcomes[name][costs.label].peak_rss / 2**20:>13.0f}MB" for name in references]
        print(f"{costs.label:<34} {times[0]:>12} {times[1]:>12} {times[2]:>12} {' '.join(memory)}")
    print(f"(agent 0's envs build in {report.costs[0].build * 1e3:.2f} ms)\n")


def print_verdicts(report: Report) -> None:
    print("targets (unrounded figures):")
    for text, held in report.verdicts():
        print(f"  {'PASS' if held else 'MISS'}  {text}")
    print()


def write_json(report: Report, path: str) -> None:
    document = {
        "machine": {"cores": physical_cores(), "python": platform.python_version(), "ray": ray.__version__},
        "scenarios": {
            scenario: {
                label: {"runs": entry.runs, "startup_among_others": entry.startup, "rss": entry.peak_rss}
                for label, entry in entries.items()
            }
            for scenario, entries in report.outcomes.items()
        },
        "costs": [asdict(costs) for costs in report.costs],
        "verdicts": [{"target": text, "held": held} for text, held in report.verdicts()],
    }
    Path(path).write_text(json.dumps(document, indent=1))


def plot(report: Report, path: str) -> None:
    """Grouped bars: each contender's env-steps/s in every scenario, on a log scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scenarios = list(report.outcomes)
    labels = list(report.outcomes[scenarios[0]])
    width = 0.8 / len(labels)
    figure, axis = plt.subplots(figsize=(max(8.0, 1.1 * len(scenarios) + 3), 5))
    for k, label in enumerate(labels):
        places = np.arange(len(scenarios)) + (k - (len(labels) - 1) / 2) * width
        axis.bar(places, [report.rate(s, label) for s in scenarios], width=width, label=label)
    axis.set_xticks(np.arange(len(scenarios)), scenarios, rotation=30, ha="right")
    axis.set_yscale("log")
    axis.set_ylabel("env-steps/s (log scale; higher is better)")
    axis.legend(fontsize="small")
    figure.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    print(f"chart written to {path}")


# -- the run -----------------------------------------------------------------------------------------------------


def scenarios(quick: bool) -> list[Scenario]:
    if quick:
        return [Scenario(kind, 2, 4) for kind in ENV_KINDS]
    return [Scenario(kind, agents, size) for kind in ENV_KINDS for agents in (1, 2) for size in (4, 64)]


@contextlib.contextmanager
def local_ray() -> Iterator[None]:
    """One local Ray for the whole run, shut down whatever happens."""
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="2 agents x 4 envs only, shorter and fewer rounds")
    parser.add_argument("--json", metavar="PATH", help="also write every round's figures as JSON")
    parser.add_argument("--plot", metavar="PNG", help="write a chart (needs matplotlib)")
    parser.add_argument(
        "--only", metavar="SCENARIO", action="append", help='run this scenario only, e.g. "cpu 1x4" (repeatable)'
    )
    parser.add_argument("--no-costs", action="store_true", help="skip the startup, death and restart timings")
    args = parser.parse_args()
    warnings.simplefilter("ignore", UserWarning)

    seconds, repeats, tries = (0.3, 3, 2) if args.quick else (0.8, 5, 5)
    # Ray prints a note of each agent the failure tests kill to stdout, whatever log_to_driver says: keep them
    # out of the tables.
    with contextlib.redirect_stdout(sys.stderr), local_ray():
        chosen = [scenario for scenario in scenarios(args.quick) if not args.only or scenario.name in args.only]
        if not chosen:
            parser.error(f"--only names no scenario; the scenarios: {[s.name for s in scenarios(False)]}")
        outcomes = {scenario.name: measure(scenario, seconds, repeats) for scenario in chosen}
        report = Report(outcomes, [] if args.no_costs else measure_costs(tries))
    left = leftovers()
    print_machine()
    print_throughput(report)
    print_costs(report)
    print_verdicts(report)
    print(f"processes left behind: {len(left)}" + "".join(f"\n  {text} (killed now)" for text in left))
    if args.json:
        write_json(report, args.json)
    if args.plot:
        plot(report, args.plot)


if __name__ == "__main__":
    main()
