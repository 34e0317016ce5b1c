"""One behaviour suite for every vector-env backend, so they cannot drift apart."""

from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np
import pytest

from tests.catalog import CATALOG, make
from tests.helpers import assert_same_value
from tests.vector.envs import CountdownEnv, FaultyEnv, SpaceEnv
from vecspaces.error import EpisodeEndedError, SpaceMismatchError
from vecspaces.spaces import Box, Discrete
from vecspaces.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv
from vecspaces.vector.utils import batch_space, iterate

# ray: two agents over sockets, each with a local pool (forked: its default forkserver is tested in test_ray.py);
# ray_calls: every command a Ray actor call, to agents that step their envs themselves.
BACKENDS = ["sync", "async", "async_pipe", "async_main", "ray", "ray_calls"]

pytestmark = pytest.mark.timeout(60)


def make_vector_env(backend: str, env_fns: list[Any], **kwargs: Any) -> Any:
    if backend == "sync":
        return SyncVectorEnv(env_fns, **kwargs)
    workers = min(2, len(env_fns))
    if backend == "async":
        return AsyncVectorEnv(env_fns, num_workers=workers, timeout=20, **kwargs)
    if backend == "async_pipe":
        return AsyncVectorEnv(env_fns, shared_memory=False, num_workers=workers, timeout=20, **kwargs)
    if backend == "async_main":  # env 0 stepped by the main process, the others by workers
        return AsyncVectorEnv(env_fns, main_process_envs=1, timeout=20, **kwargs)
    if backend.startswith("ray"):
        from vecspaces.vector.ray import RayVectorEnv

        agents = min(2, len(env_fns))
        if backend == "ray":
            return RayVectorEnv(env_fns, num_agents=agents, workers_per_agent=1, context="fork", timeout=20, **kwargs)
        return RayVectorEnv(env_fns, num_agents=agents, workers_per_agent=0, transport="ray", timeout=20, **kwargs)
    raise AssertionError(backend)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    if request.param.startswith("ray"):
        request.getfixturevalue("ray_cluster")
    return request.param


def countdowns(*lengths: int) -> list[Any]:
    return [functools.partial(CountdownEnv, length, label) for label, length in enumerate(lengths)]


def test_spaces_and_metadata(backend: str) -> None:
    with make_vector_env(backend, countdowns(3, 3, 3), autoreset_mode="SameStep") as envs:
        assert envs.num_envs == 3
        assert envs.single_observation_space == CountdownEnv.observation_space
        assert envs.observation_space == batch_space(CountdownEnv.observation_space, 3)
        assert envs.action_space == batch_space(CountdownEnv.action_space, 3)
        assert envs.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP


def test_reset_seeds_and_a_seed_list_of_the_wrong_length(backend: str) -> None:
    # One env for every case: on Ray each vector env costs its agents' start.
    with make_vector_env(backend, countdowns(3, 3, 3)) as envs:
        for seed, expected in [(42, [42, 43, 44]), ([7, None, 9], [7, -1, 9]), (None, [-1, -1, -1])]:
            _, infos = envs.reset(seed=seed)
            assert infos["seed"].tolist() == expected, seed
            assert infos["_seed"].all()
        with pytest.raises(ValueError, match="3 seeds"):
            envs.reset(seed=[1, 2])


def run(envs: Any, steps: int, action: int = 1) -> list[tuple[Any, ...]]:
    return [envs.step(np.full(envs.num_envs, action)) for _ in range(steps)]


def test_next_step_autoreset_trajectory(backend: str) -> None:
    with make_vector_env(backend, countdowns(2, 3)) as envs:
        obs, _ = envs.reset(seed=0)
        assert obs[:, 0].tolist() == [0, 0]
        results = run(envs, 4)
    observations = [r[0][:, 0].tolist() for r in results]
    assert observations == [[1, 1], [2, 2], [0, 3], [1, 0]]
    assert [r[1].tolist() for r in results] == [[1, 1], [1, 1], [0, 1], [1, 0]]
    assert [r[2].tolist() for r in results] == [[False, False], [True, False], [False, True], [False, False]]
    reset_step_infos = results[2][4]
    assert reset_step_infos["_seed"].tolist() == [True, False]
    assert reset_step_infos["_count"].tolist() == [False, True]


def test_same_step_autoreset_trajectory(backend: str) -> None:
    with make_vector_env(backend, countdowns(2, 3), autoreset_mode=AutoresetMode.SAME_STEP) as envs:
        envs.reset(seed=0)
        results = run(envs, 3)
    observations = [r[0][:, 0].tolist() for r in results]
    assert observations == [[1, 1], [0, 2], [1, 0]]
    assert [r[2].tolist() for r in results] == [[False, False], [True, False], [False, True]]
    infos = results[1][4]
    assert infos["_final_obs"].tolist() == [True, False]
    assert infos["final_obs"][0].tolist() == [2] and infos["final_obs"][1] is None
    assert infos["final_info"]["count"][0] == 2 and infos["final_info"]["_count"].tolist() == [True, False]
    assert infos["_seed"].tolist() == [True, False]


def test_disabled_autoreset_requires_a_masked_reset(backend: str) -> None:
    with make_vector_env(backend, countdowns(1, 3), autoreset_mode="Disabled") as envs:
        envs.reset(seed=0)
        _, _, terminations, truncations, _ = envs.step(np.array([1, 1]))
        assert terminations.tolist() == [True, False]
        with pytest.raises(EpisodeEndedError, match="env 0"):
            envs.step(np.array([1, 1]))
        obs, infos = envs.reset(options={"reset_mask": terminations | truncations})
        assert obs[:, 0].tolist()[0] == 0 and infos["_seed"].tolist() == [True, False]
        obs, *_ = envs.step(np.array([1, 1]))
        assert obs[:, 0].tolist()[0] == 1


@pytest.mark.parametrize("mode", list(AutoresetMode))
def test_explicit_reset_clears_a_pending_autoreset(backend: str, mode: AutoresetMode) -> None:
    with make_vector_env(backend, countdowns(1, 1), autoreset_mode=mode) as envs:
        envs.reset(seed=0)
        envs.step(np.array([1, 1]))
        envs.reset()
        _, rewards, terminations, *_ = envs.step(np.array([3, 3]))
    # A real step (episodes of length 1 end at once), not the autoreset step (reward 0, not terminated).
    assert rewards.tolist() == [3.0, 3.0]
    assert terminations.tolist() == [True, True]


def test_partial_reset_keeps_the_other_envs(backend: str) -> None:
    with make_vector_env(backend, countdowns(5, 5, 5)) as envs:
        envs.reset(seed=0)
        run(envs, 2)
        options = {"reset_mask": np.array([False, True, False]), "start": 3}
        obs, infos = envs.reset(seed=10, options=options)
        assert "reset_mask" in options, "the caller's options must not be mutated"
        assert obs[:, 0].tolist() == [2, 3, 2]
        assert infos["seed"].tolist() == [0, 11, 0] and infos["_seed"].tolist() == [False, True, False]


def test_bad_reset_masks_are_rejected_and_change_nothing(backend: str) -> None:
    bad_masks = [
        (np.array([1, 0]), TypeError),
        (np.array([True]), ValueError),
        (np.array([False, False]), ValueError),
        ([True, False], TypeError),
    ]
    with make_vector_env(backend, countdowns(3, 3)) as envs:
        envs.reset(seed=0)
        envs.step(np.ones(2, np.int64))
        for mask, error in bad_masks:
            with pytest.raises(error, match="reset_mask"):
                envs.reset(options={"reset_mask": mask})
        obs, *_ = envs.step(np.ones(2, np.int64))
        assert obs[:, 0].tolist() == [2, 2]  # no reset happened


def test_infos_are_batched_with_masks(backend: str) -> None:
    with make_vector_env(backend, countdowns(3, 3, 3)) as envs:
        envs.reset(seed=0)
        *_, infos = envs.step(np.array([1, 2, 3]))
    assert infos["count"].tolist() == [1, 1, 1] and infos["_count"].all()
    assert infos["label"].tolist() == [0, 1, 2]


def test_call_get_attr_and_set_attr(backend: str) -> None:
    with make_vector_env(backend, countdowns(3, 4)) as envs:
        envs.reset(seed=0)
        assert envs.get_attr("length") == (3, 4)
        envs.set_attr("label", [7, 8])
        assert envs.get_attr("label") == (7, 8)
        envs.set_attr("label", 5)
        *_, infos = envs.step(np.array([0, 0]))
        assert infos["label"].tolist() == [5, 5]
        assert envs.call("render") == (None, None)
        with pytest.raises(ValueError, match="2 values"):
            envs.set_attr("label", [1, 2, 3])


def test_wrong_number_of_actions_changes_nothing(backend: str) -> None:
    with make_vector_env(backend, countdowns(5, 5)) as envs:
        envs.reset(seed=0)
        for bad in [np.array([1]), np.array([1, 1, 1]), np.array([[1, 1]])]:
            with pytest.raises(ValueError, match="actions"):
                envs.step(bad)
        obs, *_ = envs.step(np.array([1, 1]))
        assert obs[:, 0].tolist() == [1, 1]


def test_copy_true_returns_independent_observations(backend: str) -> None:
    with make_vector_env(backend, countdowns(5, 5), copy=True) as envs:
        first, _ = envs.reset(seed=0)
        second, *_ = envs.step(np.array([1, 1]))
        assert first[:, 0].tolist() == [0, 0] and second[:, 0].tolist() == [1, 1]


def test_observation_mode_different_batches_differing_bounds(backend: str) -> None:
    fns = [
        functools.partial(SpaceEnv, Box(0.0, 1.0, (2,)), Discrete(2)),
        functools.partial(SpaceEnv, Box(-5.0, 5.0, (2,)), Discrete(2)),
    ]
    with make_vector_env(backend, fns, observation_mode="different") as envs:
        assert envs.observation_space.low.tolist() == [[0.0, 0.0], [-5.0, -5.0]]
        obs, _ = envs.reset(seed=1)
        assert obs in envs.observation_space
    with pytest.raises(SpaceMismatchError, match="env 1"):
        make_vector_env(backend, fns, observation_mode="same")


def test_observation_mode_explicit_pair(backend: str) -> None:
    single = Box(-10.0, 10.0, (2,))
    fns = [functools.partial(SpaceEnv, Box(0.0, 1.0, (2,)), Discrete(2))] * 2
    with make_vector_env(backend, fns, observation_mode=(batch_space(single, 2), single)) as envs:
        assert envs.single_observation_space == single


def test_a_non_scalar_reward_is_reported_with_the_env_index(backend: str) -> None:
    class VectorReward(CountdownEnv):
        def step(self, action: Any) -> tuple[Any, ...]:
            obs, _, terminated, truncated, info = super().step(action)
            return obs, np.array([1.0, 2.0]), terminated, truncated, info

    with make_vector_env(backend, [CountdownEnv, VectorReward]) as envs:
        envs.reset(seed=0)
        with pytest.raises(ValueError, match="env 1"):
            envs.step(np.array([0, 0]))


SPACE_IDS = [
    "box_f32",
    "box_f16",
    "box_bool",
    "box_uint8_image",
    "discrete_start3",
    "multibinary_2d",
    "multidiscrete_start",
    "text_unicode",
    "dict_nested",
    "tuple_nested",
    "sequence_stack_box",
    "graph",
    "oneof_mixed",
    "dict_with_variable",
]


def space_trajectory(backend: str, space_id: str) -> tuple[list[Any], list[list[Any]], tuple[Any, ...]]:
    """Reset and step twice-episode-length envs of ``space_id``: the observations, actions sent and received."""
    fns = [functools.partial(SpaceEnv, make(space_id), make(space_id)) for _ in range(2)]
    with make_vector_env(backend, fns) as envs:
        obs, _ = envs.reset(seed=3)
        assert obs in envs.observation_space
        observations = [obs]
        envs.action_space.seed(4)
        sent = []
        for _ in range(5):  # past the end of the first episodes (length 4): autoreset too
            actions = envs.action_space.sample()
            sent.append(list(iterate(envs.action_space, actions)))
            obs, *_ = envs.step(actions)
            assert obs in envs.observation_space
            observations.append(obs)
        return observations, sent, envs.get_attr("actions")


@pytest.mark.parametrize("space_id", SPACE_IDS)
def test_every_space_kind_in_observations_and_actions(backend: str, space_id: str) -> None:
    observations, sent, received = space_trajectory(backend, space_id)
    for env_index in range(2):
        # The fifth action went to an env whose episode had ended: NEXT_STEP resets it instead of stepping.
        assert_same_value([step[env_index] for step in sent[:4]], received[env_index])
    # Every backend gives exactly the reference's values: a stale or mixed-up leaf cannot hide behind
    # "obs in observation_space".
    reference, _, _ = space_trajectory("sync", space_id)
    assert_same_value(observations, reference)


def test_copy_false_returns_one_buffer_overwritten_by_the_next_step(backend: str) -> None:
    with make_vector_env(backend, countdowns(5, 5), copy=False) as envs:
        first, _ = envs.reset(seed=0)
        second, *_ = envs.step(np.ones(2, dtype=np.int64))
        assert np.shares_memory(first, second)
        assert first[:, 0].tolist() == [1, 1]


def test_catalog_is_covered() -> None:
    assert set(SPACE_IDS) <= set(CATALOG)


def test_an_env_that_raises_in_step_is_named_and_its_error_keeps_its_type(backend: str) -> None:
    env_fns = [*countdowns(5, 5), functools.partial(FaultyEnv, "raise", at_step=2)]
    with make_vector_env(backend, env_fns) as envs:
        envs.reset(seed=0)
        envs.step(np.ones(3, np.int64))
        with pytest.raises(KeyError) as caught:
            envs.step(np.ones(3, np.int64))
    chain = [caught.value, caught.value.__cause__]
    text = " ".join(
        str(part) for error in chain if error is not None for part in [error, *getattr(error, "__notes__", [])]
    )
    assert "raised by env 2 during step" in text


def test_close_with_a_step_pending_warns_as_gymnasium_does(backend: str) -> None:
    with make_vector_env(backend, countdowns(5, 5)) as envs, warnings.catch_warnings():
        warnings.simplefilter("error")
        envs.reset(seed=0)
        envs.close()  # nothing pending: no warning
    if backend == "sync":  # it has no step_async: nothing is ever pending
        return
    with make_vector_env(backend, countdowns(5, 5)) as envs:
        envs.reset(seed=0)
        envs.step_async(np.ones(2, np.int64))
        with pytest.warns(UserWarning, match=r"close\(\) was called while a step is pending.*step_wait\(\)"):
            envs.close()
