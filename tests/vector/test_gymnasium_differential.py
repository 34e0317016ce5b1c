"""Gymnasium's envs in vecspaces' vector envs and in Gymnasium's: the same seeds and actions give the same run.

Most scenarios use CartPole; ``test_every_env_shipped_with_gymnasium_runs_as_in_gymnasium`` runs every env that
Gymnasium registers without extras (classic control, toy text) through each vecspaces backend.

Every scenario runs 4 CartPoles (``gymnasium.make("CartPole-v1")`` with a wrapper that adds infos of several
kinds: ints, floats, bools reported on some steps only, nested dicts of numpy values) for 200 steps with the
same random actions, and records every ``reset`` and ``step`` result. Gymnasium's AsyncVectorEnv (shared
memory, its default) is the reference; vecspaces' AsyncVectorEnv with and without shared memory, vecspaces'
SyncVectorEnv and Gymnasium's SyncVectorEnv must give identical observations (values and dtypes), rewards,
terminations, truncations and infos. Infos are compared structurally: the same keys (in any order, Gymnasium's
own backends order them differently), the same ``_key`` masks and the same values and dtypes; the object
arrays of ``final_obs`` are compared element by element.

Deliberate differences from Gymnasium, asserted here as vecspaces' behaviour:

- An explicit reset clears a pending NEXT_STEP autoreset in every backend. Gymnasium's AsyncVectorEnv with
  ``shared_memory=False`` does not (gymnasium-behaviour.md §6 item 14), so after a reset its next step
  resets the env again. ``run_with_partial_resets`` resets envs that have just ended, which exposes exactly
  that (Gymnasium's pipe backend diverges from its shared-memory one at the first step after such a reset);
  ``test_partial_resets_match`` holds vecspaces' pipe backend to Gymnasium's shared-memory reference.
- ``options["reset_mask"]`` is not popped from the caller's dict (Gymnasium pops it, §6 item 20); each call
  here gets a fresh dict so both libraries see the same options.
- DISABLED mode is enforced: stepping an env whose episode ended raises ``EpisodeEndedError`` in every
  vecspaces backend. Gymnasium's SyncVectorEnv raises AssertionError and its AsyncVectorEnv steps the ended
  env silently (§6 item 15).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tests.helpers import assert_same_value
from vecspaces.error import EpisodeEndedError
from vecspaces.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv

gymnasium = pytest.importorskip("gymnasium")

pytestmark = pytest.mark.timeout(120)

NUM_ENVS = 4
NUM_STEPS = 200
SEED = 7


GymnasiumWrapper: Any = gymnasium.Wrapper


class InfoWrapper(GymnasiumWrapper):
    """CartPole with infos of every batching kind, on reset and on step."""

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self.steps = 0
        return obs, {**info, "start_x": float(obs[0]), "seeded": kwargs.get("seed") is not None}

    def step(self, action: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.steps += 1
        info = {
            **info,
            "steps": self.steps,
            "angle": float(obs[2]),
            "cart": {"x": obs[0], "velocities": obs[[1, 3]].copy()},
        }
        if self.steps % 3 == 0:
            info["every_third"] = True
        return obs, reward, terminated, truncated, info


def make_cartpole() -> Any:
    return InfoWrapper(gymnasium.make("CartPole-v1"))


EnvFactory = Callable[[str], Any]

BACKENDS: dict[str, EnvFactory] = {
    "gymnasium-async": lambda mode: gymnasium.vector.AsyncVectorEnv(
        [make_cartpole] * NUM_ENVS, autoreset_mode=gymnasium.vector.AutoresetMode(mode)
    ),
    "gymnasium-sync": lambda mode: gymnasium.vector.SyncVectorEnv(
        [make_cartpole] * NUM_ENVS, autoreset_mode=gymnasium.vector.AutoresetMode(mode)
    ),
    "vecspaces-async": lambda mode: AsyncVectorEnv(
        [make_cartpole] * NUM_ENVS, autoreset_mode=mode, num_workers=2, timeout=60
    ),
    "vecspaces-async-pipe": lambda mode: AsyncVectorEnv(
        [make_cartpole] * NUM_ENVS, shared_memory=False, autoreset_mode=mode, num_workers=2, timeout=60
    ),
    "vecspaces-sync": lambda mode: SyncVectorEnv([make_cartpole] * NUM_ENVS, autoreset_mode=mode),
}
REFERENCE = "gymnasium-async"
COMPARED = [name for name in BACKENDS if name != REFERENCE]
AUTORESET_MODES = [AutoresetMode.NEXT_STEP.value, AutoresetMode.SAME_STEP.value]

Record = tuple[Any, ...]  # ("reset", obs, infos) or ("step", obs, rewards, terminations, truncations, infos)


def random_actions() -> np.ndarray:
    return np.random.default_rng(SEED).integers(0, 2, (NUM_STEPS, NUM_ENVS))


def reset(envs: Any, seed: Any = None, mask: np.ndarray | None = None) -> Record:
    """Reset with a fresh options dict (Gymnasium pops ``reset_mask`` from it); vecspaces leaves it alone."""
    options: dict[str, Any] | None = None
    if mask is not None:
        # low/high are CartPole's own reset options: they show that options reach the sub-envs.
        options = {"reset_mask": mask.copy(), "low": -0.1, "high": 0.1}
    obs, infos = envs.reset(seed=seed, options=options)
    if options is not None and envs.__module__.startswith("vecspaces"):
        assert "reset_mask" in options, "vecspaces must not pop reset_mask from the caller's options"
    return ("reset", obs, infos)


def plain_run(envs: Any) -> list[Record]:
    """Reset with a seed, then step with the random actions; autoreset does the rest."""
    records = [reset(envs, seed=SEED)]
    for actions in random_actions():
        records.append(("step", *envs.step(actions)))
    return records


def run_with_partial_resets(envs: Any) -> list[Record]:
    """Step, and every 10 steps reset some envs with a mask: a fixed pattern plus the envs that just ended.

    Resetting an env that just ended must clear its pending NEXT_STEP autoreset.
    """
    records = [reset(envs, seed=SEED)]
    for k, actions in enumerate(random_actions()):
        records.append(("step", *envs.step(actions)))
        if k % 10 == 9:
            pattern = np.array([k % 20 == 9, True, False, k % 30 == 9])
            mask = pattern | records[-1][3] | records[-1][4]
            seed = SEED + k if k % 20 == 9 else [None, SEED + k, None, None]
            records.append(reset(envs, seed=seed, mask=mask))
    return records


def run_disabled(envs: Any) -> list[Record]:
    """DISABLED mode as meant to be used: after each step, reset the envs that ended (and only those)."""
    records = [reset(envs, seed=SEED)]
    for k, actions in enumerate(random_actions()):
        records.append(("step", *envs.step(actions)))
        done = records[-1][3] | records[-1][4]
        if done.any():
            records.append(reset(envs, seed=SEED + 100 + k, mask=done))
    return records


_cache: dict[tuple[str, str, str], list[Record]] = {}


def trajectory(backend: str, scenario: Callable[[Any], list[Record]], mode: str) -> list[Record]:
    """The records of ``scenario`` on ``backend`` in autoreset ``mode`` (computed once per test session)."""
    key = (backend, scenario.__name__, mode)
    if key not in _cache:
        envs = BACKENDS[backend](mode)
        try:
            _cache[key] = scenario(envs)
        finally:
            envs.close()
    return _cache[key]


def assert_same_infos(ours: dict[str, Any], theirs: dict[str, Any], path: str) -> None:
    """Batched infos equal in keys (any order), masks, values and dtypes; object arrays element by element."""
    assert sorted(ours) == sorted(theirs), f"{path}: keys {sorted(ours)} vs {sorted(theirs)}"
    for key, expected in theirs.items():
        actual, where = ours[key], f"{path}[{key!r}]"
        if isinstance(expected, dict):
            assert isinstance(actual, dict), f"{where}: {type(actual)} vs dict"
            assert_same_infos(actual, expected, where)
        elif isinstance(expected, np.ndarray) and expected.dtype == object:
            assert isinstance(actual, np.ndarray) and actual.dtype == object, f"{where}: {actual!r}"
            assert actual.shape == expected.shape, f"{where}: shape {actual.shape} vs {expected.shape}"
            for index, (item, expected_item) in enumerate(zip(actual, expected, strict=True)):
                assert_same_value(item, expected_item, f"{where}[{index}]")
        else:
            assert_same_value(actual, expected, where)


def assert_same_records(ours: list[Record], theirs: list[Record]) -> None:
    assert len(ours) == len(theirs)
    for index, (record, expected) in enumerate(zip(ours, theirs, strict=True)):
        where = f"record {index} ({expected[0]})"
        assert record[0] == expected[0], where
        for position, (value, expected_value) in enumerate(zip(record[1:-1], expected[1:-1], strict=True)):
            assert_same_value(value, expected_value, f"{where} item {position}")
        assert_same_infos(record[-1], expected[-1], f"{where} infos")


def episode_ends(records: list[Record]) -> int:
    return sum(int((record[3] | record[4]).sum()) for record in records if record[0] == "step")


# -- NEXT_STEP and SAME_STEP ----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", AUTORESET_MODES)
def test_the_reference_run_ends_many_episodes(mode: str) -> None:
    records = trajectory(REFERENCE, plain_run, mode)
    assert len(records) == NUM_STEPS + 1
    assert episode_ends(records) >= 20, "the comparison must cover many autoresets"
    if mode == AutoresetMode.SAME_STEP.value:
        assert any("final_obs" in record[-1] for record in records)


@pytest.mark.parametrize("backend", COMPARED)
@pytest.mark.parametrize("mode", AUTORESET_MODES)
def test_trajectories_match(backend: str, mode: str) -> None:
    assert_same_records(trajectory(backend, plain_run, mode), trajectory(REFERENCE, plain_run, mode))


def test_same_step_final_obs_are_the_terminal_observations() -> None:
    """In SAME_STEP the returned obs is the new episode's; the terminal one is in final_obs (also for vecspaces)."""
    for record in trajectory("vecspaces-async", plain_run, AutoresetMode.SAME_STEP.value):
        if record[0] != "step" or "final_obs" not in record[-1]:
            continue
        obs, terminations, truncations, infos = record[1], record[3], record[4], record[-1]
        ended = terminations | truncations
        assert infos["_final_obs"].tolist() == ended.tolist()
        for index in np.flatnonzero(ended):
            final = infos["final_obs"][index]
            # A terminal CartPole state is out of bounds; the reset one is within +-0.05 on every component.
            assert np.abs(final).max() > 0.05 and np.abs(obs[index]).max() <= 0.05


# -- partial resets -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", COMPARED)
@pytest.mark.parametrize("mode", AUTORESET_MODES)
def test_partial_resets_match(backend: str, mode: str) -> None:
    ours = trajectory(backend, run_with_partial_resets, mode)
    theirs = trajectory(REFERENCE, run_with_partial_resets, mode)
    assert sum(record[0] == "reset" for record in theirs) == 1 + NUM_STEPS // 10
    assert_same_records(ours, theirs)


def test_partial_reset_keeps_the_other_envs_observations() -> None:
    records = trajectory("vecspaces-async", run_with_partial_resets, AutoresetMode.NEXT_STEP.value)
    for before, after in itertools.pairwise(records):
        if after[0] != "reset":
            continue
        kept = ~after[2]["_start_x"]
        assert kept.any() and (~kept).any()
        assert np.array_equal(after[1][kept], before[1][kept])
        # CartPole's own reset options (low=-0.1, high=0.1) reached the reset envs.
        assert np.abs(after[1][~kept]).max() <= 0.1


# -- DISABLED -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", COMPARED)
def test_disabled_mode_with_masked_resets_matches(backend: str) -> None:
    mode = AutoresetMode.DISABLED.value
    theirs = trajectory(REFERENCE, run_disabled, mode)
    assert sum(record[0] == "reset" for record in theirs) >= 20
    assert_same_records(trajectory(backend, run_disabled, mode), theirs)


@pytest.mark.parametrize("backend", ["vecspaces-async", "vecspaces-async-pipe", "vecspaces-sync"])
def test_disabled_mode_refuses_to_step_an_ended_env(backend: str) -> None:
    """Deliberate difference (§6 item 15): Gymnasium's AsyncVectorEnv would step the ended env silently."""
    envs = BACKENDS[backend](AutoresetMode.DISABLED.value)
    try:
        envs.reset(seed=SEED)
        ones = np.ones(NUM_ENVS, dtype=np.int64)
        for _ in range(600):  # pushing right always, every pole falls within a few dozen steps
            _, _, terminations, truncations, _ = envs.step(ones)
            ended = terminations | truncations
            if ended.any():
                break
        assert ended.any()
        first_ended = int(np.flatnonzero(ended)[0])
        with pytest.raises(EpisodeEndedError, match=f"env {first_ended}"):
            envs.step(ones)
        # The pool stays usable: reset and step on.
        envs.reset(seed=SEED)
        _, rewards, *_ = envs.step(np.zeros(NUM_ENVS, dtype=np.int64))
        assert rewards.tolist() == [1.0] * NUM_ENVS
    finally:
        envs.close()


# -- every env that ships with Gymnasium ----------------------------------------------------------------------

# The envs Gymnasium registers that need no extra (classic control and toy text), from the installed version.
SHIPPED_ENV_IDS = sorted(
    env_id
    for env_id, spec in gymnasium.registry.items()
    if isinstance(spec.entry_point, str)
    and spec.entry_point.startswith(("gymnasium.envs.classic_control", "gymnasium.envs.toy_text"))
)
SHIPPED_NUM_ENVS = 3
SHIPPED_STEPS = 120
SHIPPED_EPISODE_STEPS = 50  # a time limit shorter than any env's own, so that every run has autoresets


def shipped_run(envs: Any, actions: list[Any]) -> list[Record]:
    records = [reset(envs, seed=SEED)]
    for action in actions:
        records.append(("step", *envs.step(action)))
    return records


def undo_widening(ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """``ours`` with the info columns that vecspaces widened where Gymnasium truncates, checked, cast back.

    Gymnasium gives a key the dtype of the first env's value, so an int there (FrozenLake's reset ``prob`` of 1)
    truncates another env's float (1/3 becomes 0); vecspaces widens the column to float64 (README, "Deliberate
    differences"). Ours must be that float column, truncating to Gymnasium's.
    """
    widened = dict(ours)
    for key, expected in theirs.items():
        actual = ours.get(key)
        if isinstance(expected, dict) and isinstance(actual, dict):
            widened[key] = undo_widening(actual, expected)
        elif (
            isinstance(expected, np.ndarray)
            and expected.dtype.kind == "i"
            and getattr(actual, "dtype", None) == np.float64
        ):
            assert np.array_equal(actual.astype(expected.dtype), expected), f"{key}: {actual} vs {expected}"
            widened[key] = actual.astype(expected.dtype)
    return widened


@pytest.mark.parametrize("env_id", SHIPPED_ENV_IDS)
@pytest.mark.parametrize("mode", AUTORESET_MODES)
def test_every_env_shipped_with_gymnasium_runs_as_in_gymnasium(env_id: str, mode: str) -> None:
    """The same seed and actions give Gymnasium's SyncVectorEnv's records in every vecspaces backend."""
    env_fns = [functools.partial(gymnasium.make, env_id, max_episode_steps=SHIPPED_EPISODE_STEPS)] * SHIPPED_NUM_ENVS
    reference = gymnasium.vector.SyncVectorEnv(env_fns, autoreset_mode=gymnasium.vector.AutoresetMode(mode))
    reference.action_space.seed(SEED)
    actions = [reference.action_space.sample() for _ in range(SHIPPED_STEPS)]
    try:
        theirs = shipped_run(reference, actions)
    finally:
        reference.close()
    assert episode_ends(theirs) >= 2 * SHIPPED_NUM_ENVS, "the run must cover autoresets"
    for make_vector_env in (
        functools.partial(SyncVectorEnv, env_fns, autoreset_mode=mode),
        functools.partial(AsyncVectorEnv, env_fns, autoreset_mode=mode, num_workers=2, timeout=60),
        functools.partial(AsyncVectorEnv, env_fns, autoreset_mode=mode, shared_memory=False, num_workers=2, timeout=60),
    ):
        with make_vector_env() as envs:
            ours = shipped_run(envs, actions)
        ours = [
            (*record[:-1], undo_widening(record[-1], expected[-1]))
            for record, expected in zip(ours, theirs, strict=True)
        ]
        assert_same_records(ours, theirs)
