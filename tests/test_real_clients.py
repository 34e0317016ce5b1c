"""The one-line swap: Gymnasium code that builds its vector env with vecspaces runs unchanged, with the same results.

Every Gymnasium vector wrapper is stacked on vecspaces' AsyncVectorEnv and SyncVectorEnv and on Gymnasium's own
SyncVectorEnv, each driven by the same seeds and actions, and their outputs are compared step by step. A small
PPO-style loop written the way single-file trainers are checks the same for a whole training script.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import gymnasium
import gymnasium.wrappers.vector as vector_wrappers
import numpy as np
import pytest
from gymnasium import spaces as gym_spaces

import vecspaces
from tests.helpers import needs_gymnasium
from vecspaces.error import InvalidValueError
from vecspaces.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv
from vecspaces.vector.make import make_vec, register_vector_entry_point

pytestmark = pytest.mark.timeout(120)


class RobotEnv(gymnasium.Env[Any, Any]):
    """A Gymnasium env with a Dict observation and a Box action; deterministic given its seed and actions."""

    metadata = {"render_modes": []}  # noqa: RUF012  (Gymnasium's convention)

    def __init__(self, episode_length: int = 13) -> None:
        self.observation_space = gym_spaces.Dict(
            {
                "position": gym_spaces.Box(-5.0, 5.0, (3,), np.float32),
                "gear": gym_spaces.Discrete(4),
            }
        )
        self.action_space = gym_spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.episode_length = episode_length

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.steps = 0
        self.position = self.np_random.uniform(-1.0, 1.0, 3).astype(np.float32)
        return self._observe(), {"start": float(self.position[0])}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.steps += 1
        push = np.asarray(action, dtype=np.float32)
        self.position = np.clip(self.position + 0.5 * np.append(push, push.sum()), -5.0, 5.0).astype(np.float32)
        reward = float(-np.abs(self.position).sum() + self.np_random.normal())
        terminated = bool(np.abs(self.position).max() >= 5.0)
        info = {"bonus": self.steps} if self.steps % 4 == 0 else {}
        return self._observe(), reward, terminated, self.steps >= self.episode_length, info

    def _observe(self) -> dict[str, Any]:
        return {"position": self.position.copy(), "gear": int(self.steps % 4)}


def cartpole() -> gymnasium.Env[Any, Any]:
    return gymnasium.make("CartPole-v1")


def robot() -> gymnasium.Env[Any, Any]:
    return RobotEnv()


VECTOR_ENVS: dict[str, Callable[..., Any]] = {
    "vecspaces-async": lambda fns, **kw: AsyncVectorEnv(fns, num_workers=2, timeout=30, **kw),
    "vecspaces-async-piped": lambda fns, **kw: AsyncVectorEnv(fns, shared_memory=False, timeout=30, **kw),
    "vecspaces-sync": lambda fns, **kw: SyncVectorEnv(fns, **kw),
}


def gymnasium_reference(fns: list[Callable[[], Any]], **kwargs: Any) -> Any:
    return gymnasium.vector.SyncVectorEnv(fns, **kwargs)


def cartpole_stack(envs: Any) -> Any:
    """Every wrapper that fits a Box observation and a Discrete action."""
    envs = vector_wrappers.RecordEpisodeStatistics(envs)
    envs = vector_wrappers.DtypeObservation(envs, np.float64)
    envs = vector_wrappers.TransformObservation(envs, lambda obs: obs * 2.0, envs.observation_space)
    envs = vector_wrappers.NormalizeObservation(envs)
    envs = vector_wrappers.NormalizeReward(envs)
    envs = vector_wrappers.ClipReward(envs, -0.5, 0.5)
    return vector_wrappers.DictInfoToList(envs)


def robot_stack(envs: Any) -> Any:
    """Every wrapper that fits a Dict observation and a Box action."""
    envs = vector_wrappers.RecordEpisodeStatistics(envs)
    envs = vector_wrappers.FlattenObservation(envs)
    envs = vector_wrappers.NormalizeObservation(envs)
    envs = vector_wrappers.RescaleAction(envs, -2.0, 2.0)
    envs = vector_wrappers.ClipAction(envs)
    envs = vector_wrappers.ClipReward(envs, -3.0, 3.0)
    return vector_wrappers.DictInfoToList(envs)


def run(envs: Any, steps: int, seed: int) -> list[Any]:
    """Reset with ``seed``, then step with actions drawn from a generator seeded with ``seed``; record everything."""
    actions = np.random.default_rng(seed)
    action_space = envs.action_space
    record: list[Any] = [envs.reset(seed=seed)]
    for _ in range(steps):
        if isinstance(action_space, gym_spaces.Box):
            batch = actions.uniform(-3.0, 3.0, action_space.shape).astype(action_space.dtype)
        else:
            batch = actions.integers(0, 2, envs.num_envs)
        record.append(envs.step(batch))
    return record


def episode_statistics(envs: Any) -> Any:
    """The RecordEpisodeStatistics wrapper inside a stack of vector wrappers."""
    while not isinstance(envs, vector_wrappers.RecordEpisodeStatistics):
        envs = envs.env
    return envs


def assert_same(got: Any, expected: Any, path: str = "result") -> None:
    """Equal nested results: arrays by value and dtype, dicts by keys, and the episode timer ``t`` ignored."""
    if isinstance(expected, dict):
        assert set(got) == set(expected), path
        for key in expected:
            if key not in ("t", "_t"):
                assert_same(got[key], expected[key], f"{path}[{key!r}]")
    elif isinstance(expected, (list, tuple)):
        assert len(got) == len(expected), path
        for index, (a, b) in enumerate(zip(got, expected, strict=True)):
            assert_same(a, b, f"{path}[{index}]")
    elif isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == expected.dtype, path
        if expected.dtype == object:  # e.g. final observations of a Dict space, one dict per env
            assert_same(list(got), list(expected), path)
            return
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6, err_msg=path)
    else:
        assert got == pytest.approx(expected), path


# Gymnasium's RescaleAction builds its Box from float64 bounds and warns about it, on its own vector envs too.
@pytest.mark.filterwarnings("ignore:.*precision lowered by casting:UserWarning")
@needs_gymnasium((1, 2), "its DictInfoToList fails on RecordEpisodeStatistics' infos (KeyError '_r'), on its own envs")
@pytest.mark.parametrize("backend", list(VECTOR_ENVS))
@pytest.mark.parametrize(
    ("make_env", "stack", "num_envs"),
    [(cartpole, cartpole_stack, 4), (robot, robot_stack, 3)],
    ids=["cartpole", "dict-robot"],
)
def test_every_gymnasium_vector_wrapper_gives_gymnasium_results(
    backend: str, make_env: Callable[[], Any], stack: Callable[[Any], Any], num_envs: int
) -> None:
    expected_envs = stack(gymnasium_reference([make_env] * num_envs))
    got_envs = stack(VECTOR_ENVS[backend]([make_env] * num_envs))
    try:
        expected = run(expected_envs, 150, seed=7)
        got = run(got_envs, 150, seed=7)
        assert_same(got, expected)
        statistics = [episode_statistics(envs) for envs in (got_envs, expected_envs)]
        assert statistics[0].episode_count == statistics[1].episode_count > 0
        np.testing.assert_allclose(list(statistics[0].return_queue), list(statistics[1].return_queue))
    finally:
        got_envs.close()
        expected_envs.close()
    assert got_envs.unwrapped.closed


@pytest.mark.parametrize("backend", list(VECTOR_ENVS))
def test_gymnasium_users_get_gymnasium_types(backend: str) -> None:
    with VECTOR_ENVS[backend]([robot] * 2) as envs:
        assert isinstance(envs, gymnasium.vector.VectorEnv)
        assert isinstance(envs, vecspaces.vector.VectorEnv)
        assert type(envs).__name__ == ("SyncVectorEnv" if backend.endswith("-sync") else "AsyncVectorEnv")
        assert envs.single_observation_space == RobotEnv().observation_space
        assert envs.single_action_space == RobotEnv().action_space
        assert envs.observation_space == gymnasium.vector.utils.batch_space(RobotEnv().observation_space, 2)
        assert envs.action_space == gymnasium.vector.utils.batch_space(RobotEnv().action_space, 2)
        assert type(envs.metadata["autoreset_mode"]) is gymnasium.vector.AutoresetMode
        assert envs.autoreset_mode is gymnasium.vector.AutoresetMode.NEXT_STEP


class SwappedSpacesEnv(gymnasium.Env[Any, Any]):
    """A ``gymnasium.Env`` whose module swapped its spaces to vecspaces' (Graph observations, Discrete actions)."""

    def __init__(self) -> None:
        self.observation_space = vecspaces.spaces.Graph(vecspaces.spaces.Box(0, 1, (2,)), None)
        self.action_space = gym_spaces.Discrete(2)  # one space left Gymnasium's

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.observation_space.seed(seed)
        return self.observation_space.sample(num_nodes=3), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        return self.observation_space.sample(num_nodes=2), 0.0, False, False, {}


@pytest.mark.parametrize("backend", list(VECTOR_ENVS))
def test_each_space_shows_the_library_the_envs_space_is_of(backend: str) -> None:
    with VECTOR_ENVS[backend]([SwappedSpacesEnv] * 2) as envs:
        assert isinstance(envs, gymnasium.vector.VectorEnv)  # a gymnasium.Env: Gymnasium's wrappers take it
        assert envs.single_observation_space == SwappedSpacesEnv().observation_space
        assert envs.observation_space == vecspaces.vector.utils.batch_space(SwappedSpacesEnv().observation_space, 2)
        assert isinstance(envs.single_action_space, gym_spaces.Discrete)
        assert isinstance(envs.action_space, gym_spaces.MultiDiscrete)
        observations, _ = envs.reset(seed=0)
        assert observations in envs.observation_space  # the env's own GraphInstances, in its own library's space
        assert envs.step(envs.action_space.sample())[0] in envs.observation_space


def test_users_without_gymnasium_objects_keep_vecspaces_types() -> None:
    from vecspaces.envs import TinyEnv

    for envs in (SyncVectorEnv([TinyEnv] * 2), AsyncVectorEnv([TinyEnv] * 2, num_workers=1)):
        with envs:
            assert not isinstance(envs, gymnasium.vector.VectorEnv)
            assert isinstance(envs.single_action_space, vecspaces.spaces.Discrete)
            assert type(envs.metadata["autoreset_mode"]) is AutoresetMode


def test_gymnasium_autoreset_mode_alone_gives_gymnasium_types() -> None:
    from vecspaces.envs import TinyEnv

    with SyncVectorEnv([TinyEnv] * 2, autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP) as envs:
        assert isinstance(envs, gymnasium.vector.VectorEnv)
        assert isinstance(envs.single_action_space, gym_spaces.Discrete)
        assert envs.autoreset_mode is gymnasium.vector.AutoresetMode.SAME_STEP  # as on Gymnasium's own envs
        assert envs.autoreset_mode == AutoresetMode.SAME_STEP


@pytest.mark.parametrize("mode", list(gymnasium.vector.AutoresetMode))
@pytest.mark.parametrize("backend", ["vecspaces-async", "vecspaces-sync"])
def test_every_gymnasium_autoreset_mode(backend: str, mode: Any) -> None:
    """Gymnasium's enum, ours and the string value are the same mode, with Gymnasium's results."""
    for given in (mode, AutoresetMode(mode.value), mode.value):
        with VECTOR_ENVS[backend]([robot] * 2, autoreset_mode=given) as envs:
            assert envs.metadata["autoreset_mode"] is mode
            assert envs.metadata["autoreset_mode"] == AutoresetMode(mode.value)
            assert AutoresetMode(mode.value) == envs.metadata["autoreset_mode"]
    reference = gymnasium_reference([robot] * 2, autoreset_mode=mode)
    envs = VECTOR_ENVS[backend]([robot] * 2, autoreset_mode=mode)
    try:
        if mode is gymnasium.vector.AutoresetMode.DISABLED:
            # Nothing resets by itself: step until an episode ends, then reset the ended envs by mask.
            for each in (reference, envs):
                each.reset(seed=3)
            for _ in range(13):
                actions = np.zeros((2, 2), np.float32)
                assert_same(envs.step(actions), reference.step(actions))
            mask = np.array([True, False])
            assert_same(envs.reset(options={"reset_mask": mask}), reference.reset(options={"reset_mask": mask}))
        else:
            assert_same(run(envs, 40, seed=3), run(reference, 40, seed=3))
    finally:
        envs.close()
        reference.close()


def test_autoreset_mode_errors_are_vecspaces_errors() -> None:
    for bad in ("sometimes", 3, None):
        with pytest.raises(InvalidValueError, match="autoreset_mode is invalid"):
            SyncVectorEnv([robot], autoreset_mode=bad)
        with pytest.raises(InvalidValueError, match="autoreset_mode is invalid"):
            AsyncVectorEnv([robot], autoreset_mode=bad)


def test_autoreset_enums_compare_and_hash_alike() -> None:
    for ours in AutoresetMode:
        theirs = gymnasium.vector.AutoresetMode(ours.value)
        assert ours == theirs and theirs == ours
        assert theirs in {ours} and ours in {theirs}
        assert {ours: 1}[theirs] == 1
    assert AutoresetMode.NEXT_STEP != gymnasium.vector.AutoresetMode.SAME_STEP
    assert AutoresetMode.NEXT_STEP != "NextStep"


# -- make_vec ------------------------------------------------------------------------------------------------


def test_make_vec_builds_vecspaces_envs_with_wrappers() -> None:
    time_limit = [lambda env: gymnasium.wrappers.TimeLimit(env, 5)]
    with make_vec(
        "CartPole-v1", 3, "async", vector_kwargs={"num_workers": 2}, wrappers=time_limit, sutton_barto_reward=True
    ) as envs:
        assert isinstance(envs, AsyncVectorEnv) and isinstance(envs, gymnasium.vector.VectorEnv)
        assert envs.num_envs == 3 and envs.num_workers == 2
        assert envs.spec.id == "CartPole-v1"
        assert envs.spec.kwargs["vectorization_mode"] == "async"
        assert envs.spec.kwargs["sutton_barto_reward"] is True
        envs.reset(seed=0)
        truncations = [envs.step(np.zeros(3, np.int64))[3] for _ in range(5)]
        assert truncations[-1].all() and not np.any(truncations[:-1])
        assert envs.get_attr("spec")[0].kwargs["sutton_barto_reward"] is True
    reference = gymnasium.make_vec("CartPole-v1", 3, "sync", wrappers=time_limit, sutton_barto_reward=True)
    with make_vec("CartPole-v1", 3, "sync", wrappers=time_limit, sutton_barto_reward=True) as envs:
        assert isinstance(envs, SyncVectorEnv)
        assert_same(run(envs, 12, seed=5), run(reference, 12, seed=5))
    reference.close()


def test_make_vec_default_mode_follows_the_spec() -> None:
    envs = make_vec("CartPole-v1", 2)  # CartPole has a vector entry point of its own
    assert type(envs).__name__ == "CartPoleVectorEnv"
    envs.close()
    with make_vec("Pendulum-v1", 2) as envs:  # Pendulum has none: sync, as in Gymnasium
        assert isinstance(envs, SyncVectorEnv)


def test_make_vec_refuses_what_does_not_fit() -> None:
    with pytest.raises(InvalidValueError, match="vectorization_mode is invalid"):
        make_vec("CartPole-v1", 2, "threads")
    with pytest.raises(InvalidValueError, match="cannot take wrappers"):
        make_vec("CartPole-v1", 2, "vector_entry_point", wrappers=[gymnasium.wrappers.RecordEpisodeStatistics])
    with pytest.raises(InvalidValueError, match="has no vector entry point"):
        make_vec("Pendulum-v1", 2, "vector_entry_point")
    with pytest.raises(TypeError, match="make_vec id is invalid"):
        make_vec(42)


def test_gymnasium_make_vec_reaches_vecspaces_without_warnings() -> None:
    spec = gymnasium.registry["Pendulum-v1"]
    try:
        register_vector_entry_point("Pendulum-v1", num_workers=1)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            envs = gymnasium.make_vec("Pendulum-v1", 2, vectorization_mode="vector_entry_point", g=9.0)
        with envs:
            assert isinstance(envs, AsyncVectorEnv) and envs.num_workers == 1
            assert envs.get_attr("g") == (9.0, 9.0)
            assert envs.spec.kwargs["vectorization_mode"] == "vector_entry_point"
    finally:
        spec.vector_entry_point = None


# -- a training script -----------------------------------------------------------------------------------------


def ppo_style_training(make_envs: Callable[[], Any], iterations: int = 3, steps: int = 64) -> list[Any]:
    """Rollouts and updates the way popular single-file PPO scripts write them, with a linear numpy policy."""
    envs = make_envs()
    envs = gymnasium.wrappers.vector.RecordEpisodeStatistics(envs)
    assert isinstance(envs.single_action_space, gymnasium.spaces.Discrete), "only discrete action space is supported"
    observation_size = int(np.prod(envs.single_observation_space.shape))
    weights = np.zeros((observation_size, int(envs.single_action_space.n)))
    sampler = np.random.default_rng(1)
    trajectory: list[Any] = []
    next_obs, _ = envs.reset(seed=1)
    next_done = np.zeros(envs.num_envs)
    for _ in range(iterations):
        observations, actions, advantages = [], [], []
        for _ in range(steps):
            logits = next_obs @ weights
            probabilities = np.exp(logits - logits.max(axis=1, keepdims=True))
            probabilities /= probabilities.sum(axis=1, keepdims=True)
            action = (sampler.random((envs.num_envs, 1)) > probabilities[:, :1]).astype(np.int64).ravel()
            observations.append(next_obs)
            actions.append(action)
            next_obs, reward, terminations, truncations, infos = envs.step(action)
            next_done = np.logical_or(terminations, truncations)
            advantages.append(reward - 0.5 * next_done)
            trajectory.append((next_obs.copy(), reward, next_done.copy()))
            if "episode" in infos:
                trajectory.append(("episode", infos["episode"]["r"][infos["_episode"]].tolist()))
        batch_obs = np.concatenate(observations)
        batch_act = np.concatenate(actions)
        batch_adv = np.concatenate(advantages)
        gradient = np.zeros_like(weights)
        np.add.at(gradient.T, batch_act, (batch_obs * batch_adv[:, None]))
        weights += 0.01 * gradient
    trajectory.append(("episodes", envs.episode_count, list(envs.return_queue)))
    envs.close()
    return trajectory


def test_ppo_style_loop_gives_identical_trajectories() -> None:
    def make_env() -> Any:
        return gymnasium.make("CartPole-v1")

    reference = ppo_style_training(lambda: gymnasium.vector.SyncVectorEnv([make_env] * 4))
    for make_envs in (
        lambda: AsyncVectorEnv([make_env] * 4, timeout=30),
        lambda: SyncVectorEnv([make_env] * 4),
        lambda: make_vec("CartPole-v1", 4, "async"),
    ):
        got = ppo_style_training(make_envs)
        assert len(got) == len(reference)
        assert reference[-1][1] > 0  # episodes finished, so autoreset was exercised
        for mine, theirs in zip(got, reference, strict=True):
            assert_same(mine, theirs)


def subclass_that_scales_rewards(base: type) -> type:
    """A vector env class of the kind users write: ``step_async`` keeps the actions, ``step_wait`` edits rewards."""

    class Scaled(base):  # type: ignore[misc, valid-type]
        def step_async(self, actions: Any) -> None:
            self.last_actions = np.array(actions)
            super().step_async(actions)

        def step_wait(self, **kwargs: Any) -> Any:
            observations, rewards, terminations, truncations, infos = super().step_wait(**kwargs)
            return observations, rewards * 10, terminations, truncations, infos

    return Scaled


def test_a_subclass_overriding_half_of_step_is_called_by_step() -> None:
    # Gymnasium's AsyncVectorEnv.step is step_async + step_wait; vecspaces' shorter path must not skip them.
    results = []
    for base in (gymnasium.vector.AsyncVectorEnv, AsyncVectorEnv):
        envs = subclass_that_scales_rewards(base)([cartpole] * 2)
        try:
            envs.reset(seed=3)
            _, rewards, *_ = envs.step(np.array([1, 0]))
            assert envs.last_actions.tolist() == [1, 0]
            results.append(rewards.tolist())
        finally:
            envs.close()
    assert results[0] == results[1] == [10.0, 10.0]


def test_async_vector_env_keeps_gymnasium_attributes() -> None:
    arguments = {"shared_memory": False, "copy": False, "context": "fork", "daemon": True, "observation_mode": "same"}
    names = ["env_fns", *arguments, "worker", "autoreset_mode", "num_envs", "render_mode"]
    theirs = gymnasium.vector.AsyncVectorEnv([cartpole] * 3, **arguments)
    try:
        with AsyncVectorEnv([cartpole] * 3, num_workers=2, **arguments) as ours:
            assert {name: getattr(ours, name) for name in names} == {name: getattr(theirs, name) for name in names}
            assert [process.is_alive() for process in ours.processes] == [True, True]
            assert len({process.pid for process in ours.processes}) == 2
    finally:
        theirs.close()
