"""Stateful fuzzing of AsyncVectorEnv (restart_workers=True) against a model of its envs (``pool_model``).

Hypothesis drives one small pool (2 workers, 4 envs of ``FuzzEnv``, forkserver) with random sequences of
``step``, ``step_async``/``step_wait`` (with and without timeouts), masked and seeded ``reset``, ``call``,
``get_attr``, ``set_attr``, pool mode ``send``/``recv``, env exceptions (an action, or ``set_attr("fail_at")``)
and SIGKILLed workers. Every row the pool returns is checked against what the model says that env may return,
and every wait has a bound, so a hang fails the example instead of the run.

The pool is built once per variant and reused across examples (building one costs ~0.3 s under forkserver);
each example starts by draining whatever the last one left pending and resetting, which re-syncs the model.
"""

from __future__ import annotations

import functools
import os
import signal
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule, run_state_machine_as_test

from tests.vector.fuzz_envs import RAISE, FuzzEnv, FuzzEnvError
from tests.vector.pool_model import Alternative, EnvError, PoolModel, RefEnv, Row, env_info
from vecspaces.error import NoAsyncCallError, WaitTimeoutError
from vecspaces.vector import AsyncVectorEnv

NUM_ENVS = 4
NUM_WORKERS = 2
BATCH_SIZE = 2
LENGTH = 3  # steps per episode, so episodes end (and autoreset) often
# The bound on every wait: a wait longer than this is a hang.
HANG_SECONDS = 10.0
FUZZ_SETTINGS = settings(
    # FUZZ_EXAMPLES=500 for a longer hunt than CI's.
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "25")),
    # Rules whose state (timing-dependent) does not apply do nothing (see when()): about a third of the steps.
    stateful_step_count=50,
    deadline=None,
    # Shrinking replays examples with kills and restarts for minutes; FUZZ_SHRINK=1 turns it on for debugging.
    phases=list(Phase) if os.environ.get("FUZZ_SHRINK") else [Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

# An action: mostly 0-4 (4 truncates), now and then RAISE (the env raises), about one env in twenty.
actions = st.integers(0, 20).map(lambda a: a if a <= RAISE else a % 4)
env_actions = st.lists(actions, min_size=NUM_ENVS, max_size=NUM_ENVS)
seeds = st.none() | st.integers(0, 50)
# A reset mask resets at least one env (an all-False mask is refused, by design).
masks = st.lists(st.booleans(), min_size=NUM_ENVS, max_size=NUM_ENVS).filter(any)


class PoolHolder:
    """One AsyncVectorEnv per variant, built on first use and rebuilt when an example left it unusable."""

    def __init__(self, batch_size: int | None) -> None:
        self.batch_size = batch_size
        self.envs: AsyncVectorEnv | None = None

    def get(self) -> AsyncVectorEnv:
        """The pool, built if there is none."""
        if self.envs is None:
            self.envs = AsyncVectorEnv(
                [functools.partial(FuzzEnv, i, LENGTH) for i in range(NUM_ENVS)],
                context="forkserver",
                num_workers=NUM_WORKERS,
                batch_size=self.batch_size,
                restart_workers=True,
                timeout=HANG_SECONDS,
            )
        return self.envs

    def rebuild(self) -> AsyncVectorEnv:
        """Close the pool (at once) and build a new one."""
        self.close()
        return self.get()

    def close(self) -> None:
        """Close the pool, if any."""
        if self.envs is not None:
            self.envs.close(terminate=True)
            self.envs = None


def drain(envs: AsyncVectorEnv) -> None:
    """Finish whatever call or pool-mode step is pending, discarding results and env errors."""
    try:
        envs.step_wait(timeout=HANG_SECONDS)
    except NoAsyncCallError:
        pass
    except FuzzEnvError:
        pass
    while True:
        try:
            envs.recv(timeout=HANG_SECONDS)
        except NoAsyncCallError:
            return
        except FuzzEnvError:
            continue


def kill_worker(envs: AsyncVectorEnv, w: int) -> bool:
    """SIGKILL worker ``w`` if it is alive and wait until it is gone; whether it was killed."""
    info = envs.worker_info()[w]
    if not info["alive"]:
        return False
    os.kill(info["pid"], signal.SIGKILL)
    deadline = time.monotonic() + HANG_SECONDS
    while envs.worker_info()[w]["alive"]:
        assert time.monotonic() < deadline, f"worker {w} (pid {info['pid']}) outlived SIGKILL"
        time.sleep(0.005)
    return True


def may_raise(alternatives: list[Alternative]) -> bool:
    """Whether one of a step's alternatives is an env error."""
    return any(isinstance(outcome, EnvError) for outcome, _ in alternatives)


def label_of(error: FuzzEnvError) -> int:
    """The env a FuzzEnvError came from (its message starts with ``env <label>``)."""
    return int(str(error).split()[1])


def when(applies: Callable[[Any], bool]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Make a rule do nothing unless ``applies(machine)``.

    Not a precondition: the state it reads depends on timing (which envs ``recv`` returned first, whether a
    wait timed out), and Hypothesis replays an example's choices only if the same rules are open each time.
    """

    def wrap(function: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(function)
        def rule_body(self: Any, **arguments: Any) -> None:
            if applies(self):
                function(self, **arguments)

        return rule_body

    return wrap


class PoolMachine(RuleBasedStateMachine):
    """Random calls on one pool, each result checked against :class:`PoolModel`.

    Args:
        holder: the pool.
        kills: whether workers are SIGKILLed.
        pool_mode: whether ``send``/``recv`` are used (needs a pool with a batch size).
    """

    def __init__(self, holder: PoolHolder, kills: bool, pool_mode: bool) -> None:
        super().__init__()
        self.holder = holder
        self.kills = kills
        self.pool_mode = pool_mode
        self.envs: AsyncVectorEnv = holder.get()
        self.model: PoolModel

    # -- start of an example -------------------------------------------------------------------------------

    @initialize(seed=st.integers(0, 50))
    def start(self, seed: int) -> None:
        try:
            drain(self.envs)
            self.envs.call("rewind")
            obs, infos = self.envs.reset(seed=seed)
        except Exception:  # an earlier failing example broke it: start again from a new pool
            self.envs = self.holder.rebuild()
            self.envs.call("rewind")
            obs, infos = self.envs.reset(seed=seed)
        slices = [info["envs"] for info in self.envs.worker_info()]
        self.model = PoolModel([functools.partial(FuzzEnv, i, LENGTH) for i in range(NUM_ENVS)], slices, BATCH_SIZE)
        # An env the last example's kill left owing its restart report gives it here; this model starts after.
        infos.pop("worker_restarted", None)
        infos.pop("_worker_restarted", None)
        self.check_reset(self.model.reset([seed + i for i in range(NUM_ENVS)], None, None), obs, infos)

    # -- preconditions -------------------------------------------------------------------------------------

    def idle(self) -> bool:
        return self.model.pending is None and not self.model.in_flight

    # -- Gymnasium-style calls -----------------------------------------------------------------------------

    @rule(actions=env_actions, as_array=st.booleans())
    @when(lambda self: self.idle())
    def step(self, actions: list[int], as_array: bool) -> None:
        """``step``: as an int64 array (the pool's shortest path) or a list (through step_async/step_wait)."""
        self.model.pending = {i: self.model.step(i, a) for i, a in enumerate(actions)}
        batch: Any = np.array(actions, dtype=np.int64) if as_array else list(actions)
        try:
            result = self.envs.step(batch)
        except FuzzEnvError as error:
            self.check_step_error(error)
            return
        self.check_step(result)

    @rule(actions=env_actions)
    @when(lambda self: self.idle())
    def step_async(self, actions: list[int]) -> None:
        self.model.pending = {i: self.model.step(i, a) for i, a in enumerate(actions)}
        self.envs.step_async(np.array(actions, dtype=np.int64))

    @rule(timeout=st.sampled_from([None, 0.0, 0.01]))
    @when(lambda self: self.model.pending is not None)
    def step_wait(self, timeout: float | None) -> None:
        """``step_wait``; when a short timeout passes first, the step stays pending and a second wait collects it.

        (Both waits in one rule: whether the timeout passes depends on timing, and Hypothesis needs the rules
        that may run next to be the same each time it replays an example.)
        """
        try:
            try:
                result = self.envs.step_wait(timeout=timeout)
            except WaitTimeoutError:
                assert timeout is not None, "step_wait without a timeout hung"
                result = self.envs.step_wait()
        except FuzzEnvError as error:
            self.check_step_error(error)
            return
        self.check_step(result)

    @rule(seed=seeds, mask=st.none() | masks, start=seeds)
    @when(lambda self: self.idle())
    def reset(self, seed: int | None, mask: list[bool] | None, start: int | None) -> None:
        options: dict[str, Any] = {} if start is None else {"start": start % 3}
        if mask is not None:
            options["reset_mask"] = np.array(mask)
        obs, infos = self.envs.reset(seed=seed, options=options or None)
        per_env = [None if seed is None else seed + i for i in range(NUM_ENVS)]
        self.check_reset(
            self.model.reset(per_env, {"start": start % 3} if start is not None else None, mask), obs, infos
        )

    @rule()
    @when(lambda self: self.idle())
    def call_state(self) -> None:
        self.check_call(self.envs.call("state"), lambda i, env: env.call("state"))

    @rule(by=st.integers(0, 9))
    @when(lambda self: self.idle())
    def call_shift(self, by: int) -> None:
        self.check_call(self.envs.call("shift", by), lambda i, env: env.call("shift", by))

    @rule()
    @when(lambda self: self.idle())
    def get_attr_count(self) -> None:
        self.check_call(self.envs.get_attr("count"), lambda i, env: env.get_attr("count"))

    @rule(values=st.lists(st.none() | st.integers(1, 4), min_size=NUM_ENVS, max_size=NUM_ENVS))
    @when(lambda self: self.idle())
    def set_fail_at(self, values: list[int | None]) -> None:
        """The env raises when its step count is about to reach ``fail_at``."""
        self.envs.set_attr("fail_at", values)
        self.check_call((None,) * NUM_ENVS, lambda i, env: env.set_attr("fail_at", values[i]))

    @rule(delay=st.sampled_from([0.0, 0.02]))
    @when(lambda self: self.idle())
    def set_delay(self, delay: float) -> None:
        """Slow steps, so a short ``step_wait`` timeout passes (the model's twins need no delay)."""
        self.envs.set_attr("delay", delay)
        self.check_call((None,) * NUM_ENVS, lambda i, env: env.set_attr("delay", 0.0))

    # -- failures ------------------------------------------------------------------------------------------

    @precondition(lambda self: self.kills)
    @rule(w=st.integers(0, NUM_WORKERS - 1))
    def kill(self, w: int) -> None:
        """SIGKILL a worker: idle, or with a step or pool-mode envs under way."""
        if kill_worker(self.envs, w):
            self.model.kill(w)

    # -- pool mode -----------------------------------------------------------------------------------------

    @precondition(lambda self: self.pool_mode)
    @rule(data=st.data())
    @when(lambda self: self.model.pending is None)
    def send(self, data: st.DataObject) -> None:
        # Which envs are still in flight depends on which ones recv returned (timing), so the draws must not:
        # Hypothesis replays a run's choices and refuses a run that draws differently. Envs in flight are skipped.
        ids = data.draw(st.lists(st.sampled_from(range(NUM_ENVS)), min_size=1, unique=True), label="env_ids")
        sent: list[int] = []
        sent_actions: list[int] = []
        for i in ids:
            action = data.draw(actions, label=f"action of env {i}")
            if i in self.model.in_flight:
                continue
            alternatives = self.model.step(i, action)
            # One env error in flight at a time: which of two a recv raises depends on timing.
            if may_raise(alternatives) and self.errors_in_flight():
                continue
            self.model.in_flight[i] = alternatives
            sent.append(i)
            sent_actions.append(action)
        if sent:
            self.envs.send(np.array(sent_actions, dtype=np.int64), sent)

    def errors_in_flight(self) -> bool:
        return any(may_raise(alternatives) for alternatives in self.model.in_flight.values())

    @precondition(lambda self: self.pool_mode)
    @rule()
    @when(lambda self: bool(self.model.in_flight))
    def recv(self) -> None:
        expected_count = min(BATCH_SIZE, len(self.model.in_flight))
        try:
            obs, rewards, terminations, truncations, infos, env_ids = self.envs.recv()
        except FuzzEnvError as error:
            label = label_of(error)
            assert label in self.model.in_flight, f"recv raised env {label}'s error, but it was not stepping"
            expected = self.describe(self.model.in_flight[label])
            kept = self.model.finish(label, lambda outcome: outcome == EnvError(label))
            assert kept, f"recv raised env {label}'s error, expected {expected}"
            return
        ids = env_ids.tolist()
        assert len(ids) == expected_count and len(set(ids)) == len(ids), f"recv returned envs {ids}"
        for position, i in enumerate(ids):
            assert i in self.model.in_flight, f"recv returned env {i}, which was not stepping"
            info = env_info(infos, position)
            row = Row.of(obs[position], rewards[position], terminations[position], truncations[position], info)
            self.check_row(i, row)

    # -- checks --------------------------------------------------------------------------------------------

    @staticmethod
    def describe(alternatives: list[Alternative]) -> str:
        return " or ".join(repr(observed) for observed, _ in alternatives)

    def check_row(self, i: int, row: Row) -> None:
        """Env ``i``'s returned row is one the model allows; the model keeps the states that predicted it."""
        expected = self.describe(self.model.under_way(i))
        assert self.model.finish(i, lambda outcome: outcome == row), f"env {i} returned {row}, expected {expected}"

    def check_step(self, result: tuple[Any, ...]) -> None:
        obs, rewards, terminations, truncations, infos = result
        for i in range(NUM_ENVS):
            self.check_row(i, Row.of(obs[i], rewards[i], terminations[i], truncations[i], env_info(infos, i)))
        self.model.pending = None

    def check_step_error(self, error: FuzzEnvError) -> None:
        """A step raised the error of the lowest env whose step raised; the other outcomes went down with it."""
        label = label_of(error)
        for i in range(NUM_ENVS):
            expected = self.describe(self.model.under_way(i))
            if i < label:
                kept = self.model.finish(i, lambda outcome: not isinstance(outcome, EnvError))
                assert kept, f"step raised env {label}'s error, but env {i} before it must have raised: {expected}"
            elif i == label:
                kept = self.model.finish(i, lambda outcome: outcome == EnvError(label))
                assert kept, f"step raised env {label}'s error, expected {expected}"
            else:
                self.model.finish(i, lambda outcome: True)
        self.model.pending = None
        # The envs' states now (this also restarts a worker found dead), which narrows what the model keeps.
        self.check_call(self.envs.call("state"), lambda i, env: env.call("state"))

    def check_call(self, results: tuple[Any, ...], method: Callable[[int, RefEnv], Any]) -> None:
        """A call returned ``results``: each env's is one the model allows for ``method(i, env)``."""
        for i, alternatives in enumerate(self.model.calls(method)):
            kept = self.model.observe(i, alternatives, lambda result: result == results[i])  # noqa: B023
            assert kept, f"env {i}: the call returned {results[i]!r}, expected {self.describe(alternatives)}"

    def check_reset(self, expected: list[list[Alternative]], obs: Any, infos: dict[str, Any]) -> None:
        for i, alternatives in enumerate(expected):
            got = (Row.of(obs[i], 0, False, False, {}).obs, env_info(infos, i))
            kept = self.model.observe(i, alternatives, lambda observed: observed == got)  # noqa: B023
            assert kept, f"reset: env {i} shows {got}, expected {self.describe(alternatives)}"


@pytest.fixture(scope="module")
def holders() -> Iterator[dict[str, PoolHolder]]:
    pools = {"plain": PoolHolder(None), "pool_mode": PoolHolder(BATCH_SIZE)}
    yield pools
    for holder in pools.values():
        holder.close()


@pytest.mark.timeout(240)
@pytest.mark.parametrize(
    ("kills", "pool_mode"),
    [
        pytest.param(False, False, id="calls"),
        pytest.param(True, False, id="calls_and_kills"),
        pytest.param(False, True, id="pool_mode"),
        pytest.param(True, True, id="pool_mode_and_kills"),
    ],
)
def test_pool_matches_its_model(holders: dict[str, PoolHolder], kills: bool, pool_mode: bool) -> None:
    holder = holders["pool_mode" if pool_mode else "plain"]
    run_state_machine_as_test(lambda: PoolMachine(holder, kills, pool_mode), settings=FUZZ_SETTINGS)
