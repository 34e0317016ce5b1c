"""Tests of vecspaces.gymnasium.as_gymnasium_env: vecspaces envs under Gymnasium's checker, wrappers and vector envs."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from tests.helpers import assert_same_value, same_rng_state
from vecspaces import Env
from vecspaces.envs import AtariEnv, CpuEnv, DemoEnv, DictEnv, TinyEnv
from vecspaces.error import CustomSpaceError, InvalidTypeError
from vecspaces.spaces import Box, Dict, Discrete, Graph, GraphInstance, Sequence, Space, to_gymnasium
from vecspaces.vector import SyncVectorEnv

gymnasium = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env, data_equivalence  # noqa: E402
from gymnasium.vector.utils import iterate as gym_iterate  # noqa: E402

from vecspaces.gymnasium import as_gymnasium_env  # noqa: E402
from vecspaces.gymnasium.env import GymnasiumEnv  # noqa: E402

# The built-in envs, with a CPU cost per step small enough for many steps in a test.
BUILT_IN: dict[str, Callable[..., Env[Any, Any]]] = {
    "tiny": TinyEnv,
    "atari": AtariEnv,
    "dict": DictEnv,
    "cpu": lambda episode_length=100: CpuEnv(episode_length, step_cpu_seconds=0.0001),
    "demo": DemoEnv,
}
NAMES = list(BUILT_IN)


@pytest.fixture
def no_warnings() -> Iterator[None]:
    """Every warning (Gymnasium's checker warns through ``warnings``) fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


class GraphEnv(Env[Any, Any]):
    """Graph observations (one nested in a Sequence) and Graph actions: values that differ between the libraries."""

    observation_space = Dict(
        world=Graph(Box(0.0, 1.0, (2,)), Discrete(3)),
        history=Sequence(Graph(Discrete(2), None)),
    )
    action_space = Graph(Discrete(4), None)

    def __init__(self) -> None:
        self.actions: list[Any] = []

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        return self._observe(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.actions.append(action)
        self.t += 1
        return self._observe(), float(len(action.nodes)), False, False, {}

    def _observe(self) -> Any:
        rng = self.np_random
        n = int(rng.integers(1, 4))
        world = GraphInstance(
            rng.uniform(0, 1, (n, 2)).astype(np.float32), np.zeros(1, np.int64), np.array([[0, n - 1]], np.int64)
        )
        history = tuple(GraphInstance(rng.integers(0, 2, 2), None, None) for _ in range(self.t % 3))
        return {"world": world, "history": history}


class Painter(TinyEnv):
    """An env with a render mode, metadata of its own and a close flag."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}  # noqa: RUF012

    def __init__(self) -> None:
        super().__init__()
        self.render_mode = "rgb_array"
        self.closed = 0

    def render(self) -> Any:
        return np.full((2, 2, 3), self.steps, dtype=np.uint8)

    def close(self) -> None:
        self.closed += 1


# --- the adapter ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_the_adapter_is_a_gymnasium_env_with_the_converted_spaces(name: str) -> None:
    env = BUILT_IN[name]()
    adapter = as_gymnasium_env(env)
    assert isinstance(adapter, gymnasium.Env) and isinstance(adapter, GymnasiumEnv)
    assert isinstance(adapter.observation_space, gymnasium.spaces.Space)
    assert isinstance(adapter.action_space, gymnasium.spaces.Space)
    assert env.observation_space == adapter.observation_space  # by value (vecspaces on the left)
    assert env.action_space == adapter.action_space
    assert repr(adapter.observation_space) == repr(to_gymnasium(env.observation_space))


def test_the_spaces_are_converted_once_and_are_copies() -> None:
    env = TinyEnv()
    adapter = as_gymnasium_env(env)
    assert adapter.observation_space is adapter.observation_space
    state = env.action_space.np_random.bit_generator.state
    adapter.action_space.seed(3)
    adapter.action_space.sample()
    assert env.action_space.np_random.bit_generator.state == state


def test_the_wrapped_env_is_env_and_unwrapped_is_the_adapter() -> None:
    env = DictEnv()
    adapter = as_gymnasium_env(env)
    assert adapter.env is env
    assert adapter.unwrapped is adapter
    assert str(adapter) == repr(adapter) == "<GymnasiumEnv<DictEnv instance>>"
    wrapped = gymnasium.wrappers.TimeLimit(adapter, max_episode_steps=5)
    assert wrapped.unwrapped is adapter and wrapped.env is adapter


def test_a_gymnasium_env_is_returned_unchanged() -> None:
    adapter = as_gymnasium_env(TinyEnv())
    wrapped = gymnasium.wrappers.TimeLimit(adapter, max_episode_steps=5)
    cartpole = gymnasium.make("CartPole-v1")
    for env in (adapter, wrapped, cartpole):
        assert as_gymnasium_env(env) is env
    cartpole.close()


class NoStep:
    observation_space = Discrete(2)
    action_space = Discrete(2)

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        return 0, {}

    def close(self) -> None:
        pass


class BadStep(NoStep):
    step = 3


@pytest.mark.parametrize(
    ("value", "problem", "got"),
    [
        (3, "lacks observation_space, action_space, reset, step, close", r"3 \(int\)"),
        (None, "lacks observation_space, action_space, reset, step, close", r"None \(NoneType\)"),
        (NoStep(), "lacks step", r"<.*NoStep object at 0x\w+> \(NoStep\)"),
        (BadStep(), "step cannot be called", r"<.*BadStep object at 0x\w+> \(BadStep\)"),
    ],
)
def test_a_non_env_is_an_invalid_type(value: Any, problem: str, got: str) -> None:
    with pytest.raises(
        InvalidTypeError,
        match=rf"^as_gymnasium_env env {problem}, expected an env: .*, got {got}$",
    ):
        as_gymnasium_env(value)


def test_a_class_gets_the_fix_to_pass_an_instance() -> None:
    with pytest.raises(
        InvalidTypeError,
        match=r"^as_gymnasium_env env is a class, .*, got <class '.*TinyEnv'>; "
        r"pass an instance, e.g. as_gymnasium_env\(TinyEnv\(\)\)$",
    ):
        as_gymnasium_env(TinyEnv)


@pytest.mark.parametrize(
    "make_vector",
    [lambda: SyncVectorEnv([TinyEnv]), lambda: gymnasium.vector.SyncVectorEnv([lambda: as_gymnasium_env(TinyEnv())])],
)
def test_a_vector_env_is_refused_with_a_fix(make_vector: Callable[[], Any]) -> None:
    vector = make_vector()
    with pytest.raises(
        InvalidTypeError, match=r"^as_gymnasium_env env is a vector env, .*; adapt each sub-env instead"
    ):
        as_gymnasium_env(vector)
    vector.close()


def test_a_space_that_is_not_a_space_is_named() -> None:
    env = TinyEnv()
    env.action_space = "Discrete(2)"  # type: ignore[assignment]
    with pytest.raises(InvalidTypeError, match=r"^as_gymnasium_env needs a space as env.action_space, expected "):
        as_gymnasium_env(env)


class Crowd(Space[Any]):
    """A custom vecspaces space kind with no Gymnasium counterpart."""


def test_a_custom_space_kind_is_named_at_its_path() -> None:
    env = TinyEnv()
    env.observation_space = Dict(a=Box(0.0, 1.0, (2,)), b=Crowd())  # type: ignore[assignment]
    with pytest.raises(
        CustomSpaceError, match=r"^as_gymnasium_env cannot convert .*Crowd.* at env.observation_space\['b'\]"
    ):
        as_gymnasium_env(env)


# --- calls and state go to the env ------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_reset_and_step_give_what_the_env_gives(name: str) -> None:
    raw, adapter = BUILT_IN[name](), as_gymnasium_env(BUILT_IN[name]())
    assert_same_value(adapter.reset(seed=5), raw.reset(seed=5))
    actions = to_gymnasium(raw.action_space)
    actions.seed(0)
    for _ in range(4):
        action = actions.sample()
        assert_same_value(adapter.step(action), raw.step(action))
    assert_same_value(adapter.reset(options={"x": 1}), raw.reset(options={"x": 1}))  # the generator runs on


def test_the_generator_is_the_envs() -> None:
    env = TinyEnv()
    adapter = as_gymnasium_env(env)
    assert adapter._np_random is None  # not seeded yet, as a fresh gymnasium.Env
    adapter.reset(seed=9)
    assert adapter.np_random is env.np_random and adapter._np_random is env._np_random
    assert adapter.np_random_seed == env.np_random_seed == 9
    generator = np.random.default_rng(1)
    adapter.np_random = generator
    assert env.np_random is generator and adapter.np_random_seed == -1
    other = np.random.default_rng(2)
    adapter._np_random = other
    assert env._np_random is other


def test_seeded_resets_are_deterministic_and_unseeded_ones_continue() -> None:
    adapter = as_gymnasium_env(DemoEnv())
    first, _ = adapter.reset(seed=123)
    seeded = copy.deepcopy(adapter.np_random)
    second, _ = adapter.reset()
    assert not same_rng_state(adapter.np_random, seeded)  # not re-seeded: the generator ran on
    again, _ = adapter.reset(seed=123)
    assert same_rng_state(adapter.np_random, seeded)
    assert data_equivalence(first, again, exact=True)
    assert not data_equivalence(first, second)


def test_metadata_render_mode_and_spec_are_the_envs() -> None:
    env = Painter()
    adapter = as_gymnasium_env(env)
    assert adapter.metadata is env.metadata and adapter.metadata["render_fps"] == 4
    assert adapter.render_mode == "rgb_array"
    assert adapter.spec is None
    adapter.reset(seed=0)
    adapter.step(0)
    assert_same_value(adapter.render(), np.full((2, 2, 3), 1, dtype=np.uint8))
    spec = gymnasium.envs.registration.EnvSpec("Painter-v0")
    adapter.spec = spec
    adapter.render_mode = None
    adapter.metadata = {"render_modes": []}
    assert env.spec is spec and env.render_mode is None and env.metadata == {"render_modes": []}


def test_close_closes_the_env() -> None:
    env = Painter()
    with as_gymnasium_env(env):
        pass
    assert env.closed == 1


def test_wrapper_attributes_reach_the_env_through_gymnasium_wrappers() -> None:
    env = TinyEnv(episode_length=7)
    wrapped = gymnasium.wrappers.TimeLimit(as_gymnasium_env(env), max_episode_steps=50)
    assert wrapped.has_wrapper_attr("episode_length") and not wrapped.has_wrapper_attr("colour")
    assert wrapped.get_wrapper_attr("episode_length") == 7
    wrapped.set_wrapper_attr("episode_length", 3)
    assert env.episode_length == 3
    # A new attribute: Gymnasium's wrapper asks the adapter without force, then keeps it itself; the adapter
    # asked directly (as a vector env's set_attr does) puts it on the env, where the env's code sees it.
    wrapped.set_wrapper_attr("colour", "red")
    assert wrapped.colour == "red" and not hasattr(env, "colour")  # type: ignore[attr-defined]
    wrapped.env.set_wrapper_attr("colour", "blue")
    assert env.colour == "blue"  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match="has no attribute 'size'"):
        wrapped.get_wrapper_attr("size")


def test_graph_values_are_converted_both_ways() -> None:
    env = GraphEnv()
    adapter = as_gymnasium_env(env)
    observation, _ = adapter.reset(seed=0)
    assert type(observation["world"]) is gymnasium.spaces.GraphInstance
    assert observation in adapter.observation_space
    adapter.action_space.seed(0)
    for _ in range(4):
        action = adapter.action_space.sample()
        assert type(action) is gymnasium.spaces.GraphInstance
        observation, reward, *_ = adapter.step(action)
        assert observation in adapter.observation_space
        assert all(type(graph) is gymnasium.spaces.GraphInstance for graph in observation["history"])
        assert type(env.actions[-1]) is GraphInstance and env.actions[-1] in env.action_space
        assert reward == len(action.nodes)


# --- Gymnasium's checker ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [*NAMES, "graph"])
def test_check_env_passes_without_warnings(name: str, no_warnings: None) -> None:
    # skip_render_check: for an env without a spec, the render check only warns that it cannot make the env
    # again to try other render modes; these envs declare none. The next test runs it through gymnasium.make.
    env = GraphEnv() if name == "graph" else BUILT_IN[name]()
    check_env(as_gymnasium_env(env), skip_render_check=True)


@pytest.mark.parametrize("name", NAMES)
def test_check_env_passes_on_a_registered_env_made_by_gymnasium(name: str, no_warnings: None) -> None:
    env_id = f"vecspaces-test/{name.capitalize()}-v0"
    gymnasium.register(env_id, entry_point=lambda: as_gymnasium_env(BUILT_IN[name]()))
    try:
        env = gymnasium.make(env_id)  # with Gymnasium's passive checker and order enforcing
        assert isinstance(env.unwrapped, GymnasiumEnv) and env.unwrapped.spec.id == env_id
        assert env.unwrapped.env.spec is env.unwrapped.spec  # make set it on the vecspaces env
        check_env(env.unwrapped)  # the full check: render modes and close through the spec
        env.close()
    finally:
        del gymnasium.registry[env_id]


# --- Gymnasium's wrappers and vector envs -----------------------------------------------------------------


def test_time_limit_truncates_the_env() -> None:
    env = gymnasium.wrappers.TimeLimit(as_gymnasium_env(TinyEnv(episode_length=100)), max_episode_steps=3)
    env.reset(seed=0)
    truncations = [env.step(0)[3] for _ in range(3)]
    assert truncations == [False, False, True]


def test_make_with_max_episode_steps_applies_time_limit() -> None:
    gymnasium.register("vecspaces-test/Limited-v0", entry_point=lambda: as_gymnasium_env(DictEnv()))
    try:
        env = gymnasium.make("vecspaces-test/Limited-v0", max_episode_steps=2)
        env.reset(seed=1)
        env.step(env.action_space.sample())
        assert env.step(env.action_space.sample())[3] is True
        env.close()
    finally:
        del gymnasium.registry["vecspaces-test/Limited-v0"]


def run_vector(envs: Any, steps: int, seed: int = 11) -> list[Any]:
    """Reset with ``seed`` and step with seeded actions; every result, and check each is in the batched spaces."""
    results: list[Any] = [envs.reset(seed=seed)]
    envs.action_space.seed(seed)
    for _ in range(steps):
        results.append(envs.step(envs.action_space.sample()))
        assert results[-1][0] in envs.observation_space
    assert results[0][0] in envs.observation_space
    return results


@pytest.mark.parametrize("name", NAMES)
def test_gymnasium_sync_vector_env_runs_them_as_the_envs_run_alone(name: str) -> None:
    envs = gymnasium.vector.SyncVectorEnv([lambda: as_gymnasium_env(BUILT_IN[name]())] * 3)
    observations, _ = envs.reset(seed=20)
    alone = [BUILT_IN[name]() for _ in range(3)]
    firsts = [env.reset(seed=20 + index)[0] for index, env in enumerate(alone)]
    for ours, expected in zip(gym_iterate(envs.observation_space, observations), firsts, strict=True):
        assert data_equivalence(ours, expected, exact=True)
    envs.action_space.seed(0)
    for _ in range(3):
        actions = envs.action_space.sample()
        observations, rewards, terminations, _, _ = envs.step(actions)
        steps = [env.step(action) for env, action in zip(alone, gym_iterate(envs.action_space, actions), strict=True)]
        for ours, expected in zip(gym_iterate(envs.observation_space, observations), steps, strict=True):
            assert data_equivalence(ours, expected[0], exact=True)
        assert rewards.tolist() == [step[1] for step in steps]
        assert terminations.tolist() == [step[2] for step in steps]
    envs.close()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", NAMES)
def test_gymnasium_async_vector_env_gives_what_sync_gives(name: str) -> None:
    def make() -> Any:
        return as_gymnasium_env(BUILT_IN[name](episode_length=3))  # episodes end: autoreset is exercised

    # Gymnasium's shared memory has no layout for a Sequence, which DemoEnv's observation holds.
    shared_memory = name != "demo"
    sync = gymnasium.vector.SyncVectorEnv([make] * 2)
    asynchronous = gymnasium.vector.AsyncVectorEnv([make] * 2, shared_memory=shared_memory)
    try:
        expected, got = run_vector(sync, 7), run_vector(asynchronous, 7)
        assert any(step[3].any() for step in expected[1:])  # some episode was truncated
        for index, (a, b) in enumerate(zip(got, expected, strict=True)):
            assert data_equivalence(a, b, exact=True), f"result {index}"
        assert asynchronous.get_attr("episode_length") == (3, 3)
        asynchronous.set_attr("episode_length", [4, 5])
        assert asynchronous.get_attr("episode_length") == (4, 5)
    finally:
        asynchronous.close()
        sync.close()


@pytest.mark.timeout(60)
def test_gymnasium_async_vector_env_under_spawn() -> None:
    def make() -> Any:
        return as_gymnasium_env(TinyEnv())

    envs = gymnasium.vector.AsyncVectorEnv([make] * 2, context="spawn")
    try:
        results = run_vector(envs, 3)
        assert results[0][0].shape == (2, 4)
        assert envs.get_attr("np_random_seed") == (11, 12)
    finally:
        envs.close()
