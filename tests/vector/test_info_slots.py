"""Infos of plain numbers travel in shared memory and batch exactly as the pickled dicts do."""

from __future__ import annotations

import functools
import os
import signal
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.vector.envs import ScriptedInfoEnv, scripted_info
from vecspaces.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv
from vecspaces.vector._async.info_slots import MAX_INFO_VALUES, InfoReader, InfoWriter
from vecspaces.vector.infos import add_info

pytestmark = pytest.mark.timeout(120)

# Every kind of value an info may hold: those that fit a slot, and some that must be pickled.
values = st.one_of(
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.booleans().map(np.bool_),
    st.sampled_from(["int8", "uint8", "int32", "int64", "uint64", "float16", "float32", "float64"]).flatmap(
        lambda dtype: st.integers(0, 100).map(np.dtype(dtype).type)
    ),
    st.just(np.complex64(1 + 2j)),
    st.text(max_size=3),
)
# Arrays and nested dicts under keys of their own (batching mixes neither with numbers under one key).
infos = st.tuples(
    st.dictionaries(st.sampled_from(["a", "b", "c", "_d", "e"]), values, max_size=5),
    st.dictionaries(st.sampled_from(["array", "episode"]), st.just(0), max_size=2),
).map(lambda parts: {**parts[0], **{key: np.arange(2) if key == "array" else {"r": 1.0} for key in parts[1]}})


def reference(env_infos: list[dict[str, Any]]) -> dict[str, Any]:
    batched: dict[str, Any] = {}
    for index, info in enumerate(env_infos):
        if info:
            add_info(batched, info, index, len(env_infos))
    return batched


def assert_identical(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    """The same keys in the same order, arrays of the same dtype and values, nested dicts alike."""
    assert list(ours) == list(theirs)
    for key, expected in theirs.items():
        actual = ours[key]
        if isinstance(expected, dict):
            assert_identical(actual, expected)
            continue
        assert actual.dtype == expected.dtype and actual.shape == expected.shape, key
        if expected.dtype == object:
            for mine, reference_item in zip(actual, expected, strict=True):
                assert type(mine) is type(reference_item)
                np.testing.assert_array_equal(mine, reference_item)
        else:
            np.testing.assert_array_equal(actual, expected)


@given(st.integers(1, 5).flatmap(lambda n: st.lists(st.lists(infos, min_size=n, max_size=n), min_size=1, max_size=3)))
def test_rows_and_pickled_infos_batch_exactly_as_the_dicts_do(steps: list[list[dict[str, Any]]]) -> None:
    num_envs = len(steps[0])
    # Rows of garbage, as an earlier step leaves them: an env without an info in its row must not show them.
    layouts, values = np.zeros(num_envs, np.int64), np.full((num_envs, MAX_INFO_VALUES), 7, np.int64)
    writer, reader = InfoWriter(layouts, values, range(num_envs)), InfoReader(layouts, values)
    for env_infos in steps:
        pickled = {}
        for index, info in enumerate(env_infos):
            if not info:
                writer.clear(index)
                continue
            left = writer.put(index, info)
            reader.learn(writer.announcements())
            if left:
                pickled[index] = left
            else:  # in its row: read back as the env returned it, value types included
                back = reader.info(index)
                assert list(back) == list(info)
                assert all(type(back[key]) is type(value) and back[key] == value for key, value in info.items())
        assert_identical(reader.batch(pickled), reference(env_infos))


def test_infos_of_one_layout_in_every_env_batch_as_the_dicts_do() -> None:
    """The common case (Atari's lives and frame numbers at every step), which takes a shorter path."""
    env_infos = [{"lives": 3 - index, "score": index / 2, "done": index == 1} for index in range(3)]
    layouts, values = np.zeros(3, np.int64), np.full((3, MAX_INFO_VALUES), 7, np.int64)
    writer, reader = InfoWriter(layouts, values, range(3)), InfoReader(layouts, values)
    for index, info in enumerate(env_infos):
        assert writer.put(index, info) == {}
    reader.learn(writer.announcements())
    assert_identical(reader.batch({}), reference(env_infos))
    writer.clear(1)  # one env without an info now: masks and zeros where it is absent
    assert_identical(reader.batch({}), reference([env_infos[0], {}, env_infos[2]]))


def test_what_does_not_fit_a_row_is_left_to_pickle() -> None:
    layouts, values = np.zeros(1, np.int64), np.zeros((1, MAX_INFO_VALUES), np.int64)
    writer = InfoWriter(layouts, values, range(1))
    too_many = {f"k{i}": i for i in range(MAX_INFO_VALUES + 1)}
    for info in [too_many, {1: 2.0}, {"big": 2**64}, {"u": np.uint64(1)}, {"c": np.complex128(1)}, {"s": "x"}]:
        assert writer.put(0, info) is info
        assert layouts[0] == 0
    assert writer.put(0, {"lives": 3}) == {} and layouts[0] != 0
    assert list(writer.announcements().values()) == [(("lives", "int"),)]
    assert writer.announcements() == {}  # each layout is announced once


def run_script(envs: Any, steps: int) -> list[dict[str, Any]]:
    seen = [envs.reset(seed=0)[1]]
    for step in range(steps):
        seen.append(envs.step(np.full(envs.num_envs, step % 10))[4])
    return seen


@pytest.mark.parametrize(
    "settings",
    [
        {"num_workers": 2},
        {"num_workers": 1, "main_process_envs": 1},
        {"num_workers": 2, "autoreset_mode": AutoresetMode.SAME_STEP},
        {"num_workers": 3, "shared_memory": False},
    ],
    ids=["workers", "main_process_envs", "same_step", "piped_observations"],
)
def test_a_pool_returns_the_infos_sync_returns(settings: dict[str, Any]) -> None:
    env_fns = [functools.partial(ScriptedInfoEnv, label) for label in range(3)]
    mode = settings.get("autoreset_mode", AutoresetMode.NEXT_STEP)
    with AsyncVectorEnv(env_fns, context="fork", timeout=20, **settings) as envs:
        ours = run_script(envs, 30)
    theirs = run_script(SyncVectorEnv(env_fns, autoreset_mode=mode), 30)
    for mine, expected in zip(ours, theirs, strict=True):
        assert_identical(mine, expected)


def test_a_step_whose_infos_fit_their_rows_sends_no_reply() -> None:
    assert scripted_info(5, 1).keys() == scripted_info(5, 2).keys() == {"lives", "frame", "score"}
    with AsyncVectorEnv([functools.partial(ScriptedInfoEnv, 5)] * 2, num_workers=2, context="fork") as envs:
        envs.reset(seed=0)
        envs.step(np.zeros(2, np.int64))  # the first use of a layout is announced in a reply
        assert envs._control.has_reply.tolist() == [1, 1]
        _, _, _, _, infos = envs.step(np.zeros(2, np.int64))  # the same layout again: nothing to pickle
        assert envs._control.has_reply.tolist() == [0, 0]
        assert infos["frame"].tolist() == [8, 8] and infos["_frame"].all()


def test_pool_mode_returns_each_env_its_own_info() -> None:
    env_fns = [functools.partial(ScriptedInfoEnv, label) for label in range(4)]
    with AsyncVectorEnv(env_fns, num_workers=2, batch_size=2, context="fork", timeout=20) as envs:
        envs.reset(seed=0)
        counts = [1] * 4  # each env's step count in the episode, at its next step
        envs.send(np.zeros(4, np.int64))
        for _ in range(20):
            *_, infos, env_ids = envs.recv()
            expected = []
            for i in env_ids.tolist():
                expected.append(scripted_info(i, counts[i]))
                counts[i] = 0 if counts[i] == 5 else counts[i] + 1  # after the last step, the reset step
            assert_identical(infos, reference(expected))
            envs.send(np.zeros(2, np.int64), env_ids)


def test_a_restarted_worker_leaves_no_info_of_its_predecessor_in_the_rows() -> None:
    env_fns = [functools.partial(ScriptedInfoEnv, label) for label in range(2)]
    with AsyncVectorEnv(env_fns, num_workers=2, restart_workers=True, context="fork", timeout=20) as envs:
        envs.reset(seed=0)
        _, _, _, _, infos = envs.step(np.zeros(2, np.int64))
        assert infos["_flag"].tolist() == [True, False]  # env 0's info is in its row
        os.kill(envs.worker_info()[0]["pid"], signal.SIGKILL)
        _, infos = envs.reset(options={"reset_mask": np.array([False, True])})  # env 0 is not reset
    assert infos["_lives"].tolist() == [False, True] and infos["_flag"].tolist() == [False, True]
