"""Custom spaces (nothing registered for them) in the vector envs.

A custom leaf of an observation or action travels through the worker's pipe, leaf by leaf as Sequence and
Graph leaves do, while the other leaves stay in shared memory; every result must equal SyncVectorEnv's for the
same seeds and actions, whatever the start method, ``shared_memory``, ``copy`` and autoreset mode.
"""

from __future__ import annotations

import copy
import functools
import multiprocessing
import pickle
import re
from typing import Any

import cloudpickle
import numpy as np
import pytest

from tests.helpers import assert_same_value
from tests.vector.custom_envs import Bag, CustomEnv, Token, TokenSpace, UnpicklableLeafEnv, Word
from vecspaces._ops import support as table
from vecspaces._ops.memory_nodes import ArrayLeaf, DictNode, VariableLeaf, layout_nodes
from vecspaces.error import CustomSpaceError, InvalidValueError
from vecspaces.spaces import Box, Dict, Discrete, OneOf, Sequence, Space, Tuple
from vecspaces.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv
from vecspaces.vector._async.env_slice import EnvSlice
from vecspaces.vector._async.protocol import ActionLeaves, Command
from vecspaces.vector._async.shared import SharedStepMemory
from vecspaces.vector.utils import batch_space, create_shared_memory, iterate
from vecspaces.vector.utils.shared_layout import SharedLayout, layout_nodes_or_variable

CONTEXTS = ["fork", "forkserver", "spawn"]


def envs_of(observation: str, action: str, count: int = 3, length: int = 3) -> list[Any]:
    return [functools.partial(CustomEnv, observation, action, length) for _ in range(count)]


def make(backend: str, fns: list[Any], **kwargs: Any) -> Any:
    """A vector env: "sync", or AsyncVectorEnv with shared observations ("shm"), piped ones ("pipe") or env 0 in
    the main process ("main")."""
    if backend == "sync":
        return SyncVectorEnv(fns, **kwargs)
    kwargs.setdefault("timeout", 30)
    if backend == "shm":
        return AsyncVectorEnv(fns, num_workers=2, **kwargs)
    if backend == "pipe":
        return AsyncVectorEnv(fns, shared_memory=False, num_workers=2, **kwargs)
    if backend == "main":
        return AsyncVectorEnv(fns, main_process_envs=1, **kwargs)
    raise AssertionError(backend)


def plain(value: Any) -> Any:
    """``value`` with object arrays (an info entry such as ``final_obs``) as lists, to compare item by item."""
    if isinstance(value, np.ndarray) and value.dtype == object:
        return [plain(item) for item in value.tolist()]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(plain(item) for item in value)
    return value


def play(envs: Any, steps: int = 7, seed: int = 3) -> list[Any]:
    """Reset, then step with sampled actions, past the end of the first episodes; every result, deep-copied.

    In DISABLED autoreset mode, the envs whose episode ended are reset with a reset mask before the next step.
    """
    record: list[Any] = [copy.deepcopy(envs.reset(seed=seed))]
    envs.action_space.seed(seed + 1)
    ended = np.zeros(envs.num_envs, dtype=np.bool_)
    for _ in range(steps):
        if envs.metadata["autoreset_mode"] is AutoresetMode.DISABLED and ended.any():
            record.append(copy.deepcopy(envs.reset(options={"reset_mask": ended})))
        result = envs.step(envs.action_space.sample())
        record.append(copy.deepcopy(result))
        ended = result[2] | result[3]
    record.append(envs.get_attr("actions"))
    return plain(record)


def reference(observation: str, action: str, **kwargs: Any) -> list[Any]:
    with make("sync", envs_of(observation, action), **kwargs) as envs:
        return play(envs)


# -- the layout: custom leaves are variable-size leaves of the pool's layout ---------------------------------


def test_the_pool_layout_makes_only_the_custom_leaves_variable() -> None:
    space = Dict(bag=Bag(), pos=Box(0, 1, (2,)), pair=Tuple((Word(), Discrete(3))), seq=Sequence(Discrete(2)))
    layout = SharedLayout(space, n=2, custom_as_variable=True)
    assert [leaf.path for leaf in layout.variable_leaves] == [("bag",), ("pair", 0), ("seq",)]
    assert [slot.path for slot in layout.slots] == [("pos",), ("pair", 1)]
    assert layout.nodes[0] == DictNode((), ("bag", "pos", "pair", "seq"))
    batch = layout.allocate()
    sent = batch.write(1, {"bag": {"n": 1}, "pos": np.ones(2, np.float32), "pair": ("wé", 2), "seq": (1,)})
    assert sent == ({"n": 1}, "wé", (1,))
    expected = {"bag": {"n": 1}, "pos": np.ones(2, np.float32), "pair": ("wé", np.int64(2)), "seq": (1,)}
    assert_same_value(batch.read_env(1, sent), expected)
    assert batch.read_env(1)["bag"] is None


@pytest.mark.parametrize(
    ("space", "variable"),
    [
        (Bag(), [()]),
        (Tuple((Tuple((Discrete(2), TokenSpace())),)), [(0, 1)]),
        (Dict(o=OneOf((Discrete(2), Word())), d=Discrete(2)), [("o",)]),  # a OneOf is variable as a whole
    ],
    ids=["whole", "deep", "oneof_branch"],
)
def test_custom_spaces_anywhere_become_variable_leaves(space: Space[Any], variable: list[tuple[Any, ...]]) -> None:
    nodes = layout_nodes_or_variable(space)
    assert [node.path for node in nodes if isinstance(node, VariableLeaf)] == variable
    assert all(isinstance(node.space, (Bag, TokenSpace, OneOf)) for node in nodes if isinstance(node, VariableLeaf))


class Rgb(Space[Any]):
    """A custom space with a registered layout: it keeps its slot in the pool's layout."""

    def __init__(self) -> None:
        super().__init__((3,), np.uint8)


@layout_nodes.register(Rgb)
def _rgb_layout(space: Rgb, path: tuple[Any, ...] = ()) -> list[Any]:
    return [ArrayLeaf(path, np.dtype(np.uint8), (3,))]


def test_a_custom_space_with_a_registered_layout_keeps_its_slot() -> None:
    layout = SharedLayout(Dict(c=Rgb(), b=Bag()), n=2, custom_as_variable=True)
    assert [slot.path for slot in layout.slots] == [("c",)]
    assert [leaf.path for leaf in layout.variable_leaves] == [("b",)]


def test_without_the_pool_option_custom_spaces_are_refused_as_before() -> None:
    space = Dict(pos=Box(0, 1, (2,)), bag=Bag())
    with pytest.raises(CustomSpaceError, match=re.escape("at space['bag']")):
        SharedLayout(space, n=2)
    with pytest.raises(CustomSpaceError, match=re.escape("at space['bag']")) as info:
        create_shared_memory(space, n=2)
    # The support table's reason is in the message, and it says where such values go instead.
    assert table.reason(table.SHARED_MEMORY, table.CUSTOM) in str(info.value)
    assert "worker pool sends them through its pipe" in str(info.value)


def test_the_pool_layout_survives_pickling() -> None:
    layout = SharedLayout(Dict(bag=Bag(), pos=Box(0, 1, (2,))), n=3, custom_as_variable=True)
    again = pickle.loads(pickle.dumps(layout))
    assert again.custom_as_variable and again.nodes == layout.nodes and again.nbytes == layout.nbytes
    assert not pickle.loads(pickle.dumps(SharedLayout(Discrete(2), 3))).custom_as_variable


def test_read_env_checks_the_number_of_variable_values() -> None:
    batch = SharedLayout(Tuple((Bag(), Discrete(2))), n=1, custom_as_variable=True).allocate()
    with pytest.raises(InvalidValueError, match="read_env was given the wrong number of variable-size values"):
        batch.read_env(0, ())


# -- the worker: actions split between shared memory and the command ----------------------------------------


def test_the_worker_joins_action_leaves_from_shared_memory_and_the_command() -> None:
    fns = envs_of("tuple", "dict", count=2)
    memory = SharedStepMemory(
        multiprocessing.get_context("fork"),
        fns[0]().observation_space,
        fns[0]().action_space,
        num_envs=2,
        num_workers=1,
    )
    actions = [
        {"bag": {"n": 1, "tags": []}, "move": 2, "force": np.array([0.5, -0.5], np.float32)},
        {"bag": {"n": 2, "tags": ["x"]}, "move": 0, "force": np.array([0.25, 0.0], np.float32)},
    ]
    messages = memory.write_actions([0, 1], actions, [0, 0])
    # Only the custom leaf travels with the command; the others are in shared memory.
    assert messages == {0: ActionLeaves({0: ({"n": 1, "tags": []},), 1: ({"n": 2, "tags": ["x"]},)})}
    assert memory.actions.read()["move"].tolist() == [2, 0]
    envs = [fn() for fn in fns]
    for env in envs:
        env.reset(seed=0)
    slice_ = EnvSlice(range(2), envs, AutoresetMode.NEXT_STEP, memory, 0)
    # The command arrives pickled, as it does from the main process.
    reply = slice_.handle(Command.STEP, pickle.loads(cloudpickle.dumps(messages[0])))
    # No error; the observations' custom leaf (a Token) goes back by pipe.
    assert reply is not None and not reply.errors
    assert all(type(values[0]) is Token for values in reply.variable.values()) and sorted(reply.variable) == [0, 1]
    for env, action in zip(envs, actions, strict=True):
        assert_same_value(env.actions, [{**action, "move": np.int64(action["move"])}])
    # Each env got its own copy of its fixed-size leaves, not a view of the shared buffer.
    memory.actions.write(0, {"bag": {"n": 0, "tags": []}, "move": 1, "force": np.zeros(2, np.float32)})
    assert envs[0].actions[0]["force"].tolist() == [0.5, -0.5]


# -- whole trajectories against SyncVectorEnv -----------------------------------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("backend", ["shm", "pipe", "main"])
@pytest.mark.parametrize(
    ("observation", "action"),
    [("bag", "bag"), ("dict", "dict"), ("tuple", "tuple"), ("nested", "discrete"), ("dict", "bag")],
)
def test_trajectories_equal_sync(backend: str, observation: str, action: str) -> None:
    with make(backend, envs_of(observation, action)) as envs:
        played = play(envs)
    assert_same_value(played, reference(observation, action))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("shared_memory", [True, False])
@pytest.mark.parametrize("context", CONTEXTS)
def test_every_start_method(context: str, shared_memory: bool) -> None:
    fns = envs_of("nested", "tuple")
    with AsyncVectorEnv(fns, shared_memory=shared_memory, context=context, num_workers=2, timeout=30) as envs:
        played = play(envs)
    assert_same_value(played, reference("nested", "tuple"))


@pytest.mark.timeout(60)
def test_custom_values_arrive_as_the_env_made_them_and_fixed_leaves_stay_in_shared_memory() -> None:
    with make("shm", envs_of("dict", "dict"), copy=False) as envs:
        obs, _ = envs.reset(seed=0)
        layout = envs._memory.observations[0].layout
        assert [leaf.path for leaf in layout.variable_leaves] == [("bag",), ("word",)]
        assert [leaf.path for leaf in envs._memory.actions.layout.variable_leaves] == [("bag",)]
        assert all(type(bag) is dict and type(bag["tags"]) is list for bag in obs["bag"])
        assert all(type(word) is str for word in obs["word"])
        # The fixed-size leaves are views of the shared buffer (copy=False).
        assert [slot.path for slot in layout.slots] == [("pos",), ("frame",)]
        assert np.shares_memory(obs["frame"], envs._memory.observations[0].batch_views[1])
    with make("shm", envs_of("tuple", "tuple")) as envs:
        obs, _ = envs.reset(seed=0)
        assert all(type(token) is Token for token in obs[1])
        obs, *_ = envs.step(envs.action_space.sample())
        assert all(type(token) is Token for token in obs[1])
        assert all(type(action[2][0]) is Token and type(action[0]) is str for (action,) in envs.get_attr("actions"))


@pytest.mark.timeout(60)
def test_a_step_command_carries_only_the_custom_action_leaves() -> None:
    with make("shm", envs_of("dict", "dict", count=2), context="fork") as envs:
        envs.reset(seed=0)
        sent: list[Any] = []
        dispatch = envs._pool.dispatch

        def spy(w: int, command: Command, payload: bytes | None = None) -> None:
            if command is Command.STEP:
                sent.append(pickle.loads(payload) if payload is not None else None)
            dispatch(w, command, payload)

        envs._pool.dispatch = spy
        envs.step(envs.action_space.sample())
    assert sent and all(isinstance(message, ActionLeaves) for message in sent)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("shared_memory", [True, False])
@pytest.mark.parametrize("mode", list(AutoresetMode), ids=lambda mode: mode.name)
def test_every_autoreset_mode(mode: AutoresetMode, shared_memory: bool) -> None:
    fns = envs_of("dict", "tuple")
    with AsyncVectorEnv(fns, shared_memory=shared_memory, autoreset_mode=mode, num_workers=2, timeout=30) as envs:
        played = play(envs)
    expected = reference("dict", "tuple", autoreset_mode=mode)
    assert_same_value(played, expected)
    if mode is AutoresetMode.SAME_STEP:  # the episodes of length 3 ended at step 3: their final observations
        final = played[3][4]["final_obs"]
        assert all(type(obs["bag"]) is dict and type(obs["word"]) is str for obs in final)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("copy_obs", [True, False], ids=["copy", "no_copy"])
@pytest.mark.parametrize("backend", ["shm", "pipe"])
def test_copy_and_masked_reset(backend: str, copy_obs: bool) -> None:
    def masked(envs: Any) -> list[Any]:
        first = copy.deepcopy(envs.reset(seed=5)[0])
        envs.action_space.seed(0)
        envs.step(envs.action_space.sample())
        # Env 1 is not reset: it keeps the observation of the step.
        stepped = copy.deepcopy(envs.step(envs.action_space.sample())[0])
        again = copy.deepcopy(envs.reset(seed=9, options={"reset_mask": np.array([True, False, True])})[0])
        return [first, stepped, again]

    with make(backend, envs_of("dict", "dict"), copy=copy_obs) as envs:
        result = masked(envs)
    with make("sync", envs_of("dict", "dict"), copy=copy_obs) as envs:
        expected = masked(envs)
    assert_same_value(result, expected)
    assert_same_value(result[2]["bag"][1], result[1]["bag"][1])


@pytest.mark.timeout(60)
def test_copy_true_results_are_not_changed_by_later_steps() -> None:
    with make("shm", envs_of("dict", "dict"), copy=True) as envs:
        first, _ = envs.reset(seed=0)
        kept = copy.deepcopy(first)
        envs.step(envs.action_space.sample())
        envs.step(envs.action_space.sample())
    assert_same_value(first, kept)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("backend", ["shm", "pipe"])
def test_copy_true_results_do_not_share_custom_objects_with_later_results(backend: str) -> None:
    with make(backend, envs_of("tuple", "discrete")) as envs:
        first, _ = envs.reset(seed=0)
        first[1][1].kind = "changed by the caller"
        # Env 1 is not reset: the pool returns its last observation again, which must not be the caller's object.
        again, _ = envs.reset(options={"reset_mask": np.array([True, False, True])})
    assert again[1][1] is not first[1][1] and again[1][1].kind != "changed by the caller"


# -- pool mode ------------------------------------------------------------------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("shared_memory", [True, False])
def test_pool_mode(shared_memory: bool) -> None:
    count, rounds = 4, 6
    fns = [functools.partial(CustomEnv, "nested", "dict", 1000) for _ in range(count)]
    # The reference: each env's observations, step by step (they do not depend on the actions).
    with SyncVectorEnv(fns) as sync:
        sync.reset(seed=1)
        expected = [sync.step(sync.action_space.sample())[0] for _ in range(rounds)]
        single = sync.single_observation_space
    with AsyncVectorEnv(fns, shared_memory=shared_memory, num_workers=2, batch_size=2, timeout=30) as envs:
        envs.reset(seed=1)
        seen: dict[int, list[Any]] = {i: [] for i in range(count)}
        sent: dict[int, list[Any]] = {i: [] for i in range(count)}

        def send(ids: list[int]) -> None:
            space = batch_space(envs.single_action_space, len(ids))
            space.seed(len(seen[ids[0]]))
            actions = space.sample()
            for i, action in zip(ids, iterate(space, actions), strict=True):
                sent[i].append(action)
            envs.send(actions, ids)

        send(list(range(count)))
        while envs._pool_mode.active():
            obs, rewards, *_, env_ids = envs.recv()
            ids = env_ids.tolist()
            for position, i in enumerate(ids):
                seen[i].append(copy.deepcopy(_item(single, obs, position)))
            assert rewards.tolist() == [float(len(seen[i])) for i in ids]
            again = [i for i in ids if len(sent[i]) < rounds]
            if again:
                send(again)
        received = envs.get_attr("actions")
    for i in range(count):
        assert_same_value(received[i], sent[i])
        assert_same_value(seen[i], [_item(single, step, i) for step in expected])


def _item(space: Space[Any], batch: Any, i: int) -> Any:
    """Env ``i``'s value in a batch of ``space``."""
    if isinstance(space, Dict):
        return {key: _item(child, batch[key], i) for key, child in space.items()}
    if isinstance(space, Tuple):
        return tuple(_item(child, item, i) for child, item in zip(space, batch, strict=True))
    return batch[i]


# -- failures ------------------------------------------------------------------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("context", CONTEXTS)
def test_restart_after_a_killed_worker(context: str) -> None:
    fns = [functools.partial(CustomEnv, "dict", "dict", 100, kill) for kill in (0, 0, 2)]
    with AsyncVectorEnv(fns, context=context, num_workers=2, restart_workers=True, timeout=30) as envs:
        envs.reset(seed=0)
        envs.action_space.seed(1)
        steps = [envs.action_space.sample() for _ in range(3)]
        envs.step(steps[0])
        obs, _, _, truncations, infos = envs.step(steps[1])  # env 2's worker dies and comes back
        assert envs.restarts == 1
        assert truncations.tolist() == [False, False, True]
        assert infos["_worker_restarted"].tolist() == [False, False, True]
        assert obs in envs.observation_space and type(obs["bag"][2]) is dict
        obs, _, _, truncations, _ = envs.step(steps[2])
        assert obs in envs.observation_space and not truncations.any()
        received = envs.get_attr("actions")
    with SyncVectorEnv([functools.partial(CustomEnv, "dict", "dict", 100)] * 3) as sync:
        sync.reset(seed=0)
        expected = [sync.step(action)[0] for action in steps]
    # Envs 0 and 1 did not notice; the new env 2 was sent no action: the step after its restart row (a
    # truncation) was its reset step, as NEXT_STEP says.
    assert_same_value(
        _item(envs.single_observation_space, obs, 0), _item(sync.single_observation_space, expected[2], 0)
    )
    assert received[2] == []
    assert_same_value(received[0], [_item(envs.single_action_space, step, 0) for step in steps])


@pytest.mark.timeout(60)
def test_an_unpicklable_custom_leaf_names_its_path_and_the_worker_survives() -> None:
    fns = [functools.partial(CustomEnv, "dict", "discrete", 100), UnpicklableLeafEnv]
    with AsyncVectorEnv(fns, num_workers=2, timeout=30) as envs:
        envs.reset(seed=0)
        with pytest.raises(TypeError, match=re.escape("obs['bag'] of env 1 cannot be sent to the main process")):
            envs.step(np.array([0, 1]))
        obs, *_ = envs.step(np.array([0, 1]))
        assert type(obs["bag"][1]) is dict
