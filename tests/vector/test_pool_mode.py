"""Pool mode (EnvPool-style send/recv) of AsyncVectorEnv."""

from __future__ import annotations

import functools
import os
from typing import Any

import numpy as np
import pytest

from tests.catalog import make
from tests.helpers import assert_same_value, is_running
from tests.vector.envs import CountdownEnv, FaultyEnv, FrameEnv, FrameEnvExitingAtFirstStep, SpaceEnv
from vecspaces.error import AlreadyPendingCallError, NoAsyncCallError, WorkerDiedError
from vecspaces.vector import AsyncVectorEnv
from vecspaces.vector._async.protocol import RemoteTraceback
from vecspaces.vector.utils import batch_space, iterate

pytestmark = pytest.mark.timeout(60)


def counting_pool(num_envs: int = 6, **kwargs: Any) -> AsyncVectorEnv:
    fns = [functools.partial(CountdownEnv, 10_000, label) for label in range(num_envs)]
    return AsyncVectorEnv(fns, **kwargs)


@pytest.mark.parametrize(
    ("num_workers", "batch_size", "main_process_envs"),
    [(1, 2, 0), (2, 3, 0), (3, 1, 0), (6, 4, 0), (2, 6, 0), (1, 2, 3), (2, 3, 1)],
)
def test_every_env_steps_exactly_as_often_as_it_was_sent_actions(
    num_workers: int, batch_size: int, main_process_envs: int
) -> None:
    rng = np.random.default_rng(0)
    sent = np.zeros(6, dtype=int)
    with counting_pool(num_workers=num_workers, batch_size=batch_size, main_process_envs=main_process_envs) as envs:
        envs.reset(seed=0)
        envs.send(np.ones(6, dtype=np.int64))
        sent += 1
        for _ in range(40):
            obs, _, _, _, infos, env_ids = envs.recv()
            assert len(env_ids) == batch_size == len(set(env_ids.tolist()))
            # Each returned env's observation is its own step count, its reward its last action.
            assert obs[:, 0].tolist() == sent[env_ids].tolist()
            assert infos["label"].tolist() == env_ids.tolist()
            actions = rng.integers(0, 10, len(env_ids))
            envs.send(actions, env_ids)
            sent[env_ids] += 1
        received = []
        while envs._pool_mode.active():
            received += envs.recv()[-1].tolist()  # the last recv returns the fewer than batch_size left
        assert sorted(received) == list(range(6))
        assert envs.get_attr("count") == tuple(sent.tolist())


def test_straggler_does_not_hold_back_the_others() -> None:
    fns = [functools.partial(FaultyEnv, "sleep", 1, 1.0)] + [CountdownEnv] * 3
    with AsyncVectorEnv(fns, num_workers=4, batch_size=3) as envs:
        envs.reset(seed=0)
        envs.send(np.zeros(4, dtype=np.int64))
        for _ in range(5):  # env 0 sleeps through all of these rounds
            *_, env_ids = envs.recv()
            assert sorted(env_ids.tolist()) == [1, 2, 3]
            envs.send(np.zeros(3, dtype=np.int64), env_ids)
        for _ in range(2):
            *_, env_ids = envs.recv()
        assert 0 in env_ids.tolist()


def test_contiguous_results_are_views_when_copy_is_false() -> None:
    with counting_pool(4, num_workers=1, batch_size=4, copy=False) as envs:
        envs.reset(seed=0)
        envs.send(np.ones(4, dtype=np.int64))
        obs, *_, env_ids = envs.recv()
        assert env_ids.tolist() == [0, 1, 2, 3]
        assert np.shares_memory(obs, envs._memory.observations[0].batch_views[0])
    with counting_pool(4, num_workers=1, batch_size=4, copy=True) as envs:
        envs.reset(seed=0)
        envs.send(np.ones(4, dtype=np.int64))
        obs, *_ = envs.recv()
        assert not np.shares_memory(obs, envs._memory.observations[0].batch_views[0])


@pytest.mark.parametrize(
    "space_id",
    [
        "box_f16",
        "discrete_neg",
        "multidiscrete_start",
        "text_unicode",
        "dict_nested",
        "dict_with_variable",
        "tuple_of_oneof_sequence",
    ],
)
@pytest.mark.parametrize("main_process_envs", [0, 2])
def test_pool_mode_works_with_every_space_kind(space_id: str, main_process_envs: int) -> None:
    fns = [functools.partial(SpaceEnv, make(space_id), make(space_id), 1000) for _ in range(4)]
    with AsyncVectorEnv(fns, num_workers=2, batch_size=2, main_process_envs=main_process_envs) as envs:
        envs.reset(seed=1)
        envs.action_space.seed(2)
        actions = envs.action_space.sample()
        envs.send(actions)
        sent: dict[int, list[Any]] = {i: [] for i in range(4)}
        for i, action in enumerate(iterate(envs.action_space, actions)):
            sent[i].append(action)
        for _ in range(4):
            obs, *_, env_ids = envs.recv()
            assert obs in batch_space(envs.single_observation_space, len(env_ids))
            partial_space = batch_space(envs.single_action_space, len(env_ids))
            partial_space.seed(int(env_ids[0]))
            partial = partial_space.sample()
            for i, action in zip(env_ids.tolist(), iterate(partial_space, partial), strict=True):
                sent[i].append(action)
            envs.send(partial, env_ids)
        while envs._pool_mode.active():
            envs.recv()
        received = envs.get_attr("actions")
    for i in range(4):
        assert_same_value(list(received[i]), sent[i])


def test_send_and_recv_misuse_is_reported_before_anything_happens() -> None:
    with counting_pool(4, num_workers=2, batch_size=2) as envs:
        envs.reset(seed=0)
        with pytest.raises(NoAsyncCallError, match="send"):
            envs.recv()
        envs.send(np.ones(2, dtype=np.int64), [0, 1])
        with pytest.raises(ValueError, match="still stepping"):
            envs.send(np.ones(1, dtype=np.int64), [1])
        with pytest.raises(ValueError, match="repeats"):
            envs.send(np.ones(2, dtype=np.int64), [2, 2])
        with pytest.raises(ValueError, match="out of range"):
            envs.send(np.ones(1, dtype=np.int64), [9])
        with pytest.raises(ValueError, match="actions"):
            envs.send(np.ones(3, dtype=np.int64), [2, 3])
        with pytest.raises(AlreadyPendingCallError, match="recv"):
            envs.step(np.ones(4, dtype=np.int64))
        obs, *_, env_ids = envs.recv()
        assert sorted(env_ids.tolist()) == [0, 1] and obs[:, 0].tolist() == [1, 1]
        # Everything received: Gymnasium's step works again.
        obs, *_ = envs.step(np.ones(4, dtype=np.int64))
        assert obs[:, 0].tolist() == [2, 2, 1, 1]


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_env_error_in_pool_mode_keeps_type_traceback_and_the_pool(context: str) -> None:
    fns = [CountdownEnv, functools.partial(FaultyEnv, "raise", 1)]
    with AsyncVectorEnv(fns, context=context, num_workers=2, batch_size=1) as envs:
        envs.reset(seed=0)
        envs.send(np.ones(2, dtype=np.int64))
        with pytest.raises(KeyError) as caught:
            for _ in range(2):
                envs.recv()
        assert isinstance(caught.value.__cause__, RemoteTraceback)
        assert any("env 1" in note for note in caught.value.__notes__)
        envs.send(np.ones(1, dtype=np.int64), [1])
        received = set()
        while len(received) < 2 and (envs._pool_mode.active()):
            received |= set(envs.recv()[-1].tolist())
        assert 1 in received


def test_the_main_process_envs_step_in_send_and_their_errors_come_with_recv() -> None:
    fns = [functools.partial(FaultyEnv, "raise", 2), CountdownEnv, CountdownEnv]
    with AsyncVectorEnv(fns, num_workers=1, batch_size=1, main_process_envs=2) as envs:
        envs.reset(seed=0)
        envs.send(np.ones(3, dtype=np.int64))
        assert envs._pool_mode.ready == [0, 1]  # stepped by send itself, before the worker's env
        assert [envs.recv()[-1].tolist() for _ in range(3)] == [[0], [1], [2]]
        envs.send(np.ones(3, dtype=np.int64))  # env 0 raises at its second step
        with pytest.raises(KeyError) as caught:
            envs.recv()
        assert any("env 0" in note for note in caught.value.__notes__)
        received = []
        while envs._pool_mode.active():
            received += envs.recv()[-1].tolist()
        assert sorted(received) == [1, 2]  # the env that raised is idle again, the others were not held back
        obs, *_ = envs.step(np.ones(3, dtype=np.int64))
        assert obs[1:, 0].tolist() == [3, 3]


def test_worker_info_lists_the_main_process_envs_as_worker_minus_one() -> None:
    with AsyncVectorEnv([CountdownEnv] * 5, num_workers=2, main_process_envs=1) as envs:
        workers = envs.worker_info()
        assert [(w["worker"], w["envs"]) for w in workers] == [(-1, [0]), (0, [1, 2]), (1, [3, 4])]
        assert workers[0]["pid"] == os.getpid() and workers[0]["alive"] and workers[0]["rss"] > 0
        assert all(w["pid"] != os.getpid() and w["alive"] for w in workers[1:])


def test_a_keyboard_interrupt_of_a_main_process_env_in_send_leaves_no_env_stuck() -> None:
    fns = [functools.partial(FaultyEnv, "keyboard_interrupt", 1), CountdownEnv]
    with AsyncVectorEnv(fns, num_workers=1, batch_size=2, main_process_envs=1) as envs:
        envs.reset(seed=0)
        with pytest.raises(KeyboardInterrupt):
            envs.send(np.ones(2, dtype=np.int64))
        assert envs.recv()[-1].tolist() == [1]  # the worker's env, sent before; nothing else is waited for
        assert not envs._pool_mode.active()
        envs.send(np.ones(2, dtype=np.int64))
        assert sorted(envs.recv()[-1].tolist()) == [0, 1]


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_worker_death_in_pool_mode(context: str) -> None:
    fns = [CountdownEnv, functools.partial(FaultyEnv, "kill", 1)]
    envs = AsyncVectorEnv(fns, context=context, num_workers=2, batch_size=2)
    envs.reset(seed=0)
    envs.send(np.ones(2, dtype=np.int64))
    with pytest.raises(WorkerDiedError, match="SIGKILL"):
        envs.recv()
    envs.close()


def test_restart_in_pool_mode_reports_truncated() -> None:
    fns = [CountdownEnv, functools.partial(FaultyEnv, "exit", 1)]
    with AsyncVectorEnv(fns, num_workers=2, batch_size=2, restart_workers=True) as envs:
        envs.reset(seed=0)
        envs.send(np.ones(2, dtype=np.int64))
        _, _, _, truncations, infos, env_ids = envs.recv()
        assert sorted(env_ids.tolist()) == [0, 1]
        position = env_ids.tolist().index(1)
        assert truncations[position] and infos["worker_restarted"][position]
        assert envs.restarts == 1


def test_a_masked_reset_after_a_restart_in_pool_mode_keeps_the_restarted_envs_observations() -> None:
    # Large frames, so copy=True lends spare buffers and a masked reset carries the other envs' rows over.
    fns = [functools.partial(FrameEnv, 0), functools.partial(FrameEnv, 1)]
    fns += [functools.partial(FrameEnv, 2), functools.partial(FrameEnvExitingAtFirstStep, 3)]
    with AsyncVectorEnv(fns, num_workers=2, batch_size=4, restart_workers=True) as envs:
        envs.reset(options={"start": 7})  # frames 7, 57, 107, 157; the arrays are dropped at once
        envs.send(np.zeros(4, dtype=np.int64))
        envs.recv()  # the second worker died and was restarted: envs 2 and 3 were reset with start 0
        assert envs.restarts == 1
        obs, _ = envs.reset(options={"start": 1, "reset_mask": np.array([True, True, False, False])})
        assert obs["frame"][:, 0, 0].tolist() == [1, 51, 100, 150]


def test_recv_timeout_then_recv_again() -> None:
    fns = [functools.partial(FaultyEnv, "sleep", 1, 0.5)] * 2
    with AsyncVectorEnv(fns, num_workers=2, batch_size=2) as envs:
        envs.reset(seed=0)
        envs.send(np.ones(2, dtype=np.int64))
        with pytest.raises(TimeoutError, match="recv"):
            envs.recv(timeout=0.05)
        *_, env_ids = envs.recv(timeout=10)
        assert sorted(env_ids.tolist()) == [0, 1]


@pytest.mark.parametrize("context", ["fork", "spawn"])
@pytest.mark.parametrize(
    ("fault", "error", "text"), [("bad_shape", ValueError, "shape"), ("unpicklable_info", TypeError, "info")]
)
def test_bad_observation_or_info_in_pool_mode_names_the_env(context: str, fault: str, error: type, text: str) -> None:
    fns = [CountdownEnv, functools.partial(FaultyEnv, fault, 1)]
    with AsyncVectorEnv(fns, context=context, num_workers=2, batch_size=1) as envs:
        envs.reset(seed=0)
        envs.send(np.ones(2, dtype=np.int64))
        with pytest.raises(error, match=text) as caught:
            for _ in range(2):
                envs.recv()
        assert "env 1" in str(caught.value) + " ".join(getattr(caught.value, "__notes__", []))
        # The worker survived: env 1 steps again.
        envs.send(np.ones(1, dtype=np.int64), [1])
        received = set()
        while envs._pool_mode.active():
            received |= set(envs.recv()[-1].tolist())
        assert 1 in received


def test_close_while_envs_are_in_flight_returns_promptly() -> None:
    fns = [functools.partial(FaultyEnv, "sleep", 1, 30.0)] * 2
    envs = AsyncVectorEnv(fns, num_workers=2, batch_size=1)
    envs.reset(seed=0)
    pids = [info["pid"] for info in envs.worker_info()]
    envs.send(np.ones(2, dtype=np.int64))
    envs.close(timeout=0.2)
    assert not any(is_running(pid) for pid in pids)


def test_send_to_every_env_in_another_order_gives_each_env_its_own_action() -> None:
    with counting_pool(num_envs=4, num_workers=2, batch_size=4) as envs:
        envs.reset(seed=0)
        env_ids = [3, 1, 0, 2]
        envs.send(np.array([7, 5, 4, 6]), env_ids)  # env i gets action i + 4
        _, rewards, _, _, _, received = envs.recv()
        assert dict(zip(received.tolist(), rewards.tolist(), strict=True)) == {0: 4, 1: 5, 2: 6, 3: 7}


def test_sends_of_subsets_batch_the_action_space_once_per_size(monkeypatch: pytest.MonkeyPatch) -> None:
    # batch_space of a Dict costs ~0.1 ms: made at every send of a subset, it cut pool mode with list actions to
    # a third of its speed.
    from vecspaces.vector import _spaces

    made: list[int] = []
    with counting_pool(batch_size=2) as envs:
        monkeypatch.setattr(_spaces, "batch_space", lambda space, n: made.append(n) or batch_space(space, n))
        envs.reset(seed=0)
        envs.send([1] * 6, list(range(6)))
        for _ in range(20):
            *_, env_ids = envs.recv()
            envs.send([1] * len(env_ids), list(env_ids))  # a list: converted through the batched space
        envs.recv()
    assert sorted(set(made)) == sorted(made) and made  # one per size asked for


def test_a_sync_vector_env_stepping_subsets_batches_the_action_space_once_per_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # What a Ray agent does in pool mode: SyncVectorEnv._step_selected, with actions as lists.
    from vecspaces.vector import SyncVectorEnv, _spaces

    made: list[int] = []
    envs = SyncVectorEnv([functools.partial(CountdownEnv, 100)] * 4)
    monkeypatch.setattr(_spaces, "batch_space", lambda space, n: made.append(n) or batch_space(space, n))
    envs.reset(seed=0)
    for env_ids in [[0, 1], [2, 3], [1], [0, 1, 2], [3, 0]] * 4:
        _, rewards, *_ = envs._step_selected([1] * len(env_ids), env_ids)
        np.testing.assert_array_equal(rewards, [1.0] * len(env_ids))
    envs.close()
    assert sorted(made) == [1, 2, 3]
