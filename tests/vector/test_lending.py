"""copy=True without copies: observation arrays are lent from spare shared buffers (see _async.lending)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

from tests.vector.envs import FrameEnv
from vecspaces.vector import AsyncVectorEnv
from vecspaces.vector._async import lending

pytestmark = pytest.mark.timeout(60)

NUM_ENVS = 4


def frame_pool(**kwargs: Any) -> AsyncVectorEnv:
    return AsyncVectorEnv([functools.partial(FrameEnv, label) for label in range(NUM_ENVS)], num_workers=2, **kwargs)


def expected_values(counts: list[int], starts: list[int] | None = None) -> list[int]:
    starts = starts or [0] * NUM_ENVS
    return [(label * 50 + start + count) % 256 for label, (start, count) in enumerate(zip(starts, counts, strict=True))]


def frame_values(obs: dict[str, Any]) -> list[int]:
    """The value each env's frame is filled with (checking the frame is uniform)."""
    frames = obs["frame"]
    assert (frames == frames[:, :1, :1]).all()
    return frames[:, 0, 0].tolist()


def address(array: np.ndarray) -> int:
    return int(array.__array_interface__["data"][0])


@pytest.mark.parametrize("context", ["fork", "forkserver", "spawn"])
def test_batches_the_caller_holds_are_never_overwritten(context: str) -> None:
    # Holding more batches than there are spare buffers exercises the fallback (write the own buffer, copy).
    with frame_pool(context=context) as envs:
        held = [envs.reset(seed=0)[0]]
        for _ in range(lending.SPARE_BUFFERS + 3):
            held.append(envs.step(np.zeros(NUM_ENVS, dtype=np.int64))[0])
        for step, obs in enumerate(held):
            assert frame_values(obs) == expected_values([step] * NUM_ENVS)
            assert obs["count"].tolist() == [step] * NUM_ENVS


def test_every_array_leaf_is_lent_from_a_spare_buffer() -> None:
    with frame_pool() as envs:
        obs, _ = envs.reset(seed=0)
        own_buffer = envs._memory.observations[0]  # type: ignore[index]
        for leaf in (obs["frame"], obs["count"]):
            assert not leaf.flags.owndata  # lent: an array over a spare shared buffer
            assert not any(np.shares_memory(leaf, view) for view in own_buffer.batch_views)


def test_released_buffers_are_reused() -> None:
    with frame_pool() as envs:
        envs.reset(seed=0)
        lent = {id(envs.step(np.zeros(NUM_ENVS, dtype=np.int64))[0]["count"]) for _ in range(20)}
    assert len(lent) == 1  # each batch is dropped before the next step: the same spare buffer's arrays again


def test_a_loop_that_keeps_the_last_batch_gets_lent_batches() -> None:
    # The usual training loop holds the previous batch while the next step runs.
    with frame_pool() as envs:
        obs, _ = envs.reset(seed=0)
        for step in range(1, 3 * lending.SPARE_BUFFERS + 1):
            next_obs = envs.step(np.zeros(NUM_ENVS, dtype=np.int64))[0]
            assert not next_obs["frame"].flags.owndata  # lent, not the fallback's copy
            assert not np.shares_memory(obs["frame"], next_obs["frame"])
            assert obs["count"].tolist() == [step - 1] * NUM_ENVS
            obs = next_obs


# Ways a caller keeps a lent batch's memory after dropping what step() returned.
HOLDERS = {
    "the dict": lambda obs: obs,
    "a leaf": lambda obs: obs["count"],
    "a reshape": lambda obs: obs["frame"].reshape(-1),
    "a view of a view": lambda obs: obs["frame"][1:][0],
    "a memoryview": lambda obs: memoryview(obs["frame"]),
    "np.frombuffer": lambda obs: np.frombuffer(obs["count"], dtype=np.uint8),
    "a dtype view": lambda obs: obs["count"].view(np.uint8),
}


def snapshot(held: Any) -> Any:
    """A copy of what ``held`` shows now."""
    if isinstance(held, dict):
        return {key: np.array(value) for key, value in held.items()}
    return np.array(held)


@pytest.mark.parametrize("hold", HOLDERS.values(), ids=HOLDERS.keys())
def test_whatever_still_reaches_a_lent_array_keeps_its_buffer_lent(hold: Any) -> None:
    with frame_pool() as envs:
        envs.reset(seed=0)
        held = hold(envs.step(np.zeros(NUM_ENVS, dtype=np.int64))[0])
        before = snapshot(held)
        for _ in range(lending.SPARE_BUFFERS + 2):  # each step's batch is dropped at once
            envs.step(np.zeros(NUM_ENVS, dtype=np.int64))
        after = snapshot(held)
    if isinstance(before, dict):
        assert all((before[key] == after[key]).all() for key in before)
    else:
        assert (before == after).all()


def test_a_slice_of_a_lent_array_keeps_its_buffer_lent() -> None:
    with frame_pool() as envs:
        envs.reset(seed=0)
        first_row = envs.step(np.zeros(NUM_ENVS, dtype=np.int64))[0]["frame"][1]  # the batch itself is dropped
        seen = set()
        for _ in range(6):
            obs = envs.step(np.zeros(NUM_ENVS, dtype=np.int64))[0]
            seen.add(address(obs["frame"]))
            del obs
        assert (first_row == expected_values([1] * NUM_ENVS)[1]).all()
        assert address(first_row) - first_row.nbytes not in seen  # the start of the batch it was lent from


def test_masked_reset_keeps_the_other_envs_observations_when_it_writes_another_buffer() -> None:
    with frame_pool() as envs:
        envs.reset(seed=0)
        stepped = envs.step(np.zeros(NUM_ENVS, dtype=np.int64))[0]  # held: the reset writes another buffer
        mask = np.array([True, False, True, False])
        obs, _ = envs.reset(options={"reset_mask": mask, "start": 7})
        assert frame_values(obs) == [
            expected_values([0] * NUM_ENVS, [7] * NUM_ENVS)[0],
            expected_values([1] * NUM_ENVS)[1],
            expected_values([0] * NUM_ENVS, [7] * NUM_ENVS)[2],
            expected_values([1] * NUM_ENVS)[3],
        ]
        assert obs["count"].tolist() == [0, 1, 0, 1]
        assert frame_values(stepped) == expected_values([1] * NUM_ENVS)


def test_an_env_whose_step_failed_keeps_its_last_observation() -> None:
    with frame_pool() as envs:
        envs.reset(seed=0)
        held = envs.step(np.zeros(NUM_ENVS, dtype=np.int64))[0]
        with pytest.raises(ValueError, match="action 9 is refused"):
            envs.step(np.array([0, 9, 0, 0]))
        # Env 1 failed (still at step 1); the others took their second step.
        obs, _ = envs.reset(options={"reset_mask": np.array([True, False, False, False])})
        assert obs["count"].tolist() == [0, 1, 2, 2]
        assert frame_values(obs)[1:] == expected_values([0, 1, 2, 2])[1:]
        assert frame_values(held) == expected_values([1] * NUM_ENVS)


def test_pool_mode_after_lent_steps_sees_every_env_latest_observation() -> None:
    with frame_pool(batch_size=NUM_ENVS) as envs:
        envs.reset(seed=0)
        held = envs.step(np.zeros(NUM_ENVS, dtype=np.int64))[0]
        envs.send(np.zeros(2, dtype=np.int64), [0, 1])
        obs, *_, env_ids = envs.recv()
        assert env_ids.tolist() == [0, 1]
        assert obs["count"].tolist() == [2, 2]
        # Envs 2 and 3 were not stepped in pool mode: a reset of env 0 alone shows their step-1 observations.
        obs, _ = envs.reset(options={"reset_mask": np.array([True, False, False, False])})
        assert obs["count"].tolist() == [0, 2, 1, 1]
        assert frame_values(held) == expected_values([1] * NUM_ENVS)


def test_copy_false_returns_views_of_one_buffer() -> None:
    with frame_pool(copy=False) as envs:
        first = envs.reset(seed=0)[0]
        second = envs.step(np.zeros(NUM_ENVS, dtype=np.int64))[0]
        assert np.shares_memory(first["frame"], second["frame"])
        assert first["count"].tolist() == [1] * NUM_ENVS  # overwritten by the step, as documented
        assert len(envs._memory.observations) == 1  # type: ignore[arg-type]


def test_without_reference_counts_batches_are_copied(monkeypatch: pytest.MonkeyPatch) -> None:
    # As on an interpreter without sys.getrefcount (PyPy): no spare buffers, fresh arrays every step.
    monkeypatch.setattr(lending, "CAN_LEND", False)
    with frame_pool() as envs:
        first = envs.reset(seed=0)[0]
        second = envs.step(np.zeros(NUM_ENVS, dtype=np.int64))[0]
        assert len(envs._memory.observations) == 1  # type: ignore[arg-type]
        assert first["frame"].flags.owndata and second["count"].flags.owndata
        assert frame_values(first) == expected_values([0] * NUM_ENVS)
