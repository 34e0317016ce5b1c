"""Soak test of AsyncVectorEnv with ``restart_workers=True``: worker kills, Ctrl-C storms, slow envs, pool mode.

Steps a pool for a while (minutes by default) while a thread SIGKILLs random workers and another sends SIGINT to
this process at random moments, and checks every row the pool returns against what its env must have returned:
each observation is ``[env index, episode id, step count, last action]``, so a row of the wrong env, a stale or
repeated row, a lost or doubled step, an action delivered to the wrong env or an unflagged restart shows up. A
restarted env must come back with its reset observation, ``truncated=True`` and ``info["worker_restarted"]``.

Only interrupts that land inside vecspaces' code raise KeyboardInterrupt (those are what the pool must survive);
ones landing in this script's own bookkeeping are counted and ignored. After an interrupt the loop recovers the
way a user would: with ``--recovery step_wait`` (default) it calls ``step_wait()`` to collect the interrupted step
(``NoAsyncCallError``: it was not dispatched, or its results were lost after it finished); with ``--recovery step``
it just calls ``step()`` again; in pool mode it calls ``recv()`` until nothing is in flight, then sends every env.

Prints steps, kills, restarts, interrupts, wrong rows, hangs (a wait longer than ``--hang-seconds``, which aborts
the run) and unexpected errors; the exit code is 1 if there was any wrong row, hang or unexpected error.

Usage::

    python scripts/soak.py                                  # 3 minutes, forkserver, kills + Ctrl-C + slow envs
    python scripts/soak.py --seconds 60 --context fork
    python scripts/soak.py --batch-size 3 --envs 6          # pool mode
    python scripts/soak.py --sigint-every 0 --kill-every 0  # neither kills nor interrupts
"""

from __future__ import annotations

import argparse
import faulthandler
import functools
import os
import random
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vecspaces.env import Env
from vecspaces.error import NoAsyncCallError, WaitTimeoutError
from vecspaces.spaces import Box, Discrete
from vecspaces.vector import AsyncVectorEnv

LENGTH = 40  # steps per episode of env 0 (env i: LENGTH + i), so episodes end, and autoreset, at staggered times
NUM_ACTIONS = 7
INFO_EVERY = 3  # an env reports {"count": n} on steps whose count is a multiple of this (the others: no info)


class SoakEnv(Env[Any, Any]):
    """Observation ``[index, episode id, count, last action]``; terminates after ``length`` steps; never truncates.

    The episode id is random (from the OS) at every reset, so a restarted env, which a fresh process builds, starts
    an episode no earlier row had. With probability ``slow`` a step sleeps ``slow_seconds``.
    """

    observation_space = Box(0, 2**62, (4,), np.int64)
    action_space = Discrete(NUM_ACTIONS)

    def __init__(self, index: int, length: int, slow: float, slow_seconds: float) -> None:
        self.index = index
        self.length = length
        self.slow = slow
        self.slow_seconds = slow_seconds
        self.random = random.Random(os.urandom(16))
        self.episode = 0
        self.count = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        self.episode = self.random.getrandbits(48) + 1
        self.count = 0
        return np.array([self.index, self.episode, 0, 0], dtype=np.int64), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self.slow and self.random.random() < self.slow:
            time.sleep(self.slow_seconds)
        self.count += 1
        obs = np.array([self.index, self.episode, self.count, int(action)], dtype=np.int64)
        info = {"count": self.count} if self.count % INFO_EVERY == 0 else {}
        return obs, float(action), self.count >= self.length, False, info


@dataclass
class SoakConfig:
    """What to soak. Seconds of 0 turn a storm off."""

    seconds: float = 180.0
    context: str = "forkserver"
    workers: int = 2
    envs: int = 4
    batch_size: int | None = None
    kill_every: float = 2.0
    sigint_every: float = 0.3
    slow: float = 0.01
    slow_seconds: float = 0.02
    hang_seconds: float = 10.0
    recovery: str = "step_wait"
    seed: int | None = None
    verbose: bool = True


@dataclass
class SoakResult:
    """What a soak saw."""

    steps: int = 0  # env rows checked
    kills: int = 0
    restarts: int = 0  # worker restarts the pool reported
    restarted_rows: int = 0  # rows flagged worker_restarted
    interrupts_sent: int = 0
    interrupts: int = 0  # KeyboardInterrupts raised inside the pool (the others landed in this script)
    wrong_rows: int = 0
    hangs: int = 0
    errors: int = 0  # unexpected exceptions (the pool was rebuilt after each)
    problems: list[str] = field(default_factory=list)

    def ok(self) -> bool:
        """No wrong row, hang or unexpected error."""
        return not (self.wrong_rows or self.hangs or self.errors)

    def summary(self) -> str:
        """One line of counts."""
        return (
            f"steps={self.steps} kills={self.kills} restarts={self.restarts} restarted_rows={self.restarted_rows} "
            f"interrupts={self.interrupts} (sent {self.interrupts_sent}) wrong_rows={self.wrong_rows} "
            f"hangs={self.hangs} errors={self.errors}"
        )


# -- what each env must return ------------------------------------------------------------------------------


@dataclass
class EnvTrack:
    """What the checker knows of one env: its episode, its count, whether its episode ended.

    ``lost`` counts the steps since the last row that may have happened without their rows reaching us (an
    interrupt landed after the pool took the results, or in ``--recovery step`` interrupted steps were discarded,
    several in a row when the interrupts come fast).
    """

    episode: int
    count: int
    ended: bool
    length: int
    lost: int = 0


def _continues(track: EnvTrack, obs: list[int], reward: float, terminated: bool, action: int) -> bool:
    """Whether ``obs`` is the next row of ``track`` for ``action`` (an autoreset row after an ended episode)."""
    if track.ended:
        return obs[2] == 0 and obs[1] != track.episode and reward == 0.0 and not terminated
    return (
        obs[1] == track.episode
        and obs[2] == track.count + 1
        and obs[3] == action
        and reward == float(action)
        and terminated == (obs[2] >= track.length)
    )


def _after_lost_step(track: EnvTrack) -> list[EnvTrack]:
    """Where ``track`` may be if some of its lost steps happened (the episode of an autoreset is unknown: ``-1``)."""
    options: list[EnvTrack] = []
    current = track
    for _ in range(track.lost):
        if current.ended:
            current = EnvTrack(-1, 0, False, track.length)
        else:
            count = current.count + 1
            current = EnvTrack(current.episode, count, count >= track.length, track.length)
        options.append(current)
    return options


def check_row(track: EnvTrack, index: int, row: tuple[Any, ...], action: int) -> str | None:
    """Check env ``index``'s row against ``track`` and advance it; a description of what is wrong, or None."""
    obs_array, reward, terminated, truncated, info = row
    obs = [int(x) for x in obs_array]
    restarted = bool(info.get("worker_restarted", False))
    problem = None
    if obs[0] != index:
        problem = f"a row of env {obs[0]}"
    elif restarted:
        if not (truncated and not terminated and obs[2] == 0 and reward == 0.0):
            problem = "flagged worker_restarted but not a truncated reset row"
    elif truncated:
        problem = "truncated but not flagged worker_restarted (the env never truncates)"
    else:
        options = [track, *_after_lost_step(track)]
        if not any(_continues(t, obs, reward, terminated, action) or _unknown_episode(t, obs, action) for t in options):
            problem = f"does not follow episode {track.episode} step {track.count} (ended={track.ended})"
        elif info != ({"count": obs[2]} if obs[2] > 0 and obs[2] % INFO_EVERY == 0 else {}):
            problem = f"info {info} does not belong to step {obs[2]}"
    track.episode, track.count, track.lost = obs[1], obs[2], 0
    # A restart row is a truncation like any other: in NEXT_STEP mode the env's next step is its reset step.
    track.ended = bool(terminated or truncated)
    if problem:
        return f"env {index}: {problem}: obs={obs} reward={reward} terminated={terminated} truncated={truncated} {info}"
    return None


def _unknown_episode(track: EnvTrack, obs: list[int], action: int) -> bool:
    """A row after a lost autoreset: the first step of an episode we never saw begin."""
    return track.episode == -1 and obs[2] == track.count + 1 and obs[3] == action


def env_info(infos: dict[str, Any], i: int) -> dict[str, Any]:
    """Env ``i``'s own info out of a batched info dict."""
    return {k: v[i] for k, v in infos.items() if not k.startswith("_") and bool(infos["_" + k][i])}


# -- storms ---------------------------------------------------------------------------------------------------


class Hang(Exception):
    """Raised in the main loop by the watchdog when it made no progress for too long."""


class Storms:
    """The kill thread and the Ctrl-C thread, and the SIGINT handler that decides where an interrupt lands."""

    def __init__(self, config: SoakConfig, result: SoakResult, rng: random.Random) -> None:
        self.config = config
        self.result = result
        self.rng = rng
        self.stop = threading.Event()
        self.armed = False  # interrupts raise only while the main loop is inside a pool call
        self.threads: list[threading.Thread] = []
        self.previous_handler: Any = None
        self.worker_pids: list[int] = []  # published by the main loop (worker_info is not called from threads)
        self.progress = time.monotonic()  # when the main loop last finished a round
        self.hung = False  # set by the watchdog: the SIGINT it sends raises Hang

    def __enter__(self) -> Storms:
        self.previous_handler = signal.signal(signal.SIGINT, self._on_sigint)
        if self.config.kill_every > 0:
            self.threads.append(threading.Thread(target=self._kill_storm, name="soak-kills", daemon=True))
        if self.config.sigint_every > 0:
            self.threads.append(threading.Thread(target=self._sigint_storm, name="soak-sigint", daemon=True))
        self.threads.append(threading.Thread(target=self._watchdog, name="soak-watchdog", daemon=True))
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.armed = False
        self.stop.set()
        for thread in self.threads:
            thread.join()
        time.sleep(0.05)  # let a SIGINT sent last reach the (disarmed) handler before the old one comes back
        signal.signal(signal.SIGINT, self.previous_handler)

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if self.hung:
            self.hung = False
            raise Hang
        if self.armed and frame is not None and str(frame.f_globals.get("__name__", "")).startswith("vecspaces"):
            self.result.interrupts += 1
            raise KeyboardInterrupt

    def _wait(self, every: float) -> bool:
        """Sleep a random time around ``every``; False once the storm should stop."""
        return not self.stop.wait(self.rng.uniform(0.2, 1.8) * every)

    def _sigint_storm(self) -> None:
        while self._wait(self.config.sigint_every):
            os.kill(os.getpid(), signal.SIGINT)
            self.result.interrupts_sent += 1

    def _watchdog(self) -> None:
        """A main loop stuck for twice the hang bound (somewhere no timeout covers): dump the stacks, break it."""
        bound = 2 * self.config.hang_seconds
        while not self.stop.wait(0.5):
            if time.monotonic() - self.progress > bound and not self.hung:
                print(f"WATCHDOG: no progress for {bound:.0f} s; stacks:", file=sys.stderr, flush=True)
                faulthandler.dump_traceback(sys.stderr, all_threads=True)
                self.hung = True
                os.kill(os.getpid(), signal.SIGINT)

    def _kill_storm(self) -> None:
        me = psutil.Process()
        while self._wait(self.config.kill_every):
            pids = list(self.worker_pids)
            if not pids:
                continue
            pid = self.rng.choice(pids)
            # Only a live worker of ours: the pid of a worker that is gone could belong to another process by now.
            try:
                process = psutil.Process(pid)
                if process.status() == psutil.STATUS_ZOMBIE or process not in me.children(recursive=True):
                    continue
                process.send_signal(signal.SIGKILL)
                self.result.kills += 1
            except psutil.Error:
                pass


# -- the loops ------------------------------------------------------------------------------------------------


class Soak:
    """One soak run: the pool, the checker's tracks and the loop of the chosen mode."""

    def __init__(self, config: SoakConfig) -> None:
        self.config = config
        self.result = SoakResult()
        self.rng = random.Random(config.seed)
        self.storms = Storms(config, self.result, self.rng)
        self.envs: AsyncVectorEnv | None = None
        self.tracks: list[EnvTrack] = []
        self.seen_restarts = 0
        self.actions: list[int] = []  # of the last step
        self.to_send = list(range(config.envs))  # pool mode: the envs to send next
        self.sent: dict[int, int] = {}  # pool mode: the action of each env sent and not yet received

    def build(self) -> AsyncVectorEnv:
        """A new pool, reset, with fresh tracks."""
        config = self.config
        fns = [functools.partial(SoakEnv, i, LENGTH + i, config.slow, config.slow_seconds) for i in range(config.envs)]
        envs = AsyncVectorEnv(
            fns,
            context=config.context,
            num_workers=config.workers,
            batch_size=config.batch_size,
            restart_workers=True,
            timeout=config.hang_seconds,
        )
        obs, _ = envs.reset()
        self.tracks = [EnvTrack(int(obs[i, 1]), 0, False, LENGTH + i) for i in range(config.envs)]
        return envs

    def problem(self, text: str) -> None:
        """Record a problem (the first few are printed)."""
        self.result.problems.append(text)
        if self.config.verbose and len(self.result.problems) <= 10:
            print("PROBLEM:", text, flush=True)

    def check(self, ids: list[int], rows: tuple[Any, ...], actions: dict[int, int]) -> None:
        """Check the rows of envs ``ids`` (positions in ``rows``) stepped with ``actions``."""
        obs, rewards, terminations, truncations, infos = rows
        for position, i in enumerate(ids):
            info = env_info(infos, position)
            row = (obs[position], float(rewards[position]), bool(terminations[position]), bool(truncations[position]))
            self.result.restarted_rows += bool(info.get("worker_restarted", False))
            wrong = check_row(self.tracks[i], i, (*row, info), actions[i])
            self.result.steps += 1
            if wrong:
                self.result.wrong_rows += 1
                self.problem(wrong)

    def call(self, method: Any, *args: Any) -> Any:
        """Call a pool method with interrupts armed."""
        self.storms.armed = True
        try:
            return method(*args)
        finally:
            self.storms.armed = False

    def run(self) -> SoakResult:
        """Soak until the time is up or a hang; return what it saw."""
        self.envs = self.build()
        end = time.monotonic() + self.config.seconds
        try:
            with self.storms:
                if self.config.batch_size:
                    self.loop(end, self.pool_round, self.recover_pool)
                else:
                    self.loop(end, self.step_round, self.recover_step)
            if not self.result.hangs:
                self.settle()
        finally:
            self.result.restarts += self.envs.restarts
            self.envs.close(terminate=True)
        return self.result

    def settle(self) -> None:
        """With the storms over, step every env once more, so every restart so far shows in a row."""
        assert self.envs is not None
        try:
            if not self.config.batch_size:
                self.step_round()
                return
            # The envs idle now with those in flight, then every env again (one that finished its step just
            # before its worker was killed reports the restart at its next step).
            for to_send in (self.to_send, list(range(self.config.envs))):
                self.to_send = []
                if to_send:
                    actions = self.rng.choices(range(NUM_ACTIONS), k=len(to_send))
                    self.sent.update(zip(to_send, actions, strict=True))
                    self.envs.send(np.array(actions, dtype=np.int64), to_send)
                while self.sent:
                    *rows, env_ids = self.envs.recv()
                    self.received(env_ids.tolist(), tuple(rows))
        except (WaitTimeoutError, Hang) as error:
            self.result.hangs += 1
            self.problem(f"hang after the storms: {type(error).__name__} {error}; {self.pool_state()}")
        except Exception as error:
            self.result.errors += 1
            self.problem(f"unexpected {type(error).__name__} after the storms: {error}")

    def pool_state(self) -> str:
        """The pool's view of its workers, for a hang's report (private attributes: a diagnostic only)."""
        pool = self.envs._pool  # type: ignore[union-attr]
        inflight, control = pool.inflight, pool.control
        alive = [process.is_alive() for process in pool.processes]
        return (
            f"pool: running={dict(inflight.running)} done={sorted(inflight.done)} owed={inflight.owed} "
            f"alive={alive} commands={control.commands.tolist()} finished={control.finished.tolist()} "
            f"stepping={control.stepping.tolist()} restarts={pool.restarts} "
            f"pool mode: in flight={sorted(self.envs._pool_mode.in_flight)} "  # type: ignore[union-attr]
            f"queued={self.envs._pool_mode.queued}"  # type: ignore[union-attr]
        )

    def rebuild(self, error: BaseException) -> None:
        """An unexpected exception: count it, and carry on with a new pool."""
        self.result.errors += 1
        self.problem(f"unexpected {type(error).__name__}: {error}")
        assert self.envs is not None
        self.result.restarts += self.envs.restarts
        self.envs.close(terminate=True)
        self.envs = self.build()
        self.to_send, self.sent = list(range(self.config.envs)), {}
        self.publish_workers()

    def publish_workers(self) -> None:
        """Tell the kill thread the current workers' pids (after a build or a restart)."""
        assert self.envs is not None
        self.storms.worker_pids = [w["pid"] for w in self.envs.worker_info() if w["pid"] is not None]
        self.seen_restarts = self.envs.restarts

    def loop(self, end: float, round_: Any, recover: Any) -> None:
        """Run ``round_`` until ``end`` or a hang; after an interrupt, ``recover`` (again, if it is interrupted)."""
        self.publish_workers()
        while time.monotonic() < end and not self.result.hangs:
            try:
                try:
                    round_()
                except KeyboardInterrupt:
                    while True:
                        try:
                            recover()
                            break
                        except KeyboardInterrupt:
                            continue
            except (WaitTimeoutError, Hang) as error:
                self.result.hangs += 1
                self.problem(f"hang: {type(error).__name__} {error}")
            except Exception as error:
                self.rebuild(error)
            self.storms.progress = time.monotonic()
            assert self.envs is not None
            if self.envs.restarts != self.seen_restarts:
                self.publish_workers()

    def step_round(self) -> None:
        """One ``step`` of every env with random actions, checked."""
        assert self.envs is not None
        self.actions = self.rng.choices(range(NUM_ACTIONS), k=self.config.envs)
        rows = self.call(self.envs.step, np.array(self.actions, dtype=np.int64))
        self.check(list(range(self.config.envs)), rows, dict(enumerate(self.actions)))

    def recover_step(self) -> None:
        """After an interrupted ``step``: collect it (``--recovery step_wait``), or leave it to the next ``step``."""
        assert self.envs is not None
        if self.config.recovery == "step_wait":
            try:
                rows = self.call(self.envs.step_wait)
            except NoAsyncCallError:
                pass  # never dispatched, or finished and its results lost on the way out
            else:
                self.check(list(range(self.config.envs)), rows, dict(enumerate(self.actions)))
                return
        for track in self.tracks:
            track.lost += 1

    def pool_round(self) -> None:
        """Pool mode: ``send`` the envs received last time, ``recv`` the first ``batch_size``, checked."""
        assert self.envs is not None
        if self.to_send:
            actions = self.rng.choices(range(NUM_ACTIONS), k=len(self.to_send))
            self.sent.update(zip(self.to_send, actions, strict=True))
            to_send, self.to_send = self.to_send, []
            self.call(self.envs.send, np.array(actions, dtype=np.int64), to_send)
        *rows, env_ids = self.call(self.envs.recv)
        self.received(env_ids.tolist(), tuple(rows))

    def received(self, ids: list[int], rows: tuple[Any, ...]) -> None:
        """Check the rows of ``ids`` received in pool mode; they are sent again next round."""
        unexpected = [i for i in ids if i not in self.sent]
        if unexpected:
            self.result.wrong_rows += len(unexpected)
            self.problem(f"recv returned envs {unexpected}, which were not sent")
        self.check(ids, rows, self.sent)
        for i in ids:
            self.sent.pop(i, None)
        self.to_send.extend(ids)

    def recover_pool(self) -> None:
        """After an interrupt in pool mode: ``recv`` until nothing is in flight, then send every env again."""
        assert self.envs is not None
        while True:
            try:
                *rows, env_ids = self.call(self.envs.recv)
            except NoAsyncCallError:
                break
            self.received(env_ids.tolist(), tuple(rows))
        for i in self.sent:  # sent, maybe stepped, never received
            self.tracks[i].lost += 1
        self.sent.clear()
        self.to_send = list(range(self.config.envs))


def run_soak(config: SoakConfig) -> SoakResult:
    """Run one soak (see the module docstring) and return its counts."""
    return Soak(config).run()


def parse_args(argv: list[str] | None = None) -> SoakConfig:
    """The command line as a :class:`SoakConfig`."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    defaults = SoakConfig()
    parser.add_argument("--seconds", type=float, default=defaults.seconds, help="how long to soak (default 180)")
    parser.add_argument("--context", default=defaults.context, choices=["fork", "forkserver", "spawn"])
    parser.add_argument("--workers", type=int, default=defaults.workers, help="worker processes (default 2)")
    parser.add_argument("--envs", type=int, default=defaults.envs, help="envs (default 4)")
    parser.add_argument("--batch-size", type=int, default=None, help="pool mode with this batch size (send/recv)")
    parser.add_argument("--kill-every", type=float, default=defaults.kill_every, help="mean seconds between kills")
    parser.add_argument(
        "--sigint-every", type=float, default=defaults.sigint_every, help="mean seconds between Ctrl-Cs (SIGINT)"
    )
    parser.add_argument("--slow", type=float, default=defaults.slow, help="probability that a step is slow")
    parser.add_argument("--slow-seconds", type=float, default=defaults.slow_seconds, help="how long a slow step takes")
    parser.add_argument(
        "--hang-seconds", type=float, default=defaults.hang_seconds, help="a wait longer than this is a hang"
    )
    parser.add_argument(
        "--recovery",
        choices=["step_wait", "step"],
        default=defaults.recovery,
        help="after an interrupted step(): collect it with step_wait() (default), or just step() again",
    )
    parser.add_argument("--seed", type=int, default=None, help="seed of the storms' and actions' randomness")
    args = parser.parse_args(argv)
    return SoakConfig(**{k: v for k, v in vars(args).items()})


def main(argv: list[str] | None = None) -> int:
    """Run the soak from the command line; 1 if it saw a wrong row, a hang or an unexpected error."""
    config = parse_args(argv)
    started = time.monotonic()
    result = run_soak(config)
    mode = f"pool mode, batch_size={config.batch_size}" if config.batch_size else f"step, recovery={config.recovery}"
    print(
        f"soak {time.monotonic() - started:.0f} s, {config.context}, {config.workers} workers, {config.envs} envs, "
        f"{mode}: {result.summary()}"
    )
    return 0 if result.ok() else 1


if __name__ == "__main__":
    sys.exit(main())
