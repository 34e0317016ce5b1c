"""Small environments for the vector-env tests (top-level classes, so they pickle under spawn)."""

from __future__ import annotations

import functools
import os
from typing import Any

import numpy as np
import pytest

from vecspaces.env import Env
from vecspaces.spaces import Box, Dict, Discrete, Space


class CountdownEnv(Env[Any, Any]):
    """Observation = steps taken in the episode; terminates after ``length`` steps; reward = the action.

    Every step's info reports the step count and the env's ``label``; reset info reports the reset seed.
    """

    observation_space = Box(0, 1000, (1,), np.int64)
    action_space = Discrete(10)

    def __init__(self, length: int = 3, label: int = 0) -> None:
        self.length = length
        self.label = label
        self.count = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.count = 0 if not options else int(options.get("start", 0))
        return np.array([self.count]), {"seed": -1 if seed is None else seed}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.count += 1
        return (
            np.array([self.count]),
            float(action),
            self.count >= self.length,
            False,
            {"count": self.count, "label": self.label},
        )

    def make_lock(self) -> Any:
        """Returns something that cannot be pickled."""
        import threading

        return threading.Lock()


class SpaceEnv(Env[Any, Any]):
    """Observations are samples of any space, drawn from the env's seeded generator; actions are checked."""

    def __init__(self, observation_space: Space[Any], action_space: Space[Any], length: int = 4) -> None:
        self.observation_space = observation_space
        self.action_space = action_space
        self.length = length
        self.count = 0
        self.actions: list[Any] = []

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.observation_space.seed(int(self.np_random.integers(2**31)))
        self.count = 0
        return self.observation_space.sample(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if action not in self.action_space:
            raise ValueError(f"action {action!r} is not in {self.action_space!r}")
        self.actions.append(action)
        self.count += 1
        return self.observation_space.sample(), 0.5, False, self.count >= self.length, {}


class TwoArgumentError(Exception):
    """An exception that cannot be rebuilt from its args alone (Gymnasium fails to unpickle these)."""

    def __init__(self, code: int, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail


class FaultyEnv(CountdownEnv):
    """Misbehaves once, on purpose, at step ``at_step`` (or in reset when ``at_step`` is 0), as ``fault`` says.

    Faults: "raise" (KeyError), "raise_odd" (an exception with a two-argument __init__), "percent" (a
    ValueError whose message holds a %), "exit" (os._exit(3)), "kill" (SIGKILL to itself), "sleep" (sleeps
    ``seconds``), "bad_shape", "bad_dtype", "unpicklable_info", "keyboard_interrupt", "system_exit".
    """

    def __init__(self, fault: str, at_step: int = 1, seconds: float = 2.0, length: int = 100) -> None:
        super().__init__(length)
        self.fault = fault
        self.at_step = at_step
        self.seconds = seconds
        self.fired = False

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        obs, info = super().reset(seed=seed, options=options)
        if self.at_step == 0:
            return self._misbehave(obs, info)
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = super().step(action)
        if self.count == self.at_step:
            obs, info = self._misbehave(obs, info)
        return obs, reward, terminated, truncated, info

    def _misbehave(self, obs: Any, info: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        if self.fired:
            return obs, info
        self.fired = True
        import os
        import signal
        import threading
        import time

        if self.fault == "raise":
            raise KeyError("missing-key")
        if self.fault == "raise_odd":
            raise TwoArgumentError(7, "odd")
        if self.fault == "percent":
            raise ValueError("progress 50% done")
        if self.fault == "exit":
            os._exit(3)
        if self.fault == "keyboard_interrupt":
            raise KeyboardInterrupt("raised by the env")
        if self.fault == "system_exit":
            raise SystemExit(4)
        if self.fault == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if self.fault == "sleep":
            time.sleep(self.seconds)
        if self.fault == "bad_shape":
            return np.array([1, 2, 3]), info
        if self.fault == "bad_dtype":
            return np.array(["x"]), info
        if self.fault == "unpicklable_info":
            return obs, {**info, "lock": threading.Lock()}
        return obs, info


def failing_factory() -> Any:
    raise RuntimeError("factory exploded")


class FrameEnv(Env[Any, Any]):
    """A large observation (a 64x64 uint8 frame plus a small counter) filled with a value that identifies it.

    Env ``label``'s frame at step ``t`` of an episode started with options ``{"start": s}`` holds
    ``(label * 50 + s + t) % 256``; the counter holds ``t``. A step raises if the action is 9.
    """

    observation_space = Dict(frame=Box(0, 255, (64, 64), np.uint8), count=Box(0, 10**6, (), np.int64))
    action_space = Discrete(10)

    def __init__(self, label: int = 0) -> None:
        self.label = label
        self.start = 0
        self.count = 0

    def value(self) -> int:
        return (self.label * 50 + self.start + self.count) % 256

    def _observe(self) -> dict[str, Any]:
        return {"frame": np.full((64, 64), self.value(), np.uint8), "count": np.int64(self.count)}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.start = 0 if not options else int(options.get("start", 0))
        self.count = 0
        return self._observe(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if int(action) == 9:
            raise ValueError("action 9 is refused")
        self.count += 1
        return self._observe(), 0.0, False, False, {}


class FrameEnvExitingAtFirstStep(FrameEnv):
    """A :class:`FrameEnv` whose process exits at its first step (a restarted one exits again at its first step)."""

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        import os

        os._exit(3)


class DictFaultyEnv(Env[Any, Any]):
    """A Dict observation ``{"pos": Box(3,), "camera": Box(4x4 uint8)}``; at step ``at_step`` it returns a
    broken one as ``fault`` says: "missing_key" (no camera), "bad_leaf_shape" (a 3x3 camera), "bad_leaf_dtype"
    (a camera of strings), "fractional_leaf" (a float camera holding a 0.5)."""

    observation_space = Dict(pos=Box(-1.0, 1.0, (3,), np.float32), camera=Box(0, 255, (4, 4), np.uint8))
    action_space = Discrete(2)

    def __init__(self, fault: str = "", at_step: int = 1) -> None:
        self.fault = fault
        self.at_step = at_step
        self.count = 0

    def _observe(self) -> dict[str, Any]:
        obs: dict[str, Any] = {"pos": np.zeros(3, np.float32), "camera": np.zeros((4, 4), np.uint8)}
        if self.count == self.at_step and self.fault == "missing_key":
            del obs["camera"]
        elif self.count == self.at_step and self.fault == "bad_leaf_shape":
            obs["camera"] = np.zeros((3, 3), np.uint8)
        elif self.count == self.at_step and self.fault == "bad_leaf_dtype":
            obs["camera"] = np.full((4, 4), "x")
        elif self.count == self.at_step and self.fault == "fractional_leaf":
            obs["camera"] = np.full((4, 4), 0.5)
        return obs

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.count = 0
        return self._observe(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.count += 1
        return self._observe(), 0.0, False, False, {}


class SleepyEnv(CountdownEnv):
    """Each reset and step sleeps ``seconds`` and reports in its info when it started and ended (perf_counter)."""

    def __init__(self, seconds: float = 0.03) -> None:
        super().__init__(length=1000)
        self.seconds = seconds

    def _timed(self, result: tuple[Any, ...]) -> tuple[Any, ...]:
        import time

        start = time.perf_counter()
        time.sleep(self.seconds)
        *rest, info = result
        return (*rest, {**info, "started": start, "ended": time.perf_counter()})

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        return self._timed(super().reset(seed=seed, options=options))  # type: ignore[return-value]

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        return self._timed(super().step(action))  # type: ignore[return-value]


class TickEnv(Env[Any, Any]):
    """Observation = steps taken since the last reset, reward = the action; the info of odd steps says the count.

    So steps alternate between the pool's fast path (no reply) and its general one (a reply with infos).
    """

    observation_space = Box(0, 1_000_000, (1,), np.int64)
    action_space = Discrete(10)

    def __init__(self) -> None:
        self.count = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.count = 0
        return np.array([self.count]), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.count += 1
        return np.array([self.count]), float(action), False, False, {"tick": self.count} if self.count % 2 else {}


class SlowToBuildEnv(CountdownEnv):
    """A CountdownEnv that takes ``build_seconds`` to build, and refuses to be built once ``refuse_if`` exists.

    While ``hang_if`` exists it takes 8 s to build instead.
    """

    def __init__(self, build_seconds: float = 0.0, refuse_if: str | None = None, hang_if: str | None = None) -> None:
        import os
        import time

        if refuse_if is not None and os.path.exists(refuse_if):
            raise RuntimeError("refusing to build")
        time.sleep(8.0 if hang_if is not None and os.path.exists(hang_if) else build_seconds)
        super().__init__(length=1000)


class ValuesEnv(CountdownEnv):
    """A CountdownEnv whose step returns the given reward and flags, whatever they are."""

    def __init__(self, reward: Any = 0.0, terminated: Any = False, truncated: Any = False) -> None:
        super().__init__(length=1000)
        self.values = (reward, terminated, truncated)

    def step(self, action: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        obs, _, _, _, info = super().step(action)
        return (obs, *self.values, info)


def _rebuilt_only_in_workers(value: int) -> FailsInMain:
    import multiprocessing

    if multiprocessing.parent_process() is None:
        raise ValueError("this value cannot be rebuilt in the main process")
    return FailsInMain(value)


class FailsInMain:
    """A value that pickles anywhere but unpickles only in a worker (as when its class is not importable there)."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __reduce__(self) -> tuple[Any, tuple[int]]:
        return _rebuilt_only_in_workers, (self.value,)


class FailsInMainInfoEnv(CountdownEnv):
    """A CountdownEnv whose info at step ``at_step`` holds a value the main process cannot unpickle."""

    def __init__(self, at_step: int = 1) -> None:
        super().__init__(length=1000)
        self.at_step = at_step

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = super().step(action)
        if self.count == self.at_step:
            info = {**info, "handle": self.handle()}
        return obs, reward, terminated, truncated, info

    def handle(self) -> FailsInMain:
        return FailsInMain(self.count)


def scripted_info(label: int, count: int) -> dict[str, Any]:
    """The info ``ScriptedInfoEnv(label)`` returns at step ``count``: plain numbers of many kinds, mostly in the
    same layout, now and then another layout, a value that needs pickling, or none."""
    turn = (label + count) % 7
    info: dict[str, Any] = {"lives": 3 - count % 3, "frame": 4 * count, "score": count / 4}
    if turn == 1:
        info["flag"] = np.bool_(count % 2)
    elif turn == 2:
        info = {"lives": np.int8(count % 5), "score": np.float32(count) / 3}
    elif turn == 3:
        info["episode"] = {"r": float(count), "l": count}  # nested: pickled
    elif turn == 4:
        info = {}
    elif turn == 5:
        info["label"] = f"env {label}"  # a string: pickled
    return info


class ScriptedInfoEnv(CountdownEnv):
    """A CountdownEnv whose infos are :func:`scripted_info`, at reset too (with ``count`` 0)."""

    def __init__(self, label: int = 0) -> None:
        super().__init__(length=5, label=label)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        obs, _ = super().reset(seed=seed, options=options)
        return obs, scripted_info(self.label, 0)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, _ = super().step(action)
        return obs, reward, terminated, truncated, scripted_info(self.label, self.count)


class CloseRecordingEnv(CountdownEnv):
    """Writes its label to ``folder`` when closed; labels in ``raising`` then raise ``ValueError``."""

    def __init__(self, folder: str, label: int, raising: tuple[int, ...] = ()) -> None:
        super().__init__()
        self.folder, self.label, self.raising = folder, label, raising

    def close(self) -> None:
        with open(os.path.join(self.folder, f"closed-{self.label}-{os.getpid()}"), "w"):
            pass
        if self.label in self.raising:
            raise ValueError(f"env {self.label} could not close")


def close_recording_envs(folder: str) -> list[Any]:
    """Factories of four :class:`CloseRecordingEnv`, of which envs 1 and 2 raise when closed."""
    return [functools.partial(CloseRecordingEnv, folder, label, (1, 2)) for label in range(4)]


def assert_first_close_error_raised_after_every_env_closed(envs: Any, folder: str) -> None:
    """``envs.close()`` of :func:`close_recording_envs` raises env 1's error, noting env 2's, once all are closed."""
    with pytest.raises(ValueError, match="env 1 could not close") as caught:
        envs.close()
    assert "raised by env 1 during close" in caught.value.__notes__
    assert "1 more env error(s) in this call" in caught.value.__notes__
    assert envs.closed
    assert {name.split("-")[1] for name in os.listdir(folder)} == {"0", "1", "2", "3"}
    envs.close()  # closed already: nothing more to raise
