"""Tests of vecspaces.Env, the minimal environment base class, and of its parity with gymnasium.Env."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

from tests.helpers import same_rng_state
from vecspaces import Env
from vecspaces.error import InvalidTypeError, InvalidValueError


class Walk(Env[int, int]):
    """A random walk on the integers: the observation is the position, actions add to it."""

    def __init__(self) -> None:
        self.closed = False

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
        super().reset(seed=seed)
        self.position = int(self.np_random.integers(-10, 10))
        return self.position, {"options": options}

    def step(self, action: int) -> tuple[int, float, bool, bool, dict[str, Any]]:
        self.position += action
        return self.position, 1.0, self.position == 0, False, {}

    def close(self) -> None:
        self.closed = True


def first_draws(env: Env[Any, Any], seed: int | None) -> list[float]:
    env.reset(seed=seed)
    return [float(x) for x in env.np_random.random(5)]


# --- seeding ------------------------------------------------------------------------------------------------


def test_reset_with_the_same_seed_reproduces_the_stream() -> None:
    assert first_draws(Walk(), 42) == first_draws(Walk(), 42)


def test_reset_with_another_seed_gives_another_stream() -> None:
    assert first_draws(Walk(), 1) != first_draws(Walk(), 2)


def test_reset_with_a_seed_reseeds_an_existing_generator() -> None:
    env = Walk()
    first = first_draws(env, 7)
    env.np_random.random(100)
    assert first_draws(env, 7) == first


def test_reset_without_a_seed_keeps_the_generator() -> None:
    env = Walk()
    env.reset(seed=5)
    generator = env.np_random
    state = generator.bit_generator.state
    env.reset()
    assert env.np_random is generator
    assert env.np_random_seed == 5
    assert generator.bit_generator.state != state  # Walk.reset drew from it; nothing re-seeded it


def test_reset_returns_the_observation_and_passes_options() -> None:
    env = Walk()
    observation, info = env.reset(seed=0, options={"level": 3})
    assert observation == env.position
    assert info == {"options": {"level": 3}}


def test_base_reset_returns_no_observation_and_an_empty_info() -> None:
    assert Env().reset(seed=0) == (None, {})


def test_np_random_seed_is_the_reset_seed() -> None:
    env = Walk()
    env.reset(seed=123)
    assert env.np_random_seed == 123


def test_np_random_is_created_on_first_use_and_kept() -> None:
    env = Env()
    assert env._np_random is None
    generator = env.np_random
    assert isinstance(generator, np.random.Generator)
    assert env.np_random is generator


def test_np_random_seed_before_any_seeding_creates_a_reproducible_generator() -> None:
    env = Env()
    seed = env.np_random_seed
    assert isinstance(seed, int) and seed >= 0
    other = Env()
    other.reset(seed=seed)
    assert same_rng_state(env.np_random, other.np_random)


def test_np_random_setter_marks_the_seed_unknown() -> None:
    env = Env()
    env.reset(seed=3)
    generator = np.random.default_rng(9)
    env.np_random = generator
    assert env.np_random is generator
    assert env.np_random_seed == -1


def test_seeded_envs_do_not_share_a_generator() -> None:
    a, b = Walk(), Walk()
    a.reset(seed=0)
    b.reset(seed=0)
    assert a.np_random is not b.np_random
    a.np_random.random(10)
    assert not same_rng_state(a.np_random, b.np_random)


@pytest.mark.parametrize("seed", [1.5, "3", [1]])
def test_reset_rejects_a_seed_of_the_wrong_type(seed: Any) -> None:
    with pytest.raises(InvalidTypeError, match="seed"):
        Env().reset(seed=seed)


def test_reset_rejects_a_negative_seed() -> None:
    with pytest.raises(InvalidValueError, match="seed must not be negative"):
        Env().reset(seed=-1)


# --- attributes and wrappers --------------------------------------------------------------------------------


def test_get_wrapper_attr_reads_an_attribute() -> None:
    env = Walk()
    env.reset(seed=0)
    assert env.get_wrapper_attr("position") == env.position
    with pytest.raises(AttributeError):
        env.get_wrapper_attr("missing")


def test_set_wrapper_attr_sets_an_attribute() -> None:
    env = Walk()
    assert env.set_wrapper_attr("speed", 4) is True
    assert env.speed == 4  # type: ignore[attr-defined]


def test_set_wrapper_attr_without_force_only_sets_existing_attributes() -> None:
    env = Walk()
    assert env.set_wrapper_attr("colour", "red", force=False) is False
    assert not hasattr(env, "colour")
    assert env.set_wrapper_attr("render_mode", "ansi", force=False) is True
    assert env.render_mode == "ansi"


def test_has_wrapper_attr() -> None:
    env = Walk()
    assert env.has_wrapper_attr("metadata")
    assert not env.has_wrapper_attr("missing")


def test_unwrapped_is_the_env_itself() -> None:
    env = Walk()
    assert env.unwrapped is env


def test_class_defaults_match_gymnasium() -> None:
    env = Env()
    assert env.metadata == {"render_modes": []}
    assert env.render_mode is None
    assert env.spec is None
    assert str(env) == "<Env instance>"
    assert str(Walk()) == "<Walk instance>"


# --- lifecycle ----------------------------------------------------------------------------------------------


def test_context_manager_returns_the_env_and_closes_it() -> None:
    with Walk() as env:
        assert isinstance(env, Walk)
        assert not env.closed
    assert env.closed


def test_context_manager_closes_on_error_and_does_not_swallow_it() -> None:
    env = Walk()
    with pytest.raises(RuntimeError, match="boom"), env:
        raise RuntimeError("boom")
    assert env.closed


def test_default_render_and_close_do_nothing() -> None:
    env = Env()
    assert env.render() is None
    assert env.close() is None
    assert env.close() is None  # closing twice is fine


def test_step_must_be_implemented() -> None:
    class NoStep(Env[int, int]):
        pass

    with pytest.raises(NotImplementedError, match="NoStep does not implement step"):
        NoStep().step(0)


def test_step_returns_the_five_tuple() -> None:
    env = Walk()
    env.reset(seed=0)
    start = env.position
    observation, reward, terminated, truncated, info = env.step(2)
    assert observation == start + 2
    assert (reward, truncated, info) == (1.0, False, {})
    assert terminated == (start + 2 == 0)


# --- parity with gymnasium.Env ------------------------------------------------------------------------------


def _keyword_parameters(method: Any) -> list[tuple[str, Any, Any]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(method).parameters.values()]


def test_signatures_match_gymnasium() -> None:
    gymnasium = pytest.importorskip("gymnasium")
    for name in (
        "reset",
        "step",
        "render",
        "close",
        "get_wrapper_attr",
        "set_wrapper_attr",
        "has_wrapper_attr",
    ):
        assert _keyword_parameters(getattr(Env, name)) == _keyword_parameters(getattr(gymnasium.Env, name)), name


def test_same_seed_gives_the_same_stream_as_gymnasium() -> None:
    gymnasium = pytest.importorskip("gymnasium")
    ours, theirs = Env(), gymnasium.Env()
    ours.reset(seed=2024)
    theirs.reset(seed=2024)
    assert same_rng_state(ours.np_random, theirs.np_random)
    assert ours.np_random_seed == theirs.np_random_seed == 2024


def test_a_gymnasium_env_is_driven_the_same_way() -> None:
    """Code written for Env's duck type (reset(seed=, options=), step -> 5-tuple) drives a gymnasium.Env."""
    gymnasium = pytest.importorskip("gymnasium")

    class GymWalk(gymnasium.Env):  # type: ignore[misc]
        def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
            super().reset(seed=seed)
            self.position = int(self.np_random.integers(-10, 10))
            return self.position, {"options": options}

        def step(self, action: int) -> Any:
            self.position += action
            return self.position, 1.0, self.position == 0, False, {}

    def rollout(env: Any) -> list[Any]:
        results: list[Any] = [env.reset(seed=11, options={"a": 1})]
        results += [env.step(action) for action in (1, -2, 3)]
        results.append((env.np_random_seed, env.get_wrapper_attr("position"), env.set_wrapper_attr("x", 1)))
        with env:
            pass
        return results

    assert rollout(Walk()) == rollout(GymWalk())
